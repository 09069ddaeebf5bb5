# %% [markdown]
# # Exercises 1: from binary counters to sinusoids
#
# These exercises go with the chapter *From binary counters to sinusoids*. Each question asks you to
# write a function or a value in the cell marked `# your code here`; the cell after it, `check("q1")`,
# calls your code on inputs of its own choosing and prints one line: `PASS`, or `FAIL` with the mistake it
# recognised, or `TODO` while the placeholder is still there.
#
# Run the cells from top to bottom. Write your own code: `posenc.sinusoidal_encoding` is the course's
# reference and using it here would teach you nothing (and your lecturer's grader can tell).
#
# Notation: `pos` is the position (from 0), `d_model` the width, `i` the pair index,
# $\omega_i = 1/\text{base}^{2i/d_{\text{model}}}$, $PE(pos, 2i) = \sin(\omega_i\, pos)$ and
# $PE(pos, 2i+1) = \cos(\omega_i\, pos)$, with base 10000.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import numpy as np

from posenc.exercises import checker

check = checker("ch01")

# %% [markdown]
# ## Question 1: the encoding, vectorised (3 points)
#
# Write `sinusoidal_encoding(n_positions, d_model)` returning a float64 array of shape
# `(n_positions, d_model)` in the paper's interleaved layout: column `2i` holds the sine and column `2i+1`
# the cosine of pair `i`. It must work for `n_positions = 0` and for an odd `d_model` (the last column is
# then the sine of the last pair). Whole-array operations are much faster than a Python loop over
# positions: a loop still passes, and the check adds a note when your function is slow.
#
# *Hint:* build a column of positions and a row of frequencies; their product broadcasts to all angles.

