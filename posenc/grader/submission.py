"""Reading a submission: is it a notebook, which exercise set does it answer, which cells to run.

Nothing here runs the student's code: the cells are only parsed (to drop ``check(...)`` calls and to see
which question's name each cell defines).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from posenc.paths import EXERCISES

MAX_FILE_BYTES = 100 * 2**20
SET_PATTERN = re.compile(r"(?<![A-Za-z0-9])(ch\d\d)(?!\d)", re.IGNORECASE)
CHECKER_CALL = re.compile(r"checker\(\s*['\"](ch\d\d)['\"]\s*\)")

# Statuses of a submission that could not be graded at all.
INVALID, EMPTY, UNKNOWN_SET, WRONG_SET, GRADER_ERROR = (
    "invalid", "empty", "unknown-set", "wrong-set", "grader-error")


@dataclass
class Cell:
    number: int                  # 1-based, among the code cells
    cell_id: str
    source: str                  # as the student wrote it
    code: str                    # what the kernel runs: IPython syntax translated, check(...) calls dropped
    defines: set[str] = field(default_factory=set)     # top-level names it binds
    checks: list[str] = field(default_factory=list)    # question ids of the check(...) calls dropped

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
    problem: str | None = None        # a status of INVALID, EMPTY, ... when it cannot be graded
    message: str = ""
    digest: str = ""                  # of the code the student changed, to spot duplicates

    @property
    def gradable(self) -> bool:
        return self.problem is None


def read_submission(path: Path, name: str | None = None) -> Submission:
    """Parse one file; a broken file gives a Submission with ``problem`` set, never an exception."""
    sub = Submission(Path(path), name or Path(path).name)
    try:
        size = sub.path.stat().st_size
        if size > MAX_FILE_BYTES:
            return _bad(sub, INVALID, f"the file is {size / 2**20:.0f} MB, too large for a notebook "
                                      f"(limit {MAX_FILE_BYTES // 2**20} MB)")
        raw = sub.path.read_bytes()
    except OSError as exc:
        return _bad(sub, INVALID, f"the file cannot be read ({exc.strerror or exc})")
    if not raw.strip():
        return _bad(sub, INVALID, "the file is empty (0 bytes of notebook): was the right file uploaded?")
    try:
        nb = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return _bad(sub, INVALID, "the file is not text (not a .ipynb notebook; a zip or a PDF?)")
    except (ValueError, RecursionError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if hasattr(exc, "lineno") else ""
        return _bad(sub, INVALID, f"the file is not valid JSON{where}, so it is not a Jupyter notebook; "
                                  "was it saved from Jupyter (File > Download > .ipynb)?")
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        version = nb.get("nbformat") if isinstance(nb, dict) else None
        if isinstance(version, int) and version < 4 and isinstance(nb.get("worksheets"), list):
            nb = _upgrade_v3(nb)
        else:
            return _bad(sub, INVALID, "the file is JSON but not a Jupyter notebook (it has no list of cells)")
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(str(s) for s in source)
        if not isinstance(source, str):
            continue
        cells.append((str(cell.get("id") or ""), source))
    if not any(source.strip() for _, source in cells):
        return _bad(sub, EMPTY, "the notebook has no code: nothing to grade (was the right notebook uploaded?)")
    sub.cells = [prepare_cell(number, cell_id, source)
                 for number, (cell_id, source) in enumerate(cells, start=1)]
    sub.set_id, sub.set_evidence = detect_set(nb, sub.path.name, [c.source for c in sub.cells])
    return sub


def _bad(sub: Submission, problem: str, message: str) -> Submission:
    sub.problem, sub.message = problem, message
    return sub


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


def prepare_cell(number: int, cell_id: str, source: str) -> Cell:
    """Translate IPython syntax to Python, drop top-level ``check(...)`` calls, note the names bound."""
    cell = Cell(number, cell_id, source, source)
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        python = TransformerManager().transform_cell(source)
        tree = ast.parse(python)
    except Exception:  # a syntax error: the kernel reports it when the cell runs
        return cell
    kept = []
    for node in tree.body:
        qid = _check_call(node)
        if qid is not None:
            cell.checks.append(qid)
            continue
        kept.append(node)
        cell.defines |= _bound_names(node)
    if len(kept) != len(tree.body):
        tree.body = kept or [ast.Pass()]
        cell.code = ast.unparse(tree)
    else:
        cell.code = python
    return cell


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
    """The code cells of the set's exercise notebook as handed out (to tell the student's own work apart)."""
    return {_normal(source) for source in _exercise_code_cells(set_id)}


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


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def set_digest(sub: Submission, template: set[str]) -> str:
    """A fingerprint of the code the student wrote; "" when they changed nothing."""
    own = [_normal(c.source) for c in sub.cells if _normal(c.source) and _normal(c.source) not in template]
    if not own:
        return ""
    return hashlib.sha256("\n\0".join(own).encode()).hexdigest()
