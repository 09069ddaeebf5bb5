"""The batch grader on the corpus of realistic submissions in tests/submissions (expected rows in expected.csv).

The corpus (honest students, every kind of broken file, and the saboteurs of issue #17) is graded once,
on both cores (``--jobs 2``), inside bubblewrap, through the command's ``main``; the tests then check
every row, the feedback files, the summary and what the run left behind. One more, small run grades the
honest classmates alone: their rows must be exactly what they were next to the saboteurs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import resource
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest

from posenc.exercises import load_set
from posenc.grader.cli import main
from tests.conftest import ROOT
from tests.submissions import require_bwrap

CORPUS = ROOT / "tests" / "submissions"
TIMEOUT = "2"          # seconds of computing per cell and per question; a loop costs this much
MEMORY = "300"         # MB on top of the course's imports
NOTEBOOK = "25"        # seconds for everything of one notebook (the sleeper needs 40)
SEED = "20240607"
OPTIONS = ["--timeout-per-question", TIMEOUT, "--memory-mb", MEMORY, "--timeout-per-notebook", NOTEBOOK,
           "--jobs", "2", "--seed", SEED, "--set", "ch01"]     # (wendy's ch02 notebook: wrong-set)
# The classmates of the saboteurs: their rows must not depend on who else is in the folder.
HONEST = ["ch01_correct_alice", "ch01_duplicate_of_alice_zoe", "ch01_correct_loops_bob", "ch01_mistakes_carol",
          "ch01_mistakes_dave", "ch01_mistakes_erin", "ch01_partial_frank", "ch01_unattempted_gina",
          "ch01_cells_reordered_xena", "ch01_cells_deleted_yuri"]
SECRET = "PRIVATE-CHECK-SECRET-8c1f"            # in the lecturer's private checks, next to the class folder
BOB = "math.sin(angle) if j % 2 == 0"           # in one classmate's notebook only


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def without_copies(row: dict) -> dict:
    """A row without its note of who else has the same code."""
    notes = [note for note in row["message"].split("; ") if not note.startswith(("same code as", "nobody is"))]
    return {**row, "message": "; ".join(notes)}


def honest_twin(path: Path) -> dict:
    """A tampering notebook without the tampering cells (the cells the student added)."""
    nb = json.loads(path.read_text())
    nb["cells"] = [c for c in nb["cells"] if not str(c.get("id") or "").startswith("student-")]
    return nb


def grade(folder: Path, out: Path, feedback: Path, scratch: Path, cwd: Path) -> tuple[int, str]:
    """``python -m posenc.grader folder`` with the test's options; (exit status, what it printed)."""
    stdout = io.StringIO()
    previous_tempdir, tempfile.tempdir = tempfile.tempdir, str(scratch)
    previous_cwd = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(stdout):
            status = main([str(folder), "--out", str(out), "--feedback-dir", str(feedback), *OPTIONS])
    finally:
        os.chdir(previous_cwd)
        tempfile.tempdir = previous_tempdir
    return status, stdout.getvalue()


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    """The whole corpus graded once; everything the run does happens in one temporary folder."""
    require_bwrap()
    sys.path.insert(0, str(CORPUS))
    try:
        import make_corpus
    finally:
        sys.path.remove(str(CORPUS))
    top = tmp_path_factory.mktemp("corpus")
    submissions = top / "class"
    shutil.copytree(CORPUS, submissions, ignore=shutil.ignore_patterns("*.py", "*.csv", "__pycache__"))
    make_corpus.special_files(submissions)
    tampering = sorted(CORPUS.glob("ch01_tamper_*.ipynb"))
    for path in tampering:          # each tampering attempt beside the same answers without it
        twin = submissions / "twins" / path.name.replace("tamper", "honest")
        twin.parent.mkdir(exist_ok=True)
        twin.write_text(json.dumps(honest_twin(path)))
    os.chmod(submissions / "ch01_correct_alice.ipynb", 0o444)    # read-only input is fine
    # What a saboteur would like to read or change: the lecturer's notes and private checks.
    lecturer = top / "lecturer-notes.txt"
    lecturer.write_text("grades to enter by Friday\n")
    os.chmod(lecturer, 0o640)
    os.utime(lecturer, (1_700_000_000, 1_700_000_000))
    (top / "private").mkdir()
    (top / "private" / "p1.py").write_text(f"# {SECRET}\nEXTRA = {{}}\n")
    scratch = top / "scratch"
    scratch.mkdir()
    out, feedback = top / "out" / "grades.csv", top / "feedback"
    status, printed = grade(submissions, out, feedback, scratch, top)
    return dict(top=top, submissions=submissions, tampering=tampering, out=out, feedback=feedback,
                scratch=scratch, lecturer=lecturer, status=status, printed=printed, rows=read_csv(out))


