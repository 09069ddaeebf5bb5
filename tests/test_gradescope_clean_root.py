"""The Gradescope bundle in a clean root file system, as Gradescope builds and runs it (issue 32, item 2):
``setup.sh`` as root in a chroot of a fresh Debian 12, then ``run_autograder`` once per submission there; the
scores must be those the command gives on this machine.

Tried by hand on the 2-core machine under load (another 8 jobs): debootstrap --variant=minbase took 278 s,
setup.sh 208 s (torch from the machine's local wheels: PyTorch's index cannot be reached there); bubblewrap
was refused in the chroot ("make / private: Invalid argument"; no user namespace can be made in a chroot),
so the kernels ran as nobody; the solution got 14/14, typical mistakes 4/14 and an answer using torch 14/14,
as with the command.

Opt-in (it installs Python, bubblewrap and the pinned packages, torch included: minutes, and the network to
Debian's and PyPI's archives), as root, on a root file system made beforehand:

    debootstrap --variant=minbase bookworm /var/tmp/debian12 http://deb.debian.org/debian
    POSENC_CLEAN_ROOT=/var/tmp/debian12 .venv/bin/python -m pytest tests/test_gradescope_clean_root.py

The folder is changed (setup.sh installs into it, /autograder is made anew each run); pip's configuration,
certificates and local wheel folders of this machine (/etc/pip.conf, PIP_CERT, PIP_FIND_LINKS) are lent to
it, and the PyTorch CPU index is asked once, briefly (where it cannot be reached, torch comes from those
wheels or PyPI).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from posenc.grader import gradescope
from tests.conftest import ROOT
from tests.submissions import corpus_module
from tests.test_gradescope import PRIVATE, TORCH_ANSWER, validate

VARIABLE = "POSENC_CLEAN_ROOT"
CORPUS = ROOT / "tests" / "submissions"


@pytest.fixture(scope="module")
def clean_root(tmp_path_factory):
    root = os.environ.get(VARIABLE)
    if not root:
        pytest.skip(f"opt-in: set {VARIABLE} to a Debian 12 root file system (see this file's docstring)")
    if os.geteuid() != 0:
        pytest.skip("a chroot needs root")
    root = Path(root)
    assert (root / "etc" / "debian_version").read_text().startswith("12"), "not a Debian 12 root file system"
    top = tmp_path_factory.mktemp("clean-root")
    (top / "private").mkdir()
    (top / "private" / "checks.py").write_text(PRIVATE)
    bundle = top / "autograder_ch01.zip"
    gradescope.build_bundle("ch01", bundle, top / "private", settings={"timeout_per_question": 10})
    autograder = root / "autograder"
    shutil.rmtree(autograder, ignore_errors=True)
    (autograder / "source").mkdir(parents=True)
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(autograder / "source")
    for name in ("setup.sh", "run_autograder"):
        (autograder / "source" / name).chmod(0o755)
    shutil.copy(autograder / "source" / "run_autograder", autograder / "run_autograder")
    mounts = []
    with contextlib.ExitStack() as stack:
        for source, target, kind in (("proc", "proc", "proc"), ("/dev", "dev", "bind"), ("/sys", "sys", "bind"),
                                     *[(folder, folder.lstrip("/"), "bind") for folder in _pip_folders()]):
            where = root / target
            where.mkdir(parents=True, exist_ok=True)
            options = ["-t", "proc", source] if kind == "proc" else ["--rbind", source]
            subprocess.run(["mount", *options, str(where)], check=True)
            mounts.append(where)
        stack.callback(lambda: [subprocess.run(["umount", "-l", str(m)]) for m in reversed(mounts)])
        shutil.copy("/etc/resolv.conf", root / "etc" / "resolv.conf")
        if Path("/etc/pip.conf").exists():
            shutil.copy("/etc/pip.conf", root / "etc" / "pip.conf")
        if os.environ.get("PIP_CERT"):         # this machine's certificates (setup.sh installs Debian's own)
            shutil.copy(os.environ["PIP_CERT"], root / "etc" / "pip-host-certificates.crt")
        start = time.monotonic()
        setup = chroot(root, ["bash", "/autograder/source/setup.sh"], cwd="/autograder/source", timeout=3600)
        setup_seconds = time.monotonic() - start
        assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
        yield dict(root=root, top=top, setup_seconds=setup_seconds)


def _pip_folders() -> list[str]:
    """This machine's local wheel folders and package indexes that pip's configuration names (lent to the
    chroot so that pip finds what it finds here)."""
    text = " ".join([os.environ.get("PIP_FIND_LINKS", ""), Path("/etc/pip.conf").read_text()
                     if Path("/etc/pip.conf").exists() else ""])
    folders = {word.removeprefix("file://").rstrip("/") for word in text.replace("=", " ").split()
               if word.startswith(("/", "file:///"))}
    return sorted(f for f in folders if Path(f).is_dir() and not f.startswith(("/etc", "/proc", "/dev", "/sys")))


def chroot(root: Path, command: list[str], cwd: str = "/", env: dict | None = None, timeout: float = 600):
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
                   "LANG": "C.UTF-8", "PIP_RETRIES": "1", "PIP_TIMEOUT": "15",
                   **{k: v for k, v in os.environ.items() if k.startswith("PIP_") and k not in ("PIP_RETRIES",
                                                                                               "PIP_TIMEOUT")},
                   **(env or {})}
    if (root / "etc" / "pip-host-certificates.crt").exists():
        environment["PIP_CERT"] = "/etc/pip-host-certificates.crt"
    return subprocess.run(["chroot", str(root), "bash", "-c", f"cd {cwd} && exec \"$@\"", "-", *command],
                          env=environment, capture_output=True, text=True, timeout=timeout)


def run_in_root(root: Path, name: str, data: bytes, **env) -> tuple[dict, str]:
    autograder = root / "autograder"
    for folder in ("submission", "results"):
        shutil.rmtree(autograder / folder, ignore_errors=True)
        (autograder / folder).mkdir()
    (autograder / "submission" / name).write_bytes(data)
    done = chroot(root, ["/autograder/run_autograder"], cwd="/autograder", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((autograder / "results" / "results.json").read_text(encoding="utf-8"))
    validate(results)
    return results, done.stdout


def test_the_bundle_in_a_clean_debian_12_grades_as_the_command_does(clean_root):
    """In a chroot bubblewrap is refused (no user namespace can be made there, as in most containers), so
    this is the route Gradescope usually takes: kernels as nobody, with the limits, Landlock and seccomp."""
    from posenc.grader.cli import main

    make_corpus = corpus_module()
    notebooks = {"ch01_sinusoids.ipynb": (ROOT / "solutions" / "ch01_sinusoids.ipynb").read_bytes(),
                 "ch01_mistakes_carol.ipynb": (CORPUS / "ch01_mistakes_carol.ipynb").read_bytes(),
                 "ch01_torch_tina.ipynb": json.dumps(make_corpus.build(dict(answers={
                     **make_corpus.ALL_RIGHT, "sinusoidal_encoding": TORCH_ANSWER}))).encode()}
    top = clean_root["top"] / "class"
    (top / "hand-ins").mkdir(parents=True)
    for name, data in notebooks.items():
        (top / "hand-ins" / name).write_bytes(data)
    out = top / "grades.csv"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([str(top / "hand-ins"), "--out", str(out), "--extra-tests", str(clean_root["top"] / "private"),
                     "--seed", "7", "--set", "ch01", "--jobs", "2", "--no-sandbox"]) == 0
    with open(out, newline="", encoding="utf-8-sig") as handle:
        local = {row["file"]: row for row in csv.DictReader(handle)}
    for name, data in notebooks.items():
        results, printed = run_in_root(clean_root["root"], name, data)
        scores = {t["name"].split(":")[0]: t["score"] for t in results["tests"]}
        for qid in [q for q in local[name] if q.startswith("q")]:
            assert scores[qid] == float(local[name][qid]), (name, qid, scores, printed)
        assert results["score"] == float(local[name]["total"]), (name, printed)
        print(f"{name}: {results['score']} ({results['extra_data']['confinement']}); "
              f"setup.sh took {clean_root['setup_seconds']:.0f} s")
