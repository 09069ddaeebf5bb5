"""The slide decks (book/slides/chNN.yml) against the spec's rules and their chapters, without a built book.

A deck names what it shows of its chapter by figure name, equation label or cell id, theorem label, table cell,
explorer cell, glued value and words of a Mistake message; these tests fail as soon as one of them no longer
exists, when a deck breaks a rule of the spec (one thing per slide, at most three bullets, minutes adding up to
50, notes with what to say, questions with their answers...), and when a chapter of the toc has no deck. The
decks as a lecturer sees them are tested in tests/browser/test_slides.py; the figures drawn for the slides in
tests/test_slide_figures.py.
"""

from __future__ import annotations

import copy
import re
import textwrap
from dataclasses import replace

import nbformat
import pytest

import posenc.experiments as ex
from posenc.book import slides
from posenc.book.slides import render, spec
from posenc.book.slides.chapter import Table as SlideTable
from posenc.exercises.authoring import toc_notebooks

DECK_FILES = slides.deck_files()
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def chapter_of(deck: slides.Deck, notebook=None, executed=None) -> slides.Chapter:
    notebook = notebook if notebook is not None else nbformat.read(deck.chapter, as_version=4)
    return slides.Chapter(notebook, executed, deck.chapter)


@pytest.fixture(scope="module")
def decks():
    return {path.stem: slides.load_deck(path) for path in DECK_FILES}


