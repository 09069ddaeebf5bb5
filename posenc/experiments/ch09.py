"""Chapter 9's experiment: rotary as today's models vary it, on chapter 8's text, read at 1, 2, 4 and 8 times
the training length.

It builds on chapter 8's (``posenc.experiments.ch08.TextExperiment``: the same text, model, budget, seeds and
protocols) and trains, for every seed, the same weights with six position methods of
``posenc.lib.rotary_variants``:

* ``"none"`` and ``"rope"``: as in chapter 8 (for one seed, the very runs of ``results/ch08.json``);
* ``"partial"``: rotary on the first quarter of each head (GPT-NeoX's ``rotary_pct`` 0.25);
* ``"p_rope"``: p-RoPE keeping the fastest quarter of the pairs turning (p = 0.25), and ``"p_rope_075"``, the
  fastest three quarters (p = 0.75), the ablation that says whether what p-RoPE costs comes from stopping
  too many pairs;
* the two variants that turn two pairs, ``"partial"`` and ``"p_rope"``, are also read with only their
  fastest pair turning (``fastest_only``, the other stopped, without training again): the ablation that
  says how much each needs its second pair, in and beyond L;
* ``"irope"``: Llama 4's layout at two layers: rotary in the first, no position in the second. It is read as
  trained (``nonoverlapping``, ``sliding``) and twice more, without training again: with its rotary layer
  attending within chunks of L (``chunked``, Llama 4's ``attention_chunk_size`` at our scale; at L itself
  nothing changes) and with Llama 4's query temperature in the layer without position as well
  (``chunked_temperature``, floor_scale = L, attn_scale 0.1)::

    python -m posenc.experiments run ch09 --out results/ch09.json                     # 3 seeds in 2 processes
    python -m posenc.experiments replicate ch09 --out results/ch09_replication.json   # 3 held-out seeds
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from posenc.experiments.ch08 import HOLDS_WITHIN, TextExperiment, bits_curves, growth
from posenc.experiments.summaries import LABELS, fmt, markdown_table
from posenc.lib import rotary_variants as rv
from posenc.lib.attention import RotaryPosition
from posenc.lib.models import TinyTransformer
from posenc.lib.rotary_analysis import unrotated_copy
from posenc.lib.reproducibility import clearly_above, clearly_apart, clearly_below, seed_torch
from posenc.lib.textlm import VOCAB_SIZE

KINDS = ("none", "rope", "partial", "p_rope", "p_rope_075", "irope")
READINGS = ("chunked", "chunked_temperature")           # the extra readings of "irope"
TWO_PAIRS = ("partial", "p_rope")                        # read again with their fastest pair only
KIND_LABELS = {**LABELS, "partial": "partial rotary (1/4)", "p_rope": "p-RoPE (p = 0.25)",
               "p_rope_075": "p-RoPE (p = 0.75)", "irope": "rotary + no position (iRoPE)"}


@dataclass(frozen=True)
class TodayExperiment(TextExperiment):
    """Chapter 9's runs: chapter 8's set-up with the rotary variants of today's models."""

    kinds: tuple[str, ...] = KINDS
    fraction: float = 0.25              # partial rotary: the turned share of each head
    p: float = 0.25                     # p-RoPE: the share of pairs that keep turning
    p_ablation: float = 0.75
    nope_interval: int = 2              # Llama 4's rule at two layers: layer 1 has no position
    attn_scale: float = 0.1             # Llama 4's temperature, with floor_scale = train_length

    def position(self, kind: str):
        """The position method of one kind: a name the model builds, or a module of rotary_variants."""
        d_head = self.d_model // self.n_heads
        if kind == "partial":
            return RotaryPosition(d_head, fraction=self.fraction)
        if kind in ("p_rope", "p_rope_075"):
            p = self.p if kind == "p_rope" else self.p_ablation
            return rv.FrequencyRotary(d_head, rv.p_rope_frequencies(d_head, p))
        if kind == "irope":
            layers = rv.llama4_rope_layers(self.n_layers, self.nope_interval)
            return rv.LayerwiseRotary(d_head, self.n_layers, [i for i, turns in enumerate(layers) if turns])
        return kind

    def build(self, kind: str, seed: int) -> TinyTransformer:
        position = self.position(kind)          # no parameters, no random numbers: the weights stay paired
        seed_torch(seed)
        return TinyTransformer(VOCAB_SIZE, self.d_model, self.n_heads, self.n_layers, position=position,
                               max_len=max(self.eval_lengths), causal=True)

    def measure(self, kind: str, model) -> dict[str, np.ndarray]:
        """Bits per character at each length, per protocol; for the two-pair variants also with their fastest
        pair turning alone, for "irope" also read in chunks of L, and in chunks with the temperature
        (these three in non-overlapping windows)."""
        curves = super().measure(kind, model)
        if kind in TWO_PAIRS:
            turning = torch.nonzero(model.position.omega > 0).flatten().tolist()
            curves["fastest_only"] = self.curve(unrotated_copy(model, turning[1:]))
        if kind == "irope":
            for reading, temperature in zip(READINGS, (None, (self.train_length, self.attn_scale))):
                model.position.reading(chunk=self.train_length, temperature=temperature)
                curves[reading] = self.curve(model)
            model.position.reading()
        return curves

    def report(self, runs) -> str:
        return markdown_table(["method", "reading"] + [f"{n} bytes" for n in self.eval_lengths], today_table(runs, self))


