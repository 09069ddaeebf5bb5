"""The slide decks' descriptions (book/slides/chNN.yml) against the chapters, without a built book.

A deck selects the chapter's content by cell id, figure name and words of a Mistake message; these tests fail
as soon as one of them no longer exists (a cell deleted or re-identified, a figure renamed, a message
reworded), and when a chapter of the toc has no deck. The decks as a lecturer sees them are tested in
tests/browser/test_slides.py.
"""

from __future__ import annotations

import copy
import re

import nbformat
import pytest

from posenc.book import slides
from posenc.exercises.authoring import toc_notebooks

DECK_FILES = slides.deck_files()


def chapter_of(deck: slides.Deck, notebook=None, executed=None) -> slides.Chapter:
    notebook = notebook if notebook is not None else nbformat.read(deck.chapter, as_version=4)
    return slides.Chapter(notebook, executed, deck.chapter)


@pytest.fixture(scope="module")
def decks():
    return {path.stem: slides.load_deck(path) for path in DECK_FILES}


def test_every_chapter_of_the_toc_has_a_deck():
    chapters = [path for path in toc_notebooks() if path.parent.name == "notebooks"]
    assert chapters
    missing = []
    for path in chapters:
        number = re.match(r"^(\d\d)_", path.name)
        if number and not (slides.DECKS / f"ch{number[1]}.yml").exists():
            missing.append(f"{path.name}: add book/slides/ch{number[1]}.yml (CONTRIBUTING, 'Adding a chapter')")
    assert not missing, "\n".join(missing)


@pytest.mark.parametrize("path", DECK_FILES, ids=lambda p: p.stem)
def test_every_reference_of_the_deck_exists_in_its_chapter(path):
    deck = slides.load_deck(path)
    assert deck.chapter.exists(), f"{path.name}: {deck.chapter} does not exist"
    assert deck.set_id in path.stem
    built = slides.deck_slides(deck, chapter_of(deck))          # raises DeckError on a missing reference
    assert slides.MIN_SLIDES <= len(built) <= slides.MAX_SLIDES, f"{path.name}: {len(built)} slides"
    assert all(len(re.sub(r"<[^>]+>", "", slide.notes).strip()) >= 20 for slide in built), (
        f"{path.name}: a slide without speaker notes")
    kinds = [slide.kind for slide in built]
    assert kinds[:2] == ["title", "objectives"] and kinds[-2:] == ["summary", "question"], kinds
    assert "misconceptions" in kinds


@pytest.mark.parametrize("path", DECK_FILES, ids=lambda p: p.stem)
def test_every_figure_of_the_deck_has_alt_text_and_a_caption(path):
    deck = slides.load_deck(path)
    chapter = chapter_of(deck)
    names = [name for spec in deck.slides for name in spec.figures]
    assert names, f"{path.name} shows no figure of its chapter"
    for name in names:
        meta = chapter.figures[name].metadata["mystnb"]
        assert meta["image"]["alt"].strip() and meta["figure"]["caption"].strip(), name


def test_a_deleted_cell_stops_the_deck(decks):
    deck = decks["ch05"]
    referenced = deck.slides[0].lead[0]
    notebook = nbformat.read(deck.chapter, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if cell.get("id") != referenced]
    with pytest.raises(slides.DeckError, match=re.escape(repr(referenced))):
        slides.deck_slides(deck, chapter_of(deck, notebook))


def test_a_renamed_figure_stops_the_deck(decks):
    deck = decks["ch02"]
    name = next(name for spec in deck.slides for name in spec.figures)
    notebook = nbformat.read(deck.chapter, as_version=4)
    for cell in notebook.cells:
        figure = (cell.metadata.get("mystnb") or {}).get("figure") or {}
        if figure.get("name") == name:
            figure["name"] = name + "-renamed"
    with pytest.raises(slides.DeckError, match=re.escape(repr(name))):
        slides.deck_slides(deck, chapter_of(deck, notebook))


