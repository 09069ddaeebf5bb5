"""Shared helpers of the test suite."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from posenc import bench
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
    with bench.shared_cost("the exercise and solution notebooks' namespaces (copy_namespace)"):
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

    with bench.shared_cost("the Colab-like environment (tests/colab_env.py)"):
        return colab.prepare()


def explorer_config(explorer) -> dict:
    """The JSON configuration an explorer (its HTML object or markup) hands to its script."""
    import json
    import re

    markup = getattr(explorer, "data", explorer)
    return json.loads(re.search(r'<script type="application/json" class="posenc-config">(.*?)</script>',
                                markup).group(1))


# A results file one of whose runs its chapter trains again live (the file's configuration, the same kind and
# seed) and compares with the file in the sentence it glues (posenc.lib.reproducibility.agreement): the file,
# the notebook and the glued name. Where the file was made, tests/test_book.py holds that sentence, in the
# book's one execution of the chapter, to "digit for digit" (BOOK_CHECK), and the file's re-run test
# does not train the same run a second time (skip_where_the_book_reproduces). Chapter 10 is not here: its
# sentence compares accuracies, which can agree while the weights do not, so its re-run test trains as before.
REPRODUCED_BY_THE_BOOK = {"ch08.json": ("notebooks/08_position_on_real_text", "agreement"),
                          "ch09.json": ("notebooks/09_rotary_in_todays_models", "agreement")}
BOOK_CHECK = ("test_book.py", "test_where_a_results_file_was_made_the_chapter_s_live_run_reproduces_it_digit_for_digit")


def live_runs_of(notebook: Path) -> set[tuple[str, int]]:
    """The (kind, seed) pairs a notebook's code names in a call with literal ``kinds=`` and ``seeds=`` tuples
    (the chapters' ``replace(config, kinds=(...), seeds=(...))``)."""
    import ast

    import nbformat

    found = set()
    for cell in nbformat.read(notebook, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if not isinstance(node, ast.Call):
                continue
            keywords = {k.arg: k.value for k in node.keywords if k.arg in ("kinds", "seeds")}
            try:
                kinds, seeds = (ast.literal_eval(keywords[name]) for name in ("kinds", "seeds"))
            except (KeyError, ValueError):
                continue
            found |= {(kind, seed) for kind in kinds for seed in seeds}
    return found


def skip_where_the_book_reproduces(request, path, kind: str, seed: int) -> None:
    """Skip a re-run of ``path``'s (kind, seed) where the book's execution of its chapter must reproduce it: the
    file was made on this platform, the chapter trains that run live, and BOOK_CHECK is in this session.
    Otherwise return, and the test trains it."""
    from posenc.experiments import results
    from posenc.lib import reproducibility as rep

    chapter, name = REPRODUCED_BY_THE_BOOK[Path(path).name]
    if not rep.same_platform(results.load_results(path)[2].get("platform")):
        return
    if (kind, seed) not in live_runs_of(ROOT / f"{chapter}.ipynb"):
        return
    if not any((item.path.name, item.name) == BOOK_CHECK for item in request.session.items):
        return
    pytest.skip(f"made on this platform: {chapter}, executed once for the book in this run, trains {kind} seed "
                f"{seed} live and must say that it reproduces {Path(path).name} digit for digit "
                f"(tests/test_book.py, glued {name!r})")


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
            low, high = rep.widened_range(per_seed)
            assert low <= value <= high, (name, value, per_seed)


# `make test`'s first phase (pytest -n 2 --dist loadfile, JOBS=2): each file runs whole on one worker, the
# files in this order. The slowest files start first and the quick ones fill in at the end, so that no worker
# is left alone with a long file while the others have nothing more to do (the longest-first rule).
# tests/test_book.py, the longest by far (it executes and builds the book), takes a worker of its own first.
# The order is that of the files' durations in a run of the whole phase (`make bench BENCH=suite` lists the
# slowest tests); a file missing here only starts later.
SLOW_FIRST = ("test_book.py", "test_colab_versions.py", "test_colab.py", "test_gradescope.py",
              "test_grade_lecturer.py", "test_grade_private.py", "test_grade_attacks.py", "test_checks_all.py",
              "test_grade.py", "test_experiments_ch07.py", "test_lab.py", "test_experiments.py")


def _slowness(item) -> int:
    name = item.path.name
    return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)


def pytest_configure(config):
    bench.register_costs_by_test(config)      # make bench BENCH=suite: the CPU time of each test file


def pytest_collection_modifyitems(config, items):
    if hasattr(config, "workerinput"):         # in a pytest-xdist worker, whose collection the scheduler uses
        items.sort(key=_slowness)              # stable: every file's tests stay together and in order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadfile``: a worker is given its next file only when its current one is down to its
    last test (pytest-xdist's default hands it one at two): a file queued behind the book build would
    otherwise wait there for minutes while the other worker runs out of work."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class OneFileAhead(LoadFileScheduling):
        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) > 1:
                return
            self._assign_work_unit(node)

    return OneFileAhead(config, log)

