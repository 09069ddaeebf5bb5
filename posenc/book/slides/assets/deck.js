// The course's slide decks (posenc.book.slides): reveal.js at 1280 x 720, then MathJax over every slide and
// its notes (also the copies of the notes that reveal.js's print view makes), then body.dataset.fitted = "yes",
// which the PDF printer and the browser tests wait for.
(function () {
  const mathjaxReady = () => new Promise(done => {
    const wait = () => (window.MathJax && MathJax.startup && MathJax.startup.promise)
      ? MathJax.startup.promise.then(done) : setTimeout(wait, 20);
    wait();
  });
  Reveal.initialize({
    width: 1280, height: 720, margin: 0.04, center: false, hash: true, transition: "none", display: "flex",
    controlsTutorial: false, slideNumber: "c/t", pdfMaxPagesPerSlide: 1, plugins: [RevealNotes],
  })
    .then(mathjaxReady)
    .then(() => MathJax.typesetPromise())
    .then(() => { Reveal.layout(); document.body.dataset.fitted = "yes"; });
})();
