"""Realistic answers to exercise set ch04, graded on every seed by tests/test_checks_all.py
(WRONG = {qid: {name: (code, words its message must contain)}}, RIGHT = {qid: {name: code}}), and the
checks' robustness."""

from posenc.exercises import load_set
from posenc.exercises.framework import PASSED
from tests.conftest import with_submission

SET_ID = "ch04"
EXERCISES = load_set(SET_ID)


def grade(namespace, qid, code):
    return EXERCISES.question(qid).grade(with_submission(namespace, code))


# ---------------------------------------------------------------------------------------------------
# q1: the learned module

LEARNED_HEAD = """
import torch
from torch import nn
class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
"""

Q1_RIGHT = {
    "nn.Parameter, zero init": LEARNED_HEAD + """
        self.table = nn.Parameter(torch.zeros(max_len, d_model))
    def forward(self, x):
        return x + self.table[: x.size(1)]
""",
    "embedding lookup of positions": LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        positions = torch.arange(x.shape[1], device=x.device)
        return x + self.embedding(positions).unsqueeze(0)
""",
    "(1, max_len, d) parameter": LEARNED_HEAD + """
        self.pe = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
    def forward(self, x):
        return x + self.pe[:, : x.size(1)]
""",
}



Q1_WRONG = {
    "table registered as a buffer": (LEARNED_HEAD + """
        self.register_buffer("pe", torch.randn(max_len, d_model) * 0.02)
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "registered as a buffer"),
    "plain tensor attribute": (LEARNED_HEAD + """
        self.pe = torch.randn(max_len, d_model) * 0.02
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "plain tensor attribute"),
    "frozen parameter": (LEARNED_HEAD + """
        self.pe = nn.Parameter(torch.randn(max_len, d_model), requires_grad=False)
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "requires_grad=False"),
    "extra parameters": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
        self.mix = nn.Linear(d_model, d_model)
    def forward(self, x):
        return x + self.embedding.weight[: x.size(1)]
""", "exactly max_len * d_model"),
    "forgot to add": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        positions = self.embedding(torch.arange(x.size(1)))
        x + positions
        return x
""", "never added"),
    "returns the table only": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        return self.embedding(torch.arange(x.size(1)))
""", "table alone"),
    "pe[:, n] instead of pe[:, :n]": (LEARNED_HEAD + """
        self.pe = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
    def forward(self, x):
        return x + self.pe[:, x.size(1)]
""", "pe[:, n]"),
    "sequence-first code on batch-first input": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        seq_len = x.size(0)
        return x + self.embedding(torch.arange(seq_len)).unsqueeze(1)
""", "wrong broadcasting over the batch"),
    "positions from 1": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        return x + self.embedding(torch.arange(1, x.size(1) + 1))
""", "positions start at 0"),
    "detached table": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        return x + self.embedding.weight.data[: x.size(1)]
""", "no gradient reaches the table"),
    "numpy output": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
    def forward(self, x):
        return (x + self.embedding.weight[: x.size(1)]).detach().numpy()
""", "return a torch tensor"),
    "adds the table into the caller's x": (LEARNED_HEAD + """
        self.table = nn.Parameter(torch.zeros(max_len, d_model))
    def forward(self, x):
        x += self.table[: x.size(1)]
        return x
""", "forward changed its input `x` in place"),
    "a float64 table": (LEARNED_HEAD + """
        self.table = nn.Parameter(torch.zeros(max_len, d_model, dtype=torch.float64))
    def forward(self, x):
        return x + self.table[: x.size(1)]
""", "the next nn.Linear, whose weights are float32, raises"),
    "max_len + 1 rows for positions from 1": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len + 1, d_model)
    def forward(self, x):
        return x + self.embedding(torch.arange(1, x.size(1) + 1))
""", "positions start at 0"),
    "padding_idx=0": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model, padding_idx=0)
    def forward(self, x):
        return x + self.embedding(torch.arange(x.size(1)))
""", "that is nn.Embedding's padding_idx=0"),
    "dropout, as in PyTorch's tutorial": (LEARNED_HEAD + """
        self.embedding = nn.Embedding(max_len, d_model)
        self.dropout = nn.Dropout(p=0.1)
    def forward(self, x):
        return self.dropout(x + self.embedding.weight[: x.size(1)])
