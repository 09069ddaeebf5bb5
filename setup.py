"""Build hook of the course package (the rest of its metadata is in pyproject.toml).

A wheel carries copies of the checkout's files that the package reads at run time, listed in
``posenc.paths.PACKAGED_DATA`` (quizzes, full experiment results, the exercise notebooks as handed out),
in ``posenc/_data/``: a notebook opened alone in Colab or Binder, with the package installed from git, and
the grader find them without a clone. Editable installs (``make setup``) read the checkout itself.
"""

import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PACKAGED_DATA = runpy.run_path(str(HERE / "posenc" / "paths.py"))["PACKAGED_DATA"]


class BuildPyWithCourseData(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        for name, pattern in PACKAGED_DATA.items():
            files = sorted(HERE.glob(pattern))
            if not files:
                raise SystemExit(f"setup.py: nothing matches {pattern}; build the package from a clone of the course")
            target = Path(self.build_lib) / "posenc" / "_data" / name
            shutil.rmtree(target, ignore_errors=True)     # nothing left over from an earlier build
            target.mkdir(parents=True)
            for file in files:
                shutil.copyfile(file, target / file.name)


setup(cmdclass={"build_py": BuildPyWithCourseData})
