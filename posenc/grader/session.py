"""Grading one submission: run its cells in a fresh kernel, collect each question there, judge it here.

The student's code runs only in the kernel (see ``worker``). This process chooses the inputs (through the
questions' ``request``/``probes``), decodes the plain data that comes back and judges it with the
reference. A cell or a question that runs out of time, or a kernel that dies, costs only that cell or
question: the kernel is replaced, the cells that ran before are replayed, and grading goes on, within a
total time per notebook (``Settings.timeout_per_notebook``).
"""

from __future__ import annotations

import dataclasses
import errno
import importlib.util
import math
import os
import re
import stat
import tempfile
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path


from posenc.exercises import SET_IDS, load_set
from posenc.exercises.framework import FAILED, ExerciseSet, FunctionQuestion, Question, Result, built
from posenc.exercises.probe import decode, encode
from posenc.grader.kernel import ForkServer, Kernel, KernelError, Limits
from posenc.grader.status import COURSE_CODE, DISK, FLAGS, KERNEL_DIED, MEMORY, TIMEOUT, combined
from posenc.grader.submission import Cell, Submission, exercise_imports

MAX_RESTARTS = 3
# What a student reads when their code fails while a private check runs: nothing derived from the check's
# inputs (no exit code, signal, limit or time), which the lecturer's report and the CSV keep.
PRIVATE_TROUBLE = "a further check by your lecturer could not be completed on your code"

# Columns of the gradebook that a private check's id may not take.
RESERVED_COLUMNS = {"file", "total", "percentage", "status", "message", "(maximum)"}
QUESTION_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


class UsageError(ValueError):
    """The lecturer's input (options, private checks) is wrong: the command stops with exit status 2."""


def default_seed(set_id: str) -> int:
    """The seed of the grader's drawn inputs when the lecturer gives none: one per set, the same on every
    machine and in every route (the command line, a Gradescope bundle), so that a regrade or a resubmission
    never changes a grade; never 0, the inline check's seed."""
    return zlib.crc32(f"posenc grader {set_id}".encode()) % 2**31 or 1


@dataclass
class Settings:
    timeout_per_question: float = 10.0
    timeout_per_cell: float | None = None      # default: the same as per question
    timeout_per_notebook: float = 120.0        # wall-clock seconds for everything one notebook does
    limits: Limits = field(default_factory=Limits)
    seed: int = 0

    @property
    def cell_timeout(self) -> float:
        return self.timeout_per_cell or self.timeout_per_question


@dataclass
class Graded:
    """What grading one submission produced."""

    submission: Submission
    results: list[Result] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)       # for the lecturer (the CSV, the summary)
    student_notes: list[str] = field(default_factory=list)  # what the student's feedback says of them
    cell_errors: list[str] = field(default_factory=list)  # cells that raised, for the student
    seconds: float = 0.0

    @property
    def status(self) -> str:
        return combined(self.submission.problem, self.flags)

    @property
    def total(self) -> float:
        return sum(r.points for r in self.results)

    def flag(self, flag: str, note: str, student: str | None = None) -> None:
        """Record a problem: ``note`` for the lecturer, ``student`` (default: the same) for the student."""
        if flag not in FLAGS:
            raise ValueError(f"unknown flag {flag!r}: one of {', '.join(FLAGS)}")
        self.flags.append(flag)
        self.notes.append(note)
        student = note if student is None else student
        if student and student not in self.student_notes:
            self.student_notes.append(student)


@dataclass
class ExtraModule:
    path: Path
    module_name: str
    questions: dict[str, list[Question]]


