"""The exercise-check framework shared by the inline ``check("q1")`` and the batch grader.

A question is judged in two steps that may run in two different processes:

* ``collect``: runs where the student's code lives. It only *calls* the student's object on inputs the
  question chooses and records what came back (values, exceptions), as plain data.
* ``judge``: runs in the grading process. It compares the collected data with the reference and names
  the likely mistake. Nothing the student defines takes part in the comparison.

Inline feedback runs both steps in the notebook; ``python -m posenc.grader`` runs ``collect`` inside the
student's kernel and ``judge`` in the parent process.
"""

from __future__ import annotations

import base64
import inspect
import json
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

PASSED, FAILED, NOT_ATTEMPTED, MISSING = "passed", "failed", "not attempted", "missing"


class NotAttempted(Exception):
    """Raised by ``collect`` when the answer is still the stub."""


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
# Outcomes of calling student code, as plain data


@dataclass
class Outcome:
    """What one call of the student's code produced: a value or an exception."""

    value: Any = None
    error: str | None = None          # "ValueError: message" when the call raised
    error_type: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def call_student(func: Callable, *args, **kwargs) -> Outcome:
    """Call student code, turning any exception into data (NotImplementedError means: not attempted)."""
    start = time.perf_counter()
    try:
        value = func(*args, **kwargs)
    except NotImplementedError:
        raise NotAttempted()
    except Exception as exc:  # student code may raise anything; report it, never crash the check
        return Outcome(error=f"{type(exc).__name__}: {exc}", error_type=type(exc).__name__,
                       seconds=time.perf_counter() - start)
    return Outcome(value=value, seconds=time.perf_counter() - start)


def to_plain(value: Any) -> Any:
    """Turn a student's return value into plain data (numpy arrays, numbers, strings, lists, dicts).

    Torch tensors become numpy arrays but keep a note of their type, so judges can insist on one.
    """
    type_name = type(value).__module__ + "." + type(value).__qualname__
    if type_name.startswith("torch.") and hasattr(value, "detach"):
        return TypedValue("torch.Tensor", value.detach().cpu().numpy().copy())
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(to_plain(v) for v in value)
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return TypedValue(type_name, repr(value)[:200])


@dataclass
class TypedValue:
    """A value whose original Python type matters to the judge (a tensor, an unexpected object)."""

    type_name: str
    value: Any


# ---------------------------------------------------------------------------------------------------
# JSON encoding of collected data, for the trip from the student's kernel to the grader


def encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return {"__repr__": repr(obj)[:200]}
        data = np.ascontiguousarray(obj)
        return {"__ndarray__": base64.b64encode(data.tobytes()).decode("ascii"),
                "dtype": data.dtype.str, "shape": list(data.shape)}
    if isinstance(obj, Outcome):
        return {"__outcome__": True, "value": encode(obj.value), "error": obj.error,
                "error_type": obj.error_type, "seconds": obj.seconds}
    if isinstance(obj, TypedValue):
        return {"__typed__": obj.type_name, "value": encode(obj.value)}
    if isinstance(obj, tuple):
        return {"__tuple__": [encode(v) for v in obj]}
    if isinstance(obj, list):
        return [encode(v) for v in obj]
    if isinstance(obj, dict):
        return {"__dict__": [[str(k), encode(v)] for k, v in obj.items()]}
    if isinstance(obj, float) and not np.isfinite(obj):
        return {"__float__": repr(obj)}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, complex):
        return {"__complex__": [obj.real, obj.imag]}
    return {"__repr__": repr(obj)[:200]}


