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
  var lines = {}, readout = q(".posenc-readout"), svg = q("svg.posenc-spectrum-svg");
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

  var box = cfg.box;     // plot area inside the SVG's viewBox
  function xOf(i, pairs) { return box.left + (pairs > 1 ? i / (pairs - 1) : 0.5) * box.width; }
  function yOf(ratio, s) {   // log scale from 1/s (bottom) to 1 (top), inside a margin; ratio 1 when s = 1
    var low = Math.log(1 / Math.max(s, 1.0001)), pad = 6;
    return box.top + pad + (Math.log(ratio) / low) * (box.height - 2 * pad);
  }
  function fmt(x) {
    if (Number.isInteger(x) && x < 1e5) { return String(x); }
    return x >= 1e5 ? x.toExponential(2) : x >= 100 ? x.toFixed(0) : x.toPrecision(3);
  }

  function draw() {
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
    readout.textContent = "s = " + fmt(st.s) + ", head width d = " + st.d + ", training length L = " + st.L +
      ", base " + st.base + ". Position interpolation divides every frequency by " + fmt(st.s) +
      ". NTK-aware scaling uses the base " + fmt(ntkBase) + ": pair 0 keeps its frequency, the last pair is divided by " +
      fmt(st.s) + ". YaRN keeps " + kept + " of " + pairs + " pairs (more than " + st.beta +
      " turns over L), interpolates " + interpolated + " fully (less than " + st.alpha +
      " turn) and multiplies q and k by 0.1 ln s + 1 = " + t.toFixed(3) + " (logits by " + (t * t).toFixed(3) + ").";
    svg.querySelector("title").textContent = "Frequency factor omega'_i / omega_i of each pair i for s = " + fmt(st.s) +
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
    box = {"left": 64, "top": 16, "width": width - 64 - 130, "height": height - 16 - 48}
    config = {"scales": scales, "ds": head_widths, "lengths": train_lengths, "base": base, "alpha": alpha,
              "beta": beta, "methods": list(SPECTRUM_METHODS), "box": box}
    sliders = [("scale", "scale s = L'/L", len(scales) - 1, scale_index),
               ("d", "head width d", len(head_widths) - 1, d_index),
               ("length", "training length L", len(train_lengths) - 1, length_index)]
    rows = "".join(
        f'<label for="{uid}-{key}">{label}</label>'
        f'<input type="range" id="{uid}-{key}" class="posenc-spectrum-{key}" min="0" max="{top}" step="1" '
        f'value="{value}"><output class="posenc-spectrum-{key}-value" for="{uid}-{key}"></output>'
        for key, label, top, value in sliders)
    right, bottom = box["left"] + box["width"], box["top"] + box["height"]
    polylines = "".join(
        f'<polyline class="posenc-spectrum-{m}" fill="none" stroke="{SPECTRUM_STYLES[m][0]}" stroke-width="2.2" '
        f'stroke-dasharray="{SPECTRUM_STYLES[m][1]}"/>' for m in SPECTRUM_METHODS)
    legend = "".join(
        f'<line x1="{right + 12}" x2="{right + 36}" y1="{box["top"] + 12 + 20 * k}" y2="{box["top"] + 12 + 20 * k}" '
        f'stroke="{SPECTRUM_STYLES[m][0]}" stroke-width="2.2" stroke-dasharray="{SPECTRUM_STYLES[m][1]}"/>'
        f'<text x="{right + 40}" y="{box["top"] + 16 + 20 * k}">{_LABELS[m]}</text>'
        for k, m in enumerate(SPECTRUM_METHODS))
    svg = (
        f'<svg class="posenc-spectrum-svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" xmlns="http://www.w3.org/2000/svg"><title>RoPE frequency factors</title>'
        f'<g fill="currentColor" font-size="11" font-family="system-ui, sans-serif">'
        f'<rect x="{box["left"]}" y="{box["top"]}" width="{box["width"]}" height="{box["height"]}" fill="none" '
        f'stroke="currentColor" stroke-opacity="0.6"/>'
        f'<text x="{box["left"] - 6}" y="{box["top"] + 10}" text-anchor="end">1</text>'
        f'<text class="posenc-spectrum-ymin" x="{box["left"] - 6}" y="{bottom - 2}" text-anchor="end"></text>'
        f'<text x="{box["left"]}" y="{bottom + 16}" text-anchor="middle">0</text>'
        f'<text class="posenc-spectrum-xmax" x="{right}" y="{bottom + 16}" text-anchor="middle"></text>'
        f'<text x="{box["left"] + box["width"] / 2}" y="{bottom + 36}" text-anchor="middle">pair i '
        f'(fast, high frequency \u2192 slow, low frequency)</text>'
        f'<text transform="translate(16 {box["top"] + box["height"] / 2}) rotate(-90)" text-anchor="middle">'
        f'\u03c9\u2032\u1d62 / \u03c9\u1d62 (log scale)</text>{legend}</g>{polylines}</svg>'
    )
    return explorer_frame(uid, "posenc-spectrum", config, f'<div class="posenc-controls">{rows}</div>{svg}',
                          _SPECTRUM_JS,
                          noscript="This explorer needs JavaScript; the static figure beside it shows two settings.")
