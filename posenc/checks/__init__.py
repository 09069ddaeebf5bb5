"""Exercise checks. Each exercise set is a module ``posenc.checks.<set_id>`` defining ``EXERCISES``.

In an exercise notebook::

    from posenc.checks import checker
    check = checker("ch01")
    ...
    check("q1")
"""

from __future__ import annotations

import importlib
import pkgutil
import re

from posenc.checks.core import Checker, ExerciseSet, Result

# The exercise sets of the course, in chapter order: every module named chNN in this package.
SET_IDS = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if re.fullmatch(r"ch\d\d", m.name)))


def load_set(set_id: str) -> ExerciseSet:
    """The ExerciseSet with this id; ValueError for an unknown id."""
    if set_id not in SET_IDS:
        raise ValueError(f"unknown exercise set {set_id!r}; the course has {', '.join(SET_IDS)}")
    return importlib.import_module(f"posenc.checks.{set_id}").EXERCISES


def checker(set_id: str) -> Checker:
    """The ``check`` function of an exercise notebook."""
    return Checker(load_set(set_id))


__all__ = ["Checker", "ExerciseSet", "Result", "SET_IDS", "checker", "load_set"]
