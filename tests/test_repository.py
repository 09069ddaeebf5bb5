"""Repository hygiene: notebooks stored without outputs, generated copies and install cells up to date."""

import contextlib
import io
import json

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
