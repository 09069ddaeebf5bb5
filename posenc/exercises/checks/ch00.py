"""Checks of exercise set ch00: why order matters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posenc.exercises.framework import (
    TAMPERED, ExerciseSet, FunctionQuestion, LibObject, Mistake, Question, describe_mismatch,
)
from posenc.lib.order import softmax as _softmax

# ---------------------------------------------------------------------------------------------------
# q1: single-head self-attention in NumPy


def self_attention(x, w_q, w_k, w_v, *, scale="d_k", axis=-1, use_softmax=True):
    """Reference (and, with other keyword values, the known mistakes)."""
    queries, keys, values = x @ w_q, x @ w_k, x @ w_v
    divisor = {"d_k": np.sqrt(w_k.shape[1]), "d_model": np.sqrt(x.shape[1]), "none": 1.0,
               "d_k squared": float(w_k.shape[1])}[scale]
    scores = queries @ keys.T / divisor
    weights = _softmax(scores, axis=axis) if use_softmax else scores
    return weights @ values


def _attention_probes(seed):
    rng = np.random.default_rng(seed + 100)
    probes = []
    for n, d_model, d_k, d_v in [(4, 6, 3, 3), (5, 8, 2, 4), (1, 4, 4, 2), (7, 16, 8, 5)]:
        x = rng.normal(size=(n, d_model))
        probes.append((x, *(rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))))
    return probes


ATTENTION_MISTAKES = [
    Mistake("the scores are not divided by sqrt(d_k)", lambda *a: self_attention(*a, scale="none")),
    Mistake("the scores are divided by sqrt(d_model); the scale is sqrt(d_k), the width of the keys",
            lambda *a: self_attention(*a, scale="d_model")),
    Mistake("the scores are divided by d_k; the scale is its square root",
            lambda *a: self_attention(*a, scale="d_k squared")),
    Mistake("the softmax runs down the columns; each row (one query) must sum to 1 over the keys",
            lambda *a: self_attention(*a, axis=0)),
    Mistake("there is no softmax: the scores weight the values directly",
            lambda *a: self_attention(*a, use_softmax=False)),
]


def _describe_attention_args(args):
    x, w_q, w_k, w_v = args
    return f"x of shape {x.shape}, d_k={w_k.shape[1]}, d_v={w_v.shape[1]}"


# ---------------------------------------------------------------------------------------------------
# q2: the equivariance gap of any attention function


def equivariance_gap(attention, x, perm):
    return float(np.abs(attention(x[perm]) - attention(x)[perm]).max())


def _attention_layer(weights, causal):
    """A callable attention layer (``posenc.lib.order.AttentionLayer``) the student's function examines."""
    return LibObject("posenc.lib.order:AttentionLayer", tuple(weights), (("causal", causal),))


def _gap_probes(seed):
    rng = np.random.default_rng(seed + 200)
    w = [rng.normal(size=(6, 6)) / 3 for _ in range(3)]
    plain = _attention_layer(w, causal=False)
    causal = _attention_layer(w, causal=True)
    probes = []
    for attention in (plain, causal, causal):
        x = rng.normal(size=(6, 6))
        probes.append((attention, x, rng.permutation(6)))
    probes.append((causal, rng.normal(size=(5, 6)), np.array([1, 2, 3, 4, 0])))
    return probes


GAP_MISTAKES = [
    Mistake("you compared Attn(x[perm]) with Attn(x) itself; equivariance compares it with Attn(x)[perm], "
            "the output permuted the same way",
            lambda attention, x, perm: float(np.abs(attention(x[perm]) - attention(x)).max())),
    Mistake("you permuted with the inverse permutation; x[perm] on the input goes with [perm] on the output",
            lambda attention, x, perm: float(np.abs(attention(x[perm]) - attention(x)[np.argsort(perm)]).max())),
    Mistake("you returned the mean absolute difference; the gap is the largest one",
            lambda attention, x, perm: float(np.abs(attention(x[perm]) - attention(x)[perm]).mean())),
]


