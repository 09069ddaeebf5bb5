"""Grader tests of exercise set ch09: each realistic wrong answer scores zero and is named, on every grader
seed (the three-way basics, full marks and zero, are in test_checks_all), and the choice questions' right
options are what the table of today's models says."""

from posenc.exercises import load_set
from posenc.exercises.checks import ch09

SET_ID = "ch09"
EXERCISES = load_set(SET_ID)

LLAMA3 = """
import numpy as np
def llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, original_length):
    omega = np.asarray(omega, dtype=np.float64)
    turns = original_length * omega / (2 * np.pi)
    wavelength = 2 * np.pi / omega
    gamma = np.clip({}, 0.0, 1.0)
    return (1 - gamma) * omega / factor + gamma * omega
"""
P_ROPE = """
import math
import numpy as np
def p_rope_frequencies(d_head, p, base=10000.0):
    omega = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    kept = {}
    return {}
"""
LONGROPE = """
import numpy as np
def longrope_frequencies(d_head, base, short_factor, long_factor, original_length, seq_len):
    factors = np.asarray(long_factor if {} else short_factor, dtype=np.float64)
    omega = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    return omega {} factors
"""
FACTOR = """
import math
def longrope_attention_factor(original_length, max_length):
    scale = max_length / original_length
    if scale <= 1:
        return 1.0
    return {}
"""
SCALE = """
import numpy as np
def llama4_query_scale(positions, floor_scale, attn_scale):
    p = np.asarray(positions, dtype=np.float64)
    return {}
"""

WRONG = {
    "q1": {
        "ramp over wavelengths": (LLAMA3.format(
            "(original_length / low_freq_factor - wavelength) / "
            "(original_length / low_freq_factor - original_length / high_freq_factor)"), "linear in the wavelength"),
        "bands swapped": (LLAMA3.format("1 - (turns - low_freq_factor) / (high_freq_factor - low_freq_factor)"),
                          "wrong way round"),
        "turns in radians": (LLAMA3.format("(original_length * omega - low_freq_factor) / "
                                           "(high_freq_factor - low_freq_factor)"), "radians"),
        "linear scaling": ("import numpy as np\ndef llama3_frequencies(omega, factor, low_freq_factor, "
                           "high_freq_factor, original_length):\n    return np.asarray(omega) / factor\n",
                           "linear scaling"),
        "no ramp": (LLAMA3.format("(turns >= low_freq_factor).astype(float)"), "kept unchanged"),
        "in place": ("import numpy as np\ndef llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, "
                     "original_length):\n    turns = original_length * omega / (2 * np.pi)\n"
                     "    gamma = np.clip((turns - low_freq_factor) / (high_freq_factor - low_freq_factor), 0, 1)\n"
                     "    omega *= (1 - gamma) / factor + gamma\n    return omega\n", "in place"),
    },
    "q2": {
        "fastest stopped": (P_ROPE.format("int(p * d_head // 2)",
                                          "np.where(np.arange(d_head // 2) >= d_head // 2 - kept, omega, 0.0)"),
                            "fastest pairs were stopped"),
        "partial rotary's spread": (P_ROPE.format(
            "int(p * d_head // 2)",
            "np.concatenate([base ** (-np.arange(0, 2 * kept, 2) / max(2 * kept, 1)), np.zeros(d_head // 2 - kept)])"),
            "partial rotary"),
        "rounded": (P_ROPE.format("round(p * d_head / 2)", "np.where(np.arange(d_head // 2) < kept, omega, 0.0)"),
                    "rounded"),
        "rounded up": (P_ROPE.format("math.ceil(p * d_head / 2)", "np.where(np.arange(d_head // 2) < kept, omega, 0.0)"),
                       "rounded up"),
        "left out": (P_ROPE.format("int(p * d_head // 2)", "omega[:kept]"), "left out"),
    },
    "q3": {
        "multiplied": (LONGROPE.format("seq_len > original_length", "*"), "multiplied"),
        "long list too early": (LONGROPE.format("seq_len >= original_length", "/"), "too early"),
        "always the long list": (LONGROPE.format("True", "/"), "long list was used whatever"),
        "always the short list": (LONGROPE.format("False", "/"), "short list was used whatever"),
    },
    "q4": {
        "no square root": (FACTOR.format("1 + math.log(scale) / math.log(original_length)"), "square root"),
        "log of the length": (FACTOR.format("math.sqrt(1 + math.log(max_length) / math.log(original_length))"),
                              "logarithm is of max_length"),
        "scale upside down": (FACTOR.format("math.sqrt(1 + math.log(1 / scale) / math.log(original_length))"),
                              "upside down"),
    },
    "q5": {
        "one position off": (SCALE.format("1 + attn_scale * np.log1p(np.floor(p / floor_scale))"), "one position off"),
        "no floor": (SCALE.format("1 + attn_scale * np.log1p((p + 1) / floor_scale)"), "floor is missing"),
        "log without the 1": (SCALE.format("1 + attn_scale * np.log(np.floor((p + 1) / floor_scale))"),
                              "inside the logarithm"),
        "no leading 1": (SCALE.format("attn_scale * np.log1p(np.floor((p + 1) / floor_scale))"), "leading 1"),
    },
    "q6": {
        "rotary after the up-projection": ('absorbing_designs = "abcde"', "not yet: at least one letter is wrong"),
        "forgetting the design without position": ('absorbing_designs = "cde"', "when nothing carries position"),
        "forgetting the bias design": ('absorbing_designs = "ace"', "where a bias on the logits enters"),
        "forgetting the input encoding": ('absorbing_designs = "acd"', "in the latent itself"),
        "a matrix per offset": ('absorbing_designs = "acdef"', "does not say which"),
        "the decoupled part": ('absorbing_designs = "ade"', "decoupled rotary part adds"),
    },
    "q7": {
        "Qwen's card for its file": ('table_statements = "ace"', "not yet: at least one letter is wrong"),
        "one base": ('table_statements = "abe"', "the base of Gemma 3's local layers"),
        "partial rotary's slow pairs": ('table_statements = "ade"', "GPT-NeoX-20B's slowest turning pairs"),
        "no layers without position": ('table_statements = "a"', "every fourth layer"),
        "the fast pairs": ('table_statements = "e"', "does not say which"),
    },
}

