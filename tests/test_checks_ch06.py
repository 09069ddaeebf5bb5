"""Grader tests of exercise set ch06: every realistic wrong answer scores zero with its own diagnosis, on 30
grader seeds (the three-way basics, full marks and zero, are in test_checks_all)."""


from posenc.exercises import load_set
from posenc.exercises.framework import PASSED
from tests.conftest import with_submission

SET_ID = "ch06"
EXERCISES = load_set(SET_ID)

# ---------------------------------------------------------------------------------------------------
# q1: rope(x, positions, layout, base)

ROPE = """
import numpy as np
def rope(x, positions, layout="interleaved", base=10000.0):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
{body}
"""

TURN = """
    if layout == "interleaved":
        first, second = np.arange(0, d, 2), np.arange(1, d, 2)
    else:
        first, second = np.arange(d // 2), np.arange(d // 2, d)
    out = np.empty_like(x)
    out[:, first] = x[:, first] * np.cos(angle) - x[:, second] * np.sin(angle)
    out[:, second] = x[:, first] * np.sin(angle) + x[:, second] * np.cos(angle)
    return out"""


def rope_code(body):
    return ROPE.format(body=body)


RIGHT_ANGLE = """
    theta = base ** (-2 * np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta"""

Q1_WRONG = {
    "dimension index in the exponent": (rope_code("""
    theta = base ** (-2 * np.arange(0, d, 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta""" + TURN), "pair index vs dimension index"),
    "i/d exponent": (rope_code("""
    theta = base ** (-np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta""" + TURN), "i/d instead of 2i/d"),
    "base ignored": (rope_code("""
    theta = 10000.0 ** (-2 * np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta""" + TURN), "base argument is ignored"),
    "clockwise": (rope_code(RIGHT_ANGLE + TURN.replace("* np.cos(angle) - x", "* np.cos(angle) + x").replace(
        "x[:, first] * np.sin(angle) + x", "-x[:, first] * np.sin(angle) + x")), "wrong way"),
    "always interleaved": (rope_code(RIGHT_ANGLE + """
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out"""), "layouts mixed"),
    "layouts swapped": (rope_code(RIGHT_ANGLE + TURN.replace('if layout == "interleaved"', 'if layout == "half"')),
                        "layouts mixed"),
    "HF formula with repeat in the half layout": (rope_code(RIGHT_ANGLE + """
    if layout == "half":
        full = np.repeat(angle, 2, axis=-1)
        rotated = np.concatenate([-x[:, d // 2:], x[:, :d // 2]], axis=-1)
        return x * np.cos(full) + rotated * np.sin(full)""" + TURN), "duplication"),
    "interleaved via the HF formula with tile": (rope_code(RIGHT_ANGLE + """
    if layout == "interleaved":
        full = np.concatenate([angle, angle], axis=-1)
        rotated = np.empty_like(x)
        rotated[:, 0::2], rotated[:, 1::2] = -x[:, 1::2], x[:, 0::2]
        return x * np.cos(full) + rotated * np.sin(full)""" + TURN), "duplication"),
    "positions ignored": (rope_code("""
    theta = base ** (-2 * np.arange(d // 2) / d)
    angle = np.arange(len(x))[:, None] * theta""" + TURN), "positions argument is ignored"),
    "first coordinate overwritten": (rope_code(RIGHT_ANGLE + """
    first, second = (np.arange(0, d, 2), np.arange(1, d, 2)) if layout == "interleaved" else (
        np.arange(d // 2), np.arange(d // 2, d))
    out = x.copy()
    out[:, first] = out[:, first] * np.cos(angle) - out[:, second] * np.sin(angle)
    out[:, second] = out[:, first] * np.sin(angle) + out[:, second] * np.cos(angle)
    return out"""), "overwritten"),
    "positive exponent": (rope_code("""
    theta = base ** (2 * np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta""" + TURN), "sign is lost"),
    "float32 angles": (rope_code("""
    theta = (base ** (-2 * np.arange(d // 2) / d)).astype(np.float32)
    angle = (np.asarray(positions).astype(np.float32)[:, None] * theta).astype(np.float64)""" + TURN),
                       "angles in float32"),
    "positions + 1": (rope_code("""
    theta = base ** (-2 * np.arange(d // 2) / d)
    angle = (np.asarray(positions, dtype=np.float64)[:, None] + 1) * theta""" + TURN), "shifted by one"),
    "writes into x": ("""
import numpy as np
def rope(x, positions, layout="interleaved", base=10000.0):
    d = x.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta
    first, second = (np.arange(0, d, 2), np.arange(1, d, 2)) if layout == "interleaved" else (
        np.arange(d // 2), np.arange(d // 2, d))
    a, b = x[:, first].astype(np.float64), x[:, second].astype(np.float64)
    x[:, first] = a * np.cos(angle) - b * np.sin(angle)
    x[:, second] = a * np.sin(angle) + b * np.cos(angle)
    return x.astype(np.float64)
""", "changed its input `x` in place"),
    "angles in the input's dtype": ("""
import numpy as np
def rope(x, positions, layout="interleaved", base=10000.0):
    d = x.shape[-1]
    theta = (base ** (-2 * np.arange(d // 2) / d)).astype(x.dtype)
    angle = np.asarray(positions).astype(x.dtype)[:, None] * theta""" + TURN + """
""", "angles in low precision"),
}

