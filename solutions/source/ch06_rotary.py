# %% [markdown]
# # Exercises 6: rotary embeddings
#
# These exercises go with the chapter *Rotary embeddings: the rotation moved inside attention*. Each
# question asks you to write a function or a value in the cell marked `# your code here`; the cell after it,
# `check("q1")`, calls your code on inputs of its own choosing and prints one line: `PASS`, or `FAIL` with
# the mistake it recognised, or `TODO` while the placeholder is still there.
#
# Write your own code with NumPy (and torch where a question says so): the course's `posenc.lib.rotary`
# holds the reference answers, so importing it here would teach you nothing.
#
# Notation: a head of width $d$ (even) has $d/2$ pairs; pair $i$ has the frequency
# $\theta_i = \text{base}^{-2i/d}$ (base 10000 unless said otherwise). RoPE turns pair $i$ of the vector at
# position $\text{pos}$ counter-clockwise by the angle $\text{pos}\,\theta_i$:
#
# $$
# (a, b) \mapsto (a \cos \text{pos}\,\theta_i - b \sin \text{pos}\,\theta_i,\;
#                 a \sin \text{pos}\,\theta_i + b \cos \text{pos}\,\theta_i).
# $$
#
# Which two coordinates form pair $i$ is the layout: `"interleaved"` pairs $(2i, 2i + 1)$ (RoFormer, Meta's
# Llama code), `"half"` pairs $(i, i + d/2)$ ("rotate half": GPT-NeoX, Hugging Face's Llama).
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import numpy as np
import torch

from posenc.exercises import checker

check = checker("ch06")

# %% [markdown]
# ## Question 1: the rotation in both layouts (2 points)
#
# Write `rope(x, positions, layout="interleaved", base=10000.0)`. `x` is an array of shape `(n, d)`, one
# vector per row; `positions` an integer array of shape `(n,)` (any integers, negative ones included).
# Return an array of shape `(n, d)` whose row `r` is row `r` of `x` turned to position `positions[r]`, in
# the given layout. `x` may be float16: compute the angles, their cosines and sines in float64 whatever
# its dtype; the result may be float64 or `x`'s dtype, the check accepts both (a float16 result is compared
# to float16's precision). This question is about precision itself, so it asks for more than the rule for
# numbers above: for float64 input your result must match to $10^{-7}$ (float32 angles at positions in the
# thousands miss that by far). Leave `x` and `positions` as they are (compute on copies, never write into
# them): the caller still needs them, and the check tests that they are unchanged.

# %%
def rope(x, positions, layout="interleaved", base=10000.0):
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)
    angle = np.asarray(positions, dtype=np.float64)[:, None] * theta
    if layout == "interleaved":
        first, second = np.arange(0, d, 2), np.arange(1, d, 2)
    else:
        first, second = np.arange(d // 2), np.arange(d // 2, d)
    out = np.empty_like(x)
    out[:, first] = x[:, first] * np.cos(angle) - x[:, second] * np.sin(angle)
    out[:, second] = x[:, first] * np.sin(angle) + x[:, second] * np.cos(angle)
    return out
    ### END SOLUTION


# %%
check("q1")

# %% [markdown]
# ## Question 2: converting $W_Q$ and $W_K$ between layouts (2 points)
#
# A checkpoint was trained with the interleaved layout. Its query projection `weight` has shape
# `(n_heads * d_head, d_in)`, one row per output coordinate (`q = x @ weight.T`), the heads one after the
# other. Write `to_half_layout(weight, n_heads)` returning the weight a model that uses the rotate-half
# layout needs to compute exactly the same logits (the same function converts $W_K$). Return a new array and
# leave `weight` unchanged (the check tests it): the original checkpoint must stay as it was.
#
# *Hint:* the half layout's pair $p$ is coordinates $(p, p + d/2)$; which two interleaved coordinates must
# land there?

# %%
def to_half_layout(weight, n_heads):
    ### BEGIN SOLUTION
    weight = np.asarray(weight)
    d_head = weight.shape[0] // n_heads
    within = np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])
    rows = np.concatenate([h * d_head + within for h in range(n_heads)])
    return weight[rows]
    ### END SOLUTION


# %%
check("q2")

# %% [markdown] tags=["solution"]
# Converting the weights and switching the layout leaves the logits unchanged (one head of width 8, the
# interleaved model against the converted half-layout model, at 20 positions):

# %% tags=["solution"]
demo_rng = np.random.default_rng(0)
demo_x, demo_wq, demo_wk = demo_rng.normal(size=(20, 12)), demo_rng.normal(size=(8, 12)), demo_rng.normal(size=(8, 12))
where = np.arange(20)
original = rope(demo_x @ demo_wq.T, where) @ rope(demo_x @ demo_wk.T, where).T
converted = (rope(demo_x @ to_half_layout(demo_wq, 1).T, where, "half")
             @ rope(demo_x @ to_half_layout(demo_wk, 1).T, where, "half").T)
print(f"largest difference: {np.abs(original - converted).max():.1e}")

