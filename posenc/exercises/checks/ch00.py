"""Checks of exercise set ch00: why order matters."""

from __future__ import annotations

import numpy as np

from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FindTheBugQuestion, FunctionQuestion, LibObject, Mistake, ValueQuestion,
    array_of, compare_number, describe_mismatch,
)
from posenc.lib.order import AttentionLayer, softmax as _softmax

# ---------------------------------------------------------------------------------------------------
# q1: single-head self-attention in NumPy


def _unstable_softmax(scores, axis=-1):
    weights = np.exp(scores)
    return weights / weights.sum(axis=axis, keepdims=True)


def self_attention(x, w_q, w_k, w_v, *, scale="d_k", axis=-1, use_softmax=True, normalise="rows"):
    """Reference (and, with other keyword values, the known mistakes; ``normalise="global max"`` shifts
    every row by the largest score of the whole matrix)."""
    queries, keys, values = x @ w_q, x @ w_k, x @ w_v
    divisor = {"d_k": np.sqrt(w_k.shape[1]), "d_model": np.sqrt(x.shape[1]), "none": 1.0,
               "d_k squared": float(w_k.shape[1]), "times": 1 / np.sqrt(w_k.shape[1])}[scale]
    scores = queries @ keys.T / divisor
    if not use_softmax:
        weights = scores
    elif normalise == "whole":
        shifted = np.exp(scores - scores.max())
        weights = shifted / shifted.sum()
    elif normalise == "global max":
        shifted = np.exp(scores - scores.max())
        weights = shifted / shifted.sum(axis=-1, keepdims=True)
    else:
        weights = _softmax(scores, axis=axis)
    return weights @ values


LARGE_SCORE = 1500.0     # exp(1500) overflows float64 (its largest value is about exp(709.8))


def _large_scores_probe(rng):
    """Weights scaled so that the largest attention score is LARGE_SCORE: only a stable softmax survives.
    The first token is 20 times shorter than the others, so its row of scores stays far below the largest
    score: shifting every row by the matrix's maximum underflows there."""
    n, d_model, d_k, d_v = 5, 6, 3, 4
    x = rng.normal(size=(n, d_model))
    x[0] /= 20
    w_q, w_k, w_v = (rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))
    top = ((x @ w_q) @ (x @ w_k).T / np.sqrt(d_k)).max()
    if top <= 0:
        w_k, top = -w_k, -((x @ w_q) @ (x @ w_k).T / np.sqrt(d_k)).min()
    return x, w_q * np.sqrt(LARGE_SCORE / top), w_k * np.sqrt(LARGE_SCORE / top), w_v


def _attention_probes(seed):
    rng = np.random.default_rng(seed + 100)
    probes = []
    for n, d_model, d_k, d_v in [(4, 6, 3, 3), (5, 8, 2, 4), (1, 4, 4, 2), (7, 16, 8, 5)]:
        x = rng.normal(size=(n, d_model))
        probes.append((x, *(rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))))
    probes.append(_large_scores_probe(rng))
    return probes


GLOBAL_MAX = ("the softmax subtracts the largest score of the whole matrix, not each row's own maximum: in a "
              "row whose scores all lie hundreds below it, every np.exp underflows to 0 and 0 / 0 is nan; "
              "subtract each row's maximum (scores.max(axis=1, keepdims=True))")

ATTENTION_MISTAKES = [
    Mistake("the scores are not divided by sqrt(d_k)", lambda *a: self_attention(*a, scale="none")),
    Mistake("the scores are divided by sqrt(d_model); the scale is sqrt(d_k), the width of the keys",
            lambda *a: self_attention(*a, scale="d_model")),
    Mistake("the scores are divided by d_k; the scale is its square root",
            lambda *a: self_attention(*a, scale="d_k squared")),
    Mistake("the scores are multiplied by sqrt(d_k); they are divided by it",
            lambda *a: self_attention(*a, scale="times")),
    Mistake("the softmax runs down the columns; each row (one query) must sum to 1 over the keys",
            lambda *a: self_attention(*a, axis=0)),
    Mistake("the softmax is normalised over the whole matrix; each row (one query) must sum to 1 on its own",
            lambda *a: self_attention(*a, normalise="whole")),
    Mistake("there is no softmax: the scores weight the values directly",
            lambda *a: self_attention(*a, use_softmax=False)),
    Mistake(GLOBAL_MAX, lambda *a: self_attention(*a, normalise="global max")),
]

