"""Chapter 5's explorers in headless Chromium: T5's buckets and ALiBi's slopes respond to their controls and
match posenc.lib.relative, on a page of their own and on the chapter's built page."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from posenc.book.relative_explorers import alibi_explorer, t5_bucket_explorer
from posenc.lib.relative import alibi_slopes, t5_bucket
from tests.browser import drive, helpers

# All browser tests share one worker under `pytest -n 2 --dist loadgroup`, so each page loads once.
pytestmark = pytest.mark.xdist_group("browser")

CHAPTER = "notebooks/05_relative_biases"


# ---------------------------------------------------------------------------------------------------
# T5's buckets


def t5_state(tab, root: str) -> dict:
    return tab.eval_on_selector(root, """el => ({
        numBuckets: +el.dataset.numBuckets, maxDistance: +el.dataset.maxDistance, span: +el.dataset.span,
        bidirectional: el.dataset.bidirectional === "true", lastStart: +el.dataset.lastStart,
        used: +el.dataset.used, path: el.querySelector("path.posenc-t5-steps").getAttribute("d"),
        text: el.querySelector(".posenc-readout").textContent})""")


def assert_t5_matches_library(tab, root: str) -> None:
    state = t5_state(tab, root)
    offsets = list(range(-state["span"], state["span"] + 1))
    got = tab.eval_on_selector(root, "(el, offsets) => offsets.map(o => el.posencBucket(o))", offsets)
    expected = t5_bucket(torch.tensor(offsets), state["bidirectional"], state["numBuckets"], state["maxDistance"])
    assert got == expected.tolist(), f"the explorer's buckets differ from posenc's at {state}"
    last = (state["numBuckets"] // 2 if state["bidirectional"] else state["numBuckets"]) - 1
    far = t5_bucket(-torch.arange(100_000), state["bidirectional"], state["numBuckets"], state["maxDistance"])
    assert state["lastStart"] == int(torch.nonzero(far == last)[0]), state
    assert f"starts at distance {state['lastStart']} " in state["text"], state["text"]
    assert state["used"] == len(set(expected.tolist())) and f"use {state['used']} of" in state["text"]


def check_t5(tab, root: str) -> None:
    assert_t5_matches_library(tab, root)
    for key in ("buckets", "distance", "span"):
        before = t5_state(tab, root)
        slider = f"{root} input.posenc-t5-{key}"
        at_max = tab.eval_on_selector(slider, "s => +s.value === +s.max")
        drive.move(tab, slider, "ArrowLeft" if at_max else "ArrowRight")
        after = t5_state(tab, root)
        assert after != before and after["path"] != before["path"], f"moving {key} changed nothing"
        assert_t5_matches_library(tab, root)
    before = t5_state(tab, root)
    tab.locator(f"{root} input.posenc-t5-bidirectional").click()
    after = t5_state(tab, root)
    assert after["bidirectional"] != before["bidirectional"] and after["path"] != before["path"]
    assert_t5_matches_library(tab, root)
    if not after["bidirectional"]:                 # causal: every future offset shares bucket 0
        assert tab.eval_on_selector(root, "el => [1, 5, 1000].map(o => el.posencBucket(o))") == [0, 0, 0]


# ---------------------------------------------------------------------------------------------------
# ALiBi's slopes


def alibi_state(tab, root: str) -> dict:
    return tab.eval_on_selector(root, """el => ({
        heads: +el.dataset.heads, head: +el.dataset.head, length: +el.dataset.length,
        slopes: el.posencSlopes(), lines: el.querySelectorAll("polyline.posenc-alibi-line").length,
        selected: Array.from(el.querySelectorAll("polyline.posenc-alibi-selected")).map(p => +p.dataset.head),
        headMax: +el.querySelector("input.posenc-alibi-head").max,
        text: el.querySelector(".posenc-readout").textContent})""")


def alibi_picture(tab, root: str) -> str:
    return tab.eval_on_selector(f"{root} canvas.posenc-alibi-canvas", "c => c.toDataURL()")


def assert_alibi_matches_library(tab, root: str) -> None:
    state = alibi_state(tab, root)
    np.testing.assert_allclose(state["slopes"], alibi_slopes(state["heads"]).numpy(), rtol=1e-12)
    assert state["lines"] == state["heads"] and state["selected"] == [state["head"]], state
    assert state["headMax"] == state["heads"] and 1 <= state["head"] <= state["heads"]
    m = alibi_slopes(state["heads"]).numpy()[state["head"] - 1]
    cells = [[state["head"], 5, 2], [state["head"], 9, 9], [state["head"], 3, 7], [1, state["length"] - 1, 0]]
    got = tab.eval_on_selector(root, "(el, cells) => cells.map(([h, i, j]) => el.posencBias(h, i, j))", cells)
    assert got[1] == 0 and got[2] is None, got                   # the diagonal is 0, the future masked
    np.testing.assert_allclose(got[0], -m * 3, rtol=1e-12)
    np.testing.assert_allclose(got[3], -alibi_slopes(state["heads"]).numpy()[0] * (state["length"] - 1), rtol=1e-12)
    assert f"{state['heads']} heads;" in state["text"]
    if state["heads"] & (state["heads"] - 1):                      # not a power of two: says so
        assert "not a power of two" in state["text"] and "appended" in state["text"]


def check_alibi(tab, root: str) -> None:
    assert_alibi_matches_library(tab, root)
    heads = f"{root} input.posenc-alibi-heads"
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
        before, picture = alibi_state(tab, root), alibi_picture(tab, root)
        at_edge = tab.eval_on_selector(heads, f"s => +s.value === +s.{'max' if key == 'ArrowRight' else 'min'}")
        drive.move(tab, heads, ("ArrowLeft" if key == "ArrowRight" else "ArrowRight") if at_edge else key)
        after = alibi_state(tab, root)
        assert after["heads"] != before["heads"] and after["slopes"] != before["slopes"]
        assert_alibi_matches_library(tab, root)
    head = f"{root} input.posenc-alibi-head"
    before, picture = alibi_state(tab, root), alibi_picture(tab, root)
    at_max = tab.eval_on_selector(head, "s => +s.value === +s.max")
    drive.move(tab, head, "ArrowLeft" if at_max else "ArrowRight")
    after = alibi_state(tab, root)
    assert after["head"] != before["head"] and alibi_picture(tab, root) != picture, "the matrix did not change"
    assert_alibi_matches_library(tab, root)
    tab.eval_on_selector(heads, "s => { s.value = 1; s.dispatchEvent(new Event('input')); }")
    assert alibi_state(tab, root)["head"] == 1, "the head shown must stay within the head count"
    assert_alibi_matches_library(tab, root)


# ---------------------------------------------------------------------------------------------------
# On pages of their own


def test_t5_explorer_follows_its_controls(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "t5-buckets", t5_bucket_explorer(element_id="t5"))
    helpers.screenshot(tab, "#t5", "explorer-t5-buckets")
    check_t5(tab, "#t5")
    assert not tab.errors, tab.errors


def test_t5_explorer_starts_causal_when_asked(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "t5-causal",
                t5_bucket_explorer(num_buckets=16, max_distance=64, bidirectional=False, span=80, element_id="c"))
    state = t5_state(tab, "#c")
    assert (state["numBuckets"], state["maxDistance"], state["span"], state["bidirectional"]) == (16, 64, 80, False)
    assert_t5_matches_library(tab, "#c")
    assert not tab.errors, tab.errors


def test_alibi_explorer_follows_its_controls(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "alibi", alibi_explorer(n_heads=6, element_id="al"))
    helpers.screenshot(tab, "#al", "explorer-alibi")
    check_alibi(tab, "#al")
    assert not tab.errors, tab.errors


def test_two_explorers_on_one_page_do_not_interfere(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "two-t5", t5_bucket_explorer(element_id="one"), t5_bucket_explorer(element_id="two"))
    untouched = t5_state(tab, "#two")
    drive.move(tab, "#one input.posenc-t5-buckets", "ArrowLeft")
    assert t5_state(tab, "#two") == untouched and t5_state(tab, "#one") != untouched
    assert not tab.errors, tab.errors


# ---------------------------------------------------------------------------------------------------
# On the chapter's page of the built site


def test_the_chapter_page_shows_working_explorers(site, base_url, new_page):
    tab, (t5_ids, alibi_ids) = helpers.open_chapter_explorers(base_url, site, new_page, CHAPTER,
                                                             "posenc-t5", "posenc-alibi")
    assert len(t5_ids) == 1 and len(alibi_ids) == 1, (t5_ids, alibi_ids)
    for element_id in t5_ids:
        tab.locator(f"#{element_id}").scroll_into_view_if_needed()
        helpers.screenshot(tab, f"#{element_id}", "chapter5-t5")
        check_t5(tab, f"#{element_id}")
    for element_id in alibi_ids:
        tab.locator(f"#{element_id}").scroll_into_view_if_needed()
        helpers.screenshot(tab, f"#{element_id}", "chapter5-alibi")
        check_alibi(tab, f"#{element_id}")
    errors = [e for e in tab.errors if not re.search(r"net::ERR_BLOCKED_BY_CLIENT|Failed to load resource", e)]
    assert not errors, errors
