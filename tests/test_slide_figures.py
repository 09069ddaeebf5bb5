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


def test_titles_never_break_next_to_an_operator():
    """Chapter 7's spectrum panels read "s = 4, d = / 128, L / = 4096" on the slide."""
    assert slide_figures._wrap("s = 4, d = 128, L = 4096", 10) == "s = 4,\nd = 128,\nL = 4096"
    assert slide_figures._wrap("position t (copy: sequence length - 1)", 12) == (
        "position t\n(copy:\nsequence\nlength - 1)")
    for content in ("s = 4, d = 128, L = 4096", "ratio ω'_i / ω_i at s = 16", "a + b = c and x ≤ y"):
        longest = max(len(word) for word in slide_figures._unbreakable_words(content))
        for width in range(4, 30):
            for line in slide_figures._wrap(content, width).split("\n"):
                assert not line.startswith(("= ", "/ ", "+ ", "≤ "))
                assert width < longest or not line.endswith((" =", " /", " +", " ≤")), (content, width, line)


def test_a_bound_group_wider_than_its_panel_breaks_after_its_operators():
    """Chapter 0's third heatmap, '"man bites dog" + positions', ran off the slide figure's edge: 'dog" +
    positions' is one group, and wider than a third of the slide."""
    assert slide_figures._wrap('"man bites dog" + positions', 10) == '"man bites\ndog" +\npositions'
    assert slide_figures._wrap('"man bites dog" + positions', 16) == '"man bites\ndog" + positions'


def three_panels(legend_inside: bool):
    """Chapter 7's accuracy curves in small: three panels with one x label each, seven series, two of them
    dashed and blue (sinusoidal, learned), the legend right of the last panel or over its data."""
    from posenc.book.style import OKABE_ITO

    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True, layout="constrained")
    styles = {"no encoding": ("k", ":"), "sinusoidal": (OKABE_ITO[0], "--"), "learned": (OKABE_ITO[5], "--"),
              "ALiBi": (OKABE_ITO[1], "-"), "rotary": (OKABE_ITO[3], "-")}
    t = np.arange(64)
    for number, ax in enumerate(axes):
        for k, (name, (colour, dash)) in enumerate(styles.items()):
            ax.plot(t, 1 - t * (k + number + 1) / 400, color=colour, ls=dash, label=name)
        ax.set(title=["local max", "first token", "copy"][number], ylim=(0, 1.05),
               xlabel="position t (copy: sequence length - 1)")
    if legend_inside:
        axes[-1].legend(loc="center")                   # over the curves
    else:
        axes[-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5))
    return fig


def slide_copy(fig, look=lambda copy: None):
    """The figure as slide_figure lays it out (a copy, drawn on the slide's canvas), what ``look`` finds in it
    as last drawn, and the record."""
    found = {}
    original = slide_figures.text_overlaps

    def keep(copy, **options):
        found["copy"], found["look"] = copy, look(copy)        # the last one drawn: the slide's copy
        return original(copy, **options)

    slide_figures.text_overlaps = keep
    try:
        record = as_shown(fig)
    finally:
        slide_figures.text_overlaps = original
    return found["copy"], found["look"], record


def test_panels_in_a_row_share_one_x_label_on_the_slide():
    fig = three_panels(legend_inside=False)
    copy, _, record = slide_copy(fig)
    assert record["overlaps"] == []
    assert [ax.get_xlabel() for ax in copy.axes] == ["", "", ""]
    assert copy._supxlabel.get_text() == "position t (copy: sequence length - 1)"      # one line, once
    assert [ax.get_xlabel() for ax in fig.axes][0].startswith("position t"), "the page's figure must not change"
    different, (left, right) = plt.subplots(1, 2)
    left.set_xlabel("pair i")
    right.set_xlabel("position")
    assert not slide_figures._share_the_x_label(different)


