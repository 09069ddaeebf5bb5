"""What chapter 6 measures about rotary embeddings (the rotation itself lives in ``posenc.lib.rotary``).

* ``halves_frequencies`` and ``sinusoidal_halves``: the sinusoidal table in the layout of tensor2tensor and
  fairseq (all sines, then all cosines, frequencies spaced so that they run exactly from 1 to 1 / base),
  next to the paper's interleaved table of ``posenc.lib.encoding``.
* ``turning_pairs``: how many pairs of a head complete a full turn within a context.
* ``angle_error`` and ``rotation_error``: what computing the angles pos * omega_i, or the whole rotation,
  in bfloat16, float16 or float32 costs against float64.
* ``PairAblation``, ``ablated_copy``, ``unrotated_copy``, ``pair_norms``, ``mean_loss``: which pairs a
  trained rotary model's attention uses (zero a pair of every query and key; stop a pair from turning; the
  size of each pair of the queries and keys, the measure Barbero et al. 2025 read off Gemma).

Chapter 6's sweep, every position method of the course inside the training length, is
``posenc.experiments.ch06``.
"""

from __future__ import annotations

import copy
import math
from typing import Iterable

import numpy as np
import torch
from torch import nn

from posenc.lib.attention import AttentionPosition, RotaryPosition
from posenc.lib.encoding import DEFAULT_BASE
from posenc.lib.models import TinyTransformer
from posenc.lib.rotary import apply_rotary, rotary_angles, rotary_frequencies, rotated_width
from posenc.lib.tasks import IGNORE

# ---------------------------------------------------------------------------------------------------
# The sinusoidal table in halves (tensor2tensor, fairseq)