def today_table(runs, config: TodayExperiment) -> list[list[str]]:
    """Rows 'method, reading, mean ± std at each length' (bits per character, non-overlapping windows)."""
    rows = []
    for kind in config.kinds:
        extra = READINGS if kind == "irope" else ("fastest_only",) if kind in TWO_PAIRS else ()
        for reading in ("nonoverlapping",) + extra:
            curves = bits_curves(runs, kind, reading)
            rows.append([KIND_LABELS.get(kind, kind), reading] + [fmt(curves[:, j], 3) for j in range(curves.shape[1])])
    return rows


def fastest_only_change(runs, kind: str) -> np.ndarray:
    """(n_seeds, n_lengths): bits per character with only the fastest pair turning minus as trained."""
    return bits_curves(runs, kind, "fastest_only") - bits_curves(runs, kind)


def temperature_change(runs, index: int = -1) -> np.ndarray:
    """Per seed, what Llama 4's temperature changes in iRoPE's chunked reading at eval_lengths[index]."""
    return bits_curves(runs, "irope", "chunked_temperature")[:, index] - bits_curves(runs, "irope", "chunked")[:, index]


def today_directions(runs, config: TodayExperiment) -> dict[str, bool]:
    """Every direction chapter 9 asserts about a sweep, each with a margin against the seed spread
    (posenc.lib.reproducibility); "within" claims are two-sided. The notebook calls it on results/ch09.json
    and on the replication with new seeds, and tests/test_experiments_ch09.py on both."""
    at_8l = len(config.eval_factors) - 1
    at_l = {kind: bits_curves(runs, kind)[:, 0] for kind in config.kinds}
    lost = {kind: growth(runs, kind, at_8l) for kind in config.kinds}
    chunked = growth(runs, "irope", at_8l, "chunked")
    within = HOLDS_WITHIN

    def holds(values) -> bool:
        return clearly_below(values, within) and clearly_above(values, -within)

    return {
        "rotary gets worse past L": clearly_above(lost["rope"], 0.0),
        "p-RoPE (p = 0.25) gets worse past L": clearly_above(lost["p_rope"], 0.0),
        "at 8L p-RoPE (p = 0.25) has lost less than rotary": clearly_apart(lost["rope"], lost["p_rope"]),
        "at 8L partial rotary has lost less than p-RoPE (p = 0.25), which turns as many pairs":
            clearly_apart(lost["p_rope"], lost["partial"]),
        "at L partial rotary is worse than rotary": clearly_apart(at_l["partial"], at_l["rope"]),
        f"at L p-RoPE (p = 0.75) is within {within} bits of rotary": holds(at_l["p_rope_075"] - at_l["rope"]),
        "iRoPE read whole gets worse past L": clearly_above(lost["irope"], 0.0),
        "at 8L iRoPE read in chunks of L has lost less than read whole": clearly_apart(lost["irope"], chunked),
        f"Llama 4's temperature moves iRoPE's chunked reading at 8L by less than {within} bits":
            holds(temperature_change(runs)),
        "at L partial rotary needs its slow pair: stopped, the bits rise":
            clearly_above(fastest_only_change(runs, "partial")[:, 0], 0.0),
        "at L p-RoPE (p = 0.25) needs its second pair: stopped, the bits rise":
            clearly_above(fastest_only_change(runs, "p_rope")[:, 0], 0.0),
        "without position the model is the worst at L": all(
            clearly_apart(at_l["none"], at_l[kind]) for kind in config.kinds if kind != "none"),
    }
