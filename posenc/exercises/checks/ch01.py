"""Checks of exercise set ch01: from binary counters to sinusoids."""

from __future__ import annotations

import numpy as np

from posenc.exercises.framework import ExerciseSet, FunctionQuestion, Mistake, describe_mismatch
from posenc.lib.encoding import sinusoidal_encoding

# ---------------------------------------------------------------------------------------------------
# q1, q5: the encoding itself, and the same diagnosis for the find-the-bug question

ENCODING_PROBES = [(0, 4), (1, 4), (1, 1), (7, 6), (13, 5), (50, 16), (33, 9), (128, 64), (2000, 256)]


def _with_random_sizes(fixed, seed, make):
    """The fixed probes plus two drawn from the grader's seed, so answers hard-coded to the fixed ones fail."""
    rng = np.random.default_rng(1000 + seed)
    return [*fixed, make(rng), make(rng)]


def _encoding_probes(seed):
    return _with_random_sizes(ENCODING_PROBES, seed,
                              lambda rng: (int(rng.integers(2, 80)), int(rng.integers(1, 48))))


def _encoding_variant(n_positions, d_model, *, base=10000.0, exponent="pair", layout="interleaved",
                      swap=False, start=0, drop_odd_column=False):
    """The encoding with one deliberate mistake, used to recognise what a student did."""
    positions = np.arange(start, start + n_positions, dtype=np.float64)[:, None]
    columns = np.arange(d_model)
    pair = columns // 2
    if layout == "halves":                       # all sines first, then all cosines
        half = (d_model + 1) // 2
        pair = np.where(columns < half, columns, columns - half)
    power = {"pair": 2 * pair / d_model,          # right: omega_i = base^(-2i/d)
             "dimension doubled": 2 * (2 * pair) / d_model,
             "column doubled": 2 * columns / d_model,
             "pair not doubled": pair / d_model,
             "dimension": columns / d_model}[exponent]
    angles = positions / base ** power
    is_sine = (columns % 2 == 0) if layout == "interleaved" else (columns < (d_model + 1) // 2)
    if swap:
        is_sine = ~is_sine
    table = np.where(is_sine, np.sin(angles), np.cos(angles))
    return table[:, : d_model - 1] if drop_odd_column and d_model % 2 else table


ENCODING_MISTAKES = [
    Mistake("layout: you put all sines first and then all cosines (the 'halves' layout); "
            "the exercise asks for the paper's interleaved layout, sin in column 2i and cos in 2i+1",
            lambda n, d: _encoding_variant(n, d, layout="halves")),
    Mistake("sin and cos are swapped: column 2i holds sin(omega_i pos) and column 2i+1 holds cos",
            lambda n, d: _encoding_variant(n, d, swap=True)),
    Mistake("exponent: you used the dimension index where the pair index belongs (2*(2i)/d); "
            "omega_i = base^(-2i/d) with i = column // 2",
            lambda n, d: _encoding_variant(n, d, exponent="dimension doubled")),
    Mistake("exponent: 2j/d with the column index j; the exponent uses the pair index i = j // 2, "
            "so it is 2*(j // 2)/d",
            lambda n, d: _encoding_variant(n, d, exponent="column doubled")),
    Mistake("exponent: the cosine columns use their own column index (j/d); both columns of pair i "
            "share omega_i = base^(-2i/d) with i = column // 2",
            lambda n, d: _encoding_variant(n, d, exponent="dimension")),
    Mistake("exponent: i/d instead of 2i/d, so the frequencies fall too slowly",
            lambda n, d: _encoding_variant(n, d, exponent="pair not doubled")),
    Mistake("wrong base: 1000 instead of 10000",
            lambda n, d: _encoding_variant(n, d, base=1000.0)),
    Mistake("positions start at 1; they start at 0 (row 0 is sin 0 = 0, cos 0 = 1)",
            lambda n, d: _encoding_variant(n, d, start=1)),
    Mistake("odd d_model: the last column is missing; with odd d_model the last column is the sine "
            "of the last pair",
            lambda n, d: _encoding_variant(n, d, drop_odd_column=True)),
]


def _compare_encoding(got, expected, args):
    n_positions, d_model = args
    problem = describe_mismatch(got, expected, what="encoding", dtype=np.float64)
    if problem and isinstance(got, np.ndarray) and got.shape == expected.shape:
        if got.dtype == np.float32 and np.allclose(got, expected, atol=1e-5):
            return "the values are right but the dtype is float32; return float64 (np.float64)"
    if problem and d_model % 2 and isinstance(got, np.ndarray) and got.shape == (n_positions, d_model - 1):
        return f"with odd d_model={d_model} a column is missing: {problem}"
    return problem


def _encoding_question(qid, title, name, points, slow_seconds=None):
    return FunctionQuestion(
        qid=qid, title=title, name=name, points=points,
        probes=_encoding_probes,
        reference=sinusoidal_encoding,
        mistakes=ENCODING_MISTAKES,
        compare=_compare_encoding,
        describe_args=lambda args: f"n_positions={args[0]}, d_model={args[1]}",
        slow_seconds=slow_seconds,
        error_hint=lambda args: (f" (an odd d_model must work too: with d_model={args[1]} the last column "
                                 "is the sine of the last pair, with no cosine)" if args[1] % 2 else ""),
    )


# ---------------------------------------------------------------------------------------------------
# q2: wavelength of pair i


def wavelength(i, d_model, base=10000.0):
    return 2 * np.pi * base ** (2 * i / d_model)


WAVELENGTH_PROBES = [(0, 512), (1, 512), (100, 512), (255, 512), (3, 8), (10, 64, 1000.0), (7, 20, 500.0)]

WAVELENGTH_MISTAKES = [
    Mistake("that is 1/omega_i, the wavelength without the 2 pi: one full turn of sin is 2 pi radians",
            lambda i, d, base=10000.0: base ** (2 * i / d)),
    Mistake("that is the frequency omega_i, not the wavelength 2 pi / omega_i",
            lambda i, d, base=10000.0: base ** (-2 * i / d)),
    Mistake("exponent: i/d instead of 2i/d",
            lambda i, d, base=10000.0: 2 * np.pi * base ** (i / d)),
    Mistake("you treated i as a dimension index (2*(2i)/d); here i is already the pair index",
            lambda i, d, base=10000.0: 2 * np.pi * base ** (4 * i / d)),
    Mistake("the base argument is ignored: you always use 10000",
            lambda i, d, base=10000.0: 2 * np.pi * 10000.0 ** (2 * i / d)),
    Mistake("degrees: a full turn is 2 pi radians here, not 360",
            lambda i, d, base=10000.0: 360 * base ** (2 * i / d)),
]


def _compare_number(got, expected, args):
    if isinstance(got, np.ndarray) and got.size == 1:
        got = float(got)
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return f"expected a number, got {type(got).__name__}"
    if not np.isclose(got, expected, rtol=1e-6):
        return f"expected {expected:.6g}, got {got:.6g}"
    return None


# ---------------------------------------------------------------------------------------------------
# q3: binary counters


def binary_encoding(n_positions, n_bits):
    positions = np.arange(n_positions)[:, None]
    return (positions >> np.arange(n_bits)[None, :]) & 1


BINARY_PROBES = [(0, 3), (1, 1), (8, 3), (16, 4), (37, 6), (5, 8)]

BINARY_MISTAKES = [
    Mistake("bit order: column k must hold bit k counted from the least significant bit "
            "(column 0 flips every step)", lambda n, b: binary_encoding(n, b)[:, ::-1]),
    Mistake("positions start at 1; they start at 0 (row 0 is all zeros)",
            lambda n, b: binary_encoding(n + 1, b)[1:]),
]


def _compare_bits(got, expected, args):
    problem = describe_mismatch(got, expected.astype(np.float64), what="bit table")
    if problem is None and not (np.issubdtype(got.dtype, np.integer) or got.dtype == bool):
        return f"the bits are right but the dtype is {got.dtype}; use integers (0 and 1)"
    return problem


# ---------------------------------------------------------------------------------------------------
# q4: the first repeated row at a given precision


def first_repeat(encoding, decimals):
    seen = set()
    for position, row in enumerate(np.round(encoding, decimals)):
        key = tuple(row.tolist())               # -0.0 == 0.0 here, unlike in row.tobytes()
        if key in seen:
            return position
        seen.add(key)
    return None


def _planted_table(seed, n_rows, d, repeat_at, copy_of, noise=0.004):
    """Random rows in [-1, 1] with row ``repeat_at`` a near copy of row ``copy_of``."""
    rng = np.random.default_rng(seed)
    table = rng.uniform(-1, 1, size=(n_rows, d)).round(2) + 0.001   # away from rounding edges
    table[repeat_at] = table[copy_of] + noise
    return table


def _repeat_probes(seed):
    return [
        (_planted_table(seed + 1, 40, 3, repeat_at=29, copy_of=12), 2),
        (_planted_table(seed + 2, 40, 3, repeat_at=17, copy_of=3), 2),
        (_planted_table(seed + 3, 40, 3, repeat_at=17, copy_of=3, noise=0.03), 2),   # no repeat
        (_planted_table(seed + 4, 25, 2, repeat_at=21, copy_of=20, noise=0.03), 1),
        (sinusoidal_encoding(700, 4), 1),
        (np.zeros((0, 4)), 2),
    ]


REPEAT_MISTAKES = [
    Mistake("you returned the earlier position of the pair; return the first position whose rounded row "
            "equals an earlier one (the later of the two)",
            lambda table, dec: _earlier_of_first_repeat(table, dec)),
    Mistake("the rows are compared without rounding to `decimals`",
            lambda table, dec: first_repeat(table, 12)),
    Mistake("off by one: positions count from 0, like the rows of the table",
            lambda table, dec: None if first_repeat(table, dec) is None else first_repeat(table, dec) + 1),
]


def _earlier_of_first_repeat(table, decimals):
    later = first_repeat(table, decimals)
    if later is None:
        return None
    rounded = np.round(table, decimals)
    return next(p for p in range(later) if np.array_equal(rounded[p], rounded[later]))


def _compare_position(got, expected, args):
    if expected is None:
        return None if got is None else f"there is no repeat in this table; return None, not {got!r}"
    if got is None:
        return f"returned None, but row {expected} repeats an earlier row"
    if isinstance(got, np.ndarray) and got.size == 1:
        got = got.item()
    if isinstance(got, bool) or not isinstance(got, int):
        return f"expected a position (an int), got {type(got).__name__}"
    return None if got == expected else f"expected position {expected}, got {got}"


def _describe_table_args(args):
    table, decimals = args
    return f"<table of shape {table.shape}>, decimals={decimals}"


# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch01", "From binary counters to sinusoids", [
    _encoding_question("q1", "The sinusoidal encoding, vectorised", "sinusoidal_encoding", 3,
                       slow_seconds=0.5),
    FunctionQuestion(qid="q2", title="Wavelength of a pair", name="wavelength", points=2,
                     probes=lambda seed: _with_random_sizes(
                         WAVELENGTH_PROBES, seed, lambda rng: (int(rng.integers(0, 32)), 64, float(rng.integers(100, 20000)))),
                     reference=wavelength,
                     mistakes=WAVELENGTH_MISTAKES, compare=_compare_number,
                     describe_args=lambda a: ", ".join(map(repr, a))),
    FunctionQuestion(qid="q3", title="A binary counter", name="binary_encoding", points=2,
                     probes=lambda seed: _with_random_sizes(
                         BINARY_PROBES, seed, lambda rng: (int(rng.integers(1, 70)), int(rng.integers(1, 9)))),
                     reference=binary_encoding,
                     mistakes=BINARY_MISTAKES, compare=_compare_bits,
                     describe_args=lambda a: f"n_positions={a[0]}, n_bits={a[1]}"),
    FunctionQuestion(qid="q4", title="The first repeat at low precision", name="first_repeat", points=2,
                     probes=_repeat_probes, reference=first_repeat, mistakes=REPEAT_MISTAKES,
                     compare=_compare_position, describe_args=_describe_table_args),
    _encoding_question("q5", "Find the bug", "fixed_encoding", 1),
])
