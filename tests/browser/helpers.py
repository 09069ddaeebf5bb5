"""Plain helpers of the browser tests: where things are, the pages of the book, a local web server.

Settings (environment variables), all optional:

* ``POSENC_SITE``: the built site to test (default ``_build/html``).
* ``POSENC_TOC``: the table of contents that lists its pages (default ``_toc.yml``); the book's
  sources are looked up next to it.
* ``POSENC_CONFIG``: the configuration the site was built with (default ``_config.yml`` beside the
  toc); to test the student edition's pages, ``_build/student-source/_config.yml``.
* ``POSENC_STUDENT_SITE``: the student edition (default ``_build/student/_build/html``).
* ``POSENC_CHROMIUM``: the Chromium binary (default: Debian's ``/usr/bin/chromium``).
* ``POSENC_MATHJAX_DIR``: the local MathJax 3 that answers the pages' CDN requests (default: where
  ``python -m posenc.book.browser fetch mathjax`` puts it).
* ``POSENC_AXE_DIR``: the folder holding axe-core's ``axe.min.js``, the accessibility engine the tests
  inject into every page (default: where ``tests/browser/setup.sh`` puts it).

Chromium (its binary and flags) and the npm packages' versions and folders are those of
``posenc.book.browser``, shared with the book's build.
* ``POSENC_ARTIFACTS``: where screenshots go (default ``test-artifacts``).
* ``POSENC_FULL_SCREENSHOTS=1`` (``make screenshots``): each page's light and phone screenshots hold the whole
  page, not its first screen, and every slide of every deck is photographed, with a contact sheet per deck;
  drawing a long page whole, or a deck slide by slide, costs Chromium seconds.
* ``POSENC_REQUIRE_BROWSER=1``: fail instead of skipping when Chromium cannot be launched (for CI).
"""

from __future__ import annotations

import contextlib
import functools
import html.parser
import http.server
import os
import re
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import yaml

from posenc.book.browser import CHROMIUM_ARGS, PACKAGES, chromium_path  # noqa: F401 - the tests' Chromium

ROOT = Path(__file__).resolve().parents[2]
MATHJAX_VERSION = PACKAGES["mathjax"].version
AXE_VERSION = PACKAGES["axe-core"].version


def _path(variable: str, default: Path) -> Path:
    value = os.environ.get(variable)
    path = Path(value) if value else default
    return path if path.is_absolute() else (ROOT / path)


SITE = _path("POSENC_SITE", ROOT / "_build" / "html")
TOC = _path("POSENC_TOC", ROOT / "_toc.yml")
BOOK = TOC.parent
CONFIG = _path("POSENC_CONFIG", BOOK / "_config.yml")
STUDENT_SITE = _path("POSENC_STUDENT_SITE", ROOT / "_build" / "student" / "_build" / "html")
ARTIFACTS = _path("POSENC_ARTIFACTS", ROOT / "test-artifacts")
SCREENSHOTS = ARTIFACTS / "screenshots"
MATHJAX_DIR = PACKAGES["mathjax"].folder
AXE_DIR = PACKAGES["axe-core"].folder


def _switched_on(variable: str) -> bool:
    return os.environ.get(variable, "") not in ("", "0", "false", "no")


REQUIRE_BROWSER = _switched_on("POSENC_REQUIRE_BROWSER")
FULL_SCREENSHOTS = _switched_on("POSENC_FULL_SCREENSHOTS")

# The CDN address of MathJax 3 in Sphinx's default mathjax_path (and jupyterquiz's fallback).
MATHJAX_CDN = re.compile(r"^https://cdn\.jsdelivr\.net/npm/mathjax@3[^/]*/es5/(?P<path>[^?#]+)")

# ---------------------------------------------------------------------------------------------------
# The pages of the book


