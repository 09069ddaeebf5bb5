"""Positional encodings as torch modules with one interface: ``module(seq_len) -> (seq_len, d_model)``.

Chapters 3 and 4 plug them into ``posenc.lib.models.TinyTransformer``. Both modules expose their rows as
``module.table`` (a buffer for the sinusoidal encoding, the trainable weight for the learned one), so a
chapter can compare them directly.
"""

from __future__ import annotations

import torch
from torch import nn

from posenc.lib.encoding import DEFAULT_BASE, sinusoidal_encoding_torch

OVERFLOW_MODES = ("error", "clamp")


class SinusoidalPositionalEncoding(nn.Module):
    """The fixed sinusoidal table, stored as a buffer: it moves with ``.to()`` but is never trained.

    It is defined for any length: asking for more rows than precomputed extends the table.
    """

    def __init__(self, d_model: int, max_len: int = 512, base: float = DEFAULT_BASE):
        super().__init__()
        self.d_model, self.base = d_model, base
        self.register_buffer("table", sinusoidal_encoding_torch(max_len, d_model, base), persistent=False)

    def forward(self, seq_len: int) -> torch.Tensor:
        if seq_len > self.table.shape[0]:
            self.table = sinusoidal_encoding_torch(seq_len, self.d_model, self.base,
                                                   dtype=self.table.dtype, device=self.table.device)
        return self.table[:seq_len]


class LearnedPositionalEmbedding(nn.Module):
    """A trainable table with one row per position, ``nn.Embedding(max_len, d_model)``.

    It has no row for a position >= max_len. What happens there is a choice, ``overflow``:

    * ``"error"`` (default): raise a ValueError that names max_len (never torch's bare IndexError);
    * ``"clamp"``: every position >= max_len reuses the last row, max_len - 1. The model then cannot
      tell those positions apart; chapter 4 measures what that costs.
    """

    def __init__(self, max_len: int, d_model: int, init_std: float = 0.02, overflow: str = "error"):
        super().__init__()
        if overflow not in OVERFLOW_MODES:
            raise ValueError(f"overflow must be one of {OVERFLOW_MODES}, got {overflow!r}")
        self.max_len, self.overflow = max_len, overflow
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=init_std)

    @property
    def table(self) -> torch.Tensor:
        """The (max_len, d_model) trainable rows."""
        return self.embedding.weight

    @classmethod
    def from_table(cls, table: torch.Tensor, overflow: str = "error") -> "LearnedPositionalEmbedding":
        """A module whose rows are a copy of ``table`` (max_len, d_model), e.g. the first rows of a trained one."""
        module = cls(table.shape[0], table.shape[1], overflow=overflow)
        with torch.no_grad():
            module.embedding.weight.copy_(table)
        return module

    def forward(self, seq_len: int) -> torch.Tensor:
        if seq_len <= self.max_len:
            return self.embedding.weight[:seq_len]
        if self.overflow == "clamp":
            rows = torch.arange(seq_len, device=self.embedding.weight.device).clamp(max=self.max_len - 1)
            return self.embedding.weight[rows]
        raise ValueError(f"a learned positional embedding has rows for positions 0..{self.max_len - 1} only "
                         f"(max_len={self.max_len}); this input needs positions up to {seq_len - 1}")
