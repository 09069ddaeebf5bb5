"""The numbers and tables of the teaching guide (``book/teaching-guide.md``), made from the course itself.

Everything the guide counts is read when the book is built, so it cannot drift from the course: the
sections of each chapter (the slide decks follow them, one group of slides per section), the questions of
each exercise set (``posenc.exercises``), the quiz of each chapter (``book/quizzes/chNN.json``) and the
parts of ``_toc.yml``. The times are estimates from stated rules, never measurements:

* a lecture of ``LECTURE_MINUTES``: an opening on the learning objectives, the chapter's sections in their
  order with minutes in proportion to their length (words, plus ``WORDS_PER_CODE_CELL`` for each code
  cell shown), the in-class activity after the section the guide names (``ACTIVITY_AFTER``), and a close on
  the summary and the quiz;
* the time a student needs for an exercise set: ``SET_MINUTES`` to open and read it, plus the minutes of
  each question by its kind (``KIND_MINUTES``: writing a torch module takes longer than choosing an option);
* reading a chapter: its words at ``READING_WORDS_PER_MINUTE`` plus ``MINUTES_PER_CODE_CELL`` to run and
  look at each code cell.

In the guide, one cell tagged ``remove-input`` per chapter::

    import posenc.book.teaching as teaching
    teaching.show("ch01")
"""

from __future__ import annotations

import functools
import json
import math
import re
from dataclasses import dataclass

import nbformat
import yaml

from posenc.paths import NOTEBOOKS, QUIZZES, ROOT

__all__ = [
    "ACTIVITY_AFTER", "KIND_MINUTES", "LECTURE_MINUTES", "MANUAL_PAGES", "MODULE_PLANS", "Section", "Slot",
    "after_activity_markdown", "chapter_ids", "exercise_minutes", "exercise_times_markdown",
    "grading_markdown", "has_deck", "homework_markdown", "lecture_plan", "lecture_plan_markdown",
    "markdown", "module_plan_markdown", "objectives", "parts", "question_kind", "quiz_markdown",
    "reading_minutes", "sections", "show", "show_markdown", "show_module_plan",
    "time_rules_markdown", "title",
]

LECTURE_MINUTES = 50
OPENING_MINUTES = 3          # the learning objectives (the chapter's Overview)
ACTIVITY_MINUTES = 10
CLOSING_MINUTES = 4          # the summary and one quiz question to the room
WORDS_PER_CODE_CELL = 40     # a code cell with its output weighs as much as 40 words of prose in a lecture
NOT_LECTURED = ("Overview", "Summary", "Exercises")   # opening, closing and homework, not sections of the talk

# The section of each chapter after which the in-class activity comes (the guide describes the activity).
ACTIVITY_AFTER = {
    "ch00": '"Dog bites man" and "man bites dog"',
    "ch01": "Sinusoids: smooth counters",
    "ch02": "Checking the theorem numerically",
    "ch03": "Concatenation is a sum in disguise",
    "ch04": "Past the end of a learned table",
    "ch05": "T5: one learned scalar per head for each bucket of offsets",
    "ch06": "Two layouts: interleaved pairs and \"rotate half\"",
    "ch07": "The file, your run and a replication",
    "ch08": "Two ways to read a long text",
    "ch10": "Rotary on a grid: the frequency matrix",
}

# Minutes a student needs for one question, by its kind (the first class of the question's MRO named here).
KIND_OF_CLASS = {
    "FindTheBugQuestion": "find the bug",
    "FunctionQuestion": "write a function",
    "ModuleQuestion": "write a torch module",
    "LayoutQuestion": "write a torch module",
    "ValueQuestion": "compute a value",
    "ChoiceQuestion": "choose options",
}
KIND_MINUTES = {
    "write a torch module": 25,
    "write a function": 15,
    "find the bug": 15,
    "compute a value": 10,
    "choose options": 5,
}
SET_MINUTES = 10                 # open the notebook, run it from the top, read the introduction
READING_WORDS_PER_MINUTE = 120   # technical prose with mathematics
MINUTES_PER_CODE_CELL = 1        # run the cell and look at what it shows

# Two module plans: Part I in two weeks, Parts I and II in six. Each chapter is one lecture.
MODULE_PLANS = {
    "2-week": {"parts": 1, "weeks": [["ch00", "ch01", "ch02"], ["ch03", "ch04"]]},
    "6-week": {"parts": 2, "weeks": [["ch00", "ch01"], ["ch02", "ch03"], ["ch04"], ["ch05"], ["ch06"], ["ch07", "ch08", "ch10"]]},
}


# ---------------------------------------------------------------------------------------------------
# The chapters and their sections


