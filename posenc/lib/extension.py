"""Context extension for rotary models: reading sequences longer than the training length L (chapter 7).

A rotary model trained at length L has only seen angles pos * omega_i with pos < L. Each method below
changes how positions become angles so that a longer window L' = s L (s the scale factor) maps into
familiar territory; notation as in ``posenc.lib.rotary`` (pair i of a rotated width d, omega_i = base^(-2i/d)).

* Position interpolation (Chen et al. 2023): positions times L / L' = 1 / s, so 0 .. L' - 1 lands in
  [0, L); every frequency is slowed down by s.
* "NTK-aware" scaling (bloc97 2023, as formalised by Peng et al. 2023, Definition 1): a larger base
  b' = b s^(d / (d - 2)), which leaves the fastest pair (omega_0 = 1) alone and slows the slowest one by
  exactly s.
* YaRN (Peng et al. 2023): "NTK-by-parts" interpolation, which slows only the pairs whose wavelength is long
  compared with L, plus a temperature on the logits. Its ramp comes in two forms: the paper's equation
  (``yarn_ramp``, linear in the number of turns; the default) and the authors' code, which Hugging Face
  follows (``yarn_code_ramp``, linear in the pair index between rounded ends); ``ramp="code"`` picks the
  second.

``extension_settings`` turns any of them into the three knobs of the course's rotary method
(``posenc.lib.attention.RotaryPosition``): a position scale, a frequency vector, a logit scale.
"""

from __future__ import annotations

import math
import numbers

import torch

from posenc.lib.encoding import DEFAULT_BASE
from posenc.lib.rotary import rotary_frequencies

METHODS = ("none", "pi", "ntk", "yarn")
RAMPS = ("paper", "code")


def _scale(scale) -> float:
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"the scale factor s must be a finite number > 0, got {scale!r}")
    return float(scale)


def interpolation_scale(train_length: int, target_length: int) -> float:
    """Position interpolation's factor L / L' (Chen et al. 2023, eq. 4: f'(x, m) = f(x, m L / L'))."""
    if train_length <= 0 or target_length <= 0:
        raise ValueError(f"lengths must be positive, got L={train_length}, L'={target_length}")
    return train_length / target_length


def interpolated_positions(positions, train_length: int, target_length: int) -> torch.Tensor:
    """Positions squeezed from [0, L') into [0, L): pos * L / L' (float64)."""
    return torch.as_tensor(positions, dtype=torch.float64) * interpolation_scale(train_length, target_length)


def ntk_base(base: float, scale: float, d: int) -> float:
    """The "NTK-aware" base b' = b * s^(d / (d - 2)) for rotated width d (Peng et al. 2023, Definition 1).

    Chosen so that the slowest pair, i = d/2 - 1, turns exactly as under position interpolation:
    b'^(-(d - 2)/d) = b^(-(d - 2)/d) / s, while the fastest, omega_0 = 1, is unchanged.
    """
    if d < 4 or d % 2:
        raise ValueError(f"the rotated width d must be even and >= 4, got {d}")
    return float(base) * _scale(scale) ** (d / (d - 2))


def yarn_ramp(r, alpha: float = 1.0, beta: float = 32.0) -> torch.Tensor:
    """YaRN's ramp gamma(r) (Peng et al. 2023, eq. 18): 0 for r < alpha, 1 for r > beta, linear between.

    r is the number of turns a pair makes over the training length; alpha = 1, beta = 32 are the paper's
    values for the Llama family.
    """
    if not alpha < beta:
        raise ValueError(f"the ramp needs alpha < beta, got alpha={alpha}, beta={beta}")
    r = torch.as_tensor(r, dtype=torch.float64)
    return ((r - alpha) / (beta - alpha)).clamp(0.0, 1.0)


