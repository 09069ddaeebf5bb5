"""Checks of exercise set ch05: position inside attention (Shaw's clipped offsets, T5's buckets, ALiBi).

The references are the library's (``posenc.lib.relative``); every known mistake is a variant of the
reference written here with the mistake made on purpose, so a student's answer is named when a variant
reproduces all of it. The offsets are always j - i, key position minus query position.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import torch

from posenc.exercises.framework import (
    TAMPERED,
    ExerciseSet,
    FindTheBugQuestion,
    FunctionQuestion,
    Mistake,
    ValueQuestion,
    array_of,
    as_number,
    distinct_digits,
    furthest_outside,
    is_set,
    kind_of,
    short,
    within,
)
from posenc.lib.relative import alibi_slopes as _alibi_slopes
from posenc.lib.relative import clipped_index, relative_positions
from posenc.lib.relative import t5_bucket as _t5_bucket

# ---------------------------------------------------------------------------------------------------
# Shared helpers


def _as_array(got, what: str) -> tuple[np.ndarray | None, str | None]:
    """A student's return value as a numpy array (a tensor is as good as an array: the rule for tensors), or a
    sentence saying why it is not one."""
    if array_of(got) is not None:
        return array_of(got), None
    if isinstance(got, (list, tuple)):
        return None, f"the {what} is {kind_of(got)}; return a numpy array"
    return None, f"the {what} is {kind_of(got)}, not a numpy array"


def _integer_problem(got: np.ndarray, what: str) -> str | None:
    if not np.issubdtype(got.dtype, np.integer):
        return f"the {what} has dtype {got.dtype}; return integers (they index a table), e.g. with .astype(int)"
    return None


# ---------------------------------------------------------------------------------------------------
# q1: T5's bucket of each offset


def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5_bucket(torch.as_tensor(np.asarray(relative_position)), bidirectional, num_buckets,
                      max_distance).numpy()


def _bucket_variant(*, sign=1, zero_future=False, halve=True, exact_from_total=False, clamp="last",
                    denominator="ratio", rounding="floor", causal_distance="past", causal_halved=False,
                    add_exact=True, integer_ratio=False, mode=None, nudge=0.0, plus_one=False):
    """The bucket rule with one deliberate mistake (keyword names say which)."""
    def variant(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative = sign * np.asarray(relative_position, dtype=np.int64)
        bidi = bidirectional if mode is None else mode == "bidirectional"
        if bidi:
            nb = num_buckets // 2 if halve else num_buckets
            first = np.where(relative >= 0 if zero_future else relative > 0, nb, 0)
            distance = np.abs(relative)
        else:
            nb = num_buckets // 2 if causal_halved else num_buckets
            first = np.zeros_like(relative)
            distance = {"past": np.maximum(-relative, 0), "abs": np.abs(relative),
                        "future": np.maximum(relative, 0)}[causal_distance]
        max_exact = (num_buckets if exact_from_total else nb) // 2
        ratio = (np.maximum(distance, max_exact) // max_exact if integer_ratio
                 else np.maximum(distance, max_exact) / max_exact)
        scale = {"ratio": np.log(max_distance / max_exact), "max_distance": np.log(max_distance)}[denominator]
        spread = np.log(ratio.astype(np.float64)) / scale * (nb - max_exact) + nudge
        spread = np.floor(spread) if rounding == "floor" else np.round(spread)
        log_bucket = (max_exact if add_exact else 0) + spread.astype(np.int64) + (1 if plus_one else 0)
        if clamp == "last":
            log_bucket = np.minimum(log_bucket, nb - 1)
        elif clamp == "nb":
            log_bucket = np.minimum(log_bucket, nb)
        return first + np.where(distance < max_exact, distance, log_bucket)
    return variant


T5_SIGN = ("sign of the offset: relative_position is j - i, key minus query, so a key in the past has a "
           "negative offset; your buckets are those of i - j (past and future swapped)")
T5_ZERO = ("off by one at offset 0: only keys strictly after the query (j - i > 0) go to the second half of "
           "the buckets; offset 0 belongs with the past, in bucket 0")
T5_NOT_HALVED = ("bidirectional attention splits the buckets in two: num_buckets // 2 for the past (and offset 0), "
                 "the other half for the future; you used all num_buckets for each side")
T5_EXACT_TOTAL = ("max_exact is half of the buckets of one side: (num_buckets // 2) // 2 when bidirectional; you "
                  "took num_buckets // 2 before halving")
T5_NO_CLAMP = ("the buckets are capped: min(bucket, last bucket of the side) so that every distance from "
               "max_distance on shares the last one; yours run past it")
T5_CLAMP_OFF = ("off by one in the cap: the last bucket of a side with nb buckets is nb - 1, not nb "
                "(min(bucket, nb - 1))")
T5_DENOMINATOR = ("the log spacing divides log(n / max_exact) by log(max_distance / max_exact), not by "
                  "log(max_distance)")
T5_ROUNDED = ("the log bucket is truncated (int(), i.e. floor for these non-negative values), not rounded to "
              "the nearest integer")
T5_CAUSAL_ABS = ("causal variant: only the past counts, n = max(i - j, 0) = max(-relative_position, 0); with "
                 "|j - i| future keys get buckets by their distance instead of sharing bucket 0")
T5_CAUSAL_SIGN = ("sign of the offset in the causal variant: the distance into the past is max(-relative_position, 0) "
                  "= max(i - j, 0); max(j - i, 0) measures into the future, which the causal mask hides")
T5_CAUSAL_HALVED = ("causal variant: all num_buckets serve the past (there is no future half to keep), so do not "
                    "halve them when bidirectional=False")
T5_NO_OFFSET = ("the log part starts where the exact part ends: bucket = max_exact + floor(...); without "
                "max_exact the far distances fall back into the exact buckets")
T5_INT_RATIO = ("integer division in the ratio: n // max_exact drops the fraction, so log(n / max_exact) is "
                "computed from a rounded-down ratio; divide as floats")
T5_PLUS_ONE = ("off by one in the log part: the first log-spaced bucket is max_exact itself (bucket = max_exact + "
              "floor(...), and floor(...) is 0 at n = max_exact); you added 1")
T5_ALWAYS_BI = "bidirectional=False is ignored: the causal variant has its own rule (all buckets for the past)"
T5_ALWAYS_CAUSAL = "bidirectional=True is ignored: you always use the causal rule"

T5_MISTAKES = [
    Mistake(T5_SIGN, _bucket_variant(sign=-1)),
    Mistake(T5_ZERO, _bucket_variant(zero_future=True)),
    Mistake(T5_NOT_HALVED, _bucket_variant(halve=False)),
    Mistake(T5_EXACT_TOTAL, _bucket_variant(exact_from_total=True)),
    Mistake(T5_NO_CLAMP, _bucket_variant(clamp="none")),
    Mistake(T5_CLAMP_OFF, _bucket_variant(clamp="nb")),
    Mistake(T5_DENOMINATOR, _bucket_variant(denominator="max_distance")),
    Mistake(T5_ROUNDED, _bucket_variant(rounding="round")),
    Mistake(T5_CAUSAL_ABS, _bucket_variant(causal_distance="abs")),
    Mistake(T5_CAUSAL_SIGN, _bucket_variant(causal_distance="future")),
    Mistake(T5_CAUSAL_HALVED, _bucket_variant(causal_halved=True)),
    Mistake(T5_NO_OFFSET, _bucket_variant(add_exact=False)),
    Mistake(T5_PLUS_ONE, _bucket_variant(plus_one=True)),
    Mistake(T5_INT_RATIO, _bucket_variant(integer_ratio=True)),
    Mistake(T5_ALWAYS_BI, _bucket_variant(mode="bidirectional")),
    Mistake(T5_ALWAYS_CAUSAL, _bucket_variant(mode="causal")),
]


# Bucket numbers that a correct formula reaches from either side: where log(n / max_exact) / log(max_distance /
# max_exact) * (nb - max_exact) is an integer in exact arithmetic (n = 64 with the defaults gives 6), the
# order of the operations decides whether floating point lands on it or just below, so both are right.
# Within this distance of an integer, either bucket is accepted.
BOUNDARY = 1e-6


@functools.lru_cache(maxsize=None)
def near_boundaries() -> tuple:
    """(num_buckets, bidirectional, max_distance, distance) whose log spread lies just below an integer
    (fraction between 0.9991 and 0.99995): a rule that adds a little before the floor (floor(x + 1e-3))
    gets the bucket above there, and the tolerance at exact boundaries (BOUNDARY) does not cover it."""
    found = []
    for num_buckets in (8, 16, 24, 32, 48):
        for bidirectional in (True, False):
            nb = num_buckets // 2 if bidirectional else num_buckets
            max_exact = nb // 2
            n = np.arange(max_exact, 600)
            for max_distance in range(max_exact + 1, 400):
                spread = np.log(n / max_exact) / np.log(max_distance / max_exact) * (nb - max_exact)
                fraction = spread - np.floor(spread)
                keep = (fraction > 0.9991) & (fraction < 0.99995) & (max_exact + np.floor(spread) + 1 <= nb - 1)
                found += [(num_buckets, bidirectional, max_distance, int(d)) for d in n[keep]]
    return tuple(found)


def _t5_probes(seed):
    rng = np.random.default_rng([505, seed])
    num_buckets = int(rng.choice([8, 12, 16, 20, 24, 40, 48, 64]))
    max_distance = int(rng.integers(num_buckets // 2 + 1, 400))
    drawn = np.sort(rng.integers(-600, 601, size=80))
    n = int(rng.integers(3, 12))
    candidates = near_boundaries()
    near = [candidates[int(i)] for i in rng.choice(len(candidates), size=2, replace=False)]
    boundary_probes = [(np.array([-d, d, -d - 1, d + 1]) if bidi else np.array([-d - 1, -d, d]), bidi, nb, md)
                       for nb, bidi, md, d in near]
    return boundary_probes + [
        (np.arange(-300, 301), True, 32, 128),
        (np.arange(-300, 301), False, 32, 128),
        (np.arange(-100, 101), True, 16, 64),
        (np.arange(-60, 61), False, 8, 20),
        (relative_positions(n, n + 2).numpy(), True, 12, 30),
        (drawn, True, num_buckets, max_distance),
        (drawn, False, num_buckets, max_distance),
    ]


def _describe_offsets(args):
    offsets, *rest = args
    offsets = np.asarray(offsets)
    shape = f"shape {offsets.shape}, " if offsets.ndim > 1 else ""
    return (f"<offsets, {shape}{offsets.min()}..{offsets.max()}>, bidirectional={rest[0]}, "
            f"num_buckets={rest[1]}, max_distance={rest[2]}")


def _compare_buckets(got, expected, args):
    array, problem = _as_array(got, "result")
    if problem:
        return problem
    if array.shape != expected.shape:
        return f"the result has shape {array.shape}; expected {expected.shape}, one bucket per offset"
    if np.issubdtype(array.dtype, np.number):
        below = _bucket_variant(nudge=-BOUNDARY)(*args)       # either side of an exact boundary is right
        above = _bucket_variant(nudge=BOUNDARY)(*args)
        expected = np.where((array == below) | (array == above), array, expected)
    wrong = np.flatnonzero(array.ravel() != expected.ravel())
    if wrong.size:
        first = wrong[0]
        offset = np.asarray(args[0]).ravel()[first]
        return (f"offset {offset} gets bucket {array.ravel()[first]}, expected {expected.ravel()[first]} "
                f"({wrong.size} of {expected.size} offsets are wrong)")
    return _integer_problem(array, "result")


# ---------------------------------------------------------------------------------------------------
# q2: ALiBi's slopes


def alibi_slopes(n_heads):
    return _alibi_slopes(n_heads).numpy()


def _geometric(n):
    return 2.0 ** (-8.0 * np.arange(1, n + 1) / n)


def _slopes_variant(kind):
    def variant(n):
        power = 2 ** int(math.floor(math.log2(n)))
        if kind == "from zero":
            return 2.0 ** (-8.0 * np.arange(n) / n)
        if kind == "geometric":
            return _geometric(n)
        if kind == "positive":
            return 2.0 ** (8.0 * np.arange(1, n + 1) / n)
        if kind == "h + 1":
            return 2.0 ** (-8.0 * np.arange(2, n + 2) / n)
        if kind == "rounded power":          # c = 2^round(log2 n): past n, all c slopes of c heads
            near = 2 ** int(round(math.log2(n)))
            return _geometric(near) if near > n else alibi_slopes(n)
        if kind == "halvings":
            return 2.0 ** -np.arange(1, n + 1, dtype=np.float64)
        if kind == "sorted":
            return np.sort(alibi_slopes(n))[::-1]
        if kind == "next power":
            return _geometric(2 * power if power < n else n)[:n]
        if kind == "other half":
            return np.concatenate([_geometric(power), _geometric(2 * power)[1::2][: n - power]]) if power < n \
                else _geometric(n)
        if kind == "last extra":
            return np.concatenate([_geometric(power), _geometric(2 * power)[0::2][power - (n - power):]]) \
                if power < n else _geometric(n)
        raise ValueError(kind)
    return variant


SLOPES_MISTAKES = [
    Mistake("heads count from h = 1: the first slope is 2^(-8/n), not 2^0 = 1", _slopes_variant("from zero")),
    Mistake("for a head count that is not a power of two, the authors' reference code (get_slopes), which this "
            "question follows, does not use 2^(-8h/n), the rule the paper's section 3 states for every n: it takes "
            "the slopes of the largest power of two c below n, then appends every other slope of 2c heads",
            _slopes_variant("geometric")),
    Mistake("the exponent is negative: m_h = 2^(-8h/n), slopes below 1 that shrink from head to head; yours grow "
            "from 2^(8/n) to 256", _slopes_variant("positive")),
    Mistake("heads count from h = 1 to n, so the first slope is 2^(-8/n); you used h + 1 (the first slope is "
            "2^(-16/n))", _slopes_variant("h + 1")),
    Mistake("the exponent is -8h/n (eight halvings spread over the heads); 2^-h ignores the number of heads",
            _slopes_variant("halvings")),
    Mistake("the extra slopes are appended after the c power-of-two slopes, in their own order; you sorted the "
            "list (the reference code's list is not monotone when n is not a power of two)", _slopes_variant("sorted")),
    Mistake("c is the largest power of two at or below n, 2^floor(log2 n); with round(log2 n) some head counts "
            "get c > n and more slopes than heads (6 heads: 8 slopes)", _slopes_variant("rounded power")),
    Mistake("take the largest power of two below n, not the next one above it: the first c slopes must be "
            "those of c heads", _slopes_variant("next power")),
    Mistake("every other slope of 2c heads starting with the first (odd h: 2^-0.5, 2^-1.5, ... for c = 8); the "
            "ones you took are already in the list", _slopes_variant("other half")),
    Mistake("the extra slopes are the first n - c of every other slope of 2c heads, not the last ones",
            _slopes_variant("last extra")),
]


def _slopes_probes(seed):
    rng = np.random.default_rng([506, seed])
    return [(n,) for n in (1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32)] + [(int(rng.integers(33, 100)),),
                                                                   (int(rng.integers(9, 16)),)]


def _compare_slopes(got, expected, args):
    array, problem = _as_array(got, "result")
    if problem:
        return problem
    if array.shape != expected.shape:
        return f"the result has shape {array.shape}; expected {expected.shape}, one slope per head"
    if not np.issubdtype(array.dtype, np.number):
        return f"the slopes have dtype {array.dtype}; expected numbers"
    outside = furthest_outside(array, expected)
    if outside is None:
        return None
    (head,) = outside
    shown_expected, shown_got = distinct_digits(float(expected[head]), float(array[head]))
    return f"head {head + 1} (of {args[0]}) has slope {shown_got}, expected {shown_expected}"


# ---------------------------------------------------------------------------------------------------
# q3: T5's bias matrix from its table


def t5_bias_matrix(table, n_queries, n_keys, bidirectional=True, max_distance=128):
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    buckets = t5_bucket(offsets, bidirectional, table.shape[0], max_distance)
    return np.transpose(np.asarray(table)[buckets], (2, 0, 1))


def _bias_variant(kind):
    def variant(table, n_queries, n_keys, bidirectional=True, max_distance=128):
        offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
        num_buckets, direction = table.shape[0], bidirectional
        if kind == "transposed":
            offsets = -offsets
        elif kind == "abs":
            offsets = -np.abs(offsets)
        elif kind == "defaults":
            num_buckets = 32
        elif kind == "bidirectional":
            direction = True
        elif kind == "distance":
            max_distance = 128
        buckets = t5_bucket(offsets, direction, num_buckets, max_distance)
        if buckets.max() >= table.shape[0]:              # the student's code would have raised an IndexError
            return np.full((table.shape[1], n_queries, n_keys), np.nan)
        gathered = np.asarray(table)[buckets]
        if kind == "all axes reversed":
            return gathered.T
        return gathered if kind == "heads last" else np.transpose(gathered, (2, 0, 1))
    return variant


BIAS_MISTAKES = [
    Mistake("the offset is j - i (key minus query): your matrix is that of i - j, the future and the past swapped",
            _bias_variant("transposed")),
    Mistake("the sign of j - i matters when bidirectional: keys after the query use the second half of the "
            "buckets; you bucketed the distance |j - i| as if every key were in the past", _bias_variant("abs")),
    Mistake("the number of buckets is the table's number of rows, table.shape[0]; you used the default 32",
            _bias_variant("defaults")),
    Mistake("bidirectional=False is not passed on to the bucket function", _bias_variant("bidirectional")),
    Mistake("max_distance is not passed on to the bucket function", _bias_variant("distance")),
    Mistake("the heads come first: return shape (n_heads, n_queries, n_keys), e.g. with np.transpose(..., (2, 0, 1)); "
            "table[buckets] has the heads last", _bias_variant("heads last")),
    Mistake(".T reverses all three axes of table[buckets]: the heads come first, but queries and keys are swapped "
            "too (entry [h, i, j] holds the bias of offset i - j); move only the heads' axis, "
            "np.transpose(table[buckets], (2, 0, 1))", _bias_variant("all axes reversed")),
]


def _bias_probes(seed):
    rng = np.random.default_rng([507, seed])

    def table(num_buckets, heads):
        return np.round(rng.normal(size=(num_buckets, heads)), 3) + np.arange(num_buckets)[:, None] * 10.0

    return [
        (table(8, 2), 6, 6, False, 20),       # first: a causal probe on which 32 default buckets still fit
        (table(8, 2), 5, 5, True, 20),
        (table(8, 1), 4, 9, True, 20),
        (table(16, 3), 30, 30, True, 24),
        (table(16, 2), 30, 30, False, 24),
        (table(32, 2), 6, 3, True, 128),
        (table(12, 2), int(rng.integers(20, 40)), int(rng.integers(20, 40)), bool(rng.integers(0, 2)), 50),
    ]


def _compare_bias(got, expected, args):
    array, problem = _as_array(got, "bias")
    if problem:
        return problem
    if array.shape != expected.shape:
        heads_last = array.shape == expected.shape[1:] + expected.shape[:1]
        hint = " (the heads must come first)" if heads_last else ""
        return f"the bias has shape {array.shape}; expected {expected.shape}{hint}"
    if not np.issubdtype(array.dtype, np.number):
        return f"the bias has dtype {array.dtype}; expected numbers"
    outside = furthest_outside(array, expected)
    if outside is None:
        return None
    h, i, j = outside
    hint = ""
    if np.all(np.isin(np.round(array[h], 6), np.round(args[0][:, h], 6))):
        hint = ("; every entry is a value of the table, so the bucket is wrong (your t5_bias_matrix was run with a "
                "correct t5_bucket): check that the offset is j - i and what you pass to t5_bucket, in its order "
                "(relative_position, bidirectional, num_buckets, max_distance)")
    return f"bias[{h}, {i}, {j}] (offset {j - i}) is {array[h, i, j]:.4g}, expected {expected[h, i, j]:.4g}{hint}"


# While q3 is checked, the student's t5_bucket is replaced by the library's: q1 grades theirs, q3 only what
# t5_bias_matrix adds (offsets, arguments, gathering, axes).
T5_STAND_IN = {"target": "posenc.lib.relative:t5_bucket", "question": "question 1",
               "params": [["relative_position", "relative"], ["bidirectional", "bidirectional"],
                          ["num_buckets", "num_buckets"], ["max_distance", "max_distance"]]}


def _describe_bias_args(args):
    table, nq, nk, bidirectional, max_distance = args
    return (f"<table of shape {table.shape}>, n_queries={nq}, n_keys={nk}, bidirectional={bidirectional}, "
            f"max_distance={max_distance}")


# ---------------------------------------------------------------------------------------------------
# q4: Shaw's clipped index matrix


def shaw_index(n_queries, n_keys, max_distance):
    return clipped_index(relative_positions(n_queries, n_keys), max_distance).numpy()


def _index_variant(kind):
    def variant(n_queries, n_keys, k):
        offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
        if kind == "transposed":
            return np.clip(-offsets, -k, k) + k
        if kind == "no shift":
            return np.clip(offsets, -k, k)
        if kind == "abs":
            return np.clip(np.abs(offsets), 0, k)
        if kind == "upper":
            return np.clip(offsets, -k, k - 1) + k
        if kind == "inner":
            return np.clip(offsets, -k + 1, k - 1) + k
        if kind == "shift k - 1":
            return np.clip(offsets, -k, k) + k - 1
        if kind == "wrap":
            return (offsets + k) % (2 * k + 1)
        raise ValueError(kind)
    return variant


INDEX_MISTAKES = [
    Mistake("the offset is j - i (key minus query); your matrix is that of i - j, i.e. transposed",
            _index_variant("transposed")),
    Mistake("the row index is clip(j - i, -k, k) + k: without + k the offsets of the past are negative, and "
            "NumPy and torch read a negative index from the END of the table, silently", _index_variant("no shift")),
    Mistake("the direction matters: Shaw et al. learn separate vectors for keys before and after the query "
            "(2k + 1 of them); |j - i| merges them", _index_variant("abs")),
    Mistake("off by one: the clip keeps offsets -k..k, both ends included (2k + 1 rows); you clipped the "
            "future at k - 1", _index_variant("upper")),
    Mistake("off by one: the clip keeps offsets -k..k, both ends included (2k + 1 rows); you clipped at "
            "-(k - 1) and k - 1", _index_variant("inner")),
    Mistake("off by one in the shift: clip(j - i, -k, k) runs from -k to k, so + k (not + k - 1) makes the rows "
            "0 .. 2k; with k - 1 offset -k reads row -1, the END of the table", _index_variant("shift k - 1")),
    Mistake("far offsets must saturate at the ends of the table (clip), not wrap around (modulo)",
            _index_variant("wrap")),
]


def _index_probes(seed):
    rng = np.random.default_rng([508, seed])
    return [(4, 4, 1), (5, 5, 2), (3, 7, 2), (8, 3, 3), (6, 6, 0), (6, 6, 10), (12, 12, 4),
            (int(rng.integers(5, 20)), int(rng.integers(5, 20)), int(rng.integers(1, 5)))]


def _compare_index(got, expected, args):
    array, problem = _as_array(got, "index matrix")
    if problem:
        return problem
    if array.shape != expected.shape:
        hint = " (rows are queries i, columns keys j)" if array.shape == expected.shape[::-1] else ""
        return f"the index matrix has shape {array.shape}; expected {expected.shape}{hint}"
    if not np.array_equal(array, expected):
        i, j = (int(x) for x in np.unravel_index(int(np.argmax(array != expected)), expected.shape))
        return f"entry [{i}, {j}] (offset {j - i}) is {array[i, j]}, expected {expected[i, j]}"
    return _integer_problem(array, "index matrix")


# ---------------------------------------------------------------------------------------------------
# q5: predict how many different biases one head can use over 50 tokens


Q5_LENGTH = 50


def distinct_biases():
    """(encoder: distinct buckets over all i, j; decoder: distinct buckets over j <= i), for Q5_LENGTH tokens."""
    offsets = relative_positions(Q5_LENGTH, Q5_LENGTH)
    encoder = _t5_bucket(offsets, True).unique().numel()
    decoder = _t5_bucket(offsets[offsets <= 0], False).unique().numel()
    return int(encoder), int(decoder)


@dataclass
class PredictionQuestion(ValueQuestion):
    """A prediction: a tuple of whole numbers (``expected()``), each part with its own known wrong answers,
    ``mistakes = (((part index, wrong value), message), ...)``."""

    parts: tuple = ()                     # names of the parts, for the messages

    def judge(self, data, seed=0):
        if len(data) != 1:
            return False, TAMPERED
        got, expected = data[0], self.expected()
        if array_of(got) is not None and array_of(got).ndim == 1:
            got = tuple(array_of(got).tolist())
        if is_set(got):
            right = sorted(got.value) == sorted(expected)
            return False, ((f"the numbers are right, but a set has no order: " if right else "a set has no order: ")
                           + f"assign a tuple ({', '.join(self.parts)}), in that order")
        if isinstance(got, (tuple, list)):
            got = [as_number(value) for value in got]        # "27" is the number 27
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False, f"`{self.name}` should be a pair of whole numbers ({', '.join(self.parts)}), got {short(got)}"
        for index, (value, right, part) in enumerate(zip(got, expected, self.parts)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or float(value) != int(value):
                return False, f"the {part} count should be a whole number, got {short(value)}"
            if int(value) != right:
                for (where, wrong), message in self.mistakes:
                    if where == index and int(value) == wrong:
                        return False, f"{part}: {message}"
                return False, f"{part}: {int(value)} is not right"
        return True, "correct"


_ENCODER, _DECODER = distinct_biases()
PREDICTION_MISTAKES = (
    ((0, _ENCODER + 1), "bucket 16 would be offset 0 in the future half, but offset 0 goes to bucket 0 with the past, "
                        "so no key ever lands in bucket 16"),
    ((0, 32), "not every bucket is reached: the offsets of 50 tokens stop at ±49, far from the last buckets"),
    ((0, 2 * Q5_LENGTH - 1), "that counts offsets; offsets far apart share a log-spaced bucket"),
    ((0, 14), "that is one side only; keys after the query use the other half of the buckets"),
    ((0, _DECODER), "that is the causal rule's count; the encoder is bidirectional, with half of the buckets "
                    "for each side"),
    ((1, 32), "not every bucket is reached: distances stop at 49, and the last bucket starts at 113"),
    ((1, Q5_LENGTH), "that counts distances; distances from 16 on share log-spaced buckets"),
    ((1, 16), "the causal decoder has 16 exact buckets, but distances 16..49 add log-spaced ones"),
    ((1, 14), "that is the bidirectional rule's past half; the causal rule gives all 32 buckets to the past"),
)


# ---------------------------------------------------------------------------------------------------
# q6: find the bug in a Shaw attention


def shaw_logits(q, k, key_table, max_distance):
    n, d = q.shape
    offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
    index = np.clip(offsets, -max_distance, max_distance) + max_distance
    return (q @ k.T + np.einsum("id,ijd->ij", q, key_table[index])) / np.sqrt(d)


def _logits_variant(kind):
    def variant(q, k, key_table, max_distance):
        n, d = q.shape
        offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
        if kind == "given":
            index = np.clip(offsets, -max_distance, max_distance)
        elif kind == "transposed":
            index = np.clip(-offsets, -max_distance, max_distance) + max_distance
        elif kind == "abs":
            index = np.clip(np.abs(offsets), 0, max_distance) + max_distance
        else:
            index = np.clip(offsets, -max_distance, max_distance) + max_distance
        relative = np.einsum("id,ijd->ij", q, key_table[index])
        if kind == "unscaled relative":
            return q @ k.T / np.sqrt(d) + relative
        return (q @ k.T + relative) / np.sqrt(d)
    return variant


LOGITS_MISTAKES = [
    Mistake("that fix swaps the direction: the offset is j - i (key minus query)", _logits_variant("transposed")),
    Mistake("that fix loses the direction: keys before and after the query must read different rows",
            _logits_variant("abs")),
    Mistake("both terms are divided by sqrt(d): e_ij = q_i . (k_j + a_ij) / sqrt(d)",
            _logits_variant("unscaled relative")),
]


def _logits_probes(seed):
    rng = np.random.default_rng([509, seed])
    probes = []
    for n, d, k in ((6, 4, 2), (9, 8, 3), (12, 4, 1), (int(rng.integers(8, 16)), 6, int(rng.integers(2, 5)))):
        probes.append((np.round(rng.normal(size=(n, d)), 3), np.round(rng.normal(size=(n, d)), 3),
                       np.round(rng.normal(size=(2 * k + 1, d)), 3), k))
    return probes


def _describe_logits_args(args):
    q, k, table, max_distance = args
    return f"q and k of shape {q.shape}, <key_table of shape {table.shape}>, max_distance={max_distance}"


def _compare_logits(got, expected, args):
    array, problem = _as_array(got, "result")
    if problem:
        return problem
    if array.shape != expected.shape:
        return f"the logits have shape {array.shape}; expected {expected.shape}"
    if not np.issubdtype(array.dtype, np.number) or not within(array, expected):
        return "the logits still differ from Shaw's e_ij = q_i . (k_j + a^K_clip(j - i)) / sqrt(d): keep looking"
    return None


# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch05", "Position inside attention: relative biases", [
    FunctionQuestion(qid="q1", title="T5's bucket of an offset", name="t5_bucket", points=3,
                     probes=_t5_probes, reference=t5_bucket, mistakes=T5_MISTAKES, compare=_compare_buckets,
                     describe_args=_describe_offsets),
    FunctionQuestion(qid="q2", title="ALiBi's slopes for any number of heads", name="alibi_slopes", points=2,
                     probes=_slopes_probes, reference=alibi_slopes, mistakes=SLOPES_MISTAKES,
                     compare=_compare_slopes, describe_args=lambda a: f"n_heads={a[0]}"),
    FunctionQuestion(qid="q3", title="T5's bias matrix from its table", name="t5_bias_matrix", points=2,
                     probes=_bias_probes, reference=t5_bias_matrix, mistakes=BIAS_MISTAKES, compare=_compare_bias,
                     describe_args=_describe_bias_args, stand_ins={"t5_bucket": T5_STAND_IN},
                     error_hint=lambda args, error: (" (an index beyond the table's last row, or t5_bucket refusing "
                                                     "its arguments, means they are off: the number of buckets is "
                                                     "table.shape[0], t5_bucket's third argument, and max_distance "
                                                     "its fourth)" if error in ("IndexError", "ValueError") else "")),
    FunctionQuestion(qid="q4", title="Shaw's clipped index matrix", name="shaw_index", points=2,
                     probes=_index_probes, reference=shaw_index, mistakes=INDEX_MISTAKES, compare=_compare_index,
                     describe_args=lambda a: f"n_queries={a[0]}, n_keys={a[1]}, max_distance={a[2]}"),
    PredictionQuestion(qid="q5", title="Predict: how many biases can one head use?", name="distinct_biases",
                       points=2, expected=lambda: (_ENCODER, _DECODER), parts=("encoder", "decoder"),
                       mistakes=PREDICTION_MISTAKES),
    FindTheBugQuestion(qid="q6", title="Find the bug in a Shaw attention", name="shaw_logits", points=2,
                       probes=_logits_probes, reference=shaw_logits, bug=_logits_variant("given"),
                       mistakes=LOGITS_MISTAKES, compare=_compare_logits, describe_args=_describe_logits_args),
])
