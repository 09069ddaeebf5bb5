# %% [markdown]
# # Exercises 4: learned vs sinusoidal encodings
#
# These exercises go with the chapter *Learned vs sinusoidal positional encodings*. You will write both
# encodings as PyTorch modules, make one function work for batch-first and sequence-first input, count what
# each table costs, and make a learned table fail clearly past its last row.
#
# Each question asks for a class or a function in the cell marked `# your code here`. The cell after it,
# `check("q1")`, builds your class with sizes of its own choosing, runs it on its own tensors and prints one
# line: `PASS`, `FAIL` with the mistake it recognised, or `TODO` while the placeholder is still there.
# Do not call your own code at the top level of the answer cells; try it out in a scratch cell if you like.
#
# Shapes: `x` is **batch-first**, `(batch, seq, d_model)`, unless a question says otherwise. Positions start
# at 0. You may use `posenc.sinusoidal_encoding_torch(n_positions, d_model)` (the course's reference from
# chapter 1) for the sinusoidal table: these exercises are about modules, not about the formula.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import posenc
import torch
from torch import nn

from posenc.exercises import checker

check = checker("ch04")

# %% [markdown]
# ## Question 1: a learned positional embedding (3 points)
#
# Write a module `LearnedPositionalEmbedding(max_len, d_model)` that holds a **trainable** table with one
# row of `d_model` numbers per position `0 .. max_len - 1`, and whose `forward(x)` returns `x` plus the rows
# for positions `0 .. n - 1`, where `n = x.shape[1]`. The same rows are added to every sequence of the batch,
# and nothing else is done: no dropout (PyTorch's tutorial applies it here; the model around the module
# decides that).
#
# `nn.Embedding(max_len, d_model)` or an `nn.Parameter` of shape `(max_len, d_model)` both work. The check
# replaces the values of your table with its own before it runs your module, so your initialisation does not
# matter; what matters is that the table is a parameter, that gradients reach it, and that the rows are
# added in the right place. Keep the line `self.max_len = max_len`: question 5 uses it. `forward` returns a
# new tensor and leaves `x` as it is (`x + rows`, not `x += rows`, which writes into the caller's tensor):
# the check tests that `x` is unchanged.

# %%
class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        ### BEGIN SOLUTION
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        n = x.shape[1]
        return x + self.embedding.weight[:n]
        ### END SOLUTION


# %% tags=["remove-output"]
check("q1")

# %% [markdown]
# ## Question 2: the sinusoidal encoding as a buffer (3 points)
#
# Write `SinusoidalEncoding(d_model, max_len=512)` whose `forward(x)` returns `x` plus the sinusoidal rows
# for positions `0 .. n - 1`. The table is fixed: it must **not** appear in `model.parameters()` (an
# optimiser would receive it, and parameter counts would include it), but it must follow the module when it
# moves, e.g. with `.to(device)` or `.double()`. `self.register_buffer(name, tensor)` does exactly that.
# The output has the dtype of `x` (the check's `x` is float32, torch's default): a float64 table would
# promote `x + pe` to float64, and the next `nn.Linear` would raise. As in question 1, no dropout, and `x`
# must stay unchanged.
#
# *Hint:* write `forward` with one slicing expression, and think about which axis of `x` is the sequence.

# %%
class SinusoidalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        ### BEGIN SOLUTION
        self.register_buffer("pe", posenc.sinusoidal_encoding_torch(max_len, d_model))
        ### END SOLUTION

    def forward(self, x):
        ### BEGIN SOLUTION
        return x + self.pe[: x.shape[1]]
        ### END SOLUTION


# %% tags=["remove-output"]
check("q2")

# %% [markdown] tags=["solution"]
# The buffer shows up in `named_buffers()` and not in `parameters()`:

# %% tags=["solution"]
demo = SinusoidalEncoding(8, max_len=16)
print([name for name, _ in demo.named_parameters()], [name for name, _ in demo.named_buffers()])

# %% [markdown]
# ## Question 3: batch-first and sequence-first (2 points)
#
# PyTorch's own layers take `(seq, batch, d_model)` input unless `batch_first=True`, and code copied between
# the two conventions is a classic source of silent bugs. Write a function `add_positions(x, table,
# batch_first=True)` that adds the first `n` rows of `table` (shape `(max_len, d_model)`) to `x`, where
# `x` is `(batch, seq, d_model)` when `batch_first` is true and `(seq, batch, d_model)` when it is false.
# Return a tensor in the same layout as `x`, and leave `x` and `table` as they are: the check tests that they
# are unchanged.
#
# Beware: with sequence-first input, `x + table[:n]` runs without error in two cases, and gives the wrong
# answer in both: when `n` equals the batch size (wrong values), and when the batch size is 1 (the sum
# broadcasts to the wrong shape, `(n, n, d_model)`).

