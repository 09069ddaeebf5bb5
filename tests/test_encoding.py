"""Unit tests of the reference encoding and the notebook set-up."""

import math

import numpy as np
import pytest
import torch

import posenc
from posenc import frequencies, sinusoidal_encoding, sinusoidal_encoding_torch, wavelengths


def test_matches_the_formula_elementwise():
    n, d, base = 17, 10, 10000.0
    table = sinusoidal_encoding(n, d)
    for pos in range(n):
        for i in range(d // 2):
            omega = 1.0 / base ** (2 * i / d)
            assert table[pos, 2 * i] == pytest.approx(math.sin(omega * pos), abs=1e-15)
            assert table[pos, 2 * i + 1] == pytest.approx(math.cos(omega * pos), abs=1e-15)


def test_shape_dtype_and_first_row():
    table = sinusoidal_encoding(5, 8)
    assert table.shape == (5, 8) and table.dtype == np.float64
    np.testing.assert_array_equal(table[0], [0, 1] * 4)


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("d", [1, 2, 5, 7, 64])
def test_edge_sizes_and_odd_width(n, d):
    table = sinusoidal_encoding(n, d)
    assert table.shape == (n, d)
    if d % 2 and n:
        omega_last = 1.0 / 10000.0 ** (2 * (d // 2) / d)
        np.testing.assert_allclose(table[:, -1], np.sin(omega_last * np.arange(n)))
    angles = np.arange(n)[:, None] / 10000.0 ** (2 * (np.arange(d) // 2) / d)
    np.testing.assert_allclose(table, np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles)))


def test_bounded_and_unique_over_a_long_range():
    table = sinusoidal_encoding(10000, 64)
    assert np.abs(table).max() <= 1.0
    distances = np.linalg.norm(table[1:] - table[:-1], axis=1)
    assert distances.min() > 0.1          # neighbours differ; every row is distinct in float64
    assert len(np.unique(table.round(6), axis=0)) == len(table)


def test_base_changes_frequencies_and_wavelengths_span_2pi_to_base_2pi():
    d = 512
    w = wavelengths(d)
    assert w[0] == pytest.approx(2 * math.pi)
    assert w[-1] < 10000 * 2 * math.pi and w[-1] > 0.9 * 10000 * 2 * math.pi
    np.testing.assert_allclose(w[1:] / w[:-1], 10000 ** (2 / d))     # geometric progression
    assert not np.allclose(sinusoidal_encoding(9, 8, base=100.0), sinusoidal_encoding(9, 8))
    np.testing.assert_allclose(frequencies(8, base=100.0), 100.0 ** (-np.arange(4) / 4))


@pytest.mark.parametrize("args, fragment", [
    ((-1, 4), "n_positions must be >= 0"),
    ((3, 0), "d_model must be >= 1"),
    ((2.5, 4), "n_positions must be an integer"),
    ((3, "8"), "d_model must be an integer"),
    ((True, 4), "n_positions must be an integer"),
    ((3, 4, 0.0), "base must be a finite number > 0"),
    ((3, 4, -10.0), "base must be a finite number > 0"),
    ((3, 4, float("nan")), "base must be a finite number > 0"),
])
def test_bad_arguments_raise_clear_value_errors(args, fragment):
    with pytest.raises(ValueError, match=fragment):
        sinusoidal_encoding(*args)


def test_numpy_integers_are_accepted():
    assert sinusoidal_encoding(np.int64(3), np.int32(4)).shape == (3, 4)


def test_torch_variant_agrees_and_respects_dtype():
    table = sinusoidal_encoding_torch(50, 16, dtype=torch.float64)
    assert isinstance(table, torch.Tensor) and table.dtype == torch.float64
    np.testing.assert_array_equal(table.numpy(), sinusoidal_encoding(50, 16))
    assert sinusoidal_encoding_torch(3, 4).dtype == torch.get_default_dtype()
    with pytest.raises(ValueError):
        sinusoidal_encoding_torch(3, 0)


def test_setup_notebook_seeds_everything():
    rng_a = posenc.setup_notebook(seed=3)
    first = (rng_a.random(), np.random.rand(), torch.rand(1).item())
    rng_b = posenc.setup_notebook(seed=3)
    assert first == (rng_b.random(), np.random.rand(), torch.rand(1).item())
