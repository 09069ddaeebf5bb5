"""Comparing position methods side by side (chapter 5 on): the lens, the costs and the inside-length sweep.

* The lens (``logit_terms``): the logit e_ij of one layer split into the plain q_i . k_j / sqrt(d_head)
  (queries and keys as projected, before any method touches them) and the method's own term. For an
  absolute encoding, or none, the method's term is zero: position, if any, is already inside x. For a
  relative bias it is b(j - i); for Shaw it is q_i . a^K_clip(j - i) / sqrt(d_head); for RoPE what the
  rotation changes.
* The costs (``method_costs``): trainable parameters of the method, the memory autograd keeps for the
  backward pass (``saved_tensor_bytes``) and the time of a forward pass and of a training step, per method
  and sequence length, next to the published measurements of the ALiBi paper (``PRESS2022_SPEED``).
* The sweep (``InsideLengthExperiment``): chapter 4's task and model with every position method, measured
  inside the training length only (what happens beyond it is chapter 7's subject)::

    python -m posenc.lib.experiments ch05 --out results/ch05.json      # 10 seeds, a few minutes
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from posenc.lib.attention import METHODS, AttentionContext
from posenc.lib.experiments import LABELS as EXPERIMENT_LABELS
from posenc.lib.experiments import LengthExperiment, fmt, markdown_table, mean_spread, steps_to_loss
from posenc.lib.models import TinyTransformer, parameter_count
from posenc.lib.relative import alibi_slopes

# ---------------------------------------------------------------------------------------------------
# The lens


@torch.no_grad()
def logit_terms(model: TinyTransformer, tokens: torch.Tensor, layer: int = 0, positions=None):
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


@torch.no_grad()
def forward_seconds(model: nn.Module, tokens: torch.Tensor) -> float:
    """The time of one forward pass without gradients, in seconds."""
    start = time.perf_counter()
    model(tokens)
    return time.perf_counter() - start


def training_step_seconds(model: nn.Module, tokens: torch.Tensor) -> float:
    """The time of one forward and backward pass (a training step without the optimiser), in seconds."""
    model.zero_grad(set_to_none=True)
    start = time.perf_counter()
    model(tokens).sum().backward()
    return time.perf_counter() - start


def tiny_model(method: str, max_len: int, vocab_size: int = 16, d_model: int = 32, n_heads: int = 2,
               n_layers: int = 2, causal: bool = True, seed: int = 0) -> TinyTransformer:
    """The tiny Transformer of chapters 3-5 with one position method (the shape ``method_costs`` measures)."""
    torch.manual_seed(seed)
    return TinyTransformer(vocab_size, d_model, n_heads, n_layers, position=method, causal=causal, max_len=max_len)


def method_costs(methods=("none", "sinusoidal", "learned", "shaw", "t5", "alibi"), lengths=(16, 64, 256),
                 batch_size: int = 8, rounds: int = 15, time_baseline: str = "sinusoidal", **shape) -> list[dict]:
    """Per method and sequence length, measured on ``tiny_model`` (``shape`` goes there):

    * ``parameters``: the position method's trainable parameters;
    * ``saved_bytes``: what one training forward pass keeps for the backward pass, and ``extra_bytes``,
      the same minus that of the model without position ("none");
    * ``forward_seconds`` and ``step_seconds``: a forward pass without gradients and a forward and backward
      pass, the fastest of ``rounds`` rounds in which the methods take turns (other work on the machine
      only ever adds time, and taking turns gives every method the same chances of a quiet moment), and
      their ratios ``forward_ratio`` and ``step_ratio`` to ``time_baseline`` (the sinusoidal model, as in
      the ALiBi paper's comparison).

    Memory is exact and repeatable; times vary with the machine and its load. Run with one torch thread.
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
        times = {method: ([], []) for method in everything}
        for _ in range(rounds):
            for method, model in models.items():
                times[method][0].append(forward_seconds(model, tokens))
                times[method][1].append(training_step_seconds(model, tokens))
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


# Published measurements (facts from the papers, with their source; the course quotes them as theirs).
PRESS2022_SPEED = {
    "source": "Press, Smith & Lewis 2022, Appendix Table 1 (one V100 GPU, WikiText-103, 16 layers, d = 1024); "
              "the sentence is in their section 2.2",
    "quote": "training is at least twice as slow as with the sinusoidal model",
    "lengths": (512, 1024, 3072),
    "train_wps": {"sinusoidal": (28.5e3, 26.0e3, 15.3e3), "rotary": (20.0e3, 17.7e3, 11.5e3),
                  "t5": (14.4e3, 13.0e3, 4.3e3), "alibi": (28.3e3, 25.8e3, 15.5e3)},
    "eval_wps": {"sinusoidal": (82.1e3, 77.8e3, 42.4e3), "rotary": (43.4e3, 39.4e3, 29.5e3),
                 "t5": (21.8e3, 20.2e3, 4.9e3), "alibi": (85.8e3, 76.4e3, 42.2e3)},
    "memory_gb": {"sinusoidal": (15.3, 19.2, 15.1), "rotary": (17.8, 22.8, 17.8),
                  "t5": (16.9, 20.9, 15.9), "alibi": (15.3, 19.3, 15.2)},
}

SHAW2018 = {
    "source": "Shaw, Uszkoreit & Vaswani 2018: abstract, Table 1 (WMT 2014 newstest2014 BLEU), section 3.3",
    "bleu_big": {"en-de": (27.9, 29.2), "en-fr": (41.2, 41.5)},       # (absolute, relative)
    "bleu_base": {"en-de": (26.5, 26.8), "en-fr": (38.2, 38.7)},
    "k_base": 16, "k_big": 8,                       # clipping distance of their base and big models
    "clip_bleu": {0: 12.5, 1: 25.5, 2: 25.8, 4: 25.9, 16: 25.8, 64: 25.9, 256: 25.8},   # Table 2, base, dev set
    "steps_per_second_decrease": 0.07,              # "a modest 7% decrease in steps per second"
}


# ---------------------------------------------------------------------------------------------------
# Inside the training length, every method (chapter 5)

STEEP_ALIBI = "alibi-steep"      # ALiBi whose heads take the steepest slopes of an 8-head model (1/2, 1/4, ...)
INSIDE_KINDS = ("none", "sinusoidal", "shaw", "t5", "alibi", STEEP_ALIBI)
LABELS = {**EXPERIMENT_LABELS, STEEP_ALIBI: "ALiBi, 8-head slopes"}


@dataclass(frozen=True)
class InsideLengthExperiment(LengthExperiment):
    """Chapter 4's task, model and training with position inside the attention too, measured at the
    training length only. For one seed every method starts from the same non-positional weights and sees
    the same batches (``LengthExperiment.build`` via ``build_model``).

    Besides the methods of ``posenc.lib.attention.METHODS`` it knows ``"alibi-steep"``: ALiBi whose heads
    take the steepest slopes of an 8-head model (1/2, 1/4, ... instead of the paper's rule for this head
    count, 2^(-8h/n_heads), which gives two heads 1/16 and 1/256).
    """

    kinds: tuple[str, ...] = INSIDE_KINDS
    eval_length: int = 16          # = train_length: beyond it is chapter 7's question

    def build(self, kind: str, seed: int) -> TinyTransformer:
        if kind != STEEP_ALIBI:
            return super().build(kind, seed)
        model = super().build("alibi", seed)
        if self.n_heads > 8:
            raise ValueError(f"{STEEP_ALIBI} borrows the slopes of 8 heads; this model has {self.n_heads}")
        model.position.slopes = alibi_slopes(8)[: self.n_heads].to(model.position.slopes)
        return model

    def measure(self, kind: str, model) -> dict[str, np.ndarray]:
        return {}

    def report(self, runs) -> str:
        return markdown_table(*inside_table(runs, self.kinds))


def _field(run, name: str):
    """A field of a Run or of a saved record (duck-typed: ``python -m posenc.lib.experiments`` makes its Runs
    in ``__main__``, so ``isinstance`` against this module's import of Run would fail)."""
    return getattr(run, name) if hasattr(run, name) else run[name]


def steps_of(run, threshold: float = 0.1) -> float:
    """Steps to a training loss below ``threshold``: ``steps_to_loss`` for a Run; for a saved record, which
    keeps only the mean loss of every 10 steps, the end of the first 10-step block below it (so to the
    nearest 10 steps). NaN if never."""
    if hasattr(run, "losses"):
        return steps_to_loss(run.losses, threshold)
    below = np.flatnonzero(np.asarray(run["loss_every_10_steps"]) < threshold)
    return float(10 * below[0] + 9) if below.size else math.nan


def inside_table(runs, kinds) -> tuple[list[str], list[list[str]]]:
    """(headers, rows): per method, accuracy at the training length and steps to loss < 0.1, mean ± std
    over seeds (Run objects or saved records)."""
    rows = []
    for kind in kinds:
        mine = [r for r in runs if _field(r, "kind") == kind]
        accuracy = np.array([_field(r, "accuracy") for r in mine])
        rows.append([LABELS[kind], fmt(accuracy, 3), fmt(np.array([steps_of(r) for r in mine]), 0)])
    return ["method", "accuracy at L", "steps to loss < 0.1"], rows


def paired_differences(runs, kind: str, baseline: str) -> np.ndarray:
    """Per seed, the accuracy of ``kind`` minus that of ``baseline`` (seeds both have), in seed order."""
    by = {}
    for run in runs:
        record = run if isinstance(run, dict) else run.record()
        by[(record["kind"], record["seed"])] = record["accuracy"]
    seeds = sorted(seed for (k, seed) in by if k == kind and (baseline, seed) in by)
    return np.array([by[(kind, s)] - by[(baseline, s)] for s in seeds])


__all__ = ["logit_terms", "position_parameters", "saved_tensor_bytes", "forward_seconds", "training_step_seconds", "tiny_model",
           "method_costs", "PRESS2022_SPEED", "SHAW2018", "INSIDE_KINDS", "STEEP_ALIBI", "LABELS",
           "InsideLengthExperiment", "inside_table", "steps_of",
           "paired_differences", "mean_spread"]
