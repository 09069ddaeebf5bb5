"""Grader tests of exercise set ch05: realistic wrong answers are named on every seed, other right answers pass
(the three-way basics, solution full marks and untouched zero, are in test_checks_all)."""


from posenc.exercises import load_set
from posenc.book import mistakes
from tests.conftest import with_submission

SET_ID = "ch05"
EXERCISES = load_set(SET_ID)


def grade(namespace, qid, code, seed=0):
    return EXERCISES.question(qid).grade(with_submission(namespace, code), seed)


# ---------------------------------------------------------------------------------------------------
# Realistic wrong answers: {qid: {name: (code, words the message must contain)}}

T5 = """
import numpy as np
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    r = np.asarray(relative_position)
{head}
    max_exact = nb // 2
    ratio = np.maximum(n, max_exact) / max_exact
    far = np.minimum(max_exact + (np.log(ratio) / np.log(max_distance / max_exact) * (nb - max_exact)).astype(int), nb - 1)
    return first + np.where(n < max_exact, n, far)
"""
T5_HEAD = """
    if bidirectional:
        nb = num_buckets // 2
        first = np.where(r > 0, nb, 0)
        n = np.abs(r)
    else:
        nb = num_buckets
        first = np.zeros_like(r)
        n = np.maximum(-r, 0)"""


def t5_swap(old, new, head=T5_HEAD):
    """The right answer with one line changed."""
    code = T5.format(head=head)
    assert old in code, old
    return code.replace(old, new)


SLOPES = """
import numpy as np
def alibi_slopes(n_heads):
    power = 2 ** int(np.floor(np.log2(n_heads)))
    geometric = lambda n: 2.0 ** (-8.0 * np.arange(1, n + 1) / n)
{body}
"""

BIAS = """
import numpy as np
def t5_bias_matrix(table, n_queries, n_keys, bidirectional=True, max_distance=128):
{body}
"""

INDEX = """
import numpy as np
def shaw_index(n_queries, n_keys, max_distance):
    k = max_distance
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
{body}
"""

LOGITS = """
import numpy as np
def shaw_logits(q, k, key_table, max_distance):
    n, d = q.shape
    offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
{body}
"""

