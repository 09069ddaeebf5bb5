"""The Gradescope autograder (issue #24): the bundle, what setup.sh would install, and run_autograder in a
root laid out like Gradescope's /autograder (source/, submission/, results/) for a correct, a wrong, a
broken, an empty, a wrong-set and a hostile submission, with bubblewrap and without it. results.json is
checked field by field against Gradescope's specification (see posenc/grader/gradescope.py).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from posenc.exercises import load_set
from posenc.grader import gradescope
from posenc.grader.sandbox import NOBODY, package_dir
from posenc.grader.session import default_seed
from tests.conftest import ROOT
from tests.submissions import corpus_module, require_bwrap

CORPUS = ROOT / "tests" / "submissions"
SECRET = "PRIVATE-SECRET-71f3"
PRIVATE = f'''
# {SECRET}
from posenc.exercises.framework import FunctionQuestion
import numpy as np

def close(got, expected, args):
    return None if isinstance(got, float) and abs(got - expected) <= 1e-6 * expected else "{SECRET} off"

EXTRA = {{"ch01": [FunctionQuestion(qid="p1", title="{SECRET}", name="wavelength", points=2,
                                    probes=lambda seed: [(3, 10, 100.0)],
                                    reference=lambda i, d, base=1e4: 2 * np.pi * base ** (2 * i / d),
                                    compare=close)]}}
'''
HOSTILE = '''import os, glob

def wavelength(i, d_model, base=10000.0):
    if base == 100.0:
        os._exit(i * 67 % 256)                          # the private input, told through the exit code
    return 2 * np.pi * base ** (2 * i / d_model)

found = []
for pattern in ["/autograder/source/**", {root!r} + "/source/**", {checks!r} + "/ch01.py"]:
    for path in glob.glob(pattern, recursive=True):
        try:
            found.append(open(path, errors="replace").read(200))
        except OSError:
            pass
for target in [{root!r} + "/results/results.json", "/autograder/results/results.json"]:
    try:
        open(target, "w").write('{{"score": 1000}}')
    except OSError:
        pass
raise RuntimeError("found: " + " | ".join(found))
'''
TOP_FIELDS = {"score", "execution_time", "output", "visibility", "stdout_visibility", "extra_data", "tests",
              "leaderboard", "output_format"}
TEST_FIELDS = {"score", "max_score", "status", "name", "number", "output", "tags", "visibility", "extra_data",
               "output_format", "name_format"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The ch01 bundle with one private check, unpacked once; the wheel unpacked as its site-packages."""
    top = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="posenc-gradescope-"))   # readable by nobody
    try:
        top.chmod(0o755)
        private = top / "private"
        private.mkdir()
        (private / "checks.py").write_text(PRIVATE)
        out = top / "autograder_ch01.zip"
        names = gradescope.build_bundle("ch01", out, private, settings={"timeout_per_question": 5})
        source, site = top / "source", top / "site"
        with zipfile.ZipFile(out) as archive:
            archive.extractall(source)
            infos = archive.infolist()
        wheel = next(source.glob("posenc-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
        for folder, dirs, files in os.walk(top):
            for name in dirs + files:
                os.chmod(os.path.join(folder, name), 0o755 if name in dirs or name == "run_autograder" else 0o644)
        yield dict(top=top, zip=out, names=names, infos=infos, source=source, site=site)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def run_autograder(bundle, name: str, files: dict[str, bytes], **env) -> tuple[dict, str]:
    """Gradescope's layout under a fresh root: source/ (the bundle), submission/ (the files), results/."""
    root = bundle["top"] / "runs" / name
    shutil.copytree(bundle["source"], root / "source")
    (root / "submission").mkdir()
    (root / "results").mkdir()
    for file, data in files.items():
        (root / "submission" / file).write_bytes(data)
    environment = {**os.environ, "PYTHONPATH": str(bundle["site"]), gradescope.ROOT_VARIABLE: str(root),
                   gradescope.PYTHON_VARIABLE: sys.executable, **env}
    done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=environment, cwd="/",
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    validate(results)
    return results, done.stdout


def validate(data: dict) -> None:
    """results.json as Gradescope's specification describes it."""
    assert set(data) <= TOP_FIELDS, set(data) - TOP_FIELDS
    assert isinstance(data["score"], (int, float)) and isinstance(data["output"], str)
    assert "execution_time" not in data            # optional; left out: it could time a private check
    assert data["visibility"] in gradescope.VISIBILITIES and data["stdout_visibility"] in gradescope.VISIBILITIES
    assert data["stdout_visibility"] == "hidden"             # the lecturer's report is printed there
    assert isinstance(data["extra_data"], dict)
    tests = data["tests"]
    assert [t["number"] for t in tests] == [str(n) for n in range(1, len(tests) + 1)]
    assert len({t["name"] for t in tests}) == len(tests)
    for test in tests:
        assert set(test) <= TEST_FIELDS, set(test) - TEST_FIELDS
        assert isinstance(test["score"], (int, float)) and isinstance(test["max_score"], (int, float))
        instructor = test["name"] == gradescope.INSTRUCTOR_NOTE
        assert not instructor or (test["visibility"] == "hidden" and test["max_score"] == 0)
        assert 0 <= test["score"] <= test["max_score"] and (test["max_score"] > 0 or instructor)
        assert test["status"] == ("passed" if test["score"] == test["max_score"] else "failed")
        assert test["visibility"] in gradescope.VISIBILITIES
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
    counted = [t for t in tests if not (t["name"].startswith("Further check") and t["visibility"] == "hidden")]
    assert data["score"] == pytest.approx(sum(t["score"] for t in counted))     # hidden checks: never in the total



def by_name(results: dict) -> dict[str, dict]:
    return {t["name"].split(":")[0]: t for t in results["tests"]}


def test_the_bundle_holds_what_gradescope_needs_and_nothing_else(bundle):
    names = [info.filename for info in bundle["infos"]]
    wheel = next(n for n in names if n.endswith(".whl"))
    assert sorted(names) == sorted(["setup.sh", "run_autograder", "requirements.txt", "constraints.txt",
                                    "posenc_autograder.json", wheel, "private/checks.py"])
    assert all("/" not in n or n.startswith("private/") for n in names)          # at the zip's root
    modes = {info.filename: info.external_attr >> 16 for info in bundle["infos"]}
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert bundle["zip"].stat().st_size < 2 * 2**20                               # measured: about 0.9 MB
    with zipfile.ZipFile(bundle["source"] / wheel) as archive:
        inside = archive.namelist()
    assert "posenc/exercises/checks/ch01.py" in inside and "posenc/_data/exercises/ch01_sinusoids.ipynb" in inside
    assert not any(n.startswith(("solutions/", "tests/")) or "/solutions/" in n for n in inside)
    config = json.loads((bundle["source"] / "posenc_autograder.json").read_text())
    assert config["set"] == "ch01" and config["private"] == ["p1"] and config["private_visibility"] == "after_due_date"
    assert config["settings"]["seed"] == default_seed("ch01")     # one seed for every submission: `grade`'s default


def test_setup_installs_what_a_notebook_may_import_pinned_and_cpu_torch_whatever_the_set(bundle):
    """One environment wherever a notebook is graded: the package's run-time dependencies and its torch
    extra (pyproject.toml), for ch01 too, each pinned as constraints.txt pins it, torch as its CPU build."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    script = (bundle["source"] / "setup.sh").read_text()
    assert subprocess.run(["bash", "-n", str(bundle["source"] / "setup.sh")]).returncode == 0
    assert "python3.11 python3.11-venv bubblewrap" in script and "-r requirements.txt -c constraints.txt" in script
    assert "--no-deps posenc-" in script
    pins = (ROOT / "constraints.txt").read_text().splitlines()
    lines = (bundle["source"] / "requirements.txt").read_text().splitlines()
    torch_pin = next(p for p in pins if p.startswith("torch=="))
    assert lines[:2] == [f"--extra-index-url {gradescope.TORCH_INDEX}", torch_pin + "+cpu"]
    assert all(line in pins for line in lines[2:])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {canonicalize_name(Requirement(r).name)
                for r in project["dependencies"] + project["optional-dependencies"]["torch"]}
    assert {canonicalize_name(Requirement(line).name) for line in lines[1:]} == declared
    assert (bundle["source"] / "constraints.txt").read_text() == (ROOT / "constraints.txt").read_text()


@pytest.fixture(scope="module")
def runs(bundle):
    require_bwrap()
    alice = (ROOT / "solutions" / "ch01_sinusoids.ipynb").read_bytes()
    make_corpus = corpus_module()
    checks = str(bundle["site"] / "posenc" / "exercises" / "checks")
    hostile = make_corpus.build(dict(answers={**make_corpus.ALL_RIGHT, "wavelength": HOSTILE.format(
        root=str(bundle["top"] / "runs" / "hostile"), checks=checks)}))
    cases = {
        "correct": {"ch01_sinusoids.ipynb": alice},
        "wrong": {"ch01_mistakes_carol.ipynb": (CORPUS / "ch01_mistakes_carol.ipynb").read_bytes()},
        "broken": {"homework.ipynb": (CORPUS / "ch01_not_json_ada.ipynb").read_bytes()},
        "empty": {"answers.pdf": b"%PDF-1.4\n"},
        "wrong_set": {"ch02.ipynb": (CORPUS / "ch02_relative_shift_wendy.ipynb").read_bytes()},
        "hostile": {"ch01_hal.ipynb": json.dumps(hostile).encode()},
        "course_code": {"ch01_walt.ipynb": (CORPUS / "ch01_course_code_walt.ipynb").read_bytes()},
    }
    return {name: run_autograder(bundle, name, files) for name, files in cases.items()}


def test_a_correct_submission_gets_full_marks(runs):
    results, printed = runs["correct"]
    maximum = load_set("ch01").max_points + 2
    assert results["score"] == maximum and all(t["status"] == "passed" for t in results["tests"])
    tests = by_name(results)
    assert tests["q1"]["output"].startswith("[PASS] q1 (3/3)") and tests["q1"]["visibility"] == "visible"
    private = tests["Further check 1 by your lecturer"]
    assert private["visibility"] == "after_due_date" and private["output"] == "passed"
    assert "12/12 (100%)" in results["output"] and "check 1:" not in results["output"]   # the course questions only
    assert results["extra_data"]["confinement"] == "bubblewrap" and results["extra_data"]["graded"] is True
    assert "Kernels confined by bubblewrap" in printed and str(package_dir()) not in printed   # the bundle's package


def test_the_instructor_sees_course_code_and_the_published_solution_on_gradescope(runs):
    """What Gradescope's score does not show and the lecturer must decide on: in extra_data and in a hidden
    test (instructors see it on the submission, students never), not in what the student sees."""
    for case, key, words in (("correct", "same_as_course_solution", "published solution"),
                             ("course_code", "course_code", "Course code: `sinusoidal_encoding`")):
        results, printed = runs[case]
        assert results["extra_data"][key] is True, results["extra_data"]
        note = by_name(results)[gradescope.INSTRUCTOR_NOTE]
        assert note["visibility"] == "hidden" and words in note["output"], note
        assert "published solution" not in results["output"]
    results, _ = runs["wrong"]
    assert not results["extra_data"]["course_code"] and not results["extra_data"]["same_as_course_solution"]
    assert gradescope.INSTRUCTOR_NOTE not in by_name(results)


def test_a_wrong_submission_names_each_mistake(runs):
    results, _ = runs["wrong"]
    tests = by_name(results)
    assert results["score"] == 4
    assert "layout: you put all sines first" in tests["q1"]["output"] and tests["q1"]["score"] == 0
    assert "without the 2 pi" in tests["q2"]["output"]
    assert tests["Further check 1 by your lecturer"]["output"] == "failed"


@pytest.mark.parametrize("case, words", [
    ("broken", "Your notebook could not be read: the file is not valid JSON"),
    ("empty", "No Jupyter notebook (.ipynb) was found in your submission (you submitted: answers.pdf)"),
    ("wrong_set", "This is a notebook of exercise set ch02, but this assignment is ch01"),
])
def test_a_submission_that_cannot_be_graded_gets_zero_and_a_clear_reason(runs, case, words):
    results, _ = runs[case]
    assert results["score"] == 0 and words in results["output"]
    assert all(t["status"] == "failed" and t["score"] == 0 for t in results["tests"])
    assert all(words in t["output"] for t in results["tests"] if not t["name"].startswith("Further"))


def test_a_hostile_submission_learns_nothing_and_changes_nothing(runs):
    results, printed = runs["hostile"]
    text = json.dumps(results)
    assert SECRET not in text and "201" not in text and "exited" not in text
    assert "def wavelength" not in results["output"] or "found: " in results["output"]
    assert "reference" not in results["output"].split("found:")[-1]       # no check module was read
    assert results["score"] == load_set("ch01").max_points                  # its public answers are right
    assert by_name(results)["Further check 1 by your lecturer"]["output"] == "failed"
    assert "exited with code 201" in printed                               # the instructor sees it


def test_without_bubblewrap_the_container_route_grades_the_same(bundle, runs):
    results, printed = run_autograder(bundle, "no_bwrap", {"ch01_sinusoids.ipynb": (
        ROOT / "solutions" / "ch01_sinusoids.ipynb").read_bytes()}, POSENC_BWRAP="none",
        **{gradescope.USER_VARIABLE: "0"})
    assert results["score"] == runs["correct"][0]["score"]
    assert "no bubblewrap" in results["extra_data"]["confinement"] and "seccomp" in printed


def test_without_bubblewrap_as_root_what_decides_a_score_is_closed_to_the_kernels_user(bundle, tmp_path):
    """The kernels run as nobody: the check modules and the bundle are closed to it (tested with cat as
    nobody, since this machine's Python may be out of nobody's reach), and the autograder refuses to grade
    rather than run the kernels as root when nobody cannot run Python."""
    if os.geteuid() != 0:
        pytest.skip("the container route changes permissions as root only")
    root = bundle["top"] / "runs" / "harden"
    shutil.copytree(bundle["source"], root / "source")
    code = (f"import sys; sys.path.insert(0, {str(bundle['site'])!r}); from pathlib import Path; "
            f"from posenc.grader import gradescope; gradescope._harden(Path({str(root)!r}))")
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(bundle["site"])})
    checks = bundle["site"] / "posenc" / "exercises" / "checks"

    def cat(path: Path) -> int:
        return subprocess.run(["cat", str(path)], user=NOBODY, group=NOBODY, extra_groups=[],
                              capture_output=True).returncode

    assert cat(checks / "ch01.py") != 0 and cat(root / "source" / "private" / "checks.py") != 0
    assert cat(checks / "__init__.py") == 0 and cat(bundle["site"] / "posenc" / "lib" / "__init__.py") == 0
    listed = subprocess.run(["ls", str(checks)], user=NOBODY, group=NOBODY, extra_groups=[], capture_output=True)
    assert listed.returncode != 0 and b"ch01" not in listed.stdout            # not even the checks' names
    results, printed = run_autograder(bundle, "as_nobody", {"a.ipynb": (CORPUS / "ch01_mistakes_carol.ipynb").read_bytes()},
                                      POSENC_BWRAP="none")
    if gradescope._runs_python(NOBODY):
        assert results["score"] == 4 and "as nobody" in results["extra_data"]["confinement"]
    else:
        assert results["score"] == 0 and "cannot run" in printed and results["extra_data"]["graded"] is False


def test_the_command_builds_a_bundle_and_refuses_a_broken_private_check(tmp_path, capsys):
    from posenc.grader.cli import main

    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "c.py").write_text(
        "from posenc.exercises.framework import FunctionQuestion\n"
        "EXTRA = {'ch01': [FunctionQuestion(qid='p1', title='x', name='wavelength', probes=lambda s: [(1, 4)], "
        "reference=lambda i, d: 1 / 0)]}\n")
    assert main(["gradescope", "ch01", "--out", str(tmp_path / "a.zip"), "--extra-tests", str(tmp_path / "private")]) == 2
    assert "its reference raised ZeroDivisionError" in capsys.readouterr().err and not (tmp_path / "a.zip").exists()
    assert main(["gradescope", "ch99", "--out", str(tmp_path / "a.zip")]) == 2


# ---------------------------------------------------------------------------------------------------
# Issue 32, item 1: what a student sees of results.json, for each visibility of the private checks

PRIVATE_ONLY_WRONG = '''def wavelength(i, d_model, base=10000.0):
    if base == 100.0:                       # right everywhere the course's own questions look
        return 1.0
    return 2 * np.pi * base ** (2 * i / d_model)
'''


def student_view(results: dict, *, due: bool = False, published: bool = False) -> dict:
    """What a student sees of a results.json, by Gradescope's specification ("Controlling Test Case
    Visibility"): a test whose visibility is visible, after_due_date once the due date has passed,
    after_published once the grades are published, never a hidden one (an unset one takes the top level's);
    the total score only while no after_due_date or after_published test is held back (hidden tests do not
    hold it back); the top-level output at the top level's visibility; standard output at its own; never
    extra_data."""
    def shown(visibility: str) -> bool:
        return visibility == "visible" or (visibility == "after_due_date" and due) or \
            (visibility == "after_published" and published)

    top = results.get("visibility", "visible")
    tests = [t for t in results["tests"] if shown(t.get("visibility", top))]
    held_back = any(t.get("visibility", top) in ("after_due_date", "after_published") and not shown(t.get("visibility", top))
                    for t in results["tests"])
    return {"output": results.get("output") if shown(top) else None, "tests": tests,
            "score": None if held_back else results.get("score"),
            "stdout": "(printed)" if shown(results.get("stdout_visibility", "hidden")) else None}


@pytest.fixture(scope="module")
def private_pair():
    """Two ch01 notebooks with the same public answers, one of which fails the private check, graded in this
    process as the container grades them (in bubblewrap where it is installed)."""
    from posenc.grader.sandbox import find_bwrap
    from posenc.grader.session import Plan, ServerPool, Settings, grade_submission, load_extra_tests
    from posenc.grader.submission import read_submission

    make_corpus = corpus_module()
    notebooks = {"right": make_corpus.build(dict(answers=make_corpus.ALL_RIGHT)),
                 "private_wrong": make_corpus.build(dict(answers={**make_corpus.ALL_RIGHT,
                                                                  "wavelength": PRIVATE_ONLY_WRONG}))}
    top = Path(tempfile.mkdtemp(prefix="posenc-private-pair-"))
    try:
        (top / "private").mkdir()
        (top / "private" / "checks.py").write_text(PRIVATE)
        plan = Plan.make("ch01", load_extra_tests(top / "private"))
        pool = ServerPool(sandboxed=find_bwrap() is not None)
        graded = {}
        try:
            for name, nb in notebooks.items():
                path = top / name / "ch01_homework.ipynb"         # the same name: only the answers differ
                path.parent.mkdir()
                path.write_text(json.dumps(nb))
                sub = read_submission(path, parse=pool.parse)
                graded[name] = grade_submission(sub, plan, pool, Settings(seed=3))
        finally:
            pool.close()
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return plan, graded


@pytest.mark.parametrize("visibility", gradescope.VISIBILITIES)
def test_until_published_a_student_sees_nothing_that_depends_on_the_private_checks(private_pair, visibility):
    plan, graded = private_pair
    right, wrong = (graded[name] for name in ("right", "private_wrong"))
    assert [r.points for r in right.results if not r.private] == [r.points for r in wrong.results if not r.private]
    assert right.total > wrong.total                                           # the private check tells them apart
    results = {name: gradescope.results_json(plan, g, [], visibility, "bubblewrap") for name, g in graded.items()}
    for data in results.values():
        validate(data)
    before = {name: student_view(data) for name, data in results.items()}
    if visibility == "visible":            # the lecturer chose to show them at once
        assert before["right"] != before["private_wrong"]
        return
    assert before["right"] == before["private_wrong"], (before["right"], before["private_wrong"])
    assert "Further check" not in json.dumps(before["right"]["tests"]) and "check 1:" not in before["right"]["output"]
    assert "Further checks by your lecturer:" not in before["right"]["output"]
    after = {name: student_view(data, due=True, published=True) for name, data in results.items()}
    if visibility == "hidden":             # never shown, and never in Gradescope's total, which students see
        assert after["right"] == after["private_wrong"]
        assert results["right"]["score"] == sum(r.points for r in right.results if not r.private)
    else:                                  # shown once due or published, total included
        assert after["right"]["score"] == right.total and after["private_wrong"]["score"] == wrong.total
        assert {t["name"]: t["output"] for t in after["private_wrong"]["tests"]}["Further check 1 by your lecturer"] == "failed"


def test_the_instructor_s_output_says_why_bubblewrap_failed_in_whole_sentences_and_no_host_fixes(bundle):
    """Inside Gradescope's container a refused bubblewrap is routine: the output says so with bubblewrap's
    own words, cut at no word, and suggests no sysctl or AppArmor change (a container cannot make one)."""
    place = Path(tempfile.mkdtemp(dir="/var/tmp"))          # reachable by nobody, not under /tmp
    try:
        place.chmod(0o755)
        fake = place / "bwrap"
        fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
        fake.chmod(0o755)
        results, printed = run_autograder(bundle, "refused_bwrap", {"ch01_sinusoids.ipynb": (
            ROOT / "solutions" / "ch01_sinusoids.ipynb").read_bytes()}, POSENC_BWRAP=str(fake),
            **{gradescope.USER_VARIABLE: "0"})
    finally:
        shutil.rmtree(place)
    line = next(line for line in printed.splitlines() if line.startswith("bubblewrap cannot run"))
    assert "setting up uid map: Permission denied" in line and line.endswith("using the container's own isolation")
    assert "sysctl" not in printed and "apparmor" not in printed.lower(), printed
    assert results["score"] == load_set("ch01").max_points + 2          # graded all the same, without it


# ---------------------------------------------------------------------------------------------------
# Issue 32, item 2: one grade wherever graded

TORCH_ANSWER = '''import torch

def sinusoidal_encoding(n_positions, d_model):
    positions = torch.arange(n_positions, dtype=torch.float64)[:, None]
    pairs = (torch.arange(d_model) // 2).to(torch.float64)
    angles = positions / torch.pow(torch.tensor(10000.0, dtype=torch.float64), 2 * pairs / d_model)
    return torch.where(torch.arange(d_model) % 2 == 0, torch.sin(angles), torch.cos(angles)).numpy()
'''


def bundle_environment(requirements: Path, folder: Path) -> Path:
    """A Python environment that holds what the bundle's requirements.txt installs and nothing else (their
    distributions and everything they require, hard-linked from this environment: no download), as setup.sh
    makes /autograder/venv; its interpreter."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(folder)],
                   check=True, timeout=120)
    site = next(folder.glob("lib/python3*/site-packages"))
    wanted = [Requirement(line).name for line in requirements.read_text().splitlines()
              if line.strip() and not line.startswith(("-", "#"))]
    seen: dict[str, metadata.Distribution] = {}
    while wanted:
        name = canonicalize_name(wanted.pop())
        if name in seen:
            continue
        seen[name] = dist = metadata.distribution(name)
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(requirement.name)
    def link(source, target):           # hard links: the files are the venv's own (Landlock reads by path)
        try:
            os.link(source, target)
        except OSError:                 # another file system
            shutil.copy2(source, target)

    for dist in seen.values():
        here = Path(dist.locate_file(""))
        for top in {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}:
            if (site / top).exists() or not (here / top).exists():
                continue
            if (here / top).is_dir():
                shutil.copytree(here / top, site / top, copy_function=link, symlinks=True)
            else:
                link(here / top, site / top)
    return folder / "bin" / "python"


def test_one_set_of_notebooks_gets_one_grade_inline_locally_and_in_the_bundle(bundle, tmp_path):
    """The same notebooks (one answers q1 with torch, as a Colab student may; one holds typical mistakes)
    graded by the inline check(), by the command (make grade) and by the bundle in an environment made of
    what its setup.sh installs: the same points for every question."""
    from posenc.exercises import load_set
    from posenc.exercises.authoring import notebook_namespace

    make_corpus = corpus_module()
    notebooks = {"ch01_torch_tina.ipynb": json.dumps(make_corpus.build(dict(answers={
                     **make_corpus.ALL_RIGHT, "sinusoidal_encoding": TORCH_ANSWER}))).encode(),
                 "ch01_mistakes_carol.ipynb": (CORPUS / "ch01_mistakes_carol.ipynb").read_bytes()}
    folder = tmp_path / "hand-ins"
    folder.mkdir()
    for name, data in notebooks.items():
        (folder / name).write_bytes(data)
    exercise_set = load_set("ch01")
    namespaces = {name: notebook_namespace(folder / name) for name in notebooks}
    inline = {name: {q.qid: q.grade(dict(namespace), 0).points for q in exercise_set.questions}
              for name, namespace in namespaces.items()}
    assert inline["ch01_torch_tina.ipynb"]["q1"] == 3                    # torch is part of the course
    from posenc.grader.cli import main

    out = tmp_path / "grades.csv"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main([str(folder), "--out", str(out), "--extra-tests", str(bundle["top"] / "private"),
                     "--set", "ch01", "--jobs", "2", "--timeout-per-question", "5", "--no-sandbox"]) == 0
    with open(out, newline="", encoding="utf-8-sig") as handle:
        local = {row["file"]: row for row in csv.DictReader(handle)}
    python = bundle_environment(bundle["source"] / "requirements.txt", tmp_path / "venv")
    for name, data in notebooks.items():
        results, printed = run_autograder(bundle, f"parity_{name}", {name: data}, POSENC_BWRAP="none",
                                          **{gradescope.USER_VARIABLE: "0", gradescope.PYTHON_VARIABLE: str(python)})
        in_bundle = {t["name"].split(":")[0]: t["score"] for t in results["tests"]}
        for qid, points in inline[name].items():
            assert in_bundle[qid] == points == float(local[name][qid]), (name, qid, in_bundle, local[name], printed)
        assert in_bundle["Further check 1 by your lecturer"] == float(local[name]["p1"])
        assert results["score"] == float(local[name]["total"])


def test_without_bubblewrap_a_private_check_s_input_cannot_come_back_to_the_student(bundle):
    """Gradescope's usual route (no bubblewrap): the note a private check's call leaves in the kernel's folder
    is gone when the kernel restarts, and results.json says nothing of how the kernel ended (issue 32,
    item 5; tests/test_grade_attacks.py tries the same with the command)."""
    from tests.test_grade_attacks import STASH, leaking_notebook

    data = json.dumps(leaking_notebook(STASH.format(folder=""))).encode()
    results, printed = run_autograder(bundle, "leak_no_bwrap", {"ch01_hal.ipynb": data}, POSENC_BWRAP="none",
                                      **{gradescope.USER_VARIABLE: "0"})
    text = json.dumps(results)
    assert "201" not in text and "exited" not in text and "cell" not in results["output"]
    assert "exited with code 3" in printed and "201" not in printed          # the instructor sees how it ended
    assert results["score"] == load_set("ch01").max_points                  # its public answers are right
