"""Checks of exercise set ch09: rotary in today's models.

The students write NumPy. q1-q5 are functions checked on inputs drawn from the grader's seed against the
course's library (``posenc.lib.rotary_variants``): Llama 3's scaling, p-RoPE's frequencies, LongRoPE's
frequencies and its attention factor, Llama 4's query temperature. The mistakes are the ones a reader of a
model card makes: a ramp over wavelengths instead of turns, the bands the wrong way round, the slowest pairs
kept instead of the fastest, the kept frequencies spread again over the kept width (partial rotary's rule),
the factors multiplied, the long list one position early, the temperature without its floor or one place off.
q6 and q7 test understanding: which designs let latent attention absorb its key up-projection, and what the
table of today's models says (its options are computed from the table's configuration fields).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FunctionQuestion, Mistake, array_of, compare_number, describe_mismatch,
)
from posenc.lib import rotary_variants as rv

BASE = 10000.0


def _omega(d, base=BASE):
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def _array(values) -> np.ndarray:
    return np.asarray(values.numpy() if isinstance(values, torch.Tensor) else values, dtype=np.float64)


def _compare_frequencies(got, expected, args):
    if isinstance(got, list):
        got = np.asarray(got, dtype=np.float64)
    return describe_mismatch(got, np.asarray(expected), what="frequencies")


# ---------------------------------------------------------------------------------------------------
# q1: llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, original_length)


def llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, original_length):
    return _array(rv.llama3_frequencies(torch.as_tensor(np.asarray(omega, dtype=np.float64)), factor,
                                        low_freq_factor, high_freq_factor, original_length))


def _llama3_probes(seed):
    rng = np.random.default_rng([seed, 9001])
    fixed = [(_omega(128, 500_000.0), 8.0, 1.0, 4.0, 8192), (_omega(16, 10_000.0), 4.0, 1.0, 4.0, 64)]
    drawn = []
    for _ in range(4):
        d = int(rng.choice([32, 64, 128]))
        base = float(rng.choice([10_000.0, 500_000.0, 1e6]))
        low = float(rng.choice([0.5, 1.0, 2.0]))
        drawn.append((_omega(d, base), float(rng.choice([4.0, 8.0, 16.0, 32.0])), low,
                      low + float(rng.choice([1.0, 3.0, 7.0])), int(rng.choice([2048, 4096, 8192, 32768]))))
    return fixed + drawn


def _ramp_variant(weight):
    """A wrong answer that mixes omega / s and omega with ``weight(omega, s, low, high, L)``, the weight of the
    kept frequency."""
    def variant(omega, factor, low, high, length):
        omega = np.asarray(omega, dtype=np.float64)
        gamma = np.clip(weight(omega, factor, low, high, length), 0.0, 1.0)
        return (1 - gamma) * omega / factor + gamma * omega
    return variant


def _turns(omega, length):
    return length * omega / (2 * np.pi)


LLAMA3_MISTAKES = [
    Mistake("the ramp is linear in the wavelength: Llama 3's weight of the kept frequency is linear in the turns "
            "r = L / wavelength = L omega / 2 pi, (r - low) / (high - low), not in the wavelength itself",
            _ramp_variant(lambda w, s, low, high, L: (L / low - 2 * np.pi / w) / (L / low - L / high))),
    Mistake("the bands are the wrong way round: pairs that turn more than high_freq_factor times over L (short "
            "wavelengths, fast pairs) keep their frequency, and those that turn less than low_freq_factor times "
            "are divided by the factor",
            _ramp_variant(lambda w, s, low, high, L: 1 - (_turns(w, L) - low) / (high - low))),
    Mistake("the turns are counted in radians: a pair makes r = L omega / (2 pi) full turns over L, not L omega",
            _ramp_variant(lambda w, s, low, high, L: (L * w - low) / (high - low))),
    Mistake("every frequency was divided by the factor (linear scaling): Llama 3 keeps the fast pairs and only "
            "divides the pairs that turn less than low_freq_factor times over L",
            lambda omega, s, low, high, L: np.asarray(omega, dtype=np.float64) / s),
    Mistake("the two bands are right but the pairs between them are kept unchanged: between low_freq_factor and "
            "high_freq_factor turns the two frequencies mix, with the weight (r - low) / (high - low) on the kept one",
            _ramp_variant(lambda w, s, low, high, L: (_turns(w, L) >= low).astype(float))),
]


# ---------------------------------------------------------------------------------------------------
# q2: p_rope_frequencies(d_head, p, base)


def p_rope_frequencies(d_head, p, base=BASE):
    return _array(rv.p_rope_frequencies(int(d_head), float(p), float(base)))


def _p_rope_probes(seed):
    rng = np.random.default_rng([seed, 9002])
    fixed = [(8, 0.5, BASE), (96, 0.25, BASE), (52, 0.3, BASE), (16, 0.3, BASE), (16, 1.0, BASE), (16, 0.0, BASE)]
    drawn = [(int(rng.choice([16, 24, 36, 52, 64, 100])), float(rng.choice([0.15, 0.3, 0.45, 0.65, 0.75])),
              float(rng.choice([10_000.0, 1e6, 500.0]))) for _ in range(4)]
    return fixed + drawn


def _kept(d, p, rounding=math.floor):
    return int(rounding(p * d / 2))


def _p_variant(kept=_kept, respaced=False, stop_fastest=False):
    def variant(d, p, base=BASE):
        omega = _omega(d, base)
        n = kept(d, p)
        if respaced and n:
            omega = np.concatenate([_omega(2 * n, base), np.zeros(d // 2 - n)])
        keep = np.arange(d // 2) >= d // 2 - n if stop_fastest else np.arange(d // 2) < n
        return np.where(keep, omega, 0.0)
    return variant


P_ROPE_MISTAKES = [
    Mistake("the fastest pairs were stopped: p-RoPE keeps the fastest pairs (pair 0 first) turning and sets the "
            "slowest ones to frequency 0", _p_variant(stop_fastest=True)),
    Mistake("the kept frequencies were spread again over the kept width, base^(-2i / (p d)): that is partial "
            "rotary's rule; p-RoPE keeps the frequencies of the whole head, base^(-2i/d), for its fastest pairs",
            _p_variant(respaced=True)),
    Mistake("the number of kept pairs is rounded: p-RoPE keeps int(p * d / 2) pairs (rounded down, as "
            "Barbero et al.'s and Gemma's code count them)",
            _p_variant(kept=lambda d, p: _kept(d, p, round))),
    Mistake("the number of kept pairs is rounded up: p-RoPE keeps int(p * d / 2) pairs (rounded down)",
            _p_variant(kept=lambda d, p: _kept(d, p, math.ceil))),
    Mistake("the stopped pairs were left out: return one frequency for each of the d/2 pairs, 0 for a pair that "
            "does not turn",
            lambda d, p, base=BASE: _omega(d, base)[:_kept(d, p)]),
]


def _compare_p_rope(got, expected, args):
    values = array_of(got)
    if values is not None and values.shape != np.shape(expected) and values.ndim == 1:
        return f"return one frequency for each of the {args[0] // 2} pairs, got {values.size}"
    return _compare_frequencies(got, expected, args)


# ---------------------------------------------------------------------------------------------------
# q3: longrope_frequencies(d_head, base, short_factor, long_factor, original_length, seq_len)


def longrope_frequencies(d_head, base, short_factor, long_factor, original_length, seq_len):
    factors = rv.longrope_factors(seq_len, original_length, short_factor, long_factor)
    return _array(rv.longrope_frequencies(torch.from_numpy(_omega(int(d_head), float(base))), factors))


def _longrope_probes(seed):
    rng = np.random.default_rng([seed, 9003])
    probes = []
    for d, original, seq_len in [(8, 16, 16), (8, 16, 17), (12, 64, 10)] + \
            [(int(rng.choice([8, 16, 32])), int(rng.choice([256, 4096])), 0) for _ in range(3)]:
        short = np.round(rng.uniform(1.0, 3.0, d // 2), 3)
        long = np.round(np.sort(rng.uniform(1.0, 60.0, d // 2)), 3)
        if seq_len == 0:
            seq_len = int(rng.choice([original // 2, original, original + 1, 8 * original]))
        probes.append((d, float(rng.choice([BASE, 500.0])), short, long, original, seq_len))
    return probes


def _longrope_variant(multiply=False, switch=lambda n, L: n > L):
    def variant(d, base, short, long, original, seq_len):
        factors = np.asarray(long if switch(seq_len, original) else short, dtype=np.float64)
        return _omega(d, base) * factors if multiply else _omega(d, base) / factors
    return variant


LONGROPE_MISTAKES = [
    Mistake("the frequencies were multiplied by the factors: LongRoPE divides pair i's frequency by its factor, "
            "omega_i / lambda_i, so a factor above 1 slows the pair down", _longrope_variant(multiply=True)),
    Mistake("the long list is used one position too early: it applies when the sequence is longer than the "
            "original length (seq_len > original_length); a sequence of exactly that length uses the short list",
            _longrope_variant(switch=lambda n, L: n >= L)),
    Mistake("the long list was used whatever the length: short_factor applies up to the original length",
            _longrope_variant(switch=lambda n, L: True)),
    Mistake("the short list was used whatever the length: long_factor applies once the sequence is longer than "
            "the original length", _longrope_variant(switch=lambda n, L: False)),
]


def _describe_longrope(args):
    d, base, short, long, original, seq_len = args
    return (f"d_head={d}, base={base:g}, <{len(short)} short factors>, <{len(long)} long factors>, "
            f"original_length={original}, seq_len={seq_len}")


# ---------------------------------------------------------------------------------------------------
# q4: longrope_attention_factor(original_length, max_length)


def longrope_attention_factor(original_length, max_length):
    return rv.longrope_attention_factor(max_length / original_length, original_length)


def _factor_probes_drawn(seed):
    rng = np.random.default_rng([seed, 9005])
    fixed = [(4096, 131072), (4096, 4096), (8192, 65536)]
    drawn = []
    for _ in range(3):
        original = int(rng.choice([256, 2048, 4096, 32768]))
        drawn.append((original, original * int(rng.choice([2, 4, 16, 64]))))
    return fixed + drawn


FACTOR_MISTAKES = [
    Mistake("the square root is missing: the factor is sqrt(1 + ln s / ln L), s = max_length / original_length",
            lambda L, M: 1 + math.log(M / L) / math.log(L) if M > L else 1.0),
    Mistake("the logarithm is of max_length itself: s is the scale, max_length / original_length",
            lambda L, M: math.sqrt(1 + math.log(M) / math.log(L)) if M > L else 1.0),
    Mistake("the scale is upside down: s = max_length / original_length (32 for Phi-3), not original / max",
            lambda L, M: math.sqrt(1 + math.log(L / M) / math.log(L)) if M > L else 1.0),
]


def _compare_factor(got, expected, args):
    return compare_number(got, float(expected), what="attention factor")


# ---------------------------------------------------------------------------------------------------
# q5: llama4_query_scale(positions, floor_scale, attn_scale)


def llama4_query_scale(positions, floor_scale, attn_scale):
    return _array(rv.llama4_query_scale(np.asarray(positions), floor_scale, attn_scale))


def _scale_probes(seed):
    rng = np.random.default_rng([seed, 9004])
    fixed = [(np.array([0, 8190, 8191, 16382, 16383, 131071]), 8192, 0.1), (np.arange(20), 4, 0.1)]
    drawn = [(np.sort(rng.integers(0, 200, size=12)), int(rng.choice([8, 16, 32])), float(rng.choice([0.1, 0.2, 0.5])))
             for _ in range(3)]
    return fixed + drawn


def _scale_variant(rule):
    def variant(positions, floor_scale, attn_scale):
        with np.errstate(divide="ignore"):          # ln 0 = -inf is what that wrong answer gives
            return rule(np.asarray(positions, dtype=np.float64), float(floor_scale), float(attn_scale))
    return variant


SCALE_MISTAKES = [
    Mistake("one position off: the scale uses floor((pos + 1) / floor_scale), so it first grows at pos = "
            "floor_scale - 1, not at pos = floor_scale",
            _scale_variant(lambda p, f, a: 1 + a * np.log1p(np.floor(p / f)))),
    Mistake("the floor is missing: Llama 4 grows the scale in steps, 1 + attn_scale ln(1 + floor((pos + 1) / "
            "floor_scale)), so that short contexts keep exactly 1",
            _scale_variant(lambda p, f, a: 1 + a * np.log1p((p + 1) / f))),
    Mistake("the 1 inside the logarithm is missing: ln(1 + floor(...)), so the scale is 1 (not minus infinity) "
            "before the first step",
            _scale_variant(lambda p, f, a: 1 + a * np.log(np.floor((p + 1) / f)))),
    Mistake("the leading 1 is missing: the queries are multiplied by 1 + attn_scale ln(...), which leaves short "
            "contexts unchanged",
            _scale_variant(lambda p, f, a: a * np.log1p(np.floor((p + 1) / f)))),
]


def _compare_scale(got, expected, args):
    if isinstance(got, list):
        got = np.asarray(got, dtype=np.float64)
    return describe_mismatch(got, np.asarray(expected), what="scale")


# ---------------------------------------------------------------------------------------------------
# q6: which designs keep latent attention's absorption


ABSORB_OPTIONS = {
    "a": (True, "with no position anywhere the logit is q^T W_UK c_j = (W_UK^T q)^T c_j: W_UK moves into the query "
          "and the cache holds c_j only (case 1 of the chapter's proposition)."),
    "b": (False, "a key turned after its up-projection, R_j W_UK c_j, puts R_(j-i) between the query and the "
          "latent; no vector fixed per query gives the logit at every key position (case 2)."),
    "c": (True, "the decoupled part adds q^R . k^R_j with one turned key per token shared by the heads; the other "
          "part absorbs as without position (case 3)."),
    "d": (True, "an ALiBi-style bias is added to the logit after q . k; nothing stands between the query and the "
          "latent, so the absorption is untouched and the cache is still the latent."),
    "e": (True, "an encoding added to the input x changes c_j = W_DKV x_j itself; the logit is still q^T W_UK c_j "
          "and absorbs the same way (the position is then in the latent, as in chapters 1 to 4)."),
    "f": (False, "a learned matrix M_(j-i) per offset, M_(j-i) W_UK c_j, is rotary's problem in general: a matrix that "
          "depends on the offset sits between the query and the latent, so W_UK cannot move into the query once "
          "for every key."),
}


ABSORB_IDEAS = {
    "a": "what sits between the query and the latent when nothing carries position",
    "b": "what sits between the query and the latent when each head's key is turned after its up-projection",
    "c": "what the decoupled rotary part adds to the logit, and what each token must cache for it",
    "d": "where a bias on the logits enters: before or after the product of query and key",
    "e": "where a position added to the input ends up: in the latent itself",
    "f": "what sits between the query and the latent with a learned matrix per offset",
}


# ---------------------------------------------------------------------------------------------------
# q7: reading the table of today's models


def table_markdown() -> str:
    """The table q6 shows: the chapter's table of today's models, computed from the configuration fields."""
    columns = rv.TABLE_COLUMNS
    lines = ["| " + " | ".join(columns) + " |", "| --- " * len(columns) + "|"]
    lines += ["| " + " | ".join(rv.table_row(entry)[column] for column in columns) + " |" for entry in rv.model_table()]
    return "\n".join(lines)


def _table_options() -> dict:
    llama = rv.model_entry("Llama 3.1 8B")["config"]
    omega, _ = rv.rope_parameters(llama)
    plain = rv.rotary_frequencies(128, llama["rope_theta"])
    fastest_kept = bool(omega[0] == plain[0])
    gemma = rv.model_entry("Gemma 3 4B")["config"]
    same_base = rv.rope_settings(gemma, "sliding_attention")["rope_theta"] == rv.rope_settings(gemma, "full_attention")["rope_theta"]
    qwen = rv.model_entry("Qwen2.5 7B Instruct")
    neox = rv.partial_frequencies(96, rv.model_entry("GPT-NeoX-20B")["config"]["partial_rotary_factor"])
    slow = int((rv.turns(neox[neox > 0], 2048) < 1).sum())
    scout = rv.model_entry("Llama 4 Scout 17B-16E")["config"]
    nope = rv.llama4_rope_layers(scout["num_hidden_layers"], scout["no_rope_layer_interval"]).count(False)
    return {
        "a": (fastest_kept, "Llama 3.1's fastest pairs make far more than four turns over 8192 positions, so its "
              "scaling keeps their frequency; only the pairs that turn less than once are divided by 8."),
        "b": (same_base, "Gemma 3's local layers turn at base 10 000 and its global layers at base 1,000,000 (with "
              "a linear scaling of 8): two bases in one model."),
        "c": ("rope_scaling" not in qwen.get("not_in_the_shipped_file", []),
              "the YaRN fields come from Qwen2.5's model card, which asks you to add them to config.json for inputs "
              "longer than 32,768 tokens; the file as shipped has none, so the downloaded model reads plain rotary."),
        "d": (slow == 0, f"{slow} of GPT-NeoX-20B's 12 turning pairs make less than one turn over its 2048 positions: "
              "partial rotary keeps the slowest frequencies of the spread."),
        "e": (nope > 0, f"Llama 4 Scout has {nope} layers without any position (every fourth), which see every "
              "earlier key; its rotary layers attend within chunks of 8192."),
    }


TABLE_OPTIONS = _table_options()
TABLE_IDEAS = {
    "a": "how many turns Llama 3.1's fastest pairs make over 8192 positions, against high_freq_factor",
    "b": "the base of Gemma 3's local layers and of its global layers",
    "c": "whether the YaRN fields are in the file Qwen2.5 ships or in its model card",
    "d": "how many turns GPT-NeoX-20B's slowest turning pairs make over its 2048 positions",
    "e": "what Llama 4 Scout's every fourth layer does with position",
}


EXERCISES = ExerciseSet("ch09", "Rotary in today's models", [
    FunctionQuestion(qid="q1", title="Llama 3's scaling", name="llama3_frequencies", points=2,
                     probes=_llama3_probes, reference=llama3_frequencies, mistakes=LLAMA3_MISTAKES,
                     compare=_compare_frequencies,
                     describe_args=lambda a: (f"<{len(a[0])} frequencies>, factor={a[1]:g}, low_freq_factor={a[2]:g}, "
                                              f"high_freq_factor={a[3]:g}, original_length={a[4]}")),
    FunctionQuestion(qid="q2", title="p-RoPE's frequencies", name="p_rope_frequencies", points=2,
                     probes=_p_rope_probes, reference=p_rope_frequencies, mistakes=P_ROPE_MISTAKES,
                     compare=_compare_p_rope),
    FunctionQuestion(qid="q3", title="LongRoPE's frequencies", name="longrope_frequencies", points=2,
                     probes=_longrope_probes, reference=longrope_frequencies, mistakes=LONGROPE_MISTAKES,
                     compare=_compare_frequencies, describe_args=_describe_longrope),
    FunctionQuestion(qid="q4", title="LongRoPE's attention factor", name="longrope_attention_factor", points=1,
                     probes=_factor_probes_drawn, reference=longrope_attention_factor, mistakes=FACTOR_MISTAKES,
                     compare=_compare_factor,
                     describe_args=lambda a: f"original_length={a[0]}, max_length={a[1]}"),
    FunctionQuestion(qid="q5", title="Llama 4's temperature", name="llama4_query_scale", points=1,
                     probes=_scale_probes, reference=llama4_query_scale, mistakes=SCALE_MISTAKES,
                     compare=_compare_scale,
                     describe_args=lambda a: f"positions={a[0].tolist()}, floor_scale={a[1]}, attn_scale={a[2]:g}"),
    ChoiceQuestion.from_statements(ABSORB_OPTIONS, ("absorbable", "not absorbable"), qid="q6",
                                   title="What latent attention can absorb", name="absorbing_designs", points=2,
                                   ideas=ABSORB_IDEAS),
    ChoiceQuestion.from_statements(TABLE_OPTIONS, qid="q7", title="Reading the table of today's models",
                                   name="table_statements", points=2, ideas=TABLE_IDEAS),
])
