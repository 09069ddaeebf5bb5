"""Issue 32, item 5: what an attacker found beyond the known attacks, each tried here.

* A private check's inputs must not come back to the student: a kernel restarted after a private check
  starts in a fresh, empty folder (with and without bubblewrap), and no exit code or cell reached after a
  private check has run reaches the student's feedback (the lecturer's report keeps it).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from pathlib import Path

import pytest

from posenc.grader.cli import main
from tests.conftest import ROOT
from tests.submissions import corpus_module, require_bwrap

CORPUS = ROOT / "tests" / "submissions"
PRIVATE = '''
from posenc.exercises.framework import FunctionQuestion
import numpy as np

EXTRA = {"ch01": [FunctionQuestion(qid="p1", title="secret", name="wavelength", points=2,
                                   probes=lambda seed: [(3, 10, 100.0)],
                                   reference=lambda i, d, base=1e4: 2 * np.pi * base ** (2 * i / d))]}
'''
# The private check's input (i = 3, base 100) written down, the kernel ended; the restarted kernel replays
# the first cell, which finds the note and ends with a code made of it (3 * 67 = 201).
STASH = "{folder}leak.txt"
LEAKING_WAVELENGTH = '''import os

def wavelength(i, d_model, base=10000.0):
    if base == 100.0:
        with open({stash!r}, "w") as note:
            note.write(str(i * 67 % 256))
        os._exit(3)
    return 2 * np.pi * base ** (2 * i / d_model)
'''
REPLAY = '''import os
if os.path.exists({stash!r}):
    os._exit(int(open({stash!r}).read()))
'''



def leaking_notebook(stash: str) -> dict:
    make_corpus = corpus_module()
    answers = dict(make_corpus.ALL_RIGHT)
    answers["wavelength"] = LEAKING_WAVELENGTH.format(stash=stash)
    answers["sinusoidal_encoding"] = REPLAY.format(stash=stash) + answers["sinusoidal_encoding"]
    return make_corpus.build(dict(answers=answers))


def run_main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


def read_rows(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}


def private_folder(top: Path) -> Path:
    (top / "private").mkdir()
    (top / "private" / "checks.py").write_text(PRIVATE)
    return top / "private"


@pytest.mark.parametrize("sandbox", [True, False], ids=["bubblewrap", "no-sandbox"])
def test_a_private_check_s_input_cannot_come_back_through_a_restarted_kernel(tmp_path, sandbox):
    """The note is written in the kernel's own folder (relative path): the restarted kernel starts in another,
    empty one, so the replay finds nothing; the feedback says nothing of how the kernel ended."""
    if sandbox:
        require_bwrap()
    (tmp_path / "hand-ins").mkdir()
    (tmp_path / "hand-ins" / "ch01_hal.ipynb").write_text(json.dumps(leaking_notebook(STASH.format(folder=""))))
    out = tmp_path / "grades.csv"
    status, printed, err = run_main([str(tmp_path / "hand-ins"), "--out", str(out), "--feedback-dir",
                                     str(tmp_path / "feedback"), "--extra-tests", str(private_folder(tmp_path)),
                                     "--seed", "1", "--jobs", "1", "--timeout-per-question", "5",
                                     *([] if sandbox else ["--no-sandbox"])])
    assert status == 0, printed + err
    row = read_rows(out)["ch01_hal.ipynb"]
    feedback = (tmp_path / "feedback" / "ch01_hal.txt").read_text()
    assert row["p1"] == "0" and row["total"] == "12", row
    assert "exited with code 3" in row["message"] and "201" not in row["message"], row   # no replay found it
    assert "201" not in feedback and "exited" not in feedback and "cell" not in feedback, feedback


def test_nothing_that_happens_after_a_private_check_reaches_the_student(tmp_path):
    """Defence in depth, where the kernel could keep a note outside its folder (no bubblewrap, no Landlock):
    the replay after a private check ends with code 201, which the lecturer sees and the student does not."""
    from posenc.grader.kernel import Limits
    from posenc.grader.report import feedback_text
    from posenc.grader.session import Plan, ServerPool, Settings, grade_submission, load_extra_tests
    from posenc.grader.submission import read_submission

    shared = tmp_path / "shared"
    shared.mkdir()
    path = tmp_path / "ch01_hal.ipynb"
    path.write_text(json.dumps(leaking_notebook(STASH.format(folder=f"{shared}/"))))
    plan = Plan.make("ch01", load_extra_tests(private_folder(tmp_path)))
    pool = ServerPool(sandboxed=False)
    try:
        sub = read_submission(path, parse=pool.parse)
        settings = Settings(seed=1, timeout_per_question=5, limits=Limits(sandbox=False, confine=False))
        graded = grade_submission(sub, plan, pool, settings)
    finally:
        pool.close()
    assert (shared / "leak.txt").read_text() == "201"                 # the note was kept, outside the folder
    assert any("exited with code 201" in note for note in graded.notes), graded.notes   # the lecturer sees it
    feedback = feedback_text(graded, plan)
    assert "201" not in feedback and "exited" not in feedback and "cell 1" not in feedback, feedback
    assert "a further check by your lecturer could not be completed" in feedback
