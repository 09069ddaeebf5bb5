"""The student edition (``make student-book``) holds no solutions: no pages, no blocks, no links; and each
of its pages passes the same accessibility and layout audit as the full book's (in headless Chromium).

It reads the built files (``POSENC_STUDENT_SITE``, default ``_build/student/_build/html``); it is
skipped when the student edition has not been built.
"""

from __future__ import annotations

import html.parser
import re

import pytest

from tests.browser import helpers
from tests.browser.test_pages import assert_accessible, assert_nothing_cut_off

STUDENT_PAGES = helpers.student_pages() if helpers.TOC.exists() else []


def _pages(site):
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)


class _SolutionFinder(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.blocks, self.links, self.captions = 0, [], []
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if "admonition" in classes and any(c in ("solution", "solution-start") for c in classes):
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


by_student_page = pytest.mark.parametrize("page", STUDENT_PAGES, ids=str)


@by_student_page
def test_student_page_is_accessible(page, student_report_of):
    assert_accessible(student_report_of(page))


@by_student_page
def test_nothing_is_cut_off_on_student_pages(page, student_report_of):
    assert_nothing_cut_off(student_report_of(page))
