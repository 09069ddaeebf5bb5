"""The check framework's own rules, on small questions: how choices, numbers and sets are read, what a
partial placeholder, a warning of the student's code, an input written into and a helper of an earlier
question do to the verdict (the sets' realistic answers are in test_checks_chNN and test_checks_all)."""

import os
import sys

import numpy as np
import pytest

from posenc.exercises.framework import (
    FAILED, INLINE_LIMITS, NOT_ATTEMPTED, PASSED, ChoiceQuestion, FunctionQuestion, ValueQuestion, checking_rules,
    compare_number, describe_mismatch, kind_of, read_choice,
)
from posenc.exercises.probe import TypedValue, collect, library_stand_in, round_trip

OPTIONS = {letter: f"reason {letter}" for letter in "abcde"}


@pytest.mark.parametrize("written, letters", [
    ("a", "a"), ("ac", "ac"), ("A, C", "ac"), ("(a), (c)", "ac"), ("a and c", "ac"), ("option a", "a"),
    ("Options A and C", "ac"), ("answer: (b)", "b"), ("I choose b", "b"), ("a) c)", "ac"), ("acdz", "acdz"),
])
def test_common_spellings_of_a_choice_are_read_as_their_letters(written, letters):
    assert read_choice(written, OPTIONS) == (frozenset(letters), None)


IDEAS = {letter: f"idea {letter}" for letter in "abcde"}


def test_a_word_that_is_no_letter_is_named_with_the_accepted_form():
    question = ChoiceQuestion("q", "t", "choice", answer="ac", options=OPTIONS, ideas=IDEAS)
    passed, message = question.judge(["optoin a"])
    assert not passed and "'optoin' is not an option letter" in message and '"a, b"' in message
    for spelling in ("option a and option c", "(a), (c)", ["a", "c"], {"c", "a"}):
        assert question.grade({"choice": spelling}).passed, spelling
    single = ChoiceQuestion("q", "t", "choice", answer="b", options=OPTIONS, single=True)
    assert single.grade({"choice": "option b"}).passed
    assert "exactly one" in single.grade({"choice": "options b and c"}).message


def test_a_number_typed_as_a_string_or_a_tensor_is_the_number():
    import torch

    question = ValueQuestion("q", "t", "value", expected=lambda: 32)
    for written in ("32", " 32 ", "32.0", np.array(32), torch.tensor(32.0)):
        assert question.grade({"value": written}).passed, written
    message = question.grade({"value": torch.ones(3)}).message
    assert "TypedValue" not in message and "torch tensor" in message, message
    assert "should be a number" in question.grade({"value": "thirty-two"}).message


def test_internal_class_names_never_reach_the_student():
    assert kind_of(TypedValue("torch.Tensor", np.zeros(2))) == "a torch tensor"
    assert kind_of(TypedValue("builtins.set", [1, 2])) == "a set"
    assert kind_of(TypedValue("object", "<x>")) == "an object"


def _function_question(**kwargs):
    return FunctionQuestion("q", "t", "f", probes=lambda seed: [(np.arange(4.0), 2), (np.arange(3.0), 3)],
                            reference=lambda x, k: x * k, **kwargs)


def test_a_placeholder_for_some_inputs_only_is_judged_not_called_unattempted():
    def f(x, k):
        if k % 2:
            raise NotImplementedError("odd k")
        return x * k

    result = _function_question().grade({"f": f})
    assert result.status == FAILED and "NotImplementedError" in result.message, result.line()
    assert "answers other inputs" in result.message

    def stub(x, k):
        raise NotImplementedError

    assert _function_question().grade({"f": stub}).status == NOT_ATTEMPTED

    def unfinished(x, k):                 # its own message on every path the check takes: an answer's
        raise NotImplementedError("the general case is not done yet")

    result = _function_question().grade({"f": unfinished})
    assert result.status == FAILED and "your code's own NotImplementedError" in result.message, result.line()


def test_the_students_warnings_are_captured_and_attributed(recwarn):
    def f(x, k):
        np.log(np.zeros(1))
        return x * k

    result = _function_question().grade({"f": f})
    assert result.status == PASSED and "your own code warned" in result.message
    assert "divide by zero" in result.message and not list(recwarn)


def test_inputs_written_into_are_reported_with_what_changed():
    def f(x, k):
        x *= k
        return x

    result = _function_question().grade({"f": f})                        # every question forbids it
    assert result.status == FAILED, result.line()
    assert "changed its input `x` in place (every entry multiplied by 2)" in result.message, result.line()
    assert _function_question(inputs_unchanged=False).grade({"f": f}).passed

    def g(x, k):
        out = x * k
        x[0] = 7.0
        return out

    assert "changed its input `x` in place (1 of its 4 entries changed)" in _function_question().grade({"f": g}).message


