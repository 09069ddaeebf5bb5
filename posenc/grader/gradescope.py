"""A Gradescope autograder for one exercise set: the bundle, and what runs in Gradescope's container.

    python -m posenc.grader gradescope ch01 --out autograder_ch01.zip [--extra-tests DIR]
    python -m posenc.grader run-autograder --root /autograder      (what the bundle's run_autograder runs)

What Gradescope's autograder specification asks, as this module relies on it (gradescope-autograders
.readthedocs.io, "Autograder Specifications"; facts, in our words):

* the zip holds ``setup.sh`` (run once, as root, when Gradescope builds the image, on its Ubuntu base
  image) and an executable ``run_autograder`` at its root, not in a folder; the zip is unpacked into
  ``/autograder/source``, ``run_autograder`` is copied to ``/autograder/run_autograder`` and runs with
  ``/autograder`` as its working directory, once per submission, in a container of its own;
* the student's files are in ``/autograder/submission``; the result goes to
  ``/autograder/results/results.json``; what ``run_autograder`` prints is kept for the instructor only;
* results.json: ``score`` (optional when the tests have scores), ``execution_time`` (seconds, optional), ``output``
  (text for the whole submission), ``visibility`` and ``stdout_visibility``, ``extra_data``, and
  ``tests``, each with ``score``, ``max_score``, ``status`` ("passed"/"failed"), ``name``, ``number``,
  ``output``, ``tags`` and ``visibility``; a visibility is one of "hidden", "after_due_date",
  "after_published" or "visible".
* visibility ("Controlling Test Case Visibility"): the top level's is the default of every test, a test's own
  overrides it; "hidden" tests are never shown, "after_due_date" ones once the due date has passed,
  "after_published" ones once the grades are published; while a test is held back the student does not see
  the total score, but hidden tests do not hold it back (they are meant to carry no points); ``score``
  overrides the tests' total. So the private checks are tests of their own at the chosen visibility, the
  top-level output holds nothing that depends on them, and with "hidden" the score leaves them out.

**Confinement in the container.** Gradescope runs the container as root and grades one submission in it,
so there is no classmate to protect inside it; what must be protected is the autograder itself: the
reference answers, the private checks and ``results.json``. ``run_autograder`` first tries bubblewrap
(installed by ``setup.sh``), exactly as on a lecturer's machine. Docker's default seccomp profile usually
refuses the user namespaces bubblewrap needs; then the kernels run without it, as the unprivileged user
``nobody``, after the checks of the installed package and the bundle (private checks included) are made
readable by root only: with the same limits, Landlock (writes only in the kernel's own folder) and seccomp
(no new processes, no sockets, no signals to others). The student's code can then read nothing that decides
a score and write nothing outside its folder. ``results.json``'s ``extra_data`` says which route was taken.

For the tests, ``POSENC_AUTOGRADER_ROOT`` replaces ``/autograder``, ``POSENC_AUTOGRADER_PYTHON`` the
Python that ``run_autograder`` uses (``/autograder/venv/bin/python``) and ``POSENC_AUTOGRADER_KERNEL_USER``
the kernels' user without bubblewrap.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from posenc.exercises import SET_IDS, load_set
from posenc.grader.kernel import Limits
from posenc.grader.report import UNJUDGED, lecturer_report_text, one_line
from posenc.grader.sandbox import NOBODY, SandboxError, find_bwrap, package_dir
from posenc.grader.status import COURSE_CODE
from posenc.grader.session import (
    Graded, Plan, ServerPool, Settings, UsageError, default_seed, grade_submission, load_extra_tests,
)
from posenc.grader.submission import (
    EMPTY, INVALID, SOLUTION_NOTE, Submission, read_submission, set_digest, solution_digest, template_sources,
)

VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")
CONFIG = "posenc_autograder.json"
ROOT_VARIABLE, PYTHON_VARIABLE = "POSENC_AUTOGRADER_ROOT", "POSENC_AUTOGRADER_PYTHON"
# The kernels' user without bubblewrap, as root (default nobody). Tests only: where nobody cannot reach this
# machine's Python (under /root), they grade with 0 and check the permissions with another program.
USER_VARIABLE = "POSENC_AUTOGRADER_KERNEL_USER"
TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
PYTHON = "python3.11"          # the version the pins in constraints.txt are tested with
MAX_BUNDLE_BYTES = 20 * 2**20
NOT_GRADED = "not graded"


# ---------------------------------------------------------------------------------------------------
# The bundle


def _pins(constraints: str) -> dict[str, str]:
    pins = {}
    for line in constraints.splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.\-]+)==([^\s;#]+)", line)
        if match:
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = f"{match[1]}=={match[2]}"
    return pins


def runtime_requirements(checkout: Path) -> list[str]:
    """requirements.txt of the bundle: what a student's notebook may import, whatever the set (one grade
    wherever graded: a ch01 answer may use torch, as it may in Colab, on Binder and in make grade). That is
    the course package's run-time dependencies and its ``torch`` extra (pyproject.toml, the one place they
    are declared), pinned as constraints.txt pins them, torch as its CPU build (from PyTorch's CPU index,
    as binder/ takes it: the default build brings several GB of CUDA libraries); torch's own dependencies
    come from PyPI, pinned by constraints.txt."""
    names = [re.match(r"[A-Za-z0-9_.\-]+", dep)[0] for dep in notebook_requirements(checkout)]
    pins = _pins((checkout / "constraints.txt").read_text())
    missing = [n for n in names if re.sub(r"[-_.]+", "-", n).lower() not in pins]
    if missing:
        raise UsageError(f"constraints.txt pins no version of {', '.join(missing)}")
    lines = [pins[re.sub(r"[-_.]+", "-", n).lower()] for n in names]
    return [f"--extra-index-url {TORCH_INDEX}", *(line + "+cpu" if line.startswith("torch==") else line
                                                  for line in lines)]


def notebook_requirements(checkout: Path) -> list[str]:
    """What a student's notebook may import, as pyproject.toml declares it: the package's dependencies and
    its torch extra (their ranges; constraints.txt pins the versions tested)."""
    import tomllib

    project = tomllib.loads((checkout / "pyproject.toml").read_text())["project"]
    return [*project["optional-dependencies"]["torch"], *project["dependencies"]]


def setup_script(requirements: list[str], wheel: str) -> str:
    return "\n".join([
        "#!/usr/bin/env bash",
        "# Gradescope runs this once, as root, when it builds the autograder's image (choose its Ubuntu 22.04",
        "# base image): Python 3.11, bubblewrap, then the course package and its pinned run-time dependencies",
        "# (requirements.txt, with constraints.txt for theirs) in /autograder/venv.",
        "# Written by python -m posenc.grader gradescope.",
        "set -euo pipefail",
        "cd /autograder/source",
        "export DEBIAN_FRONTEND=noninteractive",
        "apt-get update -q",
        f"apt-get install -y -q --no-install-recommends {PYTHON} {PYTHON}-venv bubblewrap ca-certificates",
        f"{PYTHON} -m venv /autograder/venv",
        'pip="/autograder/venv/bin/python -m pip"',
        '$pip install -q --upgrade "pip>=23"',
        "$pip install -q -r requirements.txt -c constraints.txt",
        f"$pip install -q --no-deps {wheel}",
    ]) + "\n"


RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this once per submission, in /autograder: it grades /autograder/submission/*.ipynb and
# writes /autograder/results/results.json. Written by python -m posenc.grader gradescope.
root="${POSENC_AUTOGRADER_ROOT:-/autograder}"
python="${POSENC_AUTOGRADER_PYTHON:-$root/venv/bin/python}"
cd "$root"
exec "$python" -m posenc.grader run-autograder --root "$root"
"""


