"""Chapter 6's in-page explorer in headless Chromium: a query and a key turning as their positions move.

Moving the query position turns both arrows and leaves the logit where it was; moving the offset changes it;
the drawn arrows and the logit match the package's RoPE. Tested on a page of its own and on the built
chapter page.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posenc.book import rotary_explorers as rx
from posenc.lib.rotary import apply_rotary
from tests.browser import drive, helpers

pytestmark = pytest.mark.xdist_group("browser")

CHAPTER = "notebooks/06_rotary_embeddings"


def state(tab, root: str) -> dict:
    return tab.eval_on_selector(root, """el => {
        const cfg = JSON.parse(el.querySelector("script.posenc-config").textContent);
        const q = el.querySelector("circle.posenc-rotary-query"), k = el.querySelector("circle.posenc-rotary-key");
        return {m: +el.dataset.position, offset: +el.dataset.offset, pair: +el.dataset.pair,
                logit: +el.dataset.logit, query: cfg.query, key: cfg.key, base: cfg.base, scale: cfg.scale,
                qx: +q.getAttribute("cx"), qy: +q.getAttribute("cy"), kx: +k.getAttribute("cx"),
                ky: +k.getAttribute("cy"), text: el.querySelector(".posenc-readout").textContent,
                bars: Array.from(el.querySelectorAll("rect.posenc-rotary-bar")).map(b => +b.getAttribute("data-value"))};
    }""")


def turned(vector, pos, base):
    return apply_rotary(torch.tensor(vector, dtype=torch.float64)[None], torch.tensor([pos]), base)[0].numpy()


def assert_matches_reference(s: dict) -> None:
    m, n, i = s["m"], s["m"] + s["offset"], s["pair"]
    query, key = np.array(s["query"]), np.array(s["key"])
    assert math.isclose(s["logit"], rx.logit(query, key, m, n, s["base"]), abs_tol=1e-9), s
    q, k = turned(query, m, s["base"]), turned(key, n, s["base"])
    assert math.isclose(s["logit"], float(q @ k), abs_tol=1e-9)
    # the arrows are pair i of R_m q and R_n k, scaled; SVG's y axis points down
    assert math.isclose(s["qx"], q[2 * i] / s["scale"], abs_tol=1e-9) and math.isclose(s["qy"], -q[2 * i + 1] / s["scale"], abs_tol=1e-9)
    assert math.isclose(s["kx"], k[2 * i] / s["scale"], abs_tol=1e-9) and math.isclose(s["ky"], -k[2 * i + 1] / s["scale"], abs_tol=1e-9)
    parts = (q * k).reshape(-1, 2).sum(-1)
    np.testing.assert_allclose(s["bars"], parts, atol=1e-9)
    assert f"m = {m}, key at n = {n}" in s["text"], s["text"]


def check_rotary(tab, root: str) -> None:
    start = state(tab, root)
    assert_matches_reference(start)
    position = f"{root} input.posenc-rotary-position"
    at_end = tab.eval_on_selector(position, "s => +s.value + 3 > +s.max")
    drive.move(tab, position, "ArrowLeft" if at_end else "ArrowRight", times=3)
    moved = state(tab, root)
    assert moved["m"] == start["m"] + (-3 if at_end else 3) and moved["offset"] == start["offset"]
    assert (moved["qx"], moved["qy"]) != (start["qx"], start["qy"]), "the query did not turn with its position"
    assert math.isclose(moved["logit"], start["logit"], abs_tol=1e-9), "the logit changed at a fixed offset"
    assert_matches_reference(moved)
    offset = f"{root} input.posenc-rotary-offset"
    at_end = tab.eval_on_selector(offset, "s => +s.value === +s.max")
    drive.move(tab, offset, "ArrowLeft" if at_end else "ArrowRight")
    other = state(tab, root)
    assert not math.isclose(other["logit"], moved["logit"], abs_tol=1e-6), "a new offset left the logit alone"
    assert_matches_reference(other)
    pair = f"{root} input.posenc-rotary-pair"
    at_end = tab.eval_on_selector(pair, "s => +s.value === +s.max")
    drive.move(tab, pair, "ArrowLeft" if at_end else "ArrowRight")
    assert_matches_reference(state(tab, root))
    for m, n in ((0, 0), (5, 17), (90, 71)):
        got = tab.eval_on_selector(root, "(el, mn) => el.posencLogit(mn[0], mn[1])", [m, n])
        assert math.isclose(got, rx.logit(np.array(other["query"]), np.array(other["key"]), m, n, other["base"]),
                            abs_tol=1e-9)


def test_rotary_explorer_keeps_the_logit_at_a_fixed_offset(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "rotary",
                                  rx.rotary_logit_explorer(element_id="rot", position=10, offset=4))
    check_rotary(tab, "#rot")
    helpers.screenshot(tab, "#rot", "explorer-rotary")
    assert not tab.errors, tab.errors


def test_rotary_explorer_on_the_chapter_page(base_url, site, new_page):
    tab, (roots,) = helpers.open_chapter_explorers(base_url, site, new_page, CHAPTER, "posenc-rotary")
    assert roots, "the chapter page shows no rotary explorer"
    loading = len(tab.errors)          # the page's own load (refused external resources) is test_pages' business
    for element_id in roots:
        check_rotary(tab, f"#{element_id}")
    assert not tab.errors[loading:], tab.errors[loading:]
