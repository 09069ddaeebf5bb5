"""A tiny Transformer encoder with a pluggable positional encoding, and its training loop.

One home for the model and the loop that chapters 3 and 4 train; keep it small enough that a chapter's
whole experiment runs in about a minute on a 2-core CPU.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from posenc.lib.tasks import IGNORE


class TinyTransformer(nn.Module):
    """Token embedding, positional information, a few encoder layers and a per-position classifier.

    combine:
      * ``"none"``: no positional information at all (``positional`` is ignored);
      * ``"add"``: x = embed_scale * E[token] + P[pos], width d_model;
      * ``"concat"``: x = [embed_scale * E[token]; P[pos]], the token part has d_model - positional
        width, so the total width stays d_model.
    """

    def __init__(self, vocab_size: int, d_model: int = 32, n_heads: int = 2, n_layers: int = 2,
                 positional: nn.Module | None = None, combine: str = "add", position_width: int | None = None,
                 embed_init_std: float | None = None, embed_scale: float = 1.0, causal: bool = False,
                 dim_feedforward: int | None = None):
        super().__init__()
        if combine not in ("none", "add", "concat"):
            raise ValueError(f"combine must be 'none', 'add' or 'concat', got {combine!r}")
        if combine != "none" and positional is None:
            raise ValueError(f"combine={combine!r} needs a positional module")
        self.combine, self.embed_scale, self.causal = combine, embed_scale, causal
        self.positional = positional if combine != "none" else None
        position_width = position_width or d_model // 2
        token_width = d_model - position_width if combine == "concat" else d_model
        self.position_width = position_width if combine == "concat" else d_model
        self.embedding = nn.Embedding(vocab_size, token_width)
        if embed_init_std is not None:          # default: PyTorch's N(0, 1)
            nn.init.normal_(self.embedding.weight, std=embed_init_std)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward or 2 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size)

    def inputs(self, tokens: torch.Tensor) -> torch.Tensor:
        """The first layer's input, (batch, seq, d_model)."""
        x = self.embed_scale * self.embedding(tokens)
        if self.combine == "none":
            return x
        table = self.positional(tokens.shape[1]).to(x.dtype)      # (seq, width)
        if table.shape[-1] != self.position_width:
            raise ValueError(f"combine={self.combine!r} needs a positional table of width {self.position_width}, "
                             f"but the positional module returns width {table.shape[-1]}")
        if self.combine == "add":
            return x + table
        return torch.cat([x, table.expand(tokens.shape[0], -1, -1)], dim=-1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq_len = tokens.shape[1]
        mask = nn.Transformer.generate_square_subsequent_mask(seq_len) if self.causal else None
        return self.head(self.encoder(self.inputs(tokens), mask=mask, is_causal=self.causal))


@dataclass
class TrainConfig:
    steps: int = 400
    batch_size: int = 64
    lr: float = 3e-3
    train_lengths: tuple[int, ...] = (16,)
    seed: int = 0


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    keep = targets != IGNORE
    return (logits.argmax(-1)[keep] == targets[keep]).float().mean().item()


def train(model: nn.Module, task, config: TrainConfig) -> list[float]:
    """Train with Adam on freshly sampled batches; return the loss of every step. Seeded and repeatable."""
    torch.manual_seed(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr)
    loss_fn = nn.CrossEntropyLoss(ignore_index=IGNORE)
    losses = []
    model.train()
    for step in range(config.steps):
        seq_len = config.train_lengths[step % len(config.train_lengths)]
        tokens, targets = task.batch(config.batch_size, seq_len, generator)
        loss = loss_fn(model(tokens).flatten(0, 1), targets.flatten())
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def evaluate(model: nn.Module, task, seq_len: int, n_sequences: int = 512, seed: int = 12345,
             window: int | None = None) -> float:
    """Accuracy on fresh sequences of one length (a seed disjoint from training's by default).

    With ``window``, the model reads the sequence through ``predict_windowed`` (never more than ``window``
    tokens at a time).
    """
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    tokens, targets = task.batch(n_sequences, seq_len, generator)
    logits = model(tokens) if window is None else predict_windowed(model, tokens, window)
    return accuracy(logits, targets)


@torch.no_grad()
def predict_windowed(model: nn.Module, tokens: torch.Tensor, window: int, stride: int | None = None) -> torch.Tensor:
    """Logits for a long sequence computed from windows of at most ``window`` tokens.

    Windows start at 0, stride, 2 * stride, ... (default stride: window // 2). Each position takes its
    logits from the earliest window that contains it, so for a causal model the prediction at position t
    sees at least window - stride tokens before it (or all of them, near the start), and never a
    position index >= window. This is how a model with a fixed-size table reads text longer than the
    table: in overlapping chunks, at the price of forgetting what lies further back.
    """
    stride = stride or max(1, window // 2)
    if not 0 < stride <= window:
        raise ValueError(f"need 0 < stride <= window, got stride={stride}, window={window}")
    seq_len = tokens.shape[1]
    if seq_len <= window:
        return model(tokens)
    logits = None
    done = 0                                     # positions < done already have their logits
    for start in range(0, seq_len, stride):
        stop = min(start + window, seq_len)
        chunk = model(tokens[:, start:stop])
        if logits is None:
            logits = chunk.new_empty(tokens.shape[0], seq_len, chunk.shape[-1])
        logits[:, done:stop] = chunk[:, done - start:]
        done = stop
        if stop == seq_len:
            break
    return logits


@torch.no_grad()
def accuracy_by_position(model: nn.Module, task, seq_len: int, n_sequences: int = 512, seed: int = 12345,
                         window: int | None = None) -> np.ndarray:
    """Accuracy at each position 0 .. seq_len - 1 on fresh sequences (NaN where no position has a target).

    For a causal model the prediction at position t reads tokens 0..t only, so one long evaluation
    measures every shorter length at once.
    """
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    tokens, targets = task.batch(n_sequences, seq_len, generator)
    logits = model(tokens) if window is None else predict_windowed(model, tokens, window)
    keep = targets != IGNORE
    correct = ((logits.argmax(-1) == targets) & keep).sum(0).double()
    counts = keep.sum(0).double()
    return (correct / counts).numpy()            # 0 / 0 = NaN where no position has a target


def parameter_count(module: nn.Module, trainable_only: bool = True) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad or not trainable_only)


def sqrt_scale(d_model: int) -> float:
    """The original Transformer's embedding scale, sqrt(d_model)."""
    return math.sqrt(d_model)
