"""Summaries of a sweep's runs, for tables and figures: the same functions read Run objects and the records
of a saved file (``posenc.experiments.results``).

* Per run or per seed: :func:`in_distribution`, :func:`position_curves`, :func:`bin_means`,
  :func:`steps_to_loss` (every step of a Run), :func:`block_steps` and :func:`steps_of` (what a saved record
  keeps: the mean loss of every 10 steps), :func:`paired_differences`.
* Over seeds: :func:`mean_spread`, :func:`fmt` ('mean ± std'), :func:`cell`, :func:`band`, :func:`summarise`.
* Tables: :func:`markdown_table`, :class:`Table` (HTML on the book's pages), ``LABELS`` (the words for every
  kind a chapter's experiment compares).
"""

from __future__ import annotations

import html
import math
import warnings

import numpy as np

# How tables and legends name the kinds the chapters' experiments compare.
LABELS = {"none": "no encoding", "sinusoidal": "sinusoidal", "learned": "learned",
          "learned_pe_scale": "learned, PE-scale init", "shaw": "Shaw", "t5": "T5 bias", "alibi": "ALiBi",
          "rope": "rotary", "alibi-steep": "ALiBi, 8-head slopes", "alibi-scaled": "ALiBi, slopes x 512/L",
          "t5-32-32": "T5, 32 buckets to 32", "t5-16-16": "T5, 16 buckets to 16"}


def records_of(runs) -> list[dict]:
    """Accept Run objects or already-plain records (as loaded from a file). Run objects are recognised by
    their ``record`` method."""
    return [r.record() if hasattr(r, "record") else r for r in runs]


def position_curves(runs, kind: str, variant: str = "plain") -> np.ndarray:
    """(n_seeds, eval_length) accuracy at each position, NaN where not measured."""
    rows = [[np.nan if x is None else x for x in r["by_position"][variant]]
            for r in records_of(runs) if r["kind"] == kind and variant in r["by_position"]]
    return np.array(rows, dtype=np.float64) if rows else np.empty((0, 0))


def bin_means(runs, kind: str, config, variant: str = "plain") -> dict[str, np.ndarray]:
    """Per seed, the mean accuracy over each bin of positions, ``config.bins()`` (NaN where nothing was
    measured)."""
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


def by_seed(runs, kind: str, value=None) -> dict[int, float]:
    """{seed: value} of one kind's runs (Run objects or saved records); ``value`` reads the value from a record,
    by default its accuracy at the training length (NaN where the record holds None). What
    ``posenc.lib.reproducibility.agreement`` takes to find the file's run of the same seed as a live value."""
    read = value or (lambda record: record["accuracy"])
    values = {}
    for record in records_of(runs):
        if record["kind"] != kind:
            continue
        seed, number = int(record["seed"]), read(record)
        if seed in values:
            raise ValueError(f"two runs of {kind!r} with seed {seed}: by_seed needs one per seed")
        values[seed] = math.nan if number is None else float(number)      # a record keeps NaN as None
    return values


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


def block_steps(record, threshold: float = 0.1) -> float:
    """Steps by the end of the first 10-step block whose mean loss is below ``threshold`` (NaN: never).

    What a saved record can say about speed: files keep the mean loss of every block of 10 steps, not every
    step, so this is :func:`steps_to_loss` read at a resolution of 10 steps.
    """
    record = records_of([record])[0]
    below = np.flatnonzero(np.asarray(record["loss_every_10_steps"], dtype=np.float64) < threshold)
    return float(10 * (below[0] + 1)) if below.size else math.nan


def steps_of(run, threshold: float = 0.1) -> float:
    """Steps to a training loss below ``threshold``: ``steps_to_loss`` for a Run; for a saved record, which
    keeps only the mean loss of every 10 steps, the last step 10 k + 9 of the first 10-step block below it (a
    resolution of 10 steps, never earlier than ``steps_to_loss`` of the same run; one less than
    :func:`block_steps`, chapters 5 and 6 count this way). NaN if never."""
    if hasattr(run, "losses"):
        return steps_to_loss(run.losses, threshold)
    below = np.flatnonzero(np.asarray(run["loss_every_10_steps"]) < threshold)
    return float(10 * below[0] + 9) if below.size else math.nan


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


def paired_differences(runs, kind: str, baseline: str) -> np.ndarray:
    """Per seed, the accuracy of ``kind`` minus that of ``baseline`` (seeds both have), in seed order."""
    by = {(r["kind"], r["seed"]): r["accuracy"] for r in records_of(runs)}
    seeds = sorted(seed for (k, seed) in by if k == kind and (baseline, seed) in by)
    return np.array([by[(kind, s)] - by[(baseline, s)] for s in seeds])


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


def cell(values) -> str:
    """'mean ± std' over seeds, or just the value when there is one seed (a spread of one is no spread)."""
    values = np.asarray(values, dtype=np.float64)
    return f"{values[0]:.2f}" if values.size == 1 and not np.isnan(values[0]) else fmt(values)


UNNAMED_ROWS = "posenc-unnamed-rows"          # the class of an HTML table whose rows have no name


def html_cell(text: str, row_header: bool = False) -> str:
    """A body cell of an HTML table: the row's header (``<th scope="row">``) or a value."""
    return f'<th scope="row">{html.escape(text)}</th>' if row_header else f"<td>{html.escape(text)}</td>"


def markdown_table(headers, rows) -> str:
    """A Markdown table (myst-nb renders a cell's Markdown output as a table on the page)."""
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


class Table:
    """A small table that shows as HTML in Jupyter and on the book's pages (and as Markdown elsewhere).

    myst-nb renders a Markdown output with CommonMark, which has no tables, so HTML is what the book uses.
    The first cell of each row names the row (a method, a setting, a direction): it is the row's header, so
    that a screen reader says it with each value of the row. ``row_headers=False`` for a table whose rows
    have no name (one row of counts under the methods' names).
    """

    def __init__(self, headers, rows, row_headers: bool = True):
        self.headers, self.rows = [str(h) for h in headers], [[str(c) for c in row] for row in rows]
        self.row_headers = row_headers

    def _repr_html_(self) -> str:
        head = "".join(f'<th scope="col">{html.escape(h)}</th>' for h in self.headers)
        body = "".join("<tr>" + "".join(html_cell(c, self.row_headers and i == 0) for i, c in enumerate(row))
                       + "</tr>" for row in self.rows)
        kind = "table" if self.row_headers else f"table {UNNAMED_ROWS}"
        return f'<table class="{kind}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def _repr_markdown_(self) -> str:
        return markdown_table(self.headers, self.rows)

    def __repr__(self) -> str:
        return self._repr_markdown_()
