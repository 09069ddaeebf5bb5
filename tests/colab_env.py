"""The Colab-like environments of the tests: what a student's notebook runs in when opened from a launch button.

Each virtual environment holds only what Colab ships that matters here, plus pytest and nbval as the
harness, and no checkout on its path. The course package gets into it the way a notebook's first cell puts
it there: that cell's own code runs, with the public ``git+https`` URL swapped for a wheel built from this
checkout (what pip builds from the URL). There are two:

* ``LIKE_COLAB`` (``_build/colab-env``): Colab's set (numpy, matplotlib, the CPU build of torch, ipykernel)
  at the versions of constraints.txt, on the interpreter that runs the tests (Python 3.11). The book build
  (tests/test_book.py) and tests/test_colab.py run every notebook there.
* ``COLAB_VERSIONS`` (``_build/colab-versions-env``): Python 3.12 with the versions Colab itself ran on
  Python 3.12 (tests/colab_versions.txt: numpy 2.0, matplotlib 3.10, IPython 7.34, ipywidgets 7.7,
  ipykernel 6.17), without torch (no CPU build of torch for Python 3.12 can be installed here).
  tests/test_colab_versions.py runs there the notebooks that need no torch.

An environment lives in ``_build/<name>`` and is kept between runs while its constraints are unchanged; each
run removes whatever was installed on top of it, so the first cell starts from Colab's set.
``kernel_path()`` is a Jupyter data folder whose ``python3`` kernel is the environment's interpreter: with
it first on ``JUPYTER_PATH``, the book's executions run there too.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock
from packaging.utils import canonicalize_name

from posenc.exercises import authoring
from tests.conftest import ROOT

HARNESS = ("pytest", "nbval")
BUILD = ROOT / "_build"
RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex   # one id for all workers of a run


def python_version(interpreter: str | Path) -> str | None:
    """``"3.12"`` for a working Python 3.12 interpreter; None where it does not run (e.g. a pyenv shim of a
    version that is installed but not selected)."""
    try:
        result = subprocess.run([str(interpreter), "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    found = re.match(r"Python (\d+\.\d+)", result.stdout + result.stderr)
    return found.group(1) if result.returncode == 0 and found else None


def find_python(version: str) -> Path | None:
    """A Python ``version`` interpreter: ``POSENC_PYTHON<major><minor>`` (a path), ``python<version>`` on PATH,
    else the newest pyenv build of that version ($PYENV_ROOT, or ~/.pyenv); None when there is none."""
    variable = os.environ.get(f"POSENC_PYTHON{version.replace('.', '')}")
    pyenv = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    builds = sorted(glob.glob(os.path.join(pyenv, "versions", f"{version}.*", "bin", f"python{version}")),
                    key=lambda path: [int(part) for part in re.findall(r"\d+", Path(path).parents[1].name)],
                    reverse=True)
    candidates = [variable] if variable else [shutil.which(f"python{version}"), *builds]
    for candidate in filter(None, candidates):
        if python_version(candidate) == version:
            return Path(candidate)
    return None


@dataclass(frozen=True)
class Environment:
    """One Colab-like environment: its folder under _build, the interpreter it is made from (a version to
    find with find_python, or None for the one running the tests), what it ships and the pins it takes (a
    constraints file, and ``pins`` that replace the file's line of the same name)."""

    name: str
    ships: tuple[str, ...]
    constraints: Path
    python: str | None = None
    pins: tuple[str, ...] = ()

    @property
    def folder(self) -> Path:
        return BUILD / self.name

    def base_interpreter(self) -> Path | None:
        return Path(sys.executable) if self.python is None else find_python(self.python)

    def env_python(self) -> Path:
        return self.folder / "bin" / "python"

    def constraints_text(self) -> str:
        """The constraints file with ``pins`` in place of its lines for the same packages."""
        replaced = {canonicalize_name(pin.split("==")[0]) for pin in self.pins}
        kept = [line for line in self.constraints.read_text().splitlines()
                if canonicalize_name(line.split("==")[0].strip()) not in replaced]
        return "\n".join([*kept, *self.pins]) + "\n"

    def constraints_file(self) -> Path:
        if not self.pins:
            return self.constraints
        merged = BUILD / f"{self.name}-constraints.txt"
        if not merged.is_file() or merged.read_text() != self.constraints_text():
            BUILD.mkdir(exist_ok=True)
            merged.write_text(self.constraints_text())
        return merged

    def clean_environ(self) -> dict:
        """The variables of a plain shell: no virtual environment, no checkout on PYTHONPATH."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = f"{self.folder / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["PIP_CONSTRAINT"] = str(self.constraints_file())   # the tested versions of what the package pulls in
        return env

    def pip(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.env_python()), "-m", "pip", *args], env=self.clean_environ(),
                              capture_output=True, text=True, timeout=900)

    def make_base_environment(self, interpreter: Path) -> None:
        """The environment, made again only when what it should hold has changed."""
        stamp = hashlib.sha256((self.constraints_text() + repr(self.ships + HARNESS)
                                + python_version(interpreter) + str(interpreter)).encode()).hexdigest()
        if (self.folder / "stamp").is_file() and (self.folder / "stamp").read_text() == stamp:
            return
        shutil.rmtree(self.folder, ignore_errors=True)
        uv = uv_program()
        if uv is None:
            subprocess.run([str(interpreter), "-m", "venv", str(self.folder)], check=True)
            installed = self.pip("install", "--quiet", "--no-compile", *self.ships, *HARNESS)
        else:     # the same set, linked from uv's cache: seconds instead of most of a minute of CPU
            subprocess.run([uv, "venv", "--quiet", "--python", str(interpreter), str(self.folder)], check=True,
                           env=self.clean_environ())
            installed = subprocess.run(
                [uv, "pip", "install", "--quiet", "--python", str(self.env_python()), *find_links(),
                 "-c", str(self.constraints_file()), "pip", *self.ships, *HARNESS],
                env=self.clean_environ(), capture_output=True, text=True, timeout=900)
        assert installed.returncode == 0, installed.stdout + installed.stderr
        (self.folder / "base.txt").write_text(self.pip("freeze").stdout)
        (self.folder / "stamp").write_text(stamp)

    def back_to_base(self) -> None:
        """Uninstall what an earlier run installed on top of the base set (the course package among it)."""
        base = set((self.folder / "base.txt").read_text().splitlines())
        extra = [line.split("==")[0].split(" @ ")[0] for line in self.pip("freeze").stdout.splitlines()
                 if line not in base]
        if extra:
            removed = self.pip("uninstall", "--yes", *extra)
            assert removed.returncode == 0, removed.stderr

    def run_install_cell(self, wheel: Path) -> str:
        """Run the notebooks' first cell in the environment, the wheel standing in for the public URL."""
        url, ref = authoring.repository()
        public = authoring.install_requirement(url, ref)
        source = authoring.install_cell(url, ref).source
        assert public in source
        script = source.replace(public, f"posenc @ {wheel.as_uri()}") + "\nimport posenc\nprint(posenc.__file__)\n"
        result = subprocess.run([str(self.env_python()), "-c", script], cwd=wheel.parent, env=self.clean_environ(),
                                capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def prepare(self) -> Path:
        """The environment with the course package installed by the first cell (once per run); its Python.
        Raises FileNotFoundError when the interpreter it is made from cannot be found."""
        interpreter = self.base_interpreter()
        if interpreter is None:
            raise FileNotFoundError(f"no working Python {self.python} interpreter: not on PATH as python{self.python}"
                                    f", not in pyenv's versions folder, and POSENC_PYTHON"
                                    f"{self.python.replace('.', '')} is not set (pyenv install {self.python}, or "
                                    f"point POSENC_PYTHON{self.python.replace('.', '')} at one)")
        BUILD.mkdir(exist_ok=True)
        with FileLock(str(BUILD / f"{self.name}.lock")):
            marker = self.folder / "prepared-for-run"
            if not (marker.is_file() and marker.read_text() == RUN_ID):
                self.make_base_environment(interpreter)
                self.back_to_base()
                printed = self.run_install_cell(build_wheel(BUILD / f"{self.name}-wheel"))
                lines = printed.splitlines()
                assert lines[0].startswith("Installing the course package: pip install"), printed
                assert Path(lines[-1]).is_relative_to(self.folder), f"posenc imported from {lines[-1]}, not the wheel"
                marker.write_text(RUN_ID)
        return self.env_python()

    def run_alone(self, notebooks: list[Path], folder: Path) -> None:
        """Run each notebook in this environment through nbval, copied alone into an empty folder of its own
        under ``folder``; fail with the names of those that failed. Its kernels write their .pyc (see
        ``WRITE_BYTECODE``)."""
        copies = []
        for notebook in notebooks:
            alone = folder / f"{notebook.parent.name}-{notebook.stem}"
            alone.mkdir()
            copies.append(shutil.copy(notebook, alone / notebook.name))
        report = folder / "report.xml"
        result = subprocess.run(
            [str(self.env_python()), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
             "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600", f"--junitxml={report}", *copies],
            cwd=folder, env={**self.clean_environ(), **WRITE_BYTECODE}, capture_output=True, text=True,
            timeout=1800)
        failed = sorted({case.get("classname", "") for case in ET.parse(report).iter("testcase")
                         if case.find("failure") is not None or case.find("error") is not None}) \
            if report.exists() else ["(no report)"]
        assert result.returncode == 0 and not failed, \
            f"failed in {self.name}: {failed}\n" + result.stdout[-6000:] + result.stderr[-2000:]

    def kernel_path(self) -> Path:
        """A Jupyter data folder whose kernel ``python3`` runs this environment's interpreter (absolute path:
        jupyter_client would swap a bare ``python`` for its own interpreter)."""
        folder = BUILD / f"{self.name}-kernel"
        spec = folder / "kernels" / "python3"
        spec.mkdir(parents=True, exist_ok=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [str(self.env_python()), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "env": WRITE_BYTECODE,
            "display_name": f"Python 3 (test environment {self.name})", "language": "python"}, indent=1))
        return folder


# A kernel of these environments writes each module's .pyc into its environment as it first imports it, as in
# Colab, even where the shell says PYTHONDONTWRITEBYTECODE (where the course is tested, it does): the
# environments are linked from uv's cache without any, and every kernel would otherwise compile torch and the
# rest from source again. Empty is unset to Python; the course's own processes keep the shell's value, so
# nothing is written into the checkout.
WRITE_BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}


