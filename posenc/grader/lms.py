"""Rosters and gradebooks for a learning management system: which submission is whose, and the CSV that
Canvas's or Moodle's grade import reads.

**The roster** (``--roster``) is any of three files, as they come (``read_roster`` tells which from the
header):

* **Canvas's gradebook export** (Gradebook, *Export*, *Export Entire Gradebook*): ``Student`` (or
  ``LastName``, ``FirstName``), ``ID`` (the Canvas user id, which names each downloaded file), ``SIS User
  ID``, ``SIS Login ID``, perhaps ``Integration ID`` and ``Root Account``, ``Section``, then one column per
  assignment and the totals. Its ``Points Possible`` row, its ``Manual Posting`` row and Canvas's Test
  Student (``Student, Test``, listed last) are skipped; a name Canvas quoted as ``="..."`` (one that starts
  with "=") is read as the name. Canvas writes it with commas or, as a user's setting, semicolons, and with
  or without a byte-order mark. It has no email address: Canvas's import needs none.
* **Moodle's grading worksheet** (the assignment's *View all submissions*, *Download grading worksheet*;
  the assignment needs the feedback type *Offline grading worksheet*): ``Identifier`` (``Participant N``, N
  the participant id that names each student's download folder), ``Full name`` (absent under blind
  marking), the identity fields the site shows (``Email address`` by default), ``Status``, ``Grade``... Two
  students of one name stay apart by their participant ids.
* **The course's own roster**: ``student_id`` (the Canvas user id or Moodle participant id, or an id of
  your own with a ``submission`` pattern), ``name``, and optionally ``email``, ``submission`` (a file name
  or pattern such as ``*_12345_*`` or ``Jane Doe_*/*``, matched against the path inside the hand-in
  folder), ``sis_user_id``, ``sis_login_id``, ``section``.

A roster is UTF-8 (with or without a byte-order mark) or UTF-16 with one (Excel's *Unicode Text*), comma-,
semicolon- or tab-separated (the separator whose header is a roster's; European Excel writes semicolons).
A file in another encoding (Excel's *CSV (Comma delimited)* saves the Windows code page) is refused with
how to save it as UTF-8: which code page it is cannot be told from the bytes.

**Whose file is which** (``match``), on the LMS's own evidence first (``posenc.grader.downloads``): a file
in a student's Moodle folder, or named by Canvas with a user id, is that student's when the id is on the
roster, whatever the student called the file; a ``submission`` pattern counts for such a file only where
it matches what the LMS wrote (the folder, the Canvas prefix), never through the student's own file name.
A file the LMS did not name is matched by the roster's patterns, else by a roster id that stands in its
path as a word of its own. Every file is matched once or reported: a student without a submission, a
submission of no student on the roster, a file two students' patterns match, a pattern that names the
uploads of several submitters or a file the LMS says is another's, two notebooks of one student. The LMS
cell of a student whose grade is not clear stays empty.

**The grade** (``grade_of``): the points of the one notebook; for a hand-in that could not be graded (a PDF,
a broken notebook, another set's, online text only) the lecturer's ``--ungraded-as`` (empty, the default,
or 0), the same as in ``grades.csv``; empty when there is no submission or more than one notebook.

**Canvas** (``--lms canvas``): what its gradebook import reads (Canvas's GradebookImporter): a header whose
first cell holds ``Student`` and second ``ID``, the student columns up to ``Section``, then one column per
assignment named ``Assignment name (assignment id)`` (a name without an id makes a new assignment); a row
whose first cell holds ``Points Possible`` describes the assignments. Each row's student is found by the
Canvas user id, else the SIS ids, else the name. A score in the file overwrites one already there.
UTF-8 with a byte-order mark, which the import reads past (Canvas's own export writes one as a user's
setting) and without which Excel shows "MÃ¼ller".

**Moodle** (``--lms moodle``): its CSV grade import (grade/import/csv) identifies each row's user by one
column mapped to the user's id, ID number, email address or username (here ``Email address``, mapped to
the user field "Email address" on the import page) and maps another column to the grade item (here named
after the assignment); a cell that is empty or ``-`` sets no grade (it clears one already there). Importing
into an assignment's grade item marks each grade overridden in the gradebook: grades given in the
assignment later no longer reach it. ``Roster ID`` is the roster's id, for the lecturer's eyes. UTF-8 with a
byte-order mark (Moodle's CSV reader removes it).
"""

from __future__ import annotations

