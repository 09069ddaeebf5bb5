"""Gradebooks for a learning management system, from a roster: which submission is whose, and the CSV that
Canvas's or Moodle's grade import reads.

**The roster** (``--roster roster.csv``, UTF-8, a header row): ``student_id``, ``name``, ``email``, and
optionally ``submission`` (the submission's file name, or a pattern such as ``*_12345_*`` or
``Jane Doe_*/*``, matched against its path inside the hand-in folder), and for Canvas ``sis_user_id``,
``sis_login_id``, ``section``. Without ``submission``, a file is a student's when its path holds the
student id as a word of its own: Canvas names each downloaded submission
``name_<Canvas user id>_<submission id>_<file>`` (``name_LATE_<id>_...`` when late) and Moodle puts each
student's files in a folder ``Full Name_<participant id>_assignsubmission_file_``, so a roster of those ids
needs no pattern. Every file is matched once: a student without a submission, a submission without a
student, a file that two students' patterns match, and two notebooks for one student are all reported
(summary, lecturer's report), never dropped: the LMS cell stays empty where the grade is not clear.

**Canvas** (``--lms canvas``): what its gradebook import reads, as Canvas's documentation and the
universities' guides describe it (facts, in our words): the leading columns ``Student``, ``ID``, ``SIS User
ID``, ``SIS Login ID``, ``Section`` identify the student (the export's own columns, which the import
matches), then one column per assignment named ``Assignment name (assignment id)`` (a name without an id
makes a new assignment); a score in the file overwrites one already there; the export's second row,
``Points Possible``, is written too. UTF-8.

**Moodle** (``--lms moodle``): its CSV grade import (grade/import/csv in Moodle's source) identifies each
row's user by one column mapped to the user's id, ID number, email address or username (here ``Email
address``, mapped to the user field "Email address" on the import page) and maps another column to the
grade item (here named after the assignment); a cell that is empty or ``-`` sets no grade (it clears one
already there). ``Roster ID`` is the roster's id, for the lecturer's eyes (Moodle's "ID number" is another
field). Comma-separated, UTF-8.
"""

from __future__ import annotations

import csv
import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from posenc.grader.report import csv_cell, one_line
from posenc.grader.session import Graded, Plan, UsageError
from posenc.grader.submission import NOT_NOTEBOOK

COLUMNS = {"student_id": ("student_id", "student id", "id", "studentid"), "name": ("name", "full name"),
           "email": ("email", "email address", "e-mail"), "submission": ("submission", "file", "pattern"),
           "sis_user_id": ("sis_user_id", "sis user id"), "sis_login_id": ("sis_login_id", "sis login id"),
           "section": ("section",)}
REQUIRED = ("student_id", "name", "email")
LMS = ("canvas", "moodle")


@dataclass
class Student:
    student_id: str
    name: str
    email: str
    submission: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    files: list[Graded] = field(default_factory=list)


def read_roster(path: Path) -> list[Student]:
    """The roster's students, in its order; UsageError with what is wrong (a missing column, an empty or
    repeated id)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--roster {path}: cannot be read ({exc})") from None
    if not rows:
        raise UsageError(f"--roster {path}: empty; it needs a header row: student_id,name,email[,submission]")
    header = [h.strip().lower() for h in rows[0]]
    where = {}
    for key, names in COLUMNS.items():
        found = [i for i, h in enumerate(header) if h in names]
        if found:
            where[key] = found[0]
    missing = [key for key in REQUIRED if key not in where]
    if missing:
        raise UsageError(f"--roster {path}: no column {', '.join(missing)} (its header is {', '.join(rows[0])}); "
                         "it needs student_id,name,email and optionally submission")
    students, seen = [], set()
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        values = {key: (row[i].strip() if i < len(row) else "") for key, i in where.items()}
        if not values["student_id"]:
            raise UsageError(f"--roster {path}, line {number}: no student id")
        if values["student_id"] in seen:
            raise UsageError(f"--roster {path}, line {number}: the student id {values['student_id']} twice")
        seen.add(values["student_id"])
        students.append(Student(**values))
    return students


@dataclass
class Matching:
    students: list[Student]
    strays: list[Graded]                          # submissions no student's pattern or id matches
    ambiguous: list[tuple[Graded, list[Student]]]  # matched by several students

    def problems(self) -> list[str]:
        lines = []
        none = [s for s in self.students if not s.files]
        if none:
            lines.append(f"No submission from {len(none)} student(s): "
                         + ", ".join(f"{s.name} ({s.student_id})" for s in none))
        for s in self.students:
            notebooks = _notebooks(s)
            if len(notebooks) > 1:
                lines.append(f"{len(notebooks)} notebooks from {s.name} ({s.student_id}): "
                             + ", ".join(g.submission.name for g in notebooks)
                             + "; their LMS grade is left empty: choose one")
        if self.strays:
            lines.append(f"{len(self.strays)} submission(s) of no student on the roster: "
                         + ", ".join(g.submission.name for g in self.strays))
        for g, students in self.ambiguous:
            lines.append(f"{g.submission.name} matches several students ("
                         + ", ".join(s.student_id for s in students) + "): given to none")
        return [one_line(line, 4000) for line in lines]


def _notebooks(student: Student) -> list[Graded]:
    """A student's submissions that are notebooks (a PDF next to a notebook is not a second submission)."""
    files = [g for g in student.files if g.submission.problem != NOT_NOTEBOOK]
    return files


def _is_theirs(student: Student, name: str) -> bool:
    if student.submission:
        return fnmatch.fnmatchcase(name, student.submission) or fnmatch.fnmatchcase(name.rsplit("/", 1)[-1],
                                                                                     student.submission)
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(student.student_id)}(?![A-Za-z0-9])", name) is not None


def match(students: list[Student], graded: list[Graded]) -> Matching:
    """Give each submission to the one student it belongs to."""
    for s in students:
        s.files = []
    strays, ambiguous = [], []
    for g in graded:
        owners = [s for s in students if _is_theirs(s, g.submission.name)]
        if len(owners) == 1:
            owners[0].files.append(g)
        elif owners:
            ambiguous.append((g, owners))
        else:
            strays.append(g)
    return Matching(students, strays, ambiguous)


def grade_of(student: Student, plan: Plan | None) -> str:
    """The LMS cell: the points of the one notebook; 0 for a submission that could not be graded (a broken
    file, a PDF only); empty when there is none or more than one (the lecturer decides)."""
    notebooks = _notebooks(student)
    if len(notebooks) > 1 or not student.files:
        return ""
    if not notebooks:                       # only files that are not notebooks
        return "0"
    g = notebooks[0]
    return f"{g.total:g}" if g.submission.gradable and plan else "0"


def write_canvas(path: Path, matching: Matching, plan: Plan | None, assignment: str, assignment_id: str = "") -> None:
    column = f"{assignment} ({assignment_id})" if assignment_id else assignment
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", csv_cell(column)])
        writer.writerow(["    Points Possible", "", "", "", "", f"{plan.max_points:g}" if plan else ""])
        for s in matching.students:
            writer.writerow([csv_cell(v) for v in (s.name, s.student_id, s.sis_user_id, s.sis_login_id, s.section,
                                                   grade_of(s, plan))])


def write_moodle(path: Path, matching: Matching, plan: Plan | None, assignment: str) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Email address", "Roster ID", "Full name", csv_cell(assignment)])
        for s in matching.students:
            writer.writerow([csv_cell(v) for v in (s.email, s.student_id, s.name, grade_of(s, plan))])


def students_by_file(matching: Matching) -> dict[str, Student]:
    return {g.submission.name: s for s in matching.students for g in s.files}
