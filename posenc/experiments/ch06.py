"""Chapter 6's experiment: rotary attention against every position method of the course, inside the
training length.

It is chapter 5's comparison (``posenc.experiments.ch05.InsideLengthExperiment``, itself chapter 4's
experiment with position inside the attention) for every method, rotary included, and is summarised with
chapter 5's table (``ch05.inside_table``)::

    python -m posenc.experiments run ch06 --out results/ch06.json
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc.experiments.ch04 import LengthExperiment
from posenc.experiments.ch05 import InsideLengthExperiment
from posenc.lib.attention import METHODS


@dataclass(frozen=True)
class InsideExperiment(InsideLengthExperiment):
    """Chapter 5's comparison at the training length for every position method of the course, rotary
    included, with 200 training steps: the first 200 of chapter 4's 300 (same seeds, same batches), enough
    for every method that gets there."""

    kinds: tuple[str, ...] = METHODS
    steps: int = 200
    eval_length: int = LengthExperiment.eval_length       # unused (nothing is read past L); as in results/ch06.json
