"""The grader's corpus: notebooks to grade, not to execute (`make test` runs nbval on tests/)."""

collect_ignore_glob = ["*.ipynb", "make_corpus.py"]
