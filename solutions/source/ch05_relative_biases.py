# %% [markdown]
# # Exercises 5: position inside attention
#
# These exercises go with the chapter *Position inside attention: relative biases*. Each question asks
# you to write a function or a value in the cell marked `# your code here`; the cell after it,
# `check("q1")`, calls your code on inputs of its own choosing and prints one line: `PASS`, or `FAIL` with
# the mistake it recognised, or `TODO` while the placeholder is still there.
#
# Write your own code with NumPy: the course's `posenc.lib.relative` module holds the reference answers,
# so importing it here would teach you nothing.
#
# Notation, as in the chapter: the query sits at position $i$, the key at position $j$, and the **offset**
# is $j - i$, key minus query. A key in the past has a negative offset. Matrices indexed by $(i, j)$ have a
# row per query and a column per key.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import numpy as np

from posenc.exercises import checker

check = checker("ch05")

# %% [markdown]
# ## Question 1: T5's bucket of an offset (3 points)
#
# Write `t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128)`. It takes a
# NumPy integer array of offsets $r = j - i$ (any shape) and returns an integer array of the same shape
# with T5's bucket for each offset:
#
# 1. **Bidirectional** (an encoder): use `nb = num_buckets // 2` buckets per side. Keys *after* the query
#    ($r > 0$) get `nb` added to their bucket; the distance is $n = |r|$.
#    **Causal** (`bidirectional=False`, a decoder): all `nb = num_buckets` buckets serve the past, nothing
#    is added, and the distance is $n = \max(-r, 0)$ (every future offset gets $n = 0$).
# 2. With `max_exact = nb // 2`: a distance $n <$ `max_exact` has bucket $n$. A larger one has bucket
#    `max_exact + floor(log(n / max_exact) / log(max_distance / max_exact) * (nb - max_exact))`, capped at
#    `nb - 1`.
#
# With the defaults, `t5_bucket(np.array([-20, -8, -1, 0, 1, 200]))` is `[10, 8, 1, 0, 17, 31]`, and with
# `bidirectional=False` it is `[17, 8, 1, 0, 0, 0]`. Leave `relative_position` as it is (compute on a copy,
# never write into it): the caller still needs the offsets, and the check tests that they are unchanged.
# Where the log part is a whole number in exact arithmetic (with the defaults, at $n = 64$ it is exactly 6),
# floating point may land on it or just below; the check accepts either bucket there.

# %%
def t5_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ### BEGIN SOLUTION
    relative = np.asarray(relative_position)
    if bidirectional:
        nb = num_buckets // 2
        first = np.where(relative > 0, nb, 0)
        distance = np.abs(relative)
    else:
        nb = num_buckets
        first = np.zeros_like(relative)
        distance = np.maximum(-relative, 0)
    max_exact = nb // 2
    ratio = np.maximum(distance, max_exact) / max_exact          # >= 1, so the log is never of 0
    spread = np.log(ratio) / np.log(max_distance / max_exact) * (nb - max_exact)
    far = np.minimum(max_exact + spread.astype(int), nb - 1)
    return first + np.where(distance < max_exact, distance, far)
    ### END SOLUTION


# %%
check("q1")

# %% [markdown] tags=["solution"]
# The table of the chapter, from the function: the bucket of each offset, bidirectional and causal.

# %% tags=["solution"]
offsets = np.array([-200, -128, -20, -8, -1, 0, 1, 7, 8, 20, 127, 128, 200])
print(offsets)
print(t5_bucket(offsets))
print(t5_bucket(offsets, bidirectional=False))

# %% [markdown]
# ## Question 2: ALiBi's slopes for any number of heads (2 points)
#
# Write `alibi_slopes(n_heads)` returning a NumPy array with the slope $m_h$ of each head, in head order, as
# the ALiBi authors' reference code (`get_slopes`) computes them:
#
# - when `n_heads` is a power of two, $m_h = 2^{-8h/n}$ for $h = 1, \dots, n$ (8 heads: $1/2, 1/4, \dots, 1/256$);
# - otherwise, with $c$ the largest power of two below `n_heads`: the $c$ slopes for $c$ heads, **followed
#   by** the first `n_heads - c` of every other slope for $2c$ heads, starting with the first (those of
#   odd $h$).
#
# For example 6 heads get $1/4, 1/16, 1/64, 1/256$ and then $1/2, 1/8$. (The paper's text states
# $m_h = 2^{-8h/n}$ for every $n$; the paper trained only power-of-two head counts, and the code keeps that rule
# only for them.)

# %%
def alibi_slopes(n_heads):
    ### BEGIN SOLUTION
    power = 2 ** int(np.floor(np.log2(n_heads)))
    slopes = 2.0 ** (-8.0 * np.arange(1, power + 1) / power)
    if power < n_heads:
        twice = 2.0 ** (-8.0 * np.arange(1, 2 * power + 1) / (2 * power))
        slopes = np.concatenate([slopes, twice[0::2][: n_heads - power]])
    return slopes
    ### END SOLUTION


# %%
check("q2")