@dataclass(frozen=True)
class Page:
    """One page of the table of contents."""

    docname: str            # e.g. "notebooks/01_binary_counters_to_sinusoids"
    source: Path | None     # the .ipynb / .md file, None when it does not exist (yet)
    part: str               # the caption of its part ("" for the root page)

    @property
    def html_path(self) -> str:
        return f"{self.docname}.html"

    @property
    def is_notebook(self) -> bool:
        return self.source is not None and self.source.suffix == ".ipynb"

    @property
    def slug(self) -> str:
        return self.docname.replace("/", "__")

    def __str__(self) -> str:
        return self.docname


SOURCE_SUFFIXES = (".ipynb", ".md", ".rst")


def _source(book: Path, docname: str) -> Path | None:
    for suffix in ("",) + SOURCE_SUFFIXES:
        candidate = book / f"{docname}{suffix}"
        if candidate.is_file() and (suffix or candidate.suffix in SOURCE_SUFFIXES):
            return candidate
    return None


def _docname(entry: str) -> str:
    entry = entry.replace("\\", "/").lstrip("./")
    for suffix in SOURCE_SUFFIXES:
        if entry.endswith(suffix):
            return entry[: -len(suffix)]
    return entry


def toc_pages(toc_path: Path = TOC) -> list[Page]:
    """Every page the table of contents lists, in reading order (globs expanded)."""
    return pages_of(yaml.safe_load(toc_path.read_text(encoding="utf-8")) or {}, toc_path.parent)


def student_pages(toc_path: Path = TOC) -> list[Page]:
    """The pages of the student edition: the book's toc as ``posenc.book.editions`` prunes it."""
    from posenc.book.editions import student_toc

    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8")) or {}
    return pages_of(student_toc(toc), toc_path.parent)


def pages_of(toc: dict, book: Path) -> list[Page]:
    """The pages of a table of contents (as loaded from its YAML), sources looked up under ``book``."""
    pages: list[Page] = []

    def add(docname: str, part: str) -> None:
        if all(p.docname != docname for p in pages):
            pages.append(Page(docname, _source(book, docname), part))

    def walk(entries, part: str) -> None:
        for entry in entries or ():
            if not isinstance(entry, dict):
                continue
            caption = entry.get("caption", part) if "file" not in entry else part
            if entry.get("file"):
                add(_docname(str(entry["file"])), part)
            if entry.get("glob"):
                for match in sorted(book.glob(str(entry["glob"]))):
                    if match.suffix in SOURCE_SUFFIXES:
                        add(_docname(str(match.relative_to(book))), part)
            for key in ("parts", "chapters", "sections", "subtrees", "entries"):
                walk(entry.get(key), caption)

    if toc.get("root"):
        add(_docname(str(toc["root"])), "")
    for key in ("parts", "chapters", "sections", "subtrees", "entries"):
        walk(toc.get(key), "")
    return pages


# ---------------------------------------------------------------------------------------------------
# Which theorem / exercise blocks a page's source has


BLOCK_DIRECTIVE = re.compile(r"^\{(?P<name>prf:[\w-]+|exercise(?:-start)?|solution(?:-start)?)\}")


def markdown_texts(source: Path) -> list[str]:
    """The Markdown of a page: the markdown cells of a notebook, or the whole text of a .md file."""
    if source.suffix == ".ipynb":
        import nbformat

        notebook = nbformat.read(source, as_version=4)
        return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]
    text = source.read_text(encoding="utf-8")
    return [re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)]


def block_counts(source: Path | None) -> dict[str, int]:
    """How many ``prf:*``, ``exercise`` and ``solution`` directives the page's source has.

    Fences are parsed as Markdown (backticks and colons), so a directive shown inside a code
    example does not count, while one nested in another directive does.
    """
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin

    counts: dict[str, int] = {}
    if source is None:
        return counts
    parser = MarkdownIt("commonmark").use(colon_fence_plugin)

    def scan(text: str) -> None:
        for token in parser.parse(text):
            if token.type not in ("fence", "colon_fence"):
                continue
            match = BLOCK_DIRECTIVE.match(token.info.strip())
            if match:
                name = match["name"].replace("-start", "")
                counts[name] = counts.get(name, 0) + 1
            if token.info.strip().startswith("{"):          # a directive: look inside it too
                scan(token.content)

    for text in markdown_texts(source):
        scan(text)
    return counts


