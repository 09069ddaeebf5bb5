"""A reveal.js slide deck for every chapter, made from the chapter itself, and a PDF of each.

    python -m posenc.book.slides                 # what `make book` runs after jupyter-book build
    python -m posenc.book.slides --no-pdf        # the decks only
    python -m posenc.book.slides --check         # only check that every deck's references exist

One source: a deck holds nothing that the chapter does not say, except what a lecturer needs in the room.
``book/slides/chNN.yml`` (one file per chapter, the only place a deck is described) selects the chapter's
content by stable references, never by position:

* markdown cells by their nbformat cell id (``ch05-013``): the slide shows the cell's display equations
  (``equations``) or its first sentence (``lead``); the speaker notes get the cell's whole prose;
* figures by their name (cell metadata ``mystnb.figure.name``, ``fig-...``), with the caption and alt text
  of that metadata and the image the executed notebook holds;
* the explorer by the id of the cell that shows it (plain JavaScript from ``posenc.book.explorers``);
* the learning objectives and the summary by their section headings (``## Overview``, ``## Summary``);
* misconceptions by question id and words of a ``Mistake`` message of ``posenc/exercises/checks/chNN.py``.

The file adds only the speaker notes' own words (``say``) and the question for the room (``question``,
with its answer for the notes). A reference that no longer exists (a cell deleted, a figure renamed, a
mistake reworded) stops the build with a message that names it; ``tests/test_slides.py`` checks every deck
description the same way without a built book.

Figures and glued numbers come from the executions that ``make book`` left in jupyter-book's cache
(``_build/.jupyter_cache``), matched by the notebook's code as myst-nb matches them: the deck shows the same
numbers as the chapter, and nothing is executed again. reveal.js and MathJax are copied from the npm packages
that ``tests/browser/setup.sh`` installs (``make browser-setup``) into ``_build/html/slides/lib/``, so the
decks need no CDN; the notes open with the ``s`` key (reveal.js's speaker view).

Each deck is written to ``_build/html/slides/chNN.html``, its figures to ``slides/chNN/``, its PDF (headless
Chromium printing the deck's ``?print-pdf`` view, one page per slide) to ``slides/chNN.pdf``; each chapter's
page gets a link to both under its title. Without reveal.js or MathJax (no npm) the decks are not built and
the command says why; without Chromium the PDFs are not printed. A figure shrinks, in the reader's browser,
until its slide's content fits the slide's 1280 x 720 (``fitSlide`` in the page).
"""

from __future__ import annotations

import argparse
import ast
import base64
import html
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from posenc.paths import ROOT

__all__ = ["DECKS", "SITE", "Deck", "DeckError", "build", "deck_files", "load_deck", "main"]

DECKS = ROOT / "book" / "slides"
SITE = ROOT / "_build" / "html"
CACHE = ROOT / "_build" / ".jupyter_cache"
REVEAL_VERSION = "6.0.2"           # as in tests/browser/setup.sh
MATHJAX_VERSION = "3.2.2"
BROWSER_SHARE = ROOT / ".venv" / "share" / "posenc-browser"
WIDTH, HEIGHT = 1280, 720          # the slide's size in CSS pixels (16:9)
MIN_SLIDES, MAX_SLIDES = 12, 30
LINK_MARK = "posenc-slides-link"
SLIDE_KEYS = {"title", "lead", "equations", "figure", "figures", "explorer", "output", "say", "mistakes"}
DECK_KEYS = {"chapter", "slides", "question", "answer", "misconceptions", "say_objectives", "say_summary"}


class DeckError(ValueError):
    """A deck description that does not fit its chapter (a missing cell, figure, mistake...)."""


def _folder(variable: str, default: Path) -> Path:
    value = os.environ.get(variable)
    return Path(value) if value else default


def reveal_dir() -> Path:
    return _folder("POSENC_REVEAL_DIR", BROWSER_SHARE / f"reveal.js-{REVEAL_VERSION}")


def mathjax_dir() -> Path:
    return _folder("POSENC_MATHJAX_DIR", BROWSER_SHARE / f"mathjax-{MATHJAX_VERSION}")


# ---------------------------------------------------------------------------------------------------
# Deck descriptions


@dataclass
class SlideSpec:
    title: str | None = None
    lead: list[str] = field(default_factory=list)          # markdown cell ids: first sentence shown
    equations: list[str] = field(default_factory=list)     # markdown cell ids: display equations shown
    figures: list[str] = field(default_factory=list)       # figure names
    explorer: str | None = None                            # cell id of an explorer
    output: str | None = None                              # cell id of a code cell whose text output shows
    say: str = ""
    mistakes: list[str] = field(default_factory=list)      # "qN: words of the message"


@dataclass
class Deck:
    """One deck description (book/slides/chNN.yml)."""

    set_id: str                  # "ch05"
    path: Path
    chapter: Path                # the notebook
    slides: list[SlideSpec]
    question: str
    answer: str
    misconceptions: list[str]
    say_objectives: str = ""
    say_summary: str = ""


def deck_files(folder: Path = DECKS) -> list[Path]:
    """Every deck description, in chapter order: adding book/slides/chNN.yml adds the chapter's deck."""
    return sorted(folder.glob("ch[0-9][0-9].yml"))


