"""posenc.glue writes what myst-nb's own glue writes, in a book build; elsewhere it only returns the value."""

import IPython.display
import nbformat
import pytest
from nbclient import NotebookClient

from posenc.book import style


def run_cells(*sources: str) -> list[list[dict]]:
    """The outputs of each cell, run in a fresh kernel of this environment."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    return [cell.outputs for cell in notebook.cells]


def test_glue_writes_the_outputs_of_myst_nb_s_glue():
    ours, theirs, shown = run_cells(
        "from posenc import glue\nglue('ratio', 0.25)\nglue('table', [1, 2], display=True);",
        "from myst_nb import glue\nglue('ratio', 0.25, display=False)\nglue('table', [1, 2], display=True)",
        "import numpy as np\nfrom posenc import glue\nglue('ratio', np.float64(0.25))")
    assert ours == theirs and len(ours) == 2, (ours, theirs)
    assert ours[0]["metadata"]["scrapbook"] == {"name": "ratio", "mime_prefix": style.GLUE_MIME_PREFIX}
    assert shown[0]["data"] == {style.GLUE_MIME_PREFIX + "text/plain": "0.25"}, shown


@pytest.mark.parametrize("variable, myst_nb, writes", [(None, False, False), ("1", False, True),
                                                       (None, True, True), ("0", False, False)])
def test_glue_writes_only_where_a_book_can_read_it(monkeypatch, variable, myst_nb, writes):
    if variable is None:
        monkeypatch.delenv(style.BOOK_BUILD_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(style.BOOK_BUILD_VARIABLE, variable)
    real_find_spec = style.importlib.util.find_spec
    monkeypatch.setattr(style.importlib.util, "find_spec",
                        lambda name: (real_find_spec(name) if myst_nb else None) if name == "myst_nb"
                        else real_find_spec(name))
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **options: shown.append(objects))
    assert style.glue("ratio", 0.5) == 0.5
    assert len(shown) == writes, shown


@pytest.mark.parametrize("variable, printed", [(None, True), ("1", False)])
def test_an_echoed_value_is_printed_where_no_book_build_shows_its_prose(monkeypatch, capsys, variable, printed):
    """A sentence the reader needs (how a live run compares with the file) reaches a page through its prose and a
    notebook opened in Colab or ``make lab`` through the cell's output, never both."""
    if variable is None:
        monkeypatch.delenv(style.BOOK_BUILD_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(style.BOOK_BUILD_VARIABLE, variable)
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **options: None)
    assert style.glue("agreement", "Your run matches.", echo=True) == "Your run matches."
    assert capsys.readouterr().out == ("Your run matches.\n" if printed else "")
    style.glue("agreement", "Your run matches.")
    assert capsys.readouterr().out == ""
    assert style.glue("never", "ALiBi", echo="Never below 0.1: {}.") == "ALiBi"       # a value that needs its label
    assert capsys.readouterr().out == ("Never below 0.1: ALiBi.\n" if printed else "")
