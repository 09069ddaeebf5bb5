# %% [markdown]
# # Exercises 8: position on real text
#
# These exercises go with the chapter *Position on real text*. You will turn a language model's loss into
# the units papers report, write the two ways of reading a long text that the chapter compares, and read
# the chapter's figure for what it does and does not show.
#
# Each question asks for a function or a value in the cell marked `# your code here`; the cell after it,
# `check("q1")`, calls your code on inputs of its own choosing and prints one line: `PASS`, `FAIL` with the
# mistake it recognised, or `TODO` while the placeholder is still there. Write your own code with NumPy:
# `posenc.lib.textlm` holds the reference answers, so importing it here would teach you nothing.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import math

import numpy as np

from posenc.exercises import checker

check = checker("ch08")

# %% [markdown]
# ## Question 1: bits per character and perplexity (2 points)
#
# A language model's loss is its mean cross-entropy in **nats** (natural logarithms) per character. Papers
# report it as **bits per character** (logarithms to base 2) or as **perplexity**. Write
# `bits_and_perplexity(mean_nats)` that returns the pair `(bits_per_character, perplexity)` as floats.

# %%
def bits_and_perplexity(mean_nats):
    ### BEGIN SOLUTION
    return mean_nats / math.log(2), math.exp(mean_nats)
    ### END SOLUTION


# %%
check("q1")

# %% [markdown]
# ## Question 2: non-overlapping windows (2 points)
#
# A model trained on windows of $L$ characters reads a long validation text in windows of `length`
# characters. What a character costs depends on how many characters of its window come **before** it: the
# first character of a window is predicted with no context, the last with `length - 1` characters.
#
# You are given `losses`, an array of shape `(n_bytes, length)`: `losses[t, c]` is the cross-entropy (in
# nats) of predicting character `t` of the text when `c` characters of its window come before it. In
# **non-overlapping** windows the text is cut into windows `0 .. length-1`, `length .. 2 length-1`, ...
# (`n_bytes` is a multiple of `length`) and every character is scored once, in its own window. Write
# `nonoverlapping_mean(losses, length)` that returns the mean cross-entropy this evaluation reports. Leave
# `losses` as it is: the check tests that it is unchanged.

# %%
def nonoverlapping_mean(losses, length):
    ### BEGIN SOLUTION
    losses = np.asarray(losses, dtype=np.float64)
    t = np.arange(losses.shape[0])
    return float(losses[t, t % length].mean())
    ### END SOLUTION


# %%
check("q2")

# %% [markdown]
# ## Question 3: sliding windows (3 points)
#
# Non-overlapping windows score many characters with little context. A **sliding** evaluation moves a window
# of `length` characters along the text by `stride` characters at a time (`0 < stride <= length`; `n_bytes`
# is `length` plus a multiple of `stride`). The first window scores all its characters; every later window
# scores only its last `stride` characters, the ones no earlier window scored. So every character is scored
# exactly once. Write `sliding_mean(losses, length, stride)` that returns the mean cross-entropy this
# evaluation reports, with `losses` as in question 2 (and, as there, left unchanged).

# %%
def sliding_mean(losses, length, stride):
    ### BEGIN SOLUTION
    losses = np.asarray(losses, dtype=np.float64)
    t = np.arange(losses.shape[0])
    context = np.where(t < length, t, length - stride + (t - length) % stride)
    return float(losses[t, context].mean())
    ### END SOLUTION


# %%
check("q3")

# %% [markdown] tags=["solution"]
# With `stride == length` the sliding evaluation is the non-overlapping one, and a smaller stride gives
# every character more context, so on a table whose losses fall with context it reports less:

# %% tags=["solution"]
table = 1.0 + np.exp(-np.arange(8) / 3.0) * np.ones((8 + 4 * 6, 1))
print(nonoverlapping_mean(table, 8), sliding_mean(table, 8, 8), sliding_mean(table, 8, 2))

# %% [markdown]
# ## Question 4: reading the figure (2 points)
#
# The chapter trained a byte-level model with each position method at $L$ bytes and read the validation text
# at $L$, $2L$, $4L$ and $8L$ in non-overlapping windows (`results/ch08.json`). Mean bits per character over
# the seeds (lower is better):
#
# {{ posenc.exercises.checks.ch08:figure_table }}
#
# Which statements does this measurement support? Assign the letters of **all** supported statements to
# `figure_statements`, e.g. `"bd"`.
#
# - a. The sinusoidal model is worse at $8L$ than at $L$.
# - b. At $8L$, ALiBi has lost less than rotary embeddings, compared with each at $L$.
# - c. ALiBi would read $100L$ as well as $L$.
# - d. These numbers can be set beside the ALiBi paper's perplexities to compare the models' quality.
# - e. The learned table, which has rows up to $8L$, reads $8L$ as well as it reads $L$.

# %%
### BEGIN SOLUTION
figure_statements = "ab"
### END SOLUTION
### BEGIN STUB
figure_statements = ...
### END STUB

# %%
check("q4")

# %% [markdown]
# ## Question 5: which method for long files (1 point)
#
# A colleague trained at $L$ but must read source files in windows of $8L$, with no time to fine-tune. On the
# evidence of the table above, which **one** method should the model use? Assign one letter to
# `deploy_choice`.
#
# {{ posenc.exercises.checks.ch08:deploy_option_lines }}

# %%
### BEGIN SOLUTION
deploy_choice = "e"
### END SOLUTION
### BEGIN STUB
deploy_choice = ...
### END STUB

# %%
check("q5")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too, so
# make each one right, not only its check.

# %%
check.summary()
