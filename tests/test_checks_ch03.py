"""Realistic answers to exercise set ch03, graded on every seed by tests/test_checks_all.py
(WRONG = {qid: {name: (code, words its message must contain)}}, RIGHT = {qid: {name: code}}), and the
checks' robustness."""

from posenc.exercises import load_set
from posenc.exercises.framework import PASSED
from tests.conftest import with_submission

SET_ID = "ch03"
EXERCISES = load_set(SET_ID)

WRONG = {
    "q1": {
        "no bias": ("""
def projection_params(scheme, d_token, d_position, d_out):
    width = d_token if scheme == "add" else d_token + d_position
    return width * d_out
""", "biases are missing"),
        "bias per input": ("""
def projection_params(scheme, d_token, d_position, d_out):
    width = d_token if scheme == "add" else d_token + d_position
    return width * d_out + width
""", "one entry per output"),
        "add widens": ("""
def projection_params(scheme, d_token, d_position, d_out):
    return (d_token + d_position) * d_out + d_out
""", "addition keeps the width"),
        "concat forgets positions": ("""
def projection_params(scheme, d_token, d_position, d_out):
    return d_token * d_out + d_out
""", "concatenation widens the input"),
        "schemes swapped": ("""
def projection_params(scheme, d_token, d_position, d_out):
    width = d_token + d_position if scheme == "add" else d_token
    return width * d_out + d_out
""", "swapped"),
        "square layer": ("""
def projection_params(scheme, d_token, d_position, d_out):
    width = d_token if scheme == "add" else d_token + d_position
    return width * width + width
""", "input width for the output width"),
        "float": ("""
def projection_params(scheme, d_token, d_position, d_out):
    width = d_token if scheme == "add" else d_token + d_position
    return float(width * d_out + d_out)
""", "return an int"),
    },
    "q2": {
        "a round trip through the caller's x": ("""
import numpy as np
def concat_inputs(x, p):
    x += 1
    x -= 1
    return np.concatenate([x, np.broadcast_to(p, x.shape[:-1] + p.shape[-1:])], axis=-1)
""", "a rounding error's size: a round trip such as"),
        "sequence axis": ("""
import numpy as np
def concat_inputs(x, p):
    return np.concatenate([x, np.broadcast_to(p, x.shape)], axis=1)
""", "sequence axis (axis 1)"),
        "batch axis (default)": ("""
import numpy as np
def concat_inputs(x, p):
    return np.concatenate([x, p[np.newaxis]])
""", "batch axis (axis 0"),
        "no broadcast": ("""
import numpy as np
def concat_inputs(x, p):
    return np.concatenate([x, p], axis=-1)
""", "p has no batch axis"),
        "positions first": ("""
import numpy as np
def concat_inputs(x, p):
    p = np.broadcast_to(p, (x.shape[0],) + p.shape)
    return np.concatenate([p, x], axis=2)
""", "not [p; x]"),
        "added": ("""
def concat_inputs(x, p):
    return x + p
""", "you added x and p"),
    },
    "q3": {
        "sum never assigned": ("""
def sum_of_projections(x, p, w):
    d_x = x.shape[1]
    out = x @ w[:d_x]
    out + p @ w[d_x:]
    return out
""", "never added it"),
        "positions only": ("""
def sum_of_projections(x, p, w):
    out = x @ w[: x.shape[1]]
    out = p @ w[x.shape[1]:]
    return out
""", "token part is missing"),
        "blocks swapped": ("""
def sum_of_projections(x, p, w):
    d_p = p.shape[1]
    return x @ w[d_p:] + p @ w[:d_p]
""", "blocks are swapped"),
        "one block for both": ("""
def sum_of_projections(x, p, w):
    w_x = w[: x.shape[1]]
    return x @ w_x + p @ w_x
""", "token block W_x for the positions too"),
        "split at d_p": ("""
def sum_of_projections(x, p, w):
    d_p = p.shape[1]
    return x @ w[:d_p] + p @ w[d_p:]
""", "first d_x ="),
        "concatenation built": ("""
import numpy as np
def sum_of_projections(x, p, w):
    return np.concatenate([x, p], axis=1) @ w
""", "built the concatenation [x; p] or used all of w in one product, which the question asks you to avoid"),
        "concatenation built with hstack": ("""
import numpy as np
def sum_of_projections(x, p, w):
    both = np.hstack((x, p))
    return both @ w
""", "it called np.hstack"),
        "concatenation of the broadcast rows": ("""
import numpy as np
def sum_of_projections(x, p, w):
    return np.concatenate([x, np.broadcast_to(p, (x.shape[0], p.shape[1]))], axis=1) @ w
""", "built the concatenation"),
        "concatenation with np.c_": ("""
import numpy as np
def sum_of_projections(x, p, w):
    return np.c_[x, np.broadcast_to(p, (x.shape[0], p.shape[1]))] @ w
""", "built the concatenation"),
        "concatenation filled into zeros": ("""
import numpy as np
def sum_of_projections(x, p, w):
    n, d_x, d_p = x.shape[0], x.shape[1], p.shape[1]
    z = np.zeros((n, d_x + d_p))
    z[:, :d_x] = x
    z[:, d_x:] = p
    return z @ w
""", "it multiplied all of `w` by one array at once"),
        "concatenation as a sum of padded arrays": ("""
import numpy as np
def sum_of_projections(x, p, w):
    d_x, d_p = x.shape[1], p.shape[1]
    return (np.pad(x, ((0, 0), (0, d_p))) + np.pad(p, ((0, 0), (d_x, 0)))) @ w
""", "it multiplied all of `w` by one array at once"),
        "concatenation through np.dot": ("""
import numpy as np
def sum_of_projections(x, p, w):
    z = np.zeros((x.shape[0], w.shape[0]))
    z[:, :x.shape[1]], z[:, x.shape[1]:] = x, p
    return np.dot(z, w)
""", "used all of w in one product"),
        "concatenation through einsum": ("""
import numpy as np
def sum_of_projections(x, p, w):
    z = np.zeros((x.shape[0], w.shape[0]))
    z[:, :x.shape[1]], z[:, x.shape[1]:] = x, p
    return np.einsum("nd,do->no", z, w)
""", "used all of w in one product"),
        "zeroes the caller's w": ("""
def sum_of_projections(x, p, w):
    d_x = x.shape[1]
    out = x @ w[:d_x] + p @ w[d_x:]
    w[:] = 0
    return out
""", "changed its input `w` in place (every entry set to 0)"),
        "columns instead of rows": ("""
def sum_of_projections(x, p, w):
    d_x = x.shape[1]
    return x @ w[:, :d_x] + p @ w[:, d_x:]
""", "rows of w"),
    },
    "q4": {
        "mixed terms swapped": ("""
import numpy as np
def logit_terms(x, p, w_q, w_k):
    tt = (x @ w_q) @ (x @ w_k).T
    tp = (p @ w_q) @ (x @ w_k).T
    pt = (x @ w_q) @ (p @ w_k).T
    pp = (p @ w_q) @ (p @ w_k).T
    return np.stack([tt, tp, pt, pp])
""", "mixed terms are swapped"),
        "divided by sqrt(d_k)": ("""
import numpy as np
def logit_terms(x, p, w_q, w_k):
    q_x, q_p, k_x, k_p = x @ w_q, p @ w_q, x @ w_k, p @ w_k
    scale = np.sqrt(w_q.shape[1])
    return np.stack([q_x @ k_x.T, q_x @ k_p.T, q_p @ k_x.T, q_p @ k_p.T]) / scale
""", "sqrt(d_k)"),
        "keys as rows": ("""
import numpy as np
def logit_terms(x, p, w_q, w_k):
    q_x, q_p, k_x, k_p = x @ w_q, p @ w_q, x @ w_k, p @ w_k
    return np.stack([k_x @ q_x.T, k_p @ q_x.T, k_x @ q_p.T, k_p @ q_p.T])
""", "rows and columns are exchanged"),
        "W_Q and W_K exchanged": ("""
import numpy as np
def logit_terms(x, p, w_q, w_k):
    q_x, q_p, k_x, k_p = x @ w_k, p @ w_k, x @ w_q, p @ w_q
    return np.stack([q_x @ k_x.T, q_x @ k_p.T, q_p @ k_x.T, q_p @ k_p.T])
""", "W_Q and W_K are exchanged"),
        "W_Q for keys": ("""
import numpy as np
def logit_terms(x, p, w_q, w_k):
    q_x, q_p = x @ w_q, p @ w_q
    return np.stack([q_x @ q_x.T, q_x @ q_p.T, q_p @ q_x.T, q_p @ q_p.T])
""", "keys use W_Q"),
        "tuple": ("""
def logit_terms(x, p, w_q, w_k):
    q_x, q_p, k_x, k_p = x @ w_q, p @ w_q, x @ w_k, p @ w_k
    return q_x @ k_x.T, q_x @ k_p.T, q_p @ k_x.T, q_p @ k_p.T
""", "np.stack"),
        "the sum": ("""
def logit_terms(x, p, w_q, w_k):
    h = x + p
    return (h @ w_q) @ (h @ w_k).T
""", "sum of the four terms"),
        "no transpose": ("""
import numpy as np
def logit_terms(x, p, w_q, w_k):
    q_x, q_p, k_x, k_p = x @ w_q, p @ w_q, x @ w_k, p @ w_k
    return np.stack([q_x @ k_x, q_x @ k_p, q_p @ k_x, q_p @ k_p])
""", "queries @ keys.T"),
    },
    "q5": {
        "1/sqrt(d)": ("""
import numpy as np
def scaled_inputs(tokens, table, pe):
    n = tokens.shape[-1]
    return table[tokens] / np.sqrt(table.shape[1]) + pe[:n]
""", "divided by sqrt(d_model)"),
        "no scale": ("""
def scaled_inputs(tokens, table, pe):
    return table[tokens] + pe[: tokens.shape[-1]]
""", "not scaled"),
        "times d": ("""
def scaled_inputs(tokens, table, pe):
    d = table.shape[1]
    return d * table[tokens] + pe[: tokens.shape[-1]]
""", "multiplied by d_model"),
        "scaled the encoding too": ("""
import math
def scaled_inputs(tokens, table, pe):
    n = tokens.shape[-1]
    return math.sqrt(table.shape[1]) * (table[tokens] + pe[:n])
""", "scaled the positional encoding too"),
        "sum never assigned": ("""
import math
def scaled_inputs(tokens, table, pe):
    n = tokens.shape[-1]
    x = math.sqrt(table.shape[1]) * table[tokens]
    x + pe[:n]
    return x
""", "never assigned"),
        "pe[n]": ("""
import math
def scaled_inputs(tokens, table, pe):
    n = tokens.shape[-1]
    return math.sqrt(table.shape[1]) * table[tokens] + pe[n]
""", "row n of pe"),
        "pe[:, :n]": ("""
import math
def scaled_inputs(tokens, table, pe):
    n = tokens.shape[-1]
    return math.sqrt(table.shape[1]) * table[tokens] + pe[:, :n]
""", "add only its first n rows, pe[:n]"),
        "the whole of pe": ("""
import math
def scaled_inputs(tokens, table, pe):
    return math.sqrt(table.shape[1]) * table[tokens] + pe
""", "add only its first n rows, pe[:n], with n = tokens.shape[-1] = 5"),
        "positions from 1": ("""
import math
def scaled_inputs(tokens, table, pe):
    n = tokens.shape[-1]
    return math.sqrt(table.shape[1]) * table[tokens] + pe[1:n + 1]
""", "positions start at 0"),
        "scales the caller's table": ("""
import math
def scaled_inputs(tokens, table, pe):
    table *= math.sqrt(table.shape[1])
    return table[tokens] + pe[: tokens.shape[-1]]
""", "changed its input `table` in place (every entry multiplied by"),
        "scales the caller's table back": ("""
import math
def scaled_inputs(tokens, table, pe):
    s = math.sqrt(table.shape[1])
    table *= s
    out = table[tokens] + pe[: tokens.shape[-1]]
    table /= s
    return out
""", "a rounding error's size: a round trip such as"),
        "raises something else": ("""
def scaled_inputs(tokens, table, pe):
    raise RuntimeError("not finished")
""", "raised RuntimeError: not finished"),
        "len of a batch": ("""
import math
def scaled_inputs(tokens, table, pe):
    return math.sqrt(table.shape[1]) * table[tokens] + pe[:len(tokens)]
""", "tokens.shape[-1], not len(tokens)"),
    },
    "q6": {
        "tensor2tensor's std": ("""
def matching_init_std(d_model):
    return d_model ** -0.5
""", "tensor2tensor"),
        "variance": ("""
def matching_init_std(d_model):
    return 1 / (2 * d_model)
""", "variance"),
        "divided by the scale": ("""
import math
def matching_init_std(d_model):
    return math.sqrt(d_model / 2)
""", "divided by sqrt(d_model) instead of multiplying"),
        "scale left out": ("""
def matching_init_std(d_model):
    return 2 ** -0.5
""", "scale is left out"),
        "PE norm sqrt(d)/2": ("""
import math
def matching_init_std(d_model):
    return 1 / (2 * math.sqrt(d_model))
""", "not sqrt(d_model) / 2"),
    },
    "q7": {
        "kept apart": ('after_concatenation = "b"', "only the input keeps them"),
        "zeroed": ('after_concatenation = "c"', "nothing multiplies the position part by zero"),
        "same as addition": ('after_concatenation = "d"', "tied blocks"),
        "no letter": ('after_concatenation = ""', "exactly one option"),
    },
    "q8": {
        "std of one entry": ("import math\nnorm_ratio = math.sqrt(512)", "the spread of one scaled entry"),
        "PE norm": ("import math\nnorm_ratio = math.sqrt(256)", "length of a PE row on its own"),
        "token norm": ("norm_ratio = 512", "length of the scaled token vector on its own"),
        "squared": ("norm_ratio = 1024", "compares squared norms"),
        "tensor2tensor": ("import math\nnorm_ratio = math.sqrt(2)", "tensor2tensor"),
        "equal": ("norm_ratio = 1", "far longer"),
        "rounded": ("norm_ratio = 30", "is not right"),
    },
}

