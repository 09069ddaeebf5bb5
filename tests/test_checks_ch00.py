"""Grader tests of exercise set ch00: each realistic wrong answer is named (the three-way basics: test_checks_all)."""

import pytest

from posenc.exercises import load_set

from tests.conftest import assert_named, with_submission

SET_ID = "ch00"
EXERCISES = load_set(SET_ID)


ATTENTION = """
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = {scores}
    e = np.exp(scores - scores.max(axis={axis}, keepdims=True))
    return e / e.sum(axis={axis}, keepdims=True) @ v
"""

Q1_WRONG = {
    "no scaling": (ATTENTION.format(scores="q @ k.T", axis=1), "not divided by sqrt(d_k)"),
    "sqrt(d_model)": (ATTENTION.format(scores="q @ k.T / np.sqrt(x.shape[1])", axis=1), "sqrt(d_model)"),
    "divided by d_k": (ATTENTION.format(scores="q @ k.T / k.shape[1]", axis=1), "divided by d_k"),
    "softmax over columns": (ATTENTION.format(scores="q @ k.T / np.sqrt(k.shape[1])", axis=0), "columns"),
    "no softmax": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    return (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1]) @ (x @ w_v)
""", "no softmax"),
    "keys and queries transposed wrongly": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    scores = (x @ w_q).T @ (x @ w_k) / np.sqrt(w_k.shape[1])
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True) @ (x @ w_v)
""", "raised"),
}


@pytest.mark.parametrize("name", Q1_WRONG)
def test_q1_pitfalls_are_named(solution, name):
    code, fragment = Q1_WRONG[name]
    assert_named(EXERCISES, solution, "q1", code, fragment)


Q2_WRONG = {
    "unpermuted output": ("""
import numpy as np
def equivariance_gap(attention, x, perm):
    return float(np.abs(attention(x[perm]) - attention(x)).max())
""", "with Attn(x) itself"),
    "inverse permutation": ("""
import numpy as np
def equivariance_gap(attention, x, perm):
    inverse = np.argsort(perm)
    return float(np.abs(attention(x[perm]) - attention(x)[inverse]).max())
""", "inverse permutation"),
    "mean instead of max": ("""
import numpy as np
def equivariance_gap(attention, x, perm):
    return float(np.mean(np.abs(attention(x[perm]) - attention(x)[perm])))
""", "mean absolute difference"),
}


@pytest.mark.parametrize("name", Q2_WRONG)
def test_q2_pitfalls_are_named(solution, name):
    code, fragment = Q2_WRONG[name]
    assert_named(EXERCISES, solution, "q2", code, fragment)


Q3_WRONG = {
    "diagonal masked": ("import numpy as np\ndef causal_mask(n_tokens):\n    return np.triu(np.ones((n_tokens, n_tokens), dtype=bool))", "diagonal"),
    "transposed": ("import numpy as np\ndef causal_mask(n_tokens):\n    return np.tril(np.ones((n_tokens, n_tokens), dtype=bool), k=-1)", "transposed"),
    "allowed entries": ("import numpy as np\ndef causal_mask(n_tokens):\n    return np.tril(np.ones((n_tokens, n_tokens))) == 1", "allowed entries"),
    "floats": ("import numpy as np\ndef causal_mask(n_tokens):\n    return np.triu(np.ones((n_tokens, n_tokens)), k=1)", "dtype"),
}


@pytest.mark.parametrize("name", Q3_WRONG)
def test_q3_pitfalls_are_named(solution, name):
    code, fragment = Q3_WRONG[name]
    assert_named(EXERCISES, solution, "q3", code, fragment)


@pytest.mark.parametrize("answer, fragment", [
    ('"ad"', "mean-pooling"), ('"ac"', "position-wise"), ('"abcd"', "causal mask"),
    ('"acde"', "positional encodings are added"), ('"ab"', "misjudged"), ('"acdz"', "no option z"),
])
def test_q4_wrong_choices_are_named(solution, answer, fragment):
    assert_named(EXERCISES, solution, "q4", f"order_blind = {answer}", fragment)


@pytest.mark.parametrize("answer", ['"DCA"', '["a", "c", "d"]', '"a, c, d"'])
def test_q4_accepts_any_order_and_case(solution, answer):
    assert EXERCISES.question("q4").grade(with_submission(solution, f"order_blind = {answer}")).passed
