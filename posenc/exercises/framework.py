"""The exercise-check framework shared by the inline ``check("q1")`` and the batch grader.

A question is judged in two steps that may run in two different processes:

* **collect**: where the student's code lives, :func:`posenc.exercises.probe.collect` carries out the
  question's **probe** (plain data: which name, which calls on which inputs) and returns plain data.
* **judge**: in the grading process, the question compares that data with its reference and names the
  likely **mistake** (a **variant** of the reference that reproduces what the student returned).

The question's own code (reference, mistakes, judge) never runs in the student's process: inline, the
probe and its results make the same JSON round trip as in the batch grader, so both see the same data.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from posenc.exercises.probe import (  # noqa: F401  (re-exported for the checks)
    MISSING,
    NOT_ATTEMPTED,
    LibObject,
    Outcome,
    TypedValue,
    call,
    collect,
    round_trip,
    tensor,
    to_plain,
    var,
)

PASSED, FAILED = "passed", "failed"

# What a judge says when the collected data cannot be the answers to its probe.
TAMPERED = "the collected answers do not match the questions asked (was the check tampered with?)"
# The longest text a value or choice answer may be (its characters, counted before anything reads it: a
# 63 MB answer would otherwise cost the judge gigabytes and many seconds).
MAX_ANSWER_CHARS = 10_000


@dataclass
class Result:
    """The verdict on one question."""

    qid: str
    status: str
    points: float
    max_points: float
    message: str = ""
    private: bool = False

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def line(self) -> str:
        """One line of feedback, as the student sees it."""
        mark = {PASSED: "PASS", FAILED: "FAIL", NOT_ATTEMPTED: "TODO", MISSING: "MISSING"}.get(self.status, "FAIL")
        score = f"{self.points:g}/{self.max_points:g}"
        text = f"[{mark}] {self.qid} ({score})"
        return f"{text}: {self.message}" if self.message else text

    def __str__(self) -> str:
        return self.line()


# ---------------------------------------------------------------------------------------------------
# Comparing arrays and naming mistakes


def describe_mismatch(got: Any, expected: np.ndarray, *, rtol: float = 1e-7, atol: float = 1e-9,
                      what: str = "result", dtype: Any = None) -> str | None:
    """None when ``got`` matches ``expected``; otherwise a sentence saying how it differs."""
    is_, has = ("are", "have") if _plural(what) else ("is", "has")
    if isinstance(got, TypedValue):
        return f"the {what} {is_} {kind_of(got)}; return a numpy array"
    if not isinstance(got, np.ndarray):
        return f"the {what} {is_} {kind_of(got)}, not a numpy array"
    if got.shape != expected.shape:
        hint = ""
        if got.shape == expected.shape[::-1] and got.ndim == 2:
            hint = " (transposed: rows are positions, columns are dimensions)"
        return f"the {what} {has} shape {got.shape}; expected {expected.shape}{hint}"
    if not np.issubdtype(got.dtype, np.number) and got.dtype != bool:
        return f"the {what} {has} dtype {got.dtype}; expected numbers"
    if expected.size and not np.allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol):
        with np.errstate(invalid="ignore"):
            diff = np.abs(got.astype(np.float64) - expected)
        diff = np.where(np.isnan(diff), np.inf, diff)
        where = np.unravel_index(int(np.argmax(diff)), diff.shape)
        shown_expected, shown_got = distinct_digits(float(expected[where]), float(got[where]))
        return (f"the {what} {is_} wrong at index {tuple(int(w) for w in where)}: expected "
                f"{shown_expected}, got {shown_got}")
    if dtype is not None and got.dtype != np.dtype(dtype):
        return f"the values are right but the dtype is {got.dtype}; expected {np.dtype(dtype)}"
    return None


PLURAL_NOUNS = {"logits", "biases", "slopes", "angles", "frequencies", "positions", "values", "buckets"}


def _plural(what: str) -> bool:
    """Whether a ``what`` such as "logits" or "logits (float16 input)" takes a plural verb."""
    words = what.split()
    return bool(words) and words[0] in PLURAL_NOUNS


def kind_of(value: Any) -> str:
    """What a student's value is, in words: "a torch tensor", "a list", "a str" (never an internal class
    name of the checks such as TypedValue)."""
    if isinstance(value, TypedValue):
        if value.type_name == "torch.Tensor":
            return "a torch tensor"
        short = value.type_name.rsplit(".", 1)[-1]
        return "an object" if short == "object" else f"a {short}"
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape}"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def is_set(value: Any) -> bool:
    """Whether a collected value was a set or frozenset in the student's code (its items, sorted, are
    ``value.value``)."""
    return (isinstance(value, TypedValue) and value.type_name in ("builtins.set", "builtins.frozenset")
            and isinstance(value.value, list))


def as_number(value: Any) -> Any:
    """A student's scalar answer as a Python number where it plainly is one: a one-element array or tensor,
    or a string such as "32" or " 0.5 "; anything else unchanged."""
    if isinstance(value, TypedValue) and value.type_name == "torch.Tensor" and np.size(value.value) == 1:
        value = value.value
    if isinstance(value, np.ndarray) and value.size == 1 and np.issubdtype(value.dtype, np.number):
        return value.item()
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return value
        return number if np.isfinite(number) else value
    return value


def distinct_digits(expected: float, got: float, least: int = 6) -> tuple[str, str]:
    """Both numbers with as many significant digits as it takes to tell them apart (at least ``least``),
    so that a message never reads "expected 0.504697, got 0.504697"."""
    for digits in range(least, 18):
        shown = f"{expected:.{digits}g}", f"{got:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return shown


def matches(got: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    """Loose equality used to recognise a known mistake."""
    if isinstance(got, np.ndarray) or isinstance(expected, np.ndarray):
        if not (isinstance(got, np.ndarray) and isinstance(expected, np.ndarray)):
            return False
        if got.shape != expected.shape or not (np.issubdtype(got.dtype, np.number) or got.dtype == bool):
            return False
        return bool(np.allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol, equal_nan=True))
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)) and not isinstance(got, bool):
        return bool(np.isclose(got, expected, rtol=rtol, atol=atol))
    return got == expected


@dataclass
class Mistake:
    """A known wrong answer: a variant of the reference and the message that names it.

    ``applies(*args)``, when given, picks the probes on which the variant is compared: a mistake such as
    "the halves layout" is recognised on the even widths whatever the student's code does with odd ones.
    """

    message: str
    variant: Callable[..., Any]
    applies: Callable[..., bool] | None = None


def name_mistake(mistakes: Sequence[Mistake], probes: Sequence[tuple], outcomes: Sequence[Outcome],
                 **match_kwargs) -> str | None:
    """Message of the first known mistake whose variant reproduces every answer the student gave (on the
    probes the mistake applies to)."""
    for mistake in mistakes:
        compared = 0
        for args, outcome in zip(probes, outcomes):
            if not outcome.ok or (mistake.applies is not None and not mistake.applies(*args)):
                continue
            try:
                expected = mistake.variant(*args)
            except Exception:
                continue
            if not matches(outcome.value, expected, **match_kwargs):
                break
            compared += 1
        else:
            if compared:
                return mistake.message
    return None


# ---------------------------------------------------------------------------------------------------
# Questions


@dataclass
class Question:
    """Base class: one graded question about one name the student defines."""

    qid: str
    title: str
    name: str                 # the name in the student's namespace that holds the answer
    points: float = 1.0
    private: bool = False      # private checks report only pass/fail, never their message

    def probe(self, seed: int = 0) -> dict:
        """What to collect from the student's code, as plain data (see ``posenc.exercises.probe``)."""
        raise NotImplementedError

    def judge(self, data: list, seed: int = 0) -> tuple[bool, str]:   # runs in the grader
        """(passed, message) from the probe's results, one entry per step."""
        raise NotImplementedError

    def result_from(self, collected: dict, seed: int = 0) -> Result:
        result = self._verdict(collected, seed)
        warned = collected.get("warnings") if isinstance(collected, dict) else None
        if warned and isinstance(warned, list) and result.status not in (MISSING, NOT_ATTEMPTED):
            said = "; ".join(str(w)[:200] for w in warned[:3])
            result.message = (f"{result.message} (your own code warned while it was checked, not the check: "
                              f"{said})")
        return result

    def _verdict(self, collected: dict, seed: int = 0) -> Result:
        status = collected.get("status") if isinstance(collected, dict) else None
        if status == MISSING:
            return Result(self.qid, MISSING, 0, self.points,
                          f"`{self.name}` is not defined: run the cell where you define it first",
                          self.private)
        if status == NOT_ATTEMPTED:
            where = collected.get("placeholder")
            helper = where.split(".<locals>")[0] if isinstance(where, str) else None
            if helper and helper.split(".")[0] != self.name and helper.isprintable():
                return Result(self.qid, NOT_ATTEMPTED, 0, self.points,
                              f"not attempted yet: `{self.name}` calls `{helper}`, which still holds its "
                              "placeholder (raise NotImplementedError); finish that first", self.private)
            return Result(self.qid, NOT_ATTEMPTED, 0, self.points,
                          f"not attempted yet: replace the placeholder in `{self.name}` with your answer",
                          self.private)
        if status != "collected" or not isinstance(collected.get("data"), list):
            error = collected.get("error") if isinstance(collected, dict) else None
            return Result(self.qid, FAILED, 0, self.points,
                          str(error)[:500] if error else f"could not be checked ({status})", self.private)
        try:
            passed, message = self.judge(collected["data"], seed)
        except Exception as exc:  # malformed data from a tampered kernel must not crash the grader
            passed, message = False, f"the answer could not be judged ({type(exc).__name__}: {exc})"
        if passed:
            return Result(self.qid, PASSED, self.points, self.points, message, self.private)
        return Result(self.qid, FAILED, 0, self.points, message, self.private)

    def grade(self, namespace: dict, seed: int = 0) -> Result:
        """Collect and judge in this process (inline feedback and tests), through the same plain data
        as the batch grader."""
        return self.result_from(round_trip(collect(namespace, round_trip(self.probe(seed)))), seed)