def write_deck(tmp_path, body: str, name: str = "ch00.yml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def minimal_deck(slides_yaml: str, filler_minutes: float | None = None) -> str:
    """A deck of chapter 0: a cover, the given slides, twelve fillers (sharing ``filler_minutes``, by default what
    the lecture has left) and a question, so that only the given slides can break a rule."""
    body = textwrap.dedent(slides_yaml)
    used = sum(float(m) for m in re.findall(r"minutes: ([\d.]+)", body))
    share = (filler_minutes if filler_minutes is not None else slides.LECTURE_MINUTES - 2 - used) / 12
    fillers = "".join(f"""
- id: filler-{number}
  title: Filler slide {number}
  bullets: [A bullet]
  minutes: {share}
  say: Something to say.""" for number in range(12))
    cover = "- id: cover\n  cover: true\n  minutes: 1\n  say: Hello."
    question = ("- id: question\n  title: A question\n  question: Why?\n  answer: Because.\n  wrong: [Not so.]\n"
                "  minutes: 1\n  say: Ask it.")
    slides_part = "\n".join([cover, body.strip("\n"), fillers.strip("\n"), question])
    return ("chapter: notebooks/00_why_order_matters.ipynb\nsections:\n  - id: all\n    title: All\n    slides:\n"
            + textwrap.indent(slides_part, "      ") + "\n")


# ---------------------------------------------------------------------------------------------------
# Every deck of the course


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
def test_every_deck_follows_the_spec_and_every_reference_exists(path):
    deck = slides.load_deck(path)                                # raises DeckError on a broken rule
    assert deck.chapter.exists(), f"{path.name}: {deck.chapter} does not exist"
    built = slides.deck_slides(deck, chapter_of(deck))          # raises DeckError on a missing reference
    assert slides.MIN_SLIDES <= len(built) <= slides.MAX_SLIDES
    assert deck.minutes == slides.LECTURE_MINUTES
    kinds = [slide.kind for slide in built]
    assert kinds[0] == "cover" and "question" in kinds and "figure" in kinds, kinds
    assert all(len(re.sub(r"<[^>]+>", "", slide.notes)) >= 40 for slide in built), f"{path.name}: thin notes"


@pytest.mark.parametrize("path", DECK_FILES, ids=lambda p: p.stem)
def test_every_figure_of_the_deck_has_alt_text_and_a_caption(path):
    deck = slides.load_deck(path)
    chapter = chapter_of(deck)
    names = [slide.shows for slide in deck.slides if slide.kind == "figure"]
    assert names, f"{path.name} shows no figure of its chapter"
    for name in names:
        meta = chapter.figures[name].metadata["mystnb"]
        assert meta["image"]["alt"].strip() and meta["figure"]["caption"].strip(), name


def test_decks_give_the_teaching_guide_stable_sections_slides_and_minutes():
    deck = slides.outline("ch05")
    assert [section.id for section in deck.sections][0] == "opening"
    numbers = [slide.number for slide in deck.slides]
    assert numbers == list(range(1, len(numbers) + 1))
    for section in deck.sections:
        assert section.first <= section.last and section.minutes > 0 and section.title
    assert sum(section.minutes for section in deck.sections) == slides.LECTURE_MINUTES
    slide = deck.slide("t5-vs-alibi")
    assert slide.kind == "question" and deck.section(slide.section).first <= slide.number
    with pytest.raises(KeyError, match="no slide"):
        deck.slide("no-such-slide")


# ---------------------------------------------------------------------------------------------------
# A deck that no longer fits its chapter


def test_a_deleted_cell_stops_the_deck(decks):
    deck = decks["ch00"]
    referenced = next(slide.shows for slide in deck.slides if slide.kind == "equation")
    cell_id = re.split(r"[#$]", referenced)[0]
    notebook = nbformat.read(deck.chapter, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if cell.get("id") != cell_id]
    with pytest.raises(slides.DeckError, match=re.escape(repr(cell_id))):
        slides.deck_slides(deck, chapter_of(deck, notebook))


def first_figure(deck):
    """The first figure the deck shows, and the metadata of its cell in a fresh copy of the notebook."""
    name = next(slide.shows for slide in deck.slides if slide.kind == "figure")
    notebook = nbformat.read(deck.chapter, as_version=4)
    cell = next(cell for cell in notebook.cells
                if ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name") == name)
    return name, notebook, cell.metadata["mystnb"]


@pytest.mark.parametrize("set_id", ["ch00", "ch02"])
def test_a_renamed_figure_or_one_without_alt_text_stops_the_deck(decks, set_id):
    deck = decks[set_id]
    name, notebook, meta = first_figure(deck)
    meta["figure"]["name"] = name + "-renamed"
    with pytest.raises(slides.DeckError, match=re.escape(repr(name))):
        slides.deck_slides(deck, chapter_of(deck, notebook))
    name, notebook, meta = first_figure(deck)
    meta["image"]["alt"] = " "
    with pytest.raises(slides.DeckError, match="alt text"):
        slides.deck_slides(deck, chapter_of(deck, notebook))


def test_a_removed_theorem_or_glued_value_stops_the_deck(decks):
    deck = decks["ch06"]
    label = next(slide.shows for slide in deck.slides if slide.kind == "theorem")
    notebook = nbformat.read(deck.chapter, as_version=4)
    for cell in notebook.cells:
        cell.source = cell.source.replace(f":label: {label}", ":label: thm-renamed")
    with pytest.raises(slides.DeckError, match=f"no theorem .* '{label}'"):
        slides.deck_slides(deck, chapter_of(deck, notebook))
    deck = decks["ch02"]
    notebook = nbformat.read(deck.chapter, as_version=4)
    for cell in notebook.cells:
        cell.source = cell.source.replace('"n_checked"', '"n_checked_renamed"').replace(
            "`n_checked:", "`n_checked_renamed:")
    with pytest.raises(slides.DeckError, match="glues no value named 'n_checked'"):
        slides.deck_slides(deck, chapter_of(deck, notebook))


def test_a_reworded_mistake_stops_the_deck(decks):
    deck = copy.deepcopy(decks["ch00"])
    deck.slides[2].mistakes = ["q1: words that no message of the checks says"]
    with pytest.raises(slides.DeckError, match="no Mistake of ch00 q1"):
        slides.deck_slides(deck, chapter_of(deck))
    deck.slides[2].mistakes = ["q99: sqrt"]
    with pytest.raises(slides.DeckError, match="no question 'q99'"):
        slides.deck_slides(deck, chapter_of(deck))


def test_a_cell_of_the_wrong_kind_is_refused(decks):
    deck = copy.deepcopy(decks["ch00"])
    code_cell = next(cell.get("id") for cell in nbformat.read(deck.chapter, as_version=4).cells
                     if cell.cell_type == "code" and cell.get("id"))
    equation = next(slide for slide in deck.slides if slide.kind == "equation")
    equation.shows = code_cell
    with pytest.raises(slides.DeckError, match="is a code cell"):
        slides.deck_slides(deck, chapter_of(deck))


def test_a_number_the_chapter_does_not_state_is_refused(decks):
    deck = copy.deepcopy(decks["ch00"])
    deck.slides[3].say = "The error was 0.000123, as everyone knows."
    with pytest.raises(slides.DeckError, match="types 0.000123"):
        slides.deck_slides(deck, chapter_of(deck))
    deck.slides[3].say = "All 720 orders of six tokens."          # computed: glue it (n_permutations)
    with pytest.raises(slides.DeckError, match="types 720"):
        slides.deck_slides(deck, chapter_of(deck))
    deck.slides[3].say = "Width 16, 6 tokens, {glue:text}`n_permutations` orders."   # stated, small, glued
    slides.deck_slides(deck, chapter_of(deck))


# ---------------------------------------------------------------------------------------------------
# The spec's rules


RULES = {
    "four bullets": ("""
        - id: many
          title: Too much
          bullets: [One, Two, Three, Four]
          minutes: 1
          say: Say it.""", "4 bullets; a slide shows at most 3"),
    "two things": ("""
        - id: two
          title: Two things
          figure: fig-order-attention
          bullets: [One]
          minutes: 1
          say: Say it.""", "exactly one of"),
    "no say": ("""
        - id: quiet
          title: Quiet
          bullets: [One]
          minutes: 1""", "'say' is missing"),
    "no title": ("""
        - id: untitled
          bullets: [One]
          minutes: 1
          say: Say it.""", "'title' is missing"),
    "an equation without its reading": ("""
        - id: bare
          title: A bare equation
          equation: c00-002
          minutes: 1
          say: Say it.""", "needs 'read'"),
    "a question without its answer": ("""
        - id: open
          title: An open question
          question: Why?
          minutes: 1
          say: Ask it.""", "needs its 'answer' and the 'wrong' answers"),
    "an explorer without its demo": ("""
        - id: live
          title: Live
          explorer: c00-010
          minutes: 1
          say: Show it.""", "needs 'demo'"),
    "a demo without a fallback": ("""
        - id: live
          title: Live
          explorer: c00-010
          demo: Move the slider.
          minutes: 1
          say: Show it.""", "needs a 'fallback'"),
    "a long bullet": ("""
        - id: wordy
          title: Wordy
          bullets: [one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen]
          minutes: 1
          say: Say it.""", "the bullet 1 has 15 words"),
    "a dangling colon": ("""
        - id: colon
          title: "Each statement below:"
          bullets: [One]
          minutes: 1
          say: Say it.""", "ends with a colon"),
    "an explorer the deck does not have": ("""
        - id: promise
          title: A promise
          bullets: [One]
          minutes: 1
          say: The explorer near the end runs live.""", "mention an explorer, and the deck has none"),
    "an id used twice": ("""
        - id: cover
          title: Again
          bullets: [One]
          minutes: 1
          say: Say it.""", "slide ids used twice: ['cover']"),
    "a bad id": ("""
        - id: Not A Slug
          title: Bad id
          bullets: [One]
          minutes: 1
          say: Say it.""", "needs an 'id' of lower-case letters"),
    "a rename of two names at once": ("""
        - id: renamed
          title: Renamed
          table: c00-004
          columns: [{"file: a": a, "file: b": b}]
          minutes: 1
          say: Say it.""", "rename one name at a time"),
    "a renamed header ending with a colon": ("""
        - id: renamed
          title: Renamed
          table: c00-004
          columns: [{"file: a": "accuracy:"}]
          minutes: 1
          say: Say it.""", "the table name 1 ends with a colon"),
    "read under bullets": ("""
        - id: read
          title: Read
          bullets: [One]
          read: A line.
          minutes: 1
          say: Say it.""", "'read' belongs to an equation"),
}


@pytest.mark.parametrize("rule", RULES)
def test_a_deck_that_breaks_a_rule_is_refused_with_the_rule_named(rule, tmp_path):
    body, message = RULES[rule]
    with pytest.raises(slides.DeckError, match=re.escape(message)):
        slides.load_deck(write_deck(tmp_path, minimal_deck(body)))


def test_minutes_and_the_number_of_slides_are_checked(tmp_path):
    good = minimal_deck("")
    assert slides.load_deck(write_deck(tmp_path, good)).minutes == pytest.approx(50)
    with pytest.raises(slides.DeckError, match="the minutes add up to 38, not 50"):
        slides.load_deck(write_deck(tmp_path, minimal_deck("", filler_minutes=36)))
    many = "".join(f"""
        - id: extra-{n}
          title: Extra {n}
          bullets: [One]
          minutes: 0.01
          say: Say it.""" for n in range(14))
    with pytest.raises(slides.DeckError, match="28 slides; a 50-minute lecture has 12 to 25"):
        slides.load_deck(write_deck(tmp_path, minimal_deck(many)))
    no_cover = good.replace("cover: true", "title: Not a cover\n        bullets: [One]")
    with pytest.raises(slides.DeckError, match="the first slide is the cover"):
        slides.load_deck(write_deck(tmp_path, no_cover))


def test_unknown_keys_and_bad_yaml_are_refused(tmp_path):
    with pytest.raises(slides.DeckError, match="unknown keys"):
        slides.load_deck(write_deck(tmp_path, minimal_deck("""
            - id: typo
              title: Typo
              bulets: [One]
              bullets: [One]
              minutes: 1
              say: Say it.""")))
    with pytest.raises(slides.DeckError, match="not valid YAML"):
        slides.load_deck(write_deck(tmp_path, "sections: [unclosed\n"))
    with pytest.raises(slides.DeckError, match="'sections' is missing"):
        slides.load_deck(write_deck(tmp_path, "chapter: notebooks/00_why_order_matters.ipynb\n"))


# ---------------------------------------------------------------------------------------------------
# What a slide shows, from the execution


def executed_copy(deck, outputs: dict):
    """The deck's notebook with the given outputs {cell id: [outputs]} and no others."""
    notebook = nbformat.read(deck.chapter, as_version=4)
    executed = copy.deepcopy(notebook)
    for cell in executed.cells:
        if cell.cell_type == "code":
            cell.outputs = outputs.get(cell.get("id"), [])
    return notebook, executed


def glued(name: str, value: str):
    return nbformat.v4.new_output("display_data", data={"application/papermill.record/text/plain": value},
                                  metadata={"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}})


def test_figures_and_glued_numbers_come_from_the_execution(decks, tmp_path):
    from posenc.book.slide_figures import SLIDE_FIGURE_MIME

    deck = decks["ch00"]
    name = next(slide.shows for slide in deck.slides if slide.kind == "figure")
    figure_cell = chapter_of(deck).figures[name].get("id")
    record = {"png": PNG, "width": 1280, "height": 720, "min_font": 0.0494, "overlaps": [], "page_overlaps": []}
    outputs = {figure_cell: [nbformat.v4.new_output("display_data", data={
        "image/png": PNG, "text/plain": "<Figure>", SLIDE_FIGURE_MIME: record})],
        "c00-006": [glued("equivariance_error", "3.3306690738754696e-16")]}
    chapter = chapter_of(deck, *executed_copy(deck, outputs))
    assert slides.markdown_inline("{glue:text}`equivariance_error:.1e`", chapter) == "3.3e-16"
    with pytest.raises(slides.DeckError, match="not in the executed"):
        slides.markdown_inline("{glue:text}`no_such_value:.2f`", chapter)
    figure_slide = next(slide for slide in deck.slides if slide.kind == "figure")
    from posenc.book.slides.assemble import _figure

    image, caption = _figure(chapter, figure_slide, "test", tmp_path, "ch00")
    assert (tmp_path / f"{name}.png").read_bytes().startswith(b"\x89PNG") and caption
    assert f'src="ch00/{name}.png"' in image and 'data-min-font="0.04940"' in image and 'alt="' in image
    record = chapter.outputs[figure_cell][0]["data"][SLIDE_FIGURE_MIME]          # the execution's own copy
    record["overlaps"] = ["'3×10^1' overlaps '32 (1L)'"]
    with pytest.raises(slides.DeckError, match="texts that collide.*32 \\(1L\\)"):
        _figure(chapter, figure_slide, "test", tmp_path, "ch00")
    record.pop("png")
    record["error"] = "PicklingError: cannot pickle a lambda"
    with pytest.raises(slides.DeckError, match="could not be drawn for the slide.*PicklingError"):
        _figure(chapter, figure_slide, "test", tmp_path, "ch00")
    del outputs[figure_cell][0]["data"][SLIDE_FIGURE_MIME]
    with pytest.raises(slides.DeckError, match="no slide version .* run `make book`"):
        _figure(chapter_of(deck, *executed_copy(deck, outputs)), figure_slide, "test", tmp_path, "ch00")


def test_tables_come_from_the_cells_output_in_html_markdown_or_columns(decks):
    deck = decks["ch00"]
    html_table = ('<table class="table"><thead><tr><th>method</th><th>n</th><th>value</th></tr></thead><tbody>'
                  "<tr><td>a</td><td>1</td><td>0.5</td></tr><tr><td>a</td><td>2</td><td>0.7</td></tr>"
                  "<tr><td>b</td><td>1</td><td>0.9</td></tr></tbody></table>")
    markdown_table = "| method | value |\n| --- | --- |\n| a | 0.5 |\n| b | 0.9 |\n"
    printed = "encoding        unique   bounded\nraw index          yes        NO\nbinary (16 bits)   yes       yes\n"
    named_rows = ex.Table(["method", "value"], [["a", 0.5], ["b", 0.9]])._repr_html_()    # <th scope="row">a</th>
    outputs = {"c00-004": [nbformat.v4.new_output("display_data", data={"text/html": html_table})],
               "c00-006": [nbformat.v4.new_output("display_data", data={"text/html": named_rows})],
               "c00-010": [nbformat.v4.new_output("display_data", data={"text/markdown": markdown_table})],
               "c00-012": [nbformat.v4.new_output("stream", name="stdout", text=printed)]}
    chapter = chapter_of(deck, *executed_copy(deck, outputs))
    table = chapter.table("c00-004", "test")
    assert table.headers == ["method", "n", "value"] and len(table.rows) == 3 and not table.row_headers
    table_with_named_rows = chapter.table("c00-006", "test")
    assert table_with_named_rows == SlideTable(["method", "value"], [["a", "0.5"], ["b", "0.9"]], True)
    assert not table_with_named_rows.select(["value"], [], "test").row_headers     # (its names left out)
    chosen = table.select(["method", "value"], ["a | 2", "b"], "test")
    assert chosen.headers == ["method", "value"] and chosen.rows == [["a", "0.7"], ["b", "0.9"]]
    with pytest.raises(slides.DeckError, match="2 rows 'a'"):
        table.select([], ["a"], "test")
    with pytest.raises(slides.DeckError, match="no column 'nope'"):
        table.select(["nope"], [], "test")
    assert chapter.table("c00-010", "test").rows == [["a", "0.5"], ["b", "0.9"]]      # (rows named by their first
    assert chapter.table("c00-010", "test").row_headers and chapter.table("c00-012", "test").row_headers  # cell)
    assert chapter.table("c00-012", "test").rows == [["raw index", "yes", "NO"], ["binary (16 bits)", "yes", "yes"]]
    with pytest.raises(slides.DeckError, match="shows no table"):
        chapter.table("c00-016", "test")


def test_a_slide_shows_a_tables_columns_and_rows_under_names_for_the_room(decks, tmp_path):
    """The chapters' tables name their columns for the page ("file: accuracy ..."); a slide picks the columns
    and rows it needs and may show them under names for the room."""
    from posenc.book.slides.assemble import _table

    deck = decks["ch00"]
    html_table = ('<table><thead><tr><th>condition</th><th>file: accuracy</th><th>n</th></tr></thead><tbody>'
                  "<tr><td>(a) sqrt(d) x N(0,1)</td><td>0.9</td><td>3</td></tr>"
                  "<tr><td>(b) plain</td><td>0.5</td><td>4</td></tr></tbody></table>")
    outputs = {"c00-004": [nbformat.v4.new_output("display_data", data={"text/html": html_table})]}
    chapter = chapter_of(deck, *executed_copy(deck, outputs))
    path = write_deck(tmp_path, minimal_deck("""
        - id: renamed
          title: Renamed
          table: c00-004
          columns: [condition, {"file: accuracy": "accuracy, mean ± std"}]
          rows: [{"(a) sqrt(d) x N(0,1)": "(a) √d × N(0, 1)"}, (b) plain]
          minutes: 1
          say: Say it."""))
    spec = slides.load_deck(path).slide("renamed")
    assert spec.columns == ["condition", "file: accuracy"] and spec.rows == ["(a) sqrt(d) x N(0,1)", "(b) plain"]
    shown = _table(chapter, spec, "test")
    assert '<th scope="col">accuracy, mean ± std</th>' in shown and "file:" not in shown, shown
    assert "<td>(a) √d × N(0, 1)</td><td>0.9</td>" in shown and "<td>(b) plain</td>" in shown, shown
    named = ex.Table(["condition", "file: accuracy", "n"], [["(a) sqrt(d) x N(0,1)", 0.9, 3], ["(b) plain", 0.5, 4]])
    outputs = {"c00-004": [nbformat.v4.new_output("display_data", data={"text/html": named._repr_html_()})]}
    shown = _table(chapter_of(deck, *executed_copy(deck, outputs)), spec, "test")
    assert '<th scope="row">(a) √d × N(0, 1)</th><td>0.9</td>' in shown and '<th scope="row">(b) plain</th>' in shown, (
        shown)                                          # the rows' names are their headers, as on the page
    with pytest.raises(slides.DeckError, match="no column 'file: acc'"):
        _table(chapter, replace(spec, columns=["file: acc"]), "test")


def test_equations_and_theorems_are_found_by_label_or_cell(decks):
    chapter = chapter_of(decks["ch02"])
    assert chapter.equation("ch02-002", "test").startswith("p_i(t)")
    assert "PE(t) \\cdot PE(t + k)" in chapter.equation("ch02-039#2", "test")
    assert chapter.equation("ch02-002$1", "test") == "p_i(t)" or chapter.equation("ch02-002$1", "test")
    with pytest.raises(slides.DeckError, match="has 1 display equation"):
        chapter.equation("ch02-002#2", "test")
    theorem = chapter.theorem("thm-relative-shift", "test")
    assert theorem.kind == "theorem" and theorem.name == "Relative shift" and ":label:" not in theorem.body
    html = slides.markdown_html(theorem.body, chapter)
    assert "PE(t + k) = T(k)" in html and "\\[" in html


def test_markdown_citations_and_references_become_text():
    html = slides.markdown_html("A $x^2$ {cite}`vaswani2017attention`, {cite:t}`shaw2018relative` were first;"
                                " see {numref}`fig-a`, {prf:ref}`thm-relative-shift` and {ref}`the proof <sec-x>`.\n\n"
                                "$$\na = b\n$$\n\n```{prf:theorem} Shift\n:label: thm-x\nFor every $k$.\n```\n")
    assert r"\(x^2\)" in html and r"\[a = b\]" in html
    assert "(Vaswani et al., 2017)" in html and "Shaw et al. (2018) were first" in html
    assert "the figure" in html and "the theorem" in html and "the proof" in html
    assert "Theorem (Shift)" in html and ":label:" not in html and r"\(k\)" in html
    assert not re.search(r"thm-|fig-|sec-|\{cite", html)
    assert render.citation("press2022alibi,su2024roformer", textual=False) == "(Press et al., 2022; Su et al., 2024)"
    assert render.citation("okabe2008colorblind", textual=True) == "Okabe and Ito (2008)"
    with pytest.raises(slides.DeckError, match="no entry 'nobody1999'"):
        render.citation("nobody1999", textual=True)


def test_glued_formats_are_checked_without_an_execution(decks):
    chapter = chapter_of(decks["ch00"])
    assert slides.markdown_inline("{glue:text}`equivariance_error:.1e`", chapter) == "…"
    with pytest.raises(slides.DeckError, match="is not a format"):
        slides.markdown_inline("{glue:text}`equivariance_error:.1e}`", chapter)
    with pytest.raises(slides.DeckError, match="glues no value named 'nothing'"):
        slides.markdown_inline("{glue:text}`nothing`", chapter)
    assert chapter.may_glue("worst_permutation_error")
    assert chapter_of(decks["ch03"]).may_glue("acc_add_t2t")            # from f"acc_{key}"


def test_own_words_are_counted_without_formulas_and_roles():
    assert spec.plain("The gap is {glue:text}`gap:.2f` and $a + b = c$.") == "The gap is ▪ and ▪."
    assert spec.numbers("L = 16, 0.95 and 3 heads; T5 and float32 and 2L; 1,000 rows; $10^4$") == ["16", "0.95", "1000"]


# ---------------------------------------------------------------------------------------------------
# The page, the links, the build


def test_the_chapter_page_gets_one_link_to_its_deck_and_pdfs(decks, tmp_path):
    deck = decks["ch03"]
    page = tmp_path / f"{slides.chapter_docname(deck)}.html"
    page.parent.mkdir(parents=True)
    page.write_text("<html><body><div class='header'><h1>3. Addition</h1></div><article class='bd-article'>"
                    "<h1>3. Addition<a class='headerlink' href='#x'>#</a></h1><p>Text</p></article></body></html>")
    assert slides.add_chapter_link(tmp_path, deck) and slides.add_chapter_link(tmp_path, deck)
    text = page.read_text()
    assert text.count(slides.LINK_MARK) == 1
    for href in ("../slides/ch03.html", "../slides/ch03.pdf", "../slides/ch03-notes.pdf"):
        assert f'href="{href}"' in text
    assert text.index("#</a></h1>") < text.index(slides.LINK_MARK), "the link belongs under the article's title"
    assert not slides.add_chapter_link(tmp_path / "elsewhere", deck)


def test_deck_page_has_sections_with_ids_minutes_notes_and_local_files_only(decks):
    deck = decks["ch01"]
    built = slides.deck_slides(deck, chapter_of(deck))
    page = slides.deck_page("1. Title", built)
    assert page.count("<section") == len(built) == page.count('<aside class="notes">') == page.count('class="frame"')
    assert f'id="s-{deck.slides[1].id}"' in page and f'data-minutes="{deck.slides[1].minutes:g}"' in page
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and not [s for s in sources if s.startswith(("http:", "https:", "//"))], sources
    assert "$title" not in page and "$sections" not in page


def test_the_assets_are_files_of_the_package():
    from posenc.book.slides.page import ASSETS

    assert {path.name for path in ASSETS.iterdir()} >= {"deck.html", "deck.js", "slides.css"}
    pyproject = (slides.spec.ROOT / "pyproject.toml").read_text()
    assert '"posenc.book.slides" = ["assets/*"]' in pyproject


def test_one_cache_reader_for_the_book_and_the_decks():
    from posenc.book import cache, execute

    assert execute.CACHE is cache.CACHE
    build_source = (slides.spec.ROOT / "posenc" / "book" / "slides" / "build.py").read_text()
    assert "from posenc.book.cache import" in build_source and "jupyter_cache" not in build_source


def test_pdf_pages_counts_page_objects_not_the_page_tree():
    assert slides.pdf_pages(b"<</Type /Pages /Kids [3 0 R 4 0 R]>> <</Type /Page>> <</Type/Page/Parent 2 0 R>>") == 2


def test_decks_are_copied_into_another_build_and_linked_from_its_chapters(tmp_path):
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


def test_check_is_quick_and_clean(capsys):
    assert slides.check() == 0
    assert "50 minutes" in capsys.readouterr().out


def test_the_decks_table_reader_tells_the_header_row_from_rows_that_begin_with_a_header():
    """Only a first row of header cells is the header; the rows are named only when every one begins with a
    header cell."""
    from posenc.book.slides.chapter import _TableParser

    def read(fragment):
        cells = _TableParser()
        cells.feed(fragment)
        return cells.headers, cells.rows, cells.row_headers

    head = "<tr><th>method</th><th>value</th></tr>"
    assert read(f"<table>{head}<tr><th>a</th><td>1</td></tr><tr><th>b</th><td>2</td></tr></table>") == (
        ["method", "value"], [["a", "1"], ["b", "2"]], True)
    assert read(f"<table>{head}<tr><th>a</th><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>")[2] is False
    assert read(f"<table>{head}<tr><td>a</td><td>1</td></tr><tr><th>b</th><td>2</td></tr></table>")[2] is False
    assert read("<table><tr><td>a</td><th>1</th></tr></table>") == ([], [["a", "1"]], False)
