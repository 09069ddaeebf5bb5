"""Exercise checks. Each exercise set is a module ``posenc.checks.<set_id>`` defining ``EXERCISES``.

In an exercise notebook::

    from posenc.checks import checker
    check = checker("ch01")
    ...
    check("q1")
"""

from __future__ import annotations

import importlib

from posenc.checks.core import Checker, ExerciseSet, Result

# The exercise sets of the course, in chapter order. Add a module and its id here to add a set.
SET_IDS = ("ch01",)


def load_set(set_id: str) -> ExerciseSet:
    """The ExerciseSet with this id; ValueError for an unknown id."""
    if set_id not in SET_IDS:
        raise ValueError(f"unknown exercise set {set_id!r}; the course has {', '.join(SET_IDS)}")
    return importlib.import_module(f"posenc.checks.{set_id}").EXERCISES


def checker(set_id: str) -> Checker:
    """The ``check`` function of an exercise notebook."""
    return Checker(load_set(set_id))


__all__ = ["Checker", "ExerciseSet", "Result", "SET_IDS", "checker", "load_set"]
