# %% [markdown]
# # Exercises 2: the relative-shift proof
#
# These exercises go with the chapter *The relative-shift proof*. Each question asks you to write a
# function or a value in the cell marked `# your code here`; the cell after it, `check("q1")`, calls your
# code on inputs of its own choosing and prints one line: `PASS`, or `FAIL` with the mistake it recognised,
# or `TODO` while the placeholder is still there.
#
# Run the cells from top to bottom and write your own code with NumPy: the course's `posenc.lib.rotation`
# module holds the reference answers, so importing it here would teach you nothing.
#
# Notation: pair `i` of a `d_model`-wide encoding has the frequency
# $\omega_i = 1/\text{base}^{2i/d_{\text{model}}}$ (base 10000 unless said otherwise) and holds
# $(\sin \omega_i t, \cos \omega_i t)$ in dimensions $2i$ and $2i+1$. Shifting by $k$ positions turns
# every pair with
#
# $$
# M(k, i) = \begin{pmatrix} \cos \omega_i k & \sin \omega_i k \\ -\sin \omega_i k & \cos \omega_i k \end{pmatrix},
# $$
#
# so that
#
# $$
# M(k, i) \begin{pmatrix} \sin \omega_i t \\ \cos \omega_i t \end{pmatrix}
# = \begin{pmatrix} \sin \omega_i (t + k) \\ \cos \omega_i (t + k) \end{pmatrix},
# $$
#
# and $T(k)$ is the block-diagonal matrix with the blocks $M(k, 0), \dots, M(k, d_{\text{model}}/2 - 1)$.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import numpy as np

from posenc.exercises import checker

check = checker("ch02")

# %% [markdown]
# ## Question 1: the rotation of one pair (2 points)
#
# Write `rotation(i, k, d_model, base=10000.0)` returning $M(k, i)$ as a NumPy array of shape `(2, 2)`.
# Here `i` is the pair index (not a dimension index) and `k` may be negative.
#
# *Hint:* write out $\sin(a + b)$ and $\cos(a + b)$ with $a = \omega_i t$, $b = \omega_i k$, and read the
# two rows of the matrix off the two identities.

# %%
def rotation(i, k, d_model, base=10000.0):
    ### BEGIN SOLUTION
    omega = base ** (-2 * i / d_model)
    c, s = np.cos(omega * k), np.sin(omega * k)
    return np.array([[c, s], [-s, c]])
    ### END SOLUTION


# %% tags=["remove-output"]
check("q1")

# %% [markdown]
# ## Question 2: the shift operator $T(k)$ (2 points)
#
# Write `shift_operator(k, d_model, base=10000.0)` returning the `(d_model, d_model)` matrix $T(k)$:
# zero everywhere except for the 2x2 block $M(k, i)$ in rows and columns $2i$ and $2i + 1$, for every pair
# $i$. You may assume `d_model` is even.