@dataclass
class FunctionQuestion(Question):
    """The student writes a function; it is called on grader-chosen arguments.

    ``probes(seed)`` gives the argument tuples, ``reference(*args)`` the right answers, and
    ``mistakes`` the known wrong variants with their diagnoses. ``compare(got, expected, args)``
    returns None on a match or a sentence describing the difference.
    """

    probes: Callable[[int], list[tuple]] = lambda seed: []
    reference: Callable[..., Any] = None
    mistakes: Sequence[Mistake] = ()
    compare: Callable[[Any, Any, tuple], str | None] = None
    describe_args: Callable[[tuple], str] = lambda args: ", ".join(_short(a) for a in args)
    slow_seconds: float | None = None     # note (never fail) when one call takes longer than this
    error_hint: Callable[[tuple], str] = lambda args: ""   # added when the student's code raised
    # Calls that are only timed (their result is not sent back, so a large one costs the grader nothing):
    # the note about speed reads them; a call that raises fails the question.
    timing_probes: Callable[[int], list[tuple]] = lambda seed: []
    # Helpers of earlier questions the answer may call, graded there: while it runs, each stands in as the
    # course library's version, so that one mistake is not paid for twice. name -> {"target":
    # "posenc.lib.module:function", "params": [[student's name, library's name], ...], "question": "q1"}
    # (see ``posenc.exercises.probe.library_stand_in``).
    stand_ins: dict = field(default_factory=dict)
    # The question says that the inputs must not change: the probe reports array arguments written into.
    inputs_unchanged: bool = False

    def probe(self, seed=0):
        steps = [call(*args) for args in self.probes(seed)]
        if self.inputs_unchanged:
            steps = [{**step, "check_inputs": True} for step in steps]
        steps += [call(*args, report=False) for args in self.timing_probes(seed)]
        if self.stand_ins:
            helpers = {name: {"target": spec["target"], "params": spec["params"]}
                       for name, spec in self.stand_ins.items()}
            steps = [{**step, "stand_ins": helpers} for step in steps]
        return {"name": self.name, "steps": steps}

    def stand_in_note(self) -> str:
        """What a PASS adds when helpers stood in: whose helper the answer was checked with."""
        if not self.stand_ins:
            return ""
        named = " and ".join(f"`{name}` ({spec['question']})" for name, spec in self.stand_ins.items())
        return (f" (checked with a correct {named} in place of yours, so this question is graded on its own; "
                f"{'that question grades' if len(self.stand_ins) == 1 else 'those questions grade'} yours)")

    def judge(self, outcomes, seed=0):
        probes = [built(args) for args in self.probes(seed)]
        timed = [built(args) for args in self.timing_probes(seed)]
        if len(outcomes) != len(probes) + len(timed) or not all(isinstance(o, Outcome) for o in outcomes):
            return False, TAMPERED
        outcomes, timings = outcomes[:len(probes)], outcomes[len(probes):]
        compare = self.compare or (lambda got, expected, args: describe_mismatch(got, expected))
        for args, outcome in zip(probes, outcomes):
            call = f"{self.name}({self.describe_args(args)})"
            if not outcome.ok:
                if outcome.error_type == "NotImplementedError":
                    return False, (f"{call} raised {outcome.error or 'NotImplementedError'}: your function "
                                   "answers other inputs, so it must answer these too")
                return False, f"{call} raised {outcome.error}{self.error_hint(args)}"
            if self.inputs_unchanged and outcome.changed:
                names = [p for p in inspect.signature(self.reference).parameters][:len(args)] \
                    if callable(self.reference) else []
                which = ", ".join(f"`{names[i]}`" if i < len(names) else f"argument {i + 1}" for i in outcome.changed)
                return False, (f"{call} changed its input {which} in place; the caller still needs it (e.g. the same "
                               "offsets or vectors for the next layer): compute on a copy and leave the input as "
                               "it was")
            problem = compare(outcome.value, self.reference(*args), args)
            if problem:
                named = name_mistake(self.mistakes, probes, outcomes)
                if named:
                    return False, f"{named} (seen in {call})"
                return False, f"{call}: {problem}"
        for args, outcome in zip(timed, timings):
            if not outcome.ok:
                return False, f"{self.name}({self.describe_args(args)}) raised {outcome.error}{self.error_hint(args)}"
        slowest = max((o.seconds for o in [*outcomes, *timings]), default=0.0)
        if self.slow_seconds is not None and slowest > self.slow_seconds:
            return True, (f"correct, but one call took {slowest:.2f} s: a vectorised version "
                          "(no Python loop over positions) is much faster")
        return True, "correct" + self.stand_in_note()


