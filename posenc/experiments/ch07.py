"""Chapter 7's experiment: every position method on the same footing, past the training length, and context
extension.

One experiment (:class:`BenchmarkExperiment`) trains the course's ``TinyTransformer`` with each position method
of ``posenc.lib.attention.METHODS`` on each of three tasks of ``posenc.lib.tasks``, with one model size, one
training budget and one learning rate for all, and reads every model on sequences up to four times the
training length L:

* ``local``: ``LocalMax``, the largest of the last three tokens (a local rule: a recency bias helps);
* ``first``: ``FirstToken``, the first token of the sequence (retrieval of the most distant token);
* ``copy``: ``Copy``, a string copied after a separator (Kazemnejad et al.'s copy task; the source lies
  n + 1 places back).

A kind is ``"task/method"``, e.g. ``"copy/alibi"``. For one seed every method of a task starts from the same
non-positional weights and sees the same batches. It builds on no other chapter's experiment.

The rotary runs are also extended (``posenc.lib.extension``): position interpolation, NTK-aware scaling and
YaRN at s = 2 and 4, read zero-shot at sL and after a short fine-tune at sL (``finetune_steps``, a few
percent of the training steps), next to plain RoPE fine-tuned for as long. Their curves are stored in the
rotary runs' ``by_position`` under ``"pi x2"``, ``"ft yarn x4"``, ``"ft none x2"`` and so on.

    python -m posenc.experiments run ch07 --out results/ch07.json                     # 5 seeds in 2 processes
    python -m posenc.experiments replicate ch07 --out results/ch07_replication.json   # 5 held-out seeds
    python -m posenc.experiments lr-search --out results/ch07_lr_search.json

The replication trains the same configuration with seeds the chapter never used;
:func:`extrapolation_directions` lists every direction the chapter asserts from ``results/ch07.json``, and
``tests/test_experiments_ch07.py`` checks that each one also holds in the replication.

The learning rate was chosen by :func:`lr_search`: every kind trained once (seed 0) at each rate of a small
grid, scored by its accuracy inside the training length only (never past it), the rate with the best mean
kept for every method.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

import numpy as np
import torch

from posenc.experiments.runner import Experiment, sweep
from posenc.experiments.summaries import (LABELS, bin_means, cell, in_distribution, markdown_table,
                                          position_curves, records_of)
from posenc.lib import reproducibility
from posenc.lib.attention import METHODS
from posenc.lib.models import TinyTransformer, TrainConfig, accuracy_by_position, evaluate, extended_copy, train
from posenc.lib.reproducibility import seed_torch
from posenc.lib.tasks import Copy, FirstToken, LocalMax

TASKS = ("local", "first", "copy")
TASK_LABELS = {"local": "local max", "first": "first token", "copy": "copy"}
EXTENSIONS = ("pi", "ntk", "yarn")
EXTENSION_LABELS = {"none": "plain RoPE", "pi": "position interpolation", "ntk": "NTK-aware", "yarn": "YaRN"}
LR_GRID = (3e-3, 1e-2, 3e-2)


def split_kind(kind: str) -> tuple[str, str]:
    """``"copy/alibi"`` -> ``("copy", "alibi")``, checking both names."""
    task, _, method = kind.partition("/")
    if task not in TASKS or method not in METHODS:
        raise ValueError(f"a kind is 'task/method' with a task of {TASKS} and a method of {METHODS}, got {kind!r}")
    return task, method


def kind_label(kind: str) -> str:
    """``"first/none"`` -> ``"no encoding on first token"``: a kind as the chapter's text names it."""
    task, method = split_kind(kind)
    return f"{LABELS[method]} on {TASK_LABELS[task]}"


def extension_key(method: str, scale: int, finetuned: bool = False) -> str:
    """Where a rotary run keeps one extension's curve: ``"pi x2"``, ``"ft none x4"``..."""
    return f"{'ft ' if finetuned else ''}{method} x{scale}"