def test_a_figure_without_alt_text_stops_the_deck(decks, tmp_path):
    deck = decks["ch00"]
    name = next(name for spec in deck.slides for name in spec.figures)
    notebook = nbformat.read(deck.chapter, as_version=4)
    for cell in notebook.cells:
        if ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name") == name:
            cell.metadata["mystnb"]["image"]["alt"] = " "
    with pytest.raises(slides.DeckError, match="alt text"):
        slides.deck_slides(deck, chapter_of(deck, notebook), tmp_path)


def test_a_reworded_mistake_stops_the_deck(decks):
    deck = copy.deepcopy(decks["ch00"])
    deck.misconceptions = ["q1: words that no message of the checks says"]
    with pytest.raises(slides.DeckError, match="no Mistake of ch00 q1"):
        slides.deck_slides(deck, chapter_of(deck))
    deck.misconceptions = ["q99: sqrt"]
    with pytest.raises(slides.DeckError, match="no question 'q99'"):
        slides.deck_slides(deck, chapter_of(deck))


def test_a_cell_of_the_wrong_kind_and_unknown_keys_are_refused(decks, tmp_path):
    deck = copy.deepcopy(decks["ch00"])
    code_cell = next(cell.get("id") for cell in nbformat.read(deck.chapter, as_version=4).cells
                     if cell.cell_type == "code" and cell.get("id"))
    deck.slides[0].lead = [code_cell]
    with pytest.raises(slides.DeckError, match="is a code cell"):
        slides.deck_slides(deck, chapter_of(deck))
    bad = tmp_path / "ch00.yml"
    bad.write_text("chapter: notebooks/00_why_order_matters.ipynb\nquestion: q\nanswer: a\n"
                   "slides:\n  - leed: c00-002\n", encoding="utf-8")
    with pytest.raises(slides.DeckError, match="unknown keys"):
        slides.load_deck(bad)
    bad.write_text("chapter: x\nquestion: q\nanswer: a\nslides:\n  - title: nothing shown\n", encoding="utf-8")
    with pytest.raises(slides.DeckError, match="shows nothing"):
        slides.load_deck(bad)


def test_figures_and_glued_numbers_come_from_the_execution(decks, tmp_path):
    """With an executed notebook, a figure's PNG is written and a glued number is formatted as myst-nb does."""
    deck = decks["ch00"]
    notebook = nbformat.read(deck.chapter, as_version=4)
    executed = copy.deepcopy(notebook)
    name = next(name for spec in deck.slides for name in spec.figures)
    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    glued = {"equivariance_error": "3.3306690738754696e-16"}
    for cell in executed.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = []
        if ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name") == name:
            cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "fig"})]
    first_code = next(cell for cell in executed.cells if cell.cell_type == "code")
    first_code.outputs += [nbformat.v4.new_output(
        "display_data", data={"application/papermill.record/text/plain": value},
        metadata={"scrapbook": {"name": key, "mime_prefix": "application/papermill.record/"}})
        for key, value in glued.items()]
    chapter = chapter_of(deck, notebook, executed)
    assert slides.markdown_inline("{glue:text}`equivariance_error:.1e`", chapter) == "3.3e-16"
    with pytest.raises(slides.DeckError, match="not in the executed chapter"):
        slides.markdown_inline("{glue:text}`no_such_value:.2f`", chapter)
    figure, _ = slides._image(chapter, chapter.figures[name], name, tmp_path, "ch00", "test")
    assert (tmp_path / f"{name}.png").read_bytes().startswith(b"\x89PNG")
    assert f'src="ch00/{name}.png"' in figure and 'alt="' in figure


def test_markdown_of_the_chapters_becomes_slide_html():
    html = slides.markdown_html("A $x^2$ {cite}`vaswani2017attention`, see {numref}`fig-a`.\n\n$$\na = b\n$$\n\n"
                                "```{prf:theorem} Shift\n:label: thm-x\nFor every $k$.\n```\n")
    assert r"\(x^2\)" in html and r"\[a = b\]" in html
    assert "(Vaswani et al., 2017)" in html and "the figure" in html
    assert "Theorem (Shift)" in html and ":label:" not in html and r"\(k\)" in html
    assert slides.display_equations("Text $y$.\n\n$$\nE = mc^2\n$$\n\n```{math}\n:label: e\nz = 1\n```\n") == [
        "E = mc^2", "z = 1"]
    assert slides.first_sentence("## Head\n\nOne step, e.g. this one, is short. Then more.") == (
        "One step, e.g. this one, is short.")
    assert slides.first_sentence("The value $a. b$ holds: see below") == "The value $a. b$ holds: see below"
    assert slides.first_sentence("It is as follows:") == "It is as follows."


