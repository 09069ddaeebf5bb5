"""posenc.book.relative_explorers: chapter 5's kernel-free explorers are self-contained HTML with stable hooks.

Their behaviour in a browser (controls redraw, values match posenc.lib.relative) is tested in
tests/browser/test_ch05_explorers.py; here the markup and the arguments.
"""

import matplotlib
import pytest
import torch

from posenc.book import relative_explorers as web
from posenc.book import style
from posenc.lib.relative import t5_bucket
from tests.conftest import explorer_config


def markup(obj) -> str:
    return obj.data


def test_t5_explorer_has_the_hooks_the_browser_tests_use():
    text = markup(web.t5_bucket_explorer(element_id="t5"))
    assert 'class="posenc-explorer posenc-t5"' in text
    for hook in ("posenc-t5-buckets", "posenc-t5-distance", "posenc-t5-span", "posenc-t5-bidirectional",
                 "posenc-t5-steps", "posencBucket", "dataset.numBuckets", "dataset.lastStart"):
        assert hook in text, hook
    assert " checked>" in text and " checked>" not in markup(web.t5_bucket_explorer(bidirectional=False))


def test_alibi_explorer_has_the_hooks_the_browser_tests_use():
    text = markup(web.alibi_explorer(element_id="al"))
    assert 'class="posenc-explorer posenc-alibi"' in text
    for hook in ("posenc-alibi-heads", "posenc-alibi-head", "posenc-alibi-line", "posenc-alibi-canvas",
                 "posencSlopes", "posencBias", "dataset.heads"):
        assert hook in text, hook
    r, g, b, _ = matplotlib.colormaps[style.SEQUENTIAL_CMAP].resampled(256)(0)
    assert f"{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}" in text
    assert "#F0E442" not in text, "no yellow lines"


def test_controls_start_at_the_requested_setting():
    cfg = explorer_config(web.t5_bucket_explorer(num_buckets=16, max_distance=256, span=40, element_id="a"))
    text = markup(web.t5_bucket_explorer(num_buckets=16, max_distance=256, span=40, element_id="a"))
    assert f'class="posenc-t5-buckets" min="0" max="3" step="1" value="{cfg["buckets"].index(16)}"' in text
    assert f'value="{cfg["distances"].index(256)}"' in text
    text = markup(web.alibi_explorer(n_heads=6, head=2, element_id="b"))
    assert 'class="posenc-alibi-heads" min="1" max="32" step="1" value="6"' in text
    assert 'class="posenc-alibi-head" min="1" max="6" step="1" value="2"' in text


@pytest.mark.parametrize("kwargs", [
    {"num_buckets": 12}, {"max_distance": 100}, {"span": 7}, {"bucket_choices": (8, 10)},
    {"distance_choices": (16, 64)}, {"element_id": "bad id"},
])
def test_t5_explorer_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        web.t5_bucket_explorer(**kwargs)


@pytest.mark.parametrize("kwargs", [
    {"n_heads": 0}, {"n_heads": 40}, {"head": 9}, {"head": 0}, {"head": True}, {"length": 1}, {"max_heads": 0},
])
def test_alibi_explorer_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        web.alibi_explorer(**kwargs)


def test_the_choices_cover_the_library_rule():
    """Every setting the T5 explorer offers is one the library accepts (max_distance above the exact buckets)."""
    cfg = explorer_config(web.t5_bucket_explorer(element_id="c"))
    for num_buckets in cfg["buckets"]:
        for max_distance in cfg["distances"]:
            for bidirectional in (True, False):
                t5_bucket(torch.arange(-3, 4), bidirectional, num_buckets, max_distance)