@dataclass(frozen=True)
class BenchmarkExperiment(Experiment):
    """Everything that defines chapter 7's runs; saved beside the results."""

    tasks: tuple[str, ...] = TASKS
    methods: tuple[str, ...] = METHODS
    vocab_size: int = 16
    window: int = 3                  # LocalMax: the last `window` tokens
    d_model: int = 32
    n_heads: int = 4                 # ALiBi's slopes 1/4, 1/16, 1/64, 1/256
    n_layers: int = 2
    causal: bool = True              # decoder-only, as in the NoPE study
    train_length: int = 16           # L: streaming tasks train at length L, copy on every length 3..L
    max_len: int = 64                # rows of the learned table (rows >= L never get a gradient)
    learned_init_std: float = 0.02
    shaw_max_distance: int = 8       # Shaw's clip k, inside L so that the clipped vectors are trained
    t5_buckets: int = 8              # T5's buckets and max_distance, scaled to L (published: 32 and 128 at
    t5_max_distance: int = 16        # training lengths of 512) so that every bucket is trained
    steps: int = 400
    batch_size: int = 32
    lr: float = 1e-2                 # chosen by lr_search (results/ch07_lr_search.json)
    eval_length: int = 64            # 4 L
    n_eval: int = 256               # test sequences per curve (copy: per length, see copy_eval_sequences)
    copy_eval_sequences: int = 64   # copy is measured one length at a time: 64 strings of each length
    eval_seed: int = 12345           # disjoint from the training seeds 0, 1, 2, ...
    scales: tuple[int, ...] = (2, 4)         # context extension: s = L' / L
    extensions: tuple[str, ...] = EXTENSIONS
    finetune_steps: int = 20         # at length s L, 5% of `steps`
    seeds: tuple[int, ...] = (0,)

    full_seeds = 5
    processes = 2

    def __post_init__(self):
        for task in self.tasks:
            if task not in TASKS:
                raise ValueError(f"unknown task {task!r}; choose from {TASKS}")
        for method in self.methods:
            if method not in METHODS:
                raise ValueError(f"unknown position method {method!r}; choose from {METHODS}")
        if self.eval_length < max(self.scales, default=1) * self.train_length:
            raise ValueError("eval_length must cover the longest extended length, max(scales) * train_length")

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(f"{task}/{method}" for task in self.tasks for method in self.methods)

    # ---- tasks and training

    def make_task(self, task: str):
        return {"local": lambda: LocalMax(self.vocab_size, self.window), "first": lambda: FirstToken(self.vocab_size),
                "copy": lambda: Copy(self.vocab_size)}[task]()

    def task(self):
        """The first task (the runner's default hook); the kinds name their own."""
        return self.make_task(self.tasks[0])

    def train_lengths(self, task: str, length: int | None = None) -> tuple[int, ...]:
        """Streaming tasks train at one length (every shorter one is a prefix); copy at every length 3..L."""
        length = length or self.train_length
        return (length,) if self.make_task(task).streaming else tuple(range(3, length + 1))

    def train_config(self, seed: int, task: str | None = None) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, lr=self.lr,
                           train_lengths=self.train_lengths(task or self.tasks[0]), seed=seed, fused=True)

    def position_options(self, method: str) -> dict:
        return {"shaw": {"max_distance": self.shaw_max_distance},
                "t5": {"num_buckets": self.t5_buckets, "max_distance": self.t5_max_distance},
                "learned": {"init_std": self.learned_init_std}}.get(method, {})

    def build(self, kind: str, seed: int) -> TinyTransformer:
        """The model of one kind, through the one interface ``TinyTransformer(position=method)``. For one seed
        every method starts from the same non-positional weights: the model draws its method's own
        parameters (a learned table, Shaw's vectors, T5's biases) after all the others."""
        _, method = split_kind(kind)
        seed_torch(seed)
        return TinyTransformer(self.vocab_size, self.d_model, self.n_heads, self.n_layers, position=method,
                               max_len=self.max_len, causal=self.causal,
                               position_options=self.position_options(method))

    def fit(self, kind: str, model, seed: int) -> list[float]:
        task = split_kind(kind)[0]
        return train(model, self.make_task(task), self.train_config(seed, task))

    # ---- measuring

    def curve(self, model, task: str, length: int) -> np.ndarray:
        """Accuracy against position 0 .. length - 1 (NaN where nothing is scored).

        Streaming tasks: accuracy at position t of one long test batch. Copy: entry l - 1 is the accuracy
        on copies in sequences of length l (odd l from 3 on; a sequence's last position is l - 1).
        """
        data = self.make_task(task)
        if data.streaming:
            return accuracy_by_position(model, data, length, self.n_eval, self.eval_seed)
        out = np.full(length, np.nan)
        for total in range(3, length + 1, 2):
            out[total - 1] = evaluate(model, data, total, self.copy_eval_sequences, self.eval_seed)
        return out

    def score(self, kind: str, model) -> float:
        """Accuracy inside the training length: positions < L (copy: lengths <= L)."""
        curve = self.curve(model, split_kind(kind)[0], self.train_length)
        return float(np.nanmean(curve))

    def measure_run(self, kind: str, model, seed: int) -> dict[str, np.ndarray]:
        task, method = split_kind(kind)
        out = {"plain": self.curve(model, task, self.eval_length)}
        if method == "rope":
            out.update(self.extend(model, task, seed))
        return out

    def extend(self, model, task: str, seed: int) -> dict[str, np.ndarray]:
        """Zero-shot and fine-tuned context extension of a rotary model trained at L (curves up to s L)."""
        out = {}
        for scale in self.scales:
            length = scale * self.train_length
            for method in self.extensions:
                out[extension_key(method, scale)] = self.curve(
                    extended_copy(model, method, scale, self.train_length), task, length)
            for method in ("none", *self.extensions):
                tuned = self.finetuned(model, task, method, scale, seed)
                out[extension_key(method, scale, finetuned=True)] = self.curve(tuned, task, length)
        return out

    def finetuned(self, model, task: str, method: str, scale: int, seed: int):
        """A copy of ``model`` with an extension switched on, trained ``finetune_steps`` more at length s L."""
        tuned = copy.deepcopy(model) if method == "none" else extended_copy(model, method, scale, self.train_length)
        config = TrainConfig(steps=self.finetune_steps, batch_size=self.batch_size, lr=self.lr,
                             train_lengths=self.train_lengths(task, scale * self.train_length),
                             seed=10_000 + 100 * scale + seed, fused=True)
        train(tuned, self.make_task(task), config)
        return tuned

    # ---- summaries

    def bins(self) -> dict[str, tuple[int, int]]:
        """Ranges of positions [start, stop) the summaries average over (NaN entries are skipped)."""
        L = self.train_length
        return {"inside L": (0, L), "L..2L": (L, 2 * L), f"2L..{self.eval_length // L}L": (2 * L, self.eval_length)}

    def report(self, runs) -> str:
        return markdown_table(summary_headers(self), summary_rows(runs, self)) + "\n\n" + \
            markdown_table(*extension_table(runs, self))


