"""Repository hygiene: notebooks stored without outputs, generated copies and install cells up to date."""

import ast
import contextlib
import importlib
import io
import json
import re

import nbformat
import pytest

from posenc.exercises import authoring
from tests.conftest import ROOT

NOTEBOOKS = sorted(p for folder in ("notebooks", "exercises", "solutions")
                   for p in (ROOT / folder).glob("*.ipynb"))


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 4


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(ROOT)))
def test_notebook_is_stored_without_outputs(path):
    nb = json.loads(path.read_text())
    dirty = [i for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"
             and (cell.get("outputs") or cell.get("execution_count") is not None)]
    assert not dirty, f"{path.name}: cells {dirty} hold outputs; clear them (Kernel > Restart & Clear Output)"


def test_generated_exercises_and_solutions_are_up_to_date(capsys):
    assert authoring.main(["--check"]) == 0, capsys.readouterr().out


def test_every_exercise_set_has_both_copies_and_a_check_module():
    from posenc.exercises import SET_IDS, load_set

    sources = authoring.sources()
    assert [s.stem.split("_")[0] for s in sources] == list(SET_IDS)
    for source in sources:
        for path in authoring.targets(source).values():
            assert path.exists(), path
        assert load_set(source.stem.split("_")[0]).questions


@pytest.mark.parametrize("path", authoring.toc_notebooks(), ids=lambda p: str(p.relative_to(ROOT)))
def test_first_code_cell_installs_the_package_from_the_repository_in_config(path):
    url, ref = authoring.repository()
    nb = nbformat.read(path, as_version=4)
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    expected = authoring.install_cell(url, ref)
    assert first.get("id") == authoring.INSTALL_CELL_ID and first.source == expected.source, (
        f"{path.relative_to(ROOT)}: its first code cell is not the install cell for {url} ({ref}) that "
        "_config.yml calls for; run `make exercises`")
    assert first.metadata == expected.metadata
    assert nb.cells.index(first) <= 1, "the install cell comes first, or right after the title"


def test_there_is_a_notebook_for_every_page_of_the_toc_that_runs_code():
    listed = {str(p.relative_to(ROOT)) for p in authoring.toc_notebooks()}
    on_disk = {str(p.relative_to(ROOT)) for p in NOTEBOOKS}
    assert listed == on_disk, "every notebook in notebooks/, exercises/, solutions/ must be in _toc.yml"


def test_a_fork_that_changes_the_repository_gets_install_cells_of_its_own(tmp_path):
    config = (ROOT / "_config.yml").read_text()
    url, ref = authoring.repository()
    fork = tmp_path / "_config.yml"
    fork.write_text(config.replace(url, "https://github.com/a-lecturer/pe-course").replace(
        f"branch: {ref}", "branch: spring-2027"))
    cell = authoring.install_cell(*authoring.repository(fork))
    expected = authoring.expected_notebooks(cell)
    assert set(expected) == set(NOTEBOOKS)
    for path, text in expected.items():
        assert "git+https://github.com/a-lecturer/pe-course@spring-2027" in text and url not in text, path


@pytest.mark.parametrize("bad", ["url: ''", "url: git@github.com:someone/course.git", "url: http://example.org/x"])
def test_a_config_without_a_usable_repository_is_a_clear_error(tmp_path, bad):
    config = tmp_path / "_config.yml"
    config.write_text(f"repository:\n  {bad}\n  branch: main\n")
    with pytest.raises(authoring.SourceError, match="repository.url must be the https address"):
        authoring.repository(config)


def test_the_install_cell_prints_nothing_where_the_package_is_installed():
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        exec(authoring.install_cell(*authoring.repository()).source, {})
    assert out.getvalue() == ""


CHAPTERS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _import_names(nb) -> dict:
    """What each name a chapter's imports define stands for, dotted: {"cmp": "posenc.lib.comparison", ...}."""
    names = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:                     # a cell with IPython magic
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update({a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0]
                              for a in node.names})
            elif isinstance(node, ast.ImportFrom) and node.module:
                names.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    return names


def _resolve(dotted: str):
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            found = getattr(found, part)
        return found
    raise ImportError(dotted)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_the_code_a_chapters_prose_names_exists(path):
    """A name in the prose, `cmp.method_costs` or `posenc.lib.comparison.method_costs(...)`, read with the
    chapter's own imports, is one the package has (a renamed or moved class fails here, not in a reader's
    NameError), and a file of the repository it names is there."""
    nb = nbformat.read(path, as_version=4)
    names = _import_names(nb)
    prose = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    missing = []
    for dotted in re.findall(r"`([A-Za-z_][\w.]*\.[\w.]*\w)[(`]", prose):
        head = dotted.split(".")[0]
        if head in names or head == "posenc":
            try:
                _resolve(names.get(head, head) + dotted[len(head):])
            except (ImportError, AttributeError) as error:
                missing.append(f"`{dotted}`: {error}")
    for relative in re.findall(r"(?<![\w/])(?:\.\./)?((?:tests|results|posenc|exercises|solutions|book)/[\w./-]*\w)",
                               prose):
        if not (ROOT / relative).exists():
            missing.append(f"{relative}: no such file")
    assert not missing, f"{path.name} names what is not there: " + "; ".join(missing)
