"""A student's first hour, simulated: the course's notebooks opened alone, as from a launch button.

The environment (tests/colab_env.py) is Colab-like: what Colab ships, no checkout on the path, and the
course package installed by the notebooks' own first cell. Every notebook of the table of contents runs
alone there, in an empty folder, exactly once per run:

* the notebooks the book executes (chapters, solutions) run during the book build, tests/test_book.py,
  whose kernel is this environment's and whose kernels start in empty folders;
* the others, the exercise pages that the book shows unexecuted (``execute.exclude_patterns``), run here,
  each copied alone into an empty folder, through nbval with this environment's kernel.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from posenc.book import execute
from posenc.exercises import authoring
from tests.colab_env import ENV, LIKE_COLAB, clean_environ
from tests.conftest import ROOT


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


def test_every_notebook_is_run_alone_either_here_or_by_the_book_build():
    here, by_the_book = execute.excluded_notebooks(), execute.book_notebooks()
    assert sorted(here + by_the_book) == sorted(authoring.toc_notebooks())
    assert len(by_the_book) >= 15 and len(here) >= 8, (here, by_the_book)
    assert all(path.parent.name == "exercises" for path in here), here


def test_the_exercise_notebooks_run_alone_in_a_colab_like_environment(colab_env, tmp_path):
    notebooks = execute.excluded_notebooks()
    assert notebooks
    LIKE_COLAB.run_alone(notebooks, tmp_path)
