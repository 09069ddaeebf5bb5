"""Slide assembly: a deck's spec and its chapter become slides (the HTML a slide shows, and its speaker notes).

A slide shows one thing (``spec.SHOWS``) under its title; its notes hold what the lecturer needs in the room:
the minutes, what to say, the question's answer and the wrong answers students give, the live demo and what
to show when it fails, the messages of the exercise checks the slide prepares for, and where the chapter says
more. Every reference is resolved against the chapter (``DeckError`` names a missing one); without an
execution (``--check``) the outputs are left empty and only the references are checked.
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass
from pathlib import Path

from posenc.book.slides.chapter import Chapter
from posenc.book.slides.render import markdown_html, markdown_inline
from posenc.book.slides.spec import Deck, DeckError, SlideSpec, numbers, own_words
from posenc.experiments.summaries import html_cell

__all__ = ["COURSE", "Slide", "deck_slides", "mistake_messages"]

COURSE = "Positional Encoding: from binary counters to learned embeddings"


@dataclass
class Slide:
    spec: SlideSpec
    title: str          # HTML
    body: str           # HTML
    notes: str          # HTML

    @property
    def kind(self) -> str:
        return self.spec.kind


def mistake_messages(deck: Deck, references: list[str], where: str) -> list[tuple[str, str]]:
    """(question id, message) for each "qN: words of the message" of the deck's exercise set."""
    from posenc.book.mistakes import _message
    from posenc.exercises import load_set

    if not references:
        return []
    questions = {question.qid: question for question in load_set(deck.set_id).questions}
    found = []
    for reference in references:
        qid, _, words = (part.strip() for part in reference.partition(":"))
        question = questions.get(qid)
        if question is None:
            raise DeckError(f"{where}: exercise set {deck.set_id} has no question {qid!r} ({reference!r})")
        messages = [m for m in (_message(x) for x in getattr(question, "mistakes", ()) or ()) if m]
        matching = [m for m in messages if words.lower() in m.lower()]
        if not words or not matching:
            raise DeckError(f"{where}: no Mistake of {deck.set_id} {qid} says {words!r} (reworded? its messages "
                            f"start: {[m[:40] for m in messages]})")
        found.append((qid, matching[0]))
    return found


# ---------------------------------------------------------------------------------------------------
# What a slide shows


def _figure(chapter: Chapter, spec: SlideSpec, where: str, folder: Path | None, relative: str) -> tuple[str, str]:
    """The figure's slide version as an <img> (its PNG written into the deck's folder), and its caption."""
    name = spec.shows
    cell = chapter.figure_cell(name, where)
    meta = cell.metadata.get("mystnb") or {}
    caption = (meta.get("figure") or {}).get("caption") or ""
    alt = ((meta.get("image") or {}).get("alt") or "").strip()
    if not alt:
        raise DeckError(f"{where}: the figure {name!r} has no alt text (metadata mystnb.image.alt)")
    record = chapter.slide_figure(name, where)
    src, size, min_font = "", 'width="1280" height="720"', ""
    if record is not None:
        collisions = record.get("overlaps", []) + [f"on the chapter's page: {x}" for x in record.get("page_overlaps", [])]
        if collisions:
            raise DeckError(f"{where}: the figure {name!r} has texts that collide, fix its code in {chapter.name}: "
                            + "; ".join(collisions[:6]))
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.png").write_bytes(base64.b64decode(record["png"]))
        src = f"{relative}/{name}.png"
        size = f'width="{record["width"]}" height="{record["height"]}"'
        min_font = f' data-min-font="{record["min_font"]:.5f}"'
    image = (f'<figure class="slide-figure" id="{html.escape(name)}"><img src="{src}" {size}{min_font} '
             f'alt="{html.escape(alt, quote=True)}"></figure>')
    return image, caption


def _table(chapter: Chapter, spec: SlideSpec, where: str) -> str:
    table = chapter.table(spec.shows, where)
    if table is None:
        return '<table class="slide-table"><tr><td>…</td></tr></table>'
    table = table.select(spec.columns, spec.rows, where)
    headers = [spec.column_names.get(h, h) for h in table.headers]          # the names the deck gives them
    rows = [[spec.row_names.get(name, row[0])] + row[1:] for name, row in zip(spec.rows, table.rows)] or table.rows
    head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(html_cell(c, table.row_headers and i == 0) for i, c in enumerate(row))
                   + "</tr>" for row in rows)
    return f'<table class="slide-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _theorem(chapter: Chapter, spec: SlideSpec, where: str) -> str:
    theorem = chapter.theorem(spec.shows, where)
    name = theorem.kind.title() + (f" ({theorem.name})" if theorem.name else "")
    return (f'<div class="theorem"><p class="theorem-name">{markdown_inline(name, chapter)}.</p>'
            f"{markdown_html(theorem.body, chapter)}</div>")


