"""The batch grader behind ``python -m posenc.grade``.

* ``submission``: read a notebook, detect its exercise set, prepare its cells (no student code runs).
* ``worker``: the student's side: a fork server with the course's modules imported, and the kernel
  processes it forks (one per submission, own folder, limits, time limit per call).
* ``kernel``: the grader's side of those processes: deadlines, size caps, kill and restart.
* ``grader``: one submission from cells to judged results; private extra checks.
"""
