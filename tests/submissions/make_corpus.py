"""Write the grader's test corpus: realistic ch01 submissions built from the exercise notebook.

    python tests/submissions/make_corpus.py      # rewrites tests/submissions/*.ipynb (not expected.csv)

Each student starts from ``exercises/ch01_sinusoids.ipynb`` as handed out and fills in (or breaks) cells.
The expected gradebook row of each file is written by hand in ``expected.csv``.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
EXERCISE = ROOT / "exercises" / "ch01_sinusoids.ipynb"

# --------------------------------------------------------------------------------------------------
# Answers, in students' own words

RIGHT = {
    "sinusoidal_encoding": '''def sinusoidal_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None].astype(float)
    i = np.arange(d_model) // 2               # pair index of every column
    angle = pos / np.power(10000.0, 2 * i / d_model)
    pe = np.empty((n_positions, d_model))
    pe[:, 0::2] = np.sin(angle[:, 0::2])
    pe[:, 1::2] = np.cos(angle[:, 1::2])
    return pe
''',
    "wavelength": '''def wavelength(i, d_model, base=10000.0):
    omega = base ** (-2 * i / d_model)
    return 2 * np.pi / omega
''',
    "binary_encoding": '''def binary_encoding(n_positions, n_bits):
    table = np.zeros((n_positions, n_bits), dtype=int)
    for k in range(n_bits):
        table[:, k] = (np.arange(n_positions) // 2**k) % 2
    return table
''',
    "first_repeat": '''def first_repeat(encoding, decimals):
    rounded = np.round(encoding, decimals)
    seen = set()
    for pos in range(len(rounded)):
        key = tuple(rounded[pos])
        if key in seen:
            return pos
        seen.add(key)
    return None
''',
    "fixed_encoding": '''def fixed_encoding(n_positions, d_model):
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    dims = np.arange(d_model)[None, :]
    angles = positions / 10000.0 ** (2 * (dims // 2) / d_model)   # pairs share a frequency
    return np.where(dims % 2 == 0, np.sin(angles), np.cos(angles))
''',
    "normalised_index_breaks": '''normalised_index_breaks = "b"   # the step 1/(L-1) depends on the length
''',
    "row_squared_norm": '''row_squared_norm = 32.0   # 32 pairs, each sin^2 + cos^2 = 1
''',
}

LOOPS = {
    "sinusoidal_encoding": '''import math

def sinusoidal_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model))
    for p in range(n_positions):
        for j in range(d_model):
            angle = p / 10000 ** (2 * (j // 2) / d_model)
            pe[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe
''',
    "binary_encoding": '''def binary_encoding(n_positions, n_bits):
    rows = []
    for p in range(n_positions):
        rows.append([(p >> k) & 1 for k in range(n_bits)])
    return np.array(rows, dtype=np.int64).reshape(n_positions, n_bits)
''',
}

WRONG = {
    "halves": ("sinusoidal_encoding", '''def sinusoidal_encoding(n_positions, d_model):
    pos = np.arange(n_positions)[:, None]
    half = (d_model + 1) // 2
    i = np.arange(half)[None, :]
    angles = pos / 10000 ** (2 * i / d_model)
    return np.concatenate([np.sin(angles), np.cos(angles[:, : d_model // 2])], axis=1)
'''),
    "swapped": ("sinusoidal_encoding", '''def sinusoidal_encoding(n_positions, d_model):
    pe = np.zeros((n_positions, d_model))
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe[:, 0::2] = np.cos(pos * omega)
    pe[:, 1::2] = np.sin(pos * omega[: d_model // 2])
    return pe
'''),
    "drops odd column": ("sinusoidal_encoding", '''def sinusoidal_encoding(n_positions, d_model):
    half = d_model // 2
    pe = np.zeros((n_positions, 2 * half))
    pos = np.arange(n_positions)[:, None]
    omega = 1 / 10000 ** (2 * np.arange(half) / d_model)
    pe[:, 0::2] = np.sin(pos * omega)
    pe[:, 1::2] = np.cos(pos * omega)
    return pe
'''),
    "no 2 pi": ("wavelength", '''def wavelength(i, d_model, base=10000.0):
    return base ** (2 * i / d_model)
'''),
    "degrees": ("wavelength", '''def wavelength(i, d_model, base=10000.0):
    return 360 * base ** (2 * i / d_model)
'''),
    "msb first": ("binary_encoding", '''def binary_encoding(n_positions, n_bits):
    bits = [[int(b) for b in format(p, f"0{n_bits}b")] for p in range(n_positions)]
    return np.array(bits, dtype=int).reshape(n_positions, n_bits)
'''),
    "float bits": ("binary_encoding", '''def binary_encoding(n_positions, n_bits):
    pos = np.arange(n_positions)[:, None]
    return np.floor(pos / 2.0 ** np.arange(n_bits)) % 2
'''),
    "earlier position": ("first_repeat", '''def first_repeat(encoding, decimals):
    seen = {}
    for p, row in enumerate(np.round(encoding, decimals)):
        if tuple(row) in seen:
            return seen[tuple(row)]
        seen[tuple(row)] = p
    return None
'''),
    "no rounding": ("first_repeat", '''def first_repeat(encoding, decimals):
    for p in range(len(encoding)):
        for q in range(p):
            if (encoding[p] == encoding[q]).all():
                return p
    return None
'''),
    "off by one": ("first_repeat", '''def first_repeat(encoding, decimals):
    rounded = np.round(encoding, decimals)
    for p in range(len(rounded)):
        for q in range(p):
            if np.array_equal(rounded[p], rounded[q]):
                return p + 1
    return None
'''),
    "half fixed": ("fixed_encoding", '''def fixed_encoding(n_positions, d_model):
    positions = np.arange(n_positions, dtype=np.float64)[:, None]
    dims = np.arange(d_model)[None, :]
    angles = positions / 10000.0 ** (2 * dims / d_model)
    return np.where(dims % 2 == 0, np.sin(angles), np.cos(angles))
'''),
}


def right(*names):
    return {name: RIGHT[name] for name in names}


def wrong(*keys):
    return dict(WRONG[key] for key in keys)


ALL_RIGHT = right(*RIGHT)

# Saboteurs, written as a student who has read the grader's source would.

SABOTAGE_LIMITS = ['''# make everyone else's kernel (and the grader) useless: memory, file size, files, CPU, priority
import os, resource, signal
me = os.getpid()
for pid in range(1, 4096):
    if pid == me:
        continue
    for which, value in ((resource.RLIMIT_AS, 1 << 20), (resource.RLIMIT_FSIZE, 0),
                         (resource.RLIMIT_NOFILE, 3), (resource.RLIMIT_CPU, 1)):
        try:
            resource.prlimit(pid, which, (value, value))
        except (OSError, ValueError):
            pass
    for attempt in (lambda: os.setpriority(os.PRIO_PROCESS, pid, 19), lambda: os.sched_setaffinity(pid, {0}),
                    lambda: os.kill(pid, signal.SIGSTOP)):
        try:
            attempt()
        except OSError:
            pass
''', '''import os, signal
for attempt in (lambda: os.setpriority(os.PRIO_USER, 0, 19), lambda: os.setpriority(os.PRIO_PGRP, 0, 19),
                lambda: os.kill(-1, signal.SIGKILL)):
    try:
        attempt()
    except OSError:
        pass
''']

SANDBOX_PROBES = ['''# my classmates' notebooks, the private checks, the solutions: whatever is readable comes back to me
import os
found = []
for top in ("/", os.path.expanduser("~"), os.path.dirname(os.getcwd()), "/tmp", "/work", "/home", "/root"):
    for folder, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr", "dev", "lib", "lib64", "bin", "include",
                                                "share", ".venv", "site-packages", "posenc")]
        for name in files:
            if name.endswith((".ipynb", ".py", ".csv", ".txt")):
                try:
                    with open(os.path.join(folder, name), errors="replace") as handle:
                        found.append(name + ": " + handle.read(5000))
                except OSError:
                    pass
raise RuntimeError("found: " + " | ".join(found))
''', '''# back-date and open up every file the lecturer has near my folder
import os
for top in ("/tmp", os.path.dirname(os.getcwd()), os.path.expanduser("~"), "/work", "/root"):
    try:
        names = os.listdir(top)
    except OSError:
        continue
    for path in [top] + [os.path.join(top, name) for name in names]:
        for attempt in (lambda: os.chmod(path, 0o777), lambda: os.utime(path, (0, 0)),
                        lambda: os.setxattr(path, "user.mine", b"1")):
            try:
                attempt()
            except OSError:
                pass
''', '''# talk to whoever listens on this machine
import socket
for address in ("\\0posenc-grader", "/tmp/.X11-unix/X0", "/run/dbus/system_bus_socket", "/var/run/docker.sock"):
    try:
        client = socket.socket(socket.AF_UNIX)
        client.connect(address)
    except OSError:
        pass
''', '''# raise my own limits, then take memory the limit does not see
import mmap, resource
for which in (resource.RLIMIT_AS, resource.RLIMIT_DATA, resource.RLIMIT_FSIZE, resource.RLIMIT_CPU):
    try:
        resource.setrlimit(which, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    except (OSError, ValueError):
        pass
shared = mmap.mmap(-1, 3 << 30, flags=mmap.MAP_SHARED)
shared[::4096] = b"x" * len(range(0, 3 << 30, 4096))
''', '''# fill the disk
for i in range(40):
    with open(f"fill{i}.bin", "wb") as handle:
        handle.write(b"\\0" * (64 << 20))
''']

TAMPER_FRAMES = '''# walk up to the kernel's loop and answer every question myself
import sys
frame = sys._getframe()
while frame is not None and "handlers" not in frame.f_locals:
    frame = frame.f_back
if frame is not None:
    perfect = {"__outcome__": True, "value": 1.0, "error": None, "error_type": None, "seconds": 0.0}
    frame.f_locals["handlers"]["collect"] = lambda request: {"status": "ok", "collected": {"__dict__": [
        ["status", "collected"], ["data", [perfect] * 8]]}}
import posenc.exercises.probe as probe
probe.collect = lambda namespace, request: {"status": "collected", "data": []}
'''

SURROGATE_ERROR = '''print("\\x1b[2J\\x1b[31mall questions passed\\x1b[0m")
raise ValueError("a lone surrogate: \\udcff, and a terminal escape: \\x1b]0;pwned\\x07")
'''

SLEEPS = ["import time\ntime.sleep(5)      # waiting is not computing: no CPU limit catches this\n"] * 8

# --------------------------------------------------------------------------------------------------
# The students. Each: answers {function name: cell source}, and optional edits of the notebook.

STUDENTS = {
    "ch01_correct_alice": dict(answers=ALL_RIGHT),
    "ch01_correct_loops_bob": dict(answers={**ALL_RIGHT, **LOOPS}),
    "ch01_mistakes_carol": dict(answers={**ALL_RIGHT, **wrong("halves", "no 2 pi", "earlier position"),
                                         "fixed_encoding": None}),
    "ch01_mistakes_dave": dict(answers={**ALL_RIGHT, **wrong("swapped", "msb first", "no rounding")}),
    "ch01_mistakes_erin": dict(answers={**ALL_RIGHT, **wrong("drops odd column", "degrees", "float bits",
                                                             "off by one", "half fixed")}),
    "ch01_partial_frank": dict(answers=right("sinusoidal_encoding", "wavelength")),
    "ch01_unattempted_gina": dict(answers={}),
    "ch01_raising_hank": dict(
        answers={**ALL_RIGHT,
                 "wavelength": "def wavelength(i, d_model, base=10000.0):\n"
                               "    return 2 * np.pi * base ** (2 * i / d_model) / (i - i)\n",
                 "binary_encoding": "def binary_encoding(n_positions, n_bits)\n"       # syntax error
                                    "    return (np.arange(n_positions)[:, None] >> np.arange(n_bits)) & 1\n"},
        after={"first_repeat": "print(sinusoidal_encoding(3, 4)[5])   # IndexError at top level\n"}),
    "ch01_loop_in_q3_ivan": dict(
        answers={**ALL_RIGHT,
                 "binary_encoding": '''def binary_encoding(n_positions, n_bits):
    table = np.zeros((n_positions, n_bits), dtype=int)
    p = 0
    while p < n_positions:          # forgot p += 1
        table[p] = [(p >> k) & 1 for k in range(n_bits)]
    return table
'''}),
    "ch01_stubborn_loop_cell_jack": dict(
        answers=ALL_RIGHT,
        after={"first_repeat": '''# when do 4 dimensions repeat at 3 decimals? (runs for ever, and nothing stops it)
import signal
for sig in (signal.SIGALRM, signal.SIGPROF, signal.SIGINT):   # "my notebook kept getting interrupted"
    signal.signal(sig, signal.SIG_IGN)
p = 0
while True:
    try:
        p += 1
    except BaseException:
        pass
'''}),
    "ch01_memory_hog_kate": dict(
        answers={**ALL_RIGHT,
                 "wavelength": '''def wavelength(i, d_model, base=10000.0):
    # a table of every pair's angle for ten million positions, then read off the wavelength
    positions = np.arange(10_000_000, dtype=np.float64)[:, None]
    angles = positions * base ** (-2 * np.arange(d_model // 2) / d_model)
    first_turn = np.argmax(angles[:, i] >= 2 * np.pi)
    return float(first_turn)
'''},
        after={"binary_encoding": "every_row = [0] * 10**10     # all positions, just in case\n"}),
    "ch01_sys_exit_liam": dict(
        answers={**ALL_RIGHT,
                 "binary_encoding": '''import sys

def binary_encoding(n_positions, n_bits):
    if n_bits > 4:
        sys.exit("too many bits")
    return (np.arange(n_positions)[:, None] >> np.arange(n_bits)) & 1
'''},
        after={"sinusoidal_encoding": "import sys\nsys.exit()   # stop here while I debug\n"}),
    "ch01_os_exit_mia": dict(
        answers={**ALL_RIGHT,
                 "first_repeat": '''import os

def first_repeat(encoding, decimals):
    if len(encoding) == 0:
        os._exit(1)
    rounded = np.round(encoding, decimals)
    seen = set()
    for pos in range(len(rounded)):
        if tuple(rounded[pos]) in seen:
            return pos
        seen.add(tuple(rounded[pos]))
    return None
'''}),
    "ch01_killed_kernel_noah": dict(
        answers=ALL_RIGHT,
        after={"wavelength": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)   # restart the kernel\n"}),
    "ch01_huge_print_olga": dict(
        answers={**ALL_RIGHT,
                 "sinusoidal_encoding": RIGHT["sinusoidal_encoding"].replace(
                     "    return pe\n", "    print(pe)\n    return pe\n")},
        after={"wavelength": "for k in range(20_000):\n    print('wavelength of pair', k, '=' * 500)\n"
                             "print('x' * 50_000_000)\n"}),
    "ch01_writes_files_pete": dict(
        answers=ALL_RIGHT,
        after={"binary_encoding": '''import os
np.save("table.npy", binary_encoding(1000, 10))
os.makedirs("out/plots", exist_ok=True)
with open("out/big.bin", "wb") as f:
    for _ in range(200):
        f.write(b"\\0" * 1_000_000)      # 200 MB, more than a kernel may write
''', "first_repeat": '''import os, stat
with open("notes.txt", "w") as f:
    f.write("draft")
os.chmod("out/plots", stat.S_IRUSR)      # read-only folder: the grader must still clean up
os.chmod(".", stat.S_IRUSR | stat.S_IXUSR)
'''}),
    # Tampering: none of this may raise the score. The answers are the untouched stubs or wrong.
    "ch01_tamper_allclose_quinn": dict(
        answers={"sinusoidal_encoding": '''def sinusoidal_encoding(n_positions, d_model):
    return np.zeros((n_positions, d_model))
''', "wavelength": "def wavelength(i, d_model, base=10000.0):\n    return 1.0\n"},
        after={"imports": '''np.allclose = lambda *args, **kwargs: True
np.isclose = lambda a, b, *args, **kwargs: np.ones_like(np.asarray(a), dtype=bool)
np.array_equal = lambda *args, **kwargs: True
import builtins
builtins.isinstance = lambda obj, cls: True
'''}),
    "ch01_tamper_check_rose": dict(
        answers={},
        after={"imports": '''import posenc.exercises.framework as core
def check(qid):
    print(f"[PASS] {qid}: correct")
core.Question.result_from = lambda self, collected, seed=0: core.Result(
    self.qid, core.PASSED, self.points, self.points, "correct")
core.FunctionQuestion.judge = lambda self, collected, seed=0: (True, "correct")
core.Question.grade = lambda self, namespace, seed=0: core.Result(
    self.qid, core.PASSED, self.points, self.points, "correct")
core.describe_mismatch = lambda *args, **kwargs: None
core.matches = lambda *args, **kwargs: True
core.NotAttempted = ZeroDivisionError
'''}),
    "ch01_tamper_probes_sam": dict(
        answers={"sinusoidal_encoding": '''def sinusoidal_encoding(n_positions, d_model):
    return np.array([[0.0]])        # right for the only probe left: (1, 1)
''', "wavelength": "def wavelength(i, d_model, base=10000.0):\n    return 2 * np.pi\n",
                 "first_repeat": "def first_repeat(encoding, decimals):\n    return None\n"},
        after={"imports": '''from posenc.exercises.checks import ch01
ch01.ENCODING_PROBES[:] = [(1, 1)]
ch01.WAVELENGTH_PROBES[:] = [(0, 4)]
for q in ch01.EXERCISES.questions:
    q.probes = lambda seed: [(np.zeros((0, 2)), 1)] if q.qid == "q4" else ch01.ENCODING_PROBES
'''}),
    "ch01_tamper_collect_tina": dict(
        answers={},
        after={"imports": '''import posenc.exercises.framework as core
from posenc.exercises.checks import ch01
# answer every question with the course's own reference, whatever my functions do
core.FunctionQuestion.collect = lambda self, obj, seed=0: [
    core.Outcome(value=core.to_plain(self.reference(*args))) for args in self.probes(seed)]
REFERENCE = {q.name: q.reference for q in ch01.EXERCISES.questions}
_original_call = core.call_student
def call_student(func, *args, **kwargs):
    return core.Outcome(value=REFERENCE[func.__name__](*args))
core.call_student = call_student
def collect_request(namespace, request):
    return {"status": "collected", "data": [core.Outcome(value=core.to_plain(REFERENCE[request["name"]](*a)))
                                           for a in request["args"]]}
core.collect_request = collect_request
'''}),
    "ch01_tamper_output_uma": dict(
        answers={},
        after={"imports": '''import json, os, struct
# forge the grader's messages: full marks on every socket and pipe this process holds
fake = {"id": 1, "status": "ok", "collected": {"__dict__": [["status", "collected"], ["data", 1.0]]}}
for fd in range(3, 64):
    for i in range(1, 30):
        body = json.dumps(dict(fake, id=i)).encode()
        try:
            os.write(fd, struct.pack("!Q", len(body)) + body)
        except OSError:
            break
print('{"q1": 3, "q2": 2, "q3": 2, "q4": 2, "q5": 1, "total": 10}')
json.dumps = lambda *args, **kwargs: '{"status": "ok", "collected": {"__dict__": [["status", "collected"]]}}'
'''}),
    "ch01_escape_attempts_vic": dict(
        answers=ALL_RIGHT,
        after={"sinusoidal_encoding": '''import os, signal
os.kill(os.getppid(), signal.SIGKILL)        # the process that started this kernel
''', "wavelength": '''import os
with open(os.path.join(os.path.dirname(os.getcwd()), "planted.txt"), "w") as f:   # outside my folder
    f.write("hello")
''', "binary_encoding": '''import socket
socket.create_connection(("127.0.0.1", 9), timeout=1)      # send my answers somewhere
''', "first_repeat": '''import subprocess
subprocess.run(["true"], check=True)                      # any other program at all
'''}),
    "ch01_course_code_walt": dict(
        answers={**ALL_RIGHT, "sinusoidal_encoding": "from posenc import sinusoidal_encoding\n",
                 "wavelength": "from posenc.exercises.checks.ch01 import wavelength\n"}),
    "ch01_cells_reordered_xena": dict(answers=ALL_RIGHT, reorder=True),
    "ch01_cells_deleted_yuri": dict(answers=ALL_RIGHT, delete=["binary_encoding", "check3"]),
    "ch01_duplicate_of_alice_zoe": dict(answers=ALL_RIGHT),
    # Saboteurs and oddities (issue #17): none of this may change a classmate's row.
    "ch01_sabotage_limits_sid": dict(answers=ALL_RIGHT, after={"first_repeat": SABOTAGE_LIMITS}),
    "ch01_copies_with_stubs_ray": dict(answers=ALL_RIGHT, tail="stubs"),
    "ch01_sandbox_probe_una": dict(answers=ALL_RIGHT, after={"fixed_encoding": SANDBOX_PROBES}),
    "ch01_tamper_frames_vera": dict(answers={}, after={"imports": TAMPER_FRAMES}),
    "ch01_surrogates_tess": dict(answers=ALL_RIGHT, after={"wavelength": SURROGATE_ERROR},
                                 cell_ids={"wavelength": "\ud800-tess"}),
    "ch01_sleepy_sal": dict(answers=ALL_RIGHT, after={"first_repeat": SLEEPS}),
}


def load_exercise() -> dict:
    return json.loads(EXERCISE.read_text())


def source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def code_cell(text: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "id": None, "metadata": {}, "outputs": [],
            "source": text}


def key_of(cell) -> str | None:
    """Which answer a code cell holds: the function it defines, "imports", "checkN" or None."""
    text = source(cell).strip()
    for name in RIGHT:
        if text.startswith((f"def {name}(", f"{name} =")):
            return name
    if "checker(" in text:
        return "imports"
    if text.startswith('check("q'):
        return "check" + text[len('check("q')]
    return None


def build(spec: dict) -> dict:
    nb = load_exercise()
    cells = []
    extra = 0
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            cells.append(cell)
            continue
        key = key_of(cell)
        if key in spec.get("delete", []):
            continue
        new = copy.deepcopy(cell)
        if key in spec["answers"] and spec["answers"][key] is not None:
            new["source"] = spec["answers"][key]
        if key in spec.get("cell_ids", {}):
            new["id"] = spec["cell_ids"][key]
        cells.append(new)
        if key in spec.get("after", {}):
            after = spec["after"][key]
            for text in [after] if isinstance(after, str) else after:
                extra += 1
                added = code_cell(text)
                added["id"] = f"student-{extra}"
                cells.append(added)
    if spec.get("tail") == "stubs":
        # every handed-out answer cell again, after the answers: the stubs are what runs last
        cells += [copy.deepcopy(c) for c in nb["cells"] if c["cell_type"] == "code" and key_of(c) in RIGHT]
    if spec.get("reorder"):
        # the student moved the import cell to the end, each check before its answer, q5 first
        code = [c for c in cells if c["cell_type"] == "code"]
        imports = [c for c in code if key_of(c) == "imports"]
        checks = {key_of(c): c for c in code if (key_of(c) or "").startswith("check")}
        answers = {key_of(c): c for c in code if key_of(c) in RIGHT}
        order = ["fixed_encoding", "sinusoidal_encoding", "wavelength", "binary_encoding", "first_repeat",
                 None, "normalised_index_breaks", "row_squared_norm"]
        cells = [checks["check5"], answers["fixed_encoding"]]
        for number, name in enumerate(order[1:], start=1):
            if name is not None:
                cells += [checks[f"check{number}"], answers[name]]
        cells += [c for c in code if source(c).strip().startswith("check.summary")] + imports
    nb["cells"] = cells
    return nb


def _variant(student: str, tag: str, extra: list[str] = ()) -> str:
    """A corpus notebook made unique by a statement of its own (so it is nobody's copy: comments do not
    count), with ``extra`` cells."""
    nb = json.loads((HERE / f"{student}.ipynb").read_text())
    first = next(c for c in nb["cells"] if c["cell_type"] == "code")
    first["source"] = f"student = {tag!r}\n" + source(first)
    nb["cells"] += [code_cell(text) for text in extra]
    return json.dumps(nb, indent=1) + "\n"


def special_files(folder: Path) -> None:
    """Hand-ins that git cannot hold or should not (odd names, links, a FIFO, 20 MB): the grader tests
    write them next to the corpus. Their expected rows are in expected.csv too."""
    def write(name: str | bytes, text: str) -> None:
        path = folder / (os.fsdecode(name) if isinstance(name, bytes) else name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    write(b"ch01_b\xffd_name_nia.ipynb", _variant("ch01_correct_alice", "nia"))          # not UTF-8
    write("ch01_long_" + "n" * 220 + ".ipynb", _variant("ch01_partial_frank", "long"))   # feedback name > 255
    write("=1+2 ch01_formula_fay.ipynb", _variant("ch01_mistakes_dave", "fay"))          # a formula
    write("ch01_\x1b[31mred_rex.ipynb", _variant("ch01_mistakes_erin", "rex"))           # a terminal escape
    write("sec1/ch01_twin_tom.ipynb", _variant("ch01_mistakes_carol", "tom"))            # feedback names that
    write("sec1__ch01_twin_tom.ipynb", _variant("ch01_mistakes_carol", "tom's twin"))    # used to collide
    write("ch01_huge_literal_hugo.ipynb", _variant("ch01_correct_alice", "hugo", [      # 20 MB of one cell
        "data = [" + ", ".join(["0"] * 6_500_000) + "]\n"]))
    write("ch01_deep_nesting_dora.ipynb", _variant("ch01_correct_alice", "dora", [
        "depth = 1" + " + 1" * 100_000 + "\ncheck(\"q1\")\n"]))
    os.mkfifo(folder / "ch01_fifo_fred.ipynb")                                           # never readable
    os.symlink("ch01_correct_alice.ipynb", folder / "ch01_aaa_link_to_alice.ipynb")     # sorts first
    os.symlink(ROOT / "solutions" / "ch01_sinusoids.ipynb", folder / "ch01_link_to_solution_lou.ipynb")
    os.symlink(ROOT / "solutions", folder / "sec9")                                     # a folder: not followed


def main() -> None:
    for name, spec in STUDENTS.items():
        nb = build(spec)
        (HERE / f"{name}.ipynb").write_text(json.dumps(nb, indent=1) + "\n")
    # Malformed and misplaced files
    (HERE / "ch01_not_json_ada.ipynb").write_text(
        '{\n "cells": [\n  {\n   "cell_type": "code",\n   "source": "def sinusoidal_encoding(n, d):\n')
    (HERE / "ch01_not_a_notebook_ben.ipynb").write_text(
        json.dumps({"student": "ben", "answers": {"q1": "see attached PDF"}}, indent=1) + "\n")
    empty = load_exercise()
    empty["cells"] = []
    (HERE / "ch01_empty_notebook_cleo.ipynb").write_text(json.dumps(empty, indent=1) + "\n")
    no_code = load_exercise()
    no_code["cells"] = [c for c in no_code["cells"] if c["cell_type"] == "markdown"]
    (HERE / "ch01_only_markdown_dan.ipynb").write_text(json.dumps(no_code, indent=1) + "\n")
    other = load_exercise()
    other["metadata"]["posenc"] = {"exercise_set": "ch02", "copy": "exercise"}
    other["cells"] = [code_cell('import numpy as np\nfrom posenc.exercises import checker\n\ncheck = checker("ch02")\n'),
                      code_cell("def rotation(theta):\n    c, s = np.cos(theta), np.sin(theta)\n"
                                "    return np.array([[c, -s], [s, c]])\n"),
                      code_cell('check("q1")\n')]
    (HERE / "ch02_relative_shift_wendy.ipynb").write_text(json.dumps(other, indent=1) + "\n")
    anonymous = build(dict(answers=ALL_RIGHT))
    anonymous["metadata"].pop("posenc")
    anonymous["cells"] = [c for c in anonymous["cells"] if key_of(c) != "imports"]
    anonymous["cells"].insert(0, code_cell("import numpy as np\n"))
    (HERE / "my_homework_final_v2.ipynb").write_text(json.dumps(anonymous, indent=1) + "\n")


if __name__ == "__main__":
    main()
