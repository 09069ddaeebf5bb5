"""Checks of exercise set ch07: longer than trained (context extension of rotary models, reading curves).

q1-q3 are functions checked on inputs drawn from the grader's seed (position interpolation, the NTK-aware
base, YaRN's frequencies and temperature); q4 and q5 test understanding (which statements an
accuracy-against-position curve supports, which method to bet on for a new task), with feedback for each
option; q6 is a find-the-bug whose check says that the bug is still there without saying where.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from posenc.exercises.framework import (
    TAMPERED, ChoiceQuestion, ExerciseSet, FindTheBugQuestion, FunctionQuestion, Mistake, Outcome, array_of,
    as_number, compare_number, describe_mismatch, failure, kind_of, matches,
)
from posenc.experiments.ch07 import far_bin, seed_spread
from posenc.experiments.results import RESULTS_DIR, load_results
from posenc.lib.extension import interpolated_positions, ntk_base, yarn_code_ramp, yarn_frequencies, yarn_logit_scale
from posenc.lib.rotary import rotary_frequencies

# ---------------------------------------------------------------------------------------------------
# q1: position interpolation's positions


def _pi_probes(seed):
    rng = np.random.default_rng([seed, 71])
    # Ratios L'/L that are not whole numbers (6000 / 4096, and one drawn per seed) catch an integer factor.
    # Positions come in any order (the drawn ones unsorted): an answer that sorts them fails.
    probes = [(np.arange(8), 4, 8), (np.array([15, 0, 31, 5, 16]), 16, 32), (np.arange(0, 2048, 128), 512, 2048),
              (np.array([7, 3]), 10, 10), (np.array([0, 1, 2048, 4095, 4096, 5999]), 4096, 6000)]
    for _ in range(3):
        train = int(rng.choice([16, 100, 512, 4096]))
        target = train * int(rng.integers(2, 9))
        probes.append((_unsorted(rng, 0, target, int(rng.integers(3, 12))), train, target))
    train = int(rng.choice([100, 512, 4096]))
    target = train * int(rng.integers(1, 8)) + int(rng.integers(1, train))      # never a multiple of train
    probes.append((_unsorted(rng, 1, target, 6), train, target))
    return probes


def _unsorted(rng, low, high, size):
    """``size`` distinct positions in [low, high), in an order that is not sorted."""
    positions = rng.choice(np.arange(low, high), size=size, replace=False)
    return positions if not np.all(np.diff(positions) > 0) else positions[::-1].copy()


PI_MISTAKES = [
    Mistake("the factor is upside down: position interpolation multiplies by L/L' (less than 1), so that the "
            "positions 0 .. L'-1 land in [0, L); you multiplied by L'/L",
            lambda p, L, Lp: np.asarray(p, dtype=np.float64) * Lp / L),
    Mistake("the scaled positions were rounded down to integers: position interpolation keeps the fractions "
            "(pos * L / L' lies between the trained integer positions, that is the point)",
            lambda p, L, Lp: np.floor(np.asarray(p, dtype=np.float64) * L / Lp)),
    Mistake("the scaled positions were rounded to integers: keep the fractions pos * L / L'",
            lambda p, L, Lp: np.round(np.asarray(p, dtype=np.float64) * L / Lp)),
    Mistake("only the positions from L on were scaled; position interpolation scales every position by L/L', "
            "so that neighbouring positions stay evenly spaced",
            lambda p, L, Lp: np.where(np.asarray(p) < L, np.asarray(p, dtype=np.float64),
                                      np.asarray(p, dtype=np.float64) * L / Lp)),
    Mistake("the factor was rounded to a whole number (target_length // train_length): L'/L is a ratio such as "
            f"6000 / 4096 = {6000 / 4096:.2f}, and position interpolation multiplies by L / L' exactly",
            lambda p, L, Lp: np.asarray(p, dtype=np.float64) / (Lp // L)),
    Mistake("the positions were divided by L' only (normalised to [0, 1)); position interpolation maps them into "
            "the trained range [0, L): multiply by L / L'",
            lambda p, L, Lp: np.asarray(p, dtype=np.float64) / Lp),
]


def _interpolated_positions(positions, train_length, target_length):
    """The reference for q1, under the student's parameter names (the messages name them)."""
    return interpolated_positions(positions, train_length, target_length).numpy()


