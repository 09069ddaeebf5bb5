"""Confining the students' code (Linux): bubblewrap around the fork servers, namespaces per kernel, then
Landlock and seccomp.

**With bubblewrap** (``bwrap``, the Debian/Ubuntu/Fedora package ``bubblewrap``; the default):

* ``launch_command`` starts each fork server inside ``bwrap`` with its own user, PID, mount, network, IPC
  and UTS namespaces and a cleared environment. The only files it sees, read-only, are the system's
  programs and libraries (``/usr``), the Python installation and its environment, and an allowlist of the
  course package (``PACKAGE_FILES``: the course library ``posenc.lib``, the experiment harness
  ``posenc.experiments``, whose chapter configurations an exercise may read, the book's notebook set-up and
  the few grader modules a kernel runs). ``posenc/exercises/checks/`` (reference answers, judges) is an
  empty folder there, and the framework, the generator, the checkout (solutions, tests, the hand-in
  folder), the private checks and the rest of the machine do not exist. ``/tmp`` is a small tmpfs.
  When the grader runs as root, bubblewrap runs as the unprivileged user ``nobody``
  (``_root_launch``), so no kernel is ever root outside its namespaces.
* every kernel forked by such a server gets namespaces of its own (``isolate``, run by the fork server's
  child): user, PID (the kernel is PID 1 and sees no other process), mount (a fresh tmpfs of
  ``disk_bytes`` as its folder ``/tmp``, ``/proc`` hidden), network (no interfaces, no abstract sockets
  shared with anyone) and IPC; then it drops every capability.

**Always** (with or without bubblewrap, ``confine``):

* **Landlock** (Linux 5.13+): files may be created, changed or deleted only in the kernel's folder; without
  bubblewrap, files may also be read (and folders listed) only where bubblewrap would show them
  (``readable_paths``): not the checks' names, the checkout, a classmate's folder, /proc beyond the kernel's
  own entry (the command lines of every process), /sys or /etc.
* **seccomp** (x86-64): no new processes or programs (threads are fine); signals, resource limits,
  priorities and CPU affinity only for itself; no sockets (a socketpair is fine); no changes to files'
  modes, owners, times, extended attributes or flags; no shared memory segments, message queues or
  memfds; no ptrace, io_uring, namespaces, mounts, BPF, keys or kernel modules; no giving up the death
  signal that ties the kernel to its supervisor.

``confine(workdir)`` returns the list of what was applied, so the grader can report it.

This file also runs as a script, without importing the package: ``python sandbox.py root-launch SPEC``
(see ``_root_launch``).
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import shutil
import sys
from pathlib import Path

BWRAP_VARIABLE = "POSENC_BWRAP"          # the bwrap program to use (a path); "" or "none": pretend none
NOBODY = 65534

# What a kernel may see of the course package (relative to the package folder). Everything else of it,
# the checks above all, is hidden; EMPTY_DIRS exist but are empty (``posenc.exercises`` lists its sets
# from ``checks``; in a kernel it finds none).
PACKAGE_FILES = ("__init__.py", "paths.py", "lib", "experiments", "book", "exercises/__init__.py",
                 "exercises/probe.py", "grader/__init__.py", "grader/worker.py", "grader/sandbox.py",
                 "grader/status.py")
EMPTY_DIRS = ("exercises/checks",)
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")

# Kernel flags (linux/sched.h, linux/mount.h)
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 4096, 0x4000, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2


class SandboxError(RuntimeError):
    """The sandbox cannot be set up on this machine: ``message`` says why, ``hint`` (part of the text) what a
    lecturer can change on their own machine (never in a container, where it cannot be changed)."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message + hint)
        self.message, self.hint = message, hint


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


# ---------------------------------------------------------------------------------------------------
# bubblewrap: the fork servers' outer sandbox


def find_bwrap() -> str | None:
    """The bwrap program, or None (``POSENC_BWRAP`` chooses another one; set to "none" to hide it)."""
    chosen = os.environ.get(BWRAP_VARIABLE)
    if chosen is not None:
        return chosen if chosen not in ("", "none") and os.access(chosen, os.X_OK) else None
    return shutil.which("bwrap")


