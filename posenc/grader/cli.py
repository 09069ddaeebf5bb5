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
everything else was graded and written; an LMS's page of online text does not count), 2 when nothing was graded because the command itself is wrong (no
submissions, an unknown --set, notebooks of two sets without --set, a broken --extra-tests folder or
roster, no bubblewrap or bubblewrap refused) or its output cannot be written, 3 when the grader itself
failed (a bug: please report it).

The manual: the course site, For lecturers, Grading a class (book/lecturers/grading.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from posenc.exercises import SET_IDS
from posenc.grader.kernel import Limits
from posenc.grader.downloads import submitter_of
from posenc.grader.lms import (
    LMS, UNGRADED_AS, Roster, check_roster_kind, match, maximum_problem, read_roster, require_emails, students_by_file, write_canvas, write_moodle,
)
from posenc.grader.report import (
    COPIES, Progress, clear_feedback, feedback_names, feedback_text, one_line, say, summary, terminal_text,
    write_csv, write_feedback, write_lecturer_report,
)
from posenc.grader.sandbox import SandboxError, find_bwrap
from posenc.grader.session import (
    Graded, Plan, ServerPool, Settings, UsageError, default_seed, grade_submission, load_extra_tests,
)
from posenc.grader.status import (
    GRADER_ERROR, INVALID, NOT_NOTEBOOK, NOT_UPLOADS, ONLINE_TEXT, SYMLINK, UNKNOWN_SET, WRONG_SET,
)
from posenc.grader.submission import (
    SOLUTION_NOTE, SYMLINK_MESSAGE, Submission, read_submission, set_digest, solution_digest, template_sources,
)

NO_BWRAP = ("bubblewrap (the program bwrap) is needed to confine the students' code: install it "
            "(Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap), or pass "
            "--no-sandbox to grade without it (see the course site, For lecturers, The sandbox: "
            "book/lecturers/sandbox.md)")


GRADER_FAILED = 3               # the exit status of a fault of the grader's own
MAX_FOLDER_DEPTH = 32           # folders inside a hand-in folder (Canvas and Moodle nest one or two)


@dataclass
class Found:
    path: Path
    name: str            # how the gradebook names it: printable, unique
    symlink: bool = False
    notebook: bool = True   # False: an upload found in a folder that is not named .ipynb (a PDF, .ipynb.txt)
    problem: str = ""       # a folder that could not be searched: why (its row says it)


def display_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 are shown as \\xNN."""
    raw = os.fsencode(name)
    return raw.decode("utf-8", "backslashreplace")


def find_submissions(paths: list[str], exclude: tuple[Path, ...] = ()) -> list[Found]:
    """Files and folders (searched recursively, never through a symbolic link), in order: every file a
    folder holds is listed (those not named .ipynb as not notebooks), hidden files and checkpoints aside.

    A symbolic link met in a folder, or named as a file, is listed (as a symlink) but not followed; a folder
    named on the command line is searched even if it is a link (it is the lecturer's). The same path named
    twice is listed once. A folder that cannot be read, or lies deeper than MAX_FOLDER_DEPTH, is listed with
    its problem (its row says why) and the search goes on.
    """
    found: list[Found] = []
    seen: set[str] = set()
    skip = [os.path.abspath(p) for p in exclude]       # what this run writes (a hand-in folder may hold it)
    for raw in paths:
        path = Path(raw)
        items = _walk(path) if path.is_dir() else [Found(path, path.name)]
        for item in items:
            key = os.path.abspath(item.path)
            if key in seen or (not item.notebook and any(key == p or key.startswith(p + os.sep) for p in skip)):
                continue                # the same file named twice is graded once; our own output is no upload
            seen.add(key)
            item.symlink = not item.problem and os.path.islink(item.path)
            found.append(item)
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


def _walk(top: Path) -> list[Found]:
    """Everything ``top`` holds, folder by folder in name order (an explicit stack: no recursion, however
    deep the folders go)."""
    items: list[Found] = []
    stack = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        name = folder.relative_to(top).as_posix()
        if depth > MAX_FOLDER_DEPTH:
            items.append(Found(folder, name, notebook=False, problem=(
                f"a folder nested deeper than {MAX_FOLDER_DEPTH} folders: not searched (move its notebooks up)")))
            continue
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: os.fsencode(e.name))
        except OSError as exc:
            items.append(Found(folder, name, notebook=False, problem=f"a folder that cannot be read "
                                                                      f"({exc.strerror or exc}): not searched"))
            continue
        below = []
        for entry in entries:
            if entry.name.startswith(".") or entry.name == ".ipynb_checkpoints":
                continue            # .DS_Store, checkpoints and other hidden files
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_folder = False
            if is_folder:
                below.append((Path(entry.path), depth + 1))
            elif not entry.is_symlink() or entry.name.endswith(".ipynb") or not _is_linked_folder(entry):
                file = Path(entry.path)
                items.append(Found(file, file.relative_to(top).as_posix(), notebook=entry.name.endswith(".ipynb")))
        stack += reversed(below)
    return items


def _is_linked_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=True)
    except OSError:
        return False


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
    the first of them in the course's order, with a note; --set is the lecturer's own choice: no note)."""
    if forced:
        return forced, ""
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
            sub.refuse(UNKNOWN_SET, UNKNOWN_SET_MESSAGE + "pass --set chNN to grade it")
        elif sub.set_id is None and not forced:
            sub.refuse(UNKNOWN_SET, UNKNOWN_SET_MESSAGE + f"pass --set {set_id} to grade it as {set_id}")
        elif sub.set_id is None:
            sub.set_id = set_id
        elif sub.set_id not in known:
            sub.refuse(UNKNOWN_SET, f"exercise set {sub.set_id} (from {sub.set_evidence}) is not one of this "
                                    f"course's sets ({', '.join(SET_IDS)})")
        elif sub.set_id != set_id:
            sub.refuse(WRONG_SET, f"this is a notebook of exercise set {sub.set_id} (from {sub.set_evidence}), "
                                  f"but this run grades {set_id}: was the wrong notebook submitted?")


def find_copies(graded: list[Graded], template: set[str], set_id: str | None = None) -> list[list[str]]:
    """Groups of graded notebooks whose own code is the same (``set_digest``: names, comments, layout and
    the order of cells aside, handed-out cells and cells too small to be evidence left out). Nobody is
    marked down, as the grader cannot tell the original from the copy: each row's message names the others,
    and the summary lists the groups, for the lecturer to decide."""
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
                           + f" ({COPIES}; nobody is marked down: compare them)")
    solution = solution_digest(set_id) if set_id else ""
    listed = []
    for digest, group in groups.items():
        names = [g.submission.name for g in group]
        if digest == solution:        # the lecturer's: the row, the report and the summary, not the feedback
            for g in group:
                g.notes.append(SOLUTION_NOTE)
            listed.append(names + ["the course's published solution"])
        elif len(group) > 1:
            listed.append(names)
    return listed


# ---------------------------------------------------------------------------------------------------
# The command
#
# ``grade(Options)`` is a pipeline of named stages: check the options, read the roster, find the files,
# load the private checks, read (parse) the notebooks, plan the run (its set and questions), grade, compare
# and match, write, tell. A stage that finds the lecturer's input wrong raises UsageError (exit status 2).


@dataclass(frozen=True)
class Options:
    """What one run of the command grades and writes (the command line, as data)."""

    paths: tuple[str, ...]
    out: Path
    feedback_dir: Path | None = None
    extra_tests: Path | None = None
    settings: Settings = field(default_factory=Settings)
    jobs: int = 2
    set_id: str | None = None
    quiet: bool = False
    lecturer_report: Path | None = None
    roster: Path | None = None
    lms: tuple[str, ...] = ()
    assignment: str | None = None
    assignment_id: str = ""
    ungraded_as: str = "empty"       # the grade of a hand-in that could not be graded: "empty" or "0"

    @property
    def report(self) -> Path:
        return self.lecturer_report if self.lecturer_report is not None else \
            self.out.with_name(self.out.stem + ".lecturer.txt")

    def gradebook(self, lms: str) -> Path:
        return self.out.with_name(f"{self.out.stem}.{lms}.csv")

    @property
    def files(self) -> tuple[Path, ...]:
        """The files the run writes besides the feedback files."""
        return (self.out, self.report, *(self.gradebook(name) for name in LMS))

    @property
    def written(self) -> tuple[Path, ...]:
        """Everything the run writes (a hand-in folder may hold it: it is no upload)."""
        return (*self.files, *((self.feedback_dir,) if self.feedback_dir else ()))

    def check(self) -> None:
        """The options' own mistakes, before anything is read."""
        if self.set_id is not None and self.set_id not in SET_IDS:
            raise UsageError(f"unknown exercise set {self.set_id!r}; the course has {', '.join(SET_IDS)}")
        if self.settings.limits.sandbox and find_bwrap() is None:
            raise UsageError(NO_BWRAP)
        for name in self.lms:
            if name not in LMS:
                raise UsageError(f"--lms {name}: one of {', '.join(LMS)}")
        if self.lms and self.roster is None:
            raise UsageError("--lms needs --roster (Canvas's gradebook export, Moodle's grading worksheet or a CSV "
                             "of student_id,name[,email,submission])")
        if self.ungraded_as not in UNGRADED_AS:
            raise UsageError(f"--ungraded-as {self.ungraded_as}: one of {', '.join(UNGRADED_AS)}")


@dataclass
class Outcome:
    """What grading produced: the plan, every submission's result, and what was found across them."""

    plan: Plan | None
    graded: list[Graded]
    note: str = ""
    copies: list[list[str]] = field(default_factory=list)
    matching: object = None          # lms.Matching, with a roster
    roster: str = ""                 # what the roster was read as
    maximum: str = ""                # the LMS's maximum differs from the set's total
    feedback_cleared: list[str] = field(default_factory=list)   # the grader's stale files of an earlier run
    feedback_others: list[str] = field(default_factory=list)   # files in the feedback folder it did not write
    sandbox: list[str] | None = None
    gradebooks: list[Path] = field(default_factory=list)

    @property
    def roster_problems(self) -> list[str]:
        return ([self.maximum] if self.maximum else []) + (self.matching.problems() if self.matching else [])

    @property
    def exit_status(self) -> int:
        """1 when a hand-in could not be graded (the LMS's pages of online text are none)."""
        return 1 if any(not g.submission.gradable and g.submission.problem not in NOT_UPLOADS
                        for g in self.graded) else 0


def grade_files(paths: list[str], **options) -> int:
    """``grade`` with the options as keywords (see ``Options``)."""
    options["out"] = Path(options["out"])
    options["lms"] = tuple(options.get("lms", ()))
    return grade(Options(tuple(paths), **options))


def grade(options: Options, stream=None) -> int:
    """Grade, write the CSV (and feedback), print the summary; the exit status."""
    stream = stream or sys.stdout
    start = time.perf_counter()
    try:
        options.check()
        roster = read_roster(options.roster) if options.roster is not None else None
        if roster is not None:
            check_roster_kind(roster, options.lms)
        if roster is not None and "moodle" in options.lms:
            require_emails(roster)
        files = find_files(options)
        check_outputs(options, files)
        extras = load_extra_tests(options.extra_tests) if options.extra_tests else []
        outcome = grade_all(files, extras, options, stream)
        compare(outcome, roster)
        if roster is not None:
            outcome.maximum = maximum_problem(roster, outcome.plan, assignment_title(options, outcome.plan),
                                              options.assignment_id)
    except (UsageError, SandboxError) as exc:
        say(sys.stderr, f"error: {terminal_text(str(exc))}")
        return 2
    try:
        write_results(outcome, options)
    except OSError as exc:
        say(sys.stderr, f"error: cannot write the results: {terminal_text(str(exc))}")
        return 2
    if not options.quiet:
        tell(outcome, options, time.perf_counter() - start, stream)
    return outcome.exit_status


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def check_outputs(options: Options, files: list[Found]) -> None:
    """No output may overwrite an input: the CSV, the report and the LMS files are never the roster, a
    hand-in or a private check, and the feedback folder never holds the hand-ins (UsageError, exit 2)."""
    inputs = [*((options.roster,) if options.roster else ()), *(f.path for f in files if not f.problem),
              *(sorted(options.extra_tests.glob("*.py")) if options.extra_tests and options.extra_tests.is_dir()
                else ())]
    outputs = {"--out": options.out, "the lecturer's report": options.report,
               **{f"the {name} file": options.gradebook(name) for name in options.lms}}
    for what, output in outputs.items():
        clash = next((i for i in inputs if _same(output, i)), None)
        if clash is not None:
            raise UsageError(f"{what} would be written to {output}, which is an input of this run ({clash}): "
                             "nothing was written; choose another --out (or --lecturer-report)")
    if options.feedback_dir:
        folder = options.feedback_dir.resolve()
        for given in options.paths:
            place = Path(given).resolve()
            if place == folder or folder in place.parents:
                raise UsageError(f"--feedback-dir {options.feedback_dir} holds the hand-ins ({given}): feedback "
                                 "files could overwrite a student's files; give a folder of its own, such as "
                                 "feedback/ beside the hand-ins")


def find_files(options: Options) -> list[Found]:
    files = find_submissions(list(options.paths), exclude=options.written)
    if not files:
        raise UsageError("no .ipynb submissions found in " + " ".join(options.paths))
    return files


def grade_all(files: list[Found], extras: list, options: Options, stream) -> Outcome:
    """Read every file, plan the run, grade every gradable submission (in parallel, each in its kernel)."""
    pool = ServerPool(sandboxed=options.settings.limits.sandbox)
    progress = Progress(len(files), stream, options.quiet)
    try:
        pool.get(None)        # the first fork server, in the main thread (it parses the notebooks)
        with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as executor, \
                _stop_on_interrupt(executor, pool):
            subs = list(executor.map(lambda f: _read(f, pool), files))
            plan, note = plan_run(subs, extras, options)
            if plan is not None and any(s.gradable for s in subs):
                pool.get(plan.exercise_set.set_id)  # started here, in the main thread: bubblewrap dies with it
            results: dict[int, Graded] = {}
            for sub in subs:
                if not sub.gradable:
                    results[id(sub)] = Graded(sub)
                    progress.update(results[id(sub)], plan)
            work = [executor.submit(_grade_one, sub, plan, pool, options.settings) for sub in subs if sub.gradable]
            for future in as_completed(work):
                g = future.result()
                results[id(g.submission)] = g
                progress.update(g, plan)
        return Outcome(plan, [results[id(sub)] for sub in subs], note, sandbox=pool.sandbox())
    finally:
        pool.close()


def plan_run(subs: list[Submission], extras: list, options: Options) -> tuple[Plan | None, str]:
    """The set this run grades (refusing a folder of two sets without --set), each submission's problem
    with it, and the plan of questions, private checks included; a note for the lecturer."""
    refusal = None if options.set_id else mixed_sets(subs)
    if refusal:
        raise UsageError(refusal)
    chosen, note = choose_set(subs, options.set_id)
    mark_problems(subs, chosen, forced=bool(options.set_id))
    if options.settings.seed is None:
        options.settings.seed = default_seed(chosen or "")
    if chosen is None:
        return None, note
    plan = Plan.make(chosen, extras)
    plan.check_private(options.settings.seed)
    if extras and not any(q.private for q in plan.questions):
        sets = ", ".join(sorted({k for m in extras for k in m.questions}))
        note = "; ".join(filter(None, [note, f"--extra-tests {options.extra_tests}: no private check for "
                                             f"{chosen} (EXTRA has {sets})"]))
    return plan, note


def _grade_one(sub: Submission, plan: Plan, pool: ServerPool, settings: Settings) -> Graded:
    try:
        return grade_submission(sub, plan, pool, settings)
    except Exception as exc:   # a bug of ours must not stop the class's run
        sub.refuse(GRADER_ERROR, f"the grader failed: {type(exc).__name__}: {exc}")
        return Graded(sub)


def compare(outcome: Outcome, roster: Roster | None) -> None:
    """Across the submissions: the groups of copies, and with a roster whose file is which."""
    plan = outcome.plan
    outcome.copies = find_copies(outcome.graded, template_sources(plan.exercise_set.set_id) if plan else set(),
                                 plan.exercise_set.set_id if plan else None)
    if roster is not None:
        outcome.matching, outcome.roster = match(roster.students, outcome.graded), roster.source


def write_results(outcome: Outcome, options: Options) -> None:
    """The gradebook, the lecturer's report, the LMS files and the feedback files."""
    plan, graded, matching = outcome.plan, outcome.graded, outcome.matching
    options.out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(options.out, plan, graded, options.settings.seed, students_by_file(matching) if matching else None,
              options.ungraded_as)
    write_lecturer_report(options.report, plan, graded, outcome.copies, outcome.note, outcome.roster_problems)
    title = assignment_title(options, plan)
    for name in dict.fromkeys(options.lms):
        outcome.gradebooks.append(options.gradebook(name))
        if name == "canvas":
            write_canvas(outcome.gradebooks[-1], matching, plan, title, options.assignment_id, options.ungraded_as)
        else:
            write_moodle(outcome.gradebooks[-1], matching, plan, title, options.ungraded_as)
    if options.feedback_dir:
        options.feedback_dir.mkdir(parents=True, exist_ok=True)
        folder = options.feedback_dir.resolve()
        uploads = feedback_for(graded)
        ours = tuple(p.name for p in options.files if p.resolve().parent == folder)   # the report...
        removed, outcome.feedback_others = clear_feedback(options.feedback_dir, ours)
        names = feedback_names([g.submission.name for g in uploads], reserved=ours)
        for g, name in zip(uploads, names):
            write_feedback(options.feedback_dir / name, feedback_text(g, plan))
        outcome.feedback_cleared = [one_line(name, 200) for name in removed if name not in set(names)]


def assignment_title(options: Options, plan: Plan | None) -> str:
    """The assignment's name in the LMS files: --assignment, else "Exercise set chNN"."""
    return options.assignment or (f"Exercise set {plan.exercise_set.set_id}" if plan else "Exercise set")


def feedback_for(graded: list[Graded]) -> list[Graded]:
    """The submissions that get a feedback file: all but the LMS's pages of online text (no upload of the
    student's: a feedback file would only puzzle them), and but a file that is no notebook (notes.pdf) of a
    student whose notebook was graded: "hand in the .ipynb" beside their grade would contradict it."""
    def student(g: Graded):
        return submitter_of(g.submission.name)

    with_notebook = {who.key for g in graded if g.submission.gradable and (who := student(g))}
    return [g for g in graded if g.submission.problem not in NOT_UPLOADS and not (
        g.submission.problem == NOT_NOTEBOOK and (who := student(g)) and who.key in with_notebook)]


def tell(outcome: Outcome, options: Options, seconds: float, stream) -> None:
    """The summary on the terminal."""
    graded = outcome.graded
    say(stream, summary(graded, outcome.plan, seconds, options.settings.seed, outcome.note, outcome.copies))
    if outcome.roster:
        say(stream, f"Roster: {outcome.roster}" + "".join(f"\n  {line}" for line in outcome.roster_problems))
    for book in outcome.gradebooks:
        say(stream, f"Wrote {book} for the LMS's grade import")
    if outcome.feedback_cleared:
        say(stream, f"Removed {len(outcome.feedback_cleared)} feedback file(s) of an earlier run from "
                    f"{options.feedback_dir}, about hand-ins this run did not grade: "
                    + ", ".join(outcome.feedback_cleared[:10]) + (" ..." if len(outcome.feedback_cleared) > 10 else ""))
    if outcome.feedback_others:
        say(stream, f"{options.feedback_dir} also holds {len(outcome.feedback_others)} file(s) the grader did not "
                    f"write, left as they are: {', '.join(outcome.feedback_others[:10])}"
                    f"{' ...' if len(outcome.feedback_others) > 10 else ''}; move them out before you zip the folder")
    if outcome.sandbox is not None:
        say(stream, "Kernels confined by " + ("; ".join(outcome.sandbox) or "nothing beyond the time limits"))
    if not options.settings.limits.sandbox:
        say(stream, "Warning: graded without bubblewrap (--no-sandbox): the students' code could read "
                    "every file you can")
    say(stream, f"Wrote {options.out}, the lecturer's report {options.report}"
                + (f" and {len(feedback_for(graded))} feedback files in {options.feedback_dir}"
                   if options.feedback_dir else ""))


def _read(found: Found, pool: ServerPool) -> Submission:
    """A submission read and parsed (in a kernel); never raises."""
    if found.problem:
        return Submission(found.path, found.name).refuse(INVALID, found.problem)
    if found.symlink:
        return Submission(found.path, found.name).refuse(SYMLINK, SYMLINK_MESSAGE)
    if not found.notebook and (submitter := submitter_of(found.name)) and submitter.online_text:
        return Submission(found.path, found.name).refuse(
            ONLINE_TEXT, f"the {submitter.lms.capitalize()} page of what the student typed as online text, not a "
                         "notebook: not graded (read it in the LMS)")
    if not found.notebook:
        suffix = "".join(found.path.suffixes[-2:]) or "no extension"
        return Submission(found.path, found.name).refuse(
            NOT_NOTEBOOK, f"not a notebook ({suffix}, not .ipynb): not graded; hand in the .ipynb file that "
                          "Jupyter saves")
    try:
        return read_submission(found.path, found.name, parse=pool.parse)
    except Exception as exc:   # a bug of ours: this file only
        return Submission(found.path, found.name).refuse(GRADER_ERROR, f"the grader failed: {type(exc).__name__}: {exc}")


@contextlib.contextmanager
def _stop_on_interrupt(executor: ThreadPoolExecutor, pool: ServerPool):
    """Ctrl-C: kill the kernels first, so that the grading threads end at once, then stop."""
    try:
        yield
    except BaseException:
        pool.close()
        executor.shutdown(wait=True, cancel_futures=True)
        raise


# ---------------------------------------------------------------------------------------------------
# The command line: ``grade`` (the default: ``python -m posenc.grader DIR ...`` is ``... grade DIR ...``),
# ``gradescope`` (the autograder bundle) and ``run-autograder`` (inside Gradescope's container)

COMMANDS = ("grade", "gradescope", "run-autograder")


def add_grade_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submissions", nargs="+", help=".ipynb files or folders holding them")
    parser.add_argument("--out", required=True, type=Path, help="the gradebook CSV to write")
    parser.add_argument("--feedback-dir", type=Path, help="write one feedback .txt per submission here")
    parser.add_argument("--extra-tests", type=Path, help="folder of private checks (.py files defining EXTRA)")
    parser.add_argument("--lecturer-report", type=Path, default=None, metavar="PATH",
                        help="the lecturer's report: private checks' diagnoses, copies, flags "
                             "(default: the CSV's name with .lecturer.txt)")
    parser.add_argument("--set", dest="set_id", help="the exercise set to grade (default: detected)")
    parser.add_argument("--roster", type=Path, help="whose file is which: Canvas's gradebook export, Moodle's "
                                                    "grading worksheet, or a CSV of student_id,name[,email,"
                                                    "submission]; the gradebook is then keyed by student id")
    parser.add_argument("--lms", action="append", default=[], choices=LMS,
                        help="also write the LMS's import CSV (canvas, moodle; may be given twice); needs --roster")
    parser.add_argument("--assignment", help="the assignment's name in the LMS (default: Exercise set chNN)")
    parser.add_argument("--assignment-id", default="", help="Canvas: the assignment's id (its column is then "
                                                            "'name (id)'; without one Canvas makes a new assignment)")
    parser.add_argument("--ungraded-as", choices=UNGRADED_AS, default="empty",
                        help="the grade of a hand-in that could not be graded (a PDF, a broken notebook, another "
                             "set's), in grades.csv and the LMS files alike: empty (the default: you decide each) "
                             "or 0 (an LMS then posts the zero)")
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
    parser.add_argument("--seed", type=int, default=None, help="seed of the inputs the grader draws besides its fixed ones (default: one per "
                             "set, the same as a Gradescope bundle's default)")
    parser.add_argument("--quiet", action="store_true", help="no progress and no summary")


def options_from(args: argparse.Namespace) -> Options:
    settings = Settings(timeout_per_question=args.timeout_per_question, timeout_per_cell=args.timeout_per_cell,
                        timeout_per_notebook=args.timeout_per_notebook,
                        limits=Limits(memory_mb=args.memory_mb, disk_mb=args.disk_mb, sandbox=not args.no_sandbox),
                        seed=args.seed)
    return Options(tuple(args.submissions), args.out, feedback_dir=args.feedback_dir, extra_tests=args.extra_tests,
                   settings=settings, jobs=args.jobs, set_id=args.set_id, quiet=args.quiet,
                   lecturer_report=args.lecturer_report, roster=args.roster, lms=tuple(args.lms),
                   assignment=args.assignment, assignment_id=args.assignment_id, ungraded_as=args.ungraded_as)


def run_grade(args: argparse.Namespace) -> int:
    previous = None
    if threading.current_thread() is threading.main_thread():
        # `kill`: stop as on Ctrl-C, so that the kernels and their folders are removed
        previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        return grade(options_from(args))
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def parser() -> argparse.ArgumentParser:
    from posenc.grader import gradescope

    top = argparse.ArgumentParser(prog="python -m posenc.grader", description=__doc__.split("\n\n")[0],
                                  epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", metavar="{grade,gradescope}", required=True)
    grade_parser = commands.add_parser("grade", help="grade a class's notebooks (the default command)",
                                       description=__doc__.split("\n\n")[0])
    add_grade_arguments(grade_parser)
    grade_parser.set_defaults(run=run_grade)
    bundle = commands.add_parser("gradescope", help="build a Gradescope autograder (.zip) for one exercise set",
                                 description="Build a Gradescope autograder (.zip) for one exercise set.")
    gradescope.add_bundle_arguments(bundle)
    bundle.set_defaults(run=gradescope.run_bundle)
    container = commands.add_parser("run-autograder", description="Inside Gradescope's container (what "
                                    "the bundle's run_autograder runs): grade ROOT/submission into "
                                    "ROOT/results/results.json.")
    gradescope.add_run_arguments(container)
    container.set_defaults(run=gradescope.run_container)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help"):
        argv.insert(0, "grade")               # python -m posenc.grader DIR ... grades DIR
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:      # the lecturer's input (extra tests, set): say what is wrong
        say(sys.stderr, f"error: {terminal_text(str(exc))}")
        return 2
    except Exception as exc:       # a bug of ours: its own exit status, never "some files were not graded"
        say(sys.stderr, f"error: the grader failed: {type(exc).__name__}: {terminal_text(str(exc))}; nothing "
                        "was written; please report it (with the command you ran)")
        return GRADER_FAILED


if __name__ == "__main__":
    sys.exit(main())
