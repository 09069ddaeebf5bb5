"""Chapter 7's in-page explorer in headless Chromium: the RoPE spectrum under context extension.

Moving the scale slider redraws the lines; every frequency the browser computes matches
posenc.lib.extension (position interpolation, the NTK-aware base, YaRN's NTK-by-parts frequencies and its
temperature) at every setting the test visits. Tested on a page of its own and on the built chapter page.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc.book import length_explorers as lx
from posenc.lib import extension
from tests.browser import drive, helpers

pytestmark = pytest.mark.xdist_group("browser")

CHAPTER = "notebooks/07_longer_than_trained"


def state(tab, root: str) -> dict:
    return tab.eval_on_selector(root, """el => {
        const d = +el.dataset.d, pairs = d / 2, methods = ["none", "pi", "ntk", "yarn"], out = {};
        methods.forEach(m => { out[m] = []; for (let i = 0; i < pairs; i++) out[m].push(el.posencFrequency(m, i)); });
        return {scale: +el.dataset.scale, d: d, L: +el.dataset.trainLength, base: +el.dataset.base,
                frequencies: out, temperature: el.posencTemperature(),
                lines: methods.map(m => el.querySelector("polyline.posenc-spectrum-" + m).getAttribute("points")),
                text: el.querySelector(".posenc-readout").textContent};
    }""")


def reference(s: dict) -> dict:
    """omega'_i for each method from posenc.lib.extension (position interpolation as omega_i / s)."""
    out = {}
    for method in lx.SPECTRUM_METHODS:
        settings = extension.extension_settings(method, s["scale"], s["d"], s["base"], train_length=s["L"])
        out[method] = (settings["omega"] * settings["position_scale"]).numpy()
    return out


def assert_matches_reference(s: dict) -> None:
    for method, want in reference(s).items():
        np.testing.assert_allclose(s["frequencies"][method], want, rtol=1e-12,
                                   err_msg=f"{method} at s={s['scale']}, d={s['d']}, L={s['L']}")
    assert math.isclose(s["temperature"], extension.yarn_attention_factor(s["scale"]), rel_tol=1e-12)
    logit = f"{extension.yarn_logit_scale(s['scale']):.3f}"
    assert f"logits by {logit}" in s["text"], s["text"]
    kept = int((s["L"] * extension.rotary_frequencies(s["d"], s["base"]) / (2 * math.pi) > 32).sum())
    assert f"YaRN keeps {kept} of {s['d'] // 2} pairs" in s["text"], s["text"]


def check_spectrum(tab, root: str) -> None:
    start = state(tab, root)
    assert_matches_reference(start)
    for key in ("scale", "d", "length"):
        slider = f"{root} input.posenc-spectrum-{key}"
        at_end = tab.eval_on_selector(slider, "s => +s.value === +s.max")
        before = state(tab, root)
        drive.move(tab, slider, "ArrowLeft" if at_end else "ArrowRight")
        after = state(tab, root)
        assert after != before, f"moving the {key} slider changed nothing"
        assert after["lines"] != before["lines"], f"moving the {key} slider did not redraw"
        assert_matches_reference(after)
    scale = f"{root} input.posenc-spectrum-scale"
    drive.move(tab, scale, "Home")
    one = state(tab, root)
    assert one["scale"] == 1 and all(np.allclose(one["frequencies"][m], one["frequencies"]["none"])
                                     for m in lx.SPECTRUM_METHODS), "at s = 1 every method must be plain RoPE"
    assert_matches_reference(one)


def test_spectrum_explorer_matches_the_library(scratch_url, new_page):
    tab = helpers.open_standalone(scratch_url, new_page, "spectrum", lx.rope_spectrum_explorer(element_id="sp"))
    check_spectrum(tab, "#sp")
    drive.move(tab, "#sp input.posenc-spectrum-scale", "End")
    helpers.screenshot(tab, "#sp", "explorer-spectrum")
    assert not tab.errors, tab.errors


def test_spectrum_explorer_on_the_chapter_page(base_url, site, new_page):
    tab, (roots,) = helpers.open_chapter_explorers(base_url, site, new_page, CHAPTER, "posenc-spectrum")
    assert roots, "the chapter page shows no spectrum explorer"
    loading = len(tab.errors)
    for element_id in roots:
        check_spectrum(tab, f"#{element_id}")
    assert not tab.errors[loading:], tab.errors[loading:]
