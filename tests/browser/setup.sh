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
# 4. axe-core (the accessibility engine) from the npm registry, unpacked beside MathJax
#    (POSENC_AXE_DIR to choose another place); the tests inject it into every page they open.
# 5. reveal.js from the npm registry, unpacked beside them (POSENC_REVEAL_DIR to choose another place):
#    `make book` copies it, with MathJax, into _build/html/slides/lib/ for the chapters' slide decks
#    (python -m posenc.book.slides), which therefore need no CDN.
#
# Chromium, MathJax, axe-core or reveal.js that cannot be installed is reported and the script still succeeds: the tests
# then skip (no Chromium) or say what is missing. A failing pip install is an error.
set -uo pipefail
cd "$(dirname "$0")/../.."

PYTHON=${PYTHON:-.venv/bin/python}
PLAYWRIGHT_PIN=$(grep -i '^playwright==' constraints.txt 2>/dev/null | head -1)
PLAYWRIGHT_PIN=${PLAYWRIGHT_PIN:-playwright==1.65.2}
MATHJAX_VERSION=${MATHJAX_VERSION:-3.2.2}
MATHJAX_DIR=${POSENC_MATHJAX_DIR:-.venv/share/posenc-browser/mathjax-$MATHJAX_VERSION}
AXE_VERSION=${AXE_VERSION:-4.14.1}
AXE_DIR=${POSENC_AXE_DIR:-.venv/share/posenc-browser/axe-core-$AXE_VERSION}
REVEAL_VERSION=${REVEAL_VERSION:-6.0.2}      # as in posenc/book/slides.py
REVEAL_DIR=${POSENC_REVEAL_DIR:-.venv/share/posenc-browser/reveal.js-$REVEAL_VERSION}

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

# 3., 4. and 5. MathJax 3, axe-core and reveal.js from the npm registry ----------------------------------------------
# npm_unpack NAME VERSION DIR PARTS...: the package's PARTS (paths inside it) into DIR; 1 when it fails.
npm_unpack() {
    local name=$1 version=$2 dir=$3; shift 3
    local work part parts=() status=1
    command -v npm >/dev/null 2>&1 || return 1
    say "fetching $name@$version from the npm registry into $dir..."
    work=$(mktemp -d)
    for part in "$@"; do parts+=("package/$part"); done
    if (cd "$work" && npm pack --silent "$name@$version" >/dev/null) && \
       tar -xzf "$work/$name-$version.tgz" -C "$work" "${parts[@]}" && mkdir -p "$dir"; then
        status=0
        for part in "$@"; do
            rm -rf "${dir:?}/$part" && mv "$work/package/$part" "$dir/" || status=1
        done
    fi
    rm -rf "$work"
    return $status
}

if [ ! -f "$MATHJAX_DIR/es5/tex-mml-chtml.js" ]; then
    if npm_unpack mathjax "$MATHJAX_VERSION" "$MATHJAX_DIR" es5 LICENSE; then
        say "MathJax ready"
    else
        say "could not fetch MathJax from npm; pages will try the CDN, and offline the math checks fail" \
            "(install npm, or set POSENC_MATHJAX_DIR)."
    fi
fi

if [ ! -f "$AXE_DIR/axe.min.js" ]; then
    if npm_unpack axe-core "$AXE_VERSION" "$AXE_DIR" axe.min.js LICENSE; then
        say "axe-core ready"
    else
        say "could not fetch axe-core from npm; the accessibility check fails (install npm, or set POSENC_AXE_DIR)."
    fi
fi

if [ ! -f "$REVEAL_DIR/dist/reveal.js" ]; then
    if npm_unpack reveal.js "$REVEAL_VERSION" "$REVEAL_DIR" dist LICENSE; then
        say "reveal.js ready"
    else
        say "could not fetch reveal.js from npm; make book cannot build the slide decks (install npm, or set POSENC_REVEAL_DIR)."
    fi
fi
exit 0
