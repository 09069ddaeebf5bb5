"""The registry of sweeps: every chapter's full multi-seed sweep, by name, for ``make experiments`` and for
reading a results file back (``posenc.experiments.results``).

Entries name their module and class as text and are imported only when asked for
(:func:`experiment_class`). The chapter modules import the runner and the summaries, never this registry
nor the result files (``tests/test_layout.py`` checks it), so no import runs in a circle.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

# A replication trains a chapter's sweep again with seeds its file never used: REPLICATION_FIRST_SEED on.
REPLICATION_FIRST_SEED = 100


@dataclass(frozen=True)
class Sweep:
    """One chapter's sweep: where its ``Experiment`` class lives and what it compares."""

    module: str
    cls: str
    about: str
    replicated: bool = False       # ``make experiments`` also writes results/<name>_replication.json


SWEEPS = {
    "ch03": Sweep("posenc.experiments.ch03", "CombiningExperiment",
                  "adding or concatenating the sinusoidal encoding, and the embedding scale, on one tiny model"),
    "ch04": Sweep("posenc.experiments.ch04", "LengthExperiment",
                  "learned vs sinusoidal positional encodings, inside and beyond the training length"),
    "ch05": Sweep("posenc.experiments.ch05", "InsideLengthExperiment",
                  "every position method, absolute or inside the attention, at the training length"),
    "ch06": Sweep("posenc.experiments.ch06", "InsideExperiment",
                  "rotary attention against every position method of the course, inside the training length"),
    "ch07": Sweep("posenc.experiments.ch07", "BenchmarkExperiment", "every position method past the training length",
                  replicated=True),
    "ch08": Sweep("posenc.experiments.ch08", "TextExperiment",
                  "byte-level language models on real text, read at 1, 2, 4 and 8 times the training length",
                  replicated=True),
    "ch09": Sweep("posenc.experiments.ch09", "TodayExperiment",
                  "the rotary variants of today's models on chapter 8's text, read at 1, 2, 4 and 8 times the "
                  "training length", replicated=True),
    "ch10": Sweep("posenc.experiments.ch10", "GridExperiment",
                  "a token grid task trained on one grid and read on grids of other sizes, every 2-D position encoding",
                  replicated=True),
}


def sweep_named(name: str) -> Sweep:
    if name not in SWEEPS:
        raise ValueError(f"unknown sweep {name!r}; the course has {', '.join(SWEEPS)}")
    return SWEEPS[name]


def experiment_class(name: str) -> type:
    """The Experiment class of a sweep named in SWEEPS."""
    entry = sweep_named(name)
    return getattr(importlib.import_module(entry.module), entry.cls)


def replication_seeds(name: str, n_seeds: int | None = None) -> tuple[int, ...]:
    """The held-out seeds of a sweep's replication: ``replication_size`` of them, by default as many as its
    full sweep has, from ``REPLICATION_FIRST_SEED`` on (chapter 7: 100..104; chapter 8: 100..102; chapter 10,
    whose full sweep has 10: 100..104)."""
    cls = experiment_class(name)
    n_seeds = (cls.replication_size or cls.full_seeds) if n_seeds is None else n_seeds
    return tuple(range(REPLICATION_FIRST_SEED, REPLICATION_FIRST_SEED + n_seeds))
