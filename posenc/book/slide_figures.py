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
import warnings

__all__ = ["CANVAS", "DPI", "MIN_FONT_PT", "SLIDE_FIGURE_MIME", "install", "slide_figure", "text_overlaps"]

SLIDE_FIGURE_MIME = "application/vnd.posenc.slide-figure+json"
CANVAS = (8.0, 4.5)             # inches, 16:9
DPI = 160                       # 1280 x 720 pixels
REPAIR_ROUNDS = 3               # draw, repair, draw again: at most this many times
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
            if not (ax.axison and axis.get_visible()):  # ax.axis("off") draws no ticks and no labels
                continue
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


def _corners(text, box, renderer):
    """The four corners of a text's own (possibly rotated) rectangle, around the centre of its box."""
    angle = math.radians(text.get_rotation())
    if angle % (math.pi / 2) == 0:
        return [(box.x0, box.y0), (box.x1, box.y0), (box.x1, box.y1), (box.x0, box.y1)]
    width, height = _upright_size(text, renderer)
    cx, cy = (box.x0 + box.x1) / 2, (box.y0 + box.y1) / 2
    cos, sin = math.cos(angle), math.sin(angle)
    return [(cx + dx * cos - dy * sin, cy + dx * sin + dy * cos)
            for dx, dy in ((-width / 2, -height / 2), (width / 2, -height / 2), (width / 2, height / 2),
                           (-width / 2, height / 2))]


def _collide(a, box_a, b, box_b, renderer, slack: float) -> bool:
    """Whether two texts' rectangles overlap by more than ``slack`` pixels (separating axes: rectangles that
    do not overlap have an axis, one of their edges' normals, on which their shadows are apart)."""
    dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
    dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
    if dx <= slack or dy <= slack:
        return False
    corners = [_corners(a, box_a, renderer), _corners(b, box_b, renderer)]
    for polygon in corners:
        for (x0, y0), (x1, y1) in zip(polygon, polygon[1:] + polygon[:1]):
            length = math.hypot(x1 - x0, y1 - y0) or 1.0
            normal = ((y0 - y1) / length, (x1 - x0) / length)
            shadows = [[x * normal[0] + y * normal[1] for x, y in points] for points in corners]
            depth = min(max(shadows[0]), max(shadows[1])) - max(min(shadows[0]), min(shadows[1]))
            if depth <= slack:
                return False
    return True


def text_overlaps(fig, slack: float = 3.0, draw: bool = True, edges: bool = True) -> list[str]:
    """Pairs of texts that overlap by more than ``slack`` pixels, and texts cut off by the figure's edge
    (``edges``), in words. The figure is drawn
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
    for text, box in boxes if edges else []:
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


# A word that is only an operator binds its neighbours: "d = 128", "L / 2", "length - 1" stay on one line.
_OPERATOR = re.compile(r"^(?:=|≈|≠|<|>|≤|≥|/|\+|-|−|×|·|\*|->|→)$")


def _unbreakable_words(paragraph: str) -> list[str]:
    """The words of a line, a formula ($...$) being one word, and "a = b" (any operator) being one word."""
    words = []
    for word in re.findall(r"(?:\$[^$]*\$|[^\s$])+", paragraph):
        if words and (_OPERATOR.match(word) or _OPERATOR.match(words[-1].rsplit(" ", 1)[-1])):
            words[-1] = f"{words[-1]} {word}"
        else:
            words.append(word)
    return words


def _after_operators(word: str) -> list[str]:
    """A word bound by operators broken after each of them ('dog" + positions' -> 'dog" +', 'positions'): for
    a title too narrow for the whole of it."""
    parts = []
    for piece in word.split(" "):
        if parts and _OPERATOR.match(piece):
            parts[-1] = f"{parts[-1]} {piece}"          # the operator ends the line before
        else:
            parts.append(piece)
    return parts


def _wrap(content: str, characters: int) -> str:
    """Lines of at most about ``characters`` characters, broken at spaces outside $...$ (mathtext) and never
    next to an operator ("d = 128" is one word) unless such a word alone is longer than a line (then after
    its operators); a text that has lines already has each of them broken."""
    lines = []
    for paragraph in content.split("\n"):
        line = ""
        words = [part for word in _unbreakable_words(paragraph)
                 for part in (_after_operators(word) if len(word) > characters and "$" not in word else [word])]
        for word in words:
            if line and len(line) + 1 + len(word) > characters:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "\n".join(lines)


def _long_titles(fig, renderer, room_of):
    """(text, its content, its width, the room) for every title and x label wider than ``room_of(axes)``."""
    for ax in fig.axes:
        room = room_of(ax)
        for text in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label):
            content = text.get_text()
            if room is not None and content.strip() and " " in content:
                width = text.get_window_extent(renderer).width
                if width > room:
                    yield text, content, width, room


def _wrap_titles(fig, renderer, room_of) -> bool:
    changed = False
    for text, content, width, room in list(_long_titles(fig, renderer, room_of)):
        longest = max(len(line) for line in content.split("\n"))
        wrapped = _wrap(content, max(8, int(longest * room / width)))
        changed |= wrapped != content
        text.set_text(wrapped)
    return changed


def _estimated_room(fig, share: float = 0.6):
    """The room of an axes' title or legend before any layout: a share of the canvas by its grid columns."""
    def room(ax):
        spec = ax.get_subplotspec()
        if spec is None:
            return None
        columns = spec.get_gridspec().get_geometry()[1]
        return share * fig.bbox.width * len(range(spec.colspan.start, spec.colspan.stop)) / columns
    return room


