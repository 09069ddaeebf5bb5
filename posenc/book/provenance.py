"""How the committed results were made, as their files record it: the tables and sentences of the lecturer's
page "True on every machine" (book/lecturers/every-machine.md) and ``make bench``'s sweep timings.

Read from ``results/`` (the sweeps of ``make experiments`` and ``results/robustness.json``), never typed:
a file made again changes the page with it.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from posenc.book.robustness import RESULTS_FILE as ROBUSTNESS_FILE, recorded_chapters
from posenc.experiments.results import RESULTS_DIR
from posenc.experiments.summaries import Table
from posenc.lib.reproducibility import CAPABILITY, describe, platform_signature, same_platform


def how_sweeps_were_made(results_dir: Path = RESULTS_DIR) -> list[dict]:
    """What each sweep's file records about its making, in file order: its name, how many seeds and runs, how
    long it took (minutes of wall clock), with how many processes on how many cores, the load average when it
    ended (None in files older than that record), the platform, and the other sweeps whose time overlapped
    its own (from each file's end, ``created``, and its duration)."""
    made = []
    for path in sorted(Path(results_dir).glob("*.json")):
        data = json.loads(path.read_text())
        timing = data.get("timing")
        if not timing or "runs" not in data:
            continue
        end = datetime.datetime.fromisoformat(data["created"]) if data.get("created") else None
        made.append({"file": path.name, "seeds": len(data.get("seeds", [])), "runs": len(data["runs"]),
                     "minutes": timing["seconds"] / 60, "processes": timing.get("processes"),
                     "cores": timing.get("cpu_count"), "load": timing.get("load_average"),
                     "platform": data.get("platform"),
                     "span": None if end is None else (end - datetime.timedelta(seconds=timing["seconds"]), end)})
    for sweep in made:
        sweep["alongside"] = [other["file"] for other in made if other is not sweep and sweep["span"]
                              and other["span"] and other["span"][0] < sweep["span"][1]
                              and sweep["span"][0] < other["span"][1]]
    return made


def sweeps_table(results_dir: Path = RESULTS_DIR) -> Table:
    """One row per sweep file: seeds, runs, time, processes and cores, load, the sweeps beside it, machine."""
    rows = [[s["file"], s["seeds"], s["runs"], f"{s['minutes']:.1f}", f"{s['processes']} / {s['cores']}",
             "not recorded" if s["load"] is None else f"{s['load']:.1f}", len(s["alongside"]),
             describe(s["platform"])] for s in how_sweeps_were_made(results_dir)]
    return Table(["file", "seeds", "runs (seeds × conditions)", "minutes (wall clock)", "its processes / cores",
                  "load at the end (1-min average)", "other sweeps running at the same time", "machine"], rows)


def robustness_table(path: Path = ROBUSTNESS_FILE) -> Table:
    """One row per chapter of ``make robustness``: its executions, the shortest and longest, the machine."""
    rows = []
    for chapter, entry in recorded_chapters(Path(path)).items():
        seconds = [run["seconds"] for run in entry["runs"]]
        at_a_time = (f"{entry['jobs']} (load {entry['load_average_at_start']:.1f})" if "jobs" in entry
                     else "not recorded")
        rows.append([chapter, len(seconds), _span(seconds), at_a_time,
                     "yes" if entry["all_ok"] else "no", describe(entry.get("platform"))])
    return Table(["chapter", "executions", "seconds each (shortest to longest, wall clock)",
                  "at a time (load at the start)", "all went through", "machine"], rows)


def totals_sentence(results_dir: Path = RESULTS_DIR, robustness: Path = ROBUSTNESS_FILE) -> str:
    """How long the sweeps and make robustness's executions took in all, where they were made."""
    hours = sum(s["minutes"] for s in how_sweeps_were_made(results_dir)) / 60
    entries = recorded_chapters(Path(robustness)).values()
    runs = [run["seconds"] for entry in entries for run in entry["runs"]]
    jobs = {entry.get("jobs") for entry in entries}
    at_a_time = (f"they ran {jobs.pop()} at a time" if len(jobs) == 1 and None not in jobs
                 else "`make robustness` runs `JOBS` at a time, two unless you say otherwise")
    whole = {}                                      # each run once, in the order they were made
    for entry in sorted((e for e in entries if "run_seconds" in e), key=lambda e: e.get("created", "")):
        whole.setdefault((tuple(entry["run_chapters"]), entry["run_seconds"]), None)
    walls = ", and ".join(
        f"the run of {_chapters(chapters)} took {_duration(seconds)} from start to end" if not later else
        f"a later run of {_chapters(chapters)}, whose entries replace that run's, {_duration(seconds)}"
        for later, (chapters, seconds) in enumerate(whole))
    unrecorded = sum("run_seconds" not in entry for entry in entries)
    if walls and unrecorded:
        walls += (f" ({unrecorded} older entr{'y does' if unrecorded == 1 else 'ies do'} not record "
                  f"{'its' if unrecorded == 1 else 'theirs'})")
    return (f"Added up, the sweeps took {hours:.1f} hours there, and `make experiments` runs them one after "
            f"another; `make robustness`'s {len(runs)} executions took {_duration(sum(runs))} of execution time in "
            f"all ({at_a_time}){', and ' + walls if walls else ''}. Neither is needed to teach: the chapters read the "
            "committed files.")


def _span(seconds) -> str:
    """'16 to 19', or '15' where both ends round alike."""
    low, high = f"{min(seconds):.0f}", f"{max(seconds):.0f}"
    return low if low == high else f"{low} to {high}"


def _chapters(chapters) -> str:
    """'ch05', 'ch05 and ch07', 'ch03 to ch10' (every chapter between), 'ch03 to ch10 (3 chapters)'."""
    chapters = list(chapters)
    if len(chapters) <= 2:
        return " and ".join(chapters)
    every = [int(c[2:]) for c in chapters] == list(range(int(chapters[0][2:]), int(chapters[-1][2:]) + 1))
    return f"{chapters[0]} to {chapters[-1]}" + ("" if every else f" ({len(chapters)} chapters)")


def _duration(seconds: float) -> str:
    """'42 seconds', '26 minutes', '3.4 hours'."""
    return (f"{seconds:.0f} seconds" if seconds < 90 else f"{seconds / 60:.0f} minutes" if seconds < 7200
            else f"{seconds / 3600:.1f} hours")


def where_digits_agree_sentence(results_dir: Path = RESULTS_DIR, here: dict | None = None) -> str:
    """Which chapters' files (replications aside: no live run shares their seeds) were made on the platform this
    page is built on: those chapters say that their live runs agree with the file to the last digit; the others
    compare ranges."""
    here = platform_signature() if here is None else here
    made_same = [s for s in how_sweeps_were_made(results_dir)
                 if "_replication" not in s["file"] and same_platform(s["platform"], here)]
    same = [s["file"] for s in made_same]
    compared = ("the CPU's name, the instruction set torch uses and the versions of torch and numpy"
                if all(CAPABILITY in (s["platform"] or {}) for s in made_same) else
                "the CPU's name and the versions of torch and numpy; the instruction set torch uses is compared only "
                "where both record it, and not all of these files do")
    made_here = (f"of the chapters' files, {', '.join(same)} were made on a platform that matches it ({compared}), "
                 "and the chapters that read them say that the runs their live run shares with the file agree to "
                 "the last digit" if same
                 else "none of the chapters' files was made on a platform that matches it")
    return (f"This page was built on {describe(here)}; {made_here}. A chapter whose file was made elsewhere, and "
            "every chapter on Colab or on a laptop with another CPU or other library versions, compares ranges "
            "instead and says so and why: that is expected, not a fault.")
