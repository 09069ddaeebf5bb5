"""The chapters' slide decks: a reveal.js deck, two PDFs and speaker notes for each ``book/slides/chNN.yml``.

    python -m posenc.book.slides                 # what `make book` runs after jupyter-book build
    python -m posenc.book.slides --no-pdf        # the decks only
    python -m posenc.book.slides --check         # only check every deck against the spec and its chapter

A deck is written as slides, in the deck's own file: each slide states one claim as its title and shows one
thing (a figure, an equation with one line of reading, a theorem, at most three bullets, a table, an explorer
or a question for the room), with the minutes it takes and what to say. What it shows of the chapter is named
by stable references and taken from the chapter's execution in jupyter-book's cache, so a deck and its chapter
never disagree: figures by name (drawn for the slide in the same execution, ``posenc.book.slide_figures``),
equations by label or cell id, theorems by label, tables and explorers by cell id, numbers as glued values.
CONTRIBUTING ("Slide decks") describes the format.

The package by job:

* ``spec``: reading ``book/slides/chNN.yml`` and checking the spec's rules (``load_deck``, ``DeckError``);
* ``chapter``: the chapter's cells, figures, equations, theorems, tables and glued values (``Chapter``), its
  execution read through ``posenc.book.cache``;
* ``render``: MyST markdown, citations (pybtex) and cross-references to slide HTML;
* ``assemble``: the slides and their speaker notes (``deck_slides``);
* ``page``: the deck's page from ``assets/`` (template, stylesheet, script) and the libraries beside it;
* ``site``: the links under the chapter pages' titles, the decks copied into the student edition;
* ``pdf``: printing each deck, with and without its notes, by the Chromium of ``posenc.book.browser``;
* ``build``: the command line, ``build`` and ``check``, and ``outline`` for the teaching guide.
"""

from posenc.book.slides.assemble import Slide, deck_slides
from posenc.book.slides.build import HEIGHT, SITE, WIDTH, build, build_decks, check, main, outline
from posenc.book.slides.chapter import Chapter
from posenc.book.slides.page import deck_page
from posenc.book.slides.pdf import pdf_pages
from posenc.book.slides.render import markdown_html, markdown_inline, plain_text
from posenc.book.slides.site import LINK_MARK, add_chapter_link, chapter_docname, copy_decks
from posenc.book.slides.spec import (DECKS, LECTURE_MINUTES, MAX_SLIDES, MIN_SLIDES, Deck, DeckError, Section,
                                     SlideSpec, deck_files, deck_path, load_deck)

__all__ = ["DECKS", "HEIGHT", "LECTURE_MINUTES", "LINK_MARK", "MAX_SLIDES", "MIN_SLIDES", "SITE", "WIDTH", "Chapter",
           "Deck", "DeckError", "Section", "Slide", "SlideSpec", "add_chapter_link", "build", "build_decks",
           "chapter_docname", "check", "copy_decks", "deck_files", "deck_page", "deck_path", "deck_slides",
           "load_deck", "main", "markdown_html", "markdown_inline", "outline", "pdf_pages", "plain_text"]
