"""Order-sensitive toy tasks, generated on the fly from a seed (no data sets to download)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

IGNORE = -100   # target value that the loss and the accuracy skip


@dataclass(frozen=True)
class ShiftedCopy:
    """At every position t >= offset, predict the token that stood ``offset`` places earlier.

    Without positional information a self-attention model cannot tell which token came before which,
    so it can do no better than chance (1 / vocab_size).
    """

    vocab_size: int = 16
    offset: int = 1

    def batch(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = torch.randint(0, self.vocab_size, (batch_size, seq_len), generator=generator)
        targets = torch.full_like(tokens, IGNORE)
        targets[:, self.offset:] = tokens[:, : seq_len - self.offset]
        return tokens, targets

    @property
    def chance(self) -> float:
        return 1.0 / self.vocab_size
