"""The grader's side of a kernel: start the fork server, fork kernels, talk to them under deadlines.

Every call has a deadline. The kernel enforces the time limit itself (an alarm in the student's code);
when it does not answer within the limit plus a grace period, or answers with something that is not a
well-formed reply, the grader kills its whole process group and says so. Replies are size-capped JSON and
are only ever *decoded* here, never executed.
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

from posenc.grader.worker import HEADER, send_frame

GRACE_SECONDS = 2.0


def wall_seconds(cpu_seconds: float) -> float:
    """The wall-clock deadline for a call limited to ``cpu_seconds`` of CPU time (the kernel's own limit)."""
    return 3 * cpu_seconds + GRACE_SECONDS


class KernelError(Exception):
    """The kernel could not answer: it died, hung past its deadline or broke the protocol."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind          # "died", "hung", "protocol"
        self.message = message


@dataclass
class Limits:
    memory_mb: float = 1024.0       # on top of the warm imports
    file_mb: float = 64.0           # largest file the student's code may write
    max_reply_mb: float = 64.0      # largest answer the grader accepts from a kernel
    cpu_seconds: int = 3600         # backstop only; the per-call limits do the real work
    sandbox: bool = True            # Landlock and seccomp where the system has them


def kernel_environment(workdir: str | None = None) -> dict:
    """A small environment for the student's process: no tokens or other secrets of the lecturer's shell."""
    keep = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT", "TZ")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update({
        "MPLBACKEND": "Agg", "PYTHONSAFEPATH": "1", "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "TQDM_DISABLE": "1",
    })
    if workdir:
        env.update({"HOME": workdir, "TMPDIR": workdir})
    return env


class ForkServer:
    """One fork server per exercise set, with that set's modules imported once."""

    def __init__(self, warm: list[str], workdir: str, python: str | None = None):
        self.warm = list(warm)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.control = ours
        self.lock = threading.Lock()
        self.process = subprocess.Popen(
            [python or sys.executable, "-m", "posenc.grader.worker", str(theirs.fileno()), *self.warm],
            pass_fds=[theirs.fileno()], cwd=workdir, env=kernel_environment(workdir),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True)
        theirs.close()
        ready, _, _ = select.select([self.control], [], [], 120)
        data = self.control.recv(65536) if ready else b""
        if not data:
            self.close()
            err = self.process.stderr.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"the grader's fork server did not start: {err}")
        self.info = json.loads(data)
        self.process.stderr.close()
        self.sandbox: list[str] | None = None      # what confines its kernels, once one has said

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _ask(self, request: dict, fds: list[int] = (), timeout: float = 30.0) -> dict:
        with self.lock:
            if fds:
                socket.send_fds(self.control, [json.dumps(request).encode()], list(fds))
            else:
                self.control.sendall(json.dumps(request).encode())
            ready, _, _ = select.select([self.control], [], [], timeout)
            data = self.control.recv(65536) if ready else b""
        if not data:
            raise RuntimeError("the grader's fork server stopped answering")
        return json.loads(data)

    def spawn(self, workdir: str, limits: Limits) -> "Kernel":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        setup = {"op": "fork", "workdir": workdir,
                 "memory_bytes": int(limits.memory_mb * 2**20) if limits.memory_mb else 0,
                 "file_bytes": int(limits.file_mb * 2**20) if limits.file_mb else 0,
                 "cpu_seconds": limits.cpu_seconds,
                 "max_reply_bytes": int(limits.max_reply_mb * 2**20), "sandbox": limits.sandbox}
        try:
            reply = self._ask(setup, [theirs.fileno()])
        finally:
            theirs.close()
        return Kernel(reply["pid"], ours, self, int(limits.max_reply_mb * 2**20) + 4096)

    def exit_status(self, pid: int, wait: float = 2.0) -> tuple[int | None, int | None]:
        try:
            reply = self._ask({"op": "status", "pid": pid, "wait": wait}, timeout=wait + 10)
        except Exception:
            return None, None
        return reply.get("code"), reply.get("signal")

    def close(self) -> None:
        try:
            self.control.close()
        except OSError:
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
    """One student's process. ``call`` sends a request and waits, at most, for its deadline."""

    def __init__(self, pid: int, sock: socket.socket, server: ForkServer, max_frame: int):
        self.pid, self.sock, self.server, self.max_frame = pid, sock, server, max_frame
        self.sock.setblocking(False)
        self.next_id = 0
        self.alive = True

    def _read(self, size: int, deadline: float) -> bytes:
        chunks, remaining = [], size
        while remaining:
            left = deadline - time.monotonic()
            if left <= 0:
                raise KernelError("hung", "no answer in time")
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                continue
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

    def call(self, request: dict, timeout: float) -> dict:
        """Send ``request`` with a time limit; the reply dict, or KernelError (the kernel is then dead)."""
        if not self.alive:
            raise KernelError("died", "the kernel is not running")
        self.next_id = secrets.randbits(62)      # unguessable: a frame forged in advance never matches
        request = dict(request, id=self.next_id, timeout=timeout)
        deadline = time.monotonic() + wall_seconds(timeout)
        try:
            self.sock.settimeout(max(1.0, timeout))
            send_frame(self.sock, json.dumps(request).encode())
            self.sock.setblocking(False)
        except OSError as exc:
            self.kill()
            raise KernelError("died", f"the kernel process ended ({exc})") from None
        try:
            while True:
                (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
                if size > self.max_frame:
                    raise KernelError("protocol", f"an answer of {size / 2**20:.0f} MB, over the limit")
                try:
                    reply = json.loads(self._read(size, deadline))
                except (ValueError, RecursionError):
                    raise KernelError("protocol", "an answer that is not valid JSON") from None
                if not isinstance(reply, dict):
                    raise KernelError("protocol", "an answer that is not a JSON object")
                if reply.get("id") == self.next_id:
                    return reply
                # a stale or forged frame: ignore it and keep waiting for the real answer
        except KernelError:
            self.kill()
            raise

    def kill(self) -> None:
        if not self.alive:
            return
        self.alive = False
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
        if sig is not None:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            return f"was killed by signal {name}"
        if code is not None:
            return f"exited with code {code}"
        return "ended"
