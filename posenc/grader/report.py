"""What a grading run writes: the gradebook CSV, one feedback file per student, the progress line and the
summary on the terminal.

Everything written passes through one cleaner (``clean``): no control characters (a name or an exception
message cannot move the terminal's cursor or colour it), no lone surrogates (a file name that is not
UTF-8 or a cell id with ``\udc80`` cannot stop the run), and a bounded length. CSV cells that a
spreadsheet would read as a formula get a leading apostrophe (``csv_cell``).
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import statistics
import sys
import time
from pathlib import Path

from posenc.grader.session import Graded, Plan

# C0 and C1 controls, DEL, and the bidirectional overrides that reorder what a terminal shows.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile("[\ud800-\udfff]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
MAX_CELL, MAX_LINE, MAX_LINES, MAX_FEEDBACK = 4000, 1000, 40, 64_000
MAX_FEEDBACK_NAME = 200        # bytes, below the 255 of most file systems


def clean(text, limit: int | None = None, newlines: bool = False) -> str:
    """``text`` without control characters or lone surrogates (newlines kept if ``newlines``), at most
    ``limit`` characters."""
    text = _SURROGATES.sub("\ufffd", str(text))
    if newlines:
        text = "\n".join(_CONTROLS.sub(" ", line) for line in text.replace("\r\n", "\n").split("\n"))
    else:
        text = _CONTROLS.sub(" ", text)
    if limit is not None and len(text) > limit:
        text = text[:limit - 1] + "\u2026"
    return text


def terminal_text(text) -> str:
    return clean(text, limit=2000)


def say(stream, text: str) -> None:
    """Print ``text`` (cleaned line by line) on ``stream``, whatever its encoding."""
    text = "\n".join(clean(line, limit=2000) for line in str(text).split("\n")) + "\n"
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "backslashreplace").decode(encoding))
    stream.flush()


def csv_cell(value) -> str:
    """A CSV cell no spreadsheet runs: cleaned, bounded, and a leading ' before =, +, -, @ (even after
    blanks)."""
    text = clean(value, limit=MAX_CELL)
    return "'" + text if text.lstrip().startswith(FORMULA_START) else text


def _points(value: float) -> str:
    return f"{value:g}"


def write_csv(path: Path, plan: Plan | None, graded: list[Graded], seed: int) -> None:
    questions = plan.questions if plan else []
    header = ["file", *[q.qid for q in questions], "total", "percentage", "status", "message"]
    with open(path, "w", newline="", encoding="utf-8", errors="replace") as handle:
        writer = csv.writer(handle)
        writer.writerow([csv_cell(h) for h in header])
        if plan:
            writer.writerow([csv_cell(c) for c in [
                "(maximum)", *[_points(q.points) for q in questions], _points(plan.max_points),
                "100", "", f"exercise set {plan.exercise_set.set_id}: {plan.exercise_set.title}; seed {seed}"
                + ("; private: " + ", ".join(q.qid for q in questions if q.private)
                   if any(q.private for q in questions) else "")]])
        for g in graded:
            writer.writerow([csv_cell(c) for c in csv_row(g, plan)])


def csv_row(g: Graded, plan: Plan | None) -> list[str]:
    questions = plan.questions if plan else []
    if not g.submission.gradable:
        return [g.submission.name, *[""] * len(questions), "", "", g.status, g.submission.message]
    by_id = {r.qid: r for r in g.results}
    total = g.total
    percent = 100 * total / plan.max_points if plan.max_points else 0.0
    return [g.submission.name, *[_points(by_id[q.qid].points) if q.qid in by_id else "" for q in questions],
            _points(total), f"{percent:.1f}", g.status, "; ".join(g.notes)]


def feedback_text(g: Graded, plan: Plan | None) -> str:
    """What the student reads: public questions in full, private checks as pass/fail only (bounded)."""
    sub = g.submission
    if not sub.gradable:
        return clean(f"Feedback on {sub.name}\n\nThis submission could not be graded: {sub.message}\n",
                     limit=MAX_FEEDBACK, newlines=True)
    public = [r for r in g.results if not r.private]
    private = [r for r in g.results if r.private]
    lines = [f"Feedback on {sub.name}",
             f"Exercise set {plan.exercise_set.set_id}: {plan.exercise_set.title}",
             f"Score: {_points(g.total)}/{_points(plan.max_points)} "
             f"({100 * g.total / plan.max_points:.0f}%)", ""]
    lines += [r.line() for r in public]
    if private:
        passed = sum(r.passed for r in private)
        got, out_of = _points(sum(r.points for r in private)), _points(sum(r.max_points for r in private))
        lines += ["", f"Further checks by your lecturer: {passed} of {len(private)} passed ({got}/{out_of} points)"]
        lines += [f"  check {i}: {'passed' if r.passed else 'failed'}" for i, r in enumerate(private, 1)]
    notes = [n for n in g.notes if not n.startswith("same code as")]
    events = g.cell_errors + notes
    if events:
        lines += ["", "While running your notebook:"]
        lines += [f"  - {text}" for text in events[:MAX_LINES]]
        if len(events) > MAX_LINES:
            lines.append(f"  - ... and {len(events) - MAX_LINES} more")
    text = "\n".join(clean(line, limit=MAX_LINE, newlines=True) for line in lines) + "\n"
    return clean(text, limit=MAX_FEEDBACK, newlines=True)


def feedback_names(names: list[str]) -> list[str]:
    """One feedback file name per gradebook name: reversible escapes (``sec1/bob`` and ``sec1__bob`` stay
    apart), no hidden or over-long names, and unique even where the file system ignores case."""
    taken: set[str] = set()
    result = []
    for name in names:
        stem = name[:-6] if name.endswith(".ipynb") else name
        escaped = "".join(ch if ch.isprintable() and ch not in "%/\\:*?\"<>|" else
                          "".join(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass"))
                          for ch in stem)
        if escaped.startswith(".") or not escaped:
            escaped = "%2E" + escaped[1:] if escaped else "%00"
        if len(escaped.encode()) > MAX_FEEDBACK_NAME:
            digest = hashlib.sha256(escaped.encode()).hexdigest()[:12]
            while len(escaped.encode()) > MAX_FEEDBACK_NAME - 14:
                escaped = escaped[:-1]
            escaped = f"{escaped}~{digest}"
        candidate, number = escaped, 1
        while candidate.casefold() in taken:
            number += 1
            candidate = f"{escaped}~{number}"
        taken.add(candidate.casefold())
        result.append(candidate + ".txt")
    return result


def write_feedback(path: Path, text: str) -> None:
    """Write a feedback file, never through a symbolic link already standing at its name."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
        handle.write(text)


