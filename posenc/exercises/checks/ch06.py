"""Checks of exercise set ch06: rotary embeddings.

The students write NumPy. Every answer is compared with the course's library (``posenc.lib.rotary``,
``posenc.lib.rotary_analysis``) on inputs drawn from the grader's seed, and the classic mistakes have
variants: the dimension index where the pair index belongs, the wrong sense of rotation, the layouts
mixed, angles in low precision, rotating only q, rotating before the projection, the wrong permutation.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FindTheBugQuestion, FunctionQuestion, Mistake, ValueQuestion, array_of,
    describe_mismatch,
)
from posenc.lib.rotary import apply_rotary, layout_permutation
from posenc.lib.rotary_analysis import angle_error

BASE = 10000.0

# ---------------------------------------------------------------------------------------------------
# Shared pieces: the turn with a chosen mistake


def _theta(d, base=BASE, exponent="pair"):
    """Frequencies of the d/2 pairs, rightly (base^(-2i/d)) or with one mistake in the exponent."""
    i = np.arange(d // 2, dtype=np.float64)
    return {"pair": base ** (-2 * i / d),
            "positive": base ** (2 * i / d),              # the exponent's sign lost: faster and faster pairs
            "dimension": base ** (-2 * (2 * i) / d),      # the dimension index 2i where i belongs
            "not doubled": base ** (-i / d),               # i/d instead of 2i/d
            "fixed base": BASE ** (-2 * i / d)}[exponent]


def _turn(x, positions, layout="interleaved", base=BASE, *, exponent="pair", sense=1, pairing=None,
          overwrite=False, angle_dtype=np.float64, shift=0):
    """x (n, d) float64, row r turned by positions[r]: the reference with optional mistakes.

    ``sense=-1`` turns clockwise; ``pairing`` overrides which coordinates form a pair (``layout`` names
    the question's layout, ``pairing`` the one the student used); ``overwrite`` updates the first member
    before the second is computed from it.
    """
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    angle = ((np.asarray(positions) + shift).astype(angle_dtype)[:, None]
             * _theta(d, base, exponent).astype(angle_dtype)).astype(np.float64)
    c, s = np.cos(angle), sense * np.sin(angle)
    first, second = ((np.arange(0, d, 2), np.arange(1, d, 2)) if (pairing or layout) == "interleaved"
                     else (np.arange(d // 2), np.arange(d // 2, d)))
    out = x.copy()
    out[:, first] = x[:, first] * c - x[:, second] * s
    source = out if overwrite else x
    out[:, second] = source[:, first] * s + x[:, second] * c
    return out


def _duplicated_wrongly(wrong_in):
    """The formula x cos + rotate(x) sin with the angles duplicated the other layout's way, in the layout
    ``wrong_in`` only: each angle repeated in place (interleaved's duplication) where rotate-half needs the
    d/2 angles written twice one copy after the other, or the other way round."""
    def variant(x, positions, layout="interleaved", base=BASE):
        if layout != wrong_in:
            return _turn(x, positions, layout, base)
        x = np.asarray(x, dtype=np.float64)
        angle = np.asarray(positions, dtype=np.float64)[:, None] * _theta(x.shape[-1], base)
        if layout == "half":
            full = np.repeat(angle, 2, axis=-1)
            half = x.shape[-1] // 2
            rotated = np.concatenate([-x[:, half:], x[:, :half]], axis=-1)
        else:
            full = np.concatenate([angle, angle], axis=-1)
            rotated = np.empty_like(x)
            rotated[:, 0::2], rotated[:, 1::2] = -x[:, 1::2], x[:, 0::2]
        return x * np.cos(full) + rotated * np.sin(full)
    return variant


DIMENSION = ("pair index vs dimension index: you used the dimension 2i where the pair index i belongs "
             "(exponent 2*(2i)/d); pair i has theta_i = base^(-2i/d)")
NOT_DOUBLED = "exponent i/d instead of 2i/d: pair i has theta_i = base^(-2i/d)"
FIXED_BASE = "the base argument is ignored: you always use 10000"
CLOCKWISE = ("the turn goes the wrong way (clockwise, chapter 2's T(pos)); RoPE turns pair (a, b) to "
             "(a cos - b sin, a sin + b cos)")
MIXED_LAYOUTS = ("layouts mixed: 'interleaved' pairs coordinates (2i, 2i+1), 'half' pairs (i, i + d/2); "
                 "in some layout you paired them the other layout's way")
REPEATED = ("layouts mixed: in the rotate-half layout the d/2 angles are written twice one copy after the "
            "other (concatenate), and in the interleaved layout each angle twice in a row (repeat); you "
            "used the other layout's duplication")
POSITIVE_EXPONENT = ("the exponent's sign is lost: theta_i = base^(-2i/d) gets slower from pair to pair (pair 0 "
                     "turns by 1 rad per position); base^(+2i/d) turns the last pairs thousands of radians per position")
FLOAT32_ANGLES = ("angles in float32: pos * theta_i rounded to 24 bits is off by more than 1e-4 rad at positions in the "
                  "thousands; compute the angles (and their cos and sin) in float64")
POSITIONS_SHIFTED = "the positions are shifted by one: row r is turned by positions[r] itself, not positions[r] + 1"
POSITIONS_IGNORED = "the positions argument is ignored: row r is turned by positions[r], not by r"
OVERWRITTEN = ("the first coordinate of each pair was overwritten before the second was computed from it; "
               "compute both new coordinates from the old values")
LOW_PRECISION = ("angles in low precision: for a float16 input you computed pos * theta_i in float16, which "
                 "is off by radians at positions in the thousands; compute the angles (and their cos and "
                 "sin) in float64 and round only the result, if at all")

# ---------------------------------------------------------------------------------------------------
# q1: rope(x, positions, layout, base)


def rope(x, positions, layout="interleaved", base=BASE):
    turned = apply_rotary(torch.from_numpy(np.asarray(x, dtype=np.float64)), torch.as_tensor(positions),
                          base, layout)
    return turned.numpy()


def _rope_probes(seed):
    rng = np.random.default_rng([seed, 6001])

    def draw(n, d, low, high, layout, base=BASE):
        return (np.round(rng.normal(size=(n, d)), 3), rng.integers(low, high, size=n), layout, base)

    fixed = [(np.eye(2), np.array([0, 1]), "interleaved", BASE),
             (np.round(np.arange(8.0).reshape(2, 4) / 7, 3), np.array([3, 5]), "half", BASE)]
    drawn = [draw(5, 8, 0, 50, "interleaved"), draw(4, 8, 0, 50, "half"), draw(6, 16, -300, 300, "interleaved", 100.0),
             draw(3, 6, 0, 1000, "half", 500.0), draw(4, 64, 0, 5000, "interleaved"), draw(5, 32, 0, 5000, "half")]
    low_precision = (np.round(rng.normal(size=(6, 16)), 2).astype(np.float16), rng.integers(2000, 4000, size=6),
                     "interleaved", BASE)
    return fixed + drawn + [low_precision]


def _no_half(variant):
    """A variant defined for float64 inputs only (a float16 answer is judged by its own tolerance)."""
    def checked(x, positions, layout="interleaved", base=BASE):
        if np.asarray(x).dtype == np.float16:
            raise ValueError("not compared on float16 inputs")
        return variant(x, positions, layout, base)
    return checked


def _other_layout(layout):
    return "half" if layout == "interleaved" else "interleaved"


ROPE_MISTAKES = [
    Mistake(MIXED_LAYOUTS, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, pairing="interleaved"))),
    Mistake(MIXED_LAYOUTS, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, pairing="half"))),
    Mistake(MIXED_LAYOUTS, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, pairing=_other_layout(layout)))),
    Mistake(REPEATED, _no_half(_duplicated_wrongly("half"))),
    Mistake(REPEATED, _no_half(_duplicated_wrongly("interleaved"))),
    Mistake(DIMENSION, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, exponent="dimension"))),
    Mistake(NOT_DOUBLED, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, exponent="not doubled"))),
    Mistake(CLOCKWISE, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, sense=-1))),
    Mistake(FIXED_BASE, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, exponent="fixed base"))),
    Mistake(POSITIONS_IGNORED, _no_half(lambda x, p, layout, b: _turn(x, np.arange(len(x)), layout, b))),
    Mistake(POSITIVE_EXPONENT, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, exponent="positive"))),
    Mistake(FLOAT32_ANGLES, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, angle_dtype=np.float32))),
    Mistake(POSITIONS_SHIFTED, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, shift=1))),
    Mistake(OVERWRITTEN, _no_half(lambda x, p, layout, b: _turn(x, p, layout, b, overwrite=True))),
]


def _low_precision_turn(x, positions, layout, base):
    """Angles, cos and sin in float16, the turn in float16: what code that follows x.dtype computes."""
    half = np.float16
    angle = (np.asarray(positions).astype(half)[:, None] * _theta(x.shape[-1], base).astype(half)).astype(half)
    c, s = np.cos(angle).astype(np.float64), np.sin(angle).astype(np.float64)
    d = x.shape[-1]
    first, second = ((np.arange(0, d, 2), np.arange(1, d, 2)) if layout == "interleaved"
                     else (np.arange(d // 2), np.arange(d // 2, d)))
    x = x.astype(np.float64)
    out = x.copy()
    out[:, first], out[:, second] = x[:, first] * c - x[:, second] * s, x[:, first] * s + x[:, second] * c
    return out


# q1 is about precision itself, and says so: float64 inputs' results must be right to ROPE_PRECISION (float32
# angles are not: that is one of its mistakes), a float16 result to float16's own.
ROPE_PRECISION, HALF_PRECISION = 1e-7, 5e-3


def _compare_rope(got, expected, args):
    x = args[0]
    if np.asarray(x).dtype != np.float16:
        return describe_mismatch(got, expected, what="turned array", precision=ROPE_PRECISION)
    problem = describe_mismatch(got, expected, precision=HALF_PRECISION, scale=1.0,
                                what="turned array (float16 input)")
    if problem and array_of(got) is not None and array_of(got).shape == expected.shape:
        if np.allclose(array_of(got).astype(np.float64), _low_precision_turn(x, *args[1:]), atol=0.05):
            return LOW_PRECISION
    return problem


def _describe_rope_args(args):
    x, positions, layout, base = args
    return (f"<array {x.shape} {x.dtype}>, <{len(positions)} positions from {positions.min()} to "
            f"{positions.max()}>, layout={layout!r}, base={base:g}")


# ---------------------------------------------------------------------------------------------------
# q2: to_half_layout(weight, n_heads)


def to_half_layout(weight, n_heads):
    weight = np.asarray(weight, dtype=np.float64)
    d_head = weight.shape[0] // n_heads
    rows = np.concatenate([h * d_head + layout_permutation(d_head).numpy() for h in range(n_heads)])
    return weight[rows]


def _convert_probes(seed):
    rng = np.random.default_rng([seed, 6002])
    shapes = [(2, 4, 8), (2, 8, 16), (1, 4, 3), (3, 2, 6), (4, 6, 5), (2, int(2 * rng.integers(2, 6)), 7),
              (int(rng.integers(2, 5)), 8, int(rng.integers(3, 9)))]
    return [(np.round(rng.normal(size=(h * d, d_in)), 3), h) for h, d, d_in in shapes]


def _inverse(weight, n_heads):
    d_head = weight.shape[0] // n_heads
    back = np.argsort(layout_permutation(d_head).numpy())
    return weight[np.concatenate([h * d_head + back for h in range(n_heads)])]


def _columns(weight, n_heads):
    rows = np.concatenate([h * (weight.shape[0] // n_heads) + layout_permutation(weight.shape[0] // n_heads).numpy()
                           for h in range(n_heads)])
    if weight.shape[1] != weight.shape[0]:
        raise ValueError("only square weights")
    return weight[:, rows]


CONVERT_MISTAKES = [
    Mistake("unchanged: that is the porting bug itself (the model runs, but rotate-half pairs coordinates "
            "(p, p + d/2) that were never a pair); permute the rows within each head",
            lambda w, h: np.array(w, dtype=np.float64)),
    Mistake("the inverse permutation (half -> interleaved): in the new layout, row p of each head is the old "
            "row 2p and row d/2 + p is the old row 2p + 1", _inverse),
    Mistake("the heads were permuted as one block: the permutation acts within each head (rows h*d_head .. "
            "(h+1)*d_head - 1), one head at a time", lambda w, h: to_half_layout(w, 1)),
    Mistake("you permuted columns; each row of W is one output coordinate of q (or k), so permute rows",
            _columns),
]


# ---------------------------------------------------------------------------------------------------
# q3: rope_logits(x, W_q, W_k, base)


def rope_logits(x, W_q, W_k, base=BASE):
    positions = np.arange(len(x))
    q = rope(np.asarray(x) @ np.asarray(W_q).T, positions, "interleaved", base)
    k = rope(np.asarray(x) @ np.asarray(W_k).T, positions, "interleaved", base)
    return q @ k.T


def _logits_probes(seed):
    rng = np.random.default_rng([seed, 6003])
    shapes = [(6, 8, 8), (4, 4, 2), (5, 6, 4), (12, 10, 6), (int(rng.integers(3, 10)), 8, 8),
              (int(rng.integers(20, 40)), 12, 8)]
    # Every seed has probes where the base matters: d_head >= 4 with a base other than 10000.
    bases = [float(rng.choice([100.0, 500.0])), float(rng.choice([BASE, 100.0])), float(rng.choice([10.0, 1000.0])),
             BASE, float(rng.choice([BASE, 100.0])), float(rng.choice([BASE, 50.0]))]
    probes = []
    for (n, d_model, d_head), base in zip(shapes, bases):
        x, W_q, W_k = (np.round(rng.normal(size=shape), 3) for shape in ((n, d_model), (d_head, d_model),
                                                                          (d_head, d_model)))
        probes.append((x, W_q, W_k, base))
    return probes


def _logits_variant(turn_q=True, turn_k=True, before=False, scale=False, project="rows", layout="interleaved",
                    exponent="pair", sense=1, transpose=False, masked=False, fixed_base=False):
    def variant(x, W_q, W_k, base=BASE):
        base = BASE if fixed_base else base
        x = np.asarray(x, dtype=np.float64)
        positions = np.arange(len(x))
        if before:
            x = _turn(x, positions, "interleaved", base)
        if project == "columns":
            if W_q.shape[0] != W_q.shape[1]:
                raise ValueError("only square projections")
            q, k = x @ W_q, x @ W_k
        else:
            q, k = x @ W_q.T, x @ W_k.T
        if not before:
            q = _turn(q, positions, layout, base, exponent=exponent, sense=sense) if turn_q else q
            k = _turn(k, positions, layout, base, exponent=exponent, sense=sense) if turn_k else k
        logits = q @ k.T / (np.sqrt(q.shape[-1]) if scale else 1.0)
        if masked:
            logits = np.where(np.triu(np.ones(logits.shape, dtype=bool), 1), -np.inf, logits)
        return logits.T if transpose else logits
    return variant


LOGITS_MISTAKES = [
    Mistake("rotating only q: turn the keys too; with only one side turned the logit depends on the query's "
            "absolute position instead of the offset", _logits_variant(turn_k=False)),
    Mistake("rotating only k: turn the queries too", _logits_variant(turn_q=False)),
    Mistake("rotating before the projection: you turned x and then projected it; turn q = x W_q^T and "
            "k = x W_k^T after the projection (then the logit depends on the offset whatever W_q, W_k are)",
            _logits_variant(before=True)),
    Mistake("nothing is turned: these are the logits without any position", _logits_variant(False, False)),
    Mistake("the logits are divided by sqrt(d_head); this question asks for the plain dot products",
            _logits_variant(scale=True)),
    Mistake("layouts mixed: this question uses the interleaved layout, pairs (2i, 2i+1)",
            _logits_variant(layout="half")),
    Mistake(DIMENSION, _logits_variant(exponent="dimension")),
    Mistake(CLOCKWISE, _logits_variant(sense=-1)),
    Mistake("the projection is x @ W_q.T (nn.Linear's convention: one row of W per output coordinate), "
            "not x @ W_q", _logits_variant(project="columns")),
    Mistake("the matrix is transposed: entry [m, n] is the query at m against the key at n",
            _logits_variant(transpose=True)),
    Mistake("you applied a causal mask; this question asks for every logit, the future keys included",
            _logits_variant(masked=True)),
    Mistake(FIXED_BASE + " (pass base on to rope)", _logits_variant(fixed_base=True)),
]


# While q3 is checked, the student's rope is the library's: q1 grades theirs, q3 only what rope_logits adds.
ROPE_STAND_IN = {"target": "posenc.lib.rotary:apply_rotary", "question": "question 1",
                 "params": [["x", "x"], ["positions", "positions"], ["layout", "layout"], ["base", "base"]]}


def _describe_logits_args(args):
    x, W_q, W_k, base = args
    return f"<x {x.shape}>, <W_q {W_q.shape}>, <W_k {W_k.shape}>, base={base:g}"


# ---------------------------------------------------------------------------------------------------
# q4: the first position at which bfloat16 angles go wrong by more than Q4_THRESHOLD (d = Q4_D, base 10000).
# Not the chapter's width and threshold (d = 128, 0.1 rad), whose answer its text prints: the question is
# answered by computing, not by copying a sentence.

Q4_D, Q4_THRESHOLD, Q4_POSITIONS = 64, 0.25, np.arange(4096)


def q4_question() -> str:
    """The text of q4, its numbers from the constants the check uses."""
    return (f"Take a head of width $d = {Q4_D}$ and base 10000. Compute the angles $\\text{{pos}}\\,\\theta_i$ of "
            f"every pair for the positions $0, \\dots, {Q4_POSITIONS[-1]}$ twice with torch: in float64, and in "
            "bfloat16 as a model held in bfloat16 would (compute $\\theta_i$ in float64, cast the positions and "
            "the $\\theta_i$ to `torch.bfloat16`, multiply them in bfloat16). What is the first position at which "
            f"some angle (of any pair) differs from the float64 angle by more than {Q4_THRESHOLD:g} rad? Assign "
            "the position (an int, or a string of digits) to `first_bad_position`. (The chapter shows the same "
            "computation for another width and threshold; its numbers are not this answer.)")


@functools.lru_cache(maxsize=None)
def first_bad_position(dtype=torch.bfloat16, threshold=Q4_THRESHOLD):
    errors = angle_error(Q4_POSITIONS, Q4_D, BASE, dtype)
    return int(Q4_POSITIONS[np.flatnonzero(errors > threshold)[0]])


@functools.lru_cache(maxsize=None)
def _q4_answer_with(theta_dtype, product_dtype, pair=None):
    """What a student gets when the angles are rounded differently (all in float64 arithmetic otherwise)."""
    theta = torch.from_numpy(_theta(Q4_D))
    positions = torch.from_numpy(Q4_POSITIONS)
    exact = positions[:, None].double() * theta
    low = positions.to(product_dtype)[:, None] * theta.to(theta_dtype).to(product_dtype)
    error = (low.double() - exact).abs()
    error = error[:, pair] if pair is not None else error.amax(-1)
    return int(Q4_POSITIONS[np.flatnonzero(error.numpy() > Q4_THRESHOLD)[0]])


def _q4_mistakes():
    right = first_bad_position()
    return [
        (lambda: first_bad_position(torch.float16),
         "that is float16's answer; the question is about bfloat16 (torch.bfloat16, 8 significant bits)"),
        (lambda: _q4_answer_with(torch.bfloat16, torch.float64),
         "there the rounded theta_i alone goes wrong, with the product in float64; in bfloat16 the position and "
         "the product pos * theta_i are rounded too"),
        (lambda: _q4_answer_with(torch.float64, torch.bfloat16, pair=0),
         "that is where the position itself stops being exact in bfloat16 (pair 0, theta_0 = 1). The other "
         "pairs' theta_i are rounded to bfloat16 as well and go wrong earlier: look at every pair, with theta_i "
         "cast to bfloat16"),
        (lambda: right - 1, "off by one: report the position (counting from 0), not an index into an array that "
                            "starts at position 1"),
        (lambda: first_bad_position(threshold=Q4_THRESHOLD / 10),
         f"that is the first position with an error above {Q4_THRESHOLD / 10:g} rad; the threshold is "
         f"{Q4_THRESHOLD:g} rad"),
        (lambda: _chapter_answer(), "that is the chapter's answer for d = 128 and 0.1 rad; this question asks "
                                    f"about d = {Q4_D} and {Q4_THRESHOLD:g} rad: compute it"),
    ]


@functools.lru_cache(maxsize=None)
def _chapter_answer():
    errors = angle_error(np.arange(4096), 128, BASE, torch.bfloat16)
    return int(np.flatnonzero(errors > 0.1)[0])


@functools.lru_cache(maxsize=None)
def _q4_dimension_answer():
    theta = torch.from_numpy(_theta(Q4_D, exponent="dimension"))
    positions = torch.from_numpy(Q4_POSITIONS)
    error = ((positions.to(torch.bfloat16)[:, None] * theta.to(torch.bfloat16)).double()
             - positions[:, None].double() * theta).abs().amax(-1)
    return int(Q4_POSITIONS[np.flatnonzero(error.numpy() > Q4_THRESHOLD)[0]])


# ---------------------------------------------------------------------------------------------------
# q5: choose and justify (a porting decision)

Q5_FEEDBACK = {
    "a": ("(a) is right: the layout decides which output coordinates of q and k are paired and turned together, "
          "and those are the rows of W_Q and W_K; the same permutation of both keeps every logit."),
    "b": ("Not (b): W_V never meets the rotation. Permuting its rows reorders the values' coordinates, and the "
          "output projection then reads them in the wrong order."),
    "c": ("Not (c): a dot product is unchanged when both vectors are permuted the same way, but loading the "
          "weights as they are permutes nothing; the same coordinates are paired differently and turned at "
          "other frequencies."),
    "d": ("Not (d): the columns of W_Q are the input coordinates; permuting them makes every output read other "
          "inputs. The rows (one per output coordinate of q and k) are what the layout pairs."),
}


# ---------------------------------------------------------------------------------------------------
# q6: find the bug in cached generation


def next_logits(q_new, k_new, cached_keys, base=BASE):
    position = len(cached_keys)
    keys = np.vstack([cached_keys, rope(np.asarray(k_new)[None], np.array([position]), base=base)])
    return keys @ rope(np.asarray(q_new)[None], np.array([position]), base=base)[0]


def _cache_probes(seed):
    rng = np.random.default_rng([seed, 6006])
    probes = []
    # Every seed has probes where the base matters (d >= 4, t >= 1, a base other than 10000).
    bases = (float(rng.choice([BASE, 100.0])), float(rng.choice([100.0, 500.0])), float(rng.choice([BASE, 100.0])),
             float(rng.choice([10.0, 1000.0])), float(rng.choice([BASE, 100.0])))
    for (t, d), base in zip(((0, 4), (1, 4), (5, 8), (int(rng.integers(6, 30)), 8), (int(rng.integers(30, 80)), 16)),
                            bases):
        q, k = np.round(rng.normal(size=(2, d)), 3)
        past = np.round(rng.normal(size=(t, d)), 3)
        probes.append((q, k, rope(past, np.arange(t), base=base) if t else np.zeros((0, d)), base))
    return probes


def _cache_variant(position_of=lambda t: t, turn_cache=False, turn_q=True, turn_k=True, fixed_base=False):
    def variant(q_new, k_new, cached_keys, base=BASE):
        base = BASE if fixed_base else base
        t = len(cached_keys)
        p = np.array([position_of(t)])
        cached = rope(cached_keys, np.arange(t), base=base) if turn_cache and t else cached_keys
        k = rope(np.asarray(k_new)[None], p, base=base) if turn_k else np.asarray(k_new)[None]
        q = rope(np.asarray(q_new)[None], p, base=base)[0] if turn_q else np.asarray(q_new)
        return np.vstack([cached, k]) @ q
    return variant


CACHE_MISTAKES = [
    Mistake("the new token is not at position 0: with t tokens in the cache it is at position t", _cache_variant(
        position_of=lambda t: 0)),
    Mistake("the cached keys were turned when they were computed; turning them again adds their position twice",
            _cache_variant(turn_cache=True)),
    Mistake("rotating only q: the new key must be turned to its position too before it joins the cache",
            _cache_variant(turn_k=False)),
    Mistake("rotating only k: the new query must be turned to its position too", _cache_variant(turn_q=False)),
    Mistake(FIXED_BASE, _cache_variant(fixed_base=True)),
]


def _describe_cache_args(args):
    q, k, cached, base = args
    return f"<q_new {q.shape}>, <k_new {k.shape}>, <cached_keys {cached.shape}>, base={base:g}"


def _compare_vector(got, expected, args):
    return describe_mismatch(got, expected, what="logits")


# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch06", "Rotary embeddings", [
    FunctionQuestion(qid="q1", title="The rotation in both layouts", name="rope", points=2,
                     probes=_rope_probes, reference=rope, mistakes=ROPE_MISTAKES, compare=_compare_rope,
                     describe_args=_describe_rope_args, match_precision=1e-6),
    FunctionQuestion(qid="q2", title="Converting W_Q and W_K between layouts", name="to_half_layout", points=2,
                     probes=_convert_probes, reference=to_half_layout, mistakes=CONVERT_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="converted weight"),
                     describe_args=lambda args: f"<weight {args[0].shape}>, n_heads={args[1]}",
                     error_hint=lambda args, error: (" (each row of weight is one output coordinate: permute the rows)"
                                                     if error in ("ValueError", "IndexError") else "")),
    FunctionQuestion(qid="q3", title="Rotary logits from inputs and projections", name="rope_logits", points=2,
                     probes=_logits_probes, reference=rope_logits, mistakes=LOGITS_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="logits"),
                     describe_args=_describe_logits_args, stand_ins={"rope": ROPE_STAND_IN},
                     error_hint=lambda args, error: (" (the projection is x @ W_q.T: W_q has one row per output "
                                                     "coordinate, as in nn.Linear)" if error == "ValueError" else "")),
    ValueQuestion(qid="q4", title="Where bfloat16 angles go wrong", name="first_bad_position", points=1,
                  expected=first_bad_position,
                  mistakes=_q4_mistakes() + [(_q4_dimension_answer, DIMENSION)]),
    ChoiceQuestion(qid="q5", title="A porting decision", name="porting_choice", points=1, answer="a",
                   options=Q5_FEEDBACK, single=True),
    FindTheBugQuestion(qid="q6", title="Find the bug: cached generation", name="next_logits", points=2,
                       probes=_cache_probes, reference=next_logits, bug=_cache_variant(position_of=lambda t: t - 1),
                       mistakes=CACHE_MISTAKES, compare=_compare_vector, describe_args=_describe_cache_args),
])
