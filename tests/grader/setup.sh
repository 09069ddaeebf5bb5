#!/usr/bin/env bash
# Installs what the batch grader's sandbox needs: bubblewrap (the program bwrap), from Debian's or Fedora's
# packages. `make test` runs this first; run it by hand once before grading a class.
#
# bubblewrap runs unprivileged (it uses user namespaces). Without it the grader refuses to run unless told
# --no-sandbox, and the grader tests that need it skip, or fail when POSENC_REQUIRE_BWRAP=1 (as in CI).
set -uo pipefail

say() { echo "grader-setup: $*"; }

usable() {   # bwrap is there and can make its namespaces here
    command -v bwrap >/dev/null 2>&1 && \
        bwrap --unshare-all --die-with-parent --ro-bind / / true >/dev/null 2>&1
}

if ! command -v bwrap >/dev/null 2>&1; then
    as_root=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then as_root="sudo -n"; else as_root="none"; fi
    fi
    if [ "$as_root" = "none" ]; then
        say "bubblewrap is missing and cannot be installed here (needs root or password-less sudo)."
    elif command -v apt-get >/dev/null 2>&1; then
        say "installing bubblewrap with apt-get..."
        { $as_root apt-get update -qq && \
          DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq bubblewrap; } >/dev/null 2>&1 || \
            say "apt-get could not install bubblewrap."
    elif command -v dnf >/dev/null 2>&1; then
        say "installing bubblewrap with dnf..."
        $as_root dnf install -y -q bubblewrap >/dev/null 2>&1 || say "dnf could not install bubblewrap."
    else
        say "bubblewrap is missing and there is no apt-get or dnf to install it."
    fi
fi

if usable; then
    exit 0
fi
if command -v bwrap >/dev/null 2>&1; then
    say "bwrap is installed but cannot create namespaces here (are unprivileged user namespaces disabled?)."
fi
if [ -n "${POSENC_REQUIRE_BWRAP:-}" ] && [ "${POSENC_REQUIRE_BWRAP}" != "0" ]; then
    say "ERROR: POSENC_REQUIRE_BWRAP is set and bubblewrap is not usable."
    exit 1
fi
say "the grader tests that need bubblewrap will be skipped."
exit 0
