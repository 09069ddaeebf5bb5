"""Each chapter lists its graded questions from the exercise set itself, so the list cannot drift."""

import re

import nbformat
import pytest

from posenc.book import exercise_sets
from posenc.exercises import SET_IDS, load_set
from tests.conftest import ROOT

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_the_list_names_every_question_with_its_points():
    text = exercise_sets.markdown("ch01")
    questions = load_set("ch01").questions
    assert len(re.findall(r"^- \*\*q\d+\*\*", text, flags=re.M)) == len(questions)
    assert f"**{questions[0].qid}** {questions[0].title} ({questions[0].points:g} points)" in text
    assert f"Total: {load_set('ch01').max_points:g} points." in text


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_every_chapter_shows_its_exercise_list_in_its_exercises_section(path):
    set_id = f"ch{path.name[:2]}"
    assert set_id in SET_IDS, f"{path.name} has no exercise set {set_id}"
    cells = nbformat.read(path, as_version=4).cells
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith("## Exercises"))
    shown = [c for c in cells[start:] if c.cell_type == "code" and f'exercise_sets.show("{set_id}")' in c.source]
    assert shown and "remove-input" in shown[0].metadata.get("tags", []), path.name
    assert f"../exercises/{set_id}_" in cells[start].source, "the section links to the exercise notebook"
