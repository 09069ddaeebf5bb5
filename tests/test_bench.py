"""make bench BENCH=suite's table (posenc.bench): the machine's busy time beside make's own CPU time."""

import time

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