# ---------------------------------------------------------------------------------------------------
# q2: to_half_layout(weight, n_heads)

CONVERT = """
import numpy as np
def to_half_layout(weight, n_heads):
    weight = np.asarray(weight)
    d_head = weight.shape[0] // n_heads
{body}
"""

Q2_WRONG = {
    "unchanged": (CONVERT.format(body="    return weight.copy()"), "porting bug"),
    "inverse permutation": (CONVERT.format(body="""
    within = np.empty(d_head, dtype=int)
    within[0::2], within[1::2] = np.arange(d_head // 2), np.arange(d_head // 2, d_head)
    return weight[np.concatenate([h * d_head + within for h in range(n_heads)])]"""), "inverse permutation"),
    "heads permuted as one block": (CONVERT.format(body="""
    rows = weight.shape[0]
    return weight[np.concatenate([np.arange(0, rows, 2), np.arange(1, rows, 2)])]"""), "within each head"),
    "permuted in place": (CONVERT.format(body="""
    within = np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])
    weight[:] = weight[np.concatenate([h * d_head + within for h in range(n_heads)])]
    return weight"""), "changed its input `weight` in place"),
    "columns instead of rows": (CONVERT.format(body="""
    within = np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])
    return weight[:, np.concatenate([h * d_head + within for h in range(n_heads)])]"""), "permuted columns"),
}

# ---------------------------------------------------------------------------------------------------
# q3: rope_logits(x, W_q, W_k, base); the submissions use the solution's own `rope` from q1

LOGITS = """
import numpy as np
def rope_logits(x, W_q, W_k, base=10000.0):
    positions = np.arange(len(x))
{body}
"""

