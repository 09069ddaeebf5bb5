"""Adding or concatenating positional information (chapter 3): accounting, algebra, geometry, scale.

One home for what chapter 3, its exercise checks (``posenc.exercises.checks.ch03``) and the tests share.
Notation as in the rest of the course: ``x`` is a token vector (``scale * E[token]``), ``p`` a positional
vector, ``d_model`` the width of the first layer's input.

* Accounting: input width, parameters and FLOPs of the first layers under each way of combining.
* Algebra: ``[x; p] W == x W_x + p W_p`` (concatenation then a linear map is a sum of two projections),
  and the split of one attention logit into token-token, token-position, position-token and
  position-position terms when ``x + p`` enters the attention.
* Geometry and scale: cosines between random token vectors and PE rows, dimensions of PE that barely move
  over a short sequence, the norms behind the ``sqrt(d_model)`` embedding scale.
* Inside a trained model: the share of position in its input, the four terms of its first layer's logits,
  and the accuracy of a rule that ignores order. The experiment that trains the models (conditions, seeds)
  is chapter 3's harness, ``posenc.experiments.ch03``.
"""

from __future__ import annotations

import math

import numpy as np

from posenc.lib.encoding import sinusoidal_encoding

# ---------------------------------------------------------------------------------------------------
# Accounting

SCHEMES = ("add", "concat")

# The three layouts of the chapter's accounting table: (scheme, how the width is found).
LAYOUTS = {
    "add": "tokens and positions share all d_model dimensions",
    "concat, same width": "tokens get d_model - position_width dimensions, positions the rest",
    "concat, wider": "tokens keep d_model dimensions, positions add position_width more",
}


def input_width(scheme: str, d_token: int, d_position: int) -> int:
    """Width of the vector that enters the first layer: ``d_token`` for a sum, ``d_token + d_position``
    for a concatenation. A sum needs ``d_token == d_position``."""
    if scheme == "add":
        if d_token != d_position:
            raise ValueError(f"cannot add a {d_token}-dimensional token vector and a {d_position}-dimensional "
                             "positional vector; addition needs equal widths")
        return int(d_token)
    if scheme == "concat":
        return int(d_token + d_position)
    raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


def projection_params(scheme: str, d_token: int, d_position: int, d_out: int, bias: bool = True) -> int:
    """Parameters of a linear map from the combined input to ``d_out`` outputs (weights, plus biases)."""
    width = input_width(scheme, d_token, d_position)
    return width * d_out + (d_out if bias else 0)


def encoder_layer_params(width: int, d_ff: int) -> int:
    """Parameters of one ``nn.TransformerEncoderLayer(width, n_heads, d_ff)`` (with biases).

    Attention: the Q, K, V and output projections, 4 (width^2 + width); feed-forward:
    2 width d_ff + d_ff + width; two LayerNorms: 4 width. The head count does not matter.
    """
    return 4 * width * width + 4 * width + 2 * width * d_ff + d_ff + width + 4 * width


def encoder_layer_flops(width: int, d_ff: int, seq_len: int) -> dict[str, int]:
    """Floating-point operations per token of one encoder layer (a multiply-add counts as 2).

    ``projections``: the four attention projections and the two feed-forward matrices, 2 (4 w^2 + 2 w d_ff);
    ``attention``: the scores q.k and the weighted sum of values over ``seq_len`` keys, 2 * 2 * seq_len * w.
    """
    projections = 2 * (4 * width * width + 2 * width * d_ff)
    attention = 2 * 2 * seq_len * width
    return {"projections": projections, "attention": attention, "total": projections + attention}


def first_layers_cost(layout: str, d_model: int, position_width: int, vocab_size: int, d_ff: int,
                      seq_len: int) -> dict[str, int]:
    """Width, token-embedding parameters, one encoder layer's parameters and FLOPs per token, for a layout
    of ``LAYOUTS``. A fixed sinusoidal table adds no parameters in any layout."""
    if layout == "add":
        token_width, width = d_model, d_model
    elif layout == "concat, same width":
        if not 0 < position_width < d_model:
            raise ValueError(f"position_width must lie strictly between 0 and d_model={d_model}")
        token_width, width = d_model - position_width, d_model
    elif layout == "concat, wider":
        token_width, width = d_model, d_model + position_width
    else:
        raise ValueError(f"layout must be one of {tuple(LAYOUTS)}, got {layout!r}")
    return {"width": width, "token_width": token_width, "embedding_params": vocab_size * token_width,
            "layer_params": encoder_layer_params(width, d_ff),
            "layer_flops": encoder_layer_flops(width, d_ff, seq_len)["total"]}


# ---------------------------------------------------------------------------------------------------
# Algebra


