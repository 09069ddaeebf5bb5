"""Grade a class's exercise notebooks into a gradebook CSV, with feedback for each student.

    python -m posenc.grader submissions/ --out grades.csv --feedback-dir feedback/
    python -m posenc.grader a.ipynb b.ipynb --out grades.csv --extra-tests ~/private-checks --jobs 2
    python -m posenc.grader hand-ins/ --out grades.csv --roster roster.csv --lms canvas --set ch01
    python -m posenc.grader gradescope ch01 --out autograder_ch01.zip     (see posenc.grader.gradescope)

Each submission runs in its own kernel process, forked from a warm server inside bubblewrap, with
namespaces, a folder and limits of its own (computing time per cell and per question, total time per
notebook, memory, disk); each question's answers are collected there on inputs the grader chooses and
judged here, in the grading process. Without bubblewrap the grader refuses to run unless told
--no-sandbox. See ``posenc.grader`` for how.

Exit status: 0 when every submission was graded, 1 when at least one could not be (its row says why;
everything else was graded and written), 2 when nothing was graded because the command itself is wrong (no
submissions, an unknown --set, notebooks of two sets without --set, a broken --extra-tests folder or
roster, no bubblewrap or bubblewrap refused) or its output cannot be written.

The manual: the course site, For lecturers, Grading a class (book/lecturers/grading.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from posenc.exercises import SET_IDS
from posenc.grader.kernel import Limits
from posenc.grader.lms import LMS, match, read_roster, students_by_file, write_canvas, write_moodle
from posenc.grader.report import (
    Progress, feedback_names, feedback_text, say, summary, terminal_text, write_csv, write_feedback,
    write_lecturer_report,
)
from posenc.grader.sandbox import SandboxError, find_bwrap
from posenc.grader.session import (
    Graded, Plan, ServerPool, Settings, UsageError, grade_submission, load_extra_tests,
)
from posenc.grader.submission import (
    GRADER_ERROR, NOT_NOTEBOOK, SYMLINK, SYMLINK_MESSAGE, UNKNOWN_SET, WRONG_SET, Submission, read_submission, set_digest,
    template_sources,
)

NO_BWRAP = ("bubblewrap (the program bwrap) is needed to confine the students' code: install it "
            "(Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or pass "
            "--no-sandbox to grade without it (see the course site, For lecturers, The sandbox: "
            "book/lecturers/sandbox.md)")


@dataclass
class Found:
    path: Path
    name: str            # how the gradebook names it: printable, unique
    symlink: bool = False
    notebook: bool = True   # False: an upload found in a folder that is not named .ipynb (a PDF, .ipynb.txt)


def display_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 are shown as \\xNN."""
    raw = os.fsencode(name)
    return raw.decode("utf-8", "backslashreplace")


def find_submissions(paths: list[str], exclude: tuple[Path, ...] = ()) -> list[Found]:
    """Files and folders (searched recursively, never through a symbolic link), in order: every file a
    folder holds is listed (those not named .ipynb as not notebooks), hidden files and checkpoints aside.

    A symbolic link met in a folder, or named as a file, is listed (as a symlink) but not followed; a folder
    named on the command line is searched even if it is a link (it is the lecturer's). The same path named
    twice is listed once.
    """
    found: list[Found] = []
    seen: set[str] = set()
    skip = [os.path.abspath(p) for p in exclude]       # what this run writes (a hand-in folder may hold it)
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            items = []
            for folder, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted((d for d in dirs if d != ".ipynb_checkpoints"), key=os.fsencode)
                linked = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
                for name in sorted(files + linked, key=os.fsencode):
                    if name.startswith(".") or (name in linked and not name.endswith(".ipynb")):
                        continue     # .DS_Store and other hidden files; a linked folder (never searched)
                    file = Path(folder, name)
                    items.append((file, file.relative_to(path).as_posix(), name.endswith(".ipynb")))
        else:
            items = [(path, path.name, True)]
        for file, name, notebook in items:
            key = os.path.abspath(file)
            if key in seen or (not notebook and any(key == p or key.startswith(p + os.sep) for p in skip)):
                continue                # the same file named twice is graded once; our own output is no upload
            seen.add(key)
            found.append(Found(file, name, os.path.islink(file), notebook))
    counts = Counter(f.name for f in found)
    for f in found:
        if counts[f.name] > 1:
            f.name = f.path.as_posix()
    names: set[str] = set()
    for f in found:                     # printable and still unique
        name = base = display_name(f.name)
        stem, suffix = (base[:-6], ".ipynb") if base.endswith(".ipynb") else (base, "")
        number = 1
        while name in names:
            number += 1
            name = f"{stem} ({number}){suffix}"
        names.add(name)
        f.name = name
    return found


