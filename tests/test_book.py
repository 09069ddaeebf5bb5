"""The site builds with zero warnings (-W -n), executing every notebook, and the pages hold what readers need.

The executions are those of `make book` (python -m posenc.book.execute, each kernel in an empty folder,
JOBS notebooks at a time: two under `make test`, four under `make test JOBS=4`), with one difference: the
kernel is the Colab-like environment's (tests/colab_env.py), where the course package is a wheel installed
by the notebooks' first cell. So this one execution of each chapter and solution is also its "opened alone
from a launch button" test, and tests/test_colab.py runs only the notebooks the book leaves unexecuted. This
is the slowest test; under pytest-xdist it runs on one worker while the others take the rest of the suite.
The built site stays in _build/html for `make book` users and for the browser tests, and so do what `make
student-book` and `make book`'s last step make from the same executions (the student edition, the slide
decks): built here, on this worker, while the others still run the rest of the suite, instead of on one core
between the two phases of `make test`.
"""

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from posenc.book import execute
from tests import colab_env as colab
from tests.conftest import ROOT

HTML = ROOT / "_build" / "html"

# Explorers that run in the reader's browser (posenc.book.explorers); tests/browser checks that they respond.
IN_PAGE_EXPLORERS = {"notebooks/01_binary_counters_to_sinusoids": ["posenc-heatmap"],
                     "notebooks/02_relative_shift": ["posenc-circle"],
                     "notebooks/05_relative_biases": ["posenc-t5", "posenc-alibi"],
                     "notebooks/06_rotary_embeddings": ["posenc-rotary"],
                     "notebooks/07_longer_than_trained": ["posenc-spectrum"]}


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def colab_kernel_environ() -> dict:
    """A plain shell's variables with the Colab-like environment's kernel first on JUPYTER_PATH."""
    env = colab.clean_environ()
    env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(colab.kernel_path()), env.get("JUPYTER_PATH")]))
    return env


BOOK_JOBS_VARIABLE = "POSENC_BOOK_JOBS"


def book_jobs() -> str:
    """Notebooks executed at a time: `make test`'s JOBS, which its recipe hands over in POSENC_BOOK_JOBS, as
    posenc.book.execute's --jobs reads it (a number, or ``auto`` for one per core); two where the variable
    is not set, as in `make book`."""
    return os.environ.get(BOOK_JOBS_VARIABLE) or "2"


def execute_command() -> list[str]:
    """`make book`'s first step: execute every notebook of the book into jupyter-book's cache."""
    return [sys.executable, "-m", "posenc.book.execute", "--jobs", book_jobs()]


