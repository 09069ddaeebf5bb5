"""Each deck printed to PDF by headless Chromium: the slides (``chNN.pdf``, one page per slide) and the slides
with their speaker notes (``chNN-notes.pdf``, each slide followed by a page of its notes: reveal.js's print view
with ``showNotes=separate-page``), for a lecturer who prepares on paper or teaches without a browser.
"""

from __future__ import annotations

import re
from pathlib import Path

from posenc.book.browser import chromium_path, launch
from posenc.book.slides.spec import DeckError

__all__ = ["NOTES_SUFFIX", "pdf_pages", "print_pdfs"]

NOTES_SUFFIX = "-notes"
VIEWS = (("", "?print-pdf", 1), (NOTES_SUFFIX, "?print-pdf&showNotes=separate-page", 2))   # pages per slide
PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: bytes) -> int:
    """The pages of a PDF as Chromium writes it (its page objects are not packed into object streams)."""
    return len(PDF_PAGE.findall(data))


def print_pdfs(decks: list[Path], width: int, height: int, log=print) -> list[Path]:
    """Both PDFs of each deck (an HTML file), printed beside it; returns the PDFs written."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        log("posenc.book.slides: no Chromium (or no Playwright): the PDFs are not printed; run `make book-setup`")
        return []
    printed = []
    with sync_playwright() as playwright:
        browser = launch(playwright, executable)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            context.route(re.compile(r"^(?!file:)"), lambda route: route.abort())      # nothing from the network
            for deck in decks:
                for suffix, query, per_slide in VIEWS:
                    target = deck.with_name(deck.stem + suffix + ".pdf")
                    for attempt in (1, 2):          # a fresh tab each time; a blank print is tried once more
                        pages, slides = _print_one(context, deck, query, target)
                        if pages >= per_slide * slides > 0:
                            break
                        log(f"  {target.name}: {pages} pages for {slides} slides (attempt {attempt})")
                    else:
                        raise DeckError(f"{target.name}: Chromium printed {pages} pages for {slides} slides")
                    printed.append(target)
        finally:
            browser.close()
    return printed


def _print_one(context, deck: Path, query: str, target: Path) -> tuple[int, int]:
    """Print one view of a deck; return the PDF's pages and the deck's slides."""
    tab = context.new_page()
    try:
        tab.goto(deck.resolve().as_uri() + query, wait_until="load")
        # Reveal exists before it is ready, and then counts 0 slides (seen in a clean clone's make test):
        # wait until it is ready, MathJax has typeset, and reveal.js has laid out its print pages.
        tab.wait_for_function("() => document.body.dataset.fitted === 'yes' && window.Reveal && Reveal.isReady()"
                              " && Reveal.getTotalSlides() > 0"
                              " && document.querySelectorAll('.pdf-page').length >= Reveal.getTotalSlides()",
                              timeout=60_000)
        slides = tab.evaluate("() => Reveal.getTotalSlides()")
        tab.pdf(path=str(target), prefer_css_page_size=True, print_background=True)
    finally:
        tab.close()
    return pdf_pages(target.read_bytes()), slides
