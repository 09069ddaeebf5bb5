"""Timings, kept out of the tests: ``make bench`` (or ``python -m posenc.bench``).

Reports the execution time of every notebook, the loop-versus-vectorised encoding, the training speed of
the tiny Transformer under each position method, the time of each inline check on the worked solutions,
and grading throughput with the kernels in bubblewrap (when it is installed) and without, and the time each
full sweep took as its results file recorded it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from posenc.lib.encoding import sinusoidal_encoding, sinusoidal_encoding_loops
from posenc.lib.models import bench_methods

from posenc.paths import ROOT


def best_of(function, *args, repeats: int = 3) -> float:
    """The fastest of ``repeats`` runs, in seconds (the least disturbed by other work)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def bench_encoding(sizes=((100, 64), (1000, 128), (2000, 512))) -> None:
    print("Encoding: double Python loop vs vectorised NumPy (best of 3)")
    print(f"  {'n_positions x d_model':>22} {'loops [ms]':>12} {'vectorised [ms]':>16} {'speed-up':>9}")
    for n, d in sizes:
        loops, vectorised = best_of(sinusoidal_encoding_loops, n, d), best_of(sinusoidal_encoding, n, d)
        print(f"  {f'{n} x {d}':>22} {1000 * loops:12.1f} {1000 * vectorised:16.3f} {loops / vectorised:8.0f}x")


def bench_inline_checks() -> None:
    from posenc.exercises.authoring import notebook_namespace, sources
    from posenc.exercises import load_set

    print("Inline checks on the worked solutions (best of 3; students wait this long)")
    for source in sources():
        exercise_set = load_set(source.stem.split("_")[0])
        namespace = notebook_namespace(ROOT / "solutions" / f"{source.stem}.ipynb")
        for question in exercise_set.questions:
            seconds = best_of(question.grade, namespace)
            print(f"  {exercise_set.set_id} {question.qid}: {1000 * seconds:7.1f} ms")


def bench_notebooks() -> None:
    import nbformat
    from nbclient import NotebookClient

    print("Notebook execution, fresh kernel each (seconds)")
    for folder in ("notebooks", "exercises", "solutions"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            start = time.perf_counter()
            NotebookClient(nb, timeout=600, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            print(f"  {time.perf_counter() - start:6.1f}  {path.relative_to(ROOT)}")


def bench_grader(n: int = 40, jobs: int | None = None, sandbox: bool = True) -> dict:
    """Grading throughput on a generated class of ``n`` ch01 submissions (``python -m posenc.grader``),
    with the kernels in bubblewrap (``sandbox``) or not (``--no-sandbox``).

    The class is made of the grader corpus's ordinary submissions (correct, typical mistakes, unattempted,
    partial), repeated with a statement that makes each copy a program of its own (the grader compares code
    by syntax tree, so a comment would not).
    """
    import json
    import os
    import tempfile

    from posenc.grader.cli import grade_files
    from posenc.grader.kernel import Limits
    from posenc.grader.session import Settings

    corpus = ROOT / "tests" / "submissions"
    ordinary = sorted(p for p in corpus.glob("ch01_*.ipynb")
                      if any(k in p.name for k in ("correct", "mistake", "unattempted", "partial")))
    ordinary = ordinary or sorted((ROOT / "solutions").glob("ch01_*.ipynb"))
    with tempfile.TemporaryDirectory(prefix="posenc-bench-") as folder:
        for i in range(n):
            nb = json.loads(ordinary[i % len(ordinary)].read_text())
            first = next(cell for cell in nb["cells"] if cell["cell_type"] == "code")
            first["source"] = f"student_number = {i}\n" + "".join(first["source"])
            Path(folder, f"ch01_student{i:03d}.ipynb").write_text(json.dumps(nb))
        start, cpu_start = time.perf_counter(), _cpu_seconds()
        settings = Settings(seed=1234, limits=Limits(sandbox=sandbox))
        status = grade_files([folder], out=Path(folder) / "grades.csv", settings=settings,
                             jobs=jobs or os.cpu_count() or 1, quiet=True)
        seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    per_minute = n / seconds * 60
    how = "in bubblewrap" if sandbox else "without bubblewrap (--no-sandbox)"
    print(f"Grading throughput, kernels {how}: {n} submissions of ch01 in {seconds:.1f} s = "
          f"{per_minute:.0f} per minute on {os.cpu_count()} cores (exit status {status}); "
          f"{cpu / n:.2f} s of CPU per submission, so at most {120 * n / cpu:.0f} per minute on 2 idle cores")
    return {"submissions": n, "seconds": seconds, "per_minute": per_minute, "exit_status": status,
            "sandbox": sandbox, "cpu_per_submission": cpu / n}


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the grader's kernels included)."""
    import resource

    return sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


def bench_sweeps() -> None:
    """The wall-clock time of each full sweep, as its results file recorded it (``make experiments``)."""
    import json

    from posenc.experiments.results import RESULTS_DIR

    print("Full sweeps (make experiments), as recorded in results/*.json")
    for path in sorted(RESULTS_DIR.glob("*.json")):
        data = json.loads(path.read_text())
        timing = data.get("timing")
        if timing and "runs" in data:
            print(f"  {path.name}: {len(data['runs'])} runs, {len(data.get('seeds', []))} seeds, "
                  f"{timing['seconds'] / 60:.1f} min with {timing.get('processes')} process(es) "
                  f"on {timing.get('cpu_count')} cores")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-notebooks", action="store_true", help="skip the (slow) notebook timings")
    args = parser.parse_args(argv)
    bench_encoding()
    bench_methods()
    bench_inline_checks()
    from posenc.grader.sandbox import find_bwrap

    if find_bwrap():
        bench_grader(sandbox=True)
    else:
        print("Grading throughput in bubblewrap: not measured (bwrap is not installed)")
    bench_grader(sandbox=False)
    bench_sweeps()
    if not args.skip_notebooks:
        bench_notebooks()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
