"""Grader tests of exercise set ch08: each realistic wrong answer scores zero and is named, on every grader
seed (the three-way basics, full marks and zero, are in test_checks_all), and the choice questions' right
options are what results/ch08.json shows."""

from posenc.exercises import load_set
from posenc.exercises.checks import ch08

SET_ID = "ch08"
EXERCISES = load_set(SET_ID)

NATS = "import math\ndef bits_and_perplexity(mean_nats):\n    return {}\n"
NONOVERLAPPING = """
import numpy as np
def nonoverlapping_mean(losses, length):
    losses = np.asarray(losses)
    t = np.arange(losses.shape[0])
    return {}
"""
SLIDING = """
import numpy as np
def sliding_mean(losses, length, stride):
    losses = np.asarray(losses)
    t = np.arange(losses.shape[0])
    context = {}
    return float(losses[t, context].mean())
"""
SLIDING_LOOPS = """
import numpy as np
def sliding_mean(losses, length, stride):
    scored = []
    for start in range(0, len(losses) - length + 1, stride):
        first = {first}
        for c in range(first, length):
            scored.append(losses[start + c][c])
    return float(np.mean(scored))
"""

WRONG = {
    "q1": {
        "times ln 2": (NATS.format("mean_nats * math.log(2), math.exp(mean_nats)"), "multiplied by ln 2"),
        "log10": (NATS.format("mean_nats / math.log(10), math.exp(mean_nats)"), "ln 10"),
        "log of the loss": (NATS.format("math.log2(mean_nats) if mean_nats > 0 else float('-inf'), "
                                        "math.exp(mean_nats)"), "logarithm of the loss"),
        "2 ** nats": (NATS.format("mean_nats / math.log(2), 2 ** mean_nats"), "raised 2 to the nats"),
        "exp of bits": (NATS.format("mean_nats / math.log(2), math.exp(mean_nats / math.log(2))"), "exp of the bits"),
        "swapped": (NATS.format("math.exp(mean_nats), mean_nats / math.log(2)"), "wrong way round"),
        "one number": (NATS.format("mean_nats / math.log(2)"), "pair"),
        "off by 3e-4": (NATS.format("mean_nats / math.log(2) * 1.0003, math.exp(mean_nats)"),
                        "the bits per character is"),
    },
    "q2": {
        "whole table": (NONOVERLAPPING.format("float(losses.mean())"), "averaged the whole table"),
        "full context": (NONOVERLAPPING.format("float(losses[:, length - 1].mean())"), "full window"),
        "off by one": (NONOVERLAPPING.format("float(losses[t, np.minimum(t % length + 1, length - 1)].mean())"),
                       "off by one"),
        "window number": (NONOVERLAPPING.format("float(losses[t, np.minimum(t // length, length - 1)].mean())"),
                          "window's number"),
        "first window only": (NONOVERLAPPING.format("float(np.mean([losses[c, c] for c in range(length)]))"),
                              "only the first window"),
        "zeroes the caller's losses": ("""
import numpy as np
def nonoverlapping_mean(losses, length):
    t = np.arange(losses.shape[0])
    mean = float(losses[t, t % length].mean())
    losses[:] = 0
    return mean
""", "changed its input `losses` in place (every entry set to 0)"),
        "nudges one of the caller's losses": ("""
import numpy as np
def nonoverlapping_mean(losses, length):
    losses[0, 0] *= 1.0000001
    t = np.arange(losses.shape[0])
    return float(losses[t, t % length].mean())
""", "(1 of its"),
        "its own NotImplementedError on the path the check takes": ("""
import numpy as np
def nonoverlapping_mean(losses, length):
    if losses.shape[0] > length:
        raise NotImplementedError("multi-window not done yet")
    return float(np.diagonal(losses).mean())
""", "raised NotImplementedError: multi-window not done yet: your code's own NotImplementedError"),
        "a round trip through the caller's losses": ("""
import numpy as np
def nonoverlapping_mean(losses, length):
    losses += 1
    losses -= 1
    t = np.arange(losses.shape[0])
    return float(losses[t, t % length].mean())
""", "a rounding error's size: a round trip such as"),
    },
    "q3": {
        "every byte of every window": (SLIDING_LOOPS.format(first="0"), "counted several times"),
        "first window like the others": (SLIDING_LOOPS.format(first="length - stride"), "first window"),
        "non-overlapping context": (SLIDING.format("t % length"), "non-overlapping"),
        "stride for the kept part": (SLIDING.format("np.where(t < length, t, stride + (t - length) % stride)"),
                                     "length - stride old bytes"),
        "full context": (SLIDING.format("np.full_like(t, length - 1)"), "full window"),
        "zeroes the caller's losses": ("""
import numpy as np
def sliding_mean(losses, length, stride):
    t = np.arange(losses.shape[0])
    context = np.where(t < length, t, length - stride + (t - length) % stride)
    mean = float(losses[t, context].mean())
    losses.fill(0)
    return mean
""", "changed its input `losses` in place"),
    },
    "q4": {
        "the sinusoidal line only": ('figure_statements = "a"', "Where to look again: (a) the table above"),
        "forgetting the sinusoidal line": ('figure_statements = "b"', "not yet: at least one letter is wrong"),
        "extrapolating to 100L": ('figure_statements = "abc"', "What a laptop reproduces, and what it does not"),
        "comparing with the paper": ('figure_statements = "abd"', "does not say which"),
        "the learned table's rows": ('figure_statements = "abe"', "chapter 4, \"What the learned table learned\""),
    },
    "q5": {
        "rotary": ('deploy_choice = "d"', "(d) not the best choice: rotary reads"),
        "sinusoidal": ('deploy_choice = "b"', "never saw the rows past L"),
        "learned": ('deploy_choice = "a"', "never received a gradient"),
        "ALiBi": ('deploy_choice = "c"', "compare its level"),
        "T5": ('deploy_choice = "f"', "never reached"),
    },
}

RIGHT = {
    "q1": {"numpy": "import numpy as np\ndef bits_and_perplexity(mean_nats):\n"
                    "    return float(np.log2(np.e) * mean_nats), float(np.exp(mean_nats))\n",
           "float32": "import numpy as np\ndef bits_and_perplexity(mean_nats):\n"
                      "    n = np.float32(mean_nats)\n    return n / np.float32(np.log(2)), np.exp(n)\n",
           "torch tensors": "import torch\ndef bits_and_perplexity(mean_nats):\n"
                            "    n = torch.tensor(mean_nats)\n    return n / torch.log(torch.tensor(2.0)), torch.exp(n)\n"},
    "q2": {"loops": "import numpy as np\ndef nonoverlapping_mean(losses, length):\n"
                    "    return float(np.mean([losses[t][t % length] for t in range(len(losses))]))\n",
           "float32": NONOVERLAPPING.replace("losses = np.asarray(losses)", "losses = np.asarray(losses, dtype=np.float32)")
           .format("losses[t, t % length].mean()")},
    "q3": {"loops": SLIDING_LOOPS.replace("first = {first}", "first = 0 if start == 0 else length - stride"),
           "float32": SLIDING.replace("losses = np.asarray(losses)", "losses = np.asarray(losses, dtype=np.float32)")
           .format("np.where(t < length, t, length - stride + (t - length) % stride)")},
}


def test_the_choice_answers_follow_the_committed_sweep():
    assert ch08.EXERCISES.questions[3].answer == "ab"
    assert ch08.EXERCISES.questions[4].answer == "e"
    assert "| ALiBi |" in ch08.figure_table()
