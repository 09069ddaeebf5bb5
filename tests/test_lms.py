"""Canvas and Moodle (issues #24 and #32): rosters straight from the LMS, whose file is which, and the files
the LMS imports.

Two classes are graded once each, inside bubblewrap: 30 students of a Canvas course, their hand-ins named
as Canvas's *Download Submissions* names them and Canvas's *Export Entire Gradebook* as the roster, as it
comes; and 14 students of a Moodle course, in the folders of Moodle's *Download all submissions* (with
its online text pages), with Moodle's *Download grading worksheet* as the roster. The rest runs no kernel:
each roster format, encoding and separator, the matching's attacks, the rule for hand-ins that could not
be graded, and the feedback names each LMS's feedback upload reads back (as its source code parses them).
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from posenc.grader.cli import main
from posenc.grader.lms import grade_of, match, read_roster, write_canvas, write_moodle
from posenc.grader.report import csv_row, feedback_names
from posenc.grader.session import Graded, Plan, UsageError
from posenc.grader.status import INVALID, NOT_NOTEBOOK, ONLINE_TEXT
from posenc.grader.submission import Submission
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
ASSIGNMENT = "Sinusoids (4321)"


def roster_rows() -> list[dict]:
    return [{"student_id": str(1001 + i), "name": name, "email": f"s{1001 + i}@uni.example",
             "sis_login_id": f"s{1001 + i}", "section": "A" if i % 2 else "B"} for i, name in enumerate(NAMES)]


def sortable(name: str) -> str:
    first, _, last = name.rpartition(" ")
    return f"{last}, {first}" if first else name


def canvas_name(name: str, student_id: str, number: int, file: str, late: bool = False) -> str:
    """How Canvas names a downloaded submission: the sortable name with all but letters, digits and "_"
    removed, "_late" when late, the user id and the file id, all in lower case, then the student's file."""
    who = re.sub(r"\W", "", sortable(name)).lower()
    return f"{who}{'_late' if late else ''}_{student_id}_{70000 + number}_{file}"


def canvas_export(rows: list[dict], separator: str = ",", bom: bool = False) -> str:
    """Canvas's Export Entire Gradebook, as it comes: the student columns, two assignments and the totals, the
    Points Possible row, the Manual Posting row of an assignment posted by hand, the Test Student last."""
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ASSIGNMENT, "Relative biases (4322)",
              "Current Points", "Final Points", "Current Score", "Unposted Current Score", "Final Score",
              "Unposted Final Score"]
    table = [header, ["", "", "", "", "", "Manual Posting", "", "", "", "", "", "", ""],
             ["    Points Possible", "", "", "", "", "12.00", "10.00", *["(read only)"] * 6]]
    for row in rows:
        table.append([row.get("canvas_name") or sortable(row["name"]), row["student_id"], f"U{row['student_id']}",
                      row["sis_login_id"], f"Section {row['section']}", "", "N/A", "0.00", "0.00", "", "", "0.00", ""])
    table.append(["Student, Test", "4242", "", "", "Section B", "", "", "0.00", "0.00", "", "", "0.00", ""])
    out = io.StringIO()
    csv.writer(out, delimiter=separator, lineterminator="\n").writerows(table)
    return ("\ufeff" if bom else "") + out.getvalue()


def moodle_worksheet(rows: list[dict], blind: bool = False) -> str:
    """Moodle's Download grading worksheet, as it comes (English, the email shown as the identity field; under
    blind marking no name and no email), with the byte-order mark Moodle's CSV writer puts first."""
    header = ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum grade",
              "Grade can be changed", "Last modified (submission)", "Online text", "Last modified (grade)",
              "Feedback comments"]
    table = [header] + [[f"Participant {row['student_id']}", row["name"], row["email"], "Submitted for grading", "",
                         "12.00", "Yes", "Monday, 3 June 2024, 10:15 AM", "", "-", ""] for row in rows]
    if blind:
        table = [row[:1] + row[3:] for row in table]
    out = io.StringIO()
    csv.writer(out).writerows(table)
    return "\ufeff" + out.getvalue()


