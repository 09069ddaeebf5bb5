"""The grader's parts that run no student code: reading submissions, detecting the set, requests, protocol."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from posenc.exercises import load_set
from posenc.exercises.probe import LibObject, collect, decode, encode
from posenc.grader.cli import choose_set, find_submissions, mark_problems
from posenc.grader.report import clean, csv_cell, feedback_names, say
from posenc.grader.session import Plan, remove_tree
from posenc.grader.kernel import Kernel, KernelError
from posenc.grader.submission import (
    EMPTY, INVALID, MIN_EVIDENCE, MIN_OWN_CELL, SYMLINK, Submission, detect_set, parse_notebook, prepare_cell, read_submission, set_digest,
    template_sources,
)
from posenc.grader.worker import HEADER
from posenc.exercises.authoring import notebook_namespace
from tests.conftest import ROOT

EXERCISE = ROOT / "exercises" / "ch01_sinusoids.ipynb"
SOLUTION = ROOT / "solutions" / "ch01_sinusoids.ipynb"


@pytest.mark.parametrize("content, problem, words", [
    (b"", INVALID, "empty"),
    (b"def f(): pass\n", INVALID, "not valid JSON"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", INVALID, "not text"),
    (b'["a", "list"]', INVALID, "not a Jupyter notebook"),
    (b'{"nbformat": 4, "metadata": {}}', INVALID, "not a Jupyter notebook"),
    (b'{"nbformat": 4, "cells": [], "metadata": {"posenc": {"exercise_set": "ch01"}}}', EMPTY, "no code"),
    (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": "  \\n"}], "metadata": {}}', EMPTY, "no code"),
])
def test_broken_files_get_a_problem_and_a_readable_message(tmp_path, content, problem, words):
    path = tmp_path / "ch01_broken.ipynb"
    path.write_bytes(content)
    sub = read_submission(path)
    assert sub.problem == problem and words in sub.message, sub.message


def test_the_exercise_notebook_reads_cleanly_with_its_set_from_metadata():
    sub = read_submission(EXERCISE)
    assert sub.gradable and sub.set_id == "ch01" and sub.set_evidence == "notebook metadata"
    assert any("sinusoidal_encoding" in cell.defines for cell in sub.cells)


def test_set_detection_falls_back_to_the_checker_call_then_the_file_name():
    cell = ['from posenc.exercises import checker\ncheck = checker("ch03")']
    assert detect_set({"metadata": {}}, "homework.ipynb", cell) == ("ch03", 'its checker("ch03") call')
    assert detect_set({"metadata": {}}, "Ch02-relative_bob.ipynb", ["x = 1"]) == ("ch02", "its file name")
    assert detect_set({"metadata": {}}, "homework_ch1.ipynb", ["x = 1"]) == (None, "")
    assert detect_set({"metadata": {"posenc": {"exercise_set": "ch04"}}}, "ch01_x.ipynb", cell)[0] == "ch04"


def test_check_calls_are_dropped_and_ipython_syntax_translated():
    cell = prepare_cell(3, "abc", 'x = 1\ncheck("q2")\n%time y = x\ncheck.summary()\ndef f():\n    check("q1")\n')
    assert cell.checks == ["q2", ""]
    assert cell.code.count("check(") == 1 and '    check("q1")' in cell.code    # only top-level calls go
    assert "run_line_magic" in cell.code and cell.defines == {"x", "f"}
    assert cell.code.splitlines()[1] == "pass" and len(cell.code.splitlines()) == 6   # line numbers kept
    compile(cell.code, "<cell>", "exec")
    spread = prepare_cell(1, "", 'a = 1; check(\n    "q1"); b = 2\nc = 3\n')
    assert spread.checks == ["q1"] and spread.defines == {"a", "b", "c"}
    assert spread.code.splitlines()[2] == "c = 3" and "check" not in spread.code
    broken = prepare_cell(1, "", "def f(:\n")
    assert broken.code == "def f(:\n"           # left for the kernel to report as a SyntaxError


def test_folders_are_searched_and_each_file_is_graded_once(tmp_path):
    (tmp_path / "a" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "a" / "x.ipynb").write_text("{}")
    (tmp_path / "a" / ".ipynb_checkpoints" / "x-checkpoint.ipynb").write_text("{}")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.ipynb").write_text("{}")
    (tmp_path / "b" / "notes.txt").write_text("")
    found = find_submissions([str(tmp_path / "a"), str(tmp_path / "a" / "x.ipynb"), str(tmp_path / "b")])
    notebooks = [f for f in found if f.notebook]
    assert len(notebooks) == 2
    assert len({f.name for f in notebooks}) == 2               # same file name in two folders: told apart
    assert [f.name for f in found if not f.notebook] == ["notes.txt"]     # listed, to say it is not graded
    (tmp_path / "b" / "grades.csv").write_text("")                         # a rerun's own output is no upload
    (tmp_path / "b" / "feedback").mkdir()
    (tmp_path / "b" / "feedback" / "x.txt").write_text("")
    again = find_submissions([str(tmp_path / "b")], exclude=(tmp_path / "b" / "grades.csv", tmp_path / "b" / "feedback"))
    assert sorted(f.name for f in again) == ["notes.txt", "x.ipynb"]


@pytest.fixture(scope="module")
def solution():
    return notebook_namespace(SOLUTION)


@pytest.fixture(scope="module")
def exercise():
    return notebook_namespace(EXERCISE)


@pytest.mark.parametrize("which", ["solution", "exercise"])
def test_the_kernel_gets_plain_data_and_gives_the_inline_verdict(request, which):
    """What the grader sends a kernel is the question's probe as JSON: no reference, no code; the verdict
    from the kernel's answer is the inline check's."""
    namespace = request.getfixturevalue(which)
    for question in load_set("ch01").questions:
        message = Plan.collect_message(question, 5)
        assert set(message) == {"op", "probe"} and json.loads(json.dumps(message)) == message
        probe = decode(message["probe"])
        assert probe["name"] == question.name and all(s["op"] in ("call", "value") for s in probe["steps"])
        verdict = question.result_from(decode(encode(collect(namespace, probe))), 5)
        assert verdict == question.grade(namespace, 5)


def test_library_objects_travel_as_references_and_only_from_the_library():
    layer = LibObject("posenc.lib.order:AttentionLayer", (np.eye(2), np.eye(2), np.eye(2)), (("causal", True),))
    travelled = decode(json.loads(json.dumps(encode(layer))))
    assert travelled.target == layer.target and travelled.build().causal
    assert np.allclose(travelled.build()(np.eye(2)), layer.build()(np.eye(2)))
    with pytest.raises(ValueError, match="course's library"):
        LibObject("os:system", ("true",)).build()
    result = collect({"f": lambda attention: attention(np.eye(2))},
                     {"name": "f", "steps": [{"op": "call", "args": [LibObject("posenc.exercises.checks.ch01:wavelength")]}]})
    assert result["status"] == "error" and "course's library" in result["error"]


@pytest.mark.parametrize("frame, kind", [
    (HEADER.pack(2**40), "protocol"),                               # absurd size
    (HEADER.pack(9) + b"not json!", "protocol"),
    (HEADER.pack(2) + b"[]", "protocol"),
    (HEADER.pack(27) + b'{"id": 1, "status": "ok"}  ', "protocol"),    # forged: answers no question asked
    (HEADER.pack(3) + b'{"i', "died"),                               # cut short: the process ended
])
def test_a_kernel_that_breaks_the_protocol_is_killed_and_reported(frame, kind):
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    ours, theirs = socket.socketpair()
    try:
        kernel = Kernel(process.pid, ours, server=None, max_frame=2**20)
        theirs.sendall(frame)
        if kind == "died":
            theirs.close()
        with pytest.raises(KernelError) as error:
            kernel.call({"op": "run", "code": ""}, timeout=2)
        assert error.value.kind == kind
        assert process.wait(timeout=10) == -9          # its whole process group was killed
    finally:
        process.kill()
        theirs.close()


def test_a_silent_kernel_is_killed_at_its_deadline(monkeypatch):
    import posenc.grader.kernel as kernel_module

    monkeypatch.setattr(kernel_module, "GRACE_SECONDS", 0.2)
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    ours, theirs = socket.socketpair()
    try:
        kernel = Kernel(process.pid, ours, server=None, max_frame=2**20)
        with pytest.raises(KernelError) as error:
            kernel.call({"op": "run", "code": ""}, timeout=0.1)
        assert error.value.kind == "hung" and process.wait(timeout=10) == -9
    finally:
        process.kill()
        theirs.close()


# ---------------------------------------------------------------------------------------------------
# Issue #17: what one odd or hostile file must not do to the run


def test_links_are_listed_as_links_and_never_followed(tmp_path):
    outside = tmp_path / "solutions"
    outside.mkdir()
    (outside / "ch01_sinusoids.ipynb").write_text("{}")
    hand_ins = tmp_path / "hand-ins"
    hand_ins.mkdir()
    (hand_ins / "ch01_real.ipynb").write_text("{}")
    os.symlink("ch01_real.ipynb", hand_ins / "ch01_a_link.ipynb")          # sorts first
    os.symlink(outside / "ch01_sinusoids.ipynb", hand_ins / "ch01_solution.ipynb")
    os.symlink(outside, hand_ins / "more")                                   # a folder: not searched
    found = {f.name: f for f in find_submissions([str(hand_ins), str(hand_ins / "ch01_solution.ipynb")])}
    assert sorted(found) == ["ch01_a_link.ipynb", "ch01_real.ipynb", "ch01_solution.ipynb"]
    os.symlink(hand_ins, tmp_path / "linked-hand-ins")                        # the lecturer's own link: searched
    assert len(find_submissions([str(tmp_path / "linked-hand-ins")])) == 3
    assert found["ch01_a_link.ipynb"].symlink and found["ch01_solution.ipynb"].symlink
    assert not found["ch01_real.ipynb"].symlink
    sub = read_submission(hand_ins / "ch01_solution.ipynb")                  # even when read directly
    assert sub.problem == SYMLINK and "not followed" in sub.message


def test_names_that_are_not_utf8_are_shown_escaped_and_kept_apart(tmp_path):
    (tmp_path / os.fsdecode(b"ch01_\xff.ipynb")).write_text("{}")
    (tmp_path / "ch01_\\xff.ipynb").write_text("{}")                          # the same name once escaped
    names = sorted(f.name for f in find_submissions([str(tmp_path)]))
    assert names == ["ch01_\\xff (2).ipynb", "ch01_\\xff.ipynb"] or names == ["ch01_\\xff.ipynb", "ch01_\\xff (2).ipynb"]
    assert all(name.encode("utf-8") for name in names)


def test_a_fifo_or_a_folder_named_like_a_notebook_is_an_invalid_row_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "ch01_pipe.ipynb")
    sub = read_submission(tmp_path / "ch01_pipe.ipynb")
    assert sub.problem == INVALID and "not a regular file" in sub.message


def test_cells_too_deep_or_too_long_to_parse_are_left_to_the_kernel():
    deep = prepare_cell(1, "", "x = 1" + " + 1" * 100_000 + '\ncheck("q1")\n')
    assert deep.code == deep.source                     # no RecursionError here; the kernel reports it
    long = prepare_cell(2, "", "data = [" + "0, " * 400_000 + '0]\ncheck("q1")\n')
    assert long.code == long.source and long.checks == []
    nb = {"cells": [{"cell_type": "code", "id": "\ud800", "source": 'def f():\n    return "\udcff"\n'}],
          "metadata": {}}
    parsed = parse_notebook(json.dumps(nb).encode(), "ch01_x.ipynb")
    assert parsed["problem"] is None and parsed["cells"][0][0] == "\ud800"    # kept; cleaned on output


def test_feedback_names_are_unique_short_and_reversible():
    names = ["sec1/ch01_bob.ipynb", "sec1__ch01_bob.ipynb", "Alice.ipynb", "alice.ipynb", ".hidden.ipynb",
             "ch01_" + "é" * 200 + ".ipynb", "a\x1b[2Jb.ipynb", "..ipynb", "x:y*?.ipynb"]
    files = feedback_names(names)
    assert len({f.casefold() for f in files}) == len(files)
    assert files[0] == "sec1%2Fch01_bob.txt" and files[1] == "sec1__ch01_bob.txt"
    assert all(len(f.encode()) <= 255 and "/" not in f and not f.startswith(".") for f in files)
    assert all(f.isprintable() for f in files) and files[6] == "a%1B[2Jb.txt"


def test_csv_cells_and_terminal_lines_are_inert():
    assert csv_cell("=HYPERLINK(\"http://x\")") == "'=HYPERLINK(\"http://x\")"
    assert [csv_cell(v) for v in ("+1", "-2", "@SUM(A1)", "\t=1", "ok", "10", "0.0")] == \
        ["'+1", "'-2", "'@SUM(A1)", "' =1", "ok", "10", "0.0"]
    assert clean("a\x1b[31mb\x9bc\u202ed\ud800e\x07") == "a [31mb c d\ufffde "


@pytest.mark.parametrize("start", [
    "\u200b=", "\ufeff=", "\ufe66", "\u2060+", "\u00ad-", "\u180e@", "\u3000=", "\u00a0 \u200b\u200d+",
    "\ufe62", "\ufe63", "\ufe6b", "\u207c", "\u208a", "\u2212", "\uff1d", "\u200e=", "\u3164=", "\u034f=",
])
def test_a_formula_behind_invisible_or_lookalike_characters_is_inert(start):
    """Zero-width and other invisible characters before =, +, - or @, and their small, full-width, super- and
    subscript look-alikes (which a spreadsheet's NFKC folding turns into the real sign), all start a formula
    in some spreadsheet: each gets the leading apostrophe."""
    assert csv_cell(start + "1+1").startswith("'"), start
    assert csv_cell("\u200bok") == "\u200bok" and csv_cell("\u00e9=1") == "\u00e9=1"   # text stays text
    assert len(clean("x" * 10_000, limit=100)) == 100
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    say(stream, "caf\u00e9 \x1b[2J done")
    stream.seek(0)
    assert stream.read() == "caf\\xe9  [2J done\n"


def test_duplicates_are_the_same_program_not_the_same_answers():
    template = template_sources("ch01")
    alice = read_submission(ROOT / "tests" / "submissions" / "ch01_correct_alice.ipynb")
    zoe = read_submission(ROOT / "tests" / "submissions" / "ch01_duplicate_of_alice_zoe.ipynb")
    ray = read_submission(ROOT / "tests" / "submissions" / "ch01_copies_with_stubs_ray.ipynb")
    untouched = read_submission(EXERCISE)
    assert set_digest(alice, template) == set_digest(zoe, template) != ""
    assert set_digest(ray, template) == set_digest(alice, template)     # her answers, the stubs run again after
    assert set_digest(untouched, template) == ""


def _digest_of(nb: dict, tmp_path: Path, name: str) -> str:
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return set_digest(read_submission(path), template_sources("ch01"))


def _answer_cell(nb: dict, start: str) -> dict:
    return next(c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).startswith(start))


def _edited(nb: dict, how: str) -> dict:
    """Alice's notebook changed as a copier would: a local variable renamed, cells that do nothing added,
    two answer cells swapped."""
    nb = json.loads(json.dumps(nb))
    cells = nb["cells"]
    if how == "renamed":
        cell = _answer_cell(nb, "def sinusoidal_encoding")
        cell["source"] = "".join(cell["source"]).replace("pos", "where")
        assert "where" in cell["source"]
    elif how == "empty cells":
        for text in ("", "...", '"""my answers"""', "pass\n"):
            cells.insert(4, {"cell_type": "code", "source": text, "metadata": {}, "outputs": [],
                             "execution_count": None})
    elif how == "swapped":
        first, second = _answer_cell(nb, "def wavelength"), _answer_cell(nb, "def binary_encoding")
        i, j = cells.index(first), cells.index(second)
        cells[i], cells[j] = second, first
    return nb


@pytest.mark.parametrize("how", ["renamed", "empty cells", "swapped"])
def test_a_copy_is_found_through_renamed_names_added_cells_and_another_order(tmp_path, how):
    alice = json.loads((ROOT / "tests" / "submissions" / "ch01_correct_alice.ipynb").read_text())
    assert _digest_of(_edited(alice, how), tmp_path, how) == _digest_of(alice, tmp_path, "alice") != ""


def test_two_honest_one_liners_are_no_evidence_of_copying(tmp_path):
    """Two students whose only answer is the same one-liner (the natural way to write it) are not flagged."""
    one_liner = "def wavelength(i, d_model, base=10000.0):\n    return 2 * np.pi * base ** (2 * i / d_model)\n"
    digests = []
    for student in ("ann", "ben"):
        nb = json.loads(EXERCISE.read_text())
        _answer_cell(nb, "def wavelength")["source"] = one_liner
        digests.append(_digest_of(nb, tmp_path, student))
    assert digests == ["", ""]
    manual = (ROOT / "book" / "lecturers" / "grading.md").read_text()        # the thresholds the manual states
    assert f"fewer than {MIN_OWN_CELL} nodes" in manual and f"fewer than {MIN_EVIDENCE} nodes" in manual


def test_a_tie_between_sets_grades_the_first_and_says_so():
    subs = [Submission(Path(f"{s}.ipynb"), f"{s}.ipynb", set_id=s) for s in ("ch02", "ch01", "ch99")]
    chosen, note = choose_set(subs, None)
    assert chosen == "ch01" and "ch01 as ch02" in note and "--set" in note
    mark_problems(subs, chosen)
    assert [s.problem for s in subs] == ["wrong-set", None, "unknown-set"]


def test_a_set_chosen_with_set_brings_no_note():
    """--set is the lecturer's own choice: no "Note: --set" in the summary or the lecturer's report."""
    from posenc.grader.report import lecturer_report_text, summary

    subs = [Submission(Path(f"{s}.ipynb"), f"{s}.ipynb", set_id=s) for s in ("ch02", "ch01")]
    chosen, note = choose_set(subs, "ch01")
    assert (chosen, note) == ("ch01", "")
    plan = Plan.make("ch01")
    assert "Note" not in summary([], plan, 1.0, 0, note) and "Note" not in lecturer_report_text(plan, [], [], note)


def test_clean_up_never_follows_links_nor_touches_the_parent(tmp_path):
    lecturer = tmp_path / "lecturer.txt"
    lecturer.write_text("notes")
    os.chmod(lecturer, 0o640)
    os.chmod(tmp_path, 0o755)
    kernel = tmp_path / "kernel"
    (kernel / "a" / "b").mkdir(parents=True)
    (kernel / "a" / "b" / "f.txt").write_text("x")
    os.symlink(lecturer, kernel / "link")
    os.symlink(tmp_path, kernel / "a" / "up")
    os.chmod(kernel / "a" / "b", 0o500)
    os.chmod(kernel / "a", 0o000)
    deep = kernel
    for _ in range(300):                                # deeper than the clean-up goes: reported, not a crash
        deep = deep / "d"
        deep.mkdir()
    assert remove_tree(str(kernel))                    # what is left is reported
    assert stat.S_IMODE(os.stat(lecturer).st_mode) == 0o640 and lecturer.read_text() == "notes"
    assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755
    shallow = tmp_path / "shallow"
    (shallow / "x").mkdir(parents=True)
    os.symlink(lecturer, shallow / "x" / "link")
    os.chmod(shallow / "x", 0o000)
    assert remove_tree(str(shallow)) == [] and not shallow.exists()
    assert stat.S_IMODE(os.stat(lecturer).st_mode) == 0o640


def test_clean_up_leaves_an_immutable_file_and_changes_nothing_around_it(tmp_path):
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("making a file immutable needs root and chattr")
    kernel = tmp_path / "kernel"
    kernel.mkdir()
    (kernel / "stuck").write_text("x")
    if subprocess.run(["chattr", "+i", str(kernel / "stuck")], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable flag")
    os.chmod(tmp_path, 0o755)
    try:
        assert remove_tree(str(kernel)) == ["stuck"]
        assert stat.S_IMODE(os.stat(tmp_path).st_mode) == 0o755
    finally:
        subprocess.run(["chattr", "-i", str(kernel / "stuck")])


STARVED_KERNEL = r"""
import json, os, socket, struct, subprocess, sys, time
spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(int(sys.argv[2]))]
time.sleep(0.3)
channel = socket.socket(fileno=int(sys.argv[1]))
size = struct.unpack("!Q", channel.recv(8))[0]
request = json.loads(channel.recv(size))
start = time.thread_time()
while time.thread_time() - start < 0.4:        # 0.4 s of computing, on a CPU it must share
    pass
