"""How the committed results were made, as their files record it: the tables of the lecturer's page "True on
every machine" (book/lecturers/every-machine.md) and of ``make bench``'s sweep timings.

Read from ``results/`` (the sweeps of ``make experiments`` and ``results/robustness.json``), never typed:
a file made again changes the page with it.
"""

from __future__ import annotations

import json
from pathlib import Path

from posenc.book.robustness import RESULTS_FILE as ROBUSTNESS_FILE
from posenc.experiments.results import RESULTS_DIR
from posenc.experiments.summaries import Table
from posenc.lib.reproducibility import describe


def how_sweeps_were_made(results_dir: Path = RESULTS_DIR) -> list[dict]:
    """What each sweep's file records about its making, in file order: its name, how many seeds and runs, how
    long it took (minutes), with how many processes on how many cores, the load average when it ended (None in
    files older than that record) and the platform."""
    made = []
    for path in sorted(Path(results_dir).glob("*.json")):
        data = json.loads(path.read_text())
        timing = data.get("timing")
        if not timing or "runs" not in data:
            continue
        made.append({"file": path.name, "seeds": len(data.get("seeds", [])), "runs": len(data["runs"]),
                     "minutes": timing["seconds"] / 60, "processes": timing.get("processes"),
                     "cores": timing.get("cpu_count"), "load": timing.get("load_average"),
                     "platform": data.get("platform")})
    return made


def sweeps_table(results_dir: Path = RESULTS_DIR) -> Table:
    """One row per sweep file: seeds, runs, time, processes and cores, load, machine."""
    rows = [[s["file"], s["seeds"], s["runs"], f"{s['minutes']:.1f}",
             f"{s['processes']} on {s['cores']} cores", "not recorded" if s["load"] is None else f"{s['load']:.1f}",
             describe(s["platform"])] for s in how_sweeps_were_made(results_dir)]
    return Table(["file", "seeds", "runs", "minutes", "processes", "load at the end", "machine"], rows)


def robustness_table(path: Path = ROBUSTNESS_FILE) -> Table:
    """One row per chapter of ``make robustness``: its executions, the shortest and longest, the machine."""
    chapters = json.loads(Path(path).read_text())["chapters"] if Path(path).is_file() else {}
    rows = []
    for chapter, entry in chapters.items():
        seconds = [run["seconds"] for run in entry["runs"]]
        rows.append([chapter, len(seconds), f"{min(seconds):.0f} to {max(seconds):.0f}",
                     "yes" if entry["all_ok"] else "no", describe(entry.get("platform"))])
    return Table(["chapter", "executions", "seconds each", "all went through", "machine"], rows)
