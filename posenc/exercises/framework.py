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
import math
import re
import textwrap
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from posenc.exercises.probe import (  # noqa: F401  (re-exported for the checks)
    MISSING,
    NOT_ATTEMPTED,
    STOPPED,
    TIME_LIMIT,
    WHOLE,
    LibObject,
    Outcome,
    TypedValue,
    call,
    collect,
    collect_apart,
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
# The rule for numbers, the same in every question (stated in every exercise notebook, ``checking_rules``)

# A number passes when it differs from the float64 reference by at most PRECISION times its own size plus
# PRECISION times the size of the answer (its largest value, unless the question names the size of the
# numbers it is computed from): float32 arithmetic meets it, any mistake the checks name misses it by far.
# Whole numbers (counts, positions, buckets) must be exact. A question about precision itself says so in
# its text and asks for more (chapter 6's angles).
PRECISION = 1e-4


def array_of(value: Any) -> np.ndarray | None:
    """A student's array as a NumPy array: a NumPy array, or a torch tensor (its values; the rule for
    tensors where NumPy is asked: accepted); None for anything else."""
    if isinstance(value, TypedValue) and value.type_name == "torch.Tensor" and isinstance(value.value, np.ndarray):
        return value.value
    return value if isinstance(value, np.ndarray) else None


def _scale(expected: np.ndarray, scale: float | None) -> float:
    if scale is not None:
        return float(scale)
    finite = np.abs(expected[np.isfinite(expected)])
    return float(finite.max()) if finite.size else 0.0


def tolerance(expected: Any, scale: float | None = None, precision: float = PRECISION) -> np.ndarray:
    """How far each value may be from ``expected``: ``precision * (|expected| + scale)``, the scale being the
    largest |expected| unless the question gives one."""
    expected = np.asarray(expected, dtype=np.float64)
    return precision * (np.abs(expected) + _scale(expected, scale))


def _excess(got: np.ndarray, expected: np.ndarray, scale: float | None, precision: float,
            equal_nan: bool = False) -> np.ndarray:
    """Per value, how many allowances away from ``expected`` ``got`` is (at most 1 passes; inf for a nan
    or infinity where there should be a number)."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    allowed = tolerance(expected, scale, precision)
    with np.errstate(all="ignore"):
        difference = np.abs(got - expected)
        excess = np.where(allowed > 0, difference / np.where(allowed > 0, allowed, 1),
                          np.where(difference > 0, np.inf, 0))
    same = (got == expected) | (equal_nan & np.isnan(got) & np.isnan(expected))
    return np.where(same, 0.0, np.where(np.isnan(excess), np.inf, excess))


def within(got: Any, expected: Any, scale: float | None = None, precision: float = PRECISION,
           equal_nan: bool = False) -> bool:
    """Whether every value of ``got`` is within the rule's tolerance of ``expected`` (same shape)."""
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape:
        return False
    return bool(np.all(_excess(got, expected, scale, precision, equal_nan) <= 1))


def furthest_outside(got: np.ndarray, expected: np.ndarray, scale: float | None = None,
                     precision: float = PRECISION) -> tuple | None:
    """The index of the value furthest outside the rule's tolerance (None when every value is within it),
    for a message that names the value that broke it (not the largest absolute difference)."""
    excess = _excess(got, expected, scale, precision)
    if not np.any(excess > 1):
        return None
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), excess.shape))


