"""posenc.book.execute: the book's notebooks executed ahead of the build, into the cache the build reads."""

import os

import nbformat
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
