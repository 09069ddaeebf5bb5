"""Chapter 5's explorers that run in the reader's browser: T5's buckets and ALiBi's slopes, no kernel needed.

Like ``posenc.book.explorers`` (whose helpers and style they share), each function returns an
``IPython.display.HTML`` object whose JavaScript computes the picture from the formula of the course's
library and redraws on every change of a control:

    from posenc.book.relative_explorers import t5_bucket_explorer, alibi_explorer
    t5_bucket_explorer()       # the bucket of every offset j - i, for a number of buckets and max_distance
    alibi_explorer()           # the slope of every head and the bias -m_h |j - i|, for a number of heads

Stable hooks for the browser tests (tests/browser/test_ch05_explorers.py):

* T5: ``.posenc-t5`` with ``input.posenc-t5-buckets``, ``input.posenc-t5-distance``,
  ``input.posenc-t5-span`` (range sliders over the choices) and the checkbox
  ``input.posenc-t5-bidirectional``; the drawn steps are ``path.posenc-t5-steps``; the container's
  ``data-num-buckets``, ``data-max-distance``, ``data-bidirectional``, ``data-span`` and
  ``data-last-start`` give the state, and its JavaScript property ``posencBucket(offset)`` the bucket of
  one offset (``posenc.lib.relative.t5_bucket``'s rule).
* ALiBi: ``.posenc-alibi`` with ``input.posenc-alibi-heads`` and ``input.posenc-alibi-head`` (which head
  the heatmap shows, from 1); one ``polyline.posenc-alibi-line`` per head (``data-head``, the chosen one
  also ``posenc-alibi-selected``) and ``canvas.posenc-alibi-canvas``; ``data-heads``, ``data-head``,
  ``data-length``; ``posencSlopes()`` (``posenc.lib.relative.alibi_slopes``) and ``posencBias(h, i, j)``
  (-m_h (i - j) for j <= i, null above the diagonal, where the causal mask hides the key).
"""

from __future__ import annotations

from typing import Sequence

from posenc.book.explorers import (
    check_positive_int, colour_table, explorer_frame, explorer_id, pick,
)
from posenc.book.style import LINE_COLOURS, OKABE_ITO, SEQUENTIAL_CMAP

__all__ = ["t5_bucket_explorer", "alibi_explorer"]

_EXTRA_CSS = """
.posenc-explorer .posenc-check { grid-column: 2 / 4; }
.posenc-explorer .posenc-row { display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }
"""


def _slider_rows(uid: str, prefix: str, sliders) -> str:
    """Label, range input and output for each (key, label, low, high, value)."""
    return "".join(
        f'<label for="{uid}-{key}">{label}</label>'
        f'<input type="range" id="{uid}-{key}" class="{prefix}-{key}" min="{lo}" max="{hi}" step="1" value="{value}">'
        f'<output class="{prefix}-{key}-value" for="{uid}-{key}"></output>'
        for key, label, lo, hi, value in sliders)


# What both explorers' scripts share after the course's PRELUDE: helpers to draw SVG.
_PRELUDE = r"""
  var q = function (selector) { return root.querySelector(selector); };
  var NS = "http://www.w3.org/2000/svg";
  function set(el, attrs) { for (var k in attrs) { el.setAttribute(k, attrs[k]); } }
  // On a slide (posenc/book/slides/assets/deck.js): the main picture drawn to fill width x height with labels
  // `body` px high; `em` scales the page's margins, laid out for 11 px labels.
  var shape = null, em = 1;
  root.posencFitSlide = function (width, height, body) {
    shape = { width: width, height: height }; em = body / 11;
    draw();
  };
  function fitPicture(svg) {        // the picture's size in its own units, which are pixels on the page and slide
    var W = shape ? shape.width : cfg.width, H = shape ? shape.height : cfg.height;
    set(svg, { viewBox: "0 0 " + W + " " + H, width: W, height: H, "font-size": 11 * em });
    return [W, H];
  }
  function add(parent, tag, attrs, text) {
    var el = document.createElementNS(NS, tag); set(el, attrs);
    if (text !== undefined) { el.textContent = text; }
    parent.appendChild(el); return el;
  }
"""