def describe_mismatch(got: Any, expected: np.ndarray, *, what: str = "result", dtype: Any = None,
                      scale: float | None = None, precision: float = PRECISION) -> str | None:
    """None when ``got`` matches ``expected`` by the rule for numbers; otherwise a sentence saying how it
    differs: the shape, the dtype, or the value that broke the tolerance (the one furthest outside it, which
    need not be the largest absolute difference)."""
    is_, has = ("are", "have") if _plural(what) else ("is", "has")
    array = array_of(got)
    if array is None:
        if isinstance(got, TypedValue):
            return f"the {what} {is_} {kind_of(got)}; return a numpy array"
        return f"the {what} {is_} {kind_of(got)}, not a numpy array"
    got = array
    if got.shape != expected.shape:
        hint = ""
        if got.shape == expected.shape[::-1] and got.ndim == 2:
            hint = " (transposed: rows are positions, columns are dimensions)"
        return f"the {what} {has} shape {got.shape}; expected {expected.shape}{hint}"
    if not np.issubdtype(got.dtype, np.number) and got.dtype != bool:
        return f"the {what} {has} dtype {got.dtype}; expected numbers"
    where = furthest_outside(got, expected, scale, precision) if expected.size else None
    if where is not None:
        right, value = float(expected[where]), float(got[where])
        shown_expected, shown_got = distinct_digits(right, value)
        at = f" at index {where}" if expected.ndim else ""
        near = _near_miss(got, expected, where, scale, precision)
        return f"the {what} {is_} wrong{at}: expected {shown_expected}, got {shown_got}{near}"
    if dtype is not None and got.dtype != np.dtype(dtype):
        return f"the values are right but the dtype is {got.dtype}; expected {np.dtype(dtype)}"
    return None


def _near_miss(got, expected, where, scale, precision) -> str:
    """For a value just outside the tolerance (a precision problem rather than a wrong formula), by how
    much; "" for one far off."""
    excess = float(_excess(got, expected, scale, precision)[where])
    if not np.isfinite(excess) or excess >= 1000:
        return ""
    allowed = float(tolerance(expected, scale, precision)[where])
    off = abs(float(got[where]) - float(expected[where]))
    return f" (off by {off:.2g}, more than the {allowed:.2g} the check allows there)"


def compare_number(got: Any, expected: float, *, scale: float | None = None, what: str = "",
                   precision: float = PRECISION) -> str | None:
    """None when ``got`` is one number within the rule's tolerance of ``expected`` (exactly it, when the
    expected number is a whole number of type int); otherwise a sentence ("expected 20221.3, got 20227.4")."""
    got = as_number(got)
    label = f"the {what} " if what else ""
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return f"{label}should be a number, got {kind_of(got)}" if what else f"expected a number, got {kind_of(got)}"
    if isinstance(expected, int) and not isinstance(expected, bool):
        if got == expected:
            return None
    elif within(float(got), float(expected), scale, precision):
        return None
    shown_expected, shown_got = distinct_digits(float(expected), float(got))
    if what:
        return f"{label}is {shown_got}; expected {shown_expected}"
    return f"expected {shown_expected}, got {shown_got}"


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
    if isinstance(value, np.generic):
        value = value.item()
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


