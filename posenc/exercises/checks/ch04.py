"""Checks of exercise set ch04: learned vs sinusoidal positional encodings, as torch modules.

The students write classes and a torch function, so the probes here do more than call a function: they
build the student's module with grader-chosen sizes, overwrite its table with grader-chosen values, run it
on grader-chosen tensors and ask for plain facts (the names and shapes of parameters, buffers and tensor
attributes, the gradient that reaches the table, exception text). ``judge`` rebuilds every input from the
seed, computes the reference itself, checks the facts against the module's behaviour and names the mistake.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

import numpy as np

from posenc.exercises.framework import (
    TAMPERED,
    TIME_LIMIT,
    ChoiceQuestion,
    ExerciseSet,
    FunctionQuestion,
    Mistake,
    Outcome,
    Question,
    TypedValue,
    ValueQuestion,
    call,
    changed_inputs_message,
    describe_mismatch,
    failure,
    kind_of,
    short,
    tensor,
    within,
)
from posenc.lib.encoding import sinusoidal_encoding


# ---------------------------------------------------------------------------------------------------
# Grader-chosen inputs, rebuilt identically in probe and judge


def _grader_array(seed: int, tag: int, shape: tuple[int, ...]) -> np.ndarray:
    """Random float32 values, fixed by (seed, tag); rounded so float32 and float64 agree exactly."""
    rng = np.random.default_rng([seed, tag])
    return np.round(rng.normal(size=shape), 3).astype(np.float32)


def _drawn(seed: int, tag: int) -> np.random.Generator:
    """A generator for the sizes a question draws from the grader's seed."""
    return np.random.default_rng([seed, 4, tag])


def _sizes(probes: list, seed: int, index: int, draw: Callable[[np.random.Generator], tuple], tag: int):
    """The fixed sizes of probe ``index``, or, past the fixed ones, sizes drawn from the seed."""
    return probes[index] if index < len(probes) else draw(_drawn(seed, tag + index))


def _skipped(entry) -> bool:
    return isinstance(entry, dict) and "skipped" in entry


def _outcome(entry) -> Outcome:
    """A step's Outcome; one that was skipped or is malformed counts as an error."""
    if isinstance(entry, Outcome):
        return entry
    return Outcome(error=f"not run ({entry.get('skipped')})" if _skipped(entry) else "malformed answer",
                   error_type="Skipped")


@dataclass
class ModuleQuestion(Question):
    """The student writes an ``nn.Module`` class. For each grader-chosen context the probe builds it
    (``constructor``), then runs ``after`` on the module: the forward pass and whatever facts the judge
    needs. ``judge_records`` sees one record per context: the constructor's error, or the facts
    (``structure``, ``table``), the forward pass (``error``, ``error_type``, ``output``) and ``gradient``."""

    n_contexts = 0

    def context(self, seed: int, index: int) -> dict:
        raise NotImplementedError

    def constructor(self, context: dict) -> tuple:
        raise NotImplementedError

    def after(self, context: dict, index: int) -> list[dict]:
        """Probe steps on the built module ``module{index}``; the forward call comes first."""
        return [forward(context, index)]

    def describe(self, context: dict) -> str:
        """The constructor call, as the student would write it."""
        raise NotImplementedError

    def judge_records(self, contexts: list[dict], records: list[dict], seed: int) -> tuple[bool, str]:
        raise NotImplementedError

    def contexts(self, seed: int) -> list[dict]:
        return [self.context(seed, index) for index in range(self.n_contexts)]

    def probe(self, seed=0):
        steps = [{"op": "group", "steps": [call(*self.constructor(context), store=f"module{index}", report=False),
                                           *self.after(context, index)]}
                 for index, context in enumerate(self.contexts(seed))]
        return {"name": self.name, "expect": "class", "steps": steps}

    def judge(self, data, seed=0):
        contexts = self.contexts(seed)
        sizes = [1 + len(self.after(context, index)) for index, context in enumerate(contexts)]
        if len(data) != len(contexts) or any(not isinstance(g, list) or len(g) != n for g, n in zip(data, sizes)):
            return False, TAMPERED
        records = [_module_record(group, self.after(context, index))
                   for index, (context, group) in enumerate(zip(contexts, data))]
        for context, record in zip(contexts, records):
            if record.get("constructor"):
                return False, f"{self.describe(context)} {failure(record['constructor'])}"
        for context, record in zip(contexts, records):
            for forward_call in record["calls"]:
                where = f"{self.describe(context)} on x of shape {context['x'].shape}: forward"
                if forward_call["outcome"].error_type == TIME_LIMIT:
                    return False, f"{where} {failure(forward_call['outcome'])}"
                changed = changed_inputs_message(where, ["x"], forward_call["outcome"])
                if changed:
                    return False, changed
        return self.judge_records(contexts, records, seed)