def _notebook_path(set_id: str):
    found = sorted(NOTEBOOKS.glob(f"{set_id[2:]}_*.ipynb"))
    if len(found) != 1:
        raise ValueError(f"expected one notebook notebooks/{set_id[2:]}_*.ipynb for {set_id}, found {len(found)}")
    return found[0]


def chapter_ids() -> list[str]:
    """'ch00', 'ch01', ...: every chapter notebook of notebooks/, in order."""
    return sorted(f"ch{p.name[:2]}" for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def parts() -> list[list[str]]:
    """The chapter ids of each part of _toc.yml that lists chapters (Part I, Part II, ...), in order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = []
    for part in toc.get("parts", []):
        ids = [f"ch{m.group(1)}" for entry in part.get("chapters", [])
               if (m := re.fullmatch(r"notebooks/(\d\d)_\w+", str(entry.get("file", ""))))]
        if ids:
            found.append(ids)
    return found


@functools.lru_cache(maxsize=None)
def _cells(set_id: str) -> list:
    """The chapter's cells (read once; never changed)."""
    return nbformat.read(_notebook_path(set_id), as_version=4).cells


def title(set_id: str) -> str:
    """The chapter's title, its first heading without the number: 'From binary counters to sinusoids'."""
    for cell in _cells(set_id):
        if cell.cell_type == "markdown" and (m := re.search(r"^# (?:\d+\.\s*)?(.+)$", cell.source, re.MULTILINE)):
            return m.group(1).strip()
    raise ValueError(f"{set_id}: the notebook has no title")


@dataclass
class Section:
    """One ``##`` section of a chapter: its title and its size."""

    title: str
    words: int = 0
    code_cells: int = 0

    @property
    def weight(self) -> int:
        return self.words + WORDS_PER_CODE_CELL * self.code_cells


def _words(markdown: str) -> int:
    return len(re.findall(r"[A-Za-z0-9$\\]+", markdown))


def sections(set_id: str) -> list[Section]:
    """The chapter's ``##`` sections in order (subsections count towards their section)."""
    found: list[Section] = []
    for cell in _cells(set_id):
        if cell.cell_type == "markdown":
            for block in re.split(r"^(?=## )", cell.source, flags=re.MULTILINE):
                heading = re.match(r"## (.+)", block)
                if heading:
                    found.append(Section(heading.group(1).strip()))
                    block = block[heading.end():]
                if found:
                    found[-1].words += _words(block)
        elif cell.cell_type == "code" and found and "remove-cell" not in cell.metadata.get("tags", []):
            found[-1].code_cells += 1
    return found


def objectives(set_id: str) -> list[str]:
    """The bullets under "Learning objectives" in the chapter's Overview."""
    for cell in _cells(set_id):
        if cell.cell_type == "markdown" and "**Learning objectives.**" in cell.source:
            after = cell.source.split("**Learning objectives.**", 1)[1]
            bullets = re.split(r"^- ", after, flags=re.MULTILINE)[1:]
            return [" ".join(b.split("\n\n")[0].split()) for b in bullets]
    raise ValueError(f"{set_id}: no learning objectives in the Overview")


def reading_minutes(set_id: str) -> int:
    """Estimated minutes to read the chapter and run its cells, rounded up to 5."""
    found = sections(set_id)
    words = sum(s.words for s in found if s.title != "Exercises")
    cells = sum(s.code_cells for s in found if s.title != "Exercises")
    return _round_up(words / READING_WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * cells)


def _round_up(minutes: float, step: int = 5) -> int:
    return int(step * math.ceil(minutes / step))


# ---------------------------------------------------------------------------------------------------
# The lecture plan


@dataclass
class Slot:
    """One row of a lecture plan: a section of the deck, or the opening, activity or close."""

    what: str
    minutes: int
    section: bool = True       # a section of the chapter (and of its slide deck)


def _shares(weights: list[int], total: int, least: int = 1) -> list[int]:
    """Whole minutes in proportion to ``weights`` that add up to ``total``, each at least ``least``."""
    if least * len(weights) > total:
        raise ValueError(f"{len(weights)} sections do not fit in {total} minutes")
    spare = total - least * len(weights)
    exact = [spare * w / sum(weights) for w in weights]
    minutes = [least + math.floor(x) for x in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: exact[i] - math.floor(exact[i]), reverse=True)
    for i in by_remainder[: total - sum(minutes)]:
        minutes[i] += 1
    return minutes


def lecture_plan(set_id: str) -> list[Slot]:
    """The lecture in the order of the chapter (and of its slide deck), with whole minutes."""
    lectured = [s for s in sections(set_id) if s.title not in NOT_LECTURED]
    after = ACTIVITY_AFTER[set_id]
    if after not in [s.title for s in lectured]:
        raise ValueError(f"{set_id}: the activity follows the section {after!r}, which the chapter no longer has; "
                         f"its sections are {[s.title for s in lectured]}")
    content = LECTURE_MINUTES - OPENING_MINUTES - ACTIVITY_MINUTES - CLOSING_MINUTES
    plan = [Slot("Overview: the learning objectives", OPENING_MINUTES)]
    for section, minutes in zip(lectured, _shares([s.weight for s in lectured], content)):
        plan.append(Slot(section.title, minutes))
        if section.title == after:
            plan.append(Slot("In-class activity (below)", ACTIVITY_MINUTES, section=False))
    plan.append(Slot("Summary, and a quiz question to the room", CLOSING_MINUTES))
    return plan


def _clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def _escape(text: str) -> str:
    """Plain text that Markdown shows as it is (no emphasis, links, code or HTML)."""
    return re.sub(r"([\\`*_\[\]<>{}$|#])", r"\\\1", text)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def lecture_plan_markdown(set_id: str) -> str:
    rows = ["| Time | Minutes | Section of the chapter and of its slides |", "| --- | --- | --- |"]
    start = 0
    for slot in lecture_plan(set_id):
        what = _cell(slot.what) if slot.section else f"*{_cell(slot.what)}*"
        rows.append(f"| {_clock(start)} | {slot.minutes} | {what} |")
        start += slot.minutes
    return "\n".join(rows)


# ---------------------------------------------------------------------------------------------------
# Homework and quiz


def question_kind(question) -> str:
    """The kind of a question for the time estimate; ValueError for a kind without minutes."""
    for cls in type(question).__mro__:
        if cls.__name__ in KIND_OF_CLASS:
            return KIND_OF_CLASS[cls.__name__]
    raise ValueError(f"{question.qid} is a {type(question).__name__}: give its kind minutes in "
                     "posenc.book.teaching.KIND_OF_CLASS")


def exercise_minutes(set_id: str) -> int:
    """Estimated minutes a student needs for the exercise set, rounded up to 5."""
    from posenc.exercises import load_set

    questions = load_set(set_id).questions
    return _round_up(SET_MINUTES + sum(KIND_MINUTES[question_kind(q)] for q in questions))


def _duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest:02d} min" if rest else f"{hours} h"


