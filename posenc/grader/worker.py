"""The student's side of the grader: a fork server and the kernel processes it forks.

Nothing in this module ever sees a reference answer, a judge, a private check's code or another
student's work: questions reach a kernel only as probes, plain data (``posenc.exercises.probe``), and
under bubblewrap the checks are not even on the kernel's file system (``posenc.grader.sandbox``). It runs
in two roles:

* the **fork server** (``python -m posenc.grader.worker``): imports the course's modules once (NumPy,
  IPython, what the exercise notebook imports, torch included for the sets that use it), then forks one
  fresh kernel per submission on request. Forking is what amortises the start-up: each kernel is a new
  process with a clean namespace, started in milliseconds.
* the **kernel**: a forked child with its own folder, resource limits (soft = hard, so it cannot raise
  them) and confinement. It runs the cells it is sent, answers collection requests and parses notebooks
  (``parse``: reading a hand-in is untrusted work too), each under a time limit, and replies with plain
  JSON. Under bubblewrap (``--isolate``) the server's child first moves into namespaces of its own
  (``sandbox.isolate``) and stays as the kernel's supervisor; the namespace's PID 1 starts the kernel
  (PID 2, alone in its PID namespace). Each dies with its parent and each parent exits as its child did,
  so the fork server learns how the kernel ended. The grader holds a pidfd of the supervisor to kill it.

Frames on the kernel's socket are an 8-byte big-endian length and a UTF-8 JSON body.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import io
import hashlib
import json
import os
import re
import resource
import select
import signal
import socket
import struct
import sys
import time
import types

import posenc.grader.sandbox as sandbox
from posenc.grader.status import EMPTY, INVALID

HEADER = struct.Struct("!Q")
MAX_REQUEST = 512 * 2**20
ISOLATION_FAILED = 70          # the supervisor's exit code when the system refuses the namespaces
# What a reply may cost to parse, bounded before and while ``json.loads`` builds it: the containers and
# strings are counted on its bytes first (a '{', '[' or pair of '"' each), the numbers as they are parsed.
# Arrays travel as base64 text, so an honest reply holds a few thousand values; tens of millions of tiny
# objects (``[{},{},...]``) in the same 64 MB would cost gigabytes of Python objects.
MAX_REPLY_ITEMS = 1_000_000
HEADROOM_BYTES = 256 * 2**20   # address space for thread stacks and allocator arenas, beyond the memory limit


def reply_items(body: bytes) -> int:
    """An upper bound on the containers and strings a JSON text holds, at the speed of ``bytes.count``."""
    return body.count(b"{") + body.count(b"[") + body.count(b'"') // 2


def bounded_loads(body: bytes, limit: int = MAX_REPLY_ITEMS):
    """``json.loads(body)``, or ValueError before it holds more than ``limit`` containers and strings or
    more than ``limit`` numbers."""
    if reply_items(body) > limit:
        raise ValueError(f"over {limit} values")
    numbers = [0]

    def number(text: str, kind):
        numbers[0] += 1
        if numbers[0] > limit:
            raise ValueError(f"over {limit} numbers")
        return kind(text)

    return json.loads(body, parse_int=lambda text: number(text, int), parse_float=lambda text: number(text, float))


def send_frame(sock: socket.socket, body: bytes) -> None:
    sock.sendall(HEADER.pack(len(body)) + body)


def recv_exact(sock: socket.socket, size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket) -> bytes | None:
    header = recv_exact(sock, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_REQUEST:
        return None
    return recv_exact(sock, size)


def _memory_in_use() -> tuple[int, int]:
    """(address space, data segment) of this process in bytes, from /proc (0 where unknown)."""
    sizes = {"VmSize:": 0, "VmData:": 0}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                key = line.split(None, 1)[0] if line.strip() else ""
                if key in sizes:
                    sizes[key] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return sizes["VmSize:"], sizes["VmData:"]


# ---------------------------------------------------------------------------------------------------
# The fork server


def _isolation_test() -> str | None:
    """None when a child can move into namespaces of its own here; otherwise why not."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            sandbox.isolate(65536)
            os._exit(0)
        except BaseException as exc:
            os.write(write_end, f"{type(exc).__name__}: {exc}".encode()[:1000])
            os._exit(1)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        error = pipe.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    return None if status == 0 else (error or f"status {status}")


