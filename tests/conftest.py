"""Shared helpers of the test suite."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from posenc.exercises.authoring import notebook_namespace

ROOT = Path(__file__).resolve().parent.parent


def with_submission(namespace: dict, code: str) -> dict:
    """A copy of ``namespace`` in which ``code`` (a student's answer to one question) has run."""
    patched = dict(namespace)
    exec(compile(code, "<submission>", "exec"), patched)
    return patched


def assert_named(exercise_set, namespace: dict, qid: str, code: str, fragment: str):
    """A wrong answer to ``qid`` (``code`` run over ``namespace``) scores zero with a message naming it."""
    result = exercise_set.question(qid).grade(with_submission(namespace, code))
    assert result.points == 0 and fragment in result.message, result.line()
    return result


# Seeds every wrong answer must fail on: the inline check's 0, then seeds as the batch grader draws them
# (secrets.randbelow(2**31)), fixed here so that a failure can be reproduced.
GRADER_SEEDS = (0, *range(1, 28), 20240607, 1_234_567_891, 2**31 - 1)


@functools.lru_cache(maxsize=None)
def _copy_namespace(set_id: str, copy: str) -> dict:
    from posenc.exercises import authoring

    source = next(s for s in authoring.sources() if s.stem.split("_")[0] == set_id)
    return notebook_namespace(authoring.targets(source)[copy])


def copy_namespace(set_id: str, copy: str) -> dict:
    """A fresh copy of the namespace left by running the ``exercise`` or ``solution`` notebook of a set."""
    return dict(_copy_namespace(set_id, copy))


@pytest.fixture(scope="module")
def solution(request) -> dict:
    """The worked solution's namespace, for a test module that sets ``SET_ID = "chNN"``."""
    return copy_namespace(request.module.SET_ID, "solution")


@pytest.fixture(scope="module")
def exercise(request) -> dict:
    """The untouched student notebook's namespace, for a test module that sets ``SET_ID``."""
    return copy_namespace(request.module.SET_ID, "exercise")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def colab_env() -> Path:
    """The Colab-like environment's interpreter, the course package installed by the first cell
    (tests/colab_env.py; made once per run, whichever worker asks first)."""
    from tests import colab_env as colab

    return colab.prepare()


def explorer_config(explorer) -> dict:
    """The JSON configuration an explorer (its HTML object or markup) hands to its script."""
    import json
    import re

    markup = getattr(explorer, "data", explorer)
    return json.loads(re.search(r'<script type="application/json" class="posenc-config">(.*?)</script>',
                                markup).group(1))
