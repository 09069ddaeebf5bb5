"""Execute the book's notebooks into jupyter-book's cache, several at a time, before the site is built.

``jupyter-book build`` executes the notebooks it has no cached execution of one after the other, on one
core. This module runs the same executions first, ``--jobs`` at a time (default: 2, the cores of the
course's machines), each kernel in an empty temporary folder (as ``run_in_temp`` in ``_config.yml`` does),
and stores each executed notebook in the cache the build reads (``_build/.jupyter_cache``, matched by the
notebook's code, as myst-nb does). The build then finds every execution there and only renders.

    python -m posenc.book.execute            # what `make book` runs before the build
    python -m posenc.book.execute --list     # the notebooks the book executes, one per line

The notebooks are the ``.ipynb`` files of ``_toc.yml`` minus ``execute.exclude_patterns`` of
``_config.yml`` (a page written as a MyST text notebook, such as book/common-mistakes.md, takes a second
and is left to the build); the
kernel is the one named in each notebook (``python3``), found as Jupyter finds kernels, so that a test can
point ``JUPYTER_PATH`` at another environment's kernel (tests/test_book.py runs them in the Colab-like one).
The kernels get ``POSENC_BOOK_BUILD=1``, so that ``posenc.glue`` hands values to the page even where
myst-nb is not installed.
A notebook that fails is reported with its traceback, the others still run, and the exit code is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path, PurePosixPath
from queue import Empty

import nbformat
import yaml
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type
from traitlets.config import Config

from posenc.book.cache import CACHE, has_execution, open_cache
from posenc.book.style import BOOK_BUILD_VARIABLE
from posenc.exercises.authoring import toc_notebooks
from posenc.paths import ROOT

__all__ = ["CACHE", "book_notebooks", "excluded_notebooks", "execute", "main", "run_notebook"]


def _execute_config(root: Path) -> dict:
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    return config.get("execute") or {}


def _excluded(path: Path, patterns: list[str]) -> bool:
    posix = PurePosixPath(path.as_posix())                 # the way myst-nb matches exclude_patterns
    return any(posix.match(pattern) for pattern in patterns)


def book_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks the book build executes: those of the toc that no exclude pattern names."""
    patterns = _execute_config(root).get("exclude_patterns") or []
    return [path for path in toc_notebooks() if not _excluded(path, patterns)]


def excluded_notebooks(root: Path = ROOT) -> list[Path]:
    """The toc's notebooks the book shows without executing them (``execute.exclude_patterns``)."""
    executed = set(book_notebooks(root))
    return [path for path in toc_notebooks() if path not in executed]


LOOK_AGAIN = 1.0     # seconds


class WatchfulChannel(AsyncZMQSocketChannel):
    """A kernel channel that looks at its socket again at least every LOOK_AGAIN seconds.

    pyzmq's asyncio poll waits for a wake-up from the event loop and checks the socket itself only when its
    timeout ends. When that wake-up is lost (seen here: about one run in two of `make test`, on a cell
    that shows a widget, with both cores busy), nbclient waited for an execute reply that had long arrived
    until the cell timeout, 300 s, ran out, and then carried on as if nothing had happened. Polling in
    slices turns such a loss into a delay of at most a second.
    """

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = LOOK_AGAIN if deadline is None else max(0.0, min(LOOK_AGAIN, deadline - time.monotonic()))
            if await self.socket.poll(int(wait * 1000)):
                return await self._recv()
            if deadline is not None and time.monotonic() >= deadline:
                raise Empty


class WatchfulKernelClient(AsyncKernelClient):
    """nbclient's kernel client, with WatchfulChannel for the replies (shell) and the outputs (iopub)."""

    shell_channel_class = Type(WatchfulChannel)
    iopub_channel_class = Type(WatchfulChannel)


def _in_a_book_build() -> None:
    """In each worker process: its kernels inherit the variable, and posenc.glue writes for the page."""
    os.environ[BOOK_BUILD_VARIABLE] = "1"


def _run_one(path: str, timeout: int) -> tuple[str, nbformat.NotebookNode | None, float, str | None]:
    """Execute one notebook in an empty folder; return it with its outputs, or the error's traceback."""
    notebook, seconds, error = run_notebook(nbformat.read(path, as_version=4), timeout)
    return path, notebook, seconds, error


