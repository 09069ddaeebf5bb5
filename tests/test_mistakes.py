"""The Common mistakes page lists every diagnosis of the graders, worded as `check` prints it."""

import ast
import html
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

import posenc.book.mistakes as mistakes
from tests.conftest import ROOT

PAGE = ROOT / "book" / "common-mistakes.md"
CHECK_MODULES = sorted((ROOT / "posenc" / "exercises" / "checks").glob("ch[0-9][0-9].py"))


def test_there_are_check_modules_to_read():
    assert len(CHECK_MODULES) >= 5, CHECK_MODULES


def _literal_mistake_messages(path: Path) -> set[str]:
    """The messages of every Mistake("...") written with a literal string in a checks module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Mistake"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return found


@pytest.mark.parametrize("path", CHECK_MODULES, ids=lambda p: p.name)
def test_every_mistake_message_is_in_the_catalogue(path):
    missing = _literal_mistake_messages(path) - mistakes.messages()
    assert not missing, (f"{path.name} defines Mistake messages that no question uses, so the Common "
                         f"mistakes page cannot list them: {sorted(missing)}")


def test_catalogue_covers_every_question_of_every_set():
    from posenc.exercises import SET_IDS, load_set

    listed = {(e.set_id, qid) for e in mistakes.catalogue() for qid, _ in e.questions}
    for set_id in SET_IDS:
        for question in load_set(set_id).questions:
            if getattr(question, "mistakes", None):
                assert (set_id, question.qid) in listed


def test_markdown_shows_each_message_verbatim():
    rendered = MarkdownIt("commonmark").render(mistakes.markdown())
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    for message in mistakes.messages():
        assert message in text, message


def test_the_page_is_generated_from_the_checks():
    source = PAGE.read_text(encoding="utf-8")
    assert "posenc.book.mistakes.show()" in source and "{code-cell}" in source
    assert "kernelspec" in source.split("---")[1], "the page must be a MyST notebook so its cell runs"


def test_the_page_is_no_answer_key_for_the_choice_questions():
    """A choice question's option sentences say which option is right (or, listed for every wrong option of a
    single choice, name the right one by elimination): the page lists only the sentence of ideas that every
    wrong answer of a question with several right options gets."""
    from posenc.exercises import SET_IDS, load_set
    from posenc.exercises.framework import ChoiceQuestion

    listed = mistakes.messages()
    for set_id in SET_IDS:
        for question in load_set(set_id).questions:
            if isinstance(question, ChoiceQuestion):
                assert not any(text in listed for text in question.options.values()), (set_id, question.qid)
                if not question.single:
                    assert question.not_yet() in listed, (set_id, question.qid)
