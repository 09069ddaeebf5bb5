"""Chapter 8's experiment: byte-level language models on real text, read at 1, 2, 4 and 8 times the training
length.

The corpus, the task and the two evaluation protocols (non-overlapping and sliding windows) are what the
chapter teaches: ``posenc.lib.textlm``. :class:`TextExperiment` trains the course's ``TinyTransformer`` with
every position method at one length and measures bits per character with both protocols; it builds on no
other chapter's experiment. Besides the seven methods of ``posenc.lib.attention.METHODS`` it trains three
arms that vary one setting of a relative method (``ARMS``):

* ``"alibi-scaled"``: ALiBi with its slopes multiplied by ``alibi_reference_length / train_length``
  (512 / 32 = 16), so that each head's penalty at distance L is what the paper's slopes give at the paper's
  L = 512 (``posenc.lib.textlm.length_scaled_alibi_slopes``): a design choice the chapter states, not the
  paper's rule, which keeps the same slopes at every L;
* ``"t5-32-32"`` and ``"t5-16-16"``: T5's bias with 32 buckets up to a distance of 32 and 16 buckets up to
  16, so that training at L = 32 reaches every bucket a longer reading uses (the default, ``"t5"``, has 32
  buckets up to 128).

::

    python -m posenc.experiments run ch08 --out results/ch08.json                     # 3 seeds in 2 processes
    python -m posenc.experiments replicate ch08 --out results/ch08_replication.json   # 3 held-out seeds
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posenc.experiments.published import PUBLISHED
from posenc.experiments.runner import Experiment
from posenc.experiments.summaries import LABELS, fmt, markdown_table, records_of
from posenc.lib.attention import METHODS
from posenc.lib.models import TinyTransformer, TrainConfig
from posenc.lib.reproducibility import clearly_above, clearly_apart, clearly_below, seed_torch
from posenc.lib.textlm import (VOCAB_SIZE, TextTask, bits_per_character, corpus_split, length_scaled_alibi_slopes,
                               next_byte_accuracy, nonoverlapping_cross_entropy, sliding_cross_entropy)

PROTOCOLS = ("nonoverlapping", "sliding")

SCALED_ALIBI = "alibi-scaled"
# T5 arms: kind -> options of posenc.lib.attention.T5Position (the default "t5" has 32 buckets up to 128).
T5_ARMS = {"t5-32-32": {"num_buckets": 32, "max_distance": 32}, "t5-16-16": {"num_buckets": 16, "max_distance": 16}}
ARMS = (SCALED_ALIBI, *T5_ARMS)
TEXT_KINDS = METHODS + ARMS


@dataclass(frozen=True)
class TextExperiment(Experiment):
    """Chapter 8's runs: every position method, trained at ``train_length`` bytes, read at multiples of it."""

    kinds: tuple[str, ...] = TEXT_KINDS
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    train_length: int = 32                 # L, in bytes
    steps: int = 600
    batch_size: int = 32
    lr: float = 3e-3
    eval_factors: tuple[int, ...] = (1, 2, 4, 8)
    eval_bytes: int = 32768                # bytes of the validation text every reading scores: bytes 1 .. 32768,
                                           # the first 32 KiB of configparser.py, the same at every length and arm
    alibi_reference_length: int = PUBLISHED["press2022"]["train_length"]   # "alibi-scaled": slopes x 512 / L
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

    @property
    def alibi_slope_factor(self) -> float:
        """What the arm "alibi-scaled" multiplies ALiBi's slopes by: the paper's L over ours."""
        return self.alibi_reference_length / self.train_length

    def build(self, kind: str, seed: int) -> TinyTransformer:
        """A model of one kind (a method of METHODS or an arm of ARMS); for one seed every kind starts from the
        same weights apart from its position method's own."""
        method = "alibi" if kind == SCALED_ALIBI else "t5" if kind in T5_ARMS else kind
        seed_torch(seed)
        model = TinyTransformer(VOCAB_SIZE, self.d_model, self.n_heads, self.n_layers, position=method,
                                max_len=max(self.eval_lengths), causal=True, position_options=T5_ARMS.get(kind))
        if kind == SCALED_ALIBI:
            slopes = length_scaled_alibi_slopes(self.n_heads, self.train_length, self.alibi_reference_length)
            model.position.slopes = slopes.to(model.position.slopes)
        return model

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


def bits_table(runs, config: TextExperiment, protocols=PROTOCOLS, kinds=None) -> list[list[str]]:
    """Rows 'method, protocol, mean ± std at each length' (bits per character), for ``kinds`` (default: all
    of the configuration's)."""
    rows = []
    for protocol in protocols:
        for kind in config.kinds if kinds is None else kinds:
            curves = bits_curves(runs, kind, protocol)
            rows.append([LABELS.get(kind, kind), protocol] + [fmt(curves[:, j], 3) for j in range(curves.shape[1])])
    return rows


def growth(runs, kind: str, factor_index: int, protocol: str = "nonoverlapping") -> np.ndarray:
    """Per seed, bits per character at eval_lengths[factor_index] minus bits at L (positive: worse)."""
    curves = bits_curves(runs, kind, protocol)
    return curves[:, factor_index] - curves[:, 0]


