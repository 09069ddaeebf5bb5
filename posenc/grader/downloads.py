"""How Canvas and Moodle name the files of a submissions download: who handed each file in (the LMS's own
evidence, read before anything the student chose to call a file), which files are the LMS's page of a
student's online text rather than an upload, and the feedback file names each LMS's feedback upload reads
back. Facts from the two LMSs' source code, in our words:

**Canvas** (an assignment's *Download Submissions*): one flat zip; each uploaded file is named
``<lastfirst>[_late]_<user id>_<file id>_<the student's file name>``, the part before the ids made of the
student's sortable name with everything but letters, digits and "_" removed, in lower case (so the
``_LATE_`` of a late hand-in is ``_late_``); a sortable name ending in "_<number>" keeps it, so a name can end in a classmate's user id.
An online text entry is ``<lastfirst>_<user id>_text.html``, a
website URL ``..._link.html``. *Re-Upload Submissions* takes a zip of files named so: the first two parts of a
name (split at "_") that are all digits are the user id and the file id, and the file becomes a comment on
that user's submission.

**Moodle** (an assignment's *Download all submissions*): one folder per student and submission plugin,
``<Full Name>_<participant id>_assignsubmission_<plugin>`` (``file`` for uploads, ``onlinetext`` for the
online text, whose text is ``onlinetext.html``; up to Moodle 4.0 the name ends in another "_"), or, without
*Download submissions in folders*, flat files ``<Full Name>_<participant id>_assignsubmission_file_<file>``.
Moodle writes an underscore in a name as a space, and "Participant" instead of the name under blind
marking; the participant id is the number of the grading worksheet's ``Participant N``. *Upload multiple
feedback files in a zip* gives a file to the participant whose id is the second "_"-part of the first part
of its path with at least four of them (``name_id_assignsubmission_file_feedback.txt``): the rest is the
feedback file's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CANVAS, MOODLE = "canvas", "moodle"
_MOODLE_FOLDER = re.compile(r"([^_/]*)_(\d+)_assignsubmission_([a-z]+)_?")
_MOODLE_FLAT = re.compile(r"([^_/]*)_(\d+)_assignsubmission_([a-z]+)_(.+)")
_CANVAS_PAGES = ("text.html", "link.html")       # an online text entry, a website URL


@dataclass(frozen=True)
class Submitter:
    """Who handed a file in, as the LMS's own download name says."""

    lms: str            # CANVAS or MOODLE
    lms_id: str         # Canvas's user id, Moodle's participant id
    name: str           # as the LMS wrote it ("lovelaceada", "Jane Doe")
    prefix: str         # what the LMS wrote, up to the student's own part ("Jane Doe_311_assignsubmission_file")
    rest: str           # the student's own part: their file name, their folders
    online_text: bool = False   # the LMS's page of the student's typed text or URL, not an upload
    other_ids: tuple[str, ...] = ()   # Canvas: more numbers before the file name, each could be the user id

    @property
    def key(self) -> tuple[str, str]:
        return self.lms, "|".join((self.lms_id, *self.other_ids))

    @property
    def candidate_ids(self) -> tuple[str, ...]:
        return (self.lms_id, *self.other_ids)

    @property
    def label(self) -> str:
        return f"{'Canvas user' if self.lms == CANVAS else 'Moodle participant'} {self.lms_id} ({self.name})"


def submitter_of(name: str) -> Submitter | None:
    """Who handed in the file of this gradebook name (its path inside the hand-in folder), from the part
    the LMS wrote: the outermost Moodle folder (or flat Moodle name), else a Canvas name; None for a file
    the LMS did not name. What the student named a file or folder further in never counts."""
    parts = name.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        found = _MOODLE_FLAT.fullmatch(part) if last else _MOODLE_FOLDER.fullmatch(part)
        if found:
            who, lms_id, plugin = found.group(1), found.group(2), found.group(3)
            rest = found.group(4) if last else "/".join(parts[index + 1:])
            return Submitter(MOODLE, lms_id, who, f"{who}_{lms_id}_assignsubmission_{plugin}", rest,
                             online_text=plugin == "onlinetext")
    return _canvas(parts[-1])


def _canvas(base: str) -> Submitter | None:
    words = base.split("_")
    for index in range(len(words) - 1):
        if not _digits(words[index]):
            continue
        who = "_".join(words[:index])
        name = who[:-5] if who.lower().endswith("_late") else "" if who.lower() == "late" else who
        if name != name.lower() or not all(ch.isalnum() or ch == "_" for ch in name):
            return None                            # Canvas writes letters, digits and "_", in lower case
        if index + 2 < len(words) and _digits(words[index + 1]):
            # A run of more numbers: a name ending in "_<number>" (Canvas keeps a sortable name's "_2001") or
            # a file name starting with one; each number but the run's last could be the user id.
            run = index + 2
            while run < len(words) - 1 and _digits(words[run]):
                run += 1
            return Submitter(CANVAS, words[index], name, "_".join(words[:index + 2]), "_".join(words[index + 2:]),
                             other_ids=tuple(words[index + 1:run - 1]))
        if index == len(words) - 2 and words[-1] in _CANVAS_PAGES:
            return Submitter(CANVAS, words[index], name, "_".join(words[:index + 1]), words[-1], online_text=True)
        return None
    return None


def _digits(word: str) -> bool:
    return word.isascii() and word.isdigit()


def feedback_stem(name: str) -> str | None:
    """For a file the LMS named, the stem of a feedback file that its feedback upload gives back to the
    same student (Canvas: the download name itself, which holds the user and file ids; Moodle: the
    student's folder and their file's name, joined by "_"); None for other names."""
    submitter = submitter_of(name)
    if submitter is None:
        return None
    rest = submitter.rest[:-6] if submitter.rest.endswith(".ipynb") else submitter.rest
    return f"{submitter.prefix}_{rest}"
