"""Checks of exercise set ch10: position beyond one dimension.

The students write NumPy. Every answer is compared with the course's library (``posenc.lib.multidim``) on
inputs drawn from the grader's seed, and the classic mistakes have variants: the axes swapped, the grid read
column by column, the frequencies of the whole width where half the width belongs, the raster index where two
coordinates belong, M-RoPE's next segment counted in tokens instead of ids, the interpolation formula of
``align_corners=True``.
"""

from __future__ import annotations

import numpy as np
import torch

from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FunctionQuestion, Mistake, ValueQuestion, describe_mismatch,
)
from posenc.lib.encoding import encoding_at
from posenc.lib.multidim import (
    apply_grid_rotary, axial_frequencies, grid_coordinates, interpolated_coordinate, mrope_position_ids,
    sinusoidal_grid_table,
)

BASE = 10000.0
AXIAL_BASE = 100.0

# ---------------------------------------------------------------------------------------------------
# q1: grid_table(height, width, d_model, base)


def grid_table(height, width, d_model, base=BASE):
    return sinusoidal_grid_table(height, width, d_model, base)


def _table_from(x, y, d_model, base, half_width=True, layout="interleaved", first="sin"):
    """[PE(x) ; PE(y)] with optional mistakes: frequencies of the whole width, halves layout, cos first."""
    d_half = d_model // 2
    def encode(positions):
        if half_width:
            block = encoding_at(positions, d_half, base)
        else:                                           # base^(-2k/d_model) where base^(-2k/(d_model/2)) belongs
            block = encoding_at(positions, d_model, base)[:, :d_half]
        if first == "cos":
            block = block.reshape(-1, d_half // 2, 2)[:, :, ::-1].reshape(-1, d_half)
        if layout == "half":
            block = np.concatenate([block[:, 0::2], block[:, 1::2]], axis=1)
        return block
    return np.concatenate([encode(x), encode(y)], axis=1)


def _table_variant(order="rows", axes="xy", shift=0, fixed_base=False, **options):
    def variant(height, width, d_model, base=BASE):
        base = BASE if fixed_base else base
        if order == "rows":
            coords = grid_coordinates(height, width).numpy()
        else:                                           # column after column
            rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="xy")
            coords = np.stack([cols.reshape(-1), rows.reshape(-1)], axis=1)
        coords = coords + shift
        x, y = (coords[:, 0], coords[:, 1]) if axes == "xy" else (coords[:, 1], coords[:, 0])
        return _table_from(x, y, d_model, base, **options)
    return variant


def _raster_table(height, width, d_model, base=BASE):
    return encoding_at(np.arange(height * width), d_model, base)


def _table_probes(seed):
    rng = np.random.default_rng([seed, 10001])
    fixed = [(2, 3, 8, BASE), (3, 2, 8, 100.0), (4, 4, 16, BASE)]
    drawn = [(int(rng.integers(2, 7)), int(rng.integers(2, 7)), int(4 * rng.integers(2, 9)),
              float(rng.choice([BASE, 100.0, 1000.0]))) for _ in range(3)]
    return fixed + drawn + [(int(rng.integers(5, 12)), int(rng.integers(5, 12)), 32, float(rng.choice([50.0, 500.0])))]


AXES_SWAPPED_TABLE = ("the halves are swapped: the first d_model/2 columns encode the column x, the last d_model/2 "
                      "the row y")
COLUMN_ORDER = ("the rows are in column order: raster order reads the grid row after row, so row t of the table "
                "is the cell x = t mod width, y = t // width")
WHOLE_WIDTH = ("each half is an encoding of width d_model/2, so its frequencies are base^(-2k/(d_model/2)); you "
               "used the frequencies of the whole width, base^(-2k/d_model)")
RASTER_TABLE = ("that is chapter 1's 1-D table of the raster index t = x + width*y; the 2-D table encodes x in "
                "one half and y in the other")
HALVES_LAYOUT_TABLE = ("inside each half the course's layout is interleaved: sine in column 2k, cosine in 2k+1 "
                       "(you wrote all the sines first, then the cosines)")
COS_FIRST = "sine and cosine are swapped: column 2k holds the sine of pair k, column 2k+1 its cosine"
FIXED_BASE = "the base argument is ignored: you always use 10000"
FROM_ONE = "the coordinates start at 1; the first row and column are x = 0 and y = 0"

