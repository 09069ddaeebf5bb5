# %% [markdown]
# # Exercises 9: rotary in today's models
#
# These exercises go with the chapter *Rotary in today's models*. You will turn the fields of real
# configuration files into frequencies and factors (Llama 3's scaling, p-RoPE, LongRoPE, Llama 4's
# temperature), decide which designs of latent attention can absorb their key up-projection, and read the
# chapter's table of today's models.
#
# Each question asks for a function or a value in the cell marked `# your code here`; the cell after it,
# `check("q1")`, calls your code on inputs of its own choosing and prints one line: `PASS`, `FAIL` with the
# mistake it recognised, or `TODO` while the placeholder is still there. Write your own code with NumPy:
# `posenc.lib.rotary_variants` holds the reference answers, so importing it here would teach you nothing.
#
# Notation: a rotary head of width `d` (even) has `d/2` pairs; pair `i` turns by the angle
# $\text{pos}\cdot\omega_i$ with $\omega_i = \text{base}^{-2i/d}$. A pair whose frequency is 0 never turns.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import math

import numpy as np

from posenc.exercises import checker

check = checker("ch09")

# %% [markdown]
# ## Question 1: Llama 3's scaling (2 points)
#
# Llama 3.1's `config.json` asks for `"rope_type": "llama3"` with four fields: `factor` $s$,
# `low_freq_factor`, `high_freq_factor` and `original_max_position_embeddings` $L$. Count the turns each
# pair makes over $L$ positions, $r_i = L\,\omega_i / (2\pi)$. A pair with $r_i$ > `high_freq_factor` keeps
# its frequency; a pair with $r_i$ < `low_freq_factor` turns $s$ times slower; in between,
#
# $$\omega'_i = (1 - \gamma_i)\,\frac{\omega_i}{s} + \gamma_i\,\omega_i, \qquad
# \gamma_i = \frac{r_i - \text{low}}{\text{high} - \text{low}}.$$
#
# Write `llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, original_length)` that returns
# the new frequencies as a NumPy array of the same shape as `omega` (`high_freq_factor` > `low_freq_factor`).
# Leave `omega` unchanged: the caller still needs the original frequencies.

# %%
def llama3_frequencies(omega, factor, low_freq_factor, high_freq_factor, original_length):
    ### BEGIN SOLUTION
    omega = np.asarray(omega, dtype=np.float64)
    turns = original_length * omega / (2 * np.pi)
    gamma = np.clip((turns - low_freq_factor) / (high_freq_factor - low_freq_factor), 0.0, 1.0)
    return (1 - gamma) * omega / factor + gamma * omega
    ### END SOLUTION


# %% tags=["remove-output"]
check("q1")

# %% [markdown] tags=["solution"]
# Llama 3.1's own numbers: 64 pairs at base 500,000, $s$ = 8, ends 1 and 4, $L$ = 8192. The fastest pair
# keeps its frequency, the slowest is divided by 8:

# %% tags=["solution"]
omega_llama = 500_000.0 ** (-np.arange(0, 128, 2) / 128)
scaled = llama3_frequencies(omega_llama, 8.0, 1.0, 4.0, 8192)
print(scaled[0] / omega_llama[0], scaled[-1] / omega_llama[-1])

# %% [markdown]
# ## Question 2: p-RoPE's frequencies (2 points)
#
# p-RoPE (Barbero et al. 2025, the "proportional" type of Gemma 4) keeps the $\lfloor p\,d/2 \rfloor$
# **fastest** pairs of a head turning with their usual frequencies $\text{base}^{-2i/d}$ and stops the
# others (frequency 0). Write `p_rope_frequencies(d_head, p, base)` that returns the `d_head / 2`
# frequencies as a NumPy array. The number of kept pairs is `int(p * d_head // 2)`, as Gemma's code counts
# them.