# ---------------------------------------------------------------------------------------------------
# T5's buckets


_T5_JS = r"""
  var inputs = { buckets: q("input.posenc-t5-buckets"), distance: q("input.posenc-t5-distance"),
                 span: q("input.posenc-t5-span"), bidirectional: q("input.posenc-t5-bidirectional") };
  var svg = q("svg.posenc-t5-svg"), steps = q("path.posenc-t5-steps"), marks = q("g.posenc-t5-marks");
  var axes = q("g.posenc-t5-axes"), title = q("svg > title");

  // posenc.lib.relative.t5_bucket, one offset j - i at a time (key minus query).
  function bucket(offset, numBuckets, maxDistance, bidirectional) {
    var nb = numBuckets, first = 0, n;
    if (bidirectional) {
      nb = Math.floor(numBuckets / 2);
      first = offset > 0 ? nb : 0;
      n = Math.abs(offset);
    } else {
      n = Math.max(-offset, 0);
    }
    var exact = Math.floor(nb / 2);
    if (n < exact) { return first + n; }
    var b = exact + Math.floor(Math.log(n / exact) / Math.log(maxDistance / exact) * (nb - exact));
    return first + Math.min(b, nb - 1);
  }
  function state() {
    return { nb: cfg.buckets[+inputs.buckets.value], md: cfg.distances[+inputs.distance.value],
             span: cfg.spans[+inputs.span.value], bi: inputs.bidirectional.checked };
  }
  root.posencBucket = function (offset) { var s = state(); return bucket(offset, s.nb, s.md, s.bi); };

  function draw() {
    var s = state(), WH = fitPicture(svg), W = WH[0], H = WH[1];
    var left = 48 * em, right = 12 * em, top = 12 * em, bottom = 40 * em;
    var w = W - left - right, h = H - top - bottom;
    var x = function (o) { return left + (o + s.span) / (2 * s.span) * w; };
    var y = function (b) { return top + h - (b + 0.5) / s.nb * h; };
    var d = "", previous = null;
    for (var o = -s.span; o <= s.span; o++) {
      var b = bucket(o, s.nb, s.md, s.bi);
      if (previous === null) { d += "M " + x(o - 0.5).toFixed(2) + " " + y(b).toFixed(2); }
      else if (b !== previous) { d += " L " + x(o - 0.5).toFixed(2) + " " + y(previous).toFixed(2) +
                                      " L " + x(o - 0.5).toFixed(2) + " " + y(b).toFixed(2); }
      previous = b;
    }
    d += " L " + x(s.span + 0.5).toFixed(2) + " " + y(previous).toFixed(2);
    set(steps, { d: d, "stroke-width": 2 * Math.sqrt(em) });

    while (axes.firstChild) { axes.removeChild(axes.firstChild); }
    while (marks.firstChild) { marks.removeChild(marks.firstChild); }
    add(axes, "rect", { x: left, y: top, width: w, height: h, fill: "none", stroke: "currentColor",
                        "stroke-width": 1, opacity: 0.6 });
    [-s.span, -s.span / 2, 0, s.span / 2, s.span].forEach(function (t) {
      add(axes, "line", { x1: x(t), x2: x(t), y1: top + h, y2: top + h + 4 * em, stroke: "currentColor" });
      add(axes, "text", { x: x(t), y: top + h + 16 * em, "text-anchor": "middle" }, String(t).replace("-", "\u2212"));
    });
    add(axes, "text", { x: left + w / 2, y: H - 6 * em, "text-anchor": "middle" }, "offset j \u2212 i (key minus query)");
    [0, s.nb / 2, s.nb - 1].forEach(function (b) {
      add(axes, "text", { x: left - 6 * em, y: y(b) + 4 * em, "text-anchor": "end" }, String(b));
    });
    add(axes, "text", { x: 12 * em, y: top + h / 2, transform: "rotate(-90 " + 12 * em + " " + (top + h / 2) + ")",
                        "text-anchor": "middle" }, "bucket");
    var nb = s.bi ? s.nb / 2 : s.nb, exact = nb / 2, lastStart = null;
    for (var n = 0; n <= 100000 && lastStart === null; n++) {
      if (bucket(-n, s.nb, s.md, s.bi) === nb - 1) { lastStart = n; }
    }
    var lines = [[exact, cfg.colours.exact, "exact below " + exact], [s.md, cfg.colours.distance, "max_distance " + s.md]];
    lines.forEach(function (line) {
      [-line[0], s.bi ? line[0] : null].forEach(function (o) {
        if (o === null || Math.abs(o) > s.span) { return; }
        add(marks, "line", { x1: x(o), x2: x(o), y1: top, y2: top + h, stroke: line[1], "stroke-dasharray": 4 * em + " " + 3 * em, "stroke-width": em });
      });
    });
    var used = {};
    for (o = -s.span; o <= s.span; o++) { used[bucket(o, s.nb, s.md, s.bi)] = true; }
    var usedCount = Object.keys(used).length;
    showReadout("The last bucket starts at distance " + lastStart + " and offsets \u2212" + s.span + ".." + s.span +
      " use " + usedCount + " of the " + s.nb + " buckets.",
      (s.bi ? "Bidirectional: " + nb + " buckets for keys at or before the query, " + nb +
       " for keys after it. " : "Causal: all " + nb + " buckets for the past; every future offset shares bucket 0. ") +
      "Distances below " + exact + " get a bucket each; larger ones share log-spaced buckets up to max_distance = " +
      s.md + ". Dashed lines: green where the exact buckets end, vermillion at max_distance.");
    title.textContent = "T5 bucket of every offset from \u2212" + s.span + " to " + s.span + " with " + s.nb +
      " buckets, max_distance " + s.md + (s.bi ? ", bidirectional." : ", causal.");
    q("output.posenc-t5-buckets-value").value = s.nb;
    q("output.posenc-t5-distance-value").value = s.md;
    q("output.posenc-t5-span-value").value = "\u00b1" + s.span;
    inputs.buckets.setAttribute("aria-valuetext", s.nb + " buckets");
    inputs.distance.setAttribute("aria-valuetext", "max_distance " + s.md);
    inputs.span.setAttribute("aria-valuetext", "offsets up to " + s.span);
    root.dataset.numBuckets = s.nb; root.dataset.maxDistance = s.md; root.dataset.span = s.span;
    root.dataset.bidirectional = s.bi ? "true" : "false"; root.dataset.lastStart = lastStart;
    root.dataset.used = usedCount;
  }
  ["buckets", "distance", "span"].forEach(function (key) { inputs[key].addEventListener("input", draw); });
  inputs.bidirectional.addEventListener("change", draw);
  draw();
"""