def test_a_tensor_written_into_is_reported_too():
    import torch

    def f(x):
        x += 1
        return x

    question = FunctionQuestion("q", "t", "f", probes=lambda seed: [(np.zeros(3),)], reference=lambda x: x + 1)
    probe = question.probe(0)
    probe["steps"][0]["args"] = [{"__tensor__": np.zeros(3)}]
    collected = round_trip(collect({"f": f}, round_trip(probe)))
    outcome = collected["data"][0]
    assert outcome.changed == [0] and outcome.changes == ["1 added to every entry"], outcome
    assert isinstance(f(torch.zeros(1)), torch.Tensor)


def test_a_stand_in_is_the_library_function_with_the_students_signature():
    spec = {"target": "posenc.lib.relative:t5_bucket",
            "params": [["relative_position", "relative"], ["bidirectional", "bidirectional"],
                       ["num_buckets", "num_buckets"], ["max_distance", "max_distance"]]}
    bucket = library_stand_in("t5_bucket", spec)
    out = bucket(np.array([-20, -8, -1, 0, 1, 200]), max_distance=128)
    assert isinstance(out, np.ndarray) and out.tolist() == [10, 8, 1, 0, 17, 31]
    with pytest.raises(TypeError, match="unexpected keyword"):
        bucket(np.array([1]), buckets=3)
    with pytest.raises(ValueError, match="course's library"):
        library_stand_in("x", {"target": "os:system", "params": []})


def test_a_stand_in_is_used_during_the_call_and_removed_after():
    namespace = {"helper": lambda x: "mine"}
    exec("def f(x):\n    return helper(x)", namespace)
    spec = {"target": "posenc.lib.relative:relative_positions", "params": [["n", "n_queries"], ["m", "n_keys"]]}
    probe = {"name": "f", "steps": [{"op": "call", "args": [2], "stand_ins": {"helper": spec}}]}
    collected = round_trip(collect(namespace, round_trip(probe)))
    assert collected["status"] == "collected" and collected["data"][0].error is not None   # called the stand-in
    assert namespace["helper"](0) == "mine"


def test_a_set_keeps_its_kind_through_the_round_trip():
    collected = round_trip(collect({"v": {27, 25}}, {"name": "v", "steps": [{"op": "value"}]}))
    value = collected["data"][0]
    assert isinstance(value, TypedValue) and value.type_name == "builtins.set" and value.value == [25, 27]


def test_number_messages_show_the_digits_that_differ_and_no_internal_names():
    message = compare_number(20221.3 * (1 + 3e-4), 20221.3)
    shown = message.replace(",", "").split()
    assert shown[1] != shown[3], message                      # "expected 20221.3, got 20227.4"
    message = compare_number(TypedValue("torch.Tensor", np.ones(2)), 1.0)
    assert "TypedValue" not in message and "torch tensor" in message, message
    from fractions import Fraction

    message = ValueQuestion("q", "t", "v", expected=lambda: 1.0).grade({"v": (Fraction(1, 3), object())}).message
    assert "TypedValue" not in message and "0.333" in message and "<object object" in message, message


# ---------------------------------------------------------------------------------------------------
# The rule for numbers (PRECISION), the same in every question


def test_float32_arithmetic_passes_and_a_slip_of_a_thousandth_does_not():
    rng = np.random.default_rng(0)
    expected = rng.normal(size=(6, 5)) @ rng.normal(size=(5, 4))
    assert describe_mismatch(expected.astype(np.float32), expected) is None
    assert describe_mismatch(expected * (1 + 1e-3), expected) is not None
    assert compare_number(np.float32(np.pi), np.pi) is None and compare_number(np.pi * 1.001, np.pi)
    assert compare_number(41, 42) and compare_number(42.0, 42) is None     # whole numbers exactly


def test_the_message_names_the_value_that_broke_the_tolerance_not_the_largest_difference():
    expected = np.array([1000.0, 1.0, 0.001])
    got = expected + np.array([0.05, 0.0, 0.2])      # 0.05 off 1000 is within 1e-4 of it; 0.2 off 0.001 is not
    message = describe_mismatch(got, expected, what="values")
    assert "at index (2,)" in message and "expected 0.001, got 0.201" in message, message
    got = expected + np.array([0.0, 0.0, 0.15])      # a near miss says by how much, and what the check allows
    message = describe_mismatch(got, expected, what="values")
    assert "off by 0.15, more than the 0.1 the check allows there" in message, message


