"""Every exercise set, graded three ways: the worked solution gets full marks, the untouched student
notebook gets zero (each question "not attempted", or, where the stub is code to fix, failed), and the
inline check prints one line. The realistic wrong answers are in tests/test_checks_chNN.py."""

import pytest

from posenc.exercises import SET_IDS, checker, load_set
from posenc.exercises.framework import FAILED, NOT_ATTEMPTED, PASSED
from tests.conftest import copy_namespace

# Questions whose student copy starts from code to repair ("find the bug"), not from a placeholder.
STUB_IS_CODE = {("ch01", "q5"), ("ch07", "q6")}


@pytest.mark.parametrize("set_id", SET_IDS)
def test_solution_gets_full_marks(set_id):
    exercise_set = load_set(set_id)
    results = exercise_set.grade(copy_namespace(set_id, "solution"))
    assert all(r.status == PASSED for r in results), [r.line() for r in results]
    assert sum(r.points for r in results) == exercise_set.max_points > 0


@pytest.mark.parametrize("set_id", SET_IDS)
def test_untouched_exercise_gets_zero(set_id):
    results = load_set(set_id).grade(copy_namespace(set_id, "exercise"))
    assert sum(r.points for r in results) == 0
    for r in results:
        if (set_id, r.qid) in STUB_IS_CODE:
            assert r.status == FAILED, r.line()
        else:
            assert r.status == NOT_ATTEMPTED and "not attempted" in r.message, r.line()


@pytest.mark.parametrize("set_id", SET_IDS)
def test_inline_check_prints_one_line(set_id, capsys):
    first = load_set(set_id).questions[0]
    checker(set_id)(first.qid, copy_namespace(set_id, "solution"))
    assert capsys.readouterr().out.strip() == f"[PASS] {first.qid} ({first.points:g}/{first.points:g}): correct"


def test_every_set_has_four_to_six_questions():
    assert SET_IDS == ("ch00", "ch01", "ch02", "ch03", "ch04", "ch07")
    for set_id in SET_IDS:
        assert 4 <= len(load_set(set_id).questions) <= 6, set_id