def test_series_alike_in_colour_and_dash_get_markers_on_the_slide():
    copy, _, _ = slide_copy(three_panels(legend_inside=False))
    marked = {line.get_label(): line.get_marker() for ax in copy.axes for line in ax.get_lines()}
    assert marked["learned"] not in ("None", "") and marked["sinusoidal"] == "None"
    assert all(marked[name] == "None" for name in ("no encoding", "ALiBi", "rotary"))
    keys = {text.get_text(): key for key, text in zip(copy.axes[-1].get_legend().legend_handles,
                                                         copy.axes[-1].get_legend().get_texts())}
    assert keys["learned"].get_marker() == marked["learned"], "the legend's key must show the marker too"


def test_a_legend_over_the_data_of_one_of_several_panels_moves_off_it():
    def covering(fig):
        renderer = fig.canvas.get_renderer()
        return [ax.get_title() for ax in fig.axes
                if ax.get_legend() is not None and slide_figures._covers_data(ax, ax.get_legend(), renderer)]

    fig = three_panels(legend_inside=True)
    fig.canvas.draw()
    assert covering(fig) == ["copy"]                    # the check can fail: on the page it covers the curves
    copy, covered, record = slide_copy(fig, covering)
    assert record["overlaps"] == [] and covered == []
    assert copy.axes[-1].get_legend() is not None or copy.legends, "the legend is still shown"
    outside = three_panels(legend_inside=False)
    outside.canvas.draw()
    assert covering(outside) == [], "a legend beside the panels covers no data"


def test_legends_of_different_panels_that_cover_their_data_go_beside_their_panels():
    """Chapter 1's bits and sines: two stacked panels, each legend (four columns) over its curves."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.5), sharex=True, layout="constrained")
    t = np.arange(64)
    for k in range(4):
        top.step(t, (t >> k) % 2 + 1.5 * k, where="post", label=f"bit {k}")
        bottom.plot(np.sin(t / 10 ** (k / 2)), label=f"pair {2 * k} (sine)")
    top.legend(loc="upper right", fontsize=8, ncol=4)
    bottom.legend(loc="lower left", fontsize=8, ncol=4)

    def covering(figure):
        renderer = figure.canvas.get_renderer()
        return [ax.get_legend().get_texts()[0].get_text() for ax in figure.axes
                if ax.get_legend() is not None and slide_figures._covers_data(ax, ax.get_legend(), renderer)]

    copy, covered, record = slide_copy(fig, covering)
    assert record["overlaps"] == [] and covered == []
    assert all(ax.get_legend() is not None for ax in copy.axes), "each panel keeps its own legend"
    marked = [line.get_label() for ax in copy.axes for line in ax.get_lines() if line.get_marker() != "None"]
    assert marked == [], "series of the same colour in different panels are not look-alikes"


def test_legends_of_panels_side_by_side_that_crowd_share_one_below_them():
    """Chapter 8's settings figure: two panels with their own y axes, each legend (long labels) below its panel;
    at the slide's size the two legends ran into each other and off the figure."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(7.6, 4.4), layout="constrained")
    x = [1, 2, 4, 8]
    for k, label in enumerate(["ALiBi, non-overlapping", "ALiBi, slopes x 512/L, non-overlapping", "ALiBi, sliding"]):
        left.plot(x, [0, 0.02 * k, 0.04 * k, 0.05 * k], marker="o", label=label)
    for k, label in enumerate(["T5 bias, non-overlapping", "T5, 32 buckets to 32, non-overlapping"]):
        right.plot(x, [0, 0.1 / (k + 1), 0.5 / (k + 1), 0.9 / (k + 1)], marker="s", label=label)
    for ax in (left, right):
        ax.set(xscale="log", xlabel="bytes per window", ylabel="bits per character minus at L")
        ax.set_xticks(x, [f"{n}L" for n in x])
        ax.minorticks_off()
        ax.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.2))
    copy, legends, record = slide_copy(fig, lambda c: [len(legend.get_texts()) for legend in c.legends])
    assert record["overlaps"] == [], record["overlaps"]
    assert legends == [5] and all(ax.get_legend() is None for ax in copy.axes), "one legend for both panels"
