"""Checks of exercise set ch01: from binary counters to sinusoids."""

from __future__ import annotations

import numpy as np

from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FindTheBugQuestion, FunctionQuestion, Mistake, ValueQuestion, compare_number,
    array_of, describe_mismatch, kind_of,
)
from posenc.lib.encoding import sinusoidal_encoding

# ---------------------------------------------------------------------------------------------------
# q1, q5: the encoding itself, and the same diagnosis for the find-the-bug question

ENCODING_PROBES = [(0, 4), (1, 4), (1, 1), (7, 6), (13, 5), (50, 16), (33, 9), (128, 64)]
# Only timed, for the note about speed: three short calls (the fastest counts) and one with four times the
# positions; a double loop takes about 0.025 s and 0.1 s of CPU time, whole arrays a few milliseconds at most.
TIMING_PROBES = [(500, 128), (501, 128), (502, 128), (2000, 128)]


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
    if layout in ("halves", "tensor2tensor"):    # all sines first, then all cosines
        half = (d_model + 1) // 2
        pair = np.where(columns < half, columns, columns - half)
    power = {"pair": 2 * pair / d_model,          # right: omega_i = base^(-2i/d)
             "dimension doubled": 2 * (2 * pair) / d_model,
             "column doubled": 2 * columns / d_model,
             "pair not doubled": pair / d_model,
             "dimension": columns / d_model}[exponent]
    if layout == "tensor2tensor":                 # frequencies from 1 to 1/base exactly: log spacing / (d/2 - 1)
        power = pair / (d_model // 2 - 1)
    angles = positions / base ** power
    is_sine = (columns % 2 == 0) if layout == "interleaved" else (columns < (d_model + 1) // 2)
    if swap:
        is_sine = ~is_sine
    table = np.where(is_sine, np.sin(angles), np.cos(angles))
    return table[:, : d_model - 1] if drop_odd_column and d_model % 2 else table


def _even(n_positions, d_model):
    return d_model % 2 == 0


def _even_from_4(n_positions, d_model):
    return d_model % 2 == 0 and d_model >= 4


ENCODING_MISTAKES = [
    Mistake("layout: you put all sines first and then all cosines (the 'halves' layout); "
            "the exercise asks for the paper's interleaved layout, sin in column 2i and cos in 2i+1",
            lambda n, d: _encoding_variant(n, d, layout="halves"), applies=_even),
    Mistake("layout and frequencies of tensor2tensor: all sines first, then all cosines, with the frequencies "
            "spaced by log(10000)/(d_model/2 - 1); the exercise asks for the paper's interleaved layout (sin in "
            "column 2i, cos in 2i+1) with omega_i = 10000^(-2i/d_model)",
            lambda n, d: _encoding_variant(n, d, layout="tensor2tensor"), applies=_even_from_4),
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
    if problem and d_model % 2 and array_of(got) is not None and array_of(got).shape == (n_positions, d_model - 1):
        return f"with odd d_model={d_model} a column is missing: {problem}"
    return problem


def _encoding_question(kind, **fields):
    return kind(
        probes=_encoding_probes,
        reference=sinusoidal_encoding,
        compare=_compare_encoding,
        describe_args=lambda args: f"n_positions={args[0]}, d_model={args[1]}",
        error_hint=lambda args, error: (f" (an odd d_model must work too: with d_model={args[1]} the last column "
                                        "is the sine of the last pair, with no cosine)"
                                        if args[1] % 2 and error in ("ValueError", "IndexError") else ""),
        **fields,
    )


def handed_out_encoding(n_positions, d_model):
    """q5 as handed out: every column uses its own index in the exponent (j/d), so the cosine of pair i
    turns at another frequency than its sine."""
    return _encoding_variant(n_positions, d_model, exponent="dimension")


# q5's bug is the "dimension" mistake (reported only as "still there"); these are the repairs that go
# half-way or break something else.
REPAIR_MISTAKES = [m for m in ENCODING_MISTAKES
                   if m.message.startswith(("exponent: 2j/d", "exponent: i/d", "sin and cos are swapped"))]


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


# ---------------------------------------------------------------------------------------------------
# q3: binary counters


def binary_encoding(n_positions, n_bits):
    positions = np.arange(n_positions)[:, None]
    return (positions >> np.arange(n_bits)[None, :]) & 1


BINARY_PROBES = [(0, 3), (1, 1), (8, 3), (16, 4), (37, 6), (5, 8),
                 (9, 3), (20, 2)]    # more positions than 2**n_bits, as the drawn ones often have

BINARY_MISTAKES = [
    Mistake("bit order: column k must hold bit k counted from the least significant bit "
            "(column 0 flips every step)", lambda n, b: binary_encoding(n, b)[:, ::-1]),
    Mistake("positions start at 1; they start at 0 (row 0 is all zeros)",
            lambda n, b: binary_encoding(n + 1, b)[1:]),
]


def _compare_bits(got, expected, args):
    problem = describe_mismatch(got, expected.astype(np.float64), what="bit table")
    dtype = array_of(got).dtype if problem is None else None
    if problem is None and not (np.issubdtype(dtype, np.integer) or dtype == bool):
        return f"the bits are right but the dtype is {dtype}; use integers (0 and 1)"
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


def _planted_table(rng, n_rows, d, repeat_at, copy_of, noise=0.002, decimals=2):
    """Random rows in [-1, 1], away from rounding edges, with row ``repeat_at`` a near copy of row
    ``copy_of`` (``noise`` off in every entry) and no other repeat at ``decimals`` decimals."""
    step = 10.0 ** -decimals
    grid = rng.choice(np.arange(-1 / step, 1 / step + 1), size=(n_rows, d), replace=True) * step
    while len({tuple(row) for row in grid.round(decimals).tolist()}) < n_rows:   # redraw until rows differ
        grid = rng.choice(np.arange(-1 / step, 1 / step + 1), size=(n_rows, d), replace=True) * step
    table = grid + step / 10
    table[repeat_at] = table[copy_of] + noise
    return table


def _repeat_probes(seed):
    rng = np.random.default_rng([seed, 4])
    far, later = int(rng.integers(12, 40)), int(rng.integers(5, 25))
    return [
        (_planted_table(rng, 40, 3, repeat_at=far, copy_of=int(rng.integers(0, 8))), 2),   # a far repeat
        (_planted_table(rng, 40, 3, repeat_at=17, copy_of=3, noise=0.03), 2),               # no repeat
        (_planted_table(rng, 25, 2, repeat_at=later, copy_of=later - 1, noise=0.03, decimals=1), 1),  # neighbours
        (_planted_table(rng, 40, 3, repeat_at=far, copy_of=int(rng.integers(0, 8)), noise=0.0), 2),   # exact
        (_signed_zero_table(rng), 2),             # -0.0 and 0.0 are the same number
        (np.zeros((0, 4)), 2),
        (_rounding_edge_table(rng, alike=True), 2),    # rows that round alike but truncate apart
        (_rounding_edge_table(rng, alike=False), 2),   # rows that truncate alike but round apart
    ]


def _rounding_edge_table(rng, alike):
    """A table whose first repeat depends on rounding to the nearest: with ``alike``, rows ``copy_of`` and
    ``repeat_at`` differ by 0.8 of a step in one column, on either side of a grid value (they round to it,
    but truncation or floor puts them a step apart); otherwise one column of two rows lies at 0.1 and 0.9 of
    the same step (truncation makes them equal, rounding does not)."""
    decimals = 2
    step = 10.0 ** -decimals
    repeat_at, copy_of = int(rng.integers(10, 30)), int(rng.integers(0, 8))
    table = _planted_table(rng, 30, 3, repeat_at=repeat_at, copy_of=copy_of, noise=0.0, decimals=decimals)
    column = int(rng.integers(0, 3))
    grid = float(rng.choice([-0.62, -0.37, 0.21, 0.48, 0.75]))
    if alike:
        table[copy_of, column], table[repeat_at, column] = grid - 0.4 * step, grid + 0.4 * step
        others = [r for r in range(30) if r not in (copy_of, repeat_at)]
        table[others, column] = np.where(np.isclose(np.round(table[others, column], decimals), grid),
                                         grid + 3 * step, table[others, column])
    else:
        table[copy_of, column], table[repeat_at, column] = grid + 0.1 * step, grid + 0.9 * step
        table[repeat_at, (column + 1) % 3] = table[copy_of, (column + 1) % 3]
    return table


def _signed_zero_table(rng):
    """A repeat whose rounded rows are equal but hold -0.0 in one and 0.0 in the other (as in the
    sinusoidal encoding, where sinusoidal_encoding(20000, 4) first repeats at 624 with 1 decimal, and
    at 635 if -0.0 and 0.0 were different)."""
    table = _planted_table(rng, 30, 3, repeat_at=int(rng.integers(15, 30)), copy_of=int(rng.integers(0, 5)))
    later = first_repeat(table, 2)
    earlier = next(p for p in range(later) if np.array_equal(table[p].round(2), table[later].round(2)))
    column = int(rng.integers(0, 3))
    table[earlier, column], table[later, column] = -0.001, 0.002    # round to -0.0 and 0.0
    return table


def _neighbour_repeat(table, decimals):
    rounded = np.round(table, decimals)
    return next((p for p in range(1, len(rounded)) if np.array_equal(rounded[p], rounded[p - 1])), None)


def _bytes_repeat(table, decimals):
    seen = set()
    for position, row in enumerate(np.round(table, decimals)):
        if row.tobytes() in seen:
            return position
        seen.add(row.tobytes())
    return None


NEIGHBOURS = ("you compared each row only with the row just before it; a position can repeat one seen long "
              "before: compare each rounded row with every earlier one (a set of rounded rows does this)")

REPEAT_MISTAKES = [
    Mistake(NEIGHBOURS, _neighbour_repeat),
    Mistake(NEIGHBOURS, lambda table, dec: _neighbour_repeat(table, 12)),
    Mistake("the rows are compared as bytes (row.tobytes()) or as text, where -0.0 and 0.0 differ; np.round "
            "gives -0.0 for small negative numbers, and it is the same number as 0.0: compare the values, "
            "e.g. tuple(row.tolist())", _bytes_repeat),
    Mistake("you returned the earlier position of the pair; return the first position whose rounded row "
            "equals an earlier one (the later of the two)",
            lambda table, dec: _earlier_of_first_repeat(table, dec)),
    Mistake("the rows were cut (int(), np.trunc or np.floor), not rounded to the nearest: 0.116 and 0.124 both "
            "round to 0.12 but cut to 0.11 and 0.12; use np.round(row, decimals)",
            lambda table, dec: first_repeat(np.trunc(table * 10.0 ** dec) / 10.0 ** dec, 12)),
    Mistake("the rows were cut (int(), np.trunc or np.floor), not rounded to the nearest: 0.116 and 0.124 both "
            "round to 0.12 but cut to 0.11 and 0.12; use np.round(row, decimals)",
            lambda table, dec: first_repeat(np.floor(table * 10.0 ** dec) / 10.0 ** dec, 12)),
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
    if array_of(got) is not None and array_of(got).size == 1:
        got = array_of(got).item()
    if isinstance(got, bool) or not isinstance(got, int):
        return f"expected a position (an int), got {kind_of(got)}"
    return None if got == expected else f"expected position {expected}, got {got}"


def _describe_table_args(args):
    table, decimals = args
    return f"<table of shape {table.shape}>, decimals={decimals}"


# ---------------------------------------------------------------------------------------------------

# ---------------------------------------------------------------------------------------------------
# q6: which criterion the normalised index breaks (one choice)

NORMALISED_OPTIONS = {
    "a": "within one sentence the numbers 0, 1/(L-1), ..., 1 are all different, so the normalised index is "
         "unique; it fails elsewhere",
    "b": "one step is worth 1/(L-1), a different amount in every sentence length, and position 3 gets another "
         "number in a longer sentence: the same offset does not mean the same thing everywhere",
    "c": "pos / (L - 1) never leaves [0, 1], however long the sentence: it is bounded (the raw index pos is "
         "the one that grows without limit)",
    "d": "the formula has no randomness: the same position in a sentence of the same length always gets the "
         "same number; what changes it is the sentence length, which is a different criterion",
}

# ---------------------------------------------------------------------------------------------------
# q7: the squared norm of a row (d_model = 64, position 1000)

Q7_D_MODEL, Q7_POSITION = 64, 1000


def row_squared_norm():
    return float((sinusoidal_encoding(Q7_POSITION + 1, Q7_D_MODEL)[Q7_POSITION] ** 2).sum())


Q7_MISTAKES = [
    (lambda: float(Q7_D_MODEL),
     "each column is at most 1 in size, but a column holds sin or cos, not both: each of the d_model / 2 pairs "
     "adds sin^2 + cos^2 = 1, so the squared norm is d_model / 2"),
    (lambda: float(np.sqrt(Q7_D_MODEL / 2)),
     "that is the norm itself, sqrt(d_model / 2); the question asks for its square"),
    (lambda: float(np.sqrt(Q7_D_MODEL)),
     "each of the d_model / 2 pairs adds sin^2 + cos^2 = 1 to the squared norm: d_model / 2, not sqrt(d_model)"),
    (lambda: 1.0, "sin^2 + cos^2 = 1 holds for each pair, and the row has d_model / 2 pairs: they add up"),
    (lambda: float(Q7_POSITION),
     "the entries are sines and cosines, at most 1 in size, at every position: the norm does not grow with pos"),
]

# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch01", "From binary counters to sinusoids", [
    _encoding_question(FunctionQuestion, qid="q1", title="The sinusoidal encoding, vectorised",
                       name="sinusoidal_encoding", points=3, mistakes=ENCODING_MISTAKES,
                       timing_probes=lambda seed: TIMING_PROBES, slow_seconds=0.05),
    FunctionQuestion(qid="q2", title="Wavelength of a pair", name="wavelength", points=2,
                     probes=lambda seed: _with_random_sizes(
                         WAVELENGTH_PROBES, seed, lambda rng: (int(rng.integers(0, 32)), 64, float(rng.integers(100, 20000)))),
                     reference=wavelength,
                     mistakes=WAVELENGTH_MISTAKES, compare=lambda got, expected, args: compare_number(got, expected),
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
    _encoding_question(FindTheBugQuestion, qid="q5", title="Find the bug", name="fixed_encoding", points=1,
                       bug=handed_out_encoding, mistakes=REPAIR_MISTAKES),
    ChoiceQuestion(qid="q6", title="What the normalised index breaks", name="normalised_index_breaks",
                   points=1, answer="b", options=NORMALISED_OPTIONS, single=True),
    ValueQuestion(qid="q7", title="How long is a row?", name="row_squared_norm", points=1,
                  expected=row_squared_norm, mistakes=Q7_MISTAKES),
])
