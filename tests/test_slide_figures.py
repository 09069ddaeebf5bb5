"""The figures drawn for the slides (posenc.book.slide_figures): a second rendering of each chapter figure in a
book build, on a 16:9 canvas with slide-sized labels, and the texts that collide on the slide and on the page."""

from __future__ import annotations

import base64
import io
import warnings

import matplotlib
import numpy as np
import pytest

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402

from posenc.book import slide_figures  # noqa: E402
from posenc.book.style import BOOK_BUILD_VARIABLE, use_course_style  # noqa: E402


@pytest.fixture(autouse=True)
def course_style():
    use_course_style()
    yield
    plt.close("all")


def as_shown(fig):
    """The figure as the inline backend prints it for the page (cropped to its content), then its record."""
    fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")
    return slide_figures.slide_figure(fig)


def length_figure(minor_labels: bool):
    """Chapter 8's length figure in small: a log axis from 32 to 256 with labelled ticks."""
    fig, ax = plt.subplots(figsize=(6.4, 3.8), layout="constrained")
    lengths = [32, 64, 128, 256]
    ax.plot(lengths, [2.1, 2.4, 2.9, 3.3], marker="o", label="sinusoidal")
    ax.set(xscale="log", xlabel="bytes per window", ylabel="bits per character")
    ax.set_xticks(lengths, [f"{n}\n({n // 32}L)" for n in lengths])
    if not minor_labels:
        ax.minorticks_off()
    return fig


def test_the_slide_version_is_16_9_with_labels_at_the_slides_size():
    record = as_shown(length_figure(minor_labels=False))
    png = base64.b64decode(record["png"])
    assert png.startswith(b"\x89PNG")
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (record["width"], record["height"]) == (1280, 720)
    # the smallest text, as a share of the image's height, is 16 pt on a 4.5-inch canvas
    assert record["min_font"] == pytest.approx(slide_figures.MIN_FONT_PT / 72 / 4.5)
    assert record["overlaps"] == [] and record["page_overlaps"] == []


def test_minor_tick_labels_of_a_log_axis_are_found_on_the_page_and_the_slide():
    """Chapter 8's defect: 3x10^1, 4x10^1, 6x10^1 printed over '32 (1L)' and '64 (2L)'."""
    record = as_shown(length_figure(minor_labels=True))
    assert record["page_overlaps"] and record["overlaps"]
    assert any("10^{1}" in line and "overlaps" in line for line in record["page_overlaps"])


def test_crowded_labels_and_wide_legends_are_repaired_for_the_slide():
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    names = ["no encoding", "sinusoidal", "learned", "learned,\nPE-scale init"]
    for x in range(len(names)):
        left.scatter([x] * 3, [0.9, 0.95, 1.0])
    left.set(xticks=range(len(names)), xticklabels=names, ylabel="accuracy")
    for k in range(4):
        right.plot(np.sin(np.arange(64) / (k + 1)), label=f"pair {k} (sine)")
    right.legend(loc="lower left", fontsize=8, ncol=4)
    right.set_title("a title too long to stand above one of two panels")
    fig.tight_layout()
    record = as_shown(fig)
    assert record["overlaps"] == [], record["overlaps"]
    assert fig.axes[1].get_legend()._ncols == 4, "the page's figure must not change"


def test_texts_that_collide_are_named():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.text(0.5, 0.5, "first label", transform=ax.transAxes)
    ax.text(0.52, 0.5, "second label", transform=ax.transAxes)
    ax.text(0.97, 0.1, "cut off at the right edge", transform=fig.transFigure)
    problems = slide_figures.text_overlaps(fig)
    assert "'first label' overlaps 'second label'" in problems
    assert "'cut off at the right edge' is cut off by the figure's edge" in problems
    assert not any("cut off" in line for line in slide_figures.text_overlaps(fig, edges=False))


def test_titles_wrap_at_spaces_outside_formulas():
    assert slide_figures._wrap("Shaw: $q_i \\cdot a_{j-i}$ and more words", 10) == (
        "Shaw:\n$q_i \\cdot a_{j-i}$\nand more\nwords")
    assert slide_figures._wrap("half, rows not permuted\naccuracy 0.402", 14) == (
        "half, rows not\npermuted\naccuracy 0.402")


def test_the_formatter_is_installed_in_a_book_build_only(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    monkeypatch.delenv(BOOK_BUILD_VARIABLE, raising=False)
    assert not slide_figures.install(shell)
    monkeypatch.setenv(BOOK_BUILD_VARIABLE, "1")
    try:
        assert slide_figures.install(shell) and slide_figures.install(shell)       # once, however often called
        fig = length_figure(minor_labels=False)
        data, _ = shell.display_formatter.format(fig)
        assert data[slide_figures.SLIDE_FIGURE_MIME]["width"] == 1280
        assert slide_figures.SLIDE_FIGURE_MIME not in shell.display_formatter.format(np.arange(3))[0]
        crowded, ax = plt.subplots(figsize=(3, 2), layout="constrained")
        ax.set_ylabel("a label far too long for this small a figure to lay out at slide size " * 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")                      # a warning would reach the chapter's page
            assert shell.display_formatter.format(crowded)[0][slide_figures.SLIDE_FIGURE_MIME]
        fig.lambda_attribute = lambda: None                     # a figure that cannot be copied
        broken, _ = shell.display_formatter.format(fig)
        assert "error" in broken[slide_figures.SLIDE_FIGURE_MIME]
    finally:
        shell.display_formatter.formatters.pop(slide_figures.SLIDE_FIGURE_MIME, None)
        InteractiveShell.clear_instance()


def test_an_axes_drawn_without_axis_has_no_tick_labels_to_check():
    """Chapter 10's grid of numbered cells: ax.axis("off") draws no tick labels, so none can be cut off, while
    the cell numbers (texts of the axes) still are checked."""
    fig, ax = plt.subplots(figsize=(6, 2.4), layout="constrained")
    for x in range(4):
        ax.text(x + 0.5, 0.5, str(x), ha="center", va="center")
    ax.set(xlim=(0, 4), ylim=(1, 0), aspect="equal")
    ax.axis("off")
    record = as_shown(fig)
    assert record["overlaps"] == [] and record["page_overlaps"] == []
    assert {text.get_text() for text in slide_figures._texts(fig)} == {"0", "1", "2", "3"}