# ---------------------------------------------------------------------------------------------------
# Summaries of runs (Run objects or records loaded from a file)


def bin_table(runs, config: BenchmarkExperiment, variant: str = "plain") -> dict[str, dict[str, np.ndarray]]:
    """kind -> bin name -> one mean accuracy per seed."""
    return {kind: bin_means(runs, kind, config, variant) for kind in config.kinds}


def seed_spread(runs, config: BenchmarkExperiment, kind: str,
                variant: str = "plain") -> dict[str, tuple[float, float, float]]:
    """Bin name -> (mean, lowest, highest) over the seeds of one kind's mean accuracy in that bin."""
    return {name: (float(np.mean(values)), float(np.min(values)), float(np.max(values)))
            for name, values in bin_means(runs, kind, config, variant).items()}


def far_bin(config: BenchmarkExperiment) -> str:
    return list(config.bins())[-1]


def summary_headers(config: BenchmarkExperiment) -> list[str]:
    return ["task", "method"] + [f"positions {b}" for b in config.bins()]


def summary_rows(runs, config: BenchmarkExperiment) -> list[list[str]]:
    """One row per task and method: mean ± std over seeds of the accuracy in each bin of positions."""
    table = bin_table(runs, config)
    return [[TASK_LABELS[t], LABELS[m]] + [cell(table[f"{t}/{m}"][b]) for b in config.bins()]
            for t in config.tasks for m in config.methods]