def zygote_main(control_fd: int, warm: list[str], isolated: bool) -> None:
    sandbox.set_parent_death_signal()
    control = socket.socket(fileno=control_fd)
    imported, failed = [], []
    for module in warm:
        try:
            importlib.import_module(module)
            imported.append(module)
        except BaseException as exc:  # a broken optional import must not stop grading
            failed.append(f"{module}: {type(exc).__name__}: {exc}")
    # What the kernels use, made here once so that forking them is cheap: the shell too (it holds no
    # student state yet, and with its history off it starts no thread, so forking it is safe).
    import posenc.exercises.probe  # noqa: F401
    from IPython.core.inputtransformer2 import TransformerManager  # noqa: F401  (the parsing kernels)

    _make_shell()
    isolation_error = _isolation_test() if isolated else None

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    exits: dict[int, tuple[int | None, int | None]] = {}

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
            sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            exits[pid] = (code, sig)
            if len(exits) > 10000:
                exits.pop(next(iter(exits)))

    def reply(obj, fds=()):
        if fds:
            socket.send_fds(control, [json.dumps(obj).encode()], list(fds))
        else:
            control.sendall(json.dumps(obj).encode())

    reply({"ready": True, "imported": imported, "failed": failed, "pid": os.getpid(),
           "isolation_error": isolation_error})
    while True:
        ready, _, _ = select.select([control, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
            reap()
        if control not in ready:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(control, 65536, 4)
        except InterruptedError:
            continue
        if not data:
            os._exit(0)
        request = json.loads(data)
        if request["op"] == "fork":
            memory = _memory_in_use()
            pid = os.fork()
            if pid == 0:
                try:
                    control.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    if isolated:
                        _supervise(fds[0], request, memory)
                    else:
                        kernel_main(fds[0], request, memory, isolated=False)
                finally:
                    os._exit(0)
            for fd in fds:
                os.close(fd)
            try:
                handle = [os.pidfd_open(pid)]
            except (AttributeError, OSError):   # no pidfds here: the grader signals the pid itself
                handle = []
            reply({"pid": pid}, handle)
            for fd in handle:
                os.close(fd)
        elif request["op"] == "status":
            pid, deadline = request["pid"], time.monotonic() + request.get("wait", 2.0)
            while pid not in exits and time.monotonic() < deadline:
                reap()
                if pid not in exits:
                    time.sleep(0.01)
            code, sig = exits.pop(pid, (None, None))
            reply({"pid": pid, "code": code, "signal": sig})
        else:
            reply({"error": f"unknown op {request['op']!r}"})


def _supervise(channel_fd: int, setup: dict, memory: tuple[int, int]) -> None:
    """The kernel's supervisor (under bubblewrap): make the namespaces, start the namespace's first process,
    which starts the kernel, and exit as the kernel did.

    The kernel is not PID 1 itself: PID 1 of a namespace ignores the signals it sends itself, and a
    notebook that kills its own kernel must see it die, as in Jupyter."""
    sandbox.set_parent_death_signal()
    try:
        sandbox.isolate(int(setup.get("disk_bytes") or 0) or 256 * 2**20)
    except BaseException:
        os._exit(ISOLATION_FAILED)
    report_r, report_w = os.pipe()
    init = os.fork()
    if init == 0:                                   # PID 1 of the kernel's namespace
        os.close(report_r)
        sandbox.set_parent_death_signal()
        pid = os.fork()
        if pid == 0:
            os.close(report_w)
            kernel_main(channel_fd, setup, memory, isolated=True)
            os._exit(0)
        os.close(channel_fd)
        status = _wait(pid)
        os.write(report_w, str(status).encode())     # PID 1 cannot kill itself: its parent does it
        os._exit(0)
    os.close(channel_fd)
    os.close(report_w)
    with os.fdopen(report_r, "rb") as pipe:
        reported = pipe.read()
    status = int(reported) if reported.strip().isdigit() else _wait(init)
    _wait(init)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):        # SIGKILL: no handler to reset
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _wait(pid: int) -> int:
    """The wait status of child ``pid`` (0 if it is already gone)."""
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0


# ---------------------------------------------------------------------------------------------------
# The kernel


class _Timeout(BaseException):
    """Raised in the student's code when its time is up (BaseException: a bare ``except`` may still eat it)."""


def _on_alarm(signum, frame):
    raise _Timeout()


class _CappedText(io.TextIOBase):
    """Where the student's prints go: the first few kilobytes are kept, the rest is counted and dropped."""

    def __init__(self, cap: int = 16384):
        self.cap, self.kept, self.dropped = cap, [], 0
        self._size = 0

    def writable(self) -> bool:
        return True

    def write(self, text) -> int:
        text = str(text)
        if self._size >= self.cap:
            self.dropped += len(text)
            return len(text)
        room = self.cap - self._size
        if room > 0:
            self.kept.append(text[:room])
            self._size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self) -> None:
        pass


