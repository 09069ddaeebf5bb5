# %% [markdown]
# # Exercises 0: why order matters
#
# These exercises go with the chapter *Why order matters*. Each question asks you to write a function or a
# value in the cell marked `# your code here`; the cell after it, `check("q1")`, calls your code on inputs of
# its own choosing and prints one line: `PASS`, or `FAIL` with the mistake it recognised, or `TODO` while
# the placeholder is still there. Run the cells from top to bottom. Use NumPy arrays throughout.

# %%
import numpy as np

from posenc.exercises import checker

check = checker("ch00")

# %% [markdown]
# ## Question 1: self-attention in NumPy (3 points)
#
# Write `self_attention(x, w_q, w_k, w_v)` for one head: `x` has shape `(n_tokens, d_model)`, the
# projections have shapes `(d_model, d_k)`, `(d_model, d_k)` and `(d_model, d_v)`. Return the output of shape
# `(n_tokens, d_v)`:
#
# $$\operatorname{softmax}\!\left(\frac{(x W_Q)(x W_K)^\top}{\sqrt{d_k}}\right) x W_V,$$
#
# with the softmax taken along each row. Subtract each row's maximum before `np.exp` to avoid overflow.

# %%
def self_attention(x, w_q, w_k, w_v):
    ### BEGIN SOLUTION
    queries, keys, values = x @ w_q, x @ w_k, x @ w_v
    scores = queries @ keys.T / np.sqrt(keys.shape[1])
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return weights @ values
    ### END SOLUTION


# %%
check("q1")

# %% [markdown]
# ## Question 2: measuring equivariance (2 points)
#
# Write `equivariance_gap(attention, x, perm)`: `attention` is any function from an `(n, d)` array to an
# `(n, d_v)` array, `perm` a permutation of `range(n)` as an integer array. Return, as a float, the largest
# absolute difference between the output for the shuffled input `x[perm]` and the original output shuffled
# the same way. It is zero (up to rounding) exactly when the layer is equivariant for this permutation.

# %%
def equivariance_gap(attention, x, perm):
    ### BEGIN SOLUTION
    return float(np.abs(attention(x[perm]) - attention(x)[perm]).max())
    ### END SOLUTION


# %%
check("q2")

# %% [markdown]
# ## Question 3: the causal mask (2 points)
#
# A decoder hides the future: token `t` may attend to tokens `0, ..., t` only. Write `causal_mask(n_tokens)`
# returning a boolean array of shape `(n_tokens, n_tokens)` whose entry `[t, s]` is `True` when token `t`
# must NOT see token `s` (the scores there are set to minus infinity before the softmax).

# %%
def causal_mask(n_tokens):
    ### BEGIN SOLUTION
    return np.triu(np.ones((n_tokens, n_tokens), dtype=bool), k=1)
    ### END SOLUTION


# %%
check("q3")

# %% [markdown]
# ## Question 4: which operations ignore order? (2 points)
#
# Which of these, applied to the token vectors of a sentence **without** positional encodings, cannot tell
# a sentence from a reordering of it (their outputs are only reordered, or do not change at all)?
#
# - (a) single-head self-attention;
# - (b) self-attention with a causal mask;
# - (c) the mean of the rows (mean-pooling);
# - (d) the same two-layer feed-forward network applied to each row;
# - (e) self-attention after adding sinusoidal positional encodings to the rows.
#
# Set `order_blind` to the letters of all the right options, for example `"bd"`.

# %%
### BEGIN SOLUTION
order_blind = "acd"
### END SOLUTION
### BEGIN STUB
order_blind = None  # your answer, e.g. "bd"
### END STUB

# %%
check("q4")

# %% [markdown]
# ## Your score

# %%
check.summary()
