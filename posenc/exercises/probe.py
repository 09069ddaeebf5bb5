"""Probing a student's answer: the only code of the exercises that runs next to the student's code.

A question never runs its own code where the student's code lives. It writes a **probe**: plain data that
names the student's object and lists what to do with it (call it on these inputs, build the class with
these sizes, report its parameters, ...). :func:`collect` carries it out and returns plain data: values,
exceptions as text, shapes. The question's ``judge`` then compares that data with its reference, in the
grading process for the batch grader, or right after for the inline ``check("q1")``: one path for both.

Nothing here knows a reference answer or a judge, and nothing here decides a score; a student who
replaces this module in their own process can only change what their answer reports, which the judge
checks against behaviour on inputs the student did not choose.

A probe::

    {"name": "sinusoidal_encoding", "steps": [
        {"op": "call", "args": [7, 6]},
        {"op": "call", "args": [13, 5]},
    ]}

Steps (each gives one entry of the result's ``data``, in order):

* ``{"op": "value"}``: the object itself as plain data (``None`` or ``...`` means: not attempted).
* ``{"op": "call", "args": [...], "kwargs": {...}, "target": var, "store": var}``: call the answer (or a
  stored object, ``target``) and give back an :class:`Outcome`; ``store`` keeps the raw return value
  (e.g. a module the student's class built) for later steps. ``"check_inputs": true`` reports in
  ``Outcome.changed`` which array or tensor arguments the call wrote into, and in ``Outcome.changes`` how;
  ``"watch": [names]`` reports in ``Outcome.called`` which of these NumPy functions the array arguments (or
  arrays computed from them) were given to, and ``"watch_products": [positions]`` when all of one of these
  array arguments met a matrix product at once (``WHOLE`` and its position); ``"stand_ins": {name: spec}`` replaces helpers the answer calls
  by the course library's versions during the call (``library_stand_in``). A stored object that could not
  be made turns later steps that use it into ``{"skipped": ...}``.
* ``{"op": "structure", "target": var}``: names and shapes of a torch module's parameters (with
  ``requires_grad``), buffers and plain tensor attributes.
* ``{"op": "assign", "target": var, "numel": n, "values": array, "store": var}``: find the module's
  parameter or buffer holding ``n`` numbers, overwrite it with ``values``, report where it was found
  (``{"kind", "name", "shape"}`` or None) and keep the tensor as ``store``.
* ``{"op": "backward", "output": var, "wrt": var}``: ``output.sum().backward()`` and the gradient that
  reached the tensor ``wrt`` (None when none did).
* ``{"op": "group", "steps": [...]}``: the sub-steps' results as one list entry.

A probe may set ``"limits": {"call_seconds": s, "total_seconds": t}`` (the inline ``check`` does): a call
still running after ``s`` seconds, or once the probe's calls took ``t`` seconds together, is stopped, and
its Outcome has ``error_type`` "TimeLimit" (the batch grader's kernel has limits of its own).

Arguments are plain data, with three markers: ``{"__tensor__": array}`` becomes a torch tensor,
``{"__var__": name}`` a stored object, and a :class:`LibObject` an object of the course's library
(``posenc.lib`` only), e.g. an attention layer the student's function is asked to examine.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import io
import json
import numbers
import os
import select
import signal
import sys
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MISSING, NOT_ATTEMPTED = "missing", "not attempted"
ANSWER = "answer"                      # the variable that holds the student's object
TIME_LIMIT = "TimeLimit"               # the error_type of a call that a probe's time limit stopped


class NotAttempted(Exception):
    """The answer is still the stub (it raised NotImplementedError, or is None or ...)."""


# ---------------------------------------------------------------------------------------------------
# Plain data


@dataclass
class Outcome:
    """What one call of the student's code produced: a value or an exception."""

    value: Any = None
    error: str | None = None          # "ValueError: message" when the call raised
    error_type: str | None = None
    seconds: float = 0.0
    changed: list | None = None       # positions (or keyword names) of arguments the call wrote into (when asked)
    changes: list | None = None       # how each of them changed, in words ("every entry set to 0")
    raised_in: str | None = None      # for a NotImplementedError: the function whose code raised it
    error_kinds: list | None = None   # the names of the exception's classes, its own first (ValueError subclasses)
    called: list | None = None        # the watched NumPy functions the arguments were given to (when asked)
    limit: float | None = None        # for a TimeLimit: the limit, in seconds, that stopped the call
    cpu_seconds: float | None = None  # the CPU time the calling thread spent in the call (a busy machine's
                                      # waiting not counted, as wall-clock ``seconds`` counts it)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class TypedValue:
    """A value whose original Python type matters to the judge (a tensor, an unexpected object)."""

    type_name: str
    value: Any


