"""The one experiment runner of the course: multi-seed sweeps, their summaries and their result files.

A chapter describes its experiment as a frozen dataclass that subclasses :class:`Experiment`: which kinds of
model it compares (``kinds``), on which ``seeds``, how to build, train and measure one model. Then
:func:`sweep` trains every kind for every seed and returns :class:`Run` records, the summaries below turn
them into tables and curves, and :func:`save_results` writes them, with the configuration, seeds and
library versions, to a JSON file the chapter can load.

* Chapter 3 (``posenc.lib.combining.CombiningExperiment``): ways of combining tokens and positions.
* Chapter 4 (:class:`LengthExperiment`, below): no encoding, the sinusoidal table and a learned table on
  ``ShiftedCopy``, read inside and beyond the training length, with a control: a learned table that starts
  at the sinusoidal table's scale. The chapter runs a reduced sweep (3 seeds)
  while it executes; the full sweep runs from the command line::

    python -m posenc.lib.experiments ch04 --out results/ch04.json            # 10 seeds, a few minutes
    python -m posenc.lib.experiments ch04 --out /tmp/quick.json --seeds 2    # a quick look

* Chapter 5 (``posenc.lib.comparison.InsideLengthExperiment``): the same task and model with every position
  method, absolute or inside the attention, at the training length (``python -m posenc.lib.experiments ch05
  --out results/ch05.json``).
* Chapter 7 (``posenc.lib.benchmark.BenchmarkExperiment``): every position method on several tasks, past
  the training length, and context extension for the rotary runs; its runs go to two processes.

Runs are paired: for one seed every kind starts from the same non-positional weights and sees the same
training batches, so the only difference between them is what the experiment varies. Every run is seeded
and runs on one thread, so it gives the same numbers in the chapter, in a worker process and on the
command line.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import html
import importlib
import json
import math
import os
import platform
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

from posenc.lib.attention import METHODS
from posenc.lib.encoding import sinusoidal_encoding
from posenc.lib.models import TinyTransformer, TrainConfig, accuracy_by_position, evaluate, parameter_count, train
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.reproducibility import platform_signature
from posenc.lib.tasks import ShiftedCopy
from posenc.paths import RESULTS as RESULTS_DIR  # noqa: F401  (where the full sweeps are saved)

# "learned_pe_scale" is the control for the learned table's small initialisation: the same table, drawn
# from the same random numbers, but with entries as large (root mean square) as the sinusoidal table's.
ENCODINGS = ("none", "sinusoidal", "learned", "learned_pe_scale")
LEARNED = ("learned", "learned_pe_scale")
LABELS = {"none": "no encoding", "sinusoidal": "sinusoidal", "learned": "learned",
          "learned_pe_scale": "learned, PE-scale init", "shaw": "Shaw", "t5": "T5 bias", "alibi": "ALiBi",
          "rope": "rotary"}

# Published numbers the chapter compares its direction with (facts from the papers, with their source).
PUBLISHED = {
    "vaswani2017": {
        "source": "Vaswani et al. 2017, Table 3, newstest2013 (En-De dev set)",
        "sinusoidal": {"ppl": 4.92, "bleu": 25.8},      # the base model
        "learned": {"ppl": 4.92, "bleu": 25.7},         # row (E)
    },
    "press2022": {
        "source": "Press, Smith & Lewis 2022, WikiText-103 validation, trained at L = 512 (appendix Table 2)",
        "lengths": (512, 1012, 3512),
        "sinusoidal": (20.05, 43.54, 178.97),
        "rotary": (20.07, 21.37, 35.54),
        "alibi": (19.73, 18.73, 18.40),
    },
}


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
        """What ``python -m posenc.lib.experiments`` prints after a sweep."""
        return "in-distribution accuracy: " + ", ".join(f"{kind} {fmt(in_distribution(runs, kind), 3)}"
                                                       for kind in self.kinds)

    # Hooks with defaults, for experiments whose kinds differ in more than the model (chapter 7: the task).
    full_seeds = 10        # seeds of the full sweep on the command line (``--seeds`` overrides it)
    processes = 1          # worker processes of the full sweep (``--processes`` overrides it)

    def fit(self, kind: str, model: nn.Module, seed: int) -> list[float]:
        """Train one model; return the loss of every step."""
        return train(model, self.task(), self.train_config(seed))

    def score(self, kind: str, model: nn.Module) -> float:
        """In-distribution accuracy of a trained model of one kind."""
        return self.accuracy(model)

    def measure_run(self, kind: str, model: nn.Module, seed: int) -> dict[str, np.ndarray]:
        """Accuracy at each position, one curve per way of reading; ``seed`` for measurements that train."""
        return self.measure(kind, model)


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


# make robustness (posenc.book.robustness) shifts every torch seed of a chapter's kernel by a constant; a
# worker process starts a fresh interpreter, so the kernel hands the shift on through this variable.
SEED_SHIFT_VARIABLE = "POSENC_TORCH_SEED_SHIFT"


def _one_thread():
    torch.set_num_threads(1)
    shift = int(os.environ.get(SEED_SHIFT_VARIABLE, "0") or 0)
    if shift:
        def shifted_seed(seed, manual_seed=torch.manual_seed):
            return manual_seed(int(seed) + shift)
        torch.manual_seed = torch.random.manual_seed = shifted_seed


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


# ---------------------------------------------------------------------------------------------------
# Chapter 4: learned vs sinusoidal, inside and beyond the training length


@dataclass(frozen=True)
class LengthExperiment(Experiment):
    """Everything that defines chapter 4's runs; saved beside the results."""

    kinds: tuple[str, ...] = ENCODINGS
    vocab_size: int = 16
    offset: int = 1                # ShiftedCopy: predict the token `offset` places back
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 2
    causal: bool = True            # decoder-style, like GPT-2 and the NoPE study
    train_length: int = 16         # L: every training sequence has this length
    max_len: int = 64              # rows of the learned table; rows >= train_length never get a gradient
    learned_init_std: float = 0.02     # "learned_pe_scale" uses pe_entry_rms(d_model) instead
    steps: int = 300
    batch_size: int = 32
    lr: float = 3e-3
    eval_length: int = 128         # positions 0..127 are measured, i.e. up to 8 L
    n_eval: int = 256
    eval_seed: int = 12345         # disjoint from the training seeds 0, 1, 2, ...
    window: int = 16               # sliding-window reading: never a position index >= window
    seeds: tuple[int, ...] = (0, 1, 2)

    def task(self) -> ShiftedCopy:
        return ShiftedCopy(self.vocab_size, self.offset)

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, lr=self.lr,
                           train_lengths=(self.train_length,), seed=seed)

    def bins(self) -> dict[str, tuple[int, int]]:
        """Ranges of positions [start, stop) that the summaries average over."""
        L = self.train_length
        return {"trained": (self.offset, L), "L..2L": (L, 2 * L), f"2L..{self.max_len}": (2 * L, self.max_len),
                "past the table": (self.max_len, self.eval_length)}

    def build(self, kind: str, seed: int) -> TinyTransformer:
        return build_model(kind, self, seed)

    def accuracy(self, model) -> float:
        return evaluate(model, self.task(), self.train_length, self.n_eval, self.eval_seed)

    def measure(self, kind: str, model) -> dict[str, np.ndarray]:
        """Read in one piece ("plain"), in windows ("window") and, for a learned table, clamped ("clamp")."""
        task = self.task()
        by_position = {"plain": plain_by_position(model, self),
                       "window": accuracy_by_position(model, task, self.eval_length, self.n_eval,
                                                      self.eval_seed, window=self.window)}
        if kind == "learned":
            by_position["clamp"] = accuracy_by_position(clamped_copy(model, self.train_length), task,
                                                        self.eval_length, self.n_eval, self.eval_seed)
        return by_position

    def before_training(self, kind: str, model) -> dict:
        return {"table": model.positional.table.detach().clone()} if kind in LEARNED else {}

    def report(self, runs) -> str:
        return super().report(runs) + "\n" + markdown_table(summary_headers(self), summary_rows(runs, self))

    @classmethod
    def from_dict(cls, data: dict) -> "LengthExperiment":
        return from_dict(cls, data)


