"""Grader tests of exercise set ch01: each realistic wrong answer is named (the three-way basics: test_checks_all)."""

import textwrap

import pytest

from posenc import sinusoidal_encoding
from posenc.exercises import load_set
from posenc.exercises.framework import PASSED
from tests.conftest import assert_named, with_submission

SET_ID = "ch01"
EXERCISES = load_set(SET_ID)


def test_untouched_find_the_bug_names_the_bug(exercise):
    assert "own column index" in EXERCISES.question("q5").grade(exercise).message


ENCODING = """
import numpy as np
def sinusoidal_encoding(n_positions, d_model):
    {body}
"""


def encoding(body: str) -> str:
    return ENCODING.format(body=textwrap.indent(textwrap.dedent(body).strip(), "    ").lstrip())


# Realistic wrong submissions for q1, each with the words its diagnosis must contain.
Q1_WRONG = {
    "halves layout": (encoding("""
        pos = np.arange(n_positions)[:, None]
        i = np.arange(d_model // 2)[None, :]
        angles = pos / 10000 ** (2 * i / d_model)
        out = np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
        if d_model % 2:
            out = np.concatenate([np.sin(angles), np.sin(pos / 10000 ** (2 * (d_model // 2) / d_model)), np.cos(angles)], axis=1)
        return out
    """), "halves"),
    "sin/cos swapped": (encoding("""
        pe = np.zeros((n_positions, d_model))
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe[:, 0::2] = np.cos(pos * omega)
        pe[:, 1::2] = np.sin(pos * omega[: d_model // 2])
        return pe
    """), "swapped"),
    "dimension index in the exponent": (encoding("""
        pe = np.zeros((n_positions, d_model))
        pos = np.arange(n_positions)[:, None]
        dims = np.arange(0, d_model, 2)
        omega = 1 / 10000 ** (2 * dims / d_model)
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
        return pe
    """), "dimension index where the pair index belongs"),
    "i/d instead of 2i/d": (encoding("""
        pe = np.zeros((n_positions, d_model))
        pos = np.arange(n_positions)[:, None]
        i = np.arange((d_model + 1) // 2)
        pe[:, 0::2] = np.sin(pos / 10000 ** (i / d_model))
        pe[:, 1::2] = np.cos(pos / 10000 ** (i[: d_model // 2] / d_model))
        return pe
    """), "i/d instead of 2i/d"),
    "base 1000": (encoding("""
        pe = np.zeros((n_positions, d_model))
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 1000 ** (np.arange(0, d_model, 2) / d_model)
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
        return pe
    """), "1000 instead of 10000"),
    "positions from 1": (encoding("""
        pe = np.zeros((n_positions, d_model))
        pos = np.arange(1, n_positions + 1)[:, None]
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
        return pe
    """), "positions start at 1"),
    "float32": (encoding("""
        pe = np.zeros((n_positions, d_model), dtype=np.float32)
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega[: d_model // 2])
        return pe
    """), "float32"),
    "transposed": (encoding("""
        pos = np.arange(n_positions)[None, :]
        j = np.arange(d_model)[:, None]
        angles = pos / 10000 ** (2 * (j // 2) / d_model)
        return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))
    """), "transposed"),
    "odd width crashes": (encoding("""
        pe = np.zeros((n_positions, d_model))
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega)
        return pe
    """), "odd d_model"),
    "odd width drops a column": (encoding("""
        half = d_model // 2
        pe = np.zeros((n_positions, 2 * half))
        pos = np.arange(n_positions)[:, None]
        omega = 1 / 10000 ** (2 * np.arange(half) / d_model)
        pe[:, 0::2] = np.sin(pos * omega)
        pe[:, 1::2] = np.cos(pos * omega)
        return pe
    """), "column is missing"),
    "returns a list": (encoding("""
        import math
        return [[math.sin(p / 10000 ** (2 * (j // 2) / d_model)) if j % 2 == 0 else
                 math.cos(p / 10000 ** (2 * (j // 2) / d_model)) for j in range(d_model)]
                for p in range(n_positions)]
    """), "not a numpy array"),
}


@pytest.mark.parametrize("name", Q1_WRONG)
def test_q1_pitfalls_are_named(solution, name):
    code, fragment = Q1_WRONG[name]
    assert_named(EXERCISES, solution, "q1", code, fragment)


def test_q1_python_loop_passes_with_a_note_about_speed(solution):
    code = encoding("""
        import math
        pe = np.zeros((n_positions, d_model))
        for p in range(n_positions):
            for j in range(d_model):
                angle = p / 10000 ** (2 * (j // 2) / d_model)
                pe[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
        return pe
    """)
    result = EXERCISES.question("q1").grade(with_submission(solution, code))
    assert result.status == PASSED
    assert "vectorised" in result.message or result.message == "correct"