@dataclass(frozen=True, eq=False)
class LibObject:
    """An object of the course's library, made where it is needed: ``build()`` here, or by the kernel.

    ``target`` is ``"posenc.lib.module:name"``; ``args`` and ``kwargs`` are plain data.
    """

    target: str
    args: tuple = ()
    kwargs: tuple = ()                 # (key, value) pairs

    def build(self):
        module_name, _, attribute = self.target.partition(":")
        if not module_name.startswith("posenc.lib.") or not attribute.isidentifier():
            raise ValueError(f"a probe may only build objects of the course's library, not {self.target!r}")
        factory = getattr(importlib.import_module(module_name), attribute)
        return factory(*self.args, **dict(self.kwargs))

    def __repr__(self) -> str:
        return f"<{self.target.partition(':')[2]}{self.args!r}>"


class _TimeUp(BaseException):
    """Raised in the student's code when a call's time is up (a BaseException: ``except Exception`` in the
    student's code does not catch it)."""


# How long a call may go on after its time limit, the stop raised in it again every 0.1 s, before the copy of
# the session that runs it (``collect_apart``) is ended: code that catches every exception (``except
# BaseException:``, a bare ``except:``) catches the stop too.
ESCAPE_SECONDS = 1.0
STOPPED = "stopped"                    # the status of a probe whose copy of the session was ended
_APART: dict = {}                      # in the copy that ``collect_apart`` forked: {"pipe": fd to the parent}


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """Stop the code inside after ``seconds`` of wall-clock time (a SIGALRM raising _TimeUp, repeated every
    0.1 s in case the student's code catches it; in a copy made by ``collect_apart``, a call still running
    ESCAPE_SECONDS later ends the copy). Only in the main thread of a system with setitimer, as in Jupyter
    and Colab; elsewhere, and with no ``seconds``, no limit."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    start = time.perf_counter()

    def stop(signum, frame):
        over = time.perf_counter() - start
        if _APART and over > seconds + ESCAPE_SECONDS:
            _answer_parent({"status": STOPPED, "seconds": over, "limit": seconds})
        raise _TimeUp()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def call_student(func, *args, seconds: float | None = None, **kwargs) -> Outcome:
    """Call student code, turning any exception into data, within ``seconds`` when given. A
    NotImplementedError is data too (error_type "NotImplementedError"): :func:`collect` calls the answer not
    attempted only when no call of the probe got past it, so code that raises it for some inputs only (odd
    widths, say) is judged on them."""
    start, cpu = time.perf_counter(), time.thread_time()
    try:
        with _time_limit(seconds):
            value = func(*args, **kwargs)
    except _TimeUp:
        return Outcome(error=f"stopped after {seconds:g} s", error_type=TIME_LIMIT,
                       seconds=time.perf_counter() - start, limit=seconds)
    except NotImplementedError as exc:        # a placeholder: say whose, it may be a helper's
        return Outcome(error=f"NotImplementedError: {_text(exc)}".rstrip(": "), error_type="NotImplementedError",
                       seconds=time.perf_counter() - start, raised_in=_raised_in(exc))
    except Exception as exc:  # student code may raise anything; report it, never crash the probe
        return Outcome(error=f"{type(exc).__name__}: {_text(exc)}", error_type=type(exc).__name__,
                       seconds=time.perf_counter() - start, error_kinds=_kinds(exc))
    return Outcome(value=value, seconds=time.perf_counter() - start, cpu_seconds=time.thread_time() - cpu)


def _kinds(exc: BaseException) -> list[str]:
    """The names of the exception's classes, from its own to Exception: a judge that asks for a ValueError
    accepts a subclass of it."""
    names = []
    for cls in type(exc).__mro__:
        if cls in (BaseException, object):
            break
        names.append(str(getattr(cls, "__name__", "?"))[:100])
    return names[:20]


def _raised_in(exc: BaseException) -> str | None:
    """The (qualified) name of the function whose code raised ``exc``: the innermost frame."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    code = tb.tb_frame.f_code
    return str(getattr(code, "co_qualname", code.co_name))[:100]


