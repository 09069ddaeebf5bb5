"""posenc.book.rotary_explorers: chapter 6's in-page explorer is self-contained HTML with stable hooks, and its
Python twin computes the same logit as the package's RoPE (its behaviour in a browser: tests/browser)."""

import re

import numpy as np
import pytest
import torch

from posenc.book import rotary_explorers as rx
from posenc.book.explorers import standalone_page
from posenc.lib.rotary import apply_rotary
from tests.conftest import explorer_config


def _markup(obj) -> str:
    return obj.data


def test_explorer_has_the_hooks_the_browser_tests_use():
    markup = _markup(rx.rotary_logit_explorer(element_id="r", d_head=8))
    for hook in ("posenc-rotary-position", "posenc-rotary-offset", "posenc-rotary-pair", "posenc-rotary-query",
                 "posenc-rotary-key", "posenc-rotary-bar", "posencLogit", "dataset.logit", 'role="img"',
                 "aria-valuetext"):
        assert hook in markup, hook
    assert markup.count('class="posenc-rotary-bar"') == 4


def test_explorer_carries_the_vectors_python_uses():
    markup = _markup(rx.rotary_logit_explorer(element_id="r", d_head=6, seed=3, base=500.0))
    config = explorer_config(markup)
    query, key = rx.explorer_vectors(6, 3)
    assert config["query"] == query.tolist() and config["key"] == key.tolist() and config["base"] == 500.0


def test_python_twin_is_the_rotary_logit():
    query, key = rx.explorer_vectors()
    q = apply_rotary(torch.from_numpy(query)[None], torch.tensor([7]))[0]
    k = apply_rotary(torch.from_numpy(key)[None], torch.tensor([19]))[0]
    assert np.isclose(rx.logit(query, key, 7, 19), float(q @ k))
    same_offset = [rx.logit(query, key, m, m + 12) for m in range(0, 200, 7)]
    assert np.ptp(same_offset) < 1e-12
    assert not np.isclose(rx.logit(query, key, 7, 20), rx.logit(query, key, 7, 19))


def test_default_ids_are_numbered(monkeypatch):
    from posenc.book import explorers

    monkeypatch.setattr(explorers, "_counters", {})
    ids = [re.match(r'<div id="([^"]+)"', _markup(rx.rotary_logit_explorer())).group(1) for _ in range(2)]
    assert ids == ["posenc-rotary", "posenc-rotary-2"]


@pytest.mark.parametrize("kwargs", [
    {"d_head": 7}, {"d_head": 0}, {"base": 0}, {"base": float("inf")}, {"position": 101}, {"position": -1},
    {"offset": 21}, {"offset": -21}, {"pair": 4}, {"pair": True}, {"max_offset": 0}, {"element_id": "a b"},
])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        rx.rotary_logit_explorer(**kwargs)


def test_standalone_page_holds_the_explorer():
    page = standalone_page(rx.rotary_logit_explorer(element_id="r"), title="ch06")
    assert page.startswith("<!DOCTYPE html>") and '<div id="r"' in page
