"""Gradebooks for Canvas and Moodle from a roster of 30 students (issue #24): the hand-ins named as Canvas's
"download submissions" names them, graded once; Moodle's per-student folders matched without a kernel.
Each format is checked against its header rules (see posenc/grader/lms.py)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from posenc.grader.cli import main
from posenc.grader.lms import match, read_roster, write_moodle
from posenc.grader.session import Graded, Plan, UsageError
from posenc.grader.submission import NOT_NOTEBOOK, Submission
from tests.conftest import ROOT
from tests.submissions import require_bwrap

CORPUS = ROOT / "tests" / "submissions"
ANSWERS = {"ch01_correct_alice.ipynb": "12", "ch01_mistakes_carol.ipynb": "4", "ch01_mistakes_erin.ipynb": "2",
           "ch01_partial_frank.ipynb": "5"}
NAMES = ["Ada Lovelace", "Émile Zola", "Grace Hopper", "Alan Turing", "Kurt Gödel", "Emmy Noether", "Ramanujan S",
         "Hypatia A", "Noor Inayat", "Zhang Heng", "Ibn Sina", "Mary Somerville", "Carl Gauss", "Sofia Kovalevskaya",
         "Niels Abel", "Évariste Galois", "Ada Yonath", "Chien-Shiung Wu", "Tu Youyou", "Katherine Johnson",
         "Dorothy Vaughan", "Mary Jackson", "John von Neumann", "Claude Shannon", "Barbara Liskov", "Don Knuth",
         "Edsger Dijkstra", "Frances Allen", "Hedy Lamarr", "Jean Bartik"]


def roster_rows() -> list[dict]:
    return [{"student_id": str(1001 + i), "name": name, "email": f"s{1001 + i}@uni.example",
             "sis_login_id": f"s{1001 + i}", "section": "A" if i % 2 else "B"} for i, name in enumerate(NAMES)]


def canvas_name(name: str, student_id: str, number: int, file: str, late: bool = False) -> str:
    """How Canvas names a downloaded submission: lastfirst[_LATE]_<user id>_<submission id>_<file>."""
    last_first = "".join(reversed(name.lower().split()))
    return f"{last_first}{'_LATE' if late else ''}_{student_id}_{70000 + number}_{file}"


@pytest.fixture(scope="module")
def class_run(tmp_path_factory):
    require_bwrap()
    top = tmp_path_factory.mktemp("lms")
    hand_ins = top / "hand-ins"
    hand_ins.mkdir()
    rows = roster_rows()
    expected = {}
    answers = list(ANSWERS)
    for i, row in enumerate(rows[:26]):                     # 26 students hand in one notebook each
        corpus = answers[i % len(answers)]
        nb = json.loads((CORPUS / corpus).read_text())
        first = next(c for c in nb["cells"] if c["cell_type"] == "code")
        first["source"] = f"student = {i}\n" + "".join(first["source"])      # each their own program
        (hand_ins / canvas_name(row["name"], row["student_id"], i, "ch01_sinusoids.ipynb")).write_text(json.dumps(nb))
        expected[row["student_id"]] = ANSWERS[corpus]
    twice = rows[26]                                         # one hands in twice (the second late)
    for number, late in ((26, False), (126, True)):
        shutil.copy(CORPUS / "ch01_mistakes_carol.ipynb", hand_ins / canvas_name(twice["name"], twice["student_id"],
                                                                                  number, "ch01_sinusoids.ipynb", late))
    pdf_only = rows[27]                                      # one uploads a PDF
    (hand_ins / canvas_name(pdf_only["name"], pdf_only["student_id"], 27, "answers.pdf")).write_bytes(b"%PDF-1.4\n")
    # rows[28] and rows[29] hand in nothing; a stranger hands in a notebook
    shutil.copy(CORPUS / "ch01_mistakes_erin.ipynb", hand_ins / canvas_name("Eve Stranger", "9999", 99, "ch01.ipynb"))
    roster = top / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["student_id", "name", "email", "sis_login_id", "section"])
        writer.writeheader()
        writer.writerows(rows)
    out = top / "grades.csv"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main([str(hand_ins), "--out", str(out), "--roster", str(roster), "--lms", "canvas", "--lms", "moodle",
                       "--assignment", "Sinusoids", "--assignment-id", "4321", "--set", "ch01", "--jobs", "2",
                       "--seed", "3", "--quiet"])
    return dict(top=top, status=status, printed=printed.getvalue(), out=out, rows=rows, expected=expected,
                twice=twice, pdf_only=pdf_only)


def read(path: Path, encoding: str = "utf-8") -> list[list[str]]:
    with open(path, newline="", encoding=encoding) as handle:
        return list(csv.reader(handle))


def test_canvas_gradebook_follows_the_import_s_header_rules(class_run):
    table = read(class_run["out"].with_name("grades.canvas.csv"))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Sinusoids (4321)"]
    assert table[1][0].strip() == "Points Possible" and table[1][5] == "12"
    body = {row[1]: row for row in table[2:]}
    assert list(body) == [r["student_id"] for r in class_run["rows"]]          # every student, roster order
    for row in class_run["rows"]:
        got = body[row["student_id"]]
        assert got[0] == row["name"] and got[3] == row["sis_login_id"] and got[4] == row["section"]
    for student_id, points in class_run["expected"].items():
        assert body[student_id][5] == points, student_id
    assert body[class_run["twice"]["student_id"]][5] == ""           # two notebooks: the lecturer chooses
    assert body[class_run["pdf_only"]["student_id"]][5] == "0"       # a PDF is not a notebook
    assert body["1029"][5] == "" and body["1030"][5] == ""           # no submission: no grade written
    assert "9999" not in body


def test_moodle_gradebook_has_an_identifier_and_a_grade_column(class_run):
    table = read(class_run["out"].with_name("grades.moodle.csv"))
    assert table[0] == ["Email address", "Roster ID", "Full name", "Sinusoids"]
    body = {row[0]: row for row in table[1:]}
    assert len(body) == 30 and body["s1001@uni.example"][3] == class_run["expected"]["1001"]


def test_every_problem_with_the_roster_is_reported_never_dropped(class_run):
    printed, status = class_run["printed"], class_run["status"]
    assert status == 1                                               # the PDF could not be graded
    report = class_run["out"].with_name("grades.lecturer.txt").read_text(encoding="utf-8")
    twice = class_run["twice"]
    for text in (report,):
        assert "No submission from 2 student(s): Hedy Lamarr (1029), Jean Bartik (1030)" in text
        assert f"2 notebooks from {twice['name']} ({twice['student_id']})" in text
        assert "1 submission(s) of no student on the roster: strangereve_9999_70099_ch01.ipynb" in text
    rows = {r["file"]: r for r in csv.DictReader(open(class_run["out"], newline="", encoding="utf-8-sig"))}
    assert rows["strangereve_9999_70099_ch01.ipynb"]["student_id"] == "" and rows["strangereve_9999_70099_ch01.ipynb"]["total"] == "2"
    first = next(name for name in rows if name.startswith("lovelaceada_1001_"))
    assert rows[first]["student_id"] == "1001" and rows[first]["name"] == "Ada Lovelace"
    assert list(rows)[0] == "(maximum)" and list(next(iter(rows.values())))[:3] == ["student_id", "name", "file"]


def test_moodle_s_per_student_folders_are_matched_by_participant_id(tmp_path):
    """Moodle's "Download all submissions": a folder Full Name_<participant id>_assignsubmission_file_ per
    student; a roster pattern can name the file instead."""
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id,name,email,submission\n"
                      "311,Jane Doe,jane@uni.example,\n"
                      "312,Li Wei,li@uni.example,\n"
                      "313,Omar Khan,omar@uni.example,Omar*/*.ipynb\n")
    students = read_roster(roster)
    names = ["Jane Doe_311_assignsubmission_file_/ch05_relative_biases.ipynb",
             "Jane Doe_311_assignsubmission_file_/notes.pdf",
             "Li Wei_312_assignsubmission_file_/ch05.ipynb", "Li Wei_312_assignsubmission_file_/ch05 (1).ipynb",
             "Omar Khan_4312_assignsubmission_file_/mine.ipynb", "Someone_999_assignsubmission_file_/x.ipynb"]
    graded = []
    for name in names:
        sub = Submission(Path(name), name)
        if name.endswith(".pdf"):
            sub.problem = NOT_NOTEBOOK
        graded.append(Graded(sub))
    matching = match(students, graded)
    assert [g.submission.name for g in students[0].files] == names[:2]
    assert len(students[1].files) == 2 and [g.submission.name for g in students[2].files] == [names[4]]
    assert [g.submission.name for g in matching.strays] == [names[5]]
    problems = " ".join(matching.problems())
    assert "2 notebooks from Li Wei (312)" in problems and "Someone_999" in problems
    out = tmp_path / "moodle.csv"
    write_moodle(out, matching, Plan.make("ch05"), "Relative biases")
    table = read(out)
    assert table[0] == ["Email address", "Roster ID", "Full name", "Relative biases"]
    assert [row[3] for row in table[1:]] == ["0", "", "0"]      # not graded here: ungradable rows give 0, two give ""


@pytest.mark.parametrize("text, words", [
    ("id,name\n1,A\n", "no column email"),
    ("student_id,name,email\n1,A,a@x\n1,B,b@x\n", "the student id 1 twice"),
    ("student_id,name,email\n,A,a@x\n", "no student id"),
])
def test_a_bad_roster_stops_before_grading(tmp_path, text, words):
    (tmp_path / "roster.csv").write_text(text)
    with pytest.raises(UsageError, match=words):
        read_roster(tmp_path / "roster.csv")
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv"),
                     "--roster", str(tmp_path / "roster.csv"), "--lms", "canvas", "--no-sandbox"]) == 2
    assert words in err.getvalue() and not (tmp_path / "g.csv").exists()