def _snapshot(value) -> np.ndarray | None:
    """A copy of an array or tensor argument as it was before the call (None for anything else)."""
    if isinstance(value, np.ndarray):
        return np.array(value)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        try:
            return value.detach().cpu().numpy().copy()
        except Exception:
            return None
    return None


def _same_array(now, before: np.ndarray) -> bool:
    try:
        now = _snapshot(now)
        return now is not None and bool(np.array_equal(now, before, equal_nan=before.dtype.kind in "fc"))
    except Exception:
        return False


def _mutation(now, before: np.ndarray) -> str:
    """How an argument changed during the call, in words, for the message that names the mutation."""
    after = _snapshot(now)
    if after is None or after.shape != before.shape:
        return f"its shape changed from {before.shape} to {getattr(after, 'shape', '?')}"
    if not (np.issubdtype(before.dtype, np.number) and np.issubdtype(after.dtype, np.number)):
        return f"{int(np.sum(after != before))} of its {before.size} entries overwritten"
    old, new = before.astype(np.float64), after.astype(np.float64)
    differs = ~((new == old) | (np.isnan(new) & np.isnan(old)))
    count = f"{int(np.sum(differs))} of its {old.size} entries"
    with np.errstate(all="ignore"):
        if not new.any():
            return "every entry set to 0"
        step = new - old
        largest = float(np.nan_to_num(np.abs(step[differs]), nan=np.inf).max(initial=0.0))
        size = float(np.abs(old[np.isfinite(old)]).max(initial=0.0))
        if largest <= 1e-6 * size:
            return (f"{count} changed, by at most {largest:.2g}, a rounding error's size: a round trip such as "
                    "`x *= s; x /= s` or `x += 1; x -= 1` does not give x back exactly")
        nonzero = old != 0
        ratio = new[nonzero] / old[nonzero]
        if ratio.size and np.allclose(ratio, ratio[0], rtol=1e-9, atol=0) and not new[~nonzero].any():
            return f"every entry multiplied by {ratio[0]:.4g}"
        if np.allclose(step, step.flat[0], rtol=1e-9, atol=0):
            return f"{step.flat[0]:.4g} added to every entry"
    return f"{count} changed"


# The NumPy functions that make a matrix product (besides the operator @ and the method .dot).
PRODUCTS = ("matmul", "dot", "einsum", "tensordot", "inner", "vdot", "multi_dot")
WHOLE = "whole in a product: "         # how ``Outcome.called`` names an argument whose whole met a product


class _Watched(np.ndarray):
    """An argument that notes which of the watched NumPy functions it is given to (e.g. np.concatenate,
    where a question asks for a result without building a concatenation), and, for an argument watched
    whole (``_whole``: its key and size), when all of its entries at once meet a matrix product (``concat @ w``
    with the whole of w, where the question asks to split w into blocks). Arrays computed from it (slices,
    sums) note it too; ``np.asarray`` copies and torch tensors escape, which is fine: this names a mistake, it
    is no sandbox."""

    _watch: tuple = ()
    _seen: list | None = None
    _whole: tuple | None = None

    def __array_finalize__(self, obj):
        self._watch = getattr(obj, "_watch", ())
        self._seen = getattr(obj, "_seen", None)
        self._whole = getattr(obj, "_whole", None)

    def _note(self, name: str) -> None:
        if self._seen is not None and name not in self._seen:
            self._seen.append(name)

    def __array_function__(self, func, types, args, kwargs):
        name = getattr(func, "__name__", "")
        if name in self._watch:
            self._note(name)
        if name in PRODUCTS:
            _note_whole([*args, *kwargs.values()])
        return super().__array_function__(func, types, args, kwargs)

    def __matmul__(self, other):
        _note_whole([self, other])
        return super().__matmul__(other)

    def __rmatmul__(self, other):
        _note_whole([other, self])
        return super().__rmatmul__(other)

    def dot(self, other, *args, **kwargs):
        _note_whole([self, other])
        return super().dot(other, *args, **kwargs)


