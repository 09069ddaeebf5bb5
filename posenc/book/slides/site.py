"""The decks in the built site: a link under each chapter page's title, and the decks copied into another build.

``make book`` builds the decks into ``_build/html/slides/``; each chapter's page then gets one paragraph with
links to its deck and the deck's PDFs, right under the page's title. ``copy_decks`` puts the built decks into
another build of the book (the student edition) and links its chapter pages the same way.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from posenc.book.slides.spec import Deck, DeckError, deck_files, load_deck
from posenc.paths import ROOT

__all__ = ["LINK_MARK", "add_chapter_link", "chapter_docname", "copy_decks", "link_html"]

LINK_MARK = "posenc-slides-link"


def chapter_docname(deck: Deck) -> str:
    return deck.chapter.relative_to(ROOT).with_suffix("").as_posix()


def link_html(deck: Deck, prefix: str) -> str:
    slides = f"{prefix}slides/{deck.set_id}"
    return (f'<p class="{LINK_MARK}">Slides for this chapter: <a href="{slides}.html">the deck</a> (reveal.js; '
            f'press <kbd>s</kbd> for the speaker notes), <a href="{slides}.pdf">its PDF</a> and '
            f'<a href="{slides}-notes.pdf">the PDF with the speaker notes</a>.</p>')


def add_chapter_link(site: Path, deck: Deck) -> bool:
    """Put the deck's links under the title of the chapter's page; False when the page is not built."""
    docname = chapter_docname(deck)
    page = site / f"{docname}.html"
    if not page.exists():
        return False
    text = page.read_text(encoding="utf-8")
    text = re.sub(rf'<p class="{LINK_MARK}">.*?</p>', "", text, flags=re.S)
    prefix = "../" * docname.count("/")
    article = max(text.find("<article"), 0)          # the page's title, not a copy in the theme's header
    head, body = text[:article], text[article:]
    body, count = re.subn(r"(<h1\b[^>]*>.*?</h1>)", lambda m: m[1] + link_html(deck, prefix), body, count=1, flags=re.S)
    if count:
        page.write_text(head + body, encoding="utf-8")
    return bool(count)


def copy_decks(site: Path, other: Path, log=print) -> int:
    """The decks built into ``site`` (with their figures, PDFs and libraries) copied into another build of
    the book, ``other`` (the student edition), and linked from its chapter pages; returns the decks copied."""
    if not (site / "slides").is_dir():
        raise DeckError(f"no decks in {site / 'slides'} to copy: build them first")
    shutil.copytree(site / "slides", other / "slides", dirs_exist_ok=True)
    decks = [load_deck(path) for path in deck_files() if (site / "slides" / f"{path.stem}.html").exists()]
    linked = sum(add_chapter_link(other, deck) for deck in decks)
    log(f"posenc.book.slides: {len(decks)} decks copied into {other / 'slides'}, {linked} chapter pages linked")
    return len(decks)