def forward(context: dict, index: int, **step) -> dict:
    """The forward call of module ``index`` on the context's x, which must come back unchanged."""
    return {**call(tensor(context["x"]), target=f"module{index}", **step), "check_inputs": True}


# What each kind of step after the constructor reports, by its op (the forward pass is a "call").
_RECORD_KEY = {"structure": "structure", "assign": "table", "backward": "gradient"}


def _module_record(group: list, after: list[dict]) -> dict:
    """One module probe's results as the judges read them (see ModuleQuestion)."""
    built = _outcome(group[0])
    if not built.ok:
        return {"constructor": built}
    record = {"calls": []}
    for step, entry in zip(after, group[1:]):
        if step["op"] == "call":
            forward = _outcome(entry)
            call_record = {"error": forward.error, "error_type": forward.error_type, "outcome": forward,
                           "output": forward.value if forward.ok else None}
            record["calls"].append(call_record)
            if len(record["calls"]) == 1:       # the first forward pass is the one most judges read
                record.update(call_record)
        else:
            record[_RECORD_KEY[step["op"]]] = None if _skipped(entry) else entry
    return record


WIDER_DTYPE = ("the output is float64 for float32 input: the table is float64 (made with dtype=torch.float64, or "
               "with torch.tensor of a NumPy array), so x + table is promoted to float64 and the next nn.Linear, "
               "whose weights are float32, raises. Keep the table in torch's default dtype, float32 (.double() "
               "still converts it when the whole model moves)")


def _output_array(value, who: str = "forward", dtype=None) -> tuple[np.ndarray | None, str | None]:
    """The output as a numpy array, or a sentence saying why it is not a tensor (of ``dtype``, when given)."""
    if isinstance(value, TypedValue) and value.type_name == "torch.Tensor":
        array = np.asarray(value.value)
        if dtype is not None and array.dtype != np.dtype(dtype):
            if array.dtype == np.float64 and np.dtype(dtype) == np.float32:
                return None, WIDER_DTYPE
            return None, (f"{who} returned a tensor of dtype {array.dtype} for {np.dtype(dtype)} input; keep the "
                          "input's dtype")
        return array.astype(np.float64), None
    if isinstance(value, np.ndarray):
        return None, f"{who} returned a numpy array; return a torch tensor"
    if isinstance(value, TypedValue):
        return None, f"{who} returned a {value.type_name}; return a torch tensor"
    return None, f"{who} returned {kind_of(value)} ({short(value)}); return a torch tensor"


def _mismatch(got: np.ndarray, expected: np.ndarray, input_shape: tuple) -> str | None:
    if got.shape != expected.shape:
        hint = ""
        if got.ndim == 3 and got.shape == (input_shape[1], input_shape[0], input_shape[2]):
            hint = " (the first two axes are swapped: return the layout you were given)"
        elif got.ndim == 2:
            hint = " (a batch axis is missing: the output has the shape of the input)"
        return f"the output has shape {got.shape}; expected {expected.shape}, the shape of the input{hint}"
    return describe_mismatch(got, expected, what="output")


@dataclass
class Variant:
    """A known wrong answer for the module and function questions: message and expected output."""

    message: str
    output: Callable[[dict], np.ndarray]      # from the probe's context (x, table, n, ...) to an output


def _name_variant(variants, contexts, outputs) -> str | None:
    """Message of the first variant that reproduces every tensor the student returned.

    A variant that would raise on a probe (as the student's code may have) skips that probe; shapes are
    compared after broadcasting, so returning the bare (n, d) table is recognised too.
    """
    for variant in variants:
        compared = 0
        for context, got in zip(contexts, outputs):
            if got is None:
                continue
            try:
                expected = np.asarray(variant.output(context), dtype=np.float64)
            except (IndexError, ValueError):
                continue
            try:
                got_b, expected_b = np.broadcast_arrays(got, expected)
            except ValueError:
                break
            if not within(got_b, expected_b):
                break
            compared += 1
        else:
            if compared:
                return variant.message
    return None


# Messages shared by the questions (tests look for their key phrases).
FORGOT_TO_ADD = ("the output equals the input: the encoding was computed but never added to x "
                 "(a bare `x + pe` line changes nothing; assign it, `x = x + pe`, or return it)")
TABLE_ONLY = "the output is the positional table alone: return x + pe, the input plus its positions"
SINGLE_ROW = ("every position got the same row, the one for position n: you indexed pe[:, n] (or pe[n]) "
              "where the first n rows, pe[:, :n] (or pe[:n]), were meant")
BATCH_AXIS = ("wrong broadcasting over the batch: sequence b got the row of position b at every one of its "
              "positions, as if the input were sequence-first (seq, batch, d); for batch-first input slice "
              "the table by x.size(1) and let it broadcast over dimension 0")