def mixed_sets(subs: list[Submission]) -> str | None:
    """A clear refusal when the notebooks answer more than one of the course's sets (None: they do not)."""
    by_set: dict[str, list[str]] = {}
    for sub in subs:
        if sub.gradable and sub.set_id in SET_IDS:
            by_set.setdefault(sub.set_id, []).append(sub.name)
    if len(by_set) < 2:
        return None
    parts = []
    for set_id in (s for s in SET_IDS if s in by_set):
        names = by_set[set_id]
        count = f"{len(names)} notebook" + ("s" if len(names) > 1 else "")
        parts.append(f"{set_id} ({count}: {', '.join(names)})" if len(names) <= 3 else f"{set_id} ({count})")
    first = max(by_set, key=lambda s: len(by_set[s]))
    return (f"the notebooks answer more than one exercise set: {', '.join(parts)}. Grade each set on its own: "
            f"--set {first} grades {first} (the other notebooks then get the status wrong-set), or put each "
            "set's notebooks in a folder of their own")


def choose_set(subs: list[Submission], forced: str | None) -> tuple[str | None, str]:
    """The exercise set of this run: --set, else the course's set most submissions answer (on a tie,
    the first of them in the course's order, with a note)."""
    if forced:
        return forced, "--set"
    counts = Counter(s.set_id for s in subs if s.gradable and s.set_id in SET_IDS)
    if not counts:
        return None, ""
    top = max(counts.values())
    tied = [set_id for set_id in SET_IDS if counts.get(set_id) == top]
    best, total = tied[0], sum(counts.values())
    if len(tied) > 1:
        return best, (f"as many submissions answer {' as '.join(tied)} ({top} each); graded {best}, "
                      "use --set to choose another")
    if len(counts) > 1:
        return best, f"most submissions answer {best} ({top} of {total}); use --set to choose another"
    return best, ""


UNKNOWN_SET_MESSAGE = ("cannot tell which exercise set this notebook answers: its metadata has no "
                       "posenc.exercise_set, it never calls checker(\"chNN\") and its file name has no chNN; ")


def mark_problems(subs: list[Submission], set_id: str | None, forced: bool = False) -> None:
    known = set(SET_IDS)
    for sub in subs:
        if not sub.gradable:
            continue
        if sub.set_id is None and set_id is None:
            sub.problem, sub.message = UNKNOWN_SET, UNKNOWN_SET_MESSAGE + "pass --set chNN to grade it"
        elif sub.set_id is None and not forced:
            sub.problem, sub.message = UNKNOWN_SET, UNKNOWN_SET_MESSAGE + f"pass --set {set_id} to grade it as {set_id}"
        elif sub.set_id is None:
            sub.set_id = set_id
        elif sub.set_id not in known:
            sub.problem, sub.message = UNKNOWN_SET, (
                f"exercise set {sub.set_id} (from {sub.set_evidence}) is not one of this course's "
                f"sets ({', '.join(SET_IDS)})")
        elif sub.set_id != set_id:
            sub.problem, sub.message = WRONG_SET, (
                f"this is a notebook of exercise set {sub.set_id} (from {sub.set_evidence}), but this run "
                f"grades {set_id}: was the wrong notebook submitted?")


