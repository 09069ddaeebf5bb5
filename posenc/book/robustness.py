"""Every chapter that trains a model, executed with other seeds: ``make robustness``.

Another CPU or another version of torch sends a training run down another path, as another seed does. So
the cheap stand-in for "a reader's machine" is another seed: this module executes each chapter of
``TRAINING_CHAPTERS`` again with every torch seed shifted by a constant (``SHIFT_STRIDE * k`` for k = 1..N,
ten by default): a first cell sets ``posenc.lib.reproducibility.SEED_SHIFT_VARIABLE``, which
``seed_torch``, the one place a run seeds torch, adds to every seed, in the kernel and in the worker
processes of a sweep (the data the tasks draw from their own generators stay the same). It runs exactly as
the book build does otherwise (kernel in an empty folder, ``POSENC_BOOK_BUILD=1``). An execution that
stops means an assertion about the live run held only for the book's own seeds; the glued values of every
execution are kept, so that a sentence built on them can be read against ten other runs.

The results go to ``results/robustness.json``, per chapter, with the platform and a fingerprint of what
decides the runs: the chapter's code cells (the install cell aside, which a fork rewrites) and every
module of the course's library and of its experiment harness (``DECIDING_CODE``) the kernel had imported.
``tests/test_robustness.py`` checks that the file covers every training chapter, that every execution went
through, and that the fingerprints are those of today's code.

    python -m posenc.book.robustness                 # every training chapter, 10 shifts, 2 at a time
    python -m posenc.book.robustness ch05 ch07       # only these (the others keep their entries)
    python -m posenc.book.robustness --stale         # only the chapters whose fingerprint changed
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

from posenc.book.execute import _in_a_book_build, jobs_argument, run_notebook
from posenc.book.style import GLUE_MIME_PREFIX
from posenc.experiments.results import RESULTS_DIR
from posenc.lib.reproducibility import SEED_SHIFT_VARIABLE, platform_signature
from posenc.paths import ROOT

# The chapters whose code trains a model (tests/test_robustness.py checks that no other notebook does).
TRAINING_CHAPTERS = {
    "ch03": "notebooks/03_addition_vs_concatenation.ipynb",
    "ch04": "notebooks/04_learned_vs_sinusoidal.ipynb",
    "ch05": "notebooks/05_relative_biases.ipynb",
    "ch06": "notebooks/06_rotary_embeddings.ipynb",
    "ch07": "notebooks/07_longer_than_trained.ipynb",
    "ch08": "notebooks/08_position_on_real_text.ipynb",
    "ch09": "notebooks/09_rotary_in_todays_models.ipynb",
    "ch10": "notebooks/10_position_in_two_and_three_dimensions.ipynb",
}
SHIFT_STRIDE = 1000          # shift k adds 1000 k to every torch seed: seed sets that never overlap
DEFAULT_SHIFTS = 10
RESULTS_FILE = RESULTS_DIR / "robustness.json"
# The course's code that decides a training run (the book's tooling and the checks do not): a change in one
# of these modules that a chapter imports makes the chapter's entry stale.
DECIDING_CODE = ("posenc/lib/", "posenc/experiments/")
INSTALL_CELL_ID = "install-posenc"      # rewritten from _config.yml in a fork: not part of the fingerprint
TIMEOUT = 600                            # seconds per cell

SHIFT_CELL = """\
# make robustness: every torch seed of a run shifted by {{shift}}, a stand-in for another machine's luck
import os as _os

_os.environ[{variable!r}] = "{{shift}}"     # read by posenc.lib.reproducibility.seed_torch, here and in workers
""".format(variable=SEED_SHIFT_VARIABLE)

MODULES_MARK = "POSENC-MODULES "
MODULES_CELL = """\
import json as _json, sys as _sys
print({mark!r} + _json.dumps(sorted({{m.__file__ for n, m in list(_sys.modules.items())
      if (n == "posenc" or n.startswith("posenc.")) and getattr(m, "__file__", None)}})))
