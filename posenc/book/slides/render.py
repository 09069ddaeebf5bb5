"""MyST markdown to slide HTML: markdown-it-py with the plugins myst-parser uses, and the roles a deck meets.

Math stays TeX for MathJax (``\\(...\\)`` and ``\\[...\\]``); ``{glue:text}`name:fmt``` becomes the value the
chapter's execution glued, formatted as on the page; citations become text from ``book/references.bib``
(read by pybtex): ``{cite:t}`key``` "Shaw et al. (2018)", ``{cite}`` and ``{cite:p}`` "(Shaw et al., 2018)";
a cross-reference becomes its explicit text, or words for what it points at ("the theorem"), never a label.
"""

from __future__ import annotations

import functools
import html
import re

from posenc.book.slides.spec import DeckError
from posenc.paths import ROOT

__all__ = ["BIBLIOGRAPHY", "citation", "markdown_html", "markdown_inline", "parser", "plain_text"]

BIBLIOGRAPHY = ROOT / "book" / "references.bib"
REFERENCE_WORDS = {"thm": "the theorem", "fig": "the figure", "eq": "the equation", "tbl": "the table",
                   "def": "the definition", "lem": "the lemma", "prop": "the proposition", "ex": "the exercise"}
DIRECTIVE_TITLES = {"prf:theorem": "Theorem", "prf:proof": "Proof", "prf:definition": "Definition",
                    "prf:lemma": "Lemma", "prf:remark": "Remark", "prf:example": "Example",
                    "prf:corollary": "Corollary", "prf:proposition": "Proposition", "note": "Note", "tip": "Tip",
                    "important": "Important", "warning": "Warning", "admonition": ""}


