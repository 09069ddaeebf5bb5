"""The package's layout: its folders follow the course's pipeline, and imports only run with its grain.

    posenc.lib          what the chapters teach          imports: lib
    posenc.experiments  the experiment harness           imports: lib, experiments
    posenc.exercises    generator, framework, checks     imports: lib, exercises (and, in checks/ only, the
                                                         harness's result files and summaries: reading
                                                         committed results, never training)
    posenc.book         the book's tooling               imports: lib, experiments, exercises, book
    posenc.grader       the batch grader                 imports: exercises, grader (never the harness)
    posenc.paths        where the checkout's files are   anyone but lib; its RESULTS only the harness's
                                                         result files (posenc.experiments.results)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "posenc"
ALLOWED = {
    "lib": {"lib"},
    "experiments": {"lib", "experiments", "paths"},
    "exercises": {"lib", "exercises", "experiments", "paths"},
    "book": {"lib", "experiments", "exercises", "book", "paths"},
    "grader": {"exercises", "grader", "paths"},
}
ROLES = set(ALLOWED)
# What a check may read of the harness: committed result files, their summaries and a chapter's configuration.
CHECKS_MAY_READ = re.compile(r"posenc\.experiments\.(results|summaries|ch\d\d)(\.\w+)?$")


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


def named_modules(path: Path) -> list[str]:
    """Every ``posenc...`` name an import in a file can load: ``from posenc.x import y`` may load ``posenc.x.y``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return [module for module in found if module == "posenc" or module.startswith("posenc.")]


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
             if role(module) not in ALLOWED[mine]]
    assert not wrong, f"{path.relative_to(ROOT)} ({mine}) imports across the layout: {wrong}"


def test_exercises_read_the_harness_only_in_checks_and_never_train():
    """A check may load a committed result file and summarise it (chapters 7 and 8's questions show their
    numbers), or read a chapter's configuration; the generator, the framework and the probe runner never
    touch the harness, and no check imports the runner (the grader would then train models)."""
    for path in sorted((PACKAGE / "exercises").rglob("*.py")):
        named = [module for module in named_modules(path) if role(module) == "experiments"]
        if path.parent.name != "checks":
            assert not named, (path.name, named)
        assert all(CHECKS_MAY_READ.match(m) for m in named if m != "posenc.experiments"), (path.name, named)


def test_the_taught_library_needs_no_checkout_and_only_the_harness_knows_the_results_folder():
    for path in MODULES:
        tree = ast.parse(path.read_text())
        names = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 for alias in node.names}
        if path.parent == PACKAGE / "lib":
            assert not [m for _, m in posenc_imports(path) if m == "posenc.paths"], path
        if ("posenc.paths", "RESULTS") in names:
            assert path == PACKAGE / "experiments" / "results.py", path


def _closure(module: str) -> set[str]:
    """Every posenc module that importing ``module`` loads (its packages' __init__ too), lazy imports included."""
    seen, todo = set(), [module]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if prefix in seen:
                continue
            file = ROOT / Path(*prefix.split("."))
            file = file / "__init__.py" if file.is_dir() else file.with_suffix(".py")
            if not file.is_file():
                continue                                   # an attribute, not a module
            seen.add(prefix)
            todo += named_modules(file)
    return seen


def test_the_registry_imports_chapter_modules_that_never_import_it_back():
    """posenc.experiments.registry loads a chapter's module by name; that module, and everything it imports,
    must not import the registry (or the result files, which do): no import runs in a circle."""
    chapters = sorted(p.stem for p in (PACKAGE / "experiments").glob("ch[0-9][0-9].py"))
    assert chapters == ["ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "ch10"]
    for chapter in chapters:
        loaded = _closure(f"posenc.experiments.{chapter}")
        assert not loaded & {"posenc.experiments.registry", "posenc.experiments.results",
                             "posenc.experiments.__main__"}, (chapter, sorted(loaded))
    assert "posenc.experiments.ch04" in _closure("posenc.experiments.ch06")     # said plainly in ch06's docstring


def test_what_runs_next_to_student_code_imports_no_check():
    """A grading kernel imports the probe runner and the worker; neither may load a check (a reference)."""
    kernel = ("posenc.exercises.probe", "posenc.grader.sandbox", "posenc.grader.status")
    for name in ("exercises/probe.py", "grader/worker.py", "grader/sandbox.py", "grader/status.py"):
        imported = [module for _, module in posenc_imports(PACKAGE / name)]
        assert all(m in kernel for m in imported), (name, imported)


def test_the_layout_checker_sees_a_wrong_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from posenc.grader.cli import main\n")
    assert [role(m) for _, m in posenc_imports(bad)] == ["grader"]
    assert "grader" not in ALLOWED["lib"] and "experiments" not in ALLOWED["lib"] | ALLOWED["grader"]
    bad.write_text("from posenc.experiments import sweep, ch07\nfrom posenc.experiments.runner import run_one\n")
    assert [m for m in named_modules(bad) if not CHECKS_MAY_READ.match(m)] == [
        "posenc.experiments", "posenc.experiments.sweep", "posenc.experiments.runner", "posenc.experiments.runner.run_one"]


def test_the_manual_and_contributing_show_the_layout():
    manual = (ROOT / "book" / "lecturers" / "building.md").read_text()    # its table "Repository layout"
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    for folder in ("posenc/lib/", "posenc/experiments/", "posenc/book/", "posenc/exercises/", "posenc/grader/"):
        assert folder in manual and folder in contributing, folder
    for word in ("probe", "collect", "judge", "mistake", "variant"):
        assert f"**{word}**" in contributing, word


def test_what_an_exercise_notebook_imports_of_the_package_is_visible_in_the_grading_sandbox():
    """bubblewrap shows a grading kernel only PACKAGE_FILES of the package: a module an exercise imports (with
    what it imports in turn) outside them fails in the kernel, and the question that needs it scores zero
    (chapter 4's exercise reads the chapter's configuration from posenc.experiments.ch04). The exercises'
    own ``checker`` is the grader's business (its checks are hidden there on purpose)."""
    from posenc.exercises import SET_IDS
    from posenc.grader.sandbox import PACKAGE_FILES
    from posenc.grader.submission import exercise_imports

    def visible(module: str) -> bool:
        relative = Path(*module.split(".")[1:])
        return any(relative == Path(f).with_suffix("") or Path(f) in relative.parents or relative == Path(f)
                   for f in PACKAGE_FILES)

    for set_id in SET_IDS:
        needed = {m for name in exercise_imports(set_id) if name.startswith("posenc.")
                  and not name.startswith("posenc.exercises") for m in _closure(name)}
        hidden = sorted(m for m in needed if m != "posenc" and not visible(m))
        assert not hidden, (set_id, hidden)