def uv_program() -> str | None:
    """The uv that ``make setup`` installs into .venv (requirements.txt), or None: pip makes the environments."""
    try:
        from uv import find_uv_bin
        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return None


def find_links() -> list[str]:
    """uv's options for the folders of wheels pip is pointed at (PIP_FIND_LINKS, else pip's configuration;
    here a local CPU build of torch): uv reads neither, and would take the multi-GB CUDA build instead."""
    links = os.environ.get("PIP_FIND_LINKS") or subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.find-links"], capture_output=True, text=True).stdout
    return [option for link in links.split() for option in ("--find-links", link)]


def build_wheel(folder: Path) -> Path:
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(folder), str(ROOT)], check=True, capture_output=True)
    (wheel,) = folder.glob("posenc-*.whl")
    return wheel


# What a fresh Colab runtime already has, among the packages the course touches (versions: constraints.txt).
LIKE_COLAB = Environment("colab-env", ("numpy", "matplotlib", "torch", "ipykernel"), ROOT / "constraints.txt")
# Colab's own versions on Python 3.12 (tests/colab_versions.txt), without torch.
COLAB_VERSIONS = Environment("colab-versions-env", ("numpy", "matplotlib", "ipython", "ipywidgets", "ipykernel"),
                             ROOT / "tests" / "colab_versions.txt", python="3.12")

# The first environment under the names the book build and tests/test_colab.py use.
COLAB_SHIPS = list(LIKE_COLAB.ships)
ENV = LIKE_COLAB.folder
env_python = LIKE_COLAB.env_python
clean_environ = LIKE_COLAB.clean_environ
pip = LIKE_COLAB.pip
prepare = LIKE_COLAB.prepare
kernel_path = LIKE_COLAB.kernel_path
# The same versions on Python 3.11 with the CPU build of torch of constraints.txt: the notebooks that need torch.
COLAB_VERSIONS_TORCH = Environment(
    "colab-versions-torch-env", (*COLAB_VERSIONS.ships, "torch"), COLAB_VERSIONS.constraints,
    pins=("torch==2.13.0+cpu", "setuptools==84.2.1",    # torch 2.13 needs setuptools>=77.0.3; Colab had 75.2
          *(f"{name}=={version}" for name, version in re.findall(r"^(sympy|mpmath|networkx|fsspec|filelock)==(\S+)$",
                                                                 (ROOT / "constraints.txt").read_text(), re.M))))