def _private_copy(module: types.ModuleType) -> dict:
    """The module's functions, re-bound to a snapshot of its globals.

    Taken before the student's code runs, so patching ``posenc.exercises.probe.call_student`` (or any other
    name in that module) from a notebook cell does not change what this kernel's collection does.
    """
    import builtins

    namespace = dict(module.__dict__)
    namespace["__builtins__"] = dict(builtins.__dict__)    # before cloning: functions bind it when made
    for key, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            clone = types.FunctionType(value.__code__, namespace, value.__name__, value.__defaults__,
                                       value.__closure__)
            clone.__kwdefaults__ = value.__kwdefaults__
            namespace[key] = clone
    return namespace


def _limit(which: int, value: int) -> None:
    """Soft and hard limit both ``value`` (never above the present hard limit): the kernel cannot raise it."""
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))
    except (ValueError, OSError):
        pass


def _apply_limits(setup: dict, memory: tuple[int, int], isolated: bool) -> list[str]:
    """Resource limits from the grader's setup; their descriptions."""
    applied = []
    address_space, data = memory
    if setup.get("memory_bytes"):
        extra = int(setup["memory_bytes"])
        if data:
            _limit(resource.RLIMIT_DATA, data + extra)
        if address_space:     # counts shared mappings too, which the data limit does not
            _limit(resource.RLIMIT_AS, address_space + extra + HEADROOM_BYTES)
        applied.append(f"memory: {extra / 2**20:g} MB beyond the course's imports")
    if setup.get("file_bytes"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)    # a too-big write raises OSError instead
        _limit(resource.RLIMIT_FSIZE, int(setup["file_bytes"]))
    if setup.get("cpu_seconds"):
        _limit(resource.RLIMIT_CPU, int(setup["cpu_seconds"]))
    if setup.get("open_files"):
        _limit(resource.RLIMIT_NOFILE, int(setup["open_files"]))
    if isolated and setup.get("threads"):    # counted in the kernel's own user namespace
        _limit(resource.RLIMIT_NPROC, int(setup["threads"]))
    _limit(resource.RLIMIT_CORE, 0)
    for which in ("RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE", "RLIMIT_RTPRIO", "RLIMIT_NICE"):
        if hasattr(resource, which):
            _limit(getattr(resource, which), 0)
    return applied


