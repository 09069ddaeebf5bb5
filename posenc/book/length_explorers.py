"""Chapter 7's explorer that runs in the reader's browser: the RoPE spectrum under context extension.

``rope_spectrum_explorer()`` returns self-contained HTML and JavaScript (no kernel, no external scripts),
like the explorers of ``posenc.book.explorers``, whose helpers it reuses. It draws, for every pair i of a
rotary head, the factor by which an extension to s times the training length multiplies its frequency,
omega'_i / omega_i (log scale, from 1/s to 1):

* position interpolation: 1/s for every pair;
* NTK-aware scaling: the base b s^(d/(d-2)), so the factor falls from 1 (pair 0) to exactly 1/s (last pair);
* YaRN ("NTK-by-parts"): 1 for pairs that turn more than beta times over the training length L, 1/s for
  those that turn less than alpha times, a linear mix in the number of turns r between;

and reports YaRN's temperature 0.1 ln s + 1. The JavaScript computes the same formulas as
``posenc.lib.extension``; a browser test compares the two.

Hooks for the browser tests: the container ``.posenc-spectrum`` (``data-scale``, ``data-d``,
``data-train-length``, ``data-base``), its sliders ``input.posenc-spectrum-scale``,
``input.posenc-spectrum-d``, ``input.posenc-spectrum-length``, one ``polyline.posenc-spectrum-<method>``
per method, and the JavaScript property ``posencFrequency(method, i)`` (omega'_i for "none", "pi", "ntk"
or "yarn") and ``posencTemperature()`` (0.1 ln s + 1).
"""

from __future__ import annotations

import math
from typing import Sequence

from posenc.book.explorers import check_positive_int, explorer_frame, explorer_id, pick
from posenc.book.style import OKABE_ITO
from posenc.lib.encoding import DEFAULT_BASE

__all__ = ["rope_spectrum_explorer", "SPECTRUM_METHODS", "SPECTRUM_STYLES"]

SPECTRUM_METHODS = ("none", "pi", "ntk", "yarn")
# Colour and dash of each method, shared with the chapter's static figure.
SPECTRUM_STYLES = {"none": (OKABE_ITO[7], ""), "pi": (OKABE_ITO[0], "6 3"), "ntk": (OKABE_ITO[1], "2 2"),
                   "yarn": (OKABE_ITO[2], "")}
_LABELS = {"none": "plain RoPE", "pi": "interpolation", "ntk": "NTK-aware", "yarn": "YaRN"}

