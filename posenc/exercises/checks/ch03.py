"""Checks of exercise set ch03: addition vs concatenation."""

from __future__ import annotations

import math

import numpy as np

from posenc.lib import combining
from posenc.exercises.framework import (
    ChoiceQuestion, ExerciseSet, FunctionQuestion, Mistake, ValueQuestion, compare_number, describe_mismatch,
    array_of, kind_of,
)
from posenc.lib.encoding import sinusoidal_encoding

# ---------------------------------------------------------------------------------------------------
# q1: parameters of the first projection

PARAM_PROBES = [("add", 32, 32, 32), ("concat", 32, 32, 32), ("concat", 16, 16, 32), ("add", 512, 512, 1536),
                ("concat", 512, 256, 1536), ("concat", 24, 8, 10), ("add", 8, 8, 3)]


def _param_probes(seed):
    rng = np.random.default_rng([seed, 3, 1])
    width, d_out = int(rng.integers(2, 800)), int(rng.integers(2, 800))
    d_token, d_position = int(rng.integers(2, 800)), int(rng.integers(2, 800))
    return [*PARAM_PROBES, ("add", width, width, d_out), ("concat", d_token, d_position, int(rng.integers(2, 800)))]


def _params_variant(scheme, d_token, d_position, d_out, *, add_width="right", concat_width="right",
                    bias="outputs", outputs="right"):
    """``projection_params`` with deliberate mistakes."""
    width = {"add": {"right": d_token, "concat": d_token + d_position},
             "concat": {"right": d_token + d_position, "token only": d_token}}[scheme]
    width = width[add_width if scheme == "add" else concat_width]
    out = width if outputs == "square" else d_out
    extra = {"outputs": out, "none": 0, "inputs": width}[bias]
    return width * out + extra


PARAM_MISTAKES = [
    Mistake("the biases are missing: a linear layer has one bias per output, d_out more parameters than "
            "its weights", lambda *a: _params_variant(*a, bias="none")),
    Mistake("the bias has one entry per output (d_out), not one per input",
            lambda *a: _params_variant(*a, bias="inputs")),
    Mistake("addition keeps the width: x + p has d_token entries, so the layer has d_token * d_out weights, "
            "not (d_token + d_position) * d_out", lambda *a: _params_variant(*a, add_width="concat")),
    Mistake("concatenation widens the input: [x; p] has d_token + d_position entries, and every one of them "
            "needs a row of weights", lambda *a: _params_variant(*a, concat_width="token only")),
    Mistake("add and concat are swapped: addition keeps the width d_token, concatenation makes it "
            "d_token + d_position", lambda *a: _params_variant(*a, add_width="concat", concat_width="token only")),
    Mistake("the layer maps the input to d_out outputs; you used the input width for the output width too",
            lambda *a: _params_variant(*a, outputs="square")),
]


def _compare_int(got, expected, args):
    if array_of(got) is not None and array_of(got).size == 1:
        got = array_of(got).item()
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return f"expected a number of parameters (an int), got {kind_of(got)}"
    if got != expected:
        return f"expected {expected}, got {got:g}"
    if isinstance(got, float):
        return f"the count is right but it is a float ({got!r}); return an int"
    return None


# ---------------------------------------------------------------------------------------------------
# q2: the concatenated input


def _arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape) for shape in shapes]


def _concat_probes(seed):
    # Equal widths first: there a concatenation on the wrong axis still runs, and can be named.
    shapes = [((3, 5, 4), (5, 4)), ((2, 7, 6), (7, 6)), ((4, 3, 8), (3, 2)), ((1, 6, 2), (6, 5)),
              ((5, 1, 3), (1, 3))]
    return [tuple(_arrays(seed + 10 + k, *pair)) for k, pair in enumerate(shapes)]


def _broadcast(x, p):
    return np.broadcast_to(p, x.shape[:-1] + p.shape[-1:])


CONCAT_MISTAKES = [
    Mistake("wrong axis: you concatenated along the sequence axis (axis 1), so the result has twice as many "
            "positions; [x; p] joins the features of each position, the last axis (axis=-1)",
            lambda x, p: np.concatenate([x, _broadcast(x, p)], axis=1)),
    Mistake("wrong axis: you concatenated along the batch axis (axis 0, NumPy's default), so the result has "
            "an extra sequence; [x; p] joins the features of each position, the last axis (axis=-1)",
            lambda x, p: np.concatenate([x, p[None]], axis=0)),
    Mistake("order: the token part comes first and the positional part after it, [x; p], not [p; x]",
            lambda x, p: np.concatenate([_broadcast(x, p), x], axis=-1)),
    Mistake("you added x and p; this question asks for the concatenation [x; p], of width d_x + d_p",
            lambda x, p: x + p),
]