def moodle_folder(name: str, participant: str, plugin: str = "file", old: bool = False) -> str:
    """A student's folder in Moodle's Download all submissions (up to Moodle 4.0 with a trailing "_")."""
    return f"{name.replace('_', ' ')}_{participant}_assignsubmission_{plugin}{'_' if old else ''}"


def notebook_of(corpus: str, tag: str) -> str:
    """A corpus notebook made a program of its own (a statement of its own, so nobody's copy)."""
    nb = json.loads((CORPUS / corpus).read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "code")
    first["source"] = f"student = {tag!r}\n" + "".join(first["source"])
    return json.dumps(nb)


def read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return list(csv.reader(handle))


def run(args: list[str]) -> tuple[int, str]:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = main(args)
    return status, printed.getvalue()


# ---------------------------------------------------------------------------------------------------
# A Canvas class


@pytest.fixture(scope="module")
def class_run(tmp_path_factory):
    require_bwrap()
    top = tmp_path_factory.mktemp("lms")
    hand_ins = top / "hand-ins"
    hand_ins.mkdir()
    rows = roster_rows()
    rows[3]["canvas_name"] = '="=Turing, Alan"'                # Canvas quotes a name that starts with =
    expected = {}
    answers = list(ANSWERS)
    for i, row in enumerate(rows[:26]):                     # 26 students hand in one notebook each
        corpus = answers[i % len(answers)]
        (hand_ins / canvas_name(row["name"], row["student_id"], i, "ch01_sinusoids.ipynb")).write_text(
            notebook_of(corpus, str(i)))
        expected[row["student_id"]] = ANSWERS[corpus]
    twice = rows[26]                                         # one hands in twice (the second late)
    for number, late in ((26, False), (126, True)):
        shutil.copy(CORPUS / "ch01_mistakes_carol.ipynb", hand_ins / canvas_name(twice["name"], twice["student_id"],
                                                                                  number, "ch01_sinusoids.ipynb", late))
    pdf_only = rows[27]                                      # one uploads a PDF
    (hand_ins / canvas_name(pdf_only["name"], pdf_only["student_id"], 27, "answers.pdf")).write_bytes(b"%PDF-1.4\n")
    # rows[28] and rows[29] hand in nothing; a stranger hands in a notebook whose name holds Ada's id
    shutil.copy(CORPUS / "ch01_mistakes_erin.ipynb",
                hand_ins / canvas_name("Eve Stranger", "9999", 99, "ch01_1001.ipynb"))
    roster = top / "canvas-export.csv"
    roster.write_text(canvas_export(rows), encoding="utf-8")
    out = top / "grades.csv"
    status, printed = run([str(hand_ins), "--out", str(out), "--roster", str(roster), "--lms", "canvas",
                           "--assignment", "Sinusoids", "--assignment-id", "4321", "--set", "ch01",
                           "--jobs", "2", "--seed", "3", "--ungraded-as", "0", "--feedback-dir", str(top / "feedback")])
    return dict(top=top, status=status, printed=printed, out=out, rows=rows, expected=expected, twice=twice,
                pdf_only=pdf_only, hand_ins=hand_ins)


def test_canvas_gradebook_follows_the_import_s_header_rules(class_run):
    raw = class_run["out"].with_name("grades.canvas.csv").read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)                      # Excel shows "Gödel", not "GÃ¶del"
    table = read(class_run["out"].with_name("grades.canvas.csv"))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Sinusoids (4321)"]
    assert table[1][0].strip() == "Points Possible" and table[1][5] == "12"
    body = {row[1]: row for row in table[2:]}
    assert list(body) == [r["student_id"] for r in class_run["rows"]]          # every student, roster order
    for row in class_run["rows"]:                               # Canvas's own columns, from its export
        got = body[row["student_id"]]
        assert got[2] == f"U{row['student_id']}" and got[3] == row["sis_login_id"]
        assert got[4] == f"Section {row['section']}"
    assert body["1001"][0] == "Lovelace, Ada" and body["1004"][0] == "'=Turing, Alan"
    for student_id, points in class_run["expected"].items():
        assert body[student_id][5] == points, student_id
    assert body[class_run["twice"]["student_id"]][5] == ""           # two notebooks: the lecturer chooses
    assert body[class_run["pdf_only"]["student_id"]][5] == "0"       # --ungraded-as 0
    assert body["1029"][5] == "" and body["1030"][5] == ""           # no submission: no grade written
    assert "9999" not in body and "4242" not in body                 # the stranger, Canvas's Test Student


