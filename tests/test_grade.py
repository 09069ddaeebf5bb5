"""The batch grader on the corpus of realistic submissions in tests/submissions (expected rows in expected.csv).

The corpus is graded once, on both cores (``--jobs 2``), through the command's ``main``; one test then
checks every row, the feedback files, the summary and what the run left behind, so that pytest-xdist
never grades the corpus twice.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

from posenc.exercises import load_set
from posenc.grader.cli import main
from posenc.grader.sandbox import landlock_abi
from tests.conftest import ROOT

CORPUS = ROOT / "tests" / "submissions"
TIMEOUT = "2"          # seconds of computing per cell and per question; a loop costs this much
MEMORY = "300"         # MB on top of the course's imports


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def honest_twin(path: Path) -> dict:
    """A tampering notebook without the tampering cells (the cells the student added)."""
    nb = json.loads(path.read_text())
    nb["cells"] = [c for c in nb["cells"] if not str(c.get("id") or "").startswith("student-")]
    return nb


def test_the_corpus_is_graded_as_expected(tmp_path):
    # Everything the run does happens in tmp_path: submissions, temporary folders, output.
    submissions = tmp_path / "class"
    shutil.copytree(CORPUS, submissions, ignore=shutil.ignore_patterns("*.py", "*.csv", "__pycache__"))
    tampering = sorted(CORPUS.glob("ch01_tamper_*.ipynb"))
    for path in tampering:          # each tampering attempt beside the same answers without it
        twin = submissions / "twins" / path.name.replace("tamper", "honest")
        twin.parent.mkdir(exist_ok=True)
        twin.write_text(json.dumps(honest_twin(path)))
    os.chmod(submissions / "ch01_correct_alice.ipynb", 0o444)    # read-only input is fine
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    out, feedback = tmp_path / "out" / "grades.csv", tmp_path / "feedback"
    stdout = io.StringIO()
    previous_tempdir, tempfile.tempdir = tempfile.tempdir, str(scratch)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(stdout):
            status = main([str(submissions), "--out", str(out), "--feedback-dir", str(feedback),
                           "--timeout-per-question", TIMEOUT, "--memory-mb", MEMORY, "--jobs", "2",
                           "--seed", "20240607"])
    finally:
        os.chdir(cwd)
        tempfile.tempdir = previous_tempdir
    printed = stdout.getvalue()

    # Exit status 1: some files could not be graded.
    assert status == 1, printed

    # The CSV: header, the maximum row, one row per submission in the expected order and values.
    rows = read_csv(out)
    questions = [q.qid for q in load_set("ch01").questions]
    assert list(rows[0]) == ["file", *questions, "total", "percentage", "status", "message"]
    assert rows[0]["file"] == "(maximum)"
    assert [rows[0][q] for q in (*questions, "total")] == ["3", "2", "2", "2", "1", "1", "1", "12"]
    assert "ch01" in rows[0]["message"] and "seed 20240607" in rows[0]["message"]
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
    extra = set(got) - {w["file"] for w in expected} - {f"twins/{p.name.replace('tamper', 'honest')}"
                                                        for p in tampering}
    assert not extra, extra

    # Tampering never raises the score above the same answers without the tampering.
    for path in tampering:
        twin = got[f"twins/{path.name.replace('tamper', 'honest')}"]
        assert float(got[path.name]["total"]) <= float(twin["total"]), (path.name, twin)

    # Feedback: one file per submission, what the student would have seen inline.
    names = sorted(p.name for p in feedback.iterdir())
    assert len(names) == len(rows) - 1
    carol = (feedback / "ch01_mistakes_carol.txt").read_text()
    assert "Score: 4/12 (33%)" in carol
    assert "[FAIL] q1 (0/3): layout: you put all sines first" in carol
    assert "without the 2 pi" in carol and "earlier position" in carol and "[PASS] q3 (2/2)" in carol
    ivan = (feedback / "ch01_loop_in_q3_ivan.txt").read_text()
    assert f"[FAIL] q3 (0/2): your code did not finish within {TIMEOUT} s" in ivan and "[PASS] q4" in ivan
    hank = (feedback / "ch01_raising_hank.txt").read_text()
    assert "ZeroDivisionError" in hank and "SyntaxError" in hank and "[MISSING] q3" in hank
    assert "could not be graded: the file is not valid JSON" in (feedback / "ch01_not_json_ada.txt").read_text()
    if landlock_abi() >= 1:
        # killing the fork server, writing outside its folder, the network, another program: all refused
        vic = (feedback / "ch01_escape_attempts_vic.txt").read_text()
        assert vic.count("raised PermissionError") == 4, vic
    assert "same code as" not in (feedback / "ch01_duplicate_of_alice_zoe.txt").read_text()

    # The summary and progress on stdout.
    assert "Graded 31 of 37 submissions of ch01" in printed, printed
    assert "[37/37]" in printed and "Could not grade 6:" in printed
    assert "ch01_not_a_notebook_ben.ipynb: invalid" in printed

    # The students' code wrote only in its own temporary folders, and those are gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["class", "feedback", "out", "scratch"]
    assert list(scratch.iterdir()) == []
    assert not (submissions / "table.npy").exists() and not (ROOT / "table.npy").exists()