WRONG = {
    "q1": {
        "query minus key": (t5_swap("r = np.asarray(relative_position)", "r = -np.asarray(relative_position)"),
                            "sign of the offset"),
        "offset 0 in the future half": (t5_swap("np.where(r > 0, nb, 0)", "np.where(r >= 0, nb, 0)"),
                                        "off by one at offset 0"),
        "buckets not halved": (t5_swap("nb = num_buckets // 2", "nb = num_buckets"), "splits the buckets in two"),
        "no cap": (t5_swap(", nb - 1)\n", ", 10 ** 9)\n"), "capped"),
        "cap at nb": (t5_swap(", nb - 1)\n", ", nb)\n"), "off by one in the cap"),
        "log of max_distance": (t5_swap("np.log(max_distance / max_exact)", "np.log(max_distance)"),
                                "log(max_distance / max_exact)"),
        "rounded": (t5_swap(").astype(int)", ").round().astype(int)"), "truncated"),
        "causal uses |r|": (t5_swap("n = np.maximum(-r, 0)", "n = np.abs(r)"), "only the past counts"),
        "causal future distance": (t5_swap("n = np.maximum(-r, 0)", "n = np.maximum(r, 0)"), "sign of the offset"),
        "causal halved": (t5_swap("        nb = num_buckets\n", "        nb = num_buckets // 2\n"),
                          "do not halve them"),
        "max_exact forgotten": (t5_swap("np.minimum(max_exact + (", "np.minimum(0 + ("), "starts where the exact"),
        "integer ratio": (t5_swap("np.maximum(n, max_exact) / max_exact", "np.maximum(n, max_exact) // max_exact"),
                          "integer division"),
        "max_exact before halving": (t5_swap("    max_exact = nb // 2", "    max_exact = num_buckets // 2"),
                                     "before halving"),
        "bidirectional ignored": (t5_swap("    if bidirectional:", "    if True:"), "bidirectional=False is ignored"),
        "always causal": (t5_swap("    if bidirectional:", "    if False:"), "bidirectional=True is ignored"),
        "a list": ("""
import math
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return [0 for r in relative_position]""", "return a numpy array"),
        "float buckets": (t5_swap("return first + np.where", "return 1.0 * first + np.where"), "return integers"),
        "log bucket plus one": (t5_swap("np.minimum(max_exact + (", "np.minimum(max_exact + 1 + ("), "you added 1"),
        "floor of x + 1e-3": (t5_swap(").astype(int), nb - 1)", " + 1e-3).astype(int), nb - 1)"), "offsets are wrong"),
        "writes into its input": (t5_swap("    r = np.asarray(relative_position)\n",
                                          "    r = np.asarray(relative_position)\n    r *= 1\n"
                                          "    relative_position[...] = 0\n"), "changed its input"),
    },
    "q2": {
        "h from zero": (SLOPES.format(body="    return 2.0 ** (-8.0 * np.arange(n_heads) / n_heads)"), "from h = 1"),
        "formula for every n": (SLOPES.format(body="    return geometric(n_heads)"), "not a power of two"),
        "halvings": (SLOPES.format(body="    return 0.5 ** np.arange(1, n_heads + 1)"), "ignores the number of heads"),
        "sorted": (SLOPES.format(body="""
    s = geometric(power)
    if power < n_heads:
        s = np.concatenate([s, geometric(2 * power)[0::2][: n_heads - power]])
    return np.sort(s)[::-1]"""), "appended"),
        "next power of two": (SLOPES.format(body="""
    if power < n_heads:
        power *= 2
    return geometric(power)[:n_heads]"""), "largest power of two below"),
        "odd slopes of 2c": (SLOPES.format(body="""
    s = geometric(power)
    if power < n_heads:
        s = np.concatenate([s, geometric(2 * power)[1::2][: n_heads - power]])
    return s"""), "already in the list"),
        "last ones": (SLOPES.format(body="""
    s = geometric(power)
    extra = n_heads - power
    if extra:
        s = np.concatenate([s, geometric(2 * power)[0::2][-extra:]])
    return s"""), "not the last ones"),
        "a list": (SLOPES.format(body="    return [2.0 ** (-8.0 * h / n_heads) for h in range(1, n_heads + 1)]"),
                   "return a numpy array"),
        "positive exponent": (SLOPES.format(body="    return 2.0 ** (8.0 * np.arange(1, n_heads + 1) / n_heads)"),
                              "exponent is negative"),
        "h + 1": (SLOPES.format(body="    return 2.0 ** (-8.0 * (np.arange(1, n_heads + 1) + 1) / n_heads)"),
                  "you used h + 1"),
        "round(log2 n)": (SLOPES.format(body="""
    power = 2 ** int(round(np.log2(n_heads)))
    s = geometric(power)
    if power < n_heads:
        s = np.concatenate([s, geometric(2 * power)[0::2][: n_heads - power]])
    return s"""), "round(log2 n)"),
        "off by 3e-4": (SLOPES.format(body="""
    s = geometric(power)
    if power < n_heads:
        s = np.concatenate([s, geometric(2 * power)[0::2][: n_heads - power]])
    return s * (1 + 3e-4)"""), ") has slope "),
    },
    "q3": {
        "a round trip through the caller's table": (BIAS.format(body="""
    table[0] += 1
    table[0] -= 1
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, bidirectional, table.shape[0], max_distance)], (2, 0, 1))"""),
                                                    "a rounding error's size: a round trip such as"),
        "i minus j": (BIAS.format(body="""
    offsets = np.arange(n_queries)[:, None] - np.arange(n_keys)[None, :]
    return np.transpose(table[t5_bucket(offsets, bidirectional, table.shape[0], max_distance)], (2, 0, 1))"""),
                      "future and the past swapped"),
        "distance only": (BIAS.format(body="""
    offsets = np.abs(np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None])
    return np.transpose(table[t5_bucket(-offsets, bidirectional, table.shape[0], max_distance)], (2, 0, 1))"""),
                          "sign of j - i matters"),
        "default bucket count": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, bidirectional, max_distance=max_distance)], (2, 0, 1))"""),
                                 "table.shape[0]"),
        "bidirectional dropped": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, num_buckets=table.shape[0], max_distance=max_distance)], (2, 0, 1))"""),
                                  "bidirectional=False is not passed"),
        "max_distance dropped": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, bidirectional, table.shape[0])], (2, 0, 1))"""),
                                 "max_distance is not passed"),
        "heads last": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return table[t5_bucket(offsets, bidirectional, table.shape[0], max_distance)]"""), "heads come first"),
        "all axes reversed": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return table[t5_bucket(offsets, bidirectional, table.shape[0], max_distance)].T"""), ".T reverses all three axes"),
        "num_buckets and max_distance swapped": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, bidirectional, max_distance, table.shape[0])], (2, 0, 1))"""),
                                                 "t5_bucket's third argument"),
        "num_buckets passed as bidirectional": (BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, table.shape[0], bidirectional, max_distance)], (2, 0, 1))"""),
                                                "num_buckets"),
    },
    "q4": {
        "i minus j": (INDEX.format(body="    return np.clip(-offsets, -k, k) + k"), "transposed"),
        "no shift": (INDEX.format(body="    return np.clip(offsets, -k, k)"), "negative index"),
        "distance": (INDEX.format(body="    return np.clip(np.abs(offsets), 0, k)"), "direction matters"),
        "clip at k - 1": (INDEX.format(body="    return np.clip(offsets, -k, k - 1) + k"), "off by one"),
        "clip inside": (INDEX.format(body="    return np.clip(offsets, -k + 1, k - 1) + k"), "off by one"),
        "modulo": (INDEX.format(body="    return (offsets + k) % (2 * k + 1)"), "saturate"),
        "shifted by k - 1": (INDEX.format(body="    return np.clip(offsets, -k, k) + k - 1"), "not + k - 1"),
        "floats": (INDEX.format(body="    return np.clip(offsets, -k, k).astype(float) + k"), "return integers"),
        "transposed shape": (INDEX.format(body="    return (np.clip(offsets, -k, k) + k).T"), "expected"),
    },
    "q5": {
        "symmetric halves": ("distinct_biases = (28, 25)", "bucket 16"),
        "every bucket": ("distinct_biases = (32, 32)", "not every bucket is reached"),
        "every bucket in the decoder": ("distinct_biases = (27, 32)", "the last bucket starts at 113"),
        "offsets": ("distinct_biases = (99, 50)", "counts offsets"),
        "one side": ("distinct_biases = (14, 25)", "one side only"),
        "causal rule in the encoder": ("distinct_biases = (25, 25)", "causal rule"),
        "distances in the decoder": ("distinct_biases = (27, 50)", "counts distances"),
        "exact only in the decoder": ("distinct_biases = (27, 16)", "log-spaced"),
        "bidirectional rule in the decoder": ("distinct_biases = (27, 14)", "past half"),
        "a single number": ("distinct_biases = 27", "pair of whole numbers"),
        "a set": ("distinct_biases = {27, 25}", "the numbers are right, but a set has no order"),
        "a wrong set": ("distinct_biases = {28, 25}", "a set has no order"),
        "words": ("distinct_biases = ('twenty-seven', '25')", "whole number"),
    },
    "q6": {
        "untouched": (LOGITS.format(body="""
    index = np.clip(offsets, -max_distance, max_distance)
    return (q @ k.T + np.einsum("id,ijd->ij", q, key_table[index])) / np.sqrt(d)"""), "still there"),
        "sign flipped as well": (LOGITS.format(body="""
    index = np.clip(-offsets, -max_distance, max_distance) + max_distance
    return (q @ k.T + np.einsum("id,ijd->ij", q, key_table[index])) / np.sqrt(d)"""), "swaps the direction"),
        "abs as a fix": (LOGITS.format(body="""
    index = np.clip(np.abs(offsets), 0, max_distance) + max_distance
    return (q @ k.T + np.einsum("id,ijd->ij", q, key_table[index])) / np.sqrt(d)"""), "loses the direction"),
        "scaling moved": (LOGITS.format(body="""
    index = np.clip(offsets, -max_distance, max_distance) + max_distance
    return q @ k.T / np.sqrt(d) + np.einsum("id,ijd->ij", q, key_table[index])"""), "both terms"),
        "another wrong fix": (LOGITS.format(body="""
    index = np.clip(offsets, -max_distance, max_distance) + 1
    return (q @ k.T + np.einsum("id,ijd->ij", q, key_table[index % len(key_table)])) / np.sqrt(d)"""),
                              "keep looking"),
    },
}

def test_the_untouched_bug_is_not_named(exercise):
    """The find-the-bug question says the bug is still there, never what it is."""
    message = EXERCISES.question("q6").grade(exercise).message
    assert "still there" in message and "+ k" not in message and "negative" not in message, message


# ---------------------------------------------------------------------------------------------------
# Other right answers pass on every seed

RIGHT = {
    "q1": {
        "per offset, with math": ("""