def build_wheel(checkout: Path, folder: Path) -> Path:
    """The course package as a wheel (its data included), built from the checkout without the network."""
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(folder), str(checkout)], check=True, capture_output=True, timeout=600)
    wheels = sorted(folder.glob("posenc-*.whl"))
    if not wheels:
        raise UsageError("building the package's wheel gave no posenc-*.whl")
    return wheels[-1]


def build_bundle(set_id: str, out: Path, extra_tests: Path | None = None, settings: dict | None = None,
                 private_visibility: str = "after_due_date", wheel: Path | None = None) -> list[str]:
    """Write the autograder zip for ``set_id``; the names it holds."""
    if set_id not in SET_IDS:
        raise UsageError(f"unknown exercise set {set_id!r}; the course has {', '.join(SET_IDS)}")
    if private_visibility not in VISIBILITIES:
        raise UsageError(f"--private-visibility must be one of {', '.join(VISIBILITIES)}")
    checkout = package_dir().parent
    if not (checkout / "pyproject.toml").is_file():
        raise UsageError("the bundle is built from a clone of the course (pyproject.toml, constraints.txt)")
    extras = load_extra_tests(extra_tests) if extra_tests else []
    plan = Plan.make(set_id, extras)          # private checks that do not fit stop here, as in a run
    settings = {"seed": default_seed(set_id), **(settings or {})}
    plan.check_private(settings["seed"])
    requirements = runtime_requirements(checkout)
    config = {"set": set_id, "title": load_set(set_id).title, "private_visibility": private_visibility,
              "settings": settings, "private": [q.qid for q in plan.questions if q.private],
              "solution_digest": solution_digest(set_id)}    # a hash of the course's solution, not the solution
    with tempfile.TemporaryDirectory() as scratch:
        wheel = wheel or build_wheel(checkout, Path(scratch))
        files: dict[str, bytes] = {
            "setup.sh": setup_script(requirements, wheel.name).encode(),
            "run_autograder": RUN_AUTOGRADER.encode(),
            "requirements.txt": ("\n".join(requirements) + "\n").encode(),
            "constraints.txt": (checkout / "constraints.txt").read_bytes(),
            CONFIG: (json.dumps(config, indent=1) + "\n").encode(),
            wheel.name: wheel.read_bytes(),
        }
        for module in extras:
            files[f"private/{module.path.name}"] = module.path.read_bytes()
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
            for name, data in files.items():
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = ((0o755 if name in ("setup.sh", "run_autograder") else 0o644) << 16)
                info.compress_type = zipfile.ZIP_DEFLATED
                bundle.writestr(info, data)
    if out.stat().st_size > MAX_BUNDLE_BYTES:
        raise UsageError(f"the bundle is {out.stat().st_size / 2**20:.1f} MB, over {MAX_BUNDLE_BYTES // 2**20} MB")
    return list(files)