# %% [markdown]
# ## Question 3: T5's bias matrix from its table (2 points)
#
# T5 keeps one learned scalar per bucket and head: a table of shape `(num_buckets, n_heads)`, as in
# `nn.Embedding(num_buckets, n_heads)`. Write `t5_bias_matrix(table, n_queries, n_keys, bidirectional=True,
# max_distance=128)` returning the bias added to the logits, shape `(n_heads, n_queries, n_keys)`, with
#
# $$b_h(i, j) = \text{table}[\text{bucket}(j - i), h],$$
#
# queries and keys at positions $0, 1, \dots$. The number of buckets is the table's number of rows. You may
# use your `t5_bucket` from question 1: the check runs your `t5_bias_matrix` with a correct `t5_bucket` in
# its place, so that question 1 alone grades the bucket rule and this question what `t5_bias_matrix` adds
# (you can try it before question 1 is finished). Leave `table` as it is: the check tests that it is
# unchanged.

# %%
def t5_bias_matrix(table, n_queries, n_keys, bidirectional=True, max_distance=128):
    ### BEGIN SOLUTION
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    buckets = t5_bucket(offsets, bidirectional, table.shape[0], max_distance)
    return np.transpose(table[buckets], (2, 0, 1))
    ### END SOLUTION


# %%
check("q3")

# %% [markdown]
# ## Question 4: Shaw's clipped index matrix (2 points)
#
# Shaw et al. learn $2k + 1$ vectors, one per clipped offset $\text{clip}(j - i, -k, k)$, and store them as
# rows $0, \dots, 2k$ of a table. Write `shaw_index(n_queries, n_keys, max_distance)` (with
# $k$ = `max_distance`) returning the integer matrix of shape `(n_queries, n_keys)` whose entry $(i, j)$ is
# the row that query $i$ reads for key $j$: $\text{clip}(j - i, -k, k) + k$.

# %%
def shaw_index(n_queries, n_keys, max_distance):
    ### BEGIN SOLUTION
    offsets = np.arange(n_keys)[None, :] - np.arange(n_queries)[:, None]
    return np.clip(offsets, -max_distance, max_distance) + max_distance
    ### END SOLUTION


# %%
check("q4")

# %% [markdown]
# ## Question 5: predict, then count (2 points)
#
# A T5 model with the default settings (32 buckets, `max_distance = 128`) reads a sequence of 50 tokens.
# Each head adds $b_h(i, j) = \text{table}[\text{bucket}(j - i), h]$ to its logits, so one head can use at
# most as many different biases as there are different buckets among the offsets it sees.
#
# - **encoder** (bidirectional): how many different buckets occur in the $50 \times 50$ matrix of offsets?
# - **decoder** (causal): how many different buckets occur among the entries the causal mask keeps, $j \le i$?
#
# Predict both from the rule before you compute anything, then assign the pair `(encoder, decoder)` to
# `distinct_biases`. (If you check your prediction with NumPy, do it in this cell without calling your own
# functions.)

# %%
### BEGIN SOLUTION
distinct_biases = (27, 25)   # encoder: 0..13 for the past, 17..29 for the future; decoder: 0..24
### END SOLUTION
### BEGIN STUB
distinct_biases = None  # your answer: (encoder, decoder), two ints
### END STUB

# %%
check("q5")

# %% [markdown] tags=["solution"]
# Offset 0 belongs to the past half (bucket 0), so bucket 16, the future half's "offset 0", never occurs:
# the encoder's 14 past buckets (distances 0 to 49) are joined by only 13 future ones. The decoder gives
# all 32 buckets to the past: distances 0 to 15 are exact, 16 to 49 fall into buckets 16 to 24.

# %% [markdown]
# ## Question 6: find the bug (2 points)
#
# A classmate wrote Shaw's logits for one head, $e_{ij} = q_i \cdot (k_j + a^K_{\text{clip}(j - i)}) / \sqrt{d}$,
# where row $r$ of `key_table` (shape `(2k + 1, d)`) holds the vector of the clipped offset $r - k$. The
# function runs, returns the right shape and plausible numbers; yet it is wrong. Find the bug and fix it
# in place (keep the function's name, and leave the arrays it receives unchanged).

# %%
def shaw_logits(q, k, key_table, max_distance):
    n, d = q.shape
    offsets = np.arange(n)[None, :] - np.arange(n)[:, None]
    ### BEGIN SOLUTION
    index = np.clip(offsets, -max_distance, max_distance) + max_distance
    ### END SOLUTION
    ### BEGIN STUB
    index = np.clip(offsets, -max_distance, max_distance)
    ### END STUB
    relative = np.einsum("id,ijd->ij", q, key_table[index])
    return (q @ k.T + relative) / np.sqrt(d)


# %%
check("q6")

# %% [markdown] tags=["solution"]
# The clipped offsets run from $-k$ to $k$, but the table's rows run from 0 to $2k$: without `+ k`, every
# index is off by $k$, and a key in the past reads a negative row, which NumPy (and torch) count from the
# end of the table. Nothing raises: offset 0 reads row 0, the vector of offset $-k$, and offset $-1$ reads
# row $2k$, the vector of offset $+k$. Only a comparison with a reference finds this.

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %%
check.summary()
