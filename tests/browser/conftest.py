"""Fixtures of the browser tests: the built site on a local server, and headless Chromium.

Chromium is Debian's package driven by Playwright for Python; no browser is ever downloaded. Every
request that leaves 127.0.0.1 is answered locally or refused, so the tests need no network:
MathJax's CDN address is answered from the copy that ``tests/browser/setup.sh`` fetched from npm,
and anything else external (the widget manager's scripts, fonts) is refused and reported.
"""

from __future__ import annotations

import contextlib
import mimetypes
import re
import urllib.parse
from pathlib import Path

import pytest

from posenc import bench
from tests.browser import helpers
from tests.browser.pageview import inspect_page

SETUP_HINT = "run tests/browser/setup.sh (make test does), or set POSENC_CHROMIUM"


def _skip_or_fail(message: str):
    if helpers.REQUIRE_BROWSER:
        pytest.fail(f"{message} (and POSENC_REQUIRE_BROWSER is set)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def site() -> Path:
    if not (helpers.SITE / "index.html").exists() and not any(helpers.SITE.glob("*.html")):
        pytest.skip(f"no built site at {helpers.SITE}: run `make book` first (or set POSENC_SITE)")
    return helpers.SITE


@pytest.fixture(scope="session")
def base_url(site, external):
    with helpers.serve(site, helpers.MOUNTS) as url:
        external.mathjax_base = f"{url.rstrip('/')}{helpers.MATHJAX_MOUNT}"
        yield url


@pytest.fixture(scope="session")
def student_site() -> Path:
    if not (helpers.STUDENT_SITE / "index.html").exists():
        pytest.skip(f"no student edition at {helpers.STUDENT_SITE}: run `make student-book` first "
                    "(or set POSENC_STUDENT_SITE)")
    return helpers.STUDENT_SITE


@pytest.fixture(scope="session")
def student_base_url(student_site, external):
    with helpers.serve(student_site, helpers.MOUNTS) as url:
        external.mathjax_base = external.mathjax_base or f"{url.rstrip('/')}{helpers.MATHJAX_MOUNT}"
        yield url


@pytest.fixture(scope="session")
def scratch_url(tmp_path_factory):
    """A second server, for pages the tests write themselves (the explorers and quizzes on their own)."""
    folder = tmp_path_factory.mktemp("standalone")
    with helpers.serve(folder) as url:
        yield folder, url


class ExternalRequests:
    """Records what the pages asked for outside 127.0.0.1, and answers MathJax from the local copy."""

    def __init__(self) -> None:
        self.refused: set[str] = set()
        self.mathjax_local = (helpers.MATHJAX_DIR / "es5" / "tex-mml-chtml.js").exists()
        self.mathjax_base: str | None = None     # where the site's server mounts the local MathJax

    def handle(self, route) -> None:
        url = route.request.url
        host = urllib.parse.urlsplit(url).hostname
        if host in ("127.0.0.1", "localhost") or url.startswith(("data:", "blob:", "about:")):
            route.continue_()
            return
        match = helpers.MATHJAX_CDN.match(url)
        if match and self.mathjax_local:
            file = helpers.MATHJAX_DIR / "es5" / match["path"]
            if file.is_file() and self.mathjax_base:      # a redirect is much faster than a fulfilled body
                route.fulfill(status=302, headers={"Location": f"{self.mathjax_base}es5/{match['path']}",
                                                   "Access-Control-Allow-Origin": "*"})
                return
            if file.is_file():
                kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
                route.fulfill(status=200, body=file.read_bytes(), content_type=kind,
                              headers={"Access-Control-Allow-Origin": "*"})
                return
        self.refused.add(url)
        route.abort("blockedbyclient")


@pytest.fixture(scope="session")
def external():
    return ExternalRequests()


@pytest.fixture(scope="session")
def browser_context(external, tmp_path_factory):
    """One headless Chromium (a fresh profile) for the whole session."""
    try:
        from playwright.sync_api import Error as PlaywrightError, sync_playwright
    except ImportError:
        _skip_or_fail(f"Playwright for Python is not installed: {SETUP_HINT}")
    executable = helpers.chromium_path()
    if executable is None:
        _skip_or_fail(f"Chromium is not installed and could not be installed here: {SETUP_HINT}")
    profile = tmp_path_factory.mktemp("chromium-profile")
    playwright = sync_playwright().start()
    try:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=helpers.CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900}, color_scheme="light", reduced_motion="reduce",
            service_workers="block")
    except PlaywrightError as exc:
        playwright.stop()
        _skip_or_fail(f"Chromium ({executable}) could not be launched: {str(exc).splitlines()[0]}")
    context.set_default_timeout(15_000)
    # Only requests that leave this machine go through Python; the local server answers the rest.
    context.route(re.compile(r"^(?!https?://(127\.0\.0\.1|localhost)[:/])[a-z]+:"), external.handle)
    yield context
    context.close()
    playwright.stop()