def find_copies(graded: list[Graded], template: set[str]) -> list[list[str]]:
    """Groups of graded notebooks that run the same program (comments, blank lines and layout aside) and
    hold code of their own. Nobody is marked down, as the grader cannot tell the original from the copy:
    each row's message names the others, and the summary lists the groups, for the lecturer to decide."""
    groups: dict[str, list[Graded]] = {}
    for g in graded:
        if g.submission.gradable:
            g.submission.digest = set_digest(g.submission, template)
            if g.submission.digest:
                groups.setdefault(g.submission.digest, []).append(g)
    copies = [group for group in groups.values() if len(group) > 1]
    for group in copies:
        for g in group:
            g.notes.append("same code as " + ", ".join(o.submission.name for o in group if o is not g)
                           + " (comments and layout aside; nobody is marked down: compare them)")
    return [[g.submission.name for g in group] for group in copies]


# ---------------------------------------------------------------------------------------------------
# The command


def grade_files(paths: list[str], *, out: Path, feedback_dir: Path | None = None, extra_tests: Path | None = None,
                settings: Settings | None = None, jobs: int = 2, set_id: str | None = None,
                stream=None, quiet: bool = False, lecturer_report: Path | None = None,
                roster: Path | None = None, lms: list[str] = (), assignment: str | None = None,
                assignment_id: str = "") -> int:
    """Grade, write the CSV (and feedback), print the summary; the exit status."""
    stream = stream or sys.stdout
    settings = settings or Settings()
    start = time.perf_counter()
    if set_id is not None and set_id not in SET_IDS:
        say(sys.stderr, f"error: unknown exercise set {terminal_text(set_id)!r}; the course has {', '.join(SET_IDS)}")
        return 2
    if settings.limits.sandbox and find_bwrap() is None:
        say(sys.stderr, "error: " + NO_BWRAP)
        return 2
    for name in lms:
        if name not in LMS:
            say(sys.stderr, f"error: --lms {terminal_text(name)}: one of {', '.join(LMS)}")
            return 2
    if lms and roster is None:
        say(sys.stderr, "error: --lms needs --roster (a CSV of student_id,name,email[,submission])")
        return 2
    students = read_roster(roster) if roster is not None else None      # a bad roster stops before grading
    out = Path(out)
    report = lecturer_report if lecturer_report is not None else out.with_name(out.stem + ".lecturer.txt")
    ours = (out, report, *(out.with_name(f"{out.stem}.{name}.csv") for name in LMS),
            *((Path(feedback_dir),) if feedback_dir else ()))
    files = find_submissions(paths, exclude=ours)
    if not files:
        say(sys.stderr, "error: no .ipynb submissions found in " + terminal_text(" ".join(paths)))
        return 2
    extras = load_extra_tests(extra_tests) if extra_tests else []
    pool = ServerPool(sandboxed=settings.limits.sandbox)
    progress = Progress(len(files), stream, quiet)
    try:
        try:
            pool.get(None)        # the first fork server, in the main thread (it parses the notebooks)
        except SandboxError as exc:
            say(sys.stderr, f"error: {terminal_text(str(exc))}")
            return 2
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as executor, _stop_on_interrupt(executor, pool):
            subs = list(executor.map(lambda f: _read(f, pool), files))
            refusal = None if set_id else mixed_sets(subs)
            if refusal:
                say(sys.stderr, "error: " + refusal)
                return 2
            chosen, note = choose_set(subs, set_id)
            mark_problems(subs, chosen, forced=bool(set_id))
            plan = Plan.make(chosen, extras) if chosen is not None else None
            if plan is not None:
                plan.check_private(settings.seed)
            if extras and plan is not None and not any(q.private for q in plan.questions):
                note = "; ".join(filter(None, [note, f"--extra-tests {extra_tests}: no private check for "
                                                     f"{chosen} (EXTRA has {', '.join(sorted({k for m in extras for k in m.questions}))})"]))
            results: dict[int, Graded] = {}
            if plan is not None and any(s.gradable for s in subs):
                try:
                    pool.get(chosen)  # started here, in the main thread: bubblewrap dies with this thread
                except SandboxError as exc:
                    say(sys.stderr, f"error: {terminal_text(str(exc))}")
                    return 2

            def work(sub: Submission) -> Graded:
                try:
                    return grade_submission(sub, plan, pool, settings)
                except Exception as exc:   # a bug of ours must not stop the class's run
                    sub.problem, sub.message = GRADER_ERROR, f"the grader failed: {type(exc).__name__}: {exc}"
                    return Graded(sub)

            for sub in subs:
                if not sub.gradable:
                    results[id(sub)] = Graded(sub)
                    progress.update(results[id(sub)], plan)
            for future in as_completed([executor.submit(work, sub) for sub in subs if sub.gradable]):
                g = future.result()
                results[id(g.submission)] = g
                progress.update(g, plan)
        sandbox = pool.sandbox()
    finally:
        pool.close()
    graded = [results[id(sub)] for sub in subs]
    copies = find_copies(graded, template_sources(chosen) if chosen else set())
    matching = match(students, graded) if students is not None else None
    roster_problems = matching.problems() if matching else []
    seconds = time.perf_counter() - start

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_csv(out, plan, graded, settings.seed, students_by_file(matching) if matching else None)
        write_lecturer_report(report, plan, graded, copies, note, roster_problems)
        title = assignment or (f"Exercise set {plan.exercise_set.set_id}" if plan else "Exercise set")
        gradebooks = []
        for name in dict.fromkeys(lms):
            gradebooks.append(out.with_name(f"{out.stem}.{name}.csv"))
            if name == "canvas":
                write_canvas(gradebooks[-1], matching, plan, title, assignment_id)
            else:
                write_moodle(gradebooks[-1], matching, plan, title)
        if feedback_dir:
            feedback_dir = Path(feedback_dir)
            feedback_dir.mkdir(parents=True, exist_ok=True)
            for g, name in zip(graded, feedback_names([g.submission.name for g in graded])):
                write_feedback(feedback_dir / name, feedback_text(g, plan))
    except OSError as exc:
        say(sys.stderr, f"error: cannot write the results: {terminal_text(str(exc))}")
        return 2
    if not quiet:
        say(stream, summary(graded, plan, seconds, settings.seed, note, copies))
        if roster_problems:
            say(stream, "Roster:\n" + "\n".join(f"  {line}" for line in roster_problems))
        for book in gradebooks:
            say(stream, f"Wrote {book} for the LMS's grade import")
        if sandbox is not None:
            say(stream, "Kernels confined by " + ("; ".join(sandbox) if sandbox else "nothing beyond the time limits"))
        if not settings.limits.sandbox:
            say(stream, "Warning: graded without bubblewrap (--no-sandbox): the students' code could read "
                        "every file you can")
        say(stream, f"Wrote {out}, the lecturer's report {report}"
                    + (f" and {len(graded)} feedback files in {feedback_dir}" if feedback_dir else ""))
    return 1 if any(not g.submission.gradable for g in graded) else 0


