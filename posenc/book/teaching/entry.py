"""A chapter's entry in the teaching guide: reading and checking ``book/teaching/chNN.yml``.

An entry is a lecturer's plan for one chapter, in the lecturer's own words (CONTRIBUTING, "Teaching guide"):

* ``prerequisites``: what students should know first;
* ``plan``: the 50-minute lecture as segments in order, each with the ``minutes`` a lecturer gives it (a
  teacher's choice, written here, never derived from word counts): lecture segments name the sections of the
  chapter's deck they cover (``slides``: a section id of ``book/slides/chNN.yml``, or ``[first, last]``, with
  the slides they ``skip``), so the slide ranges are read from the deck and cannot disagree with it; the
  guide shows the deck's minutes beside the plan's, and a segment that gives its slides more minutes than the
  deck does says why (``timing``); one segment is the in-class ``activity``, one the chapter's ``quiz``
  (question numbers of its quiz);
* ``activity``: what students do in the activity (``task``) and its answer ``key``;
* ``live``: every live run outside the deck's own explorers (a cell run in class, a training run), each with
  the ``fallback`` to show when it is slow or fails (a figure of the chapter, ``figure``, by its name);
* ``misconceptions``: the mistakes the exercise checks catch that matter most, each named as
  ``"qN: words of a Mistake message"`` of ``posenc/exercises/checks/chNN.py``, with ``why`` students make it
  and how to ``address`` it in class;
* ``exam``: three to five exam questions, each with ``parts`` (``ask``, ``points``, ``answer``, what
  ``earns`` the points, the ``wrong`` answers students give).

Numbers: a number that code computes is written ``{{name}}`` or ``{{name:.3f}}`` and filled in from
``posenc.book.teaching.numbers`` (the chapter's function there); a number typed in the text must be a
setting the chapter's own sources state, or a small count, the rule the decks follow. ``load_entry`` checks
every rule and every reference (deck sections and slides, quiz questions, mistakes, figures, numbers) and
raises ``GuideError`` naming each problem.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from posenc.paths import ROOT

__all__ = [
    "ENTRIES", "EXAM_QUESTIONS", "LECTURE_MINUTES", "MISCONCEPTIONS", "PARTS", "Activity", "Entry", "ExamPart",
    "ExamQuestion", "GuideError", "LiveRun", "Misconception", "Segment", "entry_path", "fill", "load_entry",
]

ENTRIES = ROOT / "book" / "teaching"
LECTURE_MINUTES = 50
EXAM_QUESTIONS = (3, 5)          # at least, at most
MISCONCEPTIONS = (2, 5)
# The five parts every entry has, besides its prerequisites.
PARTS = ("plan", "activity", "live", "misconceptions", "exam")
ENTRY_KEYS = {"prerequisites", *PARTS}
SEGMENT_KINDS = ("slides", "activity", "quiz")
SEGMENT_KEYS = {*SEGMENT_KINDS, "minutes", "do", "skip", "timing"}
PLACEHOLDER = re.compile(r"\{\{\s*(?P<name>\w+)\s*(?::(?P<format>[^}]*))?\}\}")


class GuideError(ValueError):
    """An entry that breaks a rule of the guide, or names something the course does not have."""


@dataclass
class Segment:
    """One row of the lecture plan."""

    kind: str                    # "slides", "activity" or "quiz"
    minutes: int
    do: str = ""                 # what the lecturer does in it
    sections: list[str] = field(default_factory=list)   # slides: the deck's section ids it covers, in order
    skip: list[str] = field(default_factory=list)       # slides: ids of slides of those sections left out
    questions: list[int] = field(default_factory=list)  # quiz: question numbers of the chapter's quiz
    first: int = 0               # slides: the first and last slide numbers, from the deck
    last: int = 0
    deck_minutes: float = 0.0    # slides: what the deck gives the slides shown
    timing: str = ""             # slides: why the plan gives them more minutes than the deck does


@dataclass
class Activity:
    title: str
    task: str
    key: list[str]


@dataclass
class LiveRun:
    what: str
    fallback: str
    figure: str = ""             # the chapter figure the fallback shows, by name


@dataclass
class Misconception:
    reference: str               # "qN: words of the message", as the entry names it
    why: str
    address: str
    qid: str = ""                # resolved from the checks: the question
    message: str = ""            # and the Mistake's whole message


@dataclass
class ExamPart:
    ask: str
    points: float
    answer: str
    earns: str
    wrong: list[str]


@dataclass
class ExamQuestion:
    question: str
    parts: list[ExamPart]

    @property
    def points(self) -> float:
        return sum(part.points for part in self.parts)


@dataclass
class Entry:
    set_id: str
    path: Path
    prerequisites: str
    plan: list[Segment]
    activity: Activity
    live: list[LiveRun]
    misconceptions: list[Misconception]
    exam: list[ExamQuestion]

    @property
    def minutes(self) -> int:
        return sum(segment.minutes for segment in self.plan)


def entry_path(set_id: str) -> Path:
    return ENTRIES / f"{set_id}.yml"


def _shown(path: Path) -> str:
    """The path as an error names it: relative to the checkout when it is inside."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# ---------------------------------------------------------------------------------------------------