def ranks(runs, config: BenchmarkExperiment, bin_name: str | None = None,
          tolerance: float = 0.01) -> dict[str, np.ndarray]:
    """Per method, its rank (1 = best) among the methods on each (task, seed), by mean accuracy in one bin
    (default: the furthest): 1 + the number of methods more than ``tolerance`` better. So methods within
    ``tolerance`` of each other share the better rank (on a task that several methods solve, 0.999 and
    1.000 are a tie, not a ranking). Shape (tasks * seeds,)."""
    bin_name = bin_name or far_bin(config)
    table = bin_table(runs, config)
    seeds = sorted({r["seed"] for r in records_of(runs)})
    out = {m: [] for m in config.methods}
    for task in config.tasks:
        scores = np.array([table[f"{task}/{m}"][bin_name] for m in config.methods])   # (methods, seeds)
        for column in range(len(seeds)):
            values = scores[:, column]
            for row, method in enumerate(config.methods):
                out[method].append(1 + int(np.sum(values > values[row] + tolerance)))
    return {m: np.array(v, dtype=np.float64) for m, v in out.items()}


def mean_reciprocal_rank(runs, config: BenchmarkExperiment, bin_name: str | None = None,
                         tolerance: float = 0.01) -> dict[str, float]:
    """Kazemnejad et al.'s aggregate: the mean over tasks (and here seeds) of 1 / rank."""
    return {m: float(np.mean(1.0 / r)) for m, r in ranks(runs, config, bin_name, tolerance).items()}


def extension_curves(runs, config: BenchmarkExperiment, task: str, key: str) -> np.ndarray:
    """(seeds, length) curves of one extension of the rotary runs of one task."""
    return position_curves(runs, f"{task}/rope", key)


def extension_means(runs, config: BenchmarkExperiment, task: str, key: str, scale: int) -> np.ndarray:
    """Per seed, the mean accuracy from L to s L (the new positions) of one extension curve; for plain RoPE
    read zero-shot, the plain curve."""
    L = config.train_length
    curves = position_curves(runs, f"{task}/rope", key)
    part = curves[:, L:scale * L]
    with np.errstate(invalid="ignore"):
        return np.nanmean(part, axis=1) if part.size else np.array([])


def extension_table(runs, config: BenchmarkExperiment) -> tuple[list[str], list[list[str]]]:
    """Headers and rows: accuracy on the new positions L..sL of each rotary extension, zero-shot and
    fine-tuned, per task (mean ± std over seeds)."""
    headers = ["task", "extension", "fine-tuned"] + [f"positions L..{s}L (s = {s})" for s in config.scales]
    rows = []
    for task in config.tasks:
        for finetuned in (False, True):
            for method in ("none", *config.extensions):
                cells = []
                for scale in config.scales:
                    key = "plain" if (method == "none" and not finetuned) else extension_key(method, scale, finetuned)
                    cells.append(cell(extension_means(runs, config, task, key, scale)))
                rows.append([TASK_LABELS[task], EXTENSION_LABELS[method],
                             f"{config.finetune_steps} steps" if finetuned else "no"] + cells)
    return headers, rows


