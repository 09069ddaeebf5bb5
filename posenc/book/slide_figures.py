"""Every figure of a chapter drawn a second time for its slide, in the same execution.

A chapter's figure is drawn for the page (about 6 to 11 inches wide, 10-point labels). On a slide the same
picture must fill most of a 1280 x 720 slide at 16:9, with labels no smaller than the slide's body text. So,
in a book build (``posenc.book.execute`` sets ``POSENC_BOOK_BUILD=1``), ``posenc.setup_notebook()`` adds one
more format to every matplotlib figure the notebook shows: beside the page's ``image/png``, the output
carries ``SLIDE_FIGURE_MIME``, a JSON record with

* ``png``: a copy of the figure redrawn on a 16:9 canvas (``CANVAS`` inches at ``DPI``) with every text at
  least ``MIN_FONT_PT`` points, laid out again by matplotlib's constrained layout;
* ``min_font``: the smallest text's height as a fraction of the image's height (the browser tests turn it
  into pixels at the size the slide shows the image, and compare it with the body text);
* ``overlaps`` and ``page_overlaps``: the texts that collide (tick labels over tick labels, a label over a
  title...) on the slide's canvas and on the page's figure.

myst-nb shows the page's PNG and ignores the unknown type, so the chapter's page does not change, and the
slide deck (``posenc.book.slides``) takes its figure from the very execution the page shows: nothing is
executed twice. Outside a book build (Jupyter, Colab) nothing is added.
"""

from __future__ import annotations

import base64
import io
import itertools
import math
import os
import re
import pickle

__all__ = ["CANVAS", "DPI", "MIN_FONT_PT", "SLIDE_FIGURE_MIME", "install", "slide_figure", "text_overlaps"]

SLIDE_FIGURE_MIME = "application/vnd.posenc.slide-figure+json"
CANVAS = (8.0, 4.5)             # inches, 16:9
DPI = 160                       # 1280 x 720 pixels
# The slide's body text is 28 px; a figure slide shows the image at least about 560 px high, where a text of
# 16 points on a 4.5-inch canvas is 16 / 72 / 4.5 * 560 = 27.7 px.
MIN_FONT_PT = 16.0
PAGE_FONT_PT = 10.0             # the page's font size (posenc.book.style.use_course_style)


def _texts(fig):
    """The texts the figure draws: titles, labels, tick labels in view, legends, annotations."""
    from matplotlib.text import Text

    found = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for axis in ax._axis_map.values():
            for tick in axis._update_ticks():          # the ticks inside the view, those drawn
                found += [tick.label1, tick.label2]
            found.append(axis.label)
            if getattr(axis, "offsetText", None) is not None:
                found.append(axis.offsetText)
        found += [ax.title, ax._left_title, ax._right_title]
        found += [t for t in ax.texts]
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            found += list(legend.get_texts()) + [legend.get_title()]
    found += list(fig.texts)
    for legend in fig.legends:
        found += list(legend.get_texts()) + [legend.get_title()]
    for attribute in ("_suptitle", "_supxlabel", "_supylabel"):
        if getattr(fig, attribute, None) is not None:
            found.append(getattr(fig, attribute))
    unique, seen = [], set()
    for text in found:
        if isinstance(text, Text) and id(text) not in seen and text.get_visible() and text.get_text().strip():
            seen.add(id(text))
            unique.append(text)
    return unique


def _label(text) -> str:
    return re.sub(r"\\mathdefault\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", r"\1", text.get_text()).replace("\\times", "×")


def _upright_size(text, renderer) -> tuple[float, float]:
    """The width and height of a text's box before its rotation."""
    angle = text.get_rotation()
    text.set_rotation(0)
    try:
        box = text.get_window_extent(renderer)
    finally:
        text.set_rotation(angle)
    return box.width, box.height


def _collide(a, box_a, b, box_b, renderer, slack: float) -> bool:
    dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
    dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
    if dx <= slack or dy <= slack:
        return False
    angle = a.get_rotation() % 180
    if angle in (0, 90) or abs(angle - b.get_rotation() % 180) > 1e-6:
        return True                      # upright boxes, or texts at different angles: their boxes decide
    # Two labels at the same slant (rotated tick labels): compare them in the frame of their baselines.
    (wa, ha), (wb, hb) = _upright_size(a, renderer), _upright_size(b, renderer)
    theta = math.radians(angle)
    cx, cy = (box_b.x0 + box_b.x1 - box_a.x0 - box_a.x1) / 2, (box_b.y0 + box_b.y1 - box_a.y0 - box_a.y1) / 2
    along = cx * math.cos(theta) + cy * math.sin(theta)
    across = -cx * math.sin(theta) + cy * math.cos(theta)
    return abs(along) < (wa + wb) / 2 - slack and abs(across) < (ha + hb) / 2 - slack


def text_overlaps(fig, slack: float = 1.0, draw: bool = True) -> list[str]:
    """Pairs of texts that overlap, and texts cut off by the figure's edge, in words. The figure is drawn
    first (``draw``): after the inline backend's print with ``bbox_inches="tight"`` the axis labels still
    sit where that print put them, so reading them without a fresh draw finds collisions that are not there."""
    if draw:
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [(text, text.get_window_extent(renderer)) for text in _texts(fig)]
    width, height = fig.canvas.get_width_height(physical=True)
    problems = []
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        if _collide(a, box_a, b, box_b, renderer, slack):
            problems.append(f"{_label(a)!r} overlaps {_label(b)!r}")
    for text, box in boxes:
        if box.x0 < -slack or box.y0 < -slack or box.x1 > width + slack or box.y1 > height + slack:
            problems.append(f"{_label(text)!r} is cut off by the figure's edge")
    return sorted(set(problems))


