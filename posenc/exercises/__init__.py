"""The exercises' tooling: the generator of the student and worked notebooks (``authoring``), the check
framework (``framework``) and the checks of each exercise set (``checks.chNN``).

In an exercise notebook::

    from posenc.exercises import checker
    check = checker("ch01")
    ...
    check("q1")
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from posenc.exercises import checks as _checks

# The exercise sets of the course, in chapter order: every module named chNN in posenc.exercises.checks.
SET_IDS = tuple(sorted(m.name for m in pkgutil.iter_modules(_checks.__path__) if re.fullmatch(r"ch\d\d", m.name)))


def load_set(set_id: str):
    """The ExerciseSet with this id; ValueError for an unknown id."""
    if set_id not in SET_IDS:
        raise ValueError(f"unknown exercise set {set_id!r}; the course has {', '.join(SET_IDS)}")
    return importlib.import_module(f"posenc.exercises.checks.{set_id}").EXERCISES


def checker(set_id: str):
    """The ``check`` function of an exercise notebook."""
    from posenc.exercises.framework import Checker

    return Checker(load_set(set_id))


__all__ = ["SET_IDS", "checker", "load_set"]
