"""The check framework's own rules, on small questions: how choices, numbers and sets are read, what a
partial placeholder, a warning of the student's code, an input written into and a helper of an earlier
question do to the verdict (the sets' realistic answers are in test_checks_chNN and test_checks_all)."""

import numpy as np
import pytest

from posenc.exercises.framework import (
    FAILED, NOT_ATTEMPTED, PASSED, ChoiceQuestion, FunctionQuestion, ValueQuestion, kind_of, read_choice,
)
from posenc.exercises.probe import TypedValue, collect, library_stand_in, round_trip

OPTIONS = {letter: f"reason {letter}" for letter in "abcde"}


@pytest.mark.parametrize("written, letters", [
    ("a", "a"), ("ac", "ac"), ("A, C", "ac"), ("(a), (c)", "ac"), ("a and c", "ac"), ("option a", "a"),
    ("Options A and C", "ac"), ("answer: (b)", "b"), ("I choose b", "b"), ("a) c)", "ac"), ("acdz", "acdz"),
])
def test_common_spellings_of_a_choice_are_read_as_their_letters(written, letters):
    assert read_choice(written, OPTIONS) == (frozenset(letters), None)


def test_a_word_that_is_no_letter_is_named_with_the_accepted_form():
    question = ChoiceQuestion("q", "t", "choice", answer="ac", options=OPTIONS)
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


def test_the_students_warnings_are_captured_and_attributed(recwarn):
    def f(x, k):
        np.log(np.zeros(1))
        return x * k

    result = _function_question().grade({"f": f})
    assert result.status == PASSED and "your own code warned" in result.message
    assert "divide by zero" in result.message and not list(recwarn)


def test_inputs_written_into_are_reported_when_the_question_forbids_it():
    def f(x, k):
        x *= k
        return x

    assert _function_question().grade({"f": f}).passed                  # allowed unless the question says so
    result = _function_question(inputs_unchanged=True).grade({"f": f})
    assert result.status == FAILED and "changed its input `x` in place" in result.message, result.line()


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
    from posenc.exercises.checks import ch00, ch01, ch03, ch07

    for compare in (ch00._compare_gap, ch01._compare_number, ch03._compare_number, ch07._compare_number):
        message = compare(20221.3 * (1 + 1e-5), 20221.3, ())
        shown = message.replace(",", "").split()
        assert shown[1] != shown[3], message                      # "expected 20221.3, got 20221.5"
        message = compare(TypedValue("torch.Tensor", np.ones(2)), 1.0, ())
        assert "TypedValue" not in message and "torch tensor" in message, message


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