def _compare_concat(got, expected, args):
    x, p = args
    values = array_of(got)
    if values is not None and values.shape == x.shape[:1] + (2 * x.shape[1],) + x.shape[2:]:
        return (f"the result has shape {values.shape}: twice as many positions as x; concatenate along the "
                f"last (feature) axis, axis=-1, to get {expected.shape}")
    return describe_mismatch(got, expected, what="concatenated input")


def _concat_error_hint(args, error):
    x, p = args
    if error != "ValueError":            # NumPy's complaint about the number of axes or their sizes
        return ""
    return (f" (x has shape {x.shape} and p has shape {p.shape}: p has no batch axis, so broadcast it to "
            f"{x.shape[:-1] + p.shape[-1:]} first, e.g. with np.broadcast_to, then join along axis=-1)")


# ---------------------------------------------------------------------------------------------------
# q3: the same projection as a sum


def _projection_probes(seed):
    # (n, d_x), (n, d_p), (d_x + d_p, d_out); equal widths first, where swapped or tied blocks still run.
    # The last two give p a single row shared by every position: the sum broadcasts, a concatenation
    # cannot be built (the question asks for the sum without it).
    dims = [(5, 4, 4, 3), (6, 3, 3, 7), (4, 6, 2, 5), (7, 2, 5, 4), (3, 8, 8, 8)]
    probes = [tuple(_arrays(seed + 20 + k, (n, dx), (n, dp), (dx + dp, do))) for k, (n, dx, dp, do) in enumerate(dims)]
    shared = [(4, 3, 3, 5), (6, 5, 2, 4)]
    probes += [tuple(_arrays(seed + 30 + k, (n, dx), (1, dp), (dx + dp, do))) for k, (n, dx, dp, do) in enumerate(shared)]
    return probes


def _blocks(x, w):
    return w[: x.shape[1]], w[x.shape[1]:]


# Building [x; p] is what the question asks to avoid: these are the functions that build it, and however it
# was built (np.zeros and slices, np.pad), it then meets the whole of w in one product.
CONCATENATIONS = ("concatenate", "hstack", "column_stack", "block", "append")
BUILT_CONCATENATION = ("built the concatenation [x; p] or used all of w in one product, which the question asks "
                       "you to avoid: split w into the block W_x that meets the token features and W_p that "
                       "meets the positional ones, and return x W_x + p W_p")

PROJECTION_MISTAKES = [
    Mistake("the position part is missing: you computed p W_p but never added it to x W_x (a line like "
            "`out + p @ w_p` changes nothing; write `out = out + p @ w_p` or `out += p @ w_p`)",
            lambda x, p, w: x @ _blocks(x, w)[0]),
    Mistake("the token part is missing: the result must be x W_x + p W_p, and yours is p W_p alone",
            lambda x, p, w: p @ _blocks(x, w)[1]),
    Mistake("the blocks are swapped: the first d_x rows of w meet the token part x, the remaining d_p rows "
            "the positional part p", lambda x, p, w: x @ _blocks(x, w)[1] + p @ _blocks(x, w)[0]),
    Mistake("you used the token block W_x for the positions too; p meets the rows of w after the first d_x",
            lambda x, p, w: (x + p) @ _blocks(x, w)[0]),
]


def _projection_error_hint(args, error):
    x, p, w = args
    if error != "ValueError":            # a matrix product or a sum whose shapes do not fit
        return ""
    if p.shape[0] == 1 < x.shape[0]:
        return (f" (here p has a single row, shape {p.shape}, shared by all {x.shape[0]} positions: "
                "x @ w_x + p @ w_p broadcasts, but the concatenation [x; p] cannot even be built. Split w into "
                f"w[:{x.shape[1]}] and w[{x.shape[1]}:] instead of concatenating)")
    return (f" (x is {x.shape}, p is {p.shape}, w is {w.shape}: the token part meets the first "
            f"d_x = {x.shape[1]} rows of w, w[:{x.shape[1]}], and the positions the remaining {p.shape[1]}, "
            f"w[{x.shape[1]}:])")


# ---------------------------------------------------------------------------------------------------
# q4: the four attention terms


def four_terms(x, p, w_q, w_k):
    """The reference for q4: the four terms stacked into one (4, n, n) array."""
    return np.stack(combining.logit_terms(x, p, w_q, w_k))


