"""Chapter 10's experiment: a model trained on one grid of tokens and read on grids of other sizes.

    python -m posenc.experiments run ch10 --out results/ch10.json                   # 10 seeds, 2 processes
    python -m posenc.experiments replicate ch10 --out results/ch10_replication.json # seeds 100..104

The task is ``posenc.lib.multidim.GridShift``: a grid of random tokens in raster order, and at every cell the
token one row up. The model is the course's ``TinyTransformer`` (one layer, bidirectional attention, as in a
ViT), trained on 6 x 6 grids and read on grids of 4 x 4 to 12 x 12 cells, each encoding told the grid it reads
(``posenc.lib.multidim.set_grid``; the learned table is resized to it as ViT resizes its table). The kinds:

* "none": no position at all;
* "sinusoidal_2d": the 2-D sinusoidal table, half for x and half for y, computed for every grid;
* "learned_2d": a learned table of one row per cell of the training grid, resized (bicubic) to other grids.
  It starts at the sinusoidal table's scale, chapter 4's control (``ch04.pe_entry_rms``): with the small
  initialisation of ViT it learns the task too slowly for a fair comparison in a few hundred steps;
* "raster_rope": chapter 6's 1-D rotary of the raster index (base 10 000);
* "axial_rope": RoPE-Axial with Heo et al.'s base 100;
* "axial_rope_base10": the same at base 10, the base RoPE-Mixed starts from (a control);
* "axial_rope_learned": mixed rotary's learned frequency matrix, one per head, started from the axial
  frequencies at base 100 instead of a random direction at base 10. The whole matrix is a parameter, the zero
  off-axis entries included, so training turns pairs off the axes: it is not axial once trained, and it
  differs from "mixed_rope" in where it starts (on the axes, base 100), not in whether it may mix. A control
  that learns only the on-axis magnitudes would be needed to separate learning the frequencies from mixing the
  axes (the kind's key is kept so that the committed results still read);
* "mixed_rope": RoPE-Mixed, learned frequency vectors in any direction, one matrix per head (shared by the
  layers; the model has one).

For one seed every kind starts from the same non-positional weights and sees the same batches; the position
modules draw from a stream of their own. ``directions`` is every claim the chapter makes about a sweep, each
with its margin (``posenc.lib.reproducibility``): the notebook asserts it on ``results/ch10.json`` and on the
replication with new seeds, and ``tests/test_experiments_ch10.py`` on both. It builds on chapter 4's experiment
for one thing only, the learned table's starting scale (``ch04.pe_entry_rms``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from posenc.experiments.ch04 import pe_entry_rms
from posenc.experiments.runner import Experiment
from posenc.experiments.summaries import fmt, markdown_table, records_of
from posenc.lib import multidim as md
from posenc.lib.models import TinyTransformer, TrainConfig, evaluate
from posenc.lib.reproducibility import REPLICATION_SIZE, clearly_above, clearly_apart, clearly_below, seed_torch

KINDS = ("none", "sinusoidal_2d", "learned_2d", "raster_rope", "axial_rope", "axial_rope_base10",
         "axial_rope_learned", "mixed_rope")
LABELS = {"none": "no encoding", "sinusoidal_2d": "2-D sinusoidal table", "learned_2d": "learned table, resized",
          "raster_rope": "1-D rotary, raster order", "axial_rope": "axial rotary (base 100)",
          "axial_rope_base10": "axial rotary, base 10", "axial_rope_learned": "mixed rotary, started axial (base 100)",
          "mixed_rope": "mixed rotary (learned)"}
TABLES = ("sinusoidal_2d", "learned_2d")


@dataclass(frozen=True)
class GridExperiment(Experiment):
    """Everything that defines chapter 10's runs; saved beside the results."""

    kinds: tuple[str, ...] = KINDS
    vocab_size: int = 16
    train_grid: tuple[int, int] = (6, 6)
    test_grids: tuple[tuple[int, int], ...] = ((4, 4), (6, 6), (9, 9), (12, 12), (6, 12))
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 1
    steps: int = 400
    batch_size: int = 32
    lr: float = 3e-3
    n_eval: int = 256
    eval_seed: int = 12345         # disjoint from the training seeds
    seeds: tuple[int, ...] = (0, 1, 2)

    full_seeds = 10
    processes = 2
    replication_size = REPLICATION_SIZE     # the size the margins of posenc.lib.reproducibility assume

    def __post_init__(self):
        # A file stores the grids as lists: back to tuples, so that a loaded configuration equals the chapter's.
        object.__setattr__(self, "train_grid", tuple(self.train_grid))
        object.__setattr__(self, "test_grids", tuple(tuple(g) for g in self.test_grids))
        unknown = set(self.kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds {sorted(unknown)}; chapter 10 compares {KINDS}")
        if tuple(self.train_grid) not in map(tuple, self.test_grids):
            raise ValueError("the test grids must include the training grid")

    def task(self) -> md.GridShift:
        return md.GridShift(self.vocab_size, *self.train_grid)

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, lr=self.lr,
                           train_lengths=(self.task().length,), seed=seed)

    def position_module(self, kind: str):
        """The kind's position module (None: no position; "rope": chapter 6's, built by the model)."""
        d_head, grid = self.d_model // self.n_heads, self.train_grid
        if kind == "sinusoidal_2d":
            return md.SinusoidalGridTable(self.d_model, grid)
        if kind == "learned_2d":
            return md.LearnedGridTable(self.d_model, grid, init_std=pe_entry_rms(self.d_model))
        if kind in ("axial_rope", "axial_rope_base10"):
            return md.GridRotaryPosition.axial(d_head, self.n_heads, grid,
                                               base=md.MIXED_BASE if kind == "axial_rope_base10" else md.AXIAL_BASE)
        if kind == "axial_rope_learned":
            return md.GridRotaryPosition(md.axial_frequencies(d_head).expand(self.n_heads, -1, -1), grid, learned=True)
        if kind == "mixed_rope":
            return md.GridRotaryPosition.mixed(d_head, self.n_heads, grid)
        return {"none": None, "raster_rope": "rope"}[kind]

    def build(self, kind: str, seed: int) -> TinyTransformer:
        with torch.random.fork_rng():               # the position module draws from a stream of its own
            seed_torch(10_000 + seed)
            position = self.position_module(kind)
        seed_torch(seed)
        shape = dict(vocab_size=self.vocab_size, d_model=self.d_model, n_heads=self.n_heads, n_layers=self.n_layers)
        if kind in TABLES:
            return TinyTransformer(**shape, positional=position)
        if position is None:
            return TinyTransformer(**shape, combine="none")
        return TinyTransformer(**shape, position=position)

    def read(self, model, grid) -> float:
        """Accuracy on fresh grids of another size, the model told the grid first (and set back after)."""
        md.set_grid(model, *grid)
        try:
            return evaluate(model, self.task().on(*grid), grid[0] * grid[1], self.n_eval, self.eval_seed)
        finally:
            md.set_grid(model, *self.train_grid)

    def accuracy(self, model) -> float:
        return self.read(model, self.train_grid)

    def measure(self, kind: str, model) -> dict[str, np.ndarray]:
        """Accuracy on every test grid, in the order of ``test_grids`` (saved as "by_grid")."""
        return {"by_grid": np.array([self.read(model, grid) for grid in self.test_grids])}

    def report(self, runs) -> str:
        return markdown_table(*grid_table(runs, self))