def _ids(value, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise DeckError(f"{where}: expected a cell id or a list of them, got {value!r}")


def load_deck(path: Path) -> Deck:
    """Read and shape-check one description; what it references is checked against the chapter later."""
    name = path.name
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DeckError(f"{name} is not valid YAML: {exc}") from None
    unknown = set(data) - DECK_KEYS
    if unknown:
        raise DeckError(f"{name}: unknown keys {sorted(unknown)} (known: {sorted(DECK_KEYS)})")
    for key in ("chapter", "slides", "question", "answer"):
        if not data.get(key):
            raise DeckError(f"{name}: '{key}' is missing")
    chapter = ROOT / data["chapter"]
    slides = []
    for number, item in enumerate(data["slides"], 1):
        where = f"{name}, slide {number}"
        if not isinstance(item, dict):
            raise DeckError(f"{where}: expected a mapping, got {item!r}")
        unknown = set(item) - SLIDE_KEYS
        if unknown:
            raise DeckError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(SLIDE_KEYS)})")
        figures = _ids(item.get("figure"), where) + _ids(item.get("figures"), where)
        slide = SlideSpec(title=item.get("title"), lead=_ids(item.get("lead"), where),
                          equations=_ids(item.get("equations"), where), figures=figures,
                          explorer=item.get("explorer"), output=item.get("output"),
                          say=str(item.get("say") or "").strip(), mistakes=_ids(item.get("mistakes"), where))
        if not (slide.lead or slide.equations or slide.figures or slide.explorer or slide.output):
            raise DeckError(f"{where}: shows nothing of the chapter (give lead, equations, figure, explorer "
                            "or output)")
        slides.append(slide)
    return Deck(set_id=path.stem, path=path, chapter=chapter, slides=slides,
                question=str(data["question"]).strip(), answer=str(data["answer"]).strip(),
                misconceptions=_ids(data.get("misconceptions"), f"{name}, misconceptions"),
                say_objectives=str(data.get("say_objectives") or "").strip(),
                say_summary=str(data.get("say_summary") or "").strip())


# ---------------------------------------------------------------------------------------------------
# The chapter: its cells, its sections, its executed outputs


HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


@dataclass
class Chapter:
    notebook: nbformat.NotebookNode
    executed: nbformat.NotebookNode | None      # the same notebook with outputs, from the cache
    path: Path

    def __post_init__(self):
        self.cells = {cell.get("id"): cell for cell in self.notebook.cells}
        self.outputs = {cell.get("id"): cell.get("outputs", []) for cell in (self.executed or self.notebook).cells
                        if cell.cell_type == "code"}
        self.figures = {}
        for cell in self.notebook.cells:
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
                        self.glue[record["name"]] = text

    @property
    def title(self) -> str:
        for cell in self.notebook.cells:
            if cell.cell_type == "markdown":
                match = re.search(r"^#\s+(.+)$", cell.source, re.M)
                if match:
                    return match[1].strip()
        return self.path.stem

    def cell(self, cell_id: str, kind: str, where: str):
        cell = self.cells.get(cell_id)
        if cell is None:
            raise DeckError(f"{where}: {self.path.name} has no cell with id {cell_id!r} (deleted or renamed? "
                            "point the deck at the chapter's current cell)")
        if cell.cell_type != kind:
            raise DeckError(f"{where}: cell {cell_id!r} of {self.path.name} is a {cell.cell_type} cell, "
                            f"the deck wants a {kind} cell")
        return cell

    def figure(self, name: str, where: str):
        if name not in self.figures:
            raise DeckError(f"{where}: {self.path.name} has no figure named {name!r} (renamed? its cell's "
                            f"metadata mystnb.figure.name); figures: {sorted(self.figures)}")
        return self.figures[name]

    def heading_before(self, cell_id: str) -> str:
        """The last section heading at or before a cell: the slide's default title."""
        title = self.title
        for cell in self.notebook.cells:
            if cell.cell_type == "markdown":
                found = [m[2] for m in HEADING.finditer(cell.source) if len(m[1]) >= 2]
                if found:
                    title = found[-1]
            if cell.get("id") == cell_id:
                break
        return title

    def section(self, heading: str) -> str:
        """The markdown of a section (from its ``## heading`` to the next heading of its level or above)."""
        text = "\n\n".join(cell.source for cell in self.notebook.cells if cell.cell_type == "markdown")
        match = re.search(rf"^##\s+{re.escape(heading)}\s*$", text, re.M)
        if not match:
            raise DeckError(f"{self.path.name} has no section '## {heading}'")
        rest = text[match.end():]
        end = re.search(r"^#{1,2}\s", rest, re.M)
        return rest[: end.start()] if end else rest


def executed_notebook(path: Path, cache_path: Path = CACHE):
    """The notebook with the outputs of its execution in jupyter-book's cache (None when there is none)."""
    from jupyter_cache import get_cache

    notebook = nbformat.read(path, as_version=4)
    if not (cache_path / "global.db").exists() and not any(cache_path.glob("*.db")):
        return notebook, None
    cache = get_cache(str(cache_path))
    try:
        record = cache.match_cache_notebook(notebook)
    except KeyError:
        return notebook, None
    return notebook, cache.get_cache_bundle(record.pk).nb


# ---------------------------------------------------------------------------------------------------
# MyST markdown to HTML (the subset the chapters use), with glued numbers filled in


def _glue_text(chapter: Chapter | None, spec: str) -> str:
    name, _, fmt = spec.partition(":")
    if chapter is None or name not in chapter.glue:
        if chapter is not None and chapter.executed is None:
            return "…"
        raise DeckError(f"the glued value {name!r} is not in the executed chapter")
    text = chapter.glue[name]
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text.strip("'\"")
    try:
        return format(value, fmt) if fmt else str(value)
    except (ValueError, TypeError):
        return str(value)