def holds(change, within: float | None = None) -> bool:
    """A change in bits per character that 'holds': inside (-within, +within), with the margin on both sides."""
    within = HOLDS_WITHIN if within is None else within
    return clearly_below(change, within) and clearly_above(change, -within)


def text_directions(runs, config: TextExperiment) -> dict[str, bool]:
    """Every direction chapter 8 asserts about a sweep, each with a margin against the seed spread
    (posenc.lib.reproducibility): the notebook calls it on results/ch08.json and on the replication with new
    seeds, and tests/test_experiments_ch08.py on both, so the claims and their checks cannot drift apart.
    A method that 'holds' changes by less than HOLDS_WITHIN bits either way (:func:`holds`); one that
    'gets worse' or 'reads ... better' clears zero."""
    at_2l, at_8l = config.eval_factors.index(2), len(config.eval_factors) - 1
    at_l = {kind: bits_curves(runs, kind)[:, 0] for kind in config.kinds}
    worse = {kind: growth(runs, kind, at_8l) for kind in config.kinds}
    worse_2l = {kind: growth(runs, kind, at_2l) for kind in config.kinds}
    sliding = {kind: growth(runs, kind, at_8l, "sliding") for kind in config.kinds}
    within = HOLDS_WITHIN
    return {
        # The paper's four methods and the learned table, as the paper's Figure 1 reads them
        "the sinusoidal table gets worse past L": clearly_above(worse["sinusoidal"], 0.0),
        "the learned table gets worse past L": clearly_above(worse["learned"], 0.0),
        "rotary gets worse already at 2L": clearly_above(worse_2l["rope"], 0.0),
        "at 2L rotary has lost less than the sinusoidal table": clearly_apart(worse_2l["sinusoidal"], worse_2l["rope"]),
        "T5's bias (32 buckets to 128) gets worse already at 2L": clearly_above(worse_2l["t5"], 0.0),
        "at 8L T5's bias has lost less than rotary": clearly_apart(worse["rope"], worse["t5"]),
        f"ALiBi (the paper's slopes) reads 8L within {within} bits of L": holds(worse["alibi"]),
        "at 8L ALiBi has lost less than rotary": clearly_apart(worse["rope"], worse["alibi"]),
        **{f"at L ALiBi with the paper's slopes is behind {LABELS[kind]}": clearly_apart(at_l["alibi"], at_l[kind])
           for kind in ALIBI_TRAILS},
        # The two methods the paper leaves out of its figure, and what they teach
        "without position information the model is the worst at L": all(
            clearly_apart(at_l["none"], at_l[kind]) for kind in config.kinds if kind != "none"),
        "without position information the model gets worse past L": clearly_above(worse["none"], 0.0),
        "Shaw's clipped offsets read 8L better than L": clearly_below(worse["shaw"], 0.0),
        "with sliding windows Shaw's clipped offsets read 8L worse than L": clearly_above(sliding["shaw"], 0.0),
        "ALiBi (the paper's slopes) reads 2L a little better than L": clearly_below(worse_2l["alibi"], 0.0),
        # ALiBi's slopes scaled to L (design choice: x alibi_reference_length / L)
        "at L scaled slopes beat the paper's slopes": clearly_apart(at_l["alibi"], at_l[SCALED_ALIBI]),
        "at L ALiBi with scaled slopes beats the sinusoidal table": clearly_apart(at_l["sinusoidal"], at_l[SCALED_ALIBI]),
        "ALiBi with scaled slopes reads 2L better than L": clearly_below(worse_2l[SCALED_ALIBI], 0.0),
        "ALiBi with scaled slopes reads 8L better than L": clearly_below(worse[SCALED_ALIBI], 0.0),
        # T5's buckets, every one reached in training
        "at 2L T5 with 32 buckets to 32 has lost less than with 32 to 128": clearly_apart(worse_2l["t5"],
                                                                                        worse_2l["t5-32-32"]),
        f"T5 with 16 buckets to 16 reads 2L within {within} bits of L": holds(worse_2l["t5-16-16"]),
        **{f"at 8L T5 with {LABELS[kind].removeprefix('T5, ')} has lost less than with 32 to 128":
           clearly_apart(worse["t5"], worse[kind]) for kind in T5_ARMS},
        "T5 with 32 buckets to 32 gets worse at 8L": clearly_above(worse["t5-32-32"], 0.0),
        "T5 with 16 buckets to 16 gets worse at 8L": clearly_above(worse["t5-16-16"], 0.0),
        # Sliding windows: every scored byte has context at every length
        "with sliding windows ALiBi (the paper's slopes) reads 8L worse than L": clearly_above(sliding["alibi"], 0.0),
        f"with sliding windows ALiBi with scaled slopes reads 8L within {within} bits of L": holds(sliding[SCALED_ALIBI]),
    }


# "Holds" for a method read longer than trained: its bits per character change by less than this, either way.
HOLDS_WITHIN = 0.05
# The methods that ALiBi with the paper's slopes clearly trails at L in the committed files: every one but the
# model without position information (and ALiBi itself).
ALIBI_TRAILS = tuple(kind for kind in METHODS if kind not in ("none", "alibi"))