def from_dict(cls, data: dict):
    """An experiment dataclass from its saved fields (lists become tuples; unknown keys are ignored)."""
    known = {f.name for f in fields(cls)}
    values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in known}
    return cls(**values)


def pe_entry_rms(d_model: int, n_positions: int = 64) -> float:
    """Root mean square of the sinusoidal table's entries: 1/sqrt(2) for an even width (sin^2 + cos^2 = 1)."""
    return float(np.sqrt(np.mean(sinusoidal_encoding(n_positions, d_model) ** 2)))


def build_model(kind: str, config: LengthExperiment, seed: int) -> TinyTransformer:
    """The model for one kind; for a given seed, every kind gets the same non-positional weights.

    Chapter 4's kinds (``ENCODINGS``) draw their table from a stream of their own, as they always have (so
    ``results/ch04.json`` stays reproducible); both learned kinds draw it from the same random numbers, so
    for one seed the ``learned_pe_scale`` table is the ``learned`` table times
    ``pe_entry_rms(d_model) / learned_init_std``. The other position methods of ``posenc.lib.attention``
    (Part II) are built by the model itself, after every other weight.
    """
    if kind not in ENCODINGS and kind not in METHODS:
        raise ValueError(f"kind must be one of {ENCODINGS + METHODS[3:]}, got {kind!r}")
    if kind not in ENCODINGS:
        torch.manual_seed(seed)
        return TinyTransformer(config.vocab_size, config.d_model, config.n_heads, config.n_layers, position=kind,
                               max_len=config.max_len, causal=config.causal)
    init_std = pe_entry_rms(config.d_model) if kind == "learned_pe_scale" else config.learned_init_std
    with torch.random.fork_rng():                 # the positional module draws from its own stream
        torch.manual_seed(10_000 + seed)
        if kind == "none":
            positional = None
        elif kind == "sinusoidal":
            positional = SinusoidalPositionalEncoding(config.d_model, config.max_len)
        else:
            positional = LearnedPositionalEmbedding(config.max_len, config.d_model, init_std=init_std)
    torch.manual_seed(seed)
    return TinyTransformer(config.vocab_size, config.d_model, config.n_heads, config.n_layers,
                           positional=positional, combine="none" if kind == "none" else "add",
                           causal=config.causal)