def _citation(key: str) -> str:
    entries = _bibliography()
    names = []
    for one in key.split(","):
        entry = entries.get(one.strip())
        names.append(entry or one.strip())
    return "(" + "; ".join(names) + ")"


_BIB: dict[str, str] | None = None


def _bibliography() -> dict[str, str]:
    """key -> "Author et al., year" from book/references.bib (a light parse: authors and year only)."""
    global _BIB
    if _BIB is None:
        _BIB = {}
        text = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
        for match in re.finditer(r"@\w+\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", text, re.S):
            body = match[2]
            authors = re.search(r"author\s*=\s*[{\"](.+?)[}\"]\s*,?\s*\n", body, re.S)
            year = re.search(r"year\s*=\s*[{\"]?(\d{4})", body)
            if not authors:
                continue
            people = [p.strip() for p in re.split(r"\s+and\s+", authors[1].replace("\n", " "))]
            surname = people[0].split(",")[0] if "," in people[0] else people[0].split()[-1]
            surname = surname.strip("{}")
            who = surname if len(people) == 1 else (f"{surname} and {people[1].split(',')[0].strip('{} ')}"
                                                    if len(people) == 2 else f"{surname} et al.")
            _BIB[match[1]] = f"{who}, {year[1]}" if year else who
    return _BIB


def _role(name: str, content: str, chapter: Chapter | None) -> str:
    if name in ("glue:text", "glue"):
        return html.escape(_glue_text(chapter, content))
    if name in ("cite", "cite:p", "cite:t"):
        return html.escape(_citation(content))
    if name in ("numref", "ref", "doc", "eq", "term"):
        label = re.match(r"^(.*?)\s*<[^>]+>$", content)
        if label:
            return html.escape(label[1])
        return "the figure" if content.startswith("fig") else ("the equation" if name == "eq" else "the section")
    if name == "math":
        return f"\\({html.escape(content)}\\)"
    return html.escape(content)


_DIRECTIVE_TITLES = {"prf:theorem": "Theorem", "prf:proof": "Proof", "prf:definition": "Definition",
                     "prf:lemma": "Lemma", "prf:remark": "Remark", "prf:example": "Example",
                     "prf:corollary": "Corollary", "prf:proposition": "Proposition", "note": "Note",
                     "tip": "Tip", "important": "Important", "warning": "Warning", "admonition": ""}


def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.myst_blocks import myst_block_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    return (MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).use(amsmath_plugin)
            .use(colon_fence_plugin).use(myst_role_plugin).use(myst_block_plugin))


_RENDERER = None


def _renderer():
    """One parser for every cell, its rules reading the chapter from the render environment."""
    global _RENDERER
    if _RENDERER is not None:
        return _RENDERER
    parser = _parser()
    rules = parser.renderer.rules

    def equation(tokens, idx, options, env):
        return f'<div class="equation">\\[{html.escape(tokens[idx].content.strip())}\\]</div>\n'

    def math_inline(tokens, idx, options, env):
        return f"\\({html.escape(tokens[idx].content)}\\)"

    def myst_role(tokens, idx, options, env):
        token = tokens[idx]
        return _role(token.meta.get("name", ""), token.content, env.get("chapter"))

    def fence(tokens, idx, options, env):
        token = tokens[idx]
        chapter = env.get("chapter")
        info = token.info.strip()
        match = re.match(r"^\{([\w:-]+)\}\s*(.*)$", info)
        if not match:
            return f"<pre><code>{html.escape(token.content)}</code></pre>\n"
        name, argument = match[1], match[2]
        body = "\n".join(line for line in token.content.splitlines() if not re.match(r"^:[\w-]+:", line))
        if name == "math":
            return f'<div class="equation">\\[{html.escape(body.strip())}\\]</div>\n'
        if name in ("code-cell", "code", "code-block"):
            return f"<pre><code>{html.escape(body)}</code></pre>\n"
        kind = _DIRECTIVE_TITLES.get(name, name.split(":")[-1].title())
        title = (kind + (f" ({argument})" if argument and kind else argument)).strip()
        inner = markdown_html(body, chapter)
        heading = f'<p class="directive-title">{markdown_inline(title, chapter)}.</p>' if title else ""
        return f'<div class="directive">{heading}{inner}</div>\n'

    rules["math_inline"] = math_inline
    for name in ("math_inline_double", "math_block", "math_block_label", "amsmath"):
        rules[name] = equation
    rules["myst_role"] = myst_role
    for name in ("myst_target", "myst_line_comment", "myst_block_break"):
        rules[name] = lambda *args: ""
    rules["fence"] = fence
    rules["colon_fence"] = fence
    _RENDERER = parser
    return parser


def markdown_html(text: str, chapter: Chapter | None = None) -> str:
    """MyST markdown as HTML for a slide: math left as TeX for MathJax, roles resolved."""
    return _renderer().render(text, {"chapter": chapter})


def markdown_inline(text: str, chapter: Chapter | None = None) -> str:
    rendered = markdown_html(text, chapter).strip()
    match = re.fullmatch(r"<p>(.*)</p>", rendered, re.S)
    return match[1] if match else rendered