def homework_markdown(set_id: str) -> str:
    from posenc.exercises import load_set

    exercise_set = load_set(set_id)
    rows = ["| Question | Kind | Points | Minutes |", "| --- | --- | --- | --- |"]
    for q in exercise_set.questions:
        kind = question_kind(q)
        rows.append(f"| {q.qid}: {_cell(q.title)} | {kind} | {q.points:g} | {KIND_MINUTES[kind]} |")
    minutes = exercise_minutes(set_id)
    notebook = next((ROOT / "exercises").glob(f"{set_id}_*.ipynb"), None)
    name = f"`exercises/{notebook.name}`" if notebook else f"exercise set {set_id}"
    lead = (f"**Homework.** {name}: {len(exercise_set.questions)} auto-graded questions, "
            f"{exercise_set.max_points:g} points, about **{_duration(minutes)}** for a student "
            f"(an estimate: {SET_MINUTES} min to open and read the set, plus the minutes of each question by its "
            f"kind), after reading the chapter (about {_duration(reading_minutes(set_id))}).")
    return "\n".join([lead, "", *rows])


def quiz_markdown(set_id: str) -> str:
    questions = json.loads((QUIZZES / f"{set_id}.json").read_text(encoding="utf-8"))
    lines = [f"**What the quiz checks.** The chapter ends with {len(questions)} self-check questions "
             "(not graded; the reader sees the feedback at once):", ""]
    lines += [f"- {_escape(' '.join(q['question'].split()))}" for q in questions]
    return "\n".join(lines)


def objectives_markdown(set_id: str) -> str:
    lines = ["**Learning outcomes** (the chapter's objectives). After the chapter a student can", ""]
    return "\n".join(lines + [f"- {item}" for item in objectives(set_id)])


# A chapter has a slide deck when book/slides/chNN.yml describes it (posenc.book.slides builds each deck
# into _build/html/slides/chNN.html after the site, so the built deck is not there yet when this page runs).
DECK_DESCRIPTIONS = ROOT / "book" / "slides"


def has_deck(set_id: str) -> bool:
    return (DECK_DESCRIPTIONS / f"{set_id}.yml").is_file()