def concat_inputs(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``[x; p]`` along the feature axis: x (..., n, d_x), p (n, d_p) -> (..., n, d_x + d_p).

    The positional rows are shared by every sequence of a batch, so ``p`` is broadcast over the
    leading axes first.
    """
    x, p = np.asarray(x), np.asarray(p)
    p = np.broadcast_to(p, x.shape[:-1] + p.shape[-1:])
    return np.concatenate([x, p], axis=-1)


def split_projection(w: np.ndarray, d_token: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``w`` (d_token + d_position, d_out) that meet the token part, and those that meet positions."""
    return w[:d_token], w[d_token:]


def sum_of_projections(x: np.ndarray, p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``x W_x + p W_p``: the same numbers as ``concat_inputs(x, p) @ w``, without building ``[x; p]``."""
    w_x, w_p = split_projection(w, x.shape[-1])
    return x @ w_x + p @ w_p


TERM_NAMES = ("token-token", "token-position", "position-token", "position-position")


def logit_terms(x, p, w_q, w_k) -> tuple:
    """The four parts of the attention logits ``((x + p) W_q) ((x + p) W_k)^T`` (no 1/sqrt(d_k) factor).

    x, p: (n, d) token and positional parts of the input; w_q, w_k: (d, d_k). Returns
    ``(token-token, token-position, position-token, position-position)``, each (n, n), with row i the
    query position and column j the key position; their sum is the full logit matrix. Works for numpy
    arrays and 2-D torch tensors alike.
    """
    q_x, q_p = x @ w_q, p @ w_q
    k_x, k_p = x @ w_k, p @ w_k
    return q_x @ k_x.T, q_x @ k_p.T, q_p @ k_x.T, q_p @ k_p.T


def rms(values) -> float:
    """Root mean square of all entries: the typical size of a term, whatever its sign."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.sqrt(np.mean(values ** 2)))


# ---------------------------------------------------------------------------------------------------
# Geometry


def token_position_cosines(d_model: int, n_tokens: int, n_positions: int, rng: np.random.Generator) -> np.ndarray:
    """Cosines between ``n_tokens`` random token vectors (N(0, 1/d) entries) and PE rows 0..n_positions-1."""
    tokens = rng.normal(0.0, d_model ** -0.5, size=(n_tokens, d_model))
    pe = sinusoidal_encoding(n_positions, d_model)
    tokens /= np.linalg.norm(tokens, axis=1, keepdims=True)
    pe = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    return (tokens @ pe.T).ravel()


def position_spread(n_positions: int, d_model: int) -> np.ndarray:
    """How much each PE dimension moves over positions 0..n_positions-1: its range (max - min)."""
    pe = sinusoidal_encoding(n_positions, d_model)
    return pe.max(axis=0) - pe.min(axis=0)


def nearly_constant_fraction(n_positions: int, d_model: int, tol: float = 0.05) -> float:
    """Share of PE dimensions whose value moves by less than ``tol`` over positions 0..n_positions-1."""
    return float(np.mean(position_spread(n_positions, d_model) < tol))


def effective_dimension(n_positions: int, d_model: int, energy: float = 0.99) -> int:
    """Fewest directions that hold ``energy`` of the variation of PE rows 0..n_positions-1 about their mean.

    The positions of a short sequence then live (up to 1 - energy of their variance) in a subspace of this
    dimension; the rest of the d_model directions see PE only as one constant vector.
    """
    pe = sinusoidal_encoding(n_positions, d_model)
    singular = np.linalg.svd(pe - pe.mean(axis=0), compute_uv=False)
    share = np.cumsum(singular ** 2) / np.sum(singular ** 2)
    return int(np.searchsorted(share, energy) + 1)


# ---------------------------------------------------------------------------------------------------
# Scale


def pe_norm(d_model: int) -> float:
    """Norm of every PE row for an even ``d_model``: each pair adds sin^2 + cos^2 = 1, so sqrt(d_model / 2)."""
    if d_model % 2:
        raise ValueError(f"the PE norm is the same at every position only for an even d_model, got {d_model}")
    return math.sqrt(d_model / 2)


def token_norm(d_model: int, init_std: float, scale: float = 1.0) -> float:
    """Root-mean-square norm of ``scale * E[token]`` with N(0, init_std^2) entries: scale init_std sqrt(d)."""
    return scale * init_std * math.sqrt(d_model)


def position_share(d_model: int, init_std: float, scale: float = 1.0) -> float:
    """Expected share of the input's squared norm that belongs to position, |p|^2 / (|x|^2 + |p|^2).

    Token vectors and PE rows are nearly orthogonal in high dimension, so |x + p|^2 ~ |x|^2 + |p|^2.
    """
    x2, p2 = token_norm(d_model, init_std, scale) ** 2, pe_norm(d_model) ** 2
    return p2 / (x2 + p2)


def matching_init_std(d_model: int, scale: float | None = None) -> float:
    """Initial std of the embedding entries that makes ``scale * E[token]`` as long as a PE row on average.

    scale^2 std^2 d = d / 2, so std = 1 / (scale sqrt 2); with the default scale sqrt(d_model) that is
    1 / sqrt(2 d_model).
    """
    scale = math.sqrt(d_model) if scale is None else scale
    return 1.0 / (scale * math.sqrt(2.0))


def scaled_inputs(tokens, table, pe, scale: float | None = None) -> np.ndarray:
    """The first layer's input ``scale * table[tokens] + pe[:n]`` (default scale sqrt(d_model)).

    tokens: integers (n,) or (batch, n); table: (vocab_size, d_model); pe: (max_len, d_model), max_len >= n.
    """
    tokens, table, pe = np.asarray(tokens), np.asarray(table), np.asarray(pe)
    scale = math.sqrt(table.shape[1]) if scale is None else scale
    return scale * table[tokens] + pe[: tokens.shape[-1]]


# ---------------------------------------------------------------------------------------------------
# Inside a model


def model_position_share(model, seq_len: int) -> float:
    """Share of position in the squared norm of a ``TinyTransformer``'s input, on average over the
    vocabulary and positions 0..seq_len-1: |p|^2 / (|x|^2 + |p|^2) with x = embed_scale * E[token]."""
    import torch

    with torch.no_grad():
        x2 = (model.embed_scale * model.embedding.weight).pow(2).sum(-1).mean().item()
        p2 = 0.0 if model.combine == "none" else model.positional(seq_len).pow(2).sum(-1).mean().item()
    return p2 / (x2 + p2)


def bag_of_tokens_accuracy(task, seq_len: int, n_sequences: int = 512, seed: int = 12345) -> float:
    """Accuracy on ``ShiftedCopy`` of a rule that ignores order: guess the most frequent other token.

    A model without positions sees each sequence as a bag of tokens; this rule uses only that bag and the
    token at hand, and ties are split evenly (the expected accuracy of a random tie-break).
    """
    import torch

    from posenc.lib.tasks import IGNORE

    tokens, targets = task.batch(n_sequences, seq_len, torch.Generator().manual_seed(seed))
    one_hot = torch.nn.functional.one_hot(tokens, task.vocab_size)
    others = one_hot.sum(dim=1, keepdim=True) - one_hot                  # the bag without this token
    best = (others == others.max(dim=-1, keepdim=True).values).double()
    chance = best / best.sum(dim=-1, keepdim=True)
    keep = targets != IGNORE
    return float(chance.gather(-1, targets.clamp(min=0)[..., None]).squeeze(-1)[keep].mean())


# ---------------------------------------------------------------------------------------------------
# The four terms inside a trained model


def first_layer_logit_parts(model, tokens) -> dict:
    """Split the first attention layer's logits of an ``add`` model into its four terms, exactly.

    The layer reads LayerNorm(x + p) (the encoder is pre-norm). LayerNorm centres each position's vector
    and divides it by one number, its standard deviation s_i, then applies gamma and beta; so
    LayerNorm(x_i + p_i) = a_i + b_i + beta with a_i = gamma (x_i - mean x_i) / s_i and
    b_i = gamma (p_i - mean p_i) / s_i. The token part a and the position part b go into
    ``logit_terms`` head by head; everything that involves beta or the projection biases is ``rest``.

    tokens: (1, n). Returns numpy arrays: ``terms`` (4, n_heads, n, n) in ``TERM_NAMES`` order,
    ``rest`` and ``total`` (n_heads, n, n); all include attention's 1/sqrt(d_head) factor, so
    softmax(total) over the last axis is the layer's attention.
    """
    import torch

    if model.combine != "add":
        raise ValueError(f"the four-term split needs combine='add', got {model.combine!r}")
    layer = model.encoder.layers[0]
    attention, norm = layer.self_attn, layer.norm1
    with torch.no_grad():
        x = (model.embed_scale * model.embedding(tokens))[0]
        p = model.positional(tokens.shape[1]).to(x.dtype)
        v = x + p
        s = torch.sqrt(v.var(dim=-1, unbiased=False, keepdim=True) + norm.eps)
        a = norm.weight * (x - x.mean(dim=-1, keepdim=True)) / s
        b = norm.weight * (p - p.mean(dim=-1, keepdim=True)) / s
        u = norm(v)
        d, heads = u.shape[-1], attention.num_heads
        d_head = d // heads
        w_q, w_k, _ = attention.in_proj_weight.split(d)
        b_q, b_k, _ = attention.in_proj_bias.split(d)
        terms, totals = [], []
        for h in range(heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            wq, wk = w_q[cols].T, w_k[cols].T
            terms.append(torch.stack(logit_terms(a, b, wq, wk)) / math.sqrt(d_head))
            q, k = u @ wq + b_q[cols], u @ wk + b_k[cols]
            totals.append(q @ k.T / math.sqrt(d_head))
        terms = torch.stack(terms, dim=1)                       # (4, heads, n, n)
        total = torch.stack(totals)
    return {"terms": terms.numpy(), "total": total.numpy(), "rest": (total - terms.sum(0)).numpy()}


def first_layer_attention(model, tokens) -> np.ndarray:
    """The first layer's attention weights as the model computes them, (n_heads, n, n), for tokens (1, n)."""
    return model.attention_weights(tokens, layer=0)[0].numpy()