body = json.dumps({"id": request["id"], "status": "ok"}).encode()
channel.sendall(struct.pack("!Q", len(body)) + body)
time.sleep(30)
"""


@pytest.mark.parametrize("stretch", [100.0, 0.0])
def test_time_spent_waiting_for_a_cpu_does_not_count(monkeypatch, stretch):
    """A kernel that shares two CPUs with 6 spinning processes (in its session, so in its scheduling group)
    needs at least 1.4 s of wall time for its 0.4 s of computing: its deadline (0.8 s here) moves on by its
    time in the run queue; without that, it is killed. (The stretch is unbounded here, so that a busy test
    machine cannot matter.)"""
    if not os.path.exists("/proc/self/schedstat"):
        pytest.skip("no /proc/PID/schedstat on this system")
    import posenc.grader.kernel as kernel_module

    monkeypatch.setattr(kernel_module, "GRACE_SECONDS", 0.2)
    monkeypatch.setattr(Kernel, "MAX_STRETCH", stretch)
    ours, theirs = socket.socketpair()
    process = subprocess.Popen([sys.executable, "-c", STARVED_KERNEL, str(theirs.fileno()), "6"],
                               pass_fds=[theirs.fileno()], start_new_session=True)
    theirs.close()
    try:
        time.sleep(0.5)                                  # the spinners are running
        kernel = Kernel(process.pid, ours, server=None, max_frame=2**20, own_group=False)
        if stretch:
            assert kernel.call({"op": "run"}, timeout=0.2)["status"] == "ok"   # 0.8 s, stretched
            assert kernel.waited > 0.3
        else:
            with pytest.raises(KernelError) as error:
                kernel.call({"op": "run"}, timeout=0.2)
            assert error.value.kind == "hung"
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        ours.close()


def test_a_submission_s_status_is_defined_once_and_set_in_one_place():
    """posenc.grader.status defines every status; only Submission.refuse sets a problem and only Graded.flag
    raises a flag, and each refuses a status that is not defined."""
    import ast

    from posenc.grader import status
    from posenc.grader.session import Graded

    setters = []
    for path in sorted((ROOT / "posenc" / "grader").glob("*.py")):
        tree = ast.parse(path.read_text())
        for function in [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]:
            for node in ast.walk(function):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
                assigned = [t for target in targets for t in ast.walk(target)
                            if isinstance(t, ast.Attribute) and t.attr in ("problem", "flags")]
                appended = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "flags"
                if assigned or appended:
                    setters.append((path.name, function.name))
    assert sorted(set(setters)) == [("session.py", "flag"), ("submission.py", "refuse")], setters
    with pytest.raises(ValueError, match="unknown status"):
        Submission(Path("a.ipynb"), "a.ipynb").refuse("broken", "?")
    with pytest.raises(ValueError, match="unknown flag"):
        Graded(Submission(Path("a.ipynb"), "a.ipynb")).flag("slow", "?")
    assert status.combined(None, [status.TIMEOUT, status.MEMORY, status.TIMEOUT]) == "timeout+memory-limit"
    assert status.combined(status.INVALID, [status.TIMEOUT]) == "invalid" and status.combined(None, []) == "ok"


def test_the_command_line_has_subcommands_and_grade_is_the_default(tmp_path, capsys):
    from posenc.grader.cli import main, parser

    commands = parser()._subparsers._group_actions[0].choices
    assert set(commands) == {"grade", "gradescope", "run-autograder"}
    for argv in ([str(tmp_path), "--out", str(tmp_path / "g.csv")], ["grade", str(tmp_path), "--out", str(tmp_path / "g.csv")]):
        assert main(argv) == 2 and "no .ipynb submissions" in capsys.readouterr().err


def test_a_shortened_line_ends_after_a_whole_word():
    from posenc.grader.report import one_line

    text = "the grader's fork server did not start inside bubblewrap because it was refused " * 5
    short = one_line(text, 100)
    assert len(short) <= 100 and short.endswith("\u2026") and text.startswith(short[:-1])
    assert text[len(short) - 1] == " "                         # the cut falls between two words
    assert one_line("short enough", 100) == "short enough"


FORMAT_BITS = '''
import numpy as np
def binary_encoding(n_positions, n_bits):
    rows = [[int(ch) for ch in format(p, f"0{n_bits}b")[::-1]] for p in range(n_positions)]
    return np.array(rows, dtype=int).reshape(n_positions, n_bits)
'''


def test_an_answer_broken_on_one_kind_of_input_gets_the_same_grade_on_every_seed():
    """The fixed inputs cover every kind the seed's draws can produce (here more positions than 2**n_bits),
    so the seed never decides a grade: the same notebook gets the same points in every run and route."""
    namespace: dict = {}
    exec(FORMAT_BITS, namespace)
    question = load_set("ch01").question("q3")
    verdicts = {question.grade(namespace, seed=seed).points for seed in range(40)}
    assert verdicts == {0}


def test_without_seed_the_command_and_a_bundle_use_the_set_s_one_seed(tmp_path):
    """No --seed: the set's own seed, the same in every run and as a Gradescope bundle's default."""
    from posenc.grader.cli import options_from, parser, plan_run
    from posenc.grader.session import default_seed

    options = options_from(parser().parse_args(["grade", str(tmp_path), "--set", "ch01", "--out", str(tmp_path / "g.csv")]))
    plan_run([], [], options)
    assert options.settings.seed == default_seed("ch01") != 0
    assert default_seed("ch01") != default_seed("ch02")


def test_a_partial_or_a_bound_method_of_the_course_s_function_is_seen_as_the_course_s():
    import functools

    import posenc.lib.encoding as course
    from posenc.grader.worker import _unwrapped

    class Holder:
        def sinusoidal_encoding(self, n, d):
            return course.sinusoidal_encoding(n, d)

    assert _unwrapped(functools.partial(course.sinusoidal_encoding)) is course.sinusoidal_encoding
    assert _unwrapped(functools.partial(functools.partial(course.sinusoidal_encoding), 4)) is course.sinusoidal_encoding
    assert _unwrapped(functools.wraps(course.sinusoidal_encoding)(lambda *a: 0)) is course.sinusoidal_encoding
    assert _unwrapped(Holder().sinusoidal_encoding) is Holder.sinusoidal_encoding     # then read as a wrapper


def test_every_exercise_notebook_says_what_a_graded_answer_may_import():
    """The packages the notebooks name are the grader's (the package's run-time requirements, torch
    included), and the ones they warn of are not among them."""
    import re

    from posenc.exercises.framework import GRADED_PACKAGES, NOT_GRADED_EXAMPLES
    from posenc.grader.gradescope import runtime_requirements

    installed = {re.split(r"[<>=\[ ;]", r, maxsplit=1)[0].lower() for r in runtime_requirements(ROOT)}
    assert {"numpy", "torch", "matplotlib"} <= installed
    assert {"NumPy", "torch", "matplotlib"} <= set(GRADED_PACKAGES)
    assert not {name.lower() for name in NOT_GRADED_EXAMPLES} & installed
    for path in sorted((ROOT / "exercises").glob("*.ipynb")):
        intro = "".join(json.loads(path.read_text())["cells"][0]["source"])
        assert "**Imports.**" in intro and "SciPy or pandas" in intro, path.name