_SPECTRUM_JS = r"""
  var q = function (s) { return root.querySelector(s); };
  var inputs = { scale: q("input.posenc-spectrum-scale"), d: q("input.posenc-spectrum-d"),
                 length: q("input.posenc-spectrum-length") };
  var lines = {}, svg = q("svg.posenc-spectrum-svg");
  cfg.methods.forEach(function (m) { lines[m] = q("polyline.posenc-spectrum-" + m); });

  function state() {
    return { s: cfg.scales[+inputs.scale.value], d: cfg.ds[+inputs.d.value], L: cfg.lengths[+inputs.length.value],
             base: cfg.base, alpha: cfg.alpha, beta: cfg.beta };
  }
  // The formulas of posenc.lib.extension: omega_i = base^(-2i/d) for pair i of a rotated width d.
  function omega(i, d, base) { return Math.pow(base, -2 * i / d); }
  function ramp(r, alpha, beta) { return Math.min(1, Math.max(0, (r - alpha) / (beta - alpha))); }
  function frequency(method, i, st) {
    var w = omega(i, st.d, st.base);
    if (method === "pi") { return w / st.s; }
    if (method === "ntk") { return omega(i, st.d, st.base * Math.pow(st.s, st.d / (st.d - 2))); }
    if (method === "yarn") {
      var g = ramp(st.L * w / (2 * Math.PI), st.alpha, st.beta);
      return (1 - g) * w / st.s + g * w;
    }
    return w;
  }
  function temperature(s) { return s > 1 ? 0.1 * Math.log(s) + 1 : 1; }
  root.posencFrequency = function (method, i) { return frequency(method, i, state()); };
  root.posencTemperature = function () { return temperature(state().s); };

  // The axes and the legend, drawn for the page (cfg.width x cfg.height, 11 px labels, legend on the right) or
  // for a slide (posenc/book/slides/assets/deck.js: width x height with labels `body` px high, legend below).
  var NS = "http://www.w3.org/2000/svg", shape = null, em = 1, box = null;
  root.posencFitSlide = function (width, height, body) {
    shape = { width: width, height: height }; em = body / 11;
    draw();
  };
  function add(parent, tag, attrs, text) {
    var el = document.createElementNS(NS, tag);
    for (var k in attrs) { el.setAttribute(k, attrs[k]); }
    if (text !== undefined) { el.textContent = text; }
    parent.appendChild(el); return el;
  }
  function layout() {
    var W = shape ? shape.width : cfg.width, H = shape ? shape.height : cfg.height, below = !!shape;
    var legendWidth = below ? 0 : 130, legendRows = below ? 2 : 0;
    box = { left: 64 * em, top: 16 * em, width: W - 64 * em - (below ? 16 * em : legendWidth),
            height: H - 16 * em - 48 * em - legendRows * 22 * em };
    var right = box.left + box.width, bottom = box.top + box.height;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("width", W); svg.setAttribute("height", H);
    var g = q("g.posenc-spectrum-axes");
    while (g.firstChild) { g.removeChild(g.firstChild); }
    g.setAttribute("font-size", 11 * em);
    add(g, "rect", { x: box.left, y: box.top, width: box.width, height: box.height, fill: "none",
                     stroke: "currentColor", "stroke-opacity": 0.6 });
    add(g, "text", { x: box.left - 6 * em, y: box.top + 10 * em, "text-anchor": "end" }, "1");
    add(g, "text", { "class": "posenc-spectrum-ymin", x: box.left - 6 * em, y: bottom - 2 * em, "text-anchor": "end" });
    add(g, "text", { x: box.left, y: bottom + 16 * em, "text-anchor": "middle" }, "0");
    add(g, "text", { "class": "posenc-spectrum-xmax", x: right, y: bottom + 16 * em, "text-anchor": "middle" });
    add(g, "text", { x: box.left + box.width / 2, y: bottom + 36 * em, "text-anchor": "middle" },
        below ? "pair i (fast \u2192 slow)" : "pair i (fast, high frequency \u2192 slow, low frequency)");
    add(g, "text", { transform: "translate(" + 16 * em + " " + (box.top + box.height / 2) + ") rotate(-90)",
                     "text-anchor": "middle" }, "\u03c9\u2032\u1d62 / \u03c9\u1d62 (log scale)");
    cfg.methods.forEach(function (m, k) {
      var x = below ? box.left + (k % 2) * box.width / 2 : right + 12, y = below ? bottom + (58 + 22 * Math.floor(k / 2)) * em
                                                                                 : box.top + 12 + 20 * k;
      add(g, "line", { x1: x, x2: x + 24 * em, y1: y - 4 * em, y2: y - 4 * em, stroke: cfg.styles[m][0],
                       "stroke-width": 2.2 * em, "stroke-dasharray": cfg.styles[m][1].split(" ").map(function (v) {
                         return v * em; }).join(" ") });
      add(g, "text", { x: x + 28 * em, y: y }, cfg.labels[m]);
    });
    cfg.methods.forEach(function (m) {
      lines[m].setAttribute("stroke-width", 2.2 * em);
      lines[m].setAttribute("stroke-dasharray", cfg.styles[m][1].split(" ").map(function (v) { return v * em; }).join(" "));
    });
  }
  function xOf(i, pairs) { return box.left + (pairs > 1 ? i / (pairs - 1) : 0.5) * box.width; }
  function yOf(ratio, s) {   // log scale from 1/s (bottom) to 1 (top), inside a margin; ratio 1 when s = 1
    var low = Math.log(1 / Math.max(s, 1.0001)), pad = 6 * em;
    return box.top + pad + (Math.log(ratio) / low) * (box.height - 2 * pad);
  }
  function fmt(x) {
    if (Number.isInteger(x) && x < 1e5) { return String(x); }
    return x >= 1e5 ? x.toExponential(2) : x >= 100 ? x.toFixed(0) : x.toPrecision(3);
  }

  function draw() {
    layout();
    var st = state(), pairs = st.d / 2;
    cfg.methods.forEach(function (m) {
      var points = [];
      for (var i = 0; i < pairs; i++) {
        points.push(xOf(i, pairs).toFixed(2) + "," + yOf(frequency(m, i, st) / omega(i, st.d, st.base), st.s).toFixed(2));
      }
      lines[m].setAttribute("points", points.join(" "));
    });
    q("text.posenc-spectrum-xmax").textContent = String(pairs - 1);
    q("text.posenc-spectrum-ymin").textContent = "1/" + fmt(st.s);
    // YaRN's ramp ends: r = beta (pairs left alone before it) and r = alpha (interpolated after it).
    var kept = 0, interpolated = 0;
    for (var i = 0; i < pairs; i++) {
      var r = st.L * omega(i, st.d, st.base) / (2 * Math.PI);
      if (r > st.beta) { kept++; }
      if (r < st.alpha) { interpolated++; }
    }
    var ntkBase = st.base * Math.pow(st.s, st.d / (st.d - 2)), t = temperature(st.s);
    showReadout("YaRN keeps " + kept + " of " + pairs + " pairs (more than " + st.beta + " turns over L) and " +
      "interpolates " + interpolated + " fully (less than " + st.alpha + " turn).",
      "s = " + fmt(st.s) + ", head width d = " + st.d + ", training length L = " + st.L + ", base " + st.base +
      ". Position interpolation divides every frequency by " + fmt(st.s) + ". NTK-aware scaling uses the base " +
      fmt(ntkBase) + ": pair 0 keeps its frequency, the last pair is divided by " + fmt(st.s) + ". YaRN also " +
      "multiplies q and k by 0.1 ln s + 1 = " + t.toFixed(3) + " (logits by " + (t * t).toFixed(3) + ").");
    svg.querySelector("title").textContent = "Frequency factor \u03c9\u2032\u1d62 / \u03c9\u1d62 of each pair i for s = " + fmt(st.s) +
      ": position interpolation flat at 1/s, NTK-aware falling smoothly from 1 to 1/s, YaRN at 1 for " + kept +
      " fast pairs and at 1/s for " + interpolated + " slow pairs.";
    q("output.posenc-spectrum-scale-value").value = fmt(st.s);
    q("output.posenc-spectrum-d-value").value = st.d;
    q("output.posenc-spectrum-length-value").value = st.L;
    inputs.scale.setAttribute("aria-valuetext", "scale " + st.s);
    inputs.d.setAttribute("aria-valuetext", "head width " + st.d);
    inputs.length.setAttribute("aria-valuetext", "training length " + st.L);
    root.dataset.scale = st.s; root.dataset.d = st.d; root.dataset.trainLength = st.L; root.dataset.base = st.base;
  }
  Object.keys(inputs).forEach(function (k) { inputs[k].addEventListener("input", draw); });
  draw();

"""


