"""The grader's side of a kernel: start the fork server, fork kernels, talk to them under deadlines.

Every call has a deadline. The kernel enforces the time limit itself (an alarm in the student's code);
when it does not answer within the limit plus a grace period, or answers with something that is not a
well-formed reply, the grader kills it (through a pidfd of its supervisor, which works across the
sandbox's PID namespaces; its process group without bubblewrap) and says so. Replies are size-capped JSON
and are only ever *decoded* here, never executed.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from posenc.grader import sandbox
from posenc.grader.worker import HEADER, ISOLATION_FAILED, bounded_loads, send_frame

GRACE_SECONDS = 2.0


def wall_seconds(cpu_seconds: float) -> float:
    """The wall-clock deadline for a call limited to ``cpu_seconds`` of CPU time (the kernel's own limit)."""
    return 3 * cpu_seconds + GRACE_SECONDS


class KernelError(Exception):
    """The kernel could not answer: it died, hung past its deadline or broke the protocol."""

    def __init__(self, kind: str, message: str, budget: bool = False):
        super().__init__(message)
        self.kind = kind          # "died", "hung", "protocol", "limit" (stopped for going over one)
        self.message = message
        self.budget = budget      # hung because the time the caller gave (``wall``) ran out


@dataclass
class Limits:
    memory_mb: float = 1024.0       # on top of the warm imports
    file_mb: float = 64.0           # largest file the student's code may write
    disk_mb: float = 256.0          # all its files together (the size of its tmpfs, under bubblewrap)
    max_reply_mb: float = 64.0      # largest answer the grader accepts from a kernel
    cpu_seconds: int = 3600         # backstop only; the per-call limits do the real work
    open_files: int = 512
    threads: int = 64               # threads of a kernel (a limit inside bubblewrap; counted by the grader without)
    sandbox: bool = True            # bubblewrap around the fork servers, namespaces per kernel
    confine: bool = True            # Landlock and seccomp in every kernel, where the system has them

    def setup(self, workdir: str | None) -> dict:
        """The kernel's part of a fork request."""
        mb = 2**20
        return {"workdir": workdir, "memory_bytes": int(self.memory_mb * mb) if self.memory_mb else 0,
                "file_bytes": int(self.file_mb * mb) if self.file_mb else 0,
                "disk_bytes": int(self.disk_mb * mb) if self.disk_mb else 0,
                "cpu_seconds": self.cpu_seconds, "max_reply_bytes": int(self.max_reply_mb * mb),
                "open_files": self.open_files, "threads": self.threads, "confine": self.confine}


# The environment of the fork servers and kernels: nothing of the lecturer's shell (tokens, paths).
KERNEL_VARIABLES = {
    "MPLBACKEND": "Agg", "PYTHONSAFEPATH": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "TQDM_DISABLE": "1",
}


def kernel_environment(workdir: str | None = None, sandboxed: bool = False) -> dict:
    """A small environment for the student's process: no tokens or other secrets of the lecturer's shell."""
    if sandboxed:
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp", "TMPDIR": "/tmp",
               "PYTHONPATH": str(sandbox.package_dir().parent)}
    else:
        keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT", "TZ")
        env = {k: v for k, v in os.environ.items() if k in keep}
        if workdir:
            env.update({"HOME": workdir, "TMPDIR": workdir})
    env.update(KERNEL_VARIABLES)
    return env


