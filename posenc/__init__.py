"""The course's package. Its folders follow the course's pipeline:

* ``posenc.lib``: the course's own library, what the chapters teach (encodings, rotations, models, tasks);
* ``posenc.experiments``: the experiment harness (the multi-seed runner, summaries, result files, one module
  per chapter's experiment; ``python -m posenc.experiments``);
* ``posenc.book``: the book's tooling (notebook set-up and style, explorers, quizzes, editions);
* ``posenc.exercises``: the exercises' tooling (the generator, the check framework, the checks);
* ``posenc.grader``: the batch grader (``python -m posenc.grader``).

What a notebook needs most is re-exported here: ``posenc.sinusoidal_encoding``, ``posenc.setup_notebook``,
``posenc.glue``.
"""

from posenc.lib.encoding import (
    DEFAULT_BASE,
    encoding_at,
    frequencies,
    sinusoidal_encoding,
    sinusoidal_encoding_torch,
    wavelengths,
)
from posenc.book.style import glue, seed_everything, setup_notebook, use_course_style

__all__ = [
    "DEFAULT_BASE",
    "encoding_at",
    "frequencies",
    "glue",
    "seed_everything",
    "setup_notebook",
    "sinusoidal_encoding",
    "sinusoidal_encoding_torch",
    "use_course_style",
    "wavelengths",
]