def _enlarge_texts(fig) -> None:
    """Every text at least MIN_FONT_PT, the others scaled as the page's default font is."""
    scale = MIN_FONT_PT / PAGE_FONT_PT
    texts = _texts(fig)                 # first: it makes the tick objects the view needs
    tick_labels = set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            for which, ticks in (("major", axis.get_major_ticks()), ("minor", axis.get_minor_ticks())):
                if ticks:
                    size = ticks[0].label1.get_fontsize()
                    axis.set_tick_params(which=which, labelsize=max(MIN_FONT_PT, size * scale))
                    tick_labels.update(id(label) for tick in ticks for label in (tick.label1, tick.label2))
    for text in texts:
        if id(text) not in tick_labels:
            text.set_fontsize(max(MIN_FONT_PT, text.get_fontsize() * scale))


def _wrap(content: str, characters: int) -> str:
    """Lines of at most about ``characters`` characters, broken at spaces outside $...$ (mathtext); a text
    that has lines already has each of them broken."""
    lines = []
    for paragraph in content.split("\n"):
        line = ""
        for word in re.findall(r"(?:\$[^$]*\$|[^\s$])+", paragraph):
            if line and len(line) + 1 + len(word) > characters:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "\n".join(lines)


def _wrap_long_titles(fig) -> None:
    """A title or x label wider than its axes is broken over lines (measured after a first layout, drawn only
    when some text is long enough to need it)."""
    renderer = fig.canvas.get_renderer()

    def long_texts(room_of):
        for ax in fig.axes:
            room = room_of(ax)
            for text in (ax.title, ax.xaxis.label):
                content = text.get_text()
                if content.strip() and " " in content:
                    width = text.get_window_extent(renderer).width
                    if room is not None and width > room:
                        yield text, content, width, room

    def estimate(ax):          # the axes' share of the canvas, before any layout
        spec = ax.get_subplotspec()
        if spec is None:
            return None
        columns = spec.get_gridspec().get_geometry()[1]
        return 0.6 * fig.bbox.width * len(range(spec.colspan.start, spec.colspan.stop)) / columns

    if not any(True for _ in long_texts(estimate)):
        return
    fig.canvas.draw()
    for text, content, width, room in list(long_texts(lambda ax: 1.04 * ax.get_window_extent(renderer).width)):
        longest = max(len(line) for line in content.split("\n"))
        text.set_text(_wrap(content, max(8, int(longest * room / width))))


def slide_figure(fig) -> dict:
    """The record of ``SLIDE_FIGURE_MIME`` for a figure."""
    page_overlaps = text_overlaps(fig)
    copy = pickle.loads(pickle.dumps(fig))          # the page's figure stays as it is
    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    try:
        copy.set_dpi(DPI)
        copy.set_size_inches(*CANVAS)
        if not isinstance(copy.get_layout_engine(), ConstrainedLayoutEngine):
            copy.set_layout_engine("constrained")
        _enlarge_texts(copy)
        _wrap_long_titles(copy)
        buffer = io.BytesIO()
        copy.savefig(buffer, format="png", dpi=DPI, facecolor="white")
        overlaps = text_overlaps(copy, draw=False)            # as just drawn, at the canvas's own size
        smallest = min((text.get_fontsize() for text in _texts(copy)), default=MIN_FONT_PT)
    finally:
        plt.close(copy)
    return {"png": base64.b64encode(buffer.getvalue()).decode("ascii"),
            "width": round(CANVAS[0] * DPI), "height": round(CANVAS[1] * DPI),
            "min_font": smallest / 72 / CANVAS[1],
            "overlaps": overlaps, "page_overlaps": page_overlaps}


def _formatter_class():
    from IPython.core.formatters import BaseFormatter
    from traitlets import Unicode

    class SlideFigureFormatter(BaseFormatter):
        """Formats every matplotlib figure, whatever the inline backend registers (it clears the figure
        printers of all formatters when pyplot is first imported, after ``setup_notebook``)."""

        format_type = Unicode(SLIDE_FIGURE_MIME)
        _return_type = dict

        def __call__(self, obj):
            from matplotlib.figure import Figure

            if not self.enabled or not isinstance(obj, Figure):
                return None
            try:
                return slide_figure(obj)
            except Exception as exc:  # noqa: BLE001 - the page must not change; the deck build reports it
                return {"error": f"{type(exc).__name__}: {exc}"}

    return SlideFigureFormatter


def install(shell=None) -> bool:
    """In a book build, make every matplotlib figure the kernel shows carry its slide version too."""
    from posenc.book.style import BOOK_BUILD_VARIABLE

    if os.environ.get(BOOK_BUILD_VARIABLE) != "1":
        return False
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    formatters = shell.display_formatter.formatters
    if SLIDE_FIGURE_MIME not in formatters:
        formatters[SLIDE_FIGURE_MIME] = _formatter_class()(parent=shell.display_formatter)
    return True