def test_the_rule_for_an_ungraded_hand_in_is_the_same_in_every_file(class_run):
    rows = {r["file"]: r for r in csv.DictReader(open(class_run["out"], newline="", encoding="utf-8-sig"))}
    pdf = next(name for name in rows if name.startswith("allenfrances_1028_"))
    assert rows[pdf]["status"] == "not-a-notebook" and rows[pdf]["total"] == "0"
    canvas = {row[1]: row for row in read(class_run["out"].with_name("grades.canvas.csv"))[2:]}
    assert canvas["1028"][5] == "0"


def test_every_problem_with_the_roster_is_reported_never_dropped(class_run):
    printed, status = class_run["printed"], class_run["status"]
    assert status == 1                                               # the PDF could not be graded
    report = class_run["out"].with_name("grades.lecturer.txt").read_text(encoding="utf-8")
    twice = class_run["twice"]
    assert "Roster: Canvas's gradebook export canvas-export.csv (30 students)" in printed
    assert "Note:" not in printed and "Note:" not in report
    stranger = "strangereve_9999_70099_ch01_1001.ipynb"
    for text in (report, printed):
        assert "No submission from 2 student(s): Lamarr, Hedy (1029), Bartik, Jean (1030)" in text
        assert f"2 notebooks from {sortable(twice['name'])} ({twice['student_id']})" in text
        assert "No notebook from 1 student(s), only a file that is not one (a PDF, online text): Allen, Frances " \
               "(1028): allenfrances_1028_70027_answers.pdf" in text
        assert f"1 submission(s) of no student on the roster: {stranger} (handed in by Canvas user 9999" in text
    rows = {r["file"]: r for r in csv.DictReader(open(class_run["out"], newline="", encoding="utf-8-sig"))}
    assert rows[stranger]["student_id"] == "" and rows[stranger]["total"] == "2"
    first = next(name for name in rows if name.startswith("lovelaceada_1001_"))
    assert rows[first]["student_id"] == "1001" and rows[first]["name"] == "Lovelace, Ada"
    assert rows[first]["total"] == class_run["expected"]["1001"]     # the stranger's file did not touch hers
    assert list(rows)[0] == "(maximum)" and list(next(iter(rows.values())))[:3] == ["student_id", "name", "file"]


def canvas_ids(name: str) -> list[str]:
    """What Canvas's Re-Upload Submissions reads in a name: its first two all-digit parts (split at "_"), the
    user id and the id of a file of that user's submission."""
    return [word for word in name.split("_") if word.isdigit()][:2]


def test_canvas_s_re_upload_gives_each_feedback_file_back_to_its_student(class_run):
    downloads = {tuple(canvas_ids(p.name)) for p in class_run["hand_ins"].iterdir()}
    feedback = list((class_run["top"] / "feedback").iterdir())
    assert len(feedback) == len(downloads) and {tuple(canvas_ids(p.name)) for p in feedback} == downloads


# ---------------------------------------------------------------------------------------------------
# A Moodle class


MOODLE_CLASS = [("Jane Doe", "311"), ("Jane Doe", "318"), ("Li Wei", "312"), ("Omar Khan", "313"),
                ("Zoë Müller", "314"), ("Bob Stone", "315"), ("Ann O_Neill", "316"), ("Kim Park", "317"),
                ("Raj Patel", "319"), ("Eva Berg", "320"), ("Tom Hill", "321"), ("Sam Reed", "322"),
                ("Lea Roth", "323"), ("Max Vogel", "324")]


