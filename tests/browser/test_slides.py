"""Every chapter's slide deck (python -m posenc.book.slides, run by `make book`) as a lecturer projects it.

Each deck is opened in headless Chromium from the built site served locally (reveal.js and MathJax are part of
the site, so nothing comes from the network), at 1280 x 720, slide by slide (``slide_checks.inspect_deck``), and
in reveal.js's print view for axe-core's audit. A bad slide fails a test that names it: content outside the
slide or cut off, text smaller than the body text (figure labels included, at the size the slide shows them),
a figure under half of its slide, a slide whose content is only a number or ends with a colon, a raw label or
citation key, a text cut inside an abbreviation, notes that mention an explorer the deck does not have, minutes
that do not add up to 50, fewer than 12 or more than 25 slides; formulas must typeset, figures load with alt
text, the PDFs have a page per slide (and the notes' PDF two), the chapter page links the deck. ``make screenshots``
photographs every slide and makes a contact sheet per deck in ``test-artifacts/``. ``test_a_bad_deck_fails_every_check`` shows
on a deliberately bad deck that every one of these checks fails when it should.
"""

from __future__ import annotations

import pytest

from posenc.book import slides as slide_decks
from posenc.book.slides import pdf as deck_pdf
from tests.browser import helpers
from tests.browser import slide_checks as checks

DECKS = [path.stem for path in slide_decks.deck_files()]
by_deck = pytest.mark.parametrize("deck", DECKS)
_REPORTS: dict[str, checks.DeckReport] = {}


@pytest.fixture()
def deck_report(browser_context, site, base_url):
    def get(deck: str) -> checks.DeckReport:
        if not (site / "slides" / f"{deck}.html").exists():
            message = f"no deck slides/{deck}.html in {site}: run `make book` (it builds the decks)"
            if helpers.REQUIRE_BROWSER:
                pytest.fail(f"{message} (and POSENC_REQUIRE_BROWSER is set)", pytrace=False)
            pytest.skip(message)
        key = f"{base_url}{deck}"
        if key not in _REPORTS:
            _REPORTS[key] = checks.inspect_deck(browser_context, f"{base_url}slides/{deck}.html", deck,
                                                checks.axe_url(base_url))
        return _REPORTS[key]
    return get


# What a lecturer would have to fix, per deck: each check finds one kind of bad slide (slide_checks.py).
SLIDE_CHECKS = {
    "the lecture's timing (12 to 25 slides, 50 minutes)": checks.timing_problems,
    "content outside the slide at 1280 x 720, clipped, or running into other text": checks.overflow_problems,
    "text smaller than the body text": checks.small_text_problems,
    "a figure or an explorer that covers half of its slide or less": checks.figure_area_problems,
    "a slide that is only a number, or ends with a colon": checks.lone_content_problems,
    "a raw label or citation key": lambda slides: checks.raw_reference_problems(slides, checks.bibliography_keys()),
    "a text cut inside an abbreviation or a parenthesis": checks.cut_lead_problems,
    "notes that mention an explorer the deck does not have": checks.explorer_note_problems,
}


@by_deck
def test_deck_starts_without_errors(deck, deck_report):
    report = deck_report(deck)
    assert report.start_problem is None, f"{deck}: {report.start_problem}"
    assert not report.errors, f"{deck}: " + "\n".join(report.errors)


@by_deck
def test_no_slide_a_lecturer_would_have_to_fix(deck, deck_report):
    """Every check of SLIDE_CHECKS on every slide (one test per deck, so that a deck is opened on one worker)."""
    slides = deck_report(deck).slides
    found = {what: check(slides) for what, check in SLIDE_CHECKS.items()}
    lines = [f"{what}:\n  " + "\n  ".join(problems[:15]) for what, problems in found.items() if problems]
    assert not lines, f"{deck}:\n" + "\n".join(lines)


@by_deck
def test_every_formula_is_typeset(deck, deck_report):
    report = deck_report(deck)
    raw = [s["index"] + 1 for s in report.slides if s["raw"]]
    errors = [e for s in report.slides for e in s["mathErrors"]]
    assert not raw, f"{deck}: TeX left untypeset on slides {raw}"
    assert not errors, f"{deck}: MathJax could not typeset: {errors[:5]}"
    assert sum(s["formulas"] for s in report.slides), f"{deck}: no formula at all on its slides"