Q3_WRONG = {
    "dimension index in the exponent": (LOGITS.format(body="""
    d = W_q.shape[0]
    theta = base ** (-2 * np.arange(0, d, 2) / d)
    angle = positions[:, None] * theta

    def turn(v):
        out = np.empty_like(v)
        out[:, 0::2] = v[:, 0::2] * np.cos(angle) - v[:, 1::2] * np.sin(angle)
        out[:, 1::2] = v[:, 0::2] * np.sin(angle) + v[:, 1::2] * np.cos(angle)
        return out
    return turn(x @ W_q.T) @ turn(x @ W_k.T).T"""), "pair index vs dimension index"),
    "only q turned": (LOGITS.format(body="""
    q = rope(x @ W_q.T, positions, "interleaved", base)
    return q @ (x @ W_k.T).T"""), "rotating only q"),
    "only k turned": (LOGITS.format(body="""
    k = rope(x @ W_k.T, positions, "interleaved", base)
    return (x @ W_q.T) @ k.T"""), "rotating only k"),
    "turned before the projection": (LOGITS.format(body="""
    x = rope(x, positions, "interleaved", base)
    return (x @ W_q.T) @ (x @ W_k.T).T"""), "rotating before the projection"),
    "no rotation": (LOGITS.format(body="    return (x @ W_q.T) @ (x @ W_k.T).T"), "nothing is turned"),
    "scaled": (LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, base=base), rope(x @ W_k.T, positions, base=base)
    return q @ k.T / np.sqrt(q.shape[1])"""), "sqrt(d_head)"),
    "half layout": (LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, "half", base), rope(x @ W_k.T, positions, "half", base)
    return q @ k.T"""), "interleaved layout"),
    "transposed": (LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, base=base), rope(x @ W_k.T, positions, base=base)
    return k @ q.T"""), "transposed"),
    "x @ W_q": (LOGITS.format(body="""
    q, k = rope(x @ W_q, positions, base=base), rope(x @ W_k, positions, base=base)
    return q @ k.T"""), "nn.Linear"),
    "clockwise": (LOGITS.format(body="""
    q, k = rope(x @ W_q.T, -positions, base=base), rope(x @ W_k.T, -positions, base=base)
    return q @ k.T"""), "wrong way"),
    "base ignored": (LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions), rope(x @ W_k.T, positions)
    return q @ k.T"""), "pass base on to rope"),
    "own rope clockwise, and transposed": ("""
import numpy as np
def rope(x, positions, layout="interleaved", base=10000.0):
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    angle = -np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2 * np.arange(d // 2) / d)
    out = np.empty_like(x)
    out[:, 0::2] = x[:, 0::2] * np.cos(angle) - x[:, 1::2] * np.sin(angle)
    out[:, 1::2] = x[:, 0::2] * np.sin(angle) + x[:, 1::2] * np.cos(angle)
    return out
""" + LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, base=base), rope(x @ W_k.T, positions, base=base)
    return (q @ k.T).T"""), "the matrix is transposed"),
    "own rope placeholder, scaled": ("""
def rope(x, positions, layout="interleaved", base=10000.0):
    raise NotImplementedError  # your code here
""" + LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, base=base), rope(x @ W_k.T, positions, base=base)
    return q @ k.T / np.sqrt(W_q.shape[0])"""), "divided by sqrt(d_head)"),
    "causal mask": (LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, base=base), rope(x @ W_k.T, positions, base=base)
    logits = q @ k.T
    logits[np.triu_indices(len(x), 1)] = -np.inf
    return logits"""), "causal mask"),
}

# ---------------------------------------------------------------------------------------------------
# q4: the first position at which bfloat16 angles go wrong by more than 0.1 rad

Q4_ANGLES = """
import torch
theta = torch.tensor(10000.0, dtype=torch.float64) ** (-2 * torch.arange(32, dtype=torch.float64) / 64)
every = torch.arange(4096)
exact = every[:, None].double() * theta
"""

Q4_WRONG = {
    "float16": (Q4_ANGLES + """
low = every.to(torch.float16)[:, None] * theta.to(torch.float16)
first_bad_position = int(torch.nonzero((low.double() - exact).abs().amax(1) > 0.25)[0])
""", "float16's answer"),
    "theta rounded, product in float64": (Q4_ANGLES + """
low = every[:, None].double() * theta.to(torch.bfloat16).double()
first_bad_position = int(torch.nonzero((low - exact).abs().amax(1) > 0.25)[0])
""", "product pos * theta_i are rounded too"),
    "pair 0 only": (Q4_ANGLES + """
low = every.to(torch.bfloat16) * theta[0].to(torch.bfloat16)
first_bad_position = int(torch.nonzero((low.double() - exact[:, 0]).abs() > 0.25)[0])
""", "look at every pair"),
    "positions from 1": (Q4_ANGLES + """
