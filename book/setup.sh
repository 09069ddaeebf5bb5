#!/usr/bin/env bash
# What `make book` needs besides the Python packages; quick when everything is there already.
#
#   book/setup.sh          (the Makefile runs it before the book; tests/browser/setup.sh runs it too)
#
# 1. Chromium from Debian's packages (apt-get, only as root or with password-less sudo): it prints the slide
#    decks to PDF (python -m posenc.book.slides), driven by Playwright for Python, which never downloads a
#    browser here (POSENC_CHROMIUM to choose another binary).
# 2. reveal.js and MathJax from the npm registry, unpacked into .venv/share/posenc-browser/
#    (python -m posenc.book.browser fetch; the versions are pinned there, in posenc/book/browser.py):
#    `make book` copies them into _build/html/slides/lib/, so the decks need no CDN.
#
# What cannot be installed is reported and the script still succeeds: the book is then built without the
# decks (no npm) or without their PDFs (no Chromium), and `python -m posenc.book.slides` says why.
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}
say() { echo "book-setup: $*"; }

# 1. Chromium ------------------------------------------------------------------------------------
if ! "$PYTHON" -m posenc.book.browser chromium >/dev/null; then
    as_root=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"; else as_root="none"; fi
    fi
    if [ "$as_root" = "none" ] || ! command -v apt-get >/dev/null 2>&1; then
        say "Chromium is missing and cannot be installed here (needs apt-get as root): no PDFs of the decks," \
            "and the browser tests will be skipped."
    else
        say "installing Chromium with apt-get (Debian package 'chromium')..."
        if $as_root apt-get update -qq >/dev/null && \
           DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq chromium >/dev/null; then
            say "installed $("$PYTHON" -m posenc.book.browser chromium)"
        else
            say "apt-get could not install Chromium: no PDFs of the decks, and the browser tests will be skipped."
        fi
    fi
fi

# 2. reveal.js and MathJax -----------------------------------------------------------------------
"$PYTHON" -m posenc.book.browser fetch reveal.js mathjax || \
    say "make book cannot build the slide decks without reveal.js and MathJax (install npm, or set" \
        "POSENC_REVEAL_DIR and POSENC_MATHJAX_DIR)."
exit 0
