"""Multi-seed experiments, their summaries and their result files.

Chapter 4 (learned vs sinusoidal encodings) trains the same tiny causal Transformer with no positional
encoding, the sinusoidal table and a learned table, on ``ShiftedCopy``, for several seeds; then it reads
longer sequences than it was trained on. The chapter runs a reduced sweep (3 seeds) while it executes;
the full sweep runs from the command line and writes its results, with configuration and seeds, to a
JSON file the chapter can load::

    python -m posenc.lib.experiments ch04 --out results/ch04.json            # 10 seeds, a few minutes
    python -m posenc.lib.experiments ch04 --out /tmp/quick.json --seeds 2    # a quick look

Runs are paired: for one seed every encoding starts from the same token embeddings and encoder weights
and sees the same training batches, so the only difference between them is the positional encoding.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import html
import json
import math
import platform
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import torch
from torch import nn

from posenc.lib.models import TinyTransformer, TrainConfig, accuracy_by_position, evaluate, train
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.tasks import ShiftedCopy
from posenc.paths import RESULTS as RESULTS_DIR     # exists in a clone of the course

ENCODINGS = ("none", "sinusoidal", "learned")
LABELS = {"none": "no encoding", "sinusoidal": "sinusoidal", "learned": "learned"}

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


@dataclass(frozen=True)
class LengthExperiment:
    """Everything that defines chapter 4's runs; saved beside the results."""

    vocab_size: int = 16
    offset: int = 1                # ShiftedCopy: predict the token `offset` places back
    d_model: int = 32
    n_heads: int = 2
    n_layers: int = 2
    causal: bool = True            # decoder-style, like GPT-2 and the NoPE study
    train_length: int = 16         # L: every training sequence has this length
    max_len: int = 64              # rows of the learned table; rows >= train_length never get a gradient
    learned_init_std: float = 0.02
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

    @classmethod
    def from_dict(cls, data: dict) -> "LengthExperiment":
        known = {f.name for f in fields(cls)}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items() if k in known}
        return cls(**values)


@dataclass
class Run:
    """One trained model: its losses, in-distribution accuracy and accuracy at every position."""

    kind: str
    seed: int
    losses: list[float]
    seconds: float
    accuracy: float                                   # at the training length
    by_position: dict[str, np.ndarray]                # "plain", "window" and (learned) "clamp"
    model: nn.Module | None = field(default=None, repr=False)
    initial_table: torch.Tensor | None = field(default=None, repr=False)   # learned only

    def record(self) -> dict:
        """Plain, JSON-ready data (no model)."""
        return {"kind": self.kind, "seed": self.seed, "seconds": round(self.seconds, 3),
                "accuracy": self.accuracy, "final_loss": self.losses[-1],
                "loss_every_10_steps": [float(np.mean(self.losses[i:i + 10])) for i in range(0, len(self.losses), 10)],
                "by_position": {k: [None if math.isnan(x) else float(x) for x in v]
                                for k, v in self.by_position.items()}}


def build_model(kind: str, config: LengthExperiment, seed: int) -> TinyTransformer:
    """The model for one encoding; for a given seed, every kind gets the same non-positional weights."""
    if kind not in ENCODINGS:
        raise ValueError(f"kind must be one of {ENCODINGS}, got {kind!r}")
    with torch.random.fork_rng():                 # the positional module draws from its own stream
        torch.manual_seed(10_000 + seed)
        positional = {"none": None,
                      "sinusoidal": SinusoidalPositionalEncoding(config.d_model, config.max_len),
                      "learned": LearnedPositionalEmbedding(config.max_len, config.d_model,
                                                            init_std=config.learned_init_std)}[kind]
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


def run_one(kind: str, seed: int, config: LengthExperiment, keep_model: bool = True) -> Run:
    """Train one model and measure it inside and beyond the training length."""
    model = build_model(kind, config, seed)
    initial = model.positional.table.detach().clone() if kind == "learned" else None
    task = config.task()
    start = time.perf_counter()
    losses = train(model, task, config.train_config(seed))
    seconds = time.perf_counter() - start
    by_position = {"plain": plain_by_position(model, config),
                   "window": accuracy_by_position(model, task, config.eval_length, config.n_eval,
                                                  config.eval_seed, window=config.window)}
    if kind == "learned":
        by_position["clamp"] = accuracy_by_position(clamped_copy(model, config.train_length), task,
                                                    config.eval_length, config.n_eval, config.eval_seed)
    accuracy = evaluate(model, task, config.train_length, config.n_eval, config.eval_seed)
    return Run(kind, seed, losses, seconds, accuracy, by_position,
               model if keep_model else None, initial)