# %%
def shift_operator(k, d_model, base=10000.0):
    ### BEGIN SOLUTION
    omega = base ** (-2 * np.arange(d_model // 2) / d_model)
    c, s = np.cos(omega * k), np.sin(omega * k)
    T = np.zeros((d_model, d_model))
    even, odd = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    T[even, even], T[even, odd] = c, s
    T[odd, even], T[odd, odd] = -s, c
    return T
    ### END SOLUTION


# %% tags=["remove-output"]
check("q2")

# %% [markdown]
# ## Question 3: shifting a table of vectors (2 points)
#
# A table stores one vector per **row**, shape `(n, d_model)`. Write `shift_rows(table, k, base=10000.0)`
# returning the table whose row `r` is $T(k)$ applied to row `r` of `table`. Do not recompute any sines of
# positions: the rows need not be encodings at all. (You may define your own $T(k)$ inside the function.)
# Leave `table` as it is (write the result into a new array): the check tests that it is unchanged.
#
# When the rows are the encodings of positions $t$, the result holds the encodings of $t + k$: this is
# the theorem of the chapter. Convince yourself of it after the check passes, and look at the largest
# difference in float64 (solutions show one way).

# %%
def shift_rows(table, k, base=10000.0):
    ### BEGIN SOLUTION
    d_model = table.shape[1]
    omega = base ** (-2 * np.arange(d_model // 2) / d_model)
    c, s = np.cos(omega * k), np.sin(omega * k)
    sines, cosines = table[:, 0::2], table[:, 1::2]
    shifted = np.empty_like(table, dtype=np.float64)
    shifted[:, 0::2] = c * sines + s * cosines
    shifted[:, 1::2] = -s * sines + c * cosines
    return shifted
    ### END SOLUTION


# %% tags=["remove-output"]
check("q3")

# %% [markdown] tags=["solution"]
# Shifting the encodings of $t$ reproduces the encodings of $t + k$ up to float64 rounding: the cell below
# prints the largest difference over the positions, offsets and width it sets.

# %% tags=["solution"]
positions, offsets, width = np.arange(-1000, 1000), range(-8, 8), 64
omega = 10000.0 ** (-2 * np.arange(width // 2) / width)


def encode(pos):
    table = np.empty((len(pos), width))
    table[:, 0::2], table[:, 1::2] = np.sin(np.outer(pos, omega)), np.cos(np.outer(pos, omega))
    return table


errors = [np.abs(shift_rows(encode(positions), k) - encode(positions + k)).max() for k in offsets]
print(f"largest difference over {len(positions)} positions, {len(offsets)} offsets and width {width}: "
      f"{max(errors):.2e}")

# %% [markdown]
# ## Question 4: the dot-product profile (2 points)
#
# The chapter shows that $PE(t) \cdot PE(t + k) = \sum_i \cos(\omega_i k)$ for every $t$. Write
# `dot_profile(offsets, d_model, base=10000.0)` that takes a 1-D integer array of offsets and returns a
# NumPy array with the dot product for each offset, in the same order. Leave `offsets` as it is: the check
# tests that it is unchanged.

# %%
def dot_profile(offsets, d_model, base=10000.0):
    ### BEGIN SOLUTION
    omega = base ** (-2 * np.arange(d_model // 2) / d_model)
    return np.cos(np.outer(offsets, omega)).sum(axis=1)
    ### END SOLUTION


# %% tags=["remove-output"]
check("q4")

# %% [markdown]
# ## Question 5: where the profile first goes negative (1 point)
#
# Take `d_model = 16` and `base = 100` and the offsets $k = -50, \dots, 50$. For $k = 0$ the dot product
# is $d_{\text{model}}/2 = 8$; as $|k|$ grows it falls, though not steadily. What is the smallest
# **positive** offset $k$ at which it is negative? Assign the offset (an int) to `first_negative_offset`.
# Compute it in this cell without calling your own functions (a plot of the profile helps you see it).

# %%
### BEGIN SOLUTION
offsets = np.arange(-50, 51)
omega_16 = 100.0 ** (-2 * np.arange(8) / 16)
profile = np.cos(np.outer(offsets, omega_16)).sum(axis=1)
first_negative_offset = int(offsets[(offsets > 0) & (profile < 0)][0])
### END SOLUTION
### BEGIN STUB
first_negative_offset = None  # your answer: an int
### END STUB

# %% tags=["remove-output"]
check("q5")

# %% [markdown]
# ## Question 6: which pairs turn within a context? (1 point)
#
# As the position runs from $0$ to $t$, the point of pair $i$ turns through the angle $\omega_i t$ on its
# unit circle. Take `d_model = 512` and base 10000. For how many **pairs** does the point complete at least
# one full turn within the first 512 positions, that is, by $t = 512$? Assign the count (an int) to
# `pairs_with_full_turn`. The pairs that do not complete a turn are not all still: many of them turn by
# more than a radian by $t = 512$, and only the slowest barely move (over a sentence, those look like
# constants).

# %%
### BEGIN SOLUTION
omega_512 = 10000.0 ** (-2 * np.arange(256) / 512)
pairs_with_full_turn = int((omega_512 * 512 >= 2 * np.pi).sum())
### END SOLUTION
### BEGIN STUB
pairs_with_full_turn = None  # your answer: an int
### END STUB

# %% tags=["remove-output"]
check("q6")

# %% [markdown]
# ## Question 7: why both sine and cosine? (1 point)
#
# Each pair of the encoding stores $\sin \omega_i t$ *and* $\cos \omega_i t$. Why does the relative-shift
# theorem need both? Choose the one option whose claim and reason are both right, and assign its letter to
# `why_sine_and_cosine`:
#
# - (a) a shift needs $\cos \omega_i t$ to write $\sin \omega_i (t + k)$; with both stored, the shift is one
#   fixed rotation of each pair, the same for every $t$, and with the sine alone no fixed matrix does it;
# - (b) the cosine columns double the width of the encoding, and a wider encoding separates more positions;
# - (c) sines alone are not bounded, and the cosine keeps the values in $[-1, 1]$;
# - (d) the cosine makes $PE(0)$ non-zero, and the theorem needs every encoding to be non-zero.

# %%
### BEGIN SOLUTION
why_sine_and_cosine = "a"
### END SOLUTION
### BEGIN STUB
why_sine_and_cosine = None  # your answer: one letter
### END STUB

# %% tags=["remove-output"]
check("q7")

# %% [markdown]
# ## Question 8: how sparse is $T(k)$? (1 point)
#
# Predict this one before you compute anything. How many entries of the `(512, 512)` matrix $T(1)$, for
# `d_model = 512` and base 10000, are **not** zero? Assign the count (an int) to `nonzero_entries`, then
# confirm it with your `shift_operator` and `np.count_nonzero` in a scratch cell.

# %%
### BEGIN SOLUTION
nonzero_entries = 4 * (512 // 2)     # one 2x2 block per pair, all four entries non-zero for k = 1
### END SOLUTION
### BEGIN STUB
nonzero_entries = None  # your prediction: an int
### END STUB

# %% tags=["remove-output"]
check("q8")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %% tags=["remove-output"]
check.summary()
