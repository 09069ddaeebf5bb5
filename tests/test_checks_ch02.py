"""Realistic answers to exercise set ch02, graded on every seed by tests/test_checks_all.py
(WRONG = {qid: {name: (code, words its message must contain)}}, RIGHT = {qid: {name: code}}), and the
checks' robustness."""

from posenc.exercises import load_set
from posenc.exercises.framework import PASSED
from tests.conftest import ROOT, with_submission

SET_ID = "ch02"
EXERCISES = load_set(SET_ID)


def grade(solution, qid, code):
    return EXERCISES.question(qid).grade(with_submission(solution, code))


# ---------------------------------------------------------------------------------------------------
# q1: rotation(i, k, d_model, base) -> M(k, i). Realistic wrong submissions and the words of their diagnosis.

ROTATION = """
import math
import numpy as np
def rotation(i, k, d_model, base=10000.0):
{body}
"""


def rotation_code(body):
    return ROTATION.format(body=body)


Q1_WRONG = {
    "textbook rotation (transposed)": (rotation_code("""
    theta = k / base ** (2 * i / d_model)
    return np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])"""),
        "transposed rotation"),
    "cos(a+b) with a plus": (rotation_code("""
    w = base ** (-2 * i / d_model)
    c, s = np.cos(w * k), np.sin(w * k)
    return np.array([[c, s], [s, c]])"""), "sign of the sine term in the second row"),
    "sin(a+b) with a minus": (rotation_code("""
    w = base ** (-2 * i / d_model)
    c, s = np.cos(w * k), np.sin(w * k)
    return np.array([[c, -s], [-s, c]])"""), "sign of the sine term in the first row"),
    "radians converted as if degrees": (rotation_code("""
    angle = np.radians(k * base ** (-2 * i / d_model))
    return np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])"""),
        "degrees vs radians"),
    "angle turned into degrees": (rotation_code("""
    angle = math.degrees(k / base ** (2 * i / d_model))
    return np.array([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])"""),
        "degrees vs radians"),
    "dimension index 2i in the exponent": (rotation_code("""
    dim = 2 * i
    w = 1 / base ** (2 * dim / d_model)
    return np.array([[np.cos(w * k), np.sin(w * k)], [-np.sin(w * k), np.cos(w * k)]])"""),
        "pair index vs dimension index"),
    "pair index halved": (rotation_code("""
    pair = i // 2
    w = 1 / base ** (2 * pair / d_model)
    return np.array([[np.cos(w * k), np.sin(w * k)], [-np.sin(w * k), np.cos(w * k)]])"""),
        "do not halve it"),
    "i/d in the exponent": (rotation_code("""
    w = base ** (-i / d_model)
    return np.array([[np.cos(w * k), np.sin(w * k)], [-np.sin(w * k), np.cos(w * k)]])"""),
        "i/d instead of 2i/d"),
    "multiplied by the wavelength": (rotation_code("""
    angle = k * base ** (2 * i / d_model)
    return np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])"""),
        "instead of dividing"),
    "base ignored": (rotation_code("""
    w = 10000 ** (-2 * i / d_model)
    return np.array([[np.cos(w * k), np.sin(w * k)], [-np.sin(w * k), np.cos(w * k)]])"""),
        "base argument is ignored"),
    "nested list": (rotation_code("""
    w = base ** (-2 * i / d_model)
    return [[math.cos(w * k), math.sin(w * k)], [-math.sin(w * k), math.cos(w * k)]]"""),
        "not a numpy array"),
}



# ---------------------------------------------------------------------------------------------------
# q2: shift_operator(k, d_model, base) -> T(k). Students often reuse their own `rotation` from q1.

SHIFT = """
import numpy as np
def shift_operator(k, d_model, base=10000.0):
{body}
"""


def shift_code(body):
    return SHIFT.format(body=body)


