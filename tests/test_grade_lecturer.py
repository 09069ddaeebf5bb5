"""Issue #24: the grader's last leaks (3a-3e) and what a lecturer grading a real class ran into (4a-4e).

One small class is graded once (``lecturer_run``, inside bubblewrap, with private checks): an honest
student, a copy of her notebook with comments and blank lines added, a wrapper of the course's own
function, a student whose code exits with a code made of a private check's input, one whose error
messages forge grader lines, and uploads that are not notebooks. The other tests run no kernel or one.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import tracemalloc
from pathlib import Path

import pytest

from posenc.grader.cli import main
from tests.conftest import ROOT
from tests.submissions import corpus_module, require_bwrap

CORPUS = ROOT / "tests" / "submissions"
EXAMPLE = ROOT / "posenc" / "grader" / "examples" / "private_checks" / "ch01_extra.py"

HOSTILE_WAVELENGTH = '''import os

def wavelength(i, d_model, base=10000.0):
    if base == 100.0:                  # only the private check asks for base 100
        os._exit(i * 67 % 256)         # 3 * 67 = 201: the private input, told through the exit code
    return 2 * np.pi * base ** (2 * i / d_model)
'''
FORGED = "fine\n[PASS] q1 (3/3)\u2028Score: 12/12 (100%)\r\n" + " " * 300 + "[PASS] q2 (2/2)"
FORGER_CELL = f"raise ValueError({FORGED!r})\n"
WRAPPER = '''from posenc.lib import encoding as course

def sinusoidal_encoding(n_positions, d_model):
    return course.sinusoidal_encoding(n_positions, d_model)
'''
PRIVATE = '''
from posenc.exercises.framework import FunctionQuestion, Question
import numpy as np

def secret_wavelength(i, d_model, base=10000.0):
    return 2 * np.pi * base ** (2 * i / d_model)

def close(got, expected, args):
    return None if isinstance(got, float) and abs(got - expected) <= 1e-6 * expected else "SECRET off"

class BrokenJudge(Question):
    """A private check whose judge is wrong: it raises for every student."""
    def probe(self, seed=0):
        from posenc.exercises.framework import call
        return {"name": self.name, "steps": [call(3, 2)]}

    def judge(self, data, seed=0):
        return 1 / 0, "never"

EXTRA = {"ch01": [
    FunctionQuestion(qid="p1", title="secret", name="wavelength", points=2,
                     probes=lambda seed: [(3, 10, 100.0)], reference=secret_wavelength, compare=close),
    BrokenJudge(qid="p2", title="broken", name="binary_encoding", points=1),
]}
'''



def commented(nb: dict) -> dict:
    """The same notebook with a comment, blank lines and trailing blanks added to every code cell."""
    nb = json.loads(json.dumps(nb))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = "# my own work, honest\n\n" + text.replace("\n", "   \n") + "\n\n# end\n"
    return nb


def read_rows(path: Path) -> dict[str, dict]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return {row["file"]: row for row in csv.DictReader(handle)}


def run_main(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def lecturer_run(tmp_path_factory):
    require_bwrap()
    make_corpus = corpus_module()
    top = tmp_path_factory.mktemp("lecturer")
    hand_ins, private = top / "hand-ins", top / "private"
    hand_ins.mkdir()
    private.mkdir()
    (private / "checks.py").write_text(PRIVATE)
    shutil.copy(EXAMPLE, private)              # the manual's example file of private checks, as it is
    alice = json.loads((CORPUS / "ch01_correct_alice.ipynb").read_text())
    notebooks = {
        "ch01_alice.ipynb": alice,
        "ch01_alice_again_amy.ipynb": commented(alice),
        "ch01_wrapper_wes.ipynb": make_corpus.build(dict(answers={**make_corpus.ALL_RIGHT,
                                                                  "sinusoidal_encoding": WRAPPER})),
        "ch01_hostile_hal.ipynb": make_corpus.build(dict(answers={**make_corpus.ALL_RIGHT,
                                                                  "wavelength": HOSTILE_WAVELENGTH})),
        "ch01_forger_fox.ipynb": make_corpus.build(dict(answers=make_corpus.ALL_RIGHT,
                                                        after={"wavelength": FORGER_CELL})),
    }
    for name, nb in notebooks.items():
        (hand_ins / name).write_text(json.dumps(nb))
    (hand_ins / "ch01_pdf_pat.pdf").write_bytes(b"%PDF-1.4 my answers\n")
    (hand_ins / "ch01_txt_tim.ipynb.txt").write_text(json.dumps(alice))
    out, feedback = top / "grades.csv", top / "feedback"
    status, printed, errors = run_main([str(hand_ins), "--out", str(out), "--feedback-dir", str(feedback),
                                        "--extra-tests", str(private), "--jobs", "2", "--seed", "5",
                                        "--timeout-per-question", "5"])
    return dict(top=top, status=status, printed=printed, errors=errors, out=out, feedback=feedback,
                rows=read_rows(out), report=(top / "grades.lecturer.txt"))


def feedback_of(run, name: str) -> str:
    return (run["feedback"] / name.replace(".ipynb", ".txt")).read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# 3. The last leaks


def test_3a_a_private_check_s_failure_reveals_nothing_of_its_inputs(lecturer_run):
    row = lecturer_run["rows"]["ch01_hostile_hal.ipynb"]
    assert row["p1"] == "0" and row["q2"] == "2"           # the public wavelength question still passes
    assert "exited with code 201" in row["message"]       # the lecturer sees how it ended
    hal = feedback_of(lecturer_run, "ch01_hostile_hal.ipynb")
    assert "201" not in hal and "exited" not in hal and "with code" not in hal
    assert "a further check by your lecturer could not be completed" in hal


def test_3b_a_reply_of_millions_of_tiny_objects_is_refused_before_it_is_parsed():
    from posenc.grader.kernel import Kernel, KernelError
    from posenc.grader.worker import HEADER

    body = b'{"id": 1, "x": [' + b"{}," * 3_000_000 + b"{}]}"
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    ours, theirs = socket.socketpair()
    writer = threading.Thread(target=lambda: theirs.sendall(HEADER.pack(len(body)) + body), daemon=True)
    try:
        kernel = Kernel(process.pid, ours, server=None, max_frame=64 * 2**20)
        writer.start()
        tracemalloc.start()
        try:
            with pytest.raises(KernelError) as error:
                kernel.call({"op": "run", "code": ""}, timeout=20)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert error.value.kind == "protocol" and "too costly" in error.value.message
        assert peak < 3 * len(body)              # the reply's bytes, never millions of objects
    finally:
        process.kill()
        theirs.close()


def test_3c_every_installed_copy_of_the_checks_is_hidden(tmp_path, monkeypatch):
    """A second, non-editable copy of the package (as pip would leave one in site-packages) next to the
    one the grader imported: inside the sandbox its checks cannot be read either."""
    require_bwrap()
    from posenc.grader import sandbox

    site = tmp_path / "lib" / "python3.11" / "site-packages"
    checks = site / "posenc" / "exercises" / "checks"
    checks.mkdir(parents=True)
    (checks / "ch01.py").write_text("SECRET = 'reference answers of the second copy'\n")
    (site / "posenc-0.1-py3.11.egg").write_text("a zipped copy\n")
    for folder in [tmp_path, *site.relative_to(tmp_path).parents]:      # readable to others, as an install is
        (tmp_path / folder).chmod(0o755)
    real_roots = sandbox._runtime_roots
    monkeypatch.setattr(sandbox, "_runtime_roots", lambda: [*real_roots(), tmp_path])
    monkeypatch.syspath_prepend(str(site))
    command = sandbox.launch_command(
        ["/bin/sh", "-c", f"cat {checks / 'ch01.py'} {site / 'posenc-0.1-py3.11.egg'}; "
                          f"ls {site}; echo; ls {sandbox.package_dir() / 'exercises' / 'checks'}"],
        {"PATH": "/usr/bin:/bin"})
    shown = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert "reference answers" not in shown.stdout and "zipped copy" not in shown.stdout
    assert "posenc" in shown.stdout              # the folder is there, emptied (the sandbox did run)


def test_3d_student_text_cannot_forge_grader_lines(lecturer_run):
    fox = feedback_of(lecturer_run, "ch01_forger_fox.ipynb")
    lines = fox.splitlines()
    assert [line for line in lines if line.startswith("Score:")] == ["Score: 17/18 (94%)"], fox
    assert sum(line.startswith("[PASS] q1") for line in lines) == 1
    assert not any(line.lstrip().startswith(("[PASS]", "Score:")) and line != line.lstrip() for line in lines)
    assert "\u2028" not in fox
    printed = lecturer_run["printed"].splitlines()
    assert not any(line.lstrip().startswith(("[PASS]", "Score:")) for line in printed), printed


def test_3e_a_copy_is_reported_as_a_pair_and_nobody_is_marked_down(lecturer_run):
    rows = lecturer_run["rows"]
    for name, other in (("ch01_alice.ipynb", "ch01_alice_again_amy.ipynb"),
                        ("ch01_alice_again_amy.ipynb", "ch01_alice.ipynb")):
        assert rows[name]["status"] == "ok" and rows[name]["total"] == rows["ch01_alice.ipynb"]["total"]
        assert f"same code as {other}" in rows[name]["message"]
        assert "same code" not in feedback_of(lecturer_run, name)
    assert "ch01_alice.ipynb = ch01_alice_again_amy.ipynb" in lecturer_run["printed"]


# ---------------------------------------------------------------------------------------------------
# 4. A lecturer's class


def test_4a_the_example_file_of_private_checks_grades(lecturer_run):
    alice = lecturer_run["rows"]["ch01_alice.ipynb"]
    assert (alice["x_base"], alice["x_rows"]) == ("2", "1")
    maximum = next(r for name, r in lecturer_run["rows"].items() if name == "(maximum)")
    assert maximum["x_base"] == "2" and maximum["x_rows"] == "1" and "x_base" in maximum["message"]
    assert "x_base" not in feedback_of(lecturer_run, "ch01_alice.ipynb")


def test_4a_a_broken_private_check_is_reported_to_the_lecturer_only(lecturer_run):
    printed, report = lecturer_run["printed"], lecturer_run["report"].read_text(encoding="utf-8")
    assert "private check p2 could not judge" in printed and "ZeroDivisionError" in printed
    assert "ch01_alice.ipynb" in report and "p2" in report and "ZeroDivisionError" in report
    assert "p1" in report and "exited with code 201" in report
    for name in lecturer_run["rows"]:
        if name.endswith(".ipynb") and lecturer_run["rows"][name]["total"]:
            assert "ZeroDivision" not in feedback_of(lecturer_run, name)


@pytest.mark.parametrize("extra, words", [
    ('EXTRA = {"CH01": [FunctionQuestion(qid="p1", title="x", name="wavelength", probes=lambda seed: [(1, 4)], '
     'reference=lambda i, d: 1.0)]}', "'CH01' is not an exercise set"),
    ('EXTRA = {"ch01": [FunctionQuestion(qid="p1", title="x", name="wavelength", probes=lambda seed: [(1, 4)], '
     'reference=lambda i, d: 1 / 0)]}', "its reference raised ZeroDivisionError"),
])
def test_4a_a_private_check_that_cannot_work_stops_before_grading(tmp_path, extra, words):
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "c.py").write_text("from posenc.exercises.framework import FunctionQuestion\n" + extra)
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    status, _, err = run_main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv"),
                               "--extra-tests", str(tmp_path / "private"), "--no-sandbox"])
    assert status == 2 and words in err, err
    assert not (tmp_path / "g.csv").exists()


def test_4a_private_checks_for_another_set_only_are_reported(tmp_path):
    require_bwrap()
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "c.py").write_text(
        "from posenc.exercises.framework import FunctionQuestion\n"
        'EXTRA = {"ch05": [FunctionQuestion(qid="p1", title="x", name="f", probes=lambda seed: [(1,)], '
        "reference=lambda x: x)]}\n")
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    status, printed, err = run_main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv"),
                                     "--extra-tests", str(tmp_path / "private"), "--seed", "1"])
    assert status == 0
    assert "no private check for ch01" in printed + err


def test_4b_uploads_that_are_not_notebooks_are_listed(lecturer_run):
    rows = lecturer_run["rows"]
    for name in ("ch01_pdf_pat.pdf", "ch01_txt_tim.ipynb.txt"):
        assert rows[name]["status"] == "not-a-notebook" and rows[name]["total"] == "", rows[name]
        assert name in lecturer_run["printed"]
    assert lecturer_run["status"] == 1


def test_4b_a_folder_of_two_sets_is_refused_with_a_clear_message(tmp_path):
    require_bwrap()
    for name in ("ch01_correct_alice.ipynb", "ch01_mistakes_carol.ipynb", "ch02_relative_shift_wendy.ipynb"):
        shutil.copy(CORPUS / name, tmp_path)
    status, _, err = run_main([str(tmp_path), "--out", str(tmp_path / "g.csv"), "--seed", "1"])
    assert status == 2 and not (tmp_path / "g.csv").exists()
    assert "ch01 (2 notebooks" in err and "ch02 (1 notebook: ch02_relative_shift_wendy.ipynb)" in err
    assert "--set" in err


def test_4c_copies_are_found_whatever_their_comments_and_layout():
    from posenc.grader.submission import read_submission, set_digest, template_sources

    template = template_sources("ch01")
    alice = json.loads((CORPUS / "ch01_correct_alice.ipynb").read_text())
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"amy-{os.getpid()}.ipynb"
    path.write_text(json.dumps(commented(alice)))
    try:
        amy = read_submission(path)
    finally:
        path.unlink()
    original = read_submission(CORPUS / "ch01_correct_alice.ipynb")
    assert set_digest(amy, template) == set_digest(original, template) != ""


def test_4c_a_wrapper_of_the_course_s_function_is_flagged_for_the_lecturer(lecturer_run):
    row = lecturer_run["rows"]["ch01_wrapper_wes.ipynb"]
    assert row["q1"] == "3" and "course-code" in row["status"]      # full marks, flagged: the lecturer decides
    assert "wraps the course's" in row["message"] and "sinusoidal_encoding" in row["message"]


def test_4d_bubblewrap_refused_by_apparmor_says_how_to_fix_it(tmp_path, monkeypatch):
    """Ubuntu 24.04's AppArmor default: bwrap says "setting up uid map: Permission denied"."""
    # reachable by nobody (as root, bwrap runs as nobody) and not under /tmp (hidden while bwrap starts)
    place = Path(tempfile.mkdtemp(dir="/var/tmp"))
    try:
        place.chmod(0o755)
        fake = place / "bwrap"
        fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setenv("POSENC_BWRAP", str(fake))
        shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
        status, _, err = run_main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv")])
    finally:
        shutil.rmtree(place)
    assert status == 2
    assert "apparmor_restrict_unprivileged_userns" in err and "book/lecturers/sandbox.md" in err