@pytest.fixture(scope="module")
def moodle_run(tmp_path_factory):
    """Moodle's folders: most students also typed something as online text; the two Jane Does hand in
    different work; Bob puts a notebook he named after Omar's in his own folder; Omar hands in nothing."""
    require_bwrap()
    top = tmp_path_factory.mktemp("moodle")
    hand_ins = top / "Sinusoids-42"
    rows = [{"student_id": pid, "name": name, "email": f"u{pid}@uni.example"} for name, pid in MOODLE_CLASS]
    answers = {"311": "ch01_correct_alice.ipynb", "318": "ch01_mistakes_erin.ipynb", "312": "ch01_partial_frank.ipynb",
               "315": "ch01_mistakes_carol.ipynb"}
    expected = {}
    for i, (name, pid) in enumerate(MOODLE_CLASS):
        if pid == "313":
            continue
        corpus = answers.get(pid, list(ANSWERS)[i % 4])
        folder = hand_ins / moodle_folder(name, pid, old=i % 2 == 1)
        folder.mkdir(parents=True)
        file = "ch01_omar_khan.ipynb" if pid == "315" else "ch01_sinusoids.ipynb"
        (folder / file).write_text(notebook_of(corpus, pid))
        expected[pid] = ANSWERS[corpus]
        if i % 3 != 2:                                      # the online text most students typed too
            text = hand_ins / moodle_folder(name, pid, "onlinetext", old=i % 2 == 1)
            text.mkdir()
            (text / "onlinetext.html").write_text("<p>See the attached notebook.</p>")
    roster = top / "worksheet.csv"
    roster.write_text(moodle_worksheet(rows), encoding="utf-8")
    out = top / "grades.csv"
    status, printed = run([str(hand_ins), "--out", str(out), "--roster", str(roster), "--lms", "moodle",
                           "--assignment", "Sinusoids", "--set", "ch01", "--jobs", "2", "--seed", "5",
                           "--feedback-dir", str(top / "feedback")])
    return dict(top=top, status=status, printed=printed, out=out, expected=expected, hand_ins=hand_ins)


def test_moodle_s_online_text_is_no_failure(moodle_run):
    printed = moodle_run["printed"]
    assert moodle_run["status"] == 0, printed                  # every notebook graded: nothing failed
    assert "Could not grade" not in printed
    assert re.search(r"Online text \(9 file\(s\)", printed), printed
    rows = [r for r in csv.DictReader(open(moodle_run["out"], newline="", encoding="utf-8-sig"))][1:]
    assert sum(r["status"] == "online-text" for r in rows) == 9 and all(r["total"] == "" for r in rows
                                                                          if r["status"] == "online-text")


def test_moodle_gradebook_has_an_identifier_and_a_grade_column(moodle_run):
    raw = moodle_run["out"].with_name("grades.moodle.csv").read_bytes()
    assert raw.startswith(codecs.BOM_UTF8)                      # Excel shows "Zoë Müller", not "ZoÃ« MÃ¼ller"
    table = read(moodle_run["out"].with_name("grades.moodle.csv"))
    assert table[0] == ["Email address", "Roster ID", "Full name", "Sinusoids"]
    assert len(table) == 1 + len(MOODLE_CLASS) and ["u314@uni.example", "314", "Zoë Müller"] in [r[:3] for r in table]


def test_moodle_s_worksheet_tells_two_students_of_one_name_apart(moodle_run):
    assert "Roster: Moodle's grading worksheet worksheet.csv (14 students)" in moodle_run["printed"]
    table = read(moodle_run["out"].with_name("grades.moodle.csv"))
    body = {row[1]: row for row in table[1:]}
    assert body["311"][:3] == ["u311@uni.example", "311", "Jane Doe"] and body["311"][3] == "12"
    assert body["318"][:3] == ["u318@uni.example", "318", "Jane Doe"] and body["318"][3] == "2"
    for pid, points in moodle_run["expected"].items():
        assert body[pid][3] == points, pid


def test_a_file_named_after_a_classmate_stays_its_submitter_s(moodle_run):
    body = {row[1]: row for row in read(moodle_run["out"].with_name("grades.moodle.csv"))[1:]}
    assert body["315"][3] == "4" and body["313"][3] == ""        # Bob's own grade; Omar handed in nothing
    assert "No submission from 1 student(s): Omar Khan (313)" in moodle_run["printed"]