""", "that is dropout, which PyTorch's tutorial applies here"),
}



# ---------------------------------------------------------------------------------------------------
# q2: the sinusoidal module

SINUSOIDAL_HEAD = """
import posenc
import torch
from torch import nn
class SinusoidalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
"""

Q2_RIGHT = {
    "(1, max_len, d) buffer": SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model).unsqueeze(0), persistent=False)
    def forward(self, x):
        return x + self.pe[:, : x.size(1)]
""",
    "persistent=False buffer": SINUSOIDAL_HEAD + """
        self.register_buffer("table", posenc.sinusoidal_encoding_torch(max_len, d_model), persistent=False)
    def forward(self, x):
        n = x.shape[1]
        return x + self.table[:n].unsqueeze(0)
""",
}



Q2_WRONG = {
    "dropout, as in PyTorch's tutorial": (SINUSOIDAL_HEAD + """
        self.dropout = nn.Dropout(p=0.1)
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model))
    def forward(self, x):
        return self.dropout(x + self.pe[: x.size(1)])
""", "that is dropout"),
    "table as a parameter": (SINUSOIDAL_HEAD + """
        self.pe = nn.Parameter(posenc.sinusoidal_encoding_torch(max_len, d_model))
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "registered as a parameter"),
    "frozen parameter is still a parameter": (SINUSOIDAL_HEAD + """
        self.pe = nn.Parameter(posenc.sinusoidal_encoding_torch(max_len, d_model), requires_grad=False)
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "even with requires_grad=False it is still a parameter"),
    "plain attribute": (SINUSOIDAL_HEAD + """
        self.pe = posenc.sinusoidal_encoding_torch(max_len, d_model)
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "plain tensor attribute, not a buffer"),
    "sequence-first tutorial code": (SINUSOIDAL_HEAD + """
        pe = posenc.sinusoidal_encoding_torch(max_len, d_model).unsqueeze(1)   # (max_len, 1, d_model)
        self.register_buffer("pe", pe)
    def forward(self, x):
        return x + self.pe[: x.size(0)]
""", "wrong broadcasting over the batch"),
    "pe[:, n] instead of pe[:, :n]": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model).unsqueeze(0))
    def forward(self, x):
        return x + self.pe[:, x.size(1)]
""", "pe[:, n]"),
    "forgot to add": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model).unsqueeze(0))
    def forward(self, x):
        x + self.pe[:, : x.size(1)]
        return x
""", "never added"),
    "computed in forward, no table kept": (SINUSOIDAL_HEAD + """
        self.d_model = d_model
    def forward(self, x):
        return x + posenc.sinusoidal_encoding_torch(x.size(1), self.d_model)
""", "rebuilds the encoding in every forward call"),
    "buffer registered, but forward recomputes": (SINUSOIDAL_HEAD + """
        self.d_model = d_model
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model))
    def forward(self, x):
        return x + posenc.sinusoidal_encoding_torch(x.size(1), self.d_model)
""", "does not read the buffer"),
    "a buffer of its own size": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(5000, d_model))
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "do not hold the max_len x d_model"),
    "positions from 1": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len + 1, d_model)[1:])
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "positions start at 0"),
    "returns the encoding only": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model))
    def forward(self, x):
        return self.pe[: x.size(1)].expand_as(x)
""", "table alone"),
    "a float64 buffer": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model, dtype=torch.float64))
    def forward(self, x):
        return x + self.pe[: x.size(1)]
""", "the output is float64 for float32 input"),
    "adds the buffer into the caller's x": (SINUSOIDAL_HEAD + """
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model))
    def forward(self, x):
        x += self.pe[: x.size(1)]
        return x
""", "forward changed its input `x` in place"),
}



# ---------------------------------------------------------------------------------------------------
# q3: layouts

Q3_WRONG = {
    "no batch axis for sequence-first": ("""
def add_positions(x, table, batch_first=True):
    if batch_first:
        return x + table[: x.shape[1]]
    return x + table[: x.shape[0]]
""", "table[:n, None, :]"),
    "batch_first ignored": ("""
def add_positions(x, table, batch_first=True):
    return x + table[: x.size(1)]
""", "with batch_first=False the sequence is dimension 0"),
    "always sequence-first": ("""
def add_positions(x, table, batch_first=True):
    return x + table[: x.size(0)].unsqueeze(1)
""", "with batch_first=True the batch is dimension 0"),
    "returns the other layout": ("""
def add_positions(x, table, batch_first=True):
    if not batch_first:
        x = x.transpose(0, 1)
    return x + table[: x.shape[1]]
""", "swapped"),
    "forgot to return the sum": ("""
def add_positions(x, table, batch_first=True):
    n = x.shape[1] if batch_first else x.shape[0]
    rows = table[:n] if batch_first else table[:n, None]
    x + rows
    return x
""", "never added"),
    "single row": ("""
def add_positions(x, table, batch_first=True):
    n = x.shape[1] if batch_first else x.shape[0]
    return x + table[n]