# %%
def add_positions(x, table, batch_first=True):
    ### BEGIN SOLUTION
    if batch_first:
        return x + table[: x.shape[1]]
    return x + table[: x.shape[0]].unsqueeze(1)
    ### END SOLUTION


# %% tags=["remove-output"]
check("q3")

# %% [markdown]
# ## Question 4: what each table costs (1 point)
#
# Write `positional_parameters(kind, max_len, d_model)` returning the number of **trainable** parameters of
# the positional table, for `kind` either `"learned"` or `"sinusoidal"`. How many does GPT-2 small spend on
# its positions? Its sizes are in the cell below.

# %%
gpt2_small = {"max_len": 1024, "d_model": 768}     # GPT-2 small: its context length and width

# %%
def positional_parameters(kind, max_len, d_model):
    ### BEGIN SOLUTION
    return max_len * d_model if kind == "learned" else 0
    ### END SOLUTION


# %% tags=["remove-output"]
check("q4")

# %% tags=["solution"]
print(f"GPT-2 small's positional table: {positional_parameters('learned', **gpt2_small):,} trainable numbers")

# %% [markdown]
# ## Question 5: past `max_len` (2 points)
#
# First, predict: what does your module of question 1 do on a sequence of `max_len + 1` tokens? Which
# exception, raised where, and does its message tell the user what the limit is? Try it in a scratch cell.
#
# Then write `CheckedPositionalEmbedding`, a subclass of your `LearnedPositionalEmbedding`, whose
# `forward(x)` raises a `ValueError` (or an exception class of your own that subclasses `ValueError`) when
# the sequence is longer than the table, and otherwise behaves exactly like the parent class. The
# exception's message must contain the value of `max_len`, the number (e.g. `512` for a table of 512 rows,
# not only the word "max_len"), so that the user learns the limit. Sequences of exactly `max_len` tokens
# must still work, and `x` must stay unchanged.

# %%
class CheckedPositionalEmbedding(LearnedPositionalEmbedding):
    def forward(self, x):
        ### BEGIN SOLUTION
        n = x.shape[1]
        if n > self.max_len:
            raise ValueError(f"this table has rows for positions 0..{self.max_len - 1} (max_len={self.max_len}), "
                             f"but the input has {n} positions")
        return super().forward(x)
        ### END SOLUTION


# %% tags=["remove-output"]
check("q5")

# %% [markdown] tags=["solution"]
# Without the check, `self.embedding.weight[:n]` quietly returns only `max_len` rows, and the addition then
# fails with a shape error that says nothing about positions. (With `self.embedding(torch.arange(n))`
# instead, torch raises `IndexError: index out of range in self`, just as unhelpful.)

# %% tags=["solution"]
for module in (LearnedPositionalEmbedding(8, 4), CheckedPositionalEmbedding(8, 4)):
    try:
        module(torch.zeros(2, 9, 4))
    except Exception as exc:
        print(f"{type(module).__name__}: {type(exc).__name__}: {exc}")

# %% [markdown]
# ## Question 6: rows that never learn (1 point)
#
# Predict this one before you compute anything. The chapter's experiment trains a model whose learned
# table has `max_len` rows, on sequences that all have `train_length` tokens; the cell below prints both
# from the chapter's configuration. How many **rows** of the table never receive a gradient during
# training, and so keep their initial values? Assign the count (an int) to `untrained_rows`.

# %%
from posenc.experiments.ch04 import LengthExperiment

chapter = LengthExperiment()
print(f"max_len = {chapter.max_len}, train_length = {chapter.train_length}, d_model = {chapter.d_model}")

# %%
### BEGIN SOLUTION
untrained_rows = chapter.max_len - chapter.train_length    # forward only ever slices rows 0..train_length-1
### END SOLUTION
### BEGIN STUB
untrained_rows = None  # your prediction: an int
### END STUB

# %% tags=["remove-output"]
check("q6")

# %% [markdown]
# ## Question 7: past the training length (1 point)
#
# A model with the sinusoidal table is trained on sequences of `train_length` tokens and then reads longer
# ones. Which statement is right? Choose one option and assign its letter to `past_training_length`:
#
# - (a) it keeps its accuracy at every position, because sinusoids extrapolate: the original Transformer
#   paper showed it;
# - (b) its table is defined at every position, but the model never saw the encodings of positions past
#   `train_length` in training, so how well it does there has to be measured;
# - (c) past `max_len` it raises an error, just like the learned table;
# - (d) it behaves like the learned model, whose rows past `train_length` are trained from the
#   neighbouring rows and so extrapolate as well.

# %%
### BEGIN SOLUTION
past_training_length = "b"
### END SOLUTION
### BEGIN STUB
past_training_length = None  # your answer: one letter
### END STUB

# %% tags=["remove-output"]
check("q7")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader builds your classes with other sizes too, so
# make each one right, not only its check.

# %% tags=["remove-output"]
check.summary()