import math
import numpy as np
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    def one(r):
        nb, first = (num_buckets // 2, num_buckets // 2 if r > 0 else 0) if bidirectional else (num_buckets, 0)
        n = abs(r) if bidirectional else max(-r, 0)
        exact = nb // 2
        if n < exact:
            return first + n
        return first + min(exact + int(math.log(n / exact) / math.log(max_distance / exact) * (nb - exact)), nb - 1)
    r = np.asarray(relative_position)
    return np.array([one(int(x)) for x in r.ravel()], dtype=int).reshape(r.shape)"""),
        "exact boundaries from another order of operations": ("""
import numpy as np
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    r = np.asarray(relative_position)
    nb = num_buckets // 2 if bidirectional else num_buckets
    first = np.where(r > 0, nb, 0) if bidirectional else np.zeros_like(r)
    n = np.abs(r) if bidirectional else np.maximum(-r, 0)
    max_exact = nb // 2
    ratio = np.maximum(n, max_exact) / max_exact
    spread = np.log(ratio) * ((nb - max_exact) / np.log(max_distance / max_exact))
    return first + np.where(n < max_exact, n, np.minimum(max_exact + spread.astype(int), nb - 1))"""),
        "torch, Hugging Face style": ("""
import math
import numpy as np
import torch
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_position = torch.as_tensor(np.asarray(relative_position))
    buckets = 0
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return (buckets + torch.where(is_small, relative_position, large)).numpy()"""),
    },
    "q2": {
        "float32 slopes": (SLOPES.format(body="""
    s = geometric(power)
    if power < n_heads:
        s = np.concatenate([s, geometric(2 * power)[0::2][: n_heads - power]])
    return s.astype(np.float32)""")),
        "recursive, like the official code": ("""
import math
import numpy as np
def alibi_slopes(n_heads):
    def power_of_two(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n_heads).is_integer():
        return np.array(power_of_two(n_heads))
    c = 2 ** math.floor(math.log2(n_heads))
    return np.array(power_of_two(c) + list(alibi_slopes(2 * c))[0::2][: n_heads - c])"""),
    },
    "q6": {
        "float32": """
import numpy as np
def shaw_logits(q, k, key_table, max_distance):
    q, k, key_table = q.astype(np.float32), k.astype(np.float32), key_table.astype(np.float32)
    n, d = q.shape
    offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
    index = np.clip(offsets, -max_distance, max_distance) + max_distance
    relative = np.einsum("id,ijd->ij", q, key_table[index])
    return (q @ k.T + relative) / np.sqrt(np.float32(d))
""",
    },
    "q4": {
        "torch": ("""
import torch
def shaw_index(n_queries, n_keys, max_distance):
    r = torch.arange(n_keys)[None, :] - torch.arange(n_queries)[:, None]
    return r.clamp(-max_distance, max_distance) + max_distance"""),
    },
    "q3": {
        # q3 is graded on its own: the check runs it with a correct t5_bucket, whatever the student's q1 says
        "own bucket rule with a slip": (t5_swap("np.where(r > 0, nb, 0)", "np.where(r >= 0, nb, 0)") + BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, bidirectional, table.shape[0], max_distance)], (2, 0, 1))""")),
        "bucket rule still the placeholder": ("""
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    raise NotImplementedError  # your code here
""" + BIAS.format(body="""
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.transpose(table[t5_bucket(offsets, bidirectional, table.shape[0], max_distance)], (2, 0, 1))""")),
    },
    "q5": {"numpy integers in a list": ("import numpy as np\ndistinct_biases = [np.int64(27), np.int64(25)]"),
           "numbers typed as strings": "distinct_biases = ('27', '25')"},
}