UNSTABLE = ("the softmax is not numerically stable: with scores in the thousands np.exp overflows to inf and "
            "inf / inf is nan; subtract each row's maximum from the scores before np.exp (the softmax "
            "does not change)")


def _compare_attention(got, expected, args):
    values = array_of(got)
    if values is not None and values.shape == expected.shape and np.issubdtype(values.dtype, np.number) \
            and np.isinf(values).any() | (np.isnan(values).any() and _overflows(*args)) \
            and np.isfinite(expected).all():
        return UNSTABLE
    return describe_mismatch(got, expected, what="output")


def _overflows(x, w_q, w_k, w_v):
    """Whether some score is beyond what np.exp can take (the inputs where an unshifted softmax fails)."""
    return bool(((x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])).max() > np.log(np.finfo(np.float64).max))


def _describe_attention_args(args):
    x, w_q, w_k, w_v = args
    largest = ((x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])).max()
    return f"x of shape {x.shape}, d_k={w_k.shape[1]}, d_v={w_v.shape[1]}, largest score {largest:.3g}"


# ---------------------------------------------------------------------------------------------------
# q2: the equivariance gap of any attention function


def equivariance_gap(attention, x, perm):
    return float(np.abs(attention(x[perm]) - attention(x)[perm]).max())


def _attention_layer(weights, causal):
    """A callable attention layer (``posenc.lib.order.AttentionLayer``) the student's function examines."""
    return LibObject("posenc.lib.order:AttentionLayer", tuple(weights), (("causal", causal),))


def _gap_probes(seed):
    """Plain and causal layers on random inputs and permutations. Each causal probe comes twice, with W_V
    and with -W_V: the output changes sign, so the largest *signed* difference differs from the largest
    absolute one in at least one of the two, whatever the seed."""
    rng = np.random.default_rng(seed + 200)
    w_q, w_k, w_v = (rng.normal(size=(6, 6)) / 3 for _ in range(3))
    plain = _attention_layer((w_q, w_k, w_v), causal=False)
    causal = _attention_layer((w_q, w_k, w_v), causal=True)
    flipped = _attention_layer((w_q, w_k, -w_v), causal=True)
    probes = [(plain, rng.normal(size=(6, 6)), rng.permutation(6))]
    for _ in range(2):
        x, perm = rng.normal(size=(6, 6)), rng.permutation(6)
        while (perm == np.arange(6)).all():
            perm = rng.permutation(6)
        probes += [(causal, x, perm), (flipped, x, perm)]
    x = rng.normal(size=(5, 6))
    probes += [(causal, x, np.array([1, 2, 3, 4, 0])), (flipped, x, np.array([1, 2, 3, 4, 0]))]
    return probes


GAP_MISTAKES = [
    Mistake("you compared Attn(x[perm]) with Attn(x) itself; equivariance compares it with Attn(x)[perm], "
            "the output permuted the same way",
            lambda attention, x, perm: float(np.abs(attention(x[perm]) - attention(x)).max())),
    Mistake("you permuted with the inverse permutation; x[perm] on the input goes with [perm] on the output",
            lambda attention, x, perm: float(np.abs(attention(x[perm]) - attention(x)[np.argsort(perm)]).max())),
    Mistake("you returned the mean absolute difference; the gap is the largest one",
            lambda attention, x, perm: float(np.abs(attention(x[perm]) - attention(x)[perm]).mean())),
    Mistake("you took the largest signed difference; the gap is the largest absolute difference (np.abs "
            "before .max()): an output that is too small by 0.3 is as far off as one too large by 0.3",
            lambda attention, x, perm: float((attention(x[perm]) - attention(x)[perm]).max())),
    Mistake("you returned the norm of the whole difference (np.linalg.norm); the gap is its largest "
            "absolute entry, np.abs(...).max()",
            lambda attention, x, perm: float(np.linalg.norm(attention(x[perm]) - attention(x)[perm]))),
]


def _gap_scale(args):
    """The size of the outputs whose differences the gap measures: a gap of 1e-16 from a float32 rounding
    is as good as 0 next to outputs of size 1 (the rule for numbers, PRECISION)."""
    attention, x, perm = args
    return float(np.abs(attention(x)).max())


