"""Every page of the table of contents, opened in headless Chromium as a reader sees it.

The pages come from the toc (``POSENC_TOC``); a page listed there but not written yet is skipped.
Screenshots of each page's first screen (light and dark at 1280 px, and at a phone's 390 px; whole pages with
``make screenshots``) go to ``test-artifacts/screenshots/``; every accessibility and layout finding, whatever its weight, to
``test-artifacts/accessibility/``.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from tests.browser import audit, helpers

# Under `pytest -n 2 --dist loadgroup` (make test) every test of a page runs on the same worker, so each
# page is loaded once (conftest.pytest_xdist_make_scheduler).
PAGES = helpers.toc_pages() if helpers.TOC.exists() else []
by_page = pytest.mark.parametrize("page", PAGES, ids=str)

IMAGE_FILE = re.compile(r"\.(png|jpe?g|gif|svg|webp)$", re.I)


@by_page
def test_no_console_errors(page, report_of):
    report = report_of(page)
    assert not report.errors, f"{page}: " + "\n".join(report.errors)


@by_page
def test_every_formula_is_typeset(page, report_of):
    math = report_of(page).data["math"]
    assert math["problem"] is None, (
        f"{page}: {math['problem']}; MathJax is answered from {helpers.MATHJAX_DIR} "
        "(run tests/browser/setup.sh to fetch it)")
    assert not math["unrendered"], f"{page}: formulas left as TeX: {math['unrendered'][:5]}"
    assert not math["errors"], f"{page}: MathJax could not typeset: {math['errors'][:5]}"
    assert not math["raw"], f"{page}: raw TeX delimiters in the text: {math['raw'][:5]}"
    if math["total"]:
        assert math["containers"] >= math["total"]


@by_page
def test_every_image_loads_and_has_alt_text(page, report_of):
    data = report_of(page).data
    broken = [image["src"] for image in data["images"] if not image["loaded"]]
    assert not broken, f"{page}: images that did not load: {broken}"
    for image in data["images"]:
        if not image["inArticle"]:
            continue
        alt = (image["alt"] or "").strip()
        name = urllib.parse.urlsplit(image["src"]).path.rsplit("/", 1)[-1]
        assert alt and not IMAGE_FILE.search(alt) and alt != name, (
            f"{page}: the image {name} has no alt text (got {image['alt']!r}); give the figure cell "
            "the metadata \"mystnb\": {\"image\": {\"alt\": \"...\"}}")
    uncaptioned = [figure["id"] or "(no id)" for figure in data["figures"] if not figure["caption"]]
    assert not uncaptioned, f"{page}: figures without a caption: {uncaptioned}"


@by_page
def test_figures_are_opaque_for_dark_mode(page, report_of, site, base_url):
    """A transparent figure shows its black labels on the dark theme's background; keep a white face."""
    from PIL import Image

    see_through = []
    for image in report_of(page).data["images"]:
        if not image["inArticle"] or not image["src"].startswith(base_url):
            continue
        file = site / urllib.parse.unquote(urllib.parse.urlsplit(image["src"]).path.lstrip("/"))
        if file.suffix.lower() != ".png" or not file.exists():
            continue
        with Image.open(file) as picture:
            if picture.mode in ("RGBA", "LA") or "transparency" in picture.info:
                if picture.convert("RGBA").getchannel("A").getextrema()[0] < 250:
                    see_through.append(file.name)
    assert not see_through, (f"{page}: figures with a transparent background {see_through}; "
                             "save them with a white face (posenc.book.style sets figure.facecolor)")


