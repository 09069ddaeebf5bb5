"""A chapter as a deck sees it: its cells, figures, equations, theorems, tables and glued values.

Everything a deck shows of its chapter is found here by a stable reference: a figure by its name (cell
metadata ``mystnb.figure.name``), an equation by its label or by its cell's id, a theorem by its label, a
table by the id of the code cell that shows it, an explorer by the id of its cell, a glued value by its name.
The outputs come from the chapter's execution in jupyter-book's cache (``posenc.book.cache``); without one
(``python -m posenc.book.slides --check``) the references are still checked, against the notebook's sources.
"""

from __future__ import annotations

import ast
import functools
import html.parser
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from posenc.book.slide_figures import SLIDE_FIGURE_MIME
from posenc.book.slides.spec import DeckError

__all__ = ["Chapter", "Table", "Theorem"]

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)
OPTION_LINE = re.compile(r"^:[\w-]+:.*$", re.M)


@dataclass
class Theorem:
    kind: str          # "theorem", "proposition"...
    name: str          # the directive's argument, "" when it has none
    body: str          # its MyST markdown, options removed


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    row_headers: bool = True       # the first cell of each row names it (shown as the row's header)

    def select(self, columns: list[str], rows: list[str], where: str) -> "Table":
        """The table cut down to the named columns (by header) and rows, in the order given. A row is named by
        its first cell, or by its first cells joined with " | " when the first cell repeats."""
        keep = list(range(len(self.headers)))
        if columns:
            missing = [c for c in columns if c not in self.headers]
            if missing:
                raise DeckError(f"{where}: the table has no column {missing[0]!r}; its columns: {self.headers}")
            keep = [self.headers.index(c) for c in columns]
        chosen = self.rows
        if rows:
            keys = [" | ".join(row) for row in self.rows]
            chosen = []
            for name in rows:
                matching = [row for row, key in zip(self.rows, keys) if key == name or key.startswith(name + " | ")]
                if len(matching) != 1:
                    found = "no row" if not matching else f"{len(matching)} rows"
                    raise DeckError(f"{where}: the table has {found} {name!r} (name a row by its first cells, "
                                    f"joined with ' | '); its rows: {keys}")
                chosen += matching
        return Table([self.headers[i] for i in keep], [[row[i] for i in keep] for row in chosen],
                     self.row_headers and (not keep or keep[0] == 0))