def halves_frequencies(d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """omega_i = base^(-i / (d_model/2 - 1)), i = 0 .. d_model/2 - 1: tensor2tensor's ``get_timing_signal_1d``
    (and fairseq's sinusoidal embedding) space the log-frequencies by ln(base) / (d_model/2 - 1), so that
    they run exactly from 1 to 1 / base. The paper's grid, base^(-2i/d_model), stops at base^(-(d-2)/d)."""
    if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model < 2 or d_model % 2:
        raise ValueError(f"d_model must be an even integer >= 2, got {d_model!r}")
    n_pairs = d_model // 2
    return base ** (-np.arange(n_pairs, dtype=np.float64) / max(n_pairs - 1, 1))


def sinusoidal_halves(positions, d_model: int, base: float = DEFAULT_BASE, omega=None) -> np.ndarray:
    """The sinusoidal table with all sines first, then all cosines: column i holds sin(omega_i pos) and
    column d_model/2 + i holds cos(omega_i pos). ``omega`` defaults to ``halves_frequencies``; pass the
    paper's ``posenc.frequencies(d_model)`` to get the paper's table with its columns permuted."""
    omega = halves_frequencies(d_model, base) if omega is None else np.asarray(omega, dtype=np.float64)
    angles = np.asarray(positions, dtype=np.float64).reshape(-1)[:, None] * omega
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


# ---------------------------------------------------------------------------------------------------
# The base and the context


def turning_pairs(context: float, d_rot: int, base: float = DEFAULT_BASE) -> int:
    """How many of the d_rot / 2 pairs turn by a full 2 pi or more between positions 0 and ``context``
    (omega_i * context >= 2 pi); the others stay within one turn over the whole context."""
    return int((rotary_frequencies(d_rot, base).numpy() * context >= 2 * math.pi).sum())


# ---------------------------------------------------------------------------------------------------
# Precision


def angle_error(positions, d_rot: int, base: float = DEFAULT_BASE, dtype=torch.bfloat16) -> np.ndarray:
    """For each position, the largest error over the pairs of the angle pos * omega_i computed in ``dtype``
    (positions and omega_i cast to ``dtype``, multiplied in ``dtype``, as ``rotary_angles`` does) against
    float64. Infinite where ``dtype`` cannot hold the position (float16 stops at 65504)."""
    omega = rotary_frequencies(d_rot, base)
    exact = rotary_angles(positions, omega, torch.float64)
    low = rotary_angles(positions, omega, dtype).to(torch.float64)
    return (low - exact).abs().amax(dim=-1).numpy()


def rotation_error(x: torch.Tensor, positions, base: float = DEFAULT_BASE, dtype=torch.bfloat16,
                   angle_dtype=None, layout: str = "interleaved") -> np.ndarray:
    """For each position, the largest error of the rotated vectors when the vector is stored in ``dtype`` and
    the angles are computed in ``angle_dtype`` (default: ``dtype`` too), relative to the vector's size.

    ``x`` (n_vectors, d) float64 is turned to every position; the exact answer turns x, rounded to ``dtype``
    as the model would hold it, in float64. So the error counts the angles and the arithmetic of the turn,
    not the storage of x itself. Returns shape (len(positions),).
    """
    angle_dtype = dtype if angle_dtype is None else angle_dtype
    positions = torch.as_tensor(positions)
    stored = x.to(dtype)
    exact = apply_rotary(stored.to(torch.float64)[:, None, :], positions, base, layout)     # (vectors, positions, d)
    low = apply_rotary(stored[:, None, :], positions, base, layout, compute_dtype=angle_dtype)
    error = (low.to(torch.float64) - exact).norm(dim=-1) / stored.to(torch.float64).norm(dim=-1, keepdim=True)
    return error.amax(dim=0).numpy()


# ---------------------------------------------------------------------------------------------------
# Which pairs does a trained rotary model use?


def pair_coordinates(d_head: int, pairs: Iterable[int], layout: str = "interleaved",
                     fraction: float = 1.0) -> torch.Tensor:
    """The coordinates of a head that hold the given pairs, in ``layout`` (pair p is (2p, 2p + 1) when
    interleaved, (p, p + d_rot/2) in halves)."""
    d_rot = rotated_width(d_head, fraction)
    pairs = sorted(set(int(p) for p in pairs))
    if any(not 0 <= p < d_rot // 2 for p in pairs):
        raise ValueError(f"pairs must lie in 0..{d_rot // 2 - 1}, got {pairs}")
    if layout == "interleaved":
        return torch.tensor([c for p in pairs for c in (2 * p, 2 * p + 1)], dtype=torch.long)
    if layout == "half":
        return torch.tensor([c for p in pairs for c in (p, p + d_rot // 2)], dtype=torch.long)
    raise ValueError(f"layout must be 'interleaved' or 'half', got {layout!r}")


class PairAblation(AttentionPosition):
    """A rotary method whose queries and keys lose some pairs: after the turn, the coordinates of the chosen
    pairs are set to zero in every layer and head, so those pairs add nothing to any logit."""

    name = "rope"

    def __init__(self, rotary: RotaryPosition, pairs: Iterable[int]):
        super().__init__()
        self.rotary, self.pairs = rotary, sorted(set(int(p) for p in pairs))
        self.requires, self.logit_scale = rotary.requires, rotary.logit_scale
        keep = torch.ones(rotary.d_head)
        keep[pair_coordinates(rotary.d_head, self.pairs, rotary.layout, rotary.fraction)] = 0.0
        self.register_buffer("keep", keep, persistent=False)

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        return self.rotary.prepare(query_positions, key_positions, dtype)

    def turn(self, q, k, state, layer=0):
        q, k = self.rotary.turn(q, k, state, layer)
        keep = self.keep.to(q.dtype)
        return q * keep, k * keep

    def extra_repr(self) -> str:
        return f"pairs={self.pairs}"


def _rotary_of(model: TinyTransformer) -> RotaryPosition:
    if not isinstance(model.position, RotaryPosition):
        raise ValueError(f"this needs a rotary model (position='rope'), got position method {model.method!r}")
    return model.position


def ablated_copy(model: TinyTransformer, pairs: Iterable[int]) -> TinyTransformer:
    """A copy of a rotary model whose queries and keys lose the given pairs (``PairAblation``)."""
    rotary = _rotary_of(model)
    clone = copy.deepcopy(model)
    clone.position = PairAblation(copy.deepcopy(rotary), pairs)
    return clone


def unrotated_copy(model: TinyTransformer, pairs: Iterable[int]) -> TinyTransformer:
    """A copy of a rotary model in which the given pairs no longer turn (frequency 0): they keep their
    content but lose position, what p-RoPE does to the lowest frequencies (Barbero et al. 2025)."""
    clone = copy.deepcopy(model)
    rotary = _rotary_of(clone)
    pairs = list(pairs)
    if any(not 0 <= p < len(rotary.omega) for p in pairs):
        raise ValueError(f"pairs must lie in 0..{len(rotary.omega) - 1}, got {pairs}")
    rotary.omega = rotary.omega.clone()
    rotary.omega[pairs] = 0.0
    return clone


@torch.no_grad()
def pair_norms(model: TinyTransformer, tokens: torch.Tensor, layer: int = 0) -> dict[str, np.ndarray]:
    """Mean length of each pair of the queries and of the keys of one layer, per head: {"query": (heads,
    pairs), "key": (heads, pairs)}, averaged over the batch and the positions. A turn does not change a
    pair's length, so this is also the size of the pair before the rotation."""
    rotary = _rotary_of(model)
    attention, x, context, layer = model.attention_input(tokens, layer)
    q, k, _ = attention.project(x, context, layer)
    n_pairs = rotary.d_rot // 2
    out = {}
    for name, vectors in (("query", q), ("key", k)):
        coordinates = torch.stack([pair_coordinates(rotary.d_head, [p], rotary.layout, rotary.fraction)
                                   for p in range(n_pairs)])                      # (pairs, 2)
        pairs = vectors[..., coordinates]                                          # (batch, heads, n, pairs, 2)
        out[name] = pairs.norm(dim=-1).mean(dim=(0, 2)).double().numpy()
    return out


@torch.no_grad()
def mean_loss(model: nn.Module, task, seq_len: int, n_sequences: int = 256, seed: int = 12345) -> float:
    """Cross-entropy on fresh sequences of one length (a fixed seed, disjoint from training's)."""
    model.eval()
    tokens, targets = task.batch(n_sequences, seq_len, torch.Generator().manual_seed(seed))
    logits = model(tokens)
    return float(nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE))
