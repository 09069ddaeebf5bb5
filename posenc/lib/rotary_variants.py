"""Rotary in today's language models (chapter 9): what the models' configurations ask for, as code.

Chapter 6 turned pair i of a head by pos * omega_i with omega_i = base^(-2i/d); chapter 7 changed the
omega_i to read longer text. Every variant that open models use today is one more choice of the same few
knobs, and this module writes each as whole-array operations on them:

* **which pairs turn** (a frequency vector with zeros): partial rotary (GPT-NeoX's ``rotary_pct``, GPT-J's
  ``rotary_dim``, Phi's ``partial_rotary_factor``) turns the first d_rot coordinates with frequencies spread
  over d_rot; p-RoPE (Barbero et al. 2025; Gemma's ``rope_proportion``, transformers' "proportional")
  keeps the fastest p * d/2 pairs of the full spread and stops the slowest;
* **how fast each pair turns** at a longer context: Llama 3's ``llama3`` scaling (a ramp over wavelengths,
  which is YaRN's "by parts" ramp with its ends moved), YaRN as its reference code runs it (the ramp over
  pair indices that DeepSeek-V3 and transformers use), LongRoPE's searched factor per pair (Phi-3), the
  "dynamic" NTK base and linear interpolation;
* **a factor on the queries and keys** (an attention temperature): YaRN's 0.1 ln s + 1, DeepSeek's
  ``mscale``, LongRoPE's sqrt(1 + ln s / ln L), Llama 4's per-position scale of its NoPE layers' queries;
* **which layers use position at all, and what they see**: Llama 4 turns three layers in four and lets
  the fourth read everything without position, its rotary layers attending within chunks; Gemma 3
  alternates five local sliding-window layers (base 10 000) with one global layer (base 1 000 000).

``rope_parameters`` reads a configuration (the fields of a model's ``config.json``) and returns what
Hugging Face's ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS`` return, (frequencies, attention
factor), computed with the functions below; ``tests/test_rotary_variants.py`` compares the two. The course
never imports transformers: the tests do.

The table of what current open models use, with a source for every entry, is ``model_table()`` (the
package's ``data/rotary_models.json``).
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path

import numpy as np
import torch

from posenc.lib.attention import RotaryPosition, causal_mask
from posenc.lib.encoding import DEFAULT_BASE
from posenc.lib.extension import ntk_base, yarn_ramp
from posenc.lib.rotary import apply_rotary, rotary_frequencies, rotated_width

MODELS_FILE = Path(__file__).resolve().parent / "data" / "rotary_models.json"
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional")


def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def _even_width(d_head) -> int:
    if isinstance(d_head, bool) or not isinstance(d_head, numbers.Integral) or d_head < 2 or d_head % 2:
        raise ValueError(f"the head width must be an even integer >= 2, got {d_head!r}")
    return int(d_head)


# ---------------------------------------------------------------------------------------------------
# Which pairs turn


def kept_pairs(d_head: int, p: float) -> int:
    """How many pairs p-RoPE keeps turning: ``int(p * d_head // 2)``, the count of Barbero et al.'s
    ``apply_p_rope``, Gemma's ``apply_rope(rope_proportion=p)`` and transformers' "proportional" type."""
    d_head = _even_width(d_head)
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    return int(p * d_head // 2)


def p_rope_frequencies(d_head: int, p: float, base: float = DEFAULT_BASE) -> torch.Tensor:
    """p-RoPE (Barbero et al. 2025): the d/2 frequencies base^(-2i/d) of the whole head, with every pair past
    the ``kept_pairs(d_head, p)`` fastest set to 0 (a pair with frequency 0 never turns). float64, (d/2,).

    p = 1 is RoPE, p = 0 is no position at all; the pairs that stop are the slowest ones, which chapter 6
    found carry most of a trained model's size and little of its positional work.
    """
    omega = rotary_frequencies(_even_width(d_head), _positive(base, "base"))
    return torch.where(torch.arange(len(omega)) < kept_pairs(d_head, p), omega, torch.zeros_like(omega))


def partial_frequencies(d_head: int, fraction: float, base: float = DEFAULT_BASE) -> torch.Tensor:
    """Partial rotary as a frequency vector of the whole head, (d/2,): the d_rot / 2 turned pairs have
    base^(-2i/d_rot), spread over the rotated width ``rotated_width(d_head, fraction)`` (GPT-NeoX's
    convention), and the other pairs 0.

    ``posenc.lib.rotary.apply_rotary(x, fraction=...)`` applies it: it turns the first d_rot coordinates and
    leaves the rest. Here the pairs that do not turn are listed as frequency 0, which is the same thing.
    """
    d_rot = rotated_width(_even_width(d_head), fraction)
    omega = torch.zeros(d_head // 2, dtype=torch.float64)
    omega[: d_rot // 2] = rotary_frequencies(d_rot, _positive(base, "base"))
    return omega


def partial_as_p_rope_base(base: float, fraction: float) -> float:
    """The base b^(1/f) at which p-RoPE with p = f turns its pairs as fast as partial rotary with fraction f
    at base b: b^(-2i/(f d)) = (b^(1/f))^(-2i/d). GPT-NeoX-20B's 0.25 of base 10 000 is p-RoPE at base 10^16."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction!r}")
    return _positive(base, "base") ** (1.0 / fraction)


def wavelengths(omega) -> torch.Tensor:
    """2 pi / omega_i, the positions one full turn of each pair takes (inf for a pair that never turns)."""
    omega = torch.as_tensor(omega, dtype=torch.float64)
    return torch.where(omega > 0, 2 * math.pi / omega.clamp_min(1e-300), torch.full_like(omega, math.inf))


def turns(omega, length: float) -> torch.Tensor:
    """How many full turns each pair makes over ``length`` positions: length * omega_i / (2 pi)."""
    return torch.as_tensor(omega, dtype=torch.float64) * float(length) / (2 * math.pi)


# ---------------------------------------------------------------------------------------------------
# How fast each pair turns at a longer context


def linear_frequencies(omega, factor: float) -> torch.Tensor:
    """Linear scaling (transformers' "linear", Gemma 3's global ``rope_scaling``): omega_i / s, which is
    chapter 7's position interpolation written on the frequencies (pos / s times omega = pos times omega / s)."""
    return torch.as_tensor(omega, dtype=torch.float64) / _positive(factor, "factor")


def by_parts(omega, factor: float, original_length: float, low: float, high: float) -> torch.Tensor:
    """Interpolate a pair by how many turns r_i it makes over the original length L: pairs with r_i > high keep
    omega_i, pairs with r_i < low turn s times slower, and in between the two mix with the weight
    gamma = (r_i - low) / (high - low), linear in r_i:  omega'_i = (1 - gamma) omega_i / s + gamma omega_i.

    This is YaRN's "NTK-by-parts" (Peng et al. 2023, eqs. 17-20: low = alpha, high = beta) and it is
    Llama 3's scaling (``llama3_frequencies``). With low == high the ramp is a step: pairs with r_i >= high
    keep their frequency, the others are divided by s (Llama 4 Scout's configuration).
    """
    omega = torch.as_tensor(omega, dtype=torch.float64)
    factor = _positive(factor, "factor")
    r = turns(omega, _positive(original_length, "original_length"))
    if low > high:
        raise ValueError(f"the ramp needs low <= high, got low={low}, high={high}")
    gamma = (r >= high).double() if low == high else yarn_ramp(r, low, high)
    return (1 - gamma) * omega / factor + gamma * omega


def llama3_frequencies(omega, factor: float, low_freq_factor: float, high_freq_factor: float,
                       original_max_position_embeddings: float) -> torch.Tensor:
    """Llama 3.1's ``rope_type: "llama3"``, from its four fields: wavelengths longer than
    L / low_freq_factor are divided by ``factor``, wavelengths shorter than L / high_freq_factor kept, and a
    linear ramp between (L = original_max_position_embeddings).

    Written with turns instead of wavelengths, r_i = L / lambda_i, the three bands are r_i < low_freq_factor,
    r_i > high_freq_factor and the ramp (r_i - low) / (high - low) between: exactly ``by_parts`` with
    YaRN's alpha = low_freq_factor and beta = high_freq_factor (Llama 3.1: 1 and 4; YaRN's paper: 1 and 32),
    without YaRN's temperature.
    """
    return by_parts(omega, factor, original_max_position_embeddings, low_freq_factor, high_freq_factor)


def yarn_correction_range(d: int, base: float, original_length: float, beta_fast: float = 32,
                          beta_slow: float = 1, truncate: bool = True) -> tuple[float, float]:
    """The pair indices between which YaRN's reference code ramps: where a pair makes ``beta_fast`` and
    ``beta_slow`` turns over L. Pair i makes r turns when i = d ln(L / (2 pi r)) / (2 ln base); the code
    rounds the first down and the second up (``truncate``) and clamps them to [0, d - 1]."""
    def pair_of(r):
        return d * math.log(original_length / (r * 2 * math.pi)) / (2 * math.log(base))
    low, high = pair_of(beta_fast), pair_of(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, d - 1)


def yarn_code_frequencies(d: int, base: float, factor: float, original_length: float, beta_fast: float = 32,
                          beta_slow: float = 1, truncate: bool = True) -> torch.Tensor:
    """YaRN's frequencies as its reference code computes them (the YaRN repository, DeepSeek-V3's own
    ``inference/model.py``, transformers' "yarn"): the weight of the interpolated frequency is a ramp
    *linear in the pair index* between the rounded ``yarn_correction_range``, not in the number of turns.

    The ends agree with the paper's ramp (``posenc.lib.extension.yarn_frequencies``, chapter 7), the middle
    does not: a ramp linear in i is a ramp in log r. (float64, (d/2,).)
    """
    omega = rotary_frequencies(_even_width(d), _positive(base, "base"))
    low, high = yarn_correction_range(d, base, original_length, beta_fast, beta_slow, truncate)
    if low == high:
        high += 0.001                      # as the reference code does, to avoid dividing by zero
    interpolated = ((torch.arange(d // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    return omega / _positive(factor, "factor") * interpolated + omega * (1 - interpolated)


def yarn_mscale(factor: float, mscale: float = 1.0) -> float:
    """YaRN's sqrt(1/t) = 0.1 mscale ln(s) + 1 (1 for s <= 1); ``mscale`` = 1 is the paper's eq. 22."""
    factor = _positive(factor, "factor")
    return 0.1 * mscale * math.log(factor) + 1.0 if factor > 1 else 1.0


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """The factor YaRN puts on the cos and sin (so on q and k each): yarn_mscale(s) by default; with
    DeepSeek's two fields, yarn_mscale(s, mscale) / yarn_mscale(s, mscale_all_dim), which is 1 when they are
    equal (DeepSeek-V3: both 1.0); the temperature then moves into the softmax scale
    (``deepseek_softmax_scale``)."""
    if mscale and mscale_all_dim:
        return yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)
    return yarn_mscale(factor)


def deepseek_softmax_scale(qk_head_dim: int, factor: float | None = None, mscale_all_dim: float | None = None) -> float:
    """The factor on every logit of DeepSeek's attention: 1 / sqrt(qk_head_dim), times yarn_mscale(s,
    mscale_all_dim)^2 when the model is extended with YaRN and ``mscale_all_dim`` is set. It multiplies the
    whole logit, the part without position as well as the rotary part."""
    scale = float(qk_head_dim) ** -0.5
    if factor is not None and mscale_all_dim:
        scale *= yarn_mscale(factor, mscale_all_dim) ** 2
    return scale


def longrope_frequencies(omega, factors) -> torch.Tensor:
    """LongRoPE (Ding et al. 2024), as Phi-3 uses it: pair i's frequency divided by its own searched factor,
    omega_i / lambda_i. One factor per turned pair; a factor of s for every pair is linear scaling."""
    omega = torch.as_tensor(omega, dtype=torch.float64)
    factors = torch.as_tensor(factors, dtype=torch.float64)
    if factors.shape != omega.shape:
        raise ValueError(f"one factor per pair: {len(omega)} pairs, got {tuple(factors.shape)} factors")
    if not torch.all(factors > 0):
        raise ValueError("every factor must be > 0")
    return omega / factors


def longrope_factors(seq_len: int, original_max_position_embeddings: int, short_factor, long_factor):
    """Which of the two lists a LongRoPE model uses: ``long_factor`` once the sequence is longer than the
    original length (seq_len > L), ``short_factor`` otherwise (transformers' rule)."""
    return long_factor if seq_len > original_max_position_embeddings else short_factor


def longrope_attention_factor(factor: float, original_max_position_embeddings: int) -> float:
    """LongRoPE's factor on cos and sin in Phi-3: sqrt(1 + ln s / ln L) for s > 1, else 1, where s is
    max_position_embeddings / original_max_position_embeddings. Applied at every length."""
    factor = _positive(factor, "factor")
    if factor <= 1:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))


def dynamic_ntk_base(base: float, factor: float, d: int, seq_len: int, max_position_embeddings: int) -> float:
    """"Dynamic" NTK scaling: chapter 7's NTK-aware base b s'^(d / (d - 2)) with a scale that grows with the
    sequence, s' = s n / L - (s - 1) for n > L (so s' = 1 at n = L and s' = s at n = 2L when s = 2, ...); the
    base is unchanged up to L."""
    seq_len = max(int(seq_len), int(max_position_embeddings))
    effective = factor * seq_len / max_position_embeddings - (factor - 1)
    return ntk_base(base, effective, d) if effective > 1 else float(base)


# ---------------------------------------------------------------------------------------------------
# A configuration's frequencies, as transformers computes them


def head_dim_of(config: dict, layer_type: str | None = None) -> int:
    """A configuration's head width: ``head_dim`` if given, else hidden_size // num_attention_heads; Gemma 4's
    global layers have their own, ``global_head_dim``."""
    if layer_type == "full_attention" and config.get("global_head_dim"):
        return int(config["global_head_dim"])
    return int(config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"])


def rope_settings(config: dict, layer_type: str | None = None) -> dict:
    """The rotary fields of a configuration in one flat dict: ``rope_type`` and ``rope_theta`` and the
    scaling fields, whether the file writes them the old way (``rope_theta`` beside a ``rope_scaling`` dict,
    ``type`` or ``rope_type``) or the new (``rope_parameters``, per layer type for Gemma 3 and 4)."""
    if "rope_parameters" in config:
        settings = config["rope_parameters"]
        settings = dict(settings[layer_type] if layer_type is not None else settings)
    else:
        settings = dict(config.get("rope_scaling") or {})
        settings.setdefault("rope_theta", config.get("rope_theta", DEFAULT_BASE))
        if layer_type == "sliding_attention":          # Gemma 3's local layers: their own base, no scaling
            settings = {"rope_theta": config["rope_local_base_freq"]}
    settings["rope_type"] = settings.get("rope_type", settings.pop("type", "default"))
    if settings["rope_type"] == "su":                  # Phi-3's first name for LongRoPE
        settings["rope_type"] = "longrope"
    for key in ("partial_rotary_factor", "original_max_position_embeddings"):
        if key in config and key not in settings:
            settings[key] = config[key]
    if "rotary_dim" in config:                         # GPT-J names the rotated width itself
        settings["partial_rotary_factor"] = config["rotary_dim"] / head_dim_of(config)
    return settings


def rope_parameters(config: dict, seq_len: int | None = None, layer_type: str | None = None) -> tuple[torch.Tensor, float]:
    """(frequencies, attention factor) of one attention layer of a configuration, float64: the frequencies
    of its turned pairs (``int(head_dim * partial_rotary_factor) / 2`` of them; all d/2 for "proportional",
    whose stopped pairs are 0) and the factor that multiplies cos and sin.

    ``config`` holds the fields of a ``config.json``; ``seq_len`` the length being read ("dynamic" and
    "longrope" depend on it); ``layer_type`` picks a layer type's own settings (Gemma 3 and 4). The same
    contract as transformers' ``ROPE_INIT_FUNCTIONS[rope_type](config, device, seq_len)`` (default: each
    model's ``compute_default_rope_parameters``), computed with the course's functions.
    """
    settings = rope_settings(config, layer_type)
    rope_type, base = settings["rope_type"], float(settings["rope_theta"])
    if rope_type not in ROPE_TYPES:
        raise ValueError(f"unknown rope_type {rope_type!r}; the course reads {ROPE_TYPES}")
    head_dim = head_dim_of(config, layer_type)
    fraction = settings.get("partial_rotary_factor", 1.0)
    if rope_type == "proportional":
        omega = p_rope_frequencies(head_dim, fraction, base)
        return linear_frequencies(omega, settings.get("factor", 1.0)), 1.0
    d = int(head_dim * fraction)
    omega = rotary_frequencies(d, base)
    factor = settings.get("factor")
    original = settings.get("original_max_position_embeddings")
    if rope_type == "default":
        return omega, 1.0
    if rope_type == "linear":
        return linear_frequencies(omega, factor), 1.0
    if rope_type == "dynamic":
        n = config["max_position_embeddings"] if seq_len is None else seq_len
        return rotary_frequencies(d, dynamic_ntk_base(base, factor, d, n, config["max_position_embeddings"])), 1.0
    if rope_type == "llama3":
        return llama3_frequencies(omega, factor, settings["low_freq_factor"], settings["high_freq_factor"],
                                  original), 1.0
    if factor is None:                               # Phi-3 and DeepSeek-V3 may leave it to the two lengths
        factor = config["max_position_embeddings"] / original
    if rope_type == "yarn":
        frequencies = yarn_code_frequencies(d, base, factor, original, settings.get("beta_fast") or 32,
                                            settings.get("beta_slow") or 1, settings.get("truncate", True))
        attention = settings.get("attention_factor") or yarn_attention_factor(
            factor, settings.get("mscale"), settings.get("mscale_all_dim"))
        return frequencies, attention
    factors = longrope_factors(seq_len or 0, original, settings["short_factor"], settings["long_factor"])
    attention = settings.get("attention_factor") or longrope_attention_factor(factor, original)
    return longrope_frequencies(omega, factors), attention


# ---------------------------------------------------------------------------------------------------
# Which layers use position, and what they attend to


def llama4_rope_layers(n_layers: int, interval: int = 4) -> list[bool]:
    """Llama 4's "iRoPE": layer l turns its queries and keys unless (l + 1) is a multiple of ``interval``
    (transformers' ``no_rope_layers``, whose 1 means *with* rotary, and Meta's ``nope_layer_interval``)."""
    if interval < 1:
        raise ValueError(f"the interval must be >= 1, got {interval}")
    return [(layer + 1) % interval != 0 for layer in range(n_layers)]


def llama4_query_scale(positions, floor_scale: float = 8192, attn_scale: float = 0.1) -> torch.Tensor:
    """Llama 4's temperature for its layers without position: the query at position pos is multiplied by
    1 + attn_scale * ln(1 + floor((pos + 1) / floor_scale)). Exactly 1 for pos + 1 < floor_scale (short
    contexts are untouched), then growing like a logarithm of the position (Nakanishi 2025's "scalable
    softmax", in steps of floor_scale)."""
    positions = torch.as_tensor(positions, dtype=torch.float64)
    return 1 + attn_scale * torch.log1p(torch.floor((positions + 1) / _positive(floor_scale, "floor_scale")))


def chunked_causal_mask(n: int, chunk: int, dtype=torch.float32) -> torch.Tensor:
    """Additive mask of chunked causal attention (Llama 4's rotary layers, ``attention_chunk_size``): the
    query at i sees keys j <= i of its own chunk, i // chunk == j // chunk, and -inf elsewhere."""
    if chunk < 1:
        raise ValueError(f"the chunk must hold at least one position, got {chunk}")
    index = torch.arange(n)
    other_chunk = (index[:, None] // chunk) != (index[None, :] // chunk)
    return causal_mask(n, n, dtype).masked_fill(other_chunk, float("-inf"))


def sliding_window_causal_mask(n: int, window: int, dtype=torch.float32) -> torch.Tensor:
    """Additive mask of a causal sliding window (Gemma 3's local layers): the query at i sees the keys
    i - window < j <= i, -inf elsewhere."""
    if window < 1:
        raise ValueError(f"the window must hold at least one position, got {window}")
    index = torch.arange(n)
    too_far = (index[:, None] - index[None, :]) >= window
    return causal_mask(n, n, dtype).masked_fill(too_far, float("-inf"))


def gemma3_layer_types(n_layers: int, pattern: int = 6) -> list[str]:
    """Gemma 3's layers: "sliding_attention" (local, base 10 000) unless (l + 1) is a multiple of
    ``pattern``, then "full_attention" (global, base 1 000 000): five local layers to one global."""
    if pattern < 1:
        raise ValueError(f"the pattern must be >= 1, got {pattern}")
    return ["full_attention" if (layer + 1) % pattern == 0 else "sliding_attention" for layer in range(n_layers)]


def llama4_layer(x: torch.Tensor, weights: dict, n_heads: int, n_kv_heads: int, positions, *, rope: bool, omega,
                 qk_norm_eps: float | None = None, temperature: tuple | None = None, chunk: int | None = None) -> torch.Tensor:
    """One Llama 4 attention layer, causal, as a function of its weights (``q``, ``k``, ``v``, ``o``, each an
    ``nn.Linear`` weight: rows are outputs): the per-layer choice written out.

    * ``rope=True``: queries and keys turned (pairs (2i, 2i + 1), as Llama 4's complex form does), then each
      divided by its root mean square (``qk_norm_eps``: Llama 4 Scout's ``use_qk_norm``), keys attend within
      ``chunk`` positions if given;
    * ``rope=False``: no turn, the queries multiplied by ``llama4_query_scale`` (``temperature`` =
      (floor_scale, attn_scale), or None), every earlier key visible.

    Keys and values have ``n_kv_heads`` heads, each shared by n_heads / n_kv_heads query heads (grouped-query
    attention). Returns (batch, n, d_model).
    """
    n = x.shape[1]
    q = _split_heads(x @ weights["q"].T, n_heads)
    k, v = (_split_heads(x @ weights[name].T, n_kv_heads) for name in ("k", "v"))
    if rope:
        q, k = (apply_rotary(t, positions, omega=omega, layout="interleaved") for t in (q, k))
        if qk_norm_eps is not None:
            q, k = (t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + qk_norm_eps) for t in (q, k))
    elif temperature is not None:
        q = q * llama4_query_scale(positions, *temperature).to(q.dtype)[:, None]
    k, v = (t.repeat_interleave(n_heads // n_kv_heads, dim=1) for t in (k, v))
    mask = chunked_causal_mask(n, chunk, q.dtype) if rope and chunk else causal_mask(n, n, q.dtype)
    weights_ = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + mask, dim=-1)
    return (weights_ @ v).transpose(1, 2).flatten(-2) @ weights["o"].T


def _split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(batch, n, n_heads * w) -> (batch, n_heads, n, w)."""
    return x.unflatten(-1, (n_heads, -1)).transpose(1, 2)


# ---------------------------------------------------------------------------------------------------
# Position methods for the course's model


class FrequencyRotary(RotaryPosition):
    """Rotary with a fixed frequency per pair, zeros allowed: p-RoPE (``p_rope_frequencies``) or any vector of
    ``d_head / 2`` frequencies. Extensions (``extend``) are switched off: the frequencies are the method."""

    def __init__(self, d_head: int, omega, layout: str = "interleaved", name: str = "rope"):
        self._fixed = torch.as_tensor(omega, dtype=torch.float64).clone()
        if self._fixed.shape != (d_head // 2,):
            raise ValueError(f"give one frequency per pair: {d_head // 2}, got shape {tuple(self._fixed.shape)}")
        super().__init__(d_head, layout=layout)
        self.name = name

    def reset(self) -> "FrequencyRotary":
        super().reset()
        self.omega = self._fixed.to(self.omega.device)
        return self

    def extend(self, method: str, *args, **kwargs) -> "FrequencyRotary":
        if method != "none":
            raise ValueError("a rotary method with fixed frequencies takes no extension")
        return super().extend(method)

    def extra_repr(self) -> str:
        return f"turning pairs={int((self.omega > 0).sum())} of {len(self.omega)}, layout={self.layout!r}"


class LayerwiseRotary(RotaryPosition):
    """Rotary in some layers, no position in the others: Llama 4's interleaved layout ("iRoPE").

    ``rope_layers``: the layers that turn their queries and keys (``llama4_rope_layers``). Two reading
    options change nothing in training at length <= chunk and <= floor_scale - 1, and can be switched on to
    read longer text (``reading``):

    * ``chunk``: the rotary layers attend only within chunks of this many positions (Llama 4's
      ``attention_chunk_size``); the layers without position see every earlier key;
    * ``temperature``: (floor_scale, attn_scale): the layers without position multiply their queries by
      ``llama4_query_scale``.
    """

    name = "irope"

    def __init__(self, d_head: int, n_layers: int, rope_layers, base: float = DEFAULT_BASE,
                 layout: str = "interleaved", chunk: int | None = None, temperature: tuple | None = None):
        super().__init__(d_head, base, layout)
        self.rope_layers = tuple(sorted(int(layer) for layer in rope_layers))
        if any(not 0 <= layer < n_layers for layer in self.rope_layers):
            raise ValueError(f"rotary layers must lie in 0..{n_layers - 1}, got {self.rope_layers}")
        self.requires = {"d_head": d_head, "n_layers": n_layers}
        self.reading(chunk, temperature)

    def reading(self, chunk: int | None = None, temperature: tuple | None = None) -> "LayerwiseRotary":
        """Set the reading options (None: off) and return the method."""
        if chunk is not None and chunk < 1:
            raise ValueError(f"the chunk must hold at least one position, got {chunk}")
        self.chunk, self.temperature = chunk, (tuple(temperature) if temperature is not None else None)
        return self

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        state = super().prepare(query_positions, key_positions, dtype)
        positions = torch.as_tensor(query_positions)
        if self.temperature is not None:
            state["query_scale"] = llama4_query_scale(positions, *self.temperature).to(dtype)[:, None]
        if self.chunk is not None:
            same = (positions[:, None] // self.chunk) == (torch.as_tensor(key_positions)[None, :] // self.chunk)
            state["chunk_mask"] = torch.zeros(same.shape, dtype=dtype).masked_fill(~same, float("-inf"))
        return state

    def turn(self, q, k, state, layer: int = 0):
        if layer in self.rope_layers:
            return super().turn(q, k, state, layer)
        if "query_scale" in state:
            q = q * state["query_scale"]
        return q, k

    def query_bias(self, q, state, layer, scale):
        return state.get("chunk_mask") if layer in self.rope_layers else None

    def extra_repr(self) -> str:
        return f"rope_layers={self.rope_layers}, chunk={self.chunk}, temperature={self.temperature}"


# ---------------------------------------------------------------------------------------------------
# The table of what current open models use


TABLE_COLUMNS = ("model", "base", "scaling", "rotated", "layers without position", "sliding-window layers")


def model_table(path: Path = MODELS_FILE) -> list[dict]:
    """Every entry of the models' table (``data/rotary_models.json``), each with its configuration fields,
    the address of the file or card they come from (``source``) and where the course read them (``read_in``).
    """
    data = json.loads(Path(path).read_text())
    entries = data["models"]
    for entry in entries:
        missing = [key for key in ("model", "source", "read_in", "config") if not entry.get(key)]
        if missing:
            raise ValueError(f"{entry.get('model', '?')}: the table entry lacks {missing}")
    return entries


def model_entry(name: str, path: Path = MODELS_FILE) -> dict:
    """One entry of the table by its ``model`` name."""
    entries = {entry["model"]: entry for entry in model_table(path)}
    if name not in entries:
        raise ValueError(f"no model {name!r} in the table; it has {sorted(entries)}")
    return entries[name]


def layer_types(config: dict) -> list[str]:
    """Each layer's kind: "rope", "nope" (Llama 4's layers without position), "sliding" or "global"
    (Gemma's), from the configuration's fields."""
    n = config["num_hidden_layers"]
    if "no_rope_layer_interval" in config:
        return ["rope" if turns_ else "nope" for turns_ in llama4_rope_layers(n, config["no_rope_layer_interval"])]
    if "sliding_window_pattern" in config:
        return ["global" if kind == "full_attention" else "sliding"
                for kind in gemma3_layer_types(n, config["sliding_window_pattern"])]
    return ["rope"] * n


def _scaling_text(settings: dict, config: dict) -> str:
    kind = settings["rope_type"]
    if kind == "default":
        return "none"
    if kind == "llama3":
        return (f"llama3: factor {settings['factor']:g}, turns {settings['low_freq_factor']:g} to "
                f"{settings['high_freq_factor']:g} over {settings['original_max_position_embeddings']:,}")
    if kind == "yarn":
        return (f"YaRN: factor {settings['factor']:g} over {settings['original_max_position_embeddings']:,}, "
                f"beta {settings.get('beta_fast', 32):g}/{settings.get('beta_slow', 1):g}")
    if kind == "longrope":
        n = len(settings["long_factor"])
        return (f"LongRoPE: {n} factors per list, long {min(settings['long_factor']):.2f} to "
                f"{max(settings['long_factor']):.1f}, from {config['original_max_position_embeddings']:,} "
                f"to {config['max_position_embeddings']:,}")
    if kind == "linear":
        return f"linear: factor {settings['factor']:g}"
    if kind == "proportional":
        return "none (p-RoPE)"
    return kind


def table_row(entry: dict) -> dict:
    """One row of the chapter's table, computed from the entry's configuration fields."""
    config = entry["config"]
    kinds = layer_types(config)
    head = head_dim_of(config)
    if "rope_parameters" in config or "rope_local_base_freq" in config:
        local, globl = rope_settings(config, "sliding_attention"), rope_settings(config, "full_attention")
        head = head_dim_of(config, "full_attention")
        base = f"{local['rope_theta']:,.0f} local, {globl['rope_theta']:,.0f} global"
        scaling = f"global: {_scaling_text(globl, config)}"
        fraction = globl.get("partial_rotary_factor", 1.0)
        rotated = (f"global: p-RoPE, {kept_pairs(head, fraction)} of {head // 2} pairs" if globl["rope_type"] ==
                   "proportional" else "all")
    else:
        settings = rope_settings(config)
        base = f"{settings['rope_theta']:,.0f}"
        scaling = _scaling_text(settings, config)
        fraction = settings.get("partial_rotary_factor", 1.0)
        rotated = "all" if fraction == 1 else f"{int(head * fraction)} of {head} per head"
    if "qk_rope_head_dim" in config:
        rotated = f"a separate {config['qk_rope_head_dim']} beside {config['qk_nope_head_dim']} (decoupled)"
    nope = kinds.count("nope")
    sliding = kinds.count("sliding")
    return {
        "model": entry["model"],
        "base": base,
        "scaling": scaling,
        "rotated": rotated,
        "layers without position": f"{nope} of {len(kinds)} (every {config['no_rope_layer_interval']}th)" if nope
        else "none",
        "sliding-window layers": f"{sliding} of {len(kinds)} (window {config['sliding_window']:,})" if sliding
        else "none",
    }


def rope_layer_frequencies(entry: dict, kind: str = "rope") -> np.ndarray:
    """The frequencies (per pair, 0 where a pair does not turn) that a layer of the given kind of a table
    entry uses at its full context, as a NumPy array: for the chapter's figures."""
    config = entry["config"]
    layer_type = {"sliding": "sliding_attention", "global": "full_attention"}.get(kind)
    if "rope_parameters" not in config and "rope_local_base_freq" not in config:
        layer_type = None
    omega, _ = rope_parameters(config, seq_len=config.get("max_position_embeddings"), layer_type=layer_type)
    return omega.numpy()