# ---------------------------------------------------------------------------------------------------
# The directions the chapter asserts from a results file, in one place: the chapter asserts each with a
# margin against the seed spread on results/ch07.json, and tests/test_experiments_ch07.py checks that each one
# also holds (its means on the asserted side) in the held-out replication, results/ch07_replication.json.


@dataclass(frozen=True)
class Direction:
    """One claim of the chapter: per seed, ``larger`` exceeds ``smaller`` (either may be a threshold).

    The values of one seed are paired (the same seed's runs share their non-positional weights and batches),
    so the claim is judged on the per-seed differences: it *holds* when their mean is positive, and it holds
    *clearly* when the mean clears the margin that a replication with new seeds could move it by
    (``reproducibility.clearly_above``)."""

    claim: str
    larger: np.ndarray | float
    smaller: np.ndarray | float

    @property
    def differences(self) -> np.ndarray:
        return np.atleast_1d(np.asarray(self.larger, dtype=np.float64) - np.asarray(self.smaller, dtype=np.float64))

    @property
    def gap(self) -> float:
        """Mean over seeds of larger - smaller (positive: the claim's side)."""
        return float(np.nanmean(self.differences))

    @property
    def margin(self) -> float:
        return reproducibility.margin(self.differences)

    @property
    def holds(self) -> bool:
        return bool(self.gap > 0)

    @property
    def clear(self) -> bool:
        return reproducibility.clearly_above(self.differences, 0.0)


def seed_mrr(runs, config: BenchmarkExperiment, bin_name: str | None = None,
             tolerance: float = 0.01) -> dict[str, np.ndarray]:
    """Per method, one mean reciprocal rank per seed (over the tasks); their mean is
    :func:`mean_reciprocal_rank`."""
    return {m: np.mean(1.0 / r.reshape(len(config.tasks), -1), axis=0)
            for m, r in ranks(runs, config, bin_name, tolerance).items()}


def plain_new_positions(runs, config: BenchmarkExperiment, task: str, method: str, scale: int) -> np.ndarray:
    """Per seed, the mean accuracy on positions L..sL-1 of a method read as it is (no extension)."""
    L = config.train_length
    with np.errstate(invalid="ignore"):
        return np.nanmean(position_curves(runs, f"{task}/{method}")[:, L:scale * L], axis=1)


def zero_shot(runs, config: BenchmarkExperiment, task: str, method: str, scale: int) -> np.ndarray:
    """Per seed, a rotary run extended by ``method`` ("none": plain RoPE) on its new positions L..sL-1."""
    key = "plain" if method == "none" else extension_key(method, scale)
    return extension_means(runs, config, task, key, scale)


def finetuned(runs, config: BenchmarkExperiment, task: str, method: str, scale: int) -> np.ndarray:
    """Per seed, the same after the short fine-tune at s L."""
    return extension_means(runs, config, task, extension_key(method, scale, True), scale)


def _lowest(*arrays) -> np.ndarray:
    return np.min(np.vstack(arrays), axis=0)


def _highest(*arrays) -> np.ndarray:
    return np.max(np.vstack(arrays), axis=0)


def majority_accuracy(config: BenchmarkExperiment) -> float:
    """LocalMax's score for always answering the largest token: 1 - (1 - 1/V)^window."""
    return 1 - (1 - 1 / config.vocab_size) ** config.window