# %%
def p_rope_frequencies(d_head, p, base=10000.0):
    ### BEGIN SOLUTION
    omega = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    kept = int(p * d_head // 2)
    return np.where(np.arange(d_head // 2) < kept, omega, 0.0)
    ### END SOLUTION


# %% tags=["remove-output"]
check("q2")

# %% [markdown]
# ## Question 3: LongRoPE's frequencies (2 points)
#
# Phi-3's long-context models divide pair $i$'s frequency by a searched factor $\lambda_i$:
# $\omega'_i = \omega_i / \lambda_i$. The configuration ships two lists of `d_head / 2` factors:
# `short_factor`, used while the sequence is no longer than `original_length`, and `long_factor`, used once
# `seq_len` is longer than it. Write
# `longrope_frequencies(d_head, base, short_factor, long_factor, original_length, seq_len)` that returns the
# `d_head / 2` frequencies as a NumPy array. Leave the two lists of factors unchanged.

# %%
def longrope_frequencies(d_head, base, short_factor, long_factor, original_length, seq_len):
    ### BEGIN SOLUTION
    factors = np.asarray(long_factor if seq_len > original_length else short_factor, dtype=np.float64)
    omega = base ** (-np.arange(0, d_head, 2, dtype=np.float64) / d_head)
    return omega / factors
    ### END SOLUTION


# %% tags=["remove-output"]
check("q3")

# %% [markdown]
# ## Question 4: LongRoPE's attention factor (1 point)
#
# Phi-3 also multiplies the cosines and sines, at every length, by $\sqrt{1 + \ln s / \ln L}$, where $L$ is
# `original_length` and $s$ = `max_length / original_length` (1 when $s \le 1$). Write
# `longrope_attention_factor(original_length, max_length)` that returns it as a float.

# %%
def longrope_attention_factor(original_length, max_length):
    ### BEGIN SOLUTION
    scale = max_length / original_length
    if scale <= 1:
        return 1.0
    return math.sqrt(1 + math.log(scale) / math.log(original_length))
    ### END SOLUTION


# %% tags=["remove-output"]
check("q4")

# %% [markdown] tags=["solution"]
# For Phi-3 (4096 to 131,072 positions, $s$ = 32) the logits are multiplied by the square of the factor:

# %% tags=["solution"]
print(longrope_attention_factor(4096, 131072), longrope_attention_factor(4096, 131072) ** 2)

# %% [markdown]
# ## Question 5: Llama 4's temperature (1 point)
#
# Llama 4's layers without position multiply the query at position `pos` by
# $1 + a \ln\bigl(1 + \lfloor (\text{pos} + 1)/f \rfloor\bigr)$, with `attn_scale` $a$ and `floor_scale`
# $f$ (0.1 and 8192 in Llama 4 Scout). Write `llama4_query_scale(positions, floor_scale, attn_scale)` that
# returns the factor for every position of a 1-D array, as a float array of the same shape. Leave
# `positions` unchanged.

# %%
def llama4_query_scale(positions, floor_scale, attn_scale):
    ### BEGIN SOLUTION
    positions = np.asarray(positions, dtype=np.float64)
    return 1 + attn_scale * np.log1p(np.floor((positions + 1) / floor_scale))
    ### END SOLUTION


# %% tags=["remove-output"]
check("q5")

# %% [markdown]
# ## Question 6: what latent attention can absorb (2 points)
#
# In multi-head latent attention a token caches a latent $c_j$; head $h$'s key is $W_{UK,h} c_j$, and the
# logit $q^\top W_{UK,h} c_j = (W_{UK,h}^\top q)^\top c_j$ lets the query absorb $W_{UK,h}$, so the cache
# holds $c_j$ only. In which of these designs can $W_{UK,h}$ still be absorbed into the query, once per
# query, with the cache holding per token only the latent (plus, where the design has one, a single key
# shared by all heads)? Assign the letters of **all** such designs to `absorbing_designs`, e.g. `"bd"`.
#
# - a. No position anywhere.
# - b. Each head's key turned by rotary after its up-projection, $R_j W_{UK,h} c_j$, and the query by $R_i$.
# - c. DeepSeek's decoupled part: extra rotary coordinates per query head and one turned rotary key per
#   token shared by all heads, added to the logit.
# - d. An ALiBi-style bias $-m_h (i - j)$ added to every logit.
# - e. A sinusoidal encoding added to the input $x_j$ before the latent is computed from it.
# - f. A learned matrix $M_{j-i}$ for every offset, multiplying each head's key: $M_{j-i} W_{UK,h} c_j$.

# %%
### BEGIN SOLUTION
absorbing_designs = "acde"
### END SOLUTION
### BEGIN STUB
absorbing_designs = ...
### END STUB

# %% tags=["remove-output"]
check("q6")

# %% [markdown]
# ## Question 7: reading the table of today's models (2 points)
#
# The chapter's table is computed from the configuration fields of ten open models (one of them a configuration class's defaults):
#
# {{ posenc.exercises.checks.ch09:table_markdown }}
#
# Which statements does it support, with what the chapter says about each field? Assign the letters of
# **all** supported statements to `table_statements`.
#
# - a. Llama 3.1's scaling leaves the frequency of its fastest pairs unchanged.
# - b. Gemma 3's local and global layers turn at the same base.
# - c. Qwen2.5 7B Instruct, as downloaded, reads long inputs with YaRN.
# - d. Every turning pair of GPT-NeoX-20B makes at least one full turn over its 2048 positions.
# - e. Some of Llama 4 Scout's layers have no position at all.

# %%
### BEGIN SOLUTION
table_statements = "ae"
### END SOLUTION
### BEGIN STUB
table_statements = ...
### END STUB

# %% tags=["remove-output"]
check("q7")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too, so
# make each one right, not only its check.

# %%
check.summary()