def matches(got: Any, expected: Any, scale: float | None = None, precision: float = PRECISION) -> bool:
    """Whether a student's answer is what a known mistake gives, by the rule for numbers (an array or a
    tensor, a number, or a pair of them)."""
    if isinstance(expected, (tuple, list)) and not isinstance(expected, str):
        return (isinstance(got, (tuple, list)) and len(got) == len(expected)
                and all(matches(g, e, scale, precision) for g, e in zip(got, expected)))
    if isinstance(got, np.ndarray) or isinstance(expected, np.ndarray) or array_of(got) is not None:
        array = array_of(got)
        if array is None or not isinstance(expected, np.ndarray) or array.shape != expected.shape:
            return False
        if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
            return False
        return within(array.astype(np.float64), expected.astype(np.float64), scale, precision, equal_nan=True)
    got = as_number(got) if isinstance(expected, (int, float)) else got
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)) and not isinstance(got, bool):
        return within(float(got), float(expected), scale, precision, equal_nan=True)
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
                 scale: Callable[[tuple], float | None] = lambda args: None,
                 precision: float = PRECISION) -> str | None:
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
            if not matches(outcome.value, expected, scale(args), precision):
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
        if status == STOPPED:
            return Result(self.qid, FAILED, 0, self.points, kept_running(self.name, collected), self.private)
        if status != "collected" or not isinstance(collected.get("data"), list):
            error = collected.get("error") if isinstance(collected, dict) else None
            return Result(self.qid, FAILED, 0, self.points,
                          str(error)[:500] if error else f"could not be checked ({status})", self.private)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")     # the references' and variants' warnings are not the student's
                passed, message = self.judge(collected["data"], seed)
        except Exception as exc:  # malformed data from a tampered kernel must not crash the grader
            passed, message = False, f"the answer could not be judged ({type(exc).__name__}: {exc})"
        if passed:
            return Result(self.qid, PASSED, self.points, self.points, message, self.private)
        return Result(self.qid, FAILED, 0, self.points, message, self.private)

    def grade(self, namespace: dict, seed: int = 0, limits: dict | None = None) -> Result:
        """Collect and judge in this process (inline feedback and tests), through the same plain data
        as the batch grader; ``limits`` are the time limits of the calls (``INLINE_LIMITS``)."""
        probe = self.probe(seed)
        if not limits:
            return self.result_from(round_trip(collect(namespace, round_trip(probe))), seed)
        probe = {**probe, "limits": dict(limits)}
        return self.result_from(round_trip(collect_apart(namespace, round_trip(probe))), seed)


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
    # A note about speed (never a fail), from the timing probes: calls on growing sizes, the last doing
    # several times the work of the others (chapter 1's: four times). It is given when the last took more
    # than ``slow_seconds`` of CPU time and at least ``slow_growth`` times the fastest of the others: a Python
    # loop over the elements grows as the work does, a vectorised answer's time hardly does at these sizes,
    # and a busy machine shows mostly in wall time, not in CPU time. Mostly: on a shared or virtual machine a
    # short call's CPU time can still come out up to twice too long (caches refilled after another process
    # ran, time the hypervisor took), which would hide a loop's growth; so give several short probes of
    # about the same work, each with other arguments (the same arguments again would let an answer that
    # caches its results look as if it grew), and the fastest counts.
    slow_seconds: float | None = None
    slow_growth: float = 2.5
    # added when the student's code raised: error_hint(args, the exception's type name)
    error_hint: Callable[[tuple, str], str] = lambda args, error_type: ""
    # Calls that are only timed (their result is not sent back, so a large one costs the grader nothing):
    # the note about speed reads them; a call that raises fails the question.
    timing_probes: Callable[[int], list[tuple]] = lambda seed: []
    # Helpers of earlier questions the answer may call, graded there: while it runs, each stands in as the
    # course library's version, so that one mistake is not paid for twice. name -> {"target":
    # "posenc.lib.module:function", "params": [[student's name, library's name], ...], "question": "q1"}
    # (see ``posenc.exercises.probe.library_stand_in``).
    stand_ins: dict = field(default_factory=dict)
    # The inputs must not change (every question's text says so): the probe reports the array and tensor
    # arguments written into, and the message names the change.
    inputs_unchanged: bool = True
    # NumPy functions the answer must not give its inputs to (np.concatenate where the question asks for the
    # result without building the concatenation), and the message that says why; the message adds the calls.
    forbidden: tuple = ()
    forbidden_message: str = ""
    # Parameters whose whole must not meet a matrix product at once (w, where the question asks to split it
    # into blocks: ``concat @ w`` multiplies all of it, however the concatenation was built); the message is
    # ``forbidden_message`` too.
    unsplit: tuple = ()
    # The size of the numbers an answer is computed from, when its own largest value is not (see PRECISION).
    scale: Callable[[tuple], float | None] = lambda args: None
    # How closely a known mistake must reproduce the answers to be named: the rule's PRECISION, finer for a
    # question about precision itself (whose compare is finer too).
    match_precision: float = PRECISION

    def probe(self, seed=0):
        steps = [call(*args) for args in self.probes(seed)]
        if self.inputs_unchanged:
            steps = [{**step, "check_inputs": True} for step in steps]
        if self.forbidden:
            steps = [{**step, "watch": list(self.forbidden)} for step in steps]
        if self.unsplit:
            whole = [self.parameter_names().index(name) for name in self.unsplit]
            steps = [{**step, "watch_products": whole} for step in steps]
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

    def parameter_names(self) -> list[str]:
        """The names of the answer's parameters, from the reference's signature (for the messages)."""
        try:
            return list(inspect.signature(self.reference).parameters)
        except (TypeError, ValueError):
            return []

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
                if outcome.error_type == "NotImplementedError" and any(o.ok for o in outcomes):
                    return False, (f"{call} raised {outcome.error or 'NotImplementedError'}: your function "
                                   "answers other inputs, so it must answer these too")
                if outcome.error_type == "NotImplementedError":
                    return False, (f"{call} raised {outcome.error}: your code's own NotImplementedError (the "
                                   "placeholder raises one without a message), on a path the check takes: "
                                   "finish that path")
                return False, f"{call} {failure(outcome)}{self._hint(args, outcome)}"
            if self.inputs_unchanged:
                changed = changed_inputs_message(call, self.parameter_names(), outcome)
                if changed:
                    return False, changed
            if (self.forbidden or self.unsplit) and outcome.called:
                return False, f"{call} {self.forbidden_message} ({self._what_it_called(outcome.called)})"
            problem = compare(outcome.value, self.reference(*args), args)
            if problem:
                named = name_mistake(self.mistakes, probes, outcomes, self.scale, self.match_precision)
                if named:
                    return False, f"{named} (seen in {call})"
                return False, f"{call}: {problem}"
        for args, outcome in zip(timed, timings):
            if not outcome.ok:
                return False, f"{self.name}({self.describe_args(args)}) {failure(outcome)}{self._hint(args, outcome)}"
        slow = self._slow(timed, timings)
        return True, ("correct" if slow is None else f"correct, but {slow}") + self.stand_in_note()

    def _slow(self, timed: list, timings: list) -> str | None:
        """The note about speed (see ``slow_seconds``), or None."""
        cpu = [o.cpu_seconds for o in timings]
        if self.slow_seconds is None or len(cpu) < 2 or not all(isinstance(c, float) for c in cpu):
            return None
        fastest = min(range(len(cpu) - 1), key=cpu.__getitem__)     # of the calls before the last
        if not (cpu[-1] > self.slow_seconds and cpu[-1] >= self.slow_growth * max(cpu[fastest], 1e-6)):
            return None
        first, last = (f"{self.name}({self.describe_args(args)})" for args in (timed[fastest], timed[-1]))
        return (f"its time grows with the size of the work as a Python loop's does ({first} took "
                f"{cpu[fastest]:.3f} s of CPU time, {last} {cpu[-1]:.3f} s): a vectorised version (whole-array operations, no Python "
                "loop over positions) takes milliseconds for either")

    def _what_it_called(self, called: list) -> str:
        """The watched calls an answer made, in words: "it called np.hstack; it multiplied all of `w` ..."."""
        names = self.parameter_names()
        functions = [name for name in called if not str(name).startswith(WHOLE)]
        wholes = []
        for name in called:
            key = str(name)[len(WHOLE):] if str(name).startswith(WHOLE) else None
            if key is not None:
                wholes.append(names[int(key)] if key.isdigit() and int(key) < len(names) else key)
        said = [f"it called np.{', np.'.join(functions)}"] if functions else []
        said += [f"it multiplied all of `{name}` by one array at once" for name in wholes]
        return "; ".join(said)

    def _hint(self, args, outcome) -> str:
        return "" if outcome.error_type == TIME_LIMIT else self.error_hint(args, outcome.error_type)