every = torch.arange(1, 4097)
exact = every[:, None].double() * theta
low = every.to(torch.bfloat16)[:, None] * theta.to(torch.bfloat16)
first_bad_position = int(torch.nonzero((low.double() - exact).abs().amax(1) > 0.25)[0])
""", "off by one"),
    "threshold a tenth": (Q4_ANGLES + """
low = every.to(torch.bfloat16)[:, None] * theta.to(torch.bfloat16)
first_bad_position = int(torch.nonzero((low.double() - exact).abs().amax(1) > 0.025)[0])
""", "0.025 rad"),
    "dimension index": ("""
import torch
theta = 10000.0 ** (-2 * torch.arange(0, 64, 2, dtype=torch.float64) / 64)
every = torch.arange(4096)
low = every.to(torch.bfloat16)[:, None] * theta.to(torch.bfloat16)
first_bad_position = int(torch.nonzero((low.double() - every[:, None].double() * theta).abs().amax(1) > 0.25)[0])
""", "pair index vs dimension index"),
    "copied from the chapter": ("first_bad_position = 40", "the chapter's answer"),
}

# ---------------------------------------------------------------------------------------------------
# q5 and q6

Q5_WRONG = {
    "values too": ('porting_choice = "b"', "W_V never meets the rotation"),
    "nothing": ('porting_choice = "c"', "permutes nothing"),
    "columns": ('porting_choice = "d"', "columns of W_Q"),
    "upper case wrong": ('porting_choice = "C"', "permutes nothing"),
    "two letters": ('porting_choice = "ab"', "exactly one option"),
}

CACHE = """
import numpy as np
def next_logits(q_new, k_new, cached_keys, base=10000.0):
    d = q_new.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)

    def turn(vector, pos):
        angle = pos * theta
        a, b = vector[0::2], vector[1::2]
        turned = np.empty(d)
        turned[0::2] = a * np.cos(angle) - b * np.sin(angle)
        turned[1::2] = a * np.sin(angle) + b * np.cos(angle)
        return turned