@by_page
def test_theorem_and_exercise_blocks_are_rendered(page, report_of):
    expected = helpers.block_counts(page.source)
    blocks = report_of(page).data["blocks"]
    proofs = {name.split(":", 1)[1]: n for name, n in expected.items() if name.startswith("prf:")}
    assert blocks["proof_total"] == sum(proofs.values()), (
        f"{page}: the source has {sum(proofs.values())} sphinx-proof blocks {proofs}, "
        f"the page shows {blocks['proof_total']} {blocks['by_type']}")
    for kind, n in proofs.items():
        if kind != "proof":
            assert blocks["by_type"].get(kind, 0) == n, f"{page}: {n} prf:{kind} in the source, page shows {blocks['by_type']}"
    assert blocks["exercise"] == expected.get("exercise", 0), (
        f"{page}: {expected.get('exercise', 0)} exercise blocks in the source, {blocks['exercise']} on the page")
    solutions_hidden = _site_hides_solutions()
    want = 0 if solutions_hidden else expected.get("solution", 0)
    assert blocks["solution"] == want, f"{page}: {want} solution blocks expected, {blocks['solution']} on the page"


def _site_hides_solutions() -> bool:
    config = helpers.CONFIG
    if not config.exists():
        return False
    data = yaml.safe_load(config.read_text()) or {}
    return bool(((data.get("sphinx") or {}).get("config") or {}).get("hide_solutions"))


_STATUS: dict[str, tuple[int, set[str] | None]] = {}


def _fetch(url: str) -> tuple[int, set[str] | None]:
    """HTTP status of a same-site URL and, for an HTML page, the ids it defines (cached)."""
    if url not in _STATUS:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                body = response.read()
                kind = response.headers.get_content_type()
                ids = helpers.anchors_of(body.decode("utf-8", "replace")).ids if kind == "text/html" else None
                _STATUS[url] = (response.status, ids)
        except urllib.error.HTTPError as exc:
            _STATUS[url] = (exc.code, None)
    return _STATUS[url]


@by_page
def test_internal_links_resolve(page, report_of, base_url):
    report = report_of(page)
    broken = []
    for link in sorted(set(report.data["links"])):
        if not link.startswith(base_url):
            continue
        target, _, fragment = link.partition("#")
        status, ids = _fetch(target)
        if status != 200:
            broken.append(f"{link} -> HTTP {status}")
        elif fragment and ids is not None and urllib.parse.unquote(fragment) not in ids:
            broken.append(f"{link} -> no element with id {fragment!r}")
    assert not broken, f"{page}: broken links:\n" + "\n".join(broken)


def _launch_config() -> dict:
    config = helpers.CONFIG
    data = yaml.safe_load(config.read_text()) if config.exists() else {}
    return (data or {}).get("launch_buttons") or {}


@by_page
def test_notebook_pages_offer_download_and_launch_buttons(page, report_of):
    if not page.is_notebook:
        pytest.skip(f"{page} is not a notebook")
    links = report_of(page).data["launch"]
    assert any(link.endswith(f"_sources/{page.docname}.ipynb") for link in links), (
        f"{page}: no download link for the notebook; links found: {links}")
    launch = _launch_config()
    if launch.get("colab_url"):
        assert any("colab.research.google.com" in link and page.docname in link for link in links), \
            f"{page}: no Colab launch button"
    if launch.get("binderhub_url"):
        host = urllib.parse.urlsplit(launch["binderhub_url"]).netloc
        assert any(host in link and page.docname in link for link in links), f"{page}: no Binder launch button"


def assert_accessible(report) -> None:
    assert report.accessibility_problem is None, f"{report.page}: {report.accessibility_problem}"
    found = audit.failing(report.accessibility)
    assert not found, (f"{report.page}: axe-core {helpers.AXE_VERSION} finds accessibility problems (all "
                       "findings: test-artifacts/accessibility/):\n" + "\n".join(found))


def assert_nothing_cut_off(report) -> None:
    found = audit.layout_problems(report.layouts)
    assert not found, (f"{report.page}: content cut off or wider than the page; a wide block must scroll in "
                       "its own box (overflow-x: auto):\n" + "\n".join(found))


@by_page
def test_page_is_accessible(page, report_of):
    assert_accessible(report_of(page))