def build_book(env: dict) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """`make book`'s two steps: execute every notebook into an empty cache, then build from the cache."""
    shutil.rmtree(ROOT / "_build" / ".jupyter_cache", ignore_errors=True)    # execute everything afresh
    executed = subprocess.run(execute_command(), cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    built = subprocess.run([str(jupyter_book), "build", ".", "--all", "-W", "-n", "--keep-going"],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    return executed, built


@pytest.mark.parametrize("value, jobs", [("4", "4"), ("1", "1"), (None, "2"), ("auto", "auto")])
def test_the_book_executes_as_many_notebooks_at_a_time_as_make_test_s_jobs(monkeypatch, value, jobs):
    if value is None:
        monkeypatch.delenv(BOOK_JOBS_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(BOOK_JOBS_VARIABLE, value)
    assert execute_command()[-2:] == ["--jobs", jobs]


def make_recipe(target: str) -> str:
    """The lines of a Makefile target's recipe."""
    return re.search(rf"^{target}:.*\n((?:\t.*\n)+)", (ROOT / "Makefile").read_text(), re.M).group(1)


@pytest.mark.parametrize("target, command", [("book", "posenc.book.execute"), ("robustness", "posenc.book.robustness")])
def test_make_book_and_make_robustness_hand_their_jobs_over(target, command):
    recipe = make_recipe(target)
    assert f"$(BIN)/python -m {command} --jobs $(JOBS)" in recipe, recipe


def test_make_test_hands_its_jobs_to_the_book():
    recipe = make_recipe("test")
    assert (f"{BOOK_JOBS_VARIABLE}=$(JOBS) $(BIN)/python -m pytest -n $(JOBS) --dist loadfile "
            "--no-loadscope-reorder tests/test_book.py") in recipe, recipe


def test_the_book_kernel_of_the_tests_is_the_colab_like_environment(colab_env):
    listed = subprocess.run([sys.executable, "-m", "jupyter", "kernelspec", "list", "--json"],
                            env=colab_kernel_environ(), capture_output=True, text=True, timeout=120)
    spec = json.loads(listed.stdout)["kernelspecs"]["python3"]["spec"]
    assert spec["argv"][0] == str(colab_env), spec


@pytest.fixture(scope="module")
def book_build(colab_env) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """The book executed and built once for this file's tests."""
    return build_book(colab_kernel_environ())


@pytest.fixture(scope="module")
def executions(book_build) -> dict[Path, object]:
    """Each notebook of the book as the execution above left it (its outputs), read once for the tests below."""
    from posenc.book.cache import executed_notebook

    executed, _ = book_build
    assert executed.returncode == 0, "the notebooks did not execute (the first test says why)"
    found = {}
    for path in execute.book_notebooks():
        _, execution = executed_notebook(ROOT / path)
        assert execution is not None, f"{path}: the cache holds no execution of it"
        found[Path(path).relative_to(ROOT)] = execution
    return found


def test_book_builds_and_every_chapter_shows_math_figures_and_exercises(book_build):
    executed, result = book_build
    assert executed.returncode == 0, executed.stdout[-6000:] + executed.stderr[-3000:]
    log = result.stdout + result.stderr
    built_here = re.findall(r"(\S+\.ipynb): Executing notebook", log)
    assert not built_here, f"the build executed {built_here} again: its cache did not match"
    from_cache = set(re.findall(r"(\S+\.ipynb): Using cached notebook", log))
    assert from_cache == {str(path) for path in execute.book_notebooks()}, from_cache
    warnings = [line for line in log.splitlines() if "WARNING" in line and "IPKernelApp" not in line]
    assert result.returncode == 0 and not warnings, "\n".join(warnings) or log[-3000:]

    for page in toc_files():
        assert (HTML / f"{page}.html").exists(), f"{page} is in the toc but was not built"

    for page in [p for p in toc_files() if p.startswith("notebooks/")]:
        html = (HTML / f"{page}.html").read_text()
        assert 'class="math' in html, f"{page}: no math"
        figures = re.findall(r"<figure.*?</figure>", html, flags=re.S)
        assert figures, f"{page}: no figures"
        for figure in figures:
            assert re.search(r'<img alt="[^"]{10,}"', figure), f"{page}: a figure without alt text"
            assert "<figcaption" in figure, f"{page}: a figure without caption"
        assert 'class="exercise admonition"' in html, f"{page}: no exercise blocks"
        assert "highlight-ipythontb" not in html, f"{page}: an error in the executed output"
        assert "colab.research.google.com" in html, f"{page}: no Colab launch button"
        chapter = re.match(r"notebooks/(\d\d)_", page).group(1)
        assert f'id="posenc-quiz-ch{chapter}"' in html, f"{page}: no self-check quiz"
        for widget in IN_PAGE_EXPLORERS.get(page, ()):
            assert f'class="posenc-explorer {widget}"' in html, f"{page}: no {widget} explorer"


class _TableRows(html.parser.HTMLParser):
    """The tables of a page: for each, its class and, for each row of its body, the first cell's tag and
    whether that cell holds math."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[tuple[str, bool]]]] = []
        self._body = self._row_open = self._in_first = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "table":
            self.tables.append((attributes.get("class") or "", []))
        elif tag in ("tbody", "thead"):
            self._body = tag == "tbody"
        elif tag == "tr":
            self._row_open = True
        elif tag in ("td", "th"):
            self._in_first = self._row_open and self._body and bool(self.tables)
            if self._in_first:       # a header cell counts as one when its scope says "row"
                self.tables[-1][1].append((tag if tag == "td" or attributes.get("scope") == "row" else "th?", False))
            self._row_open = False
        elif self._in_first and "math" in (attributes.get("class") or "").split():
            self.tables[-1][1][-1] = (self.tables[-1][1][-1][0], True)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._in_first = False


def test_every_table_of_the_site_names_its_rows_with_headers(book_build):
    """In the prose's tables and those the code cells show, the first cell of each row names it (a method, a
    chapter, an option): it is the row's header, so a screen reader says the row's name with each value. A
    table whose rows have no name says so (posenc.experiments.Table(..., row_headers=False)); one whose first
    column holds math keeps plain cells (a header's name would lose the math: posenc.book.sphinxext)."""
    from posenc.experiments.summaries import UNNAMED_ROWS

    without, named, with_math, unnamed = [], 0, [], []
    for page in toc_files():
        reader = _TableRows()
        reader.feed((HTML / f"{page}.html").read_text(encoding="utf-8"))
        for number, (classes, first_cells) in enumerate(reader.tables, 1):
            tags = {tag for tag, _ in first_cells}
            if UNNAMED_ROWS in classes.split():
                unnamed.append(f"{page}, table {number}")
                continue
            if any(math for _, math in first_cells):
                with_math.append(f"{page}, table {number}")
                if tags != {"td"}:
                    without.append(f"{page}, table {number}: math in its first column, yet cells {sorted(tags)}")
                continue
            named += 1
            if tags != {"th"}:
                without.append(f"{page}, table {number}: rows begin with {[tag for tag, _ in first_cells]}")
    assert not without, "tables whose rows are not named by a header cell:\n" + "\n".join(without)
    assert named >= 90, f"only {named} tables with named rows: were the tables found?"
    assert with_math == ["book/notation, table 1"], f"tables with math in their first column: {with_math}"
    assert unnamed == ["notebooks/07_longer_than_trained, table 3", "notebooks/08_position_on_real_text, table 3",
                       "notebooks/08_position_on_real_text, table 9"], f"tables whose rows have no name: {unnamed}"


def test_where_a_results_file_was_made_the_chapter_s_live_run_reproduces_it_digit_for_digit(executions):
    """Every training chapter compares its live runs with its committed file (posenc.lib.reproducibility.agreement)
    and none may say that the file is out of date; each live run shares a run with its file, so on the platform
    the file was made on the chapter must say that it reproduces it "digit for digit". For the chapters of
    tests/conftest.py's REPRODUCED_BY_THE_BOOK, that sentence (the glued value it names) stands in for the file's
    re-run test, which skips instead of training the same run again (skip_where_the_book_reproduces); elsewhere
    it trains it."""
    from posenc.book.robustness import TRAINING_CHAPTERS, glued_values
    from posenc.experiments import results
    from posenc.lib import reproducibility as rep
    from tests.conftest import REPRODUCED_BY_THE_BOOK

    here = rep.platform_signature()
    stale_words, same_words = "changed since the file was written", "digit for digit"
    assert stale_words in rep.agreement([(1.0, 0.5)], {}, {}, here, here=here).sentence     # what they write
    assert same_words in rep.agreement([(1.0, 1.0)], {}, {}, here, here=here).sentence
    glued = {Path(notebook).with_suffix("").as_posix(): glued_values(executions[Path(notebook)])
             for notebook in TRAINING_CHAPTERS.values()}
    stale = {chapter: name for chapter, values in glued.items() for name, value in values.items()
             if stale_words in value}
    assert not stale, f"chapters that say their results file is out of date (run make experiments): {stale}"
    for chapter, notebook in TRAINING_CHAPTERS.items():       # each shares a run with its file
        path = results.RESULTS_DIR / f"{chapter}.json"
        if path.exists() and rep.same_platform(results.load_results(path)[2].get("platform")):
            page = Path(notebook).with_suffix("").as_posix()
            assert any(same_words in value for value in glued[page].values()), \
                f"{page}: {path.name} was made on this platform, yet no glued sentence says it is reproduced"
    for file, (chapter, name) in REPRODUCED_BY_THE_BOOK.items():
        if rep.same_platform(results.load_results(results.RESULTS_DIR / file)[2].get("platform")):
            sentence = glued[chapter].get(name)
            assert sentence and same_words in sentence, f"{chapter} glued as {name!r}: {sentence}"


def test_a_number_glued_for_the_prose_is_shown_rounded_where_it_is_computed(executions):
    """A cell that glues numbers and shows them (its last line: a number, a tuple, a dict) rounds them to the
    decimals the prose gives them. What this checks: no float of 7 or more decimals, such as 3.1622776601683773,
    and no NumPy scalar's repr (np.float64(1.8), from round() of a NumPy value) in its result, in every cell
    that glues (through posenc.glue or a helper such as chapter 5's glue_all). A value in scientific notation,
    such as a residual of 3e-16 that shows an identity holds to rounding, stays whole."""
    full_precision = re.compile(r"(?<![\w.])-?\d+\.\d{7,}(?![\d.eE])")
    bare = []
    for path, execution in executions.items():
        for cell in execution.cells:
            if cell.cell_type != "code" or "glue" not in cell.source:
                continue
            for output in cell.get("outputs", []):
                shown = output.get("data", {}).get("text/plain", "")
                if output.get("output_type") == "execute_result" and (full_precision.search(shown)
                                                                      or "np." in shown):
                    bare.append(f"{path.name} {cell.get('id')}: {shown[:120]}")
    assert not bare, ("show the values rounded to the decimals the prose gives them (round(x, 2) of the plain "
                      "number posenc.glue returns), or end the line with ';':\n" + "\n".join(bare))


# Characters: a glued value this long is a phrase or a sentence for the prose, which must not be shown again as
# output. The short values glued for the prose (a number, a range such as "0.051 to 0.067", a list of grid sizes)
# have 40 or fewer; the phrases and sentences 49 or more. Shorter ones (such as
# chapter 6's `live_never`, chapter 5's `live_steep_gain` and the "N seeds, created ..." notes) are kept out of
# the output by hand.
SHOWN_ONCE_FROM = 45


def test_a_sentence_glued_for_the_prose_is_not_also_shown_as_output(executions):
    """A cell whose last line glues a sentence would show it as a quoted output right above the prose that shows it
    again; such a line ends with ';' (with echo=True where Colab and `make lab` need the text, which a book build
    does not print: tests/test_glue.py). Neither may the sentence be printed or displayed in the build another way
    (print, display of Markdown or HTML), nor glued with display=True, which shows it where it is glued."""
    import ast
    import html

    from posenc.book.style import GLUE_MIME_PREFIX

    twice = []
    for path, execution in executions.items():
        sentences = set()
        for cell in execution.cells:
            for output in cell.get("outputs", []):
                glue = output.get("metadata", {}).get("scrapbook")
                data = output.get("data", {})
                plain = data.get(GLUE_MIME_PREFIX + "text/plain", data.get("text/plain", "")) if glue else ""
                if plain[:1] in "'\"" and plain and len(sentence := ast.literal_eval(plain)) >= SHOWN_ONCE_FROM:
                    sentences.add(sentence)
                    if glue.get("mime_prefix") == "":
                        twice.append(f"{path.name} {cell.get('id')}: glued with display=True: {sentence[:40]}…")
        for cell in execution.cells:
            for output in cell.get("outputs", []):
                if output.get("metadata", {}).get("scrapbook"):
                    continue
                data = output.get("data", {})
                shown = "\n".join([output.get("text", ""), data.get("text/plain", ""), data.get("text/markdown", ""),
                                   html.unescape(data.get("text/html", ""))])
                twice += [f"{path.name} {cell.get('id')}: {sentence[:60]}…" for sentence in sentences
                          if sentence in shown or repr(sentence) in shown]
    assert not twice, ("end these lines with ';', and print a sentence only through posenc.glue(..., echo=True), "
                       "which a book build does not print:\n" + "\n".join(twice))


def run_step(*argv: str) -> subprocess.CompletedProcess:
    """A step of `make student-book` or `make book` in this checkout, as make runs it (the shell's variables)."""
    return subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=1800)


def test_the_student_edition_and_the_decks_build_from_the_same_executions(book_build):
    """`make student-book` with -W (no warning), reusing the executions above, and the decks written into the
    site and copied into the student edition (what tests/browser checks next)."""
    executed, built = book_build
    assert executed.returncode == 0 and built.returncode == 0, "the book did not build (the test above says why)"
    student = run_step("-m", "posenc.book.editions", "student", "-q", "-W", "-n", "--keep-going")
    log = student.stdout + student.stderr
    assert student.returncode == 0, log[-6000:]
    decks = run_step("-m", "posenc.book.slides", "--copy-to", str(ROOT / "_build" / "student" / "_build" / "html"))
    assert decks.returncode == 0, (decks.stdout + decks.stderr)[-6000:]
