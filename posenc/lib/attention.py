"""Position inside attention: the course's multi-head self-attention, its pre-LN block, and the position methods.

One lens for every method (chapters 5-7). The logit between the query at position i and the key at j is

    e_ij = q_i . k_j / sqrt(d_head)  +  (the method's term),

and the methods differ only in that term:

* ``"none"`` (NoPE) and the absolute encodings ``"sinusoidal"``, ``"learned"``: nothing here; an absolute
  encoding was added to the model's input instead (chapters 1-4, ``posenc.lib.positional``);
* ``"shaw"``: q_i . a^K_{clip(j - i)} / sqrt(d_head), learned vectors per layer, plus a^V_{clip(j - i)} in
  the values (Shaw, Uszkoreit & Vaswani 2018);
* ``"t5"``: a learned scalar per head and offset bucket, shared by all layers (Raffel et al. 2020);
* ``"alibi"``: the fixed penalty -m_h |j - i| (Press, Smith & Lewis 2022);
* ``"rope"``: no added term: q_i and k_j are turned by angles proportional to i and j, so q_i . k_j
  itself depends on j - i (Su et al. 2021), with the context-extension knobs of ``posenc.lib.extension``.

``make_position(name, ...)`` builds any of them. An attention-side method (``AttentionPosition``) acts
through four hooks, each a no-op in the base class (which is NoPE):

* ``prepare(query_positions, key_positions, dtype)``: once per forward pass, what every layer shares
  (T5's and ALiBi's bias matrices, Shaw's offset indices, RoPE's cos and sin);
* ``turn(q, k, state, layer)``: RoPE's rotation of queries and keys (in every layer, or in some:
  ``posenc.lib.rotary_variants.LayerwiseRotary``);
* ``query_bias(q, state, layer, scale)``: a logit term that depends on the query (Shaw's key vectors);
* ``value_term(weights, state, layer)``: a term added to the output (Shaw's value vectors).

Biases that do not depend on the query (``state["bias"]``) are folded with the causal mask into one
additive float mask for ``torch.nn.functional.scaled_dot_product_attention``; only Shaw's value term (which
needs the attention weights) takes the plain path softmax(logits) @ v.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from posenc.lib.encoding import DEFAULT_BASE
from posenc.lib.extension import extension_settings
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.relative import alibi_bias, alibi_slopes, clipped_index, offsets_between, t5_bucket
from posenc.lib.rotary import rotary_cos_sin, rotary_frequencies, rotate, rotated_width

METHODS = ("none", "sinusoidal", "learned", "shaw", "t5", "alibi", "rope")
ABSOLUTE = ("sinusoidal", "learned")


# ---------------------------------------------------------------------------------------------------
# Position methods


class AttentionPosition(nn.Module):
    """How position enters the attention. This base class adds nothing: NoPE, or a model whose position
    was added to its input (absolute encodings)."""

    name = "none"
    needs_weights = False        # True when value_term needs the attention weights (no fused kernel)
    logit_scale = 1.0            # a factor on every logit (YaRN's temperature 1/t)
    requires: dict = {}          # the model shape the method was built for: d_head, n_heads, n_layers

    def prepare(self, query_positions: torch.Tensor, key_positions: torch.Tensor, dtype) -> dict:
        return {}

    def turn(self, q: torch.Tensor, k: torch.Tensor, state: dict, layer: int = 0):
        return q, k

    def query_bias(self, q: torch.Tensor, state: dict, layer: int, scale: float):
        return None

    def value_term(self, weights: torch.Tensor, state: dict, layer: int):
        return None

    def extra_repr(self) -> str:
        return f"name={self.name!r}"


class ShawPosition(AttentionPosition):
    """Shaw, Uszkoreit & Vaswani (2018): learned key and value vectors for the clipped offset.

    With r = clip(j - i, -k, k) (``clipped_index``; k = ``max_distance``), eqs. (3)-(4) of the paper:

        e_ij = q_i . (k_j + a^K_r) / sqrt(d_head),     z_i = sum_j alpha_ij (v_j + a^V_r).

    Each layer has its own 2k + 1 vectors a^K and 2k + 1 vectors a^V of width d_head; ``heads=1`` shares
    them across the heads of a layer (the paper's big model), ``heads=n_heads`` gives each head its own
    (its base model). ``values=False`` drops a^V (the paper's ablation, Table 3).

    Memory: the key term is computed as q a^K^T, (batch, heads, n, 2k + 1), then gathered at the offsets,
    and the value term by summing the weights per offset first; neither builds the n x n x d_head tensor
    of a naive implementation.
    """

    name = "shaw"

    def __init__(self, d_head: int, n_layers: int, max_distance: int = 16, values: bool = True,
                 heads: int = 1, init_std: float = 0.02):
        super().__init__()
        self.max_distance, self.needs_weights = int(max_distance), bool(values)
        self.requires = {"d_head": d_head, "n_layers": n_layers, **({"n_heads": heads} if heads > 1 else {})}
        shape = (n_layers, heads, 2 * self.max_distance + 1, d_head)
        self.key_vectors = nn.Parameter(torch.randn(shape) * init_std)
        self.value_vectors = nn.Parameter(torch.randn(shape) * init_std) if values else None

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        return {"index": clipped_index(offsets_between(query_positions, key_positions), self.max_distance)}

    def query_bias(self, q, state, layer, scale):
        per_offset = q @ self.key_vectors[layer].transpose(-1, -2)            # (batch, heads, n_q, 2k + 1)
        index = state["index"].expand(*per_offset.shape[:-1], state["index"].shape[-1])
        return per_offset.gather(-1, index) * scale

    def value_term(self, weights, state, layer):
        if self.value_vectors is None:
            return None
        per_offset = weights.new_zeros(*weights.shape[:-1], 2 * self.max_distance + 1)
        per_offset = per_offset.scatter_add(-1, state["index"].expand(weights.shape), weights)
        return per_offset @ self.value_vectors[layer]

    def extra_repr(self) -> str:
        return f"max_distance={self.max_distance}, values={self.value_vectors is not None}"


class T5Position(AttentionPosition):
    """T5's relative bias (Raffel et al. 2020): one learned scalar per head and offset bucket, added to the
    logits, one table shared by all layers (``t5_bucket`` maps j - i to its bucket).

    T5 itself does not divide q . k by sqrt(d_head) (its initialisation absorbs the factor); the course's
    attention keeps the factor and adds the bias to the scaled logits. The table is
    ``relative_attention_bias``, an ``nn.Embedding(num_buckets, n_heads)``, as in Hugging Face's T5.
    """

    name = "t5"

    def __init__(self, n_heads: int, num_buckets: int = 32, max_distance: int = 128, bidirectional: bool = True,
                 init_std: float = 0.02):
        super().__init__()
        self.num_buckets, self.max_distance, self.bidirectional = num_buckets, max_distance, bidirectional
        self.requires = {"n_heads": n_heads}
        self.relative_attention_bias = nn.Embedding(num_buckets, n_heads)
        nn.init.normal_(self.relative_attention_bias.weight, std=init_std)

    def buckets(self, query_positions, key_positions) -> torch.Tensor:
        return t5_bucket(offsets_between(query_positions, key_positions), self.bidirectional, self.num_buckets,
                         self.max_distance)

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        bias = self.relative_attention_bias(self.buckets(query_positions, key_positions))   # (n_q, n_k, heads)
        return {"bias": bias.permute(2, 0, 1).to(dtype)}

    def extra_repr(self) -> str:
        return f"num_buckets={self.num_buckets}, max_distance={self.max_distance}, bidirectional={self.bidirectional}"


class ALiBiPosition(AttentionPosition):
    """ALiBi (Press, Smith & Lewis 2022): the fixed bias -m_h |j - i| (``alibi_bias``), slopes m_h from
    ``alibi_slopes``. No parameters."""

    name = "alibi"

    def __init__(self, n_heads: int):
        super().__init__()
        self.requires = {"n_heads": n_heads}
        self.register_buffer("slopes", alibi_slopes(n_heads), persistent=False)

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        return {"bias": alibi_bias(offsets_between(query_positions, key_positions), self.slopes).to(dtype)}


class RotaryPosition(AttentionPosition):
    """RoPE (Su et al. 2021): turn q and k pair by pair by pos * omega_i (``posenc.lib.rotary``).

    Options: ``base`` (10000; Llama 3 uses 500000), ``layout`` ("interleaved" or "half"), ``fraction`` of
    each head that is turned (GPT-NeoX's rotary_pct). No parameters.

    Context extension changes three knobs at test time, without retraining (``extend``; ``reset`` undoes
    it): ``position_scale`` (positions are multiplied by it: position interpolation's L / L'), ``omega``
    (the frequencies: NTK-aware base, YaRN's NTK-by-parts) and ``logit_scale`` (YaRN's temperature 1/t).
    A model with an extension switched on can be fine-tuned like any other.
    """

    name = "rope"

    def __init__(self, d_head: int, base: float = DEFAULT_BASE, layout: str = "interleaved",
                 fraction: float = 1.0):
        super().__init__()
        if layout not in ("interleaved", "half"):
            raise ValueError(f"layout must be 'interleaved' or 'half', got {layout!r}")
        self.d_head, self.base, self.layout, self.fraction = d_head, float(base), layout, fraction
        self.requires = {"d_head": d_head}
        self.d_rot = rotated_width(d_head, fraction)
        self.register_buffer("omega", rotary_frequencies(self.d_rot, self.base), persistent=False)
        self.reset()

    def reset(self) -> "RotaryPosition":
        """Back to plain RoPE at the trained base: no extension."""
        return self.extend("none")

    def extend(self, method: str, scale: float = 1.0, train_length: int | None = None, alpha: float = 1.0,
               beta: float = 32.0, ramp: str = "paper") -> "RotaryPosition":
        """Switch a context extension on: "pi", "ntk", "yarn" (or "none"), for the scale factor s = L' / L.

        See ``posenc.lib.extension.extension_settings``; YaRN also needs the training length L, and takes
        the paper's ramp or, with ``ramp="code"``, that of the authors' code.
        """
        settings = extension_settings(method, scale, self.d_rot, self.base, train_length, alpha, beta, ramp)
        self.extension, self.scale = method, float(scale)
        self.position_scale, self.logit_scale = settings["position_scale"], settings["logit_scale"]
        self.omega = settings["omega"].to(self.omega.device)
        return self

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        def cos_sin(positions):
            return rotary_cos_sin(torch.as_tensor(positions, dtype=torch.float64) * self.position_scale,
                                  self.omega, dtype)
        query = cos_sin(query_positions)
        return {"query": query, "key": query if key_positions is query_positions else cos_sin(key_positions)}

    def turn(self, q, k, state, layer=0):
        return rotate(q, *state["query"], self.layout), rotate(k, *state["key"], self.layout)

    def extra_repr(self) -> str:
        return (f"base={self.base:g}, layout={self.layout!r}, fraction={self.fraction}, "
                f"extension={self.extension!r}, scale={self.scale:g}")


def make_position(name: str, *, d_model: int, n_heads: int, n_layers: int = 1, max_len: int = 512,
                  causal: bool = False, **options) -> nn.Module:
    """The position method ``name`` (one of ``METHODS``) for a model of this shape.

    Absolute methods return the input-side module of ``posenc.lib.positional`` (``module(seq_len)`` gives the
    table added to the input); the others an ``AttentionPosition``. ``options`` go to the method:

    * "sinusoidal": base; "learned": init_std, overflow;
    * "shaw": max_distance (k, default 16), values, heads, init_std;
    * "t5": num_buckets (32), max_distance (128), bidirectional (default: not causal), init_std;
    * "alibi": none;
    * "rope": base, layout, fraction.
    """
    if name not in METHODS:
        raise ValueError(f"unknown position method {name!r}; choose one of {METHODS}")
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} does not split into {n_heads} heads")
    d_head = d_model // n_heads
    if name == "none":
        if options:
            raise ValueError(f"'none' takes no options, got {sorted(options)}")
        return AttentionPosition()
    if name == "sinusoidal":
        return SinusoidalPositionalEncoding(d_model, max_len, **options)
    if name == "learned":
        return LearnedPositionalEmbedding(max_len, d_model, **options)
    if name == "shaw":
        return ShawPosition(d_head, n_layers, **options)
    if name == "t5":
        return T5Position(n_heads, **{"bidirectional": not causal, **options})
    if name == "alibi":
        return ALiBiPosition(n_heads, **options)
    return RotaryPosition(d_head, **options)


# ---------------------------------------------------------------------------------------------------
# Attention


@dataclass
class AttentionContext:
    """What every layer of one forward pass shares: the method, its prepared state and the mask.

    ``mask`` is the additive float mask (shared bias plus -inf above the diagonal when causal), or None
    when nothing but the causal mask is needed, which the fused kernel then applies itself.
    """

    position: AttentionPosition = field(default_factory=AttentionPosition)
    state: dict = field(default_factory=dict)
    causal: bool = False
    mask: torch.Tensor | None = None

    @classmethod
    def build(cls, position: AttentionPosition, query_positions, key_positions, causal: bool,
              dtype=torch.float32) -> "AttentionContext":
        state = position.prepare(query_positions, key_positions, dtype)
        mask = state.get("bias")
        if causal and mask is not None:
            mask = mask + causal_mask(len(query_positions), len(key_positions), dtype, mask.device)
        return cls(position, state, causal, mask)


def causal_mask(n_queries: int, n_keys: int, dtype=torch.float32, device=None) -> torch.Tensor:
    """0 where key j <= query i, -inf above the diagonal: the additive form of the causal mask."""
    future = torch.ones(n_queries, n_keys, dtype=torch.bool, device=device).triu(1)
    return torch.zeros(n_queries, n_keys, dtype=dtype, device=device).masked_fill(future, float("-inf"))


class SelfAttention(nn.Module):
    """Multi-head self-attention with a pluggable position method; the parameters of ``nn.MultiheadAttention``.

    ``in_proj_weight`` (3 d_model, d_model) stacks W_Q, W_K, W_V (rows = outputs, head h owns rows
    h d_head .. (h + 1) d_head - 1 of each), ``in_proj_bias`` their biases, ``out_proj`` the output map;
    initialised as torch does (Xavier-uniform in-projection, zero biases). Called as
    ``attn(x, x, x, need_weights=True, average_attn_weights=False)`` it behaves like
    ``nn.MultiheadAttention`` with ``batch_first=True`` and no mask.
    """

    batch_first = True

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} does not split into {n_heads} heads")
        self.embed_dim, self.num_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * d_model))
        self.out_proj = nn.Linear(d_model, d_model)
        nn.init.xavier_uniform_(self.in_proj_weight)
        nn.init.zeros_(self.in_proj_bias)
        nn.init.zeros_(self.out_proj.bias)

    def project(self, x: torch.Tensor, context: AttentionContext, layer: int = 0):
        """Queries, keys and values, each (batch, heads, n, d_head), queries and keys turned by the method
        (as it turns them in ``layer``).

        The projections run on the sequence-first view (n, batch, d_model), as ``nn.MultiheadAttention``
        does: the same numbers summed in the same order, so training reproduces a model built with torch's
        layer (chapter 4's saved results were) and not merely up to rounding.
        """
        qkv = F.linear(x.transpose(0, 1), self.in_proj_weight, self.in_proj_bias)      # (n, batch, 3 d_model)
        q, k, v = qkv.unflatten(-1, (3, self.num_heads, self.head_dim)).permute(2, 1, 3, 0, 4)
        q, k = context.position.turn(q, k, context.state, layer)
        return q, k, v

    def scale(self, context: AttentionContext) -> float:
        return context.position.logit_scale / math.sqrt(self.head_dim)

    def logits(self, x: torch.Tensor, context: AttentionContext | None = None, layer: int = 0,
               _qkv=None) -> torch.Tensor:
        """Every logit e_ij, (batch, heads, n, n): q.k / sqrt(d_head) plus the method's terms; -inf where
        the causal mask hides a key."""
        context = context or AttentionContext()
        q, k, _ = _qkv if _qkv is not None else self.project(x, context, layer)
        scale = self.scale(context)
        logits = (q * scale) @ k.transpose(-2, -1)
        mask = self._mask(q, context, layer, scale, explicit=True)
        return logits if mask is None else logits + mask

    def _mask(self, q, context, layer, scale, explicit):
        """The additive mask with the method's query-dependent term; ``explicit`` spells out a causal mask
        that the fused kernel could otherwise apply by itself."""
        extra = context.position.query_bias(q, context.state, layer, scale)
        mask = context.mask
        if context.causal and mask is None and (explicit or extra is not None):
            mask = causal_mask(q.shape[-2], q.shape[-2], q.dtype, q.device)
        if extra is not None:
            mask = extra if mask is None else extra + mask
        return mask

    def forward(self, query: torch.Tensor, key: torch.Tensor | None = None, value: torch.Tensor | None = None,
                need_weights: bool = False, average_attn_weights: bool = True,
                context: AttentionContext | None = None, layer: int = 0):
        """(output, weights): weights (batch, heads, n, n), averaged over heads by default, or None unless
        ``need_weights``. Self-attention only: ``key`` and ``value``, if given, must be ``query`` itself."""
        if any(other is not None and other is not query for other in (key, value)):
            raise ValueError("this is self-attention: key and value must be the query tensor itself")
        context = context or AttentionContext()
        batch, n, _ = query.shape
        q, k, v = self.project(query, context, layer)
        weights = None
        if need_weights or context.position.needs_weights:
            weights = torch.softmax(self.logits(query, context, layer, _qkv=(q, k, v)), dim=-1)
            out = weights @ v
            extra = context.position.value_term(weights, context.state, layer)
            if extra is not None:
                out = out + extra
        else:
            scale = self.scale(context)
            mask = self._mask(q, context, layer, scale, explicit=False)
            if mask is not None:             # a full 4-D mask (a view) keeps torch's fused CPU kernel
                mask = mask.expand(batch, self.num_heads, n, n)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale,
                                                 is_causal=context.causal and mask is None)
        out = self.out_proj(out.permute(2, 0, 1, 3).reshape(n, batch, self.embed_dim)).transpose(0, 1)
        if not need_weights:
            return out, None
        return out, weights.mean(dim=1) if average_attn_weights else weights


class EncoderBlock(nn.Module):
    """The course's pre-LN Transformer block: x + Attention(LN(x)), then x + W_2 ReLU(W_1 LN(x)).

    The parameter names and initialisation are those of ``nn.TransformerEncoderLayer(norm_first=True,
    batch_first=True)``: ``self_attn``, ``linear1``, ``linear2``, ``norm1``, ``norm2``; no dropout.
    """

    def __init__(self, d_model: int, n_heads: int, dim_feedforward: int, eps: float = 1e-5):
        super().__init__()
        self.self_attn = SelfAttention(d_model, n_heads)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)

    def forward(self, x: torch.Tensor, context: AttentionContext | None = None, layer: int = 0) -> torch.Tensor:
        x = x + self.self_attn(self.norm1(x), context=context, layer=layer)[0]
        return x + self.linear2(F.relu(self.linear1(self.norm2(x))))


class Encoder(nn.Module):
    """``n_layers`` copies of one block (so, like ``nn.TransformerEncoder``, all layers start equal)."""

    def __init__(self, block: EncoderBlock, n_layers: int):
        super().__init__()
        self.layers = nn.ModuleList(copy.deepcopy(block) for _ in range(n_layers))

    def forward(self, x: torch.Tensor, context: AttentionContext | None = None) -> torch.Tensor:
        for index, layer in enumerate(self.layers):
            x = layer(x, context, index)
        return x
