"""Issue 32, item 5: what an attacker found beyond the known attacks, each tried here.

* A private check's inputs must not come back to the student: a kernel restarted after a private check
  starts in a fresh, empty folder (with and without bubblewrap), and no exit code or cell reached after a
  private check has run reaches the student's feedback (the lecturer's report keeps it).
* Memory: the judge and the notebook parser bound what they accept before they allocate: a 63 MB answer to a
  choice question, a notebook with a 95 MB code cell.
* A folder of hand-ins 1000 deep gets a row of its own and the run goes on; a fault of the grader's own is
  an exit status of its own, never the 1 of "some files could not be graded".
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


# ---------------------------------------------------------------------------------------------------
# Memory: bounded before it is allocated


def peak_while(action) -> tuple[object, int]:
    """What ``action()`` returns, and the most memory Python allocated meanwhile (bytes)."""
    import tracemalloc

    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["choice", "value"])
def test_the_judge_refuses_a_huge_answer_before_reading_it(kind):
    """``"ab," * 21_000_000`` (63 MB) took the grading process to 1.5 GB and 18 s in read_choice; here a
    1.2 MB one (under tracemalloc, which slows every allocation down) must not cost a copy of itself."""
    from posenc.exercises import SET_IDS, load_set
    from posenc.exercises.framework import ChoiceQuestion, ValueQuestion

    wanted = ChoiceQuestion if kind == "choice" else ValueQuestion
    question = next(q for s in SET_IDS for q in load_set(s).questions if type(q) is wanted)
    for answer in ("ab," * 400_000, ["ab"] * 400_000):
        (passed, message), peak = peak_while(lambda: question.judge([answer], 0))
        assert not passed and "characters" in message, message
        assert peak < 2**20, peak                    # not one copy of the answer


def test_a_notebook_with_a_huge_code_cell_costs_the_grader_no_copy_of_it(tmp_path):
    """One 95 MB code cell took the grading process to 897 MB (the reply carried the cell twice, the request
    held it in base64): the notebook goes to the parsing kernel as it is, and the kernel refuses code beyond
    what the grader reads before it replies."""
    from posenc.grader.sandbox import find_bwrap
    from posenc.grader.session import ServerPool
    from posenc.grader.status import INVALID
    from posenc.grader.submission import read_submission

    nb = corpus_module().build(dict(answers={"sinusoidal_encoding": "x = 1\n" + "# padding\n" * 3_000_000}))
    path = tmp_path / "ch01_huge.ipynb"
    path.write_text(json.dumps(nb))
    size = path.stat().st_size
    pool = ServerPool(sandboxed=find_bwrap() is not None)
    try:
        pool.get(None)
        sub, peak = peak_while(lambda: read_submission(path, parse=pool.parse))
    finally:
        pool.close()
    assert sub.problem == INVALID and "MB of code" in sub.message, sub.message
    assert peak < 1.3 * size, (peak / size)          # the file's bytes, read once, and little else


# ---------------------------------------------------------------------------------------------------
# Odd folders and the grader's own faults


def test_a_folder_too_deep_gets_a_row_and_the_run_goes_on(tmp_path):
    hand_ins = tmp_path / "hand-ins"
    hand_ins.mkdir()
    (hand_ins / "ch01_alice.ipynb").write_bytes((CORPUS / "ch01_correct_alice.ipynb").read_bytes())
    folders = [hand_ins / "nest"]
    for _ in range(1000):
        folders.append(folders[-1] / "d")
    for folder in folders:                                # (pathlib's own mkdir and rmtree recurse)
        folder.mkdir()
    (folders[-1] / "ch01_buried.ipynb").write_bytes((CORPUS / "ch01_correct_alice.ipynb").read_bytes())
    out = tmp_path / "grades.csv"
    try:
        status, printed, err = run_main([str(hand_ins), "--out", str(out), "--feedback-dir",
                                         str(tmp_path / "feedback"), "--no-sandbox", "--jobs", "1", "--seed", "1"])
    finally:
        (folders[-1] / "ch01_buried.ipynb").unlink()
        for folder in reversed(folders):
            folder.rmdir()
    assert status == 1, printed + err                          # one row could not be graded; the rest was
    rows = read_rows(out)
    assert rows["ch01_alice.ipynb"]["total"] == "12"
    [deep_row] = [row for name, row in rows.items() if name.startswith("nest/")]
    assert deep_row["status"] == "invalid" and "deeper than" in deep_row["message"], deep_row
    assert len(list((tmp_path / "feedback").iterdir())) == 2 and "RecursionError" not in printed + err


def test_a_fault_of_the_grader_s_own_is_not_the_exit_status_of_a_file_it_could_not_grade(tmp_path, monkeypatch):
    import posenc.grader.cli as cli

    def broken(*args, **kwargs):
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(cli, "find_submissions", broken)
    status, printed, err = run_main([str(tmp_path), "--out", str(tmp_path / "g.csv"), "--no-sandbox"])
    assert status == cli.GRADER_FAILED and status not in (0, 1, 2)
    assert "the grader failed: RuntimeError: a bug of ours" in err and "please report" in err
