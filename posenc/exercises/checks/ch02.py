"""Checks of exercise set ch02: the relative-shift proof."""

from __future__ import annotations

import numpy as np

from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FunctionQuestion, Mistake, ValueQuestion, describe_mismatch,
)
from posenc.lib.encoding import DEFAULT_BASE, encoding_at, frequencies, wavelengths
from posenc.lib.rotation import dot_product_profile, shift_operator, shift_vectors

# ---------------------------------------------------------------------------------------------------
# Deliberately wrong versions of the 2x2 blocks, shared by q1-q3


def _wrong_omega(d_model, base, exponent):
    """Frequencies of all pairs with one mistake in the exponent (or none, for "pair")."""
    pair = np.arange(d_model // 2, dtype=np.float64)
    return {"pair": base ** (-2 * pair / d_model),
            "dimension": base ** (-2 * (2 * pair) / d_model),     # used 2i where i belongs
            "pair not doubled": base ** (-pair / d_model),        # i/d instead of 2i/d
            "inverted": base ** (2 * pair / d_model),             # multiplied by 1/omega_i
            "fixed base": DEFAULT_BASE ** (-2 * pair / d_model),  # base argument ignored
            "one frequency": np.ones_like(pair)}[exponent]         # omega_0 in every block


def _wrong_blocks(k, d_model, base=DEFAULT_BASE, *, exponent="pair", form="right", unit="radians"):
    """The d_model / 2 blocks M(k, i) with the chosen mistakes, shape (d_model / 2, 2, 2)."""
    angle = _wrong_omega(d_model, base, exponent) * k
    angle = {"radians": angle, "deg2rad": np.deg2rad(angle), "rad2deg": np.rad2deg(angle)}[unit]
    c, s = np.cos(angle), np.sin(angle)
    rows = {"right": ((c, s), (-s, c)),
            "transposed": ((c, -s), (s, c)),          # textbook rotation: M(-k), the inverse
            "second row sign": ((c, s), (s, c)),      # cos(a + b) misremembered with a plus
            "first row sign": ((c, -s), (-s, c))}[form]  # sin(a + b) misremembered with a minus
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def _assemble(blocks, layout="diagonal"):
    """Place the blocks into a d_model x d_model matrix, rightly or in one of two wrong ways."""
    d_model = 2 * len(blocks)
    out = np.zeros((d_model, d_model))
    for i, block in enumerate(blocks):
        if layout == "diagonal":
            rows = [2 * i, 2 * i + 1]
        elif layout == "overlapping":               # T[i:i+2, i:i+2] instead of T[2i:2i+2, 2i:2i+2]
            rows = [i, i + 1]
        else:                                       # "halves": pair i in dimensions i and i + d/2
            rows = [i, i + d_model // 2]
        out[np.ix_(rows, rows)] = block
    return out


TRANSPOSED = ("transposed rotation: [[cos, -sin], [sin, cos]] is the textbook matrix for a (cos, sin) "
              "pair; here the sine comes first, and that matrix is the inverse, the turn by -k, which shifts back "
              "by k. The first row of each block is [cos(omega_i k), sin(omega_i k)]")
SECOND_ROW_SIGN = ("wrong sign of the sine term in the second row: cos(a + b) = cos a cos b - sin a sin b, "
                   "so the second row is [-sin(omega_i k), cos(omega_i k)]")
FIRST_ROW_SIGN = ("wrong sign of the sine term in the first row: sin(a + b) = sin a cos b + cos a sin b, "
                  "so the first row is [cos(omega_i k), sin(omega_i k)]")
DEG2RAD = ("degrees vs radians: omega_i * k is already an angle in radians, which is what np.sin and np.cos "
           "take; converting it with np.radians / np.deg2rad (or * pi / 180) shrinks every angle")
RAD2DEG = ("degrees vs radians: you converted the angle to degrees (np.degrees or * 180 / pi), but np.sin "
           "and np.cos take radians; use omega_i * k as it is")
DIMENSION = ("pair index vs dimension index: you used the dimension 2i where the pair index i belongs "
             "(exponent 2*(2i)/d); pair i has omega_i = base^(-2i/d_model)")
NOT_DOUBLED = ("exponent i/d instead of 2i/d: with the pair index i the frequency is "
               "omega_i = base^(-2i/d_model)")
INVERTED = ("omega_i = 1 / base^(2i/d_model): you multiplied k by base^(2i/d_model) (the wavelength "
            "over 2 pi) instead of dividing by it")
FIXED_BASE = "the base argument is ignored: you always use 10000"

BLOCK_MISTAKES = [
    (TRANSPOSED, {"form": "transposed"}),
    (SECOND_ROW_SIGN, {"form": "second row sign"}),
    (FIRST_ROW_SIGN, {"form": "first row sign"}),
    (DEG2RAD, {"unit": "deg2rad"}),
    (RAD2DEG, {"unit": "rad2deg"}),
    (DIMENSION, {"exponent": "dimension"}),
    (NOT_DOUBLED, {"exponent": "pair not doubled"}),
    (INVERTED, {"exponent": "inverted"}),
    (FIXED_BASE, {"exponent": "fixed base"}),
]

# ---------------------------------------------------------------------------------------------------
# q1: the 2x2 rotation of pair i


def rotation(i, k, d_model, base=DEFAULT_BASE):
    return shift_operator(k, d_model, base)[2 * i:2 * i + 2, 2 * i:2 * i + 2]


ROTATION_PROBES = [(0, 1, 8), (1, 3, 8), (3, 5, 8), (2, -7, 16), (5, 100, 16), (10, 37, 64, 1000.0),
                   (1, 2, 4, 100.0), (0, 0, 4)]


def _drawn(seed, tag):
    """A generator for the inputs a question draws from the grader's seed."""
    return np.random.default_rng([seed, 2, tag])


def _random_base(rng):
    return float(rng.choice([10.0, 100.0, 1000.0, 10000.0, float(rng.integers(20, 50000))]))


def _rotation_probes(seed):
    rng = _drawn(seed, 1)
    drawn = []
    for _ in range(2):
        d_model = 2 * int(rng.integers(2, 40))
        drawn.append((int(rng.integers(1, d_model // 2)), int(rng.integers(-500, 500)), d_model, _random_base(rng)))
    return [*ROTATION_PROBES, *drawn]


def _rotation_variant(**mistake):
    def variant(i, k, d_model, base=DEFAULT_BASE):
        return _wrong_blocks(k, d_model, base, **mistake)[i]
    return variant


def _as_dimension(i, k, d_model, base=DEFAULT_BASE):
    """Pair index read as a dimension index: the block of pair i // 2."""
    return _wrong_blocks(k, d_model, base)[i // 2]


ROTATION_MISTAKES = [Mistake(message, _rotation_variant(**mistake)) for message, mistake in BLOCK_MISTAKES] + [
    Mistake("pair index vs dimension index: i is already the pair index, so do not halve it (i // 2); "
            "omega_i = base^(-2i/d_model)", _as_dimension),
]

# ---------------------------------------------------------------------------------------------------
# q2: the block-diagonal T(k)

SHIFT_PROBES = [(1, 4), (3, 8), (-5, 8), (10, 16), (7, 6, 100.0), (0, 4), (123, 32), (2, 2)]


def _shift_probes(seed):
    rng = _drawn(seed, 2)
    drawn = [(int(rng.integers(-300, 300)), 2 * int(rng.integers(2, 24)), _random_base(rng)) for _ in range(2)]
    return [*SHIFT_PROBES, *drawn]


def _shift_variant(layout="diagonal", **mistake):
    def variant(k, d_model, base=DEFAULT_BASE):
        return _assemble(_wrong_blocks(k, d_model, base, **mistake), layout)
    return variant


SHIFT_MISTAKES = [Mistake(message, _shift_variant(**mistake)) for message, mistake in BLOCK_MISTAKES] + [
    Mistake("every block uses the same frequency; block i needs its own omega_i = base^(-2i/d_model)",
            _shift_variant(exponent="one frequency")),
    Mistake("the blocks overlap: block i belongs in rows and columns 2i and 2i+1 (you put it at i and i+1)",
            _shift_variant(layout="overlapping")),
    Mistake("layout: you paired dimension i with dimension i + d_model/2 (the 'halves' layout); in this "
            "course pair i sits in the neighbouring dimensions 2i and 2i+1",
            _shift_variant(layout="halves")),
]

# ---------------------------------------------------------------------------------------------------
# q3: shift a whole table of row vectors with T(k)


def shift_rows(table, k, base=DEFAULT_BASE):
    return shift_vectors(table, k, base)


def _shift_rows_probes(seed):
    rng = np.random.default_rng(seed + 2024)
    return [
        (encoding_at(np.arange(6), 4), 1),
        (encoding_at(np.arange(-3, 5), 8), -2),
        (rng.normal(size=(5, 6)), 3),
        (rng.normal(size=(3, 16)), 100, 100.0),
        (rng.normal(size=(1, 2)), -7),
        (rng.normal(size=(4, 4)), 11, 50.0),
    ]


def _rows_variant(**mistake):
    def variant(table, k, base=DEFAULT_BASE):
        operator = _assemble(_wrong_blocks(k, table.shape[1], base, **mistake))
        return table @ operator.T
    return variant


def _recomputed(table, k, base=DEFAULT_BASE):
    """The encoding at positions 0 + k .. n - 1 + k, whatever rows were given."""
    return encoding_at(np.arange(len(table)) + k, table.shape[1], base)


def _overwritten(table, k, base=DEFAULT_BASE):
    """Updated in place: the new cosines are computed from the already shifted sines."""
    omega = frequencies(table.shape[1], base)
    c, s = np.cos(omega * k), np.sin(omega * k)
    out = np.array(table, dtype=np.float64)
    out[:, 0::2] = c * out[:, 0::2] + s * out[:, 1::2]
    out[:, 1::2] = -s * out[:, 0::2] + c * out[:, 1::2]
    return out


ROWS_TRANSPOSED = ("rows are vectors: T(k) v for every row v at once is table @ T(k).T; table @ T(k) applies "
                   "the transpose T(-k) and shifts back by k")

SHIFT_ROWS_MISTAKES = [Mistake(ROWS_TRANSPOSED, _rows_variant(form="transposed"))] + [
    Mistake(message, _rows_variant(**mistake)) for message, mistake in BLOCK_MISTAKES[1:]] + [
    Mistake("you recomputed the encoding at positions t + k; shift_rows must turn the rows it is given "
            "(they need not be encodings at all), with T(k) only", _recomputed),
    Mistake("the new sine columns overwrote the old ones before the new cosines were computed from them; "
            "compute both new columns from the original values", _overwritten),
]


def _describe_rows_args(args):
    table, *rest = args
    return ", ".join([f"<table of shape {table.shape}>"] + [repr(a) for a in rest])


# ---------------------------------------------------------------------------------------------------
# q4: the dot-product profile


def dot_profile(offsets, d_model, base=DEFAULT_BASE):
    return dot_product_profile(offsets, d_model, base)


PROFILE_PROBES = [(np.arange(-50, 51), 16, 100.0), (np.arange(0, 10), 8), (np.array([0, 1, -1, 1000, -2500]), 128),
                  (np.arange(-5, 6), 2, 10.0), (np.array([7, 300]), 512)]


def _profile_probes(seed):
    rng = _drawn(seed, 4)
    drawn = [(rng.integers(-3000, 3000, size=int(rng.integers(3, 30))), 2 * int(rng.integers(1, 128)),
              _random_base(rng)) for _ in range(2)]
    return [*PROFILE_PROBES, *drawn]


def _profile_variant(exponent="pair", unit="radians", combine="sum", trig=np.cos):
    def variant(offsets, d_model, base=DEFAULT_BASE):
        angles = np.asarray(offsets, dtype=np.float64)[:, None] * _wrong_omega(d_model, base, exponent)
        angles = np.deg2rad(angles) if unit == "deg2rad" else angles
        terms = trig(angles)
        return {"sum": terms.sum(axis=1), "mean": terms.mean(axis=1), "columns": 2 * terms.sum(axis=1)}[combine]
    return variant


PROFILE_MISTAKES = [
    Mistake("you averaged over the pairs (that is the dot product divided by d_model/2); the dot product is "
            "the sum of cos(omega_i k) over all pairs", _profile_variant(combine="mean")),
    Mistake("every pair contributes one term: sin(a) sin(b) + cos(a) cos(b) = cos(a - b) is a single "
            "cos(omega_i k), not one per column (your profile is twice too large)",
            _profile_variant(combine="columns")),
    Mistake("sin instead of cos: sin(a) sin(b) + cos(a) cos(b) = cos(a - b), so each pair contributes "
            "cos(omega_i k)", _profile_variant(trig=np.sin)),
    Mistake(DIMENSION, _profile_variant(exponent="dimension")),
    Mistake(NOT_DOUBLED, _profile_variant(exponent="pair not doubled")),
    Mistake(INVERTED, _profile_variant(exponent="inverted")),
    Mistake(DEG2RAD, _profile_variant(unit="deg2rad")),
    Mistake(FIXED_BASE, _profile_variant(exponent="fixed base")),
]


def _compare_profile(got, expected, args):
    if isinstance(got, (list, tuple)):
        return "the profile is a list; return a numpy array with one value per offset"
    return describe_mismatch(got, expected, what="profile")


def _describe_profile_args(args):
    offsets, *rest = args
    return ", ".join([f"offsets=<{len(offsets)} offsets from {offsets.min()} to {offsets.max()}>"]
                     + [repr(a) for a in rest])


# ---------------------------------------------------------------------------------------------------
# q5: where the profile first goes negative (d_model = 16, base = 100, offsets -50 .. 50)

Q5_OFFSETS = np.arange(-50, 51)
Q5_D_MODEL, Q5_BASE = 16, 100.0


def first_negative_offset(profile_function=dot_product_profile):
    profile = profile_function(Q5_OFFSETS, Q5_D_MODEL, Q5_BASE)
    candidates = Q5_OFFSETS[(Q5_OFFSETS > 0) & (profile < 0)]
    return int(candidates[0])


def _q5_mistakes():
    profile = dot_product_profile(Q5_OFFSETS, Q5_D_MODEL, Q5_BASE)
    right = first_negative_offset()
    return [
        (lambda: int(np.flatnonzero(Q5_OFFSETS == right)[0]),
         "that is the position of the offset in the array np.arange(-50, 51), not the offset itself"),
        (lambda: -right, "the profile is symmetric in k; the question asks for the smallest positive offset"),
        (lambda: int(Q5_OFFSETS[profile < 0][0]),
         "that is the first negative value when you read the array from k = -50; start at k = 0 and move out"),
        (lambda: first_negative_offset(_profile_variant(exponent="pair not doubled")), NOT_DOUBLED),
        (lambda: first_negative_offset(_profile_variant(exponent="inverted")), INVERTED),
    ]


# ---------------------------------------------------------------------------------------------------
# q6: how many pairs make a full turn within a 512-token context (d_model = 512)

Q6_D_MODEL, Q6_CONTEXT = 512, 512


def _count_turning(wavelength_of_pair):
    return int((wavelength_of_pair <= Q6_CONTEXT).sum())


def pairs_with_full_turn():
    return _count_turning(wavelengths(Q6_D_MODEL))


def _q6_mistakes():
    inverse_omega = 1 / frequencies(Q6_D_MODEL)
    pair = np.arange(Q6_D_MODEL // 2)
    return [
        (lambda: _count_turning(inverse_omega),
         "a full turn is 2 pi radians: the wavelength of pair i is 2 pi / omega_i, not 1 / omega_i"),
        (lambda: _count_turning(np.pi * inverse_omega),
         "pi radians is half a turn; a full turn takes 2 pi / omega_i positions"),
        (lambda: _count_turning(360 * inverse_omega),
         "degrees vs radians: a full turn is 2 pi radians of omega_i k, not 360"),
        (lambda: 2 * pairs_with_full_turn(),
         "you counted dimensions; the question asks for pairs (each pair is two dimensions)"),
        (lambda: Q6_D_MODEL // 2 - pairs_with_full_turn(),
         "that counts the pairs that do NOT complete a turn within 512 positions"),
        (lambda: _count_turning(2 * np.pi * DEFAULT_BASE ** (pair / Q6_D_MODEL)), NOT_DOUBLED),
        (lambda: _count_turning(2 * np.pi * DEFAULT_BASE ** (4 * pair / Q6_D_MODEL)), DIMENSION),
    ]


# ---------------------------------------------------------------------------------------------------
# q7: why both sine and cosine (one choice)

SINE_AND_COSINE_OPTIONS = {
    "a": "sin(w(t + k)) = sin(wt) cos(wk) + cos(wt) sin(wk) needs cos(wt); with the cosine stored beside the "
         "sine, the shift is one fixed rotation of each pair, the same matrix for every t, and with the sine "
         "alone no fixed matrix works for all t",
    "b": "the width is fixed (d_model) either way: the cosine columns replace sines of other frequencies, so "
         "it is not about having more dimensions",
    "c": "sines are bounded too, in [-1, 1]; boundedness holds with or without the cosine",
    "d": "the cosine does make PE(0) non-zero, but any constant column would do that; what the theorem needs "
         "is the pair (sin, cos), whose shift is a rotation",
}

# ---------------------------------------------------------------------------------------------------
# q8: how many entries of T(1) are non-zero (d_model = 512)

Q8_D_MODEL, Q8_OFFSET = 512, 1


def nonzero_entries():
    return int(np.count_nonzero(shift_operator(Q8_OFFSET, Q8_D_MODEL)))


Q8_MISTAKES = [
    (lambda: Q8_D_MODEL,
     "the diagonal holds cos(omega_i), but each 2x2 block also holds sin(omega_i) and -sin(omega_i) off the "
     "diagonal, which are not zero for k = 1: 4 entries per block"),
    (lambda: Q8_D_MODEL // 2, "that is the number of 2x2 blocks; each block has 4 non-zero entries"),
    (lambda: Q8_D_MODEL * Q8_D_MODEL,
     "T(k) is block-diagonal: outside its d_model / 2 blocks of size 2x2 every entry is zero"),
    (lambda: 4 * Q8_D_MODEL, "there are d_model / 2 blocks (one per pair), not d_model: 4 * d_model / 2 entries"),
    (lambda: 3 * Q8_D_MODEL // 2, "all 4 entries of a block are non-zero for k = 1: cos, sin, -sin and cos"),
]

# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch02", "The relative-shift proof", [
    FunctionQuestion(qid="q1", title="The rotation of one pair", name="rotation", points=2,
                     probes=_rotation_probes, reference=rotation, mistakes=ROTATION_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="rotation"),
                     describe_args=lambda args: ", ".join(map(repr, args))),
    FunctionQuestion(qid="q2", title="The shift operator T(k)", name="shift_operator", points=2,
                     probes=_shift_probes, reference=shift_operator, mistakes=SHIFT_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="matrix T(k)"),
                     describe_args=lambda args: ", ".join(map(repr, args))),
    FunctionQuestion(qid="q3", title="Shifting a table of vectors", name="shift_rows", points=2,
                     probes=_shift_rows_probes, reference=shift_rows, mistakes=SHIFT_ROWS_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="shifted table"),
                     describe_args=_describe_rows_args,
                     error_hint=lambda args, error: (" (each row is one vector v; T(k) v for all rows at once "
                                                     "is table @ T.T)" if error == "ValueError" else "")),
    FunctionQuestion(qid="q4", title="The dot-product profile", name="dot_profile", points=2,
                     probes=_profile_probes, reference=dot_profile, mistakes=PROFILE_MISTAKES,
                     compare=_compare_profile, describe_args=_describe_profile_args),
    ValueQuestion(qid="q5", title="Where the profile first goes negative", name="first_negative_offset",
                  points=1, expected=first_negative_offset, mistakes=_q5_mistakes()),
    ValueQuestion(qid="q6", title="Pairs that turn within a context", name="pairs_with_full_turn",
                  points=1, expected=pairs_with_full_turn, mistakes=_q6_mistakes()),
    ChoiceQuestion(qid="q7", title="Why both sine and cosine?", name="why_sine_and_cosine", points=1,
                   answer="a", options=SINE_AND_COSINE_OPTIONS, single=True),
    ValueQuestion(qid="q8", title="How sparse is T(k)?", name="nonzero_entries", points=1,
                  expected=nonzero_entries, mistakes=Q8_MISTAKES),
])