def grid_name(grid) -> str:
    return f"{grid[0]} x {grid[1]}"


def grid_accuracy(runs, kind: str, grid, config: GridExperiment) -> np.ndarray:
    """Accuracy of one kind on one grid, one value per seed in the order of the runs."""
    index = [tuple(g) for g in config.test_grids].index(tuple(grid))
    return np.array([r["by_position"]["by_grid"][index] for r in records_of(runs) if r["kind"] == kind],
                    dtype=np.float64)


def grid_table(runs, config: GridExperiment, digits: int = 3):
    """(headers, rows): mean ± std over seeds of every kind on every grid (the value itself for one seed)."""
    kinds = [k for k in config.kinds if any(r["kind"] == k for r in records_of(runs))]
    headers = ["encoding"] + [grid_name(g) + (" (trained)" if tuple(g) == tuple(config.train_grid) else "")
                              for g in config.test_grids]
    def shown(values):          # one seed: its value (a spread of one is no spread)
        return f"{values[0]:.{digits}f}" if values.size == 1 else fmt(values, digits)
    rows = [[LABELS[k]] + [shown(grid_accuracy(runs, k, g, config)) for g in config.test_grids] for k in kinds]
    return headers, rows


LARGER = ((9, 9), (12, 12), (6, 12))
# "Holds" on a grid: accuracy above this, with the margin.
HOLDS = 0.9
# Without position the model stays below this (chance is 1/16; it can name the grid's commonest token).
NO_POSITION_BELOW = 0.2