def failure(outcome: Outcome) -> str:
    """What happened to a call that returned nothing, to follow the call in a message: "raised ...", or that
    the check's time limit stopped it."""
    if outcome.error_type != TIME_LIMIT:
        return f"raised {outcome.error}"
    limit = outcome.limit if isinstance(outcome.limit, (int, float)) else INLINE_LIMITS["call_seconds"]
    if str(outcome.error).startswith("not run: an earlier call"):
        return f"was not run: an earlier call of this question was stopped after {limit:g} s"
    if not str(outcome.error).startswith("stopped after"):       # the question's budget, not the call's
        return (f"was {'not run' if str(outcome.error).startswith('not run') else 'stopped'}: the calls of this "
                f"question used up the {limit:g} s the check gives it; the reference answers take milliseconds, "
                "so look for a slow loop")
    return (f"was stopped after {limit:g} s, the check's time limit for one call: the reference answer takes "
            "milliseconds here, so look for an endless loop, or a Python loop over many elements that NumPy "
            "does at once")


def kept_running(name: str, collected: dict) -> str:
    """The message for a probe whose calls would not stop, so that the inline check ended the copy of the
    session that ran them (``posenc.exercises.probe.collect_apart``)."""
    seconds, limit = collected.get("seconds"), collected.get("limit")
    took = f" after {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
    ended = f"the check ended the copy of your session that ran it{took} (your own session is as it was)"
    if isinstance(limit, (int, float)):
        return (f"a call of `{name}` went on past {limit:g} s, the check's time limit for one call, though the "
                "check stopped it again and again: your code seems to catch every exception, the check's stop "
                f"included (`except BaseException:` or a bare `except:`), so {ended}. Catch only the errors "
                "you expect, and look for an endless loop: the reference answers take milliseconds")
    return (f"a call of `{name}` was still running{took}, past the check's time limits, where no stop could "
            "reach it (a long computation inside NumPy or torch, signals blocked, or code that catches every "
            f"exception), so {ended.replace(took, '')}. The reference answers take milliseconds: look for a "
            "far larger computation than the question needs, or an endless loop")


