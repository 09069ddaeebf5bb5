"""Confine a kernel process before the student's code runs (Linux; best effort elsewhere: nothing).

Two kernel features, both usable without privileges, both inherited by anything the process becomes:

* **Landlock** (Linux 5.13+): the process may create, change or delete files only inside its own
  working folder (and write to /dev/null); it can still *read* everything the grader's user can.
  From Landlock ABI 6 on it also cannot signal processes outside its sandbox.
* **seccomp** (x86-64): no new processes (fork, vfork, exec; threads are fine), signals only to itself,
  no network sockets (only local ``AF_UNIX`` ones), no ptrace or reading/writing another process's
  memory, no io_uring, namespaces, mounts or kernel modules.

``confine(workdir)`` returns the list of what was applied, so the grader can report it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2

# ---------------------------------------------------------------------------------------------------
# Landlock

SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
FS_WRITE_FILE, FS_REMOVE_DIR, FS_REMOVE_FILE = 1 << 1, 1 << 4, 1 << 5
FS_MAKE = sum(1 << bit for bit in range(6, 13))          # char, dir, reg, sock, fifo, block, sym
FS_REFER, FS_TRUNCATE = 1 << 13, 1 << 14
SCOPE_SIGNAL = 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    abi = _libc().syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    return max(0, abi)


def _landlock(workdir: str) -> list[str]:
    abi = landlock_abi()
    if abi < 1:
        return []
    libc = _libc()
    write = FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE
    if abi >= 2:
        write |= FS_REFER
    if abi >= 3:
        write |= FS_TRUNCATE
    attr = _RulesetAttr(handled_access_fs=write, handled_access_net=0,
                        scoped=SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        return []
    try:
        for path, access in ((workdir, write), (os.devnull, FS_WRITE_FILE | (FS_TRUNCATE if abi >= 3 else 0))):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
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
    if abi >= 6:
        applied.append("landlock: no signals to other processes")
    return applied


# ---------------------------------------------------------------------------------------------------
# seccomp (x86-64 syscall numbers)

AUDIT_ARCH_X86_64 = 0xC000003E
X32_BIT = 0x40000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_W_ABS, JEQ_K, JGE_K, JSET_K, RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16          # struct seccomp_data; arg0's low 32 bits
CLONE_THREAD, AF_UNIX = 0x00010000, 1

SIGNAL_SELF_ONLY = {"kill": 62, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297}
DENIED = {
    "tkill": 200, "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311,
    "pidfd_send_signal": 424, "pidfd_getfd": 438, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "unshare": 272, "setns": 308,
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "bpf": 321, "perf_event_open": 298, "keyctl": 250,
    "add_key": 248, "request_key": 249, "userfaultfd": 323, "kexec_load": 246, "reboot": 169,
    "open_by_handle_at": 304, "kcmp": 312,
}
CLONE, CLONE3, SOCKET = 56, 435, 41


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def seccomp_program(pid: int) -> list[tuple[int, int, int, int]]:
    """The BPF filter as (code, jt, jf, k) instructions."""
    deny = RET_ERRNO | errno.EPERM
    prog = [(LD_W_ABS, 0, 0, OFFSET_ARCH), (JEQ_K, 1, 0, AUDIT_ARCH_X86_64), (RET_K, 0, 0, deny),
            (LD_W_ABS, 0, 0, OFFSET_NR), (JGE_K, 0, 1, X32_BIT), (RET_K, 0, 0, deny)]
    for nr in sorted(DENIED.values()):
        prog += [(JEQ_K, 0, 1, nr), (RET_K, 0, 0, deny)]
    prog += [(JEQ_K, 0, 1, CLONE3), (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]    # libc falls back to clone
    checked = [(nr, JEQ_K, pid & 0xFFFFFFFF, deny) for nr in SIGNAL_SELF_ONLY.values()]
    checked += [(CLONE, JSET_K, CLONE_THREAD, deny), (SOCKET, JEQ_K, AF_UNIX, RET_ERRNO | errno.EACCES)]
    for nr, test, value, refusal in checked:
        prog += [(JEQ_K, 0, 4, nr), (LD_W_ABS, 0, 0, OFFSET_ARG0), (test, 0, 1, value),
                 (RET_K, 0, 0, RET_ALLOW), (RET_K, 0, 0, refusal), (LD_W_ABS, 0, 0, OFFSET_NR)]
        # (the last instruction reloads the syscall number for the next test; reached only on a miss)
    prog.append((RET_K, 0, 0, RET_ALLOW))
    return prog


def _seccomp() -> list[str]:
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return []
    program = seccomp_program(os.getpid())
    filters = (_SockFilter * len(program))(*[_SockFilter(*ins) for ins in program])
    fprog = _SockFprog(len(program), filters)
    if _libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        return []
    return ["seccomp: no new processes, signals only to itself, no network sockets, no ptrace"]


def confine(workdir: str) -> list[str]:
    """Apply what this system supports; the descriptions of what was applied."""
    try:
        if _libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return []
    except (OSError, AttributeError):
        return []
    applied = []
    for step in (lambda: _landlock(workdir), _seccomp):
        try:
            applied += step()
        except Exception:  # an unsupported feature: go on with what is there
            pass
    return applied
