"""The experiment harness: how the chapters' models are trained over many seeds, summarised and saved.

* ``runner``: what a chapter's experiment defines (:class:`Experiment`) and the sweep that runs it
  (:func:`sweep`, :func:`run_one`, :class:`Run`); every run is seeded by
  ``posenc.lib.reproducibility.seed_torch``, the one place torch is seeded;
* ``summaries``: from runs or saved records to numbers, tables (:class:`Table`) and curves;
* ``published``: the numbers the chapters quote from papers (``PUBLISHED``);
* ``ch03`` ... ``ch10``: one module per chapter's experiment (chapters 5 and 6 build on chapter 4's, 9 on 8's, each
  module says on what);
* ``registry`` (the sweeps by name) and ``results`` (result files, ``RESULTS_DIR``), and the command line
  ``python -m posenc.experiments run|replicate|lr-search|list`` (``__main__``).

What a chapter teaches (the encodings, the tiny Transformer, the tasks, the text protocols...) lives in
``posenc.lib``; the harness imports it, never the other way round. The names below are re-exported for a
chapter's notebook (``from posenc import experiments as ex``); the registry and the result files are not,
so that a chapter module, which imports this package, never imports the registry that imports it.
"""

from posenc.experiments.published import PUBLISHED
from posenc.experiments.runner import Experiment, Run, run_one, same_setup, sweep
from posenc.experiments.summaries import (
    LABELS,
    Table,
    band,
    bin_means,
    block_steps,
    by_seed,
    cell,
    fmt,
    in_distribution,
    loss_curves,
    markdown_table,
    mean_spread,
    paired_differences,
    position_curves,
    records_of,
    steps_of,
    steps_to_loss,
    summarise,
)

__all__ = [
    "Experiment", "LABELS", "PUBLISHED", "Run", "Table", "band", "bin_means", "block_steps", "by_seed", "cell", "fmt",
    "in_distribution", "loss_curves", "markdown_table", "mean_spread", "paired_differences", "position_curves",
    "records_of", "run_one", "same_setup", "steps_of", "steps_to_loss", "summarise", "sweep",
]
