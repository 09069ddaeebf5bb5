"""Grader tests of exercise set ch07: each realistic wrong answer scores zero and is named, on 30 seeds
(the three-way basics, full marks and zero, are in test_checks_all)."""

import nbformat

from posenc.exercises import load_set


SET_ID = "ch07"
EXERCISES = load_set(SET_ID)

PI = "import numpy as np\ndef interpolated_positions(positions, train_length, target_length):\n    return {}\n"
NTK = "def ntk_base(base, scale, d):\n    return {}\n"
YARN = """
import numpy as np
def yarn_scaling(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0):
    omega = base ** (-2 * np.arange(d // 2) / d)
    turns = {turns}
    gamma = np.clip((turns - alpha) / (beta - alpha), 0.0, 1.0)
    new_omega = {mix}
    return new_omega, {logit}
"""
YARN_PARTS = {"turns": "train_length * omega / (2 * np.pi)", "mix": "(1 - gamma) * omega / scale + gamma * omega",
         "logit": "float((0.1 * np.log(scale) + 1) ** 2)"}


def yarn(**change):
    return YARN.format(**{**YARN_PARTS, **change})


ANGLES = """
import numpy as np
def extended_angles(positions, d, scale, method, base=10000.0):
    positions = np.asarray(positions, dtype=np.float64)
    if method == "pi":
        positions = {pi}
    if method == "ntk":
        base = {ntk}
    return np.outer(positions, base ** (-2 * np.arange(d // 2) / d))
"""