FROM_ONE = "positions start at 0: row 0 of the table belongs to the first token"
DROPOUT = ("some entries of the output are 0 and the others are x plus the rows scaled up by one factor, "
           "1/(1 - p): that is dropout, which PyTorch's tutorial applies here. This module returns exactly x plus "
           "its rows, with no dropout: the model around it decides that")
LEARNED_FROM_ONE = (f"{FROM_ONE}. Your table has max_len + 1 rows, as if the positions ran from 1 to max_len: "
                    "make it nn.Embedding(max_len, d_model) (or a (max_len, d_model) parameter) and use rows "
                    "0..n-1")
LEARNED_BUFFER = ("the learned table is registered as a buffer, so it is never trained; a learned encoding "
                  "must be a parameter (nn.Parameter or nn.Embedding)")
LEARNED_ATTRIBUTE = ("the table is a plain tensor attribute: torch does not see it as a parameter, so it is "
                     "never trained (wrap it in nn.Parameter, or use nn.Embedding)")
LEARNED_FROZEN = "the table has requires_grad=False: it is frozen, so nothing is learned"
PADDING_ROW = ("row 0 of the table gets no gradient, while rows 1..n-1 do: that is nn.Embedding's padding_idx=0, "
               "which freezes the row of a padding token's id; here row 0 is the first position, which must "
               "learn like the others: leave out padding_idx")
NO_GRADIENT = ("no gradient reaches the table: the output was computed from a detached copy (.data, .detach(), "
               "torch.tensor(...) or torch.no_grad()), so training cannot change the table")
SIN_PARAMETER = ("the sinusoidal table is registered as a parameter: a fixed encoding must not appear in "
                 "parameters(), where optimisers receive it and parameter counts include it; store it with "
                 "self.register_buffer(...)")
SIN_NO_BUFFER = ("the module keeps no table: it rebuilds the encoding in every forward call. Compute the "
                 "max_len rows once in __init__ and store them with self.register_buffer(...), so that they are "
                 "built once and move with the module (.to(device), .double())")
SIN_BUFFER_UNUSED = ("forward does not read the buffer: after the buffer's numbers were changed, the output "
                     "stayed the same. Slice the buffer in forward (self.pe[:n]) instead of recomputing the table "
                     "or reading a copy of it")
SIN_ATTRIBUTE = ("the table is a plain tensor attribute, not a buffer: .to(device) and .double() would leave "
                 "it behind; store it with self.register_buffer(...)")
GUARD_SILENT = ("past max_len the module returned a result, but there is no row there: raise a ValueError "
                "instead of inventing one")
GUARD_TYPE = ("past max_len the module raised something other than a ValueError: check the length first and "
              "raise a ValueError (or a subclass of it) whose message contains the number max_len")
GUARD_LIMIT = ("the ValueError's message does not contain the limit: it must show the number max_len (the "
               "table's number of rows), e.g. f\"... max_len={self.max_len}\"")
GUARD_PASSTHROUGH = ("within max_len the module returned x unchanged: after the length check, call "
                     "super().forward(x), so that it behaves exactly like LearnedPositionalEmbedding")
GUARD_OFF_BY_ONE = ("off by one: positions 0..max_len-1 all have rows, so a sequence of exactly max_len tokens "
                    "fits and must not raise")


def _catalogued(*messages) -> tuple:
    """Diagnoses listed on the Common mistakes page (posenc.book.mistakes reads a question's ``mistakes``)."""
    return tuple(Variant(m, lambda c: None) for m in messages)


# ---------------------------------------------------------------------------------------------------
# q1: a learned positional embedding module


LEARNED_PROBES = [(10, 4, (3, 6, 4)), (10, 4, (2, 10, 4)), (50, 8, (1, 7, 8)), (20, 6, (5, 1, 6)), (12, 3, (4, 2, 3))]


def _drawn_module_sizes(rng) -> tuple:
    """(max_len, d_model, input shape) for one more module probe, drawn from the grader's seed."""
    max_len, d_model = int(rng.integers(5, 80)), 2 * int(rng.integers(1, 12))
    return max_len, d_model, (int(rng.integers(1, 5)), int(rng.integers(1, max_len + 1)), d_model)

# What a module that should add rows 0..n-1 of its table to x may return instead (both q1 and q2).
ADDITION_VARIANTS = [
    Variant(FORGOT_TO_ADD, lambda c: c["x"]),
    Variant(TABLE_ONLY, lambda c: c["table"][: c["n"]]),
    Variant(SINGLE_ROW, lambda c: c["x"] + c["table"][c["n"]]),
    Variant(BATCH_AXIS, lambda c: c["x"] + c["table"][: c["x"].shape[0]][:, None, :]),
    Variant(FROM_ONE, lambda c: c["x"] + c["table"][1: c["n"] + 1]),
]


