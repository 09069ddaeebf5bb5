"""The site builds with zero warnings (-W -n), executing every notebook, and the pages hold what readers need.

This is the slowest test (it executes every notebook once); under pytest-xdist it runs on one worker while
the other worker takes the rest of the suite. The built site stays in _build/html for `make book` users and
for the browser tests.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

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


def build_book() -> subprocess.CompletedProcess:
    shutil.rmtree(ROOT / "_build" / ".jupyter_cache", ignore_errors=True)    # execute everything afresh
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    return subprocess.run([str(jupyter_book), "build", ".", "--all", "-W", "-n", "--keep-going"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800)


def test_book_builds_and_every_chapter_shows_math_figures_and_exercises():
    result = build_book()
    log = result.stdout + result.stderr
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
