"""Chapter 6's explorer in the reader's browser: a query and a key turning as their positions move.

``rotary_logit_explorer()`` returns an ``IPython.display.HTML`` object (plain JavaScript, no kernel, no
external script), like the explorers of ``posenc.book.explorers``, whose helpers it reuses. The reader moves
the query position m, the offset n - m and the pair shown; the picture draws pair i of the turned query
R_m q and of the turned key R_n k in their plane, bars show what every pair adds to the logit, and the
readout gives the logit (R_m q) . (R_n k). Moving m with the offset fixed turns both arrows by the same
angle, and the logit stays where it is: the theorem of chapter 6.

Hooks for the browser tests: the container ``.posenc-rotary`` (``data-position``, ``data-offset``,
``data-pair``, ``data-logit``), sliders ``input.posenc-rotary-position``, ``input.posenc-rotary-offset``,
``input.posenc-rotary-pair``, the arrow tips ``circle.posenc-rotary-query`` and ``circle.posenc-rotary-key``
(SVG coordinates: x across, y down), the bars ``rect.posenc-rotary-bar`` (``data-value``), and the
container's JavaScript function ``posencLogit(m, n)``, the logit for any two positions.
"""

from __future__ import annotations

import math

import numpy as np

from posenc.book.explorers import check_positive_int, explorer_frame, explorer_id
from posenc.book.style import OKABE_ITO
from posenc.lib.encoding import DEFAULT_BASE, frequencies

__all__ = ["rotary_logit_explorer", "explorer_vectors", "logit"]


def explorer_vectors(d_head: int = 8, seed: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The query and key contents (after the projections, before any turn) the explorer shows: random
    normal vectors rounded to three decimals, so that the page and Python hold the same numbers."""
    rng = np.random.default_rng(seed)
    return np.round(rng.normal(size=d_head), 3), np.round(rng.normal(size=d_head), 3)


def _turn(x: np.ndarray, pos: float, base: float) -> np.ndarray:
    """Interleaved RoPE in RoFormer's sense: pair i turned counter-clockwise by pos * omega_i."""
    angle = pos * frequencies(len(x), base)
    a, b = x[0::2], x[1::2]
    out = np.empty_like(x, dtype=np.float64)
    out[0::2], out[1::2] = a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)
    return out


def logit(query: np.ndarray, key: np.ndarray, m: float, n: float, base: float = DEFAULT_BASE) -> float:
    """(R_m q) . (R_n k), as the explorer computes it (the Python twin of ``posencLogit``)."""
    return float(_turn(np.asarray(query, float), m, base) @ _turn(np.asarray(key, float), n, base))


_ROTARY_CSS = """
.posenc-rotary .posenc-rotary-figures { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
"""

