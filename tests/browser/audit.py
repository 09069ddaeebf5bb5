"""What a page does for every reader: an accessibility audit with axe-core, and the layout at a laptop's and a
phone's width.

Both run inside a page that ``pageview.inspect_page`` has open already, so they cost no extra page load:

* ``accessibility(page, axe_url)`` injects axe-core (served locally, see ``tests/browser/setup.sh``) and runs
  its default rules; ``failing(report)`` names its violations of every impact (critical, serious, moderate,
  minor), each of which fails the tests: the book, its student edition and the decks have none.
* ``layout(page)`` measures, at the current window width, every box that cuts its content off (content wider
  than an ``overflow: hidden`` or ``clip`` box), and content that makes the whole page or the article column
  wider than it is. A box that scrolls (``overflow-x: auto`` or ``scroll``) is fine: its content can be
  reached. MathJax's insides are measured as one formula (its stretchy glyphs clip on purpose), and
  visually hidden text for screen readers (``clip: rect(...)``) is not content that a reader could miss.
"""

from __future__ import annotations

import json

from tests.browser import helpers

WIDE, PHONE = 1280, 390                 # a laptop's window and a phone's screen, in CSS pixels
PHONE_HEIGHT = 844
SLACK = 1                               # px of rounding that is not a finding

_AXE = r"""
async () => {
  const results = await axe.run(document, {resultTypes: ["violations"]});
  return results.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help, helpUrl: v.helpUrl,
    nodes: v.nodes.map(n => ({target: n.target.join(" "), html: n.html.slice(0, 200),
                              summary: (n.failureSummary || "").replace(/\s+/g, " ").trim()})),
  }));
}
"""

_LAYOUT = r"""
(slack) => {
  const root = document.documentElement;
  const describe = (el) => {
    let name = el.tagName.toLowerCase();
    if (el.id) name += "#" + el.id;
    const classes = Array.from(el.classList).filter(c => !/^(notranslate|nohighlight|docutils)$/.test(c)).slice(0, 3);
    if (classes.length) name += "." + classes.join(".");
    const text = (el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 60);
    return text ? `${name} "${text}"` : name;
  };
  const visuallyHidden = (style) => style.position === "absolute" && style.clip !== "auto";
  const insideFormula = (el) => el.closest("mjx-assistive-mml")
    || (el.tagName !== "MJX-CONTAINER" && el.parentElement && el.parentElement.closest("mjx-container"));
  const contains = (style) => style.overflowX !== "visible";      // scrolls, hides or clips its content

  // Where an element's content really reaches: its elements' boxes and its text, without hidden parts.
  const reach = (el) => {
    let left = Infinity, right = -Infinity;
    const add = (rects) => {
      for (const r of rects) if (r.width > 0 && r.height > 0) { left = Math.min(left, r.left); right = Math.max(right, r.right); }
    };
    const range = document.createRange();
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {acceptNode: (node) => {
      if (node.nodeType === Node.TEXT_NODE) return NodeFilter.FILTER_ACCEPT;
      if (node.tagName === "MJX-ASSISTIVE-MML") return NodeFilter.FILTER_REJECT;
      const style = getComputedStyle(node);
      return style.display === "none" || style.visibility === "hidden" || visuallyHidden(style)
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
    }});
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeType === Node.TEXT_NODE) {
        if (!node.textContent.trim()) continue;
        range.selectNodeContents(node);
        add(range.getClientRects());
      } else {
        add([node.getBoundingClientRect()]);
      }
    }
    return [left, right];
  };

  // 1. Boxes that cut their content off.
  const clipped = [];
  for (const el of document.body.querySelectorAll("*")) {
    if (el.scrollWidth <= el.clientWidth + slack || el.clientWidth <= 2 || el.clientHeight <= 2) continue;
    if (insideFormula(el) || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.overflowX !== "hidden" && style.overflowX !== "clip") continue;
    if (style.visibility === "hidden" || visuallyHidden(style) || style.textOverflow === "ellipsis") continue;
    const box = el.getBoundingClientRect();
    const inner = [box.left + el.clientLeft, box.left + el.clientLeft + el.clientWidth];
    const [left, right] = reach(el);
    const cut = Math.max(right - inner[1], inner[0] - left);
    if (cut > slack) clipped.push(`${describe(el)}: ${Math.round(cut)} px of its content cut off (overflow-x: ${style.overflowX})`);
  }

  // 2. Content that sticks out of a container (the page, the article column) instead of scrolling in a box
  //    of its own: the innermost elements that do, outside any box that scrolls or clips.
  const stickingOut = (container, edge) => {
    const found = [];
    for (const el of container.querySelectorAll("*")) {
      if (insideFormula(el) || !el.getClientRects().length) continue;
      const r = el.getBoundingClientRect();
      if (r.right <= edge + slack || r.width === 0) continue;
      const style = getComputedStyle(el);
      if (style.position === "fixed" || style.visibility === "hidden") continue;
      let boxed = false;
      for (let up = el.parentElement; up && up !== container; up = up.parentElement) {
        if (contains(getComputedStyle(up))) { boxed = true; break; }
      }
      if (boxed) continue;
      const child = Array.from(el.children).some(c => c.getBoundingClientRect().right > edge + slack
        && getComputedStyle(c).position !== "fixed");
      if (!child) found.push(`${describe(el)} reaches ${Math.round(r.right - edge)} px past the edge`);
    }
    return found;
  };
  const pageOverflow = root.scrollWidth - root.clientWidth;
  const page = pageOverflow > slack ? stickingOut(document.body, root.clientWidth) : [];
  const article = document.querySelector("article.bd-article");
  let column = [];
  if (article && article.scrollWidth > article.clientWidth + slack) {
    const box = article.getBoundingClientRect();
    column = stickingOut(article, box.left + article.clientLeft + article.clientWidth);
  }
  return {width: root.clientWidth, pageOverflow, clipped, page, column};
}
"""


