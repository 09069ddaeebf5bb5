"""The kernels' confinement, tried from inside a kernel: what a student's code can and cannot reach.

Under bubblewrap (``posenc.grader.sandbox``): a kernel sees no other process, only the Python environment
and the course library of the files, none of the grader's environment, and cannot change another
kernel's limits, priority or CPUs, nor the grader's. With and without bubblewrap: its limits hold (soft =
hard), seccomp keeps it to itself. One fork server serves every test here.
"""

from __future__ import annotations

import os
import resource
import socket
import textwrap

import pytest

from posenc.exercises.probe import decode, encode
from posenc.grader.kernel import ForkServer, KernelError, Limits
from posenc.grader.sandbox import landlock_abi, package_dir
from tests.conftest import ROOT
from tests.submissions import require_bwrap

WARM = ["numpy", "posenc", "posenc.exercises"]


@pytest.fixture(scope="module")
def server():
    require_bwrap()
    server = ForkServer(WARM, "/", sandboxed=True)
    yield server
    server.close()


def run(kernel, *parts: str, timeout: float = 20) -> None:
    reply = kernel.call({"op": "run", "code": "\n".join(textwrap.dedent(p) for p in parts)}, timeout)
    assert reply["status"] == "ok", reply


def value(kernel, name: str):
    reply = kernel.call({"op": "collect", "probe": encode({"name": name, "steps": [{"op": "value"}]})}, 10)
    return decode(reply["collected"])["data"][0]


TRY = '''
report = {}
def attempt(name, action):
    try:
        report[name] = ("ok", repr(action())[:200])
    except BaseException as exc:
        report[name] = (type(exc).__name__, str(exc)[:200])
'''


def test_a_kernel_sees_only_itself_the_environment_and_the_course_library(server, tmp_path):
    hand_ins = tmp_path / "hand-ins"
    hand_ins.mkdir()
    (hand_ins / "ch01_alice.ipynb").write_text("alice's answers")
    kernel = server.spawn(Limits())
    try:
        run(kernel, TRY, f'''
        import os, sys, importlib
        from posenc.grader import sandbox
        report["pid"], report["uid"], report["cwd"] = os.getpid(), os.getuid(), os.getcwd()
        report["proc"], report["env"] = os.listdir("/proc"), sorted(os.environ)
        report["capabilities"] = sandbox.capabilities()
        report["exercises"] = sorted(os.listdir({str(package_dir() / "exercises")!r}))
        report["checks"] = os.listdir({str(package_dir() / "exercises" / "checks")!r})
        report["framework_loaded"] = [m for m in sys.modules if m.startswith("posenc.exercises.")]
        for path in ({str(hand_ins)!r}, {str(ROOT / "tests")!r}, {str(ROOT / "solutions")!r},
                     {str(ROOT / "notebooks")!r}, "/home", "/etc/passwd", "/etc/shadow", "/root/.bash_history"):
            report["exists " + path] = os.path.exists(path)
        for module in ("posenc.exercises.checks.ch01", "posenc.exercises.framework", "posenc.grader.session",
                       "posenc.exercises.authoring"):
            attempt(module, lambda: importlib.import_module(module))
        attempt("library", lambda: importlib.import_module("posenc.lib.encoding").sinusoidal_encoding(2, 2))
        ''')
        report = value(kernel, "report")
    finally:
        kernel.kill()
    assert report["pid"] == 2 and report["proc"] == [] and report["cwd"] == "/tmp"   # alone, /proc hidden
    assert report["capabilities"] == 0
    if os.geteuid() == 0:
        assert report["uid"] == 65534            # bubblewrap runs as nobody when the grader is root
    assert set(report["env"]) <= {"PATH", "LANG", "HOME", "TMPDIR", "PYTHONPATH", "PWD", "MPLBACKEND",
                                  "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONNOUSERSITE",
                                  "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                                  "NUMEXPR_NUM_THREADS", "PYDEVD_DISABLE_FILE_VALIDATION", "TQDM_DISABLE"}
    assert report["exercises"] == ["__init__.py", "checks", "probe.py"] and report["checks"] == []
    assert "posenc.exercises.framework" not in report["framework_loaded"]
    assert not [key for key, seen in report.items() if key.startswith("exists ") and seen], report
    for module in ("posenc.exercises.checks.ch01", "posenc.exercises.framework", "posenc.grader.session",
                   "posenc.exercises.authoring"):
        assert report[module][0] == "ModuleNotFoundError", report[module]
    assert report["library"][0] == "ok"           # the course library stays available


SABOTAGE = TRY + '''
import os, resource, signal
me = os.getpid()
for pid in range(1, 2048):
    if pid == me:
        continue
    for which, limit in ((resource.RLIMIT_AS, 1 << 20), (resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_NOFILE, 3)):
        attempt(f"prlimit {pid}", lambda: resource.prlimit(pid, which, (limit, limit)))
    attempt(f"nice {pid}", lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))
    attempt(f"cpus {pid}", lambda: os.sched_setaffinity(pid, {0}))
    attempt(f"stop {pid}", lambda: os.kill(pid, signal.SIGSTOP))
attempt("nice user", lambda: os.setpriority(os.PRIO_USER, 0, 19))
attempt("nice group", lambda: os.setpriority(os.PRIO_PGRP, 0, 19))
attempt("kill all", lambda: os.kill(-1, signal.SIGKILL))
'''

VICTIM = '''
import os, resource, numpy as np
limits = [resource.getrlimit(which) for which in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE)]
memory = float(np.ones(25_000_000).sum())        # 200 MB
with open("data.bin", "wb") as handle:
    handle.write(b"x" * (10 << 20))
state = [limits, memory, os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0))]
'''


def test_one_kernel_cannot_touch_another_or_the_grader(server, tmp_path):
    own = [resource.getrlimit(which) for which in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE)]
    own_priority = os.getpriority(os.PRIO_PROCESS, 0)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(tmp_path / "grader.sock"))
    listener.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(b"\0posenc-test-" + os.urandom(4).hex().encode())
    abstract.listen()
    victim, saboteur = server.spawn(Limits()), server.spawn(Limits())
    try:
        run(victim, VICTIM)
        before = value(victim, "state")
        run(saboteur, SABOTAGE, timeout=60)
        run(saboteur, TRY, f'''
        import socket
        for name, address in (("path", {str(tmp_path / "grader.sock")!r}), ("abstract", {abstract.getsockname()!r})):
            attempt(name, lambda: socket.socket(socket.AF_UNIX).connect(address))
        attempt("pair", lambda: len(socket.socketpair()))
        ''')
        report = value(saboteur, "report")
        run(victim, VICTIM)
        after = value(victim, "state")
    finally:
        victim.kill()
        saboteur.kill()
        listener.close()
        abstract.close()
    assert after == before and before[1] == 25_000_000.0 and before[2] == 0
    assert not [key for key, (outcome, _) in report.items() if outcome == "ok" and key not in ("pair",)], report
    assert report["pair"][0] == "ok"                                     # a socketpair is harmless
    assert [resource.getrlimit(w) for w in (resource.RLIMIT_AS, resource.RLIMIT_FSIZE, resource.RLIMIT_NOFILE)] == own
    assert os.getpriority(os.PRIO_PROCESS, 0) == own_priority and server.alive


