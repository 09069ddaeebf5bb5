"""jupyter-book's execution cache: the one place that knows where it is and how a notebook's execution is found.

``make book`` executes the notebooks into ``_build/.jupyter_cache`` (``posenc.book.execute``), and
``jupyter-book build`` renders from it; the slide decks (``posenc.book.slides``) read the same executions, so
the figures and glued numbers of a deck are those of the chapter's page. An execution is matched by the
notebook's code, as myst-nb matches it: a notebook whose code changed has none until it is executed again.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

from posenc.paths import ROOT

__all__ = ["CACHE", "executed_notebook", "has_execution", "open_cache"]

CACHE = ROOT / "_build" / ".jupyter_cache"


def open_cache(cache_path: Path = CACHE):
    """The jupyter-cache object of a cache folder (made when it does not exist yet)."""
    from jupyter_cache import get_cache

    return get_cache(str(cache_path))


def _exists(cache_path: Path) -> bool:
    return (cache_path / "global.db").exists() or any(cache_path.glob("*.db"))


def _record(cache, notebook: nbformat.NotebookNode):
    try:
        return cache.match_cache_notebook(notebook)
    except KeyError:
        return None


def has_execution(path: Path, cache=None, cache_path: Path = CACHE) -> bool:
    """Whether the cache holds an execution of the notebook's current code."""
    if cache is None:
        if not _exists(cache_path):
            return False
        cache = open_cache(cache_path)
    return _record(cache, nbformat.read(path, as_version=4)) is not None


def executed_notebook(path: Path, cache_path: Path = CACHE):
    """The notebook as stored and its execution from the cache: ``(notebook, executed)``, ``executed`` None
    when the cache holds no execution of the notebook's current code."""
    notebook = nbformat.read(path, as_version=4)
    if not _exists(cache_path):
        return notebook, None
    cache = open_cache(cache_path)
    record = _record(cache, notebook)
    if record is None:
        return notebook, None
    return notebook, cache.get_cache_bundle(record.pk).nb
