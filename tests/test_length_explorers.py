"""posenc.book.length_explorers: chapter 7's in-page explorer is self-contained HTML with stable hooks.

Its behaviour in a browser (the sliders redraw, the drawn factors match posenc.lib.extension) is tested in
tests/browser/test_ch07_explorers.py.
"""

import re

import pytest

from posenc.book import length_explorers as web
from posenc.book.style import OKABE_ITO
from tests.conftest import explorer_config


def _markup(obj) -> str:
    return obj.data


def test_it_has_the_hooks_the_browser_tests_use():
    markup = _markup(web.rope_spectrum_explorer(element_id="sp"))
    for hook in ("posenc-spectrum-scale", "posenc-spectrum-d", "posenc-spectrum-length", "posencFrequency",
                 "posencTemperature", "dataset.scale", 'role="img"', "aria-live"):
        assert hook in markup, hook
    for method in web.SPECTRUM_METHODS:
        assert f'<polyline class="posenc-spectrum-{method}"' in markup


def test_the_sliders_start_at_the_requested_setting():
    markup = _markup(web.rope_spectrum_explorer(scale=16, d_head=64, train_length=2048, element_id="sp"))
    config = explorer_config(markup)
    for key, values, wanted in (("scale", "scales", 16), ("d", "ds", 64), ("length", "lengths", 2048)):
        value = int(re.search(rf'class="posenc-spectrum-{key}" min="0" max="\d+" step="1" value="(\d+)"', markup).group(1))
        assert config[values][value] == wanted


def test_the_methods_use_colour_blind_safe_colours_and_differ_in_dash():
    assert {colour for colour, _ in web.SPECTRUM_STYLES.values()} <= set(OKABE_ITO)
    assert len({dash for _, dash in web.SPECTRUM_STYLES.values() if dash}) >= 2


def test_default_ids_are_numbered_in_call_order(monkeypatch):
    from posenc.book import explorers

    monkeypatch.setattr(explorers, "_counters", {})
    ids = [re.match(r'<div id="([^"]+)"', _markup(web.rope_spectrum_explorer())).group(1) for _ in range(2)]
    assert ids == ["posenc-spectrum", "posenc-spectrum-2"]


@pytest.mark.parametrize("kwargs", [
    {"scale": 5}, {"d_head": 12}, {"train_length": 100}, {"head_widths": (6, 7)}, {"head_widths": (2,)},
    {"scales": (0.5, 2)}, {"base": 1.0}, {"alpha": 32, "beta": 1}, {"element_id": "bad id"},
])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        web.rope_spectrum_explorer(**kwargs)
