"""Sphinx fixes for the course site, found by the browser tests (tests/browser).

Enable it in ``_config.yml``::

    sphinx:
      extra_extensions:
        - posenc.book.sphinxext

It does two things, both invisible except in the browser's console:

* Every page carried some inline scripts twice, among them sphinx-thebe's
  ``const THEBE_JS_URL = ...``. The second copy throws "Identifier 'THEBE_JS_URL' has already been
  declared" on every page. Here each script is written once.
* pydata-sphinx-theme logs "Got invalid theme mode" to the console on a reader's first visit
  when ``default_mode`` (an ``html_context`` value) is empty. Here it defaults to ``"auto"``, which follows
  the reader's light/dark preference, as the theme does after that error.
"""

from __future__ import annotations


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


def default_theme_mode(app, config) -> None:
    """pydata-sphinx-theme reads ``default_mode`` from the HTML context."""
    context = config.html_context
    if isinstance(context, dict) and not context.get("default_mode"):
        context["default_mode"] = "auto"


def setup(app):
    app.connect("config-inited", default_theme_mode)
    app.connect("html-page-context", dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
