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
  const fitAll = () => document.querySelectorAll(".reveal .slides section").forEach(fitEquations);
  Reveal.initialize({
    width: 1280, height: 720, margin: 0.04, center: false, hash: true, transition: "none",
    controlsTutorial: false, slideNumber: "c/t", pdfMaxPagesPerSlide: 1, plugins: [RevealNotes],
  })
    .then(mathjaxReady)
    .then(() => MathJax.typesetPromise())
    .then(() => {
      fitAll();
      Reveal.on("slidechanged", event => fitEquations(event.currentSlide));
      Reveal.layout();
      document.body.dataset.fitted = "yes";
    });
})();
