"""Private checks from --extra-tests, --set, exit status 0, and the benchmark's report."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import textwrap

import pytest

from posenc.exercises import SET_IDS, load_set
from posenc.grader.cli import main
from posenc.grader.sandbox import find_bwrap
from tests.conftest import ROOT

FULL_MARKS = f"{load_set('ch01').max_points:g}"    # alice's notebook answers every question of ch01
from tests.submissions import require_bwrap

CORPUS = ROOT / "tests" / "submissions"

FUNCTION_CHECKS = '''
import os
from posenc.exercises.framework import FunctionQuestion
import numpy as np

with open({marker!r}, "a") as log:          # who imports this file: the grader only, never a kernel
    log.write(f"{{os.getpid()}}\\n")

def secret_wavelength(i, d_model, base=10000.0):
    return 2 * np.pi * base ** (2 * i / d_model)

def compare(got, expected, args):
    if isinstance(got, float) and abs(got - expected) <= 1e-6 * abs(expected):
        return None
    return "SECRET-DIAGNOSIS wavelength is off"

EXTRA = {{"ch01": [
    FunctionQuestion(qid="p1", title="secret", name="wavelength", points=2,
                     probes=lambda seed: [(3, 10, 100.0), (seed % 7, 16)], reference=secret_wavelength,
                     compare=compare),
]}}
'''

CUSTOM_CHECKS = '''
import os
import numpy as np
from posenc.exercises.framework import Question, call

class BitsAreInts(Question):
    """A question of its own: its probe is plain data; its judge runs in the grading process."""
    def probe(self, seed=0):
        return {{"name": self.name, "steps": [call(5, 3)]}}

    def judge(self, data, seed=0):
        with open({marker!r}, "a") as log:
            log.write(f"{{os.getpid()}}\\n")
        value = data[0].value
        return isinstance(value, np.ndarray) and value.dtype.kind in "iu", "SECRET-DIAGNOSIS bits should be integers"

EXTRA = {{"ch01": [BitsAreInts(qid="p2", title="ints", name="binary_encoding", points=1)]}}
'''


def test_private_checks_count_but_show_only_pass_or_fail(tmp_path):
    require_bwrap()
    private = tmp_path / "private"          # outside the repository, as a lecturer's folder would be
    private.mkdir()
    function_log, custom_log = tmp_path / "function.log", tmp_path / "custom.log"
    (private / "a_function.py").write_text(textwrap.dedent(FUNCTION_CHECKS.format(marker=str(function_log))))
    (private / "b_custom.py").write_text(textwrap.dedent(CUSTOM_CHECKS.format(marker=str(custom_log))))
    names = ["ch01_correct_alice.ipynb", "ch01_mistakes_carol.ipynb", "ch01_mistakes_erin.ipynb",
             "my_homework_final_v2.ipynb"]
    for name in names:
        shutil.copy(CORPUS / name, tmp_path / name)
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main([*(str(tmp_path / n) for n in names), "--out", str(out), "--feedback-dir", str(feedback),
                       "--extra-tests", str(private), "--set", "ch01", "--jobs", "2", "--seed", "11",
                       "--timeout-per-question", "5"])
    assert status == 0, printed.getvalue()            # every submission could be graded
    rows = list(csv.DictReader(open(out, newline="", encoding="utf-8-sig")))
    assert list(rows[0])[1:11] == ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "p1", "p2", "total"]
    assert rows[0]["p1"] == "2" and rows[0]["p2"] == "1" and rows[0]["total"] == "15"
    assert "private: p1, p2" in rows[0]["message"]
    by_file = {r["file"]: r for r in rows[1:]}
    assert [by_file[n]["p1"] for n in names] == ["2", "0", "0", "2"]      # carol: no 2 pi; erin: degrees
    assert [by_file[n]["p2"] for n in names] == ["1", "1", "0", "1"]      # erin's bits are floats
    assert by_file["ch01_correct_alice.ipynb"]["total"] == "15"
    assert by_file["my_homework_final_v2.ipynb"]["percentage"] == "100.0"   # graded as ch01 (--set)

    carol = (feedback / "ch01_mistakes_carol.txt").read_text()
    assert "Further checks by your lecturer: 1 of 2 passed" in carol
    assert "check 1: failed" in carol and "check 2: passed" in carol
    assert "SECRET" not in carol and "p1" not in carol and "secret" not in carol
    assert "Score: 5/15" in carol

    # The private files never reached a kernel: only this process imported them and ran their judges.
    assert function_log.read_text().split() == [str(os.getpid())]
    assert custom_log.read_text().split() == [str(os.getpid())] * len(names)


def test_a_broken_private_checks_folder_stops_before_grading(tmp_path, capsys):
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "oops.py").write_text("EXTRA = {'ch01': ['not a question']}\n")
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    status = main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv"),
                   "--extra-tests", str(tmp_path / "private")])
    assert status == 2 and "must define EXTRA" in capsys.readouterr().err
    assert not (tmp_path / "g.csv").exists()


def test_no_submissions_is_a_usage_error(tmp_path, capsys):
    assert main([str(tmp_path), "--out", str(tmp_path / "g.csv")]) == 2
    assert "no .ipynb submissions" in capsys.readouterr().err


def test_the_benchmark_reports_throughput():
    from posenc.bench import bench_grader

    with contextlib.redirect_stdout(io.StringIO()) as printed:
        report = bench_grader(n=4, jobs=2, sandbox=find_bwrap() is not None)
    assert report["exit_status"] == 0 and report["per_minute"] > 0 and report["cpu_per_submission"] > 0
    assert "per minute" in printed.getvalue()


@pytest.mark.parametrize("set_id", SET_IDS)
def test_every_set_s_solution_gets_full_marks_and_its_exercise_less(tmp_path, set_id):
    """The grader is generic: any exercise set whose notebooks are generated, torch modules included, in
    bubblewrap and under the memory limit."""
    from posenc.exercises import load_set

    require_bwrap()
    copied = 0
    for folder in ("solutions", "exercises"):
        for path in (ROOT / folder).glob(f"{set_id}_*.ipynb"):
            shutil.copy(path, tmp_path / f"{folder}_{path.name}")
            copied += 1
    if copied < 2:
        pytest.skip(f"{set_id}: its notebooks are not generated yet")
    out = tmp_path / "g.csv"
    status = main([str(tmp_path), "--out", str(out), "--quiet", "--seed", "3", "--timeout-per-question", "60"])
    rows = {r["file"]: r for r in csv.DictReader(open(out, newline="", encoding="utf-8-sig"))}
    assert status == 0, rows  # a file that could not be graded: its row says why
    maximum = f"{load_set(set_id).max_points:g}"
    for name, row in rows.items():
        if name.startswith("solutions_"):
            assert row["total"] == maximum and row["status"] == "ok", row
        elif name.startswith("exercises_"):
            assert row["status"] == "ok" and float(row["total"]) < float(maximum), row


@pytest.mark.parametrize("bad, words", [
    ("points=-3", "positive number"),
    ("points=float('nan')", "positive number"),
    ("qid='total'", "cannot be a gradebook column"),
    ("qid='=HYPERLINK(1)'", "cannot be a gradebook column"),
])
def test_private_checks_that_would_break_the_gradebook_are_refused(tmp_path, capsys, bad, words):
    (tmp_path / "private").mkdir()
    fields = dict(qid="'p1'", points="1")
    key, value = bad.split("=", 1)
    fields[key] = value
    (tmp_path / "private" / "bad.py").write_text(
        "from posenc.exercises.framework import FunctionQuestion\n"
        f"EXTRA = {{'ch01': [FunctionQuestion(qid={fields['qid']}, title='x', name='wavelength', "
        f"points={fields['points']}, probes=lambda seed: [(1, 4)], reference=lambda i, d: 1.0)]}}\n")
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    status = main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv"),
                   "--extra-tests", str(tmp_path / "private"), "--no-sandbox"])
    assert status == 2 and words in capsys.readouterr().err
    assert not (tmp_path / "g.csv").exists()


def test_the_grader_refuses_to_run_unconfined_unless_told(tmp_path, capsys, monkeypatch):
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    monkeypatch.setenv("POSENC_BWRAP", "none")            # as on a machine without bubblewrap
    out = tmp_path / "g.csv"
    assert main([str(tmp_path), "--out", str(out), "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "bubblewrap" in err and "--no-sandbox" in err and not out.exists()
    assert main([str(tmp_path), "--out", str(out), "--seed", "1", "--no-sandbox", "--jobs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "without bubblewrap" in printed and "seccomp" in printed
    assert list(csv.DictReader(open(out, newline="", encoding="utf-8-sig")))[1]["total"] == FULL_MARKS


def test_set_given_grades_that_set_and_marks_the_others(tmp_path, capsys):
    require_bwrap()
    for name in ("ch01_correct_alice.ipynb", "ch02_relative_shift_wendy.ipynb"):
        shutil.copy(CORPUS / name, tmp_path)
    out = tmp_path / "g.csv"
    assert main([str(tmp_path), "--out", str(out), "--seed", "1", "--jobs", "2", "--set", "ch01"]) == 1
    rows = {r["file"]: r for r in csv.DictReader(open(out, newline="", encoding="utf-8-sig"))}
    assert rows["ch01_correct_alice.ipynb"]["total"] == FULL_MARKS
    assert rows["ch02_relative_shift_wendy.ipynb"]["status"] == "wrong-set"


def test_the_manual_says_the_example_private_checks_are_public():
    """The example ships in the package every student installs: the manual must not let a lecturer think
    it protects anything as it is."""
    from pathlib import Path

    import posenc

    example = Path(posenc.__file__).parent / "grader" / "examples" / "private_checks" / "ch01_extra.py"
    page = (Path(__file__).parents[1] / "book" / "lecturers" / "private-checks.md").read_text()
    assert example.is_file() and "protects nothing" in " ".join(page.split())
