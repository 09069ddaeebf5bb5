// The course's slide decks (posenc.book.slides): reveal.js at 1280 x 720, then MathJax over every slide and
// its notes (also the copies of the notes that reveal.js's print view makes), then body.dataset.fitted = "yes",
// which the PDF printer and the browser tests wait for. A display equation wider than its slide is scaled down
// to fit (text is never shrunk: a slide whose words do not fit fails the browser tests instead).
(function () {
  const mathjaxReady = () => new Promise(done => {
    const wait = () => (window.MathJax && MathJax.startup && MathJax.startup.promise)
      ? MathJax.startup.promise.then(done) : setTimeout(wait, 20);
    wait();
  });
  function fitEquations(section) {
    if (!section) return;
    section.querySelectorAll(".equation").forEach(box => {
      const math = box.querySelector("mjx-container");
      if (!math || !box.clientWidth) return;
      box.style.fontSize = "";
      const wide = math.scrollWidth || math.getBoundingClientRect().width;
      if (wide > box.clientWidth) {
        const size = parseFloat(getComputedStyle(box).fontSize);
        box.style.fontSize = Math.max(0.5 * size, Math.floor(size * box.clientWidth / wide) - 1) + "px";
      }
    });
  }
  // An explorer on a slide (laid out by slides.css: its main picture left, controls and readout right). One that
  // draws its picture in script offers root.posencFitSlide(width, height, px): it redraws its main picture
  // (.posenc-main) to fill width x height slide pixels, with labels px high. Every SVG's texts then get the body's
  // size in the SVG's own units (the CSS variable --posenc-label, read by slides.css), and its viewBox grows to
  // hold the larger labels (never shrinks below the explorer's own).
  const BODY_PX = 28;
  function fitExplorers(section) {
    if (!section) return;
    const frame = section.querySelector(".frame");
    if (!frame || !frame.getBoundingClientRect().width) return;
    const slideScale = frame.getBoundingClientRect().width / 1280;
    section.querySelectorAll(".explorer .posenc-explorer").forEach(root => {
      if (typeof root.posencFitSlide !== "function" || !root.getBoundingClientRect().width) return;
      const width = parseFloat(getComputedStyle(root).gridTemplateColumns);      // the main picture's column
      root.posencFitSlide(Math.floor(width), Math.floor(root.clientHeight), BODY_PX);
    });
    section.querySelectorAll(".explorer svg").forEach(svg => {
      if (!svg.getBoundingClientRect().width || svg.closest("svg") !== svg) return;
      if (!svg.dataset.viewBox) {
        const own = svg.viewBox.baseVal;
        svg.dataset.viewBox = [own.x, own.y, own.width, own.height].join(" ");
        svg.dataset.size = [svg.width.baseVal.value, svg.height.baseVal.value].join(" ");
      }
      const [x0, y0, w0, h0] = svg.dataset.viewBox.split(" ").map(Number);
      const [width0] = svg.dataset.size.split(" ").map(Number);
      // A main picture that the explorer does not draw for the slide is scaled to fill its column (whole)
      const root = svg.closest(".posenc-explorer");
      const cell = svg.classList.contains("posenc-main") && root && typeof root.posencFitSlide !== "function"
        ? [parseFloat(getComputedStyle(root).gridTemplateColumns), root.clientHeight] : null;
      svg.classList.add("posenc-fitted");
      svg.querySelectorAll("text[data-transform]").forEach(t => {      // from the explorer's own places again
        t.setAttribute("transform", t.dataset.transform);
        delete t.dataset.dx; delete t.dataset.dy;
      });
      const setLabel = () => {
        const m = svg.getScreenCTM();
        svg.style.setProperty("--posenc-label", BODY_PX / (Math.hypot(m.a, m.b) / slideScale) + "px");
        return BODY_PX / (Math.hypot(m.a, m.b) / slideScale);                 // in the SVG's units
      };
      if (!svg.getScreenCTM()) return;
      for (let round = 0; round < 6; round++) {
        const label = setLabel();
        separateLabels(svg);
        const b = svg.getBBox(), pad = 0.2 * label;
        const x = Math.min(x0, b.x - pad), y = Math.min(y0, b.y - pad);
        const w = Math.max(x0 + w0, b.x + b.width + pad) - x, h = Math.max(y0 + h0, b.y + b.height + pad) - y;
        const k = cell ? Math.min(cell[0] / w, cell[1] / h) : width0 / w0;
        svg.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
        svg.setAttribute("width", w * k);
        svg.setAttribute("height", h * k);
        Object.assign(svg.style, {width: w * k + "px", height: h * k + "px"});      // (a grid sizes its row by these)
      }
      setLabel();
    });
  }
  // Labels that the larger size makes run into each other move apart, along the direction in which they overlap
  // least, the one further from the picture's centre outwards (a rotated axis label away from its tick labels).
  function separateLabels(svg) {
    const centre = svg.getBoundingClientRect(), cx = centre.left + centre.width / 2, cy = centre.top + centre.height / 2;
    const m = svg.getScreenCTM(), unit = Math.hypot(m.a, m.b);
    const texts = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim() && t.getBoundingClientRect().width);
    for (let pass = 0; pass < 12; pass++) {
      let any = false;
      for (let i = 0; i < texts.length; i++) {
        for (let j = i + 1; j < texts.length; j++) {
          const a = texts[i].getBoundingClientRect(), b = texts[j].getBoundingClientRect();
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w <= 1 || h <= 1) continue;
          const far = (r) => Math.hypot((r.left + r.right) / 2 - cx, (r.top + r.bottom) / 2 - cy);
          const [text, r, other] = far(a) > far(b) ? [texts[i], a, b] : [texts[j], b, a];
          const [dx, dy] = w < h ? [((r.left + r.right) < (other.left + other.right) ? -1 : 1) * (w + 2), 0]
                                 : [0, ((r.top + r.bottom) < (other.top + other.bottom) ? -1 : 1) * (h + 2)];
          if (text.dataset.transform === undefined) text.dataset.transform = text.getAttribute("transform") || "";
          const tx = (+text.dataset.dx || 0) + dx / unit, ty = (+text.dataset.dy || 0) + dy / unit;
          Object.assign(text.dataset, {dx: tx, dy: ty});
          text.setAttribute("transform", `translate(${tx} ${ty}) ${text.dataset.transform}`);
          any = true;
        }
      }
      if (!any) break;
    }
  }
  const fitSlide = section => { fitEquations(section); fitExplorers(section); };
  const fitAll = () => document.querySelectorAll(".reveal .slides section").forEach(fitEquations);
  Reveal.initialize({
    width: 1280, height: 720, margin: 0.04, center: false, hash: true, transition: "none",
    controlsTutorial: false, slideNumber: "c/t", pdfMaxPagesPerSlide: 1, plugins: [RevealNotes],
  })
    .then(mathjaxReady)
    .then(() => MathJax.typesetPromise())
    .then(() => {
      fitAll();
      Reveal.on("slidechanged", event => fitSlide(event.currentSlide));
      Reveal.layout();
      // The slide shown, or in the print view (?print-pdf, every slide laid out at once) all of them.
      document.querySelectorAll(".reveal .slides section").forEach(fitExplorers);
      document.querySelectorAll(".reveal .explorer").forEach(box => box.addEventListener("input", () =>
        requestAnimationFrame(() => fitExplorers(box.closest("section")))));
      document.body.dataset.fitted = "yes";
    });
})();
