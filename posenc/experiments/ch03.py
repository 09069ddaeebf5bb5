"""Chapter 3's experiment: adding or concatenating the sinusoidal encoding, and the embedding scale.

One tiny Transformer (``posenc.lib.models``) trained on ``ShiftedCopy`` under the conditions of
``CONDITIONS`` and several seeds (:class:`CombiningExperiment`, run by ``posenc.experiments.runner.sweep``).
What the chapter teaches about combining (the accounting, the algebra, the four terms of a logit, the
scales) is in ``posenc.lib.combining``::

    python -m posenc.experiments run ch03 --out results/ch03.json      # 10 seeds, about a minute
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc.experiments.runner import Experiment
from posenc.lib.models import TinyTransformer, TrainConfig, evaluate, sqrt_scale
from posenc.lib.positional import SinusoidalPositionalEncoding
from posenc.lib.reproducibility import seed_torch
from posenc.lib.tasks import ShiftedCopy


@dataclass(frozen=True)
class Condition:
    """One way of feeding position to ``TinyTransformer``."""

    key: str
    label: str
    combine: str                         # "none", "add" or "concat"
    embed_init_std: str | None = None    # None: PyTorch's N(0, 1); "1/sqrt(d)": tensor2tensor's N(0, 1/d)
    sqrt_scale: bool = False             # multiply the embeddings by sqrt(d_model)


CONDITIONS = {
    "none": Condition("none", "(a) no position", "none"),
    "add": Condition("add", "(b) added PE", "add"),
    "concat": Condition("concat", "(c) concatenated PE", "concat"),
    "add_sqrt": Condition("add_sqrt", "(d) added PE, sqrt(d) x N(0,1)", "add", sqrt_scale=True),
    "add_t2t": Condition("add_t2t", "(e) added PE, sqrt(d) x N(0,1/d)", "add", embed_init_std="1/sqrt(d)",
                         sqrt_scale=True),
}


def condition_model(condition: Condition, vocab_size: int, d_model: int, seed: int,
                    **model_kwargs) -> TinyTransformer:
    """A seeded ``TinyTransformer`` for one condition (concatenation gives half the width to positions)."""
    position_width = d_model // 2 if condition.combine == "concat" else d_model
    positional = None if condition.combine == "none" else SinusoidalPositionalEncoding(position_width)
    std = d_model ** -0.5 if condition.embed_init_std == "1/sqrt(d)" else None
    seed_torch(seed)
    return TinyTransformer(vocab_size, d_model, positional=positional, combine=condition.combine,
                           position_width=position_width, embed_init_std=std,
                           embed_scale=sqrt_scale(d_model) if condition.sqrt_scale else 1.0, **model_kwargs)


@dataclass(frozen=True)
class CombiningExperiment(Experiment):
    """Chapter 3's experiment: the conditions of ``CONDITIONS`` on one task, at one sequence length.

    For one seed every condition sees the same training batches. ``model_kwargs`` go to
    ``TinyTransformer`` (e.g. ``(("n_layers", 1),)``, a tuple so the configuration stays hashable). The
    defaults are the chapter's configuration, which ``make experiments`` runs on ten seeds into
    ``results/ch03.json``.
    """

    kinds: tuple[str, ...] = tuple(CONDITIONS)
    seeds: tuple[int, ...] = (0, 1, 2)
    vocab_size: int = 16
    offset: int = 1
    d_model: int = 32
    seq_len: int = 16
    steps: int = 100
    lr: float = 5e-3
    batch_size: int = 64
    eval_seed: int = 12345
    model_kwargs: tuple = (("n_layers", 1),)

    def __post_init__(self):
        # A configuration read back from JSON has lists where the dataclass has tuples: make them tuples,
        # so that it compares equal to the one it was saved from (posenc.experiments.runner.same_setup).
        object.__setattr__(self, "model_kwargs", tuple(tuple(pair) for pair in self.model_kwargs))

    def task(self) -> ShiftedCopy:
        return ShiftedCopy(self.vocab_size, self.offset)

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(steps=self.steps, batch_size=self.batch_size, lr=self.lr, seed=seed,
                           train_lengths=(self.seq_len,))

    def build(self, kind: str, seed: int) -> TinyTransformer:
        return condition_model(CONDITIONS[kind], self.vocab_size, self.d_model, seed, **dict(self.model_kwargs))

    def accuracy(self, model) -> float:
        return evaluate(model, self.task(), self.seq_len, seed=self.eval_seed)
