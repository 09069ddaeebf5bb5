#!/usr/bin/env bash
# Install what the browser tests need; quick when everything is there already.
#
#   tests/browser/setup.sh          (the Makefile runs it before the tests)
#
# 1. Chromium from Debian's packages (apt-get, only as root or with password-less sudo). Playwright
#    never downloads a browser here: the tests drive this system Chromium (POSENC_CHROMIUM to choose
#    another binary).
# 2. Playwright for Python into the project's virtual environment (the version pinned in
#    constraints.txt).
# 3. MathJax 3 from the npm registry, unpacked into .venv/share/posenc-browser/ (POSENC_MATHJAX_DIR to
#    choose another place). The built pages load MathJax from a CDN; the tests answer those requests
#    from this copy, so they run without internet access. Nothing of it is committed.
#
# Chromium or MathJax that cannot be installed is reported and the script still succeeds: the tests
# then skip (no Chromium) or say what is missing. A failing pip install is an error.
set -uo pipefail
cd "$(dirname "$0")/../.."

PYTHON=${PYTHON:-.venv/bin/python}
PLAYWRIGHT_PIN=$(grep -i '^playwright==' constraints.txt 2>/dev/null | head -1)
PLAYWRIGHT_PIN=${PLAYWRIGHT_PIN:-playwright==1.65.2}
MATHJAX_VERSION=${MATHJAX_VERSION:-3.2.2}
MATHJAX_DIR=${POSENC_MATHJAX_DIR:-.venv/share/posenc-browser/mathjax-$MATHJAX_VERSION}

say() { echo "browser-setup: $*"; }

find_chromium() {
    for candidate in "${POSENC_CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser \
                     "$(command -v chromium 2>/dev/null)" "$(command -v chromium-browser 2>/dev/null)"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
    done
    return 1
}

# 1. Chromium ------------------------------------------------------------------------------------
if chromium_path=$(find_chromium); then
    :
else
    as_root=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"; else as_root="none"; fi
    fi
    if [ "$as_root" = "none" ] || ! command -v apt-get >/dev/null 2>&1; then
        say "Chromium is missing and cannot be installed here (needs apt-get as root); the browser tests will be skipped."
    else
        say "installing Chromium with apt-get (Debian package 'chromium')..."
        if $as_root apt-get update -qq >/dev/null && \
           DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq chromium >/dev/null; then
            chromium_path=$(find_chromium) && say "installed $chromium_path"
        else
            say "apt-get could not install Chromium; the browser tests will be skipped."
        fi
    fi
fi

# 2. Playwright for Python (the driver only; never 'playwright install') ----------------------------
if ! "$PYTHON" -c "import importlib.metadata as m, sys; sys.exit(m.version('playwright') != '${PLAYWRIGHT_PIN#*==}')" 2>/dev/null; then
    say "installing $PLAYWRIGHT_PIN into $("$PYTHON" -c 'import sys; print(sys.prefix)')..."
    if ! "$PYTHON" -m pip install --quiet "$PLAYWRIGHT_PIN" -c constraints.txt; then
        say "ERROR: pip could not install $PLAYWRIGHT_PIN"
        exit 1
    fi
fi

# 3. MathJax 3 from the npm registry ----------------------------------------------------------------
if [ ! -f "$MATHJAX_DIR/es5/tex-mml-chtml.js" ]; then
    if command -v npm >/dev/null 2>&1; then
        say "fetching mathjax@$MATHJAX_VERSION from the npm registry into $MATHJAX_DIR..."
        work=$(mktemp -d)
        if (cd "$work" && npm pack --silent "mathjax@$MATHJAX_VERSION" >/dev/null) && \
           tar -xzf "$work"/mathjax-*.tgz -C "$work" package/es5 package/LICENSE; then
            mkdir -p "$MATHJAX_DIR" && rm -rf "$MATHJAX_DIR/es5" && \
            mv "$work/package/es5" "$work/package/LICENSE" "$MATHJAX_DIR/" && say "MathJax ready"
        else
            say "could not fetch MathJax from npm; pages will try the CDN, and offline the math checks fail."
        fi
        rm -rf "$work"
    else
        say "npm is missing, so MathJax cannot be fetched; offline the math checks fail (install npm, or set POSENC_MATHJAX_DIR)."
    fi
fi
exit 0
