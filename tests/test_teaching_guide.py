"""The teaching guide (book/teaching-guide.md): each chapter's entry (book/teaching/chNN.yml) against its deck,
quiz, checks, figures and numbers, the module plans against the toc, the page and its links to the rest of the
lecturer's manual (book/lecturers/)."""

import re

import pytest
import yaml

import posenc.book.teaching as teaching
from posenc.book.slides import outline
from posenc.book.teaching import entry as entries
from posenc.book.teaching import modules, numbers, render
from posenc.exercises import SET_IDS, load_set
from posenc.exercises.framework import ChoiceQuestion, ExerciseSet, FunctionQuestion, Question, ValueQuestion
from tests.conftest import ROOT

PAGE = ROOT / "book" / "teaching-guide.md"
TOC_CHAPTERS = [set_id for part in teaching.parts() for set_id in part]


def test_every_chapter_of_the_toc_has_an_exercise_set_a_quiz_a_deck_and_an_entry():
    assert TOC_CHAPTERS and TOC_CHAPTERS == teaching.chapter_ids() == list(SET_IDS)
    for set_id in TOC_CHAPTERS:
        for path in (ROOT / "book" / "quizzes" / f"{set_id}.json", ROOT / "book" / "slides" / f"{set_id}.yml",
                     teaching.entry_path(set_id)):
            assert path.is_file(), f"{set_id}: {path.relative_to(ROOT)} is missing"
    written_ahead = [set_id for set_id in modules.FORTHCOMING if set_id not in TOC_CHAPTERS]
    assert sorted(p.stem for p in teaching.ENTRIES.glob("*.yml")) == sorted(TOC_CHAPTERS + written_ahead), (
        "an entry per chapter (and per chapter being written, modules.FORTHCOMING), no more")