import codecs
import csv
import fnmatch
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from posenc.grader.downloads import CANVAS, MOODLE, Submitter, submitter_of
from posenc.grader.report import csv_cell, one_line, ungraded_cell
from posenc.grader.session import Graded, Plan, UsageError
from posenc.grader.status import NOT_NOTEBOOK, ONLINE_TEXT

LMS = ("canvas", "moodle")
UNGRADED_AS = ("empty", "0")        # --ungraded-as: the grade of a hand-in that could not be graded
MAX_ROSTER_BYTES = 20 * 2**20

# The course's own roster: its columns and the spellings accepted for each.
COLUMNS = {"student_id": ("student_id", "student id", "id", "studentid"), "name": ("name", "full name"),
           "email": ("email", "email address", "e-mail"), "submission": ("submission", "file", "pattern"),
           "sis_user_id": ("sis_user_id", "sis user id"), "sis_login_id": ("sis_login_id", "sis login id"),
           "section": ("section",)}
# Moodle's grading worksheet, in English and in the languages whose packs we checked.
MOODLE_IDENTIFIER = ("identifier", "identifiant", "identificador", "id")
MOODLE_FULL_NAME = ("full name", "nom complet", "nombre completo", "nome completo", "vollständiger name")
MOODLE_EMAIL = ("email address", "adresse de courriel", "e-mail-adresse", "dirección de correo",
                "indirizzo email")
PARTICIPANT = re.compile(r"\D*\s(\d+)")           # "Participant 311", "Teilnehmer/in 311"
CANVAS_SKIPPED = re.compile(r"\s*(Muted|Manual Posting.*)?\s*", re.IGNORECASE)
CANVAS_TEST_STUDENT = ("Student, Test", "Test Student")      # as Student, and as LastName, FirstName
HOW_TO_SAVE = ("save it as UTF-8: in Excel, File > Save As > 'CSV UTF-8 (Comma delimited) (*.csv)'; in "
               "LibreOffice, Save As > Text CSV > Character set 'Unicode (UTF-8)'; or give the LMS's export "
               "as it was downloaded, without saving it from a spreadsheet")
FORMATS = ("our roster (student_id, name[, email, submission]), Canvas's gradebook export (Student, ID, ..., "
           "Section) or Moodle's grading worksheet (Identifier, Full name, ...)")


@dataclass
class Student:
    student_id: str
    name: str
    email: str = ""
    submission: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    files: list[Graded] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.student_id})"


@dataclass
class Roster:
    students: list[Student]
    source: str            # what the file was read as, for the summary
    kind: str = "own"      # "own", CANVAS or MOODLE: whose file it is
    maxima: dict[str, float] = field(default_factory=dict)   # an assignment's maximum as the LMS states it


MOODLE_MAXIMUM = ("maximum grade", "note maximale", "calificación máxima", "bewertung maximal", "voto massimo")


# ---------------------------------------------------------------------------------------------------
# Reading a roster


def read_roster(path: Path) -> Roster:
    """The roster's students, in its order; UsageError with what is wrong and how to fix it (an encoding
    that is not UTF-8, a header that is no roster's, an empty or repeated id)."""
    text = _roster_text(path)
    rows, separator = _split(path, text)
    header = [cell.strip() for cell in rows[0]]
    lower = [cell.lower() for cell in header]
    kind, maxima = "own", {}
    if lower and (lower[0] == "student" or lower[:2] == ["lastname", "firstname"]) and "id" in lower:
        students, what = _canvas_students(path, header, rows[1:]), "Canvas's gradebook export"
        kind, maxima = CANVAS, _canvas_maxima(header, rows[1:])
    elif _moodle_identifier(lower, rows[1:]) is not None:
        students, what = _moodle_students(path, lower, rows[1:]), "Moodle's grading worksheet"
        kind, maxima = MOODLE, _moodle_maxima(lower, rows[1:])
    else:
        students, what = _own_students(path, lower, rows[1:]), "a roster"
    seen: dict[str, int] = {}
    for number, student in students:
        if not student.student_id:
            raise UsageError(f"--roster {path}, line {number}: no student id")
        if student.student_id in seen:
            raise UsageError(f"--roster {path}, line {number}: the student id {student.student_id} twice "
                             f"(also on line {seen[student.student_id]})")
        seen[student.student_id] = number
    how = {",": "", ";": ", semicolon-separated", "\t": ", tab-separated"}[separator]
    return Roster([s for _, s in students], f"{what} {path.name} ({len(students)} students{how})", kind, maxima)