_ROTARY_JS = r"""
  var NS = "http://www.w3.org/2000/svg";
  var q = function (selector) { return root.querySelector(selector); };
  var inputs = { position: q("input.posenc-rotary-position"), offset: q("input.posenc-rotary-offset"),
                 pair: q("input.posenc-rotary-pair") };
  var nPairs = cfg.query.length / 2;
  var omega = [];
  for (var i = 0; i < nPairs; i++) { omega.push(Math.pow(cfg.base, -2 * i / cfg.query.length)); }

  // RoFormer's turn of pair i by pos * omega_i: (a, b) -> (a cos - b sin, a sin + b cos).
  function turnPair(x, i, pos) {
    var c = Math.cos(pos * omega[i]), s = Math.sin(pos * omega[i]), a = x[2 * i], b = x[2 * i + 1];
    return [a * c - b * s, a * s + b * c];
  }
  function contributions(m, n) {
    var out = [];
    for (var i = 0; i < nPairs; i++) {
      var u = turnPair(cfg.query, i, m), v = turnPair(cfg.key, i, n);
      out.push(u[0] * v[0] + u[1] * v[1]);
    }
    return out;
  }
  function total(values) { return values.reduce(function (s, v) { return s + v; }, 0); }
  root.posencLogit = function (m, n) { return total(contributions(m, n)); };

  function fmt(x, digits) {
    return (Math.abs(x) < 0.5 * Math.pow(10, -digits) ? 0 : x).toFixed(digits).replace("-", "\u2212");
  }
  function set(el, attrs) { for (var k in attrs) { el.setAttribute(k, attrs[k]); } }
  var scale = cfg.scale;

  function arrow(kind, vec, ghost) {
    var x = vec[0] / scale, y = -vec[1] / scale;     // SVG's y axis points down
    set(q("line.posenc-rotary-" + kind + "-line" + (ghost ? "-ghost" : "")), { x2: x, y2: y });
    if (!ghost) { set(q("circle.posenc-rotary-" + kind), { cx: x, cy: y }); }
  }

  function draw() {
    var m = +inputs.position.value, r = +inputs.offset.value, i = +inputs.pair.value, n = m + r;
    var u = turnPair(cfg.query, i, m), v = turnPair(cfg.key, i, n);
    arrow("query", [cfg.query[2 * i], cfg.query[2 * i + 1]], true);
    arrow("key", [cfg.key[2 * i], cfg.key[2 * i + 1]], true);
    arrow("query", u, false);
    arrow("key", v, false);
    var parts = contributions(m, n), value = total(parts);
    var bars = root.querySelectorAll("rect.posenc-rotary-bar");
    var top = cfg.bar_top, unit = cfg.bar_unit;
    for (var p = 0; p < nPairs; p++) {
      var h = Math.abs(parts[p]) * unit;
      set(bars[p], { y: parts[p] >= 0 ? top - h : top, height: Math.max(h, 0.5),
                     "data-value": parts[p], opacity: p === i ? 1 : 0.55 });
    }
    var angleBetween = Math.atan2(v[1], v[0]) - Math.atan2(u[1], u[0]);
    angleBetween = Math.atan2(Math.sin(angleBetween), Math.cos(angleBetween));
    showReadout("Logit (R\u2098q)\u00b7(R\u2099k) = " + fmt(value, 4) + " (bars: each pair\u2019s share): move m " +
      "and it stays the same; change the offset and it changes.",
      "Query at m = " + m + ", key at n = " + n + " (offset n \u2212 m = " + r + "). Pair " + i + " turns by \u03b8" +
      "\u1d62 = " + omega[i].toPrecision(3) + " rad per position; its query and key are " + fmt(angleBetween, 3) +
      " rad apart and add " + fmt(parts[i], 3) + " to the logit.");
    q("svg.posenc-rotary-plane > title").textContent = "Pair " + i + " of the query turned to position " + m +
      " and of the key turned to position " + n + "; the angle between them is " + fmt(angleBetween, 3) + " rad.";
    q("svg.posenc-rotary-bars > title").textContent = "What each pair adds to the logit " + fmt(value, 3) +
      ": " + parts.map(function (x, p) { return "pair " + p + " " + fmt(x, 3); }).join(", ") + ".";
    q("output.posenc-rotary-position-value").value = m;
    q("output.posenc-rotary-offset-value").value = r;
    q("output.posenc-rotary-pair-value").value = i;
    inputs.position.setAttribute("aria-valuetext", "query position " + m);
    inputs.offset.setAttribute("aria-valuetext", "offset " + r);
    inputs.pair.setAttribute("aria-valuetext", "pair " + i);
    root.dataset.position = m; root.dataset.offset = r; root.dataset.pair = i; root.dataset.logit = value;
  }
  Object.keys(inputs).forEach(function (key) { inputs[key].addEventListener("input", draw); });
  draw();

"""


