"""Reading a submission: is it a notebook, which exercise set does it answer, which cells to run.

Nothing here runs the student's code: the cells are only parsed (to drop ``check(...)`` calls and to see
which question's name each cell defines). Parsing is still work on untrusted input (a 20 MB cell, an
expression nested a hundred thousand deep), so the batch grader does it in a kernel, under that kernel's
memory and time limits: ``worker.parse_notebook`` runs there and returns plain data; ``read_submission``
reads the file here (never through a symbolic link, never more than ``MAX_FILE_BYTES``) and builds the
``Submission`` from what came back.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from posenc.paths import EXERCISES, SOLUTIONS
from posenc.grader.status import (  # noqa: F401  (the statuses' one definition; imported from here too)
    EMPTY, GRADER_ERROR, INVALID, NOT_NOTEBOOK, PROBLEMS, SYMLINK, UNKNOWN_SET, WRONG_SET,
)
from posenc.grader.worker import (  # noqa: F401  (parsing runs in a kernel: it lives with the kernel's code)
    detect_set, fingerprint, parse_notebook, prepare_code,
)

MAX_FILE_BYTES = 100 * 2**20


@dataclass
class Cell:
    number: int                  # 1-based, among the code cells
    cell_id: str
    source: str                  # as the student wrote it
    code: str                    # what the kernel runs: IPython syntax translated, check(...) calls dropped
    defines: set[str] = field(default_factory=set)     # top-level names it binds
    checks: list[str] = field(default_factory=list)    # question ids of the check(...) calls dropped
    fingerprint: str = ""        # of what its code does, names, comments and layout aside ("": nothing)
    size: int = 0                # of its syntax tree, in nodes (how much evidence of copying it can be)

    @property
    def label(self) -> str:
        return f"cell {self.number}" + (f" ({self.cell_id})" if self.cell_id else "")


@dataclass
class Submission:
    path: Path
    name: str                         # how the gradebook names it
    cells: list[Cell] = field(default_factory=list)
    set_id: str | None = None
    set_evidence: str = ""
    problem: str | None = None        # one of status.PROBLEMS when it cannot be graded (set by ``refuse``)
    message: str = ""
    digest: str = ""                  # of the code the notebook runs, to spot duplicates

    @property
    def gradable(self) -> bool:
        return self.problem is None

    def refuse(self, problem: str, message: str) -> "Submission":
        """Mark this submission as not gradable, and why: the one place a problem is set."""
        if problem not in PROBLEMS:
            raise ValueError(f"unknown status {problem!r}: one of {', '.join(PROBLEMS)}")
        self.problem, self.message = problem, message
        return self


def read_bytes(path: Path) -> bytes:
    """The file's content, read without following a symbolic link and only from a regular file.

    OSError with a readable ``strerror`` otherwise (ELOOP: a link)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "it is not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise OSError(0, f"the file is {info.st_size / 2**20:.0f} MB, too large for a notebook "
                             f"(limit {MAX_FILE_BYTES // 2**20} MB)")
        data = os.read(fd, info.st_size + 1)           # in one piece: never a second copy of a large file
        while len(data) <= MAX_FILE_BYTES and (chunk := os.read(fd, 1 << 20)):     # (it grew meanwhile)
            data += chunk
        if len(data) > MAX_FILE_BYTES:
            raise OSError(0, f"the file is over {MAX_FILE_BYTES // 2**20} MB, too large for a notebook")
        return data
    finally:
        os.close(fd)


def read_submission(path: Path, name: str | None = None,
                    parse: Callable[[bytes, str], dict] | None = None) -> Submission:
    """Read one file and parse it (``parse``: where; by default here); a broken file gives a Submission
    with ``problem`` set, never an exception."""
    sub = Submission(Path(path), name or Path(path).name)
    try:
        raw = read_bytes(sub.path)
    except OSError as exc:
        if exc.errno == errno_ELOOP:
            return sub.refuse(SYMLINK, SYMLINK_MESSAGE)
        return sub.refuse(INVALID, f"the file cannot be read ({exc.strerror or exc})")
    try:
        parsed = (parse or parse_notebook)(raw, sub.path.name)
        return from_parsed(sub, parsed)
    except Exception as exc:  # the parser ran out of memory or time, or broke: this file only
        return sub.refuse(INVALID, f"the notebook could not be read within the grader's limits ({exc})")


errno_ELOOP = 40
SYMLINK_MESSAGE = ("a symbolic link, not a notebook: it was not followed (hand in the notebook file itself)")