def _terms_probes(seed):
    # (n, d) token and positional parts, (d, d_k) projections; d_k differs from d and n in most probes.
    dims = [(5, 8, 4), (6, 4, 4), (4, 6, 3), (7, 10, 2), (3, 16, 8)]
    probes = []
    for k, (n, d, dk) in enumerate(dims):
        x, w_q, w_k = _arrays(seed + 30 + k, (n, d), (d, dk), (d, dk))
        probes.append((x, sinusoidal_encoding(n, d), w_q, w_k))
    return probes


def _terms_variant(x, p, w_q, w_k, *, order="right", scale=False, keys="w_k", transpose=False):
    w_key = w_q if keys == "w_q" else w_k
    if keys == "swapped":
        w_q, w_key = w_k, w_q
    terms = list(combining.logit_terms(x, p, w_q, w_key))
    if order == "mixed swapped":
        terms = [terms[0], terms[2], terms[1], terms[3]]
    out = np.stack(terms)
    if transpose:
        out = out.transpose(0, 2, 1)
    return out / math.sqrt(w_k.shape[1]) if scale else out


TERMS_MISTAKES = [
    Mistake("the two mixed terms are swapped: token-position is (x W_Q)(p W_K)^T (the query's token, the key's "
            "position) and position-token is (p W_Q)(x W_K)^T", lambda *a: _terms_variant(*a, order="mixed swapped")),
    Mistake("you divided by sqrt(d_k): that factor belongs to scaled dot-product attention, not to the terms "
            "asked for here", lambda *a: _terms_variant(*a, scale=True)),
    Mistake("rows and columns are exchanged: row i must be the query position (x_i W_Q, p_i W_Q) and column j "
            "the key position (x_j W_K, p_j W_K); each of your terms is the transpose of the right one",
            lambda *a: _terms_variant(*a, transpose=True)),
    Mistake("W_Q and W_K are exchanged: queries are x W_Q and p W_Q, keys are x W_K and p W_K",
            lambda x, p, w_q, w_k: _terms_variant(x, p, w_q, w_k, keys="swapped")),
    Mistake("the keys use W_Q too; keys are x W_K and p W_K",
            lambda x, p, w_q, w_k: _terms_variant(x, p, w_q, w_k, keys="w_q")),
]


def _compare_terms(got, expected, args):
    x, p, w_q, w_k = args
    if isinstance(got, (tuple, list)):
        return ("return one NumPy array of shape (4, n, n), e.g. np.stack([tt, tp, pt, pp]), "
                f"not {kind_of(got)}")
    values = array_of(got)
    if values is not None and values.shape == expected.shape[1:] and np.allclose(values, expected.sum(0)):
        return "that is the sum of the four terms, the full logit matrix; return the four terms separately"
    return describe_mismatch(got, expected, what="stack of terms")


# ---------------------------------------------------------------------------------------------------
# q5: the scaled input


def _input_probes(seed):
    rng = np.random.default_rng(seed + 40)
    probes = []
    for n, vocab, d, max_len in [(5, 10, 4, 12), (8, 16, 16, 20), (3, 7, 6, 3), (6, 12, 64, 50)]:
        tokens = rng.integers(0, vocab, size=n)
        probes.append((tokens, rng.normal(size=(vocab, d)), sinusoidal_encoding(max_len, d)))
    tokens = rng.integers(0, 9, size=(2, 5))                     # a batch: (batch, n)
    probes.append((tokens, rng.normal(size=(9, 8)), sinusoidal_encoding(10, 8)))
    return probes


def _input_variant(tokens, table, pe, *, scale="sqrt", pe_rows="first n", scale_pe=False, add_pe=True):
    d = table.shape[1]
    n = tokens.shape[-1]
    s = {"sqrt": math.sqrt(d), "inverse sqrt": 1 / math.sqrt(d), "none": 1.0, "d": float(d)}[scale]
    rows = {"first n": pe[:n], "row n": pe[n] if n < len(pe) else None, "from 1": pe[1: n + 1]}[pe_rows]
    if rows is None or rows.shape[0] not in (n, d):
        raise ValueError("variant not defined here")
    x = table[tokens]
    if not add_pe:
        return s * x
    return s * (x + rows) if scale_pe else s * x + rows


