"""Chapter 5's experiment: every position method, absolute or inside the attention, at the training length.

It is chapter 4's experiment (``posenc.experiments.ch04.LengthExperiment``: its task, model, training and
pairing) with position inside the attention too, measured at the training length only (what happens beyond
it is chapter 7's subject)::

    python -m posenc.experiments run ch05 --out results/ch05.json      # 10 seeds, a few minutes

Chapter 6's experiment (``posenc.experiments.ch06``) extends this one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posenc.experiments.ch04 import LengthExperiment
from posenc.experiments.summaries import LABELS, fmt, markdown_table, steps_of
from posenc.lib.models import TinyTransformer
from posenc.lib.relative import alibi_slopes

STEEP_ALIBI = "alibi-steep"      # ALiBi whose heads take the steepest slopes of an 8-head model (1/2, 1/4, ...)
INSIDE_KINDS = ("none", "sinusoidal", "shaw", "t5", "alibi", STEEP_ALIBI)


@dataclass(frozen=True)
class InsideLengthExperiment(LengthExperiment):
    """Chapter 4's task, model and training with position inside the attention too, measured at the
    training length only. For one seed every method starts from the same non-positional weights and sees
    the same batches (``LengthExperiment.build``).

    Besides the methods of ``posenc.lib.attention.METHODS`` it knows ``"alibi-steep"``: ALiBi whose heads
    take the steepest slopes of an 8-head model (1/2, 1/4, ... instead of the paper's rule for this head
    count, 2^(-8h/n_heads), which gives two heads 1/16 and 1/256).
    """

    kinds: tuple[str, ...] = INSIDE_KINDS
    eval_length: int = 16          # = train_length: beyond it is chapter 7's question

    def build(self, kind: str, seed: int) -> TinyTransformer:
        if kind != STEEP_ALIBI:
            return super().build(kind, seed)
        model = super().build("alibi", seed)
        if self.n_heads > 8:
            raise ValueError(f"{STEEP_ALIBI} borrows the slopes of 8 heads; this model has {self.n_heads}")
        model.position.slopes = alibi_slopes(8)[: self.n_heads].to(model.position.slopes)
        return model

    def measure(self, kind: str, model) -> dict[str, np.ndarray]:
        return {}

    def report(self, runs) -> str:
        return markdown_table(*inside_table(runs, self.kinds))


def inside_table(runs, kinds) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): per method, accuracy at the training length and steps to loss < 0.1, mean ± std
    over seeds (Run objects or saved records)."""
    rows = []
    for kind in kinds:
        mine = [r for r in runs if _field(r, "kind") == kind]
        accuracy = np.array([_field(r, "accuracy") for r in mine])
        rows.append([LABELS[kind], fmt(accuracy, 3), fmt(np.array([steps_of(r) for r in mine]), 0)])
    return ["method", "accuracy at L", "steps to loss < 0.1"], rows


def _field(run, name: str):
    """A field of a Run or of a saved record."""
    return getattr(run, name) if hasattr(run, name) else run[name]