def decode(obj: Any) -> Any:
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__ndarray__" in obj:
        raw = base64.b64decode(obj["__ndarray__"])
        return np.frombuffer(raw, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
    if "__outcome__" in obj:
        return Outcome(value=decode(obj["value"]), error=obj["error"], error_type=obj["error_type"],
                       seconds=obj["seconds"])
    if "__typed__" in obj:
        return TypedValue(obj["__typed__"], decode(obj["value"]))
    if "__tuple__" in obj:
        return tuple(decode(v) for v in obj["__tuple__"])
    if "__dict__" in obj:
        return {k: decode(v) for k, v in obj["__dict__"]}
    if "__float__" in obj:
        return float(obj["__float__"])
    if "__complex__" in obj:
        return complex(*obj["__complex__"])
    if "__repr__" in obj:
        return TypedValue("object", obj["__repr__"])
    raise ValueError(f"cannot decode {obj!r:.80}")


def dumps(obj: Any) -> str:
    return json.dumps(encode(obj))


def loads(text: str) -> Any:
    return decode(json.loads(text))


# ---------------------------------------------------------------------------------------------------
# Comparing arrays and naming mistakes


def describe_mismatch(got: Any, expected: np.ndarray, *, rtol: float = 1e-7, atol: float = 1e-9,
                      what: str = "result", dtype: Any = None) -> str | None:
    """None when ``got`` matches ``expected``; otherwise a sentence saying how it differs."""
    if isinstance(got, TypedValue):
        return f"the {what} is a {got.type_name}; return a numpy array"
    if not isinstance(got, np.ndarray):
        return f"the {what} is a {type(got).__name__}, not a numpy array"
    if got.shape != expected.shape:
        hint = ""
        if got.shape == expected.shape[::-1] and got.ndim == 2:
            hint = " (transposed: rows are positions, columns are dimensions)"
        return f"the {what} has shape {got.shape}; expected {expected.shape}{hint}"
    if not np.issubdtype(got.dtype, np.number) and got.dtype != bool:
        return f"the {what} has dtype {got.dtype}; expected numbers"
    if expected.size and not np.allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol):
        with np.errstate(invalid="ignore"):
            diff = np.abs(got.astype(np.float64) - expected)
        diff = np.where(np.isnan(diff), np.inf, diff)
        where = np.unravel_index(int(np.argmax(diff)), diff.shape)
        return (f"the {what} is wrong at index {tuple(int(w) for w in where)}: expected "
                f"{expected[where]:.6g}, got {float(got[where]):.6g}")
    if dtype is not None and got.dtype != np.dtype(dtype):
        return f"the values are right but the dtype is {got.dtype}; expected {np.dtype(dtype)}"
    return None


def matches(got: Any, expected: Any, rtol: float = 1e-6, atol: float = 1e-8) -> bool:
    """Loose equality used to recognise a known mistake."""
    if isinstance(got, np.ndarray) or isinstance(expected, np.ndarray):
        if not (isinstance(got, np.ndarray) and isinstance(expected, np.ndarray)):
            return False
        if got.shape != expected.shape or not (np.issubdtype(got.dtype, np.number) or got.dtype == bool):
            return False
        return bool(np.allclose(got.astype(np.float64), expected, rtol=rtol, atol=atol))
    if isinstance(got, (int, float)) and isinstance(expected, (int, float)) and not isinstance(got, bool):
        return bool(np.isclose(got, expected, rtol=rtol, atol=atol))
    return got == expected


@dataclass
class Mistake:
    """A known wrong answer: a variant of the reference and the message that names it."""

    message: str
    variant: Callable[..., Any]


def name_mistake(mistakes: Sequence[Mistake], probes: Sequence[tuple], outcomes: Sequence[Outcome],
                 **match_kwargs) -> str | None:
    """Message of the first known mistake whose variant reproduces every answer the student gave."""
    for mistake in mistakes:
        compared = 0
        for args, outcome in zip(probes, outcomes):
            if not outcome.ok:
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

    def collect(self, obj: Any, seed: int = 0) -> Any:      # runs with the student's code
        raise NotImplementedError

    def judge(self, collected: Any, seed: int = 0) -> tuple[bool, str]:   # runs in the grader
        raise NotImplementedError

    # The two steps together, with the bookkeeping of statuses and points.
    def collect_from(self, namespace: dict, seed: int = 0) -> dict:
        if self.name not in namespace:
            return {"status": MISSING}
        try:
            return {"status": "collected", "data": self.collect(namespace[self.name], seed)}
        except NotAttempted:
            return {"status": NOT_ATTEMPTED}
        except Exception as exc:  # a collector must never take the notebook down
            return {"status": "error", "error": f"{type(exc).__name__}: {exc}",
                    "trace": traceback.format_exc(limit=3)}

    def result_from(self, collected: dict, seed: int = 0) -> Result:
        status = collected.get("status")
        if status == MISSING:
            return Result(self.qid, MISSING, 0, self.points,
                          f"`{self.name}` is not defined: run the cell where you define it first",
                          self.private)
        if status == NOT_ATTEMPTED:
            return Result(self.qid, NOT_ATTEMPTED, 0, self.points,
                          f"not attempted yet: replace the placeholder in `{self.name}` with your answer",
                          self.private)
        if status != "collected":
            return Result(self.qid, FAILED, 0, self.points,
                          collected.get("error") or f"could not be checked ({status})", self.private)
        try:
            passed, message = self.judge(collected["data"], seed)
        except Exception as exc:  # malformed data from a tampered kernel must not crash the grader
            passed, message = False, f"the answer could not be judged ({type(exc).__name__}: {exc})"
        if passed:
            return Result(self.qid, PASSED, self.points, self.points, message, self.private)
        return Result(self.qid, FAILED, 0, self.points, message, self.private)

    def grade(self, namespace: dict, seed: int = 0) -> Result:
        """Collect and judge in this process (inline feedback and tests)."""
        return self.result_from(self.collect_from(namespace, seed), seed)

    def request(self, seed: int = 0) -> dict | None:
        """What to collect, as plain data for :func:`collect_request`; None when ``collect`` is custom.

        A request names the student's object and the inputs to give it, and nothing else: the
        reference, the mistakes and the judge stay in the grading process. A question whose
        ``collect`` does more than call or read one name returns None, and the grader runs its
        ``collect_from`` in the student's process instead.
        """
        return None


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

    def collect(self, obj, seed=0):
        if not callable(obj):
            raise TypeError(f"`{self.name}` should be a function, but it is a {type(obj).__name__}")
        outcomes = []
        for args in self.probes(seed):
            outcome = call_student(obj, *_copy_args(args))
            outcome.value = to_plain(outcome.value)
            outcomes.append(outcome)
        return outcomes

    def request(self, seed=0):
        if type(self).collect is not FunctionQuestion.collect:
            return None
        return {"kind": "call", "name": self.name, "args": [tuple(a) for a in self.probes(seed)]}

    def judge(self, outcomes, seed=0):
        probes = self.probes(seed)
        if len(outcomes) != len(probes) or not all(isinstance(o, Outcome) for o in outcomes):
            return False, "the collected answers do not match the questions asked (was the check tampered with?)"
        compare = self.compare or (lambda got, expected, args: describe_mismatch(got, expected))
        for args, outcome in zip(probes, outcomes):
            call = f"{self.name}({self.describe_args(args)})"
            if not outcome.ok:
                return False, f"{call} raised {outcome.error}{self.error_hint(args)}"
            problem = compare(outcome.value, self.reference(*args), args)
            if problem:
                named = name_mistake(self.mistakes, probes, outcomes)
                if named:
                    return False, f"{named} (seen in {call})"
                return False, f"{call}: {problem}"
        slowest = max((o.seconds for o in outcomes), default=0.0)
        if self.slow_seconds is not None and slowest > self.slow_seconds:
            return True, (f"correct, but one call took {slowest:.2f} s: a vectorised version "
                          "(no Python loop over positions) is much faster")
        return True, "correct"


