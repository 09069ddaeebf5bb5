# Two commands do everything on a fresh machine with Python 3.11 and make (another interpreter:
# make PYTHON=python3.11 ...):
#   make book           set up .venv, execute every notebook, build the site and the slide decks into _build/html
#   make test           set up .venv and run every test (what CI runs), browser tests included
#   make student-book   the book without solutions into _build/student/_build/html
#   make linkcheck      check external links (needs the internet): _build/linkcheck/_build/html/output.txt
#   make lab            JupyterLab in the course environment (LAB_ARGS="--no-browser" on a server)
# Other targets: exercises, bench, grade, experiments, robustness, screenshots, book-setup, browser-setup, clean (book/lecturers/building.md).

PYTHON ?= python3
# The Python versions the pins in constraints.txt are tested with (CI runs the first).
PYTHON_VERSIONS := 3.11
# Where to take torch from. Empty: the default index, whose Linux build of torch carries several GB of CUDA
# libraries; on Linux or WSL without an NVIDIA GPU: make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
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

.PHONY: help check-python setup book book-setup student-book linkcheck screenshots browser-setup test lab exercises bench grade gradescope experiments robustness clean

help:
	@sed -n 's/^#  *//p' Makefile | head -8

# Refuses, in one line, an interpreter outside PYTHON_VERSIONS: the existing .venv's, else $(PYTHON).
check-python:
	@py=$(PYTHON); fix=""; \
	if test -x $(BIN)/python; then py=$(BIN)/python; fix="rm -rf $(VENV), then "; fi; \
	version=$$($$py --version 2>&1 | sed -n 's/^Python \([0-9]*\.[0-9]*\).*/\1/p'); \
	case " $(PYTHON_VERSIONS) " in *" $$version "*) ;; *) \
	  echo "error: this course needs Python $(PYTHON_VERSIONS), but $$py is $${version:-not a working Python}: $${fix}pick one with: make PYTHON=python3.11 $(or $(MAKECMDGOALS),setup)" >&2; \
	  exit 1;; esac

# uv installs the packages (the pins of constraints.txt, with a fraction of pip's CPU time) and keeps a cache
# from which the tests' throwaway environments (tests/colab_env.py) are linked in seconds; pip stays in .venv
# for what calls it. uv reads none of pip's configuration, so the folders of wheels pip is pointed at
# (PIP_FIND_LINKS or pip's config: a local CPU build of torch, say) are handed to it.
# --compile-bytecode: each module's .pyc is written once here, as pip does by default and uv does not. Where
# Python may not write them as it imports (PYTHONDONTWRITEBYTECODE, set where the course is tested) every
# process would otherwise compile what it imports from source again: torch's import alone costs about 6 s of
# CPU more in each process that makes it. --excludes leaves out the packages uv-excludes.txt lists (the file
# says why), and an older .venv that has them loses them.
UV         := $(BIN)/uv
FIND_LINKS ?= $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
UV_INSTALL  = $(UV) pip install --quiet --compile-bytecode --excludes uv-excludes.txt --python $(BIN)/python $(foreach links,$(FIND_LINKS),--find-links $(links))

$(STAMP): requirements.txt constraints.txt uv-excludes.txt pyproject.toml setup.py | check-python
	test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	test -x $(UV) || $(PYTHON) -m pip --python $(BIN)/python install --quiet "$$(grep '^uv==' constraints.txt)" || \
	  { $(BIN)/python -m ensurepip --default-pip >/dev/null && $(BIN)/python -m pip install --quiet "$$(grep '^uv==' constraints.txt)"; }
	$(if $(TORCH_INDEX),$(UV_INSTALL) --no-deps --index-url $(TORCH_INDEX) "$$(grep '^torch==' constraints.txt)")
	$(UV_INSTALL) "pip>=23" -r requirements.txt -c constraints.txt
	$(UV_INSTALL) --no-deps --no-build-isolation -e .
	$(UV) pip uninstall --quiet --python $(BIN)/python $$(grep -v '^#' uv-excludes.txt)
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null
	$(BIN)/python -m ipykernel install --sys-prefix --name posenc-checkout --display-name "Python 3 (the course's checkout)" >/dev/null
	touch $(STAMP)

setup: $(STAMP)

# The slide decks (python -m posenc.book.slides) use reveal.js and MathJax from npm and Debian's Chromium for
# their PDFs, which book-setup installs (book/setup.sh).
book: $(STAMP) book-setup
	rm -rf _build/.jupyter_cache
	$(BIN)/python -m posenc.book.execute --jobs $(JOBS)
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	$(BIN)/python -m posenc.book.slides
	@echo "The site is in _build/html/index.html"

# Reuses the executions of the last `make book` (or `make test`) where the notebooks are unchanged.
student-book: $(STAMP)
	$(BIN)/python -m posenc.book.editions student
	$(BIN)/python -m posenc.book.slides --site _build/student/_build/html
	@echo "The student edition is in _build/student/_build/html/index.html"

linkcheck: $(STAMP)
	$(BIN)/python -m posenc.book.editions linkcheck