# ---------------------------------------------------------------------------------------------------
# In the container: one submission


def _harden(root: Path) -> list[str]:
    """Without bubblewrap, as root: what decides a score made readable by root only (the kernels run as
    nobody): every check module of the installed package (and its bytecode; ``checks/__init__.py`` stays
    importable, but the folder cannot be listed: not even the checks' names) and the bundle (private
    checks, configuration). Only an
    installed copy of the package is changed, never a checkout's."""
    checks = package_dir() / "exercises" / "checks"
    if (package_dir().parent / "pyproject.toml").exists():
        raise SandboxError("refusing to change the permissions of a checkout's package: install the wheel")
    done = []
    for folder, dirs, files in os.walk(checks):
        for name in dirs:
            os.chmod(os.path.join(folder, name), stat.S_IRWXU)
        for name in files:
            if not (folder == str(checks) and name == "__init__.py"):
                os.chmod(os.path.join(folder, name), stat.S_IRUSR | stat.S_IWUSR)
                done.append(os.path.join(folder, name))
    os.chmod(checks, stat.S_IRWXU | stat.S_IXGRP | stat.S_IXOTH)   # its __init__ importable, its names unlisted
    for path in (root / "source", root / "results"):
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, stat.S_IRWXU)
    return done


def _pick(folder: Path, set_id: str, pool: ServerPool) -> tuple[Submission | None, list[str]]:
    """The notebook to grade: the only .ipynb, or the only one of the set; else None and why."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and ".ipynb_checkpoints" not in p.parts)
    notebooks = [p for p in files if p.name.endswith(".ipynb")]
    others = [p.relative_to(folder).as_posix() for p in files if not p.name.endswith(".ipynb")]
    if not notebooks:
        listed = f" (you submitted: {', '.join(others[:10])})" if others else ""
        return None, [f"No Jupyter notebook (.ipynb) was found in your submission{listed}. Submit the "
                      f"exercise notebook of {set_id} itself, as File > Download (.ipynb) saves it."]
    subs = [read_submission(p, p.relative_to(folder).as_posix(), parse=pool.parse) for p in notebooks]
    if len(subs) == 1:
        return subs[0], []
    ours = [s for s in subs if s.gradable and s.set_id == set_id]
    if len(ours) == 1:
        return ours[0], [f"Graded {ours[0].name}; the other notebooks were not graded: "
                         + ", ".join(s.name for s in subs if s is not ours[0])]
    return None, [f"Your submission holds {len(subs)} notebooks ({', '.join(s.name for s in subs)}) and the "
                  f"grader cannot tell which one is your answer to {set_id}: submit one notebook."]


def results_json(plan: Plan, graded: Graded | None, reasons: list[str], private_visibility: str,
                 confinement: str) -> dict:
    """Gradescope's results.json for one submission (see the module's docstring for the fields).

    The private checks are tests of their own at ``private_visibility``; nothing else depends on them. The
    top-level output (which students see at once) holds the course's questions only, and extra_data says
    nothing of them. Gradescope holds the total score back while an after_due_date or after_published test
    is held back, but shows it whatever hidden tests hold: with ``hidden``, the score is the course's
    questions' alone (the checks' points are in each test and in the instructor's output)."""
    from posenc.grader.report import feedback_text

    tests, counted, private_number = [], 0.0, 0
    by_id = {r.qid: r for r in graded.results} if graded is not None else {}
    for number, question in enumerate(plan.questions, start=1):
        result = by_id.get(question.qid)
        score = result.points if result else 0.0
        passed = bool(result and result.passed)
        if question.private:
            private_number += 1
            name = f"Further check {private_number} by your lecturer"
            output = ("passed" if passed else "failed") if result else NOT_GRADED
            visibility = private_visibility
        else:
            name = f"{question.qid}: {one_line(question.title, 200)}"
            output = one_line(result.line(), 2000) if result else f"{NOT_GRADED}: {one_line(' '.join(reasons), 500)}"
            visibility = "visible"
        tests.append({"name": name, "number": str(number), "score": score, "max_score": float(question.points),
                      "status": "passed" if passed else "failed", "output": output, "visibility": visibility})
        if not (question.private and private_visibility == "hidden"):
            counted += score
    graded_ok = graded is not None and graded.submission.gradable
    flagged = _for_the_instructor(graded) if graded_ok else {}
    if flagged:        # a hidden test: instructors see it on the submission, students never
        tests.append({"name": INSTRUCTOR_NOTE, "number": str(len(tests) + 1), "score": 0.0, "max_score": 0.0,
                      "status": "passed", "output": " ".join(flagged.values()), "visibility": "hidden"})
    output = feedback_text(graded, plan, private=False) if graded_ok else "\n".join(one_line(r, 2000) for r in reasons)
    # No execution_time (optional) and no status flags here: how long grading took, or that a limit was hit,
    # could tell a student what a private check did; the instructor reads both on the autograder's output.
    return {"score": counted, "output": output, "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests,
            "extra_data": {"exercise_set": plan.exercise_set.set_id, "confinement": confinement, "graded": graded_ok,
                           "course_code": "course_code" in flagged, "same_as_course_solution": "solution" in flagged}}


