"""The catalogue of mistakes the graders recognise, for the book's "Common mistakes" page.

The page ``book/common-mistakes.md`` runs :func:`show` when the book is built, so its list is made
from the ``Mistake`` messages of ``posenc.exercises`` at that moment and cannot drift from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Entry", "catalogue", "markdown", "messages", "show"]


@dataclass
class Entry:
    """One diagnosis of one exercise set and the questions that give it."""

    set_id: str
    set_title: str
    message: str
    questions: list[tuple[str, str]] = field(default_factory=list)   # (qid, title)


def _message(mistake) -> str | None:
    """The message of a Mistake, or of a (variant, message) pair as ValueQuestion uses."""
    message = getattr(mistake, "message", None)
    if message is None and isinstance(mistake, tuple) and len(mistake) == 2 and isinstance(mistake[1], str):
        message = mistake[1]
    return message if isinstance(message, str) and message.strip() else None


def catalogue(set_ids=None) -> list[Entry]:
    """Every distinct mistake message of every exercise set, in the order the questions check them."""
    from posenc.exercises import SET_IDS, load_set

    entries: list[Entry] = []
    for set_id in set_ids or SET_IDS:
        exercise_set = load_set(set_id)
        by_message: dict[str, Entry] = {}
        for question in exercise_set.questions:
            for mistake in getattr(question, "mistakes", ()) or ():
                message = _message(mistake)
                if message is None:
                    continue
                entry = by_message.setdefault(message, Entry(set_id, exercise_set.title, message))
                if (question.qid, question.title) not in entry.questions:
                    entry.questions.append((question.qid, question.title))
        entries.extend(by_message.values())
    return entries


def messages(set_ids=None) -> set[str]:
    return {entry.message for entry in catalogue(set_ids)}


_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _escape(text: str) -> str:
    """Backslash-escape every ASCII punctuation mark, so Markdown shows the message as written."""
    return _PUNCTUATION.sub(r"\\\1", text)


def markdown(set_ids=None) -> str:
    """The catalogue as Markdown: a bold title per exercise set, then one item per diagnosis."""
    lines: list[str] = []
    current = None
    for entry in catalogue(set_ids):
        if entry.set_id != current:
            current = entry.set_id
            lines += ["", f"**{entry.set_id}: {_escape(entry.set_title)}**", ""]
        where = ", ".join(qid for qid, _ in entry.questions)
        lines.append(f"- *{where}*: {_escape(entry.message)}")
    return "\n".join(lines).strip() + "\n"


def show(set_ids=None):
    """Display the catalogue (in a notebook or in the book's build)."""
    from IPython.display import Markdown, display

    display(Markdown(markdown(set_ids)))