def test_the_rule_is_stated_in_every_exercise_notebook_with_the_checks_own_numbers():
    from posenc.exercises import authoring

    rules = checking_rules()
    assert "$10^{-4}$" in rules and f"{INLINE_LIMITS['call_seconds']:g} s" in rules and "torch tensor" in rules
    for source in authoring.sources():
        assert "{{ posenc.exercises.framework:checking_rules }}" in source.read_text(), source.name


# ---------------------------------------------------------------------------------------------------
# The inline check: a time limit on every call, and no grade for an object a failed cell left behind


def test_a_slow_or_endless_function_is_stopped_inline_with_a_message_naming_the_limit(capsys):
    import time

    from posenc.exercises.framework import Checker, ExerciseSet

    def endless(x, k):
        while True:
            pass

    def slow(x, k):
        time.sleep(30)
        return x * k

    checker = Checker(ExerciseSet("chXX", "t", [_function_question()]))
    limit = INLINE_LIMITS["call_seconds"]
    for answer in (endless, slow):
        start = time.monotonic()
        checker("q", {"f": answer})
        line = capsys.readouterr().out
        assert time.monotonic() - start < limit + 5, line
        assert line.startswith("[FAIL] q (0/1)") and f"was stopped after {limit:g} s" in line, line
        assert "the check's time limit for one call" in line, line


def _endless_catching_every_exception(x, k):
    import time

    while True:
        try:
            time.sleep(0.01)
        except BaseException:        # the student's own mistake: it catches the check's stop too
            continue


def _endless_with_the_stop_blocked(x, k):
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])    # as a long computation inside C code
    while True:
        pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the copy of the session needs fork (Linux)")
def test_a_call_that_will_not_stop_ends_its_copy_of_the_session_and_says_what_happened(capsys):
    """Code that catches every exception catches the time limit's stop too, and blocked signals never let it
    in: the inline check runs the calls in a forked copy of the session, which it ends (from inside after
    ESCAPE_SECONDS of repeated stops, from outside at the question's deadline), and says which of the two
    happened; the student's session goes on, its state untouched."""
    import time

    from posenc.exercises.framework import Checker, ExerciseSet
    from posenc.exercises.probe import ESCAPE_SECONDS

    checker = Checker(ExerciseSet("chXX", "t", [_function_question()]))
    limit = INLINE_LIMITS["call_seconds"]
    start = time.monotonic()
    checker("q", {"f": _endless_catching_every_exception})
    line = capsys.readouterr().out
    assert time.monotonic() - start < limit + ESCAPE_SECONDS + 2, line
    assert line.startswith("[FAIL] q (0/1): a call of `f` went on past 2 s, the check's time limit for one call")
    assert "`except BaseException:` or a bare `except:`" in line and "your own session is as it was" in line
    limits = {"call_seconds": 0.5, "total_seconds": 0.5}
    start = time.monotonic()
    result = _function_question().grade({"f": _endless_with_the_stop_blocked}, limits=limits)
    assert time.monotonic() - start < 0.5 + ESCAPE_SECONDS + 3, result.line()
    assert result.status == FAILED and "was still running after" in result.message, result.line()
    assert "where no stop could reach it" in result.message, result.line()
    import signal

    assert signal.SIGALRM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])     # blocked in the copy only


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the copy of the session needs fork (Linux)")
def test_the_copy_of_the_session_prints_what_the_code_prints_and_keeps_no_change(capsys):
    seen = []

    def f(x, k):
        print("computing", k)
        seen.append(k)
        return x * k

    assert _function_question().grade({"f": f}, limits=dict(INLINE_LIMITS)).passed
    assert capsys.readouterr().out == "computing 2\ncomputing 3\n" and seen == []
    assert "exit status 3" in _function_question().grade({"f": lambda x, k: os._exit(3)},
                                                          limits=dict(INLINE_LIMITS)).message
    assert "sys.exit()" in _function_question().grade({"f": lambda x, k: sys.exit(2)}, limits=dict(INLINE_LIMITS)).message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the copy of the session needs fork (Linux)")
def test_torch_works_in_the_copy_after_the_session_used_its_threads():
    """torch's OpenMP threads are not copied by fork: a parallel region in the copy would wait for them for
    ever, once the session has used them (as a chapter's cells do); the copy runs torch on one thread."""
    import time

    import torch

    big = torch.randn(600, 600)
    (big @ big).exp().sum()                                   # the session's threads, used

    def f(x, k):
        m = torch.randn(600, 600, dtype=torch.float64)
        (m @ m).exp().sum()                                   # a parallel region, in the copy
        return (torch.from_numpy(x) * k).numpy()

    start = time.monotonic()
    result = _function_question().grade({"f": f}, limits=dict(INLINE_LIMITS))
    assert result.passed and time.monotonic() - start < 5, result.line()