def test_the_diagnoses_are_listed_for_the_common_mistakes_page():
    listed = mistakes.messages([SET_ID])
    for question in EXERCISES.questions:
        for mistake in question.mistakes:
            assert (mistake.message if hasattr(mistake, "message") else mistake[1]) in listed, question.qid


def test_student_errors_are_reported_not_raised(solution):
    result = grade(solution, "q4", "def shaw_index(n_queries, n_keys, max_distance):\n    return undefined + 1")
    assert result.points == 0 and "NameError" in result.message


def test_q3_with_the_placeholder_of_q1_is_graded_on_its_own(exercise, solution):
    """Question 3 names neither question 1's placeholder nor its mistakes: it is graded with a correct
    t5_bucket standing in, and says so."""
    namespace = dict(exercise, t5_bias_matrix=solution["t5_bias_matrix"])
    result = EXERCISES.question("q3").grade(namespace)
    assert result.passed and "question 1" in result.message, result.line()
    assert namespace["t5_bucket"] is exercise["t5_bucket"], "the stand-in must be removed after the check"


def test_a_boundary_of_the_log_part_is_really_exact():
    """The tolerance of q1 is for exact boundaries: with the defaults, n = 64 gives log part 6 exactly
    (log(64 / 8) / log(128 / 8) * 8 = 3/4 * 8), and the float64 order of operations decides the side."""
    import numpy as np
    spread = np.log(64 / 8) * ((16 - 8) / np.log(128 / 8))
    assert spread != 6.0 and abs(spread - 6.0) < 1e-12