def _compare_gap(got, expected, args):
    if isinstance(got, np.ndarray) and got.size == 1:
        got = float(got)
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return f"expected one number, got {type(got).__name__}"
    return None if np.isclose(got, expected, rtol=1e-6, atol=1e-9) else f"expected {expected:.4g}, got {got:.4g}"


# ---------------------------------------------------------------------------------------------------
# q3: the causal mask


def causal_mask(n_tokens):
    return np.triu(np.ones((n_tokens, n_tokens), dtype=bool), k=1)


MASK_MISTAKES = [
    Mistake("the diagonal is masked too: a token may attend to itself (use k=1 in np.triu)",
            lambda n: np.triu(np.ones((n, n), dtype=bool))),
    Mistake("the mask is transposed: True must mark the future, the entries above the diagonal",
            lambda n: np.tril(np.ones((n, n), dtype=bool), k=-1)),
    Mistake("the mask marks the allowed entries; here True must mark what is hidden (the future)",
            lambda n: np.tril(np.ones((n, n), dtype=bool))),
]


def _compare_mask(got, expected, args):
    problem = describe_mismatch(got, expected.astype(np.float64), what="mask")
    if problem is None and got.dtype != bool:
        return f"the pattern is right but the dtype is {got.dtype}; return booleans (True = hidden)"
    return problem


# ---------------------------------------------------------------------------------------------------
# q4: multiple choice


@dataclass
class ChoiceQuestion(Question):
    """The student lists the letters of the right options, in any order and case."""

    answer: frozenset = frozenset()
    options: str = "abcde"
    mistakes: tuple = ()         # (frozenset of letters, message)

    def probe(self, seed=0):
        return {"name": self.name, "steps": [{"op": "value"}]}

    def judge(self, data, seed=0):
        if len(data) != 1:
            return False, TAMPERED
        answer = data[0]
        if isinstance(answer, (list, tuple, set)) and all(isinstance(item, str) for item in answer):
            answer = "".join(answer)
        if not isinstance(answer, str):
            return False, f"`{self.name}` should be a string of letters such as \"ab\", not {type(answer).__name__}"
        chosen = frozenset(c.lower() for c in answer if c.isalpha())
        unknown = chosen - set(self.options)
        if unknown:
            return False, f"there is no option {', '.join(sorted(unknown))}; the options are {', '.join(self.options)}"
        if chosen == self.answer:
            return True, "correct"
        for wrong, message in self.mistakes:
            if chosen == wrong:
                return False, message
        return False, f"not quite: {len(chosen ^ self.answer)} option(s) are misjudged"


# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch00", "Why order matters", [
    FunctionQuestion(qid="q1", title="Self-attention in NumPy", name="self_attention", points=3,
                     probes=_attention_probes, reference=self_attention, mistakes=ATTENTION_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="output"),
                     describe_args=_describe_attention_args),
    FunctionQuestion(qid="q2", title="Measuring equivariance", name="equivariance_gap", points=2,
                     probes=_gap_probes, reference=equivariance_gap, mistakes=GAP_MISTAKES,
                     compare=_compare_gap,
                     describe_args=lambda a: f"{a[0]!r}, x of shape {a[1].shape}, perm={a[2].tolist()}"),
    FunctionQuestion(qid="q3", title="The causal mask", name="causal_mask", points=2,
                     probes=lambda seed: [(1,), (2,), (4,), (7,)], reference=causal_mask,
                     mistakes=MASK_MISTAKES, compare=_compare_mask,
                     describe_args=lambda a: f"n_tokens={a[0]}"),
    ChoiceQuestion(qid="q4", title="Which operations ignore order?", name="order_blind", points=2,
                   answer=frozenset("acd"),
                   mistakes=((frozenset("ad"), "mean-pooling is blind to order too: a sum does not depend on the "
                                               "order of its terms"),
                             (frozenset("ac"), "a position-wise layer treats every row alike, whatever its place, "
                                               "so shuffling the rows shuffles its outputs"),
                             (frozenset("abcd"), "a causal mask lets token t see only tokens 0..t, so shuffling "
                                                 "changes what each token sees"),
                             (frozenset("acde"), "once positional encodings are added, the same token at another "
                                                 "place is a different vector"))),
])
