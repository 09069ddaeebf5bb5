"""The package's layout: its folders follow the course's pipeline, and imports only run with its grain.

    posenc.lib        the course's library            imports: lib
    posenc.exercises  generator, framework, checks    imports: lib, exercises
    posenc.book       the book's tooling              imports: lib, exercises, book
    posenc.grader     the batch grader                imports: exercises, grader
    posenc.paths      where the checkout's files are  (anyone may import it)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "posenc"
ALLOWED = {
    "lib": {"lib"},
    "exercises": {"lib", "exercises"},
    "book": {"lib", "exercises", "book"},
    "grader": {"exercises", "grader"},
}
EVERYONE = {"paths"}
ROLES = set(ALLOWED)


def posenc_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every ``posenc...`` import in a file, at any depth (lazy imports count too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)]
            if node.module == "posenc":       # `from posenc import lib` names a subpackage
                found += [(node.lineno, f"posenc.{alias.name}") for alias in node.names]
    return [(line, module) for line, module in found if module == "posenc" or module.startswith("posenc.")]


def role(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def test_every_module_has_a_role_or_is_one_of_the_top_level_entry_points():
    top_level = {p.name for p in PACKAGE.glob("*.py")}
    assert top_level == {"__init__.py", "paths.py", "bench.py"}
    assert {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"} == ROLES


@pytest.mark.parametrize("path", [p for p in MODULES if p.parent != PACKAGE], ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_with_the_grain(path):
    mine = path.relative_to(PACKAGE).parts[0]
    wrong = [f"line {line}: {module}" for line, module in posenc_imports(path)
             if role(module) not in ALLOWED[mine] | EVERYONE]
    assert not wrong, f"{path.relative_to(ROOT)} ({mine}) imports across the layout: {wrong}"


def test_what_runs_next_to_student_code_imports_no_check():
    """A grading kernel imports the probe runner and the worker; neither may load a check (a reference)."""
    for name in ("exercises/probe.py", "grader/worker.py", "grader/sandbox.py"):
        imported = [module for _, module in posenc_imports(PACKAGE / name)]
        assert all(m in ("posenc.exercises.probe", "posenc.grader.sandbox") for m in imported), (name, imported)


def test_the_layout_checker_sees_a_wrong_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from posenc.grader.cli import main\n")
    assert [role(m) for _, m in posenc_imports(bad)] == ["grader"]
    assert "grader" not in ALLOWED["lib"]


def test_the_manual_and_contributing_show_the_layout():
    manual = (ROOT / "book" / "lecturers" / "building.md").read_text()    # its table "Repository layout"
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    for folder in ("posenc/lib/", "posenc/book/", "posenc/exercises/", "posenc/grader/"):
        assert folder in manual and folder in contributing, folder
    for word in ("probe", "collect", "judge", "mistake", "variant"):
        assert f"**{word}**" in contributing, word
