// The course site's own script, added to every page by posenc.book.sphinxext (styles: posenc-site.css).
// 1. Accessible names that contain the text a button shows (WCAG 2.5.3 "label in name", axe's rule
//    label-content-name-mismatch), for two buttons of the theme:
//    - the search field shows "Search Ctrl+K" but was named "Search": it is named by what it shows, and
//      announces its shortcut;
//    - the colour-mode button shows the icon of the current mode (its title: "Light", "Dark", "System
//      Settings") but was named "Color mode": the name now says the mode too, and follows it.
// 2. Boxes that scroll sideways (wide equations, tables, code) say so: their content fades out towards the
//    edge past which it goes on (classes posenc-more-left / posenc-more-right).
// 3. The theme's left sidebar (the course's title, the search field, the table of contents) is a landmark,
//    "Course" (axe's rule region: all content inside landmarks); only its table of contents was one ("Main"),
//    and the course's title sat outside every landmark. On a phone the theme moves the sidebar's content into
//    a dialog, named "Course" too; the right sidebar's dialog is named "On this page".
// 4. The sidebars' buttons work. Both themes' scripts listen on the first .primary-toggle and .secondary-toggle
//    of the page only (pydata-sphinx-theme issue #2451, since 0.17): buttons in the top bar, which this layout
//    hides. The buttons a reader sees, in the article's header, did nothing: on a phone, the table of contents
//    could not be opened, nor the page's contents. A click on one of them is handed to the first, so the themes
//    do what they would: on a wide window the left sidebar hides and comes back, on a narrower one a dialog
//    opens. They are named as the hidden ones are ("Site navigation", "On this page"), not "Toggle primary
//    sidebar", and their tooltips say so too. Their tooltips do not come up over the header when a dialog
//    closes and gives the button its focus back (sphinx-book-theme dismisses the first button's only).
// 5. A link followed inside a dialog closes it (the page scrolled behind it, and it stayed open). A link to a
//    place on the page, followed with Enter, a click or a tap, brings its heading under the header and gives
//    it the focus: with Enter, the theme closed the dialog at once and the page stopped short.
(() => {
  "use strict";

  function nameSearchFields() {
    for (const button of document.querySelectorAll(".search-button-field[aria-label]")) {
      button.removeAttribute("aria-label");
      button.setAttribute("aria-keyshortcuts", "Control+K");
    }
  }

  function iconTitle(icon) {
    // Font Awesome turns <i title="Light"> into <svg><title>Light</title></svg>; read either.
    const title = icon && (icon.getAttribute("title") || icon.querySelector("title")?.textContent);
    return (title || "").trim();
  }

  function nameModeButtons() {
    const mode = document.documentElement.dataset.mode;
    for (const button of document.querySelectorAll(".theme-switch-button")) {
      const base = (button.dataset.posencName ??= button.getAttribute("aria-label") || "Color mode");
      const shown = iconTitle(button.querySelector(`.theme-switch[data-mode="${mode}"]`));
      button.setAttribute("aria-label", shown ? `${base}: ${shown}` : base);
    }
  }

  function markSidebar() {
    for (const sidebar of document.querySelectorAll(".bd-sidebar-primary:not([role])")) {
      sidebar.setAttribute("role", "complementary");
      sidebar.setAttribute("aria-label", "Course");
    }
    for (const [id, name] of [["pst-primary-sidebar-modal", "Course"], ["pst-secondary-sidebar-modal", "On this page"]]) {
      const dialog = document.getElementById(id);
      if (dialog && !dialog.hasAttribute("aria-label")) dialog.setAttribute("aria-label", name);
    }
  }

  // The visible buttons' tooltips (Bootstrap's, shown 500 ms after the pointer or the focus comes onto the
  // button; sphinx-book-theme dismisses the first button's only). A click turns the button's tooltip off: a tap
  // counts as the pointer coming onto the button, and hide() does not cancel a tooltip still in its delay, which
  // then came up over the header, behind the dialog, and stayed; so did the one asked for by the focus a
  // closing dialog gives back to the button, and it stayed while the button had the focus. The tooltip is on
  // again a little after the click, or, where a dialog opened, after it closed, so that no tooltip asked for
  // before comes up, even under a pointer resting on the button.
  function tooltipOf(button) {
    return window.bootstrap?.Tooltip?.getInstance(button);
  }

  function nameTooltip(button, name) {
    // Bootstrap moves the title into data-bs-original-title when it makes the tooltip: set whichever is there.
    button.setAttribute(button.hasAttribute("title") ? "title" : "data-bs-original-title", name);
  }

  const SIDEBAR_DIALOGS = "#pst-primary-sidebar-modal, #pst-secondary-sidebar-modal";
  const TOOLTIP_DELAY = 500;       // ms before a tooltip shows: pydata-sphinx-theme's TriggerTooltip (bootstrap.js)
  const waking = new Map();        // button -> the timer that turns its tooltip on again

  function anyDialogOpen() {
    return [...document.querySelectorAll(SIDEBAR_DIALOGS)].some((dialog) => dialog.open);
  }

  const quieted = new Set();      // buttons whose tooltip a click has turned off

  function quietTooltip(button) {
    clearTimeout(waking.get(button));
    waking.delete(button);
    quieted.add(button);
    tooltipOf(button)?.disable();
    tooltipOf(button)?.hide();
  }

  // On again past the delay of any tooltip asked for by then, which is refused: after a click (a tap's, or one
  // the pointer asked for just before: on a wide window the page moves under it as the sidebar hides) and after
  // a dialog closes (for a pointer resting on the button, the browser tells the button about 150 ms later). A
  // pointer or the focus leaving the button turns it on at once, unless a later turn on is pending. It comes
  // back as a new tooltip: Bootstrap's would remember the pointer or the focus it was told of while it was off,
  // and would not show again until both had left.
  const LATER = TOOLTIP_DELAY + 100;

  function wakeTooltip(button, after = 0) {
    if (!quieted.has(button) || (!after && waking.has(button))) return;
    clearTimeout(waking.get(button));
    waking.set(button, setTimeout(() => {
      waking.delete(button);
      if (anyDialogOpen() || !window.bootstrap?.Tooltip) return;
      quieted.delete(button);
      tooltipOf(button)?.dispose();
      new window.bootstrap.Tooltip(button, {delay: {show: TOOLTIP_DELAY, hide: 100}});   // as the theme makes it
    }, after));
  }

  function wakeTooltips(buttons) {
    for (const button of buttons) {
      for (const type of ["mouseleave", "focusout"]) {
        button.addEventListener(type, () => anyDialogOpen() || wakeTooltip(button));
      }
    }
    for (const dialog of document.querySelectorAll(SIDEBAR_DIALOGS)) {
      dialog.addEventListener("close", () => buttons.forEach((button) => wakeTooltip(button, LATER)));
    }
  }

  // A link followed from a dialog. To another page: the dialog is closed behind it (going back would find it
  // open). To a place on this page: the theme closes the dialog at once when the link is followed with Enter
  // (its backdrop handler takes the key's click, at (0, 0), for one outside the dialog), and then gives the
  // button its focus back, so the page stopped short of the heading and the next Tab went back to the top.
  // Here the dialog is closed first; once the theme has put the sidebar back, the page goes to the heading,
  // which takes the focus.

  // Cmd opens a link elsewhere on Apple's systems only: on Linux and Windows, Chromium follows a link clicked
  // with the Meta key (Windows, Super) in the same tab.
  const APPLE = /Mac|iPhone|iPad|iPod/.test(navigator.userAgentData?.platform || navigator.platform || "");

  function isPlainClick(event) {
    return event.button === 0 && !(event.ctrlKey || (APPLE && event.metaKey) || event.shiftKey || event.altKey);
  }

  // The id a fragment names once decoded, as the browser decodes it (HTML's "find a potential indicated
  // element"): every %XX to its byte, the bytes read as UTF-8. A stray "%" stays as it is, and does not keep the
  // rest from being decoded ("caf%C3%A9-50%" names "café-50%"); nothing here throws.
  function decodedFragment(fragment) {
    const bytes = fragment.split(/(%[0-9A-Fa-f]{2})/).flatMap((piece) =>
      /^%[0-9A-Fa-f]{2}$/.test(piece) ? [parseInt(piece.slice(1), 16)] : [...new TextEncoder().encode(piece)]);
    return new TextDecoder("utf-8", {ignoreBOM: true}).decode(new Uint8Array(bytes));
  }

  function placeOnThisPage(link) {
    const elsewhere = link.origin !== location.origin || link.pathname !== location.pathname
      || link.search !== location.search;
    if (elsewhere || !link.getAttribute("href").includes("#")) return null;
    const fragment = link.hash.slice(1);
    if (!fragment) return document.querySelector(".bd-article h1") || document.body;   // "#": the page's top
    return document.getElementById(fragment) || document.getElementById(decodedFragment(fragment));
  }

  function goTo(place, hash) {
    if (location.hash !== hash) location.hash = hash;        // "" for "#": the page's address loses its old place
    const heading = place.matches("h1, h2, h3, h4, h5, h6") ? place
      : place.querySelector(":scope > h1, :scope > h2, :scope > h3, :scope > h4, :scope > h5, :scope > h6") || place;
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
    place.scrollIntoView();
    heading.focus({preventScroll: true});
  }

  function followLinksOutOfDialogs() {
    for (const dialog of document.querySelectorAll(SIDEBAR_DIALOGS)) {
      dialog.addEventListener("click", (event) => {
        const link = event.target.closest("a[href]");
        if (!link || !dialog.open || event.defaultPrevented) return;
        if (!isPlainClick(event)) {
          // Opened elsewhere (a new tab or window): the dialog stays. Ctrl+Enter's click comes at (0, 0), which
          // the theme's backdrop handler would take for a click outside the dialog.
          event.stopPropagation();
          return;
        }
        const place = placeOnThisPage(link);
        if (!place) {
          setTimeout(() => dialog.open && dialog.close());
          return;
        }
        event.preventDefault();
        event.stopPropagation();
        dialog.addEventListener("close", () => setTimeout(() => goTo(place, link.hash)), {once: true});
        dialog.close();
      }, true);
    }
  }

  function forwardSidebarButtons() {
    const buttons = [];
    for (const selector of [".primary-toggle", ".secondary-toggle"]) {
      const [first, ...others] = document.querySelectorAll(selector);
      for (const button of others) {
        const name = first.getAttribute("aria-label");
        if (name) {
          button.setAttribute("aria-label", name);
          nameTooltip(button, name);
        }
        button.addEventListener("click", (event) => {
          event.preventDefault();
          quietTooltip(button);
          first.click();
          wakeTooltip(button, LATER);
        });
        buttons.push(button);
      }
    }
    wakeTooltips(buttons);
  }

  const SCROLLERS = "div.math mjx-container, .pst-scrollable-table-container, .table-wrapper, .bd-article pre, .bd-article .output";

  function markEdges(box) {
    const hidden = box.scrollWidth - box.clientWidth;
    box.classList.toggle("posenc-more-left", hidden > 1 && box.scrollLeft > 1);
    box.classList.toggle("posenc-more-right", hidden > 1 && box.scrollLeft < hidden - 1);
  }

  function watchScrollers() {
    const resized = new ResizeObserver((entries) => entries.forEach((entry) => markEdges(entry.target)));
    for (const box of document.querySelectorAll(SCROLLERS)) {
      if (box.dataset.posencWatched) continue;
      const style = getComputedStyle(box);
      if (style.overflowX !== "auto" && style.overflowX !== "scroll") continue;
      box.dataset.posencWatched = "1";
      box.addEventListener("scroll", () => markEdges(box), {passive: true});
      resized.observe(box);
      markEdges(box);
    }
  }

  function start() {
    markSidebar();
    forwardSidebarButtons();
    followLinksOutOfDialogs();
    nameSearchFields();
    nameModeButtons();
    new MutationObserver(nameModeButtons).observe(document.documentElement, {attributes: true, attributeFilter: ["data-mode"]});
    watchScrollers();
    // MathJax typesets after the page has loaded: watch its equations once they are there.
    window.addEventListener("load", () => {
      const typeset = window.MathJax?.startup?.promise;
      (typeset ? typeset.then(watchScrollers) : Promise.resolve()).catch(() => {});
      watchScrollers();
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
