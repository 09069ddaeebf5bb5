"""The teaching guide's blocks as MyST markdown: one chapter's plan, live parts, activity, misconceptions, exam,
homework and quiz (``chapter_markdown``), and the module plans.

The guide (``book/teaching-guide.md``) shows each block with a ``remove-input`` cell; its pages are
``book/teaching-guide.html`` beside ``slides/chNN.html`` and ``notebooks/NN_topic.html``, so links to a deck's
slide (``#s-<id>``) and to a chapter's figure (``#fig-...``) are relative to that.
"""

from __future__ import annotations

import functools
import re

import nbformat

from posenc.book.teaching.entry import LECTURE_MINUTES, Entry, load_entry
from posenc.book.teaching.estimates import homework_markdown, notebook_path, objectives, runs, table_cell
from posenc.lib.reproducibility import listed

__all__ = ["chapter_markdown", "clock", "deck_link", "figure_link", "plan_markdown", "quiz_markdown"]


def clock(minutes: int) -> str:
    return f"{minutes // 60}:{minutes % 60:02d}"


def deck_link(set_id: str, slide_id: str, text: str) -> str:
    """A link to one slide of the chapter's deck (the deck is not a page of the book: a plain HTML link)."""
    return f'<a href="../slides/{set_id}.html#s-{slide_id}">{text}</a>'


@functools.lru_cache(maxsize=None)
def _figures(set_id: str) -> dict[str, str]:
    """The chapter's figures: name -> caption."""
    found = {}
    for cell in nbformat.read(notebook_path(set_id), as_version=4).cells:
        figure = (cell.metadata.get("mystnb") or {}).get("figure") or {}
        if figure.get("name"):
            found[figure["name"]] = " ".join(str(figure.get("caption", "")).split())
    return found


CAPTION_CHARACTERS = 80      # a figure link shows its caption's first clause, cut near here


def short_caption(caption: str, limit: int = CAPTION_CHARACTERS) -> str:
    """The caption's first sentence, or its first clause, or its first words, ending with an ellipsis when cut."""
    text = re.split(r"(?<=[a-z0-9)])\. (?=[A-Z])", caption)[0].rstrip(".")
    for mark in (": ", "; ", ", "):
        head = text.split(mark)[0]
        if len(text) > limit and 25 <= len(head) < len(text):
            text = head + "…"
    if len(text) > limit + 1:
        text = text[:limit].rsplit(" ", 1)[0] + "…"
    return text


def figure_link(set_id: str, name: str) -> str:
    """A link to a figure on the chapter's page, with the beginning of its caption."""
    page = notebook_path(set_id).with_suffix(".html").name
    # Typographic quotes written out: a straight quote right after the tag is taken by Sphinx's smartquotes
    # for a closing one.
    return f'the chapter\'s figure <a href="../notebooks/{page}#{name}">“{short_caption(_figures(set_id)[name])}”</a>'