def display_equations(text: str) -> list[str]:
    """The display equations of a markdown cell ($$...$$, ```{math}, \\begin{...}), as TeX."""
    parser = _renderer()
    found = []

    def walk(tokens):
        for token in tokens:
            if token.type in ("math_block", "math_block_label", "amsmath", "math_inline_double"):
                found.append(token.content.strip())
            elif token.type in ("fence", "colon_fence"):
                info = token.info.strip()
                if info.startswith("{math}"):
                    found.append("\n".join(line for line in token.content.splitlines()
                                           if not re.match(r"^:[\w-]+:", line)).strip())
                elif info.startswith("{"):
                    walk(parser.parse("\n".join(line for line in token.content.splitlines()
                                                if not re.match(r"^:[\w-]+:", line))))
            if token.children:
                walk(token.children)

    walk(parser.parse(text))
    return found


def first_sentence(text: str) -> str:
    """The first sentence of a markdown cell's first paragraph (headings and targets skipped)."""
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    for paragraph in paragraphs:
        if paragraph.startswith(("#", "(", "```", ":::", "$$", "-", "*", "|")) and not paragraph.startswith("**"):
            continue
        paragraph = " ".join(paragraph.split())
        # a sentence ends at ". ", "? ", "! " or ": " outside $...$ and backticks
        depth, quote = False, False
        for i, char in enumerate(paragraph):
            if char == "$":
                depth = not depth
            elif char == "`":
                quote = not quote
            elif char in ".?!" and not depth and not quote and (i + 1 == len(paragraph) or paragraph[i + 1] == " "):
                if paragraph[max(0, i - 3):i + 1] in ("e.g.", "i.e.") or paragraph[max(0, i - 2):i + 1] == "vs.":
                    continue
                return paragraph[: i + 1]
        return paragraph[:-1] + "." if paragraph.endswith(":") else paragraph
    return ""


def prose(text: str) -> str:
    """A markdown cell without its headings and targets: what the speaker notes repeat."""
    lines = [line for line in text.splitlines()
             if not HEADING.match(line) and not re.match(r"^\([\w-]+\)=\s*$", line)]
    return "\n".join(lines).strip()


# ---------------------------------------------------------------------------------------------------
# Slides


@dataclass
class Slide:
    title: str
    body: str                    # HTML
    notes: str                   # HTML
    kind: str = "content"        # title, objectives, content, explorer, misconceptions, summary, question


def _image(chapter: Chapter, cell, name: str, folder: Path, relative: str, where: str) -> tuple[str, str]:
    """The figure as an <figure> (the PNG written into the deck's folder) and its caption's HTML."""
    meta = cell.metadata.get("mystnb") or {}
    caption = (meta.get("figure") or {}).get("caption") or ""
    alt = (meta.get("image") or {}).get("alt") or ""
    if not alt.strip():
        raise DeckError(f"{where}: the figure {name!r} has no alt text (metadata mystnb.image.alt)")
    png = None
    for output in chapter.outputs.get(cell.get("id"), []):
        data = output.get("data") or {}
        if "image/png" in data:
            png = data["image/png"]
            break
    if png is None:
        if chapter.executed is not None:
            raise DeckError(f"{where}: the figure {name!r} has no image in the executed chapter")
        src = ""
    else:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.png").write_bytes(base64.b64decode(png if isinstance(png, str) else "".join(png)))
        src = f"{relative}/{name}.png"
    caption_html = markdown_inline(caption, chapter)
    figure = (f'<figure id="{html.escape(name)}"><img src="{src}" alt="{html.escape(alt.strip())}">'
              f"<figcaption>{caption_html}</figcaption></figure>")
    return figure, caption_html


def _mistake_messages(deck: Deck, references: list[str], where: str) -> list[str]:
    from posenc.exercises import load_set

    questions = {question.qid: question for question in load_set(deck.set_id).questions}
    from posenc.book.mistakes import _message

    found = []
    for reference in references:
        qid, _, words = reference.partition(":")
        qid, words = qid.strip(), words.strip()
        question = questions.get(qid)
        if question is None:
            raise DeckError(f"{where}: exercise set {deck.set_id} has no question {qid!r} ({reference!r})")
        messages = [m for m in (_message(x) for x in getattr(question, "mistakes", ()) or ()) if m]
        matching = [m for m in messages if words.lower() in m.lower()]
        if not words or not matching:
            raise DeckError(f"{where}: no Mistake of {deck.set_id} {qid} says {words!r} (reworded? its messages "
                            f"start: {[m[:40] for m in messages]})")
        found.append((qid, matching[0]))
    return found


def _notes(*parts: str) -> str:
    return "\n".join(part for part in parts if part)


def _say(text: str, chapter: Chapter) -> str:
    return f'<p class="say"><strong>Say:</strong> {markdown_inline(text, chapter)}</p>' if text else ""


def _mistakes_html(found, deck: Deck) -> str:
    if not found:
        return ""
    items = "".join(f"<li>({deck.set_id} {qid}) {html.escape(message)}</li>" for qid, message in found)
    return f"<p><strong>Common misconceptions</strong> (from the exercise checks):</p><ul>{items}</ul>"


def _markdown_parts(chapter: Chapter, spec: SlideSpec, where: str) -> tuple[list[str], list[str]]:
    """What the slide shows of its markdown cells (first sentences, display equations) and the notes' prose."""
    body, notes = [], []
    for mode, ids in (("lead", spec.lead), ("equations", spec.equations)):
        for cell_id in ids:
            cell = chapter.cell(cell_id, "markdown", where)
            if mode == "lead":
                shown = [first_sentence(cell.source)]
                body += [f'<p class="lead">{markdown_inline(text, chapter)}</p>' for text in shown if text]
            else:
                shown = display_equations(cell.source)
                body += [f'<div class="equation">\\[{html.escape(tex)}\\]</div>' for tex in shown]
            if not any(shown):
                what = "sentence to lead with" if mode == "lead" else "display equation"
                raise DeckError(f"{where}: cell {cell_id!r} has no {what}")
            if mode == "lead" or cell_id not in spec.lead:
                notes.append(markdown_html(prose(cell.source), chapter))
    return body, notes