# %%
def sinusoidal_encoding(n_positions, d_model):
    ### BEGIN SOLUTION
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    pair_index = np.arange((d_model + 1) // 2)
    omega = 10000.0 ** (-2 * pair_index / d_model)
    angles = positions * omega[None, :]
    encoding = np.zeros((n_positions, d_model))
    encoding[:, 0::2] = np.sin(angles)
    encoding[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return encoding
    ### END SOLUTION


# %% tags=["remove-output"]
check("q1")

# %% [markdown]
# ## Question 2: the wavelength of a pair (2 points)
#
# Pair `i` repeats itself every $2\pi/\omega_i$ positions. Write `wavelength(i, d_model, base=10000.0)`
# returning that wavelength, in positions, as a float. For `d_model = 512`, how long is the wavelength of
# the last pair, `i = 255`? Compare it with the lengths of the sentences a model reads.

# %%
def wavelength(i, d_model, base=10000.0):
    ### BEGIN SOLUTION
    return 2 * np.pi * base ** (2 * i / d_model)
    ### END SOLUTION


# %% tags=["remove-output"]
check("q2")

# %% [markdown]
# ## Question 3: a binary counter (2 points)
#
# Write `binary_encoding(n_positions, n_bits)` returning an array of shape `(n_positions, n_bits)` of 0s
# and 1s (integers, or booleans: the check accepts both, not floats) whose row `pos` holds the bits of
# `pos`, least significant bit first: column `k` is bit `k`, which flips every $2^k$ positions.

# %%
def binary_encoding(n_positions, n_bits):
    ### BEGIN SOLUTION
    positions = np.arange(n_positions)[:, None]
    bit_index = np.arange(n_bits)[None, :]
    return (positions >> bit_index) & 1
    ### END SOLUTION


# %% tags=["remove-output"]
check("q3")

# %% [markdown]
# ## Question 4: when do two positions look the same? (2 points)
#
# Stored at low precision, two different positions can get the same encoding. Write
# `first_repeat(encoding, decimals)` that rounds every row of the table `encoding` to `decimals` decimals
# and returns the first position (row index) whose rounded row equals that of an earlier row (any earlier
# row, not only the one just before it), or `None` when all rounded rows differ. Rows are equal when
# their rounded numbers are equal: `-0.0` and `0.0` are the same number. Leave `encoding` as it is (round
# a copy, never write into it): the check tests that it is unchanged.
#
# Then try it on `sinusoidal_encoding(20000, 4)` with 1 and 2 decimals: how far do four dimensions get?

# %%
def first_repeat(encoding, decimals):
    ### BEGIN SOLUTION
    seen = set()
    for position, row in enumerate(np.round(encoding, decimals)):
        key = tuple(row.tolist())
        if key in seen:
            return position
        seen.add(key)
    return None
    ### END SOLUTION


# %% tags=["remove-output"]
check("q4")

# %% tags=["solution"]
from posenc import glue

table = sinusoidal_encoding(20000, 4)
repeat_1 = glue("ch01_repeat_1_decimal", first_repeat(table, 1))
repeat_2 = glue("ch01_repeat_2_decimals", first_repeat(table, 2))
print(f"first repeat with 1 decimal: position {repeat_1}; with 2 decimals: position {repeat_2}")

# %% [markdown] tags=["solution"]
# With four dimensions the first repeat comes at position {glue:text}`ch01_repeat_1_decimal` with one
# decimal and at {glue:text}`ch01_repeat_2_decimals` with two (the cell above prints both): more
# precision, or more dimensions, push collisions far beyond any sentence length.

# %% [markdown]
# ## Question 5: find the bug (1 point)
#
# A classmate wrote the encoding below. It runs, the shape is right and the first column is right, but
# the heatmap looks subtly off. Find the bug and fix it in place (keep the function's name). The check
# tells you whether the bug is still there, not what it is.

# %%
def fixed_encoding(n_positions, d_model):
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    dims = np.arange(d_model)[None, :]
    ### BEGIN SOLUTION
    angles = positions / 10000.0 ** (2 * (dims // 2) / d_model)
    ### END SOLUTION
    ### BEGIN STUB
    angles = positions / 10000.0 ** (dims / d_model)
    ### END STUB
    return np.where(dims % 2 == 0, np.sin(angles), np.cos(angles))


# %% tags=["remove-output"]
check("q5")

# %% [markdown]
# ## Question 6: what the normalised index breaks (1 point)
#
# A classmate encodes the position `pos` of a token in a sentence of `L` tokens as the single number
# `pos / (L - 1)`, which runs from 0 to 1 in every sentence. Which of the chapter's criteria does this
# encoding break? Choose the one option whose claim and reason are both right, and assign its letter to
# `normalised_index_breaks`:
#
# - (a) **unique**: two tokens of one sentence can get the same number;
# - (b) **consistent**: the step between neighbours is `1 / (L - 1)`, so the same offset changes the
#   number by a different amount in sentences of different lengths, and position 3 gets a different
#   number in a longer sentence;
# - (c) **bounded**: the number grows without limit as the position grows;
# - (d) **deterministic**: the same token can get a different number each time the model runs.

# %%
### BEGIN SOLUTION
normalised_index_breaks = "b"
### END SOLUTION
### BEGIN STUB
normalised_index_breaks = None  # your answer: one letter
### END STUB

# %% tags=["remove-output"]
check("q6")

# %% [markdown]
# ## Question 7: how long is a row? (1 point)
#
# Predict this one before you compute anything. Take the encoding with `d_model = 64` (base 10000) and
# its row at position `pos = 1000`. What is the **squared** Euclidean norm of that row, the sum of its 64
# squared entries? Assign the number to `row_squared_norm`, then confirm it in a scratch cell with your
# `sinusoidal_encoding`. Does the answer depend on the position?

# %%
### BEGIN SOLUTION
row_squared_norm = 64 / 2      # each of the 32 pairs adds sin^2 + cos^2 = 1
### END SOLUTION
### BEGIN STUB
row_squared_norm = None  # your prediction: a number
### END STUB

# %% tags=["remove-output"]
check("q7")

# %% [markdown] tags=["solution"]
# Every row of an even-width encoding has the same length, $\sqrt{d_{\text{model}}/2}$, at every position:
# the encoding is bounded, and no position is louder than another.

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %% tags=["remove-output"]
check.summary()