def t5_bucket_explorer(num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True,
                       span: int = 160, bucket_choices: Sequence[int] = (8, 16, 32, 64),
                       distance_choices: Sequence[int] = (64, 128, 256, 512, 1024),
                       span_choices: Sequence[int] = (20, 40, 80, 160, 320, 640, 1280),
                       width: int = 640, height: int = 300, element_id: str | None = None):
    """The bucket of every offset j - i under T5's rule, with controls for the number of buckets,
    max_distance, the offsets shown and bidirectional (encoder) or causal (decoder) attention.

    The browser computes each bucket with the rule of ``posenc.lib.relative.t5_bucket``; dashed lines mark
    where the exact buckets end and where max_distance lies. Returns an ``IPython.display.HTML`` object.
    """
    bucket_choices = [check_positive_int("bucket_choices entry", b, 4) for b in bucket_choices]
    distance_choices = [check_positive_int("distance_choices entry", m, 2) for m in distance_choices]
    span_choices = [check_positive_int("span_choices entry", s, 2) for s in span_choices]
    if any(b % 4 for b in bucket_choices):
        raise ValueError(f"every number of buckets must be a multiple of 4, got {bucket_choices}")
    if min(distance_choices) <= max(bucket_choices) // 2:
        raise ValueError("every max_distance must exceed the exact buckets of every choice of num_buckets "
                         f"(largest: {max(bucket_choices) // 2}), got {distance_choices}")
    indices = (pick("num_buckets", bucket_choices, num_buckets), pick("max_distance", distance_choices, max_distance),
               pick("span", span_choices, span))
    uid = explorer_id("posenc-t5", element_id)
    blue, green, vermillion = OKABE_ITO[0], OKABE_ITO[2], OKABE_ITO[3]
    config = {"buckets": bucket_choices, "distances": distance_choices, "spans": span_choices, "width": width,
              "height": height, "colours": {"exact": green, "distance": vermillion}}
    rows = _slider_rows(uid, "posenc-t5", [
        ("buckets", "num_buckets", 0, len(bucket_choices) - 1, indices[0]),
        ("distance", "max_distance", 0, len(distance_choices) - 1, indices[1]),
        ("span", "offsets shown", 0, len(span_choices) - 1, indices[2])])
    checked = " checked" if bidirectional else ""
    rows += (f'<span></span><label class="posenc-check"><input type="checkbox" class="posenc-t5-bidirectional"'
             f'{checked}> bidirectional (encoder); untick for causal (decoder)</label>')
    svg = (f'<svg class="posenc-t5-svg posenc-main" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'role="img" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="system-ui, sans-serif" '
           f'fill="currentColor"><title>T5 buckets</title><g class="posenc-t5-axes"></g>'
           f'<g class="posenc-t5-marks"></g>'
           f'<path class="posenc-t5-steps" fill="none" stroke="{blue}" stroke-width="2"/></svg>')
    return explorer_frame(uid, "posenc-t5", config, f'<div class="posenc-controls">{rows}</div>{svg}',
                          _PRELUDE + _T5_JS, css=_EXTRA_CSS)


