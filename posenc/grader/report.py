"""What a grading run writes: the gradebook CSV, one feedback file per student, the progress line and the
summary on the terminal."""

from __future__ import annotations

import csv
import statistics
import sys
import time
from pathlib import Path

from posenc.grader.session import Graded, Plan




def _points(value: float) -> str:
    return f"{value:g}"


def write_csv(path: Path, plan: Plan | None, graded: list[Graded], seed: int) -> None:
    questions = plan.questions if plan else []
    header = ["file", *[q.qid for q in questions], "total", "percentage", "status", "message"]
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        if plan:
            writer.writerow(["(maximum)", *[_points(q.points) for q in questions], _points(plan.max_points),
                             "100", "", f"exercise set {plan.exercise_set.set_id}: {plan.exercise_set.title}; "
                                        f"seed {seed}" + ("; private: " + ", ".join(
                                            q.qid for q in questions if q.private)
                                            if any(q.private for q in questions) else "")])
        for g in graded:
            writer.writerow(csv_row(g, plan))


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
    """What the student reads: public questions in full, private checks as pass/fail only."""
    sub = g.submission
    if not sub.gradable:
        return f"Feedback on {sub.name}\n\nThis submission could not be graded: {sub.message}\n"
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
    if g.cell_errors or notes:
        lines += ["", "While running your notebook:"]
        lines += [f"  - {text}" for text in g.cell_errors + notes]
    return "\n".join(lines) + "\n"


def feedback_name(name: str) -> str:
    stem = name[:-6] if name.endswith(".ipynb") else name
    return stem.replace("/", "__").replace("\\", "__") + ".txt"


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
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
                              f"{rate:.0f}/min  {g.submission.name[-30:]:<30}")
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(f"[{self.done:>{len(str(self.total))}}/{self.total}] {g.submission.name}: "
                              f"{score} {g.status}\n")
        self.stream.flush()


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
