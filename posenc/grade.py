"""Grade a class's exercise notebooks into a gradebook CSV, with feedback for each student.

    python -m posenc.grade submissions/ --out grades.csv --feedback-dir feedback/
    python -m posenc.grade a.ipynb b.ipynb --out grades.csv --extra-tests ~/private-checks --jobs 2

Each submission runs in its own kernel process (forked from a warm server, in its own temporary folder,
confined where Linux allows, with a limit of computing time per cell and per question and a memory
limit); each question's answers are collected there on inputs the grader chooses and judged here, in
the grading process. See ``posenc.grading`` for how.

Exit status: 0 when every submission was graded, 1 when at least one could not be (its row says why),
2 when the command itself is wrong (no submissions, an unknown --set, a broken --extra-tests folder).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import secrets
import signal
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from posenc.checks import SET_IDS
from posenc.grading.grader import (
    DUPLICATE, Graded, Plan, ServerPool, Settings, grade_submission, load_extra_tests,
)
from posenc.grading.kernel import Limits
from posenc.grading.submission import (
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
# Output


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
    parser = argparse.ArgumentParser(prog="python -m posenc.grade", description=__doc__.split("\n\n")[0],
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


# ---------------------------------------------------------------------------------------------------
# Benchmark (make bench)


def benchmark(n: int = 40, jobs: int | None = None, stream=None) -> dict:
    """Grading throughput on a generated class of ``n`` submissions, and the time of the inline checks.

    The class is made of the corpus's ordinary submissions (correct, typical mistakes, unattempted),
    repeated with a comment that makes each copy unique, so nothing is graded once for several rows.
    """
    import json

    from posenc.checks import checker
    from posenc.authoring import ROOT

    stream = stream or sys.stdout
    corpus = ROOT / "tests" / "submissions"
    ordinary = sorted(p for p in corpus.glob("ch01_*.ipynb")
                      if any(k in p.name for k in ("correct", "mistake", "unattempted", "partial")))
    if not ordinary:
        ordinary = sorted((ROOT / "solutions").glob("ch01_*.ipynb"))
    report = {}
    with tempfile.TemporaryDirectory(prefix="posenc-bench-") as folder:
        for i in range(n):
            source = ordinary[i % len(ordinary)]
            nb = json.loads(source.read_text())
            for cell in nb["cells"]:
                if cell["cell_type"] == "code":
                    text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                    cell["source"] = f"# student {i}\n" + text
                    break
            Path(folder, f"ch01_student{i:03d}.ipynb").write_text(json.dumps(nb))
        settings = Settings(seed=1234)
        start = time.perf_counter()
        status = grade_files([folder], out=Path(folder) / "grades.csv", settings=settings,
                             jobs=jobs or os.cpu_count() or 1, quiet=True)
        seconds = time.perf_counter() - start
        report["submissions"] = n
        report["seconds"] = seconds
        report["per_minute"] = n / seconds * 60
        report["exit_status"] = status

    # Inline check: check("qN") on the solution, as the student runs it.
    namespace = {"__name__": "__main__"}
    solution = json.loads((ROOT / "solutions" / "ch01_sinusoids.ipynb").read_text())
    devnull = open(os.devnull, "w")
    stdout, sys.stdout = sys.stdout, devnull
    try:
        for cell in solution["cells"]:
            if cell["cell_type"] == "code":
                exec("".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"], namespace)
    finally:
        sys.stdout = stdout
    check = checker("ch01")
    times = {}
    for question in check.exercise_set.questions:
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            stdout, sys.stdout = sys.stdout, devnull
            try:
                check(question.qid, namespace)
            finally:
                sys.stdout = stdout
            best = min(best, time.perf_counter() - t)
        times[question.qid] = best
    devnull.close()
    report["inline_check_seconds"] = times
    print(f"Grading throughput: {n} submissions of ch01 in {seconds:.1f} s = {report['per_minute']:.0f} per "
          f"minute on {os.cpu_count()} cores (aim: at least 60)", file=stream)
    print("Inline check (best of 3): " + ", ".join(f"{q} {t * 1000:.0f} ms" for q, t in times.items())
          + f"; slowest {max(times.values()) * 1000:.0f} ms (aim: under 500 ms)", file=stream)
    return report


if __name__ == "__main__":
    sys.exit(main())