# Numbers


def fill(text: str, values: dict, where: str) -> str:
    """``text`` with every ``{{name}}`` / ``{{name:fmt}}`` replaced by the computed value."""
    def replace(match):
        name, fmt = match["name"], match["format"] or ""
        if name not in values:
            raise GuideError(f"{where}: no number {name!r} for this chapter (computed: {sorted(values)}); add it "
                             "to the chapter's function in posenc/book/teaching/numbers.py")
        try:
            return format(values[name], fmt)
        except (TypeError, ValueError) as exc:
            raise GuideError(f"{where}: cannot format {name}={values[name]!r} with {fmt!r}: {exc}") from None
    return PLACEHOLDER.sub(replace, text)


@functools.lru_cache(maxsize=None)
def _stated_numbers(set_id: str) -> frozenset[str]:
    """Every number the chapter's notebook, quiz, exercise source and checks write: the settings a text may
    type."""
    from posenc.book.teaching.estimates import notebook_path

    import nbformat

    texts = [cell.source for cell in nbformat.read(notebook_path(set_id), as_version=4).cells]
    texts += [p.read_text(encoding="utf-8") for p in (ROOT / "solutions" / "source").glob(f"{set_id}_*.py")]
    for path in (ROOT / "posenc" / "exercises" / "checks" / f"{set_id}.py", ROOT / "book" / "quizzes" / f"{set_id}.json"):
        texts += [path.read_text(encoding="utf-8")] if path.is_file() else []
    found = re.finditer(r"\d[\d,_]*(?:\.\d+)?", "\n".join(texts))
    return frozenset(m[0].replace(",", "").replace("_", "") for m in found)


def typed_numbers(text: str, set_id: str) -> list[str]:
    """Numbers ``text`` types (not computed: placeholders removed) that the chapter's sources never state,
    other than small counts. Formulas count too (a computed number hidden in $...$ is still typed), except
    their indices and exponents in braces ($s_{31}$, $2^{16}$)."""
    from posenc.book.slides.spec import NUMBER, SMALL_NUMBER

    text = re.sub(r"[_^]\{[^{}]*\}", " ", PLACEHOLDER.sub(" ", text))
    found = [m[0].replace(",", "") for m in NUMBER.finditer(text)]
    found = [n.rstrip(".") for n in found]
    return [n for n in found if ("." in n or int(n) > SMALL_NUMBER) and n not in _stated_numbers(set_id)]


# ---------------------------------------------------------------------------------------------------
# Reading


def _text(value, where: str, required: bool = True) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise GuideError(f"{where} is missing")
        return ""
    if not isinstance(value, str):
        raise GuideError(f"{where}: expected text, got {value!r}")
    return " ".join(value.split())


def _texts(value, where: str) -> list[str]:
    if isinstance(value, str):
        return [_text(value, where)]
    if not isinstance(value, list) or not value:
        raise GuideError(f"{where}: expected a non-empty list of texts, got {value!r}")
    return [_text(item, f"{where}, item {n}") for n, item in enumerate(value, 1)]


def _mapping(value, where: str, keys: set[str]) -> dict:
    if not isinstance(value, dict):
        raise GuideError(f"{where}: expected a mapping, got {value!r}")
    unknown = set(value) - keys
    if unknown:
        raise GuideError(f"{where}: unknown keys {sorted(unknown)} (known: {sorted(keys)})")
    return value


def _list(value, where: str) -> list:
    if not isinstance(value, list) or not value:
        raise GuideError(f"{where}: expected a non-empty list")
    return value