# ---------------------------------------------------------------------------------------------------
# A local web server


MATHJAX_MOUNT = "/__mathjax__/"
AXE_MOUNT = "/__axe__/"
MOUNTS = {MATHJAX_MOUNT: MATHJAX_DIR, AXE_MOUNT: AXE_DIR}      # what the tests' servers add to a site


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, keep-alive, open to other origins; extra folders mounted under URL prefixes."""

    protocol_version = "HTTP/1.1"
    mounts: dict[str, Path] = {}

    def translate_path(self, path: str) -> str:
        clean = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        for prefix, folder in self.mounts.items():
            if clean.startswith(prefix):
                parts = [p for p in clean[len(prefix):].split("/") if p not in ("", ".", "..")]
                return str(folder.joinpath(*parts))
        return super().translate_path(path)

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@contextlib.contextmanager
def serve(directory: Path, mounts: dict[str, Path] | None = None):
    """Serve ``directory`` on 127.0.0.1 at a free port, in a thread; yields the base URL (ending in /).

    ``mounts`` maps URL prefixes such as ``/__mathjax__/`` to other folders.
    """
    handler_class = type("Handler", (_Handler,), {"mounts": dict(mounts or {})})
    handler = functools.partial(handler_class, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=f"serve {directory}", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# ---------------------------------------------------------------------------------------------------
# Links


class _Anchors(html.parser.HTMLParser):
    """The ids (and a-names) of a page, and its hrefs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href") is not None:
            self.hrefs.append(attrs["href"])


def anchors_of(text: str) -> _Anchors:
    parser = _Anchors()
    parser.feed(text)
    return parser


def static_link_problems(site: Path) -> list[str]:
    """Relative links of every page of a built site that point to a missing file or anchor."""
    problems, ids_cache = [], {}

    def ids(path: Path) -> set[str]:
        if path not in ids_cache:
            ids_cache[path] = anchors_of(path.read_text(encoding="utf-8", errors="replace")).ids
        return ids_cache[path]

    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts:
            continue
        for href in anchors_of(page.read_text(encoding="utf-8", errors="replace")).hrefs:
            parsed = urllib.parse.urlsplit(href)
            if parsed.scheme or parsed.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = page if not parsed.path else (page.parent / urllib.parse.unquote(parsed.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = page.relative_to(site)
            if not target.exists():
                problems.append(f"{where}: link {href!r} points to a missing file")
            elif parsed.fragment and target.suffix == ".html" and parsed.fragment not in ids(target):
                problems.append(f"{where}: link {href!r} points to a missing anchor")
    return problems


def open_standalone(scratch_url, new_page, name: str, *fragments):
    """A new tab on a page of its own that holds the given explorers (``posenc.book.explorers.standalone_page``)."""
    import posenc.book.explorers

    folder, url = scratch_url
    (folder / f"{name}.html").write_text(posenc.book.explorers.standalone_page(*fragments, title=name),
                                         encoding="utf-8")
    tab = new_page()
    tab.goto(f"{url}{name}.html", wait_until="load")
    return tab


def screenshot(tab, root: str, name: str) -> None:
    """A screenshot of the element ``root`` in ``SCREENSHOTS/<name>.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    tab.locator(root).screenshot(path=str(SCREENSHOTS / f"{name}.png"))


def open_chapter_explorers(base_url, site: Path, new_page, docname: str, *css_classes: str):
    """A new tab on a chapter's page of the built site and the ids of its explorers of each class (one list
    per class); the test is skipped when the site was built before the chapter existed."""
    import pytest

    if not (site / f"{docname}.html").exists():
        pytest.skip(f"{docname} has no page in {site} (built before it was added?)")
    tab = new_page()
    tab.goto(f"{base_url}{docname}.html", wait_until="load")
    return tab, [tab.eval_on_selector_all(f".{name}", "els => els.map(e => e.id)") for name in css_classes]