@pytest.fixture()
def new_page(browser_context):
    """A fresh tab that records console errors and uncaught exceptions; closed after the test."""
    pages = []

    def make():
        page = browser_context.new_page()
        page.errors = []
        page.on("console", lambda m: page.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(f"exception: {e}"))
        pages.append(page)
        return page

    yield make
    for page in pages:
        page.close()


# One inspection per page and worker, shared by the tests that check different things about it.
_REPORTS: dict[str, object] = {}


def _reporter(browser_context, site: Path, base_url: str, external, shared: bool = True, **options):
    def get(page: helpers.Page):
        if page.source is None:
            pytest.skip(f"{page.docname} is listed in the table of contents but not written yet")
        if not (site / page.html_path).exists():
            pytest.skip(f"{page.docname} has no page in {site} (built before it was added?)")
        key = f"{base_url}{page.html_path}"
        if key not in _REPORTS:
            kept = (bench.shared_cost("every page's inspection (tests/browser/pageview.py), which several test "
                                      "files read") if shared else contextlib.nullcontext())
            with kept:
                _REPORTS[key] = inspect_page(browser_context, base_url, page, external, **options)
        return _REPORTS[key]
    return get


@pytest.fixture()
def report_of(browser_context, site, base_url, external):
    """The full inspection of a page of the book (pageview.inspect_page)."""
    return _reporter(browser_context, site, base_url, external)


@pytest.fixture()
def student_report_of(browser_context, student_site, student_base_url, external):
    """The audit of a page of the student edition: accessibility and layout, no screenshots."""
    # Read by test_student_edition.py alone: its inspections stay with that file in make bench's table.
    return _reporter(browser_context, student_site, student_base_url, external, shared=False, full=False,
                     name_prefix="student__")


def page_group(nodeid: str) -> str:
    """The group of a test for the workers: one per page and edition, the rest together.

    ``tests/browser/test_pages.py::test_x[notebooks/02_relative_shift]`` -> ``book:notebooks/02_relative_shift``;
    the same page in test_student_edition.py -> ``student:...``; a test without parameters -> ``browser``.
    """
    match = re.match(r"^(?P<file>[^:]*)::[^\[]*\[(?P<param>.*)\]$", nodeid)
    if not match:
        return "browser"
    edition = "student" if match["file"].endswith("test_student_edition.py") else "book"
    return f"{edition}:{match['param']}"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``pytest -n 2 --dist loadgroup`` (make test): every test of a page on one worker.

    Each worker inspects a page once (report_of) for all the tests about it, and the pages are shared out
    between the workers. pytest-xdist 3.8 groups tests by rewriting their ids, which pytest 9 ignores, so
    the group is read from the test's id here (page_group).
    """
    if config.getoption("dist", None) != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class PageScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return page_group(nodeid)

    return PageScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "tests/browser" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.browser)


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: runs in headless Chromium (tests/browser)")
