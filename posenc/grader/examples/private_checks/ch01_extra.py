"""An example file of private checks for exercise set ch01: copy it to a folder outside the repository
(students must never see it), edit, and grade with ``--extra-tests that-folder`` (or build a Gradescope
bundle with the same option). ``tests/test_grade_lecturer.py`` grades a class with this very file.

Every ``.py`` file of the folder is imported by the grader (never by a student's kernel) and defines
``EXTRA``: a dict from an exercise set's id (``"ch01"``, lower case, one of the course's sets) to a list of
questions. Each question is a column of its own in the gradebook; students see only "check N: passed" or
"failed", never its id, title or message; the lecturer's report (``grades.lecturer.txt``) has the message.
"""

import numpy as np

from posenc.exercises.framework import FunctionQuestion, Mistake, Question, call


def wavelength_at_base(i, d_model, base=10000.0):
    """The reference: what a correct ``wavelength(i, d_model, base)`` returns."""
    return 2 * np.pi * base ** (2 * i / d_model)


def close_enough(got, expected, args):
    """None when ``got`` is right; else a sentence for the lecturer's report."""
    if isinstance(got, (int, float, np.floating)) and abs(float(got) - expected) <= 1e-9 * abs(expected):
        return None
    return f"expected {expected:.6g}, got {got!r}"


def first_rows_differ(data):
    """Judge of the custom check below (runs in the grading process, on plain data from the kernel)."""
    table = data[0].value
    return isinstance(table, np.ndarray) and table.ndim == 2 and len({tuple(r) for r in table}) == len(table)


class RowsAreDistinct(Question):
    """A question of one's own: ``probe(seed)`` says what to collect (plain data: calls with arguments),
    ``judge(data, seed)`` returns (passed, message) from what came back."""

    def probe(self, seed=0):
        return {"name": self.name, "steps": [call(16, 4)]}

    def judge(self, data, seed=0):
        if not data or not data[0].ok:
            return False, f"binary_encoding(16, 4) raised {data[0].error if data else 'nothing'}"
        if first_rows_differ(data):
            return True, "correct"
        return False, "two positions got the same row of bits"


EXTRA = {
    "ch01": [
        FunctionQuestion(
            qid="x_base",                  # the gradebook column: letters, digits, _; not a column's name
            title="wavelength at other bases",   # for the lecturer's report only
            name="wavelength",             # the student's function it calls
            points=2,                      # a positive number
            # the arguments, as a function of the run's seed (--seed): fixed ones and seed-drawn ones
            probes=lambda seed: [(3, 10, 100.0), (seed % 5, 16, 500.0 + seed % 1000)],
            reference=wavelength_at_base,  # the right answer for each argument tuple (must not raise)
            compare=close_enough,          # None, or what is wrong (default: numpy arrays compared closely)
            mistakes=[Mistake("the wavelength without the 2 pi",
                              lambda i, d, base=10000.0: base ** (2 * i / d))],   # named in the report
        ),
        RowsAreDistinct(qid="x_rows", title="every position its own row", name="binary_encoding", points=1),
    ],
}
