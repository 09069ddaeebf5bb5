"""Checks of exercise set ch08: position on real text (bits per character, the two evaluation protocols,
reading the chapter's length figure).

q1-q3 are functions checked on inputs drawn from the grader's seed: cross-entropy in nats to bits per
character and perplexity; the mean a non-overlapping and a sliding-window evaluation report, given what each
byte costs with each amount of context. q4 and q5 read the committed sweep (results/ch08.json), with
feedback for every option; which options are right is computed from the file, with the same margins as the
chapter's claims.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from posenc.exercises.framework import ChoiceQuestion, ExerciseSet, FunctionQuestion, Mistake, compare_number
from posenc.experiments import ch08
from posenc.experiments.results import RESULTS_DIR, load_results
from posenc.experiments.summaries import LABELS
from posenc.lib import textlm
from posenc.lib.reproducibility import clearly_above, clearly_apart, clearly_below

# ---------------------------------------------------------------------------------------------------
# q1: nats -> bits per character and perplexity


def bits_and_perplexity(mean_nats):
    return textlm.bits_per_character(mean_nats), textlm.perplexity(mean_nats)


def _nats_probes(seed):
    rng = np.random.default_rng([seed, 81])
    probes = [(math.log(2),), (0.0,), (2.0,), (math.log(20.05),)]
    probes += [(float(rng.uniform(0.3, 5.0)),) for _ in range(3)]
    return probes


NATS_MISTAKES = [
    Mistake("bits per character are nats divided by ln 2 (one bit is ln 2 nats); you multiplied by ln 2",
            lambda n: (n * math.log(2), math.exp(n))),
    Mistake("bits per character are nats / ln 2, not nats / ln 10 (that would be digits per character)",
            lambda n: (n / math.log(10), math.exp(n))),
    Mistake("you took the logarithm of the loss: the loss is already a logarithm (nats); bits are nats / ln 2",
            lambda n: (math.log2(n) if n > 0 else float("-inf"), math.exp(n))),
    Mistake("perplexity is e to the power of the loss in nats, exp(nats); you raised 2 to the nats (2 ** bits "
            "would be right: the base must match the unit)", lambda n: (n / math.log(2), 2.0 ** n)),
    Mistake("perplexity is exp(nats); you took exp of the bits (e ** bits mixes two bases: 2 ** bits = exp(nats))",
            lambda n: (n / math.log(2), math.exp(n / math.log(2)))),
    Mistake("the pair is the wrong way round: return (bits per character, perplexity)",
            lambda n: (math.exp(n), n / math.log(2))),
]


def _compare_pair(got, expected, args):
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return "return a pair (bits_per_character, perplexity)"
    for value, right, what in zip(got, expected, ("bits per character", "perplexity")):
        problem = compare_number(value, right, what=what)
        if problem:
            return problem
    return None


# ---------------------------------------------------------------------------------------------------
# q2 and q3: what each protocol reports


def _loss_table(rng, n_bytes, length):
    """losses[t, c]: what byte t costs read with c bytes of its window before it. Like a real model's: a
    per-byte difficulty plus a cost of little context that falls with c, and some noise."""
    difficulty = rng.uniform(0.5, 3.0, size=(n_bytes, 1))
    little_context = rng.uniform(1.0, 3.0) * np.exp(-np.arange(length) / rng.uniform(2.0, 8.0))
    return difficulty + little_context + rng.uniform(0, 0.05, size=(n_bytes, length))


def _nonoverlapping_probes(seed):
    rng = np.random.default_rng([seed, 82])
    probes = []
    for length, windows in [(4, 3), (8, 2), (16, 4)] + [(int(rng.choice([5, 6, 12, 32])), int(rng.integers(2, 6)))
                                                         for _ in range(2)]:
        probes.append((_loss_table(rng, length * windows, length), length))
    return probes


def nonoverlapping_mean(losses, length):
    return textlm.protocol_cross_entropy(losses, length)


def _context_rule(rule):
    """A wrong answer that scores byte t with context ``rule(t, length, stride)`` (kept inside the table)
    instead of the protocol's; ``stride`` is None for non-overlapping windows."""
    def variant(losses, length, stride=None):
        losses = np.asarray(losses)
        t = np.arange(losses.shape[0])
        return float(np.mean(losses[t, np.clip(rule(t, length, stride), 0, length - 1)]))
    return variant