RIGHT = {
    "q2": {"tiled and stacked": """
import numpy as np
def concat_inputs(x, p):
    tiled = np.repeat(p[np.newaxis], x.shape[0], axis=0)
    return np.dstack([x, tiled])
"""},
    "q3": {"float32": """
import numpy as np
def sum_of_projections(x, p, w):
    x, p, w = x.astype(np.float32), p.astype(np.float32), w.astype(np.float32)
    return x @ w[: x.shape[1]] + p @ w[x.shape[1]:]
""", "torch": """
import torch
def sum_of_projections(x, p, w):
    x, p, w = torch.from_numpy(x), torch.from_numpy(p), torch.from_numpy(w)
    return x @ w[: x.shape[1]] + p @ w[x.shape[1]:]
""", "blocks by np.split, products by einsum": """
import numpy as np
def sum_of_projections(x, p, w):
    w_x, w_p = np.split(w, [x.shape[1]])
    return np.einsum("nd,do->no", x, w_x) + p.dot(w_p)
""", "a copy of w, split": """
def sum_of_projections(x, p, w):
    w = w.copy()
    return x @ w[: x.shape[1]] + p @ w[x.shape[1]:]
"""},
    "q4": {"float32": """
import numpy as np
def logit_terms(x, p, w_q, w_k):
    x, p, w_q, w_k = (a.astype(np.float32) for a in (x, p, w_q, w_k))
    q_x, q_p, k_x, k_p = x @ w_q, p @ w_q, x @ w_k, p @ w_k
    return np.stack([q_x @ k_x.T, q_x @ k_p.T, q_p @ k_x.T, q_p @ k_p.T])
"""},
    "q7": {"upper case": 'after_concatenation = "A"'},
    "q8": {"an int": "norm_ratio = 32",
           "checked with NumPy's random numbers": "norm_ratio = 32.04",
           "checked with nn.Embedding, as the chapter does": "norm_ratio = 32.048",
           "estimated in the cell": """
import numpy as np
rows = np.random.default_rng(1).normal(size=(2000, 512))
pe_norm = np.sqrt(512 / 2)
norm_ratio = float(np.sqrt(((np.sqrt(512) * rows) ** 2).sum(axis=1).mean()) / pe_norm)
"""},
}