def test_the_audit_fails_moderate_and_minor_findings_too(new_page, scratch_url, base_url):
    """A page with text outside every landmark (moderate, as the theme's sidebar had) and a table header
    without text (minor, as chapter 4's table had) fails the audit, each finding named."""
    folder, url = scratch_url
    (folder / "unlandmarked.html").write_text(
        '<!DOCTYPE html><html lang="en"><head><title>Outside the landmarks</title></head><body>'
        "<p>Text outside every landmark.</p><main><h1>A page</h1><table><tr><th></th><th>value</th></tr>"
        "<tr><td>seeds</td><td>5</td></tr></table></main></body></html>", encoding="utf-8")
    tab = new_page()
    tab.goto(f"{url}unlandmarked.html", wait_until="load")
    violations, problem = audit.accessibility(tab, urllib.parse.urljoin(base_url, f"{helpers.AXE_MOUNT}axe.min.js"))
    assert problem is None, problem
    found = "\n".join(audit.failing(violations))
    assert "moderate region:" in found and "minor empty-table-header:" in found, found


@by_page
def test_nothing_is_cut_off_at_laptop_and_phone_width(page, report_of):
    report = report_of(page)
    assert set(report.layouts) == {audit.WIDE, audit.PHONE}
    assert_nothing_cut_off(report)


@by_page
def test_screenshots_are_saved(page, report_of):
    report = report_of(page)
    for path in report.screenshots:
        assert Path(path).stat().st_size > 1000, path
    if report.refused:
        print(f"{page}: refused external requests (tests run offline): {report.refused}")


SEARCH_TERM = "rotation"


def test_search_finds_the_pages_that_mention_rotation(site, base_url, new_page):
    mentioning = [p for p in PAGES if (site / p.html_path).exists()
                  and re.search(rf"\b{SEARCH_TERM}", _article_text(site / p.html_path), re.I)]
    if not mentioning:
        pytest.skip(f"no page of this build mentions {SEARCH_TERM!r} yet (the relative-shift chapter will)")
    tab = new_page()
    tab.goto(urllib.parse.urljoin(base_url, f"search.html?q={SEARCH_TERM}"), wait_until="load")
    tab.wait_for_function("() => { const s = document.querySelector('#search-results .search-summary');"
                          " return s && /finished|found/i.test(s.textContent) }", timeout=15_000)
    found = tab.eval_on_selector_all("#search-results ul.search li a", "links => links.map(a => a.href)")
    found_docs = {urllib.parse.urlsplit(link).path.lstrip("/").removesuffix(".html") for link in found}
    assert found, f"searching for {SEARCH_TERM!r} found nothing"
    assert found_docs & {p.docname for p in mentioning}, (
        f"searching for {SEARCH_TERM!r} found {sorted(found_docs)}, none of {[p.docname for p in mentioning]}")
    assert not tab.errors, tab.errors


def _tap(tab, cdp, locator) -> None:
    """A finger's tap on the middle of ``locator``: touch events, and the click the browser makes of them
    (Chromium's touch emulation, switched on for this tab through ``cdp``)."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    point = {"x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2}
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


def _wait_for(tab, condition: str, failure: str) -> None:
    """Wait up to 5 s for the JavaScript ``condition``; fail with ``failure``, not with playwright's timeout."""
    try:
        tab.wait_for_function(f"() => {condition}", timeout=5_000)
    except Exception as error:                          # playwright's TimeoutError
        raise AssertionError(failure) from error


def _tooltip_shown(tab) -> bool:
    return tab.locator(".tooltip.show").count() > 0