INSTRUCTOR_NOTE = "For the instructor (not scored)"


def _for_the_instructor(graded: Graded) -> dict[str, str]:
    """What the lecturer must decide on and Gradescope's score does not show: an answer that is the course's
    own function (full marks stay), a hand-in that is the course's published solution."""
    found = {}
    if COURSE_CODE in graded.flags:
        found["course_code"] = ("Course code: " + "; ".join(n for n in graded.notes if "course's" in n and
                                                              SOLUTION_NOTE not in n)[:1500]
                                + ". Its points are in the score: you decide.")
    if SOLUTION_NOTE in graded.notes:
        found["solution"] = f"Published solution: {SOLUTION_NOTE}. Its points are in the score: you decide."
    return found


def run(root: Path) -> int:
    """Grade ``root``/submission into ``root``/results/results.json; always writes it (0), unless even
    that is impossible (1)."""
    start = time.perf_counter()
    root = Path(root)
    config = json.loads((root / "source" / CONFIG).read_text())
    set_id, visibility = config["set"], config.get("private_visibility", "after_due_date")
    private = root / "source" / "private"
    extras = load_extra_tests(private) if private.is_dir() and any(private.glob("*.py")) else []
    plan = Plan.make(set_id, extras)
    options = config.get("settings") or {}
    settings = Settings(timeout_per_question=float(options.get("timeout_per_question", 10.0)),
                        timeout_per_notebook=float(options.get("timeout_per_notebook", 300.0)),
                        limits=Limits(memory_mb=float(options.get("memory_mb", 1024))),
                        seed=int(options.get("seed", default_seed(set_id))))
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    pool, confinement, graded, reasons = None, "", None, []
    try:
        pool, confinement = _pool(root)
        print(f"Kernels confined by {confinement}; the course package in {package_dir()}")
        sub, reasons = _pick(root / "submission", set_id, pool)
        if sub is not None and sub.gradable and sub.set_id not in (None, set_id):
            reasons.append(f"This is a notebook of exercise set {sub.set_id}, but this assignment is {set_id} "
                           f"({plan.exercise_set.title}): was the wrong notebook submitted?")
            graded = None
        elif sub is not None and not sub.gradable:
            reasons.append({INVALID: "Your notebook could not be read: ", EMPTY: "Your notebook is empty: "}
                           .get(sub.problem, "Your submission could not be graded: ") + sub.message)
        elif sub is not None:
            sub.set_id = set_id
            graded = grade_submission(sub, plan, pool, settings)
            if config.get("solution_digest") and \
                    set_digest(sub, template_sources(set_id)) == config["solution_digest"]:
                graded.notes.append(SOLUTION_NOTE)
            print(lecturer_report_text(plan, [graded], [], ""))
            for r in graded.results:
                if r.private and r.message.startswith(UNJUDGED):
                    print(f"Warning: private check {r.qid} could not judge this submission: {r.message}")
    except Exception as exc:         # a fault of ours: the student still gets a result, the instructor why
        print(f"The autograder failed: {type(exc).__name__}: {exc}")
        reasons = ["The autograder failed on this submission (the instructor can see why); it was not "
                   "graded. Please tell your instructor."]
        graded = None
    finally:
        if pool is not None:
            pool.close()
    print(f"Graded in {time.perf_counter() - start:.1f} s" + (f", status {graded.status}" if graded else ""))
    data = results_json(plan, graded, reasons, visibility, confinement)
    (results / "results.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def _runs_python(user: int) -> bool:
    try:
        return subprocess.run([sys.executable, "-c", "import posenc.lib"], user=user, group=user, extra_groups=[],
                              capture_output=True, timeout=60, cwd="/").returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _pool(root: Path) -> tuple[ServerPool, str]:
    """Bubblewrap where the container allows it; else kernels as nobody, with what decides a score readable
    by root only (see the module's docstring)."""
    if find_bwrap() is not None:
        pool = ServerPool(sandboxed=True)
        try:
            pool.get(None)
            return pool, "bubblewrap"
        except SandboxError as exc:
            pool.close()
            print(f"bubblewrap cannot run in this container ({one_line(exc.message, 300)}); using the "
                  "container's own isolation")       # (exc.hint: what to change on a machine of one's own)
    user = None
    if os.geteuid() == 0:
        _harden(root)
        user = int(os.environ.get(USER_VARIABLE, NOBODY))
        if user != 0 and not _runs_python(user):
            raise SandboxError(f"the kernels' user ({user}) cannot run {sys.executable} and the course package: "
                               "install them where every user can read them (setup.sh does, in /autograder/venv)")
    pool = ServerPool(sandboxed=False, user=user or None)
    pool.get(None)
    who = "as nobody" if pool.user == NOBODY else f"as user {pool.user}" if pool.user else "as this user"
    return pool, f"the container (no bubblewrap), kernels {who}, with the limits, Landlock and seccomp"


# ---------------------------------------------------------------------------------------------------
# The commands
# (subcommands of ``python -m posenc.grader``: see ``cli.parser``)


def add_bundle_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("set_id", help="the exercise set, e.g. ch01")
    parser.add_argument("--out", type=Path, default=None, help="the zip to write (default autograder_chNN.zip)")
    parser.add_argument("--extra-tests", type=Path, help="folder of private checks (.py files defining EXTRA)")
    parser.add_argument("--private-visibility", default="after_due_date", choices=VISIBILITIES,
                        help="when students see whether each private check passed, and the total with their "
                             "points (default after_due_date; hidden: never, and Gradescope's score leaves "
                             "their points out, since Gradescope shows the total whatever hidden tests hold)")
    parser.add_argument("--timeout-per-question", type=float, default=10.0, metavar="S")
    parser.add_argument("--timeout-per-notebook", type=float, default=300.0, metavar="S")
    parser.add_argument("--memory-mb", type=float, default=1024, metavar="M")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the inputs the grader draws besides its fixed ones, kept in the bundle for "
                             "every submission (default: the set's, the same as `grade`'s default)")