def test_every_row_is_as_expected(corpus_run):
    rows, printed = corpus_run["rows"], corpus_run["printed"]
    assert corpus_run["status"] == 1, printed         # some files could not be graded
    questions = [q.qid for q in load_set("ch01").questions]
    assert list(rows[0]) == ["file", *questions, "total", "percentage", "status", "message"]
    assert rows[0]["file"] == "(maximum)"
    assert [rows[0][q] for q in (*questions, "total")] == ["3", "2", "2", "2", "1", "1", "1", "12"]
    assert "ch01" in rows[0]["message"] and f"seed {SEED}" in rows[0]["message"]
    got = {row["file"]: row for row in rows[1:]}
    expected = read_csv(CORPUS / "expected.csv")
    problems = []
    for want in expected:
        row = got.get(want["file"])
        if row is None:
            problems.append(f"{want['file']}: no row")
            continue
        for column in (*questions, "total", "percentage", "status"):
            if row[column] != want[column]:
                problems.append(f"{want['file']}: {column} is {row[column]!r}, expected {want[column]!r} "
                                f"({row['status']}: {row['message']})")
        if want["message_contains"] not in row["message"]:
            problems.append(f"{want['file']}: message {row['message']!r} lacks {want['message_contains']!r}")
    assert not problems, "\n".join(problems)
    twins = {f"twins/{p.name.replace('tamper', 'honest')}" for p in corpus_run["tampering"]}
    extra = set(got) - {w["file"] for w in expected} - twins
    assert not extra, extra                            # the folder linked to solutions/ gave no rows

    # Tampering never raises the score above the same answers without the tampering.
    for path in corpus_run["tampering"]:
        twin = got[f"twins/{path.name.replace('tamper', 'honest')}"]
        assert float(got[path.name]["total"]) <= float(twin["total"]), (path.name, twin)

    # No cell a spreadsheet would run: every cell starting with =, +, - or @ is quoted.
    text = corpus_run["out"].read_text(encoding="utf-8-sig")
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in csv.reader(io.StringIO(text)) for cell in row)
    assert "\x1b" not in text and "\ud800" not in text


def test_feedback_is_the_students_own_and_bounded(corpus_run):
    feedback, rows = corpus_run["feedback"], corpus_run["rows"]
    names = sorted(os.listdir(feedback))
    assert len(names) == len(rows) - 1                 # one per row: names that used to collide are apart
    assert "sec1%2Fch01_twin_tom.txt" in names and "sec1__ch01_twin_tom.txt" in names
    assert all(len(os.fsencode(name)) <= 255 and not name.startswith(".") for name in names)
    carol = (feedback / "ch01_mistakes_carol.txt").read_text()
    assert "Score: 4/12 (33%)" in carol
    assert "[FAIL] q1 (0/3): layout: you put all sines first" in carol
    assert "without the 2 pi" in carol and "earlier position" in carol and "[PASS] q3 (2/2)" in carol
    ivan = (feedback / "ch01_loop_in_q3_ivan.txt").read_text()
    assert "[FAIL] q3 (0/2)" in ivan and f"within {TIMEOUT} s" in ivan and "[PASS] q4" in ivan
    hank = (feedback / "ch01_raising_hank.txt").read_text()
    assert "ZeroDivisionError" in hank and "SyntaxError" in hank and "[MISSING] q3" in hank
    assert "could not be graded: the file is not valid JSON" in (feedback / "ch01_not_json_ada.txt").read_text()
    # Killing the grader, writing outside its folder, the network, another program: all refused.
    vic = (feedback / "ch01_escape_attempts_vic.txt").read_text()
    refusals = [line for line in vic.splitlines() if "raised PermissionError" in line or "Read-only file" in line]
    assert len(refusals) == 4, vic
    assert "same code as" not in (feedback / "ch01_duplicate_of_alice_zoe.txt").read_text()
    # What the sandbox hides cannot come back through an exception message.
    una = (feedback / "ch01_sandbox_probe_una.txt").read_text()
    assert "raised RuntimeError: found:" in una
    for name in names:
        text = (feedback / name).read_text(encoding="utf-8")
        assert SECRET not in text and "grades to enter" not in text and "\x1b" not in text
        assert BOB not in text or name == "ch01_correct_loops_bob.txt"
        assert len(text) < 70_000
    tess = (feedback / "ch01_surrogates_tess.txt").read_text(encoding="utf-8")
    assert "a lone surrogate: \ufffd" in tess and "]0;pwned" in tess


