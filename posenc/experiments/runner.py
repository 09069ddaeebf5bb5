"""The one experiment runner of the course: what a chapter's experiment defines, and the sweep that runs it.

A chapter describes its experiment as a frozen dataclass that subclasses :class:`Experiment`: which kinds of
model it compares (``kinds``), on which ``seeds``, how to build, train and measure one model. Then
:func:`sweep` trains every kind for every seed and returns :class:`Run` records, which
``posenc.experiments.summaries`` turns into tables and curves and ``posenc.experiments.results`` writes to a
file.

Runs are paired: for one seed every kind starts from the same non-positional weights and sees the same
training batches, so the only difference between them is what the experiment varies. Every run is seeded
(``posenc.lib.reproducibility.seed_torch``, the one place torch is seeded) and runs on one thread, so it gives
the same numbers in the chapter, in a worker process and on the command line.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, fields, replace

import numpy as np
import torch
from torch import nn

from posenc.experiments.summaries import fmt, in_distribution
from posenc.lib.models import TrainConfig, parameter_count, train


class Experiment:
    """What a chapter's experiment defines; :func:`sweep` does the rest.

    Subclasses are frozen dataclasses with the fields ``kinds`` (what is compared) and ``seeds``, and the
    methods below. Everything that decides a run is in the dataclass's fields, so it is saved beside the
    results and two sweeps can be compared (:func:`same_setup`).
    """

    def task(self):
        """The task every model is trained and measured on."""
        raise NotImplementedError

    def train_config(self, seed: int) -> TrainConfig:
        raise NotImplementedError

    def build(self, kind: str, seed: int) -> nn.Module:
        """A fresh model of one kind; for one seed every kind shares what the experiment does not vary."""
        raise NotImplementedError

    def accuracy(self, model: nn.Module) -> float:
        """In-distribution accuracy of a trained model."""
        raise NotImplementedError

    def measure(self, kind: str, model: nn.Module) -> dict[str, np.ndarray]:
        """Accuracy at each position, one curve per way of reading (none by default)."""
        return {}

    def before_training(self, kind: str, model: nn.Module) -> dict:
        """What to keep of the untrained model (e.g. a table, to see later what training changed)."""
        return {}

    def report(self, runs) -> str:
        """What ``python -m posenc.experiments run`` prints after a sweep."""
        return "in-distribution accuracy: " + ", ".join(f"{kind} {fmt(in_distribution(runs, kind), 3)}"
                                                       for kind in self.kinds)

    # Hooks with defaults, for experiments whose kinds differ in more than the model (chapter 7: the task).
    full_seeds = 10        # seeds of the full sweep on the command line (``--seeds`` overrides it)
    processes = 1          # worker processes of the full sweep (``--processes`` overrides it)
    replication_size = None  # seeds of the held-out replication (default: as many as the full sweep)

    def fit(self, kind: str, model: nn.Module, seed: int) -> list[float]:
        """Train one model; return the loss of every step."""
        return train(model, self.task(), self.train_config(seed))

    def score(self, kind: str, model: nn.Module) -> float:
        """In-distribution accuracy of a trained model of one kind."""
        return self.accuracy(model)

    def measure_run(self, kind: str, model: nn.Module, seed: int) -> dict[str, np.ndarray]:
        """Accuracy at each position, one curve per way of reading; ``seed`` for measurements that train."""
        return self.measure(kind, model)

    @classmethod
    def from_dict(cls, data: dict) -> "Experiment":
        """An experiment from its saved fields (lists become tuples; unknown keys are ignored)."""
        known = {f.name for f in fields(cls)}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in known}
        return cls(**values)


def same_setup(a: Experiment, b: Experiment) -> bool:
    """True when two configurations differ at most in their seeds."""
    return replace(a, seeds=()) == replace(b, seeds=())


@dataclass
class Run:
    """One trained model: its losses, time, in-distribution accuracy and accuracy at every position."""

    kind: str
    seed: int
    losses: list[float]
    seconds: float
    accuracy: float
    by_position: dict[str, np.ndarray] = field(default_factory=dict)
    parameters: int = 0                                  # trainable parameters of the model
    model: nn.Module | None = field(default=None, repr=False)
    before: dict = field(default_factory=dict, repr=False)    # what Experiment.before_training kept

    @property
    def initial_table(self) -> torch.Tensor | None:
        """The learned table before training (chapter 4's learned runs), else None."""
        return self.before.get("table")

    def record(self) -> dict:
        """Plain, JSON-ready data (no model)."""
        return {"kind": self.kind, "seed": self.seed, "seconds": round(self.seconds, 3),
                "accuracy": self.accuracy, "final_loss": self.losses[-1], "parameters": self.parameters,
                "loss_every_10_steps": [float(np.mean(self.losses[i:i + 10])) for i in range(0, len(self.losses), 10)],
                "by_position": {k: [None if math.isnan(x) else float(x) for x in v]
                                for k, v in self.by_position.items()}}


def run_one(experiment: Experiment, kind: str, seed: int, keep_model: bool = True) -> Run:
    """Build, train and measure one model."""
    model = experiment.build(kind, seed)
    before = experiment.before_training(kind, model)
    start = time.perf_counter()
    losses = experiment.fit(kind, model, seed)
    seconds = time.perf_counter() - start
    return Run(kind, seed, losses, seconds, experiment.score(kind, model), experiment.measure_run(kind, model, seed),
               parameter_count(model), model if keep_model else None, before)


def _one_thread():
    """A worker process trains on one thread. (A seed shift of ``make robustness`` needs nothing here: the
    worker inherits its environment variable, which ``seed_torch`` reads.)"""
    torch.set_num_threads(1)


def sweep(experiment: Experiment, kinds=None, seeds=None, keep_models: bool = True, progress=None,
          processes: int = 1) -> list[Run]:
    """Every kind (default ``experiment.kinds``) for every seed (default ``experiment.seeds``), in that
    order (seed by seed).

    ``progress`` (e.g. print) hears about each finished run. With ``processes`` > 1 the runs are shared
    out to that many fresh worker processes, each on one thread; a run's numbers do not depend on where
    it ran (train with one thread in this process too, ``torch.set_num_threads(1)``, to compare them).
    """
    jobs = [(kind, seed) for seed in (experiment.seeds if seeds is None else seeds)
            for kind in (experiment.kinds if kinds is None else kinds)]

    def report(run):
        if progress:
            progress(f"{run.kind:>12} seed {run.seed}: accuracy {run.accuracy:.3f} ({run.seconds:.1f} s)")
        return run

    if processes <= 1 or len(jobs) <= 1:
        return [report(run_one(experiment, kind, seed, keep_model=keep_models)) for kind, seed in jobs]
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")        # a fresh interpreter: no inherited thread pools
    with concurrent.futures.ProcessPoolExecutor(min(processes, len(jobs)), mp_context=context,
                                                initializer=_one_thread) as pool:
        futures = [pool.submit(run_one, experiment, kind, seed, keep_models) for kind, seed in jobs]
        for future in concurrent.futures.as_completed(futures):
            report(future.result())
        return [future.result() for future in futures]