def sweep(config: LengthExperiment, kinds=ENCODINGS, keep_models: bool = True, progress=None) -> list[Run]:
    """Every kind for every seed of ``config``; ``progress`` (e.g. print) hears about each finished run."""
    runs = []
    for seed in config.seeds:
        for kind in kinds:
            run = run_one(kind, seed, config, keep_model=keep_models)
            runs.append(run)
            if progress:
                progress(f"{kind:>10} seed {seed}: accuracy {run.accuracy:.3f} ({run.seconds:.1f} s)")
    return runs


# ---------------------------------------------------------------------------------------------------
# Summaries


def records_of(runs) -> list[dict]:
    """Accept Run objects or already-plain records (as loaded from a file)."""
    return [r.record() if isinstance(r, Run) else r for r in runs]


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


def steps_to_loss(losses, threshold: float = 0.1, smooth: int = 10) -> int | None:
    """First step at which the mean loss of the last ``smooth`` steps is below ``threshold`` (None if never)."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.size < smooth:
        return None
    running = np.convolve(losses, np.ones(smooth) / smooth, mode="valid")
    below = np.flatnonzero(running < threshold)
    return int(below[0]) + smooth - 1 if below.size else None


def mean_spread(values) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; 0 for a single value); NaN if nothing was measured."""
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), float(values.std(ddof=1)) if values.size > 1 else 0.0


def fmt(values, digits: int = 2) -> str:
    """'mean ± std' of a sample, or an en dash when nothing was measured."""
    mean, spread = mean_spread(values)
    return "–" if math.isnan(mean) else f"{mean:.{digits}f} ± {spread:.{digits}f}"


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
            ("learned", "plain", "in one piece"), ("learned", "clamp", "rows 0..L-1, clamped"),
            ("learned", "window", f"windows of {config.window}"), ("sinusoidal", "window", f"windows of {config.window}")]
    for kind, variant, how in ways:
        bins = bin_means(runs, kind, config, variant)
        rows.append([LABELS[kind], how] + [fmt(v) for v in bins.values()])
    return rows


def summary_headers(config: LengthExperiment) -> list[str]:
    return ["encoding", "read"] + [f"positions {a}..{b - 1}" for a, b in config.bins().values()]


# ---------------------------------------------------------------------------------------------------
# Result files


def save_results(path, config: LengthExperiment, runs) -> dict:
    """Write the records with the configuration, seeds and versions beside them; return what was written."""
    data = {
        "experiment": "ch04: learned vs sinusoidal positional encodings, inside and beyond the training length",
        "command": "python -m posenc.lib.experiments ch04 --out " + str(path),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": asdict(config),
        "seeds": list(config.seeds),
        "versions": {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__},
        "runs": records_of(runs),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def load_results(path) -> tuple[LengthExperiment, list[dict], dict]:
    """(configuration, records, the whole file) of a saved sweep."""
    data = json.loads(Path(path).read_text())
    return LengthExperiment.from_dict(data["config"]), data["runs"], data


def same_setup(a: LengthExperiment, b: LengthExperiment) -> bool:
    """True when two configurations differ at most in their seeds."""
    return replace(a, seeds=()) == replace(b, seeds=())


# ---------------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run a chapter's full multi-seed sweep and save the results.")
    parser.add_argument("experiment", choices=["ch04"], help="which chapter's experiment")
    parser.add_argument("--out", required=True, help="JSON file to write, e.g. results/ch04.json")
    parser.add_argument("--seeds", type=int, default=10, help="number of seeds, 0..N-1 (default 10)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: these models are too small to gain from more)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    config = LengthExperiment(seeds=tuple(range(args.seeds)))
    start = time.perf_counter()
    runs = sweep(config, keep_models=False, progress=lambda line: print(line, flush=True))
    save_results(args.out, config, runs)
    print(f"\n{len(runs)} runs in {time.perf_counter() - start:.0f} s; wrote {args.out}\n")
    print("in-distribution accuracy:", {k: fmt(in_distribution(runs, k), 3) for k in ENCODINGS})
    print(markdown_table(summary_headers(config), summary_rows(runs, config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
