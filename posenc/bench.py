"""Timings, kept out of the tests: ``make bench`` (or ``python -m posenc.bench``).

Reports the execution time of every notebook, the loop-versus-vectorised encoding, the training speed of
the tiny Transformer under each position method, the time of each inline check on the worked solutions,
and grading throughput with the kernels in bubblewrap (when it is installed) and without, and the time each
full sweep took as its results file recorded it.

``make bench BENCH=suite`` (``python -m posenc.bench --suite [--here]``) times the phases of ``make test``
instead, in a fresh clone of this checkout as CI runs it (``--here``: in this checkout, its .venv and _build
reused). Each recipe line runs through a stand-in for make's shell (``python -m posenc.bench --line``) that
records its wall time, the CPU time of everything it started that ended and was waited for (user + system,
children included: of Chromium, only the browser processes and Playwright's driver, when the session closes
them; not its renderers, which do most of its work), how long the machine's cores were busy meanwhile (on a
quiet machine the line's whole cost, Chromium's renderers included) and the load average before and after.
pytest prints the slowest tests of each of its runs (``--durations``); then, for each run, a table gives the
CPU time of its costliest test files (``costs_by_test``, registered by tests/conftest.py), in the tests' own
processes and in the processes below them, Chromium's renderers included: on a busy machine a test's wall
time says as much about what ran beside it. The machine is shared more often than not: the busy seconds (on a
quiet machine) and the tables say what a phase costs, the CPU seconds what make's processes cost once they
ended, and the wall seconds what it took under that load, with the load beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
    from posenc.lib.encoding import sinusoidal_encoding, sinusoidal_encoding_loops

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
    from posenc.book.provenance import how_sweeps_were_made

    print("Full sweeps (make experiments), as recorded in results/*.json")
    for sweep in how_sweeps_were_made():
        print(f"  {sweep['file']}: {sweep['runs']} runs, {sweep['seeds']} seeds, {sweep['minutes']:.1f} min with "
              f"{sweep['processes']} process(es) on {sweep['cores']} cores")


LOG_VARIABLE = "POSENC_BENCH_SUITE_LOG"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def busy_cpu_seconds() -> float | None:
    """The CPU time every core of the machine has spent busy since it started (Linux's /proc/stat: user,
    nice, system, irq and softirq), whoever ran; None where there is no /proc/stat. Over a phase
    of a quiet machine this is the phase's whole cost, Chromium's renderers included, whose CPU time
    getrusage does not reach."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu":
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(value) for value in fields[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def run_line(argv: list[str]) -> int:
    """make's shell for one recipe line: run it with /bin/sh, append its timing to the log, pass on its status.
    A make started inside the line (a test's ``make grade``) inherits this shell through MAKEFLAGS; its lines
    are part of the outer line's time and are run without a record of their own."""
    log_path = os.environ.get(LOG_VARIABLE)
    inner = {k: v for k, v in os.environ.items() if k != LOG_VARIABLE}
    load_before, busy_before, start = os.getloadavg()[0], busy_cpu_seconds(), time.perf_counter()
    status = subprocess.run(["/bin/sh", *argv], env=inner).returncode
    if not log_path:
        return status
    wall = time.perf_counter() - start
    busy_after = busy_cpu_seconds()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = argv[-1] if argv else ""
    with open(log_path, "a", encoding="utf-8") as log:
        log.write(json.dumps({"command": command, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                              "busy": None if None in (busy_before, busy_after) else busy_after - busy_before,
                              "load_before": load_before, "load_after": os.getloadavg()[0],
                              "status": status}) + "\n")
    return status


def phase_name(command: str) -> str:
    """A recipe line in one short line (its first line, at most 90 characters)."""
    first = " ".join(command.strip().splitlines()[0].split()) if command.strip() else "(empty)"
    return first if len(first) <= 90 else first[:87] + "..."


def _seconds(value: float | None) -> str:
    return f"{value:9.1f}" if value is not None else f"{'-':>9}"


def report(records: list[dict], wall: float, cpu: float, loads: tuple[float, float],
           target: str = "test", busy: float | None = None) -> str:
    """The table of ``make bench BENCH=suite``: per recipe line its wall time, the CPU time of make's own
    processes (getrusage), and how long the machine's cores were busy meanwhile (busy_cpu_seconds: Chromium
    included, and whatever else ran)."""
    lines = [f"make {target} on {cpu_model()}, {os.cpu_count()} cores; load average (1 min) {loads[0]:.1f} at the "
             f"start, {loads[1]:.1f} at the end",
             f"  {'wall [s]':>9} {'CPU [s]':>9} {'busy [s]':>9} {'load':>11}  recipe line"]
    for record in records:
        if record["wall"] < 0.5 and record["cpu"] < 0.5:
            continue
        load = f"{record['load_before']:.1f}->{record['load_after']:.1f}"
        lines.append(f"  {record['wall']:9.1f} {record['cpu']:9.1f} {_seconds(record.get('busy'))} {load:>11}  "
                     f"{phase_name(record['command'])}")
    lines.append(f"  {wall:9.1f} {cpu:9.1f} {_seconds(busy)} {'':>11}  in all ({int(wall // 60)} min "
                 f"{int(wall % 60):02d} s)")
    lines.append("  CPU: make's own processes once ended (of Chromium, only the browser processes and Playwright's "
                 "driver, closed with the session; not the renderers); busy: every core of the machine while the "
                 "line ran, Chromium's renderers and any other work's included")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# The CPU time of each test file (make bench BENCH=suite). On a machine whose cores are all busy, pytest's
# --durations give a test's wall time, stretched by whatever ran beside it; these figures give its cost.

TESTS_VARIABLE = "POSENC_BENCH_TESTS_DIR"

# The tear-down of a worker's last test closes its file's and the session's fixtures (the browsers, the
# servers): measured apart, as this row, not as that test's work.
END_OF_RUN = "(the last test's tear-down on each worker: its file's and the session's fixtures closed)"


# The rows of work kept for several files (shared_cost) start with this.
SHARED = "(shared) "

# The hooks registered in this process, where shared_cost records.
_RECORDER = None


def register_costs_by_test(config) -> bool:
    """From a conftest's ``pytest_configure``: where TESTS_VARIABLE names a folder, record each test's CPU time
    there (``costs_by_test``). True when registered."""
    global _RECORDER
    folder = os.environ.get(TESTS_VARIABLE)
    if not folder:
        return False
    _RECORDER = costs_by_test(Path(folder))
    config.pluginmanager.register(_RECORDER, "posenc-bench-costs-by-test")
    return True


@contextlib.contextmanager
def shared_cost(name: str):
    """Work done once per worker and kept for several test files (a page's inspection, a notebook's namespace):
    where the bench records, its CPU time goes to a row of its own, "(shared) name", instead of to whichever
    test asked first; elsewhere nothing happens. Only the outermost block counts, and only during a test
    (not at collection, nor in the session's close, which has its own row)."""
    recorder = _RECORDER
    if recorder is None or not recorder.in_test or recorder.sharing:   # only the outermost block of a test
        yield
        return
    recorder.sharing = True
    try:
        with _measured() as cost:
            yield
    finally:
        recorder.shared.append([SHARED + name, *cost])
        recorder.sharing = False


@contextlib.contextmanager
def _measured():
    """The CPU seconds the block cost, [own, below], filled in as it ends: this process's (every thread) and
    those of the processes below it (below_cpu, whose own walk through them stays outside the block's time)."""
    cost = [0.0, 0.0]
    below = below_cpu()
    own = time.process_time()
    try:
        yield cost
    finally:
        own = time.process_time() - own
        cost[:] = [own, below_cpu() - below]


def below_cpu() -> float:
    """The CPU seconds of every process below this one: those that ended and were waited for (getrusage), and
    the live ones (psutil), each with the ended processes it waited for. Its growth over a test is what the
    processes under the test's process did meanwhile: its kernels, graders and builds, and Chromium's
    renderers, which are children of children of Playwright's driver and end without being counted there."""
    import psutil

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = usage.ru_utime + usage.ru_stime
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except psutil.Error:                    # it ended meanwhile
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def costs_by_test(folder: Path):
    """pytest hooks that measure each test (set-up, call and tear-down): the CPU time of its own process
    (every thread) and of the processes below it (``below_cpu``). Each pytest process writes its tests and
    its own CPU time in all to a JSON file of ``folder`` (pytest-xdist's controller too, which runs none);
    the tear-down of a worker's last test is recorded apart (END_OF_RUN). With -x or Ctrl-C, pytest may close
    the session's fixtures after these records are written."""
    import pytest

    class CostsByTest:
        def __init__(self) -> None:
            self.tests: list[list] = []
            self.closing: tuple[float, float] | None = None
            self.shared: list[list] = []            # shared_cost's rows of the running test
            self.in_test = False
            self.sharing = False

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            cost = [0.0, 0.0]
            try:
                with _measured() as cost:
                    self.in_test = True
                    return (yield)
            finally:
                self.in_test = False
                own, below = cost
                for row in self.shared:              # work kept for other files too: a row of its own
                    self.tests.append(row)
                    own, below = own - row[1], below - row[2]
                self.shared = []
                if self.closing is not None:
                    # Processes that end with the session (Chromium) take their counted seconds with them:
                    # those seconds were the tests' and stay with them, so the closing counts only what it adds.
                    self.tests.append([END_OF_RUN, self.closing[0], max(0.0, self.closing[1])])
                    own, below = own - self.closing[0], below - self.closing[1]
                    self.closing = None
                self.tests.append([item.nodeid, own, below])

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_teardown(self, item, nextitem):
            if nextitem is not None:
                return (yield)
            self.in_test = False                    # the session's close: its own row, nothing shared
            cost = [0.0, 0.0]
            try:
                with _measured() as cost:
                    return (yield)
            finally:
                self.closing = tuple(cost)

        def pytest_sessionfinish(self, session) -> None:
            worker = os.environ.get("PYTEST_XDIST_WORKER")
            run = os.getppid() if worker else os.getpid()          # a worker's parent is its controller
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{run}-{worker or 'main'}-{os.getpid()}.json").write_text(json.dumps(
                {"run": run, "worker": worker or "main", "finished": time.time(), "own": time.process_time(),
                 "args": [] if worker else [str(arg) for arg in session.config.invocation_params.args],
                 "tests": self.tests}))

    return CostsByTest()


