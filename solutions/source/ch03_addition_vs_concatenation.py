# %% [markdown]
# # Exercises 3: addition vs concatenation
#
# These exercises go with the chapter *Addition vs concatenation*. Each question asks you to write a
# function in the cell marked `# your code here`; the cell after it, `check("q1")`, calls your function on
# inputs of its own choosing and prints one line: `PASS`, or `FAIL` with the mistake it recognised, or
# `TODO` while the placeholder is still there.
#
# Run the cells from top to bottom and write your own code with NumPy: the course's `posenc.lib.combining`
# module holds the reference answers, so importing it here would teach you nothing.
#
# Notation: a token vector $x$ (a row of the embedding table, possibly scaled), a positional vector $p$
# (a row of the sinusoidal encoding), `d_model` the width. Addition feeds $x + p$ to the first layer,
# concatenation feeds $[\,x;\ p\,]$, the token part first.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import math

import numpy as np

from posenc.exercises import checker

check = checker("ch03")

# %% [markdown]
# ## Question 1: parameters of the first projection (2 points)
#
# The first layer after the input is linear: weights and one bias per output. Write
# `projection_params(scheme, d_token, d_position, d_out)` returning how many parameters a linear layer
# from the combined input to `d_out` outputs has, for `scheme` either `"add"` (the input is $x + p$; the
# checks always give `d_token == d_position` here) or `"concat"` (the input is $[\,x;\ p\,]$). Return an
# `int`.

# %%
def projection_params(scheme, d_token, d_position, d_out):
    ### BEGIN SOLUTION
    width = d_token if scheme == "add" else d_token + d_position
    return width * d_out + d_out
    ### END SOLUTION


# %% tags=["remove-output"]
check("q1")

# %% [markdown]
# ## Question 2: the concatenated input (1 point)
#
# Token vectors come in batches, `x` of shape `(batch, n, d_x)`; the positional rows `p`, of shape
# `(n, d_p)`, are the same for every sequence of the batch. Write `concat_inputs(x, p)` returning
# $[\,x;\ p\,]$ for every position of every sequence: an array of shape `(batch, n, d_x + d_p)` whose
# first `d_x` features are the token vector and the last `d_p` the positional one.
#
# *Hint:* `np.concatenate` needs arrays with the same number of axes; give `p` a batch axis first
# (`np.broadcast_to`). Leave `x` and `p` as they are: the check tests that they are unchanged.

# %%
def concat_inputs(x, p):
    ### BEGIN SOLUTION
    p_batch = np.broadcast_to(p, x.shape[:-1] + p.shape[-1:])
    return np.concatenate([x, p_batch], axis=-1)
    ### END SOLUTION


# %% tags=["remove-output"]
check("q2")

# %% [markdown]
# ## Question 3: the same projection, as a sum (2 points)
#
# A weight matrix `w` of shape `(d_x + d_p, d_out)` maps the concatenated input to `d_out` outputs:
# `concat @ w`. Write `sum_of_projections(x, p, w)` for one sequence, `x` of shape `(n, d_x)` and `p` of
# shape `(n, d_p)`, that returns the same `(n, d_out)` result *without building the concatenation*:
# split `w` into the block $W_x$ that meets the token features and the block $W_p$ that meets the
# positional ones, and return $x W_x + p W_p$. (The check compares your result with
# `np.concatenate([x, p], axis=1) @ w`.) An answer that builds the concatenation fails: the check notes
# when your function hands its inputs to `np.concatenate`, `np.hstack`, `np.column_stack`, `np.block` or
# `np.append`, or multiplies all `d_x + d_p` rows of `w` by one array, however that array was made (it
# watches NumPy only: it cannot see into torch code, where the rule holds all the same). It also gives a
# `p` with a single row, shape `(1, d_p)`, shared by every position, which the sum of projections
# broadcasts while a concatenation cannot even be built. Leave `x`, `p` and `w` as
# they are (slicing `w` makes views to read, not copies to write into): the check tests that they are
# unchanged.

# %%
def sum_of_projections(x, p, w):
    ### BEGIN SOLUTION
    d_x = x.shape[1]
    w_x, w_p = w[:d_x], w[d_x:]
    return x @ w_x + p @ w_p
    ### END SOLUTION


# %% tags=["remove-output"]
check("q3")

# %% [markdown]
# ## Question 4: the four attention terms (2 points)
#
# With addition, the attention logit between query position $i$ and key position $j$ (before the
# $1/\sqrt{d_k}$ factor) is $\big((x_i + p_i) W_Q\big) \cdot \big((x_j + p_j) W_K\big)$, which splits into
#
# - token-token $(x_i W_Q) \cdot (x_j W_K)$,
# - token-position $(x_i W_Q) \cdot (p_j W_K)$,
# - position-token $(p_i W_Q) \cdot (x_j W_K)$,
# - position-position $(p_i W_Q) \cdot (p_j W_K)$.
#
# Write `logit_terms(x, p, w_q, w_k)` for `x` and `p` of shape `(n, d)` and `w_q`, `w_k` of shape
# `(d, d_k)`. Return one array of shape `(4, n, n)` holding the four `(n, n)` matrices in that order, with
# row `i` the query position and column `j` the key position. Do not divide by $\sqrt{d_k}$. Leave the
# four inputs as they are: the check tests that they are unchanged.