def extrapolation_directions(runs, config: BenchmarkExperiment) -> list[Direction]:
    """Every direction chapter 7 asserts from its results file (Run objects or records), per seed.

    "Every method" claims compare each seed's lowest (or highest) method with the threshold, which is
    stricter than comparing each method's mean."""
    inside = {m: {t: in_distribution(runs, f"{t}/{m}") for t in config.tasks} for m in config.methods}
    bins = bin_table(runs, config)
    near, far = "L..2L", far_bin(config)
    at = {(t, m, b): bins[f"{t}/{m}"][b] for t in config.tasks for m in config.methods for b in config.bins()}
    others = [m for m in config.methods if m != "none"]
    mrr = seed_mrr(runs, config)
    out = [
        Direction("inside L, first token: every method but ALiBi above 0.95",
                  _lowest(*(inside[m]["first"] for m in config.methods if m != "alibi")), 0.95),
        Direction("inside L, local max: sinusoidal, learned, Shaw, T5 and rotary above 0.95",
                  _lowest(*(inside[m]["local"] for m in ("sinusoidal", "learned", "shaw", "t5", "rope"))), 0.95),
        Direction("inside L, local max: ALiBi and NoPE below sinusoidal, learned, Shaw, T5 and rotary",
                  _lowest(*(inside[m]["local"] for m in ("sinusoidal", "learned", "shaw", "t5", "rope"))),
                  _highest(inside["alibi"]["local"], inside["none"]["local"])),
        Direction("inside L, local max: NoPE below every other method",
                  _lowest(*(inside[m]["local"] for m in others)), inside["none"]["local"]),
        Direction("inside L, copy: NoPE below every other method",
                  _lowest(*(inside[m]["copy"] for m in others)), inside["none"]["copy"]),
        Direction("local max, L..2L: sinusoidal and learned fall by more than 0.5 from inside L",
                  _lowest(*(at["local", m, "inside L"] - at["local", m, near] for m in ("sinusoidal", "learned"))), 0.5),
        Direction("local max, L..2L: rotary above 0.95", at["local", "rope", near], 0.95),
        Direction("local max, 2L..4L: rotary below 0.6", 0.6, at["local", "rope", far]),
        Direction("local max, 2L..4L: Shaw, T5 and ALiBi above 0.85",
                  _lowest(*(at["local", m, far] for m in ("shaw", "t5", "alibi"))), 0.85),
        Direction("local max: ALiBi from 2L on within 0.05 of its accuracy inside L",
                  0.05, np.abs(at["local", "alibi", far] - at["local", "alibi", "inside L"])),
        Direction("first token, 2L..4L: rotary below 0.3", 0.3, at["first", "rope", far]),
        Direction("first token, 2L..4L: every method but rotary above 0.9",
                  _lowest(*(at["first", m, far] for m in config.methods if m != "rope")), 0.9),
        Direction("copy, 2L..4L: every method below 0.5", 0.5, _highest(*(at["copy", m, far] for m in config.methods))),
        Direction("local max, 2L..4L: rotary above learned", at["local", "rope", far], at["local", "learned", far]),
        Direction("local max, L..2L: rotary above sinusoidal by more than 0.3",
                  at["local", "rope", near], at["local", "sinusoidal", near] + 0.3),
        Direction("copy, 2L..4L: rotary below sinusoidal and learned",
                  _lowest(at["copy", "sinusoidal", far], at["copy", "learned", far]), at["copy", "rope", far]),
        Direction("mean reciprocal rank: rotary below T5, ALiBi and NoPE",
                  _lowest(mrr["t5"], mrr["alibi"], mrr["none"]), mrr["rope"]),
        Direction("mean reciprocal rank: rotary below sinusoidal and learned",
                  _lowest(mrr["sinusoidal"], mrr["learned"]), mrr["rope"]),
        Direction("mean reciprocal rank: T5 and Shaw above rotary, sinusoidal and learned",
                  _lowest(mrr["t5"], mrr["shaw"]), _highest(mrr["rope"], mrr["sinusoidal"], mrr["learned"])),
    ]
    if "rope" not in config.methods or not config.scales:
        return out
    zs = {(t, k, s): zero_shot(runs, config, t, k, s) for t in config.tasks for k in ("none", *config.extensions)
          for s in config.scales}
    ft = {(t, k, s): finetuned(runs, config, t, k, s) for t in config.tasks for k in ("none", *config.extensions)
          for s in config.scales}
    top = max(config.scales)
    for s in config.scales:
        out += [
            Direction(f"local max, s = {s}, zero-shot: NTK-aware above interpolation and YaRN by more than 0.2",
                      zs["local", "ntk", s], _highest(zs["local", "pi", s], zs["local", "yarn", s]) + 0.2),
            Direction(f"first token, s = {s}, zero-shot: interpolation and YaRN above plain RoPE",
                      _lowest(zs["first", "pi", s], zs["first", "yarn", s]), zs["first", "none", s]),
            Direction(f"first token, s = {s}, zero-shot: interpolation and YaRN above 0.9",
                      _lowest(zs["first", "pi", s], zs["first", "yarn", s]), 0.9),
            Direction(f"first token, s = {s}, zero-shot: interpolation above NTK-aware",
                      zs["first", "pi", s], zs["first", "ntk", s]),
            Direction(f"local max, s = {s}, fine-tuned: NTK-aware above interpolation (the YaRN paper found it "
                      "below)", ft["local", "ntk", s], ft["local", "pi", s]),
        ]
    out += [
        Direction("local max and copy, s = 2: interpolation and YaRN better after fine-tuning than zero-shot",
                  _lowest(*(ft[t, k, 2] - zs[t, k, 2] for t in ("local", "copy") for k in ("pi", "yarn"))), 0.0),
        Direction("local max, s = 2, fine-tuned: plain RoPE and every extension above 0.9",
                  _lowest(*(ft["local", k, 2] for k in ("none", *config.extensions))), 0.9),
        Direction("first token, s = 2, fine-tuned: plain RoPE above 0.9", ft["first", "none", 2], 0.9),
        Direction(f"local max, s = {top}, fine-tuned: plain RoPE above interpolation",
                  ft["local", "none", top], ft["local", "pi", top]),
        Direction("copy, s = 2, fine-tuned: plain RoPE and every extension below 0.75",
                  0.75, _highest(*(ft["copy", k, 2] for k in ("none", *config.extensions)))),
    ]
    return out


