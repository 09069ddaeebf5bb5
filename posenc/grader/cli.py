"""Grade a class's exercise notebooks into a gradebook CSV, with feedback for each student.

    python -m posenc.grader submissions/ --out grades.csv --feedback-dir feedback/
    python -m posenc.grader a.ipynb b.ipynb --out grades.csv --extra-tests ~/private-checks --jobs 2

Each submission runs in its own kernel process (forked from a warm server, in its own temporary folder,
confined where Linux allows, with a limit of computing time per cell and per question and a memory
limit); each question's answers are collected there on inputs the grader chooses and judged here, in
the grading process. See ``posenc.grader`` for how.

Exit status: 0 when every submission was graded, 1 when at least one could not be (its row says why),
2 when the command itself is wrong (no submissions, an unknown --set, a broken --extra-tests folder).
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
from pathlib import Path

from posenc.exercises import SET_IDS
from posenc.grader.report import Progress, feedback_name, feedback_text, summary, write_csv
from posenc.grader.session import (
    DUPLICATE, Graded, Plan, ServerPool, Settings, grade_submission, load_extra_tests,
)
from posenc.grader.kernel import Limits
from posenc.grader.submission import (
    GRADER_ERROR, UNKNOWN_SET, WRONG_SET, Submission, read_submission, set_digest, template_sources,
)


def find_submissions(paths: list[str]) -> list[tuple[Path, str]]:
    """Files and folders (searched recursively for .ipynb) as (path, name in the gradebook), in order."""
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*.ipynb")
                           if ".ipynb_checkpoints" not in p.parts and p.is_file())
            items = [(p, p.relative_to(path).as_posix()) for p in files]
        else:
            items = [(path, path.name)]
        for file, name in items:
            key = file.resolve()
            if key not in seen:          # the same file named twice is graded once
                seen.add(key)
                found.append((file, name))
    names = Counter(name for _, name in found)
    return [(p, p.as_posix() if names[name] > 1 else name) for p, name in found]


def choose_set(subs: list[Submission], forced: str | None) -> tuple[str | None, str]:
    """The exercise set of this run: --set, else the one most submissions answer."""
    if forced:
        return forced, "--set"
    counts = Counter(s.set_id for s in subs if s.gradable and s.set_id)
    if not counts:
        return None, ""
    (best, n), *rest = counts.most_common()
    if rest:
        return best, (f"most submissions answer {best} ({n} of {sum(counts.values())}); "
                      "use --set to choose another")
    return best, ""


def mark_problems(subs: list[Submission], set_id: str | None, forced: bool = False) -> None:
    known = set(SET_IDS)
    for sub in subs:
        if not sub.gradable:
            continue
        if sub.set_id is None and set_id is None:
            sub.problem, sub.message = UNKNOWN_SET, (
                "cannot tell which exercise set this notebook answers: its metadata has no "
                "posenc.exercise_set, it never calls checker(\"chNN\") and its file name has no chNN; "
                "pass --set chNN to grade it")
        elif sub.set_id is None and not forced:
            sub.problem, sub.message = UNKNOWN_SET, (
                "cannot tell which exercise set this notebook answers: its metadata has no "
                "posenc.exercise_set, it never calls checker(\"chNN\") and its file name has no chNN; "
                f"pass --set {set_id} to grade it as {set_id}")
        elif sub.set_id is None:
            sub.set_id = set_id
        elif sub.set_id != set_id:
            sub.problem, sub.message = WRONG_SET, (
                f"this is a notebook of exercise set {sub.set_id} (from {sub.set_evidence}), but this run "
                f"grades {set_id}: was the wrong notebook submitted?")
        elif sub.set_id not in known:
            sub.problem, sub.message = UNKNOWN_SET, (
                f"exercise set {sub.set_id} (from {sub.set_evidence}) is not one of this course's "
                f"sets ({', '.join(SET_IDS)})")


# ---------------------------------------------------------------------------------------------------
# The command


def grade_files(paths: list[str], *, out: Path, feedback_dir: Path | None = None, extra_tests: Path | None = None,
                settings: Settings | None = None, jobs: int = 2, set_id: str | None = None,
                stream=None, quiet: bool = False) -> int:
    """Grade, write the CSV (and feedback), print the summary; the exit status."""
    stream = stream or sys.stdout
    settings = settings or Settings()
    start = time.perf_counter()
    files = find_submissions(paths)
    if not files:
        print("error: no .ipynb submissions found in " + " ".join(paths), file=sys.stderr)
        return 2
    subs = [read_submission(path, name) for path, name in files]
    chosen, note = choose_set(subs, set_id)
    if chosen is not None and chosen not in SET_IDS:
        print(f"error: unknown exercise set {chosen!r}; the course has {', '.join(SET_IDS)}", file=sys.stderr)
        return 2
    mark_problems(subs, chosen, forced=bool(set_id))
    extras = load_extra_tests(extra_tests) if extra_tests else []
    plan = None
    if chosen is not None:
        plan = Plan.make(chosen, extras)

    # Identical work is graded once; every copy gets its own row, flagged.
    template = template_sources(chosen) if chosen else set()
    original_of: dict[int, Submission] = {}          # id(copy) -> the first submission with that code
    first: dict[str, Submission] = {}
    for sub in subs:
        if sub.gradable:
            sub.digest = set_digest(sub, template)
            if sub.digest:
                original_of[id(sub)] = first.setdefault(sub.digest, sub)
    copies_of = {id(o): [s for s in subs if original_of.get(id(s)) is o and s is not o]
                 for o in first.values()}

    progress = Progress(len(subs), stream, quiet)
    results: dict[int, Graded] = {}
    pool = ServerPool()
    try:
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
        to_grade = [s for s in subs if s.gradable and original_of.get(id(s), s) is s]
        executor = ThreadPoolExecutor(max_workers=max(1, jobs))
        try:
            finished = as_completed([executor.submit(work, sub) for sub in to_grade])
        except BaseException:
            executor.shutdown(cancel_futures=True)
            raise
        with _stop_on_interrupt(executor, pool):
            for future in finished:
                g = future.result()
                results[id(g.submission)] = g
                copies = copies_of.get(id(g.submission), [])
                if copies and g.submission.gradable:
                    g.flag(DUPLICATE, "same code as " + ", ".join(c.name for c in copies))
                progress.update(g, plan)
                for copy in copies:
                    if not g.submission.gradable:
                        copy.problem, copy.message = g.submission.problem, g.submission.message
                    twin = Graded(copy, list(g.results), [f for f in g.flags if f != DUPLICATE],
                                  [n for n in g.notes if not n.startswith("same code as")], list(g.cell_errors))
                    if copy.gradable:
                        twin.flag(DUPLICATE, f"same code as {g.submission.name} (graded once)")
                    results[id(copy)] = twin
                    progress.update(twin, plan)
        sandbox = pool.sandbox()
    finally:
        pool.close()
    graded = [results[id(sub)] for sub in subs]
    seconds = time.perf_counter() - start

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(out, plan, graded, settings.seed)
    if feedback_dir:
        feedback_dir = Path(feedback_dir)
        feedback_dir.mkdir(parents=True, exist_ok=True)
        for g in graded:
            (feedback_dir / feedback_name(g.submission.name)).write_text(feedback_text(g, plan))
    if not quiet:
        print(summary(graded, plan, seconds, settings.seed, note), file=stream)
        if sandbox is not None:
            print("Kernels confined by " + ("; ".join(sandbox) if sandbox else
                  "nothing beyond the time, memory and file-size limits (no Landlock or seccomp here)"),
                  file=stream)
        print(f"Wrote {out}" + (f" and {len(graded)} feedback files in {feedback_dir}" if feedback_dir else ""),
              file=stream)
    return 1 if any(not g.submission.gradable for g in graded) else 0


@contextlib.contextmanager
def _stop_on_interrupt(executor: ThreadPoolExecutor, pool: ServerPool):
    """Ctrl-C: kill the kernels first, so that the grading threads end at once, then stop."""
    try:
        yield
    except BaseException:
        pool.close()
        executor.shutdown(wait=True, cancel_futures=True)
        raise
    executor.shutdown(wait=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m posenc.grader", description=__doc__.split("\n\n")[0],
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("submissions", nargs="+", help=".ipynb files or folders holding them")
    parser.add_argument("--out", required=True, type=Path, help="the gradebook CSV to write")
    parser.add_argument("--feedback-dir", type=Path, help="write one feedback .txt per submission here")
    parser.add_argument("--extra-tests", type=Path, help="folder of private checks (.py files defining EXTRA)")
    parser.add_argument("--set", dest="set_id", help="the exercise set to grade (default: detected)")
    parser.add_argument("--timeout-per-question", type=float, default=10.0, metavar="S",
                        help="seconds of computing the student's code may use for one question (default 10)")
    parser.add_argument("--timeout-per-cell", type=float, default=None, metavar="S",
                        help="seconds of computing one notebook cell may use (default: as per question)")
    parser.add_argument("--memory-mb", type=float, default=1024, metavar="M",
                        help="memory a kernel may allocate on top of the course's imports (default 1024)")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="do not confine kernels with Landlock and seccomp (limits still apply)")
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
                        limits=Limits(memory_mb=args.memory_mb, sandbox=not args.no_sandbox),
                        seed=args.seed if args.seed is not None else secrets.randbelow(2**31))
    try:
        return grade_files(args.submissions, out=args.out, feedback_dir=args.feedback_dir,
                           extra_tests=args.extra_tests, settings=settings, jobs=args.jobs,
                           set_id=args.set_id, quiet=args.quiet)
    except ValueError as exc:      # the lecturer's input (extra tests, set): say what is wrong
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
