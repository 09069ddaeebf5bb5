"""Building the decks: every ``book/slides/chNN.yml`` into ``_build/html/slides/``, its PDFs, the chapter links.

    python -m posenc.book.slides                 # what `make book` runs after jupyter-book build
    python -m posenc.book.slides --no-pdf        # the decks only
    python -m posenc.book.slides --check         # only check every deck against the spec and its chapter
    python -m posenc.book.slides --copy-to DIR   # also copy the decks into another build (the student edition)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import nbformat

from posenc.book.cache import CACHE, executed_notebook
from posenc.book.slide_figures import CANVAS, DPI
from posenc.book.slides.assemble import deck_slides
from posenc.book.slides.chapter import Chapter
from posenc.book.slides.page import copy_libraries, deck_page, libraries_missing
from posenc.book.slides.pdf import print_pdfs
from posenc.book.slides.site import add_chapter_link, chapter_docname, copy_decks
from posenc.book.slides.spec import Deck, DeckError, deck_files, deck_path, load_deck
from posenc.paths import ROOT

__all__ = ["HEIGHT", "SITE", "WIDTH", "build", "build_decks", "check", "main", "outline"]

SITE = ROOT / "_build" / "html"
WIDTH, HEIGHT = round(CANVAS[0] * DPI), round(CANVAS[1] * DPI)        # 1280 x 720: the slide, in CSS pixels


def outline(set_id: str) -> Deck:
    """A deck's sections and slides as its file describes them (ids, titles, minutes, slide numbers), without
    the chapter or an execution: what the teaching guide maps its lecture plan onto."""
    return load_deck(deck_path(set_id))


def _build_deck(path: Path, site: Path, out: Path, cache_path: Path, log) -> Path:
    deck = load_deck(path)
    notebook, executed = executed_notebook(deck.chapter, cache_path)
    if executed is None:
        raise DeckError(f"{path.name}: no execution of {deck.chapter.relative_to(ROOT)} in {cache_path} that "
                        "matches the notebook's code: run `make book` (the deck takes its figures and numbers "
                        "from the chapter's execution)")
    chapter = Chapter(notebook, executed, deck.chapter)
    folder = out / deck.set_id
    shutil.rmtree(folder, ignore_errors=True)
    docname = chapter_docname(deck)
    slides = deck_slides(deck, chapter, folder, deck.set_id, chapter_link=f"../{docname}.html")
    target = out / f"{deck.set_id}.html"
    target.write_text(deck_page(chapter.title, slides), encoding="utf-8")
    linked = add_chapter_link(site, deck)
    log(f"  slides/{deck.set_id}.html: {len(slides)} slides"
        + ("" if linked else f" (no page {docname}.html to link from)"))
    return target


def build_decks(site: Path = SITE, cache_path: Path = CACHE, decks: list[Path] | None = None,
                log=print) -> tuple[list[Path], list[str]]:
    """Write every deck (and its figures) into site/slides/; return the HTML files written and the problems."""
    out = site / "slides"
    out.mkdir(parents=True, exist_ok=True)
    copy_libraries(out)
    written, problems = [], []
    for path in decks or deck_files():
        try:
            written.append(_build_deck(path, site, out, cache_path, log))
        except DeckError as exc:
            problems.append(str(exc))
            log(f"  {exc}")
    return written, problems


def build(site: Path = SITE, cache_path: Path = CACHE, pdf: bool = True, log=print) -> list[Path]:
    start = time.perf_counter()
    missing = libraries_missing()
    if missing:        # a machine without npm still builds the book; the browser tests then say what is missing
        log(f"posenc.book.slides: the slide decks are NOT built: {missing}")
        return []
    log(f"posenc.book.slides: writing the decks into {site / 'slides'}")
    decks, problems = build_decks(site, cache_path, log=log)
    if pdf:
        printed = print_pdfs(decks, WIDTH, HEIGHT, log=log)
        log(f"  {len(printed)} PDFs printed")
    log(f"posenc.book.slides: {len(decks)} decks in {time.perf_counter() - start:.1f} s")
    if problems:
        raise DeckError(f"{len(problems)} of {len(problems) + len(decks)} decks not built:\n" + "\n".join(problems))
    return decks


def check(log=print) -> int:
    """Every deck against the spec's rules and its chapter's sources (no execution needed); 1 on a problem."""
    problems = 0
    for path in deck_files():
        try:
            deck = load_deck(path)
            chapter = Chapter(nbformat.read(deck.chapter, as_version=4), None, deck.chapter)
            slides = deck_slides(deck, chapter)
            log(f"  {path.name}: {len(slides)} slides, {deck.minutes:g} minutes")
        except (DeckError, FileNotFoundError) as exc:
            problems += 1
            log(f"  {exc}" if str(exc).startswith(path.name) else f"  {path.name}: {exc}")
    return 1 if problems else 0


def main(argv=None) -> int:
    import posenc.book.slides as package

    parser = argparse.ArgumentParser(description=package.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=SITE, help=f"the built site (default: {SITE})")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"jupyter-book's cache (default: {CACHE})")
    parser.add_argument("--no-pdf", action="store_true", help="do not print the PDFs")
    parser.add_argument("--check", action="store_true", help="only check the deck descriptions")
    parser.add_argument("--copy-to", type=Path, action="append", default=[], metavar="SITE",
                        help="also copy the decks into another build (the student edition) and link its chapters")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    try:
        build(args.site, args.cache, pdf=not args.no_pdf)
        for other in args.copy_to:
            copy_decks(args.site, other)
    except DeckError as exc:
        print(f"posenc.book.slides: {exc}", file=sys.stderr)
        return 1
    return 0
