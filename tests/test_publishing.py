"""The Pages workflow's edition switch, read the way GitHub Actions reads it, and the lecturer's manual's
account of publishing and of what it makes public (book/lecturers/handing-out.md, public.md).

GitHub evaluates the workflow's ``${{ ... }}`` expressions and ``if:`` conditions; the small evaluator below
implements the part of that language the workflow uses (string literals, context look-ups, ``==``, ``!=``,
``&&``, ``||`` with GitHub's truthiness, where ``&&`` and ``||`` return one of their operands and string
comparison ignores case), so the tests can say which steps run and which folder is deployed for every way
of choosing the edition.
"""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
SITES = {"full": "_build/html", "student": "_build/student/_build/html"}

_TOKEN = re.compile(r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||\(|\))|(?P<name>[A-Za-z_][\w.-]*))")


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            raise ValueError(f"cannot read the expression {text!r} at {text[position:]!r}")
        kind = match.lastgroup
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


def _truthy(value) -> bool:
    return value not in (None, False, 0, "")


def evaluate(expression: str, contexts: dict):
    """The value of a GitHub Actions expression (without ``${{ }}``) over nested dicts of contexts."""
    tokens = _tokens(expression)

    def take(expected=None):
        kind, text = tokens.pop(0)
        if expected and text != expected:
            raise ValueError(f"expected {expected!r}, found {text!r} in {expression!r}")
        return kind, text

    def primary():
        kind, text = take()
        if text == "(":
            value = either()
            take(")")
            return value
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind == "name":
            if text in ("true", "false", "null"):
                return {"true": True, "false": False, "null": None}[text]
            value = contexts
            for part in text.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            return value
        raise ValueError(f"unexpected {text!r} in {expression!r}")

    def comparison():
        left = primary()
        while tokens and tokens[0][1] in ("==", "!="):
            _, op = take()
            right = primary()
            same = (left.lower() == right.lower() if isinstance(left, str) and isinstance(right, str)
                    else left == right)
            left = same if op == "==" else not same
        return left

    def both():
        left = comparison()
        while tokens and tokens[0][1] == "&&":
            take()
            right = comparison()
            left = right if _truthy(left) else left
        return left

    def either():
        left = both()
        while tokens and tokens[0][1] == "||":
            take()
            right = both()
            left = left if _truthy(left) else right
        return left

    value = either()
    if tokens:
        raise ValueError(f"left over in {expression!r}: {tokens}")
    return value


def _inside(template: str) -> str:
    match = re.fullmatch(r"\$\{\{(.*)\}\}", str(template).strip(), flags=re.DOTALL)
    return match.group(1) if match else str(template)


def _workflow() -> dict:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))      # YAML 1.1 reads the key `on` as True
    return workflow


def _edition(event_inputs: dict | None, variables: dict) -> str:
    template = _workflow()["jobs"]["build"]["env"]["EDITION"]
    return evaluate(_inside(template), {"inputs": event_inputs or {}, "vars": variables})


def _steps_that_run(edition: str) -> list[dict]:
    build = _workflow()["jobs"]["build"]
    contexts = {"env": {**build["env"], "EDITION": edition}}
    return [step for step in build["steps"]
            if "if" not in step or ("failure()" not in step["if"] and _truthy(evaluate(_inside(step["if"]), contexts)))]


def test_the_evaluator_follows_github_rules():
    contexts = {"inputs": {"a": "x"}, "vars": {}}
    assert evaluate("inputs.a || 'd'", contexts) == "x"
    assert evaluate("inputs.missing || vars.NONE || 'd'", contexts) == "d"
    assert evaluate("inputs.a == 'X'", contexts) is True           # strings compare without case
    assert evaluate("inputs.a != 'x' && inputs.a || 'd'", contexts) == "d"
    assert evaluate("(inputs.a == 'x') && 'yes'", contexts) == "yes"
    with pytest.raises(ValueError):
        evaluate("inputs.a ===", contexts)


@pytest.mark.parametrize("event_inputs, variables, expected", [
    (None, {}, "full"),                                             # a push, nothing chosen
    (None, {"EDITION": "student"}, "student"),                      # a push, the repository variable
    ({"edition": "default"}, {}, "full"),                           # by hand, default: the variable, else full
    ({"edition": "default"}, {"EDITION": "student"}, "student"),
    ({"edition": "full"}, {"EDITION": "student"}, "full"),          # by hand, the input wins
    ({"edition": "student"}, {}, "student"),
])
def test_the_edition_comes_from_the_run_input_then_the_repository_variable_then_full(event_inputs, variables,
                                                                                     expected):
    assert _edition(event_inputs, variables) == expected


def test_a_manual_run_offers_both_editions_and_defaults_to_the_repository_setting():
    edition = _workflow()["on"]["workflow_dispatch"]["inputs"]["edition"]
    assert edition["type"] == "choice" and set(edition["options"]) == {"default", *SITES}
    assert edition["default"] == "default"
    assert _workflow()["on"]["push"]["branches"] == ["main"]


@pytest.mark.parametrize("edition", sorted(SITES))
def test_each_edition_builds_and_deploys_its_own_folder(edition):
    steps = _steps_that_run(edition)
    commands = [step["run"].strip() for step in steps if "run" in step and "make" in step["run"]]
    assert commands == (["make book"] if edition == "full" else ["make book", "make student-book"])
    uploads = [step["with"]["path"] for step in steps if "upload-pages-artifact" in str(step.get("uses"))]
    assert uploads == [SITES[edition]], "exactly one folder is deployed, the edition's"
    assert "make" not in _workflow()["jobs"]["deploy"].get("steps", [{}])[0].get("run", "")
    assert _workflow()["jobs"]["deploy"]["needs"] == "build"


def test_the_folders_are_where_the_makefile_puts_the_editions():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^book:", makefile, flags=re.MULTILINE)
    student = re.search(r"^student-book:.*?(?=^\S|\Z)", makefile, flags=re.MULTILINE | re.DOTALL).group(0)
    assert "posenc.book.editions student" in student and f"{SITES['student']}/index.html" in student
    assert "The site is in _build/html/index.html" in makefile


def _check_script() -> str:
    steps = _workflow()["jobs"]["build"]["steps"]
    assert steps[0]["name"] == "Check the edition", "the edition is checked before anything is built"
    return steps[0]["run"]


@pytest.mark.parametrize("value, ok", [("full", True), ("student", True), ("Student", False), ("", False),
                                       ("solutions", False)])
def test_an_unknown_edition_stops_the_run_with_a_clear_error(value, ok):
    run = subprocess.run(["bash", "-e", "-c", _check_script()], env={"EDITION": value, "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True)
    assert (run.returncode == 0) == ok, run.stdout + run.stderr
    if not ok:
        assert "EDITION must be full or student" in run.stdout


def _page(name: str) -> str:
    """A page of the lecturer's manual (book/lecturers/), its whitespace folded."""
    return " ".join((ROOT / "book" / "lecturers" / f"{name}.md").read_text().split())


def test_the_manual_says_plainly_what_is_public():
    text = _page("public")
    for fact in ("fork of a public repository is public", "solutions/", "posenc/exercises/checks/",
                 "--extra-tests", "EDITION", "student", "Colab", "published package"):
        assert fact in text, fact
    for page in [ROOT / "README.md", *(ROOT / "book" / "lecturers").glob("*.md")]:
        assert "keep `solutions/` back until" not in page.read_text(), page


def test_the_manual_on_publishing_names_the_switch():
    text = _page("handing-out")
    for fact in ("EDITION", "student", SITES["student"], "workflow_dispatch", "What is public"):
        assert fact in text, fact
