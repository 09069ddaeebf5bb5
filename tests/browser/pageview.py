"""Open one page of the built site as a reader would and record what it shows.

The tests in ``test_pages.py`` then each check one aspect of the record, so a page is loaded once
however many things are checked about it. In that one visit: the page's content, axe-core's audit, the
layout at a laptop's width (1280 px) and at a phone's (390 px), screenshots (first screens; whole pages with
``make screenshots``), the explorers and quizzes driven, then the phone's width again for the layout after
them (both phone layouts are checked) and a screenshot there.
"""

from __future__ import annotations

import base64
import time
import urllib.parse
from dataclasses import dataclass, field

from tests.browser import audit, drive, helpers

# What the page shows, gathered in the browser after MathJax and the quizzes have finished.
_COLLECT = r"""
async () => {
  const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  // Wait for every image (and give lazy ones a chance), at most 8 s.
  const images = Array.from(document.images);
  await Promise.race([
    Promise.all(images.map(img => img.complete ? null : new Promise(done => {
      img.loading = "eager"; img.addEventListener("load", done); img.addEventListener("error", done);
    }))),
    new Promise(done => setTimeout(done, 8000)),
  ]);
  const visibleText = (root) => {
    const copy = root.cloneNode(true);
    copy.querySelectorAll("pre, code, script, style, textarea, mjx-container, mjx-assistive-mml, .highlight, svg")
        .forEach(node => node.remove());
    return copy.textContent;
  };
  const text = visibleText(article);
  const raw = [];
  for (const pattern of [/\$\$/g, /\\\(/g, /\\\)/g, /\\\[/g, /\\\]/g, /\\begin\{/g, /\$\\[A-Za-z]/g]) {
    for (const m of text.matchAll(pattern)) {
      raw.push(text.slice(Math.max(0, m.index - 40), m.index + 40).replace(/\s+/g, " ").trim());
    }
  }
  const maths = Array.from(article.querySelectorAll(".math"));
  const count = (selector) => article.querySelectorAll(selector).length;
  return {
    title: document.title,
    math: {
      total: maths.length,
      unrendered: maths.filter(el => !el.querySelector("mjx-container")).map(el => el.textContent.slice(0, 80)),
      containers: count("mjx-container"),
      errors: Array.from(article.querySelectorAll("mjx-merror")).map(el => el.getAttribute("data-mjx-error") || el.textContent),
      raw: raw,
      mathjax: window.MathJax ? (window.MathJax.version || "configured, not loaded") : null,
    },
    images: images.map(img => ({
      src: img.currentSrc || img.src, alt: img.getAttribute("alt"), loaded: img.complete && img.naturalWidth > 0,
      inArticle: article.contains(img), width: img.naturalWidth,
    })),
    figures: Array.from(article.querySelectorAll("figure")).map(fig => ({
      id: fig.id, caption: (fig.querySelector("figcaption") || {textContent: ""}).textContent.trim(),
    })),
    blocks: {
      proof_total: count(".admonition.proof"),
      by_type: Object.fromEntries(Array.from(article.querySelectorAll(".admonition.proof")).flatMap(
        el => Array.from(el.classList).filter(c => !["proof", "admonition"].includes(c)).slice(0, 1))
        .reduce((acc, c) => acc.set(c, (acc.get(c) || 0) + 1), new Map())),
      exercise: count(".admonition.exercise, .admonition.exercise-start"),
      solution: count(".admonition.solution, .admonition.solution-start, .solution.dropdown"),
    },
    links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
    quizzes: count(".posenc-quiz, div[data-shuffleanswers]"),
    quizzesRendered: count(".Quiz"),
    heatmaps: count(".posenc-heatmap"),
    circles: count(".posenc-circle"),
    launch: Array.from(document.querySelectorAll("a[href]")).map(a => a.href)
      .filter(h => /colab\.research\.google\.com|mybinder\.org|\/v2\/gh\/|_sources\//.test(h)),
  };
}
"""


@dataclass
class PageReport:
    page: helpers.Page
    url: str
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)
    screenshots: list[str] = field(default_factory=list)
    interactions: list[tuple[str, str | None]] = field(default_factory=list)   # (element id, problem)
    interaction_errors: list[str] = field(default_factory=list)              # console errors meanwhile
    accessibility: list[dict] = field(default_factory=list)                  # axe-core's violations
    accessibility_problem: str | None = None                                 # why axe could not run
    layouts: dict[int, dict] = field(default_factory=dict)                   # window width -> audit.layout
    seconds: float = 0.0


def _wait_for_mathjax(page) -> str | None:
    """None when MathJax has finished typesetting the page, else what went wrong."""
    if not page.evaluate("() => document.querySelectorAll('.math').length"):
        return None
    try:
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise",
                               timeout=12_000)
        page.evaluate("() => MathJax.startup.promise")
    except Exception as exc:  # noqa: BLE001 - reported as a finding, not a crash
        return f"MathJax did not start: {str(exc).splitlines()[0]}"
    return None