def changed_inputs_message(call_text: str, names: Sequence[str], outcome: Outcome) -> str | None:
    """The message for a call that wrote into its inputs (None when it did not): which input, and how."""
    if not outcome.changed:
        return None
    hows = outcome.changes or [""] * len(outcome.changed)
    named = [key if isinstance(key, str) else (names[key] if key < len(names) else f"argument {key + 1}")
             for key in outcome.changed]
    if len(named) == 1:
        which, how = f"input `{named[0]}`", hows[0]
    else:
        which = "inputs " + " and ".join(f"`{name}`" for name in named)
        how = "; ".join(f"`{name}`: {text}" for name, text in zip(named, hows))
    return (f"{call_text} changed its {which} in place ({how}): the caller still needs it as it was "
            "(the next call, the next layer). Compute on a copy and leave the inputs as they were: "
            "`w = w / s` or `x = x + p` make new arrays, where `w /= s`, `x += p` and `x[...] = ...` write "
            "into the caller's")


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
    """The student assigns a value (a number, an array, a tuple) to a name. Numbers follow the rule for
    numbers (PRECISION; whole numbers exactly); a question whose answer may be estimated says how closely
    (``precision``)."""

    expected: Callable[[], Any] = None
    mistakes: Sequence[tuple[Callable[[], Any], str]] = ()
    precision: float = PRECISION

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
        if _close(got, expected, self.precision):
            return True, "correct"
        for wrong, message in self.mistakes:
            if _close(got, wrong(), PRECISION):
                return False, message
        if isinstance(expected, np.ndarray):
            try:
                values = array_of(got) if array_of(got) is not None else \
                    np.asarray(got) if isinstance(got, (list, tuple)) else None
            except ValueError:          # a ragged list
                values = None
            if values is None or not np.issubdtype(values.dtype, np.number):
                return False, f"`{self.name}` should hold {expected.size} numbers (a list or an array), not {_short(got)}"
            if values.size == expected.size and values.shape != expected.shape:
                flat = f": give a flat list of {expected.size} numbers" if expected.ndim == 1 else ""
                return False, f"`{self.name}` has shape {values.shape}; expected {expected.shape}{flat}"
            if values.shape != expected.shape:
                return False, f"`{self.name}` holds {values.size} numbers; expected {expected.size}"
        elif isinstance(expected, (int, float)) and (isinstance(got, bool) or not isinstance(got, (int, float))):
            return False, f"`{self.name}` should be a number, not {_short(got)}"
        return False, f"`{self.name}` = {_short(got)} is not right"