# ---------------------------------------------------------------------------------------------------
# Each chapter's entry


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_the_entry_has_all_five_parts_and_follows_every_rule(set_id):
    entry = teaching.load_entry(set_id)          # raises GuideError naming every broken rule and reference
    raw = yaml.safe_load(teaching.entry_path(set_id).read_text())
    assert set(teaching.PARTS) <= set(raw) and entry.prerequisites
    assert entry.activity.task and entry.activity.key, "the activity and its answer key"
    assert all(run.fallback for run in entry.live), "every live run has a fallback"
    assert all(m.message and m.why and m.address for m in entry.misconceptions)
    low, high = teaching.EXAM_QUESTIONS
    assert low <= len(entry.exam) <= high
    for question in entry.exam:
        assert all(part.points > 0 and part.answer and part.earns and part.wrong for part in question.parts)


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_the_plan_fills_the_lecture_with_minutes_written_in_the_entry(set_id):
    entry = teaching.load_entry(set_id)
    written = [segment["minutes"] for segment in yaml.safe_load(teaching.entry_path(set_id).read_text())["plan"]]
    assert [segment.minutes for segment in entry.plan] == written, "a teacher's choice, never computed"
    assert sum(written) == teaching.LECTURE_MINUTES == 50
    kinds = [segment.kind for segment in entry.plan]
    assert kinds.count("activity") == 1 and kinds.count("quiz") == 1 and "slides" in kinds


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_the_plan_takes_its_slide_ranges_from_the_deck_and_covers_it_in_order(set_id):
    entry, deck = teaching.load_entry(set_id), outline(set_id)
    shown = [segment for segment in entry.plan if segment.kind == "slides"]
    assert [s for segment in shown for s in segment.sections] == [section.id for section in deck.sections]
    numbers = []
    for segment in shown:
        sections = [deck.section(s) for s in segment.sections]
        assert (segment.first, segment.last) == (sections[0].first, sections[-1].last)
        kept = [slide for section in sections for slide in section.slides if slide.id not in segment.skip]
        assert segment.deck_minutes == sum(slide.minutes for slide in kept)
        numbers += range(segment.first, segment.last + 1)
    assert numbers == list(range(1, len(deck.slides) + 1)), "every slide once, in the deck's order"


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_every_computed_number_is_quoted(set_id):
    """A number computed for an entry and quoted nowhere is dead code, or a sentence lost in an edit."""
    source = teaching.entry_path(set_id).read_text()
    quoted = {m["name"] for m in entries.PLACEHOLDER.finditer(source)}
    assert set(numbers.values(set_id)) <= quoted, sorted(set(numbers.values(set_id)) - quoted)


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_the_chapter_block_shows_every_part_with_links_into_the_deck_and_the_chapter(set_id):
    text = teaching.chapter_markdown(set_id)
    entry, deck = teaching.load_entry(set_id), outline(set_id)
    for lead in ("**Before the lecture.**", "**Lecture plan**", "**Live parts", "**In-class activity:",
                 "**Answer key.**", "**Misconceptions", ":::{dropdown} Exam questions and marking rubric",
                 "**Homework.**", "**What the quiz checks.**"):
        assert lead in text, lead
    for segment in entry.plan:
        if segment.kind == "slides":
            first = next(s for name in segment.sections for s in deck.section(name).slides if s.id not in segment.skip)
            assert f'href="../slides/{set_id}.html#s-{first.id}"' in text
    skipped = {s for segment in entry.plan for s in segment.skip}
    demos = [slide for slide in deck.slides if slide.demo and slide.id not in skipped]
    assert text.count("*If it is slow or fails:*") == len(demos) + len(entry.live)
    for run in entry.live:
        if run.figure:
            page = teaching.estimates.notebook_path(set_id).with_suffix(".html").name
            assert f'href="../notebooks/{page}#{run.figure}"' in text
    assert all(item in text for item in teaching.estimates.objectives(set_id))
    for qid in (q.qid for q in load_set(set_id).questions):
        assert f"| {qid}: " in text


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_every_row_of_the_plan_gives_the_decks_minutes_beside_its_own_and_says_why_when_it_gives_more(set_id):
    entry = teaching.load_entry(set_id)
    rows = [line for line in render.plan_markdown(entry).splitlines() if re.match(r"\| \d+:\d\d \|", line)]
    assert len(rows) == len(entry.plan)
    for row, segment in zip(rows, entry.plan):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[1] == str(segment.minutes)
        if segment.kind != "slides":
            assert cells[2] == "–"
            continue
        assert cells[2] == f"{segment.deck_minutes:g}", "the deck's minutes for the slides the row keeps"
        if segment.minutes > segment.deck_minutes:
            assert segment.timing and segment.timing in row, "a row with more minutes than the deck's says why"
    shown = [segment for segment in entry.plan if segment.kind == "slides"]
    cut = sum(s.deck_minutes - s.minutes for s in shown)
    skipped = sum(outline(set_id).slide(s).minutes for segment in shown for s in segment.skip)
    others = sum(s.minutes for s in entry.plan if s.kind != "slides")
    assert cut + skipped == others, "the minutes taken from the deck are those of the activity and the quiz"


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_every_link_into_a_deck_names_a_slide_of_a_deck_the_book_builds(set_id):
    """The guide links to slides/chNN.html#s-<slide id>; the deck pages are built from book/slides/chNN.yml
    (every file there, posenc.book.slides.spec.deck_files) with one section id="s-<slide id>" per slide."""
    from posenc.book.slides.spec import deck_files

    text = teaching.chapter_markdown(set_id)
    links = re.findall(r'href="\.\./slides/(ch\d\d)\.html(?:#s-([\w-]+))?"', text)
    assert links and {deck for deck, _ in links} == {set_id}
    assert teaching.entry_path(set_id).parent.parent / "slides" / f"{set_id}.yml" in deck_files()
    ids = {slide.id for slide in outline(set_id).slides}
    assert {anchor for _, anchor in links if anchor} <= ids


def test_the_deck_page_gives_each_slide_the_anchor_the_guide_links_to():
    import inspect

    from posenc.book.slides import page

    assert '<section id="s-{spec.id}"' in inspect.getsource(page._section)
    assert render.deck_link("ch01", "cover", "1") == '<a href="../slides/ch01.html#s-cover">1</a>'


# ---------------------------------------------------------------------------------------------------
# Entries that break a rule fail, naming it