NONOVERLAPPING_MISTAKES = [
    Mistake("you averaged the whole table: each byte is scored once, with the context it has in its own window "
            "(byte t has t % length bytes before it), not with every amount of context",
            lambda losses, length: float(np.mean(losses))),
    Mistake("every byte was given a full window of context: in non-overlapping windows byte t has only "
            "t % length bytes of its window before it (the first byte of each window has none)",
            _context_rule(lambda t, length, stride: np.full_like(t, length - 1))),
    Mistake("the context is off by one: byte t has t % length bytes of its window before it (0 for the first "
            "byte of a window), not (t % length) + 1", _context_rule(lambda t, length, stride: t % length + 1)),
    Mistake("the context is the window's number (t // length); it is the place in the window, t % length",
            _context_rule(lambda t, length, stride: t // length)),
    Mistake("only the first window was scored: every window of the text is, each byte once",
            lambda losses, length: float(np.mean(np.asarray(losses)[np.arange(length), np.arange(length)]))),
]


def _sliding_probes(seed):
    rng = np.random.default_rng([seed, 83])
    probes = []
    for length, stride, moves in [(8, 4, 3), (8, 2, 5), (12, 3, 2), (6, 6, 2)] + \
            [(int(rng.choice([8, 16])), int(rng.choice([2, 4])), int(rng.integers(2, 6))) for _ in range(2)]:
        probes.append((_loss_table(rng, length + stride * moves, length), length, stride))
    return probes


def sliding_mean(losses, length, stride):
    return textlm.protocol_cross_entropy(losses, length, stride)


def _every_window_every_byte(losses, length, stride):
    losses = np.asarray(losses)
    starts = range(0, losses.shape[0] - length + 1, stride)
    return float(np.mean([losses[s + c, c] for s in starts for c in range(length)]))


def _last_stride_only(losses, length, stride):
    losses = np.asarray(losses)
    starts = range(0, losses.shape[0] - length + 1, stride)
    return float(np.mean([losses[s + c, c] for s in starts for c in range(length - stride, length)]))


SLIDING_MISTAKES = [
    Mistake("every byte of every window was scored, so the bytes the windows share are counted several times; "
            "after the first window score only each window's last `stride` bytes", _every_window_every_byte),
    Mistake("the first window was scored like the others (its last `stride` bytes only): its first "
            "length - stride bytes are then never scored; score all of the first window",
            _last_stride_only),
    Mistake("the context is that of non-overlapping windows (t % length); a sliding window that moves by "
            "`stride` scores byte t >= length with length - stride + (t - length) % stride bytes before it",
            _context_rule(lambda t, length, stride: t % length)),
    Mistake("after the first window the context is length - stride + (t - length) % stride; you used "
            "stride + (t - length) % stride (the window keeps length - stride old bytes, not stride)",
            _context_rule(lambda t, length, stride: np.where(t < length, t, stride + (t - length) % stride))),
    Mistake("every byte was given a full window of context: only the last byte of each window has length - 1 "
            "bytes before it", _context_rule(lambda t, length, stride: np.full_like(t, length - 1))),
]


def _compare_mean(got, expected, args):
    problem = compare_number(got, expected)
    if problem and problem.startswith("expected a number"):
        return f"return one number (the mean cross-entropy in nats), {problem.removeprefix('expected a number, ')}"
    return problem


def _describe_table(args):
    losses, *rest = args
    names = ("length", "stride")
    return f"<losses of shape {tuple(np.shape(losses))}>, " + ", ".join(f"{n}={v}" for n, v in zip(names, rest))


# ---------------------------------------------------------------------------------------------------
# q4 and q5: reading the committed figure


@functools.cache
def sweep_results():
    """(configuration, records) of the chapter's sweep as `make experiments` saved it (results/ch08.json)."""
    config, runs, _ = load_results(RESULTS_DIR / "ch08.json")
    return config, runs


def _mean_bits(kind, index, protocol="nonoverlapping"):
    config, runs = sweep_results()
    return float(np.mean(ch08.bits_curves(runs, kind, protocol)[:, index]))


def _parameters() -> int:
    from posenc.lib.models import parameter_count

    config, _ = sweep_results()
    return parameter_count(config.build("alibi", seed=0))


def figure_table() -> str:
    """The table q4 and q5 show: mean bits per character over the file's seeds, each method and length."""
    config, runs = sweep_results()
    heads = [f"{n} ({n // config.train_length}L)" for n in config.eval_lengths]
    lines = ["| method | " + " | ".join(heads) + " |", "| --- " * (len(heads) + 1) + "|"]
    for kind in ch08.METHODS:                  # the seven methods; the arms of the chapter's ablations are not asked
        curves = ch08.bits_curves(runs, kind)
        lines.append(f"| {LABELS.get(kind, kind)} | " + " | ".join(f"{v:.3f}" for v in curves.mean(axis=0)) + " |")
    return "\n".join(lines)


def _figure_options() -> dict:
    config, runs = sweep_results()
    last = len(config.eval_lengths) - 1
    rope, alibi, sin = (ch08.growth(runs, kind, last) for kind in ("rope", "alibi", "sinusoidal"))
    return {
        "a": (clearly_above(sin, 0.0), f"The sinusoidal model's mean goes from {_mean_bits('sinusoidal', 0):.3f} "
              f"bits at L to {_mean_bits('sinusoidal', last):.3f} at 8L, over the seeds: it gets worse past L, as in "
              "the paper."),
        "b": (clearly_apart(rope, alibi), f"At 8L rotary has risen by {np.mean(rope):.3f} bits and ALiBi by "
              f"{np.mean(alibi):.3f}: ALiBi degrades less."),
        "c": (False, "The figure stops at 8L: nothing in it says what happens at 100L. The paper's own ALiBi "
              "models were read at up to about 30 times their length; ours were not."),
        "d": (False, f"These are bytes of Python source read by a model of {_parameters():,} parameters; the "
              "paper's models read words of Wikipedia and are thousands of times larger. The directions can "
              "agree; the numbers cannot be compared."),
        "e": (False, "A learned table has rows up to 8L here, but rows past L never received a gradient in "
              "training, so it cannot read past L as it reads inside it: look at its column."),
    }


# Where each statement is decided: the table or a section of the chapters, never the statement's crux.
FIGURE_IDEAS = {
    "a": "the table above",
    "b": "the table above",
    "c": 'the table above, and chapter 8, "What a laptop reproduces, and what it does not"',
    "d": 'chapter 8, "Nats, bits and perplexity" and "Side by side with the paper"',
    "e": 'the table above, and chapter 4, "What the learned table learned"',
}


DEPLOY_METHODS = {"a": "learned", "b": "sinusoidal", "c": "alibi", "d": "rope", "e": "shaw", "f": "t5"}


def deploy_option_lines() -> str:
    """The options of q5 as the exercise shows them, with the settings the chapter's models were built with."""
    config, _ = sweep_results()
    shaw, t5 = (config.build(kind, seed=0).position for kind in ("shaw", "t5"))
    labels = {"learned": "a learned absolute table", "sinusoidal": "the sinusoidal table", "alibi": "ALiBi",
              "rope": "rotary embeddings",
              "shaw": f"Shaw's relative vectors (offsets clipped at {shaw.max_distance})",
              "t5": f"T5's relative bias ({t5.num_buckets} buckets up to a distance of {t5.max_distance})"}
    return "\n".join(f"- {letter}. {labels[kind]}" for letter, kind in DEPLOY_METHODS.items())


def _deploy_options() -> dict:
    config, runs = sweep_results()
    last = len(config.eval_lengths) - 1
    at_l = {kind: _mean_bits(kind, 0) for kind in DEPLOY_METHODS.values()}
    at_8l = {kind: _mean_bits(kind, last) for kind in DEPLOY_METHODS.values()}
    best = min(at_8l, key=at_8l.get)

    def numbers(kind):
        return f"{at_8l[kind]:.3f} bits per character at 8L ({at_l[kind]:.3f} at L)"

    reasons = {
        "a": f"the learned table reads {numbers('learned')}: its rows past L never received a gradient",
        "b": f"the sinusoidal model reads {numbers('sinusoidal')}: it never saw the rows past L in training",
        "c": f"ALiBi reads {numbers('alibi')}: its fixed penalty holds past L; compare its level with the others'",
        "d": f"rotary reads {numbers('rope')}: past L its slow pairs turn to angles it never saw",
        "e": f"Shaw's vectors read {numbers('shaw')}: every offset past its clipping distance shares one vector, "
             "which training reached, since the clipping distance is shorter than L",
        "f": f"T5's bias reads {numbers('t5')}: offsets between L and its max_distance fall in buckets that "
             "training never reached, part of the reason it rises past L",
    }
    return {letter: (DEPLOY_METHODS[letter] == best, reasons[letter]) for letter in reasons}


FIGURE_OPTIONS = _figure_options()
DEPLOY_OPTIONS = _deploy_options()


EXERCISES = ExerciseSet("ch08", "Position on real text", [
    FunctionQuestion(qid="q1", title="Bits per character and perplexity", name="bits_and_perplexity", points=2,
                     probes=_nats_probes, reference=bits_and_perplexity, mistakes=NATS_MISTAKES,
                     compare=_compare_pair, describe_args=lambda a: f"mean_nats={a[0]!r}"),
    FunctionQuestion(qid="q2", title="Non-overlapping windows", name="nonoverlapping_mean", points=2,
                     probes=_nonoverlapping_probes, reference=nonoverlapping_mean, mistakes=NONOVERLAPPING_MISTAKES,
                     compare=_compare_mean, describe_args=_describe_table),
    FunctionQuestion(qid="q3", title="Sliding windows", name="sliding_mean", points=3,
                     probes=_sliding_probes, reference=sliding_mean, mistakes=SLIDING_MISTAKES,
                     compare=_compare_mean, describe_args=_describe_table),
    ChoiceQuestion.from_statements(FIGURE_OPTIONS, qid="q4", title="Reading the figure",
                                   name="figure_statements", points=2, ideas=FIGURE_IDEAS),
    ChoiceQuestion.from_statements(DEPLOY_OPTIONS, ("the method to use", "not the best choice"), qid="q5",
                                   title="Which method for long files", name="deploy_choice", points=1, single=True),
])