class _TableParser(html.parser.HTMLParser):
    """The first <table> of an HTML fragment: header cells (its first row, if all of them are <th>), rows of
    cell texts, and whether every row begins with a header cell (the row's name)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self.row_headers = False
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._tags: list[str] = []                 # the row's cells: "td" or "th"
        self._depth = 0
        self._done = False

    def handle_starttag(self, tag, attrs):
        if self._done:
            return
        if tag == "table":
            self._depth += 1
        elif tag == "tr" and self._depth:
            self._row, self._tags = [], []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            self._tags.append(tag)

    def handle_endtag(self, tag):
        if self._done:
            return
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if not self.headers and not self.rows and set(self._tags) == {"th"}:
                self.headers = self._row
            else:
                self.row_headers = (self.row_headers or not self.rows) and self._tags[:1] == ["th"]
                self.rows.append(self._row)
            self._row = None
        elif tag == "table":
            self._depth -= 1
            self._done = self._depth == 0

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _formats(value, fmt: str) -> bool:
    try:
        format(value, fmt)
    except (ValueError, TypeError):
        return False
    return True


class Chapter:
    """One chapter's notebook, with the outputs of its execution when there is one."""

    def __init__(self, notebook: nbformat.NotebookNode, executed: nbformat.NotebookNode | None, path: Path):
        self.notebook, self.executed, self.path = notebook, executed, path
        self.cells = {cell.get("id"): cell for cell in notebook.cells}
        self.outputs = {cell.get("id"): cell.get("outputs", []) for cell in (executed or notebook).cells
                        if cell.cell_type == "code"}
        self.figures = {}
        for cell in notebook.cells:
            name = ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name")
            if name:
                self.figures[name] = cell
        self.glue = {}
        for outputs in self.outputs.values():
            for output in outputs:
                record = (output.get("metadata") or {}).get("scrapbook")
                if record:
                    data = output.get("data") or {}
                    text = data.get(record.get("mime_prefix", "") + "text/plain")
                    if text is not None:
                        self.glue[record["name"]] = _joined(text)

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def title(self) -> str:
        for cell in self.notebook.cells:
            if cell.cell_type == "markdown":
                match = re.search(r"^#\s+(.+)$", cell.source, re.M)
                if match:
                    return match[1].strip()
        return self.path.stem

    @functools.cached_property
    def stated_numbers(self) -> set[str]:
        """Every number the notebook's sources write (prose and code), thousands separators removed."""
        text = "\n".join(cell.source for cell in self.notebook.cells)
        return {m[0].replace(",", "").replace("_", "") for m in re.finditer(r"\d[\d,_]*(?:\.\d+)?", text)}

    def markdown_cells(self):
        return [cell for cell in self.notebook.cells if cell.cell_type == "markdown"]

    # --- cells and sections ---------------------------------------------------------------------

    def cell(self, cell_id: str, kind: str, where: str):
        cell = self.cells.get(cell_id)
        if cell is None:
            raise DeckError(f"{where}: {self.name} has no cell with id {cell_id!r} (deleted or renamed? point the "
                            "deck at the chapter's current cell)")
        if cell.cell_type != kind:
            raise DeckError(f"{where}: cell {cell_id!r} of {self.name} is a {cell.cell_type} cell, the deck wants a "
                            f"{kind} cell")
        return cell

    def heading_before(self, cell_id: str) -> str:
        """The last section heading (## or deeper) at or before a cell: where the chapter says more."""
        title = self.title
        for cell in self.notebook.cells:
            if cell.cell_type == "markdown":
                found = [m[2] for m in HEADING.finditer(cell.source) if len(m[1]) >= 2]
                if found:
                    title = found[-1]
            if cell.get("id") == cell_id:
                break
        return title

    # --- glued values ----------------------------------------------------------------------------

    def glued_text(self, spec: str) -> str | None:
        """A glued value as {glue:text}`name:format` shows it; None when the chapter has not been executed."""
        name, _, fmt = spec.partition(":")
        if self.executed is None:
            if not self.may_glue(name):
                raise DeckError(f"{self.name} glues no value named {name!r}")
            if fmt and not any(_formats(value, fmt) for value in (1.5, 1, "text")):
                raise DeckError(f"{{glue:text}}`{spec}`: {fmt!r} is not a format for a number or a text")
            return None
        if name not in self.glue:
            raise DeckError(f"the glued value {name!r} is not in the executed {self.name}")
        text = self.glue[name]
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text.strip("'\"")
        try:
            return format(value, fmt) if fmt else str(value)
        except (ValueError, TypeError):
            return str(value)

    def may_glue(self, name: str) -> bool:
        """Whether the notebook's sources glue a value of that name (a literal name, or an f-string's pattern,
        in a code cell, or a name its prose shows): the check without an execution."""
        code = "\n".join(cell.source for cell in self.notebook.cells if cell.cell_type == "code")
        prose = "\n".join(cell.source for cell in self.markdown_cells())
        if re.search(r"\{glue(?::\w+)?\}`" + re.escape(name) + r"(?::[^`]*)?`", prose):
            return True
        for match in re.finditer(r"glue\(\s*(f?)([\"'])(.*?)\2", code):
            literal, pattern = match[3], match[3]
            if match[1]:
                pattern = "".join(".+" if part.startswith("{") else re.escape(part)
                                  for part in re.split(r"(\{[^}]*\})", literal))
                if re.fullmatch(pattern, name):
                    return True
            elif literal == name:
                return True
        return False

    # --- what a slide shows -----------------------------------------------------------------------

    def figure_cell(self, name: str, where: str):
        if name not in self.figures:
            raise DeckError(f"{where}: {self.name} has no figure named {name!r} (renamed? its cell's metadata "
                            f"mystnb.figure.name); figures: {sorted(self.figures)}")
        return self.figures[name]

    def slide_figure(self, name: str, where: str) -> dict | None:
        """The figure's slide version (``posenc.book.slide_figures``) from the execution; None without one."""
        cell = self.figure_cell(name, where)
        if self.executed is None:
            return None
        for output in self.outputs.get(cell.get("id"), []):
            data = output.get("data") or {}
            if SLIDE_FIGURE_MIME in data:
                record = data[SLIDE_FIGURE_MIME]
                if "error" in record:
                    raise DeckError(f"{where}: the figure {name!r} could not be drawn for the slide in the execution "
                                    f"of {self.name}: {record['error']}")
                return record
        if not any("image/png" in (output.get("data") or {}) for output in self.outputs.get(cell.get("id"), [])):
            raise DeckError(f"{where}: the figure {name!r} has no image in the executed {self.name}")
        raise DeckError(f"{where}: the figure {name!r} has no slide version in the execution of {self.name} (it "
                        "was executed before posenc.book.slide_figures existed, or outside a book build): run "
                        "`make book`")

    def _blocks(self):
        """(cell id, token) for every block token of the markdown cells, directives opened up."""
        from posenc.book.slides.render import parser

        def walk(tokens, cell_id):
            for token in tokens:
                yield cell_id, token
                if token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
                    yield from walk(parser().parse(OPTION_LINE.sub("", token.content)), cell_id)

        for cell in self.markdown_cells():
            yield from walk(parser().parse(cell.source), cell.get("id"))

    def equation(self, reference: str, where: str) -> str:
        """The TeX of an equation: a display equation by its label, or by its cell's id (``cell-id`` for the
        cell's first display equation, ``cell-id#2`` for its second); ``cell-id$3`` is the cell's third inline
        formula, for a statement the chapter writes in its prose."""
        inline = "$" in reference
        cell_id, _, index = reference.partition("$" if inline else "#")
        display, formulas = {}, {}
        for owner, token in self._blocks():
            tex, label = None, None
            if token.type in ("math_block", "math_block_label", "amsmath"):
                tex, label = token.content.strip(), token.info.strip() if token.type == "math_block_label" else None
            elif token.type in ("fence", "colon_fence") and token.info.strip().startswith("{math}"):
                label = re.search(r"^:label:\s*(\S+)", token.content, re.M)
                tex, label = OPTION_LINE.sub("", token.content).strip(), label and label[1]
            elif token.type == "inline":
                formulas.setdefault(owner, []).extend(child.content.strip() for child in token.children or []
                                                      if child.type == "math_inline")
            if tex is None:
                continue
            display.setdefault(owner, []).append(tex)
            if label and label == reference:
                return tex
        if cell_id in self.cells:
            self.cell(cell_id, "markdown", where)
            found = (formulas if inline else display).get(cell_id, [])
            number = int(index) if index.isdigit() else 1
            if not 1 <= number <= len(found):
                what = "inline formula(s)" if inline else "display equation(s)"
                raise DeckError(f"{where}: cell {cell_id!r} of {self.name} has {len(found)} {what}, not a number "
                                f"{number}")
            return found[number - 1]
        raise DeckError(f"{where}: {self.name} has no equation labelled {reference!r} and no cell with that id")

    def theorem(self, label: str, where: str) -> Theorem:
        """The statement of a ``prf:`` directive (theorem, proposition...) by its label."""
        for _, token in self._blocks():
            info = token.info.strip() if token.type in ("fence", "colon_fence") else ""
            match = re.match(r"^\{prf:(\w+)\}\s*(.*)$", info)
            if match and re.search(rf"^:label:\s*{re.escape(label)}\s*$", token.content, re.M):
                return Theorem(match[1], match[2].strip(), OPTION_LINE.sub("", token.content).strip())
        raise DeckError(f"{where}: {self.name} has no theorem (prf: directive) labelled {label!r}")

    def table(self, cell_id: str, where: str) -> Table | None:
        """The first table a code cell shows: an HTML or Markdown table, or text printed in columns (two or
        more spaces apart, the first line the header); None without an execution."""
        self.cell(cell_id, "code", where)
        if self.executed is None:
            return None
        from posenc.book.slides.render import parser

        outputs = self.outputs.get(cell_id, [])
        for output in outputs:
            data = output.get("data") or {}
            fragment = _joined(data.get("text/html"))
            markdown = "<table" not in fragment and "|" in _joined(data.get("text/markdown"))
            if markdown:
                fragment = parser().render(_joined(data.get("text/markdown")))       # a GFM table
            if "<table" in fragment:
                cells = _TableParser()
                cells.feed(fragment)
                # A Markdown table's first column names its rows, as in the site's Markdown tables
                named = cells.row_headers or (markdown and len(cells.headers) > 1)
                return Table(cells.headers, cells.rows, named)
        printed = "".join(_joined(o.get("text")) for o in outputs if o.get("output_type") == "stream")
        lines = [re.split(r"\s{2,}", line.strip()) for line in printed.splitlines() if line.strip()]
        if len(lines) > 1 and len({len(line) for line in lines}) == 1 and len(lines[0]) > 1:
            return Table(lines[0], lines[1:])
        raise DeckError(f"{where}: cell {cell_id!r} of {self.name} shows no table")

    def explorer(self, cell_id: str, where: str) -> str | None:
        """The HTML of the explorer a code cell shows (plain JavaScript); None without an execution."""
        self.cell(cell_id, "code", where)
        if self.executed is None:
            return None
        fragments = [_joined((o.get("data") or {}).get("text/html")) for o in self.outputs.get(cell_id, [])]
        fragments = [f for f in fragments if f]
        if not fragments:
            raise DeckError(f"{where}: cell {cell_id!r} of {self.name} shows no explorer (no HTML output)")
        return "".join(fragments)

    def section(self, heading: str) -> str:
        """The markdown of a section (from its ``## heading`` to the next heading of its level or above)."""
        text = "\n\n".join(cell.source for cell in self.markdown_cells())
        match = re.search(rf"^##\s+{re.escape(heading)}\s*$", text, re.M)
        if not match:
            raise DeckError(f"{self.name} has no section '## {heading}'")
        rest = text[match.end():]
        end = re.search(r"^#{1,2}\s", rest, re.M)
        return rest[: end.start()] if end else rest
