"""Rotary position embeddings, RoPE (Su et al. 2021, RoFormer), as code (chapter 6).

Notation of the course, for one attention head of width d (= d_head, even): pair i, 0 <= i < d/2, has
the frequency omega_i = base^(-2i/d) (``posenc.lib.encoding.frequencies``; RoFormer calls it theta_i,
base = 10000). The vector at position pos has pair i turned by the angle pos * omega_i:

    (a, b) -> (a cos(pos omega_i) - b sin(pos omega_i),  a sin(pos omega_i) + b cos(pos omega_i)),

a counter-clockwise turn, RoFormer's eq. (13); in complex numbers, (a + ib) e^{i pos omega_i}. RoPE turns
the query q = W_Q x_m and the key k = W_K x_n after the projections, so
(R_m q) . (R_n k) = q^T R_{n - m} k depends on the offset n - m only, whatever W_Q and W_K.

Which coordinates form pair i is the *layout*:

* ``"interleaved"``: coordinates (2i, 2i + 1), as in RoFormer, GPT-J and Meta's Llama code;
* ``"half"``: coordinates (i, i + d/2), "rotate half", as in GPT-NeoX and Hugging Face's Llama.

A fixed permutation maps one layout onto the other (``layout_permutation``); a model converted between them
must permute the rows of W_Q and W_K the same way (``convert_projection``).

Chapter 2's ``posenc.lib.rotation.rotary`` is this rotation with the opposite sense (its T(t) turns the
pair (sin, cos) forward); it calls ``apply_rotary`` here, so the formula lives in one place.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

from posenc.lib.encoding import DEFAULT_BASE, frequencies

LAYOUTS = ("interleaved", "half")


def _check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    return layout


def rotated_width(d_head: int, fraction: float = 1.0) -> int:
    """How many of a head's ``d_head`` coordinates are turned: ``int(fraction * d_head)``, which must be even.

    ``fraction`` < 1 is partial rotation, GPT-NeoX's ``rotary_pct`` (0.25 in GPT-NeoX-20B): only the first
    ``rotated_width`` coordinates of each head are turned, the rest pass unchanged. Their frequencies use
    the rotated width as d (omega_i = base^(-2i / d_rot)), as GPT-NeoX does.
    """
    if isinstance(d_head, bool) or not isinstance(d_head, numbers.Integral) or d_head < 1:
        raise ValueError(f"d_head must be a positive integer, got {d_head!r}")
    if not isinstance(fraction, numbers.Real) or not 0 <= fraction <= 1:
        raise ValueError(f"fraction must lie in [0, 1], got {fraction!r}")
    width = int(fraction * d_head)
    if width % 2:
        raise ValueError(f"rotation turns whole pairs: fraction={fraction} of d_head={d_head} gives {width} "
                         "coordinates, an odd number")
    return width


def rotary_frequencies(d_rot: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """omega_i = base^(-2i/d_rot) for the d_rot / 2 pairs, float64 (the course's ``frequencies``)."""
    if d_rot % 2:
        raise ValueError(f"rotation turns whole pairs, so the rotated width must be even, got {d_rot}")
    return torch.from_numpy(frequencies(d_rot, base)) if d_rot else torch.zeros(0, dtype=torch.float64)


def rotary_angles(positions, omega, compute_dtype=torch.float64) -> torch.Tensor:
    """The angles pos * omega_i, shape positions.shape + (len(omega),), computed in ``compute_dtype``.

    The reference implementations compute them in float32 (Meta's Llama, Hugging Face with autocast
    switched off); ``compute_dtype=torch.bfloat16`` or ``float16`` shows what low precision costs:
    bfloat16 keeps 8 significant bits, so near pos = 1000 it holds only every fourth number, and the
    angle pos * omega_0 = pos can be off by 2 radians.
    """
    positions = torch.as_tensor(positions).to(compute_dtype)
    omega = torch.as_tensor(omega).to(compute_dtype)
    return positions[..., None] * omega


def rotary_cos_sin(positions, omega, dtype=torch.float32, compute_dtype=torch.float64):
    """cos and sin of ``rotary_angles``, computed in ``compute_dtype`` and then cast to ``dtype``."""
    angles = rotary_angles(positions, omega, compute_dtype)
    return angles.cos().to(dtype), angles.sin().to(dtype)


def _pairs(x: torch.Tensor, n_pairs: int, layout: str):
    """The two members (a, b) of each of the first ``n_pairs`` pairs of ``x`` in ``layout``."""
    if layout == "interleaved":
        return x[..., 0:2 * n_pairs:2], x[..., 1:2 * n_pairs:2]
    return x[..., :n_pairs], x[..., n_pairs:2 * n_pairs]


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str = "interleaved") -> torch.Tensor:
    """Turn the pairs of ``x`` by angles with the given cos and sin (shape ``(..., n, d_rot / 2)``).

    The first d_rot = 2 * cos.shape[-1] coordinates of ``x`` (..., n, d) are turned, pair i by its angle:
    (a, b) -> (a cos - b sin, a sin + b cos); coordinates d_rot .. d - 1 pass unchanged.
    """
    _check_layout(layout)
    n_pairs = cos.shape[-1]
    if 2 * n_pairs > x.shape[-1]:
        raise ValueError(f"{n_pairs} angles turn {2 * n_pairs} coordinates, but x has only {x.shape[-1]}")
    a, b = _pairs(x, n_pairs, layout)
    turned_a, turned_b = a * cos - b * sin, a * sin + b * cos
    if layout == "interleaved":
        turned = torch.stack([turned_a, turned_b], dim=-1).flatten(-2)
    else:
        turned = torch.cat([turned_a, turned_b], dim=-1)
    if 2 * n_pairs == x.shape[-1]:
        return turned
    return torch.cat([turned, x[..., 2 * n_pairs:]], dim=-1)