def _compare_positions(got, expected, args):
    problem = describe_mismatch(got, expected, what="array of positions")
    if problem is None and not np.issubdtype(array_of(got).dtype, np.floating):
        return f"the positions have dtype {array_of(got).dtype}; they are fractions, return floats"
    return problem


# ---------------------------------------------------------------------------------------------------
# q2: the NTK-aware base


def _ntk_probes(seed):
    rng = np.random.default_rng([seed, 72])
    probes = [(10000.0, 2.0, 128), (10000.0, 4.0, 8), (500000.0, 8.0, 64), (10000.0, 1.0, 16)]
    for _ in range(3):
        probes.append((float(rng.choice([10.0, 100.0, 10000.0, 1e6])), float(rng.integers(2, 33)),
                       int(rng.choice([4, 8, 16, 32, 64, 128]))))
    return probes


NTK_MISTAKES = [
    Mistake("the base was multiplied by s: that slows the slowest pair by less than s; the NTK-aware base is "
            "b * s^(d/(d-2)), the exponent making the slowest pair (i = d/2 - 1) turn exactly s times slower",
            lambda b, s, d: b * s),
    Mistake("the exponent is upside down: b * s^(d/(d-2)), not s^((d-2)/d); check that the slowest pair, "
            "omega = b'^(-(d-2)/d), comes out exactly s times slower than with b",
            lambda b, s, d: b * s ** ((d - 2) / d)),
    Mistake("the base was divided: a smaller base speeds every pair up; the NTK-aware base is larger, "
            "b * s^(d/(d-2))", lambda b, s, d: b / s ** (d / (d - 2))),
    Mistake("the base was raised to a power: the NTK-aware base is b times s^(d/(d-2)), not b^(s...)",
            lambda b, s, d: b ** (s ** (d / (d - 2)))),
]


# ---------------------------------------------------------------------------------------------------
# q3: YaRN's frequencies (NTK-by-parts) and its temperature


def yarn_scaling(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0):
    return (yarn_frequencies(d, scale, train_length, base, alpha, beta).numpy(), yarn_logit_scale(scale))


def _yarn_probes(seed):
    rng = np.random.default_rng([seed, 73])
    probes = [(128, 16.0, 4096), (128, 8.0, 2048), (64, 4.0, 512, 500000.0), (16, 2.0, 16),
              (32, 1.0, 1024), (128, 32.0, 4096, 10000.0, 2.0, 16.0)]
    for _ in range(2):
        probes.append((int(rng.choice([32, 64, 128])), float(rng.integers(2, 40)), int(rng.choice([1024, 4096, 8192]))))
    return probes


def _pair_index_ramp(d, train_length, base, alpha, beta):
    """1 - gamma, linear in the pair index i between the pairs where r = beta and r = alpha, unrounded (YaRN's
    reference code rounds them: ``posenc.lib.extension.yarn_code_ramp``)."""
    def pair_of(turns):
        return d * math.log(train_length / (turns * 2 * math.pi)) / (2 * math.log(base))
    low, high = pair_of(beta), pair_of(alpha)
    return np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)


def _yarn_variant(turns="right", mix="right", speed="slow", temperature="right", ramp="turns"):
    """YaRN with one mistake in one part (or none)."""
    def variant(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0):
        omega = rotary_frequencies(d, base).numpy()
        r = {"right": train_length * omega / (2 * np.pi),
             "wavelength": 2 * np.pi / (omega * train_length),      # lambda / L instead of L / lambda
             "no 2 pi": train_length * omega}[turns]
        gamma = np.clip((r - alpha) / (beta - alpha), 0, 1)
        if ramp == "pair index":      # 1 - (ramp in the pair index): the fast pairs (small i) keep omega
            gamma = 1 - _pair_index_ramp(d, train_length, base, alpha, beta)
        elif ramp == "pair index, rounded":
            gamma = yarn_code_ramp(d, train_length, base, alpha, beta).numpy()
        moved = omega / scale if speed == "slow" else omega * scale
        if mix == "reversed":
            gamma = 1 - gamma
        out = (1 - gamma) * moved + gamma * omega
        factor = 0.1 * math.log(scale) + 1 if scale > 1 else 1.0
        logit = {"right": factor ** 2, "not squared": factor,
                 "log10": (0.1 * math.log10(scale) + 1) ** 2 if scale > 1 else 1.0,
                 "log2": (0.1 * math.log2(scale) + 1) ** 2 if scale > 1 else 1.0,
                 "sqrt": math.sqrt(factor),
                 "inverted": 1 / factor ** 2}[temperature]
        return out, logit
    return variant