def test_the_summary_and_what_the_run_left_behind(corpus_run):
    printed, rows, top = corpus_run["printed"], corpus_run["rows"], corpus_run["top"]
    gradable = sum(1 for row in rows[1:] if row["total"])
    assert f"Graded {gradable} of {len(rows) - 1} submissions of ch01" in printed, printed
    assert f"[{len(rows) - 1}/{len(rows) - 1}]" in printed and f"Could not grade {len(rows) - 1 - gradable}:" in printed
    assert "ch01_not_a_notebook_ben.ipynb: invalid" in printed
    assert "\x1b" not in printed and "Kernels confined by bubblewrap" in printed
    # The students' code wrote only in its own sandboxed folders: nothing here, nothing changed.
    assert sorted(p.name for p in top.iterdir()) == ["class", "feedback", "lecturer-notes.txt", "out", "private",
                                                     "scratch"]
    assert list(corpus_run["scratch"].iterdir()) == []
    assert not (corpus_run["submissions"] / "table.npy").exists() and not (ROOT / "table.npy").exists()
    info = os.stat(corpus_run["lecturer"])
    assert stat.S_IMODE(info.st_mode) == 0o640 and info.st_mtime == 1_700_000_000
    assert stat.S_IMODE(os.stat(tempfile.gettempdir()).st_mode) == 0o1777
    # The 20 MB cell and the 100000-deep expression were parsed in kernels, not here.
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss < 3 * 2**20      # KB: under 3 GB


def test_classmates_rows_do_not_depend_on_the_saboteurs(corpus_run, tmp_path):
    """The honest classmates graded alone get exactly the rows they got next to every saboteur."""
    alone = tmp_path / "class"
    alone.mkdir()
    for name in HONEST:
        shutil.copy(CORPUS / f"{name}.ipynb", alone)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    status, printed = grade(alone, tmp_path / "grades.csv", tmp_path / "feedback", scratch, tmp_path)
    assert status == 0, printed
    by_file = {row["file"]: row for row in read_csv(tmp_path / "grades.csv")[1:]}
    together = {row["file"]: row for row in corpus_run["rows"][1:]}
    assert set(by_file) == {f"{name}.ipynb" for name in HONEST}
    for name, row in by_file.items():
        assert without_copies(together[name]) == without_copies(row), (name, together[name], row)
    # Who shares her code depends on who else handed in (the saboteurs' answers are hers): alone, the group
    # is the three honest notebooks with her answers.
    assert by_file["ch01_correct_alice.ipynb"]["message"].startswith(
        "same code as ch01_cells_reordered_xena.ipynb, ch01_duplicate_of_alice_zoe.ipynb (")
    for name in by_file:
        # (the note on a slow but correct answer depends on how busy the machine was)
        feedback = [re.sub(r"correct, but [^\n]*", "correct",
                           (folder / name.replace(".ipynb", ".txt")).read_text())
                    for folder in (corpus_run["feedback"], tmp_path / "feedback")]
        assert feedback[0] == feedback[1], (name, *feedback)