def _compare_gap(got, expected, args):
    return compare_number(got, expected, scale=_gap_scale(args))


# ---------------------------------------------------------------------------------------------------
# q3: the causal mask


def causal_mask(n_tokens):
    return np.triu(np.ones((n_tokens, n_tokens), dtype=bool), k=1)


def _mask_probes(seed):
    rng = np.random.default_rng(seed + 300)
    return [(1,), (2,), (4,), (int(rng.integers(5, 60)),), (int(rng.integers(60, 200)),)]


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
    if problem is None and array_of(got).dtype != bool:
        return f"the pattern is right but the dtype is {array_of(got).dtype}; return booleans (True = hidden)"
    return problem


# ---------------------------------------------------------------------------------------------------
# q4: which operations ignore order (multiple choice)

# Where each statement is decided: a section of chapter 0 to reread, never the statement's crux (which would
# read off its verdict).
ORDER_BLIND_IDEAS = {
    "a": 'chapter 0, "Self-attention in a few lines" and the section after it',
    "b": 'chapter 0, "What a causal mask changes"',
    "c": 'chapter 0, the section on "Dog bites man" and "man bites dog"',
    "d": 'chapter 0, "Multi-head attention is no different"',
    "e": 'chapter 0, "Adding positions breaks the symmetry"',
}

ORDER_BLIND_OPTIONS = {
    "a": "single-head self-attention without positions is permutation-equivariant: shuffling the tokens only "
         "shuffles its outputs, so it is blind to order",
    "b": "a causal mask lets token t see only tokens 0..t, so shuffling changes what each token sees: it is "
         "not blind to order",
    "c": "mean-pooling is blind to order too: a sum does not depend on the order of its terms",
    "d": "a position-wise layer treats every row alike, whatever its place, so shuffling the rows shuffles its "
         "outputs: it is blind to order",
    "e": "once positional encodings are added, the same token at another place is a different vector: the "
         "layer is not blind to order",
}

# ---------------------------------------------------------------------------------------------------
# q5: the weights a causal mask leaves on the first token when every score is equal

Q5_TOKENS = 6


def first_token_weights(mask=causal_mask):
    """Token t's weight on token 0 when all scores are 0: uniform over the tokens the mask lets it see."""
    visible = ~mask(Q5_TOKENS)
    return visible[:, 0] / visible.sum(axis=1)


Q5_MISTAKES = [
    (lambda: np.full(Q5_TOKENS, 1 / Q5_TOKENS),
     "that is what every token gets without a mask; with the causal mask token t sees only tokens 0..t"),
    (lambda: 1 / (Q5_TOKENS - np.arange(Q5_TOKENS)),
     "the mask hides the future, not the past: token t sees tokens 0..t, that is t + 1 of them (token 0 sees "
     "only itself, the last token all six), not 6 - t"),
    (lambda: 1 / (np.arange(Q5_TOKENS) + 2),
     "token t sees t + 1 tokens, itself included (positions 0..t), so its weight on each is 1/(t + 1)"),
    (lambda: np.r_[1.0, np.zeros(Q5_TOKENS - 1)],
     "the first token is in the past of every later token, so it stays visible to all of them: the mask hides "
     "only the tokens after t"),
    (lambda: np.ones(Q5_TOKENS),
     "the weights of one token sum to 1 over all the tokens it sees, so the first token gets only a share"),
]

# ---------------------------------------------------------------------------------------------------
# q6: find the bug: the mask applied after the softmax


def causal_attention(x, w_q, w_k, w_v):
    return AttentionLayer(w_q, w_k, w_v, causal=True)(x)


def _masked_attention(x, w_q, w_k, w_v, *, fill=-np.inf, order="before", k=1, renormalise=False,
                      shift="rows"):
    """Causal attention with one deliberate mistake in how the future is hidden (or, ``shift="global"``,
    in how the softmax is kept stable)."""
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    hidden = np.triu(np.ones(scores.shape, dtype=bool), k=k)
    if shift == "global":
        weights = np.where(hidden, 0.0, np.exp(scores - scores.max()))
        weights = weights / weights.sum(axis=1, keepdims=True)
    elif order == "before":
        weights = _softmax(np.where(hidden, fill, scores))
    else:
        weights = np.where(hidden, 0.0, _softmax(scores))
        if renormalise:
            weights = weights / weights.sum(axis=1, keepdims=True)
    return weights @ (x @ w_v)