def _check_choices(name: str, values: Sequence, smallest: float) -> list:
    values = list(values)
    if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                         or v < smallest for v in values):
        raise ValueError(f"{name} must be numbers >= {smallest}, got {values}")
    return values


def rope_spectrum_explorer(scales: Sequence[float] = (1, 1.5, 2, 3, 4, 8, 16, 32, 64),
                           head_widths: Sequence[int] = (8, 16, 32, 64, 128),
                           train_lengths: Sequence[int] = (16, 512, 2048, 4096),
                           scale: float = 4, d_head: int = 128, train_length: int = 4096,
                           base: float = DEFAULT_BASE, alpha: float = 1.0, beta: float = 32.0,
                           width: int = 600, height: int = 300, element_id: str | None = None):
    """How PI, NTK-aware scaling and YaRN change each pair's frequency, with sliders for the scale s, the
    rotated head width d and the training length L. Defaults: Llama 2's d = 128, L = 4096, base 10000.

    Returns an ``IPython.display.HTML`` object; make it the last expression of a cell to show it.
    """
    scales = _check_choices("scales", scales, 1)
    head_widths = [check_positive_int("head_widths entry", d, 4) for d in head_widths]
    if any(d % 2 for d in head_widths):
        raise ValueError(f"every head width must be even (whole pairs), got {head_widths}")
    train_lengths = [check_positive_int("train_lengths entry", n) for n in train_lengths]
    scale_index = pick("scale", scales, scale)
    d_index = pick("d_head", head_widths, d_head)
    length_index = pick("train_length", train_lengths, train_length)
    base = float(base)
    if not math.isfinite(base) or base <= 1:
        raise ValueError(f"base must be a finite number > 1, got {base!r}")
    if not 0 <= alpha < beta:
        raise ValueError(f"YaRN's ramp needs 0 <= alpha < beta, got alpha={alpha}, beta={beta}")
    uid = explorer_id("posenc-spectrum", element_id)
    config = {"scales": scales, "ds": head_widths, "lengths": train_lengths, "base": base, "alpha": alpha,
              "beta": beta, "methods": list(SPECTRUM_METHODS), "width": width, "height": height,
              "styles": SPECTRUM_STYLES, "labels": _LABELS}
    sliders = [("scale", "scale s = L\u2032/L", len(scales) - 1, scale_index),
               ("d", "head width d", len(head_widths) - 1, d_index),
               ("length", "training length L", len(train_lengths) - 1, length_index)]
    rows = "".join(
        f'<label for="{uid}-{key}">{label}</label>'
        f'<input type="range" id="{uid}-{key}" class="posenc-spectrum-{key}" min="0" max="{top}" step="1" '
        f'value="{value}"><output class="posenc-spectrum-{key}-value" for="{uid}-{key}"></output>'
        for key, label, top, value in sliders)
    polylines = "".join(f'<polyline class="posenc-spectrum-{m}" fill="none" stroke="{SPECTRUM_STYLES[m][0]}"/>'
                        for m in SPECTRUM_METHODS)
    svg = (   # the script draws the axes and the legend (for the page, or for a slide) and the lines
        f'<svg class="posenc-spectrum-svg posenc-main" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" xmlns="http://www.w3.org/2000/svg"><title>RoPE frequency factors</title>'
        f'<g class="posenc-spectrum-axes" fill="currentColor" font-size="11" font-family="system-ui, sans-serif"></g>'
        f'{polylines}</svg>'
    )
    return explorer_frame(uid, "posenc-spectrum", config, f'<div class="posenc-controls">{rows}</div>{svg}',
                          _SPECTRUM_JS,
                          noscript="This explorer needs JavaScript; the static figure beside it shows two settings.")