def _addition_problem(contexts, records, describe_call) -> str | None:
    """Judge modules that must return x + table[:n] in x's dtype: None when every output is right, else the
    named mistake (one of ADDITION_VARIANTS) or the first difference, with the call that showed it."""
    outputs, first_problem = [], None
    for context, record in zip(contexts, records):
        got, problem = None, None
        if record["error"]:
            problem = failure(record["outcome"])
        else:
            got, problem = _output_array(record["output"], dtype=context["x"].dtype)
            expected = context["x"] + context["table"][: context["n"]]
            problem = problem or (got is not None and _mismatch(got, expected, context["x"].shape))
        outputs.append(got)
        if problem and first_problem is None:
            first_problem = f"{describe_call(context)}: {problem}"
    if first_problem is None:
        return None
    if _dropped_out(contexts, outputs):
        return DROPOUT
    return _name_variant(ADDITION_VARIANTS, contexts, outputs) or first_problem


def _dropped_out(contexts, outputs) -> bool:
    """Whether the outputs are x + table[:n] through dropout: some entries 0, every other one scaled by the
    same factor above 1 (1/(1 - p))."""
    kept, expected_kept, dropped = [], [], 0
    for context, got in zip(contexts, outputs):
        expected = context["x"] + context["table"][: context["n"]]
        if got is None or got.shape != expected.shape:
            continue
        zero = (got == 0) & (expected != 0)
        dropped += int(zero.sum())
        kept.append(got[~zero])
        expected_kept.append(expected[~zero])
    if not dropped or not kept:
        return False
    kept, expected_kept = np.concatenate(kept), np.concatenate(expected_kept)
    large = np.abs(expected_kept) > 0.1 * np.abs(expected_kept).max(initial=0.0)
    if not large.any():
        return False
    factor = float(np.median(kept[large] / expected_kept[large]))
    return factor > 1 and within(kept, factor * expected_kept)


def _learned_context(seed: int, index: int) -> dict:
    max_len, d_model, shape = _sizes(LEARNED_PROBES, seed, index, _drawn_module_sizes, 100)
    return {"max_len": max_len, "d_model": d_model, "n": shape[1],
            "x": _grader_array(seed, 100 + index, shape), "table": _grader_array(seed, 200 + index, (max_len, d_model))}


@dataclass
class LearnedModuleQuestion(ModuleQuestion):
    """``cls(max_len, d_model)`` adds a trainable (max_len, d_model) table to batch-first input."""

    mistakes: tuple = _catalogued(LEARNED_BUFFER, LEARNED_ATTRIBUTE, LEARNED_FROZEN, NO_GRADIENT, WIDER_DTYPE,
                                  LEARNED_FROM_ONE, DROPOUT, PADDING_ROW) + tuple(ADDITION_VARIANTS)
    n_contexts = len(LEARNED_PROBES) + 1

    def context(self, seed, index):
        return _learned_context(seed, index)

    def constructor(self, context):
        return context["max_len"], context["d_model"]

    def describe(self, context):
        return f"{self.name}(max_len={context['max_len']}, d_model={context['d_model']})"

    def after(self, context, index):
        """Overwrite the table with grader-chosen values, run forward, and ask for the table's gradient."""
        module, table, output = f"module{index}", f"table{index}", f"output{index}"
        return [{"op": "structure", "target": module},
                {"op": "assign", "target": module, "numel": context["max_len"] * context["d_model"],
                 "values": context["table"], "store": table},
                forward(context, index, store=output),
                {"op": "backward", "output": output, "wrt": table}]

    def judge_records(self, contexts, records, seed):
        for context, record in zip(contexts, records):
            problem = _learned_structure_problem(record, context)
            if problem:
                return False, f"{problem} (seen in {self.describe(context)})"
        problem = _addition_problem(contexts, records,
                                    lambda c: f"{self.name}({c['max_len']}, {c['d_model']}) on x of shape {c['x'].shape}")
        if problem:
            return False, problem
        for context, record in zip(contexts, records):
            gradient = record["gradient"]
            if not isinstance(gradient, np.ndarray) or gradient.size != context["max_len"] * context["d_model"]:
                return False, NO_GRADIENT
            gradient = gradient.reshape(context["max_len"], -1)
            batch, n = context["x"].shape[0], context["n"]
            if n > 1 and np.allclose(gradient[0], 0) and np.allclose(gradient[1:n], batch) \
                    and np.allclose(gradient[n:], 0):
                return False, PADDING_ROW
            if not (np.allclose(gradient[:n], batch) and np.allclose(gradient[n:], 0)):
                return False, "the gradient of the table is not what x + table[:n] gives: rows 0..n-1 must be used once per sequence"
        return True, "correct"