""".format(mark=MODULES_MARK)


def recorded_chapters(path: Path = RESULTS_FILE) -> dict:
    """The chapters' entries of a robustness file (``{}`` when there is no file)."""
    return json.loads(path.read_text()).get("chapters", {}) if path.is_file() else {}


def code_fingerprint(path: Path) -> str:
    """sha256 of a notebook's code cells (sources only; the install cell left out)."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell.source for cell in notebook.cells if cell.cell_type == "code" and cell.get("id") != INSTALL_CELL_ID]
    return hashlib.sha256("\n\x00\n".join(code).encode()).hexdigest()


def package_relative(file: str) -> str | None:
    """'posenc/lib/models.py' for a module file of the course package, wherever it is installed."""
    parts = Path(file).parts
    if "posenc" not in parts:
        return None
    start = len(parts) - 1 - parts[::-1].index("posenc")
    return "/".join(parts[start:])


def file_sha256(relative: str, root: Path = ROOT) -> str | None:
    path = root / relative
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def shifted_notebook(path: Path, shift: int) -> nbformat.NotebookNode:
    """The notebook with the seed shift first (after its install cell) and the module report last."""
    notebook = nbformat.read(path, as_version=4)
    cells = notebook.cells
    at = next((i + 1 for i, cell in enumerate(cells) if cell.get("id") == INSTALL_CELL_ID), 0)
    cells.insert(at, nbformat.v4.new_code_cell(SHIFT_CELL.format(shift=shift)))
    cells.append(nbformat.v4.new_code_cell(MODULES_CELL))
    return notebook


def glued_values(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """name -> plain-text value of every value the notebook glued."""
    values = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                data = output.get("data", {})
                values[name] = data.get(GLUE_MIME_PREFIX + "text/plain", data.get("text/plain", ""))
    return values


def imported_modules(notebook: nbformat.NotebookNode) -> list[str]:
    for output in notebook.cells[-1].get("outputs", []):
        text = output.get("text", "")
        if text.startswith(MODULES_MARK):
            found = (package_relative(file) for file in json.loads(text[len(MODULES_MARK):]))
            return sorted(m for m in found if m and m.startswith(DECIDING_CODE))
    return []


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _run_shifted(chapter: str, shift: int) -> dict:
    """Execute one chapter with one shift; a plain record of how it went."""
    executed, seconds, error = run_notebook(shifted_notebook(ROOT / TRAINING_CHAPTERS[chapter], shift), TIMEOUT)
    record = {"shift": shift, "ok": error is None, "seconds": round(seconds, 1)}
    if error is not None:
        record["error"] = ANSI.sub("", error)[-3000:]
    else:
        record["glued"] = glued_values(executed)
        record["modules"] = imported_modules(executed)
    return record


def shifts(n: int) -> list[int]:
    return [SHIFT_STRIDE * k for k in range(1, n + 1)]


def fingerprint(chapter: str, modules: list[str], root: Path = ROOT) -> dict:
    """What decides a chapter's runs, as recorded in the file: its code and the course modules it imports."""
    return {"code_sha256": code_fingerprint(root / TRAINING_CHAPTERS[chapter]),
            "modules": {module: file_sha256(module, root) for module in modules}}


def stale_reasons(chapter: str, entry: dict, root: Path = ROOT) -> list[str]:
    """Why a chapter's entry no longer describes today's code (empty when it does)."""
    reasons = []
    if entry.get("code_sha256") != code_fingerprint(root / TRAINING_CHAPTERS[chapter]):
        reasons.append(f"the code cells of {TRAINING_CHAPTERS[chapter]} changed")
    for module, digest in entry.get("modules", {}).items():
        if file_sha256(module, root) != digest:
            reasons.append(f"{module} changed")
    return reasons