def run_bundle(args: argparse.Namespace) -> int:
    """``python -m posenc.grader gradescope chNN``: write the bundle."""
    out = args.out or Path(f"autograder_{args.set_id}.zip")
    seed = args.seed if args.seed is not None else default_seed(args.set_id) if args.set_id in SET_IDS else 0
    try:
        names = build_bundle(args.set_id, out, args.extra_tests, private_visibility=args.private_visibility,
                             settings={"timeout_per_question": args.timeout_per_question,
                                       "timeout_per_notebook": args.timeout_per_notebook,
                                       "memory_mb": args.memory_mb, "seed": seed})
    except (UsageError, subprocess.CalledProcessError) as exc:
        print(f"error: {one_line(exc, 2000)}", file=sys.stderr)
        return 2
    print(f"Wrote {out} ({out.stat().st_size / 2**20:.1f} MB: {', '.join(names)}), seed {seed} for every "
          f"submission (`grade --seed {seed}` grades as this bundle does). On Gradescope: a "
          "Programming Assignment, Configure Autograder, Zip file upload, base image Ubuntu 22.04.")
    return 0


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", type=Path, default=Path(os.environ.get(ROOT_VARIABLE, "/autograder")),
                        help="the autograder's root (default /autograder)")


def run_container(args: argparse.Namespace) -> int:
    """``python -m posenc.grader run-autograder``: one submission, in Gradescope's container."""
    return run(args.root)