def yarn_code_ramp(d: int, train_length: int, base: float = DEFAULT_BASE, alpha: float = 1.0,
                   beta: float = 32.0) -> torch.Tensor:
    """YaRN's ramp as the authors' reference code and Hugging Face's ``_compute_yarn_parameters`` compute it:
    gamma_i for each pair i of a rotated width d.

    Solving r_i = L omega_i / (2 pi) = r for i gives the pair that makes r turns over L,
    i(r) = d ln(L / (2 pi r)) / (2 ln b). The code rounds outwards, low = max(floor(i(beta)), 0) and
    high = ceil(i(alpha)) (at most d - 1), and ramps linearly in the pair index between them:
    gamma_i = 1 - clip((i - low) / (high - low), 0, 1) (high is nudged by 0.001 when the two are equal).
    Pairs up to ``low`` keep their frequency and pairs from ``high`` on are interpolated, as in the paper;
    between them this is linear in i where the paper's ``yarn_ramp`` is linear in r, which falls
    exponentially with i. And since ``low`` is at least 0, the code keeps the fastest pair whatever L.
    """
    if d < 2 or d % 2:
        raise ValueError(f"the rotated width d must be even and >= 2, got {d}")
    if not alpha < beta:
        raise ValueError(f"the ramp needs alpha < beta, got alpha={alpha}, beta={beta}")
    if train_length <= 0:
        raise ValueError(f"the training length L must be positive, got {train_length}")

    def pair_of(turns: float) -> float:
        return d * math.log(train_length / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(pair_of(beta)), 0), min(math.ceil(pair_of(alpha)), d - 1)
    if low == high:
        high += 0.001
    pairs = torch.arange(d // 2, dtype=torch.float64)
    return 1 - ((pairs - low) / (high - low)).clamp(0.0, 1.0)


def yarn_frequencies(d: int, scale: float, train_length: int, base: float = DEFAULT_BASE,
                     alpha: float = 1.0, beta: float = 32.0, ramp: str = "paper") -> torch.Tensor:
    """YaRN's "NTK-by-parts" frequencies h(omega_i) = (1 - gamma(r_i)) omega_i / s + gamma(r_i) omega_i.

    Peng et al. (2023), eqs. 17-20: the wavelength of pair i is lambda_i = 2 pi / omega_i and
    r_i = L / lambda_i the number of turns it makes over the training length L. Pairs that turn less than
    alpha times (gamma = 0) are interpolated like position interpolation (omega_i / s); pairs that turn more
    than beta times (gamma = 1) keep omega_i; in between the two mix linearly in r. Positions are not scaled.

    ``ramp="code"`` takes gamma from ``yarn_code_ramp`` instead, as the YaRN repository's and Hugging Face's
    code do: linear in the pair index i between rounded ends. For Llama 2 (d = 128, L = 4096) the two keep
    and interpolate the same pairs and differ by up to 0.37 in gamma between them; for a small head trained
    on a short L they can differ in which pairs are kept at all.
    """
    if ramp not in RAMPS:
        raise ValueError(f"ramp must be one of {RAMPS}, got {ramp!r}")
    omega = rotary_frequencies(d, base)
    if ramp == "code":
        gamma = yarn_code_ramp(d, train_length, base, alpha, beta)
    else:
        gamma = yarn_ramp(train_length * omega / (2 * math.pi), alpha, beta)
    return (1 - gamma) * omega / _scale(scale) + gamma * omega


def yarn_attention_factor(scale: float) -> float:
    """YaRN's factor sqrt(1/t) = 0.1 ln(s) + 1 on each of q and k (Peng et al. 2023, eq. 22); 1 for s <= 1.

    Scaling q and k both by it multiplies every logit by its square, 1/t (``yarn_logit_scale``).
    """
    scale = _scale(scale)
    return 0.1 * math.log(scale) + 1.0 if scale > 1 else 1.0


def yarn_logit_scale(scale: float) -> float:
    """The factor 1/t = (0.1 ln(s) + 1)^2 on the logits q.k / sqrt(d_head) (YaRN's temperature)."""
    return yarn_attention_factor(scale) ** 2


def extension_settings(method: str, scale: float = 1.0, d: int = 2, base: float = DEFAULT_BASE,
                       train_length: int | None = None, alpha: float = 1.0, beta: float = 32.0,
                       ramp: str = "paper") -> dict:
    """The knobs of a rotary method for one extension: ``position_scale``, ``omega``, ``logit_scale``.

    method: "none" (plain RoPE), "pi" (positions times 1 / s), "ntk" (the base b s^(d/(d-2))) or "yarn"
    (NTK-by-parts frequencies for training length ``train_length`` and the temperature; ``ramp`` "paper" or
    "code", see ``yarn_frequencies``). d is the rotated width of a head and ``base`` the base the model was
    trained with.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    scale = _scale(scale)
    settings = {"position_scale": 1.0, "omega": rotary_frequencies(d, base), "logit_scale": 1.0}
    if method == "pi":
        settings["position_scale"] = 1.0 / scale
    elif method == "ntk":
        settings["omega"] = rotary_frequencies(d, ntk_base(base, scale, d))
    elif method == "yarn":
        if train_length is None:
            raise ValueError("YaRN needs the training length L (train_length)")
        settings["omega"] = yarn_frequencies(d, scale, train_length, base, alpha, beta, ramp)
        settings["logit_scale"] = yarn_logit_scale(scale)
    return settings