YARN_MISTAKES = [
    Mistake("the ramp is the wrong way round: pairs that turn many times over L (r > beta) must keep their "
            "frequency, and pairs that turn less than alpha times must be interpolated (omega / s)",
            _yarn_variant(mix="reversed")),
    Mistake("r is the number of turns a pair makes over the training length, L / lambda_i = L omega_i / (2 pi); "
            "you used lambda_i / L", _yarn_variant(turns="wavelength")),
    Mistake("a turn is 2 pi radians: r = L omega_i / (2 pi); you left out the 2 pi", _yarn_variant(turns="no 2 pi")),
    Mistake("interpolation slows a pair down: omega_i / s, not omega_i * s", _yarn_variant(speed="fast")),
    Mistake("0.1 ln(s) + 1 is the factor on each of q and k (sqrt(1/t)); the logits q.k are multiplied by its "
            "square", _yarn_variant(temperature="not squared")),
    Mistake("the temperature uses the natural logarithm: (0.1 ln(s) + 1)^2", _yarn_variant(temperature="log10")),
    Mistake("the temperature uses the natural logarithm, not log2: (0.1 ln(s) + 1)^2",
            _yarn_variant(temperature="log2")),
    Mistake("0.1 ln(s) + 1 is sqrt(1/t), the factor on each of q and k; the logits are multiplied by its square "
            "(0.1 ln(s) + 1)^2, not by its square root", _yarn_variant(temperature="sqrt")),
    Mistake("the ramp is a function of r, the turns a pair makes over L, as the question defines it: "
            "gamma = clip((r - alpha) / (beta - alpha), 0, 1); a ramp linear in the pair index between the pairs "
            "where r = beta and r = alpha (as in YaRN's reference code) gives other frequencies in between",
            _yarn_variant(ramp="pair index")),
    Mistake("the ramp is a function of r, the turns a pair makes over L, as the question defines it: "
            "gamma = clip((r - alpha) / (beta - alpha), 0, 1); a ramp linear in the pair index between the pairs "
            "where r = beta and r = alpha (as in YaRN's reference code) gives other frequencies in between",
            _yarn_variant(ramp="pair index, rounded")),
    Mistake("the logit factor 1/t = (0.1 ln(s) + 1)^2 is larger than 1 (it sharpens the softmax); you divided "
            "by it", _yarn_variant(temperature="inverted")),
]


def _compare_yarn(got, expected, args):
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return "return a pair (omega, logit_scale): the frequencies as a numpy array and the logit factor as a number"
    omega, logit = got
    return (describe_mismatch(omega, expected[0], what="frequency array")
            or compare_number(logit, expected[1], what="logit factor"))


@dataclass
class YarnQuestion(FunctionQuestion):
    """A FunctionQuestion whose answers are pairs (array, number), so mistakes are matched pair by pair."""

    def judge(self, outcomes, seed=0):
        probes = self.probes(seed)
        if len(outcomes) != len(probes) or not all(isinstance(o, Outcome) for o in outcomes):
            return False, TAMPERED
        for args, outcome in zip(probes, outcomes):
            call = f"{self.name}({self.describe_args(args)})"
            if not outcome.ok:
                return False, f"{call} {failure(outcome)}"
            problem = self.compare(outcome.value, self.reference(*args), args)
            if problem:
                for mistake in self.mistakes:
                    if all(o.ok and matches(o.value, mistake.variant(*a)) for a, o in zip(probes, outcomes)):
                        return False, f"{mistake.message} (seen in {call})"
                return False, f"{call}: {problem}"
        return True, "correct"


# ---------------------------------------------------------------------------------------------------
# q4 and q5: statements with feedback for each option


@functools.cache
def benchmark_results():
    """(configuration, records) of the chapter's benchmark as `make experiments` saved it
    (results/ch07.json, which the course package carries)."""
    config, runs, _ = load_results(RESULTS_DIR / "ch07.json")
    return config, runs


def _spread(kind: str) -> dict[str, tuple[float, float, float]]:
    config, runs = benchmark_results()
    return seed_spread(runs, config, kind)


# q4 reads rotary on FirstToken; every number it shows or quotes comes from the results file.
CURVE_KIND = "first/rope"


