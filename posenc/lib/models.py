"""The course's tiny Transformer with a pluggable position method, and its training loop.

One home for the model and the loop that every chapter trains (chapters 3 and 4 with absolute encodings
added to the input, chapters 5-7 with position inside the attention: ``posenc.lib.attention``); keep it
small enough that each chapter's notebook, its training included, runs in well under a minute on a laptop's
CPU, as the course's design asks (book/lecturers/building.md gives what they take now: chapters 5 to 7 miss it).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from posenc.lib.attention import (
    ABSOLUTE,
    METHODS,
    AttentionContext,
    AttentionPosition,
    Encoder,
    EncoderBlock,
    RotaryPosition,
    make_position,
)
from posenc.lib.positional import LearnedPositionalEmbedding, SinusoidalPositionalEncoding
from posenc.lib.reproducibility import seed_torch
from posenc.lib.rotary import convert_projection
from posenc.lib.tasks import IGNORE

ABSOLUTE_MODULES = (SinusoidalPositionalEncoding, LearnedPositionalEmbedding)


def _position_plan(position, positional, combine: str, position_options) -> tuple[str | None, str]:
    """Check ``position=`` against ``positional=`` and ``combine=``; return (the method's name if the model
    builds it, else None; the way the input is combined)."""
    if combine not in ("none", "add", "concat"):
        raise ValueError(f"combine must be 'none', 'add' or 'concat', got {combine!r}")
    if isinstance(position, str):
        if position not in METHODS:
            raise ValueError(f"unknown position method {position!r}; choose one of {METHODS}")
    elif position is not None and not isinstance(position, (AttentionPosition, *ABSOLUTE_MODULES)):
        raise TypeError(f"position must be a method name or a module from make_position, got {type(position)}")
    elif position_options:
        raise ValueError("position_options go with a method name, not with a built module")
    absolute = position in ABSOLUTE or isinstance(position, ABSOLUTE_MODULES)
    if absolute and positional is not None:
        raise ValueError("give the absolute encoding either as positional= or as position=, not both")
    if absolute:
        combine = "add"
    elif position is not None and positional is None:
        combine = "none"
    elif combine != "none" and positional is None:
        raise ValueError(f"combine={combine!r} needs a positional module")
    return (position if isinstance(position, str) else None), combine


class TinyTransformer(nn.Module):
    """Token embedding, positional information, a few pre-LN encoder blocks and a per-position classifier.

    The one model of the course. Position enters in one of two places:

    * the input (chapters 1-4), through ``positional`` (a module of ``posenc.lib.positional``) and
      ``combine``:

      * ``"none"``: no positional information at all (``positional`` is ignored);
      * ``"add"``: x = embed_scale * E[token] + P[pos], width d_model;
      * ``"concat"``: x = [embed_scale * E[token]; P[pos]], the token part has d_model - positional
        width, so the total width stays d_model;

    * the attention (chapters 5-7), through ``position``: a name of ``posenc.lib.attention.METHODS``
      ("none", "sinusoidal", "learned", "shaw", "t5", "alibi", "rope"), built by ``make_position`` with
      ``position_options``, or a module that ``make_position`` returned. The absolute names set up the
      input side (``combine="add"``) and need no ``positional``; the others leave the input alone unless a
      ``positional`` module is given as well.

    The blocks (``posenc.lib.attention.EncoderBlock``) have the parameter names and initialisation of
    ``nn.TransformerEncoderLayer(norm_first=True, batch_first=True, dropout=0)``, so a model built before
    the course had its own block loads into this one. For one seed, the embedding, blocks and head start
    from the same weights whatever the position method: parameters of the method are drawn last.
    """

    def __init__(self, vocab_size: int, d_model: int = 32, n_heads: int = 2, n_layers: int = 2,
                 positional: nn.Module | None = None, combine: str = "add", position_width: int | None = None,
                 embed_init_std: float | None = None, embed_scale: float = 1.0, causal: bool = False,
                 dim_feedforward: int | None = None, position: str | nn.Module | None = None, max_len: int = 512,
                 position_options: dict | None = None):
        super().__init__()
        build_later, combine = _position_plan(position, positional, combine, position_options)
        self.combine, self.embed_scale, self.causal = combine, embed_scale, causal
        self.positional = positional if combine != "none" else None
        position_width = position_width or d_model // 2
        token_width = d_model - position_width if combine == "concat" else d_model
        self.position_width = position_width if combine == "concat" else d_model
        self.embedding = nn.Embedding(vocab_size, token_width)
        if embed_init_std is not None:          # default: PyTorch's N(0, 1)
            nn.init.normal_(self.embedding.weight, std=embed_init_std)
        self.encoder = Encoder(EncoderBlock(d_model, n_heads, dim_feedforward or 2 * d_model), n_layers)
        self.head = nn.Linear(d_model, vocab_size)
        if build_later is not None:             # drawn last: the other weights do not depend on the method
            position = make_position(build_later, d_model=d_model, n_heads=n_heads, n_layers=n_layers,
                                     max_len=max_len, causal=causal, **(position_options or {}))
        if isinstance(position, ABSOLUTE_MODULES):
            self.positional, position = position, None
        self.position = position if position is not None else AttentionPosition()
        shape = {"d_head": d_model // n_heads, "n_heads": n_heads, "n_layers": n_layers}
        wrong = {key: value for key, value in self.position.requires.items() if shape[key] != value}
        if wrong:
            raise ValueError(f"the position method was built for {wrong}, but this model has "
                             f"{ {key: shape[key] for key in wrong} }")

    @property
    def method(self) -> str:
        """The name of the position method: one of ``posenc.lib.attention.METHODS``."""
        if self.position.name != "none" or self.combine == "none":
            return self.position.name
        return {SinusoidalPositionalEncoding: "sinusoidal", LearnedPositionalEmbedding: "learned"}.get(
            type(self.positional), type(self.positional).__name__)

    def positions(self, seq_len: int, positions=None) -> torch.Tensor:
        """The positions of a sequence: ``positions`` as a 1-D tensor, by default 0 .. seq_len - 1."""
        if positions is None:
            return torch.arange(seq_len, device=self.head.weight.device)
        positions = torch.as_tensor(positions, device=self.head.weight.device)
        if positions.shape != (seq_len,):
            raise ValueError(f"positions must have shape ({seq_len},), one per token, got {tuple(positions.shape)}")
        return positions

    def inputs(self, tokens: torch.Tensor, positions=None) -> torch.Tensor:
        """The first layer's input, (batch, seq, d_model)."""
        x = self.embed_scale * self.embedding(tokens)
        if self.combine == "none":
            return x
        if positions is None:
            table = self.positional(tokens.shape[1])
        else:
            positions = self.positions(tokens.shape[1], positions)
            if positions.is_floating_point() or positions.min() < 0:
                raise ValueError("an absolute table has rows for integer positions >= 0 only")
            table = self.positional(int(positions.max()) + 1)[positions]
        table = table.to(x.dtype)                # (seq, width)
        if table.shape[-1] != self.position_width:
            raise ValueError(f"combine={self.combine!r} needs a positional table of width {self.position_width}, "
                             f"but the positional module returns width {table.shape[-1]}")
        if self.combine == "add":
            return x + table
        return torch.cat([x, table.expand(tokens.shape[0], -1, -1)], dim=-1)

    def context(self, seq_len: int, positions=None, dtype=torch.float32) -> AttentionContext:
        """What every layer shares in one forward pass (the method's prepared terms and the mask)."""
        positions = self.positions(seq_len, positions)
        return AttentionContext.build(self.position, positions, positions, self.causal, dtype)

    def forward(self, tokens: torch.Tensor, positions=None) -> torch.Tensor:
        """Logits (batch, seq, vocab). ``positions`` (seq,) replaces 0 .. seq - 1 for every sequence."""
        x = self.inputs(tokens, positions)
        return self.head(self.encoder(x, self.context(tokens.shape[1], positions, x.dtype)))

    def attention_input(self, tokens: torch.Tensor, layer: int = 0, positions=None):
        """What one layer's attention reads: ``(self_attn, x, context, layer)`` with x = LN(input of the
        layer), so that ``self_attn.logits(x, context, layer)`` are its logits (``attention_logits``) and
        ``self_attn.project(x, context, layer)`` its queries, keys and values."""
        if not -len(self.encoder.layers) <= layer < len(self.encoder.layers):
            raise ValueError(f"layer must be in 0..{len(self.encoder.layers) - 1}, got {layer}")
        layer = layer % len(self.encoder.layers)
        x = self.inputs(tokens, positions)
        context = self.context(tokens.shape[1], positions, x.dtype)
        for index, block in enumerate(self.encoder.layers[:layer]):
            x = block(x, context, index)
        block = self.encoder.layers[layer]
        return block.self_attn, block.norm1(x), context, layer

    @torch.no_grad()
    def attention_logits(self, tokens: torch.Tensor, layer: int = 0, positions=None) -> torch.Tensor:
        """The logits e_ij of one layer, (batch, heads, seq, seq), with every term of the position method
        (-inf where the causal mask hides a key). No gradients."""
        attention, x, context, layer = self.attention_input(tokens, layer, positions)
        return attention.logits(x, context, layer)

    @torch.no_grad()
    def attention_weights(self, tokens: torch.Tensor, layer: int = 0, positions=None) -> torch.Tensor:
        """The attention weights of one layer, softmax of ``attention_logits``, (batch, heads, seq, seq)."""
        return torch.softmax(self.attention_logits(tokens, layer, positions), dim=-1)