def _learned_structure_problem(record: dict, context: dict) -> str | None:
    numel = context["max_len"] * context["d_model"]
    structure, table = record["structure"], record["table"]
    parameters = structure["parameters"]
    if table is None or table["kind"] != "parameter":
        if table is not None:
            return f"{LEARNED_BUFFER} (`{table['name']}`)"
        if any(math.prod(shape) == numel for _, shape in structure["attributes"]):
            return LEARNED_ATTRIBUTE
        one_more = (context["max_len"] + 1) * context["d_model"]
        if any(math.prod(shape) == one_more for _, shape, _ in parameters):
            return LEARNED_FROM_ONE
        return f"found no parameter with max_len * d_model = {numel} numbers: where is the table?"
    if not next(trainable for name, _, trainable in parameters if name == table["name"]):
        return LEARNED_FROZEN
    total = sum(math.prod(shape) for _, shape, _ in parameters)
    if total != numel:
        names = ", ".join(name for name, _, _ in parameters)
        return (f"the module has {total} parameters ({names}); a learned positional table has exactly "
                f"max_len * d_model = {numel}")
    return None


# ---------------------------------------------------------------------------------------------------
# q2: the sinusoidal module, a buffer


SINUSOIDAL_PROBES = [(8, 50, (3, 5, 8)), (6, 20, (2, 20, 6)), (16, 100, (1, 7, 16)), (4, 12, (4, 3, 4))]


def _sinusoidal_context(seed: int, index: int) -> dict:
    if index < len(SINUSOIDAL_PROBES):
        d_model, max_len, shape = SINUSOIDAL_PROBES[index]
    else:
        max_len, d_model, shape = _drawn_module_sizes(_drawn(seed, 300 + index))
    return {"max_len": max_len, "d_model": d_model, "n": shape[1],
            "x": _grader_array(seed, 300 + index, shape), "table": sinusoidal_encoding(max_len, d_model),
            "planted": _grader_array(seed, 350 + index, (max_len, d_model))}


@dataclass
class SinusoidalModuleQuestion(ModuleQuestion):
    """``cls(d_model, max_len)`` adds the fixed sinusoidal table, held as a buffer, to batch-first input.

    After a first forward pass the probe overwrites the buffer with grader-chosen numbers and runs forward
    again: a module that builds its table once and reads it from the buffer adds the new numbers.
    """

    mistakes: tuple = _catalogued(SIN_PARAMETER, SIN_ATTRIBUTE, SIN_NO_BUFFER, SIN_BUFFER_UNUSED,
                                  WIDER_DTYPE, DROPOUT) + tuple(ADDITION_VARIANTS)
    n_contexts = len(SINUSOIDAL_PROBES) + 1

    def context(self, seed, index):
        return _sinusoidal_context(seed, index)

    def constructor(self, context):
        return context["d_model"], context["max_len"]

    def describe(self, context):
        return f"{self.name}(d_model={context['d_model']}, max_len={context['max_len']})"

    def after(self, context, index):
        module = f"module{index}"
        return [{"op": "structure", "target": module}, *super().after(context, index),
                {"op": "assign", "target": module, "numel": context["max_len"] * context["d_model"],
                 "values": context["planted"], "store": f"buffer{index}"},
                forward(context, index)]

    def judge_records(self, contexts, records, seed):
        for context, record in zip(contexts, records):
            problem = _sinusoidal_structure_problem(record["structure"], record["table"], context)
            if problem:
                return False, f"{problem} (seen in {self.describe(context)})"
        problem = _addition_problem(contexts, records,
                                    lambda c: f"{self.name}({c['d_model']}, {c['max_len']}) on x of shape {c['x'].shape}")
        if problem:
            return False, problem
        for context, record in zip(contexts, records):
            second = record["calls"][1]
            got, _ = _output_array(second["output"]) if second["error"] is None else (None, None)
            expected = context["x"] + context["planted"][: context["n"]]
            if got is None or got.shape != expected.shape or not within(got, expected):
                return False, f"{SIN_BUFFER_UNUSED} (seen in {self.describe(context)})"
        return True, "correct"


def _sinusoidal_structure_problem(structure: dict, table: dict | None, context: dict) -> str | None:
    parameters = structure["parameters"]
    if parameters:
        names = ", ".join(f"`{name}`" for name, _, _ in parameters)
        frozen = all(not trainable for _, _, trainable in parameters)
        note = " (even with requires_grad=False it is still a parameter)" if frozen else ""
        return f"{SIN_PARAMETER}. Found: {names}{note}"
    if table is not None and table["kind"] == "buffer":
        return None
    numel = context["max_len"] * context["d_model"]
    if any(math.prod(shape) == numel for _, shape in structure["attributes"]):
        return SIN_ATTRIBUTE
    if structure["buffers"]:
        found = ", ".join(f"`{name}` of shape {tuple(shape)}" for name, shape in structure["buffers"])
        return (f"the module's buffers ({found}) do not hold the max_len x d_model = {numel} numbers of the "
                "table: store exactly the rows of the max_len positions the module was built for")
    return SIN_NO_BUFFER


