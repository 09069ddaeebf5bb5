"""The student edition (``make student-book``) holds no solutions: no pages, no blocks, no links; and each
of its pages passes the same accessibility and layout audit as the full book's (in headless Chromium).

Most of its pages are the book's page with the solutions taken out and nothing else changed but the
edition's title. For those, this file shows that this is all that differs (``book_page_without_solutions``:
the same style sheets, scripts and images too) and lets the book's audit of the page stand
(tests/browser/test_pages.py, which measures the phone's layout before the page's explorers are used, as
here, and after): axe-core's rules and the layout check find nothing on a page with whole blocks taken out
that they did not find on the whole page, as long as no heading goes inside them and nothing left points into
them. (The navigation's Solutions caption, a heading of the sidebar, goes with its list; the captions left
are of its level, so the headings' order skips no level it did not skip before.) Those pages' audit tests say
so as they skip: the book's audit is test_pages.py's, in the same run of the browser tests (run this file
alone and it is not there). Every other page is opened and audited here, and so is the edition's first page,
which shows its own title and navigation; without the book's site, every page is.

It reads the built files (``POSENC_STUDENT_SITE``, default ``_build/student/_build/html``); it is
skipped when the student edition has not been built.
"""

from __future__ import annotations

import functools
import hashlib
import html.parser
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from posenc.book.editions import STUDENT_TITLE_SUFFIX
from tests.browser import helpers
from tests.browser.test_pages import assert_accessible, assert_nothing_cut_off

STUDENT_PAGES = helpers.student_pages() if helpers.TOC.exists() else []


def _pages(site):
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)


def is_solution_block(classes: list[str]) -> bool:
    """The classes of a solution block as sphinx-exercise writes it."""
    return "admonition" in classes and any(c in ("solution", "solution-start") for c in classes)


