"""The reference sinusoidal positional encoding (Vaswani et al., 2017, section 3.5).

Notation (see the book's notation page): ``pos`` is the position (from 0), ``d_model`` the width,
``i`` the pair index with 0 <= i < d_model / 2, and

    omega_i = 1 / base ** (2 i / d_model)
    PE[pos, 2 i]     = sin(omega_i * pos)
    PE[pos, 2 i + 1] = cos(omega_i * pos)

This is the paper's *interleaved* layout. With an odd ``d_model`` the last column is the sine of the
last pair, whose cosine would not fit.
"""

from __future__ import annotations

import numbers

import numpy as np

DEFAULT_BASE = 10000.0


def _validate(n_positions, d_model, base) -> tuple[int, int, float]:
    """Check the arguments and return them as (int, int, float); raise ValueError otherwise."""
    for name, value, smallest in (("n_positions", n_positions, 0), ("d_model", d_model, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"{name} must be an integer, got {value!r} of type {type(value).__name__}")
        if value < smallest:
            raise ValueError(f"{name} must be >= {smallest}, got {value}")
    if isinstance(base, bool) or not isinstance(base, numbers.Real) or not np.isfinite(base) or base <= 0:
        raise ValueError(f"base must be a finite number > 0, got {base!r}")
    return int(n_positions), int(d_model), float(base)


def frequencies(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Angular frequencies omega_i = base ** (-2 i / d_model) of the ceil(d_model / 2) pairs."""
    _, d_model, base = _validate(0, d_model, base)
    pair_index = np.arange((d_model + 1) // 2, dtype=np.float64)
    return base ** (-2.0 * pair_index / d_model)


def wavelengths(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Wavelength 2 pi / omega_i of each pair, in positions: from 2 pi up to nearly base * 2 pi."""
    return 2 * np.pi / frequencies(d_model, base)


def encoding_at(positions, d_model: int, base: float = DEFAULT_BASE, dtype=np.float64) -> np.ndarray:
    """The sinusoidal encoding at arbitrary (also negative or very large) positions.

    Returns shape ``(len(positions), d_model)`` in the interleaved layout. With ``dtype=np.float32``
    every step (positions, frequencies, angles, sin and cos) runs in float32, as in a float32
    implementation; chapter 2 measures the precision lost that way at large positions.
    """
    _, d_model, base = _validate(0, d_model, base)
    dtype = np.dtype(dtype)
    positions = np.asarray(positions, dtype=np.float64).reshape(-1).astype(dtype)
    angles = positions[:, None] * frequencies(d_model, base).astype(dtype)[None, :]   # (n, ceil(d/2))
    encoding = np.empty((len(positions), d_model), dtype=dtype)
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return encoding


def sinusoidal_encoding(n_positions: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """Sinusoidal positional encodings for positions 0 .. n_positions - 1.

    Returns a float64 array of shape (n_positions, d_model) in the interleaved layout:
    column 2 i holds sin(omega_i * pos) and column 2 i + 1 holds cos(omega_i * pos).

    >>> sinusoidal_encoding(2, 4).round(3)
    array([[0.   , 1.   , 0.   , 1.   ],
           [0.841, 0.54 , 0.01 , 1.   ]])
    """
    n_positions, d_model, base = _validate(n_positions, d_model, base)
    return encoding_at(np.arange(n_positions), d_model, base)


def sinusoidal_encoding_torch(n_positions: int, d_model: int, base: float = DEFAULT_BASE,
                              dtype=None, device=None):
    """The same encoding as a torch tensor (default dtype: torch.get_default_dtype()).

    Computed in float64 and then cast, so a float32 result is the correctly rounded reference.
    """
    import torch

    table = torch.from_numpy(sinusoidal_encoding(n_positions, d_model, base))
    return table.to(dtype=dtype or torch.get_default_dtype(), device=device)


def sinusoidal_encoding_loops(n_positions: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The same table with a double Python loop, one ``math.sin``/``math.cos`` call per entry.

    Slow on purpose: chapter 1 and ``make bench`` compare it with the vectorised version.
    """
    import math

    n_positions, d_model, base = _validate(n_positions, d_model, base)
    table = np.empty((n_positions, d_model))
    for pos in range(n_positions):
        for j in range(d_model):
            angle = pos / base ** (2 * (j // 2) / d_model)
            table[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return table