def _handed_out_attention(x, w_q, w_k, w_v):
    return _masked_attention(x, w_q, w_k, w_v, order="after")


def _causal_probes(seed):
    rng = np.random.default_rng(seed + 600)
    probes = []
    for n, d_model, d_k, d_v in [(4, 6, 3, 3), (6, 8, 4, 4), (1, 4, 2, 2), (int(rng.integers(5, 12)), 5, 3, 6)]:
        x = rng.normal(size=(n, d_model))
        probes.append((x, *(rng.normal(size=(d_model, d)) for d in (d_k, d_k, d_v))))
    probes.append(_large_causal_probe(rng))
    return probes


def _large_causal_probe(rng):
    """Scores up to LARGE_SCORE, each row's largest score a visible one (on the diagonal), so that only a
    stable softmax survives: queries and keys are the same vectors (w_k = w_q), every token's of one length
    (a query's largest score is its own key's), the first token's 20 times shorter (its one visible score
    lies far below the matrix's maximum: shifting every row by that maximum underflows there). A softmax
    over the whole row, masked and renormalised afterwards, is stable on it too."""
    n, d_model, d_k, d_v = 5, 6, 3, 4
    x, w_q, w_v = rng.normal(size=(n, d_model)), rng.normal(size=(d_model, d_k)), rng.normal(size=(d_model, d_v))
    x /= np.linalg.norm(x @ w_q, axis=1, keepdims=True)
    x[0] /= 20
    w_q = w_q * np.sqrt(LARGE_SCORE * np.sqrt(d_k))
    return x, w_q, w_q.copy(), w_v


def _past_hidden(x, w_q, w_k, w_v):
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    past = np.tril(np.ones(scores.shape, dtype=bool), k=-1)
    return _softmax(np.where(past, -np.inf, scores)) @ (x @ w_v)


CAUSAL_MISTAKES = [
    Mistake("the future scores are set to 0 before the softmax, but exp(0) = 1 still gives them weight: set "
            "them to -inf (np.exp(-inf) = 0), so that the softmax spreads each row over the visible tokens only",
            lambda *a: _masked_attention(*a, fill=0.0)),
    Mistake("the mask now hides the past: the entries above the diagonal (k=1 in np.triu) are the future",
            _past_hidden),
    Mistake("the diagonal is hidden too: a token may attend to itself, and the first token sees nothing "
            "else (use k=1 in np.triu)",
            lambda *a: _masked_attention(*a, k=0)),
    Mistake(GLOBAL_MAX, lambda *a: _masked_attention(*a, shift="global")),
]


# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch00", "Why order matters", [
    FunctionQuestion(qid="q1", title="Self-attention in NumPy", name="self_attention", points=3,
                     probes=_attention_probes, reference=self_attention, mistakes=ATTENTION_MISTAKES,
                     compare=_compare_attention, describe_args=_describe_attention_args),
    FunctionQuestion(qid="q2", title="Measuring equivariance", name="equivariance_gap", points=2,
                     probes=_gap_probes, reference=equivariance_gap, mistakes=GAP_MISTAKES,
                     compare=_compare_gap, scale=_gap_scale,
                     describe_args=lambda a: f"{a[0]!r}, x of shape {a[1].shape}, perm={a[2].tolist()}"),
    FunctionQuestion(qid="q3", title="The causal mask", name="causal_mask", points=2,
                     probes=_mask_probes, reference=causal_mask,
                     mistakes=MASK_MISTAKES, compare=_compare_mask,
                     describe_args=lambda a: f"n_tokens={a[0]}"),
    ChoiceQuestion(qid="q4", title="Which operations ignore order?", name="order_blind", points=2,
                   answer="acd", options=ORDER_BLIND_OPTIONS, ideas=ORDER_BLIND_IDEAS),
    ValueQuestion(qid="q5", title="What the causal mask leaks", name="first_token_weights", points=1,
                  expected=first_token_weights, mistakes=Q5_MISTAKES),
    FindTheBugQuestion(qid="q6", title="Find the bug: causal attention", name="causal_attention", points=2,
                       probes=_causal_probes, reference=causal_attention, bug=_handed_out_attention,
                       mistakes=CAUSAL_MISTAKES, compare=_compare_attention,
                       describe_args=_describe_attention_args),
])
