"""The course in Colab's own versions: Python 3.12, numpy 2.0, matplotlib 3.10, IPython 7.34, ipywidgets 7.7.

tests/colab_env.py's ``COLAB_VERSIONS`` environment holds what Colab ran on Python 3.12
(tests/colab_versions.txt), the course package installed by the notebooks' first cell from a wheel, and no
torch: the only CPU build of torch that can be installed here is for Python 3.11, and the default Linux
build brings several GB of CUDA libraries. So this file

* derives which notebooks of the table of contents need torch: those whose imports (their import
  statements and the check module of their exercise set) fail where ``import torch`` fails; the manual
  (book/lecturers/building.md, "The package on its own") and pyproject.toml's torch extra must name exactly
  those;
* runs every other notebook (chapters, exercise pages, worked solutions) in this environment, each copied
  alone into an empty folder, through nbval; a notebook that needed torch after all would fail there.

The Python 3.12 interpreter is found by tests/colab_env.py's find_python; where there is none, these tests
skip with a message, and fail in CI (``CI=true`` or ``POSENC_REQUIRE_PYTHON312=1``, set by .ci/run).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
from functools import lru_cache
from pathlib import Path

import nbformat
import pytest

from posenc.exercises import SET_IDS, authoring
from tests import colab_env
from tests.colab_env import COLAB_VERSIONS
from tests.conftest import ROOT
from tests.test_environments import pins

TRUE = ("1", "true", "yes")
REQUIRED = (os.environ.get("POSENC_REQUIRE_PYTHON312", "").lower() in TRUE
            or os.environ.get("CI", "").lower() in TRUE)


@pytest.fixture(scope="module")
def versions_env() -> Path:
    try:
        return COLAB_VERSIONS.prepare()
    except FileNotFoundError as missing:
        if REQUIRED:
            pytest.fail(f"{missing} (and CI or POSENC_REQUIRE_PYTHON312 is set)", pytrace=False)
        pytest.skip(str(missing))


def import_statements(notebook: Path) -> list[str]:
    """The notebook's import statements, and the loading of its exercise set's checks (``checker("chNN")``)."""
    statements = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        code = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                statements.append(ast.unparse(node))
        statements += [f"import posenc.exercises.checks.{set_id}"
                       for set_id in re.findall(r"""\bchecker\(\s*["'](ch\d\d)["']\s*\)""", cell.source)]
    return statements


# Runs in a fresh interpreter where torch cannot be imported: each notebook's imports, one notebook at a time.
PROBE = """
import json, sys
sys.modules["torch"] = None          # `import torch` now raises ImportError, as where torch is missing
needs = {}
for name, statements in json.load(sys.stdin).items():
    needs[name] = False
    for statement in statements:
        try:
            exec(statement, {})
        except ImportError as error:
            if "torch" not in str(error):
                raise
            needs[name] = True
print(json.dumps(needs))
"""


@lru_cache(maxsize=None)
def torch_needs() -> dict[Path, bool]:
    """Every notebook of the table of contents -> whether its imports need torch."""
    notebooks = authoring.toc_notebooks()
    request = json.dumps({str(path): import_statements(path) for path in notebooks})
    result = subprocess.run([sys.executable, "-c", PROBE], input=request, cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return {Path(name): needs for name, needs in json.loads(result.stdout).items()}


def numbers(paths) -> list[int]:
    return sorted({int(re.match(r"(?:ch)?(\d\d)", path.name).group(1)) for path in paths})


def spans(values: list[int]) -> str:
    """[0, 2, 3, 4, 5, 6, 7] -> "0 and 2-7" (how the manual names chapters and exercise sets)."""
    runs = []
    for value in values:
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    words = [f"{a}" if a == b else f"{a}-{b}" if b > a + 1 else f"{a}, {b}" for a, b in runs]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def torch_sentence(needed: bool = True) -> str:
    """The words that the manual (book/lecturers/building.md) and pyproject.toml's torch extra use for what
    needs torch (or, with ``needed=False``, the manual for what does not), e.g. "chapters 0 and 2-7, exercise
    sets 3-7"."""
    paths = [path for path, needs in torch_needs().items() if needs == needed]
    chapters = numbers(p for p in paths if p.parent.name == "notebooks")
    sets = numbers(p for p in paths if p.parent.name in ("exercises", "solutions"))
    return f"chapter{'s' * (len(chapters) > 1)} {spans(chapters)}, exercise sets {spans(sets)}"


def test_spans_name_runs_as_the_manual_does():
    assert spans([0, 2, 3, 4, 5, 6, 7]) == "0 and 2-7"
    assert spans([3, 4, 5, 6, 7]) == "3-7"
    assert spans([4, 6]) == "4 and 6"
    assert spans([1, 2, 5]) == "1, 2 and 5"


def test_the_probe_sees_a_torch_import_through_the_course_package():
    needs = torch_needs()
    assert needs[ROOT / "notebooks" / "00_why_order_matters.ipynb"]            # imports torch itself
    assert needs[ROOT / "exercises" / "ch05_relative_biases.ipynb"]  # through its checks' imports only
    assert not needs[ROOT / "exercises" / "ch01_sinusoids.ipynb"]
    for set_id in SET_IDS:   # an exercise page and its worked twin import the same
        pair = [path for path in needs if path.parent.name in ("exercises", "solutions") and path.name.startswith(set_id)]
        assert len(pair) == 2 and needs[pair[0]] == needs[pair[1]], pair


def test_the_manual_and_the_torch_extra_name_exactly_what_needs_torch():
    sentence = torch_sentence()
    manual = " ".join((ROOT / "book" / "lecturers" / "building.md").read_text().split())
    assert sentence in manual, f"book/lecturers/building.md must say what needs torch: {sentence!r}"
    without = torch_sentence(needed=False)
    assert without.replace(",", " and") in manual, (
        f"book/lecturers/building.md must say what runs without torch: {without!r}")
    pyproject = (ROOT / "pyproject.toml").read_text()
    comment = " ".join(line.lstrip("# ") for line in pyproject.splitlines() if line.startswith("#"))
    assert sentence in " ".join(comment.split()), f"pyproject.toml's torch extra must say: {sentence!r}"


def test_the_environment_has_colabs_python_3_12_versions_and_no_torch(versions_env):
    probe = ("import json, sys, importlib.metadata as m, importlib.util as u\n"
             "names = ['numpy', 'matplotlib', 'ipython', 'ipywidgets', 'ipykernel']\n"
             "print(json.dumps([sys.version.split()[0], {n: m.version(n) for n in names}, u.find_spec('torch')"
             " is None]))")
    result = subprocess.run([str(versions_env), "-c", probe], cwd=COLAB_VERSIONS.folder,
                            env=COLAB_VERSIONS.clean_environ(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    python, versions, no_torch = json.loads(result.stdout)
    colab = pins(COLAB_VERSIONS.constraints)
    assert python.startswith("3.12.") and no_torch, (python, no_torch)
    assert versions == {name: colab[name] for name in versions}, (versions, colab)


def test_the_declared_lower_bounds_are_the_versions_tested_here():
    """numpy, matplotlib, IPython and ipywidgets: pyproject.toml's lower bound is the release tested here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    colab = pins(COLAB_VERSIONS.constraints)
    for requirement in project["dependencies"]:
        name, bound = re.fullmatch(r"([\w-]+)>=([\d.]+)", requirement.split(";")[0].strip()).groups()
        if name == "jupyterquiz":
            continue                      # not in Colab: the first cell installs constraints.txt's version
        tested = colab[name.lower()].split(".")
        assert bound.split(".") == tested[:len(bound.split("."))], \
            f"{requirement}: the oldest version tested is {colab[name.lower()]}"


def test_every_notebook_that_needs_no_torch_runs_alone_in_colabs_versions(versions_env, tmp_path):
    notebooks = [path for path, needs in torch_needs().items() if not needs]
    assert any(p.parent.name == "notebooks" for p in notebooks) and any(p.parent.name == "exercises" for p in notebooks)
    COLAB_VERSIONS.run_alone(notebooks, tmp_path)


def fake_python(path: Path, prints: str, status: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{prints}"\nexit {status}\n')
    path.chmod(0o755)
    return path


def test_python_3_12_is_found_on_path_in_pyenv_or_where_the_variable_points(tmp_path, monkeypatch):
    monkeypatch.delenv("POSENC_PYTHON312", raising=False)
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    shim = fake_python(tmp_path / "bin" / "python3.12", "pyenv: python3.12: command not found", status=127)
    monkeypatch.setenv("PATH", str(shim.parent))
    assert colab_env.find_python("3.12") is None               # a pyenv shim of an unselected version
    older = fake_python(tmp_path / "pyenv" / "versions" / "3.12.1" / "bin" / "python3.12", "Python 3.12.1")
    newer = fake_python(tmp_path / "pyenv" / "versions" / "3.12.10" / "bin" / "python3.12", "Python 3.12.10")
    assert colab_env.find_python("3.12") == newer and older.exists()
    chosen = fake_python(tmp_path / "elsewhere" / "python", "Python 3.12.4")
    monkeypatch.setenv("POSENC_PYTHON312", str(chosen))
    assert colab_env.find_python("3.12") == chosen
    monkeypatch.setenv("POSENC_PYTHON312", str(fake_python(tmp_path / "wrong" / "python", "Python 3.11.7")))
    assert colab_env.find_python("3.12") is None               # the variable names another version


def test_without_python_3_12_the_environment_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("POSENC_PYTHON312", str(tmp_path / "nothing-here"))
    with pytest.raises(FileNotFoundError, match="pyenv install 3.12, or point POSENC_PYTHON312 at one"):
        COLAB_VERSIONS.prepare()


# The notebooks that need torch, in Colab's versions on Python 3.11 with the CPU build of torch 2.13.0
# (COLAB_VERSIONS_TORCH): about 1.3 GB more and several minutes of execution, more than `make test` has,
# so it runs on request only: POSENC_COLAB_VERSIONS_TORCH=1 .venv/bin/pytest tests/test_colab_versions.py
ON_REQUEST = os.environ.get("POSENC_COLAB_VERSIONS_TORCH", "").lower() in TRUE


@pytest.mark.skipif(not ON_REQUEST, reason="on request only (POSENC_COLAB_VERSIONS_TORCH=1): the chapters that "
                                           "need torch take several minutes more than make test has")
def test_every_notebook_that_needs_torch_runs_alone_in_colabs_versions_with_torch_2_13(tmp_path):
    from tests.colab_env import COLAB_VERSIONS_TORCH

    COLAB_VERSIONS_TORCH.prepare()
    COLAB_VERSIONS_TORCH.run_alone([path for path, needs in torch_needs().items() if needs], tmp_path)