INPUT_MISTAKES = [
    Mistake("scaling: you divided by sqrt(d_model) (or multiplied by 1/sqrt(d_model)); the embeddings are "
            "*multiplied* by sqrt(d_model)", lambda *a: _input_variant(*a, scale="inverse sqrt")),
    Mistake("the embeddings are not scaled: multiply table[tokens] by sqrt(d_model) before adding pe",
            lambda *a: _input_variant(*a, scale="none")),
    Mistake("you multiplied by d_model; the scale is its square root, sqrt(d_model)",
            lambda *a: _input_variant(*a, scale="d")),
    Mistake("you scaled the positional encoding too: only the embeddings are multiplied by sqrt(d_model), "
            "then pe is added as it is", lambda *a: _input_variant(*a, scale_pe=True)),
    Mistake("the positional encoding is missing from the result: the sum was computed but never assigned "
            "(a line like `x + pe[:n]` on its own changes nothing; write `x = x + pe[:n]`)",
            lambda *a: _input_variant(*a, add_pe=False)),
    Mistake("you added row n of pe to every position (pe[n]); the positions 0..n-1 need the first n rows, pe[:n]",
            lambda *a: _input_variant(*a, pe_rows="row n")),
    Mistake("positions start at 0: use rows 0..n-1 of pe (pe[:n]), not rows 1..n",
            lambda *a: _input_variant(*a, pe_rows="from 1")),
]


def _input_error_hint(args, error):
    tokens, table, pe = args
    if error not in ("ValueError", "IndexError"):       # not a shape or an index: the hint would mislead
        return ""
    if tokens.ndim == 2:
        return (f" (here tokens is a batch of shape {tokens.shape}: the sequence length is tokens.shape[-1], "
                "not len(tokens), and pe[:n] broadcasts over the batch)")
    return (f" (pe has shape {pe.shape}, one row for each of max_len = {pe.shape[0]} positions: add only its "
            f"first n rows, pe[:n], with n = tokens.shape[-1] = {tokens.shape[-1]})")


# ---------------------------------------------------------------------------------------------------
# q6: matching norms

STD_PROBES = [(2,), (8,), (32,), (64,), (100,), (512,), (1024,)]


def _std_probes(seed):
    rng = np.random.default_rng([seed, 3, 6])
    return [*STD_PROBES, *((2 * int(rng.integers(2, 4096)),) for _ in range(2))]

STD_MISTAKES = [
    Mistake("that is tensor2tensor's d_model^(-1/2), which gives sqrt(d_model) E[token] a norm of about "
            "sqrt(d_model); a PE row is shorter, sqrt(d_model / 2), because each of the d_model / 2 pairs "
            "contributes sin^2 + cos^2 = 1", lambda d: d ** -0.5),
    Mistake("that is a variance, 1 / (2 d_model); the standard deviation is its square root",
            lambda d: 1 / (2 * d)),
    Mistake("scaling: you divided by sqrt(d_model) instead of multiplying; the embeddings are multiplied by "
            "sqrt(d_model), so their initial std must be small, and smaller for wider models",
            lambda d: math.sqrt(d / 2)),
    Mistake("the sqrt(d_model) scale is left out: std = 1 / sqrt(2) makes E[token] itself as long as a PE row, "
            "but the input is sqrt(d_model) E[token]", lambda d: 2 ** -0.5),
    Mistake("the norm of a PE row is sqrt(d_model / 2), not sqrt(d_model) / 2: each of the d_model / 2 pairs "
            "adds sin^2 + cos^2 = 1 to the squared norm", lambda d: 1 / (2 * math.sqrt(d))),
]


# ---------------------------------------------------------------------------------------------------
# q7: what the layer after a concatenation sees (one choice)

CONCAT_OPTIONS = {
    "a": "[x; p] W = x W_x + p W_p: the first layer adds a token part and a position part, with separate "
         "maps, so after it the two are mixed just as with addition",
    "b": "only the input keeps them in separate dimensions: the first linear layer already returns the sum "
         "x W_x + p W_p, so a layer that reads its output sees the two mixed; with residual connections later "
         "layers also receive the input [x; p] itself, but every layer adds its output to all of the stream's "
         "dimensions, so its two halves no longer hold tokens and positions apart either",
    "c": "W_p is trained like any other weight: nothing multiplies the position part by zero, and it "
         "reaches the output as p W_p",
    "d": "(x + p) W is the special case W_x = W_p = W (tied blocks); in general the blocks differ, so the "
         "result is x W_x + p W_p, not (x + p) W",
}

# ---------------------------------------------------------------------------------------------------
# q8: how much longer a scaled token vector is than a PE row (PyTorch's N(0, 1), d_model = 512)

Q8_D_MODEL = 512


def norm_ratio():
    """sqrt(E |sqrt(d) e|^2) / |PE(pos)| with e ~ N(0, 1)^d: sqrt(d * d) / sqrt(d / 2) = sqrt(2 d)."""
    token = math.sqrt(Q8_D_MODEL * Q8_D_MODEL * 1.0)
    position = math.sqrt(Q8_D_MODEL / 2)
    return token / position