def _segment(item, where: str) -> Segment:
    item = _mapping(item, where, SEGMENT_KEYS)
    kinds = [kind for kind in SEGMENT_KINDS if kind in item]
    if len(kinds) != 1:
        raise GuideError(f"{where}: a segment is exactly one of {', '.join(SEGMENT_KINDS)}; this one has "
                         f"{kinds or 'none'}")
    kind = kinds[0]
    minutes = item.get("minutes")
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes <= 0:
        raise GuideError(f"{where}: 'minutes' must be a positive whole number (a lecturer's clock), got {minutes!r}")
    segment = Segment(kind, minutes, do=_text(item.get("do"), f"{where}, 'do'", required=kind != "activity"))
    if kind == "slides":
        shown = item["slides"]
        shown = [shown] if isinstance(shown, str) else shown
        if not isinstance(shown, list) or not 1 <= len(shown) <= 2 or not all(isinstance(s, str) for s in shown):
            raise GuideError(f"{where}: 'slides' is a section id of the deck, or [first, last] section ids")
        segment.sections = list(shown)
        segment.skip = _texts(item["skip"], f"{where}, 'skip'") if "skip" in item else []
        segment.timing = _text(item.get("timing"), f"{where}, 'timing'", required=False)
    elif "skip" in item or "timing" in item:
        raise GuideError(f"{where}: 'skip' and 'timing' belong to a segment of slides")
    elif kind == "activity":
        if item["activity"] is not True:
            raise GuideError(f"{where}: write 'activity: true' (the entry's 'activity' describes it)")
    else:
        numbers = item["quiz"]
        numbers = [numbers] if isinstance(numbers, int) else numbers
        if not isinstance(numbers, list) or not numbers or not all(
                isinstance(n, int) and not isinstance(n, bool) for n in numbers):
            raise GuideError(f"{where}: 'quiz' lists question numbers of the chapter's quiz, e.g. [1, 3]")
        segment.questions = numbers
    return segment


def _part(item, where: str) -> ExamPart:
    item = _mapping(item, where, {"ask", "points", "answer", "earns", "wrong"})
    points = item.get("points")
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
        raise GuideError(f"{where}: 'points' must be a positive number, got {points!r}")
    return ExamPart(ask=_text(item.get("ask"), f"{where}, 'ask'"), points=float(points),
                    answer=_text(item.get("answer"), f"{where}, 'answer'"),
                    earns=_text(item.get("earns"), f"{where}, 'earns' (what earns the points)"),
                    wrong=_texts(item.get("wrong"), f"{where}, 'wrong' (the wrong answers students give)"))


def _read(path: Path) -> dict:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise GuideError(f"{_shown(path)} is missing: every chapter of the toc has an entry in the "
                         "teaching guide (CONTRIBUTING, 'Teaching guide'; copy a neighbour's)") from None
    except yaml.YAMLError as exc:
        raise GuideError(f"{path.name} is not valid YAML: {exc}") from None
    return _mapping(data, path.name, ENTRY_KEYS)


def _parse(set_id: str, path: Path, data: dict) -> Entry:
    """The entry as written: its texts still hold their ``{{name}}`` placeholders."""
    name = path.name
    missing = [key for key in ("prerequisites", *PARTS) if key not in data]
    if missing:
        raise GuideError(f"{name}: missing {missing}; an entry has {['prerequisites', *PARTS]}")
    plan = [_segment(item, f"{name}, plan segment {n}") for n, item in enumerate(_list(data["plan"], f"{name}, plan"), 1)]
    activity = _mapping(data["activity"], f"{name}, activity", {"title", "task", "key"})
    activity = Activity(title=_text(activity.get("title"), f"{name}, activity 'title'"),
                        task=_text(activity.get("task"), f"{name}, activity 'task'"),
                        key=_texts(activity.get("key"), f"{name}, activity 'key' (the answer key)"))
    if not isinstance(data["live"], list):
        raise GuideError(f"{name}, live: expected a list (empty when the deck's own demos are all)")
    live = []
    for n, item in enumerate(data["live"], 1):
        where = f"{name}, live run {n}"
        item = _mapping(item, where, {"what", "fallback", "figure"})
        live.append(LiveRun(what=_text(item.get("what"), f"{where}, 'what'"),
                            fallback=_text(item.get("fallback"), f"{where}, 'fallback' (what to show when it is "
                                                                 "slow or fails)"),
                            figure=_text(item.get("figure"), f"{where}, 'figure'", required=False)))
    misconceptions = []
    for n, item in enumerate(_list(data["misconceptions"], f"{name}, misconceptions"), 1):
        where = f"{name}, misconception {n}"
        item = _mapping(item, where, {"mistake", "why", "address"})
        misconceptions.append(Misconception(
            _text(item.get("mistake"), f"{where}, 'mistake' (\"qN: words of a Mistake message\")"),
            why=_text(item.get("why"), f"{where}, 'why'"), address=_text(item.get("address"), f"{where}, 'address'")))
    exam = []
    for n, item in enumerate(_list(data["exam"], f"{name}, exam"), 1):
        where = f"{name}, exam question {n}"
        item = _mapping(item, where, {"question", "parts"})
        parts = [_part(p, f"{where}, part {k}") for k, p in enumerate(_list(item.get("parts"), f"{where}, parts"), 1)]
        exam.append(ExamQuestion(question=_text(item.get("question"), f"{where}, 'question'"), parts=parts))
    return Entry(set_id, path, _text(data["prerequisites"], f"{name}, prerequisites"), plan, activity, live,
                 misconceptions, exam)


