"""Grader tests of exercise set ch10: every realistic wrong answer scores zero with its own diagnosis, on every
grader seed (the three-way basics, full marks and zero, are in test_checks_all)."""

import numpy as np

from posenc.exercises import load_set
from posenc.exercises.framework import PASSED
from tests.conftest import with_submission

SET_ID = "ch10"
EXERCISES = load_set(SET_ID)

# ---------------------------------------------------------------------------------------------------
# q1: grid_table(height, width, d_model, base)

TABLE = """
import numpy as np
def grid_table(height, width, d_model, base=10000.0):
    d_half = d_model // 2
    omega = base ** (-2 * np.arange(d_half // 2) / {width_of_half})
    y, x = {coordinates}

    def encode(positions):
        block = np.empty((len(positions), d_half))
        block[:, {sin_columns}] = np.sin(positions[:, None] * omega)
        block[:, {cos_columns}] = np.cos(positions[:, None] * omega)
        return block

    return np.concatenate([{halves}], axis=1)
"""
RIGHT_TABLE = dict(width_of_half="d_half", coordinates="np.divmod(np.arange(height * width), width)",
                   sin_columns="0::2", cos_columns="1::2", halves="encode(x), encode(y)")


def table_code(**changes):
    return TABLE.format(**{**RIGHT_TABLE, **changes})


Q1_WRONG = {
    "y half first": (table_code(halves="encode(y), encode(x)"), "halves are swapped"),
    "column after column": (table_code(coordinates="np.divmod(np.arange(height * width), height)[::-1]"),
                            "column order"),
    "frequencies of the whole width": (table_code(width_of_half="d_model"), "frequencies of the whole width"),
    "the 1-D table of the raster index": ("""
import numpy as np
def grid_table(height, width, d_model, base=10000.0):
    t = np.arange(height * width)[:, None]
    omega = base ** (-2 * np.arange(d_model // 2) / d_model)
    table = np.empty((height * width, d_model))
    table[:, 0::2], table[:, 1::2] = np.sin(t * omega), np.cos(t * omega)
    return table
""", "1-D table of the raster index"),
    "sines then cosines in each half": (table_code(sin_columns=":d_half // 2", cos_columns="d_half // 2:"),
                                        "you wrote all the sines first"),
    "cosine first": (table_code(sin_columns="1::2", cos_columns="0::2"), "sine and cosine are swapped"),
    "base ignored": (table_code().replace("omega = base **", "omega = 10000.0 **"), "base argument is ignored"),
    "coordinates from 1": (table_code(coordinates="(c + 1 for c in np.divmod(np.arange(height * width), width))"),
                           "coordinates start at 1"),
}

# ---------------------------------------------------------------------------------------------------
# q2: axial_rope(x, coords, base)

AXIAL = """
import numpy as np
def axial_rope(x, coords, base=100.0):
    x = np.asarray(x, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    d = x.shape[-1]
    omega = base ** (-2 * np.arange(d // 4) / {width})
    angle = {angle}
    a, b = x[:, {first}], x[:, {second}]
    out = np.empty_like(x)
    out[:, {first}] = a * np.cos(angle) - b * np.sin(angle)
    out[:, {second}] = a * np.sin(angle) {plus} b * np.cos(angle)
    return out
"""
RIGHT_AXIAL = dict(width="(d // 2)", angle="np.concatenate([coords[:, :1] * omega, coords[:, 1:] * omega], axis=1)",
                   first="0::2", second="1::2", plus="+")


def axial_code(**changes):
    code = AXIAL.format(**{**RIGHT_AXIAL, **changes})
    return code


Q2_WRONG = {
    "y first": (axial_code(angle="np.concatenate([coords[:, 1:] * omega, coords[:, :1] * omega], axis=1)"),
                "axes are swapped"),
    "frequencies of the whole head": (axial_code(width="d"), "frequencies of the whole width"),
    "pairs numbered on through both halves": (axial_code(
        angle="np.concatenate([coords[:, :1] * base ** (-2 * np.arange(d // 4) / d), "
              "coords[:, 1:] * base ** (-2 * np.arange(d // 4, d // 2) / d)], axis=1)"), "numbered the pairs on"),
    "x + y for every pair": (axial_code(angle="(coords[:, :1] + coords[:, 1:]) * np.concatenate([omega, omega])"),
                             "(x + y)"),
    "y ignored": (axial_code(angle="coords[:, :1] * np.concatenate([omega, omega])"), "the row y is ignored"),
    "clockwise": (axial_code(plus="-").replace("a * np.cos(angle) - b", "a * np.cos(angle) + b").replace(
        "a * np.sin(angle) - b", "-a * np.sin(angle) + b"), "wrong way"),
    "rotate-half pairs": (axial_code(first=":d // 2", second="d // 2:"), "not (i, i + d/2)"),
    "base ignored": (axial_code().replace("omega = base **", "omega = 100.0 **"), "always use 100"),
    "x turned in place": ("""
import numpy as np
def axial_rope(x, coords, base=100.0):
    d = x.shape[-1]
    omega = base ** (-2 * np.arange(d // 4) / (d // 2))
    angle = np.concatenate([coords[:, :1] * omega, coords[:, 1:] * omega], axis=1)
    a, b = x[:, 0::2].copy(), x[:, 1::2].copy()
    x[:, 0::2] = a * np.cos(angle) - b * np.sin(angle)
    x[:, 1::2] = a * np.sin(angle) + b * np.cos(angle)
    return x
""", "in place"),
}