def _is_a_test(nodeid: str) -> bool:
    return nodeid != END_OF_RUN and not nodeid.startswith(SHARED)


def costs_of_tests(folder: Path) -> list[dict]:
    """Per pytest run (in the order they ended): its tests' CPU time summed by file, the CPU time of its
    processes outside the tests (their start, imports and collection, pytest and pytest-xdist themselves),
    and its command's arguments."""
    runs: dict[int, dict] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record = json.loads(path.read_text())
        run = runs.setdefault(record["run"], {"files": {}, "outside": 0.0, "tests": 0, "finished": 0.0, "args": []})
        run["finished"] = max(run["finished"], record["finished"])
        run["args"] = run["args"] or record["args"]
        run["tests"] += sum(_is_a_test(nodeid) for nodeid, _, _ in record["tests"])
        run["outside"] += record["own"] - sum(own for _, own, _ in record["tests"])
        for nodeid, own, below in record["tests"]:
            cost = run["files"].setdefault(nodeid.split("::")[0], [0.0, 0.0, 0])
            cost[0], cost[1], cost[2] = cost[0] + own, cost[1] + below, cost[2] + _is_a_test(nodeid)
    return sorted((run for run in runs.values() if run["tests"]), key=lambda run: run["finished"])


def costs_report(runs: list[dict], top: int = 12, busy: list[float | None] | None = None) -> str:
    """The costliest test files of each pytest run: CPU seconds in the test's own process and in the processes
    below it; ``busy``, where given, the busy seconds of each run's line of the phase table."""
    lines = []
    for number, run in enumerate(runs, 1):
        files = sorted(run["files"].items(), key=lambda item: -(item[1][0] + item[1][1]))
        own_total, below_total = (sum(cost[i] for _, cost in files) for i in (0, 1))
        command = " ".join(run["args"])
        command = command if len(command) <= 80 else command[:77] + "..."
        lines += [f"pytest run {number} ({run['tests']} tests; pytest {command}): CPU seconds by test file, the "
                  f"{min(top, len(files))} costliest of {len(files)}",
                  f"  {'own [s]':>9} {'below [s]':>10} {'tests':>6}  file"]
        lines += [f"  {own:9.1f} {below:10.1f} {count:6d}  {name}" for name, (own, below, count) in files[:top]]
        lines.append(f"  {own_total:9.1f} {below_total:10.1f} {run['tests']:6d}  every file, the "
                     f"{max(0, len(files) - top)} not listed included")
        in_all = own_total + below_total + run["outside"]
        line = (f"  outside the tests (the processes' start, imports and collection, pytest and pytest-xdist): "
                f"{run['outside']:.1f} s; the run in all: {in_all:.1f} s")
        if busy and number <= len(busy) and busy[number - 1] is not None:
            line += f" of the {busy[number - 1]:.1f} s its line kept the cores busy"
        lines.append(line)
    if lines:
        lines.append("  own: the test's process (every thread); below: the processes under it, for what they did "
                     "while the test ran (kernels, graders, builds, Chromium's pages). (shared): work kept for "
                     "several files (every page's inspection, the exercise notebooks' namespaces, the Colab-like "
                     "environment), apart from the file that asked first; any other cost several files share "
                     "falls to the first file that pays it on its worker")
    return "\n".join(lines)