""", "pe[:, n]"),
    "adds in place": ("""
def add_positions(x, table, batch_first=True):
    if batch_first:
        x += table[: x.shape[1]]
    else:
        x += table[: x.shape[0]].unsqueeze(1)
    return x
""", "changed its input `x` in place"),
    "numpy output": ("""
def add_positions(x, table, batch_first=True):
    n = x.shape[1] if batch_first else x.shape[0]
    rows = table[:n] if batch_first else table[:n, None]
    return (x + rows).numpy()
""", "add_positions returned a numpy array; return a torch tensor"),
}



# ---------------------------------------------------------------------------------------------------
# q4: parameter counts

Q4_WRONG = {
    "sinusoidal counted": ("def positional_parameters(kind, max_len, d_model):\n    return max_len * d_model",
                           "buffer, not a parameter"),
    "bytes": ("def positional_parameters(kind, max_len, d_model):\n"
              "    return 4 * max_len * d_model if kind == 'learned' else 0", "bytes"),
    "pairs": ("def positional_parameters(kind, max_len, d_model):\n"
              "    return max_len * d_model // 2 if kind == 'learned' else 0", "d_model / 2"),
    "sum": ("def positional_parameters(kind, max_len, d_model):\n"
            "    return max_len + d_model if kind == 'learned' else 0", "not max_len + d_model"),
}



# ---------------------------------------------------------------------------------------------------
# q5: past max_len

GUARD_HEAD = """
class CheckedPositionalEmbedding(LearnedPositionalEmbedding):
    def forward(self, x):
"""

Q5_WRONG = {
    "no guard: torch's own error": (GUARD_HEAD + """
        return super().forward(x)