def test_the_students_warnings_are_attributed_not_printed(solution, capsys):
    """A warning raised by the student's own code (log(0) in t5_bucket) is reported as theirs in the line
    of feedback, and nothing is printed by warnings."""
    code = T5.format(head=T5_HEAD).replace("ratio = np.maximum(n, max_exact) / max_exact",
                                           "ratio = np.where(n < max_exact, n, n) / max_exact")
    result = grade(solution, "q1", code)
    assert result.passed and "your own code warned" in result.message and "divide by zero" in result.message
    assert capsys.readouterr().err == ""


def test_the_numbers_in_q5_feedback_hold():
    """The feedback of q5 quotes bucket numbers and distances: computed here from the library's rule."""
    import numpy as np
    import torch
    from posenc.exercises.checks import ch05
    from posenc.lib.relative import t5_bucket

    distances = torch.arange(0, 400)
    causal = t5_bucket(-distances, False)
    bidirectional = t5_bucket(torch.arange(-400, 401), True)
    assert int(distances[causal == 31].min()) == 113                       # "the last bucket starts at 113"
    assert 16 not in bidirectional.tolist()                                # "no key ever lands in bucket 16"
    assert bool((causal[:16] == distances[:16]).all()) and len(set(causal[16:50].tolist())) > 1   # "16 exact buckets"
    assert ch05.Q5_LENGTH - 1 == 49                                        # "offsets stop at ±49"
    text = " ".join(message for _, message in ch05.PREDICTION_MISTAKES)
    assert "starts at 113" in text and "bucket 16" in text and "16 exact buckets" in text
    assert np.isclose(np.log(64 / 8) / np.log(128 / 8) * 8, 6)             # the boundary quoted in q1's text
