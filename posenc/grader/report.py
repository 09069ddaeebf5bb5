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
import unicodedata
from pathlib import Path

from posenc.grader.downloads import feedback_stem
from posenc.grader.session import PRIVATE_TROUBLE, Graded, Plan
from posenc.grader.status import GRADER_ERROR, NOT_UPLOADS

# C0 and C1 controls, DEL, and the bidirectional overrides that reorder what a terminal shows.
# U+2028 and U+2029 end a line in many editors, as U+0085 (a C1 control) does.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_BLANKS = re.compile(r"\s{2,}")
_SURROGATES = re.compile("[\ud800-\udfff]")
FORMULA_SIGNS = ("=", "+", "-", "@", "\u2212")     # after NFKC folding (U+2212: the minus sign)
# Characters a spreadsheet may skip or show as nothing before a formula's sign: format characters (zero-width
# spaces and joiners, U+FEFF, soft hyphen: category Cf), blanks of every kind, combining marks, and the
# Hangul fillers, which are letters that render as blanks.
_INVISIBLE_CATEGORIES = ("Cf", "Cc", "Zs", "Zl", "Zp", "Mn", "Me")
_BLANK_LETTERS = "\u115f\u1160\u3164\uffa0\u2800"
MAX_CELL, MAX_LINE, MAX_LINES, MAX_FEEDBACK = 4000, 1000, 40, 64_000
MAX_FEEDBACK_NAME = 200        # bytes, below the 255 of most file systems
COPIES = "names, comments, layout and the order of cells aside"


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


def one_line(text, limit: int = MAX_LINE) -> str:
    """``text`` as one line whose blanks are single spaces: a student's text (an exception message, a cell
    id, a file name) can never start a line of its own, so it cannot forge a grader's "[PASS] q1 (3/3)" or
    "Score: 12/12" line in the feedback or on the terminal."""
    return shorten(_BLANKS.sub(" ", clean(text)).strip(), limit)


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: cut after a whole word (unless that loses over half of it),
    with "…" where it was cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


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
    """A CSV cell no spreadsheet runs: cleaned, bounded, and a leading ' when it could start a formula."""
    text = clean(value, limit=MAX_CELL)
    return "'" + text if starts_formula(text) else text


def starts_formula(text: str) -> bool:
    """Whether ``text`` could start a formula: its first visible character is =, +, - or @, or one that
    Unicode's compatibility folding (NFKC) turns into one of them or into the minus sign: the full-width
    (U+FF1D), small (U+FE66) and super- or subscript forms. Invisible characters before it (U+200B, U+FEFF,
    U+2060, blanks, combining marks...) do not hide it."""
    for char in text:
        if unicodedata.category(char) in _INVISIBLE_CATEGORIES or char in _BLANK_LETTERS:
            continue
        return unicodedata.normalize("NFKC", char).startswith(FORMULA_SIGNS)
    return False


def _points(value: float) -> str:
    return f"{value:g}"


def ungraded_cell(g: Graded, ungraded_as: str) -> str:
    """The total of a hand-in that could not be graded (a PDF, a broken notebook, another set's, online text)
    under the lecturer's --ungraded-as: "" (empty) or "0"; never a zero where the grader itself failed. The
    one rule of grades.csv and the LMS files."""
    return "0" if ungraded_as == "0" and g.submission.problem != GRADER_ERROR else ""


def write_csv(path: Path, plan: Plan | None, graded: list[Graded], seed: int, students: dict | None = None,
              ungraded_as: str = "empty") -> None:
    """The gradebook; with a roster (``students``: file -> its student), keyed by student id first."""
    questions = plan.questions if plan else []
    keys = ["student_id", "name"] if students is not None else []
    header = [*keys, "file", *[q.qid for q in questions], "total", "percentage", "status", "message"]
    # UTF-8 with a byte-order mark: Excel opens it as UTF-8 (without one it guesses the system's code page)
    with open(path, "w", newline="", encoding="utf-8-sig", errors="replace") as handle:
        writer = csv.writer(handle)
        writer.writerow([csv_cell(h) for h in header])
        if plan:
            writer.writerow([csv_cell(c) for c in [
                *[""] * len(keys), "(maximum)", *[_points(q.points) for q in questions], _points(plan.max_points),
                "100", "", f"exercise set {plan.exercise_set.set_id}: {plan.exercise_set.title}; seed {seed}"
                + ("; private: " + ", ".join(q.qid for q in questions if q.private)
                   if any(q.private for q in questions) else "")]])
        for g in graded:
            student = students.get(g.submission.name) if students is not None else None
            ids = ([student.student_id, student.name] if student else ["", ""]) if keys else []
            writer.writerow([csv_cell(c) for c in [*ids, *csv_row(g, plan, ungraded_as)]])


