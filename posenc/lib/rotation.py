"""The relative-shift property of the sinusoidal encoding, as code (chapter 2).

Notation as in ``posenc.lib.encoding``: pair ``i`` holds ``(sin(omega_i t), cos(omega_i t))`` in columns
``2 i`` and ``2 i + 1``. Moving from position ``t`` to ``t + k`` turns every pair by the angle
``omega_i k``, through the 2x2 matrix

    M(k, i) = [[ cos(omega_i k), sin(omega_i k)],
               [-sin(omega_i k), cos(omega_i k)]]

which does not depend on ``t``. Stacking one such block per pair along the diagonal gives the
``d_model x d_model`` matrix ``T(k)`` with ``PE(t + k) = T(k) PE(t)``.

The shift needs both members of every pair, so everything here that builds ``T(k)`` asks for an even
``d_model`` (with an odd width the last column is a lone sine, which no fixed matrix can shift).
"""

from __future__ import annotations

import numbers

import numpy as np

from posenc.lib.encoding import DEFAULT_BASE, frequencies


def _even_width(d_model) -> int:
    """``d_model`` as an int; ValueError unless it is a positive even integer."""
    if isinstance(d_model, bool) or not isinstance(d_model, numbers.Integral) or d_model < 2:
        raise ValueError(f"d_model must be an integer >= 2, got {d_model!r}")
    if d_model % 2:
        raise ValueError(f"the relative shift needs whole (sin, cos) pairs, so d_model must be even; "
                         f"got {d_model}, whose last column is a sine without its cosine")
    return int(d_model)


def rotation_matrix(omega, k) -> np.ndarray:
    """The 2x2 block M that turns one pair (sin(omega t), cos(omega t)) forward by ``k`` positions.

    ``omega`` and ``k`` broadcast against each other; the result has shape ``broadcast + (2, 2)``.

    >>> rotation_matrix(np.pi / 2, 1).round(12)
    array([[ 0.,  1.],
           [-1.,  0.]])
    """
    angle = np.multiply(np.asarray(omega, dtype=np.float64), np.asarray(k, dtype=np.float64))
    cos, sin = np.cos(angle), np.sin(angle)
    top = np.stack([cos, sin], axis=-1)
    bottom = np.stack([-sin, cos], axis=-1)
    return np.stack([top, bottom], axis=-2)


def pair_rotations(k, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The d_model / 2 blocks M(k, i) of T(k), as an array of shape (d_model / 2, 2, 2)."""
    return rotation_matrix(frequencies(_even_width(d_model), base), k)


def shift_operator(k, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The block-diagonal matrix T(k) of shape (d_model, d_model) with PE(t + k) = T(k) PE(t)."""
    blocks = pair_rotations(k, d_model, base)
    operator = np.zeros((d_model, d_model))
    for i, block in enumerate(blocks):
        operator[2 * i:2 * i + 2, 2 * i:2 * i + 2] = block
    return operator


def shift_vectors(vectors, k, base: float = DEFAULT_BASE) -> np.ndarray:
    """Apply T(k) to every vector along the last axis, pair by pair, without building the matrix.

    For a table whose rows are vectors this equals ``vectors @ shift_operator(k, d).T``.
    """
    vectors = np.asarray(vectors, dtype=np.float64)
    omega = frequencies(_even_width(vectors.shape[-1]), base)
    cos, sin = np.cos(omega * k), np.sin(omega * k)
    first, second = vectors[..., 0::2], vectors[..., 1::2]
    turned = np.empty_like(vectors)
    turned[..., 0::2] = cos * first + sin * second
    turned[..., 1::2] = -sin * first + cos * second
    return turned


def dot_product_profile(offsets, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """PE(t) . PE(t + k) for each offset k: sum_i cos(omega_i k), the same for every t."""
    omega = frequencies(_even_width(d_model), base)
    offsets = np.asarray(offsets, dtype=np.float64)
    return np.cos(offsets[..., None] * omega).sum(axis=-1)


def rotary(x, positions=None, base: float = DEFAULT_BASE):
    """Rotary position embedding in torch: turn the vector at position t by T(t), pair by pair.

    ``x`` has shape ``(..., seq_len, d_model)``; ``positions`` (default ``0 .. seq_len - 1``) has shape
    ``(seq_len,)``. After the turn, the dot product of a query at m and a key at n depends on n - m only,
    because T(m)^T T(n) = T(n - m). The angles are computed in float64 and cast to ``x.dtype``.

    Su et al. (RoFormer) turn each pair the other way round (T(-t) in this course's convention);
    either direction gives the same offset-only scores. So this is ``posenc.lib.rotary.apply_rotary``
    (RoFormer's sense, chapter 6) at the negated positions.
    """
    import torch

    from posenc.lib.rotary import apply_rotary

    seq_len, _ = x.shape[-2], _even_width(x.shape[-1])
    if positions is None:
        positions = torch.arange(seq_len)
    return apply_rotary(x, -torch.as_tensor(positions, dtype=torch.float64), base)