class ForkServer:
    """One fork server per exercise set, with that set's modules imported once; inside bubblewrap
    (``sandboxed``), or a plain process (``--no-sandbox``)."""

    def __init__(self, warm: list[str], workdir: str, sandboxed: bool = True, python: str | None = None,
                 user: int | None = None):
        self.warm, self.sandboxed = list(warm), sandboxed
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        self.lock = threading.Lock()
        command = [python or sys.executable, "-m", "posenc.grader.worker", str(theirs.fileno()),
                   *(["--isolate"] if sandboxed else []), *self.warm]
        if sandboxed:
            command = sandbox.launch_command(command, kernel_environment(sandboxed=True))
            env, cwd = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "/"
        else:
            env, cwd = kernel_environment(workdir), workdir
        # ``user``: without bubblewrap, as root, the server and its kernels run as this unprivileged user
        # (a Gradescope container: see posenc.grader.gradescope)
        as_user = {} if user is None else {"user": user, "group": user, "extra_groups": []}
        self.process = subprocess.Popen(
            command, pass_fds=[theirs.fileno()], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, **as_user)
        theirs.close()
        ready, _, _ = select.select([self.control], [], [], 120)
        data = self.control.recv(65536) if ready else b""
        if not data:
            self.close()
            err = self.process.stderr.read().decode(errors="replace")[-2000:].strip()
            where = "inside bubblewrap " if sandboxed else ""
            raise sandbox.SandboxError(f"the grader's fork server did not start {where}({err or 'no message'})",
                                       sandbox.userns_hint(err) if sandboxed else "")
        self.info = json.loads(data)
        self.process.stderr.close()
        if sandboxed and self.info.get("isolation_error"):
            self.close()
            raise sandbox.SandboxError("inside bubblewrap, a kernel cannot get namespaces of its own "
                                       f"({self.info['isolation_error']}): are nested user namespaces "
                                       "disabled on this machine?")
        self.sandbox: list[str] | None = None      # what confines its kernels, once one has said

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _ask(self, request: dict, fds: list[int] = (), timeout: float = 30.0) -> tuple[dict, list[int]]:
        with self.lock:
            if fds:
                socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
            else:
                self.control.sendall(json.dumps(request).encode())
            ready, _, _ = select.select([self.control], [], [], timeout)
            data, handles = (socket.recv_fds(self.control, 65536, 4)[:2] if ready else (b"", []))
        if not data:
            for fd in handles:
                os.close(fd)
            raise RuntimeError("the grader's fork server stopped answering")
        return json.loads(data), handles

    def spawn(self, limits: Limits, workdir: str | None = None) -> "Kernel":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            reply, handles = self._ask({"op": "fork", **limits.setup(workdir)}, [theirs.fileno()])
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return Kernel(reply["pid"], ours, self, int(limits.max_reply_mb * 2**20) + 4096,
                      pidfd=handles[0] if handles else None, own_group=not self.sandboxed,
                      threads=None if self.sandboxed else limits.threads)

    def exit_status(self, pid: int, wait: float = 2.0) -> tuple[int | None, int | None]:
        try:
            reply, _ = self._ask({"op": "status", "pid": pid, "wait": wait}, timeout=wait + 10)
        except Exception:
            return None, None
        return reply.get("code"), reply.get("signal")

    def close(self, wait: float = 2.0) -> None:
        """Stop the server (it exits when its socket closes; its kernels die with it), killing it after
        ``wait`` seconds."""
        try:
            self.control.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