# make screenshots: every page of the built site (make book) photographed whole, light at 1280 px and at a
# phone's 390 px, and every slide of every deck with a contact sheet per deck, into test-artifacts/ (make test
# keeps the pages' first screens only).
screenshots: $(STAMP) browser-setup
	@test -f _build/html/index.html || { echo "error: no built site in _build/html: run make book first" >&2; exit 1; }
	POSENC_FULL_SCREENSHOTS=1 $(BIN)/python -m pytest -n $(JOBS) --dist loadgroup tests/browser/test_pages.py \
	  tests/browser/test_slides.py -k "screenshots or starts_without_errors"

book-setup: $(STAMP)
	PYTHON=$(BIN)/python book/setup.sh

# book-setup's Chromium, reveal.js and MathJax, and what only the tests need (axe-core).
browser-setup: $(STAMP)
	PYTHON=$(BIN)/python tests/browser/setup.sh

# 1. unit and grader tests, the book build (tests/test_book.py: every chapter and solution executed
# once, JOBS at a time (POSENC_BOOK_JOBS), alone in a Colab-like environment where the notebook's first
# cell installed the package from a wheel) and the exercise pages run alone in that environment by nbval
# (tests/test_colab.py); the notebooks that need no torch run again in Colab's own versions on Python 3.12
# (tests/test_colab_versions.py); test_book.py is given first so that it starts at once on a worker of its
# own (--no-loadscope-reorder keeps the order of the files given), and after the book it builds, from the
# same executions, the student edition and the slide decks (`make student-book`, `make book`'s last step)
# while the other workers still run the rest; 2. the built sites and decks in headless Chromium, the pages
# shared out between the JOBS workers (each with its own Chromium). JOBS=2 fits CI's two cores; on a bigger
# machine, make test JOBS=4.

test: $(STAMP) browser-setup
	tests/grader/setup.sh
	POSENC_BOOK_JOBS=$(JOBS) $(BIN)/python -m pytest -n $(JOBS) --dist loadfile --no-loadscope-reorder tests/test_book.py tests --ignore=tests/browser
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup tests/browser

LAB_ARGS ?=
lab: $(STAMP)
	$(BIN)/jupyter lab --ServerApp.root_dir="$(CURDIR)" $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

exercises: $(STAMP)
	$(BIN)/python -m posenc.exercises.authoring

# make bench: the pieces (notebooks, encodings, training, checks, grading); make bench BENCH=suite: make test
# in a fresh clone, each recipe line's wall and CPU seconds, the machine's busy seconds and the load, the slowest tests
# and the CPU seconds of the costliest test files (python -m posenc.bench --suite).
BENCH ?=
bench: $(STAMP)
	$(BIN)/python -m $(if $(filter suite,$(BENCH)),posenc.bench --suite,posenc.bench)

# make grade SUBMISSIONS=hand-ins/ [OUT=grades.csv] [FEEDBACK=feedback/] [GRADE_ARGS="--set ch01 ..."]
# (hand-ins/, grades*.csv, feedback/ and the lecturer's report are in .gitignore: student data stays out of
# git). The grader's exit status 1 (some files could not be graded: their rows say why) is routine, not a
# failure of make; 2 (a usage error), 3 (a fault of the grader's own) and anything else are. The manual: the
# course site, For lecturers, Grading a class (book/lecturers/grading.md).
SUBMISSIONS ?= hand-ins
OUT         ?= grades.csv
FEEDBACK    ?= feedback
GRADE_ARGS  ?=
grade: $(STAMP)
	@status=0; $(BIN)/python -m posenc.grader $(SUBMISSIONS) --out $(OUT) --feedback-dir $(FEEDBACK) $(GRADE_ARGS) || status=$$?; \
	if [ $$status -eq 1 ]; then echo "Note: at least 1 file could not be graded (its row in $(OUT) says why); everything else was."; \
	elif [ $$status -ne 0 ]; then exit $$status; fi

# make gradescope SET=ch01 [EXTRA=~/private-checks]: the Gradescope autograder autograder_ch01.zip
# (the course site, For lecturers, Gradescope: book/lecturers/gradescope.md)
SET   ?= ch01
EXTRA ?=
gradescope: $(STAMP)
	$(BIN)/python -m posenc.grader gradescope $(SET) --out autograder_$(SET).zip $(if $(EXTRA),--extra-tests $(EXTRA))

# Every sweep the registry knows (posenc.experiments.registry), then the held-out replications; chapter 7's
# learning-rate search, run once, is python -m posenc.experiments lr-search --out results/ch07_lr_search.json.
experiments: $(STAMP)
	set -e; for sweep in $$($(BIN)/python -m posenc.experiments list); do \
	  $(BIN)/python -m posenc.experiments run $$sweep --out results/$$sweep.json; done; \
	for sweep in $$($(BIN)/python -m posenc.experiments list --replicated); do \
	  $(BIN)/python -m posenc.experiments replicate $$sweep --out results/$${sweep}_replication.json; done

# Every chapter that trains a model, executed again with its torch seeds shifted by ten constants (a stand-in
# for other machines): results/robustness.json, checked by tests/test_robustness.py. CHAPTERS="ch05 ch07"
# runs only those; CHAPTERS=--stale only the chapters whose code changed since the file was written.
CHAPTERS ?=
robustness: $(STAMP)
	$(BIN)/python -m posenc.book.robustness --jobs $(JOBS) $(CHAPTERS)

clean:
	rm -rf _build .pytest_cache
