"""The generator that turns one exercise source into the student and the solution notebook."""

import pytest

from posenc.exercises import authoring
from posenc.exercises.authoring import SourceError, split_blocks

SOURCE = """def f(x):
    ### BEGIN SOLUTION
    return x + 1
    ### END SOLUTION

### BEGIN SOLUTION
answer = 3
### END SOLUTION
### BEGIN STUB
answer = None  # your answer
### END STUB
"""


def test_solution_keeps_solutions_and_drops_stubs():
    text = split_blocks(SOURCE, "solution")
    assert "return x + 1" in text and "answer = 3" in text
    assert "None" not in text and "###" not in text


def test_exercise_gets_placeholders_at_the_right_indentation():
    text = split_blocks(SOURCE, "stub")
    assert "    raise NotImplementedError  # your code here" in text
    assert "answer = None  # your answer" in text
    assert "return x + 1" not in text and "answer = 3" not in text and "###" not in text


@pytest.mark.parametrize("bad, fragment", [
    ("### BEGIN SOLUTION\nx = 1\n", "never closed"),
    ("### END SOLUTION\n", "without an open"),
    ("### BEGIN STUB\nx = 1\n### END STUB\n", "without an open"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n", "inside a SOLUTION block"),
])
def test_malformed_markers_are_reported(bad, fragment):
    with pytest.raises(SourceError, match=fragment):
        split_blocks(bad, "stub", "demo.py, cell 1")


def test_a_fill_line_becomes_what_the_package_function_returns():
    from posenc.exercises.checks import ch07

    text = "Its accuracy:\n\n{{ posenc.exercises.checks.ch07:curve_table }}\n\nWhich statements?"
    assert authoring.fill(text) == f"Its accuracy:\n\n{ch07.curve_table()}\n\nWhich statements?"
    assert authoring.fill("no placeholder, $\\frac{1}{2}$") == "no placeholder, $\\frac{1}{2}$"


@pytest.mark.parametrize("line", ["{{ os:getcwd }}", "{{ posenc.exercises.checks.ch07:curve_tabel }}",
                                  "a table: {{ posenc.exercises.checks.ch07:curve_table }}"])
def test_a_fill_line_that_is_not_one_fails_the_generation(line):
    with pytest.raises(SourceError, match="names no function|not a line of the form"):
        authoring.fill(line)
