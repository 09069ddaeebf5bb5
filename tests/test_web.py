"""posenc.book.explorers: the kernel-free explorers are self-contained HTML with stable hooks for the browser tests.

Their behaviour in a browser (sliders redraw, values match posenc) is tested in tests/browser.
"""

import re

import matplotlib
import pytest

from posenc.book import explorers as web, length_explorers, relative_explorers, rotary_explorers, style


def _markup(obj) -> str:
    return obj.data


# Every explorer of the book, and the class its root element carries.
EXPLORERS = [(web.heatmap_explorer, "posenc-heatmap"), (web.unit_circle_explorer, "posenc-circle"),
             (relative_explorers.t5_bucket_explorer, "posenc-t5"), (relative_explorers.alibi_explorer, "posenc-alibi"),
             (rotary_explorers.rotary_logit_explorer, "posenc-rotary"),
             (length_explorers.rope_spectrum_explorer, "posenc-spectrum")]


@pytest.mark.parametrize("make, kind", EXPLORERS, ids=[kind for _, kind in EXPLORERS])
def test_explorers_are_self_contained(make, kind):
    markup = _markup(make(element_id="x"))
    assert markup.startswith(f'<div id="x" class="posenc-explorer {kind}"')
    assert not re.search(r"<script[^>]*\bsrc=", markup), "no external scripts"
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", markup), "no external resources"
    assert markup.count("<script>") == 1 and 'role="img"' in markup and "<noscript>" in markup


def test_heatmap_has_the_hooks_the_browser_tests_use():
    markup = _markup(web.heatmap_explorer(element_id="hm"))
    for hook in ("posenc-heatmap", "posenc-heatmap-d", "posenc-heatmap-base", "posenc-heatmap-positions",
                 "posenc-heatmap-canvas", "posencEncoding", "dataset.dModel"):
        assert hook in markup, hook


def test_heatmap_uses_the_course_diverging_colour_map():
    markup = _markup(web.heatmap_explorer(element_id="hm"))
    r, g, b, _ = matplotlib.colormaps[style.DIVERGING_CMAP].resampled(256)(0)
    assert f"{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}" in markup


def test_unit_circle_has_the_hooks_the_browser_tests_use():
    markup = _markup(web.unit_circle_explorer(shift=3, element_id="uc"))
    for hook in ("posenc-circle-position", "posenc-circle-pair", "posenc-circle-shift",
                 "posenc-circle-point", "posenc-circle-shifted", 'role="img"'):
        assert hook in markup, hook
    assert 'class="posenc-circle-shift"' not in _markup(web.unit_circle_explorer(element_id="u2"))


def test_default_ids_are_numbered_in_call_order(monkeypatch):
    monkeypatch.setattr(web, "_counters", {})
    ids = [re.match(r'<div id="([^"]+)"', _markup(web.heatmap_explorer())).group(1) for _ in range(3)]
    assert ids == ["posenc-heatmap", "posenc-heatmap-2", "posenc-heatmap-3"]


@pytest.mark.parametrize("kwargs", [
    {"d_model": 48}, {"base": 5.0}, {"positions": 1}, {"positions": 500, "max_positions": 400},
    {"bases": (10, -1)}, {"element_id": "bad id"}, {"element_id": ""},
])
def test_heatmap_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        web.heatmap_explorer(**kwargs)


@pytest.mark.parametrize("kwargs", [
    {"pair": 8}, {"pair": -1}, {"d_model": 1}, {"position": 101}, {"shift": 21}, {"shift": True}, {"base": 0},
])
def test_unit_circle_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        web.unit_circle_explorer(**kwargs)


def test_standalone_page_wraps_fragments():
    page = web.standalone_page(web.heatmap_explorer(element_id="a"), "<p>hi</p>", title="T")
    assert page.startswith("<!DOCTYPE html>") and '<div id="a"' in page and "<p>hi</p>" in page