BUG_STILL_THERE = ("the bug is still there: on the grader's inputs your function returns exactly what the "
                   "code you were given returns")


@dataclass
class FindTheBugQuestion(FunctionQuestion):
    """The student repairs handed-out code. ``bug`` is that code as handed out; when the answer still
    behaves like it, the message says so without saying what the bug is. The other ``mistakes`` name
    what a wrong repair did."""

    bug: Callable[..., Any] = None

    def __post_init__(self):
        self.mistakes = (Mistake(BUG_STILL_THERE, self.bug), *self.mistakes)


@dataclass
class ValueQuestion(Question):
    """The student assigns a value (a number, an array, a tuple) to a name."""

    expected: Callable[[], Any] = None
    mistakes: Sequence[tuple[Callable[[], Any], str]] = ()
    rtol: float = 1e-6
    atol: float = 1e-9

    def probe(self, seed=0):
        return {"name": self.name, "steps": [{"op": "value"}]}

    def judge(self, data, seed=0):
        if len(data) != 1:
            return False, TAMPERED
        if too_long(self.name, data[0]):
            return False, too_long(self.name, data[0])
        got, expected = data[0], self.expected()
        if isinstance(expected, (int, float)) and not isinstance(expected, bool):
            got = as_number(got)              # "32", a 0-d array or tensor: the number it plainly is
        if _close(got, expected, self.rtol, self.atol):
            return True, "correct"
        for wrong, message in self.mistakes:
            if _close(got, wrong(), self.rtol, self.atol):
                return False, message
        if isinstance(expected, np.ndarray):
            try:
                values = np.asarray(got) if isinstance(got, (list, tuple, np.ndarray)) else None
            except ValueError:          # a ragged list
                values = None
            if values is None or not np.issubdtype(values.dtype, np.number):
                return False, f"`{self.name}` should hold {expected.size} numbers (a list or an array), not {_short(got)}"
            if values.shape != expected.shape:
                return False, f"`{self.name}` holds {values.size} numbers; expected {expected.size}"
        elif isinstance(expected, (int, float)) and (isinstance(got, bool) or not isinstance(got, (int, float))):
            return False, f"`{self.name}` should be a number, not {_short(got)}"
        return False, f"`{self.name}` = {_short(got)} is not right"


