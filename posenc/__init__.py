"""Shared code of the course: the reference encoding, notebook set-up and the exercise checks."""

from posenc.encoding import (
    DEFAULT_BASE,
    encoding_at,
    frequencies,
    sinusoidal_encoding,
    sinusoidal_encoding_torch,
    wavelengths,
)
from posenc.style import glue, seed_everything, setup_notebook, use_course_style

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