# ---------------------------------------------------------------------------------------------------
# q3: mrope_ids(n_before, height, width, n_after)

MROPE = """
import numpy as np
def mrope_ids(n_before, height, width, n_after):
    start = n_before
    y, x = np.divmod(np.arange(height * width), width)
    image = np.stack([{time}, start + {h}, start + {w}])
    resume = {resume}
    before = np.tile(np.arange(n_before), (3, 1))
    after = np.tile(resume + np.arange(n_after), (3, 1))
    return np.concatenate([before, image, after], axis=1).astype(np.int64)
"""
RIGHT_MROPE = dict(time="np.full(height * width, start)", h="y", w="x", resume="image.max() + 1")


def mrope_code(**changes):
    return MROPE.format(**{**RIGHT_MROPE, **changes})


Q3_WRONG = {
    "resume after counting tokens": (mrope_code(resume="start + height * width"), "not after counting"),
    "resume at the largest id": (mrope_code(resume="image.max()"), "not at the largest id itself"),
    "image ids from 0": (mrope_code(time="np.zeros(height * width, dtype=int)", h="y - start", w="x - start"),
                         "the image's ids start at 0"),
    "time id counts the tokens": (mrope_code(time="start + np.arange(height * width)"), "share one time id"),
    "height and width swapped": (mrope_code(h="x", w="y"), "height and width are swapped"),
}

# ---------------------------------------------------------------------------------------------------
# q4, q5

Q4_WRONG = {
    "align_corners=True": ("old_x = 17 * 13 / 23", "align_corners=True"),
    "the index scaled": ("old_x = 17 * 14 / 24", "scales the index itself"),
    "the half step not subtracted": ("old_x = 17.5 * 14 / 24", "did not subtract the half step"),
    "the ratio upside down": ("old_x = 17.5 * 24 / 14 - 0.5", "upside down"),
    "a plain guess": ("old_x = 10", "is not right"),
}

Q5_WRONG = {
    "raster included": ('keep_above = "abce"', "not yet: at least one letter is wrong or missing"),
    "the resized table included": ('keep_above = "acde"', "(d) chapter 10, \"ViT's learned table, stretched to a new grid\""),
    "M-RoPE left out": ('keep_above = "ae"', "Where to look again: (a) chapter 10"),
    "mixed left out": ('keep_above = "ac"', "does not say which"),
    "everything": ('keep_above = "abcde"', "not yet"),
    "an unknown letter": ('keep_above = "acf"', "no option f"),
    "not a string": ("keep_above = 3", "string of letters"),
}

WRONG = {"q1": Q1_WRONG, "q2": Q2_WRONG, "q3": Q3_WRONG, "q4": Q4_WRONG, "q5": Q5_WRONG}

# Other right answers, each passing on every seed (tests/test_checks_all.py).
RIGHT = {
    "q1": {"a double loop": """
import math
import numpy as np
def grid_table(height, width, d_model, base=10000.0):
    table = np.zeros((height * width, d_model))
    half = d_model // 2
    for t in range(height * width):
        x, y = t % width, t // width
        for j in range(half):
            omega = base ** (-2 * (j // 2) / half)
            f = math.sin if j % 2 == 0 else math.cos
            table[t, j], table[t, half + j] = f(omega * x), f(omega * y)
    return table
""", "float32": table_code().replace("block = np.empty((len(positions), d_half))",
                                     "block = np.empty((len(positions), d_half), dtype=np.float32)")},
    "q2": {"float32": axial_code().replace("dtype=np.float64)\n    coords", "dtype=np.float32)\n    coords"),
           "torch": """
import numpy as np
import torch
def axial_rope(x, coords, base=100.0):
    x, coords = torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(coords, dtype=torch.float64)
    d = x.shape[-1]
    omega = base ** (-2 * torch.arange(d // 4, dtype=torch.float64) / (d // 2))
    angle = torch.cat([coords[:, :1] * omega, coords[:, 1:] * omega], dim=1)
    pairs = torch.view_as_complex(x.reshape(len(x), -1, 2).contiguous())
    return torch.view_as_real(pairs * torch.polar(torch.ones_like(angle), angle)).flatten(1)
"""},
    "q3": {"int32 ids": mrope_code().replace("np.int64", "np.int32")},
    "q4": {"as a fraction": "old_x = 233 / 24", "typed as a string": 'old_x = "9.708333333333334"'},
    "q5": {"with spaces": 'keep_above = "a, c and e"', "a list": 'keep_above = ["e", "a", "c"]'},
}


def test_every_question_has_wrong_answers():
    assert set(WRONG) == {q.qid for q in EXERCISES.questions}


def test_float_ids_with_the_right_values_are_named(solution):
    result = EXERCISES.question("q3").grade(with_submission(solution, mrope_code().replace("np.int64", "float")))
    assert not result.passed and "not integers" in result.message, result.line()


def test_a_torch_free_solution_passes_and_the_check_needs_no_grid_of_the_inline_seed(solution):
    for qid in ("q1", "q2", "q3"):
        assert EXERCISES.question(qid).grade(solution, 5).status == PASSED


def test_q4_answer_is_the_chapters_formula():
    from posenc.exercises.checks.ch10 import q4_answer
    assert np.isclose(q4_answer(), (17 + 0.5) * 14 / 24 - 0.5)