# %% [markdown]
# ## Question 3: rotary logits from inputs and projections (2 points)
#
# Write `rope_logits(x, W_q, W_k, base=10000.0)` for one attention head. `x` has shape `(n, d_model)`, the
# inputs at positions $0, \dots, n - 1$; `W_q` and `W_k` have shape `(d_head, d_model)` (`q = x @ W_q.T`).
# Return the `(n, n)` matrix whose entry `[m, j]` is the logit of the query at position `m` against the key
# at position `j`, with RoPE in the interleaved layout: no scaling by $1/\sqrt{d_{\text{head}}}$, no mask.
# You may call your `rope` from question 1: the check runs your `rope_logits` with a correct `rope` in its
# place, so that question 1 alone grades the rotation and this question what `rope_logits` adds (you can
# try it before question 1 is finished). Leave `x`, `W_q` and `W_k` as they are: the check tests that they
# are unchanged.

# %%
def rope_logits(x, W_q, W_k, base=10000.0):
    ### BEGIN SOLUTION
    positions = np.arange(len(x))
    q = rope(x @ W_q.T, positions, "interleaved", base)
    k = rope(x @ W_k.T, positions, "interleaved", base)
    return q @ k.T
    ### END SOLUTION


# %%
check("q3")

# %% [markdown] tags=["solution"]
# The logits depend on the offset only: with the same input at every position, every diagonal of the matrix
# holds one value.

# %% tags=["solution"]
same_everywhere = np.tile(demo_rng.normal(size=(1, 12)), (16, 1))
matrix = rope_logits(same_everywhere, demo_wq, demo_wk)
print(max(np.ptp(np.diagonal(matrix, k)) for k in range(-15, 16)))

# %% [markdown]
# ## Question 4: where bfloat16 angles go wrong (1 point)
#
# {{ posenc.exercises.checks.ch06:q4_question }}

# %%
### BEGIN SOLUTION
theta_64 = torch.tensor(10000.0, dtype=torch.float64) ** (-2 * torch.arange(32, dtype=torch.float64) / 64)
every_position = torch.arange(4096)
exact_angles = every_position[:, None].double() * theta_64
low_angles = every_position.to(torch.bfloat16)[:, None] * theta_64.to(torch.bfloat16)
angle_errors = (low_angles.double() - exact_angles).abs().amax(dim=1)
first_bad_position = int(torch.nonzero(angle_errors > 0.25)[0])
### END SOLUTION
### BEGIN STUB
first_bad_position = None  # your answer: an int
### END STUB

# %%
check("q4")

# %% [markdown]
# ## Question 5: a porting decision (1 point)
#
# You load a checkpoint trained with Meta's interleaved RoPE into code that uses rotate-half. Which change
# keeps every logit of every layer the same?
#
# - (a) permute the rows of $W_Q$ and $W_K$ within each head: the new row $p$ is the old row $2p$ and the
#   new row $d/2 + p$ is the old row $2p + 1$;
# - (b) permute the rows of $W_Q$, $W_K$ **and** $W_V$ that way, so that the whole head stays consistent;
# - (c) nothing: permuting coordinates never changes a dot product, so the checkpoint works as it is;
# - (d) permute the columns of $W_Q$ and $W_K$ that way.
#
# Assign the letter, as a string such as `"a"`, to `porting_choice`. The check explains why the choice you
# made is right or wrong, so read its message.

# %%
### BEGIN SOLUTION
porting_choice = "a"
### END SOLUTION
### BEGIN STUB
porting_choice = None  # your answer: "a", "b", "c" or "d"
### END STUB

# %%
check("q5")

# %% [markdown]
# ## Question 6: find the bug in cached generation (2 points)
#
# When a model generates text one token at a time, it keeps the keys of the tokens it has already seen in a
# cache, **already turned** to their positions $0, \dots, t - 1$. The new token comes with its projected (not
# yet turned) query `q_new` and key `k_new`, both of shape `(d,)`; `cached_keys` has shape `(t, d)`.
# `next_logits` must return the logits of the new token against all $t + 1$ keys (the cached ones, then its
# own), interleaved layout, no scaling: exactly what the new token would get if the whole sequence were
# processed at once.
#
# A classmate wrote the function below. It runs and returns the right shape, but the model generates
# nonsense. Find the bug and fix it in place (keep the function's name and arguments, and leave the arrays
# it receives unchanged: the cache in particular belongs to the caller).

# %%
def next_logits(q_new, k_new, cached_keys, base=10000.0):
    d = q_new.shape[-1]
    theta = base ** (-2 * np.arange(d // 2) / d)

    def turn(vector, pos):
        angle = pos * theta
        a, b = vector[0::2], vector[1::2]
        turned = np.empty(d)
        turned[0::2] = a * np.cos(angle) - b * np.sin(angle)
        turned[1::2] = a * np.sin(angle) + b * np.cos(angle)
        return turned

    ### BEGIN SOLUTION
    position = len(cached_keys)          # t tokens before it: positions 0 .. t - 1, so this one is at t
    ### END SOLUTION
    ### BEGIN STUB
    position = len(cached_keys) - 1      # the position of the new token
    ### END STUB
    keys = np.vstack([cached_keys, turn(k_new, position)])
    return keys @ turn(q_new, position)


# %%
check("q6")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %%
check.summary()
