"""The grader's test corpus (``make_corpus.py`` writes it) and what the grader tests share."""

from __future__ import annotations

import os

import pytest

# In CI (.ci/run) a missing bubblewrap is a failure, not a skip.
REQUIRE_BWRAP = os.environ.get("POSENC_REQUIRE_BWRAP", "") not in ("", "0", "false", "no")


def require_bwrap() -> None:
    """Skip (or, with POSENC_REQUIRE_BWRAP, fail) a test that needs bubblewrap where it is missing."""
    from posenc.grader.sandbox import find_bwrap

    if find_bwrap() is None:
        message = "bubblewrap (bwrap) is not installed: tests/grader/setup.sh (run by make test) installs it"
        if REQUIRE_BWRAP:
            pytest.fail(f"{message} (and POSENC_REQUIRE_BWRAP is set)", pytrace=False)
        pytest.skip(message)


def corpus_module():
    """``make_corpus.py`` of this folder, imported (it builds notebooks from the exercise as handed out)."""
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parent)
    sys.path.insert(0, here)
    try:
        import make_corpus
    finally:
        sys.path.remove(here)
    return make_corpus
