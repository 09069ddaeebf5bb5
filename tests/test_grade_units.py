"""The grader's parts that run no student code: reading submissions, detecting the set, requests, protocol."""

from __future__ import annotations

import json
import socket
import subprocess
import sys

import numpy as np
import pytest

from posenc.exercises import load_set
from posenc.exercises.probe import LibObject, collect, decode, encode
from posenc.grader.cli import find_submissions
from posenc.grader.session import Plan
from posenc.grader.kernel import Kernel, KernelError
from posenc.grader.submission import (
    EMPTY, INVALID, detect_set, prepare_cell, read_submission,
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
    assert cell.code.count("check(") == 1 and "    check('q1')" in cell.code    # only top-level calls go
    assert "run_line_magic" in cell.code and cell.defines == {"x", "f"}
    compile(cell.code, "<cell>", "exec")
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
    assert len(found) == 2
    assert len({name for _, name in found}) == 2           # same file name in two folders: told apart


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