def run(chapters: list[str], n_shifts: int = DEFAULT_SHIFTS, jobs: int = 2, out: Path = RESULTS_FILE,
        log=print) -> dict:
    """Execute the chapters with ``n_shifts`` shifts each, ``jobs`` at a time; update their entries in ``out``."""
    jobs = max(1, jobs)                                # 0, as pytest -n 0: one at a time
    data = json.loads(out.read_text()) if out.is_file() else {}
    data.setdefault("chapters", {})
    jobs_list = [(chapter, shift) for chapter in chapters for shift in shifts(n_shifts)]
    log(f"posenc.book.robustness: {len(chapters)} chapter(s) x {n_shifts} shifts = {len(jobs_list)} executions, "
        f"{jobs} at a time")
    start = time.perf_counter()
    load_at_start = round(os.getloadavg()[0], 1)      # other work beside the run makes its seconds longer
    results: dict[str, list[dict]] = {chapter: [] for chapter in chapters}
    with ProcessPoolExecutor(max_workers=jobs, initializer=_in_a_book_build) as pool:
        futures = {pool.submit(_run_shifted, chapter, shift): (chapter, shift) for chapter, shift in jobs_list}
        for future in as_completed(futures):
            chapter, shift = futures[future]
            record = future.result()
            results[chapter].append(record)
            log(f"  {chapter} shift {shift}: {'ok' if record['ok'] else 'FAILED'} in {record['seconds']} s"
                + ("" if record["ok"] else "\n" + record["error"][-1500:]))
    run_seconds = round(time.perf_counter() - start)     # the whole run's wall clock, shared by its chapters
    for chapter, records in results.items():
        records.sort(key=lambda r: r["shift"])
        modules = sorted({m for r in records for m in r.pop("modules", [])})
        data["chapters"][chapter] = {
            "notebook": TRAINING_CHAPTERS[chapter], **fingerprint(chapter, modules),
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "platform": platform_signature(), "shift_stride": SHIFT_STRIDE,
            "jobs": jobs, "load_average_at_start": load_at_start,
            "run_seconds": run_seconds, "run_chapters": list(chapters),
            "all_ok": all(r["ok"] for r in records), "runs": records}
    data["about"] = ("Each chapter that trains a model, executed with every torch seed shifted by a "
                     "constant (a stand-in for another machine's luck): python -m posenc.book.robustness")
    data["command"] = "make robustness"
    data = {"about": data.pop("about"), "command": data.pop("command"), **data}
    data["chapters"] = dict(sorted(data["chapters"].items()))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    failed = sum(not r["ok"] for records in results.values() for r in records)
    log(f"posenc.book.robustness: done in {run_seconds} s; "
        + (f"{failed} execution(s) FAILED" if failed else "every execution went through") + f"; wrote {out}")
    return data


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chapters", nargs="*", help=f"chapters to run (default: all of {', '.join(TRAINING_CHAPTERS)})")
    parser.add_argument("--shifts", type=int, default=DEFAULT_SHIFTS, help="seed shifts per chapter (default 10)")
    parser.add_argument("--jobs", type=jobs_argument, default=2,
                        help="executions at a time, or 'auto' for one per core (default 2)")
    parser.add_argument("--out", type=Path, default=RESULTS_FILE, help=f"the file to update (default {RESULTS_FILE})")
    parser.add_argument("--stale", action="store_true", help="only the chapters whose entry is missing or stale")
    args = parser.parse_args(argv)
    unknown = [c for c in args.chapters if c not in TRAINING_CHAPTERS]
    if unknown:
        parser.error(f"unknown chapter(s) {unknown}; the training chapters are {list(TRAINING_CHAPTERS)}")
    chapters = args.chapters or list(TRAINING_CHAPTERS)
    if args.stale:
        existing = recorded_chapters(args.out)
        chapters = [c for c in chapters if c not in existing or stale_reasons(c, existing[c])]
        if not chapters:
            print("posenc.book.robustness: every entry is current")
            return 0
    data = run(chapters, args.shifts, args.jobs, args.out)
    return 0 if all(data["chapters"][c]["all_ok"] for c in chapters) else 1


if __name__ == "__main__":
    sys.exit(main())