def _read(found: Found, pool: ServerPool) -> Submission:
    """A submission read and parsed (in a kernel); never raises."""
    if found.symlink:
        sub = Submission(found.path, found.name)
        sub.problem, sub.message = SYMLINK, SYMLINK_MESSAGE
        return sub
    if not found.notebook:
        sub = Submission(found.path, found.name)
        suffix = "".join(found.path.suffixes[-2:]) or "no extension"
        sub.problem, sub.message = NOT_NOTEBOOK, (f"not a notebook ({suffix}, not .ipynb): not graded; hand in "
                                                  "the .ipynb file that Jupyter saves")
        return sub
    try:
        return read_submission(found.path, found.name, parse=pool.parse)
    except Exception as exc:   # a bug of ours: this file only
        sub = Submission(found.path, found.name)
        sub.problem, sub.message = GRADER_ERROR, f"the grader failed: {type(exc).__name__}: {exc}"
        return sub


@contextlib.contextmanager
def _stop_on_interrupt(executor: ThreadPoolExecutor, pool: ServerPool):
    """Ctrl-C: kill the kernels first, so that the grading threads end at once, then stop."""
    try:
        yield
    except BaseException:
        pool.close()
        executor.shutdown(wait=True, cancel_futures=True)
        raise


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["gradescope"]:             # python -m posenc.grader gradescope chNN --out bundle.zip
        from posenc.grader.gradescope import main as gradescope_main

        return gradescope_main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m posenc.grader", description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", nargs="+", help=".ipynb files or folders holding them")
    parser.add_argument("--out", required=True, type=Path, help="the gradebook CSV to write")
    parser.add_argument("--feedback-dir", type=Path, help="write one feedback .txt per submission here")
    parser.add_argument("--extra-tests", type=Path, help="folder of private checks (.py files defining EXTRA)")
    parser.add_argument("--lecturer-report", type=Path, default=None, metavar="PATH",
                        help="the lecturer's report: private checks' diagnoses, copies, flags "
                             "(default: the CSV's name with .lecturer.txt)")
    parser.add_argument("--set", dest="set_id", help="the exercise set to grade (default: detected)")
    parser.add_argument("--roster", type=Path, help="CSV of student_id,name,email[,submission]: whose file is "
                                                    "which; the gradebook is then keyed by student id")
    parser.add_argument("--lms", action="append", default=[], choices=LMS,
                        help="also write the LMS's import CSV (canvas, moodle; may be given twice); needs --roster")
    parser.add_argument("--assignment", help="the assignment's name in the LMS (default: Exercise set chNN)")
    parser.add_argument("--assignment-id", default="", help="Canvas: the assignment's id (its column is then "
                                                            "'name (id)'; without one Canvas makes a new assignment)")
    parser.add_argument("--timeout-per-question", type=float, default=10.0, metavar="S",
                        help="seconds of computing the student's code may use for one question (default 10)")
    parser.add_argument("--timeout-per-cell", type=float, default=None, metavar="S",
                        help="seconds of computing one notebook cell may use (default: as per question)")
    parser.add_argument("--timeout-per-notebook", type=float, default=120.0, metavar="S",
                        help="seconds (wall clock) everything of one notebook may take (default 120)")
    parser.add_argument("--memory-mb", type=float, default=1024, metavar="M",
                        help="memory a kernel may allocate on top of the course's imports (default 1024)")
    parser.add_argument("--disk-mb", type=float, default=256, metavar="M",
                        help="what all the files a kernel writes may hold together (default 256)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="grade without bubblewrap (the students' code can then read your files; "
                             "only the limits, Landlock and seccomp apply)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="submissions graded at the same time (default: the number of cores)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the grader's inputs (default: random)")
    parser.add_argument("--quiet", action="store_true", help="no progress and no summary")
    args = parser.parse_args(argv)
    previous = None
    if threading.current_thread() is threading.main_thread():
        # `kill`: stop as on Ctrl-C, so that the kernels and their folders are removed
        previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    settings = Settings(timeout_per_question=args.timeout_per_question, timeout_per_cell=args.timeout_per_cell,
                        timeout_per_notebook=args.timeout_per_notebook,
                        limits=Limits(memory_mb=args.memory_mb, disk_mb=args.disk_mb, sandbox=not args.no_sandbox),
                        seed=args.seed if args.seed is not None else secrets.randbelow(2**31))
    try:
        return grade_files(args.submissions, out=args.out, feedback_dir=args.feedback_dir,
                           extra_tests=args.extra_tests, settings=settings, jobs=args.jobs,
                           set_id=args.set_id, quiet=args.quiet, lecturer_report=args.lecturer_report,
                           roster=args.roster, lms=args.lms, assignment=args.assignment,
                           assignment_id=args.assignment_id)
    except UsageError as exc:      # the lecturer's input (extra tests, set): say what is wrong
        say(sys.stderr, f"error: {terminal_text(str(exc))}")
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