GOOD = """\
prerequisites: Chapter 1.
plan:
  - slides: [opening, sinusoids]
    minutes: 20
    do: Talk.
  - activity: true
    minutes: 10
  - slides: [verdict, explore]
    minutes: 13
    do: Talk.
  - quiz: [1]
    minutes: 4
    do: Ask.
  - slides: close
    minutes: 3
    do: Close.
activity: {title: Count, task: Count the flips., key: ["Bit k flips every 2^k steps."]}
live:
  - {what: Run the timing cell., fallback: Show the heatmap., figure: fig-pe-heatmap}
misconceptions:
  - {mistake: "q1: sin and cos are swapped", why: Because., address: Like this.}
  - {mistake: "q2: that is 1/omega_i", why: Because., address: Like this.}
exam:
"""
QUESTION = """\
  - question: What is the wavelength of pair 0?
    parts:
      - {ask: Compute it., points: 1, answer: "$2\\\\pi$", earns: The value., wrong: [One.]}
"""


def _entry(tmp_path, monkeypatch, text):
    monkeypatch.setattr(entries, "ENTRIES", tmp_path)
    (tmp_path / "ch01.yml").write_text(text)
    return teaching.load_entry("ch01")


def test_a_good_entry_loads(tmp_path, monkeypatch):
    entry = _entry(tmp_path, monkeypatch, GOOD + QUESTION * 3)
    assert entry.minutes == 50 and [s.first for s in entry.plan if s.kind == "slides"] == [1, 14, 20]


@pytest.mark.parametrize("change, words", [
    (("minutes: 20", "minutes: 21"), "add up to 51, not 50"),
    (("minutes: 20", "minutes: 20.5"), "positive whole number"),
    (("[opening, sinusoids]", "[opening, sines]"), "no section 'sines'"),
    (("[opening, sinusoids]", "[sinusoids, opening]"), "comes before"),
    (("slides: close", "slides: explore"), "every section of ch01.yml once"),
    (("    do: Close.\n", "    skip: [cover]\n    do: Close.\n"), "not slides of its sections"),
    (("  - activity: true\n    minutes: 10\n", "  - quiz: [2]\n    minutes: 10\n    do: Ask.\n"),
     "0 'activity' segments"),
    (("quiz: [1]", "quiz: [9]"), "questions 1 to 5, not [9]"),
    (("q1: sin and cos are swapped", "q1: sin and tan are swapped"), "no Mistake of ch01 q1"),
    (("q2: that is 1/omega_i", "q1: sin and cos are swapped"), "name the same mistake"),
    (("figure: fig-pe-heatmap", "figure: fig-nothing"), "no figure 'fig-nothing'"),
    (("Bit k flips every 2^k steps.", "Bit 4 flips every 16 steps after 98765 steps."), "types 98765"),
    (("Bit k flips every 2^k steps.", "Bit k flips {{nothing}} times."), "no number 'nothing'"),
    (("fallback: Show the heatmap., ", ""), "'fallback' (what to show when it is slow or fails) is missing"),
    (("minutes: 20\n", "minutes: 34\n"), "34 min, more than the deck's 33"),
    (("minutes: 13\n    do: Talk.", "minutes: 14\n    timing: Why.\n    do: Talk."), "has a 'timing' but gives"),
    (("  - activity: true\n", "  - activity: true\n    timing: Why.\n"), "belong to a segment of slides"),
    (("prerequisites: Chapter 1.\n", ""), "missing ['prerequisites']"),
    (('key: ["Bit k flips every 2^k steps."]', "key: []"), "the answer key"),
])
def test_an_entry_that_breaks_a_rule_fails_naming_it(tmp_path, monkeypatch, change, words):
    old, new = change
    assert old in GOOD + QUESTION
    with pytest.raises(teaching.GuideError) as raised:
        _entry(tmp_path, monkeypatch, (GOOD + QUESTION * 3).replace(old, new, 1))
    assert words in str(raised.value)


@pytest.mark.parametrize("count", [2, 6])
def test_an_entry_has_three_to_five_exam_questions(tmp_path, monkeypatch, count):
    with pytest.raises(teaching.GuideError, match=f"{count} exam questions; an entry has 3 to 5"):
        _entry(tmp_path, monkeypatch, GOOD + QUESTION * count)


def test_a_missing_entry_says_what_to_write(tmp_path, monkeypatch):
    monkeypatch.setattr(entries, "ENTRIES", tmp_path)
    with pytest.raises(teaching.GuideError, match="every chapter of the toc has an entry"):
        teaching.load_entry("ch01")