@dataclass
class ChoiceQuestion(Question):
    """The student picks options by letter: the one right option (``single``), or all that apply.

    ``options`` maps every letter to a sentence on that option: why it is right or wrong. A wrong choice
    gets the sentence of the option it misjudged (the first, if several), a right one the sentence of
    the right option, so every option has its feedback.
    """

    answer: str = ""
    options: dict = field(default_factory=dict)      # letter -> why the option is right or wrong
    single: bool = False

    @classmethod
    def from_statements(cls, statements: dict, **fields) -> "ChoiceQuestion":
        """A question on statements about a measurement: ``statements`` maps each letter to (supported?,
        reason); the answer is every supported letter, and each option's feedback says "supported" or "not
        supported" and why."""
        return cls(answer="".join(letter for letter, (true, _) in statements.items() if true),
                   options={letter: f"{'supported' if true else 'not supported'}. {reason}"
                            for letter, (true, reason) in statements.items()}, **fields)

    @property
    def mistakes(self) -> tuple:
        """(letter, sentence) for every option a student can misjudge, for the Common mistakes page."""
        right = set(self.answer)
        return tuple((letter, text) for letter, text in self.options.items() if not (self.single and letter in right))

    def probe(self, seed=0):
        return {"name": self.name, "steps": [{"op": "value"}]}

    def judge(self, data, seed=0):
        if len(data) != 1:
            return False, TAMPERED
        answer = data[0]
        if is_set(answer):                    # {"a", "c"}: the order of the letters never matters here
            answer = answer.value
        if too_long(self.name, answer):
            return False, too_long(self.name, answer)
        if isinstance(answer, (list, tuple)) and all(isinstance(item, str) for item in answer):
            answer = " ".join(answer)
        example = "\"b\"" if self.single else "\"ab\" (or \"a, b\", \"a and b\")"
        if not isinstance(answer, str):
            return False, f"`{self.name}` should be a string of letters such as {example}, not {kind_of(answer)}"
        chosen, unreadable = read_choice(answer, self.options)
        if unreadable:
            return False, (f"{unreadable!r} is not an option letter; write the letters of the options you "
                           f"choose, such as {example}; the options are {', '.join(self.options)}")
        unknown = chosen - set(self.options)
        if unknown:
            return False, (f"there is no option {', '.join(sorted(unknown))}; the options are "
                           f"{', '.join(self.options)}")
        if self.single and len(chosen) != 1:
            return False, f"choose exactly one option (one letter), not {len(chosen)}"
        right = frozenset(self.answer)
        if chosen == right:
            return True, (f"correct: {self.options[self.answer]}" if self.single else "correct")
        misjudged = sorted(chosen - right) if self.single else sorted(chosen ^ right)
        first = f"({misjudged[0]}) {self.options[misjudged[0]]}"
        if len(misjudged) == 1:
            return False, first
        return False, f"{len(misjudged)} options are misjudged; for example {first}"