def run_notebook(notebook: nbformat.NotebookNode, timeout: int) -> tuple[nbformat.NotebookNode | None, float,
                                                                         str | None]:
    """Execute a notebook (in place) in an empty folder: (it with its outputs, seconds, None), or (None,
    seconds, the error's traceback)."""
    from jupyter_cache.executors.utils import single_nb_execution

    with tempfile.TemporaryDirectory(prefix="posenc-run-") as folder, \
            tempfile.TemporaryDirectory(prefix="posenc-ipc-") as sockets:
        # Kernel and client talk over Unix sockets in a folder of their own, not over TCP ports that each
        # picks at random: kernels started side by side (here, by nbval, by the grader's tests) can then
        # never be handed the same port.
        config = Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")},
                         "AsyncKernelManager": {"client_class": "posenc.book.execute.WatchfulKernelClient"}})
        result = single_nb_execution(notebook, cwd=folder, timeout=timeout, allow_errors=False, config=config)
    if result.err is not None:
        return None, result.time, result.exc_string
    return notebook, result.time, None


def execute(notebooks: list[Path], cache_path: Path = CACHE, jobs: int = 2, timeout: int = 300,
            log=print, force: bool = False) -> list[Path]:
    """Execute the notebooks that have no up-to-date execution in the cache (all of them with ``force``);
    return those that failed.

    The largest notebooks start first, so that the longest runs do not end up last on one worker.
    """
    from jupyter_cache.base import CacheBundleIn

    cache = open_cache(cache_path)
    pending = [path for path in notebooks if force or not has_execution(path, cache)]
    pending.sort(key=lambda path: path.stat().st_size, reverse=True)
    log(f"posenc.book.execute: {len(notebooks) - len(pending)} of {len(notebooks)} notebooks already in "
        f"{cache_path}; executing {len(pending)}, {jobs} at a time")
    failed = []
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, jobs), initializer=_in_a_book_build) as pool:
        futures = [pool.submit(_run_one, str(path), timeout) for path in pending]
        for future in as_completed(futures):
            path, notebook, seconds, error = future.result()
            name = Path(path).relative_to(ROOT) if Path(path).is_relative_to(ROOT) else path
            if error is not None:
                failed.append(Path(path))
                log(f"FAILED {name} after {seconds:.1f} s:\n{error}")
                continue
            record = cache.add_nb_to_project(path)
            cache.cache_notebook_bundle(CacheBundleIn(notebook, record.uri, data={"execution_seconds": seconds}),
                                        check_validity=False, overwrite=True)
            log(f"  {name}: {seconds:.1f} s")
    log(f"posenc.book.execute: done in {time.perf_counter() - start:.0f} s"
        + (f"; {len(failed)} failed" if failed else ""))
    return failed


def cores() -> int:
    """The cores pytest-xdist's ``-n auto`` counts, so that ``make test JOBS=auto`` starts as many book
    kernels as test workers: $PYTEST_XDIST_AUTO_NUM_WORKERS where set, else the physical cores (psutil),
    else the CPUs this process may run on."""
    try:
        return max(1, int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"]))
    except (KeyError, ValueError):
        pass
    try:
        import psutil
    except ImportError:
        pass
    else:
        count = psutil.cpu_count(logical=False) or psutil.cpu_count()
        if count:
            return count
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def jobs_argument(value: str) -> int:
    """``--jobs`` of the book's commands, as make's JOBS gives it: a count, 0 meaning one at a time (as
    ``pytest -n 0`` runs the tests in one process), or ``auto`` for one per core, counted as ``pytest -n auto``
    counts them (:func:`cores`)."""
    if value == "auto":
        return cores()
    try:
        jobs = int(value)
    except ValueError:
        jobs = -1
    if jobs < 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of notebooks at a time, nor 'auto'")
    return max(1, jobs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=jobs_argument, default=2,
                        help="notebooks executed at a time, or 'auto' for one per core (default: 2)")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"the cache folder (default: {CACHE})")
    parser.add_argument("--list", action="store_true", help="only list the notebooks the book executes")
    parser.add_argument("--force", action="store_true", help="execute them even when the cache has an execution")
    parser.add_argument("--timeout", type=int, help="seconds a cell may take (default: execute.timeout of "
                        "_config.yml)")
    parser.add_argument("notebooks", nargs="*", type=Path, help="only these notebooks of the book (default: all)")
    args = parser.parse_args(argv)
    notebooks = book_notebooks()
    if args.list:
        print("\n".join(str(path.relative_to(ROOT)) for path in notebooks))
        return 0
    if args.notebooks:
        chosen = {path.resolve() for path in args.notebooks}
        unknown = chosen - set(notebooks)
        if unknown:
            parser.error(f"not notebooks the book executes: {', '.join(sorted(map(str, unknown)))}")
        notebooks = [path for path in notebooks if path in chosen]
    timeout = args.timeout or int(_execute_config(ROOT).get("timeout") or 300)
    return 1 if execute(notebooks, args.cache, args.jobs, timeout, force=args.force) else 0


if __name__ == "__main__":
    sys.exit(main())
