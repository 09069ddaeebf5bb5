"""The student's side of the grader: a fork server and the kernel processes it forks.

Nothing in this module ever sees a reference answer, a judge, a private check's code or another
student's work: questions reach a kernel only as probes, plain data (``posenc.exercises.probe``). It runs in two roles:

* the **fork server** (``python -m posenc.grader.worker``): imports the course's modules once (NumPy,
  IPython, ``posenc.exercises.<set>`` and what the exercise notebook imports, torch included for the sets that
  use it), then forks one fresh kernel per submission on request. Forking is what amortises the start-up:
  each kernel is a new process with a clean namespace, started in milliseconds.
* the **kernel**: a forked child in its own session, temporary folder and resource limits. It runs the
  cells it is sent and answers collection requests, each under a time limit, and replies with plain JSON.

Frames on the kernel's socket are an 8-byte big-endian length and a UTF-8 JSON body.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import time
import types

HEADER = struct.Struct("!Q")
MAX_REQUEST = 512 * 2**20


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


def _set_parent_death_signal() -> None:
    """Die with the parent (Linux): no orphaned kernel keeps looping when the grader is killed."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the grader kills its kernels itself
        pass


def _vm_data_bytes() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ---------------------------------------------------------------------------------------------------
# The fork server


def zygote_main(control_fd: int, warm: list[str]) -> None:
    _set_parent_death_signal()
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

    _make_shell()

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

    def reply(obj):
        control.sendall(json.dumps(obj).encode())

    reply({"ready": True, "imported": imported, "failed": failed, "vm_data": _vm_data_bytes(),
           "pid": os.getpid()})
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
            pid = os.fork()
            if pid == 0:
                try:
                    control.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    kernel_main(fds[0], request)
                finally:
                    os._exit(0)
            for fd in fds:
                os.close(fd)
            reply({"pid": pid})
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


def _limit(which: int, soft: int) -> None:
    try:
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(which, (soft, hard))
    except (ValueError, OSError):
        pass


def kernel_main(channel_fd: int, setup: dict) -> None:
    os.setsid()
    _set_parent_death_signal()
    workdir = setup["workdir"]
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

    # Limits: memory on top of what the warm imports already hold, file size, no core dumps.
    if setup.get("memory_bytes"):
        _limit(resource.RLIMIT_DATA, _vm_data_bytes() + int(setup["memory_bytes"]))
    if setup.get("file_bytes"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)    # a too-big write raises OSError instead
        _limit(resource.RLIMIT_FSIZE, int(setup["file_bytes"]))
    if setup.get("cpu_seconds"):
        _limit(resource.RLIMIT_CPU, int(setup["cpu_seconds"]))
    _limit(resource.RLIMIT_CORE, 0)
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
    from posenc.grader.sandbox import confine

    sandbox = confine(workdir) if setup.get("sandbox", True) else []
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

    def describe(exc) -> dict:
        try:
            name = type_(exc).__name__
            if isinstance_(exc, _Timeout):
                return {"status": "timeout"}
            if isinstance_(exc, SystemExit):
                return {"status": "error", "error": f"SystemExit: {exc.code}", "error_type": "SystemExit"}
            return {"status": "error", "error": f"{name}: {exc}"[:2000], "error_type": name}
        except base_exception:
            return {"status": "error", "error": "an exception that cannot be described"}

    def info(request):
        return {"status": "ok", "sandbox": sandbox, "pid": os.getpid()}

    def origins(request):
        """Where each named function or class comes from (the module it was defined in)."""
        found = {}
        for name in request.get("names", []):
            obj = namespace.get(name)
            if isinstance_(obj, (types.FunctionType, types.BuiltinFunctionType, type)):
                module, qualname = obj.__dict__.get("__module__") if isinstance_(obj, type) else obj.__module__, \
                    obj.__qualname__
                found[name] = [module if isinstance_(module, str) else None,
                               qualname if isinstance_(qualname, str) else None]
        return {"status": "ok", "origins": found}

    handlers = {"run": run, "collect": collect, "info": info, "origins": origins}
    while True:
        body = recv_frame(channel)
        if body is None:
            os._exit(0)
        request, reply = {}, None
        try:
            request = loads(body)
            if type_(request) is not dict_type:
                raise ValueError("not a request")
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
            if len_(text) > max_reply:
                text = dumps({"id": request.get("id"), "status": "error", "error_type": "TooLarge",
                              "error": f"the answers are too large to check ({len_(text) / 2**20:.0f} MB)"})
            send_frame(channel, text.encode())
        except base_exception as exc:  # could not even report: say so briefly
            send_frame(channel, dumps({"id": request.get("id"), "status": "error",
                                       "error": f"could not report: {type_(exc).__name__}"}).encode())


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
    zygote_main(control_fd, [m for m in argv[1:] if m])


if __name__ == "__main__":
    main()