def _ranges(numbers: list[int]) -> str:
    """[3, 4, 5, 7] -> '3–5, 7'."""
    return ", ".join(f"{run[0]}–{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs(numbers))


def _slides(entry: Entry, segment, deck) -> str:
    """The slides a segment shows, linked to its first slide in the deck, with those it leaves out."""
    slides = [slide for section in segment.sections for slide in deck.section(section).slides]
    kept = [slide for slide in slides if slide.id not in segment.skip]
    shown = deck_link(entry.set_id, kept[0].id, _ranges([slide.number for slide in kept]))
    left_out = [slide.number for slide in slides if slide.id in segment.skip]
    shown += f" ({_ranges(left_out)} left out)" if left_out else ""
    titles = "; ".join(deck.section(s).title for s in segment.sections)
    return f"{shown}: {table_cell(titles)}"


def plan_markdown(entry: Entry) -> str:
    """The lecture plan as a table: clock, minutes, slides (linked into the deck) and what happens."""
    from posenc.book.slides import outline

    deck = outline(entry.set_id)
    rows = ["| Clock | Minutes | Deck's minutes | Slides | What happens |", "| --- | --- | --- | --- | --- |"]
    start = 0
    for segment in entry.plan:
        deck_minutes = "–"
        if segment.kind == "slides":
            what = _slides(entry, segment, deck)
            do = segment.do + (f" *Minutes against the deck's:* {segment.timing}" if segment.timing else "")
            deck_minutes = f"{segment.deck_minutes:g}"
        elif segment.kind == "activity":
            what = "*In-class activity*"
            do = f"{entry.activity.title} (below)."
        else:
            numbers = segment.questions
            what = f"*Quiz: question{'s' if len(numbers) > 1 else ''} {listed([str(n) for n in numbers])}*"
            do = segment.do
        rows.append(f"| {clock(start)} | {segment.minutes} | {deck_minutes} | {what} | {table_cell(do)} |")
        start += segment.minutes
    shown = [s for s in entry.plan if s.kind == "slides"]
    lecture, deck_minutes = sum(s.minutes for s in shown), sum(s.deck_minutes for s in shown)
    skipped = sum(len(s.skip) for s in shown)
    lead = (f"**Lecture plan** ({LECTURE_MINUTES} min), on the slides of the chapter's deck, "
            f'<a href="../slides/{entry.set_id}.html">slides/{entry.set_id}.html</a> (the numbers link to them). '
            f"The deck's notes time its slides for a lecture without an activity (the column *Deck's minutes*, "
            f"the minutes the notes give the slides of the row that the plan keeps): the slides kept here get "
            f"{_minutes(deck_minutes)} there and {lecture} min in this plan"
            + (f", which leaves out {skipped} slide{'s' if skipped > 1 else ''}" if skipped else "")
            + ", so that the activity and the quiz fit. Where a row has fewer minutes than the deck's, take them "
              "from the slides' spoken explanations, not from their questions; a row that has more says why.")
    return "\n".join([lead, "", *rows])


def blocks(text: str, indent: str = "") -> str:
    """``text`` with every ``$$formula$$`` set as a display equation of its own, indented to sit inside a list
    item: long formulas scroll in their own box instead of being cut off on a narrow screen."""
    parts = re.split(r"\$\$(.+?)\$\$", text)
    out = parts[0].strip()
    for formula, after in zip(parts[1::2], parts[2::2]):
        mark = re.match(r"[.,;:]", after)           # punctuation after a display equation goes inside it
        if mark:
            formula, after = f"{formula.strip()}\\,{mark[0]}", after[1:]
        out += f"\n\n{indent}$$\n{indent}{formula.strip()}\n{indent}$$"
        out += f"\n\n{indent}{after.strip()}" if after.strip() else ""
    return out


def _minutes(value: float) -> str:
    return f"{value:g} min"


def _live_markdown(entry: Entry) -> str:
    from posenc.book.slides import outline

    lines = ["**Live parts, and what to show if one is slow or fails.** Each is optional: the plan's minutes "
             "assume the fallback.", ""]
    skipped = {s for segment in entry.plan for s in segment.skip}
    for slide in outline(entry.set_id).slides:
        if slide.demo and slide.id not in skipped:
            where = deck_link(entry.set_id, slide.id, f"Slide {slide.number}")
            lines.append(f"- {where} ({slide.kind}): {slide.demo} *If it is slow or fails:* {slide.fallback}")
    for run in entry.live:
        fallback = run.fallback
        if run.figure:
            fallback += f" Show {figure_link(entry.set_id, run.figure)}."
        lines.append(f"- {run.what} *If it is slow or fails:* {fallback}")
    return "\n".join(lines)


def _activity_markdown(entry: Entry) -> str:
    activity = entry.activity
    key = [f"- {blocks(item, '  ')}" for item in activity.key]
    return "\n".join([f"**In-class activity: {activity.title}.** {blocks(activity.task)}", "", "**Answer key.**", "",
                      *key])


def _misconceptions_markdown(entry: Entry) -> str:
    from posenc.book.mistakes import _escape

    lines = ["**Misconceptions the exercise checks catch.** Each is a message the grader gives (the *Common "
             "mistakes* page lists them all); these are the ones worth time in class.", ""]
    for m in entry.misconceptions:
        lines.append(f"- **{m.qid}:** *{_escape(m.message)}.* {blocks(m.why, '  ')} **In class:** "
                     f"{blocks(m.address, '  ')}")
    return "\n".join(lines)


def _points(value: float) -> str:
    return f"{value:g} point{'s' if value != 1 else ''}"


def _exam_markdown(entry: Entry) -> str:
    total = sum(q.points for q in entry.exam)
    lines = [f":::{{dropdown}} Exam questions and marking rubric ({len(entry.exam)} questions, {total:g} points)",
             "These questions are public, like the rest of the course: use them as practice, or as models for "
             "questions of your own.", ""]
    for n, question in enumerate(entry.exam, 1):
        lines += [f"**Question {n}** ({_points(question.points)}). {blocks(question.question)}", ""]
        for letter, part in zip("abcdefgh", question.parts):
            lines.append(f"- ({letter}) {blocks(part.ask, '  ')} *[{_points(part.points)}]*")
            lines.append(f"  - *Answer:* {blocks(part.answer, '    ')}")
            lines.append(f"  - *Marking:* {blocks(part.earns, '    ')}")
            lines.append(f"  - *Common wrong answers:* {blocks(' '.join(part.wrong), '    ')}")
        lines.append("")
    lines.append(":::")
    return "\n".join(lines)


def quiz_markdown(set_id: str) -> str:
    """The chapter's quiz: each question with its right answer (the page shows them at a click anyway)."""
    from posenc.book.quiz import load

    questions = load(set_id)
    lines = [f"**What the quiz checks.** The chapter ends with {len(questions)} self-check questions (not graded; "
             "the reader sees the feedback at once). The right answers:", ""]
    for n, question in enumerate(questions, 1):
        right = [a["answer"] for a in question["answers"] if a["correct"]]
        lines.append(f"{n}. {_plain(question['question'])} *Answer:* {_plain(' / '.join(right))}")
    return "\n".join(lines)


def _plain(text: str) -> str:
    """Quiz text (Unicode formulas, no markup) that Markdown shows as it is."""
    from posenc.book.mistakes import _escape

    return _escape(" ".join(text.split()))


def _outcomes_markdown(set_id: str) -> str:
    lines = ["**Learning outcomes** (the chapter's objectives). After the chapter a student can", ""]
    return "\n".join(lines + [f"- {item}" for item in objectives(set_id)])


def chapter_markdown(set_id: str) -> str:
    """Everything the guide shows for one chapter, in the order a lecturer prepares it."""
    entry = load_entry(set_id)
    return "\n\n".join([
        f"**Before the lecture.** {entry.prerequisites}",
        _outcomes_markdown(set_id),
        plan_markdown(entry),
        _live_markdown(entry),
        _activity_markdown(entry),
        _misconceptions_markdown(entry),
        _exam_markdown(entry),
        homework_markdown(set_id),
        quiz_markdown(set_id),
    ])
