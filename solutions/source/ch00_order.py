# %% [markdown]
# # Exercises 0: why order matters
#
# These exercises go with the chapter *Why order matters*. Each question asks you to write a function or a
# value in the cell marked `# your code here`; the cell after it, `check("q1")`, calls your code on inputs of
# its own choosing and prints one line: `PASS`, or `FAIL` with the mistake it recognised, or `TODO` while
# the placeholder is still there. Run the cells from top to bottom. Use NumPy arrays throughout.
#
# {{ posenc.exercises.framework:checking_rules }}

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
# with the softmax taken along each row. The softmax must be numerically stable: subtract each row's
# maximum before `np.exp` (the result does not change), so that large scores do not overflow to `inf`
# and turn the output into `nan`. The check tries scores in the thousands too. Leave `x` and the three
# projections as they are (compute on copies, never write into them): the check tests that they are
# unchanged.

# %%
def self_attention(x, w_q, w_k, w_v):
    ### BEGIN SOLUTION
    queries, keys, values = x @ w_q, x @ w_k, x @ w_v
    scores = queries @ keys.T / np.sqrt(keys.shape[1])
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    return weights @ values
    ### END SOLUTION


# %% tags=["remove-output"]
check("q1")

# %% [markdown]
# ## Question 2: measuring equivariance (2 points)
#
# Write `equivariance_gap(attention, x, perm)`: `attention` is any function from an `(n, d)` array to an
# `(n, d_v)` array, `perm` a permutation of `range(n)` as an integer array. Return, as a float, the largest
# absolute difference between the output for the shuffled input `x[perm]` and the original output shuffled
# the same way. It is zero (up to rounding) exactly when the layer is equivariant for this permutation: a gap
# is compared with the size of the outputs it is measured on, so a float32 rounding passes for zero. Leave
# `x` and `perm` as they are: the check tests that they are unchanged.

# %%
def equivariance_gap(attention, x, perm):
    ### BEGIN SOLUTION
    return float(np.abs(attention(x[perm]) - attention(x)[perm]).max())
    ### END SOLUTION


# %% tags=["remove-output"]
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


# %% tags=["remove-output"]
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

# %% tags=["remove-output"]
check("q4")

# %% [markdown]
# ## Question 5: what the causal mask leaks (1 point)
#
# Predict this one before you compute anything. A causal attention layer (question 3's mask) has
# $W_Q = 0$, so every query is the zero vector and every score is 0, whatever the tokens are. It reads a
# sentence of six tokens, positions $t = 0, \dots, 5$. For each token $t$, what weight does it put on the
# **first** token (position 0)? Assign the six weights, in the order $t = 0, \dots, 5$, to
# `first_token_weights` (a list or an array). Then check your prediction in a scratch cell with your
# own code. Why does this let a model without positional encodings learn where a token stands?

# %%
### BEGIN SOLUTION
first_token_weights = [1 / (t + 1) for t in range(6)]
### END SOLUTION
### BEGIN STUB
first_token_weights = None  # your prediction: six numbers
### END STUB

# %% tags=["remove-output"]
check("q5")

# %% [markdown] tags=["solution"]
# Token $t$ sees $t + 1$ tokens with equal scores, so each gets the weight $1/(t + 1)$: the first token's
# share of the output falls as the position grows, whatever the words are. A model can read that share
# (or any average over "everything so far") as a clock, which is how decoders without positional
# encodings still learn positions.

# %% [markdown]
# ## Question 6: find the bug (2 points)
#
# A classmate wrote causal self-attention. It runs, the output has the right shape, and the attention
# weights above the diagonal are zero, as a causal mask demands. Yet the outputs are wrong for every token
# but the last. Find the bug and fix it in place (keep the function's name and arguments, and leave the
# arrays it receives unchanged).

# %%
def causal_attention(x, w_q, w_k, w_v):
    queries, keys, values = x @ w_q, x @ w_k, x @ w_v
    scores = queries @ keys.T / np.sqrt(keys.shape[1])
    future = np.triu(np.ones(scores.shape, dtype=bool), k=1)
    ### BEGIN SOLUTION
    scores = np.where(future, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)
    ### END SOLUTION
    ### BEGIN STUB
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights = weights / weights.sum(axis=1, keepdims=True)
    weights = np.where(future, 0.0, weights)
    ### END STUB
    return weights @ values


# %% tags=["remove-output"]
check("q6")

# %% [markdown]
# ## Your score

# %% tags=["remove-output"]
check.summary()