# %%
def logit_terms(x, p, w_q, w_k):
    ### BEGIN SOLUTION
    q_x, q_p = x @ w_q, p @ w_q
    k_x, k_p = x @ w_k, p @ w_k
    return np.stack([q_x @ k_x.T, q_x @ k_p.T, q_p @ k_x.T, q_p @ k_p.T])
    ### END SOLUTION


# %% tags=["remove-output"]
check("q4")

# %% [markdown]
# ## Question 5: the scaled input (2 points)
#
# The original Transformer feeds $\sqrt{d_{\text{model}}} \cdot E[\text{token}_{pos}] + PE(pos)$ to its
# first layer. Write `scaled_inputs(tokens, table, pe)`: `tokens` holds integer token ids, shape `(n,)` or
# `(batch, n)`; `table` is the embedding table, shape `(vocab_size, d_model)`; `pe` is a precomputed
# encoding with at least `n` rows, shape `(max_len, d_model)`. Return the input, shape `tokens.shape +
# (d_model,)`. Leave `tokens`, `table` and `pe` as they are (scale a copy, not the table itself: the caller's
# table is the model's embedding): the check tests that they are unchanged.

# %%
def scaled_inputs(tokens, table, pe):
    ### BEGIN SOLUTION
    n = tokens.shape[-1]
    scale = math.sqrt(table.shape[1])
    return scale * table[tokens] + pe[:n]
    ### END SOLUTION


# %% tags=["remove-output"]
check("q5")

# %% [markdown]
# ## Question 6: matching norms (1 point)
#
# Keep the $\sqrt{d_{\text{model}}}$ scale of question 5 and draw the embedding entries from
# $N(0, \sigma^2)$. Write `matching_init_std(d_model)` returning the $\sigma$ for which the scaled token
# vector $\sqrt{d_{\text{model}}}\, E[\text{token}]$ has, on average, the same squared norm as a row of
# the encoding (for an even `d_model`).
#
# *Hint:* what is $\sin^2 + \cos^2$, and how many pairs does a row have?

# %%
def matching_init_std(d_model):
    ### BEGIN SOLUTION
    # E|sqrt(d) e|^2 = d * d * sigma^2 must equal |PE(pos)|^2 = d / 2
    return 1 / math.sqrt(2 * d_model)
    ### END SOLUTION


# %% tags=["remove-output"]
check("q6")

# %% [markdown] tags=["solution"]
# With this $\sigma$, tokens and positions have equal norms. Tensor2tensor's $\sigma = d^{-1/2}$ makes the
# tokens $\sqrt{2}$ times longer than the encoding, and PyTorch's default $\sigma = 1$ makes them
# $\sqrt{2 d_{\text{model}}}$ times longer (question 8 puts a number on it).

# %% [markdown]
# ## Question 7: what the layer after a concatenation sees (1 point)
#
# A model concatenates $[\,x;\ p\,]$ and feeds it to a linear layer $W$. A classmate says: "concatenation
# keeps tokens and positions apart, while addition mixes them". Which statement about what the model
# computes is right? Choose one option and assign its letter to `after_concatenation`:
#
# - (a) the layer computes $x W_x + p W_p$: a token part plus a position part, so after the first layer
#   they are mixed, as with addition (but with separate maps);
# - (b) every later layer still receives the token vector and the positional vector as two separate
#   parts, so it can always tell them apart;
# - (c) the layer computes $x W_x$ only: the position part is multiplied by zero;
# - (d) the layer computes $(x + p) W$, exactly what addition gives.

# %%
### BEGIN SOLUTION
after_concatenation = "a"
### END SOLUTION
### BEGIN STUB
after_concatenation = None  # your answer: one letter
### END STUB

# %% tags=["remove-output"]
check("q7")

# %% [markdown]
# ## Question 8: how loud are the tokens? (1 point)
#
# Predict this one before you compute anything. A model of width `d_model = 512` draws its embedding
# table from PyTorch's default $N(0, 1)$ (as `nn.Embedding` does) and multiplies it by
# $\sqrt{d_{\text{model}}}$, as in question 5. How many times longer is the scaled token vector
# $\sqrt{d_{\text{model}}}\, E[\text{token}]$ than a row of the sinusoidal encoding? Use the root mean
# square length of the token vector, $\sqrt{\mathbb{E}\,\|\sqrt{d_{\text{model}}}\, E[\text{token}]\|^2}$,
# and assign the ratio (a number) to `norm_ratio`. Then check it with random numbers in a scratch cell.
# {{ posenc.exercises.checks.ch03:q8_margin }}

# %%
### BEGIN SOLUTION
norm_ratio = math.sqrt(512 * 512) / math.sqrt(512 / 2)     # sqrt(2 * 512)
### END SOLUTION
### BEGIN STUB
norm_ratio = None  # your prediction: a number
### END STUB

# %% tags=["remove-output"]
check("q8")

# %% tags=["solution"]
print(f"the scaled tokens are {norm_ratio:.1f} times longer than the encoding at d_model = 512")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %% tags=["remove-output"]
check.summary()
