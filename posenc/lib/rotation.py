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


# ---------------------------------------------------------------------------------------------------
# Does a matrix of scores depend on the offset only? (chapters 2 and 3)


def offset_means(scores) -> np.ndarray:
    """Mean of a square score matrix along each diagonal ``n - m = k``, for k = -(N-1) .. N-1.

    Row m is the query position and column n the key position; entry ``k + N - 1`` of the result is the
    mean over the pairs with offset ``n - m = k``. Spread back over the matrix (``result[n - m + N - 1]``),
    these means are the best least-squares fit to ``scores`` by any function of the offset alone.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1]:
        raise ValueError(f"need a square (N, N) matrix of scores, got shape {scores.shape}")
    n = scores.shape[0]
    return np.array([np.diagonal(scores, offset=k).mean() for k in range(1 - n, n)])


def offset_only_share(scores) -> float:
    """Share of the variance of a square score matrix explained by a function of the offset ``n - m``.

    1 - |S - F|^2 / |S - mean(S)|^2, where F holds the diagonal means of S (``offset_means``). It is 1 when
    every diagonal is constant, as for ``PE(m) . PE(n)``; a matrix of independent noise scores about
    (2N - 2) / (N^2 - 1) (the 2N - 1 diagonal means fit that much by chance, the corner ones exactly).
    A constant matrix has no variance to explain: ValueError.
    """
    scores = np.asarray(scores, dtype=np.float64)
    means = offset_means(scores)
    n = scores.shape[0]
    offset = np.arange(n)[None, :] - np.arange(n)[:, None]
    fit = means[offset + n - 1]
    total = np.sum((scores - scores.mean()) ** 2)
    if total == 0:
        raise ValueError("the scores are constant: there is no variance to explain")
    return float(1.0 - np.sum((scores - fit) ** 2) / total)


def commuting_part(matrix) -> np.ndarray:
    """The part of a (d, d) matrix that commutes with every shift T(k): its orthogonal projection onto them.

    With distinct frequencies (any base > 1), a matrix A commutes with every T(k) exactly when it is
    block-diagonal over the pairs with blocks of the form [[a, b], [-b, a]] (a scaled rotation). The
    projection keeps, for each pair, a = mean of the block's diagonal and b = half the difference of its
    off-diagonal entries, and sets every block between two different pairs to zero. For such an A,
    ``PE(m)^T A PE(n) = PE(0)^T A T(n - m) PE(0)`` depends on the offset only.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"need a square (d, d) matrix, got shape {matrix.shape}")
    d_model = _even_width(matrix.shape[0])
    part = np.zeros_like(matrix)
    for i in range(0, d_model, 2):
        block = matrix[i:i + 2, i:i + 2]
        a, b = (block[0, 0] + block[1, 1]) / 2, (block[0, 1] - block[1, 0]) / 2
        part[i:i + 2, i:i + 2] = [[a, b], [-b, a]]
    return part