# ---------------------------------------------------------------------------------------------------
# q3: batch-first and sequence-first


LAYOUT_PROBES = [((3, 5, 8), True), ((5, 3, 8), False), ((4, 4, 6), False), ((4, 4, 6), True),
                 ((2, 7, 4), False), ((1, 9, 4), True), ((6, 1, 4), False)]
LAYOUT_MAX_LEN = 12


def _layout_context(seed: int, index: int) -> dict:
    shape, batch_first = LAYOUT_PROBES[index]
    n = shape[1] if batch_first else shape[0]
    return {"x": _grader_array(seed, 400 + index, shape), "batch_first": batch_first, "n": n,
            "table": _grader_array(seed, 500 + index, (LAYOUT_MAX_LEN, shape[2]))}


def add_positions(x, table, batch_first=True):
    """Reference of q3 (numpy or torch): x plus the first n rows of the table, n the sequence length."""
    if batch_first:
        return x + table[: x.shape[1]]
    return x + table[: x.shape[0]][:, None, :]


LAYOUT_VARIANTS = [
    Variant("with batch_first=False the table slice (n, d) broadcasts against the last two axes of x, "
            "(batch, d): its rows line up with the batch axis, not the sequence axis. Add a batch axis: "
            "table[:n, None, :] (or table[:n].unsqueeze(1))",
            lambda c: c["x"] + c["table"][: c["x"].shape[0]] if not c["batch_first"]
            else add_positions(c["x"], c["table"], True)),
    Variant("with batch_first=False the sequence is dimension 0 and the batch dimension 1: your table rows "
            "lined up with the batch axis (sequence b got row b at every position). Slice by x.size(0) and add "
            "a batch axis: table[:n, None, :] (or table[:n].unsqueeze(1))",
            lambda c: c["x"] + c["table"][: c["x"].shape[1]][None, :, :] if not c["batch_first"]
            else add_positions(c["x"], c["table"], True)),
    Variant("with batch_first=True the batch is dimension 0: your table rows lined up with the batch axis "
            "(sequence b got row b at every position), the sequence-first rule applied to batch-first input",
            lambda c: c["x"] + c["table"][: c["x"].shape[0]][:, None, :] if c["batch_first"]
            else add_positions(c["x"], c["table"], False)),
    Variant(FORGOT_TO_ADD, lambda c: c["x"]),
    Variant(SINGLE_ROW, lambda c: c["x"] + c["table"][c["n"]]),
]


@dataclass
class LayoutQuestion(Question):
    """``fn(x, table, batch_first)`` for (batch, seq, d) and (seq, batch, d) inputs."""

    mistakes: tuple = tuple(LAYOUT_VARIANTS)
    reference: Callable = add_positions

    def probe(self, seed=0):
        steps = []
        for index in range(len(LAYOUT_PROBES)):
            context = _layout_context(seed, index)
            steps.append({**call(tensor(context["x"]), tensor(context["table"]), batch_first=context["batch_first"]),
                          "check_inputs": True})
        return {"name": self.name, "steps": steps}

    def judge(self, data, seed=0):
        if len(data) != len(LAYOUT_PROBES):
            return False, TAMPERED
        outcomes = [_outcome(entry) for entry in data]
        contexts = [_layout_context(seed, i) for i in range(len(LAYOUT_PROBES))]
        outputs, first_problem = [], None
        for context, outcome in zip(contexts, outcomes):
            where = (f"{self.name}(x of shape {context['x'].shape}, table of shape {context['table'].shape}, "
                     f"batch_first={context['batch_first']})")
            if outcome.error_type == TIME_LIMIT:
                return False, f"{where} {failure(outcome)}"
            changed = changed_inputs_message(where, ["x", "table"], outcome)
            if changed:
                return False, changed
            got, problem = None, None
            if not outcome.ok:
                problem = failure(outcome)
            else:
                got, problem = _output_array(outcome.value, who=self.name)
                expected = add_positions(context["x"], context["table"], context["batch_first"])
                problem = problem or (got is not None and _mismatch(got, expected, context["x"].shape))
            outputs.append(got)
            if problem and first_problem is None:
                first_problem = f"{where}: {problem}"
        if first_problem:
            return False, _name_variant(LAYOUT_VARIANTS, contexts, outputs) or first_problem
        return True, "correct"


# ---------------------------------------------------------------------------------------------------
# q4: what each table costs


def positional_parameters(kind, max_len, d_model):
    return max_len * d_model if kind == "learned" else 0