def test_after_one_call_is_stopped_the_others_are_not_run():
    """An endless loop costs one call's limit, not one per probe, and the message names that limit."""
    import time

    def endless(x, k):
        while True:
            pass

    question = FunctionQuestion("q", "t", "f", probes=lambda seed: [(np.arange(3.0), k) for k in range(5)],
                                reference=lambda x, k: x * k)
    start = time.monotonic()
    result = question.grade({"f": endless}, limits={"call_seconds": 0.3, "total_seconds": 10.0})
    assert time.monotonic() - start < 1.5, result.line()
    assert "was stopped after 0.3 s, the check's time limit for one call" in result.message, result.line()
    collected = collect({"f": endless}, round_trip({**question.probe(0), "limits": {"call_seconds": 0.3}}))
    assert [o.error for o in collected["data"][1:]] == ["not run: an earlier call was stopped at the time limit"] * 4


def test_the_calls_of_one_question_share_a_time_budget():
    import time

    def f(x, k):
        time.sleep(0.3)
        return x * k

    question = FunctionQuestion("q", "t", "f", probes=lambda seed: [(np.arange(3.0), k) for k in range(6)],
                                reference=lambda x, k: x * k)
    result = question.grade({"f": f}, limits={"call_seconds": 1.0, "total_seconds": 1.0})
    assert result.status == FAILED and "the calls of this question used up the 1 s the check gives it" in \
        result.message, result.line()
    assert question.grade({"f": f}).passed                   # no limits unless asked (tests, the batch grader)


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    yield shell
    InteractiveShell.clear_instance()


def test_check_says_when_the_graded_object_predates_the_last_failed_run_of_its_cell(shell, capsys):
    shell.run_cell("from posenc.exercises import checker\ncheck = checker('ch08')")
    shell.run_cell("import math\ndef bits_and_perplexity(mean_nats):\n    return mean_nats / math.log(2), math.exp(mean_nats)")
    shell.run_cell("check('q1')")
    assert capsys.readouterr().out.startswith("[PASS] q1")
    failed = shell.run_cell("import no_such_module_here\ndef bits_and_perplexity(mean_nats):\n    return 0, 0")
    assert not failed.success
    capsys.readouterr()                                     # the traceback
    shell.run_cell("check('q1')")
    line = capsys.readouterr().out
    assert line.startswith("[FAIL] q1 (0/2): `bits_and_perplexity` predates the last run of In [") and \
        "ModuleNotFoundError" in line, line
    shell.run_cell("check.summary()")
    assert "predates" in capsys.readouterr().out
    shell.run_cell("def bits_and_perplexity(mean_nats):\n    return mean_nats / math.log(2), math.exp(mean_nats)")
    shell.run_cell("check('q1')")
    assert capsys.readouterr().out.startswith("[PASS] q1")


def test_a_cell_that_failed_after_defining_the_object_leaves_no_stale_note(shell, capsys):
    shell.run_cell("from posenc.exercises import checker\ncheck = checker('ch08')\nimport math")
    shell.run_cell("def bits_and_perplexity(n):\n    return n, n")
    failed = shell.run_cell("def bits_and_perplexity(mean_nats):\n    return mean_nats / math.log(2), math.exp(mean_nats)\n"
                            "bits_and_perplexity('x')")
    assert not failed.success
    capsys.readouterr()                                     # the traceback
    shell.run_cell("check('q1')")
    assert capsys.readouterr().out.startswith("[PASS] q1")


def test_an_unfinished_helper_is_named_not_the_answer():
    namespace = {}
    exec("def helper(x):\n    raise NotImplementedError  # your code here\n"
         "def f(x, k):\n    return helper(x) * k\n", namespace)
    result = _function_question().grade(namespace)
    assert result.status == NOT_ATTEMPTED, result.line()
    assert "`f` calls `helper`, which still holds its placeholder" in result.message, result.line()
    exec("def f(x, k):\n    raise NotImplementedError\n", namespace)
    assert "replace the placeholder in `f`" in _function_question().grade(namespace).message


def test_the_subclass_of_an_unfinished_module_names_its_parent(request):
    from posenc.exercises import load_set
    from tests.conftest import copy_namespace

    result = load_set("ch04").question("q5").grade(copy_namespace("ch04", "exercise"))
    assert result.status == NOT_ATTEMPTED and "LearnedPositionalEmbedding" in result.message, result.line()
