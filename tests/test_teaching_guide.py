"""The teaching guide (book/teaching-guide.md), the numbers it takes from posenc.book.teaching, and its links to the
rest of the lecturer's manual (book/lecturers/)."""

import html
import posixpath
import re
from dataclasses import dataclass

import pytest
import yaml
from markdown_it import MarkdownIt

import posenc.book.teaching as teaching
from posenc.exercises import SET_IDS, load_set
from posenc.exercises.framework import ChoiceQuestion, ExerciseSet, FunctionQuestion, Question, ValueQuestion
from tests.conftest import ROOT

PAGE = ROOT / "book" / "teaching-guide.md"
CHAPTERS = teaching.chapter_ids()


def _text(markdown: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").enable("table").render(markdown)))


def test_every_chapter_has_an_exercise_set_a_quiz_and_an_activity():
    assert CHAPTERS and CHAPTERS == list(SET_IDS)
    assert set(teaching.ACTIVITY_AFTER) == set(CHAPTERS)
    for set_id in CHAPTERS:
        assert (ROOT / "book" / "quizzes" / f"{set_id}.json").is_file(), set_id


@pytest.mark.parametrize("set_id", CHAPTERS)
def test_the_lecture_plan_follows_the_chapter_and_fills_the_lecture(set_id):
    plan = teaching.lecture_plan(set_id)
    assert sum(slot.minutes for slot in plan) == teaching.LECTURE_MINUTES
    assert all(slot.minutes >= 1 for slot in plan)
    lectured = [s.title for s in teaching.sections(set_id) if s.title not in teaching.NOT_LECTURED]
    assert [slot.what for slot in plan[1:-1] if slot.section] == lectured, "the deck's order is the chapter's"
    activity = [i for i, slot in enumerate(plan) if not slot.section]
    assert len(activity) == 1 and plan[activity[0] - 1].what == teaching.ACTIVITY_AFTER[set_id]
    assert plan[activity[0]].minutes == teaching.ACTIVITY_MINUTES


def test_a_renamed_section_fails_loudly(monkeypatch):
    monkeypatch.setitem(teaching.ACTIVITY_AFTER, "ch01", "A section that is not there")
    with pytest.raises(ValueError, match="no longer has"):
        teaching.lecture_plan("ch01")


def test_minutes_are_shared_in_proportion_and_add_up():
    assert teaching._shares([1, 1, 2], 8) == [2, 2, 4]
    shares = teaching._shares([100, 1, 1, 50], 20)
    assert sum(shares) == 20 and min(shares) == 1 and shares[0] > shares[3] > shares[1]
    with pytest.raises(ValueError, match="do not fit"):
        teaching._shares([1] * 5, 4)


def test_sections_count_words_and_code_under_their_heading():
    sections = teaching.sections("ch01")
    assert sections[0].title == "Overview" and sections[-1].title == "Exercises"
    assert all(s.words > 0 for s in sections)
    assert sum(s.code_cells for s in sections) > 5


@pytest.mark.parametrize("set_id", CHAPTERS)
def test_every_question_has_a_kind_with_minutes(set_id):
    for question in load_set(set_id).questions:
        assert teaching.KIND_MINUTES[teaching.question_kind(question)] > 0


def test_a_question_of_an_unknown_kind_is_refused():
    @dataclass
    class DrawingQuestion(Question):
        pass

    with pytest.raises(ValueError, match="KIND_OF_CLASS"):
        teaching.question_kind(DrawingQuestion(qid="q9", title="Draw", name="x"))


def test_the_exercise_time_is_the_rule_applied_to_the_questions(monkeypatch):
    questions = [FunctionQuestion(qid="q1", title="f", name="f"), ValueQuestion(qid="q2", title="v", name="v"),
                 ChoiceQuestion(qid="q3", title="c", name="c")]
    monkeypatch.setattr("posenc.exercises.load_set", lambda set_id: ExerciseSet("ch99", "Test", questions))
    expected = teaching.SET_MINUTES + sum(teaching.KIND_MINUTES[k] for k in
                                          ("write a function", "compute a value", "choose options"))
    rounded_up = lambda minutes: 5 * -(-minutes // 5)
    assert teaching.exercise_minutes("ch99") == rounded_up(expected)
    questions.append(FunctionQuestion(qid="q4", title="g", name="g"))
    assert teaching.exercise_minutes("ch99") == rounded_up(expected + teaching.KIND_MINUTES["write a function"])


def test_durations_read_naturally():
    assert [teaching._duration(m) for m in (25, 60, 85, 140)] == ["25 min", "1 h", "1 h 25 min", "2 h 20 min"]


@pytest.mark.parametrize("set_id", CHAPTERS)
def test_the_generated_blocks_name_the_deck_homework_and_every_quiz_question(set_id):
    import json

    plan, homework = teaching.markdown(set_id), teaching.after_activity_markdown(set_id)
    link = re.search(r'href="([^"]+)"', plan)
    assert bool(link) == teaching.has_deck(set_id)
    if link:
        assert posixpath.normpath(posixpath.join("book", link.group(1))) == f"slides/{set_id}.html", \
            "the guide is book/teaching-guide.html; the decks are slides/chNN.html"
    assert f"about **{teaching._duration(teaching.exercise_minutes(set_id))}**" in homework
    text = " ".join(_text(homework).split())
    for question in json.loads((ROOT / "book" / "quizzes" / f"{set_id}.json").read_text()):
        assert " ".join(question["question"].split()) in text
    for qid in (q.qid for q in load_set(set_id).questions):
        assert f"| {qid}: " in homework
    assert teaching.objectives(set_id) and all(item in plan for item in teaching.objectives(set_id))


@pytest.mark.parametrize("described", [True, False])
def test_the_plan_links_the_deck_only_when_the_chapter_has_one(tmp_path, monkeypatch, described):
    if described:
        (tmp_path / "ch02.yml").write_text("chapter: notebooks/02_relative_shift.ipynb\n")
    monkeypatch.setattr(teaching, "DECK_DESCRIPTIONS", tmp_path)
    plan = teaching.markdown("ch02")
    assert ('<a href="../slides/ch02.html">' in plan) == described
    assert "**Lecture plan**" in plan and "in proportion to each section's length" in plan


def test_the_module_plans_cover_part_one_and_then_both_parts_in_order():
    part_one, part_two = teaching.parts()
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert sum(len(p) for p in teaching.parts()) == sum(
        1 for part in toc["parts"] for e in part["chapters"] if e["file"].startswith("notebooks/"))
    two, six = teaching.MODULE_PLANS["2-week"], teaching.MODULE_PLANS["6-week"]
    assert len(two["weeks"]) == 2 and sum(two["weeks"], []) == part_one
    assert len(six["weeks"]) == 6 and sum(six["weeks"], []) == part_one + part_two
    table = teaching.module_plan_markdown("6-week")
    assert len(table.splitlines()) == 2 + 6 + 1, table       # header and rule, six weeks, the total


def test_the_page_is_a_notebook_in_the_toc_whose_numbers_all_come_from_code():
    source = PAGE.read_text()
    assert "kernelspec" in source.split("---")[1], "the page must be a MyST notebook so its cells run"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert any(e.get("file") == "book/teaching-guide" for part in toc["parts"] for e in part["chapters"])
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", source, flags=re.DOTALL)
    assert cells and all(":tags: [remove-input]" in cell for cell in cells)
    prose = re.sub(r"```\{code-cell\}.*?```", "", source, flags=re.DOTALL)
    typed = re.findall(r"\d+\s*(?:min|minutes?|hours?|h)\b", prose)
    assert not typed, f"times typed by hand in the guide: {typed}"


def test_the_page_has_a_section_per_chapter_with_its_title_and_blocks():
    source = PAGE.read_text()
    headings = re.findall(r"^## Chapter (\d+): (.+)$", source, flags=re.MULTILINE)
    assert [(f"ch{int(n):02d}", title) for n, title in headings] == [(i, teaching.title(i)) for i in CHAPTERS]
    for set_id in CHAPTERS:
        assert f'teaching.show("{set_id}")' in source and f'teaching.show("{set_id}", "homework")' in source
    for name in teaching.MODULE_PLANS:
        assert f'teaching.show_module_plan("{name}")' in source
    assert "teaching.grading_markdown()" in source and "--extra-tests" in source


def test_the_grading_links_are_pages_of_the_manual():
    """The guide sends a lecturer to the manual's pages by links relative to itself, so a fork's site links
    its own pages: each exists under book/lecturers/, is in the toc, and has the title its link shows."""
    toc = (ROOT / "_toc.yml").read_text()
    links = re.findall(r"\[([^\]]+)\]\(lecturers/([\w-]+)\.md\)", teaching.grading_markdown())
    assert [page for _, page in links] == list(teaching.MANUAL_PAGES)
    assert {"grading", "private-checks", "public", "handing-out"} <= set(teaching.MANUAL_PAGES)
    for title, page in links:
        assert (ROOT / "book" / "lecturers" / f"{page}.md").read_text().startswith(f"# {title}\n"), page
        assert f"- file: book/lecturers/{page}\n" in toc, page


def test_the_page_runs():
    """Every cell of the page, in order, as the book build runs them (display replaced by a list)."""
    source = PAGE.read_text()
    shown = []
    namespace = {}
    import IPython.display

    original = IPython.display.display
    IPython.display.display = lambda obj, **kw: shown.append(obj.data)
    try:
        for cell in re.findall(r"```\{code-cell\} ipython3\n(?::tags:.*?\n)?(.*?)```", source, flags=re.DOTALL):
            exec(compile(cell, str(PAGE), "exec"), namespace)
    finally:
        IPython.display.display = original
    assert len(shown) == 2 + 2 * len(CHAPTERS) + len(teaching.MODULE_PLANS) + 1
    assert all(isinstance(text, str) and text.strip() for text in shown)


def test_the_manual_states_prerequisites_outcomes_and_time_and_the_guide_computes_the_times():
    overview = (ROOT / "book" / "lecturers" / "overview.md").read_text()
    sections = dict(re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", overview, flags=re.MULTILINE | re.DOTALL))
    assert {"Prerequisites", "Learning outcomes", "Time"} <= set(sections), list(sections)
    time = " ".join(sections["Time"].split())
    for words in (f"{teaching.LECTURE_MINUTES}-minute lecture", "teaching guide", "*Homework at a glance*"):
        assert words in time, words
    glance = re.search(r"^## Homework at a glance\n(.*?)(?=^## )", PAGE.read_text(), flags=re.MULTILINE | re.DOTALL)
    assert glance and "teaching.show_markdown(teaching.exercise_times_markdown())" in glance.group(1), (
        "the times the manual sends a lecturer to are computed on the teaching guide's page when it is built")