def curve_table() -> str:
    """The table q4 shows: mean (lowest-highest seed) accuracy of CURVE_KIND in each band of positions."""
    config, _ = benchmark_results()
    spread = _spread(CURVE_KIND)
    heads = [f"{start}..{stop - 1}" for start, stop in config.bins().values()]
    cells = [f"{mean:.2f} ({low:.2f}-{high:.2f})" for mean, low, high in spread.values()]
    return "\n".join(["| positions | " + " | ".join(heads) + " |", "| --- " * (len(heads) + 1) + "|",
                      "| accuracy | " + " | ".join(cells) + " |"])


def _curve_options() -> dict:
    config = benchmark_results()[0]
    far = far_bin(config)
    far_high = _spread(CURVE_KIND)[far][2]
    within = far_high <= 0.2
    t5_far, rope_far = _spread("first/t5")[far][0], _spread(CURVE_KIND)[far][0]
    return {
        "a": (within, f"Read the band: the highest seed reaches {far_high:.2f} on positions 32..63, "
                      + ("so every seed is at or below one fifth there." if within else "above one fifth.")),
        "b": (False, "The curve comes from one synthetic task; a language model's loss depends on different "
                     "things (most of the answer is in recent tokens), as the two papers of the chapter show."),
        "c": (True, "With a causal mask the prediction at position 40 reads tokens 0..40 only, so it is the "
                    "prediction on the 41-token prefix: one long test sequence measures every shorter length."),
        "d": (False, "A curve shows what one trained model did, not what the method can represent: the chapter "
                     "repairs the same rotary models without any training, by position interpolation."),
        "e": (False, "This table shows rotary alone, and a comparison needs the other method measured on the same "
                     "task, budget and seeds. The chapter's benchmark has that row, and there T5 reads positions "
                     f"32..63 at {t5_far:.2f} against rotary's {rope_far:.2f}: the statement holds on the "
                     "benchmark, but this measurement cannot tell you so."),
    }


# Where each statement is decided: the table or a section of chapter 7, never the statement's crux.
CURVE_IDEAS = {
    "a": "the table above, with its brackets (lowest and highest seed)",
    "b": 'chapter 7, "Which direction is reproduced, and why the papers differ"',
    "c": 'chapter 7, "The benchmark"',
    "d": 'chapter 7, "Stretching a rotary model\'s context"',
    "e": 'the table above, next to chapter 7\'s "Past the training length"',
}


# q5: the options, and what the benchmark measured for each on its task LocalMax, the closest to
# the new task's "the last two tokens". The answer is the option whose accuracy on positions 2L..4L was
# highest; tests/test_checks_ch07.py checks that the measured pattern still is the one the reasons describe.
BET_METHODS = {"a": "learned", "b": "sinusoidal", "c": "alibi", "d": "rope", "e": "none"}


def bet_accuracies() -> dict[str, dict[str, float]]:
    """Option letter -> bin name -> mean accuracy over seeds of that method on the benchmark's LocalMax."""
    return {letter: {name: mean for name, (mean, _, _) in _spread(f"local/{method}").items()}
            for letter, method in BET_METHODS.items()}


def _bet_options() -> dict:
    config = benchmark_results()[0]
    inside, middle, far = config.bins()
    L = config.train_length
    measured = bet_accuracies()
    best = max(measured, key=lambda letter: measured[letter][far])
    a, b, c, d, e = (measured[letter] for letter in "abcde")
    # the numbers are the benchmark's, on its nearest task to LocalSum: each sentence names it (one is shown alone)
    local = f"on the benchmark's LocalMax task (the largest of the last {config.window} tokens)"
    reasons = {
        "a": "a learned table has rows for positions >= L that never received a gradient: past L the model "
             f"reads random vectors (chapter 4). {local[0].upper()}{local[1:]} the learned runs fell from {a[inside]:.2f} "
             f"inside L to {a[far]:.2f} on positions 2L..4L.",
        "b": f"the sinusoidal rows past L were never seen in training; {local} the sinusoidal runs "
             f"fell from {b[inside]:.2f} inside L to {b[middle]:.2f} on L..2L and {b[far]:.2f} on 2L..4L, as in "
             "chapter 4.",
        "c": "the rule needs only the last two tokens, and ALiBi's penalty -m|j - i| grows with the distance at "
             "any length, so its steep heads keep looking at the nearest keys (its shallowest heads still give "
             "far keys real weight: the penalty does not make them irrelevant), with nothing position-specific "
             f"that can go out of range; {local} its accuracy stayed flat: "
             f"{c[inside]:.2f} inside L, {c[far]:.2f} on 2L..4L.",
        "d": f"rotary logits depend only on offsets, but trained on {L} tokens the model saw offsets 0 to {L - 1} "
             f"only: a query at position 50 also sees keys {L} to 50 places back, at rotation angles it never "
             f"saw; {local} the rotary runs held "
             f"{d[middle]:.2f} up to 2L and then fell to {d[far]:.2f}.",
        "e": "without any encoding, attention cannot single out the last two tokens except through what the "
             f"causal mask lets it count; NoPE was the weakest method {local} even inside L "
             f"({e[inside]:.2f}).",
    }
    return {letter: (letter == best, reason) for letter, reason in reasons.items()}


