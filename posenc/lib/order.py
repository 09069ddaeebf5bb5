"""Self-attention without positions (chapter 0): a plain NumPy layer, to show what it cannot see.

``AttentionLayer`` is one single-head self-attention layer with fixed weights, optionally causal. It is a
callable object, so a function that studies "any attention layer" (chapter 0's equivariance gap) can be
handed one.
"""

from __future__ import annotations

import numpy as np


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """The softmax along ``axis``, computed stably (the row maximum is subtracted first)."""
    shifted = scores - scores.max(axis=axis, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=axis, keepdims=True)


class AttentionLayer:
    """x (n, d_model) -> softmax(q k^T / sqrt(d_k) [+ causal mask]) v with q, k, v = x W_q, x W_k, x W_v."""

    def __init__(self, w_q, w_k, w_v, causal: bool = False):
        self.w_q, self.w_k, self.w_v = (np.asarray(w, dtype=np.float64) for w in (w_q, w_k, w_v))
        self.causal = bool(causal)

    @classmethod
    def random(cls, d_model: int, seed: int, causal: bool = False) -> "AttentionLayer":
        """A layer with N(0, 1/9) weights of shape (d_model, d_model), drawn from ``seed``."""
        rng = np.random.default_rng(seed)
        return cls(*(rng.normal(size=(d_model, d_model)) / 3 for _ in range(3)), causal=causal)

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        scores = (x @ self.w_q) @ (x @ self.w_k).T / np.sqrt(self.w_k.shape[1])
        if self.causal:
            scores = np.where(np.triu(np.ones_like(scores, dtype=bool), 1), -np.inf, scores)
        return softmax(scores) @ (x @ self.w_v)

    def __repr__(self) -> str:
        return f"<{'causal ' if self.causal else ''}attention layer>"
