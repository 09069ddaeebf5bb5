"""posenc.lib.relative: offsets, Shaw's clipped index, T5's buckets, ALiBi's slopes and bias."""

import doctest
import math

import numpy as np
import pytest
import torch

from posenc.lib import relative
from posenc.lib.relative import (
    alibi_bias,
    alibi_slopes,
    clipped_index,
    offsets_between,
    relative_positions,
    t5_bucket,
)


def test_docstring_examples():
    assert doctest.testmod(relative).failed == 0


# --- offsets -----------------------------------------------------------------------------------------

def test_relative_positions_are_key_minus_query():
    offsets = relative_positions(3, 5)
    assert offsets.shape == (3, 5) and offsets.dtype == torch.long
    assert all(offsets[i, j] == j - i for i in range(3) for j in range(5))
    assert relative_positions(0, 4).shape == (0, 4)


def test_offsets_between_arbitrary_positions():
    offsets = offsets_between(torch.tensor([10, 2]), torch.tensor([0, 5, 7]))
    assert offsets.tolist() == [[-10, -5, -3], [-2, 3, 5]]
    with pytest.raises(ValueError, match="1-D"):
        offsets_between(torch.zeros(2, 2), torch.zeros(3))


@pytest.mark.parametrize("bad", [-1, 2.0, True])
def test_relative_positions_rejects_bad_sizes(bad):
    with pytest.raises(ValueError):
        relative_positions(bad, 3)


# --- Shaw ----------------------------------------------------------------------------------------------

def test_clipped_index_by_hand():
    offsets = torch.arange(-5, 6)
    assert clipped_index(offsets, 2).tolist() == [0, 0, 0, 0, 1, 2, 3, 4, 4, 4, 4]
    assert clipped_index(offsets, 0).tolist() == [0] * 11
    assert clipped_index(relative_positions(4, 4), 1).tolist() == [[1, 2, 2, 2], [0, 1, 2, 2], [0, 0, 1, 2],
                                                                   [0, 0, 0, 1]]


def test_clipped_index_rejects_a_negative_distance():
    with pytest.raises(ValueError, match="max_distance"):
        clipped_index(torch.arange(3), -1)


# --- T5 ------------------------------------------------------------------------------------------------

def slow_t5_bucket(offset: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """One offset at a time, written from the rule in the T5 paper and its reference code; the logarithm
    in float32 as there."""
    buckets, first = num_buckets, 0
    if bidirectional:
        buckets //= 2
        first = buckets if offset > 0 else 0
        distance = abs(offset)
    else:
        distance = max(-offset, 0)
    exact = buckets // 2
    if distance < exact:
        return first + distance
    f32 = np.float32
    log_ratio = np.log(f32(distance) / f32(exact))
    spread = log_ratio / f32(math.log(max_distance / exact)) * f32(buckets - exact)
    return first + min(exact + int(spread), buckets - 1)


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 64), (8, 20), (64, 256), (10, 50)])
def test_t5_buckets_match_the_slow_rule_at_every_offset(bidirectional, num_buckets, max_distance):
    offsets = torch.arange(-300, 301)
    fast = t5_bucket(offsets, bidirectional, num_buckets, max_distance)
    slow = [slow_t5_bucket(int(r), bidirectional, num_buckets, max_distance) for r in offsets]
    assert fast.tolist() == slow
    assert fast.min() == 0 and fast.max() == num_buckets - 1


# num_buckets 32, max_distance 128, worked by hand (see the formula in the docstring)
HAND = {-200: (15, 31), -128: (15, 31), -20: (10, 17), -8: (8, 8), -1: (1, 1), 0: (0, 0), 1: (17, 0),
        7: (23, 0), 8: (24, 0), 20: (26, 0), 127: (31, 0), 128: (31, 0), 200: (31, 0)}