CURVE_OPTIONS = _curve_options()
BET_OPTIONS = _bet_options()


# ---------------------------------------------------------------------------------------------------
# q6: find the bug in extended_angles


def extended_angles(positions, d, scale, method, base=10000.0):
    positions = np.asarray(positions, dtype=np.float64)
    if method == "pi":
        positions = positions / scale
    omega = rotary_frequencies(d, ntk_base(base, scale, d) if method == "ntk" else base).numpy()
    return np.outer(positions, omega)


def _buggy_angles(positions, d, scale, method, base=10000.0):
    """The handed-out version: the NTK exponent upside down."""
    positions = np.asarray(positions, dtype=np.float64)
    if method == "pi":
        positions = positions / scale
    if method == "ntk":
        base = base * scale ** ((d - 2) / d)
    return np.outer(positions, base ** (-2 * np.arange(d // 2) / d))


def _angle_probes(seed):
    rng = np.random.default_rng([seed, 76])
    probes = [(np.arange(6), 8, 2.0, "ntk"), (np.arange(6), 8, 2.0, "pi"), (np.arange(6), 8, 2.0, "none"),
              (np.array([0, 100, 4095]), 128, 16.0, "ntk"), (np.array([1, 2, 3]), 4, 4.0, "ntk", 100.0)]
    for _ in range(3):
        method = str(rng.choice(["pi", "ntk", "none"]))
        probes.append((rng.integers(0, 5000, size=5), int(rng.choice([8, 16, 64])), float(rng.integers(2, 17)), method))
    return probes


def _compare_angles(got, expected, args):
    problem = describe_mismatch(got, expected, what="array of angles")
    if problem is None:
        return None
    if args[3] == "ntk":
        return f"not fixed yet for method='ntk': {problem}"
    return (f"method={args[3]!r} was right as handed out, and it is changed now (the bug is elsewhere): "
            f"{problem}")


# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch07", "Longer than trained", [
    FunctionQuestion(qid="q1", title="Position interpolation", name="interpolated_positions", points=2,
                     probes=_pi_probes, reference=_interpolated_positions,
                     mistakes=PI_MISTAKES, compare=_compare_positions,
                     describe_args=lambda a: f"<{len(a[0])} positions>, train_length={a[1]}, target_length={a[2]}"),
    FunctionQuestion(qid="q2", title="The NTK-aware base", name="ntk_base", points=2,
                     probes=_ntk_probes, reference=ntk_base, mistakes=NTK_MISTAKES,
                     compare=lambda got, expected, args: compare_number(got, expected),
                     describe_args=lambda a: f"base={a[0]!r}, scale={a[1]!r}, d={a[2]!r}"),
    YarnQuestion(qid="q3", title="YaRN: frequencies and temperature", name="yarn_scaling", points=3,
                 probes=_yarn_probes, reference=yarn_scaling, mistakes=YARN_MISTAKES, compare=_compare_yarn,
                 describe_args=lambda a: ", ".join(map(repr, a))),
    ChoiceQuestion.from_statements(CURVE_OPTIONS, ("follows", "does not follow"), qid="q4",
                                   title="Reading an accuracy curve",
                                   name="curve_statements", points=2, ideas=CURVE_IDEAS),
    ChoiceQuestion.from_statements(BET_OPTIONS, ("the best bet", "not the best bet"), qid="q5",
                                   title="Which method to bet on", name="bet_local_sum", points=1, single=True),
    FindTheBugQuestion(qid="q6", title="Find the bug", name="extended_angles", points=2,
                       probes=_angle_probes, reference=extended_angles, bug=_buggy_angles,
                       compare=_compare_angles,
                       describe_args=lambda a: f"<{len(a[0])} positions>, d={a[1]}, scale={a[2]}, method={a[3]!r}"
                                               + (f", base={a[4]}" if len(a) > 4 else "")),
])
