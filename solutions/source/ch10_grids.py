# %% [markdown]
# # Exercises 10: position beyond one dimension
#
# These exercises go with the chapter *Position beyond one dimension: images, video and text together*. Each
# question asks you to write a function or a value in the cell marked `# your code here`; the cell after it,
# `check("q1")`, calls your code on inputs of its own choosing and prints one line: `PASS`, or `FAIL` with
# the mistake it recognised, or `TODO` while the placeholder is still there.
#
# Write your own code with NumPy: the course's `posenc.lib.multidim` holds the reference answers, so importing
# it here would teach you nothing. Leave your functions' inputs as they are (compute on copies, never write
# into them): the checks test that they are unchanged.
#
# Notation: on a grid of `height` rows and `width` columns, a cell has the column $x$ and the row $y$, both
# from 0. Raster order reads the grid row after row, so the cell $(x, y)$ is token $t = x + \text{width}\cdot y$.
# Chapter 1's sinusoidal encoding of width $d$ puts $\sin(\omega_k\, \text{pos})$ in column $2k$ and
# $\cos(\omega_k\, \text{pos})$ in column $2k + 1$, with $\omega_k = \text{base}^{-2k/d}$.
#
# {{ posenc.exercises.framework:checking_rules }}

# %%
import numpy as np

from posenc.exercises import checker

check = checker("ch10")

# %% [markdown]
# ## Question 1: the 2-D sinusoidal table (2 points)
#
# Write `grid_table(height, width, d_model, base=10000.0)`, the 2-D sinusoidal table of the chapter: an array
# of shape `(height * width, d_model)` with one row per cell in raster order. Row $t$ is the cell
# $(x, y)$ with $t = x + \text{width}\cdot y$; its first `d_model // 2` columns are chapter 1's encoding of
# width `d_model // 2` at position $x$, its last `d_model // 2` columns the same encoding at position $y$.
# `d_model` is a multiple of 4.