def csv_row(g: Graded, plan: Plan | None, ungraded_as: str = "empty") -> list[str]:
    questions = plan.questions if plan else []
    if not g.submission.gradable:
        total = ungraded_cell(g, ungraded_as)
        return [g.submission.name, *[""] * len(questions), total, "0.0" if total else "", g.status,
                g.submission.message]
    by_id = {r.qid: r for r in g.results}
    total = g.total
    percent = 100 * total / plan.max_points if plan.max_points else 0.0
    return [g.submission.name, *[_points(by_id[q.qid].points) if q.qid in by_id else "" for q in questions],
            _points(total), f"{percent:.1f}", g.status, "; ".join(g.notes)]


def feedback_text(g: Graded, plan: Plan | None, private: bool = True) -> str:
    """What the student reads: public questions in full, private checks as pass/fail only (bounded).

    ``private=False``: nothing that depends on the private checks, neither their results nor the total
    nor what happened while they ran (Gradescope's top-level output, which students see at once)."""
    sub = g.submission
    if not sub.gradable:
        return clean(f"Feedback on {one_line(sub.name)}\n\nThis submission could not be graded: "
                     f"{one_line(sub.message, MAX_CELL)}\n", limit=MAX_FEEDBACK, newlines=True)
    public = [r for r in g.results if not r.private]
    if private or not any(q.private for q in plan.questions):
        score = "Score"
        got, out_of = g.total, plan.max_points
    else:
        score = "Score on the course's questions (your lecturer's further checks are not in it)"
        got, out_of = sum(r.points for r in public), sum(q.points for q in plan.questions if not q.private)
    lines = [f"Feedback on {one_line(sub.name)}",
             f"Exercise set {plan.exercise_set.set_id}: {plan.exercise_set.title}",
             f"{score}: {_points(got)}/{_points(out_of)} ({100 * got / out_of if out_of else 0:.0f}%)", ""]
    lines += [one_line(r.line()) for r in public]
    hidden = [r for r in g.results if r.private]
    if hidden and private:
        passed = sum(r.passed for r in hidden)
        lines += ["", f"Further checks by your lecturer: {passed} of {len(hidden)} passed "
                      f"({_points(sum(r.points for r in hidden))}/{_points(sum(r.max_points for r in hidden))} points)"]
        lines += [f"  check {i}: {'passed' if r.passed else 'failed'}" for i, r in enumerate(hidden, 1)]
    events = g.cell_errors + [n for n in g.student_notes if private or n != PRIVATE_TROUBLE]
    if events:
        lines += ["", "While running your notebook:"]
        lines += [f"  - {one_line(text)}" for text in events[:MAX_LINES]]
        if len(events) > MAX_LINES:
            lines.append(f"  - ... and {len(events) - MAX_LINES} more")
    text = "\n".join(clean(line, limit=MAX_LINE) for line in lines) + "\n"
    return clean(text, limit=MAX_FEEDBACK, newlines=True)


def feedback_names(names: list[str], reserved: tuple[str, ...] = ()) -> list[str]:
    """One feedback file name per gradebook name: reversible escapes (``sec1/bob`` and ``sec1__bob`` stay
    apart), no hidden or over-long names, and unique even where the file system ignores case; never one of
    ``reserved`` (what else the run writes into the same folder: a submission named
    ``grades.lecturer.ipynb`` does not overwrite the lecturer's report)."""
    taken: set[str] = {name.casefold() for name in reserved}
    result = []
    for name in names:
        # a file Canvas or Moodle named: the name their feedback upload gives back to the same student
        stem = feedback_stem(name) or (name[:-6] if name.endswith(".ipynb") else name)
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
        while (candidate + ".txt").casefold() in taken:
            number += 1
            candidate = f"{escaped}~{number}"
        taken.add((candidate + ".txt").casefold())
        result.append(candidate + ".txt")
    return result


FEEDBACK_MARK = b"Feedback on "        # how every feedback file starts: the grader's own, from any run


def clear_feedback(folder: Path, keep: tuple[str, ...] = ()) -> tuple[list[str], list[str]]:
    """Before a run writes its feedback: remove the feedback files an earlier run left in ``folder`` (a
    ``.txt`` file that starts as the grader's do), so that a hand-in removed or renamed since leaves no
    stale file to upload. Anything else is left. The names removed, and the names left."""
    removed, others = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name in keep:
            continue
        if entry.name.endswith(".txt") and entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as handle:
                ours = handle.read(len(FEEDBACK_MARK)) == FEEDBACK_MARK
            if ours:
                os.unlink(entry.path)
                removed.append(entry.name)
                continue
        others.append(one_line(entry.name, 200))
    return removed, others


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
                    f"{rate:.0f}/min  {one_line(g.submission.name)[-30:]:<30}")
            try:
                self.stream.write(line + ("\n" if self.done == self.total else ""))
            except UnicodeEncodeError:
                self.stream.write(line.encode("ascii", "backslashreplace").decode("ascii"))
            self.stream.flush()
        else:
            say(self.stream, f"[{self.done:>{len(str(self.total))}}/{self.total}] {one_line(g.submission.name)}: "
                             f"{score} {g.status}")


