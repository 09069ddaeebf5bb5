"""The batch grader: ``python -m posenc.grader hand-ins/ --out grades.csv`` (see ``cli``).

* ``cli``: the command: find the submissions, choose the exercise set, grade them in parallel, write.
* ``submission``: read a notebook, detect its exercise set, prepare its cells (no student code runs).
* ``session``: one submission from cells to judged results; the fork servers; private extra checks.
* ``worker``: the student's side: a fork server with the course's modules imported, and the kernel
  processes it forks (one per submission, own folder, limits, time limit per call).
* ``kernel``: the grader's side of those processes: deadlines, size caps, kill and restart.
* ``sandbox``: the confinement of a kernel.
* ``report``: the gradebook CSV, the feedback files, the progress bar and the summary.
"""