# %%
def grid_table(height, width, d_model, base=10000.0):
    ### BEGIN SOLUTION
    d_half = d_model // 2
    omega = base ** (-2 * np.arange(d_half // 2) / d_half)
    y, x = np.divmod(np.arange(height * width), width)

    def encode(positions):
        block = np.empty((len(positions), d_half))
        block[:, 0::2] = np.sin(positions[:, None] * omega)
        block[:, 1::2] = np.cos(positions[:, None] * omega)
        return block

    return np.concatenate([encode(x), encode(y)], axis=1)
    ### END SOLUTION


# %%
check("q1")

# %% [markdown] tags=["solution"]
# Every row's dot product with the others depends on the 2-D offset only: moving the anchor cell moves its
# map of dot products unchanged (here on a 6 by 6 grid, from cell (1, 1) to cell (3, 2)).

# %% tags=["solution"]
demo = grid_table(6, 6, 16)
near = (demo @ demo[1 + 6 * 1]).reshape(6, 6)
moved = (demo @ demo[3 + 6 * 2]).reshape(6, 6)
print(np.abs(moved[1:, 2:] - near[:-1, :-2]).max())

# %% [markdown]
# ## Question 2: axial 2-D rotary (2 points)
#
# Write `axial_rope(x, coords, base=100.0)`. `x` has shape `(n, d)`, one query or key per row, with `d` a
# multiple of 4; `coords` is an integer array of shape `(n, 2)`, the cell $(x, y)$ of each row. Turn the pairs
# of each row as RoPE-Axial does, in the interleaved layout (pair $i$ is coordinates $(2i, 2i + 1)$, turned
# counter-clockwise, $(a, b) \mapsto (a\cos\varphi - b\sin\varphi,\; a\sin\varphi + b\cos\varphi)$):
#
# - pair $k$ with $k < d/4$ by the angle $x\,\omega'_k$,
# - pair $d/4 + k$ by the angle $y\,\omega'_k$,
#
# where $\omega'_k = \text{base}^{-2k/(d/2)}$ are the frequencies of a head of width $d/2$. Return a new array
# of shape `(n, d)` and leave `x` and `coords` unchanged (the check tests it): the caller still needs them.

# %%
def axial_rope(x, coords, base=100.0):
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=np.float64)
    coords = np.asarray(coords, dtype=np.float64)
    d = x.shape[-1]
    omega = base ** (-2 * np.arange(d // 4) / (d // 2))
    angle = np.concatenate([coords[:, :1] * omega, coords[:, 1:] * omega], axis=1)
    a, b = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2] = a * np.cos(angle) - b * np.sin(angle)
    out[:, 1::2] = a * np.sin(angle) + b * np.cos(angle)
    return out
    ### END SOLUTION


# %%
check("q2")

# %% [markdown] tags=["solution"]
# The logit between two turned vectors depends on the 2-D offset only: moving both cells by the same amount
# leaves it as it was.

# %% tags=["solution"]
rng = np.random.default_rng(0)
q, k = rng.normal(size=(2, 1, 8))
first = axial_rope(q, np.array([[2, 5]])) @ axial_rope(k, np.array([[4, 1]])).T
moved = axial_rope(q, np.array([[9, 8]])) @ axial_rope(k, np.array([[11, 4]])).T
print(first.item(), moved.item())

# %% [markdown]
# ## Question 3: M-RoPE's position ids (2 points)
#
# A sequence holds `n_before` text tokens, then an image of `height` by `width` tokens in raster order, then
# `n_after` text tokens (`n_before` and `n_after` may be 0). Write `mrope_ids(n_before, height, width, n_after)`
# returning Qwen2-VL's position ids as an integer array of shape `(3, n)`, $n$ the number of tokens; row 0 is
# time, row 1 height, row 2 width:
#
# - text token $j$ of the first segment gets $j$ on all three axes;
# - with $s$ the first free id (one past the largest id before the image, 0 if there is none), the image's cell
#   $(x, y)$ gets the time id $s$, the height id $s + y$ and the width id $s + x$;
# - the text after the image starts one past the largest id so far and counts on by one per token, with equal
#   ids on all three axes.

# %%
def mrope_ids(n_before, height, width, n_after):
    ### BEGIN SOLUTION
    start = n_before
    y, x = np.divmod(np.arange(height * width), width)
    image = np.stack([np.full(height * width, start), start + y, start + x])
    resume = image.max() + 1
    before = np.tile(np.arange(n_before), (3, 1))
    after = np.tile(resume + np.arange(n_after), (3, 1))
    return np.concatenate([before, image, after], axis=1).astype(np.int64)
    ### END SOLUTION


# %%
check("q3")

# %% [markdown]
# ## Question 4: where a resized table is read (1 point)
#
# A ViT was trained on images of 224 pixels, a grid of 14 by 14 patches, and is fine-tuned at 384 pixels, a grid
# of 24 by 24. Its learned table is resized to the new grid as an image with `align_corners=False`, as timm and
# Hugging Face's ViT do (the original ViT code aligns the corner cells instead). At which column $x$ of the old
# table (a number with a fractional part) does column $x' = 17$ of the new grid read it? Assign the number to
# `old_x`.

# %%
### BEGIN SOLUTION
old_x = (17 + 0.5) * 14 / 24 - 0.5
### END SOLUTION
### BEGIN STUB
old_x = None  # your answer: a number
### END STUB

# %%
check("q4")

# %% [markdown]
# ## Question 5: one row up on another grid (1 point)
#
# A model is trained on images of 14 by 14 patches and read on images of 24 by 24. Take one attention head with
# fixed query and key contents. For which position encodings does the patch directly above a query get the same
# logit on both grids (whichever patch the query is)?
#
# - (a) axial 2-D rotary;
# - (b) 1-D rotary of the raster index;
# - (c) M-RoPE, for the tokens of an image inside a language model's sequence;
# - (d) ViT's learned table, resized to the new grid;
# - (e) mixed 2-D rotary with learned frequencies.
#
# Assign the letters of all that apply, as a string such as `"bd"`, to `keep_above`. The check explains the
# option you misjudged, so read its message.

# %%
### BEGIN SOLUTION
keep_above = "ace"
### END SOLUTION
### BEGIN STUB
keep_above = None  # your answer: letters such as "bd"
### END STUB

# %%
check("q5")

# %% [markdown]
# ## Your score
#
# The summary runs every check again. Your lecturer's grader calls your functions on other inputs too,
# so make each one right, not only its check.

# %%
check.summary()
