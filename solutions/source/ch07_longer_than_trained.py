# %% [markdown]
# # Exercises 7: longer than trained
#
# These exercises go with the chapter *Longer than trained*. You will write the three ways of stretching a
# rotary model's context (position interpolation, the NTK-aware base, YaRN's frequencies and temperature),
# read an accuracy-against-position curve for what it does and does not show, bet on a method for a new
# task, and find a bug in a classmate's extension function.
#
# Each question asks for a function or a value in the cell marked `# your code here`; the cell after it,
# `check("q1")`, calls your code on inputs of its own choosing and prints one line: `PASS`, `FAIL` with the
# mistake it recognised, or `TODO` while the placeholder is still there. Write your own code with NumPy:
# `posenc.lib.extension` holds the reference answers, so importing it here would teach you nothing.
#
# Notation: a rotary head turns `d` coordinates (`d` even) in `d/2` pairs; pair `i` turns by the angle
# $\text{pos}\cdot\omega_i$ with $\omega_i = \text{base}^{-2i/d}$ (base 10000 unless said otherwise). A model
# trained on sequences of length $L$ is to read sequences of length $L' = sL$; $s$ is the **scale factor**.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import math

import numpy as np

from posenc.exercises import checker

check = checker("ch07")

# %% [markdown]
# ## Question 1: position interpolation (2 points)
#
# Position interpolation (Chen et al. 2023) feeds the model the position $\text{pos}\cdot L/L'$ instead of
# $\text{pos}$, so that the positions $0, \dots, L'-1$ of the long sequence land in the range $[0, L)$ the
# model was trained on. Write `interpolated_positions(positions, train_length, target_length)` that takes a
# 1-D array of integer positions and returns the scaled positions as a float array of the same shape.
# Leave `positions` as it is: the check tests that it is unchanged.

# %%
def interpolated_positions(positions, train_length, target_length):
    ### BEGIN SOLUTION
    return np.asarray(positions, dtype=np.float64) * train_length / target_length
    ### END SOLUTION


# %%
check("q1")

# %% [markdown]
# ## Question 2: the NTK-aware base (2 points)
#
# "NTK-aware" scaling leaves the positions alone and raises the base to $b' = b\,s^{d/(d-2)}$. Write
# `ntk_base(base, scale, d)` returning $b'$ as a float.
#
# Before you move on, convince yourself of what the exponent is for: with $b'$, the fastest pair
# ($\omega_0 = 1$) is unchanged and the slowest pair ($i = d/2 - 1$) turns exactly $s$ times slower than
# with $b$. (The solutions check both.)

# %%
def ntk_base(base, scale, d):
    ### BEGIN SOLUTION
    return float(base) * float(scale) ** (d / (d - 2))
    ### END SOLUTION


# %%
check("q2")

# %% [markdown] tags=["solution"]
# The slowest pair comes out exactly $s = 4$ times slower, for a narrow head and a Llama-sized one:

# %% tags=["solution"]
for d in (8, 128):                                  # pair 0 has omega = b^0 = 1 whatever the base
    slowest = lambda b: b ** (-(d - 2) / d)         # omega of pair d/2 - 1
    print(f"d = {d}: the slowest pair turns {slowest(10000.0) / slowest(ntk_base(10000.0, 4, d)):.6f} times slower")

# %% [markdown]
# ## Question 3: YaRN's frequencies and temperature (3 points)
#
# YaRN (Peng et al. 2023) treats each pair by how many turns it makes over the **training** length:
# $r_i = L / \lambda_i = L\,\omega_i / (2\pi)$, with $\lambda_i = 2\pi/\omega_i$ the pair's wavelength. The
# ramp
#
# $$\gamma(r) = \begin{cases} 0 & r < \alpha \\ 1 & r > \beta \\ (r - \alpha)/(\beta - \alpha) & \text{otherwise}\end{cases}$$
#
# mixes position interpolation and the original frequency:
# $\omega'_i = (1 - \gamma(r_i))\,\omega_i / s + \gamma(r_i)\,\omega_i$. So a pair that turns more than $\beta$
# times over $L$ keeps its frequency and one that turns less than $\alpha$ times is interpolated. YaRN also
# multiplies each of $q$ and $k$ by $0.1 \ln s + 1$, so the logits $q \cdot k$ get the factor
# $1/t = (0.1 \ln s + 1)^2$.
#
# Write `yarn_scaling(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0)` returning the pair
# `(omega, logit_scale)`: the `d/2` new frequencies as a NumPy array and the logit factor as a float. You may
# assume `scale >= 1`.

