"""make bench BENCH=suite's tables (posenc.bench): the machine's busy time beside make's own CPU time, and the
CPU time of each test file."""

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


BUSY = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"


def test_each_test_file_s_cpu_time_counts_its_own_process_and_what_it_waited_for(tmp_path):
    """A run of three test files with the suite bench's hooks: one works in its own process, one in a process
    it starts and waits for, and the last uses a process of the session that works until the session closes
    it; each is measured where it worked, the session's process as the end of the run, and the table lists
    them."""
    (tmp_path / "conftest.py").write_text(
        "import subprocess, sys\n\nimport pytest\n\nfrom posenc import bench\n\n\n"
        "def pytest_configure(config):\n    bench.register_costs_by_test(config)\n\n\n"
        "@pytest.fixture(scope='session')\ndef server():\n"       # a process of the session, ended by its close
        f"    process = subprocess.Popen([sys.executable, '-c', {BUSY!r}])\n"
        "    yield process\n    process.wait()\n")
    (tmp_path / "test_here.py").write_text(f"def test_work():\n    exec({BUSY!r})\n")
    (tmp_path / "test_child.py").write_text("import subprocess, sys\n\n\ndef test_work():\n"
                                            f"    subprocess.run([sys.executable, '-c', {BUSY!r}], check=True)\n")
    (tmp_path / "test_z_last.py").write_text("def test_uses_the_server(server):\n    assert server.pid\n")
    folder = tmp_path / "costs"
    env = {**os.environ, bench.TESTS_VARIABLE: str(folder)}
    env.pop("PYTEST_XDIST_TESTRUNUID", None)
    env.pop("PYTEST_XDIST_WORKER", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    [run] = bench.costs_of_tests(folder)
    files = {Path(name).name: cost for name, cost in run["files"].items()}
    assert files["test_here.py"][0] >= 0.35 and files["test_here.py"][1] < 0.2
    assert files["test_child.py"][1] >= 0.35 and files["test_child.py"][0] < 0.2
    assert files["test_z_last.py"][1] < 0.2                     # its server is the session's, closed at the end
    assert run["files"][bench.END_OF_RUN][1] >= 0.35
    assert run["tests"] == 3 and run["outside"] > 0
    lines = bench.costs_report([run]).splitlines()
    assert lines[0].startswith("pytest run 1 (3 tests)") and "own [s]" in lines[1]
    assert {line.split("  ")[-1].rsplit("/", 1)[-1] for line in lines[2:5]} == {"test_here.py", "test_child.py",
                                                                                bench.END_OF_RUN}
    assert "in all" in lines[6] and "Chromium" in lines[7]


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
    conftest.pytest_configure(Config())
    assert registered == ["posenc-bench-costs-by-test"]
