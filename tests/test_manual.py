"""README as a front door, and the lecturer's manual as pages of the book: the toc's part "For lecturers"
(book/teaching-guide.md and book/lecturers/*.md), which README links page by page, the student edition
keeps, and code sends readers to by file name. Also what the reader's pages "How to use this course" and
"Notation" state that code can check."""

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
        body = re.sub(r"\A---\n.*?\n---\n\s*", "", text, flags=re.S)     # an executed page's front matter
        assert body.startswith("# "), f"{page.name}: a page starts with its title"
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


# The reader's page "How to use this course": what it states about the checks and the chapters' order.
HOW_TO_USE = ROOT / "book" / "how-to-use.md"


def test_how_to_use_states_the_checks_time_limits():
    from posenc.exercises.framework import INLINE_LIMITS

    page = " ".join(HOW_TO_USE.read_text(encoding="utf-8").split())
    call, total = INLINE_LIMITS["call_seconds"], INLINE_LIMITS["total_seconds"]
    assert f"stopped after {call:g} s, and a question after {total:g} s" in page


def chapter_numbers(text: str) -> set[int]:
    """The chapters a cell of the dependency table names: "2 to 5", "1, 2, 6 and 7 (what they give)"."""
    text = text.split("(")[0]
    ranges = {n for a, b in re.findall(r"(\d+) to (\d+)", text) for n in range(int(a), int(b) + 1)}
    return ranges | {int(n) for n in re.findall(r"\d+", re.sub(r"\d+ to \d+", "", text))}


def test_how_to_use_says_which_chapters_of_part_one_part_two_builds_on():
    page = HOW_TO_USE.read_text(encoding="utf-8")
    table = re.findall(r"^\| (\d+)\. [^|]+\| ([^|]+) \|$", page, re.M)
    rows = {int(chapter): chapter_numbers(needs) for chapter, needs in table}
    part_one = set(range(5))
    sentence = re.search(r"Part II builds on chapters ([^(]+?) of Part I\s+"
                         r"\(chapter 10 on chapter (\d+) as well\)", page)
    named = chapter_numbers(sentence[1])
    assert set().union(*(rows[c] & part_one for c in rows if c >= 5 and c != 10)) == named
    assert rows[10] & part_one == named & rows[10] | {int(sentence[2])}


def test_the_notation_page_gives_the_longest_wavelength_right():
    import numpy as np

    from posenc.lib.encoding import wavelengths

    page = " ".join((ROOT / "book" / "notation.md").read_text(encoding="utf-8").split())
    assert r"up to $2\pi \cdot \text{base}^{(d-2)/d}$ (the last pair)" in page
    share = {d: wavelengths(d)[-1] / (2 * np.pi * 10000) for d in (512, 64)}
    assert np.allclose([share[d] for d in share], [10000 ** (-2 / d) for d in share])
    assert 1 - share[512] < 0.04 and round(100 * share[64]) == 75
    assert "within 4% of $2\\pi \\cdot \\text{base}$ at $d = 512$ but 75% of it at $d = 64$" in page
    quiz = (ROOT / "book" / "quizzes" / "ch01.json").read_text(encoding="utf-8")      # chapter 1's quiz, Q5
    assert "within 4% of 2π · base at d_model = 512" in quiz and "only 75% of 2π · base" in quiz