def test_raising_student_code_is_reported_not_raised(solution):
    code = "def matching_init_std(d_model):\n    return 1 / 0"
    result = EXERCISES.question("q6").grade(with_submission(solution, code))
    assert result.points == 0 and "ZeroDivisionError" in result.message


def test_student_cannot_change_the_probes_by_mutating_inputs(solution):
    code = """
def sum_of_projections(x, p, w):
    w[:] = 0
    return x @ w[: x.shape[1]]
"""
    assert EXERCISES.question("q3").grade(with_submission(solution, code)).points == 0
    assert EXERCISES.question("q3").grade(solution).status == PASSED


def test_q7_option_b_mentions_residual_connections():
    feedback = EXERCISES.question("q7").options["b"]
    assert "residual" in feedback and "later layers see only that" not in feedback


def test_q5_gives_the_hint_about_pe_rows_only_for_the_errors_it_explains(solution):
    code, _ = WRONG["q5"]["raises something else"]
    message = EXERCISES.question("q5").grade(with_submission(solution, code)).message
    assert "RuntimeError" in message and "pe[:n]" not in message and "pe has shape" not in message
    for name in ("pe[:, :n]", "the whole of pe"):       # the hint names no slice the answer did not write
        message = EXERCISES.question("q5").grade(with_submission(solution, WRONG["q5"][name][0])).message
        assert "first n rows, pe[:n]" in message and "not pe[:, :n]" not in message


def test_q8_messages_keep_the_computation_back():
    from posenc.exercises.checks import ch03

    for _, message in ch03.Q8_MISTAKES:
        assert "sqrt(d_model * d_model)" not in message and "divide" not in message and "sqrt(d_model / 2)" not in message