def _number(cell: str) -> float | None:
    try:
        return float(cell.strip().replace(",", "."))        # "12.00", or "12,00" from a German export
    except ValueError:
        return None


def _canvas_maxima(header: list[str], rows: list[list[str]]) -> dict[str, float]:
    """Each assignment column's "Points Possible", as Canvas's export states it."""
    row = next((r for r in rows if "Points Possible" in _cell(r, 0)), [])
    return {header[i]: value for i in range(5, min(len(header), len(row)))
            if (value := _number(row[i])) is not None}


def _moodle_maxima(lower: list[str], rows: list[list[str]]) -> dict[str, float]:
    """The worksheet's "Maximum grade" (the same on every row: the assignment's)."""
    column = _column(lower, MOODLE_MAXIMUM)
    values = [v for row in rows if (v := _number(_cell(row, column))) is not None] if column is not None else []
    return {"Maximum grade": values[0]} if values else {}


def check_roster_kind(roster: Roster, lms: tuple[str, ...]) -> None:
    """A Canvas export cannot key a Moodle import, nor a Moodle worksheet a Canvas one."""
    for name in lms:
        if roster.kind not in ("own", name):
            other = "Canvas's gradebook export" if roster.kind == CANVAS else "Moodle's grading worksheet"
            raise UsageError(f"--lms {name}: the roster is {other}, whose ids "
                             f"{name.capitalize()} does not know; give --lms {roster.kind}, or the roster of "
                             f"{name.capitalize()} ({'its gradebook export' if name == CANVAS else 'its grading worksheet'})")


def maximum_problem(roster: Roster, plan: Plan | None, assignment: str, assignment_id: str = "") -> str:
    """A line when the LMS's maximum for this assignment (Canvas's Points Possible, Moodle's Maximum grade)
    is not the set's total, private checks included; "" when they agree or the roster states none."""
    if plan is None or not roster.maxima:
        return ""
    if roster.kind == MOODLE:
        column, stated = next(iter(roster.maxima.items()))
    else:
        found = [(c, v) for c, v in roster.maxima.items()
                 if c == assignment or re.sub(r"\s*\(\d+\)$", "", c) == assignment
                 or (assignment_id and c.endswith(f"({assignment_id})"))]
        if len(found) != 1:
            return ""
        column, stated = found[0]
    if stated == plan.max_points:
        return ""
    private = sum(q.points for q in plan.questions if getattr(q, "private", False))
    counted = f" ({plan.max_points - private:g} of the course's questions + {private:g} of your private checks)" \
        if private else ""
    return (f"the LMS's maximum for {column!r} is {stated:g}, but the set's total is {plan.max_points:g}{counted}: "
            f"set the assignment's maximum to {plan.max_points:g} before importing, or the LMS scales or caps "
            "the grades")


