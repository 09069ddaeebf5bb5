"""make bench BENCH=suite's tables (posenc.bench): the machine's busy time beside make's own CPU time, and the
CPU time of each test file."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from posenc import bench


def test_the_machine_s_busy_time_grows_while_a_core_works():
    before = bench.busy_cpu_seconds()
    if before is None:
        pytest.skip("no /proc/stat here")
    deadline = time.process_time() + 0.5
    while time.process_time() < deadline:
        pass
    assert bench.busy_cpu_seconds() - before >= 0.4


def test_the_table_gives_each_line_its_busy_time_and_a_dash_where_none_was_recorded():
    records = [{"command": "pytest tests/browser", "wall": 200.0, "cpu": 120.0, "busy": 380.5,
                "load_before": 1.0, "load_after": 2.0, "status": 0},
               {"command": "an older record", "wall": 3.0, "cpu": 1.0, "load_before": 0.0, "load_after": 0.0,
                "status": 0}]
    lines = bench.report(records, 203.0, 121.0, (1.0, 2.0), busy=None).splitlines()
    assert "busy [s]" in lines[1]
    assert lines[2].split()[:3] == ["200.0", "120.0", "380.5"]
    assert lines[3].split()[:3] == ["3.0", "1.0", "-"]
    assert lines[4].split()[:3] == ["203.0", "121.0", "-"] and "in all (3 min 23 s)" in lines[4]
    assert "Chromium" in lines[5]


def busy(seconds: float) -> str:
    """Python that keeps a core busy for ``seconds`` of its own CPU time."""
    return f"import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass"


# The workloads, far enough apart that their order cannot depend on the machine: test_here 1.0 s in its own
# process, test_live 0.7 s below it, the shared work 0.45 s, the session's server 0.25 s, test_child 0.2 s.
CONFTEST = f"""import functools, subprocess, sys

import pytest

from posenc import bench

LEFT_RUNNING = []


def pytest_configure(config):
    bench.register_costs_by_test(config)


@functools.lru_cache(maxsize=None)
def shared():                  # work done once and kept for two files
    with bench.shared_cost("the test's shared work"):
        exec({busy(0.45)!r})
    return 1


@pytest.fixture(scope="session")
def server():                  # a process of the session: it works when the session's close tells it to
    process = subprocess.Popen([sys.executable, "-c", "import sys\\nsys.stdin.read()\\n" + {busy(0.25)!r}],
                               stdin=subprocess.PIPE)
    yield process
    process.stdin.close()
    process.wait()


@pytest.fixture(scope="session", autouse=True)
def stop_what_was_left_running():
    yield
    for process in LEFT_RUNNING:
        process.kill()
        process.wait()
"""

# A shell that waits for a busy Python, then sleeps: the Python's work is counted in the live shell's figures
# while the shell runs on after the test (Chromium's renderers, children of a browser that outlives the test).
LIVE = """import os, shlex, subprocess, sys, time

import psutil

from conftest import LEFT_RUNNING


def test_work():
    busy = os.path.join(os.path.dirname(__file__), "busy.py")
    shell = subprocess.Popen(["sh", "-c", f"{shlex.quote(sys.executable)} {shlex.quote(busy)}; sleep 60"])
    LEFT_RUNNING.append(shell)
    deadline = time.monotonic() + 30
    while sum(psutil.Process(shell.pid).cpu_times()[2:4]) < 0.65:          # children_user, children_system
        assert time.monotonic() < deadline
        time.sleep(0.05)
