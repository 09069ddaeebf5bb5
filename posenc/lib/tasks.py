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


# ---------------------------------------------------------------------------------------------------
# Chapter 7's length-generalisation tasks. Each is decoder-style (read left to right, predict at every
# scored position) and generated from a torch.Generator, so a seed fixes every batch.
#
# ``streaming`` says whether one rule holds at every position whatever the sequence's length: then the
# prediction at position t of a long sequence is the prediction on its first t + 1 tokens (for a causal
# model), and one long test sequence measures every length at once. Copy is not streaming: where the
# copy starts depends on the length, so it is measured one length at a time.


def _check_lengths(batch_size: int, seq_len: int, shortest: int) -> None:
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if seq_len < shortest:
        raise ValueError(f"seq_len must be >= {shortest} for this task, got {seq_len}")


@dataclass(frozen=True)
class LocalMax:
    """At every position t >= window - 1, predict the largest of the last ``window`` tokens x_{t-w+1..t}.

    A local rule, like most of what a language model predicts: the answer lies among the most recent
    tokens, and everything further back must be ignored. So it needs position (which tokens are the last
    ``window``), and a bias towards recent tokens helps.
    """

    vocab_size: int = 16
    window: int = 3
    streaming = True

    def __post_init__(self):
        if self.vocab_size < 2 or self.window < 2:
            raise ValueError(f"need vocab_size >= 2 and window >= 2, got {self.vocab_size}, {self.window}")

    def batch(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        _check_lengths(batch_size, seq_len, 1)
        tokens = torch.randint(0, self.vocab_size, (batch_size, seq_len), generator=generator)
        windows = tokens.unfold(1, self.window, 1) if seq_len >= self.window else tokens[:, :0, None]
        targets = torch.full_like(tokens, IGNORE)
        targets[:, self.window - 1:] = windows.max(dim=-1).values
        return tokens, targets

    @property
    def chance(self) -> float:
        return 1.0 / self.vocab_size


@dataclass(frozen=True)
class FirstToken:
    """At every position t >= 1, predict the first token of the sequence, x_0.

    Retrieval of a distant token: the answer is the token furthest back, t positions away, so a bias
    towards recent tokens works against it. The model must know which token came first (position), but
    nothing about the token itself marks it.
    """

    vocab_size: int = 16
    streaming = True

    def batch(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        _check_lengths(batch_size, seq_len, 1)
        tokens = torch.randint(0, self.vocab_size, (batch_size, seq_len), generator=generator)
        targets = tokens[:, :1].expand(-1, seq_len).clone()
        targets[:, 0] = IGNORE
        return tokens, targets

    @property
    def chance(self) -> float:
        return 1.0 / self.vocab_size


@dataclass(frozen=True)
class Copy:
    """Copy a random string after a separator: x_0 .. x_{n-1}, SEP, x_0 .. x_{n-1}, with n = (seq_len - 1) // 2.

    Kazemnejad et al.'s "Copy" task in decoder-only form: from SEP on, each position predicts the next
    token of the copy (SEP predicts x_0, the copy of x_k predicts x_{k+1}); the n scored targets are the n
    tokens of the string. The string uses tokens 0 .. vocab_size - 2 and SEP is vocab_size - 1. The token
    to copy lies n + 1 places back, further for longer strings, so a recency bias works against it. An
    even ``seq_len`` gets one unscored filler token (0) at the end.

    Not streaming: the copy starts at position n, which depends on the length. Train on several lengths
    (``TrainConfig.train_lengths``) and measure each test length on its own.
    """

    vocab_size: int = 16
    streaming = False

    def __post_init__(self):
        if self.vocab_size < 3:
            raise ValueError(f"vocab_size must be >= 3 (at least two symbols and SEP), got {self.vocab_size}")

    @property
    def separator(self) -> int:
        return self.vocab_size - 1

    def batch(self, batch_size: int, seq_len: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        _check_lengths(batch_size, seq_len, 3)
        n = (seq_len - 1) // 2
        string = torch.randint(0, self.vocab_size - 1, (batch_size, n), generator=generator)
        separator = torch.full((batch_size, 1), self.separator)
        filler = torch.zeros((batch_size, seq_len - 2 * n - 1), dtype=string.dtype)
        tokens = torch.cat([string, separator, string, filler], dim=1)
        targets = torch.full_like(tokens, IGNORE)
        targets[:, n:2 * n] = string
        return tokens, targets

    @property
    def chance(self) -> float:
        return 1.0 / (self.vocab_size - 1)