# A value estimated with random numbers (as the question suggests) passes within Q8_WITHIN of the ratio: by the
# rule for numbers a single number may be off by twice the precision times its size.
Q8_WITHIN = 0.05
Q8_PRECISION = Q8_WITHIN / 2


def q8_margin() -> str:
    """The sentence of q8's text on the margin, from the constant its check uses."""
    return (f"An estimate from random numbers passes when it is within {Q8_WITHIN:.0%} of the ratio (average "
            "over many token vectors to get there: one vector alone can miss by more).")

# The messages point at the step that went wrong without giving the computation away.
Q8_MISTAKES = [
    (lambda: math.sqrt(Q8_D_MODEL),
     "sqrt(d_model) is the spread of one scaled entry, not the length of the whole scaled vector: how do the "
     "d_model entries add up in its squared norm?"),
    (lambda: math.sqrt(Q8_D_MODEL / 2), "that is the length of a PE row on its own; the question asks how many "
                                        "times longer the scaled token vector is"),
    (lambda: float(Q8_D_MODEL), "that is the length of the scaled token vector on its own; the question asks for "
                                "its ratio to the length of a PE row"),
    (lambda: norm_ratio() ** 2, "that compares squared norms; the question asks for the ratio of the lengths"),
    (lambda: math.sqrt(2), "that is the ratio with tensor2tensor's small embeddings; PyTorch's nn.Embedding "
                           "draws its entries from N(0, 1)"),
    (lambda: 1.0, "with N(0, 1) entries and the sqrt(d_model) scale the token vector is far longer than a PE "
                  "row; they match only with the std of question 6"),
]

# ---------------------------------------------------------------------------------------------------


def _shapes(args):
    return ", ".join(f"<array {a.shape}>" if isinstance(a, np.ndarray) else repr(a) for a in args)


EXERCISES = ExerciseSet("ch03", "Addition vs concatenation", [
    FunctionQuestion(qid="q1", title="Parameters of the first projection", name="projection_params", points=2,
                     probes=_param_probes, reference=combining.projection_params,
                     mistakes=PARAM_MISTAKES, compare=_compare_int,
                     describe_args=lambda a: ", ".join(map(repr, a))),
    FunctionQuestion(qid="q2", title="The concatenated input", name="concat_inputs", points=1,
                     probes=_concat_probes, reference=combining.concat_inputs, mistakes=CONCAT_MISTAKES,
                     compare=_compare_concat, describe_args=_shapes, error_hint=_concat_error_hint),
    FunctionQuestion(qid="q3", title="The same projection as a sum", name="sum_of_projections", points=2,
                     probes=_projection_probes, reference=combining.sum_of_projections,
                     mistakes=PROJECTION_MISTAKES, describe_args=_shapes, error_hint=_projection_error_hint,
                     forbidden=CONCATENATIONS, unsplit=("w",), forbidden_message=BUILT_CONCATENATION,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="projection")),
    FunctionQuestion(qid="q4", title="The four attention terms", name="logit_terms", points=2,
                     probes=_terms_probes, reference=four_terms, mistakes=TERMS_MISTAKES,
                     compare=_compare_terms, describe_args=_shapes,
                     error_hint=lambda args, error: (" (queries and keys are both (n, d_k): a matrix of dot "
                                                     "products is queries @ keys.T, e.g. (x @ w_q) @ (p @ w_k).T)"
                                                     if error == "ValueError" else "")),
    FunctionQuestion(qid="q5", title="The scaled input", name="scaled_inputs", points=2,
                     probes=_input_probes, reference=combining.scaled_inputs, mistakes=INPUT_MISTAKES,
                     describe_args=_shapes, error_hint=_input_error_hint,
                     compare=lambda got, expected, args: describe_mismatch(got, expected, what="input")),
    FunctionQuestion(qid="q6", title="Matching norms", name="matching_init_std", points=1,
                     probes=_std_probes, reference=lambda d_model: combining.matching_init_std(d_model),
                     mistakes=STD_MISTAKES, compare=lambda got, expected, args: compare_number(got, expected),
                     describe_args=lambda a: f"d_model={a[0]}"),
    ChoiceQuestion(qid="q7", title="What the layer after a concatenation sees", name="after_concatenation",
                   points=1, answer="a", options=CONCAT_OPTIONS, single=True),
    ValueQuestion(qid="q8", title="How loud are the tokens?", name="norm_ratio", points=1,
                  expected=norm_ratio, mistakes=Q8_MISTAKES, precision=Q8_PRECISION),
])