def load_extra_tests(folder: Path) -> list[ExtraModule]:
    """Import every ``*.py`` in ``folder``: each defines ``EXTRA = {"ch01": [Question, ...], ...}``.

    These are the lecturer's private checks; they are imported here, in the grading process, and reach a
    student's kernel only as their probes (plain data).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"--extra-tests {folder}: not a folder")
    modules = []
    for path in sorted(folder.glob("*.py")):
        module_name = f"posenc_extra_tests_{len(modules)}_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise UsageError(f"--extra-tests: {path.name} cannot be imported: {type(exc).__name__}: {exc}")
        extra = getattr(module, "EXTRA", None)
        if not isinstance(extra, dict) or not all(isinstance(qs, (list, tuple)) and
                                                  all(isinstance(q, Question) for q in qs) for qs in extra.values()):
            raise UsageError(f"--extra-tests: {path.name} must define EXTRA = {{'chNN': [Question, ...]}}")
        for key in extra:
            if key not in SET_IDS:
                hint = f"; did you mean {key.lower()!r}?" if str(key).lower() in SET_IDS else ""
                raise UsageError(f"--extra-tests: {path.name}: EXTRA key {key!r} is not an exercise set of this "
                                 f"course ({', '.join(SET_IDS)}){hint}")
        for question in (q for qs in extra.values() for q in qs):
            _check_private(question, path.name)
        modules.append(ExtraModule(path.resolve(), module_name, {k: list(v) for k, v in extra.items()}))
    if not modules:
        raise UsageError(f"--extra-tests {folder}: no .py files with EXTRA checks")
    return modules


def _check_private(question: Question, where: str) -> None:
    """A private check must fit the gradebook: a plain id of its own, a positive number of points."""
    qid, points = getattr(question, "qid", None), getattr(question, "points", None)
    if not isinstance(qid, str) or not QUESTION_ID.fullmatch(qid) or qid.lower() in RESERVED_COLUMNS:
        raise UsageError(f"--extra-tests: {where}: the question id {qid!r} cannot be a gradebook column; use "
                         "letters, digits and _ (at most 32, starting with a letter), not "
                         + ", ".join(sorted(RESERVED_COLUMNS - {"(maximum)"})))
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not math.isfinite(points) or points <= 0:
        raise UsageError(f"--extra-tests: {where}: question {qid} has {points!r} points; give it a positive number")


@dataclass
class Plan:
    """One exercise set's questions, public then private, and where each one's collection comes from."""

    exercise_set: ExerciseSet
    questions: list[Question]
    sources: dict[str, ExtraModule | None]    # qid -> the extra module it came from (None: the course)

    @classmethod
    def make(cls, set_id: str, extras: list[ExtraModule] = ()) -> "Plan":
        exercise_set = load_set(set_id)
        questions = list(exercise_set.questions)
        sources: dict[str, ExtraModule | None] = {q.qid: None for q in questions}
        for module in extras:
            for question in module.questions.get(set_id, []):
                if question.qid in sources:
                    raise UsageError(f"--extra-tests: {module.path.name} reuses the question id "
                                     f"{question.qid!r} of {set_id}; give private checks their own ids")
                question.private = True
                questions.append(question)
                sources[question.qid] = module
        return cls(exercise_set, questions, sources)

    @property
    def max_points(self) -> float:
        return sum(q.points for q in self.questions)

    def check_private(self, seed: int) -> None:
        """A private check that cannot work stops the run before grading (UsageError): a function check
        whose probes or reference raise on this seed's inputs would fail every student silently."""
        for question in self.questions:
            if not question.private or not isinstance(question, FunctionQuestion):
                continue
            where = f"--extra-tests: {self.sources[question.qid].path.name}: private check {question.qid}"
            try:
                probes = [built(args) for args in question.probes(seed)]
            except Exception as exc:
                raise UsageError(f"{where}: its probes raised {type(exc).__name__}: {exc}") from None
            for args in probes:
                try:
                    question.reference(*args)
                except Exception as exc:
                    raise UsageError(f"{where}: its reference raised {type(exc).__name__}: {exc} on the "
                                     f"inputs {question.describe_args(args)}; fix it before grading") from None

    @staticmethod
    def collect_message(question: Question, seed: int) -> dict:
        """The request for the kernel: the question's probe, plain data (never the question's own code)."""
        return {"op": "collect", "probe": encode(question.probe(seed))}


# Reading a notebook happens in a kernel too, with these limits (it is untrusted input).
PARSE_LIMITS = Limits(memory_mb=2048, file_mb=1, disk_mb=1, max_reply_mb=64, cpu_seconds=30)
PARSE_SECONDS = 10.0