@functools.lru_cache(maxsize=1)
def parser():
    """A markdown-it parser for the chapters' MyST (CommonMark, tables, dollar math, amsmath, directives, roles)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.myst_blocks import myst_block_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    markdown = (MarkdownIt("commonmark").enable("table").use(dollarmath_plugin).use(amsmath_plugin)
                .use(colon_fence_plugin).use(myst_role_plugin).use(myst_block_plugin))
    markdown.renderer.rules.update(_rules())
    return markdown


# ---------------------------------------------------------------------------------------------------
# Citations


@functools.lru_cache(maxsize=1)
def _entries() -> dict[str, tuple[str, str]]:
    """key -> (who, year): "Shaw et al." / "Press, Smith and Lewis"... as author-year citations name them."""
    from pybtex.backends.plaintext import Backend
    from pybtex.database.input.bibtex import Parser
    from pybtex.richtext import Text

    # Parser and backend named directly: pybtex's look-up of plugins scans every installed package's entry points.
    plain = Backend()
    entries = {}
    for key, entry in Parser().parse_file(str(BIBLIOGRAPHY)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        surnames = [Text.from_latex(" ".join(person.prelast_names + person.last_names)).render(plain)
                    for person in people]
        if not surnames:
            who = Text.from_latex(entry.fields.get("title", key)).render(plain)
        elif len(surnames) == 1:
            who = surnames[0]
        elif len(surnames) == 2:
            who = f"{surnames[0]} and {surnames[1]}"
        else:
            who = f"{surnames[0]} et al."
        entries[key] = (who, entry.fields.get("year", "n.d."))
    return entries


def citation(keys: str, textual: bool) -> str:
    """Author-year text for one or more comma-separated bibliography keys."""
    found = []
    for key in (k.strip() for k in keys.split(",")):
        if key not in _entries():
            raise DeckError(f"{BIBLIOGRAPHY.name} has no entry {key!r}")
        found.append(_entries()[key])
    if textual:
        return "; ".join(f"{who} ({year})" for who, year in found)
    return "(" + "; ".join(f"{who}, {year}" for who, year in found) + ")"


# ---------------------------------------------------------------------------------------------------
# Roles


def _reference(content: str) -> str:
    explicit = re.match(r"^(.*?)\s*<[^>]+>$", content, re.S)
    if explicit:
        return re.sub(r"%s|\{number\}|\{name\}", "", explicit[1]).strip()
    return REFERENCE_WORDS.get(content.split("-", 1)[0], "the section")


def role_text(name: str, content: str, chapter) -> str:
    """A role as plain text (not yet escaped)."""
    if name in ("glue:text", "glue"):
        if chapter is None:
            return "…"
        value = chapter.glued_text(content)
        return "…" if value is None else value
    if name in ("cite", "cite:p", "cite:ps"):
        return citation(content, textual=False)
    if name in ("cite:t", "cite:ts"):
        return citation(content, textual=True)
    if name in ("numref", "ref", "doc", "eq", "prf:ref", "term", "download"):
        return _reference(content)
    return content


def _directive(token) -> tuple[str, str, str]:
    """(name, argument, body) of a ```{name} argument directive, options removed."""
    match = re.match(r"^\{([\w:-]+)\}\s*(.*)$", token.info.strip())
    name, argument = (match[1], match[2]) if match else ("", "")
    body = "\n".join(line for line in token.content.splitlines() if not re.match(r"^:[\w-]+:", line))
    return name, argument, body


def _rules():
    """The renderer's rules, reading the chapter from the render environment."""

    def equation(tokens, idx, options, env):
        return f'<div class="equation">\\[{html.escape(tokens[idx].content.strip())}\\]</div>\n'

    def math_inline(tokens, idx, options, env):
        return f"\\({html.escape(tokens[idx].content)}\\)"

    def myst_role(tokens, idx, options, env):
        token = tokens[idx]
        name = token.meta.get("name", "")
        if name == "math":
            return f"\\({html.escape(token.content)}\\)"
        return html.escape(role_text(name, token.content, env.get("chapter")))

    def fence(tokens, idx, options, env):
        name, argument, body = _directive(tokens[idx])
        if not name:
            return f"<pre><code>{html.escape(tokens[idx].content)}</code></pre>\n"
        if name == "math":
            return f'<div class="equation">\\[{html.escape(body.strip())}\\]</div>\n'
        if name in ("code-cell", "code", "code-block"):
            return f"<pre><code>{html.escape(body)}</code></pre>\n"
        kind = DIRECTIVE_TITLES.get(name, name.split(":")[-1].title())
        title = (kind + (f" ({argument})" if argument and kind else argument)).strip()
        heading = f'<p class="directive-title">{markdown_inline(title, env.get("chapter"))}.</p>' if title else ""
        return f'<div class="directive">{heading}{markdown_html(body, env.get("chapter"))}</div>\n'

    rules = {"math_inline": math_inline, "myst_role": myst_role, "fence": fence, "colon_fence": fence}
    for name in ("math_inline_double", "math_block", "math_block_label", "amsmath"):
        rules[name] = equation
    for name in ("myst_target", "myst_line_comment", "myst_block_break"):
        rules[name] = lambda *args: ""
    return rules


def markdown_html(text: str, chapter=None) -> str:
    """MyST markdown as slide HTML (math left as TeX for MathJax, roles resolved against the chapter)."""
    return parser().render(text, {"chapter": chapter})


def markdown_inline(text: str, chapter=None) -> str:
    """One paragraph of MyST markdown as inline HTML (no <p>)."""
    rendered = markdown_html(text, chapter).strip()
    match = re.fullmatch(r"<p>(.*)</p>", rendered, re.S)
    return match[1] if match else rendered


def plain_text(text: str, chapter=None) -> str:
    """MyST markdown as plain text: roles resolved (glued values "…" without an execution), formulas kept as TeX."""
    rendered = markdown_inline(text, chapter)
    return html.unescape(re.sub(r"<[^>]+>", "", rendered)).replace("\\(", "$").replace("\\)", "$")
