"""Unit tests of posenc.lib.rotation: the 2x2 blocks, T(k), its algebra, the profile and the torch version."""

import math

import numpy as np
import pytest
import torch

from posenc import encoding_at, frequencies, sinusoidal_encoding
from posenc.lib.rotation import (
    commuting_part,
    dot_product_profile,
    offset_means,
    offset_only_share,
    pair_rotations,
    rotary,
    rotation_matrix,
    shift_operator,
    shift_vectors,
)


def test_rotation_matrix_entries():
    omega, k = 0.3, 7
    a = omega * k
    expected = [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
    np.testing.assert_allclose(rotation_matrix(omega, k), expected, atol=1e-15)


def test_rotation_matrix_broadcasts():
    blocks = rotation_matrix(np.array([1.0, 0.5, 0.25]), 2)
    assert blocks.shape == (3, 2, 2)
    np.testing.assert_allclose(blocks[1], rotation_matrix(0.5, 2))


@pytest.mark.parametrize("t, k", [(0, 1), (3, -8), (41, 250), (-17, 5)])
def test_one_pair_turns_forward_by_k(t, k):
    omega = 0.07
    pair = np.array([math.sin(omega * t), math.cos(omega * t)])
    shifted = np.array([math.sin(omega * (t + k)), math.cos(omega * (t + k))])
    np.testing.assert_allclose(rotation_matrix(omega, k) @ pair, shifted, atol=1e-13)


@pytest.mark.parametrize("d_model", [2, 8, 64])
@pytest.mark.parametrize("base", [10000.0, 100.0])
def test_shift_operator_shifts_the_encoding(d_model, base):
    positions = np.arange(-200, 300, 7)
    table = encoding_at(positions, d_model, base)
    for k in (-123, -1, 0, 1, 5, 999):
        shifted = table @ shift_operator(k, d_model, base).T
        np.testing.assert_allclose(shifted, encoding_at(positions + k, d_model, base), atol=1e-11)


def test_shift_operator_is_block_diagonal():
    op = shift_operator(3, 8)
    blocks = pair_rotations(3, 8)
    mask = np.kron(np.eye(4), np.ones((2, 2)))
    np.testing.assert_array_equal(op[mask == 0], 0)
    for i in range(4):
        np.testing.assert_array_equal(op[2 * i:2 * i + 2, 2 * i:2 * i + 2], blocks[i])


def test_shift_operator_algebra():
    d = 16
    a, b = 13, -40
    identity = np.eye(d)
    np.testing.assert_allclose(shift_operator(0, d), identity)
    np.testing.assert_allclose(shift_operator(a, d) @ shift_operator(a, d).T, identity, atol=1e-14)
    np.testing.assert_allclose(shift_operator(a, d) @ shift_operator(b, d), shift_operator(a + b, d),
                               atol=1e-13)
    np.testing.assert_allclose(shift_operator(-a, d), shift_operator(a, d).T, atol=1e-15)


@pytest.mark.parametrize("d_model", [0, 3, 7, 2.0, True])
def test_odd_or_bad_width_is_refused(d_model):
    with pytest.raises(ValueError):
        shift_operator(1, d_model)


def test_odd_width_error_explains_the_lone_sine():
    with pytest.raises(ValueError, match="even"):
        dot_product_profile([1], 5)


def test_shift_vectors_equals_the_matrix():
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(4, 5, 12))
    np.testing.assert_allclose(shift_vectors(vectors, -9, 500.0),
                               vectors @ shift_operator(-9, 12, 500.0).T, atol=1e-14)


@pytest.mark.parametrize("d_model", [1, 2, 7, 64])
def test_encoding_at_matches_the_reference(d_model):
    np.testing.assert_allclose(encoding_at(np.arange(40), d_model), sinusoidal_encoding(40, d_model),
                               atol=1e-15)


def test_encoding_at_negative_positions_and_float32():
    table = encoding_at([-3, 0, 2], 4)
    np.testing.assert_allclose(table[0], [math.sin(-3), math.cos(-3), math.sin(-0.03), math.cos(-0.03)],
                               atol=1e-15)
    far = 1_000_000 + np.arange(50)
    single = encoding_at(far, 8, dtype=np.float32)
    assert single.dtype == np.float32 and single.shape == (50, 8)
    assert np.abs(single - encoding_at(far, 8)).max() > 1e-3       # float32 drifts at large positions