def _text_output(chapter: Chapter, cell_id: str, where: str) -> str:
    outputs = chapter.outputs.get(cell_id, [])
    texts = [o.get("text", "") for o in outputs if o.get("output_type") == "stream"]
    texts += [(o.get("data") or {}).get("text/plain", "") for o in outputs if o.get("output_type") == "execute_result"]
    text = "".join("".join(t) if isinstance(t, list) else t for t in texts).rstrip()
    if not text and chapter.executed is not None:
        raise DeckError(f"{where}: cell {cell_id!r} printed nothing")
    return f'<pre class="output">{html.escape(text)}</pre>'


def _explorer(chapter: Chapter, cell_id: str, where: str) -> str:
    fragments = [(o.get("data") or {}).get("text/html") for o in chapter.outputs.get(cell_id, [])]
    fragments = ["".join(f) if isinstance(f, list) else f for f in fragments if f]
    if not fragments and chapter.executed is not None:
        raise DeckError(f"{where}: cell {cell_id!r} shows no explorer (no HTML output)")
    return f'<div class="explorer">{"".join(fragments)}</div>'


def content_slide(deck: Deck, chapter: Chapter, spec: SlideSpec, where: str, folder: Path, relative: str) -> Slide:
    """One slide of the description: its cells, figures, output or explorer, and its notes."""
    body, notes = _markdown_parts(chapter, spec, where)
    first_ids = spec.lead + spec.equations
    if spec.output:
        chapter.cell(spec.output, "code", where)
        body.append(_text_output(chapter, spec.output, where))
        first_ids.append(spec.output)
    for figure_name in spec.figures:
        cell = chapter.figure(figure_name, where)
        body.append(_image(chapter, cell, figure_name, folder, relative, where)[0])
        first_ids.append(cell.get("id"))
    if spec.explorer:
        chapter.cell(spec.explorer, "code", where)
        body.append(_explorer(chapter, spec.explorer, where))
        first_ids.append(spec.explorer)
    title = spec.title or chapter.heading_before(first_ids[0])
    found = _mistake_messages(deck, spec.mistakes, where)
    return Slide(title=title, kind="explorer" if spec.explorer else "content", body="\n".join(body),
                 notes=_notes(_say(spec.say, chapter), *notes, _mistakes_html(found, deck)))


def deck_slides(deck: Deck, chapter: Chapter, folder: Path | None = None, relative: str = "") -> list[Slide]:
    """The slides of a deck, every reference resolved against the chapter (DeckError when one is missing)."""
    folder = folder or Path(os.devnull).parent / "nowhere"
    relative = relative or deck.set_id
    name = deck.path.name
    slides: list[Slide] = []
    chapter_title = chapter.title
    number = re.match(r"^(\d+)\.\s*(.*)$", chapter_title)
    intro = prose(chapter.section("Overview")) if chapter.section else ""
    overview_paragraph = next((p for p in re.split(r"\n\s*\n", intro) if p.strip()
                               and not p.startswith("**Learning objectives")), "")
    slides.append(Slide(
        title=chapter_title, kind="title",
        body=(f'<p class="chapter">Chapter {number[1]}</p>' if number else "")
        + f"<h1>{markdown_inline(number[2] if number else chapter_title, chapter)}</h1>"
        + '<p class="course">Positional Encoding: from binary counters to learned embeddings</p>',
        notes=_notes(markdown_html(overview_paragraph, chapter),
                     "<p>Press <kbd>s</kbd> for the speaker view; the explorer near the end runs live.</p>")))

    # Learning objectives, from the Overview section
    objectives = re.search(r"\*\*Learning objectives\.?\*\*(.*?)(?=\n\s*\n(?![-*\s])|\Z)", intro, re.S)
    if not objectives:
        raise DeckError(f"{name}: the Overview of {chapter.path.name} has no '**Learning objectives.**' list")
    slides.append(Slide(title="Learning objectives", kind="objectives",
                        body=markdown_html(objectives[1].strip(), chapter),
                        notes=_notes(markdown_html(overview_paragraph, chapter), _say(deck.say_objectives, chapter))))

    for index, spec in enumerate(deck.slides, 1):
        slides.append(content_slide(deck, chapter, spec, f"{name}, slide {index}", folder, relative))

    # Misconceptions, from the checks' Mistake lists
    found = _mistake_messages(deck, deck.misconceptions, f"{name}, misconceptions")
    if found:
        items = "".join(f"<li>{html.escape(message.split(':')[0] if len(message) > 90 and ':' in message[:60] else message)}</li>"
                        for _, message in found)
        slides.append(Slide(
            title="Common misconceptions", kind="misconceptions",
            body=f'<p class="lead">What the exercise checks catch most often:</p><ul class="dense">{items}</ul>',
            notes=_notes("<p>Ask the room which of these they would have made, then explain each:</p>",
                         _mistakes_html(found, deck))))

    # Summary
    summary = re.split(r"^\*\*Check yourself", prose(chapter.section("Summary")), flags=re.M)[0].strip()
    dense = ' class="dense"' if len(summary) > 700 else ""
    slides.append(Slide(title="Summary", kind="summary", body=f"<div{dense}>{markdown_html(summary, chapter)}</div>",
                        notes=_notes(_say(deck.say_summary, chapter),
                                     "<p>Point to the exercise set and the quiz at the end of the chapter.</p>")))
    # The question for the room
    slides.append(Slide(title="A question for the room", kind="question",
                        body=f'<p class="question">{markdown_inline(deck.question, chapter)}</p>',
                        notes=_notes("<p>Give the room two minutes in pairs, then take answers.</p>",
                                     f"<p><strong>Answer:</strong> {markdown_inline(deck.answer, chapter)}</p>")))
    return slides


