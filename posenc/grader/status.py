"""A submission's status: the one definition of every status the gradebook's ``status`` column can hold.

A submission either could not be graded at all (a **problem**: its points stay empty and its message says
why), or was graded, with ``ok`` or one or more **flags** joined by "+" (``timeout+kernel-died``). Only
``Submission.refuse`` sets a problem and only ``Graded.flag`` raises a flag; both accept only the statuses
defined here. This module imports nothing: the kernels' notebook parser (``worker.parse_notebook``) uses it
inside the sandbox too.
"""

OK = "ok"

# Problems: the file was not graded (the row's points stay empty).
INVALID = "invalid"                  # not a readable notebook (not JSON, not a regular file, too large...)
EMPTY = "empty"                      # a notebook without code
NOT_NOTEBOOK = "not-a-notebook"      # an upload in the folder not named .ipynb (a PDF, .ipynb.txt)
SYMLINK = "symlink"                  # a symbolic link: never followed
UNKNOWN_SET = "unknown-set"          # its exercise set cannot be told, or is not one of the course's
WRONG_SET = "wrong-set"              # a notebook of another set than the run grades
GRADER_ERROR = "grader-error"        # a fault of the grader's, on this file only
ONLINE_TEXT = "online-text"          # the LMS's page of a student's typed text or URL in a download (Moodle's
                                     # ..._onlinetext/onlinetext.html, Canvas's ..._text.html), not an upload
PROBLEMS = (INVALID, EMPTY, NOT_NOTEBOOK, SYMLINK, UNKNOWN_SET, WRONG_SET, GRADER_ERROR, ONLINE_TEXT)
# Problems that are no failure of the run: files the LMS adds to a download. Each keeps its row, but is not
# among the files that "could not be graded" and does not make the exit status 1.
NOT_UPLOADS = (ONLINE_TEXT,)

# Flags of a graded submission.
TIMEOUT = "timeout"                  # a cell, a question or the whole notebook ran out of time
KERNEL_DIED = "kernel-died"          # the kernel ended (and was restarted)
MEMORY = "memory-limit"
DISK = "disk-limit"                  # a file or the kernel's folder reached its size limit
COURSE_CODE = "course-code"          # an answer is (or only calls) the course's own function
FLAGS = (TIMEOUT, KERNEL_DIED, MEMORY, DISK, COURSE_CODE)


def combined(problem: str | None, flags: list[str]) -> str:
    """The status column: the problem, else the flags joined by "+" (each once, in order), else ``ok``."""
    if problem:
        return problem
    return "+".join(dict.fromkeys(flags)) or OK