""", "deep inside torch"),
    "IndexError": (GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise IndexError(f"position {x.shape[1] - 1} out of range")
        return super().forward(x)
""", "other than a ValueError"),
    "off by one": (GUARD_HEAD + """
        if x.shape[1] >= self.max_len:
            raise ValueError(f"too long: max_len={self.max_len}")
        return super().forward(x)
""", "off by one"),
    "message without the limit": (GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise ValueError("sequence too long")
        return super().forward(x)
""", "does not contain the limit"),
    "the wrong limit in the message": (GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise ValueError(f"max_len={self.max_len - 1} exceeded")
        return super().forward(x)
""", "does not contain the limit"),
    "the name of the limit, not its value": (GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise ValueError("sequence exceeds max_len")
        return super().forward(x)
""", "it must show the number max_len"),
    "forgot the parent": (GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise ValueError(f"at most max_len={self.max_len} positions")
        return x
""", "returned x unchanged"),
    "a table of its own": (GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise ValueError(f"at most max_len={self.max_len} positions")
        import posenc
        return x + posenc.sinusoidal_encoding_torch(x.shape[1], x.shape[2])
""", "super().forward(x)"),
    "silent truncation": (GUARD_HEAD + """
        return super().forward(x[:, : self.max_len])
""", "returned a result, but there is no row there"),
}



Q6_WRONG = {
    "trained rows": ("untrained_rows = chapter.train_length", "those are the rows that do get a gradient"),
    "all rows": ("untrained_rows = chapter.max_len", "only the first L rows are trained"),
    "none": ("untrained_rows = 0", "the other rows get no gradient"),
    "one too few": ("untrained_rows = chapter.max_len - chapter.train_length - 1", "off by one"),
    "one too many": ("untrained_rows = chapter.max_len - chapter.train_length + 1", "off by one"),
    "numbers": ("untrained_rows = (chapter.max_len - chapter.train_length) * chapter.d_model", "counts numbers"),
}

Q7_WRONG = {
    "the paper showed it": ('past_training_length = "a"', "hypothesis, not a result"),
    "an error past max_len": ('past_training_length = "c"', "depends on the code, not on the encoding"),
    "learned rows trained": ('past_training_length = "d"', "no gradient at all"),
    "a list of two": ('past_training_length = ["b", "d"]', "exactly one option"),
}

WRONG = {"q1": Q1_WRONG, "q2": Q2_WRONG, "q3": Q3_WRONG, "q4": Q4_WRONG, "q5": Q5_WRONG, "q6": Q6_WRONG,
         "q7": Q7_WRONG}

Q5_RIGHT = {
    "a ValueError subclass": """
class SequenceTooLong(ValueError):
    pass
class CheckedPositionalEmbedding(LearnedPositionalEmbedding):
    def forward(self, x):
        if x.shape[1] > self.max_len:
            raise SequenceTooLong(f"{x.shape[1]} positions, but the table has max_len = {self.max_len} rows")
        return super().forward(x)
""",
    "the limit at the end of a sentence": GUARD_HEAD + """
        if x.shape[1] > self.max_len:
            raise ValueError(f"too long: {x.shape[1]} tokens, at most {self.max_len}.")
        return super().forward(x)
""",
}

RIGHT = {
    "q1": Q1_RIGHT,
    "q2": Q2_RIGHT,
    "q5": Q5_RIGHT,
    "q3": {"permute and transpose": """
def add_positions(x, table, batch_first=True):
    if not batch_first:
        return add_positions(x.transpose(0, 1), table, True).transpose(0, 1)
    return x + table[None, : x.shape[1], :]
"""},
    "q6": {"a numpy integer": "import numpy as np\nuntrained_rows = np.int64(chapter.max_len - chapter.train_length)"},
    "q7": {"upper case": 'past_training_length = "B"'},
}


def test_q5_names_torch_errors_for_an_embedding_lookup(solution):
    """With a parent that looks positions up in nn.Embedding, the bare IndexError is reported as such."""
    code = Q1_RIGHT["embedding lookup of positions"] + GUARD_HEAD + "        return super().forward(x)\n"
    result = grade(solution, "q5", code)
    assert result.points == 0 and "IndexError: index out of range" in result.message
    assert "deep inside torch" in result.message and "other than a ValueError" in result.message


# ---------------------------------------------------------------------------------------------------
# Robustness of the checks


def test_student_errors_are_reported_not_raised(solution):
    code = SINUSOIDAL_HEAD + """
        raise RuntimeError("oops")
    def forward(self, x):
        return x
"""
    result = grade(solution, "q2", code)
    assert result.points == 0 and "RuntimeError: oops" in result.message


def test_a_function_where_a_class_belongs_is_reported(solution):
    result = grade(solution, "q1", "def LearnedPositionalEmbedding(max_len, d_model):\n    return None")
    assert result.points == 0 and "should be a class" in result.message


def test_mutating_the_input_cannot_change_the_reference(solution):
    code = """
def add_positions(x, table, batch_first=True):
    x.zero_()
    table.zero_()
    return x
"""
    assert grade(solution, "q3", code).points == 0
    assert EXERCISES.question("q3").grade(solution).status == PASSED


def test_the_module_probes_are_plain_data_and_pass_the_solution(solution):
    from posenc.exercises.probe import collect, dumps, loads

    for question in EXERCISES.questions:
        probe = loads(dumps(question.probe(3)))
        collected = loads(dumps(collect(solution, probe)))
        assert question.result_from(collected, 3).status == PASSED, question.qid


def test_the_diagnoses_are_listed_for_the_common_mistakes_page():
    from posenc.book import mistakes
    from posenc.exercises.checks import ch04

    listed = mistakes.messages(["ch04"])
    for message in (ch04.SIN_PARAMETER, ch04.BATCH_AXIS, ch04.SINGLE_ROW, ch04.FORGOT_TO_ADD, ch04.GUARD_LIMIT):
        assert message in listed


def test_q7_option_c_does_not_say_the_sinusoidal_module_has_no_last_row():
    """The student's SinusoidalEncoding (q2) and the worked solution store max_len rows and raise past them:
    the feedback on (c) must not say that only the learned table has a last row."""
    feedback = EXERCISES.question("q7").options["c"]
    assert "as many rows as it is asked for" not in feedback and "question 2" in feedback


def test_q7_feedback_on_the_chapters_experiment_holds_on_every_seed():
    """(a) and (b) say that in the chapter's experiment the sinusoidal model fails soon after L: on every seed
    of results/ch04.json it is near 1 inside L and at most 0.3 from L + 8 on."""
    import json

    import numpy as np

    from tests.conftest import ROOT

    data = json.loads((ROOT / "results" / "ch04.json").read_text())
    L = data["config"]["train_length"]
    runs = [run for run in data["runs"] if run["kind"] == "sinusoidal"]
    assert len(runs) >= 5
    for run in runs:
        accuracy = np.array(run["by_position"]["plain"][1:], dtype=float)     # position 0 has no target
        assert accuracy[: L - 1].mean() >= 0.95 and accuracy[L + 7:].max() <= 0.3, run["seed"]
    assert "soon after L" in EXERCISES.question("q7").options["b"]


def test_no_feedback_cites_the_worked_solution():
    """Students have not seen the worked solution when they read the feedback."""
    from posenc.book import mistakes

    texts = [*EXERCISES.question("q7").options.values(), *mistakes.messages(["ch04"])]
    assert not any("worked solution" in text for text in texts)