Q2_WRONG = {
    "no 2 pi": ("def wavelength(i, d_model, base=10000.0):\n    return base ** (2 * i / d_model)", "without the 2 pi"),
    "frequency": ("def wavelength(i, d_model, base=10000.0):\n    return 1 / base ** (2 * i / d_model)", "frequency"),
    "i/d": ("import numpy as np\ndef wavelength(i, d_model, base=10000.0):\n    return 2 * np.pi * base ** (i / d_model)", "i/d instead of 2i/d"),
    "dimension index": ("import numpy as np\ndef wavelength(i, d_model, base=10000.0):\n    return 2 * np.pi * base ** (2 * (2 * i) / d_model)", "dimension index"),
    "ignores base": ("import numpy as np\ndef wavelength(i, d_model, base=10000.0):\n    return 2 * np.pi * 10000 ** (2 * i / d_model)", "base argument is ignored"),
    "degrees": ("def wavelength(i, d_model, base=10000.0):\n    return 360 * base ** (2 * i / d_model)", "degrees"),
}


@pytest.mark.parametrize("name", Q2_WRONG)
def test_q2_pitfalls_are_named(solution, name):
    code, fragment = Q2_WRONG[name]
    assert_named(EXERCISES, solution, "q2", code, fragment)


Q3_WRONG = {
    "most significant first": ("""
import numpy as np
def binary_encoding(n_positions, n_bits):
    return np.array([[int(b) for b in format(p, f"0{n_bits}b")] for p in range(n_positions)]).reshape(n_positions, n_bits)
""", "bit order"),
    "positions from 1": ("""
import numpy as np
def binary_encoding(n_positions, n_bits):
    pos = np.arange(1, n_positions + 1)[:, None]
    return (pos >> np.arange(n_bits)) & 1
""", "positions start at 1"),
    "floats": ("""
import numpy as np
def binary_encoding(n_positions, n_bits):
    pos = np.arange(n_positions)[:, None]
    return np.floor(pos / 2.0 ** np.arange(n_bits)) % 2
""", "dtype"),
}


@pytest.mark.parametrize("name", Q3_WRONG)
def test_q3_pitfalls_are_named(solution, name):
    code, fragment = Q3_WRONG[name]
    assert_named(EXERCISES, solution, "q3", code, fragment)


Q4_WRONG = {
    "earlier position": ("""
import numpy as np
def first_repeat(encoding, decimals):
    seen = {}
    for p, row in enumerate(np.round(encoding, decimals)):
        key = tuple(row)
        if key in seen:
            return seen[key]
        seen[key] = p
    return None
""", "earlier position"),
    "no rounding": ("""
def first_repeat(encoding, decimals):
    for p in range(len(encoding)):
        for q in range(p):
            if (encoding[p] == encoding[q]).all():
                return p
    return None
""", "without rounding"),
    "off by one": ("""
import numpy as np
def first_repeat(encoding, decimals):
    rounded = np.round(encoding, decimals)
    for p in range(len(rounded)):
        for q in range(p):
            if np.array_equal(rounded[p], rounded[q]):
                return p + 1
    return None
""", "off by one"),
    "returns -1 for no repeat": ("""
import numpy as np
def first_repeat(encoding, decimals):
    seen = set()
    for p, row in enumerate(np.round(encoding, decimals)):
        if tuple(row) in seen:
            return p
        seen.add(tuple(row))
    return -1
""", "return None, not -1"),
}


@pytest.mark.parametrize("name", Q4_WRONG)
def test_q4_pitfalls_are_named(solution, name):
    code, fragment = Q4_WRONG[name]
    assert_named(EXERCISES, solution, "q4", code, fragment)


def test_q5_half_fixed_bug_is_still_named(solution):
    code = """
import numpy as np
def fixed_encoding(n_positions, d_model):
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    dims = np.arange(d_model)[None, :]
    angles = positions / 10000.0 ** (2 * dims / d_model)
    return np.where(dims % 2 == 0, np.sin(angles), np.cos(angles))
"""
    result = EXERCISES.question("q5").grade(with_submission(solution, code))
    assert result.points == 0 and "pair index i = j // 2" in result.message, result.line()


def test_raising_student_code_is_reported_not_raised(solution):
    code = "def wavelength(i, d_model, base=10000.0):\n    return 1 / 0"
    result = EXERCISES.question("q2").grade(with_submission(solution, code))
    assert result.points == 0 and "ZeroDivisionError" in result.message


def test_student_cannot_change_the_probes_by_mutating_inputs(solution):
    code = """
import numpy as np
def first_repeat(encoding, decimals):
    encoding[:] = 0
    return 1 if len(encoding) > 1 else None
"""
    result = EXERCISES.question("q4").grade(with_submission(solution, code))
    assert result.points == 0
    assert EXERCISES.question("q4").grade(solution).status == PASSED


def test_answers_hard_coded_for_the_inline_inputs_fail_under_the_graders_seed(solution):
    question = EXERCISES.question("q1")
    memorised = {args: sinusoidal_encoding(*args) for args in question.probes(0)}
    namespace = dict(solution, sinusoidal_encoding=lambda n, d: memorised[(n, d)])
    assert question.grade(namespace, seed=0).passed            # the inline check sees the usual inputs
    result = question.grade(namespace, seed=5)                   # the batch grader draws others
    assert result.points == 0 and "KeyError" in result.message
    assert all(question.grade(solution, seed=s).passed for s in range(10))