def rotary_logit_explorer(d_head: int = 8, base: float = DEFAULT_BASE, position: int = 0, offset: int = 4,
                          pair: int = 0, max_position: int = 100, max_offset: int = 20, seed: int = 5,
                          size: int = 300, element_id: str | None = None):
    """A query and a key of one rotary head, turned to positions m and n = m + offset, with their logit.

    ``d_head`` (even) and ``seed`` choose the contents (``explorer_vectors``); ``base`` the frequencies.
    Sliders: the query position 0..``max_position``, the offset -``max_offset``..``max_offset`` and the
    pair drawn. Returns an ``IPython.display.HTML`` object; make it the last expression of a cell.
    """
    d_head = check_positive_int("d_head", d_head, 2)
    if d_head % 2:
        raise ValueError(f"d_head must be even (RoPE turns pairs), got {d_head}")
    base = float(base)
    if not math.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a finite number > 0, got {base!r}")
    max_position = check_positive_int("max_position", max_position)
    max_offset = check_positive_int("max_offset", max_offset)
    for name, value, low, high in (("position", position, 0, max_position), ("offset", offset, -max_offset, max_offset),
                                   ("pair", pair, 0, d_head // 2 - 1)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValueError(f"{name} must be an integer in {low}..{high}, got {value!r}")
    uid = explorer_id("posenc-rotary", element_id)
    query, key = explorer_vectors(d_head, seed)
    radius = float(max(np.hypot(query[0::2], query[1::2]).max(), np.hypot(key[0::2], key[1::2]).max()))
    products = np.hypot(query[0::2], query[1::2]) * np.hypot(key[0::2], key[1::2])
    bar_width, bar_height = 40 * (d_head // 2) + 40, 200
    config = {"query": query.tolist(), "key": key.tolist(), "base": base, "scale": radius * 1.1,
              "bar_top": bar_height / 2, "bar_unit": (bar_height / 2 - 20) / float(products.max())}
    blue, orange = OKABE_ITO[0], OKABE_ITO[1]
    sliders = [("position", "query position m", 0, max_position, position),
               ("offset", "offset n \u2212 m", -max_offset, max_offset, offset),
               ("pair", "pair i drawn", 0, d_head // 2 - 1, pair)]
    rows = "".join(
        f'<label for="{uid}-{name}">{label}</label>'
        f'<input type="range" id="{uid}-{name}" class="posenc-rotary-{name}" min="{lo}" max="{hi}" step="1" '
        f'value="{value}"><output class="posenc-rotary-{name}-value" for="{uid}-{name}"></output>'
        for name, label, lo, hi, value in sliders)
    plane = (
        f'<svg class="posenc-rotary-plane posenc-main" viewBox="-1.3 -1.3 3.6 2.6" width="{round(size * 3.6 / 2.6)}" '
        f'height="{size}" role="img" '
        'xmlns="http://www.w3.org/2000/svg"><title>Pair of the query and the key</title>'
        '<g stroke="currentColor" stroke-width="0.008" opacity="0.5">'
        '<line x1="-1.25" y1="0" x2="1.25" y2="0"/><line x1="0" y1="-1.25" x2="0" y2="1.25"/></g>'
        '<circle cx="0" cy="0" r="1" fill="none" stroke="currentColor" stroke-width="0.01" opacity="0.4"/>'
        f'<line class="posenc-rotary-query-line-ghost" x1="0" y1="0" x2="0" y2="0" stroke="{blue}" '
        'stroke-width="0.015" stroke-dasharray="0.05 0.04" opacity="0.6"/>'
        f'<line class="posenc-rotary-key-line-ghost" x1="0" y1="0" x2="0" y2="0" stroke="{orange}" '
        'stroke-width="0.015" stroke-dasharray="0.05 0.04" opacity="0.6"/>'
        f'<line class="posenc-rotary-query-line" x1="0" y1="0" x2="0" y2="0" stroke="{blue}" stroke-width="0.03"/>'
        f'<line class="posenc-rotary-key-line" x1="0" y1="0" x2="0" y2="0" stroke="{orange}" stroke-width="0.03"/>'
        f'<circle class="posenc-rotary-query" r="0.05" fill="{blue}"/>'
        f'<circle class="posenc-rotary-key" r="0.05" fill="none" stroke="{orange}" stroke-width="0.03"/>'
        '<g font-size="0.1" font-family="system-ui, sans-serif">'     # the legend right of the plane
        f'<text x="1.35" y="-0.55" fill="{blue}">\u25cf query R\u2098q</text>'
        f'<text x="1.35" y="-0.38" fill="{blue}">(dashed: q)</text>'
        f'<text x="1.35" y="0.38" fill="{orange}">\u25cb key R\u2099k</text>'
        f'<text x="1.35" y="0.55" fill="{orange}">(dashed: k)</text></g></svg>')
    bars = "".join(
        f'<rect class="posenc-rotary-bar" x="{30 + 40 * p}" y="{bar_height / 2}" width="26" height="0.5" '
        f'fill="{blue if p % 2 == 0 else orange}"/>'
        f'<text x="{43 + 40 * p}" y="{bar_height - 4}" text-anchor="middle" font-size="11">{p}</text>'
        for p in range(d_head // 2))
    bar_svg = (
        f'<svg class="posenc-rotary-bars" viewBox="0 0 {bar_width} {bar_height}" width="{bar_width}" '
        f'height="{bar_height}" role="img" xmlns="http://www.w3.org/2000/svg"><title>Contributions</title>'
        f'<line x1="20" y1="{bar_height / 2}" x2="{bar_width - 10}" y2="{bar_height / 2}" stroke="currentColor" '
        'stroke-width="1"/>'
        f'<g fill="currentColor" font-family="system-ui, sans-serif">{bars}'
        f'<text class="posenc-page-only" x="{bar_width / 2}" y="12" text-anchor="middle" font-size="11">'
        'each pair\u2019s share of the logit</text>'
        '</g></svg>')
    body = f'<div class="posenc-controls">{rows}</div><div class="posenc-rotary-figures posenc-row">{plane}{bar_svg}</div>'
    return explorer_frame(uid, "posenc-rotary", config, body, _ROTARY_JS, css=_ROTARY_CSS)
