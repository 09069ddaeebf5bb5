"""Position beyond one dimension (chapter 10): image patches on a grid, video frames, and text beside them.

A Vision Transformer cuts an image into an H x W grid of patches and reads them as a sequence in *raster
order*, row after row: the patch in row y (from the top) and column x (from the left) is token
t = y W + x. Every encoding of the course can be given that 1-D index, but the grid has two coordinates,
and the encodings of this module use both. Coordinates are always (x, y) = (column, row), both from 0.

* Absolute tables, added to the input (chapters 1-4): :func:`sinusoidal_grid_table`, half the width for x
  and half for y; a learned table with one row per patch (ViT), which :func:`interpolate_grid_table`
  resizes to another grid, as ViT does when the resolution changes.
* Rotary (chapter 6) with a **frequency matrix**: pair i of a head turns by the angle f_i . p, the dot
  product of its frequency vector f_i with the token's position vector p (here (x, y), or (t, h, w) for
  M-RoPE). Every 2-D and 3-D rotary encoding in use is a choice of the matrix F whose columns are the f_i:

  * raster-order 1-D rotary: f_i = omega_i (1, W) (:func:`raster_frequencies`), since t = x + W y;
  * axial (RoPE-Axial, Heo et al. 2024): half the pairs turn with x, half with y
    (:func:`axial_frequencies`);
  * mixed (RoPE-Mixed, Heo et al. 2024): every f_i is learned, any direction in the plane
    (:func:`mixed_frequencies` draws their starting values);
  * M-RoPE (Qwen2-VL, Wang et al. 2024): three axes (time, height, width); ``mrope_section`` gives each
    axis a block of consecutive pairs (:func:`mrope_frequencies`, :func:`mrope_position_ids`).

  :func:`apply_grid_rotary` turns a query or key by F for any of them; the logit then depends on the
  offset p_n - p_m of the two position vectors only (chapter 10's theorem).
* Modules for ``posenc.lib.models.TinyTransformer`` (grid-aware: :func:`set_grid` tells them the grid
  the next batches have) and the toy task :class:`GridShift`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from posenc.lib.attention import AttentionPosition
from posenc.lib.encoding import DEFAULT_BASE, encoding_at, frequencies
from posenc.lib.rotary import rotate
from posenc.lib.tasks import IGNORE

# Heo et al. 2024 (naver-ai/rope-vit): RoPE-Axial uses base 100 and RoPE-Mixed starts its frequencies from
# base 10; language models use 10 000 (Qwen2-VL: 1 000 000).
AXIAL_BASE = 100.0
MIXED_BASE = 10.0
LAYOUTS = ("interleaved", "half")


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _grid(grid) -> tuple[int, int]:
    """(height, width) as two positive ints."""
    try:
        height, width = grid
    except (TypeError, ValueError):
        raise ValueError(f"a grid is (height, width), got {grid!r}") from None
    return _positive_int("height", height), _positive_int("width", width)


def _width_multiple_of(d: int, factor: int, what: str) -> int:
    d = _positive_int(what, d)
    if d % factor:
        raise ValueError(f"{what} must be a multiple of {factor} (whole pairs for each axis), got {d}")
    return d


# ---------------------------------------------------------------------------------------------------
# The grid and raster order


def grid_coordinates(height: int, width: int) -> torch.Tensor:
    """(height * width, 2) integer coordinates (x, y) of the cells in raster order (row after row)."""
    height, width = _grid((height, width))
    rows, cols = torch.meshgrid(torch.arange(height), torch.arange(width), indexing="ij")
    return torch.stack([cols.reshape(-1), rows.reshape(-1)], dim=-1)


def raster_index(coordinates, width: int) -> torch.Tensor:
    """The 1-D raster position t = x + width * y of each (x, y) (the last axis of ``coordinates``)."""
    coordinates = torch.as_tensor(coordinates)
    return coordinates[..., 0] + _positive_int("width", width) * coordinates[..., 1]


# ---------------------------------------------------------------------------------------------------
# Absolute tables


def sinusoidal_grid_table(height: int, width: int, d_model: int, base: float = DEFAULT_BASE) -> np.ndarray:
    """The 2-D sinusoidal table, (height * width, d_model), rows in raster order.

    Columns 0 .. d/2 - 1 hold chapter 1's encoding of width d/2 at the cell's x, columns d/2 .. d - 1 the
    same encoding at its y (interleaved sin/cos pairs in each half). MAE's ``get_2d_sincos_pos_embed``
    builds the same kind of table with another layout inside each half.
    """
    d_model = _width_multiple_of(d_model, 4, "d_model")
    coordinates = grid_coordinates(height, width).numpy()
    return np.concatenate([encoding_at(coordinates[:, 0], d_model // 2, base),
                           encoding_at(coordinates[:, 1], d_model // 2, base)], axis=1)


def interpolate_grid_table(table: torch.Tensor, source_grid, target_grid, mode: str = "bicubic") -> torch.Tensor:
    """A table of one row per cell of ``source_grid`` resized to ``target_grid``, as ViT does at another
    resolution: the rows are laid out as an image with d channels and resized (bicubic by default,
    ``align_corners=False``, as timm's ``resample_abs_pos_embed``).

    Each new cell takes its row from the old table at the same *fraction* of the image: cell x' of W'
    columns reads the old table at x = (x' + 1/2) W / W' - 1/2. So the table is stretched, not extended,
    and one step on the new grid is W / W' of a step on the old one: position interpolation in 2-D.
    """
    (height, width), target = _grid(source_grid), _grid(target_grid)
    table = torch.as_tensor(table)
    if table.ndim != 2 or table.shape[0] != height * width:
        raise ValueError(f"the table must have one row per cell of a {height} x {width} grid, "
                         f"({height * width}, d), got shape {tuple(table.shape)}")
    if target == (height, width):
        return table
    image = table.T.reshape(1, table.shape[1], height, width)
    resized = F.interpolate(image, size=target, mode=mode, align_corners=False)
    return resized.reshape(table.shape[1], -1).T


def interpolated_coordinate(new_index, old_size: int, new_size: int):
    """Where cell ``new_index`` of an axis of ``new_size`` cells reads a table of ``old_size`` cells."""
    return (np.asarray(new_index, dtype=np.float64) + 0.5) * old_size / new_size - 0.5


# ---------------------------------------------------------------------------------------------------
# Rotary with a frequency matrix


def axial_frequencies(d_head: int, base: float = AXIAL_BASE) -> torch.Tensor:
    """RoPE-Axial's frequency matrix, (2, d_head / 2): pairs 0 .. d/4 - 1 turn with x, the others with y.

    Each axis gets the 1-D frequencies of a head of width d/2, base^(-2k / (d/2)) for k < d/4 (Heo et al.:
    base 100). Row 0 is the x-component of every pair's frequency vector, row 1 the y-component.
    """
    d_head = _width_multiple_of(d_head, 4, "d_head")
    omega = torch.from_numpy(frequencies(d_head // 2, base))
    zero = torch.zeros_like(omega)
    return torch.stack([torch.cat([omega, zero]), torch.cat([zero, omega])])


def raster_frequencies(d_head: int, width: int, base: float = DEFAULT_BASE) -> torch.Tensor:
    """The frequency matrix of 1-D rotary in raster order on a grid of ``width`` columns, (2, d_head / 2).

    t = x + width * y, so pair i turns by omega_i t = omega_i x + (width omega_i) y: its frequency vector is
    omega_i (1, width), and it depends on the grid's width.
    """
    omega = torch.from_numpy(frequencies(_width_multiple_of(d_head, 2, "d_head"), base))
    return torch.stack([omega, _positive_int("width", width) * omega])


def mixed_frequencies(d_head: int, n_heads: int = 1, base: float = MIXED_BASE, generator=None) -> torch.Tensor:
    """RoPE-Mixed's starting frequencies, (n_heads, 2, d_head / 2), which training then changes.

    Heo et al.'s initialisation: the sizes are the axial ones (base 10), and every head turns them to a
    random direction phi: pairs k < d/4 get the frequency vector |f_k| (cos phi, sin phi), pairs d/4 + k
    the perpendicular one, |f_k| (cos(phi + pi/2), sin(phi + pi/2)). With phi = 0 this is axial.
    """
    d_head, n_heads = _width_multiple_of(d_head, 4, "d_head"), _positive_int("n_heads", n_heads)
    size = torch.from_numpy(frequencies(d_head // 2, base))
    phi = torch.rand(n_heads, 1, dtype=torch.float64, generator=generator) * 2 * math.pi
    directions = torch.cat([phi.expand(-1, len(size)), (phi + math.pi / 2).expand(-1, len(size))], dim=1)
    sizes = torch.cat([size, size])
    return torch.stack([sizes * directions.cos(), sizes * directions.sin()], dim=1)


def grid_angles(positions, frequency_matrix) -> torch.Tensor:
    """The angle f_i . p of every pair: positions (..., n, k) times the matrix (..., k, n_pairs), in float64.

    Leading axes broadcast (one matrix per head: (heads, k, n_pairs) gives (heads, n, n_pairs)).
    """
    positions = torch.as_tensor(positions).to(torch.float64)
    frequency_matrix = torch.as_tensor(frequency_matrix).to(torch.float64)
    if positions.shape[-1] != frequency_matrix.shape[-2]:
        raise ValueError(f"positions have {positions.shape[-1]} coordinates but the frequency matrix has "
                         f"{frequency_matrix.shape[-2]} rows, one per coordinate")
    return positions @ frequency_matrix


def apply_grid_rotary(x: torch.Tensor, positions, frequency_matrix, layout: str = "interleaved") -> torch.Tensor:
    """Turn pair i of the vector at position p by the angle f_i . p (``grid_angles``).

    x: (..., n, d); positions: (n, k); frequency_matrix: (k, d / 2), or (heads, k, d / 2) for x of shape
    (..., heads, n, d). ``layout`` says which coordinates form pair i (``posenc.lib.rotary``).
    """
    angles = grid_angles(positions, frequency_matrix)
    if 2 * angles.shape[-1] != x.shape[-1]:
        raise ValueError(f"the frequency matrix turns {angles.shape[-1]} pairs, but x has width {x.shape[-1]}")
    return rotate(x, angles.cos().to(x.dtype), angles.sin().to(x.dtype), layout)


# ---------------------------------------------------------------------------------------------------
# M-RoPE: three axes, text and images in one sequence (Qwen2-VL)


def mrope_frequencies(d_head: int, mrope_section, base: float = DEFAULT_BASE) -> torch.Tensor:
    """M-RoPE's frequency matrix, (3, d_head / 2): the 1-D frequencies of the head, pair i assigned to one axis.

    ``mrope_section`` = (n_t, n_h, n_w) numbers of consecutive pairs for time, height and width, adding up
    to d_head / 2 (Qwen2-VL: (16, 24, 24) for heads of 128). Pair i keeps its 1-D frequency omega_i; only
    the coordinate it multiplies changes. A token with equal ids on the three axes (text) is therefore
    turned exactly as by 1-D rotary.
    """
    omega = torch.from_numpy(frequencies(_width_multiple_of(d_head, 2, "d_head"), base))
    section = [int(n) for n in mrope_section]
    if len(section) != 3 or min(section) < 0 or sum(section) != len(omega):
        raise ValueError(f"mrope_section must be three counts of pairs adding up to d_head / 2 = {len(omega)}, "
                         f"got {list(mrope_section)}")
    axis_of_pair = torch.repeat_interleave(torch.arange(3), torch.tensor(section))
    matrix = torch.zeros(3, len(omega), dtype=torch.float64)
    matrix[axis_of_pair, torch.arange(len(omega))] = omega
    return matrix


def vision_position_ids(start: int, grid) -> torch.Tensor:
    """(3, t * h * w) ids (time, height, width) of a picture or video of ``grid`` = (t, h, w) tokens, in
    raster order frame after frame, every axis counted from ``start``."""
    frames, height, width = (_positive_int(name, n) for name, n in zip(("t", "h", "w"), grid))
    t, y, x = torch.meshgrid(torch.arange(frames), torch.arange(height), torch.arange(width), indexing="ij")
    return torch.stack([t.reshape(-1), y.reshape(-1), x.reshape(-1)]) + int(start)


def mrope_position_ids(segments) -> torch.Tensor:
    """M-RoPE's (3, n) position ids of a sequence of text and vision segments (Qwen2-VL's rule).

    ``segments``: ("text", number of tokens) or ("image", (h, w)) or ("video", (t, h, w)), in order, with
    h and w the grid of tokens the language model reads. Text token j of a segment that starts at s gets
    s + j on all three axes; a vision segment gets ``vision_position_ids(s, grid)``. The next segment
    starts one past the largest id so far.
    """
    parts, start = [], 0
    for kind, size in segments:
        if kind == "text":
            ids = torch.arange(_positive_int("a text segment's length", size)).expand(3, -1) + start
        elif kind in ("image", "video"):
            grid = (1, *size) if kind == "image" else tuple(size)
            if len(grid) != 3:
                raise ValueError(f"an image is (h, w) and a video (t, h, w), got {kind} {size!r}")
            ids = vision_position_ids(start, grid)
        else:
            raise ValueError(f"a segment is 'text', 'image' or 'video', got {kind!r}")
        parts.append(ids)
        start = int(ids.max()) + 1
    if not parts:
        raise ValueError("a sequence needs at least one segment")
    return torch.cat(parts, dim=1)


def apply_mrope(x: torch.Tensor, position_ids, mrope_section, base: float = DEFAULT_BASE,
                layout: str = "half") -> torch.Tensor:
    """M-RoPE: turn x (..., n, d) by ``mrope_frequencies`` at the (3, n) ``position_ids``.

    Qwen2-VL uses the rotate-half layout (``layout="half"``), as Hugging Face's Llama does.
    """
    position_ids = torch.as_tensor(position_ids)
    if position_ids.ndim != 2 or position_ids.shape[0] != 3:
        raise ValueError(f"position_ids must have shape (3, n): time, height and width, got {tuple(position_ids.shape)}")
    return apply_grid_rotary(x, position_ids.T, mrope_frequencies(x.shape[-1], mrope_section, base), layout)


# ---------------------------------------------------------------------------------------------------
# Modules for the tiny Transformer


class GridAware:
    """A position module that needs the grid of the tokens it reads: ``set_grid(height, width)``."""

    grid: tuple[int, int]

    def set_grid(self, height: int, width: int):
        self.grid = _grid((height, width))
        return self

    def _check_length(self, n: int) -> None:
        if n != self.grid[0] * self.grid[1]:
            raise ValueError(f"{n} tokens do not fill the {self.grid[0]} x {self.grid[1]} grid this module was "
                             "set to; call posenc.lib.multidim.set_grid(model, height, width) first")


class SinusoidalGridTable(GridAware, nn.Module):
    """The 2-D sinusoidal table as an input module: ``module(n)`` gives the (n, d_model) table of the grid
    set by ``set_grid`` (defined for any grid)."""

    def __init__(self, d_model: int, grid, base: float = DEFAULT_BASE):
        super().__init__()
        self.d_model, self.base = _width_multiple_of(d_model, 4, "d_model"), float(base)
        self.set_grid(*grid)

    def forward(self, seq_len: int) -> torch.Tensor:
        self._check_length(seq_len)
        return torch.from_numpy(sinusoidal_grid_table(*self.grid, self.d_model, self.base)).to(
            torch.get_default_dtype())


class LearnedGridTable(GridAware, nn.Module):
    """ViT's learned table: one trainable row per cell of the training grid, ``table`` (H * W, d_model).

    On another grid (``set_grid``) it returns the table resized by :func:`interpolate_grid_table`.
    """

    def __init__(self, d_model: int, grid, init_std: float = 0.02, mode: str = "bicubic"):
        super().__init__()
        self.trained_grid, self.mode = _grid(grid), mode
        self.table = nn.Parameter(torch.randn(self.trained_grid[0] * self.trained_grid[1], d_model) * init_std)
        self.set_grid(*grid)

    def forward(self, seq_len: int) -> torch.Tensor:
        self._check_length(seq_len)
        return interpolate_grid_table(self.table, self.trained_grid, self.grid, self.mode)


class GridRotaryPosition(GridAware, AttentionPosition):
    """Rotary attention with a frequency matrix per head, (n_heads, 2, d_head / 2): axial or mixed.

    The model hands it the raster positions t = 0 .. n - 1; it turns them into (x, y) = (t mod W, t div W)
    on the grid set by ``set_grid``, so the same model reads any grid. ``learned=True`` makes the matrix a
    parameter (RoPE-Mixed; Heo et al. learn one per layer, here the layers share it); else it is a buffer.
    """

    name = "grid_rope"

    def __init__(self, frequency_matrix: torch.Tensor, grid, learned: bool = False,
                 layout: str = "interleaved"):
        super().__init__()
        frequency_matrix = torch.as_tensor(frequency_matrix, dtype=torch.float64)
        if frequency_matrix.ndim != 3 or frequency_matrix.shape[1] != 2:
            raise ValueError(f"the frequency matrix must be (n_heads, 2, d_head / 2), got {tuple(frequency_matrix.shape)}")
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        self.layout, self.learned = layout, learned
        n_heads, _, n_pairs = frequency_matrix.shape
        self.requires = {"n_heads": n_heads, "d_head": 2 * n_pairs}
        matrix = frequency_matrix.to(torch.get_default_dtype()).clone()      # never the caller's tensor
        if learned:
            self.frequency_matrix = nn.Parameter(matrix)
        else:
            self.register_buffer("frequency_matrix", matrix, persistent=False)
        self.set_grid(*grid)

    @classmethod
    def axial(cls, d_head: int, n_heads: int, grid, base: float = AXIAL_BASE) -> "GridRotaryPosition":
        return cls(axial_frequencies(d_head, base).expand(n_heads, -1, -1), grid)

    @classmethod
    def mixed(cls, d_head: int, n_heads: int, grid, base: float = MIXED_BASE, generator=None) -> "GridRotaryPosition":
        return cls(mixed_frequencies(d_head, n_heads, base, generator), grid, learned=True)

    def coordinates(self, positions) -> torch.Tensor:
        """(n, 2) coordinates (x, y) of raster positions on the current grid."""
        positions = torch.as_tensor(positions)
        if positions.is_floating_point() or positions.min() < 0 or positions.max() >= self.grid[0] * self.grid[1]:
            raise ValueError(f"raster positions must be integers in 0..{self.grid[0] * self.grid[1] - 1} "
                             f"for the {self.grid[0]} x {self.grid[1]} grid")
        width = self.grid[1]
        return torch.stack([positions % width, positions // width], dim=-1)

    def prepare(self, query_positions, key_positions, dtype) -> dict:
        def cos_sin(positions):
            angles = self.coordinates(positions).to(self.frequency_matrix.dtype) @ self.frequency_matrix
            return angles.cos().to(dtype), angles.sin().to(dtype)           # (heads, n, d_head / 2)
        query = cos_sin(query_positions)
        return {"query": query, "key": query if key_positions is query_positions else cos_sin(key_positions)}

    def turn(self, q, k, state, layer=0):         # the same matrix in every layer
        return rotate(q, *state["query"], self.layout), rotate(k, *state["key"], self.layout)

    def extra_repr(self) -> str:
        return f"grid={self.grid}, learned={self.learned}, layout={self.layout!r}"


def set_grid(model: nn.Module, height: int, width: int) -> nn.Module:
    """Tell every grid-aware part of a model which grid the next batches have; return the model.

    A model whose position parts are not grid-aware (1-D rotary in raster order, no encoding) is left as
    it is: it reads the raster index and knows nothing of the grid.
    """
    for module in model.modules():
        if isinstance(module, GridAware):
            module.set_grid(height, width)
    return model


# ---------------------------------------------------------------------------------------------------
# The toy task


@dataclass(frozen=True)
class GridShift:
    """A grid of random tokens read in raster order; at every cell predict the token ``dy`` rows up and ``dx``
    columns left (cells with no such neighbour are not scored). The default, dy = 1, dx = 0: "the token
    above". On a grid of width W that token lies W places back in raster order, so a 1-D offset solves the
    task on one width only.
    """

    vocab_size: int = 16
    height: int = 6
    width: int = 6
    dy: int = 1
    dx: int = 0

    def __post_init__(self):
        _grid((self.height, self.width))
        if self.vocab_size < 2 or not (0 <= self.dy < self.height and 0 <= self.dx < self.width) or self.dx == self.dy == 0:
            raise ValueError(f"need vocab_size >= 2 and a neighbour inside the grid, got vocab_size={self.vocab_size}, "
                             f"dy={self.dy}, dx={self.dx} on {self.height} x {self.width}")

    @property
    def grid(self) -> tuple[int, int]:
        return self.height, self.width

    @property
    def length(self) -> int:
        return self.height * self.width

    def on(self, height: int, width: int) -> "GridShift":
        """The same task on another grid."""
        return GridShift(self.vocab_size, height, width, self.dy, self.dx)

    def batch(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        if seq_len != self.length:
            raise ValueError(f"this task's grid is {self.height} x {self.width}, so its sequences have "
                             f"{self.length} tokens, not {seq_len}")
        tokens = torch.randint(0, self.vocab_size, (batch_size, self.height, self.width), generator=generator)
        targets = torch.full_like(tokens, IGNORE)
        targets[:, self.dy:, self.dx:] = tokens[:, :self.height - self.dy, :self.width - self.dx]
        return tokens.flatten(1), targets.flatten(1)

    @property
    def chance(self) -> float:
        return 1.0 / self.vocab_size