def test_moodle_s_feedback_upload_gives_each_feedback_file_back_to_its_student(moodle_run):
    """Moodle's Upload multiple feedback files in a zip splits a path part at its first four "_": the second
    piece is the participant id, the third and fourth the plugin, the rest the feedback file's name. The
    pages of online text get no feedback file (they are not the student's upload)."""
    participants = []
    for feedback in (moodle_run["top"] / "feedback").iterdir():
        who, participant, subtype, plugin, name = feedback.name.split("_", 4)
        assert (subtype, plugin, name) == ("assignsubmission", "file", "ch01_sinusoids.txt") or \
            (participant, name) == ("315", "ch01_omar_khan.txt"), feedback.name
        assert (who.replace(" ", "_"), participant) in [(n.replace(" ", "_"), pid) for n, pid in MOODLE_CLASS]
        participants.append(participant)
    assert sorted(participants) == sorted(moodle_run["expected"])


# ---------------------------------------------------------------------------------------------------
# Rosters as they come


def test_canvas_s_export_is_a_roster_as_it_comes(tmp_path):
    rows = roster_rows()[:4]
    rows[1]["canvas_name"] = '="=Zola, Émile"'
    for name, text in (("comma.csv", canvas_export(rows)), ("semicolon.csv", canvas_export(rows, ";", bom=True))):
        (tmp_path / name).write_text(text, encoding="utf-8")
        roster = read_roster(tmp_path / name)
        assert [s.student_id for s in roster.students] == ["1001", "1002", "1003", "1004"]   # no Test Student
        assert roster.students[0].name == "Lovelace, Ada" and roster.students[1].name == "=Zola, Émile"
        assert roster.students[0].sis_user_id == "U1001" and roster.students[0].section == "Section B"
        assert roster.students[0].email == ""                    # the export has none; Canvas needs none
        assert roster.source.startswith("Canvas's gradebook export")
    (tmp_path / "split.csv").write_text("LastName,FirstName,ID,SIS Login ID,Section,Sinusoids (4321)\n"
                                        "    Points Possible,,,,,12.00\nLovelace,Ada,1001,s1001,B,\n"
                                        "Student,Test,4242,,B,\n")
    assert [(s.student_id, s.name) for s in read_roster(tmp_path / "split.csv").students] == [("1001", "Ada Lovelace")]


def test_moodle_s_worksheet_is_a_roster_as_it_comes(tmp_path):
    rows = [{"student_id": "311", "name": "Jane Doe", "email": "a@x"}, {"student_id": "318", "name": "Jane Doe",
                                                                           "email": "b@x"}]
    (tmp_path / "w.csv").write_text(moodle_worksheet(rows), encoding="utf-8")
    roster = read_roster(tmp_path / "w.csv")
    assert [(s.student_id, s.name, s.email) for s in roster.students] == [("311", "Jane Doe", "a@x"),
                                                                           ("318", "Jane Doe", "b@x")]
    (tmp_path / "blind.csv").write_text(moodle_worksheet(rows, blind=True), encoding="utf-8")
    assert [(s.student_id, s.name) for s in read_roster(tmp_path / "blind.csv").students] == [
        ("311", "Participant 311"), ("318", "Participant 318")]
    german = moodle_worksheet(rows).replace("Identifier", "ID").replace("Full name", "Vollständiger Name")
    (tmp_path / "de.csv").write_text(german.replace("Participant", "Teilnehmer/in"), encoding="utf-8")
    assert [(s.student_id, s.name) for s in read_roster(tmp_path / "de.csv").students] == [
        ("311", "Jane Doe"), ("318", "Jane Doe")]


def test_a_roster_saved_by_excel_is_read_or_says_how_to_save_it(tmp_path):
    text = "student_id,name,email\n1001,Zoë Müller,z@x\n"
    (tmp_path / "cp1252.csv").write_bytes(text.encode("cp1252"))
    with pytest.raises(UsageError) as refused:
        read_roster(tmp_path / "cp1252.csv")
    message = str(refused.value)
    assert "not UTF-8" in message and "line 2" in message and "CSV UTF-8 (Comma delimited)" in message
    assert "codec" not in message and "no column" not in message
    for name, data in (("semicolons.csv", text.replace(",", ";").encode("utf-8-sig")),
                       ("unicode-text.txt", text.replace(",", "\t").encode("utf-16")),
                       ("sep.csv", ("sep=;\n" + text.replace(",", ";")).encode())):
        (tmp_path / name).write_bytes(data)
        assert [(s.student_id, s.name) for s in read_roster(tmp_path / name).students] == [("1001", "Zoë Müller")]