RIGHT = {
    "q1": {"float32": LLAMA3.replace("omega = np.asarray(omega, dtype=np.float64)", "omega = np.asarray(omega, dtype=np.float32)")
           .format("(turns - low_freq_factor) / (high_freq_factor - low_freq_factor)"),
           "loop": "import math\ndef llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, "
                   "original_length):\n    out = []\n    for w in omega:\n"
                   "        wavelength = 2 * math.pi / w\n"
                   "        if wavelength < original_length / high_freq_factor:\n            out.append(w)\n"
                   "        elif wavelength > original_length / low_freq_factor:\n            out.append(w / factor)\n"
                   "        else:\n            s = (original_length / wavelength - low_freq_factor) / "
                   "(high_freq_factor - low_freq_factor)\n            out.append((1 - s) * w / factor + s * w)\n"
                   "    import numpy as np\n    return np.array(out)\n"},
    "q2": {"float32": P_ROPE.replace("dtype=np.float64", "dtype=np.float32").format(
               "int(p * d_head // 2)", "np.where(np.arange(d_head // 2) < kept, omega, 0.0).astype(np.float32)"),
           "timescale": "import numpy as np\ndef p_rope_frequencies(d_head, p, base=10000.0):\n"
                        "    kept = int(p * d_head // 2)\n"
                        "    timescale = np.concatenate([base ** (2.0 / d_head * np.arange(kept)), "
                        "np.full(d_head // 2 - kept, np.inf)])\n    return 1.0 / timescale\n"},
    "q3": {"torch": "import torch\ndef longrope_frequencies(d_head, base, short_factor, long_factor, original_length, "
                    "seq_len):\n    factors = torch.as_tensor(long_factor if seq_len > original_length else short_factor)\n"
                    "    return base ** (-torch.arange(0, d_head, 2) / d_head) / factors\n",
           "list": "def longrope_frequencies(d_head, base, short_factor, long_factor, original_length, seq_len):\n"
                   "    import numpy as np\n"
                   "    chosen = list(long_factor) if seq_len > original_length else list(short_factor)\n"
                   "    return np.array([base ** (-2 * i / d_head) / chosen[i] for i in range(d_head // 2)])\n"},
    "q4": {"float32": "import numpy as np\ndef longrope_attention_factor(original_length, max_length):\n"
                      "    s = np.float32(max(max_length / original_length, 1.0))\n"
                      "    return np.sqrt(np.float32(1) + np.log(s) / np.log(np.float32(original_length)))\n",
           "numpy": "import numpy as np\ndef longrope_attention_factor(original_length, max_length):\n"
                    "    s = max(max_length / original_length, 1.0)\n"
                    "    return float(np.sqrt(1 + np.log(s) / np.log(original_length)))\n"},
    "q5": {"torch": "import torch\nimport numpy as np\ndef llama4_query_scale(positions, floor_scale, attn_scale):\n"
                    "    p = torch.as_tensor(np.asarray(positions), dtype=torch.float64)\n"
                    "    return (1 + attn_scale * torch.log1p(torch.floor((p + 1) / floor_scale))).numpy()\n"},
}


def test_the_choice_answers_follow_the_table():
    assert ch09.EXERCISES.question("q6").answer == "acde"
    assert set(ch09.ABSORB_IDEAS) == set(ch09.ABSORB_OPTIONS) and set(ch09.TABLE_IDEAS) == set(ch09.TABLE_OPTIONS)
    assert ch09.EXERCISES.question("q7").answer == "ae"
    assert "| Llama 3.1 8B |" in ch09.table_markdown()
