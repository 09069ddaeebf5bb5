"""The browser side of the book: the one home of the Chromium helper and of the npm packages' pins.

The slide decks (``posenc.book.slides``) load reveal.js and MathJax from the site itself and are printed to PDF
by headless Chromium; the browser tests (``tests/browser``) drive the same Chromium, answer the pages' MathJax
requests from the same copy, and inject axe-core. So the versions of these packages, where they are unpacked
and how Chromium is found and started are written here once:

    python -m posenc.book.browser fetch reveal.js mathjax     # what book/setup.sh runs (make book)
    python -m posenc.book.browser fetch axe-core              # what tests/browser/setup.sh adds
    python -m posenc.book.browser chromium                    # the Chromium binary, or exit status 1

The packages come from the npm registry (``npm pack``) and are unpacked into ``.venv/share/posenc-browser/``;
nothing of them is committed. ``POSENC_REVEAL_DIR``, ``POSENC_MATHJAX_DIR``, ``POSENC_AXE_DIR`` choose other
folders, ``POSENC_CHROMIUM`` another Chromium binary.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from posenc.paths import ROOT

__all__ = ["CHROMIUM_ARGS", "PACKAGES", "NpmPackage", "chromium_path", "fetch", "main", "package_dir"]

SHARE = ROOT / ".venv" / "share" / "posenc-browser"


@dataclass(frozen=True)
class NpmPackage:
    """One package of the npm registry that the book or its tests use, and the parts of it they keep."""

    name: str
    version: str
    parts: tuple[str, ...]          # paths inside the package
    marker: str                     # a file that is there once it is unpacked
    variable: str                   # the environment variable that chooses another folder
    used_by: str

    @property
    def folder(self) -> Path:
        value = os.environ.get(self.variable)
        if not value:
            return SHARE / f"{self.name}-{self.version}"
        return Path(value) if Path(value).is_absolute() else ROOT / value

    @property
    def ready(self) -> bool:
        return (self.folder / self.marker).is_file()


PACKAGES = {package.name: package for package in (
    NpmPackage("reveal.js", "6.0.2", ("dist", "LICENSE"), "dist/reveal.js", "POSENC_REVEAL_DIR",
               "the slide decks (make book)"),
    NpmPackage("mathjax", "3.2.2", ("es5", "LICENSE"), "es5/tex-svg-full.js", "POSENC_MATHJAX_DIR",
               "the slide decks (make book) and the browser tests, which answer the pages' CDN requests with it"),
    NpmPackage("axe-core", "4.14.1", ("axe.min.js", "LICENSE"), "axe.min.js", "POSENC_AXE_DIR",
               "the browser tests' accessibility audit"),
)}


def package_dir(name: str) -> Path:
    """Where a package of ``PACKAGES`` is (or will be) unpacked."""
    return PACKAGES[name].folder


def fetch(names, log=print) -> list[str]:
    """Unpack the named packages from the npm registry where they are missing; return those that failed."""
    failed = []
    for name in names:
        package = PACKAGES[name]
        if package.ready:
            continue
        if shutil.which("npm") is None:
            log(f"posenc.book.browser: npm is missing: cannot fetch {name} ({package.used_by})")
            failed.append(name)
            continue
        log(f"posenc.book.browser: fetching {name}@{package.version} from the npm registry into {package.folder}")
        try:
            _unpack(package)
        except (OSError, subprocess.CalledProcessError, tarfile.TarError, KeyError) as exc:
            log(f"posenc.book.browser: could not fetch {name}: {exc}")
            failed.append(name)
    return failed


def _unpack(package: NpmPackage) -> None:
    with tempfile.TemporaryDirectory(prefix="posenc-npm-") as work:
        subprocess.run(["npm", "pack", "--silent", f"{package.name}@{package.version}"], cwd=work, check=True,
                       stdout=subprocess.DEVNULL)
        archive = next(Path(work).glob("*.tgz"))
        with tarfile.open(archive) as tar:
            members = [m for m in tar.getmembers()
                       if any(m.name == f"package/{part}" or m.name.startswith(f"package/{part}/")
                              for part in package.parts)]
            tar.extractall(work, members=members, filter="data")
        package.folder.mkdir(parents=True, exist_ok=True)
        for part in package.parts:
            target = package.folder / part
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            shutil.move(str(Path(work) / "package" / part), str(target))


# ---------------------------------------------------------------------------------------------------
# Chromium: Debian's package (book/setup.sh installs it), driven by Playwright for Python, which never
# downloads a browser here.

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]


def chromium_path() -> str | None:
    """The Chromium binary: ``POSENC_CHROMIUM``, else Debian's package, else one on the PATH."""
    for candidate in (os.environ.get("POSENC_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser",
                      shutil.which("chromium"), shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    fetching = commands.add_parser("fetch", help="unpack npm packages where they are missing")
    fetching.add_argument("names", nargs="+", choices=sorted(PACKAGES))
    commands.add_parser("chromium", help="print the Chromium binary (exit status 1 when there is none)")
    where = commands.add_parser("dir", help="print where a package is unpacked")
    where.add_argument("name", choices=sorted(PACKAGES))
    args = parser.parse_args(argv)
    if args.command == "fetch":
        return 1 if fetch(args.names) else 0
    if args.command == "dir":
        print(package_dir(args.name))
        return 0
    path = chromium_path()
    if path:
        print(path)
    return 0 if path else 1


if __name__ == "__main__":
    sys.exit(main())
