"""The teaching guide (``book/teaching-guide.md``): a lecturer's plan for each chapter, checked against the course.

Each chapter's entry is written in ``book/teaching/chNN.yml`` in a lecturer's own words (CONTRIBUTING,
"Teaching guide"): the 50-minute plan timed by activity, whose lecture segments name sections of the
chapter's slide deck (``book/slides/chNN.yml``), so its slide ranges are read from the deck; the in-class
activity with its answer key; the live runs with their fallbacks; the misconceptions, named by the exercise
checks' own messages; exam questions with a marking rubric. Numbers that code computes come from
``numbers``. The guide adds what it reads of the course when the book is built: the objectives, the homework
and its estimated time, the quiz with its answers, the module plans and the links to the lecturer's manual.

The package by job:

* ``entry``: reading and checking an entry (``load_entry``, ``GuideError``);
* ``numbers``: the computed numbers each entry quotes;
* ``estimates``: the chapters, their parts in the toc, and the time a student needs outside class;
* ``modules``: the module plans (``MODULE_PLANS``), checked against the toc;
* ``render``: the Markdown the page shows.

In the guide, one cell tagged ``remove-input`` per chapter::

    import posenc.book.teaching as teaching
    teaching.show("ch01")
"""

from __future__ import annotations

from posenc.book.teaching.entry import (ENTRIES, EXAM_QUESTIONS, LECTURE_MINUTES, PARTS, Entry, GuideError,
                                        entry_path, load_entry)
from posenc.book.teaching.estimates import (KIND_MINUTES, SET_MINUTES, chapter_ids, exercise_minutes,
                                            exercise_times_markdown, parts, question_kind, reading_minutes,
                                            time_rules_markdown, title)
from posenc.book.teaching.modules import MODULE_PLANS, SESSIONS, module_plan_markdown, module_problems
from posenc.book.teaching.render import chapter_markdown

__all__ = [
    "ENTRIES", "EXAM_QUESTIONS", "KIND_MINUTES", "LECTURE_MINUTES", "MANUAL_PAGES", "MODULE_PLANS", "PARTS",
    "SESSIONS", "SET_MINUTES", "Entry", "GuideError", "chapter_ids", "chapter_markdown", "entry_path",
    "exercise_minutes", "exercise_times_markdown", "grading_markdown", "load_entry", "module_plan_markdown",
    "module_problems", "parts", "question_kind", "reading_minutes", "show", "show_markdown", "show_module_plan",
    "time_rules_markdown", "title",
]


def show_markdown(text: str) -> None:
    """Display Markdown on the page (the book build renders it as MyST)."""
    from IPython.display import Markdown, display

    display(Markdown(text))


def show(set_id: str) -> None:
    """Display everything the guide has for one chapter (``render.chapter_markdown``)."""
    show_markdown(chapter_markdown(set_id))


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
