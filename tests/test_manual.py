"""README as a front door, and the lecturer's manual as pages of the book: the toc's part "For lecturers"
(book/teaching-guide.md and book/lecturers/*.md), which README links page by page, the student edition
keeps, and code sends readers to by file name."""

import re

import pytest
import yaml

from posenc.book.editions import student_toc
from tests.conftest import ROOT

README = ROOT / "README.md"
MANUAL = ROOT / "book" / "lecturers"
MANUAL_PART = "For lecturers"
README_MAX_LINES = 150

# Where code, comments and messages may send a reader to a page of the manual.
POINTING_FILES = sorted([*(ROOT / "posenc").rglob("*.py"), ROOT / "Makefile", ROOT / "pyproject.toml",
                         ROOT / "CONTRIBUTING.md", README, ROOT / "tests" / "colab_versions.txt",
                         *(ROOT / ".github").rglob("*.yml")])
POINTER = re.compile(r"book/lecturers/[\w-]+\.md")


def toc() -> dict:
    return yaml.safe_load((ROOT / "_toc.yml").read_text())


def manual_files(table_of_contents: dict) -> list[str]:
    """The files of the part "For lecturers", as the toc lists them (without .md)."""
    part = next(p for p in table_of_contents["parts"] if p["caption"] == MANUAL_PART)
    return [entry["file"] for entry in part["chapters"]]


def test_readme_stays_a_front_door():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines: keep it within {README_MAX_LINES} and move the details to the "
        "lecturer's manual (book/lecturers/)")
    headings = [line for line in lines if line.startswith("## ")]
    for heading in ("## Chapters", "## Two commands", "## Working through the course", "## Licence"):
        assert heading in headings, heading
    assert "make book" in README.read_text() and "make test" in README.read_text()


def test_readme_lists_every_chapter_with_its_notebook_and_exercises():
    rows = re.findall(r"^\| (\d+) \| [^|]+ \| `(notebooks/[^`]+)` \| `(exercises/[^`]+)` \|$", README.read_text(),
                      flags=re.MULTILINE)
    chapters = sorted(path.relative_to(ROOT).as_posix() for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert [notebook for _, notebook, _ in rows] == chapters, "README's table of chapters: one row per chapter"
    for number, notebook, exercises in rows:
        assert notebook.startswith(f"notebooks/{int(number):02d}_") and (ROOT / exercises).is_file(), number


def test_every_page_of_the_manual_is_in_the_toc_and_the_student_edition():
    listed = manual_files(toc())
    pages = sorted(f"book/lecturers/{path.stem}" for path in MANUAL.glob("*.md"))
    assert sorted(set(listed) - {"book/teaching-guide"}) == pages, "every page of book/lecturers/ in the toc"
    assert "book/teaching-guide" in listed
    assert manual_files(student_toc(toc())) == listed


def test_readme_links_every_page_of_the_manual():
    text = README.read_text()
    missing = [page for page in manual_files(toc()) if f"]({page}.md)" not in text]
    assert not missing, f"README's table of the manual's pages lacks {missing}"


def test_every_page_of_the_manual_has_a_title_and_links_that_resolve():
    for page in MANUAL.glob("*.md"):
        text = page.read_text()
        assert text.startswith("# "), f"{page.name}: a page starts with its title"
        for target in re.findall(r"\]\(([^)#\s]+\.md)\)", text):
            assert (page.parent / target).resolve().is_file(), f"{page.name} links to {target}"


@pytest.mark.parametrize("path", POINTING_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pointers_to_the_manual_name_pages_of_the_book(path):
    listed = set(manual_files(toc()))
    text = path.read_text()
    for pointer in POINTER.findall(" ".join(text.split())):
        assert pointer.removesuffix(".md") in listed, f"{path.name} points to {pointer}, which is not in the manual"
    assert not re.search(r"\bsee README\b|\bREADME: (For lecturers|What)|\(README, \"(What|The versions)",
                         text), f"{path.name} points into a section of README that moved to the manual"


def test_the_grader_names_the_page_on_the_sandbox():
    from posenc.grader import cli, sandbox

    assert "book/lecturers/sandbox.md" in cli.NO_BWRAP
    assert "book/lecturers/sandbox.md" in sandbox.userns_hint("bwrap: setting up uid map: Permission denied")
