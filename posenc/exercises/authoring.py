"""Build the student and solution notebooks of every exercise set from one source.

Sources live in ``solutions/source/<set_id>_<topic>.py`` (jupytext percent format, so they open as
notebooks in Jupyter and diff as text). Inside a code cell::

    def wavelength(i, d_model, base=10000.0):
        ### BEGIN SOLUTION
        return 2 * np.pi * base ** (2 * i / d_model)
        ### END SOLUTION

The student copy replaces each solution block with its ``### BEGIN STUB`` ... ``### END STUB`` block
when one follows, or else with ``raise NotImplementedError`` at the same indentation; the solution copy
keeps the solution and drops the stub. A cell tagged ``solution`` appears only in the solution copy, a
cell tagged ``exercise`` only in the student copy.

    python -m posenc.exercises.authoring           # write exercises/*.ipynb, solutions/*.ipynb, handouts.json
    python -m posenc.exercises.authoring --check   # fail if a committed copy is out of date
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import sys
from pathlib import Path

import nbformat

from posenc.paths import EXERCISE_SOURCES as SOURCE_DIR, ROOT

HANDOUTS = Path(__file__).with_name("handouts.json")     # read by the grader: see handouts_text()
MARKER = re.compile(r"^(?P<indent>\s*)### (?P<edge>BEGIN|END) (?P<kind>SOLUTION|STUB)\s*$")
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class SourceError(ValueError):
    """A malformed exercise source (unbalanced or nested markers)."""


def _read_block(lines: list[str], start: int, kind: str, where: str) -> tuple[list[str], int]:
    """Lines strictly inside the block opened at ``start``, and the index after its END marker."""
    for end in range(start + 1, len(lines)):
        marker = MARKER.match(lines[end])
        if marker and marker["edge"] == "END" and marker["kind"] == kind:
            return lines[start + 1:end], end + 1
        if marker:
            raise SourceError(f"{where}: {lines[end].strip()!r} inside a {kind} block")
    raise SourceError(f"{where}: ### BEGIN {kind} is never closed")


def split_blocks(source: str, keep: str, where: str = "cell") -> str:
    """Keep the ``keep`` side ("solution" or "stub") of every marked block of one code cell."""
    lines = source.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        marker = MARKER.match(lines[i])
        if not marker:
            out.append(lines[i])
            i += 1
            continue
        if (marker["edge"], marker["kind"]) != ("BEGIN", "SOLUTION"):
            raise SourceError(f"{where}: {lines[i].strip()!r} without an open ### BEGIN SOLUTION before it")
        solution, i = _read_block(lines, i, "SOLUTION", where)
        stub = None
        follower = MARKER.match(lines[i]) if i < len(lines) else None
        if follower and (follower["edge"], follower["kind"]) == ("BEGIN", "STUB"):
            stub, i = _read_block(lines, i, "STUB", where)
        if keep == "solution":
            out.extend(solution)
        elif stub is not None:
            out.extend(stub)
        else:
            out.append(f"{marker['indent']}raise NotImplementedError  # your code here")
    return "\n".join(out)


def render(source_path: Path, copy: str) -> nbformat.NotebookNode:
    """The ``exercise`` or ``solution`` copy of one source, as a notebook without outputs."""
    import jupytext

    keep = {"exercise": "stub", "solution": "solution"}[copy]
    dropped_tag = {"exercise": "solution", "solution": "exercise"}[copy]
    source_nb = jupytext.read(source_path, fmt="py:percent")
    set_id = source_path.stem.split("_", 1)[0]
    cells = []
    for index, cell in enumerate(source_nb.cells):
        tags = cell.metadata.get("tags", [])
        if dropped_tag in tags:
            continue
        metadata = {k: v for k, v in cell.metadata.items() if k != "tags"}
        kept_tags = [t for t in tags if t not in ("solution", "exercise")]
        if kept_tags:
            metadata["tags"] = kept_tags
        if cell.cell_type == "code":
            text = split_blocks(cell.source, keep, f"{source_path.name}, cell {index + 1}")
            new = nbformat.v4.new_code_cell(text, metadata=metadata)
        else:
            new = nbformat.v4.new_markdown_cell(cell.source, metadata=metadata)
        new["id"] = f"{set_id}-{index:02d}"
        cells.append(new)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata = {
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python"},
        "posenc": {"exercise_set": set_id, "copy": copy,
                   "generated_from": f"solutions/source/{source_path.name}"},
    }
    return nb


def targets(source_path: Path) -> dict[str, Path]:
    name = source_path.stem + ".ipynb"
    return {"exercise": ROOT / "exercises" / name, "solution": ROOT / "solutions" / name}


def sources() -> list[Path]:
    return sorted(SOURCE_DIR.glob("*.py"))


def as_text(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def notebook_namespace(path: Path) -> dict:
    """Run every code cell of a notebook in one fresh namespace, as a kernel would, and return it.

    Printed output (the inline checks' lines) is swallowed; an exception propagates. The tests and
    ``make bench`` use it to get at the functions of a worked solution without starting a kernel.
    """
    nb = nbformat.read(path, as_version=4)
    namespace: dict = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in nb.cells:
            if cell.cell_type == "code":
                exec(compile(cell.source, f"{Path(path).name}:{cell.get('id')}", "exec"), namespace)
    return namespace


def handouts_text() -> str:
    """``posenc/exercises/handouts.json``: the code cells of every exercise notebook as handed out.

    The batch grader reads it to tell a student's own code from the handed-out cells and to warm its
    kernels with the notebooks' imports; it ships inside the package, so a grader installed from a
    wheel needs no checkout.
    """
    cells = {}
    for source in sources():
        notebook = render(source, "exercise")
        cells[notebook.metadata["posenc"]["exercise_set"]] = [c.source for c in notebook.cells
                                                              if c.cell_type == "code"]
    return json.dumps(cells, indent=1, sort_keys=True) + "\n"


def generated() -> dict[Path, str]:
    """Every file ``make exercises`` writes, with its text."""
    files = {path: as_text(render(source, copy)) for source in sources() for copy, path in targets(source).items()}
    files[HANDOUTS] = handouts_text()
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if a generated file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in generated().items():
        current = path.read_text() if path.exists() else None
        if current == text:
            continue
        if args.check:
            stale.append(path.relative_to(ROOT))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("out of date (run `make exercises` and commit the result):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