# ---------------------------------------------------------------------------------------------------
# The deck's page


STYLE = """
.reveal { font-size: 30px; }
.reveal .slides { text-align: left; }
.reveal .slides section { height: 100%; }
.reveal h1 { font-size: 2.0em; text-transform: none; }
.reveal h2 { font-size: 1.35em; text-transform: none; margin: 0.25em 0 0.5em; }
.reveal a { color: #1a5a96; }
.reveal p.lead { font-size: 0.95em; }
.reveal p.chapter, .reveal p.course { color: #444; }
.reveal p.question { font-size: 1.1em; line-height: 1.4; }
.reveal ul, .reveal ol { display: block; margin-left: 1.2em; }
.reveal li { margin: 0.25em 0; font-size: 0.8em; line-height: 1.3; }
.reveal .dense, .reveal .dense li, .reveal .dense p { font-size: 0.8em; line-height: 1.3; }
.reveal .dense .dense, .reveal .dense li li, .reveal .dense li p { font-size: 1em; }
.reveal .equation { font-size: 0.85em; margin: 0.4em 0; text-align: center; }
.reveal figure { margin: 0.3em auto; text-align: center; }
.reveal figure img { display: block; margin: 0 auto; width: 100%; height: 480px; object-fit: contain; background: #fff; }
.reveal section.has-lead figure img, .reveal section.has-equation figure img,
.reveal section.has-output figure img { height: 380px; }
.reveal section.has-lead.has-equation figure img { height: 310px; }
.reveal section.two-figures figure { display: inline-block; width: 49%; vertical-align: top; }
.reveal figcaption { font-size: 0.55em; color: #333; line-height: 1.3; margin-top: 0.3em; }
.reveal pre.output { font-size: 0.5em; box-shadow: none; background: #f6f6f6; color: #222; padding: 0.5em;
  white-space: pre; width: auto; overflow: visible; }
.reveal .explorer { font-size: 0.75em; }
.reveal .explorer .posenc-explorer { margin: 0 auto; }
.reveal .directive { border-left: 4px solid #0072B2; padding-left: 0.6em; }
.reveal .directive-title { font-weight: bold; }
.reveal kbd { font-size: 0.9em; }
.reveal .slide-number { background-color: #333; color: #fff; }
.reveal .controls { color: #1a5a96; }
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}: slides</title>
<link rel="stylesheet" href="lib/reveal/reset.css">
<link rel="stylesheet" href="lib/reveal/reveal.css">
<link rel="stylesheet" href="lib/reveal/theme/white.css">
<link rel="stylesheet" href="lib/posenc-slides.css">
<script>
window.MathJax = {{
  tex: {{inlineMath: [["\\\\(", "\\\\)"]], displayMath: [["\\\\[", "\\\\]"]]}},
  svg: {{fontCache: "global"}},
  options: {{ignoreHtmlClass: "notes", enableMenu: false}},
}};
</script>
<script defer src="lib/mathjax/tex-svg-full.js"></script>
</head>
<body>
<div class="reveal" role="main" aria-label="{title_attr}: slides">
<div class="slides">
{sections}
</div>
</div>
<script src="lib/reveal/reveal.js"></script>
<script src="lib/reveal/plugin/notes.js"></script>
<script>
// A figure shrinks until its slide's content fits the slide's height (equations and text above it vary).
function fitSlide(section) {{
  const images = Array.from(section.querySelectorAll("figure img"));
  if (!images.length || !section.offsetHeight) return;
  const bottom = () => Math.max(...Array.from(section.children).filter(el => !el.matches("aside.notes"))
    .map(el => el.offsetTop + el.offsetHeight));
  for (let round = 0; round < 20 && bottom() > {height} - 8; round++) {{
    const cut = (bottom() - {height} + 8) / images.length + 2;
    images.forEach(img => {{ img.style.height = Math.max(120, img.offsetHeight - cut) + "px"; }});
  }}
}}
function fitSlides() {{
  document.querySelectorAll(".reveal .slides section").forEach(fitSlide);
  document.body.dataset.fitted = "yes";
}}
Reveal.initialize({{width: {width}, height: {height}, margin: 0.04, center: false, hash: true, transition: "none",
  controlsTutorial: false, slideNumber: "c/t", pdfMaxPagesPerSlide: 1, plugins: [RevealNotes]}})
  .then(() => (window.MathJax && MathJax.startup ? MathJax.startup.promise : null))
  .then(fitSlides);
Reveal.on("slidechanged", event => fitSlide(event.currentSlide));
</script>
</body>
</html>
"""