{body}
"""

Q6_WRONG = {
    "the original code": (CACHE.format(body="""
    position = len(cached_keys) - 1
    keys = np.vstack([cached_keys, turn(k_new, position)])
    return keys @ turn(q_new, position)"""), "the bug is still there"),
    "position 0": (CACHE.format(body="""
    keys = np.vstack([cached_keys, turn(k_new, 0)])
    return keys @ turn(q_new, 0)"""), "not at position 0"),
    "cache turned again": (CACHE.format(body="""
    t = len(cached_keys)
    keys = np.vstack([cached_keys, k_new])
    keys = np.array([turn(key, pos) for pos, key in enumerate(keys)]).reshape(t + 1, d)
    return keys @ turn(q_new, t)"""), "turning them again"),
    "base ignored": (CACHE.format(body="""
    t = len(cached_keys)
    theta10k = 10000.0 ** (-2 * np.arange(d // 2) / d)
    angle = t * theta10k
    def turn10k(v):
        out = np.empty(d)
        out[0::2] = v[0::2] * np.cos(angle) - v[1::2] * np.sin(angle)
        out[1::2] = v[0::2] * np.sin(angle) + v[1::2] * np.cos(angle)
        return out
    return np.vstack([cached_keys, turn10k(k_new)]) @ turn10k(q_new)"""), "base argument is ignored"),
    "new key not turned": (CACHE.format(body="""
    t = len(cached_keys)
    return np.vstack([cached_keys, k_new]) @ turn(q_new, t)"""), "rotating only q"),
    "query not turned": (CACHE.format(body="""
    t = len(cached_keys)
    return np.vstack([cached_keys, turn(k_new, t)]) @ q_new"""), "rotating only k"),
}

WRONG = {"q1": Q1_WRONG, "q2": Q2_WRONG, "q3": Q3_WRONG, "q4": Q4_WRONG, "q5": Q5_WRONG, "q6": Q6_WRONG}
def test_every_question_has_wrong_answers():
    assert set(WRONG) == {q.qid for q in EXERCISES.questions}


def test_float16_inputs_with_float64_angles_pass(solution):
    code = """
import numpy as np
_float64_rope = rope
def rope(x, positions, layout="interleaved", base=10000.0):
    return _float64_rope(x, positions, layout, base).astype(np.asarray(x).dtype)
"""
    assert EXERCISES.question("q1").grade(with_submission(solution, code), 3).status == PASSED


def test_a_torch_solution_of_q4_and_an_integer_type_pass(solution):
    namespace = with_submission(solution, "import numpy as np\nfirst_bad_position = np.int64(first_bad_position)")
    assert EXERCISES.question("q4").grade(namespace).status == PASSED



# Other right answers, each passing on every seed (tests/test_checks_all.py).
RIGHT = {
    "q3": {"float32 (the rule for numbers)": LOGITS.format(body="""
    x, W_q, W_k = (np.asarray(a, dtype=np.float32) for a in (x, W_q, W_k))
    q, k = rope(x @ W_q.T, positions, "interleaved", base), rope(x @ W_k.T, positions, "interleaved", base)
    return q @ k.T"""),
           "own rope still the placeholder": """
def rope(x, positions, layout="interleaved", base=10000.0):
    raise NotImplementedError  # your code here
""" + LOGITS.format(body="""
    q, k = rope(x @ W_q.T, positions, "interleaved", base), rope(x @ W_k.T, positions, "interleaved", base)
    return q @ k.T""")},
    "q4": {"typed as a string": "first_bad_position = str(first_bad_position)"},
    "q6": {"float32 (the rule for numbers)": CACHE.format(body="""
    position = len(cached_keys)
    keys = np.vstack([cached_keys, turn(k_new, position)]).astype(np.float32)
    return keys @ turn(q_new, position).astype(np.float32)""")},
    "q5": {"upper case": 'porting_choice = "A"', "a list": 'porting_choice = ["a"]',
           "option a": 'porting_choice = "option a"', "in parentheses": 'porting_choice = "(a)"',
           "a sentence": 'porting_choice = "Option (A)"'},
}


def test_q3_says_it_was_graded_with_a_correct_rope(solution):
    code = "def rope(x, positions, layout='interleaved', base=10000.0):\n    raise NotImplementedError\n"
    result = EXERCISES.question("q3").grade(with_submission(solution, code))
    assert result.passed and "`rope` (question 1)" in result.message, result.line()


def test_the_plural_logits_take_a_plural_verb(solution):
    code = LOGITS.format(body="    return np.zeros((len(x), len(x))) + 0.5")
    message = EXERCISES.question("q3").grade(with_submission(solution, code)).message
    assert "the logits are wrong at index" in message and "logits is" not in message, message


def test_the_precision_claims_of_the_feedback_hold():
    """FLOAT32_ANGLES and LOW_PRECISION quote error sizes at positions in the thousands: computed here."""
    import numpy as np
    from posenc.exercises.checks import ch06

    positions = np.arange(1000, 5000)
    theta = 10000.0 ** (-2 * np.arange(32) / 64)
    exact = positions[:, None] * theta
    in_float32 = (positions.astype(np.float32)[:, None] * theta.astype(np.float32)).astype(np.float64)
    in_float16 = (positions.astype(np.float16)[:, None] * theta.astype(np.float16)).astype(np.float64)
    assert np.abs(in_float32 - exact).max() > 1e-4 and "more than 1e-4 rad" in ch06.FLOAT32_ANGLES
    assert np.abs(in_float16 - exact).max() > 1.0 and "off by radians" in ch06.LOW_PRECISION


def test_q1_states_the_precision_it_asks_for():
    import math

    from posenc.exercises.checks import ch06
    from tests.test_checks_all import _question_texts

    stated = f"$10^{{{round(math.log10(ch06.ROPE_PRECISION))}}}$"
    assert stated in _question_texts(SET_ID)["q1"] and "about precision itself" in _question_texts(SET_ID)["q1"]