UNJUDGED = "the answer could not be judged ("     # framework.Question.result_from: the judge raised


def broken_private(graded: list[Graded]) -> dict[str, tuple[int, str]]:
    """Private checks whose judge raised: qid -> (how many submissions, the first message)."""
    found: dict[str, tuple[int, str]] = {}
    for g in graded:
        for r in g.results:
            if r.private and r.message.startswith(UNJUDGED):
                count, first = found.get(r.qid, (0, r.message))
                found[r.qid] = (count + 1, first)
    return found


def lecturer_report_text(plan: Plan | None, graded: list[Graded], copies: list[list[str]], note: str,
                         roster: list[str] = ()) -> str:
    """For the lecturer only (never the students): why each private check failed, the checks that look
    broken, the groups of copies, and every submission's flags and notes."""
    lines = ["Lecturer's report (not for students: it holds the private checks' diagnoses)", ""]
    if plan:
        lines.append(f"Exercise set {plan.exercise_set.set_id}: {plan.exercise_set.title}")
    if note:
        lines.append(f"Note: {one_line(note, 2000)}")
    private = [q for q in plan.questions if q.private] if plan else []
    if private:
        lines += ["", "Private checks:"]
        broken = broken_private(graded)
        for q in private:
            results = [r for g in graded for r in g.results if r.qid == q.qid]
            passed = sum(r.passed for r in results)
            lines.append(f"  {q.qid} ({one_line(q.title, 100)}, {_points(q.points)} points): passed by {passed} "
                         f"of {len(results)}" + (f"; its judge raised on {broken[q.qid][0]}: is it broken?"
                                                 if q.qid in broken else ""))
    if roster:
        lines += ["", "Roster:"] + [f"  {line}" for line in roster]
    if copies:
        lines += ["", f"Same code ({COPIES}; nobody is marked down):"]
        lines += ["  " + " = ".join(one_line(name, 200) for name in group) for group in copies]
    lines += ["", "Each submission:"]
    for g in graded:
        lines.append(f"  {one_line(g.submission.name, 300)}: {g.status}"
                     + (f", {_points(g.total)}/{_points(plan.max_points)}" if plan and g.submission.gradable else ""))
        if not g.submission.gradable:
            lines.append(f"    {one_line(g.submission.message, 1000)}")
        for r in g.results:
            if r.private and not r.passed:
                lines.append(f"    private {r.qid} failed: {one_line(r.message, 1000)}")
        lines += [f"    note: {one_line(n, 1000)}" for n in g.notes]
    return "\n".join(lines) + "\n"


def write_lecturer_report(path: Path, plan: Plan | None, graded: list[Graded], copies: list[list[str]],
                          note: str, roster: list[str] = ()) -> None:
    write_feedback(path, lecturer_report_text(plan, graded, copies, note, roster))


def summary(graded: list[Graded], plan: Plan | None, seconds: float, seed: int, note: str,
            copies: list[list[str]] = ()) -> str:
    ok = [g for g in graded if g.submission.gradable]
    lines = []
    if plan:
        rate = len(graded) / seconds * 60 if seconds else 0.0
        uploads = [g for g in graded if g.submission.problem not in NOT_UPLOADS]
        lines.append(f"Graded {len(ok)} of {len(uploads)} submissions of {plan.exercise_set.set_id} "
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
    bad = [g for g in graded if not g.submission.gradable and g.submission.problem not in NOT_UPLOADS]
    if bad:
        lines.append(f"Could not grade {len(bad)}:")
        lines += [f"  {one_line(g.submission.name)}: {g.status}: {one_line(g.submission.message)}" for g in bad]
    pages = [g for g in graded if g.submission.problem in NOT_UPLOADS]
    if pages:
        lines.append(f"Online text ({len(pages)} file(s) of the LMS's pages of what students typed, not notebooks: "
                     "read them in the LMS): " + one_line(", ".join(g.submission.name for g in pages), 2000))
    for qid, (count, first) in broken_private(graded).items():
        lines.append(f"Warning: private check {qid} could not judge {count} of {len(ok)} submissions "
                     f"({one_line(first, 200)}): is the check itself broken? The lecturer's report has each one")
    if copies:
        lines.append(f"Same code in {len(copies)} group(s) ({COPIES}; nobody is marked "
                     "down, compare them):")
        lines += ["  " + " = ".join(one_line(name, 200) for name in group) for group in copies]
    odd = [g for g in ok if g.flags]
    if odd:
        lines.append(f"Graded with problems ({len(odd)}):")
        lines += [f"  {one_line(g.submission.name)}: {g.status}: {one_line('; '.join(g.notes), 2000)}" for g in odd]
    return "\n".join(lines)
