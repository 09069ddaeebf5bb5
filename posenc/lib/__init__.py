"""The course's own library: what the chapters teach, build step by step and experiment with.

* ``encoding``: the sinusoidal table (chapter 1); ``rotation``: the shift operator T(k) (chapter 2);
  ``combining``: adding vs concatenating (chapter 3); ``positional``: absolute encodings as torch
  modules (chapters 3-4);
* ``tasks``: order-sensitive toy tasks; ``models``: the tiny Transformer and its training loop;
  ``experiments``: the one multi-seed experiment runner, its summaries and result files.

Nothing here imports the book's tooling, the exercises or the grader.
"""
