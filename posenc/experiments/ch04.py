"""Chapter 4's experiment: learned vs sinusoidal, inside and beyond the training length.

No encoding, the sinusoidal table and a learned table on ``ShiftedCopy``, read inside and beyond the training
length, with a control: a learned table that starts at the sinusoidal table's scale. The chapter runs a
reduced sweep (3 seeds) while it executes; the full sweep runs from the command line::

    python -m posenc.experiments run ch04 --out results/ch04.json            # 10 seeds, a few minutes
    python -m posenc.experiments run ch04 --out /tmp/quick.json --seeds 2    # a quick look

Chapters 5 and 6 build on this experiment: their classes (``posenc.experiments.ch05``, ``ch06``) subclass
:class:`LengthExperiment` and keep its task, model, training and pairing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from posenc.experiments.runner import Experiment
from posenc.experiments.summaries import LABELS, bin_means, fmt, markdown_table
from posenc.lib.attention import METHODS
from posenc.lib.encoding import sinusoidal_encoding
from posenc.lib.models import TinyTransformer, TrainConfig, accuracy_by_position, evaluate
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.reproducibility import seed_torch
from posenc.lib.tasks import ShiftedCopy

# "learned_pe_scale" is the control for the learned table's small initialisation: the same table, drawn
# from the same random numbers, but with entries as large (root mean square) as the sinusoidal table's.
ENCODINGS = ("none", "sinusoidal", "learned", "learned_pe_scale")
LEARNED = ("learned", "learned_pe_scale")


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
            seed_torch(seed)
            return TinyTransformer(self.vocab_size, self.d_model, self.n_heads, self.n_layers, position=kind,
                                   max_len=self.max_len, causal=self.causal)
        init_std = pe_entry_rms(self.d_model) if kind == "learned_pe_scale" else self.learned_init_std
        with torch.random.fork_rng():                 # the positional module draws from its own stream
            seed_torch(10_000 + seed)
            if kind == "none":
                positional = None
            elif kind == "sinusoidal":
                positional = SinusoidalPositionalEncoding(self.d_model, self.max_len)
            else:
                positional = LearnedPositionalEmbedding(self.max_len, self.d_model, init_std=init_std)
        seed_torch(seed)
        return TinyTransformer(self.vocab_size, self.d_model, self.n_heads, self.n_layers,
                               positional=positional, combine="none" if kind == "none" else "add",
                               causal=self.causal)

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


def pe_entry_rms(d_model: int, n_positions: int = 64) -> float:
    """Root mean square of the sinusoidal table's entries: 1/sqrt(2) for an even width (sin^2 + cos^2 = 1)."""
    return float(np.sqrt(np.mean(sinusoidal_encoding(n_positions, d_model) ** 2)))


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
