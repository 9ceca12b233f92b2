/* Figure text that would run past its figure's edge (a title, a legend entry or a note wider
   than a phone's figure, or than one panel of a projector's) is drawn smaller until it fits:
   Plotly neither wraps nor shrinks it, it cuts it.  Runs after every drawing of a figure
   (plotly_afterplot: a new figure, a resize, presentation mode), on the text Plotly has just
   drawn at its own size, so a wide window gets the figure's sizes back.  Layout only: no
   number is computed here. */
(function () {
  const TEXT = ".gtitle, .g-xtitle text, .g-ytitle text, .annotation-text, .legendtext";
  const SMALLEST = 8;   // px: below this a label is no longer read, and is left as it is

  function overflow(t, box) {
    const r = t.getBoundingClientRect();
    if (!r.width) { return null; }
    return {r: r, over: Math.max(0, box.left - r.left) + Math.max(0, r.right - box.right)};
  }

  // A one-line text still too long at the smallest size (a long column name in a legend)
  // ends in an ellipsis; the whole text shows on hover.
  function shorten(t, box) {
    if (t.querySelector("tspan.line")) { return; }  // several lines: left as they are
    const whole = t.textContent;
    let text = whole;
    while (text.length > 4) {
      const o = overflow(t, box);
      if (!o || o.over < 0.5) { break; }
      text = text.slice(0, Math.max(4, Math.floor(text.length * (1 - o.over / o.r.width)) - 2));
      t.textContent = text + "\u2026";
    }
    if (t.textContent !== whole) {
      const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
      title.textContent = whole;
      t.appendChild(title);
    }
  }

  function fit(gd) {
    const svg = gd.querySelector(".main-svg");
    if (!svg) { return; }
    const box = svg.getBoundingClientRect();
    gd.querySelectorAll(TEXT).forEach(function (t) {
      for (let step = 0; step < 6; step++) {
        const o = overflow(t, box);
        if (!o || o.over < 0.5) { return; }
        const size = parseFloat(window.getComputedStyle(t).fontSize);
        if (!(size > SMALLEST)) { break; }
        // centred text loses width on both sides, so a one-sided overflow needs twice the cut
        const centred = (t.getAttribute("text-anchor") || "") === "middle";
        const keep = Math.max(0.5, 1 - (centred ? 2 : 1) * o.over / o.r.width);
        t.style.fontSize = Math.max(SMALLEST, Math.floor(size * keep * 10) / 10) + "px";
      }
      shorten(t, box);
    });
  }

  function watch(gd) {
    if (gd.viFitText || typeof gd.on !== "function") { return; }
    gd.viFitText = true;
    gd.on("plotly_afterplot", function () { fit(gd); });
    fit(gd);
  }

  new MutationObserver(function () {
    document.querySelectorAll(".js-plotly-plot").forEach(watch);
  }).observe(document.documentElement, {childList: true, subtree: true});
})();