WRONG = {
    "q1": {
        "inverted": (PI.format("np.asarray(positions) * target_length / train_length"), "upside down"),
        "floored": (PI.format("np.floor(np.asarray(positions) * train_length / target_length)"), "rounded down"),
        "integer division": (PI.format("np.asarray(positions) * train_length // target_length"), "rounded down"),
        "rounded": (PI.format("np.round(np.asarray(positions) * train_length / target_length)"), "rounded"),
        "only past L": (PI.format("np.where(np.asarray(positions) < train_length, positions, "
                                  "np.asarray(positions) * train_length / target_length).astype(float)"),
                        "only the positions from L on"),
        "normalised": (PI.format("np.asarray(positions) / target_length"), "normalised"),
        "integers": (PI.format("(np.asarray(positions) * train_length / target_length).astype(int)"), "rounded down"),
        "a list": (PI.format("[p * train_length / target_length for p in positions]"), "not a numpy array"),
        "integer factor": (PI.format("np.asarray(positions) / (target_length // train_length)"),
                           "rounded to a whole number"),
        "changes the caller's positions": ("import numpy as np\n"
                                           "def interpolated_positions(positions, train_length, target_length):\n"
                                           "    out = positions * train_length / target_length\n"
                                           "    positions[0] = positions[0] + 1\n"
                                           "    return out\n", "changed its input `positions` in place"),
        "sorted": (PI.format("np.sort(positions) * train_length / target_length"), "wrong at index"),
        "sorted in place": ("import numpy as np\n"
                            "def interpolated_positions(positions, train_length, target_length):\n"
                            "    positions.sort()\n"
                            "    return positions * train_length / target_length\n",
                            "changed its input `positions` in place"),
    },
    "q2": {
        "times s": (NTK.format("base * scale"), "multiplied by s"),
        "exponent upside down": (NTK.format("base * scale ** ((d - 2) / d)"), "upside down"),
        "divided": (NTK.format("base / scale ** (d / (d - 2))"), "divided"),
        "power of the base": (NTK.format("base ** (scale ** (d / (d - 2)))"), "raised to a power"),
        "d/2 exponent": (NTK.format("base * scale ** (d / 2)"), "expected"),
        "a tensor of several numbers": ("import torch\ndef ntk_base(base, scale, d):\n    return torch.ones(2)\n",
                                        "expected a number, got a torch tensor"),
        "off by 3e-4 of its size": (NTK.format("base * scale ** (d / (d - 2)) * (1 + 3e-4)"),
                                    "expected 20221.3, got 20227.3"),
    },
    "q3": {
        "ramp reversed": (yarn(mix="gamma * omega / scale + (1 - gamma) * omega"), "wrong way round"),
        "wavelength over L": (yarn(turns="2 * np.pi / (omega * train_length)"), "lambda_i / L"),
        "no 2 pi": (yarn(turns="train_length * omega"), "2 pi"),
        "times s": (yarn(mix="(1 - gamma) * omega * scale + gamma * omega"), "omega_i * s"),
        "not squared": (yarn(logit="float(0.1 * np.log(scale) + 1)"), "square"),
        "log10": (yarn(logit="float((0.1 * np.log10(scale) + 1) ** 2)"), "natural logarithm"),
        "inverted temperature": (yarn(logit="float(1 / (0.1 * np.log(scale) + 1) ** 2)"), "divided"),
        "only frequencies": ("""
import numpy as np
def yarn_scaling(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0):
    return base ** (-2 * np.arange(d // 2) / d)
""", "return a pair"),
        "ramp on the pair index": (yarn(turns="np.arange(d // 2) * 1.0"), "wrong at index"),
        "ramp linear in the pair index, as in YaRN's code": ("""
import math
import numpy as np
def yarn_scaling(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0):
    omega = base ** (-2 * np.arange(d // 2) / d)
    pair = lambda turns: d * math.log(train_length / (turns * 2 * math.pi)) / (2 * math.log(base))
    low, high = max(math.floor(pair(beta)), 0), min(math.ceil(pair(alpha)), d - 1)
    high = high + 0.001 if high == low else high
    ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
    return omega / scale * ramp + omega * (1 - ramp), (0.1 * math.log(scale) + 1) ** 2
""", "a ramp linear in the pair index"),
        "log2 temperature": (yarn(logit="float((0.1 * np.log2(scale) + 1) ** 2)"), "not log2"),
        "sqrt temperature": (yarn(logit="float(np.sqrt(0.1 * np.log(scale) + 1))"), "not by its square root"),
    },
    "q4": {
        "everything": ("curve_statements = 'abcde'", "not yet: at least one letter is wrong or missing"),
        "forgot c": ("curve_statements = 'a'", "(c) chapter 7, \"The benchmark\""),
        "believes d": ("curve_statements = 'acd'", "does not say which"),
        "ranks methods": ("curve_statements = 'ace'", "(e) the table above, next to chapter 7's \"Past the training length\""),
        "unknown letter": ("curve_statements = 'af'", "no option f"),
        "a misspelt word": ("curve_statements = 'optoins a and c'", "is not an option letter"),
        "not a string": ("curve_statements = 3", "string of letters"),
        "empty": ("curve_statements = ''", "not yet"),
    },
    "q5": {
        "learned": ("bet_local_sum = 'a'", "(a) not the best bet: a learned table has rows"),
        "sinusoidal": ("bet_local_sum = 'b'", "never seen in training"),
        "rotary": ("bet_local_sum = 'd'", "on the benchmark's LocalMax task (the largest of the last 3 tokens) the "
                                          "rotary runs held"),
        "nope": ("bet_local_sum = 'e'", "causal mask"),
        "two at once": ("bet_local_sum = 'cd'", "exactly one"),
    },
    "q6": {
        "untouched": (ANGLES.format(pi="positions / scale", ntk="base * scale ** ((d - 2) / d)"), "still there"),
        "fixed the wrong branch": (ANGLES.format(pi="positions * scale", ntk="base * scale ** ((d - 2) / d)"),
                                   "not fixed yet for method='ntk'"),
        "fixed, but the pi path broken": (ANGLES.format(pi="positions * scale", ntk="base * scale ** (d / (d - 2))"),
                                          "method='pi' was right as handed out"),
        "ntk as pi": (ANGLES.format(pi="positions / scale", ntk="base * scale"), "not fixed yet for method='ntk'"),
    },
}

def test_every_option_of_the_understanding_questions_has_feedback():
    for qid in ("q4", "q5"):
        question = EXERCISES.question(qid)
        assert question.answer and all(len(reason) > 40 for reason in question.options.values())


def test_the_benchmark_still_shows_what_q4_and_q5_say_it_shows():
    """q4's table and both questions' feedback quote results/ch07.json; the prose around them assumes its
    setup and the pattern below. A new `make experiments` that breaks either fails here, not in a student's
    feedback."""
    from posenc.exercises.checks import ch07

    config, _ = ch07.benchmark_results()
    assert (config.train_length, config.eval_length, len(config.seeds)) == (16, 64, 5)   # q4's text
    assert list(config.bins().values())[-1] == (32, 64)                                  # "positions 32..63"
    inside, middle, far = config.bins()
    measured = ch07.bet_accuracies()
    learned, sinusoidal, alibi, rope, nope = (measured[letter] for letter in "abcde")
    assert alibi[far] >= alibi[inside] - 0.05, alibi                       # "stayed flat"
    assert rope[middle] >= 0.95 and rope[far] < 0.5, rope                  # "held up to 2L and then fell"
    for fell in (learned, sinusoidal):
        assert fell[inside] >= 0.95 and fell[far] < 0.5, fell              # "fell from ... to ..."
    assert nope[inside] == min(m[inside] for m in measured.values())       # "the weakest even inside L"
    assert EXERCISES.question("q5").answer == "c"
    assert EXERCISES.question("q4").answer == "ac"
    highest = ch07.seed_spread(ch07.benchmark_results()[1], config, ch07.CURVE_KIND)[far][2]
    assert f"reaches {highest:.2f} on positions 32..63" in ch07.CURVE_OPTIONS["a"][1]
    assert ch07.CURVE_OPTIONS["a"][0] == (highest <= 0.2)