def _slant_for(labels, renderer) -> float:
    """The angle (degrees, a multiple of 15 from 30) at which neighbouring tick labels no longer touch: a label
    of height h slanted by theta between ticks d apart clears the next one when d sin(theta) > h."""
    boxes = [label.get_window_extent(renderer) for label in labels]
    if not any(min(a.x1, b.x1) - max(a.x0, b.x0) > 0 for a, b in zip(boxes, boxes[1:])):
        return 0.0
    spacing = min(((b.x0 + b.x1) - (a.x0 + a.x1)) / 2 for a, b in zip(boxes, boxes[1:]))
    height = max(_upright_size(label, renderer)[1] for label in labels)
    needed = math.degrees(math.asin(min(1.0, 1.15 * height / max(spacing, 1e-9))))
    return min(90.0, max(30.0, 15 * math.ceil(needed / 15)))


def _with_columns(ax, legend, columns: int):
    """The axes' legend made again with fewer columns (a legend lays out its columns once, when made)."""
    texts = legend.get_texts()
    return ax.legend(handles=legend.legend_handles, labels=[text.get_text() for text in texts], loc=legend._loc,
                     bbox_to_anchor=legend._bbox_to_anchor, ncols=columns, frameon=legend.get_frame_on(),
                     fontsize=texts[0].get_fontsize() if texts else None,
                     title=legend.get_title().get_text() or None)


