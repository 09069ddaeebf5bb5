"""The environments a student meets agree with each other: .venv (requirements.txt + constraints.txt), the
installed package's own dependencies (pyproject.toml), Binder (binder/), and the Makefile's Python check."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT


def pins(path) -> dict[str, str]:
    """name -> exact version of every ``name==version`` line of a requirements or constraints file."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line and not line.startswith("-"):
            name, version = line.split("==")
            found[canonicalize_name(name)] = version.strip()
    return found


def public(version: str) -> str:
    return version.split("+")[0]       # 2.13.0+cpu is the CPU build of 2.13.0


CONSTRAINTS = pins(ROOT / "constraints.txt")
REQUIREMENTS = pins(ROOT / "requirements.txt")
BINDER = ROOT / "binder" / "requirements.txt"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(r) for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["torch"]]


def makefile_python_versions() -> list[str]:
    return re.search(r"^PYTHON_VERSIONS := (.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()


def test_requirements_are_pinned_as_in_constraints():
    assert REQUIREMENTS and all(CONSTRAINTS.get(name) == version for name, version in REQUIREMENTS.items()), \
        {name: (version, CONSTRAINTS.get(name)) for name, version in REQUIREMENTS.items()
         if CONSTRAINTS.get(name) != version}
    assert "jupyterlab" in REQUIREMENTS, "make lab needs JupyterLab in the course environment"


def test_the_package_declares_what_it_imports_and_the_tested_versions_satisfy_it():
    for requirement in RUNTIME:
        name = canonicalize_name(requirement.name)
        assert name in CONSTRAINTS, f"{name} is a run-time dependency but constraints.txt does not pin it"
        assert requirement.specifier.contains(public(CONSTRAINTS[name])), (requirement, CONSTRAINTS[name])
    assert "torch" not in {canonicalize_name(r) for r in PROJECT["dependencies"]}, \
        "torch stays an extra: a plain dependency would pull its multi-GB CUDA build where it is missing"


def test_binder_installs_the_cpu_torch_the_package_and_the_same_pins():
    text = BINDER.read_text()
    binder = pins(BINDER)
    assert re.search(r"^--extra-index-url https://download\.pytorch\.org/whl/cpu$", text, re.M)
    assert binder["torch"].endswith("+cpu"), "Binder must take the CPU build of torch"
    assert re.search(r"^\.$", text, re.M), "Binder must install the course package from the checkout"
    for requirement in RUNTIME:
        assert canonicalize_name(requirement.name) in binder, f"binder/requirements.txt does not pin {requirement.name}"
    # What a notebook may import is declared once (pyproject.toml): Binder installs that set, no more
    assert set(binder) == {canonicalize_name(r.name) for r in RUNTIME}, set(binder) ^ {canonicalize_name(r.name) for r in RUNTIME}
    different = {name: (version, CONSTRAINTS.get(name), REQUIREMENTS.get(name)) for name, version in binder.items()
                 if public(version) != CONSTRAINTS.get(name) or REQUIREMENTS.get(name, CONSTRAINTS.get(name))
                 != CONSTRAINTS.get(name)}
    assert not different, f"binder pin, constraints.txt, requirements.txt: {different}"
    runtime = (ROOT / "binder" / "runtime.txt").read_text().strip()
    assert runtime == f"python-{makefile_python_versions()[0]}", runtime


def fake_interpreter(folder, name: str, version: str):
    folder.mkdir(exist_ok=True)
    script = folder / name
    script.write_text(f'#!/bin/sh\necho "Python {version}"\n')
    script.chmod(0o755)
    return folder


def make(*args: str, path_dir) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    env["PATH"] = f"{path_dir}{os.pathsep}{env['PATH']}"
    return subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("version", ["3.9.18", "3.13.0"])
def test_make_refuses_an_unsupported_python_in_one_line_that_says_what_to_do(tmp_path, version):
    bin_dir = fake_interpreter(tmp_path / "bin", "python3.x", version)
    venv = tmp_path / "venv"
    result = make(f"VENV={venv}", "PYTHON=python3.x", "setup", path_dir=bin_dir)
    assert result.returncode != 0 and not venv.exists()
    message = [line for line in result.stderr.splitlines() if not line.startswith("make:")]
    assert len(message) == 1, result.stderr
    assert f"is {version.rsplit('.', 1)[0]}:" in message[0] and "make PYTHON=python3.11 setup" in message[0], message[0]


def test_make_accepts_a_supported_python(tmp_path):
    bin_dir = fake_interpreter(tmp_path / "bin", "python3.x", f"{makefile_python_versions()[0]}.7")
    result = make(f"VENV={tmp_path / 'venv'}", "PYTHON=python3.x", "check-python", path_dir=bin_dir)
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_make_refuses_a_missing_interpreter(tmp_path):
    result = make(f"VENV={tmp_path / 'venv'}", "PYTHON=python3.nope", "setup", path_dir=tmp_path)
    assert result.returncode != 0 and "make PYTHON=python3.11 setup" in result.stderr, result.stderr


def test_make_setup_can_take_torch_from_the_cpu_index():
    index = "https://download.pytorch.org/whl/cpu"
    result = make("-n", "-B", "VENV=/nonexistent/venv", f"TORCH_INDEX={index}", "setup", path_dir=ROOT)
    line = next(line for line in result.stdout.splitlines() if "--index-url" in line)
    assert f"--no-deps --index-url {index}" in line and "grep '^torch==' constraints.txt" in line, line
    plain = make("-n", "-B", "VENV=/nonexistent/venv", "setup", path_dir=ROOT)
    assert "--index-url" not in plain.stdout


def excluded() -> dict[str, str]:
    """name -> the comment block above it (up to the last blank line), for every package uv-excludes.txt
    names; packages listed one after another share the block."""
    found, comment = {}, []
    for line in (ROOT / "uv-excludes.txt").read_text().splitlines():
        if line.startswith("#"):
            comment.append(line.lstrip("# "))
        elif line.strip():
            found[canonicalize_name(line.strip())] = " ".join(comment).strip()
        else:
            comment = []
    return found


def test_make_setup_leaves_out_what_uv_excludes_lists_and_nothing_the_course_needs():
    """uv-excludes.txt: optional packages another one asks for that cost every process that imports them
    (rfc3987-syntax builds a grammar at import, about 2 s of CPU). Each goes with a reason that names it; none is
    something the course or a notebook imports, or requirements.txt asks for; every uv install of make
    setup leaves them out, and it uninstalls them from an older .venv; and nbformat still validates a
    notebook without them."""
    names = excluded()
    assert "rfc3987-syntax" in names and all(name in reason.lower() for name, reason in names.items()), names
    runtime = {canonicalize_name(r.name) for r in RUNTIME}
    assert not names.keys() & (runtime | REQUIREMENTS.keys()), names.keys() & (runtime | REQUIREMENTS.keys())
    result = make("-n", "-B", "VENV=/nonexistent/venv", "setup", path_dir=ROOT)
    installs = [line for line in result.stdout.splitlines() if " pip install " in line and "/uv " in line]
    assert len(installs) >= 2 and all("--excludes uv-excludes.txt" in line for line in installs), installs
    assert any(" pip uninstall " in line and "uv-excludes.txt" in line for line in result.stdout.splitlines()), \
        "an older .venv keeps what uv-excludes.txt lists unless make setup uninstalls it"
    import nbformat
    nbformat.validate(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")]))


def test_the_grader_s_environment_holds_what_a_notebook_may_import_at_the_tested_versions():
    """make grade's kernels and the inline check() run in .venv: every run-time dependency, the torch extra
    included, installed at the version constraints.txt pins (the Gradescope bundle installs the same pins,
    tests/test_gradescope.py)."""
    from importlib import metadata

    for requirement in RUNTIME:
        name = canonicalize_name(requirement.name)
        assert public(metadata.version(name)) == CONSTRAINTS[name], (name, metadata.version(name))
