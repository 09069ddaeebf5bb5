"""Small pieces of the site's tooling: the Sphinx fixes, the browser set-up script, the Pages workflow."""

import subprocess
from types import SimpleNamespace

import pytest
import yaml

from posenc.book import sphinxext
from tests.conftest import ROOT


def test_identical_inline_scripts_are_written_once():
    script = lambda filename, **attributes: SimpleNamespace(filename=filename, attributes=attributes)
    files = [script("_static/a.js"), script(None, body="const X = 1"), script("", body="const X = 1"),
             script("_static/a.js"), script(None, body="const Y = 2")]
    context = {"script_files": files}
    sphinxext.dedupe_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] == [files[0], files[1], files[4]]


def test_theme_mode_defaults_to_auto_but_keeps_a_choice():
    config = SimpleNamespace(html_context={})
    sphinxext.default_theme_mode(None, config)
    assert config.html_context["default_mode"] == "auto"
    config = SimpleNamespace(html_context={"default_mode": "dark"})
    sphinxext.default_theme_mode(None, config)
    assert config.html_context["default_mode"] == "dark"


def test_body_fixes_name_summaries_by_their_text_and_give_citations_a_list_role():
    body = ('<details class="admonition hide above-input">\n<summary aria-label="Toggle hidden content">\n'
            '<p class="collapsed admonition-title">Show code cell source</p>\n</summary></details>'
            '<div role="list" class="citation-list">\n<div class="citation" id="id7" role="doc-biblioentry">')
    context = {"body": body}
    sphinxext.fix_body(None, "page", "page.html", context, None)
    assert "aria-label" not in context["body"] and "<summary>\n<p" in context["body"]
    assert '<div class="citation" id="id7" role="listitem">' in context["body"]
    assert "doc-biblioentry" not in context["body"]
    untouched = {"body": "<p>Toggle hidden content</p>"}
    sphinxext.fix_body(None, "page", "page.html", untouched, None)
    assert untouched["body"] == "<p>Toggle hidden content</p>"


def test_course_stylesheet_and_script_are_served_from_the_package():
    config = SimpleNamespace(html_static_path=["_static"])
    sphinxext.add_static_files(None, config)
    sphinxext.add_static_files(None, config)
    assert config.html_static_path == ["_static", str(sphinxext.STATIC)]
    assert config.posenc_static_digest == sphinxext.static_digest() and len(config.posenc_static_digest) == 64
    for name in (sphinxext.STYLESHEET, sphinxext.SCRIPT):
        assert (sphinxext.STATIC / name).is_file(), name


def test_the_npm_pins_and_chromium_live_in_one_place():
    """reveal.js, MathJax and axe-core are pinned in posenc.book.browser only; the set-up scripts, the decks and
    the browser tests read them there, and the tests drive the build's Chromium with the build's flags."""
    from posenc.book import browser
    from tests.browser import helpers

    assert set(browser.PACKAGES) == {"reveal.js", "mathjax", "axe-core"}
    assert helpers.MATHJAX_DIR == browser.PACKAGES["mathjax"].folder
    assert helpers.AXE_DIR == browser.PACKAGES["axe-core"].folder
    assert helpers.CHROMIUM_ARGS is browser.CHROMIUM_ARGS and helpers.chromium_path is browser.chromium_path
    for path in ("book/setup.sh", "tests/browser/setup.sh", "tests/browser/helpers.py", "posenc/book/slides/page.py"):
        text = (ROOT / path).read_text()
        for package in browser.PACKAGES.values():
            assert package.version not in text, f"{path} pins {package.name} {package.version} itself"
    assert "posenc.book.browser fetch reveal.js mathjax" in (ROOT / "book" / "setup.sh").read_text()
    assert "posenc.book.browser fetch axe-core" in (ROOT / "tests" / "browser" / "setup.sh").read_text()


def test_make_book_needs_no_script_of_the_tests():
    makefile = (ROOT / "Makefile").read_text()
    book = makefile[makefile.index("\nbook:"):].split("\n\n")[0]
    assert "book-setup" in book.splitlines()[1] and "tests/" not in book
    setup = makefile[makefile.index("\nbook-setup:"):].split("\n\n")[0]
    assert "book/setup.sh" in setup and "tests/" not in setup
    assert "book/setup.sh" in (ROOT / "tests" / "browser" / "setup.sh").read_text()


@pytest.mark.parametrize("script", ["book/setup.sh", "tests/browser/setup.sh"])
def test_setup_scripts_are_valid_bash(script):
    path = ROOT / script
    assert path.stat().st_mode & 0o111, f"{script} must be executable"
    subprocess.run(["bash", "-n", str(path)], check=True)
    assert "playwright install" not in path.read_text().replace("never 'playwright install'", "")


