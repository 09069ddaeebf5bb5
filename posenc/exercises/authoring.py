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

A markdown line of the form ``{{ posenc.module:function }}`` is replaced, in both copies, by what that
function of the course package returns (markdown text): measured numbers a question shows, such as a table
from ``results/``, then come from the data, and ``--check`` fails when the data changed and the notebooks
were not written again.

Every notebook of the book (the chapters in the table of contents too, which are written by hand) gets
the same first code cell, right after its title: on Colab or Binder it installs the course package from
the repository and ref named in ``_config.yml`` when the package is missing, and elsewhere it does nothing.
A fork that changes ``repository.url`` runs ``make exercises`` and every notebook installs from the fork.

    python -m posenc.exercises.authoring           # write exercises/, solutions/, the chapters' install cells
    python -m posenc.exercises.authoring --check   # fail if a committed notebook is out of date
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import re
import sys
from pathlib import Path

import nbformat

from posenc.paths import EXERCISE_SOURCES as SOURCE_DIR, ROOT

MARKER = re.compile(r"^(?P<indent>\s*)### (?P<edge>BEGIN|END) (?P<kind>SOLUTION|STUB)\s*$")
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


class SourceError(ValueError):
    """A malformed exercise source (unbalanced or nested markers), or no usable repository in _config.yml."""


# The first code cell of every notebook. Where the package is installed (the book build, the tests,
# `make lab`, Binder) it does nothing and prints nothing; the site folds it under a prompt that says what
# it is for (hide-cell). In Colab it installs the package from the repository and ref of _config.yml,
# which are also where the site's launch buttons open the notebook from.
INSTALL_CELL_ID = "install-posenc"
INSTALL_SOURCE = """\
# Installs the course package when it is missing (a notebook opened alone, as in Colab); else does nothing.
import importlib, importlib.util, subprocess, sys
course_package = "{requirement}"
if importlib.util.find_spec("posenc") is None:
    print(f"Installing the course package: pip install '{{course_package}}'")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", course_package], check=True)
    importlib.invalidate_caches()"""
INSTALL_METADATA = {
    "tags": ["hide-cell"],
    "mystnb": {"code_prompt_show": "Set-up cell for Colab: installs the course package if it is missing",
               "code_prompt_hide": "Hide the set-up cell"},
}


def repository(config_path: Path | None = None) -> tuple[str, str]:
    """The repository URL and ref of ``_config.yml``, which drive the launch buttons and the install cells."""
    import yaml

    config_path = config_path or ROOT / "_config.yml"
    repo = (yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}).get("repository") or {}
    url, ref = str(repo.get("url") or "").rstrip("/"), str(repo.get("branch") or "")
    if not re.fullmatch(r"https://[^\s@]+", url) or not re.fullmatch(r"[\w./-]+", ref):
        raise SourceError(f"{config_path.name}: repository.url must be the https address of the course's "
                          f"repository and repository.branch its branch or tag (got {url!r} and {ref!r})")
    return url, ref


def install_requirement(url: str, ref: str) -> str:
    """What pip installs in a notebook opened alone: the package at the ref the site was built from."""
    return f"posenc @ git+{url}@{ref}"


def install_cell(url: str, ref: str) -> nbformat.NotebookNode:
    source = INSTALL_SOURCE.format(requirement=install_requirement(url, ref))
    cell = nbformat.v4.new_code_cell(source, metadata=copy.deepcopy(INSTALL_METADATA))
    cell["id"] = INSTALL_CELL_ID
    return cell


def with_install_cell(nb: nbformat.NotebookNode, cell: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` with ``cell`` as its first code cell: after a leading title cell, replacing an older copy."""
    cells = [c for c in nb.cells if c.get("id") != INSTALL_CELL_ID]
    titled = bool(cells) and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("# ")
    nb.cells = cells[:int(titled)] + [cell] + cells[int(titled):]
    return nb


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


FILLED_LINE = re.compile(r"^\{\{\s*(?P<module>posenc(?:\.\w+)+):(?P<function>\w+)\s*\}\}[ \t]*$", re.M)
PLACEHOLDER = re.compile(r"\{\{.*?\}\}")


def fill(text: str, where: str = "cell") -> str:
    """A markdown cell's text with every ``{{ posenc.module:function }}`` line replaced by the function's
    markdown; any other ``{{ ... }}`` is an error, so that a typo cannot reach a student."""
    import importlib

    def replace(match: re.Match) -> str:
        try:
            function = getattr(importlib.import_module(match["module"]), match["function"])
        except (ImportError, AttributeError) as exc:
            raise SourceError(f"{where}: {match.group(0).strip()!r} names no function: {exc}") from exc
        return str(function()).rstrip("\n")

    filled = FILLED_LINE.sub(replace, text)
    leftover = PLACEHOLDER.search(filled)
    if leftover:
        raise SourceError(f"{where}: {leftover.group(0)!r} is not a line of the form "
                          "{{ posenc.module:function }}")
    return filled


def render(source_path: Path, which: str, install: nbformat.NotebookNode | None = None) -> nbformat.NotebookNode:
    """The ``exercise`` or ``solution`` copy of one source, as a notebook without outputs.

    ``install`` is the install cell (default: the one ``_config.yml`` calls for).
    """
    import jupytext

    keep = {"exercise": "stub", "solution": "solution"}[which]
    dropped_tag = {"exercise": "solution", "solution": "exercise"}[which]
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
            new = nbformat.v4.new_markdown_cell(fill(cell.source, f"{source_path.name}, cell {index + 1}"),
                                                metadata=metadata)
        new["id"] = f"{set_id}-{index:02d}"
        cells.append(new)
    nb = with_install_cell(nbformat.v4.new_notebook(cells=cells), install or install_cell(*repository()))
    nb.metadata = {
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python"},
        "posenc": {"exercise_set": set_id, "copy": which,
                   "generated_from": f"solutions/source/{source_path.name}"},
    }
    return nb


def targets(source_path: Path) -> dict[str, Path]:
    name = source_path.stem + ".ipynb"
    return {"exercise": ROOT / "exercises" / name, "solution": ROOT / "solutions" / name}


def sources() -> list[Path]:
    return sorted(SOURCE_DIR.glob("*.py"))


def toc_notebooks() -> list[Path]:
    """Every notebook the book's table of contents lists (chapters, exercises, solutions), in its order."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    entries = [toc["root"]] + [entry["file"] for part in toc.get("parts", []) for entry in part["chapters"]]
    return [ROOT / f"{entry}.ipynb" for entry in entries if (ROOT / f"{entry}.ipynb").is_file()]


def expected_notebooks(cell: nbformat.NotebookNode | None = None) -> dict[Path, str]:
    """Every notebook this module writes or refreshes, and the text it should hold.

    ``cell`` is the install cell (default: the one ``_config.yml`` calls for).
    """
    cell = cell or install_cell(*repository())
    expected = {}
    for source in sources():
        for which, path in targets(source).items():
            expected[path] = as_text(render(source, which, cell))
    for path in toc_notebooks():     # hand-written notebooks: only the install cell is ours
        if path not in expected:
            expected[path] = as_text(with_install_cell(nbformat.read(path, as_version=4), cell))
    return expected


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if a generated file is out of date")
    args = parser.parse_args(argv)
    stale = []
    for path, text in expected_notebooks().items():
        if path.exists() and path.read_text() == text:
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