@pytest.mark.parametrize("offset", list(HAND))
def test_t5_buckets_by_hand(offset):
    bidirectional, causal = HAND[offset]
    assert t5_bucket(torch.tensor(offset)).item() == bidirectional
    assert t5_bucket(torch.tensor(offset), bidirectional=False).item() == causal


def test_t5_last_bucket_starts_before_max_distance():
    past = -torch.arange(0, 200)
    bidirectional, causal = t5_bucket(past), t5_bucket(past, bidirectional=False)
    assert int(torch.nonzero(bidirectional == 15)[0]) == 91
    assert int(torch.nonzero(causal == 31)[0]) == 113
    assert torch.all(bidirectional[:8] == torch.arange(8)) and torch.all(causal[:16] == torch.arange(16))
    assert torch.all(bidirectional.diff() >= 0) and torch.all(causal.diff() >= 0)    # monotone in distance


def test_t5_bucket_of_a_matrix_keeps_its_shape():
    offsets = relative_positions(5, 7)
    buckets = t5_bucket(offsets, num_buckets=8, max_distance=16)
    assert buckets.shape == (5, 7) and buckets.dtype == torch.long
    assert buckets[2, 2] == 0 and buckets[2, 3] == 4 + 1


@pytest.mark.parametrize("kwargs,match", [({"num_buckets": 2}, "num_buckets"), ({"max_distance": 8}, "max_distance"),
                                          ({"max_distance": 0}, "max_distance")])
def test_t5_bucket_rejects_bad_settings(kwargs, match):
    with pytest.raises(ValueError, match=match):
        t5_bucket(torch.arange(3), **kwargs)


def test_t5_bucket_needs_integer_offsets():
    with pytest.raises(ValueError, match="integer"):
        t5_bucket(torch.tensor([0.5]))


# --- ALiBi ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_heads,exponents", [
    (8, [1, 2, 3, 4, 5, 6, 7, 8]),
    (16, [0.5 * h for h in range(1, 17)]),
    (6, [2, 4, 6, 8, 1, 3]),                        # 4 heads' slopes, then every other one of 8 heads'
    (12, [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5]),
    (3, [4, 8, 2]),
    (1, [8]),
])
def test_alibi_slopes_by_hand(n_heads, exponents):
    slopes = alibi_slopes(n_heads)
    assert slopes.dtype == torch.float64 and slopes.shape == (n_heads,)
    np.testing.assert_allclose(slopes.numpy(), [2.0 ** -k for k in exponents], rtol=1e-14)


def test_alibi_slopes_for_eight_heads_are_halvings():
    assert alibi_slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]


@pytest.mark.parametrize("bad", [0, -4, 2.5])
def test_alibi_slopes_reject_bad_head_counts(bad):
    with pytest.raises(ValueError, match="n_heads"):
        alibi_slopes(bad)


def test_alibi_bias_is_minus_slope_times_distance():
    slopes = alibi_slopes(4)
    bias = alibi_bias(relative_positions(6, 6), slopes)
    assert bias.shape == (4, 6, 6)
    for h in range(4):
        for i in range(6):
            for j in range(i + 1):                    # the paper's causal case: -m (i - j)
                assert bias[h, i, j].item() == pytest.approx(-slopes[h].item() * (i - j))
    torch.testing.assert_close(bias, bias.transpose(1, 2))        # the course's symmetric choice for j > i


def test_alibi_gives_the_official_codes_attention():
    """The official code adds +m j; after the causal mask and the softmax it is the same attention."""
    n, slopes = 9, alibi_slopes(8)
    logits = torch.randn(8, n, n, dtype=torch.float64)
    future = torch.ones(n, n, dtype=torch.bool).triu(1)
    ours = (logits + alibi_bias(relative_positions(n, n), slopes)).masked_fill(future, -math.inf)
    theirs = (logits + slopes[:, None, None] * torch.arange(n)).masked_fill(future, -math.inf)
    torch.testing.assert_close(ours.softmax(-1), theirs.softmax(-1))
    assert not torch.allclose(ours.tril(), theirs.tril())
