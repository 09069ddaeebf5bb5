"""The generator that turns one exercise source into the student and the solution notebook."""

import pytest

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