def kernel_main(channel_fd: int, setup: dict, memory: tuple[int, int], isolated: bool) -> None:
    os.setsid()
    sandbox.set_parent_death_signal()
    sandbox.not_dumpable()
    workdir = "/tmp" if isolated else setup["workdir"]
    os.chdir(workdir)
    # Standard streams: nothing the student prints can reach the grader's terminal or pipes.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    os.closerange(3, channel_fd)
    os.closerange(channel_fd + 1, 65536)
    channel = socket.socket(fileno=channel_fd)
    channel.setblocking(True)

    limits = _apply_limits(setup, memory, isolated)
    os.environ.update({"HOME": workdir, "TMPDIR": workdir})
    import tempfile

    tempfile.tempdir = None

    import _signal

    import posenc.exercises.probe as probe_module

    # Everything the loop below uses is bound now, before the student's code can patch anything:
    # the collection functions run on a private copy of their module and of the builtins.
    probe_copy = _private_copy(probe_module)
    collect_probe, encode, decode = probe_copy["collect"], probe_copy["encode"], probe_copy["decode"]
    json_encoder, json_decoder = json.JSONEncoder(separators=(",", ":")), json.JSONDecoder()

    def dumps(obj) -> str:
        return "".join(json_encoder.iterencode(obj, _one_shot=True))    # the C encoder, no Python checks

    def loads(data: bytes):
        return json_decoder.decode(data.decode())

    run_code, compile_code = exec, compile
    # The time limit counts CPU time (ITIMER_PROF), so a busy machine does not cost the student points;
    # the grader adds a wall-clock deadline for code that waits instead of computing.
    set_handler, set_timer, TIMER, SIGNAL = (_signal.signal, _signal.setitimer, _signal.ITIMER_PROF,
                                             _signal.SIGPROF)
    dict_type, base_exception, len_, type_, isinstance_, float_ = dict, BaseException, len, type, isinstance, float

    shell = _make_shell()
    namespace = shell.user_ns
    confinement = []
    if isolated:
        sandbox.drop_capabilities()
        confinement.append("bubblewrap: own user, PID, mount, network and IPC namespaces; sees only the "
                           "Python environment and the course library; a private tmpfs as its folder")
    if setup.get("confine", True):
        confinement += sandbox.confine(workdir, None if isolated else sandbox.readable_paths(workdir))
    confinement += limits
    namespace["__name__"] = "__main__"
    out = _CappedText()
    sys.stdout = sys.stderr = out
    max_reply = int(setup.get("max_reply_bytes", 64 * 2**20))

    def run(request):
        code = compile_code(request["code"], request.get("filename", "<cell>"), "exec")
        run_code(code, namespace)
        return {"status": "ok"}

    def collect(request):
        return {"status": "ok", "collected": encode(collect_probe(namespace, decode(request["probe"])))}

    def parse(request):
        return {"status": "ok", "parsed": parse_notebook(request["payload"], request.get("filename", ""))}

    def describe(exc) -> dict:
        try:
            name = type_(exc).__name__
            if isinstance_(exc, _Timeout):
                return {"status": "timeout"}
            if isinstance_(exc, SystemExit):
                return {"status": "error", "error": f"SystemExit: {exc.code}"[:2000], "error_type": "SystemExit"}
            return {"status": "error", "error": f"{name}: {exc}"[:2000], "error_type": name,
                    "errno": getattr(exc, "errno", None) if isinstance_(exc, OSError) else None}
        except base_exception:
            return {"status": "error", "error": "an exception that cannot be described"}

    def info(request):
        return {"status": "ok", "sandbox": confinement, "pid": os.getpid(), "isolated": isolated}

    def origins(request):
        """Where each named function or class comes from (the module it was defined in)."""
        found = {}
        for name in request.get("names", []):
            obj = _unwrapped(namespace.get(name))
            if isinstance_(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
                module, qualname = obj.__dict__.get("__module__") if isinstance_(obj, type) else obj.__module__, \
                    obj.__qualname__
                found[name] = [module if isinstance_(module, str) else None,
                               qualname if isinstance_(qualname, str) else None,
                               _wrapped_course_function(obj, name)]
        return {"status": "ok", "origins": found}

    handlers = {"run": run, "collect": collect, "info": info, "origins": origins, "parse": parse}
    while True:
        body = recv_frame(channel)
        if body is None:
            os._exit(0)
        request, reply = {}, None
        try:
            request = loads(body)
            if type_(request) is not dict_type:
                raise ValueError("not a request")
            if request.get("payload"):        # the bytes the request is about follow in a frame of their own
                request["payload"] = recv_frame(channel)
                if request["payload"] is None:
                    os._exit(0)
            handler = handlers.get(request.get("op"))
            if handler is None:
                raise ValueError(f"unknown op {request.get('op')!r}")
            set_handler(SIGNAL, _on_alarm)
            sys.stdout = sys.stderr = out
            set_timer(TIMER, float_(request.get("timeout", 10.0)))
            try:
                reply = handler(request)
            finally:
                set_timer(TIMER, 0)
        except base_exception as exc:  # the student's exception, a timeout or sys.exit: as data
            set_timer(TIMER, 0)
            reply = describe(exc)
        try:
            set_timer(TIMER, 0)
            reply["id"] = request.get("id")
            text = dumps(reply)
            if len_(text) > max_reply or reply_items(text.encode()) > MAX_REPLY_ITEMS:
                text = dumps({"id": request.get("id"), "status": "error", "error_type": "TooLarge",
                              "error": f"the answers are too large to check ({len_(text) / 2**20:.0f} MB, "
                                                f"at most {MAX_REPLY_ITEMS} values)"})
            send_frame(channel, text.encode())
        except base_exception as exc:  # could not even report: say so briefly
            send_frame(channel, dumps({"id": request.get("id"), "status": "error",
                                       "error": f"could not report: {type_(exc).__name__}"}).encode())


# ---------------------------------------------------------------------------------------------------
# Reading a notebook: untrusted input too, so the batch grader does it in a kernel (``op: parse``), under
# that kernel's limits. ``posenc.grader.submission`` builds its Submission from what comes back.

MAX_CELLS = 5000
MAX_PARSED_CELL = 2**20          # characters; a longer cell runs as it is (check calls and names unseen)
MAX_CODE = 24 * 2**20            # characters of code in all (the 20 MB literal of the corpus still runs)
SET_PATTERN = re.compile(r"(?<![A-Za-z0-9])(ch\d\d)(?!\d)", re.IGNORECASE)
CHECKER_CALL = re.compile(r"checker\(\s*['\"](ch\d\d)['\"]\s*\)")


def parse_notebook(raw: bytes, filename: str) -> dict:
    """Parse a notebook's bytes into plain data: ``{"problem", "message"}`` when it is not gradable,
    else ``{"cells": [[id, source, code (None: the source), defines, checks, fingerprint, size], ...],
    "set_id", "set_evidence"}``."""
    def bad(problem: str, message: str) -> dict:
        return {"problem": problem, "message": message}

    if not raw.strip():
        return bad(INVALID, "the file is empty (0 bytes of notebook): was the right file uploaded?")
    try:
        nb = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return bad(INVALID, "the file is not text (not a .ipynb notebook; a zip or a PDF?)")
    except (ValueError, RecursionError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        return bad(INVALID, f"the file is not valid JSON{where}, so it is not a Jupyter notebook; "
                            "was it saved from Jupyter (File > Download > .ipynb)?")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        version = nb.get("nbformat") if isinstance(nb, dict) else None
        if isinstance(version, int) and version < 4 and isinstance(nb.get("worksheets"), list):
            nb = _upgrade_v3(nb)
        else:
            return bad(INVALID, "the file is JSON but not a Jupyter notebook (it has no list of cells)")
    cells = []
    for cell in nb["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(s for s in source if isinstance(s, str))
        if not isinstance(source, str):
            continue
        cell_id = cell.get("id")
        cells.append((cell_id[:64] if isinstance(cell_id, str) else "", source))
    if len(cells) > MAX_CELLS:
        return bad(INVALID, f"the notebook has {len(cells)} code cells, more than the grader reads ({MAX_CELLS})")
    code = sum(len(source) for _, source in cells)
    if code > MAX_CODE:
        return bad(INVALID, f"the notebook holds {code / 2**20:.0f} MB of code, more than the grader reads "
                            f"({MAX_CODE // 2**20} MB): was data pasted into a cell?")
    if not any(source.strip() for _, source in cells):
        return bad(EMPTY, "the notebook has no code: nothing to grade (was the right notebook uploaded?)")
    set_id, evidence = detect_set(nb, filename, [source for _, source in cells])
    prepared = [(cell_id, source, *prepare_code(source)) for cell_id, source in cells]
    # (the code is sent only where it differs from the source: the reply carries each cell once)
    return {"problem": None, "cells": [[cell_id, source, None if code == source else code, defines, checks,
                                        *fingerprint(code)] for cell_id, source, code, defines, checks in prepared],
            "set_id": set_id, "set_evidence": evidence}


def _upgrade_v3(nb: dict) -> dict:
    cells = []
    for sheet in nb.get("worksheets", []):
        for cell in sheet.get("cells", []) if isinstance(sheet, dict) else []:
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                cells.append({"cell_type": "code", "source": cell.get("input", "")})
    return {"cells": cells, "metadata": nb.get("metadata", {})}


def detect_set(nb: dict, filename: str, sources: list[str]) -> tuple[str | None, str]:
    """The exercise set a notebook answers, and how we know: metadata, then the check call, then the name."""
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    posenc_meta = meta.get("posenc") if isinstance(meta.get("posenc"), dict) else {}
    declared = posenc_meta.get("exercise_set")
    if isinstance(declared, str) and re.fullmatch(r"ch\d\d", declared):
        return declared, "notebook metadata"
    for source in sources:
        found = CHECKER_CALL.search(source)
        if found:
            return found.group(1), f'its checker("{found.group(1)}") call'
    found = SET_PATTERN.search(filename)
    if found:
        return found.group(1).lower(), "its file name"
    return None, ""


def prepare_code(source: str) -> tuple[str, list[str], list[str]]:
    """(code, names bound, question ids of the checks dropped) of a cell: IPython syntax translated to
    Python, top-level ``check(...)`` calls dropped.

    A dropped call becomes ``pass`` in place (no re-printing of the code, which fails on deep nesting, and
    the line numbers of the student's tracebacks stay right)."""
    if len(source) > MAX_PARSED_CELL:        # no answer is that long; parsing it costs seconds and gigabytes
        return source, [], []
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        python = TransformerManager().transform_cell(source)
        tree = ast.parse(python)
    except Exception:  # a syntax error, or too deep to parse: the kernel reports it when the cell runs
        return source, [], []
    dropped, defines, checks = [], set(), []
    for node in tree.body:
        qid = _check_call(node)
        if qid is not None:
            checks.append(qid)
            dropped.append(node)
        else:
            defines |= _bound_names(node)
    return (_without(python, dropped) if dropped else python), sorted(defines), checks


def fingerprint(code: str) -> tuple[str, int]:
    """What a cell's code does, whatever its names, comments and layout: (a hash of its normalised syntax
    tree, the tree's size in nodes); ("", 0) for a cell that does nothing (empty, ``pass``, ``...``, a lone
    string). Normalised: every name the student chose (variables, arguments, functions, aliases) becomes its
    rank of first appearance in the cell, and statements that do nothing go; builtins, attributes, keywords
    of a call and constants stay. So renaming a variable, adding a comment, a docstring or blank lines
    leaves a cell's fingerprint as it was. A cell that cannot be parsed is hashed on its stripped lines."""
    try:
        tree = ast.parse(code) if len(code) <= MAX_PARSED_CELL else None
        if tree is not None:
            tree = _Canonical().visit(_WithoutNoOps().visit(tree))
            if not tree.body:
                return "", 0
            text, size = ast.dump(tree), sum(not isinstance(n, ast.expr_context) for n in ast.walk(tree)) - 1
    except Exception:        # a syntax error, or too deep to parse or to walk
        tree = None
    if tree is None:
        lines = [line.split("#", 1)[0].strip() for line in code.splitlines()]
        text = "\n".join(line for line in lines if line)
        if not text:
            return "", 0
        size = len(text.split())
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32], size


class _WithoutNoOps(ast.NodeTransformer):
    """Statements that do nothing removed: ``pass``, a lone constant (a docstring, ``...``, ``None``)."""

    def generic_visit(self, node):
        super().generic_visit(node)
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                kept = [s for s in statements if not _does_nothing(s)]
                setattr(node, name, kept if kept or isinstance(node, ast.Module) else [ast.Pass()])
        return node


def _does_nothing(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr)
                                               and isinstance(statement.value, ast.Constant))


_BUILTIN_NAMES = frozenset(dir(builtins))


class _Canonical(ast.NodeTransformer):
    """Each name the code binds or uses (not a builtin) replaced by its rank of first appearance."""

    def __init__(self):
        self.names: dict[str, str] = {}

    def rank(self, name: str | None) -> str | None:
        if name is None or name in _BUILTIN_NAMES:
            return name
        return self.names.setdefault(name, f"_{len(self.names)}")

    def visit_Name(self, node):
        node.id = self.rank(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.rank(node.arg)
        return self.generic_visit(node)

    def visit_alias(self, node):
        node.asname = self.rank(node.asname)
        return node

    def _named(self, node):
        node.name = self.rank(node.name)
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_ExceptHandler = _named

    def _names(self, node):
        node.names = [self.rank(name) for name in node.names]
        return node

    visit_Global = visit_Nonlocal = _names


def _without(python: str, statements: list[ast.stmt]) -> str:
    """``python`` with each of ``statements`` replaced by ``pass`` (offsets are UTF-8 bytes)."""
    lines = [line.encode() for line in python.splitlines(keepends=True)]
    for node in reversed(statements):
        first, last = node.lineno - 1, node.end_lineno - 1
        ending = lines[last][node.end_col_offset:]
        lines[first:last + 1] = [lines[first][:node.col_offset] + b"pass" + ending + b"\n" * (last - first)]
    code = b"".join(lines).decode()
    try:
        ast.parse(code)
    except Exception:   # cannot happen for top-level statements; keep the calls rather than break the cell
        return python
    return code


def _check_call(node: ast.stmt) -> str | None:
    """``check("q1")`` or ``check.summary()`` as a statement: the question id ("" for the summary).

    ``check = checker("chNN")`` counts too (as ""): the checks run in the grading process, never in the
    kernel, so the kernel does not load them.
    """
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
            isinstance(node.value.func, ast.Name) and node.value.func.id == "checker":
        return ""
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return None
    func = node.value.func
    if isinstance(func, ast.Name) and func.id == "check":
        args = node.value.args
        return args[0].value if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str) else ""
    if isinstance(func, ast.Attribute) and func.attr == "summary" and isinstance(func.value, ast.Name) \
            and func.value.id == "check":
        return ""
    return None


def _bound_names(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    names = set()
    targets = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
    return names


_PARTIAL_FUNC = functools.partial.__dict__["func"].__get__       # read past a subclass's own attributes
_METHOD_FUNC = types.MethodType.__dict__["__func__"].__get__


def _unwrapped(obj):
    """The function under ``functools.partial(f, ...)``, a bound method, or ``functools.wraps``'s
    ``__wrapped__`` (a few levels), so that ``partial(course.sinusoidal_encoding)`` is seen as the course's."""
    for _ in range(8):
        if isinstance(obj, functools.partial):
            obj = _PARTIAL_FUNC(obj)
        elif isinstance(obj, types.MethodType):
            obj = _METHOD_FUNC(obj)
        elif isinstance(obj, types.FunctionType) and isinstance(obj.__dict__.get("__wrapped__"), types.FunctionType):
            obj = obj.__dict__["__wrapped__"]
        else:
            break
    return obj


def _wrapped_course_function(obj, name: str) -> str | None:
    """The course's function of the same name that the student's function ``obj`` calls, if any
    (``return course.sinusoidal_encoding(n, d)``): "module.qualname", else None. Advisory only (the student
    can hide it); the lecturer decides."""
    code = getattr(obj, "__code__", None)
    scope = getattr(obj, "__globals__", None)
    if not isinstance(code, types.CodeType) or not isinstance(scope, dict):
        return None
    names, stack = set(), [code]
    while stack and len(names) < 10_000:
        current = stack.pop()
        names.update(current.co_names)
        stack += [c for c in current.co_consts if isinstance(c, types.CodeType)]
    for ref in names:
        value = scope.get(ref)
        candidates = [value]
        if isinstance(value, types.ModuleType) and name in names:
            candidates.append(getattr(value, name, None))
        for candidate in candidates:
            module = getattr(candidate, "__module__", None) if callable(candidate) else None
            if (isinstance(module, str) and module.startswith("posenc.") and not module.startswith("posenc.exercises")
                    and getattr(candidate, "__name__", None) == name and candidate is not obj):
                return f"{module}.{candidate.__qualname__}"
    return None


def _make_shell():
    """The IPython shell that gives cells ``get_ipython()`` and magics (no history, no thread)."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    if InteractiveShell.initialized():
        return InteractiveShell.instance()
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.showtraceback = lambda *args, **kwargs: None     # errors are reported as data instead
    return shell


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    control_fd = int(argv[0])
    isolated = "--isolate" in argv[1:]
    zygote_main(control_fd, [m for m in argv[1:] if m and m != "--isolate"], isolated)


if __name__ == "__main__":
    main()
