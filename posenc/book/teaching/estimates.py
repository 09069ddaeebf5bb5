"""What the teaching guide reads of the course itself, and the time estimates it makes from it.

Read when the book is built, so they cannot drift from the course: the chapters of ``_toc.yml`` and their
parts, each chapter's title, objectives and sections, the questions of each exercise set
(``posenc.exercises``). The times a student needs outside class are estimates from stated rules, never
measurements:

* an exercise set: ``SET_MINUTES`` to open and read it, plus the minutes of each question by its kind
  (``KIND_MINUTES``: writing a torch module takes longer than choosing an option);
* reading a chapter: its words at ``READING_WORDS_PER_MINUTE`` plus ``MINUTES_PER_CODE_CELL`` to run and
  look at each code cell.

The minutes of a lecture are not estimated: each chapter's plan states them (``posenc.book.teaching.entry``).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import nbformat
import yaml

from posenc.paths import NOTEBOOKS, ROOT

__all__ = [
    "KIND_MINUTES", "KIND_OF_CLASS", "MINUTES_PER_CODE_CELL", "READING_WORDS_PER_MINUTE", "SET_MINUTES", "Section",
    "chapter_ids", "duration", "exercise_minutes", "exercise_times_markdown", "homework_markdown", "notebook_path",
    "objectives", "parts", "question_kind", "reading_minutes", "runs", "sections", "table_cell", "time_rules_markdown",
    "title",
]

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


# ---------------------------------------------------------------------------------------------------
# The chapters


def notebook_path(set_id: str):
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
    return nbformat.read(notebook_path(set_id), as_version=4).cells


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


# ---------------------------------------------------------------------------------------------------
# Time outside class


def _round_up(minutes: float, step: int = 5) -> int:
    return int(step * math.ceil(minutes / step))


def reading_minutes(set_id: str) -> int:
    """Estimated minutes to read the chapter and run its cells, rounded up to 5."""
    found = sections(set_id)
    words = sum(s.words for s in found if s.title != "Exercises")
    cells = sum(s.code_cells for s in found if s.title != "Exercises")
    return _round_up(words / READING_WORDS_PER_MINUTE + MINUTES_PER_CODE_CELL * cells)


def question_kind(question) -> str:
    """The kind of a question for the time estimate; ValueError for a kind without minutes."""
    for cls in type(question).__mro__:
        if cls.__name__ in KIND_OF_CLASS:
            return KIND_OF_CLASS[cls.__name__]
    raise ValueError(f"{question.qid} is a {type(question).__name__}: give its kind minutes in "
                     "posenc.book.teaching.estimates.KIND_OF_CLASS")


def exercise_minutes(set_id: str) -> int:
    """Estimated minutes a student needs for the exercise set, rounded up to 5."""
    from posenc.exercises import load_set

    questions = load_set(set_id).questions
    return _round_up(SET_MINUTES + sum(KIND_MINUTES[question_kind(q)] for q in questions))


def duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    if not hours:
        return f"{rest} min"
    return f"{hours} h {rest:02d} min" if rest else f"{hours} h"


def runs(numbers) -> list[list[int]]:
    """[3, 4, 5, 7] -> [[3, 4, 5], [7]]: the runs of consecutive numbers, in order."""
    found: list[list[int]] = []
    for number in numbers:
        if found and number == found[-1][-1] + 1:
            found[-1].append(number)
        else:
            found.append([number])
    return found


def table_cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def homework_markdown(set_id: str) -> str:
    from posenc.exercises import load_set

    exercise_set = load_set(set_id)
    rows = ["| Question | Kind | Points | Minutes |", "| --- | --- | --- | --- |"]
    for q in exercise_set.questions:
        kind = question_kind(q)
        rows.append(f"| {q.qid}: {table_cell(q.title)} | {kind} | {q.points:g} | {KIND_MINUTES[kind]} |")
    minutes = exercise_minutes(set_id)
    notebook = next((ROOT / "exercises").glob(f"{set_id}_*.ipynb"), None)
    name = f"`exercises/{notebook.name}`" if notebook else f"exercise set {set_id}"
    lead = (f"**Homework.** {name}: {len(exercise_set.questions)} auto-graded questions, "
            f"{exercise_set.max_points:g} points, about **{duration(minutes)}** for a student "
            f"(an estimate: {SET_MINUTES} min to open and read the set, plus the minutes of each question by its "
            f"kind), after reading the chapter (about {duration(reading_minutes(set_id))}).")
    return "\n".join([lead, "", *rows])


def time_rules_markdown() -> str:
    """The rules behind the estimates of a student's time, as a sentence and a table."""
    rows = ["| Kind of question | Minutes |", "| --- | --- |"]
    rows += [f"| {kind} | {minutes} |" for kind, minutes in KIND_MINUTES.items()]
    lead = (f"A student needs {SET_MINUTES} minutes to open an exercise set, plus for each question:")
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
        row = (f"| {int(set_id[2:])}. {table_cell(title(set_id))} | {len(exercise_set.questions)} | "
               f"{exercise_set.max_points:g} | about {duration(exercise_minutes(set_id))} |")
        rows.append(row + (f" about {duration(reading_minutes(set_id))} |" if reading else ""))
    return "\n".join(rows)