def deck_page(title: str, slides: list[Slide], chapter_link: str) -> str:
    sections = []
    for slide in slides:
        classes = [f"slide-{slide.kind}"]
        if 'class="lead"' in slide.body:
            classes.append("has-lead")
        if 'class="equation"' in slide.body:
            classes.append("has-equation")
        if 'class="output"' in slide.body:
            classes.append("has-output")
        if slide.body.count("<figure") == 2:
            classes.append("two-figures")
        heading = "" if slide.kind == "title" else f"<h2>{markdown_inline(slide.title)}</h2>\n"
        footer = (f'<p class="chapter-link"><a href="{chapter_link}">The chapter in the book</a></p>'
                  if slide.kind == "title" else "")
        sections.append(f'<section class="{" ".join(classes)}">\n{heading}{slide.body}\n{footer}\n'
                        f'<aside class="notes">\n{slide.notes}\n</aside>\n</section>')
    return PAGE.format(title=html.escape(title), title_attr=html.escape(title, quote=True),
                       sections="\n".join(sections), width=WIDTH, height=HEIGHT)


# ---------------------------------------------------------------------------------------------------
# Building


def libraries_missing() -> str | None:
    """What is missing of reveal.js and MathJax, and how to get them; None when both are there."""
    reveal, mathjax = reveal_dir(), mathjax_dir()
    missing = [str(p) for p in (reveal / "dist" / "reveal.js", mathjax / "es5" / "tex-svg-full.js") if not p.exists()]
    if missing:
        return (f"reveal.js or MathJax is missing ({', '.join(missing)}): run `make browser-setup` "
                "(tests/browser/setup.sh fetches both from the npm registry; it needs npm)")
    return None


def copy_libraries(out: Path) -> None:
    """reveal.js (its dist files) and MathJax into slides/lib/, from the npm packages setup.sh fetched."""
    reveal, mathjax = reveal_dir(), mathjax_dir()
    missing = libraries_missing()
    if missing:
        raise DeckError(missing)
    lib = out / "lib"
    target = lib / "reveal"
    for part in ("reveal.js", "reveal.css", "reset.css", "theme/white.css", "plugin/notes.js"):
        destination = target / part
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(reveal / "dist" / part, destination)
    shutil.copyfile(reveal / "LICENSE", target / "LICENSE")
    (lib / "mathjax").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(mathjax / "es5" / "tex-svg-full.js", lib / "mathjax" / "tex-svg-full.js")
    if (mathjax / "LICENSE").exists():
        shutil.copyfile(mathjax / "LICENSE", lib / "mathjax" / "LICENSE")
    (lib / "posenc-slides.css").write_text(STYLE.lstrip(), encoding="utf-8")


def chapter_docname(deck: Deck) -> str:
    return deck.chapter.relative_to(ROOT).with_suffix("").as_posix()


def link_html(deck: Deck, prefix: str) -> str:
    return (f'<p class="{LINK_MARK}">Slides for this chapter: <a href="{prefix}slides/{deck.set_id}.html">'
            f"the deck</a> (reveal.js; press <kbd>s</kbd> for the speaker notes) or "
            f'<a href="{prefix}slides/{deck.set_id}.pdf">its PDF</a>.</p>')


def add_chapter_link(site: Path, deck: Deck) -> bool:
    """Put the deck's links under the title of the chapter's page; False when the page is not built."""
    docname = chapter_docname(deck)
    page = site / f"{docname}.html"
    if not page.exists():
        return False
    text = page.read_text(encoding="utf-8")
    text = re.sub(rf'<p class="{LINK_MARK}">.*?</p>', "", text, flags=re.S)
    prefix = "../" * docname.count("/")
    article = max(text.find("<article"), 0)          # the page's title, not a copy in the theme's header
    head, body = text[:article], text[article:]
    body, count = re.subn(r"(<h1\b[^>]*>.*?</h1>)", lambda m: m[1] + link_html(deck, prefix), body, count=1, flags=re.S)
    if count:
        page.write_text(head + body, encoding="utf-8")
    return bool(count)


def build_decks(site: Path = SITE, cache_path: Path = CACHE, decks: list[Path] | None = None,
                log=print) -> tuple[list[Path], list[str]]:
    """Write every deck (and its figures) into site/slides/; return the HTML files written and the problems."""
    out = site / "slides"
    out.mkdir(parents=True, exist_ok=True)
    copy_libraries(out)
    written, problems = [], []
    for path in decks or deck_files():
        try:
            written.append(_build_deck(path, site, out, cache_path, log))
        except DeckError as exc:
            problems.append(str(exc))
            log(f"  {exc}")
    return written, problems


def _build_deck(path: Path, site: Path, out: Path, cache_path: Path, log) -> Path:
    deck = load_deck(path)
    notebook, executed = executed_notebook(deck.chapter, cache_path)
    if executed is None:
        raise DeckError(f"{path.name}: no execution of {deck.chapter.relative_to(ROOT)} in {cache_path} that "
                        "matches the notebook's code: run `make book` (the deck takes its figures and numbers "
                        "from the chapter's execution)")
    chapter = Chapter(notebook, executed, deck.chapter)
    folder = out / deck.set_id
    shutil.rmtree(folder, ignore_errors=True)
    slides = deck_slides(deck, chapter, folder, deck.set_id)
    if not MIN_SLIDES <= len(slides) <= MAX_SLIDES:
        raise DeckError(f"{path.name}: {len(slides)} slides; a 50-minute lecture wants "
                        f"{MIN_SLIDES} to {MAX_SLIDES}")
    docname = chapter_docname(deck)
    page = deck_page(chapter.title, slides, f"../{docname}.html")
    target = out / f"{deck.set_id}.html"
    target.write_text(page, encoding="utf-8")
    linked = add_chapter_link(site, deck)
    log(f"  slides/{deck.set_id}.html: {len(slides)} slides" + ("" if linked else f" (no page {docname}.html to link from)"))
    return target