def clamped_copy(model: TinyTransformer, n_rows: int) -> TinyTransformer:
    """A copy whose learned table keeps only its first ``n_rows`` rows and clamps every later position."""
    clone = copy.deepcopy(model)
    clone.positional = LearnedPositionalEmbedding.from_table(model.positional.table[:n_rows].detach(),
                                                             overflow="clamp")
    return clone


def plain_by_position(model: TinyTransformer, config: LengthExperiment) -> np.ndarray:
    """Accuracy at each position read in one piece; NaN past a learned table (the model cannot read there)."""
    length = config.eval_length
    if isinstance(model.positional, LearnedPositionalEmbedding) and model.positional.overflow == "error":
        length = min(length, model.positional.max_len)
    task = config.task()
    accuracy = accuracy_by_position(model, task, length, config.n_eval, config.eval_seed)
    return np.concatenate([accuracy, np.full(config.eval_length - length, np.nan)])


# ---------------------------------------------------------------------------------------------------
# Summaries


def records_of(runs) -> list[dict]:
    """Accept Run objects or already-plain records (as loaded from a file). Run objects are recognised by
    their ``record`` method, so a Run made by ``python -m posenc.lib.experiments`` (whose module is also
    imported under its own name) counts too."""
    return [r.record() if hasattr(r, "record") else r for r in runs]


def position_curves(runs, kind: str, variant: str = "plain") -> np.ndarray:
    """(n_seeds, eval_length) accuracy at each position, NaN where not measured."""
    rows = [[np.nan if x is None else x for x in r["by_position"][variant]]
            for r in records_of(runs) if r["kind"] == kind and variant in r["by_position"]]
    return np.array(rows, dtype=np.float64) if rows else np.empty((0, 0))


def bin_means(runs, kind: str, config: LengthExperiment, variant: str = "plain") -> dict[str, np.ndarray]:
    """Per seed, the mean accuracy over each bin of positions (NaN where nothing was measured)."""
    curves = position_curves(runs, kind, variant)
    out = {}
    for name, (start, stop) in config.bins().items():
        part = curves[:, start:stop]
        with np.errstate(invalid="ignore"):
            counts = np.sum(~np.isnan(part), axis=1)
            out[name] = np.where(counts > 0, np.nansum(part, axis=1) / np.maximum(counts, 1), np.nan)
    return out