class ServerPool:
    """Fork servers by the modules they import, started on first use and shared by the grading threads:
    the base server (NumPy, IPython, the course library) parses notebooks and serves the sets that need
    nothing more; a set that imports more (torch) gets its own."""

    def __init__(self, sandboxed: bool = True, user: int | None = None):
        self.sandboxed = sandboxed
        self.user = None if sandboxed else user      # without bubblewrap: the kernels' user (None: ours)
        self.servers: dict[tuple[str, ...], ForkServer] = {}
        self.lock = threading.Lock()
        self.closed = False
        # Without bubblewrap, servers and parsing kernels work in a folder of their own on this machine.
        self.home = None if sandboxed else self.folder("posenc-grade-server-")

    def folder(self, prefix: str) -> str:
        """A new folder for a kernel (without bubblewrap), owned by the kernels' user."""
        path = tempfile.mkdtemp(prefix=prefix)
        if self.user is not None:
            os.chown(path, self.user, self.user)
        return path

    @staticmethod
    def warm_modules(set_id: str | None = None) -> tuple[str, ...]:
        warm = ["numpy", "posenc", "posenc.exercises", *(exercise_imports(set_id) if set_id else [])]
        return tuple(dict.fromkeys(m for m in warm if m != "posenc.exercises.checks"
                                   and not m.startswith("posenc.exercises.checks.")))

    def get(self, set_id: str | None = None) -> ForkServer:
        key = self.warm_modules(set_id)
        with self.lock:
            if self.closed:
                raise RuntimeError("grading was stopped")
            if key in self.servers and not self.servers[key].alive:     # it died: start another
                self.servers.pop(key).close()
            if key not in self.servers:
                self.servers[key] = ForkServer(list(key), self.home or "/", sandboxed=self.sandboxed, user=self.user)
            return self.servers[key]

    def parse(self, raw: bytes, filename: str) -> dict:
        """``submission.parse_notebook(raw, filename)``, run in a kernel of the base server."""
        server = self.get(None)
        folder = None if self.sandboxed else self.folder("posenc-parse-")
        try:
            kernel = server.spawn(PARSE_LIMITS, folder)
        except (OSError, RuntimeError):
            kernel = self.get(None).spawn(PARSE_LIMITS, folder)
        try:
            reply = kernel.call({"op": "parse", "filename": filename}, PARSE_SECONDS, payload=raw)
        except KernelError as exc:
            raise ValueError(f"the parser {kernel.death() if exc.kind == 'died' else exc.message}") from None
        finally:
            kernel.kill()
            if folder:
                remove_tree(folder)
        if reply.get("status") == "timeout":
            raise ValueError(f"it took more than {PARSE_SECONDS:g} s of computing")
        if reply.get("status") != "ok":
            raise ValueError(str(reply.get("error", "the parser failed"))[:200])
        return reply.get("parsed")

    def sandbox(self) -> list[str] | None:
        for server in self.servers.values():
            if server.sandbox is not None:
                return server.sandbox
        return None

    def close(self) -> None:
        with self.lock:
            self.closed = True
            servers, self.servers = list(self.servers.values()), {}
        for server in servers:
            server.close()
        if self.home:
            remove_tree(self.home)


def grade_submission(sub: Submission, plan: Plan, pool: ServerPool, settings: Settings) -> Graded:
    """Run and judge one submission; never raises for anything the student did."""
    graded = Graded(sub)
    start = time.perf_counter()
    session = _Session(sub, plan, pool, settings, graded)
    try:
        session.grade()
    finally:
        session.close()
        graded.seconds = time.perf_counter() - start
    return graded


class _OutOfTime(Exception):
    """The notebook used up its total time."""


