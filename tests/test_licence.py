"""The course's licences: code under MIT, text and figures under CC BY 4.0, stated in the licence files,
the package's metadata, README and the footer of every page of the site."""

import html.parser
import importlib.metadata
import re
import tomllib

import pytest
import yaml

from posenc.book import editions
from tests.conftest import ROOT

LICENCE_FILES = {"MIT": "LICENSE", "CC-BY-4.0": "LICENSE-CC-BY-4.0"}
EXPRESSION = "MIT AND CC-BY-4.0"
# What a reader must find wherever the licences are named: each licence and the file that holds it.
NAMES = ("MIT", "CC BY 4.0", "LICENSE", "LICENSE-CC-BY-4.0")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_mit_licence_file_is_the_standard_text_with_a_copyright_line():
    text = " ".join((ROOT / LICENCE_FILES["MIT"]).read_text().split())
    assert text.startswith("MIT License Copyright (c) ")
    for sentence in ("Permission is hereby granted, free of charge, to any person obtaining a copy of this software",
                     "The above copyright notice and this permission notice shall be included in all copies or "
                     "substantial portions of the Software.",
                     'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND'):
        assert sentence in text, sentence


def test_the_cc_by_licence_file_is_the_whole_legal_code():
    text = (ROOT / LICENCE_FILES["CC-BY-4.0"]).read_text()
    assert text.startswith("Creative Commons Attribution 4.0 International\n")
    assert "Creative Commons Attribution 4.0 International Public License" in text
    headings = re.findall(r"^Section (\d) – ", text, flags=re.MULTILINE)
    assert headings == [str(n) for n in range(1, 9)], "the legal code has Sections 1 to 8, in order"
    assert text.rstrip().endswith("Creative Commons may be contacted at creativecommons.org.")


def test_pyproject_declares_both_licences_and_ships_their_files():
    project = _pyproject()["project"]
    assert project["license"] == EXPRESSION
    assert project["license-files"] == list(LICENCE_FILES.values())
    for name in project["license-files"]:
        assert (ROOT / name).is_file(), name
    assert not any("License ::" in c for c in project.get("classifiers", [])), \
        "PEP 639: the expression replaces licence classifiers"


def test_the_build_backend_understands_the_licence_expression():
    """setuptools reads an SPDX string in project.license and project.license-files from 77.0 on (PEP 639)."""
    requires = _pyproject()["build-system"]["requires"]
    setuptools = next(r for r in requires if r.startswith("setuptools"))
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools.replace(" ", ""))
    assert minimum and int(minimum.group(1)) >= 77, setuptools


def test_the_installed_package_carries_the_licence_expression():
    """The installed metadata (make setup reinstalls whenever pyproject.toml changes) says what pyproject says."""
    metadata = importlib.metadata.metadata("posenc")
    assert metadata.get("License-Expression") == EXPRESSION, (
        "the installed posenc predates the licence fields: run make setup")


def test_readme_has_a_licence_section_naming_both_licences_and_files():
    readme = (ROOT / "README.md").read_text()
    section = re.search(r"^## Licence\n(.*?)(?=^## |\Z)", readme, flags=re.MULTILINE | re.DOTALL)
    assert section, "README needs a '## Licence' section"
    for name in NAMES:
        assert name in section.group(1), name


def _footer_config() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]


def test_the_site_footer_names_both_licences_and_files():
    footer = _footer_config()
    for name in NAMES:
        assert name in footer, name
    for url in ("https://opensource.org/license/mit", "https://creativecommons.org/licenses/by/4.0/"):
        assert f'href="{url}"' in footer, url


def test_the_student_edition_keeps_the_footer():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert editions.student_config(config)["html"]["extra_footer"] == _footer_config()


class _FooterText(html.parser.HTMLParser):
    """The text inside the theme's <div class="extra_footer">."""

    def __init__(self):
        super().__init__()
        self.depth, self.text = 0, []

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += tag not in ("br", "img", "meta", "link", "input", "hr")
        elif tag == "div" and "extra_footer" in (dict(attrs).get("class") or "").split():
            self.depth = 1

    def handle_endtag(self, tag):
        if self.depth:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.text.append(data)


def footer_text(page_html: str) -> str:
    parser = _FooterText()
    parser.feed(page_html)
    return " ".join("".join(parser.text).split())


def test_footer_text_reads_only_the_extra_footer():
    page = ('<footer><p>Theme</p><div class="bd-footer extra_footer"><p>Code: <a href="x">MIT</a>'
            '<br>text</p></div><p>after</p></footer>')
    assert footer_text(page) == "Code: MITtext"
    assert footer_text("<div class='other'>MIT</div>") == ""


@pytest.mark.parametrize("site", ["_build/html", "_build/student/_build/html"])
def test_every_built_page_shows_the_licences(site):
    root = ROOT / site
    if not (root / "index.html").exists():
        pytest.skip(f"{site} is not built (make book, make student-book)")
    # index.html only redirects to the first page; the slide decks and the asset folders have no theme footer.
    skipped = {"_static", "_sources", "_images", "slides", "reports"}
    pages = [p for p in root.rglob("*.html") if p != root / "index.html"
             and not skipped & set(p.relative_to(root).parts)]
    assert pages, f"no pages in {site}"
    missing = [str(p.relative_to(root)) for p in pages
               if not all(name in footer_text(p.read_text(errors="replace")) for name in NAMES)]
    assert not missing, f"pages of {site} without the licences in their footer: {missing[:5]}"