def _narrow_legends(fig, renderer, room_of) -> bool:
    """A legend wider than its axes' room gets fewer columns, down to one."""
    changed = False
    for ax in fig.axes:
        legend, room = ax.get_legend(), room_of(ax)
        while legend is not None and room is not None and legend._ncols > 1 \
                and legend.get_window_extent(renderer).width > room:
            legend = _with_columns(ax, legend, max(1, legend._ncols // 2))
            changed = True
    return changed


def _move_a_crowding_legend(fig) -> bool:
    """The legend of a one-panel figure that covers much of its axes on the slide (its texts grew, its axes
    shrank) moves to the right of the axes: a 16:9 slide has width to spare, not height. (With several panels
    the room it takes comes out of every panel, so such legends stay where the chapter put them.)"""
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    legends = [(ax, ax.get_legend()) for ax in panels if ax.get_legend() is not None]
    if len(panels) != 1 or len(legends) != 1 or fig.legends:
        return False
    ax, legend = legends[0]
    box, axes_box = legend.get_window_extent(renderer), ax.bbox
    if box.width * box.height <= 0.3 * axes_box.width * axes_box.height:
        return False
    handles, labels, size = _legend_entries(legend)
    legend.remove()
    fig.legend(handles=handles, labels=labels, loc="outside right upper", fontsize=size, frameon=False)
    return True


def _panels(fig) -> list:
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def _share_the_x_label(fig) -> bool:
    """Panels side by side with one and the same x label (chapter 7's "position t (copy: sequence length - 1)"
    under each of three panels, wrapped to four lines on the slide) get it once, below them all."""
    labelled = [ax for ax in _panels(fig) if ax.get_xlabel().strip()]
    if len(labelled) < 2 or len({ax.get_xlabel() for ax in labelled}) != 1 or getattr(fig, "_supxlabel", None):
        return False
    specs = [ax.get_subplotspec() for ax in labelled]
    if None in specs or len({(spec.get_gridspec(), spec.rowspan.stop) for spec in specs}) != 1:
        return False                                   # one row of one grid: the label would say the same
    text = labelled[0].xaxis.label
    fig.supxlabel(text.get_text(), fontsize=text.get_fontsize())
    for ax in labelled:
        ax.set_xlabel("")
    return True


def _share_the_y_label(fig) -> bool:
    """Panels side by side with one and the same y label (ch08's two settings panels) get it once, on the left."""
    labelled = [ax for ax in _panels(fig) if ax.get_ylabel().strip()]
    if len(labelled) < 2 or len({ax.get_ylabel() for ax in labelled}) != 1 or getattr(fig, "_supylabel", None) \
            or not _side_by_side(labelled):
        return False
    text = labelled[0].yaxis.label
    fig.supylabel(text.get_text(), fontsize=text.get_fontsize())
    for ax in labelled:
        ax.set_ylabel("")
    return True


def _data_points(ax, renderer, per_segment: int = 12):
    """Points (display pixels) along the axes' lines, and its scatter points and bars' corners."""
    import numpy as np

    points = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(np.column_stack(line.get_data()).astype(float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) > 1:
            steps = np.linspace(0, 1, per_segment, endpoint=False)[None, :, None]
            xy = (xy[:-1, None, :] + steps * (xy[1:, None, :] - xy[:-1, None, :])).reshape(-1, 2)
        points.append(xy)
    for collection in ax.collections:
        offsets = collection.get_offsets()
        if collection.get_visible() and len(offsets):
            points.append(collection.get_offset_transform().transform(offsets))
    for patch in ax.patches:
        if patch.get_visible() and patch.get_label() != "_nolegend_" and hasattr(patch, "get_bbox"):
            box = patch.get_window_extent(renderer)
            points.append(np.array([[box.x0, box.y1], [box.x1, box.y1], [(box.x0 + box.x1) / 2, box.y1]]))
    return np.concatenate(points) if points else np.zeros((0, 2))


def _covers_data(ax, legend, renderer) -> bool:
    """Whether the legend's box, drawn inside its axes, lies over the axes' data."""
    box = legend.get_window_extent(renderer)
    if not ax.bbox.overlaps(box):
        return False                                   # outside the axes: it covers nothing of theirs
    points = _data_points(ax, renderer)
    inside = ((points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0)
              & (points[:, 1] < box.y1))
    return bool(inside.any())


def _legend_entries(legend):
    """A legend's keys, its labels and their font size (None for an empty legend)."""
    texts = legend.get_texts()
    return legend.legend_handles, [text.get_text() for text in texts], texts[0].get_fontsize() if texts else None


def _side_by_side(panels) -> bool:
    """Whether the panels sit in one row of one grid, each in columns of its own."""
    specs = [ax.get_subplotspec() for ax in panels]
    if None in specs or len({(spec.get_gridspec(), spec.rowspan.start) for spec in specs}) != 1:
        return False
    return len({spec.colspan.start for spec in specs}) == len(specs)


def _crowded(fig, panels, renderer) -> bool:
    """Whether the panels' legends run into each other or off the figure (ch08's legends below their panels)."""
    boxes = [ax.get_legend().get_window_extent(renderer) for ax in panels]
    edge = fig.bbox
    apart = all(a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0
                for a, b in itertools.combinations(boxes, 2))
    inside = all(b.x0 >= edge.x0 - 1 and b.x1 <= edge.x1 + 1 and b.y0 >= edge.y0 - 1 and b.y1 <= edge.y1 + 1
                 for b in boxes)
    return not (apart and inside)


def _move_covering_legends(fig) -> bool:
    """Legends over their panel's data, on the slide, move: first to the place matplotlib finds emptiest in
    their axes ("best"); those that still cover data go out to the right of their panels (several panels
    with the same entries share one legend there, and so do panels side by side with different entries). A figure with a legend of its own keeps its layout."""
    renderer = fig.canvas.get_renderer()
    covering = [ax for ax in _panels(fig) if ax.get_legend() is not None and ax.get_legend().get_visible()
                and _covers_data(ax, ax.get_legend(), renderer)]
    if fig.legends:
        return False
    legended = [ax for ax in _panels(fig) if ax.get_legend() is not None and ax.get_legend().get_visible()]
    if len(legended) > 1 and _side_by_side(legended) and (covering or _crowded(fig, legended, renderer)) and \
            len({tuple(_legend_entries(ax.get_legend())[1]) for ax in legended}) > 1:
        # panels side by side, each with its own entries: beside or inside, the legends squeeze the panels
        # (ch08's arms: the layout collapsed); one legend below them all, a column per panel if that fits
        entries = [_legend_entries(ax.get_legend()) for ax in legended]
        for ax in legended:
            ax.get_legend().remove()
        shared = getattr(fig, "_supxlabel", None)
        if shared is not None:          # the legend goes where a shared x label sits: each panel its own again
            for ax in legended:
                ax.set_xlabel(shared.get_text(), fontsize=shared.get_fontsize())
            shared.remove()
            fig._supxlabel = None
        for columns in (len(legended), 1):
            legend = fig.legend(handles=[h for handles, _, _ in entries for h in handles],
                                labels=[label for _, labels, _ in entries for label in labels],
                                loc="outside lower center", ncols=columns, fontsize=entries[0][2], frameon=False)
            fig.canvas.draw()
            if legend.get_window_extent(renderer).width <= fig.bbox.width or columns == 1:
                break
            legend.remove()
        return True
    if not covering:
        return False
    still = []
    for ax in covering:
        legend = ax.get_legend()
        handles, labels, size = _legend_entries(legend)
        moved = ax.legend(handles=handles, labels=labels, loc="best", ncols=legend._ncols, fontsize=size,
                          frameon=legend.get_frame_on(), title=legend.get_title().get_text() or None)
        fig.canvas.draw()
        if _covers_data(ax, moved, renderer):
            still.append(ax)
    entries = {tuple(_legend_entries(ax.get_legend())[1]) for ax in still}
    if still and len(entries) == 1:
        legend = still[0].get_legend()
        handles, labels, size = _legend_entries(legend)
        for ax in still:
            ax.get_legend().remove()
        fig.legend(handles=handles, labels=labels, loc="outside right upper", fontsize=size, frameon=False)
    else:
        for ax in still:                # each beside its own panel, in one column (the layout makes room)
            legend = ax.get_legend()
            handles, labels, size = _legend_entries(legend)
            ax.legend(handles=handles, labels=labels, loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=size,
                      frameon=False, title=legend.get_title().get_text() or None)
    return True


_MARKERS = ("o", "s", "^", "D", "v")


def _lookalike(a, b) -> bool:
    """Two lines a projector shows alike: the same dash and colours of one hue and similar lightness (the
    course's blue and sky blue, both dashed, in chapter 7's accuracy curves)."""
    import colorsys

    from matplotlib.colors import to_rgb

    if a.get_linestyle() != b.get_linestyle() or a.get_marker() not in ("None", "", None, " "):
        return False
    (h1, l1, s1), (h2, l2, s2) = (colorsys.rgb_to_hls(*to_rgb(line.get_color())) for line in (a, b))
    hue = min(abs(h1 - h2), 1 - abs(h1 - h2))
    grey = s1 < 0.15 and s2 < 0.15
    return (grey or hue < 0.04) and abs(l1 - l2) < 0.3


def _every(points: int) -> tuple[int, int]:
    """About eight markers along a line of ``points`` points, the first half a step in (not on the start)."""
    step = max(1, points // 8)
    return step // 2, step


def _distinguish_lookalikes(fig) -> bool:
    """Labelled series that share a dash and a hue get markers on the slide (the second and later of each
    look-alike group, a few per line), in every panel alike, and so do the keys of the legends that list
    them."""
    lines = [line for ax in _panels(fig) for line in ax.get_lines()
             if line.get_visible() and not line.get_label().startswith("_")]
    marked = {}
    for ax in _panels(fig):                 # series of one panel (in different panels nobody confuses them)
        series = [line for line in ax.get_lines() if line.get_visible() and not line.get_label().startswith("_")]
        for index, line in enumerate(series):
            if line.get_label() in marked:
                continue
            alike = [other for other in series[index + 1:]
                     if other.get_label() not in marked and _lookalike(line, other)]
            for number, other in enumerate(alike):
                marked[other.get_label()] = _MARKERS[number % len(_MARKERS)]
    if not marked:
        return False
    for line in lines:
        if line.get_label() in marked:
            line.set(marker=marked[line.get_label()], markersize=7, markerfacecolor="white",
                     markeredgecolor=line.get_color(), markevery=_every(len(line.get_xdata())))
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    for legend in legends:                  # the keys the legends drew (one marker in the middle of each)
        for key, text in zip(legend.legend_handles, legend.get_texts()):
            if text.get_text() in marked and hasattr(key, "set_marker"):
                key.set(marker=marked[text.get_text()], markersize=7, markerfacecolor="white",
                        markeredgecolor=key.get_color())
    return True


def _repair(fig) -> bool:
    """After a first drawing on the slide's canvas: slant x tick labels that run into each other, give a
    legend wider than its axes fewer columns, and wrap titles and x labels wider than their axes. True when
    anything changed (the figure is then drawn again)."""
    renderer = fig.canvas.get_renderer()
    changed = _wrap_titles(fig, renderer, lambda ax: 0.98 * ax.get_window_extent(renderer).width)
    for ax in fig.axes:
        labels = [tick.label1 for tick in ax.xaxis._update_ticks() if tick.label1.get_visible()
                  and tick.label1.get_text().strip()]
        slant = _slant_for(labels, renderer) if labels and labels[0].get_rotation() == 0 else 0.0
        if slant:
            ax.tick_params(axis="x", labelrotation=slant)
            for tick in ax.xaxis.get_major_ticks():
                tick.label1.set_horizontalalignment("right")
                tick.label1.set_rotation_mode("anchor")
            changed = True
    changed |= _narrow_legends(fig, renderer, lambda ax: ax.get_window_extent(renderer).width)
    return changed


def slide_figure(fig) -> dict:
    """The record of ``SLIDE_FIGURE_MIME`` for a figure."""
    page_overlaps = text_overlaps(fig, edges=False)      # the page's PNG is cropped to its content
    copy = pickle.loads(pickle.dumps(fig))          # the page's figure stays as it is
    import matplotlib.pyplot as plt
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    def draw() -> io.BytesIO:
        buffer = io.BytesIO()
        copy.savefig(buffer, format="png", dpi=DPI, facecolor="white")
        return buffer

    try:
        copy.set_dpi(DPI)
        copy.set_size_inches(*CANVAS)
        if not isinstance(copy.get_layout_engine(), ConstrainedLayoutEngine):
            copy.set_layout_engine("constrained")
        _enlarge_texts(copy)
        _share_the_x_label(copy)
        _share_the_y_label(copy)
        _distinguish_lookalikes(copy)
        _wrap_titles(copy, copy.canvas.get_renderer(), _estimated_room(copy))
        _narrow_legends(copy, copy.canvas.get_renderer(), _estimated_room(copy, share=0.8))
        buffer = draw()
        overlaps = text_overlaps(copy, draw=False)            # as just drawn, at the canvas's own size
        moved = _move_a_crowding_legend(copy)
        moved |= _move_covering_legends(copy)
        for _ in range(REPAIR_ROUNDS):        # a repair changes the layout (a moved legend narrows the panels)
            if not (overlaps or moved) or not (_repair(copy) or moved):
                break
            moved = False
            buffer = draw()
            overlaps = text_overlaps(copy, draw=False)
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
                with warnings.catch_warnings():           # nothing of the slide's drawing reaches the page
                    warnings.simplefilter("ignore")
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