LIMITS = TRY + '''
import os, mmap, resource, threading, time
for which in (resource.RLIMIT_AS, resource.RLIMIT_DATA, resource.RLIMIT_FSIZE, resource.RLIMIT_CPU,
              resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC):
    soft, hard = resource.getrlimit(which)
    report[f"soft=hard {which}"] = soft == hard
    attempt(f"raise {which}", lambda: resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)))
attempt("shared memory", lambda: mmap.mmap(-1, 1 << 30, flags=mmap.MAP_SHARED))
attempt("memfd", lambda: os.memfd_create("x"))
def fill():
    for i in range(8):
        with open(f"fill{i}", "wb") as handle:
            handle.write(b"x" * (16 << 20))
attempt("big file", lambda: open("big", "wb").write(b"x" * (17 << 20)))
attempt("disk", fill)
def clear():
    for name in os.listdir("."):
        if os.path.isfile(name):         # (a checkout under /tmp shows there, read-only)
            os.remove(name)
clear()
attempt("many files", lambda: [open(f"n{i}", "w").close() for i in range(20_000)])
clear()
with open("mine.txt", "w") as handle:
    handle.write("x")
attempt("chmod", lambda: os.chmod("mine.txt", 0o777))
attempt("utime", lambda: os.utime("mine.txt", (0, 0)))
attempt("xattr", lambda: os.setxattr("mine.txt", "user.x", b"1"))
attempt("fork", os.fork)
attempt("program", lambda: os.execv("/bin/true", ["true"]))
attempt("socket", lambda: __import__("socket").socket())
attempt("outside", lambda: open("/usr/planted", "w"))
done = []
worker = threading.Thread(target=lambda: done.append(1))
worker.start()
worker.join()
report["thread"] = done
threads = []
def many():
    for _ in range(200):
        thread = threading.Thread(target=time.sleep, args=(2,))
        thread.start()
        threads.append(thread)
attempt("200 threads", many)
'''