def test_slide_numbers_read_as_ranges():
    assert render._ranges([1, 2, 3, 5, 7, 8]) == "1–3, 5, 7–8" and render._ranges([4]) == "4"


def test_typed_numbers_are_those_the_chapter_states_or_small_counts():
    assert entries.typed_numbers("base 10000, $d = 64$, pair 3, 12,345 steps, {{x:.2f}}", "ch01") == ["12345"]
    assert entries.typed_numbers("$s_{31}$ and $2^{16}$", "ch01") == []


# ---------------------------------------------------------------------------------------------------
# Module plans


@pytest.mark.parametrize("name", list(teaching.MODULE_PLANS))
def test_the_module_plans_cover_their_parts_once_in_order(name):
    plan = teaching.MODULE_PLANS[name]
    assert teaching.module_problems(name) == []
    assert plan.chapters() == [set_id for part in teaching.parts()[:plan.parts] for set_id in part]
    table = teaching.module_plan_markdown(name)
    numbers = [int(set_id[2:]) for set_id in plan.chapters()]
    assert f"(chapters {numbers[0]} to " in table and f" {numbers[-1]}: {len(numbers)} lectures" in table
    assert len(table.split("\n\n", 1)[1].splitlines()) == 2 + len(plan.weeks) + 1


def test_a_plans_heading_and_advice_are_built_from_the_weeks_it_shows(monkeypatch):
    """Before chapter 9 lands the six-week plan neither counts nor promises it, and says its week 5 has one
    lecture; once the toc has it, the plan shows two a week through chapter 10 (true before and after)."""
    in_toc = [list(part) for part in teaching.parts()]
    without = [[s for s in part if s != "ch09"] for part in in_toc]
    monkeypatch.setattr(modules, "FORTHCOMING", ("ch09",))          # as it was until chapter 9 landed
    monkeypatch.setattr(modules, "parts", lambda: without)
    lead = modules.module_plan_lead("6-week")
    assert "(chapters 0 to 8 and 10: 10 lectures" in lead and modules.TOPICS["ch09"] not in lead
    assert "except week 5, which has one (chapter 8)" in lead and "Two lectures a week" not in lead
    monkeypatch.setattr(modules, "parts", lambda: [without[0], sorted({*without[1], "ch09"})])
    lead = modules.module_plan_lead("6-week")
    assert "(chapters 0 to 10: 11 lectures" in lead and modules.TOPICS["ch09"] in lead
    assert "Two sessions a week;" in lead and "except" not in lead
    assert "the exercise set of week 6 (chapter 10) would fall due after the module" in lead


def test_the_two_week_plan_says_when_its_last_weeks_sets_fall_due():
    lead = teaching.module_plan_markdown("2-week").split("\n\n")[0]
    assert lead == modules.module_plan_lead("2-week")
    assert "Three sessions in week 1 and two sessions in week 2" in lead
    assert "the exercise sets of week 2 (chapters 3 and 4) would fall due after the module has ended" in lead


def test_the_six_week_plan_covers_every_chapter_and_the_two_week_plan_part_one():
    assert teaching.MODULE_PLANS["6-week"].chapters() == TOC_CHAPTERS
    assert teaching.MODULE_PLANS["2-week"].chapters() == teaching.parts()[0]
    assert len(teaching.MODULE_PLANS["6-week"].weeks) == 6 and len(teaching.MODULE_PLANS["2-week"].weeks) == 2


def test_a_chapter_missing_from_a_plan_fails(monkeypatch):
    grown = [list(part) for part in teaching.parts()]
    grown[-1].append("ch99")
    monkeypatch.setattr(modules, "parts", lambda: grown)
    assert "give a new chapter a week" in " ".join(teaching.module_problems("6-week"))
    with pytest.raises(ValueError, match="ch99"):
        teaching.module_plan_markdown("6-week")