"""


def run_with_the_hooks(tmp_path, *options):
    """pytest on six test files with the suite bench's hooks (the checkout's own posenc); its recorded runs."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_here.py").write_text(f"def test_work():\n    exec({busy(1.0)!r})\n")
    (tmp_path / "test_child.py").write_text("import subprocess, sys\n\n\ndef test_work():\n"
                                            f"    subprocess.run([sys.executable, '-c', {busy(0.2)!r}], check=True)\n")
    (tmp_path / "test_live.py").write_text(LIVE)
    (tmp_path / "busy.py").write_text(busy(0.7))
    for name in ("test_shared_a.py", "test_shared_b.py"):
        (tmp_path / name).write_text("from conftest import shared\n\n\ndef test_work():\n    assert shared()\n")
    (tmp_path / "test_z_last.py").write_text("def test_uses_the_server(server):\n    assert server.pid\n")
    folder = tmp_path / "costs"
    env = {**os.environ, bench.TESTS_VARIABLE: str(folder),
           "PYTHONPATH": f"{Path(bench.__file__).resolve().parents[1]}{os.pathsep}{tmp_path}"}
    for name in ("PYTEST_XDIST_TESTRUNUID", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options,
                           "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(path.read_text()) for path in folder.glob("*.json")]
    return bench.costs_of_tests(folder), records


@pytest.mark.parametrize("options", [("-p", "no:xdist"), ("-n", "2", "--dist", "loadfile")],
                         ids=["one process", "two workers"])
def test_each_test_file_s_cpu_time_is_counted_where_its_work_was_done(tmp_path, options):
    """One file works in its own process, one in a process it waits for, one in a process that outlives it,
    two share work done once, and the last uses a process of the session that works until the session's
    close: each is measured where it worked, the shared work and the session's close apart."""
    [run], records = run_with_the_hooks(tmp_path, *options)
    files = {Path(name).name: cost for name, cost in run["files"].items()}
    assert files["test_here.py"][0] >= 0.95 and files["test_here.py"][1] < 0.08
    assert files["test_child.py"][1] >= 0.18 and files["test_child.py"][0] < 0.08
    assert files["test_live.py"][1] >= 0.65
    assert sum(files[f"test_shared_{x}.py"][0] for x in "ab") < 0.08
    shared = [cost for name, cost in run["files"].items() if name.startswith(bench.SHARED)]
    sharing = sum(any("test_shared_" in nodeid for nodeid, _, _ in record["tests"]) for record in records)
    assert len(shared) == 1 and 0.42 * sharing <= shared[0][0] < 0.6 * sharing and shared[0][2] == 0  # per worker
    assert files["test_z_last.py"][1] < 0.08
    assert 0.22 <= run["files"][bench.END_OF_RUN][1] < 0.6      # the server; the killed shell takes nothing back
    assert run["tests"] == 6 and run["args"][-1] == str(tmp_path)
    for record in records:          # one tear-down apart per process that ran tests, after its last test
        ends = [i for i, (nodeid, _, _) in enumerate(record["tests"]) if nodeid == bench.END_OF_RUN]
        assert ends == ([len(record["tests"]) - 2] if record["tests"] else []), record
    workers = {record["worker"] for record in records}
    assert workers == ({"main"} if "no:xdist" in options else {"main", "gw0", "gw1"})    # main: the controller
    tests_own = sum(own for record in records for _, own, _ in record["tests"])
    assert abs(run["outside"] - (sum(record["own"] for record in records) - tests_own)) < 1e-6 and run["outside"] > 0

    lines = bench.costs_report([run], top=3, busy=[9.5]).splitlines()
    assert lines[0].startswith("pytest run 1 (6 tests; pytest ") and "the 3 costliest of 8" in lines[0]
    assert "own [s]" in lines[1] and "below [s]" in lines[1]
    by_cost = sorted(run["files"], key=lambda name: -sum(run["files"][name][:2]))
    assert [line.split("  ")[-1] for line in lines[2:5]] == by_cost[:3]
    assert by_cost[:3] == [name for name in by_cost if "test_here" in name or "test_live" in name
                           or name.startswith("(shared) ")]
    every = lines[5].split()
    assert float(every[0]) == pytest.approx(sum(c[0] for c in run["files"].values()), abs=0.06)
    assert float(every[1]) == pytest.approx(sum(c[1] for c in run["files"].values()), abs=0.06)
    assert "the 5 not listed included" in lines[5]
    assert "outside the tests" in lines[6] and lines[6].endswith("of the 9.5 s its line kept the cores busy")
    assert "Chromium" in lines[7] and "(shared)" in lines[7]


def test_shared_work_still_runs_where_the_bench_does_not_record(monkeypatch):
    monkeypatch.setattr(bench, "_RECORDER", None)
    done = []
    with bench.shared_cost("anything"):
        done.append(1)
    assert done == [1]


def test_runs_come_in_the_order_they_ended(tmp_path):
    folder = tmp_path / "costs"
    folder.mkdir()
    for run, finished in ((111, 20.0), (222, 10.0)):
        (folder / f"{run}-main-{run}.json").write_text(json.dumps(
            {"run": run, "worker": "main", "finished": finished, "own": 1.0, "args": [f"run{run}"],
             "tests": [["tests/test_a.py::test", 0.5, 0.0]]}))
    assert [run["args"] for run in bench.costs_of_tests(folder)] == [["run222"], ["run111"]]


def test_without_the_variable_nothing_is_recorded(monkeypatch):
    monkeypatch.delenv(bench.TESTS_VARIABLE, raising=False)
    assert bench.register_costs_by_test(object()) is False
    assert bench.costs_report(bench.costs_of_tests(Path("/nonexistent"))) == ""


def test_the_suite_s_conftest_registers_the_hooks_where_the_bench_asks(monkeypatch, tmp_path):
    from tests import conftest

    registered = []

    class Config:
        class pluginmanager:          # noqa: N801 - pytest's attribute name
            register = staticmethod(lambda plugin, name: registered.append(name))

    monkeypatch.setenv(bench.TESTS_VARIABLE, str(tmp_path))
    monkeypatch.setattr(bench, "_RECORDER", None)        # restored after: the rest of the run keeps its own
    conftest.pytest_configure(Config())
    assert registered == ["posenc-bench-costs-by-test"]


def test_only_the_outermost_shared_block_of_a_test_gets_a_row(monkeypatch, tmp_path):
    recorder = bench.costs_by_test(tmp_path)
    monkeypatch.setattr(bench, "_RECORDER", recorder)
    with bench.shared_cost("at collection"):            # outside a test: nothing to take it off
        pass
    assert recorder.shared == []
    recorder.in_test = True
    with bench.shared_cost("outer"):
        with bench.shared_cost("inner"):
            exec(busy(0.1))
    assert [row[0] for row in recorder.shared] == ["(shared) outer"] and recorder.shared[0][1] >= 0.09
    with pytest.raises(ValueError), bench.shared_cost("raising"):
        raise ValueError
    assert [row[0] for row in recorder.shared] == ["(shared) outer", "(shared) raising"] and not recorder.sharing
