"""The numbers the teaching guide's entries quote, computed when the book is built.

An entry (``book/teaching/chNN.yml``) writes a computed number as ``{{name}}`` or ``{{name:.3f}}``; the
chapter's function here returns it, computed by the course's own code (``posenc.lib``, the exercise checks'
references) or read from the committed multi-seed files of ``results/``, so a number in an answer key or a
rubric is the number the chapter and the grader use. A setting an entry types (a width, a base) must be one
the chapter states (``posenc.book.teaching.entry``).
"""

from __future__ import annotations

import functools

__all__ = ["VALUES", "values"]


def ch01() -> dict:
    import numpy as np

    from posenc.lib.encoding import sinusoidal_encoding, wavelengths

    small, wide = wavelengths(8), wavelengths(512)
    table = sinusoidal_encoding(2, 64)
    return {
        "step_5": 1 / (5 - 1), "step_50": 1 / (50 - 1),
        "small_first": small[0], "small_last": small[-1], "small_ratio": small[1] / small[0],
        "wide_last": wide[-1], "wide_ratio": wide[1] / wide[0],
        "bits_16_last": 2 ** 16 - 1,
        "neighbour_64": float(np.linalg.norm(table[1] - table[0])),
        "squared_norm_64": float(table[1] @ table[1]),
    }


VALUES = {
    "ch01": ch01,
}


@functools.lru_cache(maxsize=None)
def values(set_id: str) -> dict:
    """The chapter's numbers (an empty dict for a chapter whose entry quotes none)."""
    function = VALUES.get(set_id)
    return dict(function()) if function else {}