def chromium_path() -> str | None:
    for candidate in (os.environ.get("POSENC_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser",
                      shutil.which("chromium"), shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]


def print_pdfs(decks: list[Path], log=print) -> list[Path]:
    """Each deck's ?print-pdf view printed by headless Chromium (Playwright) into chNN.pdf beside it."""
    executable = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        log("posenc.book.slides: no Chromium (or no Playwright): the PDFs are not printed; "
            "run `make browser-setup`")
        return []
    printed = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
            context.route(re.compile(r"^(?!file:)"), lambda route: route.abort())      # nothing from the network
            for deck in decks:
                target = deck.with_suffix(".pdf")
                for attempt in (1, 2):          # a fresh tab each time; a blank print is tried once more
                    pages, slides = _print_one(context, deck, target)
                    if pages >= slides > 0:
                        break
                    log(f"  {target.name}: {pages} pages for {slides} slides (attempt {attempt})")
                else:
                    raise DeckError(f"{target.name}: Chromium printed {pages} pages for {slides} slides")
                printed.append(target)
        finally:
            browser.close()
    return printed


PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_pages(data: bytes) -> int:
    """The pages of a PDF as Chromium writes it (its page objects are not packed into object streams)."""
    return len(PDF_PAGE.findall(data))


def _print_one(context, deck: Path, target: Path) -> tuple[int, int]:
    """Print one deck's ?print-pdf view; return the PDF's pages and the deck's slides."""
    tab = context.new_page()
    try:
        tab.goto(deck.resolve().as_uri() + "?print-pdf", wait_until="load")
        # Reveal exists before it is ready, and then counts 0 slides (seen in a clean clone's make test):
        # wait until it is ready and has laid out one print page per slide.
        tab.wait_for_function("() => document.body.dataset.fitted === 'yes' && window.Reveal && Reveal.isReady()"
                              " && Reveal.getTotalSlides() > 0"
                              " && document.querySelectorAll('.pdf-page').length >= Reveal.getTotalSlides()",
                              timeout=60_000)
        slides = tab.evaluate("() => Reveal.getTotalSlides()")
        tab.pdf(path=str(target), prefer_css_page_size=True, print_background=True)
    finally:
        tab.close()
    return pdf_pages(target.read_bytes()), slides


def build(site: Path = SITE, cache_path: Path = CACHE, pdf: bool = True, log=print) -> list[Path]:
    start = time.perf_counter()
    missing = libraries_missing()
    if missing:        # a machine without npm still builds the book; the browser tests then say what is missing
        log(f"posenc.book.slides: the slide decks are NOT built: {missing}")
        return []
    log(f"posenc.book.slides: writing the decks into {site / 'slides'}")
    decks, problems = build_decks(site, cache_path, log=log)
    if pdf:
        printed = print_pdfs(decks, log=log)
        log(f"  {len(printed)} PDFs printed")
    log(f"posenc.book.slides: {len(decks)} decks in {time.perf_counter() - start:.1f} s")
    if problems:
        raise DeckError(f"{len(problems)} of {len(problems) + len(decks)} decks not built:\n" + "\n".join(problems))
    return decks


def copy_decks(site: Path, other: Path, log=print) -> int:
    """The decks built into ``site`` (with their figures, PDFs and libraries) copied into another build of
    the book, ``other`` (the student edition), and linked from its chapter pages; returns the decks copied."""
    if not (site / "slides").is_dir():
        raise DeckError(f"no decks in {site / 'slides'} to copy: build them first")
    shutil.copytree(site / "slides", other / "slides", dirs_exist_ok=True)
    decks = [load_deck(path) for path in deck_files() if (site / "slides" / f"{path.stem}.html").exists()]
    linked = sum(add_chapter_link(other, deck) for deck in decks)
    log(f"posenc.book.slides: {len(decks)} decks copied into {other / 'slides'}, {linked} chapter pages linked")
    return len(decks)


def check(log=print) -> int:
    """Resolve every reference of every deck against the notebooks (no execution needed)."""
    problems = 0
    for path in deck_files():
        try:
            deck = load_deck(path)
            chapter = Chapter(nbformat.read(deck.chapter, as_version=4), None, deck.chapter)
            slides = deck_slides(deck, chapter)
            log(f"  {path.name}: {len(slides)} slides")
        except (DeckError, FileNotFoundError) as exc:
            problems += 1
            log(f"  {path.name}: {exc}")
    return 1 if problems else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, default=SITE, help=f"the built site (default: {SITE})")
    parser.add_argument("--cache", type=Path, default=CACHE, help=f"jupyter-book's cache (default: {CACHE})")
    parser.add_argument("--no-pdf", action="store_true", help="do not print the PDFs")
    parser.add_argument("--check", action="store_true", help="only check the deck descriptions' references")
    parser.add_argument("--copy-to", type=Path, action="append", default=[], metavar="SITE",
                        help="also copy the decks into another build (the student edition) and link its chapters")
    args = parser.parse_args(argv)
    if args.check:
        return check()
    try:
        build(args.site, args.cache, pdf=not args.no_pdf)
        for other in args.copy_to:
            copy_decks(args.site, other)
    except DeckError as exc:
        print(f"posenc.book.slides: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
