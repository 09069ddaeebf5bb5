"""Realistic answers to exercise set ch00, graded on every seed by tests/test_checks_all.py:
WRONG = {qid: {name: (code, words its message must contain)}}, RIGHT = {qid: {name: code}}."""

SET_ID = "ch00"

ATTENTION = """
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = {scores}
    e = np.exp(scores - scores.max(axis={axis}, keepdims=True))
    return e / e.sum(axis={axis}, keepdims=True) @ v
"""

GAP = """
import numpy as np
def equivariance_gap(attention, x, perm):
    return {body}
"""

CAUSAL = """
import numpy as np
def causal_attention(x, w_q, w_k, w_v):
    queries, keys, values = x @ w_q, x @ w_k, x @ w_v
    scores = queries @ keys.T / np.sqrt(keys.shape[1])
    future = np.triu(np.ones(scores.shape, dtype=bool), k=1)
{body}
    return weights @ values
"""

HANDED_OUT = CAUSAL.format(body="""
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)
    weights = np.where(future, 0.0, weights)""")


def mask(body):
    return f"import numpy as np\ndef causal_mask(n_tokens):\n    return {body}\n"


WRONG = {
    "q1": {
        "no scaling": (ATTENTION.format(scores="q @ k.T", axis=1), "not divided by sqrt(d_k)"),
        "sqrt(d_model)": (ATTENTION.format(scores="q @ k.T / np.sqrt(x.shape[1])", axis=1), "sqrt(d_model)"),
        "divided by d_k": (ATTENTION.format(scores="q @ k.T / k.shape[1]", axis=1), "divided by d_k"),
        "multiplied by sqrt(d_k)": (ATTENTION.format(scores="q @ k.T * np.sqrt(k.shape[1])", axis=1),
                                    "multiplied by sqrt(d_k)"),
        "softmax over columns": (ATTENTION.format(scores="q @ k.T / np.sqrt(k.shape[1])", axis=0), "columns"),
        "softmax over the whole matrix": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    e = np.exp(scores - scores.max())
    return e / e.sum() @ (x @ w_v)
""", "whole matrix"),
        "no softmax": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    return (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1]) @ (x @ w_v)
""", "no softmax"),
        "unstable softmax": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return weights @ (x @ w_v)
""", "not numerically stable"),
        "unstable softmax, written as a helper": ("""
import numpy as np
def softmax(z):
    return np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True)
def self_attention(x, w_q, w_k, w_v):
    d_k = w_k.shape[1]
    return softmax((x @ w_q) @ (x @ w_k).T / d_k ** 0.5) @ (x @ w_v)
""", "subtract each row's maximum"),
        "global max subtracted": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    e = np.exp(scores - np.max(scores))
    return e / e.sum(axis=1, keepdims=True) @ (x @ w_v)
""", "underflows to 0 and 0 / 0 is nan"),
        "scale folded into the caller's w_q": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    w_q /= np.sqrt(w_k.shape[1])
    scores = (x @ w_q) @ (x @ w_k).T
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) @ (x @ w_v)
""", "changed its input `w_q` in place (every entry multiplied by"),
        "keys and queries transposed wrongly": ("""
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    scores = (x @ w_q).T @ (x @ w_k) / np.sqrt(w_k.shape[1])
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True) @ (x @ w_v)
""", "raised"),
    },
    "q2": {
        "unpermuted output": (GAP.format(body="float(np.abs(attention(x[perm]) - attention(x)).max())"),
                              "with Attn(x) itself"),
        "inverse permutation": (GAP.format(
            body="float(np.abs(attention(x[perm]) - attention(x)[np.argsort(perm)]).max())"), "inverse permutation"),
        "mean instead of max": (GAP.format(body="float(np.mean(np.abs(attention(x[perm]) - attention(x)[perm])))"),
                                "mean absolute difference"),
        "no abs": (GAP.format(body="float((attention(x[perm]) - attention(x)[perm]).max())"),
                   "largest signed difference"),
        "no abs, np.max": (GAP.format(body="float(np.max(attention(x[perm]) - attention(x)[perm]))"),
                           "np.abs"),
        "norm": (GAP.format(body="float(np.linalg.norm(attention(x[perm]) - attention(x)[perm]))"), "norm"),
        "smallest difference": (GAP.format(body="float(np.abs(attention(x[perm]) - attention(x)[perm]).min())"),
                                "expected"),
        "array of differences": (GAP.format(body="np.abs(attention(x[perm]) - attention(x)[perm])"),
                                 "expected a number"),
        "sorts perm in place": ("""