def in_distribution(runs, kind: str) -> np.ndarray:
    """Accuracy at the training length, one value per seed."""
    return np.array([r["accuracy"] for r in records_of(runs) if r["kind"] == kind])


def band(curves: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, minimum and maximum over seeds (axis 0) of per-position curves, NaN where nothing was measured."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # all-NaN columns are expected (no target there)
        return np.nanmean(curves, axis=0), np.nanmin(curves, axis=0), np.nanmax(curves, axis=0)


def steps_to_loss(losses, threshold: float = 0.1, smooth: int = 10) -> float:
    """First step at which the mean loss of the last ``smooth`` steps is below ``threshold``; NaN if never."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.size < smooth:
        return math.nan
    running = np.convolve(losses, np.ones(smooth) / smooth, mode="valid")
    below = np.flatnonzero(running < threshold)
    return float(below[0] + smooth - 1) if below.size else math.nan


def loss_curves(runs, kind: str) -> np.ndarray:
    """(n_seeds, steps) training losses of one kind (Run objects only: files keep every 10th step)."""
    return np.array([r.losses for r in runs if r.kind == kind])


def summarise(runs, threshold: float = 0.1) -> dict[str, dict]:
    """Per kind, in order of appearance: accuracies (one per seed), their mean, std (ddof=1), min and max,
    the steps each seed took to reach a loss below ``threshold`` (NaN: never) and the parameter count."""
    summary = {}
    for kind in dict.fromkeys(r.kind for r in runs):
        mine = [r for r in runs if r.kind == kind]
        accuracy = np.array([r.accuracy for r in mine])
        mean, spread = mean_spread(accuracy)
        summary[kind] = {"accuracy": accuracy, "mean": mean, "std": spread, "min": float(accuracy.min()),
                         "max": float(accuracy.max()), "parameters": mine[0].parameters,
                         "steps": np.array([steps_to_loss(r.losses, threshold) for r in mine])}
    return summary


def mean_spread(values) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; 0 for a single value); NaN if nothing was measured."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def fmt(values, digits: int = 2) -> str:
    """'mean ± std' of a sample; NaN values (not measured, never reached) are left out and counted,
    '12 ± 3 (2 of 3 seeds)'; an en dash when nothing was measured."""
    values = np.asarray(values, dtype=np.float64).ravel()
    mean, spread = mean_spread(values)
    if math.isnan(mean):
        return "–"
    text = f"{mean:.{digits}f} ± {spread:.{digits}f}"
    measured = int(np.sum(~np.isnan(values)))
    return text if measured == values.size else f"{text} ({measured} of {values.size} seeds)"


def markdown_table(headers, rows) -> str:
    """A Markdown table (myst-nb renders a cell's Markdown output as a table on the page)."""
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


class Table:
    """A small table that shows as HTML in Jupyter and on the book's pages (and as Markdown elsewhere).

    myst-nb renders a Markdown output with CommonMark, which has no tables, so HTML is what the book uses.
    """

    def __init__(self, headers, rows):
        self.headers, self.rows = [str(h) for h in headers], [[str(c) for c in row] for row in rows]

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.headers)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in self.rows)
        return f'<table class="table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def _repr_markdown_(self) -> str:
        return markdown_table(self.headers, self.rows)

    def __repr__(self) -> str:
        return self._repr_markdown_()


def summary_rows(runs, config: LengthExperiment) -> list[list[str]]:
    """Rows of the length table: one per (encoding, way of reading), mean ± std over seeds per bin."""
    rows = []
    ways = [("none", "plain", "in one piece"), ("sinusoidal", "plain", "in one piece"),
            ("learned", "plain", "in one piece"), ("learned_pe_scale", "plain", "in one piece"),
            ("learned", "clamp", "rows 0..L-1, clamped"),
            ("learned", "window", f"windows of {config.window}"), ("sinusoidal", "window", f"windows of {config.window}")]
    for kind, variant, how in ways:
        bins = bin_means(runs, kind, config, variant)
        rows.append([LABELS[kind], how] + [fmt(v) for v in bins.values()])
    return rows


