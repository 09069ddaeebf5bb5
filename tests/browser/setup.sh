#!/usr/bin/env bash
# Install what the browser tests need; quick when everything is there already.
#
#   tests/browser/setup.sh          (the Makefile runs it before the tests: make browser-setup)
#
# 1. What the book needs: Debian's Chromium, reveal.js and MathJax (book/setup.sh). The tests drive that
#    Chromium (POSENC_CHROMIUM to choose another binary) and answer the pages' MathJax CDN requests from that
#    copy of MathJax, so they run without internet access.
# 2. Playwright for Python into the project's virtual environment (the version pinned in constraints.txt);
#    never 'playwright install'.
# 3. axe-core (the accessibility engine) from the npm registry (python -m posenc.book.browser fetch axe-core,
#    the version pinned in posenc/book/browser.py); the tests inject it into every page they open.
#
# Chromium or axe-core that cannot be installed is reported and the script still succeeds: the tests then
# skip (no Chromium) or say what is missing. A failing pip install is an error.
set -uo pipefail
cd "$(dirname "$0")/../.."

PYTHON=${PYTHON:-.venv/bin/python}
PLAYWRIGHT_PIN=$(grep -i '^playwright==' constraints.txt 2>/dev/null | head -1)
PLAYWRIGHT_PIN=${PLAYWRIGHT_PIN:-playwright==1.65.2}
say() { echo "browser-setup: $*"; }

# 1. Chromium, reveal.js and MathJax ----------------------------------------------------------------
PYTHON=$PYTHON book/setup.sh

# 2. Playwright for Python (the driver only) ---------------------------------------------------------
if ! "$PYTHON" -c "import importlib.metadata as m, sys; sys.exit(m.version('playwright') != '${PLAYWRIGHT_PIN#*==}')" 2>/dev/null; then
    say "installing $PLAYWRIGHT_PIN into $("$PYTHON" -c 'import sys; print(sys.prefix)')..."
    if ! "$PYTHON" -m pip install --quiet "$PLAYWRIGHT_PIN" -c constraints.txt; then
        say "ERROR: pip could not install $PLAYWRIGHT_PIN"
        exit 1
    fi
fi

# 3. axe-core ------------------------------------------------------------------------------------
"$PYTHON" -m posenc.book.browser fetch axe-core || \
    say "without axe-core the accessibility checks fail (install npm, or set POSENC_AXE_DIR)."
exit 0
