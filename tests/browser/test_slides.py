"""Every chapter's slide deck (python -m posenc.book.slides, run by `make book`) as a lecturer projects it.

Each deck is opened twice in headless Chromium, from the built site served locally (reveal.js and MathJax are
part of the site, so nothing comes from the network): at 1280 x 720, walking through the slides one by one
(is anything cut off or outside the slide? formulas typeset? figures loaded, with alt text? speaker notes?),
and in reveal.js's print view (``?print-pdf``, every slide at once) for axe-core's audit. A screenshot of every
slide goes to ``test-artifacts/screenshots/slides/``. The PDFs are checked for one page per slide.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field

import pytest

from posenc.book import slides as slide_decks
from tests.browser import audit, helpers
from tests.browser.pageview import _capture

DECKS = [path.stem for path in slide_decks.deck_files()]
by_deck = pytest.mark.parametrize("deck", DECKS)
SLACK = 2          # px

# One slide as shown: what sticks out of the slide or is clipped, its formulas, images and notes.
_SLIDE = r"""
async ([index, slack]) => {
  Reveal.slide(index, 0);
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const section = Reveal.getCurrentSlide();
  const frame = document.querySelector(".reveal .slides").getBoundingClientRect();
  const describe = (el) => {
    let name = el.tagName.toLowerCase();
    if (el.id) name += "#" + el.id;
    if (el.classList.length) name += "." + Array.from(el.classList).slice(0, 2).join(".");
    const text = (el.textContent || el.getAttribute("alt") || "").replace(/\s+/g, " ").trim().slice(0, 50);
    return text ? `${name} "${text}"` : name;
  };
  const outside = [], clipped = [];
  for (const el of section.querySelectorAll("*")) {
    if (el.closest("aside.notes") || el.closest("mjx-assistive-mml")) continue;
    if (el.parentElement && el.parentElement.closest("mjx-container")) continue;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const out = Math.max(frame.left - r.left, r.right - frame.right, frame.top - r.top, r.bottom - frame.bottom);
    if (out > slack) outside.push(`${describe(el)} ${Math.round(out)} px outside the slide`);
    if ((style.overflowX === "hidden" || style.overflowX === "clip") && el.scrollWidth > el.clientWidth + slack)
      clipped.push(`${describe(el)}: ${el.scrollWidth - el.clientWidth} px cut off sideways`);
    if ((style.overflowY === "hidden" || style.overflowY === "clip") && el.scrollHeight > el.clientHeight + slack
        && el.clientHeight > 2)
      clipped.push(`${describe(el)}: ${el.scrollHeight - el.clientHeight} px cut off below`);
  }
  const copy = section.cloneNode(true);
  copy.querySelectorAll("aside.notes, mjx-container, script, style, pre").forEach(n => n.remove());
  const raw = (copy.textContent.match(/\\\(|\\\[|\$\$/g) || []).length;
  const notes = section.querySelector("aside.notes");
  return {
    index, kind: Array.from(section.classList).find(c => c.startsWith("slide-")) || "",
    title: (section.querySelector("h1, h2") || {textContent: ""}).textContent.trim(),
    outside, clipped, raw,
    formulas: section.querySelectorAll("mjx-container").length,
    mathErrors: Array.from(section.querySelectorAll("mjx-merror")).map(e => e.getAttribute("data-mjx-error") || e.textContent),
    images: Array.from(section.querySelectorAll("img")).map(img => ({
      src: img.currentSrc || img.src, alt: img.getAttribute("alt"), loaded: img.complete && img.naturalWidth > 0})),
    notes: notes ? notes.textContent.replace(/\s+/g, " ").trim() : "",
  };
}
"""


@dataclass
class DeckReport:
    url: str
    slides: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    math_problem: str | None = None
    accessibility: list[dict] = field(default_factory=list)
    accessibility_problem: str | None = None
    print_slides: int = 0


_REPORTS: dict[str, DeckReport] = {}


def _open(context, url: str, report: DeckReport):
    tab = context.new_page()
    tab.on("console", lambda m: report.errors.append(f"console: {m.text}") if m.type == "error" else None)
    tab.on("pageerror", lambda e: report.errors.append(f"exception: {e}"))
    tab.set_viewport_size({"width": slide_decks.WIDTH, "height": slide_decks.HEIGHT})
    tab.goto(url, wait_until="load")
    try:
        tab.wait_for_function("() => document.body.dataset.fitted === 'yes'", timeout=15_000)
    except Exception as exc:  # noqa: BLE001 - reported by the math test
        report.math_problem = f"reveal.js or MathJax did not start: {str(exc).splitlines()[0]}"
    return tab


def inspect_deck(context, base_url: str, deck: str) -> DeckReport:
    url = f"{base_url}slides/{deck}.html"
    report = DeckReport(url)
    tab = _open(context, url, report)
    try:
        total = tab.evaluate("() => Reveal.getTotalSlides()")
        folder = helpers.SCREENSHOTS / "slides"
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(total):
            report.slides.append(tab.evaluate(_SLIDE, [index, SLACK]))
            _capture(tab, folder / f"{deck}-{index + 1:02d}.png", full_page=False)
    finally:
        tab.close()
    tab = _open(context, f"{url}?print-pdf", report)
    try:
        tab.wait_for_function("() => document.querySelectorAll('.pdf-page').length > 0", timeout=15_000)
        report.print_slides = tab.evaluate("() => document.querySelectorAll('.pdf-page').length")
        report.accessibility, report.accessibility_problem = audit.accessibility(
            tab, urllib.parse.urljoin(base_url, f"{helpers.AXE_MOUNT}axe.min.js"))
    finally:
        tab.close()
    return report


@pytest.fixture()
def deck_report(browser_context, site, base_url):
    def get(deck: str) -> DeckReport:
        if not (site / "slides" / f"{deck}.html").exists():
            message = f"no deck slides/{deck}.html in {site}: run `make book` (it builds the decks)"
            if helpers.REQUIRE_BROWSER:
                pytest.fail(f"{message} (and POSENC_REQUIRE_BROWSER is set)", pytrace=False)
            pytest.skip(message)
        key = f"{base_url}{deck}"
        if key not in _REPORTS:
            _REPORTS[key] = inspect_deck(browser_context, base_url, deck)
        return _REPORTS[key]
    return get


@by_deck
def test_deck_has_12_to_30_slides_and_no_errors(deck, deck_report):
    report = deck_report(deck)
    assert 12 <= len(report.slides) <= 30, f"{deck}: {len(report.slides)} slides"
    assert not report.errors, f"{deck}: " + "\n".join(report.errors)


@by_deck
def test_no_slide_is_cut_off_at_1280_by_720(deck, deck_report):
    problems = [f"slide {s['index'] + 1} ({s['title']}): {item}" for s in deck_report(deck).slides
                for item in s["outside"] + s["clipped"]]
    assert not problems, f"{deck}: content outside the slide or clipped:\n" + "\n".join(problems[:20])


@by_deck
def test_every_formula_is_typeset(deck, deck_report):
    report = deck_report(deck)
    assert report.math_problem is None, f"{deck}: {report.math_problem}"
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
def test_no_serious_accessibility_violation(deck, deck_report):
    report = deck_report(deck)
    assert report.accessibility_problem is None, report.accessibility_problem
    assert report.print_slides == len(report.slides), (
        f"{deck}: the print view shows {report.print_slides} pages for {len(report.slides)} slides")
    serious = audit.serious(report.accessibility)
    assert not serious, f"{deck} (print view, every slide):\n" + "\n".join(serious)


@by_deck
def test_pdf_has_a_page_per_slide(deck, site, deck_report):
    slides = len(deck_report(deck).slides)
    pdf = site / "slides" / f"{deck}.pdf"
    assert pdf.exists(), f"{pdf} is missing: make book prints it (python -m posenc.book.slides)"
    pages = slide_decks.pdf_pages(pdf.read_bytes())
    assert pages >= slides, f"{deck}.pdf has {pages} pages for {slides} slides"


@by_deck
def test_chapter_page_links_to_its_deck(deck, site):
    description = slide_decks.load_deck(slide_decks.DECKS / f"{deck}.yml")
    page = site / f"{slide_decks.chapter_docname(description)}.html"
    if not page.exists() or not (site / "slides" / f"{deck}.html").exists():
        pytest.skip(f"{page} or its deck is not built")
    text = page.read_text(encoding="utf-8")
    article = text[text.find("<article"):]
    links = helpers.anchors_of(article).hrefs
    assert f"../slides/{deck}.html" in links and f"../slides/{deck}.pdf" in links, (
        f"{page.name} does not link to slides/{deck}.html and its PDF in its article")
    assert (site / "slides" / f"{deck}.html").exists()