@by_deck
def test_every_figure_loads_and_has_alt_text(deck, deck_report):
    images = [(s["index"] + 1, image) for s in deck_report(deck).slides for image in s["images"]]
    assert images, f"{deck}: no figure on any slide"
    broken = [(n, i["src"]) for n, i in images if not i["loaded"]]
    assert not broken, f"{deck}: images that did not load: {broken}"
    missing = [(n, i["src"]) for n, i in images if not (i["alt"] or "").strip()]
    assert not missing, f"{deck}: images without alt text: {missing}"


@by_deck
def test_every_slide_has_speaker_notes(deck, deck_report):
    bare = [f"{s['index'] + 1} ({s['title']})" for s in deck_report(deck).slides if len(s["notes"]) < 20]
    assert not bare, f"{deck}: slides without speaker notes: {bare}"


@by_deck
def test_no_accessibility_violation(deck, deck_report):
    report = deck_report(deck)
    assert report.accessibility_problem is None, report.accessibility_problem
    assert report.print_slides == len(report.slides), (
        f"{deck}: the print view shows {report.print_slides} pages for {len(report.slides)} slides")
    found = checks.audit.failing(report.accessibility)
    assert not found, f"{deck} (print view, every slide):\n" + "\n".join(found)


@by_deck
def test_pdfs_have_a_page_per_slide(deck, site, deck_report):
    slides = len(deck_report(deck).slides)
    for suffix, per_slide in (("", 1), (deck_pdf.NOTES_SUFFIX, 2)):
        pdf = site / "slides" / f"{deck}{suffix}.pdf"
        assert pdf.exists(), f"{pdf} is missing: make book prints it (python -m posenc.book.slides)"
        pages = deck_pdf.pdf_pages(pdf.read_bytes())
        assert pages >= per_slide * slides, f"{pdf.name} has {pages} pages for {slides} slides"


@by_deck
def test_chapter_page_links_to_its_deck(deck, site):
    description = slide_decks.load_deck(slide_decks.DECKS / f"{deck}.yml")
    page = site / f"{slide_decks.chapter_docname(description)}.html"
    if not page.exists() or not (site / "slides" / f"{deck}.html").exists():
        pytest.skip(f"{page} or its deck is not built")
    text = page.read_text(encoding="utf-8")
    links = helpers.anchors_of(text[text.find("<article"):]).hrefs
    for target in (f"../slides/{deck}.html", f"../slides/{deck}.pdf", f"../slides/{deck}-notes.pdf"):
        assert target in links, f"{page.name} does not link to {target} in its article"


# ---------------------------------------------------------------------------------------------------
# A deliberately bad deck: every check above must find its defect, on the slide that has it.

BAD_SLIDES = [
    # (id, kind, minutes, body HTML, notes) -- the checks that must name the slide are in BAD_FINDINGS
    ("cover", "cover", 2, "<h1>A bad deck</h1>", "Notes long enough to count as notes."),
    ("overflow", "bullets", 3, '<ul class="bullets">' + "<li>A bullet far too long for one slide</li>" * 14
     + "</ul>", "Notes long enough to count as notes."),
    ("crowded", "bullets", 3, '<p>A first paragraph that the next one runs into.</p>'
     '<p style="margin-top: -30px">The second paragraph, pulled over the first.</p>',
     "Notes long enough to count as notes."),
    ("tiny", "bullets", 3, '<p style="font-size: 14px">Fine print nobody at the back can read.</p>',
     "Notes long enough to count as notes."),
    ("small-figure", "figure", 3, '<figure class="slide-figure"><img src="bad/figure.png" alt="A plot." '
     'style="max-width: 30%; max-height: 40%" data-min-font="0.04"></figure>', "Notes long enough to count."),
    ("tiny-labels", "figure", 3, '<figure class="slide-figure"><img src="bad/figure.png" alt="A plot." '
     'data-min-font="0.01"></figure>', "Notes long enough to count as notes."),
    ("lone-number", "bullets", 3, "<p>720</p>", "Notes long enough to count as notes."),
    ("colon", "bullets", 3, "<p>Each statement below is one of the directions:</p>",
     "Notes long enough to count as notes."),
    ("raw-label", "bullets", 3, "<p>As the theorem (thm-relative-shift) says, see press2022alibi.</p>",
     "Notes long enough to count as notes."),
    ("cut-lead", "bullets", 3, "<p>Position interpolation and YaRN (Peng et al.</p>",
     "Notes long enough to count as notes."),
    ("explorer-notes", "bullets", 3, "<p>A plain slide with a sound claim on it, and a formula \\(x^2\\).</p>",
     "Press s; the explorer near the end runs live."),
]
BAD_FINDINGS = {           # the bad slide -> the check that must name it
    "overflow": SLIDE_CHECKS["content outside the slide at 1280 x 720, clipped, or running into other text"],
    "crowded": SLIDE_CHECKS["content outside the slide at 1280 x 720, clipped, or running into other text"],
    "tiny": SLIDE_CHECKS["text smaller than the body text"],
    "small-figure": SLIDE_CHECKS["a figure or an explorer that covers half of its slide or less"],
    "tiny-labels": SLIDE_CHECKS["text smaller than the body text"],
    "lone-number": SLIDE_CHECKS["a slide that is only a number, or ends with a colon"],
    "colon": SLIDE_CHECKS["a slide that is only a number, or ends with a colon"],
    "raw-label": SLIDE_CHECKS["a raw label or citation key"],
    "cut-lead": SLIDE_CHECKS["a text cut inside an abbreviation or a parenthesis"],
    "explorer-notes": SLIDE_CHECKS["notes that mention an explorer the deck does not have"],
}