def direction_rows(file_directions: list[Direction], replication: list[Direction] | None = None) -> list[list[str]]:
    """Rows for a table: claim, mean gap ± margin in the file, clear?, and the replication's gap."""
    rows = []
    for i, d in enumerate(file_directions):
        row = [d.claim, f"{d.gap:+.3f}", f"{d.margin:.3f}", "yes" if d.clear else "no"]
        if replication is not None:
            r = replication[i]
            row += [f"{r.gap:+.3f}", "yes" if r.holds else "no"]
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------------------------------
# Looking inside: where the attention goes at each position


@torch.no_grad()
def attention_on_first(model, tokens: torch.Tensor, layer: int = -1) -> np.ndarray:
    """(heads, n): each head's attention weight from query position t on key 0, averaged over the batch."""
    return model.attention_weights(tokens, layer=layer)[..., 0].mean(0).numpy()


# ---------------------------------------------------------------------------------------------------
# The learning-rate search


def lr_search(config: BenchmarkExperiment | None = None, rates=LR_GRID, seed: int = 0, processes: int = 2,
              progress=None) -> dict:
    """Train every kind once (one seed) at each learning rate; score each by its accuracy inside the
    training length only; return the table and the rate with the best mean over all kinds.

    Context extension is left out (it does not depend on the choice and costs time).
    """
    config = replace(config or BenchmarkExperiment(), seeds=(seed,), scales=(), extensions=())
    table = {}
    for rate in rates:
        runs = sweep(replace(config, lr=rate), keep_models=False, processes=processes, progress=progress)
        table[rate] = {r.kind: r.accuracy for r in runs}
    means = {rate: float(np.mean(list(scores.values()))) for rate, scores in table.items()}
    return {"rates": list(rates), "seed": seed, "accuracy_inside_L": {str(k): v for k, v in table.items()},
            "mean": {str(k): v for k, v in means.items()}, "best": max(means, key=means.get)}