def bench_suite(checkout: Path, target: str = "test") -> int:
    """Run ``make <target>`` in ``checkout`` with every recipe line timed; print the table; return make's status."""
    with tempfile.TemporaryDirectory(prefix="posenc-bench-suite-") as folder:
        log = Path(folder) / "phases.jsonl"
        shell = Path(folder) / "timed-sh"
        shell.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m posenc.bench --line \"$@\"\n")
        shell.chmod(0o755)
        tests = Path(folder) / "tests"
        env = {**os.environ, LOG_VARIABLE: str(log), TESTS_VARIABLE: str(tests),
               "PYTEST_ADDOPTS": f"{os.environ.get('PYTEST_ADDOPTS', '')} --durations=25 --durations-min=2"}
        env.pop("VIRTUAL_ENV", None)
        loads_start, busy_start, start = os.getloadavg()[0], busy_cpu_seconds(), time.perf_counter()
        status = subprocess.run(["make", "--no-print-directory", f"SHELL={shell}", target], cwd=checkout,
                                env=env).returncode
        wall, busy_end = time.perf_counter() - start, busy_cpu_seconds()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        busy = None if None in (busy_start, busy_end) else busy_end - busy_start
        print(report(records, wall, usage.ru_utime + usage.ru_stime, (loads_start, os.getloadavg()[0]), target,
                     busy))
        pytest_lines = [record.get("busy") for record in records if " -m pytest " in f" {record['command']} "]
        runs = costs_of_tests(tests)
        costs = costs_report(runs, busy=pytest_lines if len(pytest_lines) == len(runs) else None)
        if costs:
            print(costs)
    print(f"make {target} exited with {status}")
    return status


def bench_fresh_clone() -> int:
    """``make test`` in a fresh clone of this checkout (its committed state), timed phase by phase."""
    with tempfile.TemporaryDirectory(prefix="posenc-fresh-clone-") as folder:
        clone = Path(folder) / "course"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        print(f"make test in a fresh clone of {ROOT} (its last commit), in {clone}")
        return bench_suite(clone)


def main(argv=None) -> int:
    if argv is None and sys.argv[1:2] == ["--line"]:
        return run_line(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-notebooks", action="store_true", help="skip the (slow) notebook timings")
    parser.add_argument("--suite", action="store_true", help="time the phases of make test in a fresh clone instead")
    parser.add_argument("--here", action="store_true", help="with --suite: in this checkout, not a fresh clone")
    args = parser.parse_args(argv)
    if args.suite:
        return bench_suite(ROOT) if args.here else bench_fresh_clone()
    from posenc.lib.models import bench_methods

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