def _bad_deck(folder):
    from PIL import Image

    from posenc.book.slides.assemble import Slide
    from posenc.book.slides.page import copy_libraries
    from posenc.book.slides.spec import SlideSpec

    copy_libraries(folder)
    (folder / "bad").mkdir(exist_ok=True)
    Image.new("RGB", (1280, 720), (200, 220, 240)).save(folder / "bad" / "figure.png")
    built = [Slide(SlideSpec(id=slide_id, section="bad", kind=kind, shows=None, title=f"Slide {slide_id}",
                             minutes=minutes, say=""), f"Slide {slide_id}", body, f"<p>{notes}</p>")
             for slide_id, kind, minutes, body, notes in BAD_SLIDES]
    (folder / "bad.html").write_text(slide_decks.deck_page("A bad deck", built), encoding="utf-8")


def test_a_bad_deck_fails_every_check(browser_context, scratch_url):
    folder, url = scratch_url
    _bad_deck(folder)
    report = checks.inspect_deck(browser_context, f"{url}bad.html", "bad-deck")
    assert report.start_problem is None and len(report.slides) == len(BAD_SLIDES), report.start_problem
    for slide_id, check in BAD_FINDINGS.items():
        found = check(report.slides)
        assert any(f"({slide_id})" in line for line in found), f"{check.__name__} missed slide {slide_id}: {found}"
    good = [s for s in report.slides if s["id"] == "cover"]
    for check in set(BAD_FINDINGS.values()) - {checks.explorer_note_problems}:
        assert not check(good), f"{check} finds a problem on the good cover slide: {check(good)}"
    timing = SLIDE_CHECKS["the lecture's timing (12 to 25 slides, 50 minutes)"](report.slides)
    total = sum(minutes for _, _, minutes, _, _ in BAD_SLIDES)
    assert any(f"add up to {total}," in line for line in timing), timing
    assert any(f"{len(BAD_SLIDES)} slides" in line for line in timing), timing


TINY_EXPLORER = (  # an explorer laid out for the page: its labels stay small (9 units in its SVG, over what deck.js
    #               sets, 8 px on its canvas) and, with no main picture, its pictures fill a narrow column
    '<div class="explorer"><div class="posenc-explorer">'
    '<svg viewBox="0 0 400 200" width="400" height="200" role="img"><title>A plot</title>'
    '<text x="10" y="40" style="font-size: 9px !important">an axis label drawn at 9 units</text></svg>'
    '<canvas width="400" height="200" data-label-px="8" data-drawn-width="400" style="width: 400px" role="img" '
    'aria-label="A heatmap"></canvas></div></div>')


