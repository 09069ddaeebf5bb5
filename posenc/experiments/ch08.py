"""Chapter 8's experiment: byte-level language models on real text, read at 1, 2, 4 and 8 times the training
length.

The corpus, the task and the two evaluation protocols (non-overlapping and sliding windows) are what the
chapter teaches: ``posenc.lib.textlm``. :class:`TextExperiment` trains the course's ``TinyTransformer`` with
every position method at one length and measures bits per character with both protocols; it builds on no
other chapter's experiment::

    python -m posenc.experiments run ch08 --out results/ch08.json                     # 3 seeds in 2 processes
    python -m posenc.experiments replicate ch08 --out results/ch08_replication.json   # 3 held-out seeds
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posenc.experiments.runner import Experiment
from posenc.experiments.summaries import LABELS, fmt, markdown_table, records_of
from posenc.lib.attention import METHODS
from posenc.lib.models import TinyTransformer, TrainConfig
from posenc.lib.reproducibility import clearly_above, clearly_apart, clearly_below, seed_torch
from posenc.lib.textlm import (VOCAB_SIZE, TextTask, bits_per_character, corpus_split, next_byte_accuracy,
                               nonoverlapping_cross_entropy, sliding_cross_entropy)

PROTOCOLS = ("nonoverlapping", "sliding")


@dataclass(frozen=True)
class TextExperiment(Experiment):
    """Chapter 8's runs: every position method, trained at ``train_length`` bytes, read at multiples of it."""

    kinds: tuple[str, ...] = METHODS
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    train_length: int = 32                 # L, in bytes
    steps: int = 600
    batch_size: int = 32
    lr: float = 3e-3
    eval_factors: tuple[int, ...] = (1, 2, 4, 8)
    eval_bytes: int = 16384                # bytes of the validation text every protocol scores
    seeds: tuple[int, ...] = (0,)

    full_seeds = 3
    processes = 2

    @property
    def eval_lengths(self) -> tuple[int, ...]:
        return tuple(self.train_length * factor for factor in self.eval_factors)

    def task(self) -> TextTask:
        return TextTask(corpus_split()[0])

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, lr=self.lr,
                           train_lengths=(self.train_length,), seed=seed)

    def build(self, kind: str, seed: int) -> TinyTransformer:
        seed_torch(seed)
        return TinyTransformer(VOCAB_SIZE, self.d_model, self.n_heads, self.n_layers, position=kind,
                               max_len=max(self.eval_lengths), causal=True)

    def accuracy(self, model) -> float:
        """Next-byte accuracy on the validation text, read in windows of L."""
        return next_byte_accuracy(model, corpus_split()[1], self.train_length, self.eval_bytes)

    def measure(self, kind: str, model) -> dict[str, np.ndarray]:
        """Bits per character at each evaluation length, one curve per protocol."""
        return {protocol: self.curve(model, protocol) for protocol in PROTOCOLS}

    def curve(self, model, protocol: str = "nonoverlapping") -> np.ndarray:
        """Bits per character of one protocol at each evaluation length."""
        valid = corpus_split()[1]
        if protocol == "nonoverlapping":
            return np.array([bits_per_character(nonoverlapping_cross_entropy(model, valid, n, self.eval_bytes))
                             for n in self.eval_lengths])
        return np.array([bits_per_character(sliding_cross_entropy(model, valid, n, n // 2, self.eval_bytes))
                         for n in self.eval_lengths])

    def report(self, runs) -> str:
        return markdown_table(["method", "protocol"] + [f"{n} bytes" for n in self.eval_lengths],
                              bits_table(runs, self))


def bits_curves(runs, kind: str, protocol: str = "nonoverlapping") -> np.ndarray:
    """(n_seeds, n_lengths) bits per character of one method, one row per seed (in the order of the runs)."""
    return np.array([r["by_position"][protocol] for r in records_of(runs) if r["kind"] == kind], dtype=np.float64)


def bits_table(runs, config: TextExperiment, protocols=PROTOCOLS) -> list[list[str]]:
    """Rows 'method, protocol, mean ± std at each length' (bits per character)."""
    rows = []
    for protocol in protocols:
        for kind in config.kinds:
            curves = bits_curves(runs, kind, protocol)
            rows.append([LABELS.get(kind, kind), protocol] + [fmt(curves[:, j], 3) for j in range(curves.shape[1])])
    return rows


def growth(runs, kind: str, factor_index: int, protocol: str = "nonoverlapping") -> np.ndarray:
    """Per seed, bits per character at eval_lengths[factor_index] minus bits at L (positive: worse)."""
    curves = bits_curves(runs, kind, protocol)
    return curves[:, factor_index] - curves[:, 0]


def text_directions(runs, config: TextExperiment) -> dict[str, bool]:
    """Every direction chapter 8 asserts about a sweep, each with a margin against the seed spread
    (posenc.lib.reproducibility): the notebook calls it on results/ch08.json and on the replication with new
    seeds, and tests/test_experiments_ch08.py on both, so the claims and their checks cannot drift apart."""
    at_2l, at_8l = config.eval_factors.index(2), len(config.eval_factors) - 1
    at_l = {kind: bits_curves(runs, kind)[:, 0] for kind in config.kinds}
    worse = {kind: growth(runs, kind, at_8l) for kind in config.kinds}
    worse_2l = {kind: growth(runs, kind, at_2l) for kind in config.kinds}
    within = HOLDS_WITHIN
    return {
        "the sinusoidal table gets worse past L": clearly_above(worse["sinusoidal"], 0.0),
        "the learned table gets worse past L": clearly_above(worse["learned"], 0.0),
        "rotary gets worse past L": clearly_above(worse["rope"], 0.0),
        "at 2L rotary has lost less than the sinusoidal table": clearly_apart(worse_2l["sinusoidal"], worse_2l["rope"]),
        f"ALiBi reads 8L within {within} bits of L": clearly_below(worse["alibi"], within)
        and clearly_above(worse["alibi"], -within),
        f"Shaw's clipped offsets read 8L no worse than L (by {within} bits)": clearly_below(worse["shaw"], within),
        "at 8L ALiBi has lost less than rotary": clearly_apart(worse["rope"], worse["alibi"]),
        "T5's bias gets worse past L": clearly_above(worse["t5"], 0.0),
        "at 8L T5's bias has lost less than rotary": clearly_apart(worse["rope"], worse["t5"]),
        "without position information the model is the worst at L": all(
            clearly_apart(at_l["none"], at_l[kind]) for kind in config.kinds if kind != "none"),
        "with sliding windows ALiBi gains nothing from 8L": clearly_above(growth(runs, "alibi", at_8l, "sliding"),
                                                                         -within),
    }


# "Holds" for a method read longer than trained: its bits per character change by less than this.
HOLDS_WITHIN = 0.05