TABLE_MISTAKES = [
    Mistake(AXES_SWAPPED_TABLE, _table_variant(axes="yx")),
    Mistake(COLUMN_ORDER, _table_variant(order="columns")),
    Mistake(WHOLE_WIDTH, _table_variant(half_width=False)),
    Mistake(RASTER_TABLE, _raster_table),
    Mistake(HALVES_LAYOUT_TABLE, _table_variant(layout="half")),
    Mistake(COS_FIRST, _table_variant(first="cos")),
    Mistake(FIXED_BASE, _table_variant(fixed_base=True)),
    Mistake(FROM_ONE, _table_variant(shift=1)),
]

# ---------------------------------------------------------------------------------------------------
# q2: axial_rope(x, coords, base)


def axial_rope(x, coords, base=AXIAL_BASE):
    turned = apply_grid_rotary(torch.from_numpy(np.asarray(x, dtype=np.float64)), torch.as_tensor(coords),
                               axial_frequencies(np.asarray(x).shape[-1], base))
    return turned.numpy()


def _axial_variant(frequencies="half width", axes="xy", angle="axis", sense=1, layout="interleaved",
                   fixed_base=False):
    def variant(x, coords, base=AXIAL_BASE):
        base = AXIAL_BASE if fixed_base else base
        x, coords = np.asarray(x, dtype=np.float64), np.asarray(coords, dtype=np.float64)
        d = x.shape[-1]
        quarter = np.arange(d // 4)
        omega = {"half width": base ** (-2 * quarter / (d // 2)),
                 "whole width": base ** (-2 * quarter / d)}.get(frequencies)
        first, second = (coords[:, 0], coords[:, 1]) if axes == "xy" else (coords[:, 1], coords[:, 0])
        if frequencies == "one d":                     # the 1-D frequencies of the whole head, numbered on
            all_omega = base ** (-2 * np.arange(d // 2) / d)
            angles = np.concatenate([first[:, None] * all_omega[:d // 4], second[:, None] * all_omega[d // 4:]], 1)
        elif angle == "sum":
            angles = (first + second)[:, None] * np.concatenate([omega, omega])
        elif angle == "x only":
            angles = first[:, None] * np.concatenate([omega, omega])
        else:
            angles = np.concatenate([first[:, None] * omega, second[:, None] * omega], axis=1)
        c, s = np.cos(angles), sense * np.sin(angles)
        a_idx, b_idx = ((np.arange(0, d, 2), np.arange(1, d, 2)) if layout == "interleaved"
                        else (np.arange(d // 2), np.arange(d // 2, d)))
        out = np.empty_like(x)
        out[:, a_idx] = x[:, a_idx] * c - x[:, b_idx] * s
        out[:, b_idx] = x[:, a_idx] * s + x[:, b_idx] * c
        return out
    return variant


def _axial_probes(seed):
    rng = np.random.default_rng([seed, 10002])

    def draw(n, d, base, high=12):
        return np.round(rng.normal(size=(n, d)), 3), rng.integers(0, high, size=(n, 2)), base

    fixed = [(np.eye(4), np.array([[1, 0], [0, 1], [2, 3], [1, 1]]), AXIAL_BASE)]
    drawn = [draw(6, 8, AXIAL_BASE), draw(5, 16, float(rng.choice([10.0, 1000.0]))), draw(4, 4, AXIAL_BASE, 30),
             draw(int(rng.integers(5, 20)), int(4 * rng.integers(2, 9)), float(rng.choice([AXIAL_BASE, 10000.0])))]
    return fixed + drawn


AXES_SWAPPED_ROPE = "the axes are swapped: the first d/4 pairs turn with the column x, the others with the row y"
WHOLE_WIDTH_ROPE = ("each axis has the frequencies of a head of width d/2, base^(-2k/(d/2)) for k < d/4; you used "
                    "base^(-2k/d), the frequencies of the whole width")
ONE_D_ROPE = ("you numbered the pairs on through both halves, base^(-2i/d) for i < d/2; each half restarts at "
              "base^0 with the frequencies of a head of width d/2, base^(-2k/(d/2))")
SUM_ROPE = ("every pair turned by (x + y) times its frequency: axial pairs turn with one coordinate each, the first "
            "d/4 with x and the others with y")
X_ONLY_ROPE = "the row y is ignored: the first d/4 pairs turn with x, the other d/4 pairs with y"
CLOCKWISE = ("the turn goes the wrong way (clockwise); rotary turns pair (a, b) to (a cos - b sin, a sin + b cos), "
             "as in chapter 6")
HALF_LAYOUT_ROPE = "this question pairs coordinates (2i, 2i + 1) (interleaved), not (i, i + d/2)"
FIXED_AXIAL_BASE = "the base argument is ignored: you always use 100"

AXIAL_MISTAKES = [
    Mistake(AXES_SWAPPED_ROPE, _axial_variant(axes="yx")),
    Mistake(WHOLE_WIDTH_ROPE, _axial_variant(frequencies="whole width")),
    Mistake(ONE_D_ROPE, _axial_variant(frequencies="one d")),
    Mistake(SUM_ROPE, _axial_variant(angle="sum")),
    Mistake(X_ONLY_ROPE, _axial_variant(angle="x only")),
    Mistake(CLOCKWISE, _axial_variant(sense=-1)),
    Mistake(HALF_LAYOUT_ROPE, _axial_variant(layout="half")),
    Mistake(FIXED_AXIAL_BASE, _axial_variant(fixed_base=True)),
]


def _describe_axial_args(args):
    x, coords, base = args
    return f"<x {x.shape}>, <coords {coords.shape}, from {coords.min()} to {coords.max()}>, base={base:g}"


# ---------------------------------------------------------------------------------------------------
# q3: mrope_ids(n_before, height, width, n_after)


def mrope_ids(n_before, height, width, n_after):
    segments = ([("text", n_before)] if n_before else []) + [("image", (height, width))] + (
        [("text", n_after)] if n_after else [])
    return mrope_position_ids(segments).numpy()


def _mrope_variant(after="max", image_start="start", time="flat", swapped=False):
    def variant(n_before, height, width, n_after):
        start = n_before
        offset = start if image_start == "start" else 0
        rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
        rows, cols = (cols, rows) if swapped else (rows, cols)
        t = np.full(height * width, offset) if time == "flat" else offset + np.arange(height * width)
        image = np.stack([t, offset + rows.reshape(-1), offset + cols.reshape(-1)])
        resume = {"max": int(image.max()) + 1, "tokens": start + height * width, "no plus one": int(image.max())}[after]
        text_before = np.tile(np.arange(n_before), (3, 1))
        text_after = np.tile(resume + np.arange(n_after), (3, 1))
        return np.concatenate([text_before, image, text_after], axis=1)
    return variant


def _mrope_probes(seed):
    rng = np.random.default_rng([seed, 10003])
    fixed = [(2, 2, 3, 2), (0, 3, 4, 1), (1, 1, 1, 1), (3, 4, 2, 0)]
    drawn = [(int(rng.integers(0, 6)), int(rng.integers(1, 7)), int(rng.integers(1, 7)), int(rng.integers(0, 5)))
             for _ in range(3)]
    return fixed + drawn + [(int(rng.integers(1, 6)), int(rng.integers(2, 5)), int(rng.integers(5, 9)), 2)]


COUNT_TOKENS = ("the text after the image resumes one past the largest id so far (start + max(height, width)), "
                "not after counting the image's height * width tokens")
NO_PLUS_ONE = "the text after the image starts one past the largest id, not at the largest id itself"
NOT_OFFSET = ("the image's ids start at 0; they start at the first free id, the number of text tokens before it, "
              "on all three axes")
TIME_COUNTS = "all tokens of one image share one time id (the first free id); only the height and width ids vary"
HW_SWAPPED = ("height and width are swapped: the height id is start + the row y (the same along a row), the width id "
              "start + the column x")

MROPE_MISTAKES = [
    Mistake(COUNT_TOKENS, _mrope_variant(after="tokens")),
    Mistake(NO_PLUS_ONE, _mrope_variant(after="no plus one")),
    Mistake(NOT_OFFSET, _mrope_variant(image_start="zero")),
    Mistake(TIME_COUNTS, _mrope_variant(time="counts")),
    Mistake(HW_SWAPPED, _mrope_variant(swapped=True)),
]


def _compare_ids(got, expected, args):
    problem = describe_mismatch(got, expected, what="position ids")
    if problem is None and not np.issubdtype(np.asarray(got).dtype, np.integer):
        return "the position ids are right but not integers; return an integer array (e.g. dtype int64)"
    return problem


# ---------------------------------------------------------------------------------------------------
# q4: where a resized table is read

Q4_OLD, Q4_NEW, Q4_COLUMN = 14, 24, 17


def q4_answer() -> float:
    return float(interpolated_coordinate(Q4_COLUMN, Q4_OLD, Q4_NEW))


Q4_MISTAKES = [
    (lambda: Q4_COLUMN * (Q4_OLD - 1) / (Q4_NEW - 1),
     "that is align_corners=True, the corner-aligned mapping of the original ViT code (scipy's zoom), which "
     "pins the first and last cells to each other; this question asks for timm's align_corners=False: "
     "x = (x' + 1/2) W / W' - 1/2"),
    (lambda: Q4_COLUMN * Q4_OLD / Q4_NEW,
     "that scales the index itself; with align_corners=False the cells' centres are scaled: x = (x' + 1/2) W / W' - 1/2"),
    (lambda: (Q4_COLUMN + 0.5) * Q4_OLD / Q4_NEW, "you scaled the centre but did not subtract the half step again"),
    (lambda: (Q4_COLUMN + 0.5) * Q4_NEW / Q4_OLD - 0.5,
     "the ratio is upside down: the new grid is finer, so its cells read the old table at smaller coordinates"),
]

# ---------------------------------------------------------------------------------------------------
# q5: which encodings keep "one row up" on another grid

Q5_STATEMENTS = {
    "a": (True, "axial rotary's logit depends on (dx, dy) only, and the patch above is at (0, -1) on every grid"),
    "b": (False, "raster order turns 'one row up' into the 1-D offset -W: -14 on the old grid, -24 on the new one"),
    "c": (True, "an image's height and width ids put the patch above at the offset (0, -1, 0) whatever the image's "
                "size, and M-RoPE's logit depends on that offset only"),
    "d": (False, "the resized table encodes each patch's place as a fraction of the image: a step on the 24-wide "
                 "grid is 14/24 of a step of the old table, and the added table enters the logit through absolute "
                 "positions too"),
    "e": (True, "mixed frequencies are learned, but each angle is still linear in (x, y), so the logit depends on the "
                "2-D offset only"),
}

# Where each statement is decided: a section of chapter 10 to reread, never the statement's crux (which would
# read off its verdict; CONTRIBUTING, "Choices").
Q5_IDEAS = {
    "a": 'chapter 10, "Rotary on a grid: the frequency matrix"',
    "b": 'chapter 10, "Patches in raster order"',
    "c": 'chapter 10, "Text, images and video in one sequence: M-RoPE"',
    "d": 'chapter 10, "ViT\'s learned table, stretched to a new grid"',
    "e": 'chapter 10, "What mixed frequencies add"',
}

# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch10", "Position beyond one dimension", [
    FunctionQuestion(qid="q1", title="The 2-D sinusoidal table", name="grid_table", points=2,
                     probes=_table_probes, reference=grid_table, mistakes=TABLE_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="table"),
                     describe_args=lambda args: f"height={args[0]}, width={args[1]}, d_model={args[2]}, base={args[3]:g}",
                     inputs_unchanged=True),
    FunctionQuestion(qid="q2", title="Axial 2-D rotary", name="axial_rope", points=2,
                     probes=_axial_probes, reference=axial_rope, mistakes=AXIAL_MISTAKES,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="turned array"),
                     describe_args=_describe_axial_args, inputs_unchanged=True),
    FunctionQuestion(qid="q3", title="M-RoPE's position ids", name="mrope_ids", points=2,
                     probes=_mrope_probes, reference=mrope_ids, mistakes=MROPE_MISTAKES, compare=_compare_ids,
                     describe_args=lambda args: "n_before={}, height={}, width={}, n_after={}".format(*args),
                     inputs_unchanged=True),
    ValueQuestion(qid="q4", title="Where a resized table is read", name="old_x", points=1,
                  expected=q4_answer, mistakes=Q4_MISTAKES),
    ChoiceQuestion.from_statements(Q5_STATEMENTS, ("the same logit", "not the same logit"), qid="q5",
                                   title="One row up on another grid", name="keep_above", points=1, ideas=Q5_IDEAS),
])