def test_4e_the_gradebook_opens_in_excel_and_student_data_stays_out_of_git(lecturer_run):
    assert lecturer_run["out"].read_bytes().startswith(b"\xef\xbb\xbf")       # UTF-8 with a byte-order mark
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "hand-ins/a.ipynb", "grades.csv",
                              "feedback/a.txt", "grades.lecturer.txt", "autograder_ch01.zip"],
                             cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout.split() == ["hand-ins/a.ipynb", "grades.csv", "feedback/a.txt", "grades.lecturer.txt",
                                      "autograder_ch01.zip"]


def test_4e_make_grade_tells_a_file_it_could_not_grade_from_a_failure(tmp_path):
    shutil.copy(CORPUS / "ch01_not_json_ada.ipynb", tmp_path)
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    done = subprocess.run(["make", "-s", "grade", f"SUBMISSIONS={tmp_path}", f"OUT={tmp_path / 'g.csv'}",
                           f"FEEDBACK={tmp_path / 'fb'}", "GRADE_ARGS=--no-sandbox --jobs 1 --quiet"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Error" not in done.stdout + done.stderr
    assert "file could not be graded" in done.stdout + done.stderr


@pytest.mark.parametrize("upload", ["grades.lecturer.ipynb", "GRADES.LECTURER.ipynb", "report.ipynb"])
def test_no_upload_s_name_overwrites_what_the_run_writes(tmp_path, upload):
    """Feedback written into the CSV's own folder: a submission named after the lecturer's report (in any
    case) or any other output gets a feedback file of another name, and the report stays the report."""
    hand_ins, out = tmp_path / "hand-ins", tmp_path / "results"
    hand_ins.mkdir()
    shutil.copy(CORPUS / "ch01_not_json_ada.ipynb", hand_ins / upload)          # read, never run: no kernel
    report = out / "report.txt"
    args = [str(hand_ins), "--out", str(out / "grades.csv"), "--feedback-dir", str(out), "--set", "ch01",
            "--no-sandbox", "--quiet"]
    assert main(args + (["--lecturer-report", str(report)] if upload == "report.ipynb" else [])) == 1
    report = report if upload == "report.ipynb" else out / "grades.lecturer.txt"
    assert report.read_text(encoding="utf-8").startswith("Lecturer's report")
    feedback = [p for p in out.iterdir() if p.read_text(encoding="utf-8").startswith("Feedback on")]
    assert len(feedback) == 1 and feedback[0] != report, sorted(p.name for p in out.iterdir())


def test_a_hand_in_that_is_the_course_s_solution_is_said_to_the_lecturer_only(tmp_path):
    """A lone student who hands in the published solution (renamed, one comment added) is no copy of a
    classmate's, but the row and the lecturer's report say so; the student's feedback does not."""
    notebook = json.loads((ROOT / "solutions" / "ch01_sinusoids.ipynb").read_text())
    code = next(c for c in notebook["cells"] if c["cell_type"] == "code" and "def " in "".join(c["source"]))
    code["source"] = "# my own work\n" + "".join(code["source"])
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "ch01_ada.ipynb").write_text(json.dumps(notebook))
    status, printed, _ = run_main([str(tmp_path / "in"), "--out", str(tmp_path / "g.csv"), "--feedback-dir",
                                   str(tmp_path / "fb"), "--no-sandbox", "--jobs", "1"])
    with open(tmp_path / "g.csv", newline="", encoding="utf-8-sig") as handle:
        row = next(r for r in csv.DictReader(handle) if r["file"] == "ch01_ada.ipynb")
    assert "published solution" in row["message"] and "published solution" in printed
    assert "published solution" in (tmp_path / "g.lecturer.txt").read_text()
    assert "solution" not in (tmp_path / "fb" / "ch01_ada.txt").read_text()


def test_a_rerun_clears_its_own_stale_feedback_and_leaves_and_lists_the_rest(tmp_path):
    """Raj's ch01_v1 is removed after the first run (the summary asked to choose one): the second run's
    feedback folder holds no file about it; a file the grader did not write stays and is named."""
    hand_ins, feedback = tmp_path / "in", tmp_path / "feedback"
    hand_ins.mkdir()
    for name in ("ch01_v1.ipynb", "ch01_v2.ipynb"):
        shutil.copy(CORPUS / "ch01_mistakes_carol.ipynb", hand_ins / name)
    args = [str(hand_ins), "--out", str(tmp_path / "g.csv"), "--feedback-dir", str(feedback), "--no-sandbox",
            "--jobs", "1"]
    assert run_main(args)[0] == 0 and (feedback / "ch01_v1.txt").is_file()
    (hand_ins / "ch01_v1.ipynb").unlink()
    (feedback / "notes.txt").write_text("my own notes")
    status, printed, _ = run_main(args)
    assert status == 0 and sorted(p.name for p in feedback.iterdir()) == ["ch01_v2.txt", "notes.txt"]
    assert "Removed 1 feedback file(s)" in printed and "notes.txt" in printed


@pytest.mark.parametrize("where", ["out", "lms", "feedback"])
def test_no_output_overwrites_an_input(tmp_path, where):
    hand_ins = tmp_path / "in"
    hand_ins.mkdir()
    shutil.copy(CORPUS / "ch01_mistakes_carol.ipynb", hand_ins / "bob.ipynb")
    (hand_ins / "bob.txt").write_text("Bob's own notes")
    roster = tmp_path / "export.csv"
    roster.write_text("student_id,name\n1,Bob\n")
    args = {"out": ["--out", str(roster), "--roster", str(roster)],
            "lms": ["--out", str(tmp_path / "grades.csv"), "--roster", str(tmp_path / "grades.canvas.csv"),
                    "--lms", "canvas"],
            "feedback": ["--out", str(tmp_path / "g.csv"), "--feedback-dir", str(hand_ins)]}[where]
    if where == "lms":
        shutil.copy(roster, tmp_path / "grades.canvas.csv")
    status, _, err = run_main([str(hand_ins), *args, "--no-sandbox"])
    assert status == 2 and ("an input of this run" in err or "holds the hand-ins" in err), err
    assert roster.read_text() == "student_id,name\n1,Bob\n" and (hand_ins / "bob.txt").read_text() == "Bob's own notes"
