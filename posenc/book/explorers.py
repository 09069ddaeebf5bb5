"""Explorers that run in the reader's browser: self-contained HTML and JavaScript, no kernel needed.

An ``ipywidgets`` explorer calls back into Python, so it does nothing on the static site. The
functions here return an ``IPython.display.HTML`` object whose JavaScript computes the encoding
from the formula (the same one as :func:`posenc.sinusoidal_encoding`) and redraws on every slider
move. They work the same on the built site, in Jupyter and in Colab, and load no external scripts.

    from posenc.book.explorers import heatmap_explorer, script, unit_circle_explorer
    heatmap_explorer()                 # chapter 1: PE over d_model, base and the number of positions
    unit_circle_explorer(shift=4)      # chapter 2: one pair as a point turning on the unit circle

Each explorer is a ``div`` with a stable id (``element_id``; by default ``posenc-heatmap`` and
``posenc-circle``, numbered from the second one on a page) and stable classes, so that a browser
test can move a slider and see the picture change:

* heatmap: ``.posenc-heatmap`` with ``input.posenc-heatmap-d``, ``input.posenc-heatmap-base``,
  ``input.posenc-heatmap-positions`` and ``canvas.posenc-heatmap-canvas``; the container's
  ``data-d-model``, ``data-base`` and ``data-positions`` give the state drawn, and its JavaScript
  property ``posencEncoding(pos, dim)`` the value of one cell.
* unit circle: ``.posenc-circle`` with ``input.posenc-circle-position``, ``input.posenc-circle-pair``
  (and ``input.posenc-circle-shift``), the SVG point ``circle.posenc-circle-point`` (``cx`` =
  sin(omega_i pos), ``cy`` = -cos(omega_i pos), as SVG's y axis points down) and
  ``circle.posenc-circle-shifted`` for pos + k.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from typing import Sequence

from posenc.lib.encoding import DEFAULT_BASE
from posenc.book.style import DIVERGING_CMAP, OKABE_ITO

__all__ = ["heatmap_explorer", "unit_circle_explorer", "standalone_page", "explorer_frame"]

_counters: dict[str, itertools.count] = {}


def explorer_id(prefix: str, element_id: str | None) -> str:
    """``element_id`` if given, else ``prefix``, ``prefix-2``, ``prefix-3``... in call order."""
    if element_id is not None:
        if not element_id or not all(c.isalnum() or c in "-_" for c in element_id):
            raise ValueError(f"element_id must be letters, digits, '-' or '_', got {element_id!r}")
        return element_id
    number = next(_counters.setdefault(prefix, itertools.count(1)))
    return prefix if number == 1 else f"{prefix}-{number}"


def colour_table(cmap_name: str, n: int = 256) -> str:
    """The colour map as one hex string of ``n`` RGB triples (for the JavaScript colour lookup)."""
    import matplotlib

    cmap = matplotlib.colormaps[cmap_name].resampled(n)
    rgba = cmap(range(n))
    return "".join(f"{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}" for r, g, b, _ in rgba)


def as_html(markup: str):
    from IPython.display import HTML

    return HTML(markup)


def check_positive_int(name: str, value, smallest: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < smallest:
        raise ValueError(f"{name} must be an integer >= {smallest}, got {value!r}")
    return value


def pick(name: str, choices: Sequence, value):
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of the choices {list(choices)}")
    return list(choices).index(value)


# What every explorer's script starts with: find the explorer's element once (a page may hold the same
# output twice), and read its JSON configuration; the explorer's own code follows, with `root` and `cfg`.
PRELUDE = r"""
(function () {
  "use strict";
  var root = document.getElementById(__UID__);
  if (!root || root.dataset.ready) { return; }
  root.dataset.ready = "1";
  var cfg = JSON.parse(root.querySelector("script.posenc-config").textContent);
  // The readout: its first part says what the picture shows now; `more` explains it on the page (a slide,
  // where the lecturer explains, shows only the first part: posenc/book/slides/assets/slides.css).
  function showReadout(key, more) {
    var readout = root.querySelector(".posenc-readout");
    readout.textContent = key;
    if (more) {
      var span = document.createElement("span");
      span.className = "posenc-readout-more";
      span.textContent = " " + more;
      readout.appendChild(span);
    }
  }
"""


def script(uid: str, body: str) -> str:
    """The ``<script>`` of the explorer whose element has id ``uid``: ``PRELUDE``, then ``body``."""
    return f"<script>{PRELUDE.replace('__UID__', json.dumps(uid))}{body}}})();</script>"


NOSCRIPT = "This explorer needs JavaScript; the static figure beside it shows one setting."


def explorer_frame(uid: str, kind: str, config: dict, body: str, code: str, *, css: str = "",
                   noscript: str = NOSCRIPT):
    """An explorer as HTML: its root ``<div>`` (classes ``posenc-explorer`` and ``kind``), the shared styles and
    ``css``, its configuration as JSON for the script, ``body``, the readout that screen readers announce, a
    note for readers without JavaScript and its script (``code`` run by ``script``)."""
    return as_html(
        f'<div id="{uid}" class="posenc-explorer {kind}">'
        f"<style>{EXPLORER_CSS}{css}</style>"
        f'<script type="application/json" class="posenc-config">{json.dumps(config)}</script>'
        f"{body}"
        '<p class="posenc-readout" aria-live="polite"></p>'
        f"<noscript>{noscript}</noscript>"
        f"{script(uid, code)}"
        "</div>")


# ---------------------------------------------------------------------------------------------------
# The heatmap explorer


EXPLORER_CSS = """
.posenc-explorer { max-width: 640px; margin: 1em 0; font-size: 0.9rem; color: inherit; }
.posenc-explorer .posenc-controls { display: grid; grid-template-columns: max-content 1fr 6.5em;
  gap: 0.25em 0.75em; align-items: center; margin-bottom: 0.5em; }
.posenc-explorer input[type=range] { width: 100%; margin: 0; accent-color: #0072B2; }
.posenc-explorer output { font-variant-numeric: tabular-nums; }
.posenc-explorer .posenc-readout { margin: 0.4em 0 0; font-variant-numeric: tabular-nums; }
.posenc-explorer canvas, .posenc-explorer svg { display: block; max-width: 100%; height: auto; }
"""

_HEATMAP_JS = r"""
  var lut = [];
  for (var c = 0; c < cfg.lut.length; c += 6) {
    lut.push([parseInt(cfg.lut.substr(c, 2), 16), parseInt(cfg.lut.substr(c + 2, 2), 16),
              parseInt(cfg.lut.substr(c + 4, 2), 16)]);
  }
  var canvas = root.querySelector("canvas.posenc-heatmap-canvas");
  var inputs = {
    d: root.querySelector("input.posenc-heatmap-d"),
    base: root.querySelector("input.posenc-heatmap-base"),
    positions: root.querySelector("input.posenc-heatmap-positions")
  };
  var outputs = {
    d: root.querySelector("output.posenc-heatmap-d-value"),
    base: root.querySelector("output.posenc-heatmap-base-value"),
    positions: root.querySelector("output.posenc-heatmap-positions-value")
  };
  var readout = root.querySelector(".posenc-readout");

  // The reference formula of posenc.sinusoidal_encoding: omega_i = base^(-2i/d), sin in 2i, cos in 2i+1.
  function omega(dim, d, base) { return Math.pow(base, -2 * Math.floor(dim / 2) / d); }
  function encoding(pos, dim, d, base) {
    var angle = pos * omega(dim, d, base);
    return dim % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
  }
  function state() {
    return { d: cfg.d_models[+inputs.d.value], base: cfg.bases[+inputs.base.value],
             n: +inputs.positions.value };
  }
  root.posencEncoding = function (pos, dim) { var s = state(); return encoding(pos, dim, s.d, s.base); };

  function niceStep(extent) {
    var raw = extent / 5, power = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / power;
    return power * (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10);
  }
  function formatNumber(x) {
    return x >= 1e5 ? x.toExponential(0).replace("e+", "e") : x.toLocaleString("en-US");
  }

  function draw() {
    var s = state();
    var css = getComputedStyle(root), ink = css.color || "#222";
    var cssWidth = shape ? shape.width : cfg.width, cssHeight = shape ? shape.height : cfg.height;
    var ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(cssWidth * ratio);
    canvas.height = Math.round(cssHeight * ratio);
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, cssWidth, cssHeight);
    var font = labelPx, em = font / 11;    // the page's layout at 11 px labels, scaled with them on a slide
    var left = 56 * em, top = 10 * em, right = 78 * em, bottom = 44 * em;
    var w = cssWidth - left - right, h = cssHeight - top - bottom;

    // One pixel per cell, then scaled up without smoothing.
    var cells = document.createElement("canvas");
    cells.width = s.d; cells.height = s.n;
    var cctx = cells.getContext("2d"), image = cctx.createImageData(s.d, s.n), px = image.data;
    var omegas = [];
    for (var col = 0; col < s.d; col++) { omegas.push(omega(col, s.d, s.base)); }
    for (var pos = 0; pos < s.n; pos++) {
      for (var dim = 0; dim < s.d; dim++) {
        var v = dim % 2 === 0 ? Math.sin(pos * omegas[dim]) : Math.cos(pos * omegas[dim]);
        var k = Math.max(0, Math.min(lut.length - 1, Math.round((v + 1) / 2 * (lut.length - 1))));
        var o = 4 * (pos * s.d + dim);
        px[o] = lut[k][0]; px[o + 1] = lut[k][1]; px[o + 2] = lut[k][2]; px[o + 3] = 255;
      }
    }
    cctx.putImageData(image, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(cells, left, top, w, h);

    // Axes, ticks and labels in the page's text colour (so they follow a dark theme).
    ctx.strokeStyle = ink; ctx.fillStyle = ink; ctx.lineWidth = 1;
    ctx.font = font + "px system-ui, sans-serif";
    canvas.dataset.labelPx = font; canvas.dataset.drawnWidth = cssWidth;
    ctx.strokeRect(left - 0.5, top - 0.5, w + 1, h + 1);
    ctx.textAlign = "center"; ctx.textBaseline = "top";
    var step = niceStep(s.d), t;
    for (t = 0; t < s.d; t += step) {
      var x = left + (t + 0.5) * w / s.d;
      ctx.beginPath(); ctx.moveTo(x, top + h); ctx.lineTo(x, top + h + 4 * em); ctx.stroke();
      ctx.fillText(String(t), x, top + h + 6 * em);
    }
    ctx.fillText("dimension (column 2i: sin, 2i+1: cos)", left + w / 2, top + h + 24 * em);
    ctx.textAlign = "right"; ctx.textBaseline = "middle";
    step = niceStep(s.n);
    for (t = 0; t < s.n; t += step) {
      var y = top + (t + 0.5) * h / s.n;
      ctx.beginPath(); ctx.moveTo(left - 4 * em, y); ctx.lineTo(left, y); ctx.stroke();
      ctx.fillText(String(t), left - 6 * em, y);
    }
    ctx.save(); ctx.translate(14 * em, top + h / 2); ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center"; ctx.fillText("position", 0, 0); ctx.restore();

    // Colour bar from -1 to +1.
    var barX = left + w + 18 * em, barW = 12 * em;
    for (var row = 0; row < h; row++) {
      var lk = Math.round((1 - row / (h - 1)) * (lut.length - 1));
      ctx.fillStyle = "rgb(" + lut[lk].join(",") + ")";
      ctx.fillRect(barX, top + row, barW, 1.5);
    }
    ctx.fillStyle = ink; ctx.strokeRect(barX - 0.5, top - 0.5, barW + 1, h + 1);
    ctx.textAlign = "left"; ctx.textBaseline = "middle";
    [[1, "+1"], [0, "0"], [-1, "\u22121"]].forEach(function (pair) {
      ctx.fillText(pair[1], barX + barW + 5 * em, top + (1 - pair[0]) / 2 * h);
    });

    outputs.d.value = s.d;
    outputs.base.value = formatNumber(s.base);
    outputs.positions.value = s.n;
    inputs.d.setAttribute("aria-valuetext", "d_model " + s.d);
    inputs.base.setAttribute("aria-valuetext", "base " + s.base);
    inputs.positions.setAttribute("aria-valuetext", s.n + " positions");
    var longest = 2 * Math.PI * Math.pow(s.base, 2 * Math.floor((s.d - 1) / 2) / s.d);
    readout.textContent = "Wavelengths run from 2\u03c0 \u2248 6.28 positions (pair 0) to " +
      formatNumber(Math.round(longest)) + " positions (pair " + Math.floor((s.d - 1) / 2) + ").";
    var label = "Heatmap of the sinusoidal positional encoding for positions 0 to " + (s.n - 1) +
      ", d_model " + s.d + ", base " + s.base + ". Colours run from \u22121 to +1; the left " +
      "columns change quickly down the positions, the right columns slowly.";
    canvas.setAttribute("aria-label", label);
    root.dataset.dModel = s.d; root.dataset.base = s.base; root.dataset.positions = s.n;
  }

  // On a slide (posenc/book/slides/assets/deck.js): the heatmap drawn to fill width x height, labels `body` px.
  var labelPx = 11, shape = null;
  root.posencFitSlide = function (width, height, body) {
    shape = { width: width, height: height }; labelPx = body;
    canvas.style.width = width + "px"; canvas.style.height = height + "px";
    draw();
  };
  Object.keys(inputs).forEach(function (key) { inputs[key].addEventListener("input", draw); });
  if (window.MutationObserver) {   // redraw the labels when the reader switches light/dark mode
    new MutationObserver(draw).observe(document.documentElement,
                                       { attributes: true, attributeFilter: ["data-theme", "class"] });
  }
  draw();

"""


def heatmap_explorer(d_models: Sequence[int] = (8, 16, 32, 64, 128, 256, 512),
                     bases: Sequence[float] = (10, 100, 1000, 10000, 100000),
                     d_model: int = 64, base: float = DEFAULT_BASE, positions: int = 100,
                     max_positions: int = 400, width: int = 640, height: int = 340,
                     element_id: str | None = None):
    """A heatmap of PE(pos, dim) with sliders for d_model, base and the number of positions.

    The browser draws it on a canvas from the formula, with the course's diverging colour map
    (``posenc.book.style.DIVERGING_CMAP``) from -1 to +1. Returns an ``IPython.display.HTML`` object;
    make it the last expression of a cell to show it.
    """
    d_models = [check_positive_int("d_models entry", d) for d in d_models]
    bases = [float(b) for b in bases]
    if any(not math.isfinite(b) or b <= 0 for b in bases):
        raise ValueError(f"every base must be a finite number > 0, got {bases}")
    d_index = pick("d_model", d_models, d_model)
    base_index = pick("base", bases, float(base))
    max_positions = check_positive_int("max_positions", max_positions, 2)
    positions = check_positive_int("positions", positions, 2)
    if positions > max_positions:
        raise ValueError(f"positions={positions} is more than max_positions={max_positions}")
    uid = explorer_id("posenc-heatmap", element_id)
    config = {"d_models": d_models, "bases": [int(b) if b.is_integer() else b for b in bases],
              "lut": colour_table(DIVERGING_CMAP), "width": width, "height": height}
    step = 1 if max_positions <= 100 else 10 if max_positions <= 2000 else 100
    lowest = min(step, positions)
    rows = "".join(
        f'<label for="{uid}-{key}">{label}</label>'
        f'<input type="range" id="{uid}-{key}" class="posenc-heatmap-{key}" min="{lo}" max="{hi}" '
        f'step="{st}" value="{value}">'
        f'<output class="posenc-heatmap-{key}-value" for="{uid}-{key}"></output>'
        for key, label, lo, hi, st, value in (
            ("d", "d_model", 0, len(d_models) - 1, 1, d_index),
            ("base", "base", 0, len(bases) - 1, 1, base_index),
            ("positions", "positions", lowest, max_positions, step, positions),
        ))
    body = (f'<div class="posenc-controls">{rows}</div>'
            f'<canvas class="posenc-heatmap-canvas posenc-main" role="img" width="{width}" height="{height}" data-label-px="11" '
            f'style="width:{width}px" aria-label="Heatmap of the sinusoidal positional encoding"></canvas>')
    return explorer_frame(uid, "posenc-heatmap", config, body, _HEATMAP_JS)


# ---------------------------------------------------------------------------------------------------
# One frequency pair on the unit circle


_CIRCLE_JS = r"""
  var NS = "http://www.w3.org/2000/svg";
  var q = function (selector) { return root.querySelector(selector); };
  var inputs = { position: q("input.posenc-circle-position"), pair: q("input.posenc-circle-pair"),
                 shift: q("input.posenc-circle-shift") };
  var point = q("circle.posenc-circle-point"), radius = q("line.posenc-circle-radius");
  var shifted = q("circle.posenc-circle-shifted"), arc = q("path.posenc-circle-arc");
  var trail = q("g.posenc-circle-trail"), title = q("svg > title");

  function omega(i) { return Math.pow(cfg.base, -2 * i / cfg.d_model); }
  function fmt(x, digits) { return (Math.abs(x) < 0.5 * Math.pow(10, -digits) ? 0 : x).toFixed(digits)
                                     .replace("-", "\u2212"); }
  function set(el, attrs) { for (var k in attrs) { el.setAttribute(k, attrs[k]); } }

  function draw() {
    var pos = +inputs.position.value, i = +inputs.pair.value, w = omega(i), angle = w * pos;
    var x = Math.sin(angle), y = -Math.cos(angle);     // the chapter's picture: sin across, cos up
    set(point, { cx: x, cy: y });
    set(radius, { x2: x, y2: y });
    while (trail.firstChild) { trail.removeChild(trail.firstChild); }
    for (var p = Math.max(0, pos - cfg.trail); p < pos; p++) {
      var dot = document.createElementNS(NS, "circle");
      set(dot, { cx: Math.sin(w * p), cy: -Math.cos(w * p), r: 0.025 });
      trail.appendChild(dot);
    }
    var place = "pos = " + pos + ", pair i = " + i + " (dimensions " + 2 * i + " and " + (2 * i + 1) +
      "), \u03c9\u1d62 = " + w.toPrecision(4) + " rad per position, wavelength " +
      (2 * Math.PI / w).toPrecision(4) + " positions. Angle \u03c9\u1d62\u00b7pos = " + fmt(angle, 3) +
      " rad; PE(pos, 2i) = sin = " + fmt(Math.sin(angle), 3) + ", PE(pos, 2i+1) = cos = " +
      fmt(Math.cos(angle), 3) + ".";
    if (inputs.shift) {
      var k = +inputs.shift.value, turn = w * k;
      set(shifted, { cx: Math.sin(angle + turn), cy: -Math.cos(angle + turn) });
      var sweep = ((turn % (2 * Math.PI)) + 2 * Math.PI) % (2 * Math.PI), r = 0.32;
      var end = angle + sweep;                           // clockwise from the point at pos
      set(arc, { d: "M " + r * x + " " + r * y + " A " + r + " " + r + " 0 " + (sweep > Math.PI ? 1 : 0) +
                    " 1 " + r * Math.sin(end) + " " + (-r * Math.cos(end)) });
      showReadout("From pos to pos + " + k + " the point turns by \u03c9\u1d62k = " + fmt(turn, 3) +
                  " rad, whatever pos is.", place);
      root.dataset.shift = k;
    } else {
      showReadout(place);
    }
    title.textContent = "Unit circle: pair " + i + " of the positional encoding at position " + pos +
      " is the point (sin, cos) = (" + fmt(Math.sin(angle), 3) + ", " + fmt(Math.cos(angle), 3) + ").";
    q("output.posenc-circle-position-value").value = pos;
    q("output.posenc-circle-pair-value").value = i;
    if (inputs.shift) { q("output.posenc-circle-shift-value").value = inputs.shift.value; }
    root.dataset.position = pos; root.dataset.pair = i;
  }
  Object.keys(inputs).forEach(function (key) {
    if (inputs[key]) { inputs[key].addEventListener("input", draw); }
  });
  draw();

"""


def unit_circle_explorer(d_model: int = 16, pair: int = 2, position: int = 0, max_position: int = 100,
                         base: float = DEFAULT_BASE, shift: int | None = None, max_shift: int = 20,
                         trail: int = 40, size: int = 320, element_id: str | None = None):
    """Pair ``i`` of PE(pos) as the point (sin omega_i pos, cos omega_i pos) turning on the unit circle.

    As in chapter 2's figures, the sine (dimension 2i) runs across and the cosine (2i + 1) up, so the
    point starts at the top and turns clockwise. Sliders move the position and choose the pair. With ``shift=k`` a second point shows
    PE(pos + k) and an arc marks the angle omega_i k between them: it stays the same as pos moves,
    which is the relative-shift property of chapter 2. Returns an ``IPython.display.HTML`` object.
    """
    d_model = check_positive_int("d_model", d_model, 2)
    n_pairs = d_model // 2
    if isinstance(pair, bool) or not isinstance(pair, int) or not 0 <= pair < n_pairs:
        raise ValueError(f"pair must be an integer in 0..{n_pairs - 1} for d_model={d_model}, got {pair!r}")
    max_position = check_positive_int("max_position", max_position)
    if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= max_position:
        raise ValueError(f"position must be an integer in 0..{max_position}, got {position!r}")
    if shift is not None and (isinstance(shift, bool) or not isinstance(shift, int)
                              or not 0 <= shift <= max_shift):
        raise ValueError(f"shift must be None or an integer in 0..{max_shift}, got {shift!r}")
    base = float(base)
    if not math.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a finite number > 0, got {base!r}")
    uid = explorer_id("posenc-circle", element_id)
    config = {"d_model": d_model, "base": base, "trail": int(trail)}
    blue, orange, green, vermillion, _, sky = OKABE_ITO[:6]
    sliders = [("position", "position", 0, max_position, position),
               ("pair", "pair i", 0, n_pairs - 1, pair)]
    if shift is not None:
        sliders.append(("shift", "shift k", 0, max_shift, shift))
    rows = "".join(
        f'<label for="{uid}-{key}">{label}</label>'
        f'<input type="range" id="{uid}-{key}" class="posenc-circle-{key}" min="{lo}" max="{hi}" '
        f'step="1" value="{value}">'
        f'<output class="posenc-circle-{key}-value" for="{uid}-{key}"></output>'
        for key, label, lo, hi, value in sliders)
    shifted = (f'<path class="posenc-circle-arc" fill="none" stroke="{green}" stroke-width="0.02"/>'
               f'<circle class="posenc-circle-shifted" r="0.06" fill="none" stroke="{vermillion}" '
               f'stroke-width="0.025"/>') if shift is not None else ""
    legend = (f'<text x="1.45" y="-0.45" font-size="0.1" font-family="system-ui, sans-serif" fill="{vermillion}">\u25cb PE(pos + k)</text>'
              if shift is not None else "")
    svg = (   # the circle, and its legend on the right (so that the picture is wide enough to fill a slide)
        f'<svg class="posenc-circle-svg posenc-main" viewBox="-1.35 -1.35 3.9 2.7" width="{round(size * 3.9 / 2.7)}" '
        f'height="{size}" role="img" xmlns="http://www.w3.org/2000/svg"><title>Unit circle</title>'
        '<g stroke="currentColor" stroke-width="0.008" opacity="0.5">'
        '<line x1="-1.3" y1="0" x2="1.3" y2="0"/><line x1="0" y1="-1.3" x2="0" y2="1.3"/></g>'
        '<circle cx="0" cy="0" r="1" fill="none" stroke="currentColor" stroke-width="0.012" opacity="0.7"/>'
        f'<g class="posenc-circle-trail" fill="{sky}" opacity="0.8"></g>'
        f'<line class="posenc-circle-radius" x1="0" y1="0" x2="0" y2="-1" stroke="{blue}" stroke-width="0.02"/>'
        f"{shifted}"
        f'<circle class="posenc-circle-point" cx="0" cy="-1" r="0.06" fill="{blue}"/>'
        '<g fill="currentColor" font-size="0.1" font-family="system-ui, sans-serif">'
        '<text x="1.06" y="-0.05">sin</text><text x="0.05" y="-1.2">cos</text>'
        '<text x="1.03" y="0.13">1</text><text x="-0.05" y="-1.02" text-anchor="end">1</text>'
        '<text x="1.45" y="0.45" opacity="0.8">across: dim 2i</text>'
        '<text x="1.45" y="0.6" opacity="0.8">up: dim 2i+1</text></g>'
        f'<text x="1.45" y="-0.6" font-size="0.1" font-family="system-ui, sans-serif" fill="{blue}">\u25cf PE(pos)</text>{legend}'
        "</svg>"
    )
    return explorer_frame(uid, "posenc-circle", config, f'<div class="posenc-controls">{rows}</div>{svg}',
                          _CIRCLE_JS, noscript="This explorer needs JavaScript.")


def standalone_page(*fragments, title: str = "posenc explorers") -> str:
    """A complete HTML document around displayable fragments (for tests and quick looks)."""
    parts = [getattr(f, "data", None) or (f._repr_html_() if hasattr(f, "_repr_html_") else str(f))
             for f in fragments]
    body = "\n".join(parts)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"</head><body>{body}</body></html>")
