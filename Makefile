# Two commands do everything on a fresh machine with Python 3.11 and make:
#   make book   set up .venv, execute every notebook and build the site into _build/html
#   make test   set up .venv and run every test (what CI runs)
# Other targets: lab, exercises, bench, grade, experiments, clean.

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

.PHONY: help setup book test lab exercises bench grade experiments clean

help:
	@sed -n 's/^#  *//p' Makefile | head -4

$(STAMP): requirements.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=23"
	$(BIN)/python -m pip install --quiet -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null
	touch $(STAMP)

setup: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	@echo "The site is in _build/html/index.html"

test: $(STAMP)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadfile --nbval-lax tests/test_book.py tests notebooks exercises solutions

lab: $(STAMP)
	$(BIN)/jupyter lab

exercises: $(STAMP)
	$(BIN)/python -m posenc.authoring

bench: $(STAMP)
	$(BIN)/python -m posenc.bench

# make grade SUBMISSIONS=hand-ins/ [OUT=grades.csv] [FEEDBACK=feedback/]
SUBMISSIONS ?= hand-ins
OUT         ?= grades.csv
FEEDBACK    ?= feedback
grade: $(STAMP)
	$(BIN)/python -m posenc.grade $(SUBMISSIONS) --out $(OUT) --feedback-dir $(FEEDBACK)

experiments: $(STAMP)
	$(BIN)/python -m posenc.experiments ch04 --out results/ch04.json

clean:
	rm -rf _build .pytest_cache