def test_limits_hold_and_cannot_be_raised(server):
    kernel = server.spawn(Limits(memory_mb=200, disk_mb=64, file_mb=16))
    try:
        run(kernel, LIMITS, timeout=30)
        report = value(kernel, "report")
    finally:
        kernel.kill()
    assert all(report[key] for key in report if key.startswith("soft=hard")), report
    raised = [key for key in report if key.startswith("raise ") and report[key][0] == "ok"]
    assert not raised, report
    assert report["shared memory"][0] in ("OSError", "MemoryError"), report["shared memory"]
    assert report["disk"][0] == "OSError" and "No space left" in report["disk"][1]
    assert report["big file"][0] == "OSError" and "too large" in report["big file"][1]
    assert report["many files"][0] == "OSError" and "No space left" in report["many files"][1]
    for key in ("memfd", "chmod", "utime", "xattr", "fork", "program", "socket", "outside"):
        assert report[key][0] in ("PermissionError", "OSError"), (key, report[key])
    assert report["thread"] == [1]                                       # threads are fine
    assert report["200 threads"][0] == "RuntimeError"                     # but not without end


def test_without_bubblewrap_seccomp_still_keeps_a_kernel_to_itself(tmp_path):
    if landlock_abi() < 1:
        pytest.skip("no Landlock here")
    server = ForkServer(WARM, str(tmp_path), sandboxed=False)
    kernel = server.spawn(Limits(), str(tmp_path))
    try:
        run(kernel, TRY, f'''
        import os, resource, sys
        parent = os.getppid()
        attempt("prlimit parent", lambda: resource.prlimit(parent, resource.RLIMIT_FSIZE, (0, 0)))
        attempt("nice user", lambda: os.setpriority(os.PRIO_USER, 0, 19))
        attempt("cpus parent", lambda: os.sched_setaffinity(parent, {{0}}))
        attempt("socket", lambda: __import__("socket").socket(__import__("socket").AF_UNIX))
        attempt("chmod", lambda: os.chmod({str(tmp_path)!r}, 0o777))
        attempt("fork", os.fork)
        attempt("write outside", lambda: open({str(tmp_path.parent / "planted.txt")!r}, "w"))
        attempt("own prlimit", lambda: resource.prlimit(os.getpid(), resource.RLIMIT_CORE, (0, 0)))
        report["modules"] = [m for m in sys.modules if m.startswith(("posenc.exercises.", "posenc.grader."))]
        ''')
        report = value(kernel, "report")
    finally:
        kernel.kill()
        server.close()
    for key in ("prlimit parent", "nice user", "cpus parent", "socket", "chmod", "fork", "write outside"):
        assert report[key][0] == "PermissionError", (key, report[key])
    assert report["own prlimit"][0] == "ok"
    # Nothing that judges is loaded in a kernel (without bubblewrap it could still be imported).
    assert not [m for m in report["modules"] if m.startswith(("posenc.exercises.checks.", "posenc.exercises.framework",
                                                              "posenc.grader.session"))], report["modules"]
    assert not (tmp_path.parent / "planted.txt").exists()


def test_without_bubblewrap_a_kernel_reads_what_it_would_see_inside_bubblewrap(tmp_path):
    """Landlock (where the system has it) lets a kernel read only what bubblewrap would show it: not the
    checks' file names, the checkout's solutions, a classmate's folder, /proc beyond its own process (the
    command lines of every process), /sys or /etc; its own folder, the environment and the course library
    as usual (issue 32, item 5)."""
    if landlock_abi() < 1:
        pytest.skip("no Landlock here")
    classmate = tmp_path / "classmate"
    classmate.mkdir()
    (classmate / "answers.txt").write_text("a classmate's answers")
    own = tmp_path / "own"
    own.mkdir()
    server = ForkServer(WARM, str(own), sandboxed=False)
    kernel = server.spawn(Limits(), str(own))
    try:
        run(kernel, TRY, f'''
        import os
        parent = os.getppid()
        attempt("checks", lambda: os.listdir({str(package_dir() / "exercises" / "checks")!r}))
        attempt("solutions", lambda: os.listdir({str(ROOT / "solutions")!r}))
        attempt("classmate", lambda: open({str(classmate / "answers.txt")!r}).read())
        attempt("proc", lambda: os.listdir("/proc"))
        attempt("cmdline", lambda: open(f"/proc/{{parent}}/cmdline", "rb").read())
        attempt("passwd", lambda: open("/etc/passwd").read())
        attempt("sys", lambda: os.listdir("/sys"))
        with open("mine.txt", "w") as handle:
            handle.write("x")
        attempt("own file", lambda: open("mine.txt").read())
        attempt("own status", lambda: open("/proc/self/status").read()[:10])
        attempt("library", lambda: __import__("posenc.lib.encoding").lib.encoding.sinusoidal_encoding(2, 2).shape)
        attempt("numpy", lambda: __import__("numpy").linalg.svd(__import__("numpy").eye(3))[1].tolist())
        ''')
        report = value(kernel, "report")
    finally:
        kernel.kill()
        server.close()
    for key in ("checks", "solutions", "classmate", "proc", "cmdline", "passwd", "sys"):
        assert report[key][0] == "PermissionError", (key, report[key])
    for key in ("own file", "own status", "library", "numpy"):
        assert report[key][0] == "ok", (key, report[key])