def userns_hint(error: str) -> str:
    """What to do when bubblewrap cannot make its user namespace (its own words in ``error``)."""
    if "uid map" not in error and "user namespace" not in error.lower() and "Operation not permitted" not in error:
        return ""
    return ("; this system refuses unprivileged user namespaces. On Ubuntu 23.10 and later AppArmor restricts "
            "them: check with `sysctl kernel.apparmor_restrict_unprivileged_userns` (1: restricted) and allow "
            "bwrap with an AppArmor profile, or `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` "
            "for the session; elsewhere check `sysctl user.max_user_namespaces` (0: disabled) and "
            "`kernel.unprivileged_userns_clone`. See the course site, For lecturers, The sandbox, Ubuntu 23.10 and "
            "later (book/lecturers/sandbox.md)")


def package_dir() -> Path:
    return Path(__file__).resolve().parent.parent


def _runtime_roots() -> list[Path]:
    """The Python installation and environment the kernels run in (real paths and the paths used)."""
    roots: list[Path] = []
    for prefix in dict.fromkeys((sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)):
        for path in (Path(prefix).absolute(), Path(prefix).resolve()):
            if path.is_dir() and not any(path == r or r in path.parents for r in roots):
                roots = [r for r in roots if path not in r.parents] + [path]
    return [r for r in roots if not (r == Path("/usr") or Path("/usr") in r.parents)]


def other_copies(roots: list[Path]) -> list[Path]:
    """Every other copy of the course package that the folders bound into the sandbox hold where Python
    finds packages (``sys.path``, the site-packages of each root, ``/usr`` and ``/usr/local``): a second,
    non-editable install beside the editable one, a system-wide install, an egg or a zip. Each holds
    the checks (and, in a wheel, the exercise notebooks), so each is hidden, not only the copy the grader
    imported."""
    ours, name = package_dir(), package_dir().name
    places: list[Path] = [Path(p) for p in sys.path if p]
    bound = [*roots, Path("/usr")]
    for root in [*roots, Path("/usr"), Path("/usr/local")]:
        places += [*root.glob("lib*/python3*/site-packages"), *root.glob("lib*/python3*/dist-packages"),
                   *root.glob("lib*/python3/dist-packages")]
    seen, found = set(), []
    for place in places:
        try:
            place = place.absolute()
            if place in seen or not place.is_dir():
                continue
            seen.add(place)
            entries = [place / name] + [e for e in place.iterdir() if e.name.lower().startswith(name + "-")
                                         and e.name.lower().endswith((".egg", ".zip", ".whl"))]
        except OSError:
            continue
        for entry in entries:
            shown = any(root == entry or root in entry.parents for root in bound)
            if shown and entry.exists() and entry.resolve() != ours and entry not in found:
                found.append(entry)
    return found


def bwrap_arguments(command: list[str], env: dict[str, str], tmp_bytes: int) -> tuple[list[str], list[str]]:
    """bwrap's options for ``command``, and the host paths it binds (read-only), in order."""
    binds: list[str] = []
    args = ["--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--as-pid-1", "--die-with-parent", "--new-session", "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    # First the fresh file systems, then the binds (a checkout under /tmp stays visible on the new /tmp)
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--size", str(int(tmp_bytes)),
             "--tmpfs", "/tmp"]

    def bind(source: Path | str, dest: Path | str | None = None, must: bool = True) -> None:
        binds.append(str(source))
        args.extend(["--ro-bind" if must else "--ro-bind-try", str(source), str(dest or source)])

    bind("/usr")
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/" + name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            bind(path)
    for name in SYSTEM_FILES:
        if os.path.exists(name):
            bind(name)
    roots = _runtime_roots()
    for root in roots:
        bind(root)
    for copy in other_copies(roots):       # emptied where a bound folder shows it
        args += ["--tmpfs", str(copy)] if copy.is_dir() else ["--ro-bind", "/dev/null", str(copy)]
    package = package_dir()
    args += ["--tmpfs", str(package)]        # hides the package where a bound root holds it (installed)
    for relative in PACKAGE_FILES:
        if (package / relative).exists():
            bind(package / relative)
    for relative in EMPTY_DIRS:
        args += ["--dir", str(package / relative)]
    args += ["--remount-ro", str(package), "--remount-ro", "/", "--chdir", "/tmp", "--", *command]
    return args, binds


def launch_command(command: list[str], env: dict[str, str], tmp_bytes: int = 64 * 2**20) -> list[str]:
    """The command line that runs ``command`` inside bubblewrap (through ``_root_launch`` as root)."""
    bwrap = find_bwrap()
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed")
    args, binds = bwrap_arguments(command, env, tmp_bytes)
    if os.geteuid() != 0:
        return [bwrap, *args]
    spec = {"bwrap": bwrap, "args": args, "binds": binds, "uid": NOBODY, "gid": NOBODY}
    return [sys.executable, "-I", "-S", __file__, "root-launch", json.dumps(spec)]