# ---------------------------------------------------------------------------------------------------
# ALiBi's slopes and biases


_ALIBI_JS = r"""
  var inputs = { heads: q("input.posenc-alibi-heads"), head: q("input.posenc-alibi-head") };
  var lines = q("g.posenc-alibi-lines"), axes = q("g.posenc-alibi-axes"), canvas = q("canvas.posenc-alibi-canvas");
  var title = q("svg > title"), svg = q("svg.posenc-alibi-svg");
  var caption = q(".posenc-alibi-caption");
  var lut = [];
  for (var c = 0; c < cfg.lut.length; c += 6) {
    lut.push([parseInt(cfg.lut.substr(c, 2), 16), parseInt(cfg.lut.substr(c + 2, 2), 16),
              parseInt(cfg.lut.substr(c + 4, 2), 16)]);
  }

  // posenc.lib.relative.alibi_slopes: 2^(-8h/n) for a power of two n; otherwise the slopes of the largest
  // power of two c below n, followed by every other slope of 2c heads (the first n - c of them).
  function slopes(n) {
    var power = Math.pow(2, Math.floor(Math.log2(n))), out = [];
    for (var h = 1; h <= power; h++) { out.push(Math.pow(2, -8 * h / power)); }
    if (power < n) {
      var more = slopes(2 * power).filter(function (_, i) { return i % 2 === 0; }).slice(0, n - power);
      out = out.concat(more);
    }
    return out;
  }
  var SUPERSCRIPTS = { "0": "\u2070", "1": "\u00b9", "2": "\u00b2", "3": "\u00b3", "4": "\u2074", "5": "\u2075",
                      "6": "\u2076", "7": "\u2077", "8": "\u2078", "9": "\u2079", "\u2212": "\u207b", ".": "\u00b7" };
  function superscript(text) { return text.split("").map(function (c) { return SUPERSCRIPTS[c] || c; }).join(""); }
  function exponent(m) { var k = -Math.log2(m); return Math.abs(k - Math.round(k)) < 1e-9 ? String(Math.round(k)) : k.toFixed(2); }
  function state() { return { heads: +inputs.heads.value, head: +inputs.head.value, length: cfg.length }; }
  root.posencSlopes = function () { return slopes(state().heads); };
  root.posencBias = function (h, i, j) {
    if (j > i) { return null; }
    return -slopes(state().heads)[h - 1] * (i - j);
  };

  function draw() {
    var s = state();
    inputs.head.max = s.heads;
    if (+inputs.head.value > s.heads) { inputs.head.value = s.heads; }
    s = state();
    var m = slopes(s.heads), L = s.length, WH = fitPicture(svg), W = WH[0], H = WH[1];
    var left = 48 * em, right = 12 * em, top = 12 * em, bottom = 40 * em, w = W - left - right, h = H - top - bottom;
    var lowest = -m.reduce(function (a, b) { return Math.max(a, b); }, 0) * (L - 1);
    var x = function (d) { return left + d / (L - 1) * w; };
    var y = function (v) { return top + (v / lowest) * h; };
    while (lines.firstChild) { lines.removeChild(lines.firstChild); }
    while (axes.firstChild) { axes.removeChild(axes.firstChild); }
    add(axes, "rect", { x: left, y: top, width: w, height: h, fill: "none", stroke: "currentColor", opacity: 0.6 });
    [0, Math.round((L - 1) / 2), L - 1].forEach(function (t) {
      add(axes, "text", { x: x(t), y: top + h + 16 * em, "text-anchor": "middle" }, String(t));
    });
    add(axes, "text", { x: left + w / 2, y: H - 6 * em, "text-anchor": "middle" }, "distance i \u2212 j to an earlier key");
    [[0, "0"], [lowest, lowest.toFixed(1).replace("-", "\u2212")]].forEach(function (t) {
      add(axes, "text", { x: left - 6 * em, y: y(t[0]) + 4 * em, "text-anchor": "end" }, t[1]);
    });
    add(axes, "text", { x: 12 * em, y: top + h / 2, transform: "rotate(-90 " + 12 * em + " " + (top + h / 2) + ")",
                        "text-anchor": "middle" }, "bias \u2212m\u2095 (i \u2212 j)");
    m.forEach(function (slope, index) {
      var head = index + 1, selected = head === s.head;
      var colour = cfg.palette[index % cfg.palette.length];
      add(lines, "polyline", { "class": "posenc-alibi-line" + (selected ? " posenc-alibi-selected" : ""),
                               "data-head": head, points: x(0) + "," + y(0) + " " + x(L - 1) + "," + y(-slope * (L - 1)),
                               fill: "none", stroke: colour, "stroke-width": (selected ? 3.5 : 1.5) * Math.sqrt(em),
                               opacity: selected ? 1 : 0.75 });
    });

    // The chosen head's bias matrix, query i down, key j across; the future (j > i) is masked.
    var cells = document.createElement("canvas"); cells.width = L; cells.height = L;
    var cctx = cells.getContext("2d"), image = cctx.createImageData(L, L), px = image.data;
    var slope = m[s.head - 1], floor = lowest;        // one colour scale for every head
    for (var i = 0; i < L; i++) {
      for (var j = 0; j < L; j++) {
        var o = 4 * (i * L + j);
        if (j > i) { px[o] = px[o + 1] = px[o + 2] = 235; px[o + 3] = 255; continue; }
        var k = Math.round((1 - (-slope * (i - j)) / floor) * (lut.length - 1));
        k = Math.max(0, Math.min(lut.length - 1, k));
        px[o] = lut[k][0]; px[o + 1] = lut[k][1]; px[o + 2] = lut[k][2]; px[o + 3] = 255;
      }
    }
    cctx.putImageData(image, 0, 0);
    var ratio = window.devicePixelRatio || 1, size = cfg.size;
    canvas.width = Math.round(size * ratio); canvas.height = Math.round(size * ratio);
    var ctx = canvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, size, size);
    ctx.drawImage(cells, 0, 0, size, size);

    var powers = m.map(function (v) { return "2" + superscript("\u2212" + exponent(v)); });
    var text = powers.length <= 8 ? powers.join(", ") : powers.slice(0, 3).join(", ") + ", \u2026, " +
      powers.slice(-2).join(", ");
    var power = Math.pow(2, Math.floor(Math.log2(s.heads)));
    var appended = power < s.heads ? s.heads - power : 0;
    showReadout(s.heads + " heads; slopes m\u2095 in head order: " + text + "." +
      (appended ? " " + s.heads + " is not a power of two: the last " + appended + " are appended." : ""),
      (powers.length > 8 ? "All slopes: " + powers.join(", ") + ". " : "") +
      (appended ? "The slopes of " + power + " heads come first, then " + appended + " of every other slope of " +
       2 * power + " heads. " : "") +
      "Head " + s.head + " (slope " + slope.toPrecision(4) + ") is drawn thick and as the matrix; at distance " +
      (L - 1) + " its bias is " + (-slope * (L - 1)).toFixed(3).replace("-", "\u2212") + ".");
    title.textContent = "ALiBi bias against distance for each of " + s.heads + " heads; steeper lines are larger slopes.";
    caption.textContent = "Head " + s.head + ", " + L + " positions: query i down, key j across; the masked " +
      "future is grey. One colour scale for all heads, from 0 (light) to " + lowest.toFixed(1).replace("-", "\u2212") + ".";
    canvas.setAttribute("aria-label", "Causal ALiBi bias matrix of head " + s.head + " for " + L +
      " positions: zero on the diagonal, more negative further left; the future above the diagonal is masked.");
    q("output.posenc-alibi-heads-value").value = s.heads;
    q("output.posenc-alibi-head-value").value = s.head;
    inputs.heads.setAttribute("aria-valuetext", s.heads + " heads");
    inputs.head.setAttribute("aria-valuetext", "head " + s.head);
    root.dataset.heads = s.heads; root.dataset.head = s.head; root.dataset.length = L;
  }
  inputs.heads.addEventListener("input", draw);
  inputs.head.addEventListener("input", draw);
  draw();
"""