import numpy as np
def equivariance_gap(attention, x, perm):
    gap = float(np.abs(attention(x[perm]) - attention(x)[perm]).max())
    perm.sort()
    return gap
""", "changed its input `perm` in place"),
    },
    "q3": {
        "diagonal masked": (mask("np.triu(np.ones((n_tokens, n_tokens), dtype=bool))"), "diagonal"),
        "transposed": (mask("np.tril(np.ones((n_tokens, n_tokens), dtype=bool), k=-1)"), "transposed"),
        "allowed entries": (mask("np.tril(np.ones((n_tokens, n_tokens))) == 1"), "allowed entries"),
        "floats": (mask("np.triu(np.ones((n_tokens, n_tokens)), k=1)"), "dtype"),
        "torch floats": ("import torch\ndef causal_mask(n_tokens):\n    return torch.ones(n_tokens, n_tokens).triu(1)",
                         "the dtype is float32; return booleans"),
    },
    "q4": {
        "mean-pooling left out": ('order_blind = "ad"', "not yet: at least one letter is wrong or missing"),
        "position-wise layer left out": ('order_blind = "ac"', "(d) chapter 0, \"Multi-head attention is no different\""),
        "causal mask chosen": ('order_blind = "abcd"', "(b) chapter 0, \"What a causal mask changes\""),
        "encodings chosen": ('order_blind = "acde"', "does not say which"),
        "attention left out": ('order_blind = "cd"', "Where to look again: (a) chapter 0"),
        "several misjudged": ('order_blind = "ab"', "not yet"),
        "unknown option": ('order_blind = "acdz"', "no option z"),
        "not a string": ("order_blind = 3", "should be a string"),
    },
    "q5": {
        "no mask": ("first_token_weights = [1 / 6] * 6", "without a mask"),
        "mask read backwards": ("first_token_weights = [1 / (6 - t) for t in range(6)]", "hides the future"),
        "itself not counted": ("first_token_weights = [1 / (t + 2) for t in range(6)]", "itself included"),
        "first token hidden": ("first_token_weights = [1, 0, 0, 0, 0, 0]", "stays visible"),
        "all weight on it": ("first_token_weights = [1] * 6", "only a share"),
        "five numbers": ("first_token_weights = [1, 1 / 2, 1 / 3, 1 / 4, 1 / 5]", "expected 6"),
        "a single number": ("first_token_weights = 1 / 6", "should hold 6 numbers"),
        "a row of six": ("import numpy as np\nfirst_token_weights = np.array([[1, 1/2, 1/3, 1/4, 1/5, 1/6]])",
                         "has shape (1, 6); expected (6,): give a flat list of 6 numbers"),
    },
    "q6": {
        "untouched": (HANDED_OUT, "the bug is still there"),
        "reformatted, bug kept": (CAUSAL.format(body="""
    probabilities = np.exp(scores - scores.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    probabilities[future] = 0
    weights = probabilities"""), "the bug is still there"),
        "future scores set to 0": (CAUSAL.format(body="""
    scores = np.where(future, 0.0, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)"""), "exp(0) = 1"),
        "past hidden": (CAUSAL.format(body="""
    scores = np.where(future.T, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)"""), "hides the past"),
        "diagonal hidden": (CAUSAL.format(body="""
    scores = np.where(np.triu(np.ones(scores.shape, dtype=bool)), -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)"""), "diagonal is hidden too"),
        "repaired, the softmax unshifted": (CAUSAL.format(body="""
    weights = np.exp(scores)
    weights = np.where(future, 0.0, weights)
    weights = weights / weights.sum(axis=1, keepdims=True)"""), "not numerically stable"),
        "repaired, shifted by the global maximum": (CAUSAL.format(body="""
    weights = np.exp(scores - scores.max())
    weights = np.where(future, 0.0, weights)
    weights = weights / weights.sum(axis=1, keepdims=True)"""), "largest score of the whole matrix"),
        "masked first, shifted by the global maximum": (CAUSAL.format(body="""
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max())
    weights = weights / weights.sum(axis=1, keepdims=True)"""), "largest score of the whole matrix"),
    },
}

RIGHT = {
    "q1": {
        "float32": """
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    x, w_q, w_k, w_v = (a.astype(np.float32) for a in (x, w_q, w_k, w_v))
    scores = (x @ w_q) @ (x @ w_k).T / np.float32(np.sqrt(w_k.shape[1]))
    e = np.exp(scores - scores.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True) @ (x @ w_v)
