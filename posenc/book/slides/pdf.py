"""Each deck printed to PDF by headless Chromium: the slides (``chNN.pdf``, one page per slide) and the slides
with their speaker notes (``chNN-notes.pdf``, each slide followed by a page of its notes: reveal.js's print view
with ``showNotes=separate-page``), for a lecturer who prepares on paper or teaches without a browser.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from posenc.book.browser import CHROMIUM_ARGS, chromium_path
from posenc.book.slides.spec import DeckError

__all__ = ["NOTES_SUFFIX", "pdf_pages", "print_pdfs"]

NOTES_SUFFIX = "-notes"
VIEWS = (("", "?print-pdf", 1), (NOTES_SUFFIX, "?print-pdf&showNotes=separate-page", 2))   # pages per slide
PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: bytes) -> int:
    """The pages of a PDF as Chromium writes it (its page objects are not packed into object streams)."""
    return len(PDF_PAGE.findall(data))


def print_pdfs(decks: list[Path], width: int, height: int, log=print, tabs: int = 2) -> list[Path]:
    """Both PDFs of each deck (an HTML file), printed beside it by ``tabs`` tabs at a time (Chromium lays
    out and prints in processes of its own, so two tabs keep both cores of a small machine busy); returns
    the PDFs written."""
    executable = chromium_path()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        executable = None
    if executable is None:
        log("posenc.book.slides: no Chromium (or no Playwright): the PDFs are not printed; run `make book-setup`")
        return []
    jobs = [(deck, deck.with_name(deck.stem + suffix + ".pdf"), query, per_slide)
            for deck in decks for suffix, query, per_slide in VIEWS]

    async def run() -> list[Path]:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=executable, headless=True,
                                                       args=CHROMIUM_ARGS)
            try:
                context = await browser.new_context(viewport={"width": width, "height": height})
                await context.route(re.compile(r"^(?!file:)"), lambda route: route.abort())   # nothing from the network
                queue = list(jobs)

                async def worker() -> None:
                    while queue:
                        await _print_checked(context, *queue.pop(0), log)

                await asyncio.gather(*(worker() for _ in range(max(1, tabs))))
            finally:
                await browser.close()
        return [target for _, target, _, _ in jobs]

    return asyncio.run(run())


async def _print_checked(context, deck: Path, target: Path, query: str, per_slide: int, log) -> None:
    for attempt in (1, 2):          # a fresh tab each time; a blank print is tried once more
        pages, slides = await _print_one(context, deck, query, target)
        if pages >= per_slide * slides > 0:
            return
        log(f"  {target.name}: {pages} pages for {slides} slides (attempt {attempt})")
    raise DeckError(f"{target.name}: Chromium printed {pages} pages for {slides} slides")


async def _print_one(context, deck: Path, query: str, target: Path) -> tuple[int, int]:
    """Print one view of a deck; return the PDF's pages and the deck's slides."""
    tab = await context.new_page()
    try:
        await tab.goto(deck.resolve().as_uri() + query, wait_until="load")
        # Reveal exists before it is ready, and then counts 0 slides (seen in a clean clone's make test):
        # wait until it is ready, MathJax has typeset, and reveal.js has laid out its print pages.
        await tab.wait_for_function("() => document.body.dataset.fitted === 'yes' && window.Reveal && Reveal.isReady()"
                                    " && Reveal.getTotalSlides() > 0"
                                    " && document.querySelectorAll('.pdf-page').length >= Reveal.getTotalSlides()",
                                    timeout=60_000)
        slides = await tab.evaluate("() => Reveal.getTotalSlides()")
        await tab.pdf(path=str(target), prefer_css_page_size=True, print_background=True)
    finally:
        await tab.close()
    return pdf_pages(target.read_bytes()), slides