def test_npm_packages_are_fetched_into_their_folders(tmp_path, monkeypatch):
    """python -m posenc.book.browser fetch unpacks only the parts a package keeps (npm replaced by a stub)."""
    import io
    import tarfile

    from posenc.book import browser

    def fake_run(command, cwd, check, stdout):
        assert command[:3] == ["npm", "pack", "--silent"] and command[3] == "mathjax@" + package.version
        with tarfile.open(f"{cwd}/mathjax-{package.version}.tgz", "w:gz") as tar:
            for name in ("package/es5/tex-svg-full.js", "package/LICENSE", "package/unused.txt"):
                info = tarfile.TarInfo(name)
                info.size = 4
                tar.addfile(info, io.BytesIO(b"data"))

    package = browser.PACKAGES["mathjax"]
    monkeypatch.setenv(package.variable, str(tmp_path / "mathjax"))
    monkeypatch.setattr(browser.subprocess, "run", fake_run)
    monkeypatch.setattr(browser.shutil, "which", lambda name: "/usr/bin/npm")
    assert browser.fetch(["mathjax"], log=lambda *_: None) == []
    assert package.ready and (tmp_path / "mathjax" / "LICENSE").exists()
    assert not (tmp_path / "mathjax" / "unused.txt").exists()
    assert browser.fetch(["mathjax"], log=lambda *_: None) == []          # already there: nothing to do
    monkeypatch.setenv(package.variable, str(tmp_path / "elsewhere"))
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    assert browser.fetch(["mathjax"], log=lambda *_: None) == ["mathjax"]


def test_pages_workflow_builds_and_deploys_the_site():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job.get("steps", [])]
    assert any("make book" in str(step.get("run", "")) for step in steps)
    assert any(step.get("with", {}).get("path") == "_build/html" for step in steps
               if "upload-pages-artifact" in str(step.get("uses", "")))
    assert any("deploy-pages" in str(step.get("uses", "")) for step in steps)


def test_every_text_page_that_runs_code_is_executed_at_every_build():
    """A MyST text page's execution is cached on its own code cells only, and these pages read what changes
    beside them (results/, the exercise sets, the decks): `make student-book`, which keeps jupyter-book's cache,
    would show what they said before. Each executes at every build instead."""
    pages = [path for path in sorted((ROOT / "book").rglob("*.md")) if "```{code-cell}" in path.read_text()]
    assert {p.name for p in pages} >= {"every-machine.md", "teaching-guide.md", "common-mistakes.md"}, pages
    for path in pages:
        front = yaml.safe_load(path.read_text().split("---\n")[1])
        assert (front.get("mystnb") or {}).get("execution_mode") == "force", f"{path.relative_to(ROOT)}"


def _table(first_cells, classes=(), head=True, columns=2):
    """A docutils table as MyST makes one of a Markdown table: a header row, then a row per first cell."""
    from docutils import nodes

    def row(*cells):
        line = nodes.row()
        for cell in cells:
            line += nodes.entry("", cell if isinstance(cell, nodes.Node) else nodes.paragraph(text=cell))
        return line

    table, group = nodes.table(classes=list(classes)), nodes.tgroup(cols=columns)
    table += group
    for _ in range(columns):
        group += nodes.colspec(colwidth=1)
    if head:
        group += nodes.thead("", row(*["name", "value"][:columns]))
    group += nodes.tbody("", *[row(*[cell, "1"][:columns]) for cell in first_cells])
    return table


def test_a_markdown_table_s_first_column_becomes_its_rows_headers_unless_it_holds_math_or_says_no():
    from docutils import nodes
    from docutils.utils import new_document

    from posenc.experiments.summaries import UNNAMED_ROWS

    assert sphinxext.UNNAMED_ROWS == UNNAMED_ROWS
    math = nodes.paragraph("", "", nodes.math(text=r"\omega_i"))
    cases = {"words": (_table(["sinusoidal", "rotary"]), 1),
             "math": (_table(["sinusoidal", math]), None),
             "unnamed": (_table(["3", "4"], classes=[UNNAMED_ROWS]), None),
             "no header row": (_table(["sinusoidal"], head=False), None),
             "one column": (_table(["sinusoidal"], columns=1), None)}
    document = new_document("page")
    for table, _ in cases.values():
        document += table
    sphinxext.RowHeaders(document).apply()
    stubs = {case: next(table.findall(nodes.colspec)).get("stub") for case, (table, _) in cases.items()}
    assert stubs == {case: stub for case, (_, stub) in cases.items()}, stubs
    body = {"body": '<table><tbody><tr><th class="stub"><p>rotary</p></th><td>1</td></tr></tbody></table>'}
    sphinxext.fix_body(None, "page", "page.html", body, None)
    assert '<th class="stub" scope="row"><p>rotary</p></th>' in body["body"]
