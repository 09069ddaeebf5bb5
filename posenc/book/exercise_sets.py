"""A chapter's list of its graded questions, made from the exercise set itself so it cannot drift.

In the chapter's ``## Exercises`` section, one cell tagged ``remove-input``::

    import posenc.book.exercise_sets
    posenc.book.exercise_sets.show("ch01")
"""

from __future__ import annotations

from posenc.exercises import load_set


def markdown(set_id: str) -> str:
    """One line per question of the set, with its points, and the total."""
    exercise_set = load_set(set_id)
    lines = [f"- **{q.qid}** {q.title} ({q.points:g} point{'s' if q.points != 1 else ''})"
             for q in exercise_set.questions]
    return "\n".join(lines + ["", f"Total: {exercise_set.max_points:g} points."])


def show(set_id: str) -> None:
    """Display the list in a notebook or on the book's page."""
    from IPython.display import Markdown, display

    display(Markdown(markdown(set_id)))