@pytest.mark.parametrize("text, words", [
    ("who,what\n1,2\n", "none of our roster"),
    ("id,email\n1,a@x\n", "no column name"),
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


def test_moodle_s_import_needs_an_email_for_every_student(tmp_path):
    (tmp_path / "roster.csv").write_text("student_id,name,email\n1001,\"Lovelace, Ada\",\n1002,Bob,b@x\n")
    shutil.copy(CORPUS / "ch01_correct_alice.ipynb", tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main([str(tmp_path / "ch01_correct_alice.ipynb"), "--out", str(tmp_path / "g.csv"), "--roster",
                     str(tmp_path / "roster.csv"), "--lms", "moodle", "--no-sandbox"]) == 2
    assert "by email address" in err.getvalue() and "Lovelace, Ada (1001)" in err.getvalue()


# ---------------------------------------------------------------------------------------------------
# Whose file is which: the LMS's evidence first


def graded(*names: str, problem: str | None = None) -> list[Graded]:
    subs = [Submission(Path(name), name) for name in names]
    for sub in subs:
        if problem or not sub.name.endswith(".ipynb"):
            sub.refuse(problem or NOT_NOTEBOOK, "not graded")
    return [Graded(sub) for sub in subs]


def roster_of(tmp_path: Path, text: str):
    (tmp_path / "roster.csv").write_text(text)
    return read_roster(tmp_path / "roster.csv").students


def test_moodle_s_per_student_folders_are_matched_by_participant_id(tmp_path):
    """Moodle's "Download all submissions": a folder Full Name_<participant id>_assignsubmission_file per
    student; a roster pattern can name the folder instead."""
    students = roster_of(tmp_path, "student_id,name,email,submission\n"
                                   "311,Jane Doe,jane@uni.example,\n"
                                   "312,Li Wei,li@uni.example,\n"
                                   "313,Omar Khan,omar@uni.example,Omar*/*.ipynb\n")
    names = ["Jane Doe_311_assignsubmission_file_/ch05_relative_biases.ipynb",
             "Jane Doe_311_assignsubmission_file_/notes.pdf",
             "Li Wei_312_assignsubmission_file/ch05.ipynb", "Li Wei_312_assignsubmission_file/ch05 (1).ipynb",
             "Omar Khan_4312_assignsubmission_file_/mine.ipynb", "Someone_999_assignsubmission_file_/x.ipynb"]
    files = graded(*names)
    matching = match(students, files)
    assert [g.submission.name for g in students[0].files] == names[:2]
    assert len(students[1].files) == 2 and [g.submission.name for g in students[2].files] == [names[4]]
    assert [g.submission.name for g in matching.strays] == [names[5]]
    problems = " ".join(matching.problems())
    assert "2 notebooks from Li Wei (312)" in problems and "Someone_999" in problems
    out = tmp_path / "moodle.csv"
    write_moodle(out, matching, Plan.make("ch05"), "Relative biases")
    table = read(out)
    assert table[0] == ["Email address", "Roster ID", "Full name", "Relative biases"]
    assert [row[3] for row in table[1:]] == ["0", "", "0"]      # not graded here: 0 points; two notebooks: ""


def test_a_file_named_after_a_classmate_in_one_s_own_folder_is_one_s_own(tmp_path):
    """Bob (312) puts ch01_alice.ipynb in his own folder; the roster names each student's file."""
    alice_bob = "311,Alice Roe,a@x,ch01_alice.ipynb\n312,Bob Stone,b@x,ch01_bob.ipynb\n"
    bob = "Bob Stone_312_assignsubmission_file/ch01_alice.ipynb"
    alice = "Alice Roe_311_assignsubmission_file/ch01_alice.ipynb"
    # The roster's ids are Moodle's: the folders decide; the pattern that disagrees is reported.
    students = roster_of(tmp_path, "student_id,name,email,submission\n" + alice_bob)
    matching = match(students, graded(alice, bob))
    assert [g.submission.name for g in students[0].files] == [alice]
    assert [g.submission.name for g in students[1].files] == [bob]
    assert any(bob in line and "Alice Roe (311)" in line and "given to Bob Stone (312)" in line
               for line in matching.problems()), matching.problems()
    # Ids of the university's, and Alice has not handed in: Bob's file is not hers, and it is said.
    students = roster_of(tmp_path, "student_id,name,email,submission\n" + alice_bob.replace("311", "u1")
                         .replace("312", "u2"))
    matching = match(students, graded(bob))
    assert students[0].files == [] and students[1].files == [] and len(matching.strays) == 1
    assert any(bob in line and "Alice Roe (u1)" in line and "given to none" in line for line in matching.problems())
    assert grade_of(students[0], Plan.make("ch01")) == ""


def test_a_stranger_s_file_naming_a_student_s_id_is_not_that_student_s(tmp_path):
    students = roster_of(tmp_path, "student_id,name\n1001,Ada\n1002,Bob\n")
    ada = canvas_name("Ada", "1001", 1, "ch01.ipynb")
    stranger = canvas_name("Eve Stranger", "9999", 2, "ch01_1001.ipynb")
    hand_named = "ch01_1002.ipynb"                              # not named by an LMS: the id as a word decides
    matching = match(students, graded(ada, stranger, hand_named))
    assert [g.submission.name for g in students[0].files] == [ada]
    assert [g.submission.name for g in students[1].files] == [hand_named]
    assert [g.submission.name for g in matching.strays] == [stranger]


def test_a_pattern_that_names_two_submitters_gives_neither(tmp_path):
    students = roster_of(tmp_path, "student_id,name,submission\nu1,Jane Doe,Jane Doe_*/*\nu2,Li Wei,\n")
    files = graded("Jane Doe_311_assignsubmission_file/a.ipynb", "Jane Doe_318_assignsubmission_file/b.ipynb")
    matching = match(students, files)
    assert students[0].files == [] and len(matching.strays) == 2
    assert any("names the uploads of 2 submitters" in line for line in matching.problems())


def test_an_ungraded_hand_in_gets_the_same_grade_in_every_file():
    plan = Plan.make("ch01")
    for rule, cell in (("empty", ""), ("0", "0")):
        pdf, broken = graded("doe_1_2_answers.pdf")[0], graded("roe_3_4_ch01.ipynb", problem=INVALID)[0]
        text = graded("poe_5_text.html", problem=ONLINE_TEXT)[0]
        for g in (pdf, broken, text):
            assert csv_row(g, plan, rule)[len(plan.questions) + 1] == cell
        students = [s for s in match([*read_roster_from(["1", "3", "5"])], [pdf, broken, text]).students]
        assert [grade_of(s, plan, rule) for s in students] == [cell] * 3


def read_roster_from(ids: list[str]):
    from posenc.grader.lms import Student

    return [Student(student_id=i, name=f"S{i}") for i in ids]


def test_lms_feedback_names_keep_what_the_lms_reads_back():
    names = ["lovelaceada_1001_70000_ch01_sinusoids.ipynb", "sub/lovelaceada_late_1001_70001_ch01.ipynb",
             "Jane Doe_311_assignsubmission_file/nested/ch05.ipynb", "Jane Doe_318_assignsubmission_file_/ch05.ipynb",
             "Jane Doe_311_assignsubmission_onlinetext/onlinetext.html", "sec1/bob.ipynb"]
    assert feedback_names(names) == [
        "lovelaceada_1001_70000_ch01_sinusoids.txt", "lovelaceada_late_1001_70001_ch01.txt",
        "Jane Doe_311_assignsubmission_file_nested%2Fch05.txt", "Jane Doe_318_assignsubmission_file_ch05.txt",
        "Jane Doe_311_assignsubmission_onlinetext_onlinetext.html.txt", "sec1%2Fbob.txt"]


def test_write_canvas_marks_its_bytes_for_excel(tmp_path):
    students = read_roster_from(["1"])
    matching = match(students, [])
    write_canvas(tmp_path / "c.csv", matching, Plan.make("ch01"), "A", "7")
    assert (tmp_path / "c.csv").read_bytes().startswith(codecs.BOM_UTF8)


def test_a_canvas_name_ending_in_a_classmate_s_id_gives_the_file_to_none(tmp_path):
    """Bob (2099) sets his sortable name to "Stone, Bob_2001": Canvas keeps the "_2001", so his download
    reads stonebob_2001_2099_81234_...: it is claimed by Ada (2001) and Bob, given to none and reported, as
    a dashed name is; Ada's own file stays hers, and a file name starting with a number changes nothing."""
    students = roster_of(tmp_path, "student_id,name\n2001,Ada\n2099,Bob\n")
    ada, spoof = "lovelaceada_2001_80001_ch01_sinusoids.ipynb", "stonebob_2001_2099_81234_ch01_sinusoids.ipynb"
    for files in ([ada, spoof], [spoof]):                   # with and without Ada's own hand-in
        matching = match(students, graded(*files))
        assert [g.submission.name for g in students[0].files] == files[:-1] and students[1].files == []
        assert any(f"{spoof} is claimed by several students (2001, 2099): given to none" in line
                   for line in matching.problems()), matching.problems()
    numbered = "lovelaceada_2001_80001_2024_ch01.ipynb"
    match(students, graded(numbered))
    assert [g.submission.name for g in students[0].files] == [numbered]


def test_the_lms_s_maximum_is_compared_with_the_set_s_total(tmp_path):
    """Canvas's Points Possible and Moodle's Maximum grade are read from the roster; a maximum that is not
    the set's total (with private checks 15, not 12; Moodle's default 100) is said, with what to set."""
    from posenc.grader.lms import maximum_problem

    plan = Plan.make("ch01")
    (tmp_path / "canvas.csv").write_text(canvas_export(roster_rows()[:2]), encoding="utf-8")
    canvas = read_roster(tmp_path / "canvas.csv")
    assert canvas.maxima == {ASSIGNMENT: 12.0, "Relative biases (4322)": 10.0}
    assert maximum_problem(canvas, plan, "Sinusoids", "4321") == ""
    line = maximum_problem(canvas, Plan.make("ch05"), "Relative biases")
    assert "'Relative biases (4322)' is 10" in line and "set the assignment's maximum to" in line
    worksheet = moodle_worksheet([{"student_id": "311", "name": "Jane Doe", "email": "a@x"}])
    (tmp_path / "w.csv").write_text(worksheet.replace("12.00", "100.00"), encoding="utf-8")
    moodle = read_roster(tmp_path / "w.csv")
    assert "'Maximum grade' is 100, but the set's total is 12" in maximum_problem(moodle, plan, "Sinusoids")


@pytest.mark.parametrize("lms, roster_kind", [("canvas", "moodle"), ("moodle", "canvas")])
def test_a_roster_of_the_other_lms_is_refused(tmp_path, capsys, lms, roster_kind):
    rows = [{"student_id": "311", "name": "Jane Doe", "email": "a@x", "sis_login_id": "", "section": "A"}]
    text = moodle_worksheet(rows) if roster_kind == "moodle" else canvas_export(rows)
    (tmp_path / "r.csv").write_text(text, encoding="utf-8")
    (tmp_path / "in").mkdir()
    shutil.copy(CORPUS / "ch01_mistakes_carol.ipynb", tmp_path / "in")
    assert main([str(tmp_path / "in"), "--out", str(tmp_path / "g.csv"), "--roster", str(tmp_path / "r.csv"),
                 "--lms", lms]) == 2
    assert f"give --lms {roster_kind}" in capsys.readouterr().err and not (tmp_path / "g.csv").exists()


def test_a_pdf_beside_a_graded_notebook_gets_no_feedback_file():
    """Ada's notes.pdf beside her graded notebook: no "hand in the .ipynb" for Canvas to attach beside her
    grade; a student who handed in only a PDF still gets one."""
    from posenc.grader.cli import feedback_for

    ada_nb, ada_pdf = "lovelaceada_2001_80001_ch01.ipynb", "lovelaceada_2001_80002_notes.pdf"
    bob_pdf = "stonebob_2099_80003_answers.pdf"
    files = graded(ada_nb, ada_pdf, bob_pdf)
    assert [g.submission.name for g in feedback_for(files)] == [ada_nb, bob_pdf]
