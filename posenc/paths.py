"""Where the course's files are: the one home of the checkout's root and the folders under it.

The library (``posenc.lib``) never needs these; the tooling that reads or writes the repository does
(the exercise generator, the book builds, ``make bench``), and the experiment harness's result files
(``posenc.experiments.results``, the only reader of ``RESULTS``).
In an installed wheel ``ROOT`` is the folder above site-packages' ``posenc`` and holds none of them:
``in_checkout()`` says whether they are there.

A few of the checkout's files are read at run time by a notebook opened alone (in Colab or Binder, with
the package installed from git) or by the grader: they are listed in ``PACKAGED_DATA``. ``setup.py``
copies them into ``posenc/_data/<name>/`` of every wheel, and ``QUIZZES``, ``RESULTS`` and ``EXERCISES``
name the checkout's folder when there is a checkout, else that copy.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
NOTEBOOKS = ROOT / "notebooks"
SOLUTIONS = ROOT / "solutions"
EXERCISE_SOURCES = SOLUTIONS / "source"

# name -> the checkout's files (a glob relative to ROOT) that a wheel carries in posenc/_data/<name>/.
PACKAGED_DATA = {
    "quizzes": "book/quizzes/*.json",       # posenc.book.quiz.show() at the end of every chapter
    "results": "results/*.json",            # the full sweeps that chapter 4 shows (make experiments)
    "exercises": "exercises/*.ipynb",       # the grader tells the student's own code from the handout's
}


def in_checkout() -> bool:
    """True when ``ROOT`` is a clone of the course (not site-packages)."""
    return (ROOT / "_toc.yml").is_file() and EXERCISE_SOURCES.is_dir()


def packaged(name: str) -> Path:
    """The folder of one kind of ``PACKAGED_DATA``: the checkout's own, or the wheel's copy."""
    if in_checkout():
        return ROOT / PACKAGED_DATA[name].rsplit("/", 1)[0]
    return PACKAGE / "_data" / name


QUIZZES = packaged("quizzes")
RESULTS = packaged("results")
EXERCISES = packaged("exercises")