def summary_headers(config: LengthExperiment) -> list[str]:
    return ["encoding", "read"] + [f"positions {a}..{b - 1}" for a, b in config.bins().values()]


# ---------------------------------------------------------------------------------------------------
# Result files


# The full sweeps behind the chapters (``make experiments``): name -> (module, Experiment class, what it is).
SWEEPS = {
    "ch04": ("posenc.lib.experiments", "LengthExperiment",
             "learned vs sinusoidal positional encodings, inside and beyond the training length"),
    "ch05": ("posenc.lib.comparison", "InsideLengthExperiment",
             "every position method, absolute or inside the attention, at the training length"),
    "ch06": ("posenc.lib.rotary_analysis", "InsideExperiment",
             "rotary attention against every position method of the course, inside the training length"),
    "ch07": ("posenc.lib.benchmark", "BenchmarkExperiment", "every position method past the training length"),
}


def experiment_class(name: str) -> type:
    """The Experiment class of a sweep named in SWEEPS."""
    if name not in SWEEPS:
        raise ValueError(f"unknown sweep {name!r}; the course has {', '.join(SWEEPS)}")
    module, attribute, _ = SWEEPS[name]
    return getattr(importlib.import_module(module), attribute)


def save_results(path, experiment: Experiment, runs, name: str = "ch04", seconds: float | None = None,
                 processes: int | None = None) -> dict:
    """Write the records with the configuration, seeds and versions beside them; return what was written.

    ``seconds`` (the sweep's wall-clock time) and ``processes`` are recorded when given, with the machine's
    CPU count, so a reader knows what the time was measured on.
    """
    data = {
        "experiment": f"{name}: {SWEEPS[name][2]}",
        "command": f"python -m posenc.lib.experiments {name} --out {path}",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": asdict(experiment),
        "seeds": list(experiment.seeds),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        # The processor too: another CPU rounds differently, so a reader compares digits only on this one.
        "platform": platform_signature(),
    }
    if seconds is not None:
        import os

        data["timing"] = {"seconds": round(seconds, 1), "processes": processes, "cpu_count": os.cpu_count(),
                          "torch_threads_per_process": 1}
    data["runs"] = records_of(runs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def load_results(path) -> tuple[Experiment, list[dict], dict]:
    """(configuration, records, the whole file) of a saved sweep."""
    data = json.loads(Path(path).read_text())
    name = data["experiment"].split(":", 1)[0]
    return from_dict(experiment_class(name), data["config"]), data["runs"], data


def same_setup(a: Experiment, b: Experiment) -> bool:
    """True when two configurations differ at most in their seeds."""
    return replace(a, seeds=()) == replace(b, seeds=())


# ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a chapter's full multi-seed sweep and save the results.")
    parser.add_argument("experiment", choices=list(SWEEPS), help="which chapter's sweep")
    parser.add_argument("--out", required=True, help="JSON file to write, e.g. results/ch04.json")
    parser.add_argument("--seeds", type=int, default=None,
                        help="number of seeds, 0..N-1 (default: the sweep's own, 10 unless it says otherwise)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: these models are too small to gain from more)")
    parser.add_argument("--processes", type=int, default=None,
                        help="worker processes, one run each at a time (default: the sweep's own, 1 unless it "
                             "says otherwise)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    cls = experiment_class(args.experiment)
    experiment = cls(seeds=tuple(range(cls.full_seeds if args.seeds is None else args.seeds)))
    processes = cls.processes if args.processes is None else args.processes
    start = time.perf_counter()
    runs = sweep(experiment, keep_models=False, progress=lambda line: print(line, flush=True), processes=processes)
    seconds = time.perf_counter() - start
    save_results(args.out, experiment, runs, args.experiment, seconds=seconds, processes=processes)
    print(f"\n{len(runs)} runs in {seconds:.0f} s with {processes} process(es); wrote {args.out}\n")
    print(experiment.report(runs))
    return 0


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy: the experiment classes come from the imported
    # module (SWEEPS), and its summaries must see the same Run class that its sweep creates.
    from posenc.lib import experiments

    sys.exit(experiments.main())
