"""Relative positions and the attention biases built on them (chapter 5).

The course's lens on Part II: the logit between the query at position i and the key at position j is
q_i . k_j / sqrt(d_head) plus a term that depends on the method. The methods here add a term that depends
on the *offset* j - i only:

* Shaw, Uszkoreit & Vaswani (2018): learned vectors a^K, a^V for the clipped offset (``clipped_index``);
* T5 (Raffel et al. 2020): one learned scalar per head for each *bucket* of offsets (``t5_bucket``);
* ALiBi (Press, Smith & Lewis 2022): a fixed penalty, linear in the distance, one slope per head
  (``alibi_slopes``, ``alibi_bias``).

Sign convention, everywhere in the course: the offset is ``j - i``, key position minus query position (T5's
"memory position minus query position"). A key in the past has a negative offset.

Everything takes and returns torch tensors; nothing loops over positions.
"""

from __future__ import annotations

import math
import numbers

import torch


def _positive_int(name: str, value, smallest: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < smallest:
        raise ValueError(f"{name} must be an integer >= {smallest}, got {value!r}")
    return int(value)


def offsets_between(query_positions, key_positions) -> torch.Tensor:
    """The matrix of offsets ``key_positions[j] - query_positions[i]``, shape (n_queries, n_keys).

    Positions are 1-D (integer or float); the result has their common dtype.
    """
    query_positions, key_positions = torch.as_tensor(query_positions), torch.as_tensor(key_positions)
    if query_positions.dim() != 1 or key_positions.dim() != 1:
        raise ValueError(f"positions must be 1-D, got shapes {tuple(query_positions.shape)} and "
                         f"{tuple(key_positions.shape)}")
    return key_positions[None, :] - query_positions[:, None]


def relative_positions(n_queries: int, n_keys: int, device=None) -> torch.Tensor:
    """The (n_queries, n_keys) integer matrix with entry [i, j] = j - i, for positions from 0.

    >>> relative_positions(2, 3)
    tensor([[ 0,  1,  2],
            [-1,  0,  1]])
    """
    n_queries, n_keys = _positive_int("n_queries", n_queries, 0), _positive_int("n_keys", n_keys, 0)
    return offsets_between(torch.arange(n_queries, device=device), torch.arange(n_keys, device=device))


def clipped_index(relative: torch.Tensor, max_distance: int) -> torch.Tensor:
    """Shaw et al.'s row index for an offset r = j - i: ``clip(r, -k, k) + k``, in 0 .. 2k.

    Shaw, Uszkoreit & Vaswani (2018), section 3.2: a^K_ij = w^K_clip(j - i, k), with
    clip(x, k) = max(-k, min(k, x)), so there are 2k + 1 learned vectors; row k is offset 0, row 0 every
    offset <= -k and row 2k every offset >= k.
    """
    k = _positive_int("max_distance", max_distance, 0)
    return torch.as_tensor(relative).clamp(-k, k).long() + k


def t5_bucket(relative: torch.Tensor, bidirectional: bool = True, num_buckets: int = 32,
              max_distance: int = 128) -> torch.Tensor:
    """T5's bucket for each offset ``relative = j - i`` (key minus query), as a long tensor of the same shape.

    The rule (Raffel et al. 2020, section 2.1; the reference is ``_relative_position_bucket`` in
    mesh-tensorflow and in Hugging Face's ``T5Attention``):

    * bidirectional: half of the buckets, nb = num_buckets // 2, serve keys at or before the query, the
      other half (numbers nb .. 2 nb - 1) keys after it; the distance is n = |j - i|;
    * causal (``bidirectional=False``): all nb = num_buckets buckets serve the past, n = max(i - j, 0), so
      every future offset falls into bucket 0 with offset 0 (the causal mask hides them anyway);
    * the first max_exact = nb // 2 distances get a bucket each (bucket n); a larger n gets
      ``max_exact + floor(ln(n / max_exact) / ln(max_distance / max_exact) * (nb - max_exact))``, computed in
      float32 as the reference does, and capped at nb - 1. So buckets grow logarithmically and every
      distance >= max_distance shares the last one (with the defaults, already every distance >= 91
      bidirectional, >= 113 causal).

    With the defaults (32 buckets, max_distance 128): offsets -7..0 get buckets 7..0, -8 gets 8, -128
    and beyond 15; +1 gets 17 (bidirectional).
    """
    num_buckets = _positive_int("num_buckets", num_buckets, 4 if bidirectional else 2)
    max_distance = _positive_int("max_distance", max_distance)
    relative = torch.as_tensor(relative)
    if relative.is_floating_point():
        raise ValueError("t5_bucket needs integer offsets j - i")
    if bidirectional:
        n_buckets = num_buckets // 2
        first_bucket = (relative > 0).long() * n_buckets
        distance = relative.abs()
    else:
        n_buckets = num_buckets
        first_bucket = torch.zeros_like(relative, dtype=torch.long)
        distance = (-relative).clamp(min=0)
    max_exact = n_buckets // 2
    if max_distance <= max_exact:
        raise ValueError(f"max_distance must exceed the {max_exact} exact buckets, got {max_distance}")
    # The logarithmic part, only used where distance >= max_exact (clamped so log never sees 0).
    ratio = distance.clamp(min=max_exact).float() / max_exact
    spread = torch.log(ratio) / math.log(max_distance / max_exact) * (n_buckets - max_exact)
    log_bucket = (max_exact + spread.long()).clamp(max=n_buckets - 1)
    return first_bucket + torch.where(distance < max_exact, distance.long(), log_bucket)


def alibi_slopes(n_heads: int) -> torch.Tensor:
    """ALiBi's fixed head slopes m_h, h = 1 .. n_heads, as a float64 tensor in head order.

    Press, Smith & Lewis (2022), section 3, and ``get_slopes`` in their official repository
    (ofirpress/attention_with_linear_biases):

    * n_heads a power of two: the geometric sequence m_h = 2^(-8 h / n_heads), so 8 heads get
      1/2, 1/4, ..., 1/256 and 16 heads 2^-0.5, 2^-1, ..., 2^-8;
    * otherwise, with c the largest power of two below n_heads: the c slopes for c heads, *followed by*
      the first n_heads - c of every other slope for 2c heads (those of odd h). E.g. 6 heads:
      1/4, 1/16, 1/64, 1/256, then 1/2, 1/8. The list is not sorted.
    """
    n_heads = _positive_int("n_heads", n_heads)
    power = 2 ** int(math.floor(math.log2(n_heads)))
    slopes = [2.0 ** (-8.0 * h / power) for h in range(1, power + 1)]
    if power < n_heads:
        slopes += alibi_slopes(2 * power).tolist()[0::2][: n_heads - power]
    return torch.tensor(slopes, dtype=torch.float64)


def alibi_bias(relative: torch.Tensor, slopes: torch.Tensor) -> torch.Tensor:
    """ALiBi's bias ``-m_h |j - i|`` for offsets ``relative = j - i``: shape (n_heads,) + relative.shape.

    Press, Smith & Lewis (2022), section 3: the query at i adds -m_h (i - j) to its logit for each key
    j <= i, which is -m_h |j - i|. The paper trains causal models only; for a key after the query (a
    model without the causal mask) this course uses the same symmetric penalty, its own choice.

    (The official code adds +m_h j instead: in one row it differs from -m_h (i - j) by the constant
    -m_h i, which the softmax ignores, so the attention is the same but the raw biases are not.)
    """
    relative = torch.as_tensor(relative)
    slopes = torch.as_tensor(slopes)
    dtype = slopes.dtype if slopes.is_floating_point() else torch.get_default_dtype()
    distance = relative.abs().to(dtype)
    return -slopes.to(dtype).reshape(-1, *([1] * relative.dim())) * distance
