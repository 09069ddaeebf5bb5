"""Positional encodings as torch modules with one interface: ``module(seq_len) -> (seq_len, d_model)``.

Chapters 3 and 4 plug them into ``posenc.models.TinyTransformer``.
"""

from __future__ import annotations

import torch
from torch import nn

from posenc.encoding import DEFAULT_BASE, sinusoidal_encoding_torch


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

    It has no row for a position >= max_len; asking for one raises a ValueError that says so.
    """

    def __init__(self, max_len: int, d_model: int, init_std: float = 0.02):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=init_std)

    def forward(self, seq_len: int) -> torch.Tensor:
        if seq_len > self.max_len:
            raise ValueError(f"a learned positional embedding has rows for positions 0..{self.max_len - 1} only "
                             f"(max_len={self.max_len}); this input needs positions up to {seq_len - 1}")
        return self.embedding.weight[:seq_len]
