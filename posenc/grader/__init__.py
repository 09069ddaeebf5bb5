"""The batch grader: ``python -m posenc.grader hand-ins/ --out grades.csv`` (see ``cli``).

* ``cli``: the command line (``grade``, the default, ``gradescope`` and ``run-autograder``) and the run as a
  pipeline of stages: find the submissions (never through a link), read them, choose the exercise set,
  grade them in parallel, flag duplicates, write, tell.
* ``status``: the one definition of a submission's statuses (problems and flags).
* ``submission``: read a notebook (the parsing itself runs in a kernel), detect its exercise set,
  prepare its cells (no student code runs).
* ``session``: one submission from cells to judged results, within its time; the fork servers; private
  extra checks; the clean-up of a kernel's folder.
* ``worker``: everything that runs next to untrusted input: a fork server with the course's modules
  imported, the kernel processes it forks (one per submission, own folder, limits, time limit per call),
  and the notebook parser they run.
* ``kernel``: the grader's side of those processes: deadlines, size caps, kill and restart.
* ``sandbox``: the confinement: bubblewrap around the fork servers, namespaces per kernel, Landlock and
  seccomp.
* ``report``: the gradebook CSV, the feedback files, the lecturer's report, the progress bar and the
  summary, all made safe to open.
* ``lms``: the roster (Canvas's gradebook export, Moodle's grading worksheet or our own), whose file is
  which, and the Canvas and Moodle gradebook import files.
* ``downloads``: how Canvas and Moodle name the files of a submissions download (who handed each in,
  online text) and the feedback file names their feedback uploads read back.
* ``gradescope``: the Gradescope autograder bundle (``python -m posenc.grader gradescope chNN``) and what
  runs in Gradescope's container.
* ``examples/private_checks/``: a complete example file of a lecturer's private checks.
"""