def directions(runs, config: GridExperiment) -> dict[str, bool]:
    """Every direction chapter 10 asserts about a sweep, each with its margin against the seed spread."""
    def acc(kind, grid):
        return grid_accuracy(runs, kind, grid, config)

    trained, smaller = tuple(config.train_grid), (4, 4)
    others = [tuple(g) for g in config.test_grids if tuple(g) != trained]
    learners = [k for k in config.kinds if k != "none"]
    return {
        f"every encoding learns the task on the training grid (above {HOLDS})": all(
            clearly_above(acc(k, trained), HOLDS) for k in learners),
        f"without position the model stays below {NO_POSITION_BELOW}": clearly_below(acc("none", trained),
                                                                                  NO_POSITION_BELOW),
        "raster-order rotary reads every other grid worse than no position at all": all(
            clearly_apart(acc("none", g), acc("raster_rope", g)) for g in others),
        "raster-order rotary is at chance on every other grid, on every seed": all(
            (acc("raster_rope", g) < 2 * config.task().chance).all() for g in others),
        f"mixed rotary holds above {HOLDS} on every grid": all(clearly_above(acc("mixed_rope", g), HOLDS)
                                                          for g in config.test_grids),
        "mixed rotary beats axial rotary on every larger grid": all(
            clearly_apart(acc("mixed_rope", g), acc("axial_rope", g)) for g in LARGER),
        "axial rotary loses accuracy on the larger grids": all(
            clearly_apart(acc("axial_rope", trained), acc("axial_rope", g)) for g in LARGER),
        "axial rotary beats raster order at 9 x 9": clearly_apart(acc("axial_rope", (9, 9)), acc("raster_rope", (9, 9))),
        "mixed rotary started axial beats fixed axial rotary at 9 x 9": clearly_apart(
            acc("axial_rope_learned", (9, 9)), acc("axial_rope", (9, 9))),
        "the resized learned table loses accuracy on every other grid": all(
            clearly_apart(acc("learned_2d", trained), acc("learned_2d", g)) for g in others),
        "the resized learned table reads the wider grid better than the 9 x 9 grid": clearly_apart(
            acc("learned_2d", (6, 12)), acc("learned_2d", (9, 9))),
        "on the smaller grid the 2-D sinusoidal table and axial rotary hold": clearly_above(
            acc("sinusoidal_2d", smaller), 0.95) and clearly_above(acc("axial_rope", smaller), 0.95),
        "on the smaller grid the resized table is worse than the 2-D sinusoidal table": clearly_apart(
            acc("sinusoidal_2d", smaller), acc("learned_2d", smaller)),
        "the 2-D sinusoidal table loses accuracy on every larger grid": all(
            clearly_apart(acc("sinusoidal_2d", trained), acc("sinusoidal_2d", g)) for g in LARGER),
    }