def test_a_forthcoming_chapter_has_its_week_only_once_the_toc_has_it(monkeypatch):
    plan = teaching.MODULE_PLANS["6-week"]
    for set_id in modules.FORTHCOMING:
        in_toc = [list(part) for part in teaching.parts()]
        without = [[s for s in part if s != set_id] for part in in_toc]
        monkeypatch.setattr(modules, "parts", lambda: without)
        assert set_id not in plan.chapters() and teaching.module_problems("6-week") == []
        ordered = sorted({*in_toc[1], set_id})                      # the chapter added to Part II, in order
        monkeypatch.setattr(modules, "parts", lambda: [in_toc[0], ordered])
        assert set_id in plan.chapters() and teaching.module_problems("6-week") == []


# ---------------------------------------------------------------------------------------------------
# Homework estimates


@pytest.mark.parametrize("set_id", TOC_CHAPTERS)
def test_every_question_has_a_kind_with_minutes(set_id):
    for question in load_set(set_id).questions:
        assert teaching.KIND_MINUTES[teaching.question_kind(question)] > 0


def test_a_question_of_an_unknown_kind_is_refused():
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
    assert [teaching.estimates.duration(m) for m in (25, 60, 85, 140)] == ["25 min", "1 h", "1 h 25 min",
                                                                          "2 h 20 min"]


def test_sections_count_words_and_code_under_their_heading():
    sections = teaching.estimates.sections("ch01")
    assert sections[0].title == "Overview" and sections[-1].title == "Exercises"
    assert all(s.words > 0 for s in sections)
    assert sum(s.code_cells for s in sections) > 5


# ---------------------------------------------------------------------------------------------------
# The page


def test_the_page_is_a_notebook_in_the_toc_whose_times_all_come_from_code():
    source = PAGE.read_text()
    assert "kernelspec" in source.split("---")[1], "the page must be a MyST notebook so its cells run"
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    assert any(e.get("file") == "book/teaching-guide" for part in toc["parts"] for e in part["chapters"])
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", source, flags=re.DOTALL)
    assert cells and all(":tags: [remove-input]" in cell for cell in cells)
    prose = re.sub(r"```\{code-cell\}.*?```", "", source, flags=re.DOTALL)
    typed = re.findall(r"\d+\s*(?:min|minutes?|hours?|h)\b", prose)
    assert not typed, f"times typed by hand in the guide: {typed}"


def test_the_page_has_a_section_per_chapter_of_the_toc_in_order():
    source = PAGE.read_text()
    headings = re.findall(r"^## Chapter (\d+): (.+)$", source, flags=re.MULTILINE)
    assert [(f"ch{int(n):02d}", title) for n, title in headings] == [(i, teaching.title(i)) for i in TOC_CHAPTERS]
    for set_id in TOC_CHAPTERS:
        section = source.split(f"## Chapter {int(set_id[2:])}: ", 1)[1].split("\n## ", 1)[0]
        assert f'teaching.show("{set_id}")' in section, set_id
    for name in teaching.MODULE_PLANS:
        assert f'teaching.show_module_plan("{name}")' in source


def test_how_to_grade_sends_a_lecturer_to_the_manual_not_readme():
    source = PAGE.read_text()
    section = source.split("## How to grade\n", 1)[1]
    assert "README" not in source
    for page in ("grading", "private-checks", "public"):
        assert f"(lecturers/{page}.md)" in section, page
    assert "teaching.grading_markdown()" in section and "--extra-tests" in section


def test_the_grading_links_are_pages_of_the_manual():
    """The guide sends a lecturer to the manual's pages by links relative to itself, so a fork's site links
    its own pages: each exists under book/lecturers/, is in the toc, and has the title its link shows."""
    toc = (ROOT / "_toc.yml").read_text()
    links = re.findall(r"\[([^\]]+)\]\(lecturers/([\w-]+)\.md\)", teaching.grading_markdown() + PAGE.read_text())
    assert {page for _, page in links} >= set(teaching.MANUAL_PAGES)
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
    assert len(shown) == 2 + len(TOC_CHAPTERS) + len(teaching.MODULE_PLANS) + 1
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


def test_the_quiz_block_gives_every_question_with_its_right_answer():
    from posenc.book.quiz import load

    text = render.quiz_markdown("ch05")
    for question in load("ch05"):
        right = [a for a in question["answers"] if a["correct"]]
        assert right and re.sub(r"\\(.)", r"\1", text).count(right[0]["answer"]) >= 1