def from_parsed(sub: Submission, parsed: dict) -> Submission:
    """Fill ``sub`` from ``parse_notebook``'s plain data (which came from a kernel: check every type)."""
    if not isinstance(parsed, dict):
        raise ValueError("the parser's answer is malformed")
    if parsed.get("problem") is not None:
        return sub.refuse(parsed["problem"] if parsed["problem"] in (INVALID, EMPTY) else INVALID,
                          str(parsed.get("message", ""))[:1000])
    cells = parsed.get("cells")
    if not isinstance(cells, list):
        raise ValueError("the parser's answer is malformed")
    for number, item in enumerate(cells, start=1):
        if not isinstance(item, list) or len(item) != 7:
            raise ValueError("the parser's answer is malformed")
        cell_id, source, code, defines, checks, print_, size = item
        code = source if code is None else code
        if not (isinstance(cell_id, str) and isinstance(source, str) and isinstance(code, str)
                and isinstance(defines, list) and isinstance(checks, list) and isinstance(print_, str)
                and type(size) is int):
            raise ValueError("the parser's answer is malformed")
        sub.cells.append(Cell(number, cell_id, source, code, {str(d) for d in defines}, [str(c) for c in checks],
                              print_[:64], max(0, size)))
    set_id, evidence = parsed.get("set_id"), parsed.get("set_evidence", "")
    sub.set_id = set_id if isinstance(set_id, str) and re.fullmatch(r"ch\d\d", set_id) else None
    sub.set_evidence = str(evidence)[:100] if sub.set_id else ""
    return sub


def prepare_cell(number: int, cell_id: str, source: str) -> Cell:
    """A notebook cell as the kernel runs it (see ``worker.prepare_code``)."""
    code, defines, checks = prepare_code(source)
    return Cell(number, cell_id, source, code, set(defines), checks, *fingerprint(code))


def _exercise_code_cells(set_id: str):
    """The source of every code cell of the set's exercise notebook, as handed out."""
    for path in sorted(EXERCISES.glob(f"{set_id}_*.ipynb")):
        try:
            nb = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code":
                source = cell.get("source", "")
                yield "".join(source) if isinstance(source, list) else source


def template_sources(set_id: str) -> set[str]:
    """The fingerprints of the code cells of the set's exercise notebook as handed out (to tell the
    student's own work apart)."""
    return {prepare_cell(0, "", source).fingerprint for source in _exercise_code_cells(set_id)} - {""}


def exercise_imports(set_id: str) -> list[str]:
    """Modules the set's exercise notebook imports at top level (the fork server imports them once)."""
    modules = []
    for source in _exercise_code_cells(set_id):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Import):
                modules += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.append(node.module)
    return list(dict.fromkeys(modules))


# How much code of their own two notebooks must share to be listed as copies, in syntax-tree nodes: a cell
# below MIN_OWN_CELL (``x = 1``, a choice's letter, ``print(x)``) is no evidence and does not count (adding
# one changes nothing); below MIN_EVIDENCE in all, a notebook is never listed. One line such as
# ``return 2 * np.pi * base ** (2 * i / d_model)`` is about 25 nodes, ch01's answers together about 260.
MIN_OWN_CELL = 8
MIN_EVIDENCE = 80


def solution_digest(set_id: str) -> str:
    """``set_digest`` of the course's published solution notebook of the set (``solutions/``, in a checkout;
    a Gradescope bundle carries only this digest): a hand-in with the same digest is that solution, as a
    copy of a classmate's would be found. "" without the solution."""
    template = template_sources(set_id)
    for path in sorted(SOLUTIONS.glob(f"{set_id}_*.ipynb")):
        sub = read_submission(path)
        if sub.gradable:
            return set_digest(sub, template)
    return ""


SOLUTION_NOTE = ("same code as the course's published solution of this set (solutions/; names, comments, "
                 "layout and cell order aside): compare it with the solution")


def set_digest(sub: Submission, template: set[str]) -> str:
    """A fingerprint of the code a student wrote, as a copier would disguise it: the multiset of the
    fingerprints of the cells that are not handed-out cells (names, comments and layout aside:
    ``worker.fingerprint``), so that cells moved around, handed-out cells deleted or run again, and cells
    too small to be evidence added change nothing. "" when the student's own code is too small to tell a
    copy from two students writing the obvious line."""
    own = [c for c in sub.cells if c.fingerprint and c.fingerprint not in template and c.size >= MIN_OWN_CELL]
    if sum(c.size for c in own) < MIN_EVIDENCE:
        return ""
    return hashlib.sha256("\n".join(sorted(c.fingerprint for c in own)).encode()).hexdigest()
