"""Repository hygiene: notebooks stored without outputs, generated exercise copies up to date."""

import json

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
