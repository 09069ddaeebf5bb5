"""The deck spec: reading and checking ``book/slides/chNN.yml`` (nothing here needs the chapter or its execution).

A deck is a list of sections, each a list of slides; every slide has a stable ``id``, a ``title`` that states
one claim, the ``minutes`` it takes, what to ``say`` (the speaker notes' own words), and shows exactly one
thing (``SHOWS``): the chapter's cover, a figure, an equation, a theorem, at most three bullets, a table, an
explorer or a question for the room. What a slide shows of the chapter is named by stable references (figure
names, cell ids, theorem labels, glued values); the words are the deck's own. The rules a lecturer's deck
follows (CONTRIBUTING, "Slide decks") are checked here, so that ``python -m posenc.book.slides --check`` and
``tests/test_slides.py`` stop a deck that breaks one before anything is built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from posenc.paths import ROOT

__all__ = ["DECKS", "LECTURE_MINUTES", "MAX_SLIDES", "MIN_SLIDES", "SHOWS", "Deck", "DeckError", "Section",
           "SlideSpec", "deck_files", "deck_path", "load_deck", "numbers", "own_words", "plain"]

DECKS = ROOT / "book" / "slides"
LECTURE_MINUTES = 50
MIN_SLIDES, MAX_SLIDES = 12, 25
# What a slide shows: exactly one of these keys.
SHOWS = ("cover", "figure", "equation", "theorem", "bullets", "table", "explorer", "question")
MAX_BULLETS = 3
# Words, with a formula or a glued value counted as one word.
MAX_WORDS = {"title": 14, "bullet": 14, "read": 22, "say": 90, "question": 40}
SLIDE_KEYS = {"id", "title", "minutes", "say", "read", "columns", "rows", "answer", "wrong", "demo", "fallback",
              "mistakes", *SHOWS}
SECTION_KEYS = {"id", "title", "slides"}
DECK_KEYS = {"chapter", "sections"}
SLUG = re.compile(r"^[a-z0-9][a-z0-9-]*$")
# A number written in the deck's own words (not in a formula, not glued, not part of a name such as T5,
# float32, 2L or q1); one that is not a small count must be one the chapter's sources state (assemble.py).
NUMBER = re.compile(r"(?<![\w.$\\^_])\d+(?:[.,]\d+)*(?![\w$^_])")
SMALL_NUMBER = 10
ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<content>[^`]*)`")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)


class DeckError(ValueError):
    """A deck that breaks a rule of the spec, or does not fit its chapter (a missing cell, figure, mistake...)."""


@dataclass
class SlideSpec:
    """One slide as the deck describes it."""

    id: str
    section: str
    kind: str                       # one of SHOWS
    shows: object                   # the value of that key: a figure name, a cell id, a list of bullets...
    title: str
    minutes: float
    say: str
    number: int = 0                 # its place in the deck, from 1 (the cover)
    read: str = ""                  # one line under an equation, a theorem or a table
    columns: list[str] = field(default_factory=list)      # a table's columns to show (by header)
    rows: list[str] = field(default_factory=list)         # a table's rows to show (by first cell)
    column_names: dict[str, str] = field(default_factory=dict)  # a column's header on the slide, by the chapter's
    row_names: dict[str, str] = field(default_factory=dict)     # a row's first cell on the slide, by its name
    answer: str = ""                # a question's answer (notes)
    wrong: list[str] = field(default_factory=list)        # the wrong answers students give, and why (notes)
    demo: str = ""                  # what to show live (notes)
    fallback: str = ""              # what to show when the live part is slow or fails (notes)
    mistakes: list[str] = field(default_factory=list)     # "qN: words of a Mistake message" (notes)


@dataclass
class Section:
    """A group of slides with a stable id: what the teaching guide maps its plan onto."""

    id: str
    title: str
    slides: list[SlideSpec]

    @property
    def minutes(self) -> float:
        return sum(slide.minutes for slide in self.slides)

    @property
    def first(self) -> int:
        return self.slides[0].number

    @property
    def last(self) -> int:
        return self.slides[-1].number


@dataclass
class Deck:
    """One deck description (book/slides/chNN.yml)."""

    set_id: str                     # "ch05"
    path: Path
    chapter: Path                   # the notebook
    sections: list[Section]

    @property
    def slides(self) -> list[SlideSpec]:
        return [slide for section in self.sections for slide in section.slides]

    @property
    def minutes(self) -> float:
        return sum(section.minutes for section in self.sections)

    def slide(self, slide_id: str) -> SlideSpec:
        for slide in self.slides:
            if slide.id == slide_id:
                return slide
        raise KeyError(f"{self.path.name} has no slide {slide_id!r}")

    def section(self, section_id: str) -> Section:
        for section in self.sections:
            if section.id == section_id:
                return section
        raise KeyError(f"{self.path.name} has no section {section_id!r}")


def deck_files(folder: Path = DECKS) -> list[Path]:
    """Every deck description, in chapter order: adding book/slides/chNN.yml adds the chapter's deck."""
    return sorted(folder.glob("ch[0-9][0-9].yml"))