def _texts_of(entry: Entry, change=None) -> dict[str, str]:
    """Every text of the entry in its own words, by where it stands; with ``change(text, where)``, each is
    replaced by what it returns."""
    found = {}

    def visit(owner, attribute, where):
        value = getattr(owner, attribute)
        items = value if isinstance(value, list) else [value]
        places = [f"{where} {n}" for n in range(1, len(items) + 1)] if isinstance(value, list) else [where]
        found.update(zip(places, items))
        if change:
            changed = [change(item, place) for item, place in zip(items, places)]
            setattr(owner, attribute, changed if isinstance(value, list) else changed[0])

    visit(entry, "prerequisites", "prerequisites")
    for n, segment in enumerate(entry.plan, 1):
        visit(segment, "do", f"plan segment {n}")
        visit(segment, "timing", f"plan segment {n}, timing")
    for attribute in ("title", "task", "key"):
        visit(entry.activity, attribute, f"activity {attribute}")
    for n, run in enumerate(entry.live, 1):
        visit(run, "what", f"live run {n}")
        visit(run, "fallback", f"live run {n}, fallback")
    for n, misconception in enumerate(entry.misconceptions, 1):
        visit(misconception, "why", f"misconception {n}, why")
        visit(misconception, "address", f"misconception {n}, address")
    for n, question in enumerate(entry.exam, 1):
        visit(question, "question", f"exam question {n}")
        for k, part in enumerate(question.parts, 1):
            for attribute in ("ask", "answer", "earns", "wrong"):
                visit(part, attribute, f"exam question {n}, part {k}, {attribute}")
    return {where: text for where, text in found.items() if text}


# ---------------------------------------------------------------------------------------------------
# The rules, and the references resolved against the course


def _plan_problems(entry: Entry, deck) -> list[str]:
    from posenc.book import quiz

    problems = []
    if entry.minutes != LECTURE_MINUTES:
        problems.append(f"the plan's minutes add up to {entry.minutes}, not {LECTURE_MINUTES}")
    for kind in ("activity", "quiz"):
        count = sum(segment.kind == kind for segment in entry.plan)
        if count != 1:
            problems.append(f"the plan has {count} '{kind}' segments; it has exactly one")
    order = [section.id for section in deck.sections]
    covered = []
    for n, segment in enumerate(entry.plan, 1):
        where = f"plan segment {n}"
        if segment.kind == "quiz":
            size = len(quiz.load(entry.set_id))
            wrong = [q for q in segment.questions if not 1 <= q <= size]
            if wrong:
                problems.append(f"{where}: the chapter's quiz has questions 1 to {size}, not {wrong}")
        if segment.kind != "slides":
            continue
        unknown = [s for s in segment.sections if s not in order]
        if unknown:
            problems.append(f"{where}: the deck {deck.path.name} has no section {unknown[0]!r}; its sections: "
                            f"{order}")
            continue
        first, last = (order.index(s) for s in (segment.sections[0], segment.sections[-1]))
        if last < first:
            problems.append(f"{where}: the section {segment.sections[-1]!r} comes before {segment.sections[0]!r}")
            continue
        sections = deck.sections[first:last + 1]
        covered += [section.id for section in sections]
        slides = [slide for section in sections for slide in section.slides]
        ids = [slide.id for slide in slides]
        outside = [s for s in segment.skip if s not in ids]
        if outside:
            problems.append(f"{where}: skips {outside}, which are not slides of its sections ({ids})")
        shown = [slide for slide in slides if slide.id not in segment.skip]
        if not shown:
            problems.append(f"{where}: skips every slide of its sections")
            continue
        segment.sections = [section.id for section in sections]
        segment.first, segment.last = sections[0].first, sections[-1].last
        segment.deck_minutes = sum(slide.minutes for slide in shown)
        if segment.minutes > segment.deck_minutes and not segment.timing:
            problems.append(f"{where}: gives its slides {segment.minutes} min, more than the deck's "
                            f"{segment.deck_minutes:g}: say why in 'timing' (the plan takes minutes from the slides "
                            "for the activity and the quiz; a row that gives more must say what they are for)")
        if segment.timing and segment.minutes == segment.deck_minutes:
            problems.append(f"{where}: has a 'timing' but gives its slides the deck's {segment.deck_minutes:g} min")
    if covered != order:
        missing = [s for s in order if s not in covered]
        twice = sorted({s for s in covered if covered.count(s) > 1})
        problems.append(f"the plan's slide segments must take every section of {deck.path.name} once, in order "
                        f"(skip single slides with 'skip'); missing {missing}, twice {twice}, order {covered}")
    return problems


