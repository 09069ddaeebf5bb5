"""Where the course's files are: the one home of the checkout's root and the folders under it.

The library (``posenc.lib``) never needs these; the tooling that reads or writes the repository does
(the exercise generator, the book builds, ``make bench``, the result files of ``make experiments``).
In an installed wheel ``ROOT`` is the folder above site-packages' ``posenc`` and holds none of them:
``in_checkout()`` says whether they are there.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
EXERCISES = ROOT / "exercises"
SOLUTIONS = ROOT / "solutions"
EXERCISE_SOURCES = SOLUTIONS / "source"
QUIZZES = ROOT / "book" / "quizzes"
RESULTS = ROOT / "results"


def in_checkout() -> bool:
    """True when ``ROOT`` is a clone of the course (not site-packages)."""
    return (ROOT / "_toc.yml").is_file() and EXERCISE_SOURCES.is_dir()
