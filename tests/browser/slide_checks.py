"""What a slide shows at 1280 x 720, read in the browser, and the checks that find a bad slide in that record.

``inspect_deck`` opens a built deck (any reveal.js page made by ``posenc.book.slides``), walks its slides one by
one and records for each what a lecturer would see: what sticks out or is cut off, the size of every text, the
area and label size of a figure, the visible text, the notes. The ``*_problems`` functions each look for one
kind of bad slide in those records and say, per slide, what they found; ``tests/browser/test_slides.py`` runs
them on every deck of the book, and on a deliberately bad deck to show that each one fails when it should.
With ``make screenshots`` (``POSENC_FULL_SCREENSHOTS``) a screenshot of every slide and a contact sheet of each deck
go to ``test-artifacts/``.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from posenc.book import slides as slide_decks
from tests.browser import audit, helpers
from tests.browser.pageview import _capture

BODY_PX = 28                        # the slides' body text (posenc/book/slides/assets/slides.css)
SLACK = 2                           # px
MIN_FIGURE_AREA = 0.5               # of the slide, on a figure slide
ABBREVIATIONS = ("et al.", "e.g.", "i.e.", "cf.", "vs.", "Fig.", "Eq.", "Sec.", "resp.", "approx.")
RAW_REFERENCE = re.compile(r"\{(?:cite|numref|ref|eq|glue|prf:ref|doc)[^}]*\}|`[^`]+`"
                           r"|\((?:thm|fig|eq|sec|tbl|ex|lem|def)-[\w-]+\)|\b(?:thm|fig|eq|sec|tbl|lem|def)-[a-z0-9]+(?:-[a-z0-9]+)+\b|\?\?")
LONE_NUMBER = re.compile(r"^[\s\d.,:;%×x±eE+\-−–()]*\d[\s\d.,:;%×x±eE+\-−–()]*$")

# One slide as shown: its place, kind, minutes; what sticks out or is clipped; texts smaller than the body;
# the figure's area and its smallest label in slide pixels; visible texts; formulas; images; notes.
_SLIDE = r"""
async ([index, slack, body]) => {
  Reveal.slide(index, 0);
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  const section = Reveal.getCurrentSlide();
  const frame = section.querySelector(".frame") || section;
  const slide = document.querySelector(".reveal .slides").getBoundingClientRect();
  const box = frame.getBoundingClientRect();
  const scale = box.width / 1280;
  const describe = (el) => {
    let name = el.tagName.toLowerCase();
    if (el.id) name += "#" + el.id;
    if (el.classList.length) name += "." + Array.from(el.classList).slice(0, 2).join(".");
    const text = (el.textContent || el.getAttribute("alt") || "").replace(/\s+/g, " ").trim().slice(0, 50);
    return text ? `${name} "${text}"` : name;
  };
  const shown = (el) => {
    const style = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    return style.display !== "none" && style.visibility !== "hidden" && r.width > 0 && r.height > 0;
  };
  const outside = [], clipped = [], small = [];
  for (const el of frame.querySelectorAll("*")) {
    if (el.closest("mjx-assistive-mml")) continue;
    if (el.parentElement && el.parentElement.closest("mjx-container")) continue;
    if (!shown(el)) continue;
    const style = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    const out = Math.max(slide.left - r.left, r.right - slide.right, slide.top - r.top, r.bottom - slide.bottom,
                         box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom) / scale;
    if (out > slack) outside.push(`${describe(el)} ${Math.round(out)} px outside the slide`);
    if ((style.overflowX === "hidden" || style.overflowX === "clip") && el.scrollWidth > el.clientWidth + slack)
      clipped.push(`${describe(el)}: ${el.scrollWidth - el.clientWidth} px cut off sideways`);
    if ((style.overflowY === "hidden" || style.overflowY === "clip") && el.scrollHeight > el.clientHeight + slack
        && el.clientHeight > 2)
      clipped.push(`${describe(el)}: ${el.scrollHeight - el.clientHeight} px cut off below`);
    const ownText = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    // A text an SVG draws (an explorer's axis labels) at the size the slide shows it: its font size in the
    // SVG's units times the SVG's scale; HTML text at its CSS size.
    const ctm = el.closest("svg") && el.getScreenCTM ? el.getScreenCTM() : null;
    const size = parseFloat(style.fontSize) * (ctm ? Math.hypot(ctm.a, ctm.b) / scale : 1);
    if (ownText && !el.closest("mjx-container") && size < body - 0.5)
      small.push(`${describe(el)} at ${Math.round(size * 10) / 10} px`);
  }
  // What a canvas draws is not in the page: an explorer's canvas says its labels' size in its own pixels
  // (data-label-px) and the width it drew (data-drawn-width); shown on the slide they scale with the canvas.
  for (const canvas of frame.querySelectorAll("canvas[data-label-px]")) {
    if (!shown(canvas)) continue;
    const drawnWidth = parseFloat(canvas.dataset.drawnWidth || canvas.width);
    const size = parseFloat(canvas.dataset.labelPx) * canvas.getBoundingClientRect().width / scale / drawnWidth;
    if (size < body - 0.5) small.push(`${describe(canvas)}'s labels at ${Math.round(size * 10) / 10} px`);
  }
  // The share of the slide an explorer's pictures (its SVGs and canvases) take.
  const pictures = Array.from(frame.querySelectorAll(".explorer svg, .explorer canvas")).filter(el =>
    shown(el) && !el.parentElement.closest("svg"));
  const explorerArea = pictures.length ? pictures.reduce((sum, el) => {
    const r = el.getBoundingClientRect();
    return sum + r.width * r.height;
  }, 0) / (box.width * box.height) : null;
  // Texts that run into each other (a caption pushed over the next paragraph by a full flex box).
  const overlapping = [];
  const texts = Array.from(frame.querySelectorAll("h1, h2, p, li, label, output, td, th, figcaption, svg text")).filter(el =>
    shown(el) && el.textContent.trim() && !el.closest("mjx-container"));
  for (let a = 0; a < texts.length; a++) {
    for (let b = a + 1; b < texts.length; b++) {
      if (texts[a].contains(texts[b]) || texts[b].contains(texts[a])) continue;
      const ra = texts[a].getBoundingClientRect(), rb = texts[b].getBoundingClientRect();
      const w = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const h = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (w > slack * scale && h > slack * scale)
        overlapping.push(`${describe(texts[a])} runs into ${describe(texts[b])}`);
    }
  }
  let figure = null;
  const img = frame.querySelector("figure img");
  if (img && img.naturalWidth) {
    const r = img.getBoundingClientRect();
    const ratio = img.naturalWidth / img.naturalHeight;
    const width = Math.min(r.width, r.height * ratio), height = width / ratio;     // object-fit: contain
    const minFont = parseFloat(img.dataset.minFont || "NaN");
    figure = {area: (width * height) / (box.width * box.height), height: height / scale,
              label: Number.isNaN(minFont) ? null : minFont * height / scale};
  }
  const copy = frame.cloneNode(true);
  copy.querySelectorAll("mjx-container, script, style, pre, h2").forEach(n => n.replaceWith(" ∎ "));
  const blocks = Array.from(frame.querySelectorAll("p, li, td, th, h1, h2, figcaption")).filter(shown).map(el => {
    const c = el.cloneNode(true);
    c.querySelectorAll("mjx-container").forEach(n => n.replaceWith(" ∎ "));
    return c.textContent.replace(/\s+/g, " ").trim();
  }).filter(Boolean);
  const rawCopy = frame.cloneNode(true);
  rawCopy.querySelectorAll("mjx-container, script, style, pre").forEach(n => n.remove());
  const notes = section.querySelector("aside.notes");
  return {
    index, id: section.dataset.slide || section.id, kind: Array.from(section.classList).find(c => c.startsWith("slide-")) || "",
    minutes: parseFloat(section.dataset.minutes || "NaN"),
    title: (frame.querySelector("h1, h2") || {textContent: ""}).textContent.trim(),
    outside, clipped, overlapping, small, figure, blocks, explorerArea,
    body: copy.textContent.replace(/\s+/g, " ").replace(/∎/g, "").trim(),
    hasFormula: frame.querySelectorAll("mjx-container").length > 0,
    raw: (rawCopy.textContent.match(/\\\(|\\\[|\$\$/g) || []).length,
    formulas: frame.querySelectorAll("mjx-container").length,
    mathErrors: Array.from(frame.querySelectorAll("mjx-merror")).map(e => e.getAttribute("data-mjx-error") || e.textContent),
    images: Array.from(frame.querySelectorAll("img")).map(img => ({
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
    start_problem: str | None = None
    accessibility: list[dict] = field(default_factory=list)
    accessibility_problem: str | None = None
    print_slides: int = 0


def _open(context, url: str, report: DeckReport):
    tab = context.new_page()
    tab.on("console", lambda m: report.errors.append(f"console: {m.text}") if m.type == "error" else None)
    tab.on("pageerror", lambda e: report.errors.append(f"exception: {e}"))
    tab.set_viewport_size({"width": slide_decks.WIDTH, "height": slide_decks.HEIGHT})
    tab.goto(url, wait_until="load")
    try:
        tab.wait_for_function("() => document.body.dataset.fitted === 'yes'", timeout=30_000)
    except Exception as exc:  # noqa: BLE001 - reported by the math test
        report.start_problem = f"reveal.js or MathJax did not start: {str(exc).splitlines()[0]}"
    return tab


def contact_sheet(images: list[Path], target: Path, columns: int = 4, width: int = 320) -> None:
    """The slides' screenshots side by side, in reading order, on one PNG."""
    from PIL import Image

    if not images:
        return
    thumbs = []
    for path in images:
        with Image.open(path) as image:
            thumbs.append(image.convert("RGB").resize((width, round(width * image.height / image.width))))
    height = max(thumb.height for thumb in thumbs)
    rows = (len(thumbs) + columns - 1) // columns
    sheet = Image.new("RGB", (columns * (width + 8) + 8, rows * (height + 8) + 8), (90, 90, 90))
    for number, thumb in enumerate(thumbs):
        sheet.paste(thumb, (8 + (number % columns) * (width + 8), 8 + (number // columns) * (height + 8)))
    target.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(target)


def inspect_deck(context, url: str, name: str, axe_url: str | None = None) -> DeckReport:
    """Every slide of the deck at ``url`` as shown at 1280 x 720, then the print view (``?print-pdf``, every
    slide at once) for axe-core's audit. With ``make screenshots`` (``helpers.FULL_SCREENSHOTS``) every slide
    is photographed too, and a contact sheet named after ``name`` made."""
    report = DeckReport(url)
    folder, sheet = helpers.SCREENSHOTS / "slides", helpers.ARTIFACTS / "slides" / f"{name}-contact-sheet.png"
    if not helpers.FULL_SCREENSHOTS:            # an earlier make screenshots' pictures would be out of date
        for old in [*folder.glob(f"{name}-[0-9][0-9].png"), sheet]:
            old.unlink(missing_ok=True)
    else:
        folder.mkdir(parents=True, exist_ok=True)
    tab = _open(context, url, report)
    shots = []
    try:
        total = tab.evaluate("() => Reveal.getTotalSlides()")
        for index in range(total):
            report.slides.append(tab.evaluate(_SLIDE, [index, SLACK, BODY_PX]))
            if helpers.FULL_SCREENSHOTS:
                shots.append(folder / f"{name}-{index + 1:02d}.png")
                _capture(tab, shots[-1], full_page=False)
    finally:
        tab.close()
    contact_sheet(shots, sheet)
    if axe_url:
        tab = _open(context, f"{url}?print-pdf", report)
        try:
            tab.wait_for_function("() => document.querySelectorAll('.pdf-page').length > 0", timeout=15_000)
            report.print_slides = tab.evaluate("() => document.querySelectorAll('.pdf-page').length")
            report.accessibility, report.accessibility_problem = audit.accessibility(tab, axe_url)
        finally:
            tab.close()
    return report


def axe_url(base_url: str) -> str:
    return urllib.parse.urljoin(base_url, f"{helpers.AXE_MOUNT}axe.min.js")


# ---------------------------------------------------------------------------------------------------
# The checks: each returns one line per problem, naming the slide


def _where(slide: dict) -> str:
    return f"slide {slide['index'] + 1} ({slide['id'] or slide['title'][:40]})"


def overflow_problems(slides: list[dict]) -> list[str]:
    """Content outside the slide, cut off by a box, or running into other text."""
    return [f"{_where(s)}: {item}" for s in slides for item in s["outside"] + s["clipped"] + s["overlapping"]]


def small_text_problems(slides: list[dict], body: float = BODY_PX) -> list[str]:
    """Text smaller than the body text, and figure labels smaller than it at the size the slide shows them."""
    found = [f"{_where(s)}: {item}, below the body's {body:g} px" for s in slides for item in s["small"]]
    for s in slides:
        label = (s["figure"] or {}).get("label")
        if label is not None and label < body - 0.5:
            found.append(f"{_where(s)}: the figure's smallest label is {label:.1f} px, below the body's {body:g} px")
    return found


def figure_area_problems(slides: list[dict], share: float = MIN_FIGURE_AREA) -> list[str]:
    """A figure slide whose figure, or an explorer slide whose live pictures, cover half the slide or less."""
    found = []
    for s in slides:
        if s["kind"] == "slide-figure":
            area, what = (s["figure"] or {}).get("area"), "the figure"
        elif s["kind"] == "slide-explorer":
            area, what = s["explorerArea"], "the explorer's pictures"
        else:
            continue
        if area is None:
            found.append(f"{_where(s)}: a {s['kind'][6:]} slide with no picture shown")
        elif area <= share:
            found.append(f"{_where(s)}: {what} cover {area:.0%} of the slide, not more than {share:.0%}")
    return found


def lone_content_problems(slides: list[dict]) -> list[str]:
    """A slide whose content (below its title) is only a number, or whose text ends with a colon."""
    found = []
    for s in slides:
        if s["kind"] in ("slide-figure", "slide-explorer", "slide-cover"):
            continue
        body = s["body"]
        if body and LONE_NUMBER.match(body) and not s["hasFormula"]:
            found.append(f"{_where(s)}: its only content is the number {body!r}")
        texts = [b for b in s["blocks"] if b != s["title"]]
        if texts and texts[-1].rstrip().endswith(":"):
            found.append(f"{_where(s)}: it ends with a sentence that leads to nothing: {texts[-1][-60:]!r}")
    return found


def raw_reference_problems(slides: list[dict], keys: set[str]) -> list[str]:
    """Labels, roles, citation keys and unresolved references left as text."""
    found = []
    for s in slides:
        text = " ".join(s["blocks"])
        for match in RAW_REFERENCE.finditer(text):
            found.append(f"{_where(s)}: raw reference {match[0]!r}")
        found += [f"{_where(s)}: raw citation key {key!r}" for key in sorted(keys)
                  if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text)]
    return found


def cut_lead_problems(slides: list[dict]) -> list[str]:
    """A text cut off inside an abbreviation ("Peng et al.") or inside a parenthesis."""
    found = []
    for s in slides:
        for block in s["blocks"]:
            if block.endswith(ABBREVIATIONS):
                found.append(f"{_where(s)}: cut inside an abbreviation: ...{block[-50:]!r}")
            if block.count("(") != block.count(")"):
                found.append(f"{_where(s)}: an unclosed parenthesis: {block[-60:]!r}")
    return found


def explorer_note_problems(slides: list[dict]) -> list[str]:
    """Notes that send the lecturer to an explorer the deck does not have."""
    if any(s["kind"] == "slide-explorer" for s in slides):
        return []
    return [f"{_where(s)}: its notes mention an explorer, and the deck has none" for s in slides
            if "explorer" in s["notes"].lower()]


def timing_problems(slides: list[dict]) -> list[str]:
    """Minutes that do not add up to the lecture's, a slide without minutes, too few or too many slides."""
    found = [f"{_where(s)}: no minutes in its notes" for s in slides if not s["minutes"] > 0]
    total = sum(s["minutes"] for s in slides if s["minutes"] > 0)
    if abs(total - slide_decks.LECTURE_MINUTES) > 1e-6:
        found.append(f"the minutes add up to {total:g}, not {slide_decks.LECTURE_MINUTES}")
    if not slide_decks.MIN_SLIDES <= len(slides) <= slide_decks.MAX_SLIDES:
        found.append(f"{len(slides)} slides; a lecture has {slide_decks.MIN_SLIDES} to {slide_decks.MAX_SLIDES}")
    return found


def bibliography_keys() -> set[str]:
    """The keys of book/references.bib that cannot be words of a sentence (author, year, word)."""
    from posenc.book.slides.render import _entries

    return {key for key in _entries() if re.search(r"\d{4}", key)}