""",
        "torch, float32": """
import torch
def self_attention(x, w_q, w_k, w_v):
    x, w_q, w_k, w_v = (torch.tensor(a, dtype=torch.float32) for a in (x, w_q, w_k, w_v))
    scores = (x @ w_q) @ (x @ w_k).T / w_k.shape[1] ** 0.5
    return torch.softmax(scores, dim=-1) @ (x @ w_v)
""",
        "scipy-style helper, stable": """
import numpy as np
def self_attention(x, w_q, w_k, w_v):
    scores = (x @ w_q) @ (x @ w_k).T / np.sqrt(w_k.shape[1])
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ (x @ w_v)
""",
    },
    "q3": {"torch booleans": "import torch\ndef causal_mask(n_tokens):\n"
                             "    return torch.triu(torch.ones(n_tokens, n_tokens, dtype=torch.bool), diagonal=1)",
           "torch booleans, made from floats": "import torch\ndef causal_mask(n_tokens):\n"
                                               "    return torch.ones(n_tokens, n_tokens).triu(1).bool()"},
    "q4": {"any case and order": 'order_blind = "DCA"', "a list": 'order_blind = ["a", "c", "d"]',
           "with commas": 'order_blind = "a, c, d"'},
    "q5": {"an array": "import numpy as np\nfirst_token_weights = 1 / np.arange(1, 7)",
           "six decimals": "first_token_weights = [1, 0.5, 0.333333, 0.25, 0.2, 0.166667]",
           "fractions": "from fractions import Fraction\nfirst_token_weights = tuple(Fraction(1, t + 1) for t in range(6))",
           "an array of fractions": "import numpy as np\nfrom fractions import Fraction\n"
                                    "first_token_weights = np.array([Fraction(1, t + 1) for t in range(6)])"},
    "q6": {
        "renormalised after masking": CAUSAL.format(body="""
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)
    weights = np.where(future, 0.0, weights)
    weights = weights / weights.sum(axis=1, keepdims=True)"""),
        "large negative fill": CAUSAL.format(body="""
    scores = np.where(future, -1e9, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)"""),
    },
}


def test_the_checks_own_references_never_warn_in_the_students_cell(recwarn):
    """A wrong repair of q6 whose rows are all hidden makes the check's variants divide 0 by 0: that must not
    show up as a RuntimeWarning of the course's own code in the student's cell (the student's own warnings
    are reported in the message instead)."""
    from posenc.exercises import load_set
    from tests.conftest import copy_namespace, with_submission

    code, _ = WRONG["q6"]["diagonal hidden"]
    load_set(SET_ID).question("q6").grade(with_submission(copy_namespace(SET_ID, "solution"), code))
    assert not [w for w in recwarn if "posenc" in str(w.filename)], [str(w.message) for w in recwarn]