@dataclass
class TrainConfig:
    steps: int = 400
    batch_size: int = 64
    lr: float = 3e-3
    train_lengths: tuple[int, ...] = (16,)
    seed: int = 0
    fused: bool = False          # torch's fused Adam: the same update in one kernel, ~15% faster per step here


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    keep = targets != IGNORE
    return (logits.argmax(-1)[keep] == targets[keep]).float().mean().item()


def train(model: nn.Module, task, config: TrainConfig) -> list[float]:
    """Train with Adam on freshly sampled batches; return the loss of every step. Seeded and repeatable."""
    seed_torch(config.seed)
    generator = torch.Generator().manual_seed(config.seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.lr, **({"fused": True} if config.fused else {}))
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


# ---------------------------------------------------------------------------------------------------
# Rotary models: context extension and the two layouts


def _rotary(model: TinyTransformer) -> RotaryPosition:
    if not isinstance(model.position, RotaryPosition):
        raise ValueError(f"this needs a rotary model (position='rope'), got position method {model.method!r}")
    return model.position


def extended_copy(model: TinyTransformer, method: str, scale: float, train_length: int | None = None,
                  alpha: float = 1.0, beta: float = 32.0, ramp: str = "paper") -> TinyTransformer:
    """A copy of a rotary model with a context extension switched on ("pi", "ntk", "yarn" or "none").

    The weights are copied unchanged: evaluate the copy as it is (no retraining), or fine-tune it with
    ``train``. The original model is left alone. See ``RotaryPosition.extend`` (YaRN's ``ramp``: "paper"
    or "code").
    """
    _rotary(model)
    clone = copy.deepcopy(model)
    clone.position.extend(method, scale, train_length, alpha, beta, ramp)
    return clone


