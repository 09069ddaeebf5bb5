"""The checks of each exercise set: a module ``chNN`` per set, defining ``EXERCISES``.

These hold the reference answers, the probes and the judges. They run in the student's own notebook
(inline ``check("q1")``) and in the grading process, never in a grading kernel.
"""