def _note_whole(operands) -> None:
    """Note every operand of a matrix product (one level into lists: einsum's, multi_dot's) that holds all
    the entries of an argument watched whole."""
    for operand in operands:
        for item in operand if isinstance(operand, (list, tuple)) else (operand,):
            whole = getattr(item, "_whole", None) if isinstance(item, _Watched) else None
            if whole is not None and item.size == whole[1]:
                item._note(f"{WHOLE}{whole[0]}")


def _watched(array: np.ndarray, names: tuple, seen: list, whole_key=None) -> np.ndarray:
    view = array.view(_Watched)
    view._watch, view._seen = names, seen
    view._whole = None if whole_key is None else (whole_key, array.size)
    return view


def _text(exc: BaseException) -> str:
    try:
        return str(exc)[:1000]
    except Exception:
        return "(an exception whose message cannot be shown)"


def to_plain(value: Any, depth: int = 0) -> Any:
    """A student's return value as plain data (numpy arrays, numbers, strings, lists, tuples, dicts).

    Torch tensors become numpy arrays but keep a note of their type, so judges can insist on one;
    anything else becomes a TypedValue with its type's name and a short repr.
    """
    type_name = type(value).__module__ + "." + type(value).__qualname__
    if depth > 20:
        return TypedValue(type_name, "(nested too deeply)")
    if type_name.startswith("torch.") and hasattr(value, "detach"):
        return TypedValue("torch.Tensor", value.detach().cpu().numpy().copy())
    if isinstance(value, np.ndarray) and value.dtype == object:
        return _numbers_of(value)
    if type(value) is np.ndarray:
        return value.copy()
    if isinstance(value, np.ndarray):             # a subclass: keep only the data
        return np.array(value)
    if isinstance(value, np.generic):
        return value.item()
    if type(value) in (bool, int, float, complex, str) or value is None:
        return value
    if isinstance(value, numbers.Number) and not isinstance(value, (bool, complex, np.generic)) \
            and hasattr(value, "__float__"):
        try:                                   # a Fraction or a Decimal: the number it is
            return float(value)
        except (TypeError, ValueError, OverflowError):
            pass
    if type(value) in (list, tuple):
        return type(value)(to_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return {str(k): to_plain(v, depth + 1) for k, v in value.items()}
    if type(value) in (set, frozenset):               # no order: the judge must know it was a set
        items = [to_plain(v, depth + 1) for v in value]
        try:
            items = sorted(items)
        except TypeError:
            pass
        return TypedValue("builtins." + type(value).__name__, items)
    try:
        text = repr(value)[:200]
    except Exception:
        text = f"<{type_name}>"
    return TypedValue(type_name, text)


def _numbers_of(array: np.ndarray) -> np.ndarray:
    """An object array of real numbers (Fractions, Decimals, ints) as the float64 array it plainly is (as a
    tuple of Fractions is a tuple of floats); any other object array unchanged (the judge sees its repr)."""
    items = list(array.flat)
    if not all(isinstance(item, numbers.Real) and not isinstance(item, bool) for item in items):
        return np.array(array)
    try:
        return np.array([float(item) for item in items], dtype=np.float64).reshape(array.shape)
    except (TypeError, ValueError, OverflowError):
        return np.array(array)


# ---------------------------------------------------------------------------------------------------
# JSON encoding, for the trip between the grading process and the student's kernel (both ways)


def encode(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            return {"__repr__": repr(obj)[:200]}
        data = np.ascontiguousarray(obj)
        return {"__ndarray__": base64.b64encode(data.tobytes()).decode("ascii"),
                "dtype": data.dtype.str, "shape": list(data.shape)}
    if isinstance(obj, Outcome):
        encoded = {"__outcome__": True, "value": encode(obj.value), "error": obj.error,
                   "error_type": obj.error_type, "seconds": obj.seconds}
        for key in ("changed", "changes", "error_kinds", "called"):
            if getattr(obj, key) is not None:
                encoded[key] = [i if isinstance(i, int) else str(i) for i in getattr(obj, key)]
        for key in ("limit", "cpu_seconds"):
            if getattr(obj, key) is not None:
                encoded[key] = float(getattr(obj, key))
        return encoded
    if isinstance(obj, TypedValue):
        return {"__typed__": obj.type_name, "value": encode(obj.value)}
    if isinstance(obj, LibObject):
        return {"__lib__": obj.target, "args": encode(obj.args), "kwargs": encode(obj.kwargs)}
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
        lists = {key: [i if isinstance(i, int) else str(i) for i in obj[key]] if isinstance(obj.get(key), list)
                 else None for key in ("changed", "changes", "error_kinds", "called")}
        numbers = {key: float(obj[key]) if isinstance(obj.get(key), (int, float)) else None
                   for key in ("limit", "cpu_seconds")}
        return Outcome(value=decode(obj["value"]), error=obj["error"], error_type=obj["error_type"],
                       seconds=obj["seconds"], **numbers, **lists)
    if "__typed__" in obj:
        return TypedValue(obj["__typed__"], decode(obj["value"]))
    if "__lib__" in obj:
        return LibObject(obj["__lib__"], decode(obj["args"]), decode(obj["kwargs"]))
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


def round_trip(obj: Any) -> Any:
    """``obj`` as it arrives on the other side of the kernel's socket."""
    return loads(dumps(obj))


# ---------------------------------------------------------------------------------------------------
# Running a probe


@dataclass
class _Run:
    name: str                                        # the student's name for the answer
    variables: dict = field(default_factory=dict)
    call_seconds: float | None = None                # the time limit of one call (None: no limit)
    total_seconds: float | None = None               # of all the probe's calls together
    spent: float = 0.0                               # seconds the probe's calls took so far
    failed: dict = field(default_factory=dict)       # variable -> why it could not be made
    placeholders: int = 0                            # calls that raised NotImplementedError
    answered: int = 0                                # calls that returned or raised something else
    placeholder_in: str | None = None                # the function whose placeholder raised first
    stopped: float | None = None                     # the limit that stopped a call (later calls are not run)

    def argument(self, value):
        if isinstance(value, dict) and set(value) == {"__tensor__"}:
            import torch

            return torch.tensor(np.asarray(value["__tensor__"]))
        if isinstance(value, dict) and set(value) == {"__var__"}:
            return self.get(value["__var__"])
        if isinstance(value, LibObject):
            return value.build()
        if isinstance(value, np.ndarray):
            return value.copy()                # the student may write into it: give a fresh copy
        if isinstance(value, (list, tuple)):
            return type(value)(self.argument(v) for v in value)
        return value

    def get(self, name: str):
        if name in self.failed:
            raise _Skip(self.failed[name])
        return self.variables[name]

    def step(self, step: dict):
        op = step["op"]
        if op == "group":
            return [self.guarded(s) for s in step["steps"]]
        if op == "value":
            obj = self.get(step.get("target", ANSWER))
            if obj is None or obj is Ellipsis:
                raise NotAttempted()
            return to_plain(obj)
        if op == "call":
            target = self.get(step.get("target", ANSWER))
            if not callable(target):
                what = "a function" if step.get("target", ANSWER) == ANSWER else "callable"
                raise TypeError(f"`{self.name}` should be {what}, but it is a {type(target).__name__}")
            args = [self.argument(a) for a in step.get("args", ())]
            kwargs = {k: self.argument(v) for k, v in dict(step.get("kwargs", {})).items()}
            called = None
            if step.get("watch") or step.get("watch_products"):
                called, names = [], tuple(str(n) for n in step.get("watch") or ())
                whole = set(step.get("watch_products") or ())
                args = [_watched(a, names, called, i if i in whole else None) if isinstance(a, np.ndarray) else a
                        for i, a in enumerate(args)]
                kwargs = {k: _watched(v, names, called, k if k in whole else None) if isinstance(v, np.ndarray)
                          else v for k, v in kwargs.items()}
            inputs = [*enumerate(args), *kwargs.items()]
            before = {key: _snapshot(a) for key, a in inputs} if step.get("check_inputs") else {}
            outcome = self.timed_call(target, args, kwargs, step)
            changed = [key for key, a in inputs if before.get(key) is not None and not _same_array(a, before[key])]
            if step.get("check_inputs"):
                outcome.changed = changed
                outcome.changes = [_mutation(dict(inputs)[key], before[key]) for key in changed]
            outcome.called = called
            if outcome.error_type == "NotImplementedError" and outcome.error == "NotImplementedError":
                self.placeholders += 1       # the stub's bare raise; one with a message of its own is an answer's
                self.placeholder_in = self.placeholder_in or outcome.raised_in
            else:
                self.answered += 1
            if step.get("store"):
                if outcome.ok:
                    self.variables[step["store"]] = outcome.value
                else:
                    self.failed[step["store"]] = outcome.error
            outcome.value = to_plain(outcome.value) if step.get("report", True) else None
            return outcome
        if op == "structure":
            return _structure(self.get(step["target"]))
        if op == "assign":
            found = _assign(self.get(step["target"]), int(step["numel"]), np.asarray(step["values"]))
            if found is None:
                self.failed[step["store"]] = "no tensor of that size"
                return None
            tensor, where = found
            self.variables[step["store"]] = tensor
            return where
        if op == "backward":
            return _gradient(self.get(step["output"]), self.get(step["wrt"]))
        raise ValueError(f"unknown probe step {op!r}")

    def timed_call(self, target, args, kwargs, step) -> Outcome:
        """The student's call, with the helpers of earlier questions standing in, within the time left."""
        seconds, budget = self.call_seconds, False
        if self.stopped:                      # one call stopped is enough: the rest would be stopped too
            return Outcome(error="not run: an earlier call was stopped at the time limit", error_type=TIME_LIMIT,
                           limit=self.stopped)
        if self.total_seconds is not None:
            left = self.total_seconds - self.spent
            if left <= 0:
                return Outcome(error=f"not run: the calls before it used the {self.total_seconds:g} s of the check",
                               error_type=TIME_LIMIT, limit=self.total_seconds)
            budget = seconds is None or left < seconds
            seconds = left if budget else seconds
        saved = _stand_in(target, step.get("stand_ins") or {})
        try:
            outcome = call_student(target, *args, seconds=seconds, **kwargs)
        finally:
            _restore(target, saved)
        self.spent += outcome.seconds
        if budget and outcome.error_type == TIME_LIMIT:      # stopped by the probe's budget, not the call's limit
            outcome.error = f"stopped: the {self.total_seconds:g} s of the check ran out"
            outcome.limit = self.total_seconds
        if outcome.error_type == TIME_LIMIT:
            self.stopped = outcome.limit
        return outcome

    def guarded(self, step: dict):
        """A step inside a group: a missing input skips it instead of ending the probe."""
        try:
            return self.step(step)
        except _Skip as skip:
            return {"skipped": skip.reason}


class _Skip(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


_ABSENT = object()


def _stand_in(target, stand_ins: dict) -> dict:
    """Until :func:`_restore`, the helpers the student's function calls by these names (e.g. their
    ``t5_bucket`` of an earlier question) are the course library's versions, so that a later question is
    graded on its own merit. Returns what to restore."""
    namespace = getattr(target, "__globals__", None)
    if not stand_ins or not isinstance(namespace, dict):
        return {}
    made = {name: library_stand_in(name, spec) for name, spec in stand_ins.items()}   # all, before any goes in
    saved = {name: namespace.get(name, _ABSENT) for name in made}
    namespace.update(made)
    return saved


def _restore(target, saved: dict) -> None:
    namespace = getattr(target, "__globals__", None)
    for name, value in saved.items():
        if value is _ABSENT:
            namespace.pop(name, None)
        else:
            namespace[name] = value


def library_stand_in(name: str, spec: dict):
    """A function with the student's signature for ``name`` that calls a function of the course's library.

    ``spec = {"target": "posenc.lib.module:function", "params": [[student's name, library's name], ...]}``:
    positional and keyword arguments are bound by the student's names and passed by the library's; NumPy
    arrays become tensors on the way in and the result a NumPy array on the way out (a tensor when a
    tensor came in).
    """
    module_name, _, attribute = spec["target"].partition(":")
    if not module_name.startswith("posenc.lib.") or not attribute.isidentifier():
        raise ValueError(f"a stand-in may only be a function of the course's library, not {spec['target']!r}")
    function = getattr(importlib.import_module(module_name), attribute)
    params = [tuple(pair) for pair in spec["params"]]
    renamed = dict(params)

    def stand_in(*args, **kwargs):
        import torch

        if len(args) > len(params):
            raise TypeError(f"{name}() takes at most {len(params)} positional arguments ({len(args)} given)")
        bound = {library: value for (_, library), value in zip(params, args)}
        for key, value in kwargs.items():
            if key not in renamed:
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
            bound[renamed[key]] = value
        tensors_in = any(isinstance(v, torch.Tensor) for v in bound.values())
        bound = {k: torch.as_tensor(v) if isinstance(v, np.ndarray) else v for k, v in bound.items()}
        result = function(**bound)
        return result if tensors_in or not isinstance(result, torch.Tensor) else result.detach().numpy()

    stand_in.__name__ = name
    return stand_in


def _warning_lines(caught) -> list[str]:
    """The distinct warnings the student's code gave, as short lines (at most three)."""
    lines = []
    for item in caught:
        line = f"{item.category.__name__}: {_text(item.message)[:200]}"
        if line not in lines:
            lines.append(line)
    return lines[:3]


def collect_apart(namespace: dict, probe: dict) -> dict:
    """:func:`collect` in a forked copy of this process, for the inline check: a call that will not stop (it
    catches the time limit's stop, or runs in C code that no signal interrupts) is ended with its copy, and
    the student's own session goes on. What the copy printed is printed here; what it changed is not kept.
    Where fork is not safe (not Linux, CUDA in use, not the main thread), :func:`collect` here."""
    limits = probe.get("limits") if isinstance(probe.get("limits"), dict) else {}
    total = limits.get("total_seconds")
    if not isinstance(total, (int, float)) or not _can_fork():
        return collect(namespace, probe)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    reading, writing = os.pipe()
    with warnings.catch_warnings():          # Python 3.12 warns of fork with threads: the copy runs no thread
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:                                           # the copy: collect, answer, end
        os.close(reading)
        _APART["pipe"] = writing
        _one_thread_in_torch()
        _answer_parent(_collect_quietly(namespace, probe))
    os.close(writing)
    start = time.monotonic()
    try:
        text = _read_until(reading, start + float(total) + ESCAPE_SECONDS + 1.0)
    finally:                                             # an interrupt (the kernel's stop button) too
        os.close(reading)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if text is None:
        return {"status": STOPPED, "seconds": time.monotonic() - start, "limit": None}
    if not text:
        ended = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit status {os.WEXITSTATUS(status)}"
        return {"status": "error", "error": f"your code ended the process that ran it ({ended}) without an answer"}
    collected = loads(text)
    output = collected.pop("output", "") if isinstance(collected, dict) else ""
    if output:
        print(output, end="" if output.endswith("\n") else "\n")
    return collected


def _can_fork() -> bool:
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return False
    torch = sys.modules.get("torch")
    try:
        return not (torch is not None and torch.cuda.is_initialized())
    except Exception:
        return False


def _one_thread_in_torch() -> None:
    """In the copy: torch's OpenMP threads were not copied, and a parallel region would wait for them for
    ever once the session has used them; one thread needs none."""
    torch = sys.modules.get("torch")
    if torch is not None:
        with contextlib.suppress(Exception):
            torch.set_num_threads(1)


def _collect_quietly(namespace: dict, probe: dict) -> dict:
    """In the copy: collect, with what the student's code prints kept for the parent to print."""
    printed = io.StringIO()
    sys.stdout = sys.stderr = printed
    try:
        collected = collect(namespace, probe)
    except SystemExit as exc:
        collected = {"status": "error", "error": f"your code called sys.exit() (SystemExit: {_text(exc)})"}
    except BaseException as exc:   # noqa: BLE001  (the copy must answer whatever happened)
        collected = {"status": "error", "error": f"{type(exc).__name__}: {_text(exc)}"}
    collected["output"] = printed.getvalue()[:MAX_PRINTED]
    return collected


MAX_PRINTED = 20_000        # characters of the student's printing that the copy passes on


def _answer_parent(collected: dict) -> None:
    """In the copy: send ``collected`` to the parent and end, at once (no clean-up: the kernel's sockets and
    threads belong to the parent)."""
    try:
        data = dumps(collected).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(_APART["pipe"], view):]
    finally:
        os._exit(0)


def _read_until(fd: int, deadline: float) -> str | None:
    """Everything written to ``fd`` until the writer closes it, or None when ``deadline`` comes first."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks).decode()
        chunks.append(chunk)


def collect(namespace: dict, probe: dict) -> dict:
    """Carry out a probe on the student's namespace; plain data, never an exception.

    ``{"status": "collected", "data": [...]}``, or ``{"status": "missing"}`` when the name is not
    defined, ``{"status": "not attempted"}`` when the answer is still the stub, ``{"status": "error",
    "error": ...}`` when something else went wrong (e.g. a class where a function was asked for).
    """
    name = probe["name"]
    if name not in namespace:
        return {"status": MISSING}
    limits = probe.get("limits") if isinstance(probe.get("limits"), dict) else {}
    run = _Run(name, {ANSWER: namespace[name]}, **{key: float(limits[key]) for key in ("call_seconds", "total_seconds")
                                                   if isinstance(limits.get(key), (int, float)) and limits[key] > 0})
    with warnings.catch_warnings(record=True) as caught:    # the student's warnings: reported, not printed
        warnings.simplefilter("always")
        try:
            if probe.get("expect") == "class" and not isinstance(namespace[name], type):
                raise TypeError(f"`{name}` should be a class (an nn.Module subclass), but it is a "
                                f"{type(namespace[name]).__name__}")
            collected = {"status": "collected", "data": [run.step(step) for step in probe["steps"]]}
            if run.placeholders and not run.answered:
                raise NotAttempted()
        except NotAttempted:
            collected = {"status": NOT_ATTEMPTED}
        except Exception as exc:  # a probe must never take the notebook down
            if run.placeholders and not run.answered:      # e.g. a later step needed the stub's object
                collected = {"status": NOT_ATTEMPTED}
            else:
                collected = {"status": "error", "error": f"{type(exc).__name__}: {_text(exc)}",
                             "trace": traceback.format_exc(limit=3)}
    if collected["status"] == NOT_ATTEMPTED and run.placeholder_in:
        collected["placeholder"] = run.placeholder_in
    if caught:
        collected["warnings"] = _warning_lines(caught)
    return collected


# ---------------------------------------------------------------------------------------------------
# torch modules


def _structure(module) -> dict:
    """Names and shapes of what a module holds: parameters, buffers and plain tensor attributes."""
    import torch

    return {
        "parameters": [(name, tuple(p.shape), bool(p.requires_grad)) for name, p in module.named_parameters()],
        "buffers": [(name, tuple(b.shape)) for name, b in module.named_buffers()],
        "attributes": [(name, tuple(v.shape)) for name, v in vars(module).items() if isinstance(v, torch.Tensor)],
    }


def _assign(module, numel: int, values: np.ndarray):
    """Overwrite the parameter or buffer holding ``numel`` numbers with ``values``; (tensor, where) or None."""
    import torch

    for kind, items in (("parameter", module.named_parameters()), ("buffer", module.named_buffers())):
        for name, tensor in items:
            if tensor.numel() == numel:
                with torch.no_grad():
                    tensor.copy_(torch.tensor(values).reshape(tensor.shape).to(tensor.dtype))
                return tensor, {"kind": kind, "name": name, "shape": tuple(tensor.shape)}
    return None


def _gradient(output, tensor):
    """``output.sum().backward()``; the gradient that reached ``tensor`` as an array (None if none did)."""
    import torch

    if not isinstance(output, torch.Tensor) or not isinstance(tensor, torch.Tensor):
        return None
    try:
        output.sum().backward()
    except Exception:            # no graph: reported as a missing gradient
        return None
    return None if tensor.grad is None else tensor.grad.detach().cpu().numpy().copy()


# ---------------------------------------------------------------------------------------------------
# Writing probes


def call(*args, store: str | None = None, target: str | None = None, report: bool = True, **kwargs) -> dict:
    """A ``call`` step (a helper for the checks)."""
    step = {"op": "call", "args": list(args), "kwargs": kwargs}
    if store:
        step["store"] = store
    if target:
        step["target"] = target
    if not report:
        step["report"] = False
    return step


def tensor(array) -> dict:
    """An argument that the kernel turns into a torch tensor."""
    return {"__tensor__": np.asarray(array)}


def var(name: str) -> dict:
    """An argument that refers to an object an earlier step stored."""
    return {"__var__": name}