def _cover(chapter: Chapter, chapter_link: str) -> tuple[str, str]:
    number = re.match(r"^(\d+)\.\s*(.*)$", chapter.title)
    title = markdown_inline(number[2] if number else chapter.title, chapter)
    body = ((f'<p class="chapter-number">Chapter {number[1]}</p>' if number else "")
            + f"<h1>{title}</h1>" + f'<p class="course">{html.escape(COURSE)}</p>'
            + f'<p class="chapter-link"><a href="{html.escape(chapter_link, quote=True)}">The chapter in the book</a></p>')
    return title, body


def _body(deck: Deck, chapter: Chapter, spec: SlideSpec, where: str, folder, relative, chapter_link) -> tuple[str, str, str]:
    """(title HTML, body HTML, the chapter's caption or "") of one slide."""
    title = markdown_inline(spec.title, chapter) if spec.title else ""
    read = f'<p class="read">{markdown_inline(spec.read, chapter)}</p>' if spec.read else ""
    caption = ""
    if spec.kind == "cover":
        cover_title, body = _cover(chapter, chapter_link)
        title = title or cover_title
    elif spec.kind == "figure":
        body, caption = _figure(chapter, spec, where, folder, relative)
    elif spec.kind == "equation":
        body = f'<div class="equation">\\[{html.escape(chapter.equation(spec.shows, where))}\\]</div>{read}'
    elif spec.kind == "theorem":
        body = _theorem(chapter, spec, where) + read
    elif spec.kind == "bullets":
        body = '<ul class="bullets">' + "".join(f"<li>{markdown_inline(b, chapter)}</li>" for b in spec.shows) + "</ul>"
    elif spec.kind == "table":
        body = _table(chapter, spec, where) + read
    elif spec.kind == "explorer":
        fragment = chapter.explorer(spec.shows, where)
        body = f'<div class="explorer">{fragment or ""}</div>'
    else:
        body = f'<p class="question">{markdown_inline(str(spec.shows), chapter)}</p>'
    return title, body, caption


# ---------------------------------------------------------------------------------------------------
# Speaker notes


def _minutes(value: float) -> str:
    return f"{value:g} min"


def _source_cell(chapter: Chapter, spec: SlideSpec) -> str | None:
    """The cell a slide's content comes from (for "in the chapter: <section>")."""
    if spec.kind == "figure":
        return chapter.figure_cell(spec.shows, "").get("id")
    if spec.kind in ("table", "explorer"):
        return spec.shows
    if spec.kind == "equation":
        cell_id = re.split(r"[#$]", spec.shows)[0]
        return cell_id if cell_id in chapter.cells else None
    return None


def _notes(deck: Deck, chapter: Chapter, spec: SlideSpec, section_title: str, caption: str, where: str) -> str:
    parts = [f'<p class="minutes"><strong>{_minutes(spec.minutes)}</strong> · {html.escape(section_title)}</p>',
             f'<p class="say">{markdown_inline(spec.say, chapter)}</p>']
    if spec.kind == "question":
        wrong = "".join(f"<li>{markdown_inline(text, chapter)}</li>" for text in spec.wrong)
        parts += [f"<p><strong>Answer.</strong> {markdown_inline(spec.answer, chapter)}</p>",
                  f"<p><strong>Wrong answers students give.</strong></p><ul>{wrong}</ul>"]
    if spec.demo:
        parts += [f"<p><strong>Live.</strong> {markdown_inline(spec.demo, chapter)}</p>",
                  f"<p><strong>If it is slow or fails.</strong> {markdown_inline(spec.fallback, chapter)}</p>"]
    found = mistake_messages(deck, spec.mistakes, where)
    if found:
        items = "".join(f"<li>({deck.set_id} {qid}) {html.escape(message)}</li>" for qid, message in found)
        parts.append(f"<p><strong>What the exercise checks catch.</strong></p><ul>{items}</ul>")
    if caption:
        parts.append(f"<p><strong>The chapter's caption.</strong> {markdown_inline(caption, chapter)}</p>")
    cell_id = _source_cell(chapter, spec)
    if cell_id:
        parts.append(f'<p class="source">In the chapter: {markdown_inline(chapter.heading_before(cell_id), chapter)}.</p>')
    return "\n".join(parts)


def deck_slides(deck: Deck, chapter: Chapter, folder: Path | None = None, relative: str = "",
                chapter_link: str = "") -> list[Slide]:
    """The slides of a deck, every reference resolved against the chapter (DeckError when one is missing)."""
    relative = relative or deck.set_id
    slides = []
    for section in deck.sections:
        for spec in section.slides:
            where = f"{deck.path.name}, slide {spec.number} ({spec.id})"
            for key, text in own_words(spec).items():
                typed = [n for n in numbers(text) if n not in chapter.stated_numbers]
                if typed:
                    raise DeckError(f"{where}: the {key} types {', '.join(typed)}, a number the chapter does not "
                                    "state: glue it from the chapter's execution ({glue:text}`name`)")
            title, body, caption = _body(deck, chapter, spec, where, folder, relative, chapter_link)
            slides.append(Slide(spec, title, body, _notes(deck, chapter, spec, section.title, caption, where)))
    return slides