def test_without_bubblewrap_a_kernel_that_starts_too_many_threads_is_stopped(tmp_path):
    """Inside bubblewrap a kernel's threads are limited in its own user namespace; without it, the grader
    counts them while it waits for the kernel, and stops one that has more than ``Limits.threads``."""
    server = ForkServer(WARM, str(tmp_path), sandboxed=False)
    kernel = server.spawn(Limits(threads=32), str(tmp_path))
    try:
        run(kernel, "import threading, time\nthreading.Thread(target=time.sleep, args=(0.5,)).start()")
        with pytest.raises(KernelError) as error:
            kernel.call({"op": "run", "code": "import threading, time\n"
                                              "for _ in range(200):\n"
                                              "    threading.Thread(target=time.sleep, args=(5,)).start()\n"
                                              "time.sleep(5)\n"}, 20)
    finally:
        kernel.kill()
        server.close()
    assert error.value.kind == "limit" and "more than 32 threads" in error.value.message


def test_without_bubblewrap_kernels_cannot_reach_into_each_other(tmp_path):
    """Same user, same /proc: a kernel cannot read or write another's memory (it is not dumpable)."""
    if os.geteuid() == 0:
        pytest.skip("root may read any process's memory; as root, grade inside bubblewrap")
    server = ForkServer(WARM, str(tmp_path), sandboxed=False)
    victim, reader = server.spawn(Limits(), str(tmp_path)), server.spawn(Limits(), str(tmp_path))
    try:
        run(victim, "import os\nmine = os.getpid()")
        pid = value(victim, "mine")
        run(reader, TRY, f'''
        attempt("mem", lambda: open("/proc/{pid}/mem", "rb"))
        attempt("environ", lambda: open("/proc/{pid}/environ", "rb").read())
        attempt("cwd", lambda: __import__("os").listdir("/proc/{pid}/cwd"))
        ''')
        report = value(reader, "report")
    finally:
        victim.kill()
        reader.kill()
        server.close()
    assert all(outcome == "PermissionError" for outcome, _ in report.values()), report


def test_a_classmate_hogging_the_cpus_does_not_run_out_anyones_time(server):
    """Sixteen threads spinning in one kernel leave another less CPU; what the other waits for a CPU is
    measured across the namespaces and does not count against it (see test_grade_units for the stretch)."""
    hog, honest = server.spawn(Limits(cpu_seconds=4)), server.spawn(Limits())
    try:
        run(hog, '''
        import threading
        def spin():
            while True:
                pass
        for _ in range(16):
            threading.Thread(target=spin, daemon=True).start()
        ''')
        reply = honest.call({"op": "run", "code": "import time\nt = time.process_time()\n"
                                                  "while time.process_time() - t < 0.5:\n    pass\n"}, 1.0)
        measured = honest._waiting()
    finally:
        hog.kill()
        honest.kill()
    assert reply["status"] == "ok", reply
    assert measured is not None and honest.waited >= 0


def test_a_checkout_under_tmp_stays_visible(tmp_path):
    """/tmp is a fresh tmpfs for the fork server and again for each kernel: what the environment needs
    from under it (a clone in /tmp/...) is bound after the tmpfs is there."""
    from posenc.grader.sandbox import bwrap_arguments

    args, binds = bwrap_arguments(["python"], {}, 2**20)
    tmpfs = args.index("--tmpfs")
    assert args[tmpfs + 1] == "/tmp"
    assert all(args.index(path) > tmpfs for path in binds)