def _reference_problems(entry: Entry, deck) -> list[str]:
    from posenc.book.slides.assemble import mistake_messages
    from posenc.book.slides.chapter import Chapter
    from posenc.book.slides.spec import DeckError

    import nbformat

    problems = []
    for n, misconception in enumerate(entry.misconceptions, 1):
        try:
            [(qid, message)] = mistake_messages(deck, [misconception.reference], f"misconception {n}")
        except DeckError as exc:
            problems.append(str(exc))
            continue
        misconception.qid, misconception.message = qid, message
    messages = [m.message for m in entry.misconceptions if m.message]
    if len(set(messages)) != len(messages):
        problems.append("two misconceptions name the same mistake")
    chapter = Chapter(nbformat.read(deck.chapter, as_version=4), None, deck.chapter)
    for n, run in enumerate(entry.live, 1):
        if run.figure and run.figure not in chapter.figures:
            problems.append(f"live run {n}: the chapter has no figure {run.figure!r} (renamed? its cell's metadata "
                            f"mystnb.figure.name); figures: {sorted(chapter.figures)}")
    return problems


def entry_problems(entry: Entry, deck) -> list[str]:
    """Every rule the entry breaks and every reference it gets wrong (empty when it has none). Resolving the
    plan against the deck fills in each segment's slide numbers and the deck's minutes."""
    problems = _plan_problems(entry, deck) + _reference_problems(entry, deck)
    low, high = MISCONCEPTIONS
    if not low <= len(entry.misconceptions) <= high:
        problems.append(f"{len(entry.misconceptions)} misconceptions; an entry selects {low} to {high}")
    low, high = EXAM_QUESTIONS
    if not low <= len(entry.exam) <= high:
        problems.append(f"{len(entry.exam)} exam questions; an entry has {low} to {high}")
    return problems


def number_problems(entry: Entry, values: dict) -> list[str]:
    """Fill in the entry's computed numbers; the problems are numbers typed instead, and placeholders that name
    no computed number."""
    problems = []
    for where, text in _texts_of(entry).items():
        typed = typed_numbers(text, entry.set_id)
        if typed:
            problems.append(f"{where}: types {', '.join(typed)}, a number the chapter's sources do not state: "
                            "compute it in posenc/book/teaching/numbers.py and write {{name}}")

    def filled(text, where):
        try:
            return fill(text, values, where)
        except GuideError as exc:
            problems.append(str(exc))
            return text
    _texts_of(entry, filled)
    return problems


def load_entry(set_id: str) -> Entry:
    """The chapter's entry, its numbers filled in and every reference resolved; GuideError names every
    problem."""
    from posenc.book.slides import outline
    from posenc.book.teaching.numbers import values

    path = entry_path(set_id)
    entry = _parse(set_id, path, _read(path))
    problems = number_problems(entry, values(set_id)) + entry_problems(entry, outline(set_id))
    if problems:
        raise GuideError(f"{_shown(path)}:\n  " + "\n  ".join(problems))
    return entry