class _Session:
    def __init__(self, sub, plan, pool, settings, graded):
        self.sub, self.plan, self.pool, self.settings, self.graded = sub, plan, pool, settings, graded
        self.workdir: str | None = None      # the kernel's own folder, new at every start (without bubblewrap)
        self.kernel: Kernel | None = None
        # Once a private check has run, nothing the student sees may tell how the kernel fared: a kernel
        # restarted after it replays the cells, which could act on what the check's inputs left behind.
        self.private_phase = False
        self.skip: set[int] = set()          # cells never to run again (they hung or killed the kernel)
        self.restarts = 0
        self.names = {q.name: q.qid for q in plan.questions}
        self.deadline = time.monotonic() + settings.timeout_per_notebook
        self.given_back = 0.0
        # The kernel's CPU time in all (a backstop for threads left computing between calls)
        self.limits = dataclasses.replace(settings.limits, cpu_seconds=min(
            settings.limits.cpu_seconds, math.ceil(settings.timeout_per_notebook) + 30))

    def close(self):
        if self.kernel is not None:
            self.kernel.close()
        self._remove_folder()

    def _remove_folder(self) -> None:
        """Remove the folder of the kernel that has just ended (without bubblewrap: under bubblewrap each
        kernel's folder is a tmpfs that ends with it)."""
        if self.workdir:
            left = remove_tree(self.workdir)
            if left:
                self.graded.notes.append(f"the grader could not remove {len(left)} file(s) the notebook left in "
                                         f"{self.workdir} (e.g. {left[0]})")
            self.workdir = None

    def _call(self, request: dict, timeout: float) -> dict:
        """``kernel.call`` within what is left of the notebook's time (_OutOfTime when it is used up).

        Time the kernel spent waiting for a CPU is given back (up to the notebook's time once more): a busy
        machine, or a classmate's threads, must not use up this notebook's time."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime()
        try:
            return self.kernel.call(request, timeout, wall=left)
        except KernelError as exc:
            if exc.kind == "hung" and exc.budget:
                raise _OutOfTime() from None
            raise
        finally:
            given = min(self.kernel.waited, self.settings.timeout_per_notebook - self.given_back)
            self.given_back += given
            self.deadline += given

    # -- the kernel ------------------------------------------------------------------------------
    def _start(self) -> bool:
        """A fresh kernel with every cell run (except those that hung or crashed before)."""
        while True:
            if self.kernel is not None:
                self.kernel.kill()
                self._remove_folder()
            self.kernel = self._spawn()
            first_run = self.restarts == 0
            for cell in self.sub.cells:
                if cell.number in self.skip:
                    continue
                try:
                    self._run_cell(cell, report=first_run)
                except KernelError as exc:
                    self.skip.add(cell.number)
                    self._kernel_lost(exc, f"while running {cell.label}{self._about(cell)}")
                    if self.restarts > MAX_RESTARTS:
                        return False
                    break
            else:
                return True

    def _spawn(self) -> Kernel:
        """A new kernel from the set's fork server (started again if something killed it), in a fresh, empty
        folder: nothing a kernel wrote reaches the next one."""
        set_id = self.plan.exercise_set.set_id
        self.workdir = None if self.pool.sandboxed else self.pool.folder("posenc-grade-")
        try:
            server = self.pool.get(set_id)
            kernel = server.spawn(self.limits, self.workdir)
        except (OSError, RuntimeError, ValueError):
            server = self.pool.get(set_id)
            kernel = server.spawn(self.limits, self.workdir)
        if server.sandbox is None:
            try:
                server.sandbox = list(kernel.call({"op": "info"}, 10).get("sandbox") or [])
            except KernelError:
                kernel = server.spawn(self.limits, self.workdir)
        return kernel

    def _kernel_lost(self, exc: KernelError, where: str, private: bool = False) -> str:
        """Record that the kernel was lost; how it ended, in words (for a private check: the lecturer's)."""
        self.restarts += 1
        student = PRIVATE_TROUBLE if private or self.private_phase else None
        if exc.kind == "hung":
            limit = self.settings.cell_timeout if where.startswith("while running") else \
                self.settings.timeout_per_question
            self.graded.flag(TIMEOUT, f"the kernel did not stop when its time ran out ({limit:g} s) {where}; "
                                      "it was restarted", student)
            return "it did not stop in time"
        how = self.kernel.death() if exc.kind == "died" else exc.message if exc.kind == "limit" else \
            f"sent {exc.message}"
        self.graded.flag(KERNEL_DIED, f"the kernel {how} {where}; it was restarted", student)
        return f"the kernel {how}"

    def _about(self, cell: Cell) -> str:
        qids = sorted({self.names[n] for n in cell.defines if n in self.names} | set(filter(None, cell.checks)))
        return f", which belongs to {', '.join(qids)}" if qids else ""

    def _run_cell(self, cell: Cell, report: bool) -> None:
        timeout = self.settings.cell_timeout
        reply = self._call({"op": "run", "code": cell.code, "filename": f"<cell {cell.number}>"}, timeout)
        if not report:
            return
        status = reply.get("status")
        if status == "timeout":
            self.skip.add(cell.number)
            self.graded.flag(TIMEOUT, f"{cell.label}{self._about(cell)} did not finish within {timeout:g} s "
                                      "of computing and was interrupted")
        elif status == "error":
            error = str(reply.get("error", "an error"))[:300]
            if _out_of_memory(reply.get("error_type"), error):
                self.graded.flag(MEMORY, f"{cell.label}{self._about(cell)} ran out of memory "
                                         f"(limit {self.settings.limits.memory_mb:g} MB)")
            else:
                if _out_of_disk(reply.get("errno"), error):
                    self._disk_full(cell.label)
                self.graded.cell_errors.append(f"{cell.label} raised {error}")

    # -- grading ---------------------------------------------------------------------------------
    def _disk_full(self, where: str, student: str | None = None) -> None:
        limits = self.settings.limits
        self.graded.flag(DISK, f"{where}: a file reached the size limit ({limits.file_mb:g} MB a file, "
                               f"{limits.disk_mb:g} MB in all)", student)

    def grade(self) -> None:
        try:
            ok = self._start()
            if ok:
                self._origins()
            for question in self.plan.questions:
                if not ok:
                    self.graded.results.append(self._failed(question, "not checked: the kernel kept dying"))
                    continue
                result, lost = self._question(question)
                self.graded.results.append(result)
                if lost:
                    ok = self.restarts <= MAX_RESTARTS and self._start()
        except _OutOfTime:
            limit = self.settings.timeout_per_notebook
            self.graded.flag(TIMEOUT, f"the notebook used up its {limit:g} s of grading time; "
                                      "what was left was not run", PRIVATE_TROUBLE if self.private_phase else None)
            done = {r.qid for r in self.graded.results}
            self.graded.results += [self._failed(q, f"not checked: your notebook used up its {limit:g} s "
                                                    "of grading time before this question")
                                    for q in self.plan.questions if q.qid not in done]

    def _origins(self) -> None:
        """Note answers that are the course's own code (``from posenc import sinusoidal_encoding``).

        Points are not changed: the lecturer decides. A wrapper around the course's function is not seen.
        """
        names = sorted({q.name for q in self.plan.questions})
        try:
            reply = self._call({"op": "origins", "names": names}, 5.0)
        except KernelError:
            self.kernel.kill()
            self._start()
            return
        origins = reply.get("origins") if isinstance(reply.get("origins"), dict) else {}
        for name in names:
            module, qualname, wrapped = ([*(origins.get(name) or []), None, None, None])[:3]
            if isinstance(module, str) and (module == "posenc" or module.startswith("posenc.")):
                self.graded.flag(COURSE_CODE, f"`{name}` is the course's {module}.{qualname}, "
                                              "not code written in the notebook")
            elif isinstance(wrapped, str):
                self.graded.flag(COURSE_CODE, f"`{name}` wraps the course's {wrapped[:200]} (points unchanged: "
                                              "you decide)", "")

    def _question(self, question: Question) -> tuple[Result, bool]:
        seed, timeout = self.settings.seed, self.settings.timeout_per_question
        self.private_phase = self.private_phase or question.private
        student = PRIVATE_TROUBLE if question.private else None
        try:
            reply = self._call(self.plan.collect_message(question, seed), timeout)
        except KernelError as exc:
            how = self._kernel_lost(exc, f"while checking {question.qid}", question.private)
            if exc.kind == "hung":
                return self._failed(question, f"your code did not finish within {timeout:g} s of computing "
                                              "(an endless loop?)"), True
            return self._failed(question, f"your code stopped the kernel while it ran for this question "
                                          f"({how})"), True
        status = reply.get("status")
        if status == "timeout":
            self.graded.flag(TIMEOUT, f"{question.qid}: the student's code did not finish within {timeout:g} s "
                                      "of computing", student)
            return self._failed(question, f"your code did not finish within {timeout:g} s of computing "
                                          "(an endless loop?)"), False
        if status != "ok":
            error = str(reply.get("error", "unknown error"))[:300]
            if reply.get("error_type") == "SystemExit":
                error = f"your code called sys.exit() ({error})"
            if _out_of_memory(reply.get("error_type"), error):
                self.graded.flag(MEMORY, f"{question.qid}: out of memory "
                                         f"(limit {self.settings.limits.memory_mb:g} MB)", student)
            elif _out_of_disk(reply.get("errno"), error):
                self._disk_full(question.qid, student)
            return self._failed(question, f"could not be checked: {error}"), False
        try:
            collected = decode(reply["collected"])
            if not isinstance(collected, dict):
                raise ValueError("not a dict")
        except Exception:
            return self._failed(question, "could not be checked: the kernel's answer was malformed"), False
        for outcome in collected.get("data") or [] if isinstance(collected.get("data"), list) else []:
            if _out_of_memory(getattr(outcome, "error_type", None), getattr(outcome, "error", None)):
                self.graded.flag(MEMORY, f"{question.qid}: out of memory "
                                         f"(limit {self.settings.limits.memory_mb:g} MB)", student)
                break
            if _out_of_disk(None, getattr(outcome, "error", None)):
                self._disk_full(question.qid, student)
                break
        return question.result_from(collected, seed), False

    @staticmethod
    def _failed(question: Question, message: str) -> Result:
        return Result(question.qid, FAILED, 0, question.points, message, question.private)


def _out_of_memory(error_type, error) -> bool:
    """A MemoryError, or a library's own words for one (torch raises RuntimeError "can't allocate memory")."""
    text = str(error or "").lower()
    return error_type == "MemoryError" or ("allocate" in text and "memory" in text)


def _out_of_disk(number, error) -> bool:
    """An OSError for a full folder (ENOSPC) or a file over the size limit (EFBIG)."""
    text = str(error or "")
    return number in (errno.ENOSPC, errno.EFBIG) or "No space left on device" in text or "File too large" in text


MAX_DEPTH = 200


def remove_tree(folder: str) -> list[str]:
    """Delete ``folder`` and everything in it, never following a symbolic link and never changing anything
    outside it (the student's code may have left read-only folders, links, or files it made immutable).
    Returns what could not be removed (relative paths)."""
    left: list[str] = []
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        top = os.open(folder, flags)
    except FileNotFoundError:
        return []
    except OSError:
        return ["."]
    stack = [(top, "", None)]            # (open folder, its relative path, its entries still to remove)
    while stack:
        fd, where, entries = stack[-1]
        if entries is None:
            try:
                os.fchmod(fd, stat.S_IRWXU)      # the folder itself, through its descriptor: never a link
            except OSError:
                pass
            try:
                entries = iter(sorted(entry.name for entry in os.scandir(fd)))
            except OSError:
                entries = iter(())
                left.append(where or ".")
            stack[-1] = (fd, where, entries)
        name = next(entries, None)
        if name is None:                     # finished: close it and remove it from its parent
            os.close(fd)
            stack.pop()
            if stack:
                try:
                    os.rmdir(os.path.basename(where), dir_fd=stack[-1][0])
                except OSError:
                    left.append(where)
            continue
        path = f"{where}/{name}" if where else name
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and len(stack) < MAX_DEPTH:
            try:
                stack.append((os.open(name, flags, dir_fd=fd), path, None))
            except OSError:
                left.append(path)
        else:
            try:
                os.unlink(name, dir_fd=fd)
            except OSError:
                left.append(path)
    if not left:
        try:
            os.rmdir(folder)
        except OSError:
            left.append(".")
    return left