COUNT_PROBES = [("learned", 512, 768), ("learned", 1024, 768), ("sinusoidal", 512, 512), ("learned", 64, 32),
                ("sinusoidal", 2048, 1024), ("learned", 7, 3)]


def _count_probes(seed):
    rng = _drawn(seed, 4)
    return [*COUNT_PROBES, *((kind, int(rng.integers(2, 4096)), 2 * int(rng.integers(1, 1024)))
                             for kind in ("learned", "sinusoidal", "learned"))]

COUNT_MISTAKES = [
    Mistake("the sinusoidal table is a buffer, not a parameter: it costs no trainable parameters",
            lambda kind, n, d: n * d),
    Mistake("that is the size in bytes of a float32 table (4 bytes per number); count the numbers",
            lambda kind, n, d: 4 * n * d if kind == "learned" else 0),
    Mistake("every position has a row of d_model numbers, not d_model / 2 (that is the number of pairs)",
            lambda kind, n, d: n * d // 2 if kind == "learned" else 0),
    Mistake("the table has one number per (position, dimension): max_len * d_model, not max_len + d_model",
            lambda kind, n, d: n + d if kind == "learned" else 0),
]


def _compare_count(got, expected, args):
    if isinstance(got, bool) or not isinstance(got, (int, float)) or (isinstance(got, float) and not got.is_integer()):
        return f"expected a whole number, got {short(got)}"
    return None if int(got) == expected else f"expected {expected:,}, got {int(got):,}"


# ---------------------------------------------------------------------------------------------------
# q5: past max_len


GUARD_PROBES = [(10, 4, (2, 10, 4)), (10, 4, (2, 11, 4)), (10, 4, (3, 40, 4)), (25, 6, (1, 26, 6)), (25, 6, (2, 3, 6))]


def _drawn_guard_sizes(rng) -> tuple:
    max_len, d_model = int(rng.integers(5, 60)), 2 * int(rng.integers(1, 8))
    return max_len, d_model, (int(rng.integers(1, 4)), max_len + int(rng.integers(1, 30)), d_model)


def _guard_context(seed: int, index: int) -> dict:
    max_len, d_model, shape = _sizes(GUARD_PROBES, seed, index, _drawn_guard_sizes, 600)
    return {"max_len": max_len, "d_model": d_model, "n": shape[1], "x": _grader_array(seed, 600 + index, shape),
            "table": _grader_array(seed, 650 + index, (max_len, d_model))}


@dataclass
class GuardQuestion(ModuleQuestion):
    """``cls(max_len, d_model)`` raises a ValueError naming max_len for longer input, and only then."""

    mistakes: tuple = _catalogued(GUARD_OFF_BY_ONE, GUARD_SILENT, GUARD_TYPE, GUARD_LIMIT, GUARD_PASSTHROUGH)
    n_contexts = len(GUARD_PROBES) + 1

    def context(self, seed, index):
        return _guard_context(seed, index)

    def constructor(self, context):
        return context["max_len"], context["d_model"]

    def describe(self, context):
        return f"{self.name}({context['max_len']}, {context['d_model']})"

    def after(self, context, index):
        """Give the inherited table grader-chosen values, then run forward."""
        module = f"module{index}"
        return [{"op": "assign", "target": module, "numel": context["max_len"] * context["d_model"],
                 "values": context["table"], "store": f"table{index}"},
                forward(context, index)]

    def judge_records(self, contexts, records, seed):
        for context, record in zip(contexts, records):
            max_len, n = context["max_len"], context["n"]
            where = f"{self.name}(max_len={max_len}, ...) on a sequence of {n} tokens"
            error = record["error"]
            is_value_error = error is not None and "ValueError" in (record["outcome"].error_kinds or [])
            output = record["output"]
            shape = tuple(output.value.shape) if isinstance(output, TypedValue) and \
                isinstance(output.value, np.ndarray) else None
            if n <= max_len:
                if is_value_error and n == max_len:
                    return False, f"{GUARD_OFF_BY_ONE} ({where} raised {error})"
                if error:
                    return False, f"{where} {failure(record['outcome'])}; sequences up to max_len tokens must work"
                if shape != context["x"].shape:
                    return False, f"{where} returned no tensor of the input's shape {context['x'].shape}"
                problem = _within_limit_problem(output.value, record["table"], context)
                if problem:
                    return False, f"{problem} (seen in {where})"
                continue
            if error is None:
                return False, f"{GUARD_SILENT} ({where})"
            if not is_value_error:
                torch_own = any(phrase in error for phrase in ("index out of range in self", "must match the size"))
                origin = ", an error from deep inside torch that does not say what the limit is" if torch_own else ""
                return False, f"{GUARD_TYPE} ({where} raised {error}{origin})"
            said = error.partition(": ")[2]
            if not re.search(rf"(?<!\d){max_len}(?!\d)", said):
                return False, f"{GUARD_LIMIT} ({where}: max_len is {max_len}, and the message says '{said}')"
        return True, "correct"


def _within_limit_problem(output: np.ndarray, table: dict | None, context: dict) -> str | None:
    """None when a sequence within max_len gets what the parent class gives, x + table[:n]."""
    x = context["x"].astype(np.float64)
    if table is None or table["kind"] != "parameter":
        return ("the module holds no trainable table of max_len * d_model numbers: it must inherit the one of "
                "your LearnedPositionalEmbedding (question 1)")
    got = np.asarray(output, dtype=np.float64)
    if within(got, x + context["table"][: context["n"]]):
        return None
    if within(got, x):
        return GUARD_PASSTHROUGH
    return ("within max_len the output is not what LearnedPositionalEmbedding gives, x + table[:n]: let the "
            "parent class do the work with super().forward(x)")


# ---------------------------------------------------------------------------------------------------
# q6: rows of the chapter's learned table that never get a gradient


def _chapter_sizes() -> tuple[int, int, int]:
    """(max_len, train_length, d_model) of the chapter's experiment, read from its configuration."""
    from posenc.experiments.ch04 import LengthExperiment

    config = LengthExperiment()
    return config.max_len, config.train_length, config.d_model


def untrained_rows():
    max_len, train_length, _ = _chapter_sizes()
    return max_len - train_length


UNTRAINED_MISTAKES = [
    (lambda: _chapter_sizes()[1],
     "those are the rows that do get a gradient: forward slices rows 0..L-1, so the other max_len - L rows "
     "never take part in a forward pass"),
    (lambda: _chapter_sizes()[0], "rows L..max_len-1 never take part in a forward pass during training, so "
                                  "no gradient reaches them; only the first L rows are trained"),
    (lambda: 0, "every training sequence has L tokens, so forward slices only rows 0..L-1 of the table: the "
                "other rows get no gradient at any step"),
    (lambda: untrained_rows() - 1, "off by one: positions 0..L-1 are L rows, so rows L..max_len-1 are "
                                   "max_len - L rows"),
    (lambda: untrained_rows() + 1, "off by one: positions 0..L-1 are L rows, so rows L..max_len-1 are "
                                   "max_len - L rows"),
    (lambda: untrained_rows() * _chapter_sizes()[2],
     "that counts numbers (rows times d_model); the question asks for rows"),
]

# ---------------------------------------------------------------------------------------------------
# q7: what the sinusoidal model does past the training length (one choice)

EXTRAPOLATION_OPTIONS = {
    "a": "the paper stated that as a hypothesis, not a result; the table is defined at every position, but "
         "the model never saw those vectors in training, and in the chapter's experiment its accuracy falls "
         "soon after L",
    "b": "defined is not the same as useful: nothing in training tells the model what to do with the "
         "encodings of positions it never saw, so it must be measured, and in the chapter it fails soon after L",
    "c": "whether it raises depends on the code, not on the encoding: a module that stores max_len rows (such as "
         "your SinusoidalEncoding of question 2) raises past them, but those rows can be computed for any length "
         "without training, as the chapter's module does; a learned table has nothing to compute past its last "
         "row, max_len - 1. And the question is about positions past train_length, which can lie well inside "
         "max_len",
    "d": "the rows of a learned table past L get no gradient at all: they keep their random initial values, "
         "so they tell the model nothing about those positions",
}

# ---------------------------------------------------------------------------------------------------

EXERCISES = ExerciseSet("ch04", "Learned vs sinusoidal positional encodings", [
    LearnedModuleQuestion(qid="q1", title="A learned positional embedding", name="LearnedPositionalEmbedding",
                          points=3),
    SinusoidalModuleQuestion(qid="q2", title="The sinusoidal encoding as a buffer", name="SinusoidalEncoding",
                             points=3),
    LayoutQuestion(qid="q3", title="Batch-first and sequence-first", name="add_positions", points=2),
    FunctionQuestion(qid="q4", title="What each table costs", name="positional_parameters", points=1,
                     probes=_count_probes, reference=positional_parameters,
                     mistakes=COUNT_MISTAKES, compare=_compare_count,
                     describe_args=lambda a: f"{a[0]!r}, max_len={a[1]}, d_model={a[2]}"),
    GuardQuestion(qid="q5", title="Past max_len", name="CheckedPositionalEmbedding", points=2),
    ValueQuestion(qid="q6", title="Rows that never learn", name="untrained_rows", points=1,
                  expected=untrained_rows, mistakes=UNTRAINED_MISTAKES),
    ChoiceQuestion(qid="q7", title="Past the training length", name="past_training_length", points=1,
                   answer="b", options=EXTRAPOLATION_OPTIONS, single=True),
])

