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

# %%
import numpy as np

from posenc.exercises import checker

check = checker("ch01")

# %% [markdown]
# ## Question 1: the encoding, vectorised (3 points)
#
# Write `sinusoidal_encoding(n_positions, d_model)` returning a float64 array of shape
# `(n_positions, d_model)` in the paper's interleaved layout: column `2i` holds the sine and column `2i+1`
# the cosine of pair `i`. Use whole-array operations, no Python loop over positions. It must work for
# `n_positions = 0` and for an odd `d_model` (the last column is then the sine of the last pair).
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


# %%
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


# %%
check("q2")

# %% [markdown]
# ## Question 3: a binary counter (2 points)
#
# Write `binary_encoding(n_positions, n_bits)` returning an integer array of shape
# `(n_positions, n_bits)` whose row `pos` holds the bits of `pos`, least significant bit first: column `k`
# is bit `k`, which flips every $2^k$ positions.

# %%
def binary_encoding(n_positions, n_bits):
    ### BEGIN SOLUTION
    positions = np.arange(n_positions)[:, None]
    bit_index = np.arange(n_bits)[None, :]
    return (positions >> bit_index) & 1
    ### END SOLUTION


# %%
check("q3")

# %% [markdown]
# ## Question 4: when do two positions look the same? (2 points)
#
# Stored at low precision, two different positions can get the same encoding. Write
# `first_repeat(encoding, decimals)` that rounds every row of the table `encoding` to `decimals` decimals
# and returns the first position (row index) whose rounded row equals that of an earlier row, or `None`
# when all rounded rows differ.
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


# %%
check("q4")

# %% [markdown] tags=["solution"]
# With four dimensions the first repeat comes at position 635 with one decimal and at 13828 with two:
# more precision, or more dimensions, push collisions far beyond any sentence length.

# %% tags=["solution"]
table = sinusoidal_encoding(20000, 4)
print(first_repeat(table, 1), first_repeat(table, 2))

# %% [markdown]
# ## Question 5: find the bug (1 point)
#
# A classmate wrote the encoding below. It runs, the shape is right and the first column is right, but
# the heatmap looks subtly off. Find the bug and fix it in place (keep the function's name).

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


# %%
check("q5")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %%
check.summary()
