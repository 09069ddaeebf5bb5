"""Small pieces of the site's tooling: the Sphinx fixes, the browser set-up script, the Pages workflow."""

import subprocess
from types import SimpleNamespace

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


def test_browser_setup_installs_the_versions_the_tests_expect():
    from tests.browser import helpers

    script = (ROOT / "tests" / "browser" / "setup.sh").read_text()
    assert f"MATHJAX_VERSION=${{MATHJAX_VERSION:-{helpers.MATHJAX_VERSION}}}" in script
    assert f"AXE_VERSION=${{AXE_VERSION:-{helpers.AXE_VERSION}}}" in script


def test_browser_setup_script_is_valid_bash():
    script = ROOT / "tests" / "browser" / "setup.sh"
    assert script.stat().st_mode & 0o111, "setup.sh must be executable"
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert "playwright install" not in script.read_text().replace("never 'playwright install'", "")


def test_pages_workflow_builds_and_deploys_the_site():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    steps = [step for job in workflow["jobs"].values() for step in job.get("steps", [])]
    assert any("make book" in str(step.get("run", "")) for step in steps)
    assert any(step.get("with", {}).get("path") == "_build/html" for step in steps
               if "upload-pages-artifact" in str(step.get("uses", "")))
    assert any("deploy-pages" in str(step.get("uses", "")) for step in steps)
