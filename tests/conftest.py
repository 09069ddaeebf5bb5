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


def assert_rerun_matches_file(path, kind: str, seed: int = 0, measures=None) -> None:
    """Train one (kind, seed) of a committed results file again, with the file's own configuration.

    On the platform the file was made on (CPU, torch, numpy: ``posenc.lib.reproducibility.same_platform``)
    the run must be the file's to the last digit, its losses and every measure. Elsewhere training takes
    another path, and each measure must lie within the range of the file's seeds, widened by the margin a
    replication may move a mean by. ``measures(run, records, config)`` gives {name: (the run's value, the
    file's values, one per seed in the file's order)}; by default the in-distribution accuracy.
    """
    from dataclasses import replace

    import numpy as np
    import torch

    from posenc.experiments import results, run_one, in_distribution
    from posenc.lib import reproducibility as rep

    config, records, data = results.load_results(path)
    assert data.get("platform"), f"{path} does not record its platform: run `make experiments`"
    saved = next(r for r in records if (r["kind"], r["seed"]) == (kind, seed))
    at = [r["seed"] for r in records if r["kind"] == kind].index(seed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                  # as the files were made (python -m posenc.experiments)
    try:
        run = run_one(replace(config, seeds=(seed,)), kind, seed, keep_model=False)
    finally:
        torch.set_num_threads(threads)
    if measures is None:
        values = {"accuracy": (run.accuracy, in_distribution(records, kind))}
    else:
        values = measures(run, records, config)
    if rep.same_platform(data["platform"]):
        np.testing.assert_allclose(run.record()["loss_every_10_steps"], saved["loss_every_10_steps"], rtol=0,
                                   atol=rep.SAME_RUN_TOLERANCE)
        for name, (value, per_seed) in values.items():
            assert abs(value - per_seed[at]) <= rep.SAME_RUN_TOLERANCE, (name, value, per_seed[at])
    else:
        for name, (value, per_seed) in values.items():
            per_seed = np.asarray(per_seed, dtype=np.float64)
            slack = rep.margin(per_seed)
            assert per_seed.min() - slack <= value <= per_seed.max() + slack, (name, value, per_seed)
