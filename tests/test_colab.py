"""A student's first hour, simulated: every notebook of the book opened alone, as from a launch button.

One Colab-like virtual environment holds only what Colab ships that matters here (numpy, matplotlib, the
CPU build of torch, ipykernel), plus pytest and nbval as the harness, and no checkout on its path. The
course package gets into it the way a notebook's first cell puts it there: that cell's own code runs, with
the public ``git+https`` URL swapped for a wheel built from this checkout (what pip builds from the URL).
Then every notebook of the table of contents is copied alone into an empty folder and nbval executes it
with that environment's kernel. This is the suite's only nbval run: the book build (test_book.py) is the
other execution of every notebook, in .venv.

The environment lives in ``_build/colab-env`` and is kept between runs while constraints.txt is
unchanged; each run removes whatever was installed on top of it, so the first cell starts from Colab's set.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
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


@pytest.fixture(scope="session")
def colab_env() -> Path:
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


def test_the_first_cell_installed_the_package_with_its_data_and_nothing_from_the_checkout(colab_env):
    probe = ("import json, posenc.paths as p, posenc.book.quiz as q, posenc.grader.submission as s\n"
             "print(json.dumps([p.in_checkout(), q.chapters(), sorted(s.template_sources('ch01'))[:1],"
             " str(p.RESULTS / 'ch04.json'), (p.RESULTS / 'ch04.json').is_file()]))")
    result = subprocess.run([str(colab_env), "-c", probe], cwd=ENV, env=clean_environ(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    in_checkout, quizzes, template, results, results_exist = json.loads(result.stdout)
    assert not in_checkout and results_exist and Path(results).is_relative_to(ENV)
    assert quizzes == sorted(p.stem for p in (ROOT / "book" / "quizzes").glob("ch[0-9][0-9].json"))
    assert template, "the grader found no exercise notebook in the installed package"


def test_the_first_cell_does_nothing_where_the_package_is_installed(colab_env):
    source = authoring.install_cell(*authoring.repository()).source
    result = subprocess.run([str(colab_env), "-c", source], cwd=ENV,
                            env=clean_environ(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout == "" and result.stderr == "", result.stdout + result.stderr


def test_every_notebook_runs_alone_in_a_colab_like_environment(colab_env, tmp_path):
    notebooks = authoring.toc_notebooks()
    assert len(notebooks) >= 15, notebooks
    copies = []
    for notebook in notebooks:
        folder = tmp_path / f"{notebook.parent.name}-{notebook.stem}"     # alone in an empty folder
        folder.mkdir()
        copies.append(shutil.copy(notebook, folder / notebook.name))
    report = tmp_path / "report.xml"
    result = subprocess.run(
        [str(colab_env), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "--nbval-lax", "--nbval-current-env", "--nbval-cell-timeout=600", f"--junitxml={report}", *copies],
        cwd=tmp_path, env=clean_environ(), capture_output=True, text=True, timeout=1800)
    failed = sorted({case.get("classname", "") for case in ET.parse(report).iter("testcase")
                     if case.find("failure") is not None or case.find("error") is not None}) \
        if report.exists() else ["(no report)"]
    assert result.returncode == 0 and not failed, f"failed: {failed}\n" + result.stdout[-6000:] + result.stderr[-2000:]
