"""The course's house style, enforced: chapter skeleton, small cells, captioned figures, no path hacks."""

import re
import statistics

import nbformat
import pytest

from tests.conftest import ROOT

CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
ALL_NOTEBOOKS = CHAPTERS + sorted((ROOT / "exercises").glob("*.ipynb")) + sorted((ROOT / "solutions").glob("*.ipynb"))


def read(path):
    return nbformat.read(path, as_version=4)


def headings(nb):
    return [line.strip() for cell in nb.cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("## ")]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_follows_the_skeleton(path):
    found = headings(read(path))
    assert found[0] == "## Overview", f"{path.name}: first section must be '## Overview', got {found[:1]}"
    assert "## Summary" in found and "## Exercises" in found, found
    assert found.index("## Summary") < found.index("## Exercises") and found[-1] == "## Exercises", found
    overview = next(c.source for c in read(path).cells if "## Overview" in c.source)
    assert "learning objectives" in overview.lower() or "you will" in overview.lower()


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_cells_are_small(path):
    sizes = [len(c.source.strip().splitlines()) for c in read(path).cells if c.cell_type == "code"]
    assert statistics.median(sizes) <= 8, f"{path.name}: median code cell has {statistics.median(sizes)} lines"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_figures_have_captions_and_alt_text(path):
    for cell in read(path).cells:
        if cell.cell_type != "code":
            continue
        mystnb = cell.metadata.get("mystnb", {})
        if "figure" in mystnb:
            assert mystnb["figure"].get("caption") and mystnb["figure"].get("name"), cell.source[:60]
            assert mystnb.get("image", {}).get("alt"), f"figure {mystnb['figure'].get('name')} has no alt text"


@pytest.mark.parametrize("path", ALL_NOTEBOOKS, ids=lambda p: p.name)
def test_no_path_hacks_and_a_python3_kernel(path):
    nb = read(path)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not re.search(r"sys\.path\.(insert|append)", cell.source), f"{path.name}: sys.path hack"


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_is_in_the_table_of_contents(path):
    toc = (ROOT / "_toc.yml").read_text()
    assert f"notebooks/{path.stem}" in toc


# The team's own documents and process, which a reader of the book neither has nor needs.
INTERNAL_WORDING = re.compile(r"course design|COURSE\.md|standards\.md|the brief\b|\bissue #\d+", re.IGNORECASE)


def reader_texts():
    """(where, text) of everything a reader sees as prose: chapter markdown, the book's pages, the quizzes."""
    for path in CHAPTERS:
        for number, cell in enumerate(read(path).cells):
            if cell.cell_type == "markdown":
                yield f"{path.name} cell {number}", cell.source
    for path in sorted((ROOT / "book").rglob("*")):
        if path.suffix in (".md", ".json"):
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def test_reader_pages_have_no_internal_wording():
    found = [(where, match.group()) for where, text in reader_texts() for match in INTERNAL_WORDING.finditer(text)]
    assert found == [], f"internal wording on a reader's page: {found}"


def test_internal_wording_is_recognised():
    assert INTERNAL_WORDING.search("Both studies quoted in the course design agree.")
    assert INTERNAL_WORDING.search("as issue #12 asks") and not INTERNAL_WORDING.search("the design of the course")