# Words a student may write around the letters of a choice: "option a", "a and c", "answer: (b)".
CHOICE_WORDS = {"option", "options", "and", "or", "answer", "answers", "choice", "choices", "letter", "letters",
                "the", "is", "are", "my", "i", "choose", "pick", "both", "plus"}


def read_choice(answer: str, options) -> tuple[frozenset, str | None]:
    """The option letters a student's answer names, and the first word that is neither a letter, a run of
    letters at least half of them options ("ac", "acdz") nor one of CHOICE_WORDS (None when every word was
    read).

    "a", "ac", "a, c", "(a), (c)", "a and c", "option a", "Options A and C" all read as letters; a single
    letter that is no option is returned as a letter (the caller says there is no such option)."""
    letters: set[str] = set()
    for word in re.findall(r"[A-Za-z]+", answer):
        word = word.lower()
        if len(word) == 1:
            if word != "i" or word in options:       # "I choose b": the pronoun, unless (i) is an option
                letters.add(word)
        elif word in CHOICE_WORDS:
            continue
        elif 2 * sum(letter in options for letter in word) >= len(word):   # "ac", "acdz": a run of letters
            letters.update(word)
        else:
            return frozenset(letters), word
    return frozenset(letters), None


def _close(got, expected, rtol, atol) -> bool:
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        return matches(np.asarray(got) if isinstance(got, (list, tuple)) else got,
                       np.asarray(expected, dtype=np.float64), rtol, atol)
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return bool(np.isclose(got, expected, rtol=rtol, atol=atol))
    return got == expected


