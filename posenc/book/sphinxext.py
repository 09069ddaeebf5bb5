"""Sphinx fixes for the course site, found by the browser tests (tests/browser).

Enable it in ``_config.yml``::

    sphinx:
      extra_extensions:
        - posenc.book.sphinxext

It adds the course's own stylesheet and script (``static/posenc-site.css`` and ``posenc-site.js``: link
colours that pass the contrast check on tinted blocks, accessible names of two theme buttons, the left sidebar
as a landmark, the sidebars' buttons in the article's header made to work, long inline code that wraps on a
phone, a fade on the edge of boxes that scroll sideways), and fixes five things in the pages:

* Every page carried some inline scripts twice, among them sphinx-thebe's
  ``const THEBE_JS_URL = ...``. The second copy throws "Identifier 'THEBE_JS_URL' has already been
  declared" on every page. Here each script is written once.
* pydata-sphinx-theme logs "Got invalid theme mode" to the console on a reader's first visit
  when ``default_mode`` (an ``html_context`` value) is empty. Here it defaults to ``"auto"``, which follows
  the reader's light/dark preference, as the theme does after that error.
* myst-nb names the summary that shows a hidden code cell "Toggle hidden content" while it shows "Show code
  cell source": a screen reader announced something else than what a reader sees (WCAG 2.5.3, axe's
  label-content-name-mismatch). Without that label the summary is named by the text it shows.
* docutils writes the bibliography as a ``role="list"`` of entries with ``role="doc-biblioentry"``, a role
  that ARIA 1.2 deprecates; a list whose items have no valid item role is broken for screen readers (axe's
  aria-required-children, critical). The entries become ``role="listitem"``.
* A Markdown table has no row headers: a screen reader read a value without the name of its row (WCAG 1.3.1).
  In the book's tables the first column names the rows (a method, a chapter, an option), so its cells become
  the rows' headers (``<th class="stub" scope="row">``), as in the tables the chapters' code cells show
  (``posenc.experiments.Table``), which the decks take up. Not where a cell of that column holds math (the notation
  page's symbols): a header is announced by its name, which Chromium computes without MathJax's hidden
  MathML, so "$\\omega_i$" named its row "" and "$pos$ (or $t$)" named it "(or )".
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform

STATIC = Path(__file__).with_name("static")
# posenc.experiments.summaries.UNNAMED_ROWS (tests/test_site_tooling.py checks they agree): importing it would
# import torch into every build
UNNAMED_ROWS = "posenc-unnamed-rows"
STYLESHEET, SCRIPT = "posenc-site.css", "posenc-site.js"
# (HTML that the page's body has, what it should have instead); see the module's docstring.
BODY_FIXES = (
    # myst-nb (myst_nb.sphinx_.visit_HideCellInput), for every cell with a hide-input or hide-output tag
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
    # docutils' HTML5 writer, for each entry of a citation list
    (' role="doc-biblioentry"', ' role="listitem"'),
    # docutils' HTML5 writer, for each row header RowHeaders asks for: its scope said, not left to a heuristic
    ('<th class="stub">', '<th class="stub" scope="row">'),
)


def _script_key(script) -> tuple:
    attributes = getattr(script, "attributes", None) or {}
    filename = getattr(script, "filename", script) or ""      # an inline script: None or ""
    return str(filename), tuple(sorted((str(k), str(v)) for k, v in attributes.items()))


def dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """Keep the first of identical script entries (same file or same inline body)."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, kept = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    if len(kept) != len(scripts):
        context["script_files"] = kept


def fix_body(app, pagename, templatename, context, doctree) -> None:
    """Apply BODY_FIXES to the HTML of the page's body."""
    body = context.get("body")
    if not isinstance(body, str):
        return
    for wrong, right in BODY_FIXES:
        body = body.replace(wrong, right)
    context["body"] = body


def add_static_files(app, config) -> None:
    """Serve the course's stylesheet and script from the package's ``static`` folder on every page.

    Sphinx copies static files only when it writes pages, so their digest is a configuration value that
    makes it rewrite the pages when they change, even if no page did (the student edition's build).
    """
    if str(STATIC) not in map(str, config.html_static_path):
        config.html_static_path.append(str(STATIC))
    config.posenc_static_digest = static_digest()


def static_digest() -> str:
    digest = hashlib.sha256()
    for file in sorted(STATIC.iterdir()):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def default_theme_mode(app, config) -> None:
    """pydata-sphinx-theme reads ``default_mode`` from the HTML context."""
    context = config.html_context
    if isinstance(context, dict) and not context.get("default_mode"):
        context["default_mode"] = "auto"


class RowHeaders(SphinxTransform):
    """The first column of every table with a header row and more than one column: the rows' headers, unless a
    cell of it holds math or the table's class says its rows have no name (a MyST ``{table}`` with
    ``:class: posenc-unnamed-rows``, as ``posenc.experiments.Table(..., row_headers=False)`` writes it)."""

    default_priority = 700

    def apply(self, **kwargs) -> None:
        for group in self.document.findall(nodes.tgroup):
            columns = [child for child in group.children if isinstance(child, nodes.colspec)]
            if len(columns) < 2 or not any(isinstance(child, nodes.thead) for child in group.children):
                continue
            if UNNAMED_ROWS in group.parent.get("classes", []):
                continue
            rows = [row for part in group.children if isinstance(part, nodes.tbody) for row in part.children]
            if not any(row.children and next(row.children[0].findall(nodes.math), None) for row in rows):
                columns[0]["stub"] = 1


def setup(app):
    app.add_transform(RowHeaders)
    app.connect("config-inited", default_theme_mode)
    app.add_config_value("posenc_static_digest", "", "html")
    app.connect("config-inited", add_static_files)
    app.connect("html-page-context", fix_body)
    app.add_css_file(STYLESHEET)
    app.add_js_file(SCRIPT)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