class Progress:
    """A progress bar on a terminal, one line per submission otherwise."""

    def __init__(self, total: int, stream=None, quiet: bool = False):
        self.total, self.done, self.stream, self.quiet = total, 0, stream or sys.stdout, quiet
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()

    def update(self, g: Graded, plan: Plan | None) -> None:
        self.done += 1
        if self.quiet:
            return
        score = (f"{_points(g.total)}/{_points(plan.max_points)}" if g.submission.gradable and plan else "-")
        if self.tty:
            width = 30
            filled = int(width * self.done / max(1, self.total))
            rate = self.done / max(1e-9, time.perf_counter() - self.start) * 60
            line = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                    f"{rate:.0f}/min  {terminal_text(g.submission.name)[-30:]:<30}")
            try:
                self.stream.write(line + ("\n" if self.done == self.total else ""))
            except UnicodeEncodeError:
                self.stream.write(line.encode("ascii", "backslashreplace").decode("ascii"))
            self.stream.flush()
        else:
            say(self.stream, f"[{self.done:>{len(str(self.total))}}/{self.total}] {g.submission.name}: "
                             f"{score} {g.status}")


def summary(graded: list[Graded], plan: Plan | None, seconds: float, seed: int, note: str) -> str:
    ok = [g for g in graded if g.submission.gradable]
    lines = []
    if plan:
        rate = len(graded) / seconds * 60 if seconds else 0.0
        lines.append(f"Graded {len(ok)} of {len(graded)} submissions of {plan.exercise_set.set_id} "
                     f"({plan.exercise_set.title}) in {seconds:.1f} s ({rate:.0f} per minute), seed {seed}")
        if note:
            lines.append(f"Note: {note}")
        if ok:
            totals = [g.total for g in ok]
            lines.append(f"Score out of {_points(plan.max_points)}: mean {statistics.mean(totals):.2f}, "
                         f"median {_points(statistics.median(totals))}, min {_points(min(totals))}, "
                         f"max {_points(max(totals))}")
            rates = []
            for q in plan.questions:
                passed = sum(1 for g in ok for r in g.results if r.qid == q.qid and r.passed)
                rates.append(f"{q.qid}{'*' if q.private else ''} {100 * passed / len(ok):.0f}%")
            lines.append("Passed per question: " + ", ".join(rates)
                         + ("  (* private)" if any(q.private for q in plan.questions) else ""))
    bad = [g for g in graded if not g.submission.gradable]
    if bad:
        lines.append(f"Could not grade {len(bad)}:")
        lines += [f"  {g.submission.name}: {g.status}: {g.submission.message}" for g in bad]
    odd = [g for g in ok if g.flags]
    if odd:
        lines.append(f"Graded with problems ({len(odd)}):")
        lines += [f"  {g.submission.name}: {g.status}: {'; '.join(g.notes)}" for g in odd]
    return "\n".join(lines)