# %%
def yarn_scaling(d, scale, train_length, base=10000.0, alpha=1.0, beta=32.0):
    ### BEGIN SOLUTION
    omega = base ** (-2 * np.arange(d // 2) / d)
    turns = train_length * omega / (2 * np.pi)
    gamma = np.clip((turns - alpha) / (beta - alpha), 0.0, 1.0)
    new_omega = (1 - gamma) * omega / scale + gamma * omega
    return new_omega, float((0.1 * np.log(scale) + 1) ** 2)
    ### END SOLUTION


# %%
check("q3")

# %% [markdown]
# ## Question 4: what a curve shows (2 points)
#
# A rotary model was trained on `FirstToken` (predict the first token of the sequence at every position) on
# sequences of $L = 16$ tokens, with 5 seeds, and read on test sequences of 64 tokens (the chapter's
# benchmark, `results/ch07.json`). Its accuracy, mean over the seeds and in brackets the lowest and highest
# seed:
#
# {{ posenc.exercises.checks.ch07:curve_table }}
#
# Which statements follow from this measurement and from how it was made (the model and its reading)?
# Assign the letters of **all** the statements that follow to `curve_statements`, e.g. `"bd"`.
#
# - a. On positions 32..63, every seed's accuracy is at most one fifth.
# - b. A rotary language model trained at $L$ would lose its quality between $2L$ and $4L$ in the same way.
# - c. The accuracy at position 40 of the 64-token test sequences is the accuracy the model would have at the
#   last position of the same sequences cut to 41 tokens (the model is causal).
# - d. Rotary embeddings cannot represent "copy the first token" at positions beyond $2L$.
# - e. On this task, rotary embeddings generalise worse than T5's relative bias.

# %%
### BEGIN SOLUTION
curve_statements = "ac"
### END SOLUTION
### BEGIN STUB
curve_statements = ...
### END STUB

# %%
check("q4")

# %% [markdown]
# ## Question 5: which method to bet on (1 point)
#
# A new task, `LocalSum`: at every position $t \ge 1$ predict $(x_t + x_{t-1}) \bmod 16$. You train each
# method as in the chapter's benchmark (length $L = 16$, same model and budget) and read it at positions
# $2L$ to $4L$. Which **one** method would you bet on to keep its accuracy there? Think about what the task
# needs, then compare with what the benchmark measured on its three tasks. Assign one letter to
# `bet_local_sum`.
#
# - a. a learned absolute table (64 rows)
# - b. the sinusoidal table
# - c. ALiBi
# - d. rotary embeddings
# - e. no positional encoding (NoPE)

# %%
### BEGIN SOLUTION
bet_local_sum = "c"
### END SOLUTION
### BEGIN STUB
bet_local_sum = ...
### END STUB

# %%
check("q5")

# %% [markdown]
# ## Question 6: find the bug (2 points)
#
# A classmate wrote the function below for the rotation angles of an extended rotary head. It runs, the
# shape is right and position interpolation and plain RoPE come out right, but something is off. Find the
# bug and fix it in place (keep the function's name and arguments, and leave `positions` unchanged).

# %%
def extended_angles(positions, d, scale, method, base=10000.0):
    """Angles pos * omega'_i, shape (len(positions), d // 2), of a rotary head
    of width d extended by the scale factor s.

    method "none": plain RoPE; "pi": positions times 1/s; "ntk": a larger
    base, chosen so that the fastest pair (i = 0) keeps its frequency and the
    slowest (i = d/2 - 1) turns exactly s times slower.
    """
    positions = np.asarray(positions, dtype=np.float64)
    if method == "pi":
        positions = positions / scale
    if method == "ntk":
        ### BEGIN SOLUTION
        base = base * scale ** (d / (d - 2))
        ### END SOLUTION
        ### BEGIN STUB
        base = base * scale ** ((d - 2) / d)
        ### END STUB
    return np.outer(positions, base ** (-2 * np.arange(d // 2) / d))


# %%
check("q6")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too, so
# make each one right, not only its check.

# %%
check.summary()
