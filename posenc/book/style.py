"""One home for notebook set-up: plotting defaults, printed precision and seeds.

Every chapter starts with ``posenc.setup_notebook()``; change a default here and every figure follows.
"""

from __future__ import annotations

import importlib.util
import os
import random

import numpy as np

from posenc.lib.reproducibility import seed_torch

DEFAULT_SEED = 0

# Okabe & Ito's colour-blind-safe palette (Okabe and Ito, 2008): blue, orange, green, vermillion,
# reddish purple, sky blue, yellow, black (chapters refer to these by index and name).
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

# The colour cycle for lines leaves the yellow out: figures sit on white (also in the site's dark mode),
# where it has a contrast of only 1.3:1. Use it for fills only.
LINE_COLOURS = [colour for colour in OKABE_ITO if colour != "#F0E442"]

# Perceptually uniform, colour-blind-safe maps: sequential for magnitudes, diverging for signed values.
SEQUENTIAL_CMAP = "cividis"
DIVERGING_CMAP = "RdBu_r"


def seed_everything(seed: int = DEFAULT_SEED) -> np.random.Generator:
    """Seed Python, NumPy and (if it is installed) torch, through ``posenc.lib.reproducibility.seed_torch``;
    return a fresh NumPy Generator."""
    random.seed(seed)
    np.random.seed(seed)
    if importlib.util.find_spec("torch") is not None:     # the package itself does not need torch
        seed_torch(seed)
    return np.random.default_rng(seed)


def use_course_style() -> None:
    """Matplotlib defaults of the course: palette, sizes, a transparent-friendly white face."""
    import matplotlib as mpl
    from cycler import cycler

    mpl.rcParams.update({
        "axes.prop_cycle": cycler(color=LINE_COLOURS),
        "image.cmap": SEQUENTIAL_CMAP,
        "figure.figsize": (6.4, 3.6),
        "figure.dpi": 100,
        "savefig.dpi": 100,
        "savefig.facecolor": "white",       # opaque figures, legible in the site's dark mode
        "savefig.transparent": False,
        "figure.facecolor": "white",
        "axes.facecolor": "white",
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "font.size": 10,
    })


def setup_notebook(seed: int = DEFAULT_SEED, precision: int = 4) -> np.random.Generator:
    """Course defaults for a chapter notebook; returns a seeded NumPy Generator.

    In a book build every figure the notebook shows also carries its slide version
    (``posenc.book.slide_figures``); elsewhere nothing changes.
    """
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    np.set_printoptions(precision=precision, suppress=True, linewidth=100)
    use_course_style()
    from posenc.book import slide_figures

    slide_figures.install()
    return seed_everything(seed)


# Set by posenc.book.execute for the kernels it starts: the book is listening, whatever is installed.
BOOK_BUILD_VARIABLE = "POSENC_BOOK_BUILD"
# How myst-nb finds a glued value among a cell's outputs (its ``glue`` writes the same): a display_data
# output whose MIME types carry this prefix (so that Jupyter shows nothing) and whose metadata names it.
GLUE_MIME_PREFIX = "application/papermill.record/"


def book_is_listening() -> bool:
    """Whether a glued value can reach a page: in a book build, or wherever myst-nb is installed."""
    return os.environ.get(BOOK_BUILD_VARIABLE) == "1" or importlib.util.find_spec("myst_nb") is not None


def glue(name: str, value, display: bool = False, echo: bool | str = False):
    """Make ``value`` available to the page's prose as {glue:text}`name` (myst-nb), and return it.

    ``echo``: also print it where no book build is running (Colab, ``make lab``), whose notebook cannot show
    the prose it reaches; a page shows it once, in its prose. Use it for a sentence the reader needs, such as
    how a live run compares with the file, and end the line with ``;`` where it is the cell's last, so that
    the returned value is not shown too. A string is a template that gives a bare value its label:
    ``echo="Never below 0.1: {}."``.

    The value goes out in myst-nb's glue format when a book build executes the notebook (even in an
    environment without myst-nb, such as the tests' Colab-like one); elsewhere (Colab, a plain Jupyter)
    it is simply returned, so the notebook runs the same everywhere and shows nothing unknown.
    """
    if isinstance(value, np.generic):     # np.float64(0.25) would reach the page as "np.float64(0.25)"
        value = value.item()
    if echo and os.environ.get(BOOK_BUILD_VARIABLE) != "1":
        print(echo.format(value) if isinstance(echo, str) else value)
    if not book_is_listening():
        return value
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipython_display

    bundle, metadata = format_display_data(value)
    prefix = "" if display else GLUE_MIME_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipython_display({prefix + mime: data for mime, data in bundle.items()}, raw=True, metadata=metadata)
    return value
