"""Result files: a sweep's records saved with its configuration, seeds, versions and platform, and read back.

``RESULTS_DIR`` is the checkout's ``results/`` folder (or, in an installed wheel, the copy it carries:
``posenc.paths``). Every file records the command that wrote it (``python -m posenc.experiments ...``).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch

from posenc.experiments.registry import SWEEPS, experiment_class
from posenc.experiments.runner import Experiment
from posenc.experiments.summaries import records_of
from posenc.lib.reproducibility import platform_signature
from posenc.paths import RESULTS as RESULTS_DIR  # noqa: F401  (where the full sweeps are saved)

COMMAND = "python -m posenc.experiments"


def seeds_options(seeds, first_seed: int = 0) -> str:
    """' --seeds N --first-seed K' when the seeds are not first_seed..first_seed+N-1's default, else ''."""
    seeds = tuple(seeds)
    if not seeds or seeds == tuple(range(first_seed, first_seed + len(seeds))):
        return ""
    return f" --seeds {len(seeds)} --first-seed {seeds[0]}"


def _versions() -> dict:
    return {"python": platform.python_version(), "torch": torch.__version__, "numpy": np.__version__}


def _write(path, data: dict) -> dict:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def save_results(path, experiment: Experiment, runs, name: str, seconds: float | None = None,
                 processes: int | None = None, command: str | None = None, purpose: str | None = None) -> dict:
    """Write the records with the configuration, seeds and versions beside them; return what was written.

    ``command`` is the command line that wrote the file (default: the ``run`` that makes it); ``seconds``
    (the sweep's wall-clock time) and ``processes`` are recorded when given, with the machine's CPU count, so
    a reader knows what the time was measured on; ``purpose`` says why a file exists beside the chapter's.
    """
    data = {
        "experiment": f"{name}: {SWEEPS[name].about}",
        "command": command or f"{COMMAND} run {name} --out {path}" + seeds_options(experiment.seeds),
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": asdict(experiment),
        "seeds": list(experiment.seeds),
        "versions": _versions(),
        # The processor too: another CPU rounds differently, so a reader compares digits only on this one.
        "platform": platform_signature(),
    }
    if seconds is not None:
        data["timing"] = {"seconds": round(seconds, 1), "processes": processes, "cpu_count": os.cpu_count(),
                          "torch_threads_per_process": 1,
                          # the machine's load when the sweep ended: above the CPU count, other work shared it
                          "load_average": round(os.getloadavg()[0], 1) if hasattr(os, "getloadavg") else None}
    data["runs"] = records_of(runs)
    if purpose:
        data["purpose"] = purpose
    return _write(path, data)


def load_results(path) -> tuple[Experiment, list[dict], dict]:
    """(configuration, records, the whole file) of a saved sweep."""
    data = json.loads(Path(path).read_text())
    name = data["experiment"].split(":", 1)[0]
    return experiment_class(name).from_dict(data["config"]), data["runs"], data


def save_lr_search(path, result: dict, seconds: float, config: Experiment, name: str = "ch07") -> dict:
    """Write a learning-rate search (chapter 7's ``lr_search``) with the configuration it trained."""
    return _write(path, {
        "experiment": f"{name} learning-rate search (inside-L accuracy, one seed)",
        "command": f"{COMMAND} lr-search --out {path}",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": asdict(replace(config, seeds=(result["seed"],))),
        "versions": _versions(), "timing": {"seconds": round(seconds, 1)}, **result})
