"""posenc.book.execute: the book's notebooks executed ahead of the build, into the cache the build reads."""

import asyncio
import os
from queue import Empty

import nbformat
import pytest
from jupyter_cache import get_cache

from posenc.book import execute


def write_notebook(path, *sources):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, path)
    return path


def test_executions_land_in_the_cache_where_the_build_finds_them(tmp_path):
    good = write_notebook(tmp_path / "good.ipynb", "import os\nprint(os.getcwd())",
                          "print(os.environ.get('POSENC_BOOK_BUILD'))")
    bad = write_notebook(tmp_path / "bad.ipynb", "print('before')", "1 / 0")
    said = []
    failed = execute.execute([good, bad], cache_path=tmp_path / "cache", jobs=2, log=said.append)
    assert failed == [bad]
    assert any("FAILED" in line and "ZeroDivisionError" in line for line in said), said

    cache = get_cache(str(tmp_path / "cache"))
    _, merged = cache.merge_match_into_notebook(nbformat.read(good, as_version=4))   # myst-nb's lookup
    folder, variable = (cell.outputs[0]["text"].strip() for cell in merged.cells)
    assert folder != str(tmp_path) and "posenc-run-" in folder      # an empty folder, not the notebook's
    assert variable == "1"                                          # posenc.glue writes for the page
    assert "POSENC_BOOK_BUILD" not in os.environ                    # only the workers' kernels have it
    again = []
    assert execute.execute([good], cache_path=tmp_path / "cache", jobs=2, log=again.append) == []
    assert "1 of 1 notebooks already in" in again[0] and "executing 0" in again[0], again


def test_the_book_executes_the_toc_s_notebooks_but_the_excluded_ones():
    executed, excluded = execute.book_notebooks(), execute.excluded_notebooks()
    assert not set(executed) & set(excluded)
    assert {path.parent.name for path in executed} == {"notebooks", "solutions"}
    assert {path.parent.name for path in excluded} == {"exercises"}


class QuietSocket:
    """A socket whose event-loop wake-up is lost: each poll waits its whole timeout (here: returns at once)
    and only then sees the message, from the ``ready_after``-th look on."""

    def __init__(self, ready_after: int):
        self.waits, self.ready_after = [], ready_after

    async def poll(self, timeout_ms):
        self.waits.append(timeout_ms)
        return len(self.waits) >= self.ready_after


def channel_on(socket):
    channel = execute.WatchfulChannel.__new__(execute.WatchfulChannel)
    channel.socket = socket

    async def receive():
        return {"msg_type": "execute_reply"}

    channel._recv = receive
    return channel


def test_a_lost_wake_up_costs_at_most_a_second_not_the_cell_timeout():
    socket = QuietSocket(ready_after=3)
    reply = asyncio.run(channel_on(socket).get_msg(timeout=300))
    assert reply == {"msg_type": "execute_reply"}
    assert socket.waits == [1000, 1000, 1000]       # three looks of a second, not one of 300 s


def test_the_timeout_still_ends_the_wait():
    socket = QuietSocket(ready_after=10**9)
    with pytest.raises(Empty):
        asyncio.run(channel_on(socket).get_msg(timeout=0.05))
    assert socket.waits and all(wait <= 50 for wait in socket.waits)


def test_the_book_s_kernel_clients_are_watchful(tmp_path, monkeypatch):
    looks = []
    original = execute.WatchfulChannel.get_msg

    async def counted(self, timeout=None):
        looks.append(timeout)
        return await original(self, timeout)

    monkeypatch.setattr(execute.WatchfulChannel, "get_msg", counted)
    notebook = write_notebook(tmp_path / "probe.ipynb", "print(1)")
    _, executed, _, error = execute._run_one(str(notebook), timeout=60)
    assert error is None and executed.cells[0].outputs[0]["text"] == "1\n"
    assert looks, "the execution did not go through WatchfulChannel"


@pytest.mark.parametrize("value, jobs", [("3", 3), ("1", 1), ("0", 1), ("auto", execute.cores())])
def test_jobs_is_a_count_or_auto_as_make_s_jobs_gives_it(value, jobs):
    assert execute.jobs_argument(value) == jobs


def test_auto_counts_the_cores_as_pytest_xdist_does(monkeypatch):
    """make test JOBS=auto: as many book kernels as xdist's `-n auto` starts test workers."""
    import psutil
    from xdist.plugin import pytest_xdist_auto_num_workers

    class Config:            # what xdist's hook reads: `-n auto`
        class option:
            numprocesses = "auto"

    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: 6 if logical else 3)   # 3 cores, 6 threads
    assert execute.jobs_argument("auto") == pytest_xdist_auto_num_workers(Config) == 3   # not os.cpu_count()
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "5")
    assert execute.jobs_argument("auto") == pytest_xdist_auto_num_workers(Config) == 5


@pytest.mark.parametrize("value", ["-2", "two", ""])
def test_jobs_that_is_not_a_count_is_a_usage_error(value, capsys):
    from posenc.book import robustness

    for main in (execute.main, robustness.main):
        with pytest.raises(SystemExit) as stopped:
            main(["--jobs", value, "--list"] if main is execute.main else ["--jobs", value, "ch00"])
        assert stopped.value.code == 2
        assert "nor 'auto'" in capsys.readouterr().err


def test_make_book_and_make_robustness_take_jobs_auto(capsys):
    from posenc.book import robustness

    assert execute.main(["--jobs", "auto", "--list"]) == 0          # `make book JOBS=auto`'s first step
    with pytest.raises(SystemExit):                                   # stops at the chapter, past --jobs
        robustness.main(["--jobs", "auto", "ch00"])
    assert "unknown chapter" in capsys.readouterr().err
