"""Which graded objects predate the last failed run of the cell that defines them (the inline ``check``).

A definition cell that fails (``import scipy`` on its first line, a typo further down) leaves the object of
an earlier run in place; ``check("q1")`` would then grade that object and print a PASS that the code in the
cell has not earned. IPython tells every run of a cell to its ``pre_run_cell`` and ``post_run_cell``
events, with the cell's text and whether it failed. :class:`CellWatch` listens to both and notes, for the
names an exercise set grades, those that a failed cell meant to define and left as they were; ``check``
then says so instead of grading. Outside IPython (the tests, the batch grader, which runs cells itself)
there are no events and nothing is noted.
"""

from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass
from typing import Any

_ABSENT = object()


@dataclass
class Stale:
    """A graded object that a failed run of its cell left in place."""

    obj: Any
    cell: int | None          # the execution count of that run (In [cell])
    error: str

    def message(self, name: str) -> str:
        where = f"In [{self.cell}], the cell that defines it," if self.cell else "the cell that defines it"
        return (f"`{name}` predates the last run of {where} which failed ({self.error}): this would check the "
                f"`{name}` of an earlier run, not the code in that cell. Fix the cell, run it again, then check")


def defined_names(source: str) -> set[str]:
    """The names a cell's code binds outside functions and classes (def, class, assignments, imports)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:       # magics or a typo: read the definitions line by line
        return {m[0] or m[1] for m in re.findall(r"^\s*(?:def|class)\s+(\w+)|^(\w+)\s*=[^=]", source, re.M)}
    names: set[str] = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(child.name)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                names.update((alias.asname or alias.name).split(".")[0] for alias in child.names)
            elif isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                names.add(child.id)
            elif not isinstance(child, ast.Lambda):
                visit(child)

    visit(tree)
    return names


class CellWatch:
    """Listens to one IPython shell's cell runs for the graded names (see the module's docstring)."""

    def __init__(self, shell):
        self.shell = shell
        self.names: set[str] = set()
        self.before: dict[str, Any] = {}      # graded names the running cell defines -> their objects before it
        self.stale: dict[str, Stale] = {}

    def pre_run_cell(self, info=None) -> None:
        source = getattr(info, "raw_cell", "") or ""
        try:
            source = self.shell.transform_cell(source)        # magics become Python
        except Exception:
            pass
        namespace = self.shell.user_ns
        self.before = {name: namespace.get(name, _ABSENT) for name in defined_names(source) & self.names}

    def post_run_cell(self, result=None) -> None:
        failed = result is not None and not getattr(result, "success", True)
        error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
        namespace = self.shell.user_ns
        for name, old in self.before.items():
            if failed and old is not _ABSENT and namespace.get(name, _ABSENT) is old:
                self.stale[name] = Stale(old, getattr(result, "execution_count", None), _described(error))
            else:
                self.stale.pop(name, None)
        self.before = {}

    def predates(self, name: str, namespace: dict) -> Stale | None:
        """The record of a failed run when ``namespace[name]`` is still the object it left in place."""
        record = self.stale.get(name)
        if record is not None and namespace is self.shell.user_ns and namespace.get(name, _ABSENT) is record.obj:
            return record
        return None


def _described(error) -> str:
    if error is None:
        return "an error"
    text = f"{type(error).__name__}: {error}".strip().rstrip(":")
    return text if len(text) <= 160 else text[:157] + "..."


_WATCHES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def watch(names) -> CellWatch | None:
    """The CellWatch of the running IPython shell, listening for ``names`` too (None outside IPython). One per
    shell, however often the notebook's first cell runs."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None or not hasattr(shell, "events") or not hasattr(shell, "user_ns"):
        return None
    watcher = _WATCHES.get(shell)
    if watcher is None:
        watcher = CellWatch(shell)
        shell.events.register("pre_run_cell", watcher.pre_run_cell)
        shell.events.register("post_run_cell", watcher.post_run_cell)
        _WATCHES[shell] = watcher
    watcher.names.update(names)
    return watcher