def built(args: tuple) -> tuple:
    """A probe's arguments as the reference needs them: library objects built (``LibObject.build``)."""
    return tuple(a.build() if isinstance(a, LibObject) else a for a in args)


def short(value: Any) -> str:
    """A student's value in at most 60 characters, for a message (arrays by shape, no internal names)."""
    return _short(value)


def too_long(name: str, answer: Any) -> str | None:
    """A message when ``answer`` is text (or a list of texts) over MAX_ANSWER_CHARS characters, else None;
    counted without copying it."""
    if isinstance(answer, str):
        size = len(answer)
    elif isinstance(answer, (list, tuple)):
        size = 0
        for item in answer:
            size += len(item) if isinstance(item, str) else 0
            if size > MAX_ANSWER_CHARS:
                break
    else:
        return None
    if size <= MAX_ANSWER_CHARS:
        return None
    return f"`{name}` holds more than {MAX_ANSWER_CHARS} characters of text; no answer here is that long"


def _short(value: Any) -> str:
    if isinstance(value, str) and len(value) > 60:
        value = value[:60]                     # (repr of the whole of a long text would copy it)
    if isinstance(value, np.ndarray):
        return f"<array of shape {value.shape}>"
    if isinstance(value, TypedValue):
        if value.type_name == "torch.Tensor" and isinstance(value.value, np.ndarray):
            return f"<torch tensor of shape {tuple(value.value.shape)}>"
        text = value.value if isinstance(value.value, str) else kind_of(value)
        return text if len(text) <= 60 else text[:57] + "..."
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------------------------------------------
# Exercise sets and the inline check


@dataclass
class ExerciseSet:
    """The questions of one exercise notebook, e.g. ``ch01``."""

    set_id: str
    title: str
    questions: list[Question] = field(default_factory=list)

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.qid == qid:
                return q
        known = ", ".join(q.qid for q in self.questions)
        raise KeyError(f"exercise set {self.set_id} has no question {qid!r}; its questions are {known}")

    @property
    def max_points(self) -> float:
        return sum(q.points for q in self.questions)

    def grade(self, namespace: dict, seed: int = 0) -> list[Result]:
        return [q.grade(namespace, seed) for q in self.questions]


class Checker:
    """The ``check`` object of an exercise notebook: ``check("q1")`` prints one line of feedback."""

    def __init__(self, exercise_set: ExerciseSet):
        self.exercise_set = exercise_set

    def __call__(self, qid: str, namespace: dict | None = None) -> None:
        result = self.exercise_set.question(qid).grade(namespace or _caller_globals())
        print(result.line())

    def summary(self, namespace: dict | None = None) -> None:
        """Grade every question and print the lines and the total."""
        results = self.exercise_set.grade(namespace or _caller_globals())
        for r in results:
            print(r.line())
        total = sum(r.points for r in results)
        print(f"Total: {total:g}/{self.exercise_set.max_points:g}")

    def __repr__(self) -> str:
        return f"<check for exercise set {self.exercise_set.set_id}: {self.exercise_set.title}>"


def _caller_globals() -> dict:
    frame = inspect.currentframe()
    try:
        return frame.f_back.f_back.f_globals
    finally:
        del frame