def test_the_chapter_page_gets_one_link_to_its_deck(decks, tmp_path):
    deck = decks["ch03"]
    page = tmp_path / f"{slides.chapter_docname(deck)}.html"
    page.parent.mkdir(parents=True)
    page.write_text("<html><body><div class='header'><h1>3. Addition</h1></div><article class='bd-article'>"
                    "<h1>3. Addition<a class='headerlink' href='#x'>#</a></h1><p>Text</p></article></body></html>")
    assert slides.add_chapter_link(tmp_path, deck) and slides.add_chapter_link(tmp_path, deck)
    text = page.read_text()
    assert text.count(slides.LINK_MARK) == 1
    assert 'href="../slides/ch03.html"' in text and 'href="../slides/ch03.pdf"' in text
    assert text.index("#</a></h1>") < text.index(slides.LINK_MARK), "the link belongs under the article's title"
    assert not slides.add_chapter_link(tmp_path / "elsewhere", deck)


def test_deck_page_has_notes_and_local_libraries_only(decks):
    deck = decks["ch01"]
    built = slides.deck_slides(deck, chapter_of(deck))
    page = slides.deck_page("1. Title", built, "../notebooks/x.html")
    assert page.count("<section") == len(built) == page.count('<aside class="notes">')
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and not [s for s in sources if s.startswith(("http:", "https:", "//"))], sources


def test_browser_setup_fetches_the_reveal_and_mathjax_versions_the_decks_copy():
    script = (slides.ROOT / "tests" / "browser" / "setup.sh").read_text(encoding="utf-8")
    assert f"REVEAL_VERSION=${{REVEAL_VERSION:-{slides.REVEAL_VERSION}}}" in script
    assert f"MATHJAX_VERSION=${{MATHJAX_VERSION:-{slides.MATHJAX_VERSION}}}" in script
    assert 'npm_unpack reveal.js "$REVEAL_VERSION"' in script


def test_make_book_builds_the_decks_after_the_site():
    makefile = (slides.ROOT / "Makefile").read_text(encoding="utf-8")
    book = re.search(r"^book:.*?(?=^\S)", makefile, re.M | re.S)[0]
    assert "browser-setup" in book.splitlines()[0]
    assert book.index("jupyter-book build") < book.index("-m posenc.book.slides")
    test = re.search(r"^test:.*?(?=^\S)", makefile, re.M | re.S)[0]
    assert test.index("-m posenc.book.slides") < test.index("--dist loadgroup tests/browser")


def test_pdf_pages_counts_page_objects_not_the_page_tree():
    assert slides.pdf_pages(b"<</Type /Pages /Kids [3 0 R 4 0 R]>> <</Type /Page>> <</Type/Page/Parent 2 0 R>>") == 2


def test_decks_are_copied_into_another_build_and_linked_from_its_chapters(tmp_path):
    from posenc.book import slides

    site, student = tmp_path / "html", tmp_path / "student"
    (site / "slides").mkdir(parents=True)
    (site / "slides" / "ch00.html").write_text("<html>deck</html>")
    (site / "slides" / "ch00.pdf").write_bytes(b"%PDF")
    page = "<html><body><article><h1>0. Why order matters</h1></article></body></html>"
    (student / "notebooks").mkdir(parents=True)
    (student / "notebooks" / "00_why_order_matters.html").write_text(page)
    assert slides.copy_decks(site, student, log=lambda *_: None) == 1
    assert (student / "slides" / "ch00.pdf").read_bytes() == b"%PDF"
    linked = (student / "notebooks" / "00_why_order_matters.html").read_text()
    assert 'href="../slides/ch00.html"' in linked and 'href="../slides/ch00.pdf"' in linked
    with pytest.raises(slides.DeckError, match="build them first"):
        slides.copy_decks(tmp_path / "nothing", student, log=lambda *_: None)