def deck_path(set_id: str) -> Path:
    return DECKS / f"{set_id}.yml"


# ---------------------------------------------------------------------------------------------------
# Reading


def _text(value, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise DeckError(f"{where}: expected text, got {value!r}")
    return " ".join(value.split())


def _texts(value, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [_text(value, where)]
    if isinstance(value, list):
        return [_text(item, where) for item in value]
    raise DeckError(f"{where}: expected a list of texts, got {value!r}")


def _selection(value, where: str) -> tuple[list[str], dict[str, str]]:
    """A table's ``columns`` or ``rows``: each the chapter's name, or ``{the chapter's name: the slide's}`` to
    show it under a name for the room (a header such as "file: accuracy (mean ± std)" is the chapter's)."""
    if not isinstance(value, list):
        return _texts(value, where), {}
    names, renames = [], {}
    for item in value:
        if isinstance(item, dict):
            if len(item) != 1:
                raise DeckError(f"{where}: rename one name at a time, as {{the chapter's name: the slide's}}, "
                                f"got {item!r}")
            (name, shown), = item.items()
            name, shown = _text(name, where), _text(shown, where)
            if not name or not shown:
                raise DeckError(f"{where}: a renamed column or row needs both names, got {item!r}")
            renames[name] = shown
            names.append(name)
        else:
            names.append(_text(item, where))
    return names, renames


def _minutes(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise DeckError(f"{where}: 'minutes' must be a positive number, got {value!r}")
    return float(value)


def _slide(item, section: str, where: str) -> SlideSpec:
    if not isinstance(item, dict):
        raise DeckError(f"{where}: expected a mapping, got {item!r}")
    unknown = set(item) - SLIDE_KEYS
    if unknown:
        raise DeckError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(SLIDE_KEYS)})")
    shown = [key for key in SHOWS if key in item]
    if len(shown) != 1:
        raise DeckError(f"{where}: a slide shows exactly one of {', '.join(SHOWS)}; this one has "
                        f"{shown or 'none'}")
    kind = shown[0]
    slide_id = item.get("id")
    if not isinstance(slide_id, str) or not SLUG.match(slide_id):
        raise DeckError(f"{where}: every slide needs an 'id' of lower-case letters, digits and dashes "
                        f"(stable: the teaching guide refers to it), got {slide_id!r}")
    where = f"{where} ({slide_id})"
    shows = item[kind]
    if kind == "bullets":
        shows = _texts(shows, f"{where}, bullets")
    elif kind == "cover":
        if shows is not True:
            raise DeckError(f"{where}: write 'cover: true'")
    else:
        shows = _text(shows, f"{where}, {kind}")
    if not item.get("say"):
        raise DeckError(f"{where}: 'say' is missing (what the lecturer says, in a few lines)")
    if "minutes" not in item:
        raise DeckError(f"{where}: 'minutes' is missing")
    columns, column_names = _selection(item.get("columns"), f"{where}, columns")
    rows, row_names = _selection(item.get("rows"), f"{where}, rows")
    return SlideSpec(id=slide_id, section=section, kind=kind, shows=shows, title=_text(item.get("title"), where),
                     minutes=_minutes(item["minutes"], where), say=_text(item["say"], where),
                     read=_text(item.get("read"), where), columns=columns, column_names=column_names,
                     rows=rows, row_names=row_names, answer=_text(item.get("answer"), where),
                     wrong=_texts(item.get("wrong"), where), demo=_text(item.get("demo"), where),
                     fallback=_text(item.get("fallback"), where), mistakes=_texts(item.get("mistakes"), where))


def load_deck(path: Path) -> Deck:
    """Read one description and check it against the spec's rules (DeckError names every problem); what it
    references is checked against the chapter when the deck is assembled."""
    name = path.name
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DeckError(f"{name} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise DeckError(f"{name}: expected a mapping with 'chapter' and 'sections'")
    unknown = set(data) - DECK_KEYS
    if unknown:
        raise DeckError(f"{name}: unknown keys {sorted(unknown)} (known: {sorted(DECK_KEYS)})")
    for key in DECK_KEYS:
        if not data.get(key):
            raise DeckError(f"{name}: '{key}' is missing")
    sections = []
    for index, item in enumerate(data["sections"], 1):
        where = f"{name}, section {index}"
        if not isinstance(item, dict) or set(item) - SECTION_KEYS or not item.get("slides"):
            raise DeckError(f"{where}: a section is a mapping of 'id', 'title' and 'slides'")
        if not isinstance(item.get("id"), str) or not SLUG.match(item["id"]) or not item.get("title"):
            raise DeckError(f"{where}: a section needs an 'id' (lower-case, dashes) and a 'title'")
        slides = [_slide(slide, item["id"], f"{name}, slide {item['id']}/{number}")
                  for number, slide in enumerate(item["slides"], 1)]
        sections.append(Section(item["id"], _text(item["title"], where), slides))
    deck = Deck(set_id=path.stem, path=path, chapter=ROOT / data["chapter"], sections=sections)
    for number, slide in enumerate(deck.slides, 1):
        slide.number = number
    problems = rule_problems(deck)
    if problems:
        raise DeckError(f"{name}:\n  " + "\n  ".join(problems))
    return deck


# ---------------------------------------------------------------------------------------------------
# The rules


def plain(text: str) -> str:
    """Text without formulas and roles (each counted as one word): what word limits and number checks read."""
    text = ROLE.sub(lambda m: "▪", text)
    return MATH.sub("▪", text)


def own_words(slide: SlideSpec) -> dict[str, str]:
    """The texts of a slide written in the deck itself, by field."""
    texts = {"title": slide.title, "say": slide.say, "read": slide.read, "answer": slide.answer,
             "demo": slide.demo, "fallback": slide.fallback}
    if slide.kind == "question":
        texts["question"] = str(slide.shows)
    for index, bullet in enumerate(slide.shows if slide.kind == "bullets" else [], 1):
        texts[f"bullet {index}"] = bullet
    for index, wrong in enumerate(slide.wrong, 1):
        texts[f"wrong answer {index}"] = wrong
    for index, shown in enumerate([*slide.column_names.values(), *slide.row_names.values()], 1):
        texts[f"table name {index}"] = shown
    return {key: value for key, value in texts.items() if value}


def _words(text: str) -> int:
    return len(plain(text).split())


def numbers(text: str) -> list[str]:
    """The numbers a text writes in words (not in a formula, not glued, not part of a name such as T5), other
    than small counts (at most SMALL_NUMBER), with thousands separators removed."""
    found = [m[0].replace(",", "") for m in NUMBER.finditer(plain(text))]
    return [n for n in found if "." in n or int(n) > SMALL_NUMBER]


def _slide_problems(slide: SlideSpec) -> list[str]:
    where = f"slide {slide.number} ({slide.id})"
    problems = []
    if slide.kind != "cover" and not slide.title:
        problems.append(f"{where}: 'title' is missing (one claim, the slide's point)")
    if slide.kind == "bullets" and not 1 <= len(slide.shows) <= MAX_BULLETS:
        problems.append(f"{where}: {len(slide.shows)} bullets; a slide shows at most {MAX_BULLETS}")
    if slide.kind == "equation" and not slide.read:
        problems.append(f"{where}: an equation slide needs 'read', its one line of reading")
    if slide.read and slide.kind not in ("equation", "theorem", "table"):
        problems.append(f"{where}: 'read' belongs to an equation, theorem or table slide")
    if (slide.columns or slide.rows) and slide.kind != "table":
        problems.append(f"{where}: 'columns' and 'rows' select parts of a table")
    if slide.kind == "question" and not (slide.answer and slide.wrong):
        problems.append(f"{where}: a question for the room needs its 'answer' and the 'wrong' answers students give")
    if slide.kind != "question" and (slide.answer or slide.wrong):
        problems.append(f"{where}: 'answer' and 'wrong' belong to a question slide")
    if slide.kind == "explorer" and not slide.demo:
        problems.append(f"{where}: an explorer slide needs 'demo' (what to show live)")
    if slide.demo and not slide.fallback:
        problems.append(f"{where}: a live demo needs a 'fallback' (what to show if it is slow or fails)")
    for key, text in own_words(slide).items():
        limit = MAX_WORDS.get("bullet" if key.startswith("bullet") else key)
        if limit and _words(text) > limit:
            problems.append(f"{where}: the {key} has {_words(text)} words; at most {limit}")
        if text.rstrip().endswith(":") and (key in ("title", "read", "question") or key.startswith(("bullet", "table name"))):
            problems.append(f"{where}: the {key} ends with a colon and leads to nothing: {text!r}")
    return problems


def rule_problems(deck: Deck) -> list[str]:
    """Every way the deck breaks the spec's rules (empty when it follows them)."""
    problems = []
    slides = deck.slides
    if not MIN_SLIDES <= len(slides) <= MAX_SLIDES:
        problems.append(f"{len(slides)} slides; a {LECTURE_MINUTES}-minute lecture has {MIN_SLIDES} to {MAX_SLIDES}")
    if abs(deck.minutes - LECTURE_MINUTES) > 1e-6:
        problems.append(f"the minutes add up to {deck.minutes:g}, not {LECTURE_MINUTES}")
    for kind, seen in (("slide", [s.id for s in slides]), ("section", [s.id for s in deck.sections])):
        repeated = sorted({x for x in seen if seen.count(x) > 1})
        if repeated:
            problems.append(f"{kind} ids used twice: {repeated}")
    if slides and slides[0].kind != "cover":
        problems.append("the first slide is the cover ('cover: true')")
    if not any(slide.kind == "question" for slide in slides):
        problems.append("no question for the room (a slide with 'question')")
    has_explorer = any(slide.kind == "explorer" for slide in slides)
    for slide in slides:
        problems += _slide_problems(slide)
        if not has_explorer and any("explorer" in text.lower() for key, text in own_words(slide).items()
                                    if key in ("say", "demo", "fallback")):
            problems.append(f"slide {slide.number} ({slide.id}): its notes mention an explorer, and the deck "
                            "has none")
    return problems
