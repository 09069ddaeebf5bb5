"""Multi-head latent attention (DeepSeek-V2 and V3) and its decoupled rotary part (chapter 9).

Every head h of an ordinary attention layer keeps a key and a value per token in the cache. Multi-head latent
attention (MLA) keeps one small *latent* c_j = W_DKV x_j per token instead (width d_c, shared by the heads),
and makes each head's key and value from it: k^C_{j,h} = W_UK,h c_j, v_{j,h} = W_UV,h c_j. At inference the
key up-projection need not be applied at all: the logit

    q_{i,h} . (W_UK,h c_j) = (W_UK,h^T q_{i,h}) . c_j

lets the query absorb W_UK,h once per query, and the cache holds c_j only. Rotary breaks this: a key turned
after its up-projection, R_j W_UK,h c_j, puts the position-dependent matrix R_{j - i} between the query and the
latent, q^T R_{j-i} W_UK,h c_j, and no matrix fixed per query absorbs it for every j. DeepSeek's answer is a
*decoupled* rotary part: each query head gets d_R more coordinates q^R_{i,h} = W_QR,h x_i, all heads share one
rotary key k^R_j = W_KR x_j, both turned by their positions; the logit is the sum of the absorbable part and
the rotary part, and the cache holds c_j and the turned k^R_j: d_c + d_R numbers per token and layer.

The weights follow ``nn.Linear``'s convention (one row per output), and their names those of DeepSeek-V3's
own ``inference/model.py`` where it helps to compare: ``wq`` (queries: per head d_nope coordinates, then d_R),
``wkv_a`` (the latent, then the shared rotary key), ``wkv_b`` (per head d_nope key rows, then d_v value rows),
``wo``. ``tests/test_latent_attention.py`` compares the output with transformers' ``DeepseekV3Attention``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from posenc.lib.attention import causal_mask
from posenc.lib.rotary import apply_rotary


@dataclass
class LatentAttention:
    """The weights and shape of one MLA layer (no low-rank query: DeepSeek-V2-Lite's and the tests' choice)."""

    wq: torch.Tensor                 # (n_heads * (d_nope + d_rope), d_model)
    wkv_a: torch.Tensor              # (d_c + d_rope, d_model): the latent, then the shared rotary key
    wkv_b: torch.Tensor              # (n_heads * (d_nope + d_v), d_c): per head, key rows then value rows
    wo: torch.Tensor                 # (d_model, n_heads * d_v)
    n_heads: int
    d_nope: int
    d_rope: int
    d_v: int
    latent_norm: torch.Tensor | None = None     # RMSNorm weight on the latent (DeepSeek's kv_norm), or None
    eps: float = 1e-6

    @property
    def d_c(self) -> int:
        return self.wkv_b.shape[1]

    @classmethod
    def random(cls, d_model: int, n_heads: int, d_c: int, d_nope: int, d_rope: int, d_v: int,
               generator: torch.Generator | None = None, dtype=torch.float64) -> "LatentAttention":
        """A layer with weights drawn from N(0, 1 / d_in) (for the chapter's checks)."""
        def draw(rows, cols):
            return torch.randn(rows, cols, generator=generator, dtype=dtype) / math.sqrt(cols)
        return cls(draw(n_heads * (d_nope + d_rope), d_model), draw(d_c + d_rope, d_model),
                   draw(n_heads * (d_nope + d_v), d_c), draw(d_model, n_heads * d_v), n_heads, d_nope, d_rope, d_v)

    def cache_width(self) -> int:
        """Numbers the absorbed form caches per token: the latent and the shared rotary key."""
        return self.d_c + self.d_rope

    def expanded_cache_width(self) -> int:
        """Numbers an ordinary multi-head layer of the same shape caches per token: every head's key and value."""
        return self.n_heads * (self.d_nope + self.d_rope + self.d_v)


def _heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(batch, n, n_heads * w) -> (batch, n_heads, n, w)."""
    return x.unflatten(-1, (n_heads, -1)).transpose(1, 2)


def project(layer: LatentAttention, x: torch.Tensor, positions, omega, layout: str = "interleaved") -> dict:
    """What every form needs: queries split into their part without position and their turned rotary part
    (batch, heads, n, .), the latent c (batch, n, d_c) and the shared rotary key, turned (batch, n, d_rope)."""
    q = _heads(x @ layer.wq.T, layer.n_heads)
    q_nope, q_rope = q.split([layer.d_nope, layer.d_rope], dim=-1)
    latent, k_rope = (x @ layer.wkv_a.T).split([layer.d_c, layer.d_rope], dim=-1)
    if layer.latent_norm is not None:
        latent = latent * torch.rsqrt(latent.pow(2).mean(-1, keepdim=True) + layer.eps) * layer.latent_norm
    return {"q_nope": q_nope, "q_rope": apply_rotary(q_rope, positions, omega=omega, layout=layout),
            "latent": latent, "k_rope": apply_rotary(k_rope, positions, omega=omega, layout=layout)}


def _up(layer: LatentAttention) -> tuple[torch.Tensor, torch.Tensor]:
    """W_UK and W_UV per head: (heads, d_nope, d_c) and (heads, d_v, d_c)."""
    per_head = layer.wkv_b.unflatten(0, (layer.n_heads, layer.d_nope + layer.d_v))
    return per_head[:, :layer.d_nope], per_head[:, layer.d_nope:]


def expanded_keys(layer: LatentAttention, parts: dict) -> torch.Tensor:
    """Every head's full key (batch, heads, n, d_nope + d_rope): the up-projected latent, then the shared turned
    rotary key (what an ordinary cache would hold)."""
    w_uk, _ = _up(layer)
    k_nope = torch.einsum("hdc,bnc->bhnd", w_uk, parts["latent"])
    k_rope = parts["k_rope"][:, None].expand(-1, layer.n_heads, -1, -1)
    return torch.cat([k_nope, k_rope], dim=-1)


def logits_expanded(layer: LatentAttention, parts: dict) -> torch.Tensor:
    """q . k with the keys built in full, (batch, heads, n, n), before any scale or mask."""
    q = torch.cat([parts["q_nope"], parts["q_rope"]], dim=-1)
    return q @ expanded_keys(layer, parts).transpose(-1, -2)


def logits_absorbed(layer: LatentAttention, parts: dict) -> torch.Tensor:
    """The same logits with W_UK absorbed into the queries: (W_UK,h^T q^C) . c_j + q^R . k^R_j. Only the latent
    and the shared rotary key of each token are needed."""
    w_uk, _ = _up(layer)
    absorbed = torch.einsum("hdc,bhnd->bhnc", w_uk, parts["q_nope"])
    return absorbed @ parts["latent"][:, None].transpose(-1, -2) + parts["q_rope"] @ parts["k_rope"][:, None].transpose(-1, -2)


def attention(layer: LatentAttention, x: torch.Tensor, positions, omega, scale: float | None = None,
              absorbed: bool = False, causal: bool = True, layout: str = "interleaved") -> torch.Tensor:
    """The layer's output (batch, n, d_model): softmax(scale * logits) over the values W_UV c_j, then ``wo``.

    ``absorbed`` computes the logits with the absorbed queries and applies W_UV after the attention weights
    (weights @ c, then W_UV), as DeepSeek's inference code does; the result is the same up to rounding.
    ``scale`` defaults to 1 / sqrt(d_nope + d_rope) (``rotary_variants.deepseek_softmax_scale`` adds YaRN's).
    """
    parts = project(layer, x, positions, omega, layout)
    scale = (layer.d_nope + layer.d_rope) ** -0.5 if scale is None else scale
    logits = (logits_absorbed if absorbed else logits_expanded)(layer, parts) * scale
    if causal:
        logits = logits + causal_mask(x.shape[1], x.shape[1], logits.dtype)
    weights = torch.softmax(logits, dim=-1)
    _, w_uv = _up(layer)
    if absorbed:
        out = torch.einsum("hvc,bhnc->bhnv", w_uv, weights @ parts["latent"][:, None])
    else:
        out = weights @ torch.einsum("hvc,bnc->bhnv", w_uv, parts["latent"])
    return out.transpose(1, 2).flatten(-2) @ layer.wo.T


def rotary_after_up_projection(layer: LatentAttention, x: torch.Tensor, positions, omega_keys,
                               layout: str = "interleaved") -> torch.Tensor:
    """The logits of the design DeepSeek did not take, (batch, heads, n, n): no rotary part of its own, the
    keys W_UK,h c_j turned by R_j after their up-projection and the queries by R_i, q^T R_{j - i} W_UK,h c_j.
    ``omega_keys``: one frequency per pair of the d_nope-wide keys."""
    parts = project(layer, x, positions, torch.zeros(layer.d_rope // 2), layout)
    w_uk, _ = _up(layer)
    keys = torch.einsum("hdc,bnc->bhnd", w_uk, parts["latent"])
    q = apply_rotary(parts["q_nope"], positions, omega=omega_keys, layout=layout)
    k = apply_rotary(keys, positions, omega=omega_keys, layout=layout)
    return q @ k.transpose(-1, -2)