def _roster_text(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_ROSTER_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--roster {path}: cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_ROSTER_BYTES:
        raise UsageError(f"--roster {path}: over {MAX_ROSTER_BYTES // 2**20} MB: is it the right file?")
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return raw.decode("utf-16")
        except UnicodeDecodeError:
            raise UsageError(f"--roster {path}: starts as UTF-16 text but is not; {HOW_TO_SAVE}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        start = raw.rfind(b"\n", 0, exc.start) + 1
        end = raw.find(b"\n", exc.start)
        shown = raw[start:end if end >= 0 else len(raw)][:80].decode("utf-8", "backslashreplace").strip()
        raise UsageError(f"--roster {path} is not UTF-8 text (line {line}: {shown!r}): it was saved in another "
                         "encoding, as Excel's 'CSV (Comma delimited)' does on Windows; " + HOW_TO_SAVE) from None


def _split(path: Path, text: str) -> tuple[list[list[str]], str]:
    """The rows, split at the separator under which the first line is a roster's header."""
    lines = text.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines:
        raise UsageError(f"--roster {path}: empty; it needs a header row: " + FORMATS)
    hint = re.fullmatch(r"sep=(.)", lines[0].rstrip("\r\n"), re.IGNORECASE)    # Excel's hint of the separator
    if hint:
        separator, body = hint.group(1), "\n".join(lines[1:])
    else:
        fits = [s for s in (",", ";", "\t") if _is_header(next(csv.reader([lines[0]], delimiter=s)))]
        if not fits:
            widest = max((",", ";", "\t"), key=lambda s: len(next(csv.reader([lines[0]], delimiter=s))))
            columns = [c.strip() for c in next(csv.reader([lines[0]], delimiter=widest))]
            raise UsageError(f"--roster {path}: its header ({', '.join(columns)[:300]}) is none of {FORMATS}")
        separator, body = fits[0], "\n".join(lines)
    rows = [row for row in csv.reader(io.StringIO(body), delimiter=separator) if any(cell.strip() for cell in row)]
    return rows, separator


def _is_header(row: list[str]) -> bool:
    names = {cell.strip().lower() for cell in row}
    own = any(n in names for n in COLUMNS["student_id"]) and any(n in names for n in COLUMNS["name"])
    canvas = bool(row) and row[0].strip().lower() in ("student", "lastname") and "id" in names
    return own or canvas or any(n in names for n in MOODLE_IDENTIFIER)


def _cell(row: list[str], index: int | None) -> str:
    return row[index].strip() if index is not None and index < len(row) else ""


def _column(header: list[str], names: tuple[str, ...]) -> int | None:
    return next((i for i, h in enumerate(header) if h in names), None)


def _canvas_students(path: Path, header: list[str], rows: list[list[str]]) -> list[tuple[int, Student]]:
    lower = [h.lower() for h in header]
    split_name = lower[:2] == ["lastname", "firstname"]
    where = {key: lower.index(name) for key, name in (("student_id", "id"), ("sis_user_id", "sis user id"),
                                                        ("sis_login_id", "sis login id"), ("section", "section"))
             if name in lower}
    students = []
    for number, row in enumerate(rows, start=2):
        first = _cell(row, 0)
        if "Points Possible" in first or all(CANVAS_SKIPPED.fullmatch(cell) for cell in row):
            continue
        name = f"{_cell(row, 1)} {first}".strip() if split_name else _canvas_name(first)
        values = {key: _cell(row, index) for key, index in where.items()}
        if name in CANVAS_TEST_STUDENT and not values.get("sis_user_id") and not values.get("sis_login_id"):
            continue                      # Canvas's Test Student (Student View), listed last
        students.append((number, Student(name=name, **values)))
    return students


def _canvas_name(cell: str) -> str:
    """A name as Canvas's export wrote it: one starting with "=" comes as ="...", so Excel shows it as text."""
    found = re.fullmatch(r'="(.*)"', cell)
    return found.group(1) if found else cell


def _moodle_identifier(lower: list[str], rows: list[list[str]]) -> int | None:
    """The column of Moodle's ``Participant N`` identifiers, if this is a grading worksheet."""
    for index, name in enumerate(lower):
        values = [_cell(row, index) for row in rows if _cell(row, index)]
        if name in MOODLE_IDENTIFIER and values and all(PARTICIPANT.fullmatch(v) for v in values):
            return index
    return None


def _moodle_students(path: Path, lower: list[str], rows: list[list[str]]) -> list[tuple[int, Student]]:
    identifier = _moodle_identifier(lower, rows)
    name, email = _column(lower, MOODLE_FULL_NAME), _column(lower, MOODLE_EMAIL)
    students = []
    for number, row in enumerate(rows, start=2):
        found = PARTICIPANT.fullmatch(_cell(row, identifier))
        students.append((number, Student(student_id=found.group(1) if found else "",
                                         name=_cell(row, name) or _cell(row, identifier), email=_cell(row, email))))
    return students


def _own_students(path: Path, lower: list[str], rows: list[list[str]]) -> list[tuple[int, Student]]:
    where = {key: _column(lower, names) for key, names in COLUMNS.items()}
    missing = [key for key in ("student_id", "name") if where[key] is None]
    if missing:
        raise UsageError(f"--roster {path}: no column {', '.join(missing)} (its header is {', '.join(lower)}); "
                         "it needs " + FORMATS)
    return [(number, Student(**{key: _cell(row, index) for key, index in where.items() if index is not None}))
            for number, row in enumerate(rows, start=2)]


def require_emails(roster: Roster) -> None:
    """Moodle's grade import finds each student by email address: every student needs one."""
    missing = [s.label for s in roster.students if not s.email]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise UsageError(f"--lms moodle: Moodle's grade import finds each student by email address, and the roster "
                         f"({roster.source}) has none for {shown}: give Moodle's grading worksheet with the "
                         "email address shown, or a roster with an email column")


# ---------------------------------------------------------------------------------------------------
# Whose file is which


@dataclass
class Matching:
    students: list[Student]
    strays: list[Graded]                          # submissions of no student on the roster
    ambiguous: list[tuple[Graded, list[Student]]]  # claimed by several students: given to none
    conflicts: list[str] = field(default_factory=list)   # evidence that disagreed, and what was done

    def problems(self) -> list[str]:
        lines = []
        none = [s for s in self.students if not s.files]
        if none:
            lines.append(f"No submission from {len(none)} student(s): " + ", ".join(s.label for s in none))
        other = [s for s in self.students if s.files and not _notebooks(s)]
        if other:
            lines.append(f"No notebook from {len(other)} student(s), only a file that is not one (a PDF, online "
                         "text): " + ", ".join(f"{s.label}: {_names(s.files)}" for s in other)
                         + "; their LMS grade follows --ungraded-as")
        for s in self.students:
            notebooks = _notebooks(s)
            if len(notebooks) > 1:
                lines.append(f"{len(notebooks)} notebooks from {s.label}: "
                             + ", ".join(g.submission.name for g in notebooks)
                             + "; their LMS grade is left empty: choose one")
        if self.strays:
            ids = sorted({sub.label for g in self.strays if (sub := submitter_of(g.submission.name))})
            lines.append(f"{len(self.strays)} submission(s) of no student on the roster: "
                         + ", ".join(g.submission.name for g in self.strays)
                         + (f" (handed in by {', '.join(ids)}, whose ids the roster does not have)" if ids else ""))
        for g, students in self.ambiguous:
            lines.append(f"{g.submission.name} is claimed by several students ("
                         + ", ".join(s.student_id for s in students) + "): given to none")
        lines += self.conflicts
        return [one_line(line, 4000) for line in lines]


def _notebooks(student: Student) -> list[Graded]:
    """A student's submissions that are notebooks (a PDF or online text next to a notebook is not a second
    submission)."""
    return [g for g in student.files if g.submission.problem not in (NOT_NOTEBOOK, ONLINE_TEXT)]


def _pattern_matches(pattern: str, name: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(name.rsplit("/", 1)[-1], pattern)


def _lms_part(name: str, submitter: Submitter) -> str:
    """``name`` with the student's own part replaced by a neutral one of the same extension: what a pattern
    must match to name the submitter rather than the student's choice of file name."""
    own = submitter.rest
    extension = own[own.rfind("."):] if "." in own.rsplit("/", 1)[-1] else ""
    return name[:len(name) - len(own)] + "\0" + extension


def _id_in(student: Student, name: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(student.student_id)}(?![A-Za-z0-9])", name) is not None


def match(students: list[Student], graded: list[Graded]) -> Matching:
    """Give each submission to the one student it belongs to, on the LMS's evidence first (see the module's
    docstring); everything not clear is reported."""
    for s in students:
        s.files = []
    by_id = {s.student_id: s for s in students}
    patterned = [s for s in students if s.submission]
    matching = Matching(students, [], [])
    groups: dict[tuple, list[Graded]] = {}        # the files of one submitter (or one file the LMS did not name)
    for g in graded:
        submitter = submitter_of(g.submission.name)
        groups.setdefault(submitter.key if submitter else ("file", g.submission.name), []).append(g)
    # What each pattern names: files the LMS did not name, and submitters through what the LMS wrote (one
    # pattern may name one submitter: two Jane Does match "Jane Doe_*/*").
    named: dict[str, set] = {s.student_id: set() for s in patterned}
    for key, files in groups.items():
        for g in files:
            submitter = submitter_of(g.submission.name)
            for s in patterned:
                if _pattern_matches(s.submission, _lms_part(g.submission.name, submitter) if submitter
                                    else g.submission.name):
                    named[s.student_id].add(key)
    for s in patterned:
        submitters = [key for key in named[s.student_id] if key[0] != "file"]
        if len(submitters) > 1:
            matching.conflicts.append(
                f"the submission pattern {s.submission!r} of {s.label} names the uploads of {len(submitters)} "
                "submitters: given to none of them by it; make it name one")
    for key, files in groups.items():
        _assign(key, files, by_id, patterned, named, matching)
    return matching


def _assign(key: tuple, files: list[Graded], by_id: dict[str, Student], patterned: list[Student],
            named: dict[str, set], matching: Matching) -> None:
    """The owner of one submitter's files (or of one file the LMS did not name)."""
    submitter = submitter_of(files[0].submission.name) if key[0] != "file" else None
    owner = by_id.get(submitter.lms_id) if submitter else None
    if submitter is not None and submitter.other_ids:      # "stonebob_2001_2099_81234_ch01.ipynb"
        on_roster = [by_id[i] for i in dict.fromkeys(submitter.candidate_ids) if i in by_id]
        if len(on_roster) > 1:
            matching.ambiguous += [(g, on_roster) for g in files]
            return
        owner = on_roster[0] if on_roster else None
    claims = [s for s in patterned if key in named[s.student_id]
              and (key[0] == "file" or sum(k[0] != "file" for k in named[s.student_id]) == 1)]
    if owner is not None:
        for s in claims:
            if s is not owner:
                matching.conflicts.append(f"{_names(files)}: the submission pattern of {s.label} matches, but "
                                          f"{submitter.label} handed it in: given to {owner.label}")
    elif len(claims) == 1:
        owner = claims[0]
    elif len(claims) > 1:
        matching.ambiguous += [(g, claims) for g in files]
        return
    for g in files:
        if owner is None and submitter is None:
            word = [s for s in by_id.values() if not s.submission and _id_in(s, g.submission.name)]
            if len(word) > 1:
                matching.ambiguous.append((g, word))
                continue
            target = word[0] if word else None
        else:
            target = owner
        _by_own_name(g, target, submitter, patterned, matching)
        if target is None:
            matching.strays.append(g)
        else:
            target.files.append(g)


def _by_own_name(g: Graded, target: Student | None, submitter: Submitter | None, patterned: list[Student],
                 matching: Matching) -> None:
    """Report a pattern that matches a file only through the name the student gave it."""
    if submitter is None:
        return
    for s in patterned:
        if s is not target and _pattern_matches(s.submission, g.submission.name) and \
                not _pattern_matches(s.submission, _lms_part(g.submission.name, submitter)):
            whose = f"given to {target.label}" if target else "given to none"
            matching.conflicts.append(f"{g.submission.name}: its file name matches the submission pattern of "
                                      f"{s.label}, but {submitter.label} handed it in: {whose} (a pattern "
                                      "counts only where it names the LMS's folder or prefix)")


def _names(files: list[Graded]) -> str:
    return ", ".join(g.submission.name for g in files)


# ---------------------------------------------------------------------------------------------------
# The grade and the LMS files


def grade_of(student: Student, plan: Plan | None, ungraded_as: str = "empty") -> str:
    """The LMS cell: the points of the one notebook; the --ungraded-as rule for a hand-in that could not be
    graded (a broken notebook, another set's, only a PDF or online text); empty when there is no submission
    or more than one notebook (the lecturer decides)."""
    notebooks = _notebooks(student)
    if len(notebooks) > 1 or not student.files:
        return ""
    if not notebooks:                       # only files that are not notebooks
        return ungraded_cell(student.files[0], ungraded_as)
    g = notebooks[0]
    return f"{g.total:g}" if g.submission.gradable and plan else ungraded_cell(g, ungraded_as)


def _writer(path: Path):
    """A CSV file for an LMS's import: UTF-8 with a byte-order mark (both imports read past it; Excel needs
    it to show "Müller")."""
    return open(path, "w", newline="", encoding="utf-8-sig")


def write_canvas(path: Path, matching: Matching, plan: Plan | None, assignment: str, assignment_id: str = "",
                 ungraded_as: str = "empty") -> None:
    column = f"{assignment} ({assignment_id})" if assignment_id else assignment
    with _writer(path) as handle:
        writer = csv.writer(handle)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", csv_cell(column)])
        writer.writerow(["    Points Possible", "", "", "", "", f"{plan.max_points:g}" if plan else ""])
        for s in matching.students:
            writer.writerow([csv_cell(v) for v in (s.name, s.student_id, s.sis_user_id, s.sis_login_id, s.section,
                                                   grade_of(s, plan, ungraded_as))])


def write_moodle(path: Path, matching: Matching, plan: Plan | None, assignment: str,
                 ungraded_as: str = "empty") -> None:
    with _writer(path) as handle:
        writer = csv.writer(handle)
        writer.writerow(["Email address", "Roster ID", "Full name", csv_cell(assignment)])
        for s in matching.students:
            writer.writerow([csv_cell(v) for v in (s.email, s.student_id, s.name, grade_of(s, plan, ungraded_as))])


def students_by_file(matching: Matching) -> dict[str, Student]:
    return {g.submission.name: s for s in matching.students for g in s.files}
