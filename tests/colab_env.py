"""The Colab-like environment of the tests: what a student's notebook runs in when opened from a launch button.

One virtual environment holds only what Colab ships that matters here (numpy, matplotlib, the CPU build of
torch, ipykernel), plus pytest and nbval as the harness, and no checkout on its path. The course package
gets into it the way a notebook's first cell puts it there: that cell's own code runs, with the public
``git+https`` URL swapped for a wheel built from this checkout (what pip builds from the URL).

The environment lives in ``_build/colab-env`` and is kept between runs while constraints.txt is
unchanged; each run removes whatever was installed on top of it, so the first cell starts from Colab's set.
``kernel_path()`` is a Jupyter data folder whose ``python3`` kernel is this environment's interpreter: with
it first on ``JUPYTER_PATH``, the book's executions (tests/test_book.py) run there too.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

from filelock import FileLock

from posenc.exercises import authoring
from tests.conftest import ROOT

# What a fresh Colab runtime already has, among the packages the course touches (versions: constraints.txt).
COLAB_SHIPS = ["numpy", "matplotlib", "torch", "ipykernel"]
HARNESS = ["pytest", "nbval"]
BUILD = ROOT / "_build"
ENV = BUILD / "colab-env"
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex   # one id for all workers of a run


def env_python() -> Path:
    return ENV / "bin" / "python"


def clean_environ() -> dict:
    """The variables of a plain shell: no virtual environment, no checkout on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{ENV / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["PIP_CONSTRAINT"] = str(ROOT / "constraints.txt")   # the tested versions of what the package pulls in
    return env


def pip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(env_python()), "-m", "pip", *args], env=clean_environ(), capture_output=True,
                          text=True, timeout=900)


def make_base_environment() -> None:
    """The Colab-like environment, made again only when what it should hold has changed."""
    stamp = hashlib.sha256(((ROOT / "constraints.txt").read_text() + repr(COLAB_SHIPS + HARNESS)
                            + sys.version).encode()).hexdigest()
    if (ENV / "stamp").is_file() and (ENV / "stamp").read_text() == stamp:
        return
    shutil.rmtree(ENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(ENV)], check=True)
    installed = pip("install", "--quiet", "--no-compile", *COLAB_SHIPS, *HARNESS)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    (ENV / "base.txt").write_text(pip("freeze").stdout)
    (ENV / "stamp").write_text(stamp)


def back_to_base() -> None:
    """Uninstall what an earlier run installed on top of the base set (the course package among it)."""
    base = set((ENV / "base.txt").read_text().splitlines())
    extra = [line.split("==")[0].split(" @ ")[0] for line in pip("freeze").stdout.splitlines() if line not in base]
    if extra:
        removed = pip("uninstall", "--yes", *extra)
        assert removed.returncode == 0, removed.stderr


def build_wheel(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(folder), str(ROOT)], check=True, capture_output=True)
    (wheel,) = folder.glob("posenc-*.whl")
    return wheel


def run_install_cell(wheel: Path) -> str:
    """Run the notebooks' first cell in the environment, the wheel standing in for the public URL."""
    url, ref = authoring.repository()
    public = authoring.install_requirement(url, ref)
    source = authoring.install_cell(url, ref).source
    assert public in source
    script = source.replace(public, f"posenc @ {wheel.as_uri()}") + "\nimport posenc\nprint(posenc.__file__)\n"
    result = subprocess.run([str(env_python()), "-c", script], cwd=wheel.parent, env=clean_environ(),
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def prepare() -> Path:
    """The Colab-like environment with the course package installed by the first cell (once per run)."""
    BUILD.mkdir(exist_ok=True)
    with FileLock(str(BUILD / "colab-env.lock")):
        marker = ENV / "prepared-for-run"
        if not (marker.is_file() and marker.read_text() == RUN_ID):
            make_base_environment()
            back_to_base()
            printed = run_install_cell(build_wheel(BUILD / "colab-wheel"))
            lines = printed.splitlines()
            assert lines[0].startswith("Installing the course package: pip install"), printed
            assert Path(lines[-1]).is_relative_to(ENV), f"posenc imported from {lines[-1]}, not from the wheel"
            marker.write_text(RUN_ID)
    return env_python()


def kernel_path() -> Path:
    """A Jupyter data folder whose kernel ``python3`` runs this environment's interpreter (absolute path:
    jupyter_client would swap a bare ``python`` for its own interpreter)."""
    folder = BUILD / "colab-kernel"
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(env_python()), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (Colab-like test environment)", "language": "python"}, indent=1))
    return folder