class _SolutionFinder(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.blocks, self.links, self.captions = 0, [], []
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if is_solution_block(classes):
            self.blocks += 1
        href = attrs.get("href") or ""
        if tag == "a" and re.search(r"(^|/)solutions/[^/]+\.(html|ipynb)", href):
            self.links.append(href)
        self._in_caption = "caption-text" in classes

    def handle_data(self, data):
        if self._in_caption:
            self.captions.append(data.strip())
            self._in_caption = False


def test_student_edition_has_no_solution_pages(student_site):
    pages = [p.relative_to(student_site).as_posix() for p in _pages(student_site)]
    assert not [p for p in pages if p.startswith("solutions/")], pages
    assert not (student_site / "_sources" / "solutions").exists()
    index = (student_site / "searchindex.js").read_text(encoding="utf-8")
    assert not re.search(r'"solutions/', index), "the search index lists solution pages"


def test_student_edition_shows_no_solution_blocks_and_no_links_to_solutions(student_site):
    problems = []
    for page in _pages(student_site):
        finder = _SolutionFinder()
        finder.feed(page.read_text(encoding="utf-8", errors="replace"))
        where = page.relative_to(student_site)
        if finder.blocks:
            problems.append(f"{where}: {finder.blocks} solution block(s)")
        if finder.links:
            problems.append(f"{where}: links to solutions {finder.links[:3]}")
        if any(c.lower() == "solutions" for c in finder.captions):
            problems.append(f"{where}: the navigation has a Solutions part")
    assert not problems, "\n".join(problems)


def test_student_edition_links_resolve(student_site):
    problems = helpers.static_link_problems(student_site)
    assert not problems, "\n".join(problems[:20])


def test_student_edition_keeps_everything_else(student_site):
    """Every page of the full site, solutions aside, is in the student edition too."""
    full = [p for p in helpers.toc_pages() if not p.docname.startswith("solutions/") and p.source is not None
            and (not helpers.SITE.exists() or (helpers.SITE / p.html_path).exists())]
    missing = [p.docname for p in full if not (student_site / p.html_path).exists()]
    assert not missing, (f"pages of the full book missing from the student edition: {missing} "
                         "(rebuild it with `make student-book`)")


HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
# Attributes that name an element of the page: by its id, or (URL_REFERENCES) by "#" and its id.
URL_REFERENCES = ("href", "xlink:href", "usemap", "data-target", "data-bs-target")
REFERENCES = URL_REFERENCES + ("for", "headers", "list", "form", "popovertarget", "aria-controls",
                               "aria-describedby", "aria-labelledby", "aria-owns", "aria-activedescendant",
                               "aria-details", "aria-errormessage", "aria-flowto")


def _without_solutions(soup: BeautifulSoup) -> str | None:
    """Take the solution blocks and the navigation's Solutions part (its caption and list) out of a book page,
    in place. None, or why an audit could see the page without them otherwise: a heading inside a block, or
    something left on the page that points into one."""
    removed = []
    for caption in soup.select("p.caption"):
        if caption.get_text(strip=True) == "Solutions":
            listing = caption.find_next_sibling()
            if listing is not None and listing.name == "ul":
                removed.append(listing)
            removed.append(caption)
    removed += soup.find_all(lambda tag: tag.name == "div" and is_solution_block(tag.get("class") or []))
    gone = set()
    for tag in removed:       # find() looks inside a block, not at it: the Solutions caption is a heading
        if tag.find(HEADINGS) is not None or tag.find(attrs={"role": "heading"}) is not None:
            return f"a solution block holds a heading: {str(tag)[:120]}"
        gone |= {inner["id"] for inner in [tag, *tag.find_all(id=True)] if inner.get("id")}
        tag.decompose()
    for tag in soup.find_all(True):
        for name in REFERENCES:
            value = tag.get(name) or ""
            words = value if isinstance(value, list) else value.split()     # bs4 splits "headers" itself
            targets = {word.lstrip("#") for word in words
                       if name not in URL_REFERENCES or word.startswith("#")}
            if targets & gone:
                return f"{name}= of <{tag.name}> points into a removed block: {sorted(targets & gone)}"
    return None


PREFORMATTED = re.compile(r"(<(pre|textarea)\b.*?</\2>)", re.S)


def _normalised(soup: BeautifulSoup) -> str:
    """The page as text, every run of blanks between two tags that holds a line break made one line break (a
    removed block leaves such runs; a space between two tags is kept, as it is drawn), except inside <pre>
    and <textarea>, where every blank is kept."""
    kept: list[str] = []

    def aside(match) -> str:
        kept.append(match.group(1))
        return f"<posenc-kept-{len(kept) - 1}/>"

    text = re.sub(r">[ \t]*\n\s*<", ">\n<", PREFORMATTED.sub(aside, str(soup)))
    return re.sub(r"<posenc-kept-(\d+)/>", lambda match: kept[int(match.group(1))], text).strip()


# Sphinx appends a checksum of each style sheet and script it finds already in the output folder
# ("mystnb.css?v=8cd3d715") and none to one it has not copied yet: a build into an existing folder (make book or
# make test run again) writes them, a first build does not. The query only names a version for the reader's
# cache; that both editions serve the same files is same_assets' to show.
ASSET_VERSION = re.compile(r"\?v=[0-9a-f]{8}\Z")


def _without_asset_versions(soup: BeautifulSoup) -> BeautifulSoup:
    """The page with Sphinx's version query taken off its style sheets and scripts, in place."""
    for tag, name in (("link", "href"), ("script", "src")):
        for element in soup.find_all(tag, attrs={name: ASSET_VERSION}):
            element[name] = ASSET_VERSION.sub("", element[name])
    return soup


def book_page_without_solutions(book_file: Path, student_file: Path) -> str | None:
    """None when the student page is the book page with its solutions taken out and the edition's title, and
    nothing else changed (an asset's version query aside, ASSET_VERSION); else the first difference."""
    book = _without_asset_versions(BeautifulSoup(book_file.read_text(encoding="utf-8"), "html.parser"))
    student_text = student_file.read_text(encoding="utf-8")
    title = book.title.get_text() if book.title else ""
    project = title.rsplit(" \u2014 ", 1)[-1]
    if not project or f"{project}{STUDENT_TITLE_SUFFIX}" not in student_text:
        return "the student page does not say it is the student edition"
    student = _without_asset_versions(BeautifulSoup(student_text.replace(f"{project}{STUDENT_TITLE_SUFFIX}", project),
                                                    "html.parser"))
    problem = _without_solutions(book)
    if problem:
        return problem
    ours, theirs = _normalised(book), _normalised(student)
    if ours == theirs:
        return None
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return f"they differ at character {at}: book ...{ours[at - 60:at + 80]!r}, student ...{theirs[at - 60:at + 80]!r}"


def _files(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@functools.lru_cache(maxsize=None)
def same_assets(site: Path, student_site: Path) -> bool:
    """The two editions serve the same style sheets, scripts and images (a page's look comes from them too)."""
    return all(_files(site / folder) == _files(student_site / folder) for folder in ("_static", "_images"))


@functools.lru_cache(maxsize=None)
def covered_by_the_book(page, site: Path = helpers.SITE, student_site: Path = helpers.STUDENT_SITE) -> str | None:
    """Why the book's audit of this page holds for the student edition's, or None: the page is audited here.

    Audited here: the edition's first page (its own title and navigation), and every page that is more than
    the book's page without its solutions, or whose book page is not built."""
    book_file = site / page.html_path
    if page.docname == STUDENT_PAGES[0].docname or not book_file.exists() or not same_assets(site, student_site):
        return None
    if book_page_without_solutions(book_file, student_site / page.html_path) is not None:
        return None
    return (f"{page}: the book's page without its solutions, nothing else changed but the edition's title, "
            "so the book's audit of it holds (tests/browser/test_pages.py)")


by_student_page = pytest.mark.parametrize("page", STUDENT_PAGES, ids=str)


@by_student_page
def test_student_page_is_accessible(page, student_report_of):
    if reason := covered_by_the_book(page):
        pytest.skip(reason)
    assert_accessible(student_report_of(page))


@by_student_page
def test_nothing_is_cut_off_on_student_pages(page, student_report_of):
    if reason := covered_by_the_book(page):
        pytest.skip(reason)
    assert_nothing_cut_off(student_report_of(page))


# ---------------------------------------------------------------------------------------------------
# The comparison itself, on pages made up here: it lets only a removal of solutions and the title through.

BOOK_PAGE = """<html><head><title>Ch 1 \u2014 The Course</title></head><body>
<p class="title logo__title">The Course</p>
<nav><p class="caption" role="heading"><span class="caption-text">Chapters</span></p><ul><li>ch 1</li></ul>
<p class="caption" role="heading"><span class="caption-text">Solutions</span></p><ul><li>solutions 1</li></ul></nav>
<article><h1>Chapter 1</h1><p>Text.</p>
<div class="solution dropdown admonition" id="s1"><p class="admonition-title">Solution</p><p>42</p></div>
<p>More text.</p></article></body></html>"""
STUDENT_PAGE = """<html><head><title>Ch 1 \u2014 The Course (student edition)</title></head><body>
<p class="title logo__title">The Course (student edition)</p>
<nav><p class="caption" role="heading"><span class="caption-text">Chapters</span></p><ul><li>ch 1</li></ul>
</nav>
<article><h1>Chapter 1</h1><p>Text.</p>

<p>More text.</p></article></body></html>"""


@pytest.mark.parametrize("book, student, found", [
    (BOOK_PAGE, STUDENT_PAGE, None),
    (BOOK_PAGE, STUDENT_PAGE.replace("More text.", "More text!"), "differ"),
    (BOOK_PAGE, STUDENT_PAGE.replace("<p>More text.</p>", ""), "differ"),
    (BOOK_PAGE, STUDENT_PAGE.replace(" (student edition)", ""), "does not say"),
    (BOOK_PAGE.replace('<p class="admonition-title">', '<h2>Why</h2><p class="admonition-title">'),
     STUDENT_PAGE, "holds a heading"),
    (BOOK_PAGE.replace('<p>42</p>', '<p>42</p></div><div class="note admonition"><p>kept</p>'),
     STUDENT_PAGE, "differ"),
    (BOOK_PAGE.replace('<p>Text.</p>', '<p><em>a</em> <em>b</em></p>'),
     STUDENT_PAGE.replace('<p>Text.</p>', '<p><em>a</em><em>b</em></p>'), "differ"),
    (BOOK_PAGE.replace('<p>Text.</p>', '<button aria-controls="s1" aria-expanded="true">show</button>'),
     STUDENT_PAGE.replace('<p>Text.</p>', '<button aria-controls="s1" aria-expanded="true">show</button>'),
     "points into a removed block"),
    (BOOK_PAGE.replace('<p>42</p>', '<p role="heading" aria-level="3">42</p>'), STUDENT_PAGE, "holds a heading"),
    (BOOK_PAGE.replace('<p>Text.</p>', '<table><tr><td headers="s1">x</td></tr></table>'),
     STUDENT_PAGE.replace('<p>Text.</p>', '<table><tr><td headers="s1">x</td></tr></table>'),
     "points into a removed block"),
    (BOOK_PAGE.replace('<p>Text.</p>', '<pre><span>a</span>\n    <span>b</span></pre>'),
     STUDENT_PAGE.replace('<p>Text.</p>', '<pre><span>a</span>\n<span>b</span></pre>'), "differ"),
    (BOOK_PAGE.replace('<p>Text.</p>', '<pre><span>a</span>\n    <span>b</span></pre>'),
     STUDENT_PAGE.replace('<p>Text.</p>', '<pre><span>a</span>\n    <span>b</span></pre>'), None),
    (BOOK_PAGE, STUDENT_PAGE.replace('</ul>\n</nav>', '</ul><p class="caption" role="heading"><span '
                                     'class="caption-text">Solutions</span></p></nav>'), "differ"),
    (BOOK_PAGE.replace("<title>", '<link rel="stylesheet" href="_static/a.css?v=8cd3d715"/><script '
                       'src="_static/b.js?v=0a1b2c3d"></script><title>'),
     STUDENT_PAGE.replace("<title>", '<link rel="stylesheet" href="_static/a.css"/><script '
                          'src="_static/b.js"></script><title>'), None),
    (BOOK_PAGE.replace("<title>", '<link rel="stylesheet" href="_static/a.css?v=8cd3d715"/><title>'),
     STUDENT_PAGE.replace("<title>", '<link rel="stylesheet" href="_static/other.css"/><title>'), "differ"),
    (BOOK_PAGE.replace("<title>", '<script src="_static/b.js?theme=dark"></script><title>'),
     STUDENT_PAGE.replace("<title>", '<script src="_static/b.js"></script><title>'), "differ"),
    (BOOK_PAGE.replace("<title>", '<script src="_static/b.js?v=8cd3"></script><title>'),
     STUDENT_PAGE.replace("<title>", '<script src="_static/b.js"></script><title>'), "differ"),
    (BOOK_PAGE.replace("<p>Text.</p>", '<p><a href="other.html?v=8cd3d715">a link</a></p>'),
     STUDENT_PAGE.replace("<p>Text.</p>", '<p><a href="other.html">a link</a></p>'), "differ"),
])
def test_only_pages_that_lose_their_solutions_and_nothing_else_keep_the_book_s_audit(tmp_path, book, student,
                                                                                    found):
    (tmp_path / "book.html").write_text(book, encoding="utf-8")
    (tmp_path / "student.html").write_text(student, encoding="utf-8")
    problem = book_page_without_solutions(tmp_path / "book.html", tmp_path / "student.html")
    assert (problem is None) if found is None else (problem is not None and found in problem), problem


def test_plain_pages_keep_the_book_s_audit_and_pages_with_other_changes_are_audited_here(site, student_site):
    """On the book as it is: a front-matter page only loses the navigation's Solutions part; the last
    exercise page's "next" link goes to the first solution in the book, and elsewhere in the student edition."""
    pages = {page.docname: page for page in STUDENT_PAGES}
    assert same_assets(site, student_site)
    assert covered_by_the_book(pages["book/notation"], site, student_site)
    assert not covered_by_the_book(pages[STUDENT_PAGES[0].docname], site, student_site)
    last_exercises = [name for name in pages if name.startswith("exercises/")][-1]
    assert not covered_by_the_book(pages[last_exercises], site, student_site)