def test_dot_product_profile_matches_the_encoding():
    d = 32
    offsets = np.arange(-60, 61)
    profile = dot_product_profile(offsets, d)
    for t in (0, 17, 4000):
        dots = (encoding_at([t], d) * encoding_at(t + offsets, d)).sum(axis=1)
        np.testing.assert_allclose(dots, profile, atol=1e-11)
    np.testing.assert_allclose(profile, profile[::-1])
    assert profile[60] == pytest.approx(d / 2)


def test_rotary_turns_each_position_by_its_own_shift():
    d = 8
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, d))
    positions = [0, 3, -2, 10, 11, 500]
    turned = rotary(torch.from_numpy(x), torch.tensor(positions)).numpy()
    for row, t in zip(range(6), positions):
        np.testing.assert_allclose(turned[row], shift_operator(t, d) @ x[row], atol=1e-12)


def test_rotary_scores_depend_on_the_offset_only():
    torch.manual_seed(0)
    q, k = torch.randn(2, 3, 20, 16, dtype=torch.float64)       # (batch, seq, d)
    scores = rotary(q) @ rotary(k).transpose(-1, -2)
    later = rotary(q, torch.arange(100, 120)) @ rotary(k, torch.arange(100, 120)).transpose(-1, -2)
    torch.testing.assert_close(scores, later)


def test_rotary_keeps_the_dtype():
    x = torch.randn(5, 4)
    assert rotary(x).dtype == torch.float32
    assert frequencies(4).dtype == np.float64


def test_fractional_offsets_shift_too():
    half = shift_operator(0.5, 64)
    np.testing.assert_allclose(half @ half, shift_operator(1, 64), atol=1e-14)
    np.testing.assert_allclose(half @ encoding_at([10], 64)[0], encoding_at([10.5], 64)[0], atol=1e-13)
    midpoint = (encoding_at([10], 64)[0] + encoding_at([11], 64)[0]) / 2
    assert np.linalg.norm(midpoint) < np.linalg.norm(encoding_at([10.5], 64)[0]) == pytest.approx(np.sqrt(32))


def test_offset_only_share_of_a_function_of_the_offset_is_one():
    n = 12
    offset = np.arange(n)[None, :] - np.arange(n)[:, None]
    scores = np.cos(0.3 * offset) + 0.1 * offset
    assert offset_only_share(scores) == pytest.approx(1.0)
    np.testing.assert_allclose(offset_means(scores)[offset + n - 1], scores)


def test_offset_only_share_of_noise_is_small_and_of_an_absolute_pattern_zero():
    rng = np.random.default_rng(0)
    n = 16
    shares = [offset_only_share(rng.normal(size=(n, n))) for _ in range(300)]
    assert abs(np.mean(shares) - (2 * n - 2) / (n * n - 1)) < 0.02
    absolute = np.arange(n)[:, None] + np.arange(n)[None, :]    # m + n: every diagonal has mean N - 1
    assert offset_only_share(absolute) == pytest.approx(0.0, abs=1e-12)


def test_offset_only_share_refuses_what_it_cannot_measure():
    with pytest.raises(ValueError, match="square"):
        offset_only_share(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="constant"):
        offset_only_share(np.ones((4, 4)))


def test_the_commuting_part_commutes_with_every_shift_and_is_a_projection():
    rng = np.random.default_rng(1)
    d = 16
    a = rng.normal(size=(d, d))
    part = commuting_part(a)
    for k in (1, -3, 7.5, 200):
        T = shift_operator(k, d)
        np.testing.assert_allclose(part @ T, T @ part, atol=1e-12)
    np.testing.assert_allclose(commuting_part(part), part)
    assert abs(np.sum((a - part) * part)) < 1e-9                 # orthogonal projection
    assert not np.allclose(a @ shift_operator(1, d), shift_operator(1, d) @ a)


def test_projected_position_term_is_offset_only_exactly_when_the_matrix_commutes():
    rng = np.random.default_rng(2)
    d, n = 16, 24
    pe = sinusoidal_encoding(n, d)
    a = rng.normal(size=(d, d)) / d
    assert offset_only_share(pe @ a @ pe.T) < 0.9
    assert offset_only_share(pe @ commuting_part(a) @ pe.T) == pytest.approx(1.0, abs=1e-12)
    assert offset_only_share(pe @ pe.T) == pytest.approx(1.0, abs=1e-12)      # A = I commutes


def test_commuting_part_needs_a_square_even_matrix():
    with pytest.raises(ValueError, match="square"):
        commuting_part(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="even"):
        commuting_part(np.zeros((3, 3)))
