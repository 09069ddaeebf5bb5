# Two commands do everything on a fresh machine with Python 3.11 and make:
#   make book           set up .venv, execute every notebook and build the site into _build/html
#   make test           set up .venv and run every test (what CI runs), browser tests included
#   make student-book   the book without solutions into _build/student/_build/html
#   make linkcheck      check external links (needs the internet): _build/linkcheck/_build/html/output.txt
# Other targets: lab, exercises, bench, grade, experiments, browser-setup, clean.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

# One thread per process: the test workers and the book build already use both cores, and
# oversubscribed BLAS/OpenMP threads spin instead of working.
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export PYDEVD_DISABLE_FILE_VALIDATION = 1

.PHONY: help setup book student-book linkcheck browser-setup test lab exercises bench grade experiments clean

help:
	@sed -n 's/^#  *//p' Makefile | head -6

$(STAMP): requirements.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23"
	$(BIN)/python -m pip install --quiet -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	rm -rf _build/.jupyter_cache
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	@echo "The site is in _build/html/index.html"

# Reuses the executions of the last `make book` (or `make test`) where the notebooks are unchanged.
student-book: $(STAMP)
	$(BIN)/python -m posenc.book.editions student
	@echo "The student edition is in _build/student/_build/html/index.html"

linkcheck: $(STAMP)
	$(BIN)/python -m posenc.book.editions linkcheck

browser-setup: $(STAMP)
	PYTHON=$(BIN)/python tests/browser/setup.sh

# 1. unit, grader and notebook tests, with the book build (tests/test_book.py) on one of the two workers;
# 2. the student edition, reusing the book's executions; 3. the built sites in headless Chromium.
test: $(STAMP) browser-setup
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --nbval-lax tests/test_book.py tests notebooks exercises solutions --ignore=tests/browser
	$(BIN)/python -m posenc.book.editions student -q -W -n --keep-going
	$(BIN)/python -m pytest tests/browser

lab: $(STAMP)
	$(BIN)/jupyter lab

exercises: $(STAMP)
	$(BIN)/python -m posenc.exercises.authoring

bench: $(STAMP)
	$(BIN)/python -m posenc.bench

# make grade SUBMISSIONS=hand-ins/ [OUT=grades.csv] [FEEDBACK=feedback/]
SUBMISSIONS ?= hand-ins
OUT         ?= grades.csv
FEEDBACK    ?= feedback
grade: $(STAMP)
	$(BIN)/python -m posenc.grader $(SUBMISSIONS) --out $(OUT) --feedback-dir $(FEEDBACK)

experiments: $(STAMP)
	$(BIN)/python -m posenc.lib.experiments ch04 --out results/ch04.json
	$(BIN)/python -m posenc.lib.experiments ch07 --out results/ch07.json

clean:
	rm -rf _build .pytest_cache
