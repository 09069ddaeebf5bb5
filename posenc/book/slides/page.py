"""A deck's HTML page (reveal.js) and the files it loads, from the package's assets.

The page is ``assets/deck.html`` with the slides filled in; ``assets/slides.css`` and ``assets/deck.js`` are
copied beside the decks as ``lib/posenc-slides.css`` and ``lib/posenc-slides.js``, with reveal.js's and
MathJax's files from the npm packages of ``posenc.book.browser`` (``book/setup.sh`` fetches them), so a deck
needs no CDN. Each slide is a ``<section>`` with its id (``#/s-<id>`` in the address), its kind, its section
and its minutes as data attributes, its title and content in ``<div class="frame">`` (1280 x 720, laid out the
same on screen and in reveal.js's print view), and its notes in ``<aside class="notes">`` (the ``s`` key).
"""

from __future__ import annotations

import html
import shutil
import string
from pathlib import Path

from posenc.book.browser import PACKAGES
from posenc.book.slides.assemble import Slide
from posenc.book.slides.spec import DeckError

__all__ = ["ASSETS", "copy_libraries", "deck_page", "libraries_missing"]

ASSETS = Path(__file__).with_name("assets")
REVEAL_PARTS = ("reveal.js", "reveal.css", "reset.css", "theme/white.css", "plugin/notes.js")
MATHJAX_PART = "es5/tex-svg-full.js"


def _section(slide: Slide) -> str:
    spec = slide.spec
    heading = "" if spec.kind == "cover" else f"<h2>{slide.title}</h2>\n"
    return (f'<section id="s-{spec.id}" class="slide-{spec.kind}" data-slide="{spec.id}" '
            f'data-section="{spec.section}" data-minutes="{spec.minutes:g}">\n'
            f'<div class="frame">\n{heading}{slide.body}\n</div>\n'
            f'<aside class="notes">\n{slide.notes}\n</aside>\n</section>')


def deck_page(title: str, slides: list[Slide]) -> str:
    template = string.Template((ASSETS / "deck.html").read_text(encoding="utf-8"))
    return template.substitute(title=html.escape(title), title_attribute=html.escape(title, quote=True),
                               sections="\n".join(_section(slide) for slide in slides))


def libraries_missing() -> str | None:
    """What is missing of reveal.js and MathJax, and how to get them; None when both are there."""
    missing = [f"{name} ({PACKAGES[name].folder})" for name in ("reveal.js", "mathjax") if not PACKAGES[name].ready]
    if missing:
        return (f"{' and '.join(missing)} missing: run `make book-setup` (book/setup.sh fetches them from the npm "
                "registry; it needs npm)")
    return None


def copy_libraries(out: Path) -> None:
    """reveal.js (its dist files), MathJax and the course's stylesheet and script into ``out/lib/``."""
    missing = libraries_missing()
    if missing:
        raise DeckError(missing)
    reveal, mathjax, lib = PACKAGES["reveal.js"].folder, PACKAGES["mathjax"].folder, out / "lib"
    for part in REVEAL_PARTS:
        destination = lib / "reveal" / part
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(reveal / "dist" / part, destination)
    shutil.copyfile(reveal / "LICENSE", lib / "reveal" / "LICENSE")
    (lib / "mathjax").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mathjax / MATHJAX_PART, lib / "mathjax" / Path(MATHJAX_PART).name)
    if (mathjax / "LICENSE").exists():
        shutil.copyfile(mathjax / "LICENSE", lib / "mathjax" / "LICENSE")
    shutil.copyfile(ASSETS / "slides.css", lib / "posenc-slides.css")
    shutil.copyfile(ASSETS / "deck.js", lib / "posenc-slides.js")