def test_the_page_on_every_machine_shows_how_the_results_were_made_as_their_files_record_it(tmp_path):
    """book/lecturers/every-machine.md types no timing, machine or table: they are posenc.book.provenance's,
    read from results/ by the page's executed cells."""
    import json

    from posenc.book import provenance
    from posenc.experiments.results import RESULTS_DIR

    page = (MANUAL / "every-machine.md").read_text()
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", page, flags=re.S)
    executed = "\n".join(cells)
    for call in ("provenance.sweeps_table()", "provenance.robustness_table()", "provenance.totals_sentence()",
                 "provenance.where_digits_agree_sentence()"):
        assert call in executed, f"{call} is not in an executed cell of the page"
    prose = re.sub(r"```\{code-cell\}.*?```", "", page, flags=re.S)
    typed = [line for line in prose.splitlines() if line.lstrip().startswith("|") or "<table" in line
             or re.search(r"EPYC|Xeon|Intel|AMD|\bload of\b|\d+(\.\d+)? ?(s|min|minutes|hours?|seconds)\b", line)]
    assert not typed, f"typed on the page instead of read from the files: {typed}"
    committed = {s["file"] for s in provenance.how_sweeps_were_made()}
    assert committed == {p.name for p in RESULTS_DIR.glob("ch??*.json") if "lr_search" not in p.name}

    def sweep(name, end, seconds, load=None):
        timing = {"seconds": seconds, "processes": 2, "cpu_count": 4, **({} if load is None else {"load_average": load})}
        (tmp_path / name).write_text(json.dumps({
            "experiment": name[:4], "created": end, "seeds": [0, 1], "runs": [{}, {}, {}, {}], "timing": timing,
            "platform": {"cpu": "A CPU", "machine": "x86_64", "torch": "2.13.0", "numpy": "2.4.6"}}))

    sweep("ch98.json", "2026-01-01T10:00:00+00:00", 90.0, load=3.26)
    sweep("ch99.json", "2026-01-01T10:01:00+00:00", 120.0)          # began at 9:59, while ch98 ran
    sweep("ch99_replication.json", "2026-01-01T12:00:00+00:00", 60.0)
    (tmp_path / "ch07_lr_search.json").write_text(json.dumps({"timing": {"seconds": 5.0}, "rates": []}))
    rows = provenance.sweeps_table(tmp_path).rows
    machine = "A CPU (x86_64), torch 2.13.0, numpy 2.4.6"
    assert rows == [["ch98.json", "2", "4", "1.5", "2 / 4", "3.3", "1", machine],
                    ["ch99.json", "2", "4", "2.0", "2 / 4", "not recorded", "1", machine],
                    ["ch99_replication.json", "2", "4", "1.0", "2 / 4", "not recorded", "0", machine]]
    here = {"cpu": "A CPU", "machine": "x86_64", "torch": "2.13.0", "numpy": "2.4.6"}
    assert "ch98.json, ch99.json were made on a platform that matches it (the CPU's name and the versions of " \
           "torch and numpy; the instruction set" in provenance.where_digits_agree_sentence(tmp_path, here)
    assert "none of the chapters' files" in provenance.where_digits_agree_sentence(tmp_path, {**here, "cpu": "B"})

    (tmp_path / "robustness.json").write_text(json.dumps({"chapters": {
        "ch98": {"all_ok": True, "platform": here, "runs": [{"seconds": 1800.0}, {"seconds": 1800.0}], "jobs": 2,
                 "load_average_at_start": 0.34},
        "ch99": {"all_ok": False, "platform": None, "runs": [{"seconds": 12.4}, {"seconds": 30.6}]}}}))
    assert provenance.robustness_table(tmp_path / "robustness.json").rows == [
        ["ch98", "2", "1800", "2 (load 0.3)", "yes", machine],
        ["ch99", "2", "12 to 31", "not recorded", "no", "an unrecorded machine"]]
    totals = provenance.totals_sentence(tmp_path, tmp_path / "robustness.json")
    assert "the sweeps took 0.1 hours" in totals and "4 executions took 61 minutes of execution time" in totals
    assert "`make robustness` runs `JOBS` at a time" in totals          # one entry does not say
    (tmp_path / "robustness.json").write_text(json.dumps({"chapters": {
        "ch98": {"all_ok": True, "platform": here, "runs": [{"seconds": 60.0}], "jobs": 3, "load_average_at_start": 1}}}))
    assert "(they ran 3 at a time)." in provenance.totals_sentence(tmp_path, tmp_path / "robustness.json")
    (tmp_path / "robustness.json").write_text(json.dumps({"chapters": {
        "ch98": {"all_ok": True, "runs": [{"seconds": 60.0}], "run_seconds": 1440, "run_chapters": ["ch98", "ch99"]},
        "ch99": {"all_ok": True, "runs": [{"seconds": 60.0}], "run_seconds": 1440, "run_chapters": ["ch98", "ch99"]},
        "ch97": {"all_ok": True, "runs": [{"seconds": 60.0}]}}}))
    assert "), and the run of ch98 and ch99 took 24 minutes from start to end (1 older entry does not record " \
           "its)." in provenance.totals_sentence(tmp_path, tmp_path / "robustness.json")
    (tmp_path / "robustness.json").write_text(json.dumps({"chapters": {
        "ch98": {"all_ok": True, "runs": [{"seconds": 60.0}], "run_seconds": 1440, "run_chapters": ["ch98", "ch99"],
                 "created": "2026-01-01T10:00:00+00:00"},
        "ch99": {"all_ok": True, "runs": [{"seconds": 60.0}], "run_seconds": 200, "run_chapters": ["ch99"],
                 "created": "2026-01-01T11:00:00+00:00"}}}))
    assert "the run of ch98 and ch99 took 24 minutes from start to end, and a later run of ch99, whose entries " \
           "replace that run's, 3 minutes." in provenance.totals_sentence(tmp_path, tmp_path / "robustness.json")
    assert provenance._chapters(["ch03", "ch04", "ch10"]) == "ch03 to ch10 (3 chapters)"
    assert provenance._chapters(["ch03", "ch04", "ch05"]) == "ch03 to ch05"        # every chapter between
    assert provenance._span([15.2, 14.6]) == "15" and provenance._span([16.2, 19.4]) == "16 to 19"
    assert provenance._duration(42) == "42 seconds"