def _root_launch(spec: dict) -> None:
    """As root: run bwrap as ``nobody``, with the paths to bind staged where ``nobody`` can reach them.

    In a mount namespace of its own (nothing changes outside it), every path to bind is bind-mounted
    under a fresh tmpfs, so that bwrap, no longer root, can bind it even when a parent folder is closed
    to others (a Python installed under /root). Then it drops to ``nobody`` and becomes bwrap.
    """
    libc = _libc()
    _check(libc.unshare(CLONE_NEWNS), "unshare")
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    fds = [os.open(path, os.O_PATH | os.O_CLOEXEC) for path in spec["binds"]]
    stage = "/tmp"              # a tmpfs over it, in this mount namespace only (the fds were opened first)
    _check(libc.mount(b"tmpfs", stage.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755,size=64k"),
           "stage")
    staged = {}
    for number, (path, fd) in enumerate(zip(spec["binds"], fds)):
        target = f"{stage}/{number}"
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(target)
        else:
            open(target, "w").close()
        _check(libc.mount(f"/proc/self/fd/{fd}".encode(), target.encode(), None, MS_BIND | MS_REC, None),
               f"stage {path}")
        staged[path] = target
        os.close(fd)
    args = list(spec["args"])
    end = args.index("--")
    for i in range(end):
        if args[i] in ("--ro-bind", "--ro-bind-try") and args[i + 1] in staged:
            args[i + 1] = staged[args[i + 1]]
    os.setgroups([])
    os.setresgid(spec["gid"], spec["gid"], spec["gid"])
    os.setresuid(spec["uid"], spec["uid"], spec["uid"])
    os.execv(spec["bwrap"], [spec["bwrap"], *args])


# ---------------------------------------------------------------------------------------------------
# Namespaces of each kernel (inside bubblewrap)


def isolate(disk_bytes: int) -> None:
    """Move this process into new user, PID, mount, network, IPC and UTS namespaces; give the mount
    namespace a fresh tmpfs of ``disk_bytes`` (and at most 16384 files) on /tmp and hide /proc. Its next child is PID 1 of the new
    PID namespace. Raises OSError when the system refuses."""
    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC
                        | CLONE_NEWUTS), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    # What the environment needs and lives under /tmp (a checkout there) is bound again on the new /tmp.
    keep = [path for path in (*_runtime_roots(), package_dir()) if Path("/tmp") in path.parents]
    fds = [os.open(path, os.O_PATH | os.O_CLOEXEC) for path in keep]
    _check(libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV,
                      f"mode=0700,size={max(4096, int(disk_bytes))},nr_inodes=16384".encode()), "mount /tmp")
    for path, fd in zip(keep, fds):
        os.makedirs(path, exist_ok=True)
        _check(libc.mount(f"/proc/self/fd/{fd}".encode(), str(path).encode(), None, MS_BIND | MS_REC, None),
               f"keep {path}")
        os.close(fd)
    # A new procfs cannot be mounted under bubblewrap's (it hides parts of it), and the old one shows
    # the fork server's other kernels: /proc becomes an empty read-only folder.
    _check(libc.mount(b"tmpfs", b"/proc", b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                      b"mode=0555,size=4k"), "hide /proc")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Give up every capability (a process that made a user namespace has them all inside it)."""
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc().capset(ctypes.byref(header), data), "capset")


def capabilities() -> int:
    """The effective capability set, as a number (0: none)."""
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    _check(_libc().capget(ctypes.byref(header), data), "capget")
    return data[0].effective | data[1].effective << 32


def not_dumpable() -> None:
    """Other processes of the same user can no longer read or write this one's memory through /proc
    (/proc/PID/mem, environ, fd...) without privileges: what keeps kernels apart without bubblewrap."""
    try:
        _libc().prctl(4, 0, 0, 0, 0)                     # PR_SET_DUMPABLE 0
    except (OSError, AttributeError):
        pass


def set_parent_death_signal() -> None:
    """Die with the parent (Linux): no orphaned kernel keeps running when its supervisor goes."""
    try:
        _libc().prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)      # SIGKILL
    except (OSError, AttributeError):  # not Linux: the grader kills its kernels itself
        pass


# ---------------------------------------------------------------------------------------------------
# Landlock

SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE = 1 << 4, 1 << 5
FS_MAKE = sum(1 << bit for bit in range(6, 13))          # char, dir, reg, sock, fifo, block, sym
FS_REFER, FS_TRUNCATE = 1 << 13, 1 << 14
SCOPE_ABSTRACT_UNIX, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def landlock_abi() -> int:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    abi = _libc().syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, abi)


def readable_paths(workdir: str) -> list[str]:
    """What a kernel may read without bubblewrap: what bubblewrap would show it (``bwrap_arguments``): the
    system's programs and libraries, the Python installation and environment, the course package's
    allowlist (``PACKAGE_FILES``), its own folder and its own entry of /proc; existing paths only."""
    package = package_dir()
    roots = _runtime_roots()
    paths = ["/usr", *(f"/{name}" for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32")), *SYSTEM_FILES,
             *map(str, roots), workdir, f"/proc/{os.getpid()}", "/dev/null", "/dev/zero", "/dev/random", "/dev/urandom"]
    if not any(root == package or root in package.parents for root in roots):
        paths += [str(package / relative) for relative in PACKAGE_FILES]
    return [path for path in dict.fromkeys(paths) if os.path.exists(path)]


def _landlock(workdir: str, reads: list[str] | None = None) -> list[str]:
    """Files may change only in ``workdir``; with ``reads``, be read (or listed) only beneath those paths."""
    abi = landlock_abi()
    if abi < 1:
        return []
    libc = _libc()
    write = FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE
    if abi >= 2:
        write |= FS_REFER
    if abi >= 3:
        write |= FS_TRUNCATE
    read = (FS_EXECUTE | FS_READ_FILE | FS_READ_DIR) if reads is not None else 0
    attr = _RulesetAttr(handled_access_fs=write | read, handled_access_net=0,
                        scoped=SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX if abi >= 6 else 0)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return []
    rules = [(workdir, write | read), (os.devnull, FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0) | read)]
    rules += [(path, read) for path in reads or []]
    on_files = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | (FS_TRUNCATE if abi >= 3 else 0)
    try:
        for path, access in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                if not os.path.isdir(path):         # a file (or device) takes only the rights of files
                    access &= on_files
                rule = _PathBeneath(allowed_access=access, parent_fd=fd)
                if libc.syscall(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH,
                                ctypes.byref(rule), 0) < 0:
                    return []
            finally:
                os.close(fd)
        if libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) < 0:
            return []
    finally:
        os.close(ruleset)
    applied = ["landlock: files may change only in the kernel's folder"]
    if reads is not None:
        applied.append("landlock: files may be read only where bubblewrap would show them")
    if abi >= 6:
        applied.append("landlock: no signals or abstract sockets outside the kernel")
    return applied


# ---------------------------------------------------------------------------------------------------
# seccomp (x86-64 syscall numbers)

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
OFFSET_NR, OFFSET_ARCH = 0, 4
CLONE_THREAD = 0x00010000

DENIED = {
    # other processes and programs
    "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "ptrace": 101, "tkill": 200,
    "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_open": 434, "pidfd_send_signal": 424,
    "pidfd_getfd": 438, "process_madvise": 440, "process_mrelease": 448, "kcmp": 312, "migrate_pages": 256,
    "move_pages": 279, "ioprio_set": 251,
    # the kernel's own confinement
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442,
    # files' metadata (Landlock does not cover it)
    "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452, "chown": 92, "fchown": 93, "lchown": 94,
    "fchownat": 260, "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188,
    "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199,
    "setxattrat": 463, "removexattrat": 466,
    # memory the limits do not count, and state that outlives the kernel
    "memfd_create": 319, "memfd_secret": 447, "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64,
    "semop": 65, "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240,
    # the machine
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "bpf": 321, "perf_event_open": 298, "keyctl": 250,
    "add_key": 248, "request_key": 249, "userfaultfd": 323, "kexec_load": 246, "kexec_file_load": 320,
    "reboot": 169, "open_by_handle_at": 304, "acct": 163, "swapon": 167, "swapoff": 168,
}
CLONE, CLONE3, SOCKET, PRCTL, IOCTL = 56, 435, 41, 157, 16
SELF = "self"          # in an argument rule: 0 or the kernel's own pid
# syscall: [(argument, allowed values)]: every argument must hold one of its values
ONLY_SELF = {
    62: [(0, ["pid"])],               # kill
    129: [(0, ["pid"])],              # rt_sigqueueinfo
    234: [(0, ["pid"])],              # tgkill
    297: [(0, ["pid"])],              # rt_tgsigqueueinfo
    302: [(0, [SELF])],               # prlimit64
    141: [(0, [0]), (1, [SELF])],     # setpriority(PRIO_PROCESS, self)
    142: [(0, [SELF])],               # sched_setparam
    144: [(0, [SELF])],               # sched_setscheduler
    203: [(0, [SELF])],               # sched_setaffinity
    314: [(0, [SELF])],               # sched_setattr
}
FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, TIOCSTI = 0x40086602, 0x401C5820, 0x5412


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def seccomp_program(pid: int) -> list[tuple[int, int, int, int]]:
    """The BPF filter as (code, jt, jf, k) instructions. Arguments are compared on their low 32 bits."""
    deny = RET_ERRNO | errno.EPERM
    prog = [(LD_W_ABS, 0, 0, OFFSET_ARCH), (JEQ_K, 1, 0, AUDIT_ARCH_X86_64), (RET_K, 0, 0, deny),
            (LD_W_ABS, 0, 0, OFFSET_NR), (JGE_K, 0, 1, X32_BIT), (RET_K, 0, 0, deny)]
    for nr in sorted(DENIED.values()):
        prog += [(JEQ_K, 0, 1, nr), (RET_K, 0, 0, deny)]
    prog += [(JEQ_K, 0, 1, CLONE3), (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]    # libc falls back to clone
    prog += [(JEQ_K, 0, 1, SOCKET), (RET_K, 0, 0, RET_ERRNO | errno.EACCES)]

    def argument(index: int) -> tuple:
        return (LD_W_ABS, 0, 0, 16 + 8 * index)          # struct seccomp_data: args[index], low word

    def one_of(values: list[int], refusal: int) -> list[tuple]:
        """Go on when the loaded word is one of ``values``; otherwise return ``refusal``."""
        out = []
        for i, value in enumerate(values):
            out.append((JEQ_K, len(values) - i, 0, value))
        return out + [(RET_K, 0, 0, refusal)]

    for nr, rules in ONLY_SELF.items():
        body = []
        for index, allowed in rules:
            values = []
            for value in allowed:
                values += [0, pid] if value == SELF else [pid] if value == "pid" else [value]
            body += [argument(index), *one_of(list(dict.fromkeys(values)), deny)]
        body.append((RET_K, 0, 0, RET_ALLOW))
        prog += _guarded(nr, body)
    prog += _guarded(CLONE, [argument(0), (JSET_K, 0, 1, CLONE_THREAD), (RET_K, 0, 0, RET_ALLOW),
                             (RET_K, 0, 0, deny)])
    prog += _guarded(PRCTL, [argument(0), (JEQ_K, 0, 1, PR_SET_PDEATHSIG), (RET_K, 0, 0, deny),
                             (RET_K, 0, 0, RET_ALLOW)])
    prog += _guarded(IOCTL, [argument(1), *one_of([FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, TIOCSTI], RET_ALLOW),
                             (RET_K, 0, 0, deny)])
    prog.append((RET_K, 0, 0, RET_ALLOW))
    return prog


def _guarded(nr: int, body: list[tuple]) -> list[tuple]:
    """``body`` (which always returns) for syscall ``nr``; any other syscall jumps past it."""
    return [(JEQ_K, 0, len(body), nr), *body]


def _seccomp() -> list[str]:
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return []
    program = seccomp_program(os.getpid())
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    fprog = _SockFprog(len(program), filters)
    if _libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return []
    return ["seccomp: no new processes, sockets, shared memory or changes to files' metadata; "
            "signals and limits only for itself"]


def confine(workdir: str, reads: list[str] | None = None) -> list[str]:
    """Apply what this system supports; the descriptions of what was applied. ``reads``: the only paths
    whose files may be read (None: reading is not restricted, as inside bubblewrap, which restricts it)."""
    try:
        if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return []
    except (OSError, AttributeError):
        return []
    applied = []
    for step in (lambda: _landlock(workdir, reads), _seccomp):
        try:
            applied += step()
        except Exception:  # an unsupported feature: go on with what is there
            pass
    return applied


if __name__ == "__main__" and sys.argv[1:2] == ["root-launch"]:
    try:
        _root_launch(json.loads(sys.argv[2]))
    except Exception as exc:
        print(f"posenc sandbox: cannot start bubblewrap as nobody: {exc}", file=sys.stderr)
        sys.exit(71)