def markdown(set_id: str) -> str:
    """What the guide shows for one chapter after its prerequisites: the outcomes and the lecture plan, with
    a link to the chapter's slide deck (a plain HTML link: the deck is not a page of the book)."""
    if has_deck(set_id):
        deck = (f'The slide deck <a href="../slides/{set_id}.html">slides/{set_id}.html</a> follows the '
                "chapter, so its slides come in the order of these sections")
    else:
        deck = "The plan follows the chapter's sections in their order"
    deck = (f"**Lecture plan** ({LECTURE_MINUTES} min). {deck}; the minutes are in proportion to each "
            "section's length.")
    return "\n\n".join([objectives_markdown(set_id), deck, lecture_plan_markdown(set_id)])


def after_activity_markdown(set_id: str) -> str:
    return "\n\n".join([homework_markdown(set_id), quiz_markdown(set_id)])


def time_rules_markdown() -> str:
    """The rules behind the estimates, as a sentence and a table."""
    rows = ["| Kind of question | Minutes |", "| --- | --- |"]
    rows += [f"| {kind} | {minutes} |" for kind, minutes in KIND_MINUTES.items()]
    lead = (f"A lecture is {LECTURE_MINUTES} minutes: {OPENING_MINUTES} on the objectives, the sections in "
            f"proportion to their length (words, and {WORDS_PER_CODE_CELL} words for each code cell shown), a "
            f"{ACTIVITY_MINUTES}-minute activity, and {CLOSING_MINUTES} to close. A student needs "
            f"{SET_MINUTES} minutes to open an exercise set, plus for each question:")
    tail = (f"Reading a chapter: its words at {READING_WORDS_PER_MINUTE} a minute, plus "
            f"{MINUTES_PER_CODE_CELL} minute per code cell. Totals are rounded up to 5 minutes.")
    return "\n".join([lead, "", *rows, "", tail])


def exercise_times_markdown(reading: bool = True) -> str:
    """One row per chapter: its exercise set, questions, points and the estimated times (the time to read
    the chapter too, unless ``reading`` is false)."""
    from posenc.exercises import load_set

    header = "| Chapter | Questions | Points | Exercises |" + (" Reading the chapter |" if reading else "")
    rows = [header, "|" + " --- |" * (5 if reading else 4)]
    for set_id in chapter_ids():
        exercise_set = load_set(set_id)
        row = (f"| {int(set_id[2:])}. {_cell(title(set_id))} | {len(exercise_set.questions)} | "
               f"{exercise_set.max_points:g} | about {_duration(exercise_minutes(set_id))} |")
        rows.append(row + (f" about {_duration(reading_minutes(set_id))} |" if reading else ""))
    return "\n".join(rows)


def module_plan_markdown(name: str) -> str:
    """A module plan: one row per week with its lectures and the student's time outside class."""
    plan = MODULE_PLANS[name]
    rows = ["| Week | Lectures (50 min each) | Student's time outside class: reading + exercises |",
            "| --- | --- | --- |"]
    total = 0
    for week, ids in enumerate(plan["weeks"], start=1):
        lectures = "; ".join(f"{int(i[2:])}. {_cell(title(i))}" for i in ids)
        minutes = sum(reading_minutes(i) + exercise_minutes(i) for i in ids)
        total += minutes
        rows.append(f"| {week} | {lectures} | about {_duration(minutes)} |")
    rows.append(f"| All | {sum(len(ids) for ids in plan['weeks'])} lectures | about {_duration(total)} |")
    return "\n".join(rows)


def show_markdown(text: str) -> None:
    """Display Markdown on the page (the book build renders it as MyST)."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def show(set_id: str, part: str = "plan") -> None:
    """Display one chapter's generated blocks: ``plan`` (outcomes and lecture plan) or ``homework`` (homework
    and quiz)."""
    show_markdown({"plan": markdown, "homework": after_activity_markdown}[part](set_id))


def show_module_plan(name: str) -> None:
    show_markdown(module_plan_markdown(name))


# The lecturer's manual: the pages of the book's "For lecturers" part (book/lecturers/) that the teaching
# guide sends a lecturer to for handing out and grading, with their titles.
MANUAL_PAGES = {
    "handing-out": "Handing out and publishing",
    "public": "What is public",
    "grading": "Grading a class",
    "private-checks": "Private checks",
    "lms": "Canvas and Moodle",
    "gradescope": "Gradescope",
    "sandbox": "The sandbox",
}


def grading_markdown() -> str:
    """Links, from the teaching guide (book/teaching-guide.md), to the manual's pages on handing out and
    grading."""
    links = ", ".join(f"[{name}](lecturers/{page}.md)" for page, name in MANUAL_PAGES.items())
    return f"The full instructions are in the following pages of this part: {links}."