def test_q4_shows_the_measured_table_in_both_copies():
    from posenc.exercises import authoring
    from posenc.exercises.checks import ch07

    source = next(s for s in authoring.sources() if s.stem.startswith("ch07"))
    for path in authoring.targets(source).values():
        markdown = [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]
        assert any(ch07.curve_table() in text for text in markdown), path
        assert not any("{{" in text for text in markdown), path


RIGHT = {
    "q1": {"float32": PI.format("np.asarray(positions, dtype=np.float32) * np.float32(train_length / target_length)"),
           "torch, float64": "import torch\n" + PI.format("torch.as_tensor(positions).double() * train_length / target_length"),
           "torch, float32": "import torch\n" + PI.format("torch.as_tensor(positions).float() * train_length / target_length")},
    "q2": {"float32": "import numpy as np\ndef ntk_base(base, scale, d):\n"
                      "    return float(np.float32(base) * np.float32(scale) ** np.float32(d / (d - 2)))\n",
           "another order of operations": "import math\n" + NTK.format("base * math.exp(d / (d - 2) * math.log(scale))")},
    "q3": {"float32 frequencies": yarn(mix="((1 - gamma) * omega / scale + gamma * omega).astype(np.float32)"),
           "float32 throughout": yarn(turns="(train_length * omega / (2 * np.pi)).astype(np.float32)",
                                      mix="((1 - gamma) * omega.astype(np.float32) / np.float32(scale) "
                                          "+ gamma * omega.astype(np.float32))",
                                      logit="float(np.float32(0.1) * np.log(np.float32(scale)) + 1) ** 2")},
    "q6": {"fixed in float32": ANGLES.format(pi="positions / scale", ntk="base * scale ** (d / (d - 2))").replace(
        "np.outer(positions, base ** (-2 * np.arange(d // 2) / d))",
        "np.outer(positions.astype(np.float32), np.float32(base) ** (-2 * np.arange(d // 2, dtype=np.float32) / d))")},
    "q4": {spelling: f"curve_statements = {spelling!r}" for spelling in (
        "a and c", "options a and c", "(a), (c)", "A, C", "a c")},
    "q5": {"option c": "bet_local_sum = 'option c'", "(c)": "bet_local_sum = '(c)'"},
}


def test_q5_says_its_numbers_are_the_benchmarks_localmax_not_the_new_task():
    """The question is about a new task, LocalSum; the numbers each option quotes are the benchmark's on
    LocalMax, and each sentence (a wrong pick shows one alone) says so."""
    from posenc.exercises.checks import ch07

    window = ch07.benchmark_results()[0].window
    for letter, reason in EXERCISES.question("q5").options.items():
        assert f"LocalMax task (the largest of the last {window} tokens)" in reason, letter
        assert "local task" not in reason, letter


def test_q5_names_the_offsets_never_seen_in_training():
    from posenc.exercises.checks import ch07

    L = ch07.benchmark_results()[0].train_length
    reason = EXERCISES.question("q5").options["d"]
    assert f"keys {L} to 50 places back" in reason and f"offsets 0 to {L - 1}" in reason
    assert "irrelevant at any length" not in EXERCISES.question("q5").options["c"]


def test_q4_e_feedback_says_what_the_benchmark_shows_and_the_file_bears_it_out():
    """(e) does not follow from q4's table (rotary alone), and its feedback says that the chapter's benchmark
    has T5 on the same task, with both numbers from results/ch07.json: every T5 seed above every rotary seed
    on positions 32..63."""
    from posenc.exercises.checks import ch07

    far = ch07.far_bin(ch07.benchmark_results()[0])
    t5, rope = ch07._spread("first/t5")[far], ch07._spread(ch07.CURVE_KIND)[far]
    assert t5[1] > rope[2], (t5, rope)
    reason = EXERCISES.question("q4").options["e"]
    assert f"T5 reads positions 32..63 at {t5[0]:.2f} against rotary's {rope[0]:.2f}" in reason
    assert reason.startswith("does not follow") and "other methods were not measured" not in reason


def test_the_notebook_imports_math():
    from posenc.exercises import authoring
    from tests.conftest import copy_namespace

    assert "math" in copy_namespace(SET_ID, "exercise")
    assert any(s.stem.startswith("ch07") for s in authoring.sources())