def apply_rotary(x: torch.Tensor, positions=None, base: float = DEFAULT_BASE, layout: str = "interleaved",
                 fraction: float = 1.0, omega=None, compute_dtype=torch.float64) -> torch.Tensor:
    """RoPE: turn pair i of the vector at position pos by the angle pos * omega_i.

    x: (..., n, d_head); positions: (n,) or any shape that broadcasts against x.shape[:-1]
    (default 0 .. n - 1; fractional positions are fine, e.g. position interpolation's pos * L / L').
    ``layout`` says which coordinates form a pair, ``fraction`` how many are turned (``rotated_width``);
    ``omega`` overrides the frequencies base^(-2i/d_rot) (context extension: YaRN). Angles are computed
    in ``compute_dtype`` and their cos and sin cast to x.dtype.
    """
    d_rot = rotated_width(x.shape[-1], fraction)
    if positions is None:
        positions = torch.arange(x.shape[-2])
    omega = rotary_frequencies(d_rot, base) if omega is None else torch.as_tensor(omega)
    if omega.shape != (d_rot // 2,):
        raise ValueError(f"omega must hold one frequency per turned pair, {d_rot // 2}, got shape "
                         f"{tuple(omega.shape)}")
    cos, sin = rotary_cos_sin(positions, omega, x.dtype, compute_dtype)
    return rotate(x, cos, sin, layout)


def apply_rotary_complex(x: torch.Tensor, positions=None, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The same turn in complex numbers, interleaved layout: pair i is a_i + i b_i, times e^{i pos omega_i}.

    This is how Meta's Llama code writes it (``torch.view_as_complex`` on pairs). x must be float32 or
    float64 (complex arithmetic has no half-precision version on every device).
    """
    if x.dtype not in (torch.float32, torch.float64):
        raise ValueError(f"the complex form needs float32 or float64, got {x.dtype}")
    d_head = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2])
    angles = rotary_angles(positions, rotary_frequencies(rotated_width(d_head), base))
    turn = torch.polar(torch.ones_like(angles), angles).to(torch.complex128 if x.dtype == torch.float64
                                                          else torch.complex64)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], d_head // 2, 2).contiguous())
    return torch.view_as_real(pairs * turn).flatten(-2)


def layout_permutation(d_head: int, source: str = "interleaved", target: str = "half",
                       fraction: float = 1.0) -> torch.Tensor:
    """Index ``perm`` with ``x_target = x_source[..., perm]`` for one head of width ``d_head``.

    interleaved -> half: target coordinate p takes source 2p and target d_rot/2 + p takes source 2p + 1,
    i.e. the even coordinates first, then the odd ones; half -> interleaved is the inverse. Only the
    first ``rotated_width(d_head, fraction)`` coordinates move.
    """
    _check_layout(source)
    _check_layout(target)
    d_rot = rotated_width(d_head, fraction)
    to_half = torch.cat([torch.arange(0, d_rot, 2), torch.arange(1, d_rot, 2)])
    rotated = {("interleaved", "half"): to_half, ("half", "interleaved"): torch.argsort(to_half)}.get(
        (source, target), torch.arange(d_rot))
    return torch.cat([rotated, torch.arange(d_rot, d_head)])


def convert_projection(weight: torch.Tensor, n_heads: int, source: str = "interleaved", target: str = "half",
                       fraction: float = 1.0) -> torch.Tensor:
    """W_Q or W_K (or its bias) for a model that uses the ``target`` layout instead of ``source``.

    ``weight`` has one row per output coordinate, heads one after another (``nn.Linear``'s convention:
    q = x W^T + b), shape (n_heads * d_head, ...) or (n_heads * d_head,). Within each head the rows are
    permuted by ``layout_permutation``; the values, W_V and the output projection stay as they are. This
    is what checkpoint converters between Meta's and Hugging Face's Llama do to W_Q and W_K.
    """
    if weight.shape[0] % n_heads:
        raise ValueError(f"{weight.shape[0]} rows do not split into {n_heads} heads")
    perm = layout_permutation(weight.shape[0] // n_heads, source, target, fraction)
    return weight.unflatten(0, (n_heads, -1))[:, perm].flatten(0, 1)


def decay_bound(offsets, d_head: int, base: float = DEFAULT_BASE, mean: bool = True) -> np.ndarray:
    """RoFormer's long-term-decay factor at each offset r = n - m: (1 / (d/2)) sum_{j=1}^{d/2} |S_j(r)|.

    Su et al. (2021), section 3.4.3: write a RoPE logit as Re sum_i h_i e^{i r omega_i} with the complex
    products h_i = q_pair_i conj(k_pair_i), and let S_j(r) = sum_{i<j} e^{i r omega_i} (S_0 = 0,
    h_{d/2} = 0). Summation by parts bounds

        |sum_i h_i e^{i r omega_i}| <= (max_i |h_{i+1} - h_i|) * sum_{j=1}^{d/2} |S_j(r)|.

    The first factor depends on q and k, not on the offset; the second depends on the offset only, and
    its mean over j (``mean=True``, the paper's Figure 2 "relative upper bound") decays as |r| grows, on
    average but not monotonically. It is a bound on the size of the logit, not the logit itself.
    ``mean=False`` returns the sum. The sign of r does not matter (S_j(-r) is the conjugate of S_j(r)).
    """
    omega = frequencies(_even(d_head), base)
    offsets = np.asarray(offsets, dtype=np.float64)
    partial_sums = np.cumsum(np.exp(1j * offsets[..., None] * omega), axis=-1)     # S_1 .. S_{d/2}
    total = np.abs(partial_sums).sum(axis=-1)
    return total / len(omega) if mean else total


def _even(d_head) -> int:
    if isinstance(d_head, bool) or not isinstance(d_head, numbers.Integral) or d_head < 2 or d_head % 2:
        raise ValueError(f"d_head must be an even integer >= 2, got {d_head!r}")
    return int(d_head)
