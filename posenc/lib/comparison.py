"""Comparing position methods side by side (chapter 5 on): the lens and the costs.

* The lens (``plain_and_method_logits``): the logit e_ij of one layer split into the plain q_i . k_j / sqrt(d_head)
  (queries and keys as projected, before any method touches them) and the method's own term. For an
  absolute encoding, or none, the method's term is zero: position, if any, is already inside x. For a
  relative bias it is b(j - i); for Shaw it is q_i . a^K_clip(j - i) / sqrt(d_head); for RoPE what the
  rotation changes.
* The costs (``method_costs``): trainable parameters of the method, the memory autograd keeps for the
  backward pass (``saved_tensor_bytes``) and the CPU time of a forward pass and of a training step, per method
  and sequence length (the ALiBi paper's published measurements are in ``posenc.experiments.published``).

Chapter 5's sweep, every method trained at the training length, is ``posenc.experiments.ch05``.
"""

from __future__ import annotations

import time

import torch
from torch import nn

from posenc.lib.attention import METHODS, AttentionContext
from posenc.lib.models import TinyTransformer, parameter_count
from posenc.lib.reproducibility import seed_torch

# ---------------------------------------------------------------------------------------------------
# The lens


@torch.no_grad()
def plain_and_method_logits(model: TinyTransformer, tokens: torch.Tensor, layer: int = 0, positions=None):
    """(plain, method) for one layer, each (batch, heads, n, n), with plain + method = the layer's logits.

    ``plain`` is q_i . k_j / sqrt(d_head) from the queries and keys as the projections give them, before
    the method acts; ``method`` is everything the position method adds inside the attention (a bias, Shaw's
    key term, the effect of RoPE's rotation). Where a causal mask hides a key both are -inf in the logits;
    here ``method`` is 0 there and ``plain`` keeps its finite value.
    """
    attention, x, context, layer = model.attention_input(tokens, layer, positions)
    plain = attention.logits(x, AttentionContext(), layer)
    full = attention.logits(x, context, layer)
    return plain, torch.where(torch.isinf(full), torch.zeros_like(full), full - plain)


def position_parameters(model: TinyTransformer) -> int:
    """Trainable parameters of the model's position method (input table or attention method)."""
    own = parameter_count(model.position)
    return own + (parameter_count(model.positional) if model.positional is not None else 0)


# ---------------------------------------------------------------------------------------------------
# Costs


def saved_tensor_bytes(function, *args, **kwargs) -> int:
    """Bytes of the distinct tensors that autograd keeps for the backward pass while ``function`` runs.

    This is the memory a training step holds between its forward and backward passes (the activations), as
    counted by torch's saved-tensor hooks; storages shared by several saved tensors count once. It is exact
    and does not depend on the machine's load, unlike a reading of the process's memory.
    """
    storages: dict[int, int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        result = function(*args, **kwargs)         # kept alive so that no storage is freed and reused meanwhile
    del result
    return sum(storages.values())


def cpu_seconds(call, *args, **kwargs) -> float:
    """The CPU time the calling thread spends in ``call(*args, **kwargs)``, in seconds.

    Unlike a wall clock it leaves out the time that other work on a shared machine takes meanwhile, so it
    is steady under load. It counts this thread only: time torch code with one torch thread
    (``torch.set_num_threads(1)``), or the work of the others is missed. The backward pass of CPU tensors
    runs on the thread that calls it, so a training step is counted whole.
    """
    start = time.thread_time()
    call(*args, **kwargs)
    return time.thread_time() - start


@torch.no_grad()
def forward_seconds(model: nn.Module, tokens: torch.Tensor) -> float:
    """The CPU time (``cpu_seconds``) of one forward pass under ``torch.no_grad()``, in seconds.

    Without gradients no tensor needs one, a learned bias included (``torch.is_grad_enabled()`` is False
    inside: tests/test_comparison.py checks it).
    """
    return cpu_seconds(model, tokens)


def training_step_seconds(model: nn.Module, tokens: torch.Tensor) -> float:
    """The CPU time (``cpu_seconds``) of one forward and backward pass (a training step without the optimiser),
    in seconds."""
    model.zero_grad(set_to_none=True)
    return cpu_seconds(lambda: model(tokens).sum().backward())


def tiny_model(method: str, max_len: int, vocab_size: int = 16, d_model: int = 32, n_heads: int = 2,
               n_layers: int = 2, causal: bool = True, seed: int = 0) -> TinyTransformer:
    """The tiny Transformer of chapters 3-5 with one position method (the shape ``method_costs`` measures)."""
    seed_torch(seed)
    return TinyTransformer(vocab_size, d_model, n_heads, n_layers, position=method, causal=causal, max_len=max_len)


def method_costs(methods=("none", "sinusoidal", "learned", "shaw", "t5", "alibi"), lengths=(16, 64, 256),
                 batch_size: int = 8, rounds: int = 15, time_baseline: str = "sinusoidal", **shape) -> list[dict]:
    """Per method and sequence length, measured on ``tiny_model`` (``shape`` goes there):

    * ``parameters``: the position method's trainable parameters;
    * ``saved_bytes``: what one training forward pass keeps for the backward pass, and ``extra_bytes``,
      the same minus that of the model without position ("none");
    * ``forward_seconds`` and ``step_seconds``: the CPU time (``cpu_seconds``) of a forward pass under
      ``torch.no_grad()`` and of a forward and backward pass, the least of ``rounds`` rounds in which the
      methods take turns (CPU time leaves out most of what other work on the machine adds, and taking
      turns gives every method the same chances with the rest: caches, clock speed), and their ratios
      ``forward_ratio`` and ``step_ratio`` to ``time_baseline`` (the sinusoidal model, as in the ALiBi
      paper's comparison).

    Memory is exact and repeatable; times vary with the machine. The measurement runs with one torch
    thread (the number of threads is restored afterwards), so that the CPU time of this thread is all of it.
    """
    unknown = [m for m in (*methods, time_baseline) if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {METHODS}")
    everything = tuple(dict.fromkeys(("none", time_baseline, *methods)))
    rows = []
    for length in lengths:
        tokens = torch.randint(0, shape.get("vocab_size", 16), (batch_size, length),
                               generator=torch.Generator().manual_seed(length))
        models = {method: tiny_model(method, max_len=max(lengths), **shape).train() for method in everything}
        measured = {method: {"method": method, "length": length, "parameters": position_parameters(model),
                             "saved_bytes": saved_tensor_bytes(lambda: model(tokens).sum())}
                    for method, model in models.items()}
        times = _interleaved_times(models, tokens, rounds)
        for method in everything:
            measured[method]["forward_seconds"] = min(times[method][0])
            measured[method]["step_seconds"] = min(times[method][1])
        base = measured[time_baseline]
        for method in methods:
            row = measured[method]
            row["extra_bytes"] = row["saved_bytes"] - measured["none"]["saved_bytes"]
            row["forward_ratio"] = row["forward_seconds"] / base["forward_seconds"]
            row["step_ratio"] = row["step_seconds"] / base["step_seconds"]
            rows.append(row)
    return rows


def _interleaved_times(models: dict, tokens: torch.Tensor, rounds: int) -> dict:
    """Per method, the lists (forward, training step) of CPU times over ``rounds`` rounds, on one thread."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        times = {method: ([], []) for method in models}
        for _ in range(rounds):
            for method, model in models.items():
                times[method][0].append(forward_seconds(model, tokens))
                times[method][1].append(training_step_seconds(model, tokens))
    finally:
        torch.set_num_threads(threads)
    return times
