"""Grading one submission: run its cells in a fresh kernel, collect each question there, judge it here.

The student's code runs only in the kernel (see ``worker``). This process chooses the inputs (through the
questions' ``request``/``probes``), decodes the plain data that comes back and judges it with the
reference. A cell or a question that runs out of time, or a kernel that dies, costs only that cell or
question: the kernel is replaced, the cells that ran before are replayed, and grading goes on.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


from posenc.exercises import load_set
from posenc.exercises.framework import FAILED, ExerciseSet, Question, Result
from posenc.exercises.probe import decode, encode
from posenc.grader.kernel import ForkServer, Kernel, KernelError, Limits
from posenc.grader.submission import Cell, Submission, exercise_imports

MAX_RESTARTS = 3

# Flags of a graded submission (joined with "+" in the status column; "ok" when there is none).
TIMEOUT, KERNEL_DIED, MEMORY, DUPLICATE, COURSE_CODE = (
    "timeout", "kernel-died", "memory-limit", "duplicate", "course-code")


@dataclass
class Settings:
    timeout_per_question: float = 10.0
    timeout_per_cell: float | None = None      # default: the same as per question
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
    notes: list[str] = field(default_factory=list)       # for the lecturer and the student
    cell_errors: list[str] = field(default_factory=list)  # cells that raised, for the student
    seconds: float = 0.0

    @property
    def status(self) -> str:
        if self.submission.problem:
            return self.submission.problem
        return "+".join(dict.fromkeys(self.flags)) or "ok"

    @property
    def total(self) -> float:
        return sum(r.points for r in self.results)

    def flag(self, flag: str, note: str) -> None:
        self.flags.append(flag)
        self.notes.append(note)


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
        raise ValueError(f"--extra-tests {folder}: not a folder")
    modules = []
    for path in sorted(folder.glob("*.py")):
        module_name = f"posenc_extra_tests_{len(modules)}_{path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise ValueError(f"--extra-tests: {path.name} cannot be imported: {type(exc).__name__}: {exc}")
        extra = getattr(module, "EXTRA", None)
        if not isinstance(extra, dict) or not all(isinstance(q, Question) for qs in extra.values() for q in qs):
            raise ValueError(f"--extra-tests: {path.name} must define EXTRA = {{'chNN': [Question, ...]}}")
        modules.append(ExtraModule(path.resolve(), module_name, {k: list(v) for k, v in extra.items()}))
    if not modules:
        raise ValueError(f"--extra-tests {folder}: no .py files with EXTRA checks")
    return modules


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
                    raise ValueError(f"--extra-tests: {module.path.name} reuses the question id "
                                     f"{question.qid!r} of {set_id}; give private checks their own ids")
                question.private = True
                questions.append(question)
                sources[question.qid] = module
        return cls(exercise_set, questions, sources)

    @property
    def max_points(self) -> float:
        return sum(q.points for q in self.questions)

    @staticmethod
    def collect_message(question: Question, seed: int) -> dict:
        """The request for the kernel: the question's probe, plain data (never the question's own code)."""
        return {"op": "collect", "probe": encode(question.probe(seed))}


class ServerPool:
    """Fork servers by exercise set, started on first use and shared by the grading threads."""

    def __init__(self):
        self.servers: dict[str, ForkServer] = {}
        self.lock = threading.Lock()
        self.closed = False
        self.home = tempfile.mkdtemp(prefix="posenc-grade-server-")

    def get(self, set_id: str) -> ForkServer:
        with self.lock:
            if self.closed:
                raise RuntimeError("grading was stopped")
            if set_id in self.servers and not self.servers[set_id].alive:     # it died: start another
                self.servers.pop(set_id).close()
            if set_id not in self.servers:
                warm = ["numpy", "posenc", f"posenc.exercises.{set_id}", *exercise_imports(set_id)]
                self.servers[set_id] = ForkServer(list(dict.fromkeys(warm)), self.home)
            return self.servers[set_id]

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
        shutil.rmtree(self.home, ignore_errors=True)


def grade_submission(sub: Submission, plan: Plan, pool: ServerPool, settings: Settings) -> Graded:
    """Run and judge one submission; never raises for anything the student did."""
    graded = Graded(sub)
    start = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix="posenc-grade-")
    session = _Session(sub, plan, pool, settings, graded, workdir)
    try:
        session.grade()
    finally:
        session.close()
        _remove(workdir)
        graded.seconds = time.perf_counter() - start
    return graded


class _Session:
    def __init__(self, sub, plan, pool, settings, graded, workdir):
        self.sub, self.plan, self.pool, self.settings, self.graded = sub, plan, pool, settings, graded
        self.workdir = workdir
        self.kernel: Kernel | None = None
        self.skip: set[int] = set()          # cells never to run again (they hung or killed the kernel)
        self.restarts = 0
        self.names = {q.name: q.qid for q in plan.questions}

    def close(self):
        if self.kernel is not None:
            self.kernel.kill()

    # -- the kernel ------------------------------------------------------------------------------
    def _start(self) -> bool:
        """A fresh kernel with every cell run (except those that hung or crashed before)."""
        while True:
            if self.kernel is not None:
                self.kernel.kill()
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
        """A new kernel from the set's fork server (started again if something killed it)."""
        set_id = self.plan.exercise_set.set_id
        try:
            server = self.pool.get(set_id)
            kernel = server.spawn(self.workdir, self.settings.limits)
        except (OSError, RuntimeError, ValueError):
            server = self.pool.get(set_id)
            kernel = server.spawn(self.workdir, self.settings.limits)
        if server.sandbox is None:
            try:
                server.sandbox = list(kernel.call({"op": "info"}, 10).get("sandbox") or [])
            except KernelError:
                kernel = server.spawn(self.workdir, self.settings.limits)
        return kernel

    def _kernel_lost(self, exc: KernelError, where: str) -> str:
        """Record that the kernel was lost; how it ended, in words."""
        self.restarts += 1
        if exc.kind == "hung":
            limit = self.settings.cell_timeout if where.startswith("while running") else \
                self.settings.timeout_per_question
            self.graded.flag(TIMEOUT, f"the kernel did not stop when its time ran out ({limit:g} s) {where}; "
                                      "it was restarted")
            return "it did not stop in time"
        how = self.kernel.death() if exc.kind == "died" else f"sent {exc.message}"
        self.graded.flag(KERNEL_DIED, f"the kernel {how} {where}; it was restarted")
        return f"the kernel {how}"

    def _about(self, cell: Cell) -> str:
        qids = sorted({self.names[n] for n in cell.defines if n in self.names} | set(filter(None, cell.checks)))
        return f", which belongs to {', '.join(qids)}" if qids else ""

    def _run_cell(self, cell: Cell, report: bool) -> None:
        timeout = self.settings.cell_timeout
        reply = self.kernel.call({"op": "run", "code": cell.code, "filename": f"<{cell.label}>"}, timeout)
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
                self.graded.cell_errors.append(f"{cell.label} raised {error}")

    # -- grading ---------------------------------------------------------------------------------
    def grade(self) -> None:
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

    def _origins(self) -> None:
        """Note answers that are the course's own code (``from posenc import sinusoidal_encoding``).

        Points are not changed: the lecturer decides. A wrapper around the course's function is not seen.
        """
        names = sorted({q.name for q in self.plan.questions})
        try:
            reply = self.kernel.call({"op": "origins", "names": names}, 5.0)
        except KernelError:
            self.kernel.kill()
            self._start()
            return
        origins = reply.get("origins") if isinstance(reply.get("origins"), dict) else {}
        for name in names:
            module, qualname = (origins.get(name) or [None, None])[:2]
            if isinstance(module, str) and (module == "posenc" or module.startswith("posenc.")):
                self.graded.flag(COURSE_CODE, f"`{name}` is the course's {module}.{qualname}, "
                                              "not code written in the notebook")

    def _question(self, question: Question) -> tuple[Result, bool]:
        seed, timeout = self.settings.seed, self.settings.timeout_per_question
        try:
            reply = self.kernel.call(self.plan.collect_message(question, seed), timeout)
        except KernelError as exc:
            how = self._kernel_lost(exc, f"while checking {question.qid}")
            if exc.kind == "hung":
                return self._failed(question, f"your code did not finish within {timeout:g} s of computing "
                                              "(an endless loop?)"), True
            return self._failed(question, f"your code stopped the kernel while it ran for this question "
                                          f"({how})"), True
        status = reply.get("status")
        if status == "timeout":
            self.graded.flag(TIMEOUT, f"{question.qid}: the student's code did not finish within {timeout:g} s "
                                      "of computing")
            return self._failed(question, f"your code did not finish within {timeout:g} s of computing "
                                          "(an endless loop?)"), False
        if status != "ok":
            error = str(reply.get("error", "unknown error"))[:300]
            if reply.get("error_type") == "SystemExit":
                error = f"your code called sys.exit() ({error})"
            if _out_of_memory(reply.get("error_type"), error):
                self.graded.flag(MEMORY, f"{question.qid}: out of memory "
                                         f"(limit {self.settings.limits.memory_mb:g} MB)")
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
                                         f"(limit {self.settings.limits.memory_mb:g} MB)")
                break
        return question.result_from(collected, seed), False

    @staticmethod
    def _failed(question: Question, message: str) -> Result:
        return Result(question.qid, FAILED, 0, question.points, message, question.private)


def _out_of_memory(error_type, error) -> bool:
    """A MemoryError, or a library's own words for one (torch raises RuntimeError "can't allocate memory")."""
    text = str(error or "").lower()
    return error_type == "MemoryError" or ("allocate" in text and "memory" in text)


def _remove(folder: str) -> None:
    """Remove a kernel's folder even if the student made parts of it read-only."""
    def fix(func, path, _):
        try:
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            os.chmod(path, stat.S_IRWXU)
            func(path)
        except OSError:
            pass

    shutil.rmtree(folder, onerror=fix)