@dataclass
class ValueQuestion(Question):
    """The student assigns a value (a number, an array, a tuple) to a name."""

    expected: Callable[[], Any] = None
    mistakes: Sequence[tuple[Callable[[], Any], str]] = ()
    rtol: float = 1e-6
    atol: float = 1e-9

    def collect(self, obj, seed=0):
        if obj is None or obj is Ellipsis:
            raise NotAttempted()
        return to_plain(obj)

    def request(self, seed=0):
        if type(self).collect is not ValueQuestion.collect:
            return None
        return {"kind": "value", "name": self.name}

    def judge(self, got, seed=0):
        expected = self.expected()
        if _close(got, expected, self.rtol, self.atol):
            return True, "correct"
        for wrong, message in self.mistakes:
            if _close(got, wrong(), self.rtol, self.atol):
                return False, message
        return False, f"`{self.name}` = {_short(got)} is not right"


def collect_request(namespace: dict, request: dict) -> dict:
    """Carry out a :meth:`Question.request` where the student's code lives; same result as ``collect_from``.

    Only calls the student's function on the request's inputs (``"call"``) or reads a value
    (``"value"``), and returns plain data: this is the strict entry point a grading kernel runs.
    """
    name = request["name"]
    if name not in namespace:
        return {"status": MISSING}
    obj = namespace[name]
    try:
        if request["kind"] == "call":
            if not callable(obj):
                raise TypeError(f"`{name}` should be a function, but it is a {type(obj).__name__}")
            outcomes = []
            for args in request["args"]:
                outcome = call_student(obj, *_copy_args(tuple(args)))
                outcome.value = to_plain(outcome.value)
                outcomes.append(outcome)
            return {"status": "collected", "data": outcomes}
        if request["kind"] == "value":
            if obj is None or obj is Ellipsis:
                raise NotAttempted()
            return {"status": "collected", "data": to_plain(obj)}
        raise ValueError(f"unknown request kind {request['kind']!r}")
    except NotAttempted:
        return {"status": NOT_ATTEMPTED}
    except Exception as exc:  # like collect_from: report, never crash
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc(limit=3)}


def _close(got, expected, rtol, atol) -> bool:
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray):
        return matches(np.asarray(got) if isinstance(got, (list, tuple)) else got,
                       np.asarray(expected, dtype=np.float64), rtol, atol)
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)) and not isinstance(got, bool):
        return bool(np.isclose(got, expected, rtol=rtol, atol=atol))
    return got == expected


def _copy_args(args: tuple) -> tuple:
    """Give the student fresh copies, so mutating an input cannot change the grader's probes."""
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"<array of shape {value.shape}>"
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