def test_an_explorer_with_small_labels_and_pictures_is_found(browser_context, scratch_url):
    from posenc.book.slides.assemble import Slide
    from posenc.book.slides.page import copy_libraries
    from posenc.book.slides.spec import SlideSpec

    folder, url = scratch_url
    copy_libraries(folder)
    slide = Slide(SlideSpec(id="tiny-explorer", section="bad", kind="explorer", shows=None, title="Tiny labels",
                            minutes=3, say=""), "Tiny labels", TINY_EXPLORER, "<p>Notes long enough to count.</p>")
    (folder / "bad-explorer.html").write_text(slide_decks.deck_page("A bad explorer", [slide]), encoding="utf-8")
    report = checks.inspect_deck(browser_context, f"{url}bad-explorer.html", "bad-explorer")
    found = SLIDE_CHECKS["text smaller than the body text"](report.slides)
    assert any("text" in line and "an axis label" in line for line in found), found
    assert any("canvas" in line and "labels at" in line for line in found), found
    small = SLIDE_CHECKS["a figure or an explorer that covers half of its slide or less"](report.slides)
    assert any("(tiny-explorer): the explorer's pictures cover" in line for line in small), small


def _explorer_deck(folder):
    """Every explorer of the course on a slide of its own, as the chapters show them."""
    from posenc.book.explorers import heatmap_explorer, unit_circle_explorer
    from posenc.book.length_explorers import rope_spectrum_explorer
    from posenc.book.relative_explorers import alibi_explorer, t5_bucket_explorer
    from posenc.book.rotary_explorers import rotary_logit_explorer
    from posenc.book.slides.assemble import Slide
    from posenc.book.slides.page import copy_libraries
    from posenc.book.slides.spec import SlideSpec

    copy_libraries(folder)
    explorers = [("heatmap", heatmap_explorer()), ("circle", unit_circle_explorer(shift=4)),
                 ("t5", t5_bucket_explorer()), ("alibi", alibi_explorer()), ("rotary", rotary_logit_explorer()),
                 ("spectrum", rope_spectrum_explorer())]
    built = [Slide(SlideSpec(id=name, section="explorers", kind="explorer", shows=None, title=f"The {name} explorer",
                             minutes=3, say=""), f"The {name} explorer",
                   f'<div class="explorer">{explorer.data}</div>', "<p>Notes long enough to count as notes.</p>")
             for name, explorer in explorers]
    (folder / "explorers.html").write_text(slide_decks.deck_page("Every explorer", built), encoding="utf-8")
    return [name for name, _ in explorers]


def test_every_explorer_on_a_slide_draws_its_labels_at_the_body_size(browser_context, scratch_url):
    """Live plots once took 13-35% of a slide, their axis labels 7-11 px, too small to read. On a slide an
    explorer's main picture fills the left (slides.css; drawn for the slide where the explorer offers
    posencFitSlide) and its labels have the body's size in the picture's own units (deck.js)."""
    folder, url = scratch_url
    names = _explorer_deck(folder)
    report = checks.inspect_deck(browser_context, f"{url}explorers.html", "explorers")
    assert report.start_problem is None and [s["id"] for s in report.slides] == names, report.start_problem
    assert not [e for e in report.errors if "exception" in e], report.errors
    assert checks.small_text_problems(report.slides) == []
    assert checks.overflow_problems(report.slides) == []
    assert checks.figure_area_problems(report.slides) == []       # pattern A: the live plot fills the slide


def test_no_figure_of_a_chapter_collides_with_itself_on_the_page(site):
    """The chapters' figures as the page shows them: no tick label over another (chapter 8's log axis had its
    minor labels over '32 (1L)'), no text cut off; read from the executions the site was built from."""
    from posenc.book.cache import CACHE, executed_notebook
    from posenc.book.slide_figures import SLIDE_FIGURE_MIME

    problems, seen = [], 0
    for path in slide_decks.deck_files():
        chapter = slide_decks.load_deck(path).chapter
        _, executed = executed_notebook(chapter, CACHE)
        if executed is None:
            continue
        for cell in executed.cells:
            for output in cell.get("outputs", []):
                record = (output.get("data") or {}).get(SLIDE_FIGURE_MIME)
                if record and "page_overlaps" in record:
                    seen += 1
                    problems += [f"{chapter.name}, cell {cell.get('id')}: {x}" for x in record["page_overlaps"]]
    if not seen:
        pytest.skip(f"no executions with figure records in {CACHE}: run `make book`")
    assert not problems, "texts that collide in the chapters' figures:\n" + "\n".join(problems)