Q2_WRONG = {
    "textbook blocks (transposed)": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = k / base ** (2 * i / d_model)
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
    return T"""), "transposed rotation"),
    "cos(a+b) with a plus": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = k / base ** (2 * i / d_model)
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), np.sin(a)], [np.sin(a), np.cos(a)]]
    return T"""), "second row"),
    "loop over dimensions passed as the pair index": (shift_code("""
    T = np.zeros((d_model, d_model))
    for j in range(0, d_model, 2):
        T[j:j+2, j:j+2] = rotation(j, k, d_model, base)
    return T"""), "pair index vs dimension index"),
    "overlapping blocks": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        T[i:i+2, i:i+2] = rotation(i, k, d_model, base)
    return T"""), "blocks overlap"),
    "same block everywhere": (shift_code("""
    return np.kron(np.eye(d_model // 2), rotation(0, k, d_model, base))"""), "same frequency"),
    "halves layout": (shift_code("""
    h = d_model // 2
    T = np.zeros((d_model, d_model))
    for i in range(h):
        M = rotation(i, k, d_model, base)
        T[i, i], T[i, i + h], T[i + h, i], T[i + h, i + h] = M[0, 0], M[0, 1], M[1, 0], M[1, 1]
    return T"""), "halves"),
    "base not passed on": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        T[2*i:2*i+2, 2*i:2*i+2] = rotation(i, k, d_model)
    return T"""), "base argument is ignored"),
    "degrees": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = np.deg2rad(k * base ** (-2 * i / d_model))
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]
    return T"""), "degrees vs radians"),
    "transposed output": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        T[2*i:2*i+2, 2*i:2*i+2] = rotation(i, k, d_model, base)
    return T.T"""), "transposed rotation"),
    "sin(a+b) with a minus": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = k / base ** (2 * i / d_model)
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), -np.sin(a)], [-np.sin(a), np.cos(a)]]
    return T"""), "first row"),
    "angle in degrees": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = np.degrees(k / base ** (2 * i / d_model))
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]
    return T"""), "converted the angle to degrees"),
    "i/d": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = k / base ** (i / d_model)
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]
    return T"""), "i/d instead of 2i/d"),
    "multiplied by the wavelength": (shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        a = k * base ** (2 * i / d_model)
        T[2*i:2*i+2, 2*i:2*i+2] = [[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]
    return T"""), "instead of dividing"),
}



# ---------------------------------------------------------------------------------------------------
# q3: shift_rows(table, k, base): T(k) applied to every row.

ROWS = """
import numpy as np
def shift_rows(table, k, base=10000.0):
{body}
"""


def rows_code(body):
    return ROWS.format(body=body)


Q3_WRONG = {
    "table @ T": (rows_code("""
    return table @ shift_operator(k, table.shape[1], base)"""), "table @ T(k).T"),
    "T @ table": (rows_code("""
    return shift_operator(k, table.shape[1], base) @ table"""), "table @ T.T"),
    "recomputed encoding": (rows_code("""
    n, d = table.shape
    t = np.arange(n)[:, None] + k
    w = base ** (-2 * np.arange(d // 2) / d)
    out = np.zeros((n, d))
    out[:, 0::2], out[:, 1::2] = np.sin(t * w), np.cos(t * w)
    return out"""), "recomputed the encoding"),
    "updated in place": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    table[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    table[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return table"""), "changed its input `table` in place"),
    "overwritten, on a copy": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    table = table.astype(np.float64)
    table[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    table[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return table"""), "overwrote"),
    "sign of the sine in the second row": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "second row"),
    "frequencies by dimension": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(0, d, 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "pair index vs dimension index"),
    "sign of the sine in the first row": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] - s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "first row"),
    "radians converted as if degrees": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(np.radians(w * k)), np.sin(np.radians(w * k))
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "already an angle in radians"),
    "angle turned into degrees": (rows_code("""
    d = table.shape[1]
    w = base ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(np.degrees(w * k)), np.sin(np.degrees(w * k))
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "converted the angle to degrees"),
    "i/d": (rows_code("""
    d = table.shape[1]
    w = base ** (-np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "i/d instead of 2i/d"),
    "multiplied by the wavelength": (rows_code("""
    d = table.shape[1]
    w = base ** (2 * np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "instead of dividing"),
    "base ignored": (rows_code("""
    d = table.shape[1]
    w = 10000.0 ** (-2 * np.arange(d // 2) / d)
    c, s = np.cos(w * k), np.sin(w * k)
    out = np.empty(table.shape)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out"""), "base argument is ignored"),
}



def test_q3_in_place_student_cannot_change_the_probes(solution):
    code, _ = Q3_WRONG["updated in place"]
    grade(solution, "q3", code)
    assert EXERCISES.question("q3").grade(solution).status == PASSED


# ---------------------------------------------------------------------------------------------------
# q4: dot_profile(offsets, d_model, base).

PROFILE = """
import numpy as np
def dot_profile(offsets, d_model, base=10000.0):
{body}
"""


def profile_code(body):
    return PROFILE.format(body=body)


Q4_WRONG = {
    "mean over pairs": (profile_code("""
    w = base ** (-2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.outer(offsets, w)).mean(axis=1)"""), "averaged"),
    "one cosine per column": (profile_code("""
    w = np.repeat(base ** (-2 * np.arange(d_model // 2) / d_model), 2)
    return np.cos(np.outer(offsets, w)).sum(axis=1)"""), "twice too large"),
    "sine instead of cosine": (profile_code("""
    w = base ** (-2 * np.arange(d_model // 2) / d_model)
    return np.sin(np.outer(offsets, w)).sum(axis=1)"""), "sin instead of cos"),
    "dimension index in the exponent": (profile_code("""
    dims = np.arange(0, d_model, 2)
    w = 1 / base ** (2 * dims / d_model)
    return np.cos(np.outer(offsets, w)).sum(axis=1)"""), "pair index vs dimension index"),
    "i/d": (profile_code("""
    w = base ** (-np.arange(d_model // 2) / d_model)
    return np.cos(np.outer(offsets, w)).sum(axis=1)"""), "i/d instead of 2i/d"),
    "degrees": (profile_code("""
    w = base ** (-2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.radians(np.outer(offsets, w))).sum(axis=1)"""), "degrees vs radians"),
    "base ignored": (profile_code("""
    w = 10000.0 ** (-2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.outer(offsets, w)).sum(axis=1)"""), "base argument is ignored"),
    "list": (profile_code("""
    w = base ** (-2 * np.arange(d_model // 2) / d_model)
    return [float(np.cos(w * k).sum()) for k in offsets]"""), "is a list"),
    "multiplied by the wavelength": (profile_code("""
    w = base ** (2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.outer(offsets, w)).sum(axis=1)"""), "instead of dividing"),
}



# ---------------------------------------------------------------------------------------------------
# q5, q6: values computed in the student's cell.

Q5_SETUP = """
import numpy as np
offsets = np.arange(-50, 51)
w = 100.0 ** (-2 * np.arange(8) / 16)
profile = np.cos(np.outer(offsets, w)).sum(axis=1)
"""

Q5_WRONG = {
    "array index": (Q5_SETUP + "first_negative_offset = int(np.argmax((offsets > 0) & (profile < 0)))",
                    "position of the offset in the array"),
    "first in array order": (Q5_SETUP + "first_negative_offset = int(offsets[profile < 0][0])",
                             "read the array from k = -50"),
    "negative side": (Q5_SETUP + "first_negative_offset = int(-offsets[(offsets > 0) & (profile < 0)][0])",
                      "symmetric"),
    "i/d": (Q5_SETUP.replace("-2 * np.arange(8) / 16", "-np.arange(8) / 16")
            + "first_negative_offset = int(offsets[(offsets > 0) & (profile < 0)][0])", "i/d instead of 2i/d"),
    "multiplied by the wavelength": (Q5_SETUP.replace("-2 * np.arange(8) / 16", "2 * np.arange(8) / 16")
                                     + "first_negative_offset = int(offsets[(offsets > 0) & (profile < 0)][0])",
                                     "instead of dividing"),
}



Q6_SETUP = """
import numpy as np
i = np.arange(256)
omega = 10000.0 ** (-2 * i / 512)
"""

Q6_WRONG = {
    "no 2 pi": (Q6_SETUP + "pairs_with_full_turn = int((1 / omega <= 512).sum())", "not 1 / omega_i"),
    "half a turn": (Q6_SETUP + "pairs_with_full_turn = int((omega * 512 >= np.pi).sum())", "half a turn"),
    "degrees": (Q6_SETUP + "pairs_with_full_turn = int((omega * 512 >= 360).sum())", "degrees vs radians"),
    "dimensions": (Q6_SETUP + "pairs_with_full_turn = 2 * int((omega * 512 >= 2 * np.pi).sum())",
                   "counted dimensions"),
    "complement": (Q6_SETUP + "pairs_with_full_turn = int((omega * 512 < 2 * np.pi).sum())", "do NOT"),
    "dimension index": (Q6_SETUP.replace("-2 * i", "-2 * (2 * i)")
                        + "pairs_with_full_turn = int((omega * 512 >= 2 * np.pi).sum())",
                        "pair index vs dimension index"),
    "i/d": (Q6_SETUP.replace("-2 * i / 512", "-i / 512")
            + "pairs_with_full_turn = int((omega * 512 >= 2 * np.pi).sum())", "i/d instead of 2i/d"),
}



def test_raising_student_code_is_reported_not_raised(solution):
    code = "def dot_profile(offsets, d_model, base=10000.0):\n    return undefined_name * offsets"
    result = grade(solution, "q4", code)
    assert result.points == 0 and "NameError" in result.message


Q7_WRONG = {
    "more width": ('why_sine_and_cosine = "b"', "not about having more dimensions"),
    "boundedness": ('why_sine_and_cosine = "c"', "bounded too"),
    "PE(0) non-zero": ('why_sine_and_cosine = "d"', "any constant column"),
    "all of them": ('why_sine_and_cosine = "abcd"', "exactly one option"),
}

Q8_WRONG = {
    "diagonal only": ("nonzero_entries = 512", "4 entries per block"),
    "blocks": ("nonzero_entries = 256", "number of 2x2 blocks"),
    "dense": ("nonzero_entries = 512 * 512", "block-diagonal"),
    "a block per dimension": ("nonzero_entries = 4 * 512", "one per pair"),
    "three per block": ("nonzero_entries = 3 * 256", "all 4 entries"),
    "a float guess": ("nonzero_entries = 1000.0", "is not right"),
}

WRONG = {"q1": Q1_WRONG, "q2": Q2_WRONG, "q3": Q3_WRONG, "q4": Q4_WRONG, "q5": Q5_WRONG, "q6": Q6_WRONG,
         "q7": Q7_WRONG, "q8": Q8_WRONG}

RIGHT = {
    "q1": {"angle first": rotation_code("""
    angle = k * base ** (-2.0 * i / d_model)
    return np.array([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])""")},
    "q2": {"from the q1 blocks": shift_code("""
    T = np.zeros((d_model, d_model))
    for i in range(d_model // 2):
        T[2*i:2*i+2, 2*i:2*i+2] = rotation(i, k, d_model, base)
    return T""")},
    "q4": {"dot products of encodings": profile_code("""
    w = base ** (-2 * np.arange(d_model // 2) / d_model)
    def pe(t):
        return np.stack([np.sin(t * w), np.cos(t * w)], axis=-1).reshape(-1)
    return np.array([pe(0.0) @ pe(float(k)) for k in offsets])"""),
           "float32 (the rule for numbers)": profile_code("""
    w = (base ** (-2 * np.arange(d_model // 2) / d_model)).astype(np.float32)
    return np.cos(np.asarray(offsets, dtype=np.float32)[:, None] * w).sum(axis=1)""")},
    "q3": {"float32 (the rule for numbers)": rows_code("""
    d = table.shape[1]
    w = (base ** (-2 * np.arange(d // 2) / d)).astype(np.float32)
    c, s = np.cos(w * np.float32(k)), np.sin(w * np.float32(k))
    out = np.empty(table.shape, dtype=np.float32)
    out[:, 0::2] = c * table[:, 0::2] + s * table[:, 1::2]
    out[:, 1::2] = -s * table[:, 0::2] + c * table[:, 1::2]
    return out""")},
    "q5": {"a numpy integer": Q5_SETUP + "first_negative_offset = offsets[(offsets > 0) & (profile < 0)][0]"},
    "q7": {"upper case": 'why_sine_and_cosine = "A"'},
    "q8": {"a numpy integer": "import numpy as np\nnonzero_entries = np.int64(1024)"},
}


def test_q6_text_about_the_pairs_without_a_full_turn_holds():
    """Question 6 says that many pairs without a full turn by t = 512 still turn by more than a radian, and
    that only the slowest barely move: checked here (d_model = 512, base 10000)."""
    import numpy as np
    from posenc.exercises.checks import ch02

    angle = 10000.0 ** (-2 * np.arange(ch02.Q6_D_MODEL // 2) / ch02.Q6_D_MODEL) * ch02.Q6_CONTEXT
    without_turn = angle[angle < 2 * np.pi]
    assert (without_turn > 1).sum() >= len(without_turn) / 3          # "many of them turn by more than a radian"
    assert (without_turn < 0.1).sum() >= 1 and without_turn.min() < 0.1   # "only the slowest barely move"
    assert (without_turn < 0.1).sum() < len(without_turn) / 2
    source = (ROOT / "solutions" / "source" / "ch02_relative_shift.py").read_text()
    assert "many of them turn by\n# more than a radian" in source and "almost where they started" not in source