@dataclass
class ChoiceQuestion(Question):
    """The student picks options by letter: the one right option (``single``), or all that apply.

    ``options`` maps every letter to a sentence on that option: why it is right or wrong.

    * One right option: a wrong choice gets the sentence of the option chosen (a guesser learns only that
      this one is wrong, as a wrong try shows anyway), the right one its own sentence.
    * Several: the feedback must not be an oracle for the letters (one verdict per try lets a blind guesser
      through in a few tries, faster than a reader). Every wrong answer gets the same sentence, which lists
      ``ideas``, where each statement is decided: the table it reads or the chapter's section to reread
      (never the statement's crux, which would read off its verdict); a right answer gets every option's
      sentence, verdicts and reasons.
    """

    answer: str = ""
    options: dict = field(default_factory=dict)      # letter -> why the option is right or wrong
    single: bool = False
    ideas: dict = field(default_factory=dict)        # several answers: letter -> where it is decided

    def __post_init__(self):
        if not self.single and set(self.ideas) != set(self.options):
            raise ValueError(f"{self.qid}: a question with several right options needs an idea for every "
                             f"option (ideas for {sorted(self.ideas)}, options {sorted(self.options)})")

    @classmethod
    def from_statements(cls, statements: dict, verdicts: tuple[str, str] = ("supported", "not supported"),
                        **fields) -> "ChoiceQuestion":
        """A question on statements about a measurement: ``statements`` maps each letter to (right?, reason);
        the answer is every right letter, and each option's sentence starts with its verdict, ``verdicts`` =
        (for a right option, for a wrong one): "supported"/"not supported" for statements a measurement
        supports, words that answer the question for a single choice ("the best bet"/"not the best bet")."""
        right_word, wrong_word = verdicts
        return cls(answer="".join(letter for letter, (true, _) in statements.items() if true),
                   options={letter: f"{right_word if true else wrong_word}{'. ' if reason[:1].isupper() else ': '}"
                                    f"{reason}" for letter, (true, reason) in statements.items()}, **fields)

    def not_yet(self) -> str:
        """What every wrong answer of a question with several right options gets: where each statement is
        decided, no verdict."""
        ideas = "; ".join(f"({letter}) {idea}" for letter, idea in self.ideas.items())
        return ("not yet: at least one letter is wrong or missing. The check does not say which (a guess would "
                "be no shortcut): decide each statement again on its own. Where to look again: " + ideas)

    @property
    def mistakes(self) -> tuple:
        """What the Common mistakes page lists: the one sentence every wrong answer gets (several right
        options), and nothing for one right option, whose wrong options' sentences, listed side by side,
        would name the right one by elimination: never a key."""
        return () if self.single else ((None, self.not_yet()),)

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
        if self.single:
            (letter,) = chosen
            return letter == self.answer, (f"correct: {self.options[letter]}" if letter == self.answer
                                           else f"({letter}) {self.options[letter]}")
        if chosen != frozenset(self.answer):
            return False, self.not_yet()
        return True, "correct. " + " ".join(f"({letter}) {text}" for letter, text in self.options.items())


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