def alibi_explorer(n_heads: int = 8, head: int = 1, max_heads: int = 32, length: int = 32, width: int = 400,
                   height: int = 280, size: int = 220, element_id: str | None = None):
    """ALiBi's bias -m_h (i - j) against the distance for every head, and one head's causal bias matrix,
    with sliders for the number of heads and the head shown.

    The browser computes the slopes with the rule of ``posenc.lib.relative.alibi_slopes`` (including head
    counts that are not powers of two). Returns an ``IPython.display.HTML`` object.
    """
    max_heads = check_positive_int("max_heads", max_heads)
    n_heads = check_positive_int("n_heads", n_heads)
    if n_heads > max_heads:
        raise ValueError(f"n_heads={n_heads} is more than max_heads={max_heads}")
    if isinstance(head, bool) or not isinstance(head, int) or not 1 <= head <= n_heads:
        raise ValueError(f"head must be an integer in 1..{n_heads}, got {head!r}")
    length = check_positive_int("length", length, 2)
    uid = explorer_id("posenc-alibi", element_id)
    config = {"length": length, "width": width, "height": height, "size": size,
              "lut": colour_table(SEQUENTIAL_CMAP), "palette": LINE_COLOURS[:6]}
    rows = _slider_rows(uid, "posenc-alibi", [("heads", "heads", 1, max_heads, n_heads),
                                              ("head", "head shown", 1, n_heads, head)])
    svg = (f'<svg class="posenc-alibi-svg posenc-main" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'role="img" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="system-ui, sans-serif" '
           f'fill="currentColor"><title>ALiBi slopes</title><g class="posenc-alibi-axes"></g>'
           f'<g class="posenc-alibi-lines"></g></svg>')
    canvas = (f'<canvas class="posenc-alibi-canvas" role="img" width="{size}" height="{size}" '
              f'style="width:{size}px" aria-label="ALiBi bias matrix"></canvas>')
    matrix = (f'<div style="max-width:{size}px">{canvas}'
              '<p class="posenc-alibi-caption" style="margin:0.3em 0 0; font-size:0.85em"></p></div>')
    body = f'<div class="posenc-controls">{rows}</div><div class="posenc-row">{svg}{matrix}</div>'
    return explorer_frame(uid, "posenc-alibi", config, body, _PRELUDE + _ALIBI_JS, css=_EXTRA_CSS)