class Kernel:
    """One student's process. ``call`` sends a request and waits, at most, for its deadline.

    Deadlines count the time the kernel ran or slept, not the time it waited for a CPU: on a busy machine
    (or next to a classmate whose threads hog both cores) its deadline moves on by the time its main thread
    spent in the run queue (``/proc/PID/schedstat``), up to ``MAX_STRETCH`` times the deadline. So nobody's
    load can push a classmate's code past its time."""

    MAX_STRETCH = 3.0
    THREAD_WATCH = 0.05      # seconds between two counts of a kernel's threads (without bubblewrap)

    def __init__(self, pid: int, sock: socket.socket, server: ForkServer | None, max_frame: int,
                 pidfd: int | None = None, own_group: bool = True, threads: int | None = None):
        self.pid, self.sock, self.server, self.max_frame = pid, sock, server, max_frame
        # Without bubblewrap no resource limit counts one kernel's threads (RLIMIT_NPROC counts all of its
        # user's processes): the grader counts them while it waits, and stops a kernel over ``threads``.
        self.threads = threads
        self.pidfd = pidfd            # the process to kill, even across PID namespaces
        self.own_group = own_group    # ``pid`` is a process group of this machine's PID namespace
        self.sock.setblocking(False)
        self.next_id = 0
        self.alive = True
        self.waited = 0.0             # seconds the last call spent waiting for a CPU
        self._schedstat: str | None = None

    # -- time spent waiting for a CPU ----------------------------------------------------------------
    def _kernel_pid(self) -> int:
        """The kernel's pid on this machine: ``pid`` itself, or under bubblewrap the grandchild of the
        supervisor the pidfd holds (the namespace's PID 1 has started the kernel)."""
        if self.own_group or self.pidfd is None:
            return self.pid
        with open(f"/proc/self/fdinfo/{self.pidfd}") as info:
            pid = next(int(line.split()[1]) for line in info if line.startswith("Pid:"))
        for _ in range(2):
            with open(f"/proc/{pid}/task/{pid}/children") as children:
                pid = int(children.read().split()[0])
        return pid

    def _waiting(self) -> float | None:
        """Seconds the kernel's main thread has waited in the run queue since it started (None: unknown)."""
        try:
            if self._schedstat is None:
                self._schedstat = f"/proc/{self._kernel_pid()}/schedstat"
            with open(self._schedstat) as stat:
                return int(stat.read().split()[1]) / 1e9
        except (OSError, ValueError, IndexError, StopIteration):
            return None

    def _read(self, size: int, clock: dict) -> bytes:
        chunks, remaining = [], size
        while remaining:
            left = clock["deadline"] - time.monotonic()
            wait = min(left, self.THREAD_WATCH) if self.threads else left
            ready, _, _ = select.select([self.sock], [], [], max(wait, 0.0))
            if not ready:                 # (an answer already there counts, however late this thread looks)
                if self.threads and self._thread_count() > self.threads:
                    raise KernelError("limit", f"started more than {self.threads} threads")
                if wait < left or left > 0 or self._stretch(clock):
                    continue
                raise KernelError("hung", "no answer in time", budget=clock["budget"])
            try:
                chunk = self.sock.recv(min(remaining, 1 << 20))
            except BlockingIOError:
                continue
            except OSError as exc:
                raise KernelError("died", f"connection lost ({exc})") from None
            if not chunk:
                raise KernelError("died", "the kernel process ended")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _thread_count(self) -> int:
        """How many threads the kernel has now (0 where it cannot be told)."""
        try:
            with open(f"/proc/{self.pid}/status") as status:
                return next((int(line.split()[1]) for line in status if line.startswith("Threads:")), 0)
        except (OSError, ValueError, IndexError):
            return 0

    def _stretch(self, clock: dict) -> bool:
        """Move the deadline on by the time spent waiting for a CPU since it was last moved; False when
        there is none to add (the kernel ran or slept through its time) or the stretch is used up."""
        waiting = self._waiting()
        if waiting is None:
            return False
        extra = min(waiting - clock["mark"], clock["limit"] - clock["deadline"])
        clock["mark"] = waiting
        if extra < 0.01:
            return False
        clock["deadline"] += extra
        return True

    def call(self, request: dict, timeout: float, wall: float | None = None, payload: bytes | None = None) -> dict:
        """Send ``request`` with a time limit of ``timeout`` seconds of CPU and at most ``wall`` seconds of
        waiting (default: ``wall_seconds(timeout)``; time spent waiting for a CPU does not count); the
        reply dict, or KernelError (the kernel is then dead). ``waited`` says how long it waited for a CPU.
        ``payload``: bytes the request is about, sent as they are in a frame of their own (never copied)."""
        if not self.alive:
            raise KernelError("died", "the kernel is not running")
        self.next_id = secrets.randbits(62)      # unguessable: a frame forged in advance never matches
        request = dict(request, id=self.next_id, timeout=timeout, payload=payload is not None)
        start, allowed = time.monotonic(), wall_seconds(timeout)
        budget = wall is not None and wall < allowed
        allowed = min(allowed, wall) if wall is not None else allowed
        origin = self._waiting() or 0.0        # (0: the kernel is being born, all its waiting is this call's)
        clock = {"deadline": start + allowed, "limit": start + allowed * (1 + self.MAX_STRETCH),
                 "budget": budget, "mark": origin}
        try:
            self.sock.settimeout(max(1.0, timeout))
            send_frame(self.sock, json.dumps(request).encode())
            if payload is not None:
                self.sock.sendall(HEADER.pack(len(payload)))
                self.sock.sendall(payload)
            self.sock.setblocking(False)
        except OSError as exc:
            self.kill(grace=1.0)
            raise KernelError("died", f"the kernel process ended ({exc})") from None
        try:
            (size,) = HEADER.unpack(self._read(HEADER.size, clock))
            if size > self.max_frame:
                raise KernelError("protocol", f"an answer of {size / 2**20:.0f} MB, over the limit")
            body = self._read(size, clock)
            try:
                reply = bounded_loads(body)
            except (ValueError, RecursionError, MemoryError) as exc:
                raise KernelError("protocol", f"an answer that is not valid JSON or too costly to read "
                                              f"({str(exc)[:60]})") from None
            if not isinstance(reply, dict):
                raise KernelError("protocol", "an answer that is not a JSON object")
            if reply.get("id") != self.next_id:    # one question at a time: any other answer is forged
                raise KernelError("protocol", "an answer to no question asked (forged?)")
            if self.threads and self._thread_count() > self.threads:     # (threads started in a burst)
                raise KernelError("limit", f"started more than {self.threads} threads")
            return reply
        except KernelError as exc:
            self.kill(grace=1.0 if exc.kind == "died" else 0.0)
            raise
        finally:
            now = self._waiting() if self.alive else clock["mark"]
            self.waited = max(0.0, now - origin) if now is not None else 0.0

    def close(self) -> None:
        """End the kernel: it exits by itself when its socket closes (killed if it has not within 0.5 s)."""
        if self.alive:
            try:
                self.sock.close()
            except OSError:
                pass
            self.kill(grace=0.5)

    def kill(self, grace: float = 0.0) -> None:
        """Kill the kernel (after up to ``grace`` seconds for one that is ending by itself, so that its
        supervisor can tell how it ended)."""
        if not self.alive:
            return
        self.alive = False
        if self.pidfd is not None and grace > 0:
            try:
                select.select([self.pidfd], [], [], grace)      # readable once the process has ended
            except (OSError, ValueError):
                pass
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
            os.close(self.pidfd)
            self.pidfd = None
        if self.own_group:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        try:
            self.sock.close()
        except OSError:
            pass

    def death(self) -> str:
        """How the kernel ended, in words, once it has."""
        code, sig = self.server.exit_status(self.pid)
        if code == ISOLATION_FAILED and self.server.sandboxed:
            return "could not be given namespaces of its own"
        if sig is not None:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            return f"was killed by signal {name}"
        if code is not None:
            return f"exited with code {code}"
        return "ended"