def accessibility(page, axe_url: str) -> tuple[list[dict], str | None]:
    """axe-core's violations on the page as it is now, and what went wrong when axe could not run."""
    try:
        page.add_script_tag(url=axe_url)
    except Exception as exc:  # noqa: BLE001 - reported by the test, with the way to fix it
        return [], (f"axe-core could not be loaded from {helpers.AXE_DIR} ({str(exc).splitlines()[0]}); "
                    "run tests/browser/setup.sh to fetch it")
    return page.evaluate(_AXE), None


def layout(page) -> dict:
    """Clipped boxes and content wider than the page or the article, at the window's current width."""
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
    return page.evaluate(_LAYOUT, SLACK)


def failing(violations: list[dict]) -> list[str]:
    """One line per node of each violation, whatever its impact: every one fails."""
    lines = []
    for violation in violations:
        lines.append(f"{violation['impact']} {violation['id']}: {violation['help']} ({violation['helpUrl']})")
        lines += [f"    {node['target']}: {node['summary']}" for node in violation["nodes"][:10]]
        if len(violation["nodes"]) > 10:
            lines.append(f"    ... and {len(violation['nodes']) - 10} more")
    return lines


def merged_layouts(first: dict, second: dict) -> dict:
    """Two measurements of a page at one width (before and after its explorers and quizzes were used) as
    one: every finding of either, and the larger sideways overflow."""
    both = dict(second)
    for key in ("clipped", "page", "column"):
        both[key] = first[key] + [item for item in second[key] if item not in first[key]]
    both["pageOverflow"] = max(first["pageOverflow"], second["pageOverflow"])
    return both


def layout_problems(layouts: dict[int, dict]) -> list[str]:
    """What was cut off or stuck out, at each width measured."""
    lines = []
    for width, found in sorted(layouts.items(), reverse=True):
        lines += [f"at {width} px, clipped: {item}" for item in found["clipped"]]
        if found["pageOverflow"] > SLACK:
            lines.append(f"at {width} px the whole page scrolls sideways by {found['pageOverflow']} px; "
                         + ("; ".join(found["page"][:5]) or "(nothing found to blame)"))
        lines += [f"at {width} px, wider than the article column: {item}" for item in found["column"][:10]]
    return lines


def save(name: str, violations: list[dict], layouts: dict[int, dict]) -> None:
    """Every finding, whatever its impact, in test-artifacts/accessibility/NAME.json."""
    folder = helpers.ARTIFACTS / "accessibility"
    folder.mkdir(parents=True, exist_ok=True)
    data = {"axe_version": helpers.AXE_VERSION, "violations": violations,
            "layout": {str(width): found for width, found in layouts.items()}}
    (folder / f"{name}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