def _wait_for_quizzes(page) -> None:
    if page.evaluate("() => document.querySelectorAll('.posenc-quiz, div[data-shuffleanswers]').length"):
        try:
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('.posenc-quiz, div[data-shuffleanswers]'))"
                ".every(q => q.querySelector('.Quiz'))", timeout=12_000)
        except Exception:  # noqa: BLE001 - the quiz test reports a quiz that never appeared
            pass


def _capture(page, path, full_page: bool) -> None:
    """A PNG of the page; Chromium's fast encoder through CDP (several times quicker on long pages)."""
    try:
        session = page.context.new_cdp_session(page)
        try:
            size = page.evaluate("() => [document.documentElement.scrollWidth,"
                                 " document.documentElement.scrollHeight]" if full_page
                                 else "() => [window.innerWidth, window.innerHeight]")
            shot = session.send("Page.captureScreenshot", {
                "format": "png", "optimizeForSpeed": True, "captureBeyondViewport": full_page,
                "clip": {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}})
        finally:
            session.detach()
        path.write_bytes(base64.b64decode(shot["data"]))
    except Exception:  # noqa: BLE001 - fall back to Playwright's own (slower) screenshot
        page.screenshot(path=str(path), full_page=full_page)


def _screenshots(page, page_info: helpers.Page) -> list[str]:
    """The page's first screen as a reader sees it (the whole page with POSENC_FULL_SCREENSHOTS, ``make
    screenshots``), and its first screen in the dark theme."""
    helpers.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    light = helpers.SCREENSHOTS / f"{page_info.slug}.png"
    _capture(page, light, full_page=helpers.FULL_SCREENSHOTS)
    page.evaluate("() => { window.scrollTo(0, 0); document.documentElement.dataset.theme = 'dark';"
                  " document.documentElement.dataset.mode = 'dark'; }")
    dark = helpers.SCREENSHOTS / f"{page_info.slug}.dark.png"
    _capture(page, dark, full_page=False)
    page.evaluate("() => { document.documentElement.dataset.theme = 'light';"
                  " document.documentElement.dataset.mode = 'light'; }")
    return [str(light), str(dark)]


def inspect_page(context, base_url: str, page_info: helpers.Page, external, *, full: bool = True,
                 name_prefix: str = "") -> PageReport:
    """Load a page in a fresh tab, wait for it to settle, record what it shows, take screenshots.

    ``full=False`` only audits the page (accessibility, and the layout at both widths): no screenshots, no
    explorers driven. Its findings go to test-artifacts/accessibility/{name_prefix}{slug}.json.
    """
    start = time.perf_counter()
    url = urllib.parse.urljoin(base_url, page_info.html_path)
    report = PageReport(page_info, url)
    page = context.new_page()
    origin = base_url.rstrip("/")
    refused_here: list[str] = []

    def on_console(message):
        if message.type != "error":
            return
        source = (message.location or {}).get("url", "")
        if message.text.startswith("Failed to load resource") and source in external.refused:
            refused_here.append(source)      # an external resource the offline test refused
            return
        report.errors.append(f"console error: {message.text} ({source or 'inline'})")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: report.errors.append(f"uncaught exception: {exc}"))
    page.on("requestfailed", lambda request: report.errors.append(
        f"request failed: {request.url} ({request.failure})") if request.url.startswith(origin) else None)
    page.on("response", lambda response: report.errors.append(
        f"HTTP {response.status} for {response.url}")
        if response.url.startswith(origin) and response.status >= 400 else None)
    try:
        page.goto(url, wait_until="load")
        problem = _wait_for_mathjax(page)
        _wait_for_quizzes(page)
        report.data = page.evaluate(_COLLECT)
        report.data["math"]["problem"] = problem
        report.accessibility, report.accessibility_problem = audit.accessibility(
            page, urllib.parse.urljoin(base_url, f"{helpers.AXE_MOUNT}axe.min.js"))
        report.layouts[audit.WIDE] = audit.layout(page)
        wide = dict(page.viewport_size)
        page.set_viewport_size({"width": audit.PHONE, "height": audit.PHONE_HEIGHT})
        report.layouts[audit.PHONE] = audit.layout(page)           # the page as it loads, on a phone
        if full:
            page.set_viewport_size(wide)
            report.screenshots = _screenshots(page, page_info)
            errors_before = len(report.errors)
            report.interactions = drive.drive_page(page)
            report.interaction_errors = report.errors[errors_before:]
            del report.errors[errors_before:]
            page.set_viewport_size({"width": audit.PHONE, "height": audit.PHONE_HEIGHT})
            report.layouts[audit.PHONE] = audit.merged_layouts(report.layouts[audit.PHONE], audit.layout(page))
            page.evaluate("() => window.scrollTo(0, 0)")           # the quizzes' answers scrolled the page
            phone = helpers.SCREENSHOTS / f"{page_info.slug}.{audit.PHONE}px.png"
            _capture(page, phone, full_page=helpers.FULL_SCREENSHOTS)
            report.screenshots.append(str(phone))
        audit.save(name_prefix + page_info.slug, report.accessibility, report.layouts)
    finally:
        page.close()
    report.refused = sorted(set(refused_here))
    report.seconds = time.perf_counter() - start
    return report
