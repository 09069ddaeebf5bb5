"""posenc.book.editions: the student edition is the full book without the solutions."""

import yaml

from posenc.book import editions
from tests.conftest import ROOT


def _files(toc) -> list[str]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file", "glob"):
                if node.get(key):
                    found.append(str(node[key]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(toc)
    return found


def test_student_toc_is_the_book_without_solutions():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    student = editions.student_toc(toc)
    assert [f for f in _files(student) if f.startswith("solutions/")] == []
    assert _files(student) == [f for f in _files(toc) if not f.startswith("solutions/")]
    assert all((p.get("caption") or "").lower() != "solutions" for p in student.get("parts", []))


def test_student_toc_handles_nesting_globs_and_empty_parts():
    toc = {"root": "intro", "parts": [
        {"caption": "Chapters", "chapters": [
            {"file": "notebooks/01", "sections": [{"file": "solutions/01_extra"}, {"file": "notebooks/01b"}]}]},
        {"caption": "Answers", "chapters": [{"glob": "solutions/*"}]},
        {"caption": "Solutions", "chapters": [{"file": "book/solutions-howto"}]},
    ]}
    student = editions.student_toc(toc)
    assert _files(student) == ["intro", "notebooks/01", "notebooks/01b"]
    assert [p["caption"] for p in student["parts"]] == ["Chapters"]
    assert _files(toc)[-1] == "book/solutions-howto", "the input is left unchanged"


def test_student_config_hides_solution_blocks_and_names_the_edition():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    student = editions.student_config(config)
    assert student["sphinx"]["config"]["hide_solutions"] is True
    assert student["title"].endswith("(student edition)")
    assert "hide_solutions" not in (config.get("sphinx", {}).get("config") or {})
    assert student["sphinx"]["extra_extensions"] == config["sphinx"]["extra_extensions"]
    assert editions.student_config({})["sphinx"]["config"]["hide_solutions"] is True


def test_write_student_files(tmp_path):
    toc_path, config_path = editions.write_student_files(ROOT, tmp_path)
    assert yaml.safe_load(toc_path.read_text())["root"] == yaml.safe_load((ROOT / "_toc.yml").read_text())["root"]
    assert yaml.safe_load(config_path.read_text())["sphinx"]["config"]["hide_solutions"] is True


def test_linkcheck_config_skips_execution_and_keeps_the_rest():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    checked = editions.linkcheck_config(config)
    assert checked["execute"]["execute_notebooks"] == "off"
    assert checked["execute"].get("timeout") == config["execute"].get("timeout")
    assert checked["sphinx"]["config"]["linkcheck_timeout"] == 30
    assert config["execute"]["execute_notebooks"] != "off"


def test_unknown_edition_is_refused(tmp_path):
    import pytest

    with pytest.raises(ValueError, match="student"):
        editions.write_files("teacher", ROOT, tmp_path)
