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
# for positions `0 .. n - 1`, where `n = x.shape[1]`. The same rows are added to every sequence of the batch.
#
# `nn.Embedding(max_len, d_model)` or an `nn.Parameter` of shape `(max_len, d_model)` both work. The check
# replaces the values of your table with its own before it runs your module, so your initialisation does not
# matter; what matters is that the table is a parameter, that gradients reach it, and that the rows are
# added in the right place. Keep the line `self.max_len = max_len`: question 5 uses it.

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


# %%
check("q1")

# %% [markdown]
# ## Question 2: the sinusoidal encoding as a buffer (3 points)
#
# Write `SinusoidalEncoding(d_model, max_len=512)` whose `forward(x)` returns `x` plus the sinusoidal rows
# for positions `0 .. n - 1`. The table is fixed: it must **not** appear in `model.parameters()` (an
# optimiser would receive it, and parameter counts would include it), but it must follow the module when it
# moves, e.g. with `.to(device)` or `.double()`. `self.register_buffer(name, tensor)` does exactly that.
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


# %%
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
# Return a tensor in the same layout as `x`.
#
# Beware: with sequence-first input, `x + table[:n]` runs without error whenever `n` equals the batch
# size, and gives the wrong answer.

# %%
def add_positions(x, table, batch_first=True):
    ### BEGIN SOLUTION
    if batch_first:
        return x + table[: x.shape[1]]
    return x + table[: x.shape[0]].unsqueeze(1)
    ### END SOLUTION


# %%
check("q3")

# %% [markdown]
# ## Question 4: what each table costs (1 point)
#
# Write `positional_parameters(kind, max_len, d_model)` returning the number of **trainable** parameters of
# the positional table, for `kind` either `"learned"` or `"sinusoidal"`. How many does GPT-2 small spend on
# its 1024 positions of width 768?

# %%
def positional_parameters(kind, max_len, d_model):
    ### BEGIN SOLUTION
    return max_len * d_model if kind == "learned" else 0
    ### END SOLUTION


# %%
check("q4")

# %% tags=["solution"]
positional_parameters("learned", 1024, 768)   # GPT-2 small: 786,432 numbers for its positions

# %% [markdown]
# ## Question 5: past `max_len` (2 points)
#
# First, predict: what does your module of question 1 do on a sequence of `max_len + 1` tokens? Which
# exception, raised where, and does its message tell the user what the limit is? Try it in a scratch cell.
#
# Then write `CheckedPositionalEmbedding`, a subclass of your `LearnedPositionalEmbedding`, whose
# `forward(x)` raises a `ValueError` that names `max_len` when the sequence is longer than the table, and
# otherwise behaves exactly like the parent class. Sequences of exactly `max_len` tokens must still work.

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


# %%
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
# ## Your score
#
# The summary runs every check again. Your lecturer's grader builds your classes with other sizes too, so
# make each one right, not only its check.

# %%
check.summary()