def convert_rotary_layout(model: TinyTransformer, layout: str, permute_weights: bool = True) -> TinyTransformer:
    """A copy of a rotary model that uses ``layout`` ("interleaved" or "half") instead of its own.

    With ``permute_weights`` the rows of W_Q and W_K (and their biases) of every layer are permuted within
    each head (``posenc.lib.rotary.convert_projection``), so the copy computes the same function. Without,
    the copy still runs, but pairs the wrong coordinates: the mistake of a checkpoint converted naively.
    """
    source = _rotary(model).layout
    clone = copy.deepcopy(model)
    clone.position.layout = layout
    if not permute_weights:
        return clone
    fraction, d = clone.position.fraction, clone.encoder.layers[0].self_attn.embed_dim
    with torch.no_grad():
        for block in clone.encoder.layers:
            attention = block.self_attn
            for parameter in (attention.in_proj_weight, attention.in_proj_bias):
                for part in (slice(0, d), slice(d, 2 * d)):                 # W_Q, then W_K
                    parameter[part] = convert_projection(parameter[part], attention.num_heads, source, layout,
                                                         fraction)
    return clone


# ---------------------------------------------------------------------------------------------------
# Timing (for make bench, not for the tests)


def training_speed(method: str, seq_len: int, steps: int = 30, batch_size: int = 32, d_model: int = 32,
                   n_heads: int = 2, n_layers: int = 2, causal: bool = True, warmup: int = 5) -> float:
    """Training steps per second of a tiny model with position method ``method`` on ``ShiftedCopy``."""
    import time

    from posenc.lib.tasks import ShiftedCopy

    task = ShiftedCopy()
    seed_torch(0)
    model = TinyTransformer(task.vocab_size, d_model, n_heads, n_layers, position=method, causal=causal,
                            max_len=max(seq_len, 16))
    train(model, task, TrainConfig(steps=warmup, batch_size=batch_size, train_lengths=(seq_len,)))
    start = time.perf_counter()
    train(model, task, TrainConfig(steps=steps, batch_size=batch_size, train_lengths=(seq_len,)))
    return steps / (time.perf_counter() - start)


def bench_methods(lengths=(16, 64), methods=METHODS, **kwargs) -> dict:
    """Print and return the training speed (steps per second) of every position method at each length."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        speeds = {m: {n: training_speed(m, n, **kwargs) for n in lengths} for m in methods}
    finally:
        torch.set_num_threads(threads)
    print("Training speed of the tiny Transformer per position method (steps/s, batch 32, d_model 32, "
          "2 layers, causal, one thread)")
    print("  " + f"{'method':>12}" + "".join(f"{f'L = {n}':>10}" for n in lengths))
    for method, row in speeds.items():
        print("  " + f"{method:>12}" + "".join(f"{row[n]:10.0f}" for n in lengths))
    return speeds