def test_the_sidebar_buttons_a_reader_sees_open_and_hide_the_sidebars(base_url, new_page):
    """The buttons in the article's header, which did nothing (pydata-sphinx-theme issue #2451: the themes
    listen on hidden buttons in the top bar; posenc-site.js hands the click on). On a phone each, clicked,
    tapped or pressed with Enter, opens its sidebar as a named dialog; Escape closes it, puts the sidebar back
    and gives the button its focus back, with no tooltip coming up over the header; the tooltip says what the
    button is called, and comes back when the pointer does. A link to a place on the page, followed from the
    dialog with Enter, a click or a tap, closes the dialog, brings its heading to the top and gives it the
    focus (with Enter the theme closed the dialog first and the page stopped short); so do Meta with a click
    (Linux's and Windows' Meta key follows a link in the same tab), links to places whose names hold a '%' or
    escaped UTF-8, and the left dialog's link to the page itself. A link opened in a new tab (Ctrl with a click
    or Enter) leaves the dialog open; a link to another page closes it (else Back could bring the page back
    from the browser's cache with the dialog open). On a wide window the left button hides the sidebar and
    brings it back, with no tooltip left where the button was."""
    url = urllib.parse.urljoin(base_url, "notebooks/02_relative_shift.html")
    tab = new_page()
    cdp = tab.context.new_cdp_session(tab)
    cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1})
    tab.set_viewport_size({"width": audit.PHONE, "height": audit.PHONE_HEIGHT})
    tab.goto(url, wait_until="load")
    is_open = "d => d.open"
    away = (audit.PHONE / 2, audit.PHONE_HEIGHT - 1)   # a place for the pointer off the header's buttons
    press = {"click": lambda target: target.click(), "tap": lambda target: _tap(tab, cdp, target),
             "Enter": lambda target: (target.focus(), tab.keyboard.press("Enter")),
             # (Meta, the Windows or Super key, follows a link in the same tab on Linux; Cmd opens a new one on a Mac)
             "Meta and a click": lambda target: target.click(modifiers=["Meta"])}
    for side, name, label, content in (("primary", "Course", "Site navigation", "nav.bd-docs-nav"),
                                       ("secondary", "On this page", "On this page", "#pst-page-toc-nav")):
        button, dialog = tab.locator(f"button.{side}-toggle.btn"), tab.locator(f"#pst-{side}-sidebar-modal")
        assert button.is_visible(), f"no visible {side} sidebar button at {audit.PHONE} px"
        assert button.get_attribute("aria-label") == label, f"the {side} sidebar's button is not named {label!r}"
        assert button.get_attribute("data-bs-original-title") == label, (       # (what Bootstrap's tooltip shows)
            f"the {side} sidebar button's tooltip does not say {label!r}")
        for how in ("click", "tap", "Enter"):
            press[how](button)
            assert dialog.evaluate(is_open), f"a {how} on the {side} sidebar's button opens nothing"
            assert dialog.get_attribute("aria-label") == name, f"the {side} sidebar's dialog is not named {name!r}"
            assert dialog.locator(content).is_visible(), f"the {side} sidebar's dialog does not show {content}"
            tab.keyboard.press("Escape")
            assert not dialog.evaluate(is_open), f"Escape leaves the {side} sidebar's dialog open"
            assert tab.locator(f"#pst-{side}-sidebar {content}").count() == 1, f"the {side} sidebar is not back"
            assert button.evaluate("b => b === document.activeElement"), f"the {side} button lost the focus"
            tab.mouse.move(*away)                                      # (the pointer moved off the button)
    tab.wait_for_timeout(700)                          # past Bootstrap's 500 ms delay before a tooltip shows
    assert not _tooltip_shown(tab), "a tooltip came up over the header's button when its dialog closed"
    button.click()
    tab.keyboard.press("Escape")                       # the pointer rests on the button as the dialog closes
    tab.wait_for_timeout(700)
    assert not _tooltip_shown(tab), "a tooltip came up under the pointer resting on the button as its dialog closed"
    tab.mouse.move(*away)
    tab.wait_for_timeout(300)                          # (the pointer's leaving turns the tooltip on; then back)
    button.hover()
    _wait_for(tab, "document.querySelector('.tooltip.show')",
              "the tooltip of a button whose dialog has closed does not come back under the pointer")
    tab.mouse.move(*away)
    button.focus()
    tab.keyboard.press("Enter")
    tab.wait_for_timeout(900)                          # open longer than the click keeps the tooltip off
    tab.keyboard.press("Escape")                       # the focus goes back to the button, the pointer stays away
    tab.wait_for_timeout(700)
    assert not _tooltip_shown(tab), "a tooltip came up over the header's button when its dialog closed"
    button.hover()
    _wait_for(tab, "document.querySelector('.tooltip.show')",
              "the tooltip of a button whose dialog stayed open a while does not come back under the pointer")
    button = tab.locator("button.secondary-toggle.btn")
    links = tab.locator("#pst-secondary-sidebar-modal #pst-page-toc-nav a[href^='#']:visible")
    padding = tab.evaluate("() => parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop)")
    opened_in_the_dialog = ("() => document.getElementById('pst-secondary-sidebar-modal')"
                            ".contains(document.activeElement)")             # (the dialog focuses its first link)
    button.click()
    tab.wait_for_function(opened_in_the_dialog)
    for how in ("click", "Enter"):
        try:
            with tab.context.expect_page(timeout=5_000) as new_tab:
                links.first.click(modifiers=["Control"]) if how == "click" else (links.first.focus(),
                                                                                tab.keyboard.press("Control+Enter"))
        except Exception as error:                      # playwright's TimeoutError
            raise AssertionError(f"a link of the dialog opens no new tab with Ctrl and {how}") from error
        new_tab.value.close()
        assert tab.locator("#pst-secondary-sidebar-modal").evaluate(is_open), (
            f"a link opened in a new tab with Ctrl and {how} closes the dialog")
    tab.keyboard.press("Escape")

    def follow_from_the_contents(pick, how: str, followed: str) -> str:
        """Open the page's contents from the top of the page and follow the link ``pick()`` gives (with the
        place it names) with ``how``: the dialog closes and the place's heading, under the header, has the focus."""
        tab.evaluate("() => window.scrollTo(0, 0)")
        button.click()
        tab.wait_for_function(opened_in_the_dialog)
        link, place = pick()
        press[how](link)
        _wait_for(tab, "!document.getElementById('pst-secondary-sidebar-modal').open",
                  f"{followed} leaves the dialog open")
        _wait_for(tab, f"document.getElementById({place!r}).contains(document.activeElement)",
                  f"{followed} does not give its heading the focus")
        top = tab.evaluate(f"() => document.getElementById({place!r}).getBoundingClientRect().top")
        assert abs(top - padding) <= 2, (
            f"{followed} leaves its heading at {top:.0f} px from the top, not under the header ({padding:.0f} px)")
        return place

    def a_middle_link():
        link = links.nth(links.count() // 2)
        return link, link.get_attribute("href")[1:]

    for how in ("Enter", "click", "tap", "Meta and a click"):
        followed = f"a link of the page's contents followed with {how}"
        place = follow_from_the_contents(a_middle_link, how, followed)
        assert tab.evaluate("() => location.hash") == f"#{place}", f"{followed} does not put #{place} in the address"
    # Places whose names hold a '%': the browser finds an id as the link writes it, or with each %XX decoded.
    tab.evaluate("""() => {
        const before = document.querySelector('.bd-article section section');
        const list = document.querySelector('#pst-page-toc-nav ul');
        for (const [id, href] of [['100%-sure', '#100%-sure'], ['x%25y', '#x%25y'], ['caf\u00e9-50%', '#caf\u00e9-50%']]) {
            const section = document.createElement('section');
            section.id = id;
            section.innerHTML = `<h2>Place ${id}</h2><p>${'A paragraph. '.repeat(40)}</p>`;
            before.before(section);
            list.insertAdjacentHTML('beforeend', `<li class="toc-h2 nav-item toc-entry"></li>`);
            const link = Object.assign(document.createElement('a'), {className: 'reference internal nav-link',
                                                                     textContent: `Place ${id}`});
            link.setAttribute('href', href);
            list.lastElementChild.append(link);
        }
    }""")
    for place in ("100%-sure", "x%25y", "café-50%"):
        follow_from_the_contents(
            lambda: (tab.locator("#pst-secondary-sidebar-modal a.nav-link", has_text=f"Place {place}"), place),
            "click", f"the link to the place {place!r}")
    tab.evaluate("() => window.scrollTo(0, document.documentElement.scrollHeight / 2)")
    assert tab.evaluate("() => window.scrollY") > 1000, "(the page should be scrolled down for the next check)"
    tab.locator("button.primary-toggle.btn").click()
    tab.locator("#pst-primary-sidebar-modal a.current[href='#']").first.click()
    followed = "the link to this page in the table of contents"
    _wait_for(tab, "!document.getElementById('pst-primary-sidebar-modal').open", f"{followed} leaves the dialog open")
    _wait_for(tab, "document.activeElement.matches('.bd-article h1')", f"{followed} does not give the title the focus")
    top = tab.evaluate("() => document.querySelector('.bd-article h1').getBoundingClientRect().top")
    assert 0 <= top <= padding + 2, f"the link to this page leaves its title at {top:.0f} px from the top"
    assert tab.evaluate("() => location.hash") == "", f"{followed} leaves the place followed before in the address"
    tab.locator("button.primary-toggle.btn").click()
    # The page is kept from loading, as if it took its time or Back brought this one back from the browser's cache.
    tab.evaluate("() => window.addEventListener('click', (event) => event.preventDefault(), {once: true})")
    tab.locator("#pst-primary-sidebar-modal nav.bd-docs-nav a[href$='.html']").first.click()
    _wait_for(tab, "!document.getElementById('pst-primary-sidebar-modal').open",
              "a link to another page followed from the dialog leaves it open behind the page it loads")
    tab.set_viewport_size({"width": audit.WIDE, "height": 900})
    sidebar, button = tab.locator("#pst-primary-sidebar"), tab.locator("button.primary-toggle.btn")
    assert sidebar.is_visible() and button.is_visible(), f"no left sidebar or no button for it at {audit.WIDE} px"
    button.click()                                     # (the pointer comes onto the button and clicks at once)
    sidebar.wait_for(state="hidden", timeout=5_000)                 # the theme hides it with a transition
    tab.wait_for_timeout(700)
    assert not _tooltip_shown(tab), (
        f"a tooltip came up where the button was, after a quick click hid the sidebar at {audit.WIDE} px")
    button.click()
    sidebar.wait_for(state="visible", timeout=5_000)
    assert not tab.locator("#pst-primary-sidebar-modal").evaluate(is_open), f"a dialog opened at {audit.WIDE} px"
    thrown = [error for error in tab.errors if error.startswith("exception:")]   # (the offline test refuses
    assert not thrown, thrown                                                   # the page's external resources)


def _article_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    match = re.search(r"<article[^>]*>(.*)</article>", text, re.S)
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", match.group(1) if match else text, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def _plain(text: str) -> str:
    """Undo Sphinx's typographic quotes and dashes, and collapse white space."""
    for fancy, plain in (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'),
                         ("\u2014", "---"), ("\u2013", "--"), ("\u2026", "...")):
        text = text.replace(fancy, plain)
    return re.sub(r"\s+", " ", text)


def test_common_mistakes_page_lists_every_diagnosis(site):
    import html

    import posenc.book.mistakes as mistakes

    built = site / "book" / "common-mistakes.html"
    if not built.exists():
        pytest.skip(f"{built} is not built (is book/common-mistakes in the toc?)")
    text = _plain(html.unescape(re.sub(r"<[^>]+>", "", built.read_text(encoding="utf-8"))))
    missing = [m for m in mistakes.messages() if _plain(m) not in text]
    assert not missing, f"rebuild the book: the page lacks {missing[:3]}"