def _close(got, expected, precision) -> bool:
    """Whether a value answer is ``expected`` by the rule for numbers (whole numbers exactly)."""
    if isinstance(expected, np.ndarray):
        values = array_of(got)
        if values is None and isinstance(got, (list, tuple)):
            try:
                values = np.asarray(got, dtype=np.float64)
            except (TypeError, ValueError):
                return False
        return (values is not None and (np.issubdtype(values.dtype, np.number) or values.dtype == bool)
                and within(values, expected, precision=precision))
    if isinstance(got, bool) or isinstance(expected, bool):
        return got == expected
    if isinstance(expected, int) and isinstance(got, (int, float)):
        return got == expected
    if isinstance(expected, float) and isinstance(got, (int, float)):
        return within(float(got), expected, precision=precision)
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
    text = _shown(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _shown(value: Any, depth: int = 0) -> str:
    """A student's value in words and numbers, with no internal class names (recursively in lists and
    tuples)."""
    if isinstance(value, str) and len(value) > 60:
        value = value[:60]                     # (repr of the whole of a long text would copy it)
    if isinstance(value, np.ndarray):
        return f"<array of shape {value.shape}>"
    if isinstance(value, TypedValue):
        if value.type_name == "torch.Tensor" and isinstance(value.value, np.ndarray):
            return f"<torch tensor of shape {tuple(value.value.shape)}>"
        return value.value if isinstance(value.value, str) else kind_of(value)
    if isinstance(value, (list, tuple)) and depth < 3:
        items = ", ".join(_shown(v, depth + 1) for v in value[:12]) + (", ..." if len(value) > 12 else "")
        return f"[{items}]" if isinstance(value, list) else f"({items}{',' if len(value) == 1 else ''})"
    return repr(value)


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


# The inline check's time limits: one call of the student's code, and all the calls of one question. The
# references take milliseconds; an endless loop must not hang the notebook (the batch grader has its own).
INLINE_LIMITS = {"call_seconds": 2.0, "total_seconds": 10.0}


class Checker:
    """The ``check`` object of an exercise notebook: ``check("q1")`` prints one line of feedback.

    Each call of the student's code has a time limit (INLINE_LIMITS), and in IPython a graded object that
    a failed run of its cell left in place is named, not graded (``posenc.exercises.history``)."""

    def __init__(self, exercise_set: ExerciseSet):
        from posenc.exercises import history

        self.exercise_set = exercise_set
        self.history = history.watch(q.name for q in exercise_set.questions)

    def result(self, question: Question, namespace: dict) -> Result:
        """The inline verdict on one question: graded within the limits, unless its object is stale."""
        stale = self.history.predates(question.name, namespace) if self.history else None
        if stale is not None:
            return Result(question.qid, FAILED, 0, question.points, stale.message(question.name), question.private)
        return question.grade(namespace, limits=INLINE_LIMITS)

    def __call__(self, qid: str, namespace: dict | None = None) -> None:
        print(self.result(self.exercise_set.question(qid), namespace or _caller_globals()).line())

    def summary(self, namespace: dict | None = None) -> None:
        """Grade every question and print the lines and the total."""
        namespace = namespace or _caller_globals()
        results = [self.result(q, namespace) for q in self.exercise_set.questions]
        for r in results:
            print(r.line())
        total = sum(r.points for r in results)
        print(f"Total: {total:g}/{self.exercise_set.max_points:g}")

    def __repr__(self) -> str:
        return f"<check for exercise set {self.exercise_set.set_id}: {self.exercise_set.title}>"


# What a graded answer may import (the grader's environment: the package's run-time dependencies and its
# torch extra, pyproject.toml; tests/test_grade_units.py holds this list to it), and packages Colab has that
# the grader does not.
GRADED_PACKAGES = ("NumPy", "torch", "matplotlib", "the course's `posenc`")
NOT_GRADED_EXAMPLES = ("SciPy", "pandas")


def checking_rules() -> str:
    """How the checks judge, for the top of every exercise notebook (``{{ posenc.exercises.framework:
    checking_rules }}`` in its source): the rules' numbers come from the constants the checks use."""
    call, total = INLINE_LIMITS["call_seconds"], INLINE_LIMITS["total_seconds"]
    margin = f"$10^{{{round(math.log10(PRECISION))}}}$"
    rules = [
        f"- **Numbers.** Your numbers are compared with a float64 reference. Each value may be off by {margin} "
        f"of its own size plus {margin} of the largest value in your answer: float32 arithmetic meets that, so "
        "float64 is needed only where a question asks for it. Counts, positions and indices must be exact. "
        "When values are off, the check shows the one furthest outside that margin.",
        "- **Arrays.** Where a question asks for a NumPy array, a torch tensor with the same values passes too.",
        "- **Inputs.** Leave the arrays and tensors your function receives as they were (compute on copies: "
        "`x = x + p`, not `x += p`): the check tests that they are unchanged after every call.",
        "- **Choices.** Where several letters are right, a wrong answer is told where each statement is decided "
        "(the table, or the chapter's section to reread), not which letter is wrong: decide each one on its own.",
        f"- **Time.** The check stops a call of your code after {call:g} s, and a question whose calls take "
        f"{total:g} s together: the reference answers take milliseconds. On Linux (Colab, Binder) it runs "
        "your code in a copy of your session, which it ends when a call will not stop: what your code "
        "prints is shown, what it changes in your variables is not kept.",
        "- **Up to date.** When the cell that defines your answer failed the last time you ran it, the check "
        "says so instead of grading the version of an earlier run.",
        f"- **Imports.** Your lecturer's grader runs your answers with {', '.join(GRADED_PACKAGES)} and the "
        "Python standard library. Other packages are not there, even where this notebook runs with them: "
        f"an answer that imports {' or '.join(NOT_GRADED_EXAMPLES)} (both in Colab) passes `check` here and "
        "fails in the grader.",
    ]
    lines = [textwrap.fill(rule, width=110, subsequent_indent="  ", break_on_hyphens=False) for rule in rules]
    return "\n".join(["How `check` judges, in every exercise notebook:", "", *lines])


def _caller_globals() -> dict:
    frame = inspect.currentframe()
    try:
        return frame.f_back.f_back.f_globals
    finally:
        del frame
