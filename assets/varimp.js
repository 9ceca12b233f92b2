/* The shell's clientside callbacks (app.py): namespace "varimp". */
(function () {
  const TRUE = ["1", "true", "yes", "on"];
  const presenting = query => TRUE.includes((query.get("present") || "").toLowerCase());
  window.dash_clientside = Object.assign({}, window.dash_clientside, {varimp: {
    // Presentation mode, the active nav link, nav links with the data choice and the flag;
    // a page that cannot run on the data is dimmed, its reason the link's title.
    shell: function (pathname, search, data, limits, ids) {
      const present = presenting(new URLSearchParams(window.location.search));
      const query = new URLSearchParams((data && data.query) || "");
      if (present) { query.set("present", "1"); }
      const qs = query.toString();
      const path = window.location.pathname;
      return [present ? "vi-app vi-present" : "vi-app",
              ids.map(id => id.path + (qs ? "?" + qs : "")),
              ids.map(id => "vi-nav-link" + (id.path === path ? " vi-nav-active" : "") +
                            (limits && limits[id.path] ? " vi-nav-limited" : "")),
              ids.map(id => (limits && limits[id.path]) || ""),
              present ? "End presentation" : "Present", present ? "true" : "false"];
    },
    // The menu button opens or closes the navigation; a followed link (a new path) closes it.
    menu: function (clicks, pathname) {
      const open = window.dash_clientside.callback_context.triggered.some(
        t => t.prop_id === "vi-menu-button.n_clicks") &&
        !document.querySelector(".vi-topbar").classList.contains("vi-menu-open");
      return [open ? "vi-topbar vi-menu-open" : "vi-topbar", open ? "true" : "false"];
    },
    // Route to the current URL with the presentation flag toggled, as dcc.Link routes.
    present: function (clicks) {
      const query = new URLSearchParams(window.location.search);
      if (presenting(query)) { query.delete("present"); } else { query.set("present", "1"); }
      const qs = query.toString();
      window.history.pushState({}, "", window.location.pathname + (qs ? "?" + qs : ""));
      window.dispatchEvent(new CustomEvent("_dashprivate_pushstate"));
      return window.dash_clientside.no_update;
    },
  }});
})();

/* Upload size check in the browser.  dcc.Upload's max_size silently drops a
 * file that is too large; this tells the user why.  A wrapper element carries
 * data-max-bytes (the limit) and data-note-id (the id of the message box). */
(function () {
  function mib(bytes) {
    return (bytes / 1048576).toFixed(bytes < 10 * 1048576 ? 1 : 0);
  }
  function check(files, target) {
    const wrap = target && target.closest ? target.closest("[data-max-bytes]") : null;
    if (!wrap || !files || !files.length) { return; }
    const limit = Number(wrap.getAttribute("data-max-bytes"));
    const noteId = wrap.getAttribute("data-note-id");
    const big = Array.from(files).filter(function (f) { return f.size > limit; });
    const dc = window.dash_clientside;
    if (!big.length || !noteId || !dc || !dc.set_props) { return; }
    dc.set_props(noteId, {
      className: "vi-error",
      children: big[0].name + " is " + mib(big[0].size) + " MiB; uploads are limited to " +
        mib(limit) + " MiB. Use a smaller file (fewer rows or columns). " +
        "Your current data is unchanged."
    });
  }
  document.addEventListener("change", function (e) {
    if (e.target && e.target.type === "file") { check(e.target.files, e.target); }
  }, true);
  document.addEventListener("drop", function (e) {
    if (e.dataTransfer) { check(e.dataTransfer.files, e.target); }
  }, true);
})();

/* Every figure (plotly graph of a dcc.Graph):
 * - its PNG is named after the page, the figure and the settings in the URL;
 * - a legend that runs into the mode bar (top right) is moved down by a larger top margin;
 * - in presentation mode (?present=1) every text is at least 18 px, and a figure in a
 *   .vi-figure box is as tall as the window leaves below its top. */
(function () {
  const MIN_FONT = 18;
  const TRUE = ["1", "true", "yes", "on"];

  function presenting() {
    const flag = new URLSearchParams(window.location.search).get("present") || "";
    return TRUE.includes(flag.toLowerCase());
  }

  function imageName(gd) {
    const page = window.location.pathname.replace(/^\/+|\/+$/g, "") || "home";
    const box = gd.closest(".dash-graph");
    const query = new URLSearchParams(window.location.search);
    query.delete("present");
    const settings = Array.from(query).map(kv => kv[0] + "-" + kv[1]).join("_");
    return ["varimp", page, box && box.id ? box.id : "figure", settings].filter(Boolean)
      .join("_").replace(/[^A-Za-z0-9._+-]+/g, "-").slice(0, 180);
  }

  // {path: 18} for every font size below 18 in obj (a layout or a trace); large arrays skipped.
  function smallFonts(obj, path, out) {
    Object.keys(obj).forEach(function (key) {
      const value = obj[key];
      if (key === "template" || !value || typeof value !== "object" ||
          ArrayBuffer.isView(value)) { return; }
      const here = Array.isArray(obj) ? path + "[" + key + "]" : (path ? path + "." : "") + key;
      if (/font$/i.test(key) && !Array.isArray(value)) {
        if (typeof value.size === "number" && value.size < MIN_FONT) { out[here + ".size"] = MIN_FONT; }
      } else if (!Array.isArray(value) || (value.length < 200 && typeof value[0] === "object")) {
        smallFonts(value, here, out);
      }
    });
    return out;
  }

  function enlarge(gd) {
    const layout = smallFonts(gd.layout || {}, "", {});
    if (!((gd.layout.font || {}).size >= MIN_FONT)) { layout["font.size"] = MIN_FONT; }
    if (!(((gd.layout.hoverlabel || {}).font || {}).size >= MIN_FONT)) {
      layout["hoverlabel.font.size"] = MIN_FONT;
    }
    Object.keys(gd._fullLayout || {}).forEach(function (key) {
      if (!/^[xy]axis\d*$/.test(key)) { return; }
      const axis = gd.layout[key] || {};
      if (!axis.automargin) { layout[key + ".automargin"] = true; }
      // At 18 px an x axis's first label met the y axis's lowest one at the plot's corner
      // (the convergence figure's "1" and "0.02", 5 x 3 px): labels stand 6 px further off.
      if (axis.ticklabelstandoff === undefined) { layout[key + ".ticklabelstandoff"] = 6; }
      // A log axis writes the labels between powers of ten ("2", "5") at 3/4 of its tick
      // size (13.5 px of 18); with a format they are written at the full size.
      if (gd._fullLayout[key].type === "log" && !axis.tickformat) {
        layout[key + ".tickformat"] = "~g";
      }
    });
    const traces = (gd.data || []).map(function (t, i) {
      const out = smallFonts(t, "", {});
      // A heatmap's cell text without a size is sized to its cells ("auto"): 14 px or less.
      const full = (gd._fullData || []).filter(f => f.index === i)[0] || {};
      if (full.type === "heatmap" && full.texttemplate && !((t.textfont || {}).size >= MIN_FONT)) {
        out["textfont.size"] = MIN_FONT;
      }
      return out;
    });
    const paths = Array.from(new Set([].concat(...traces.map(Object.keys))));
    const restyle = {};
    paths.forEach(p => { restyle[p] = traces.map(t => t[p] === undefined ? undefined : MIN_FONT); });
    return [Object.keys(layout).length ? layout : null, paths.length ? restyle : null];
  }

  // {"xaxisN.nticks": fewer} for each automatic x axis whose tick labels, at 18 px, touch
  // (Distributions' small histograms at 1024 px: "0.30.350.4"); each try asks for fewer
  // labels than before (Plotly's nice steps may keep some), down to 2, at most four tries.
  function tickClash(gd) {
    const full = gd._fullLayout, out = {};
    if (gd._viTickLayout !== gd.layout) { gd._viTickTries = 0; }   // a figure drawn anew
    gd._viTickLayout = gd.layout;
    if (gd._viTickTries > 3) { return out; }
    Object.keys(full).forEach(function (key) {
      const ax = full[key], x = /^xaxis\d*$/.test(key);
      // A category axis shows every category (Plotly turns its labels when they touch):
      // fewer ticks would leave categories unnamed (Measures' AUC boxes lost four names).
      if (!/^[xy]axis\d*$/.test(key) || !ax || !ax.showticklabels ||
          ax.type === "category" || ax.type === "multicategory") { return; }
      const log = ax.type === "log";
      if (ax.tickmode !== "auto" && !(log && ax.tickmode === "linear")) { return; }
      const plot = (full._plots || {})[ax._mainSubplot];
      const node = plot && plot[x ? "xaxislayer" : "yaxislayer"];
      const layer = node && node.node && node.node();
      if (!layer) { return; }
      const boxes = Array.from(layer.querySelectorAll(x ? ".xtick text" : ".ytick text"))
        .filter(t => t.textContent).map(t => t.getBoundingClientRect())
        .filter(r => r.width).sort((a, b) => x ? a.left - b.left : a.top - b.top);
      const touch = boxes.some((r, i) => i > 0 && (x ? boxes[i - 1].right + 2 > r.left
                                                      : boxes[i - 1].bottom > r.top));
      if (!touch) { return; }
      if (log) {
        // A log axis labelled at 1..9 of each decade (the "~g" format above) labels 1, 2 and
        // 5, then the powers of ten, then every other power.
        const step = {undefined: "D2", D1: "D2", D2: 1, 1: 2}[String(ax.dtick)];
        if (step !== undefined) { out[key + ".dtick"] = step; }
        return;
      }
      const fewer = Math.max(2, Math.min(boxes.length, ax.nticks || Infinity) - 1);
      if (fewer < (ax.nticks || Infinity)) { out[key + ".nticks"] = fewer; }
    });
    if (Object.keys(out).length) { gd._viTickTries = (gd._viTickTries || 0) + 1; }
    return out;
  }


  // The height of a figure in presentation mode: a figure in a .vi-figure box fills what the
  // window leaves below its top, never less than the page made it (Dependence's ten class
  // panels of 1,200 px were squeezed into 400); a figure whose 18 px legend and titles leave
  // its plot under MIN_PLOT px grows by the difference, at most twice a drawing (a plot that
  // does not grow with its figure is not chased).  Null: no change.
  const MIN_PLOT = 220;
  function fitHeight(gd) {
    const box = gd.closest(".dash-graph");
    if (!box || box.closest(".vi-hidden")) { return null; }
    const full = gd._fullLayout;
    if (box.style.height !== box._viSet) {   // first seen, or sized anew by the page
      box._viNatural = box.getBoundingClientRect().height;
    }
    let height = Math.round(box._viNatural || full.height || 0);
    if (box.closest(".vi-figure")) {
      const bar = document.querySelector(".vi-topbar");
      const top = box.getBoundingClientRect().top + window.scrollY;
      const room = top < window.innerHeight ? window.innerHeight - top
        : window.innerHeight - (bar ? bar.offsetHeight : 0);
      height = Math.max(height, 300, Math.round(room - 16));
    }
    if (gd._viRoomLayout !== gd.layout) {   // a figure drawn anew
      gd._viRoomLayout = gd.layout;
      gd._viRoomTries = 0;
      gd._viRoomExtra = 0;
    }
    const plot = full._size ? full._size.h : MIN_PLOT;
    const settled = Math.abs((full.height || 0) - height - gd._viRoomExtra) <= 4;
    if (settled && plot < MIN_PLOT - 4 && gd._viRoomTries < 2) {
      gd._viRoomTries += 1;
      gd._viRoomExtra += Math.round(MIN_PLOT - plot);
    }
    height += gd._viRoomExtra;
    if (Math.abs((full.height || 0) - height) <= 4) { return null; }
    box.style.setProperty("height", height + "px", "important");
    box._viSet = box.style.height;
    return height;
  }

  // A badge (an annotation with a background, above the plot: Importances' "sampled + exact")
  // that covers the legend is lifted above it, the top margin growing by as much; up to three
  // times a figure.  The legend then sits where it was, under the badge.
  // Plotly writes an annotation's default background "rgba(0,0,0,0)", without spaces: the
  // rule took every subplot title under the legend for a badge (Dependence's "class 0" and
  // "class 1" rose 240 px above their panels).
  function transparent(colour) {
    const c = String(colour || "").replace(/\s/g, "").toLowerCase();
    return !c || c === "transparent" || /^rgba\(.*,0(\.0*)?\)$/.test(c);
  }

  function badgeClear(gd) {
    const legend = gd.querySelector(".legend");
    const full = gd._fullLayout;
    if (((gd.layout.margin || {}).t) !== gd._viBadgeTop) { gd._viBadgeMoves = 0; }
    if (!legend || gd._viBadgeMoves > 2) { return null; }
    const a = legend.getBoundingClientRect(), out = {};
    gd.querySelectorAll(".annotation").forEach(function (node) {
      const i = Number(node.getAttribute("data-index"));
      const note = (full.annotations || [])[i];
      if (!note || transparent(note.bgcolor) ||
          note.yref !== "paper" || note.y < 1 || note.yanchor !== "bottom") { return; }
      const b = node.getBoundingClientRect();
      const overlap = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (overlap <= 0 || a.right <= b.left || b.right <= a.left) { return; }
      const lift = Math.round(b.bottom - a.top + 4);
      out["annotations[" + i + "].yshift"] = (note.yshift || 0) + lift;
      out["margin.t"] = Math.max(out["margin.t"] || 0,
                                 ((full._size && full._size.t) || full.margin.t || 0) + lift);
    });
    if (!Object.keys(out).length) { return null; }
    gd._viBadgeMoves = (gd._viBadgeMoves || 0) + 1;
    gd._viBadgeTop = out["margin.t"];
    return out;
  }

  // A legend under the plot (Measures' bars) that covers the x axis's title at 18 px moves
  // down by the overlap, the bottom margin growing with it; up to three times a figure.
  function legendBelow(gd) {
    const legend = gd.querySelector(".legend");
    const title = gd.querySelector(".g-xtitle text");
    const full = gd._fullLayout;
    if (((gd.layout.margin || {}).b) !== gd._viBelowMargin) { gd._viBelowMoves = 0; }
    if (!legend || !title || !full.legend || gd._viBelowMoves > 2) { return null; }
    const a = legend.getBoundingClientRect(), b = title.getBoundingClientRect();
    const overlap = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (overlap <= 0 || a.right <= b.left || b.right <= a.left || a.top < b.top) { return null; }
    gd._viBelowMoves = (gd._viBelowMoves || 0) + 1;
    const shift = overlap + 6, out = {};
    out["margin.b"] = ((full._size && full._size.b) || full.margin.b || 0) + shift;
    gd._viBelowMargin = out["margin.b"];
    if ((full.legend.yref || "paper") === "paper" && full._size && full._size.h) {
      out["legend.y"] = full.legend.y - shift / full._size.h;
    }
    return out;
  }

  // A text that runs out of its figure at a side at 18 px (the last tick label of a right-hand
  // subplot, "300", whose half sat past the edge at 1400 px) widens that side's margin by the
  // overflow; up to three times a figure.
  function edgeClear(gd) {
    const full = gd._fullLayout;
    const margins = (gd.layout.margin || {});
    if (margins.r !== gd._viEdgeR || margins.l !== gd._viEdgeL) { gd._viEdgeMoves = 0; }
    if (!full._size || gd._viEdgeMoves > 2) { return null; }
    const box = gd.getBoundingClientRect();
    let right = 0, left = 0;
    gd.querySelectorAll(".main-svg text").forEach(function (t) {
      const r = t.getBoundingClientRect();
      if (!r.width || !t.textContent.trim()) { return; }
      right = Math.max(right, r.right - box.right);
      left = Math.max(left, box.left - r.left);
    });
    if (right <= 0 && left <= 0) { return null; }
    const out = {};
    if (right > 0) { out["margin.r"] = Math.round(full._size.r + right + 6); }
    if (left > 0) { out["margin.l"] = Math.round(full._size.l + left + 6); }
    gd._viEdgeMoves = (gd._viEdgeMoves || 0) + 1;
    gd._viEdgeR = out["margin.r"] === undefined ? margins.r : out["margin.r"];
    gd._viEdgeL = out["margin.l"] === undefined ? margins.l : out["margin.l"];
    return out;
  }

  function legendClear(gd) {
    const legend = gd.querySelector(".legend");
    const bar = gd.querySelector(".modebar");
    // A figure drawn anew (a job's partial result, then its final one) brings the server's
    // margin back: it may be moved again, up to three times per figure (never a loop).
    if (((gd.layout.margin || {}).t) !== gd._viLegendTop) { gd._viLegendMoves = 0; }
    if (!legend || !bar || gd._viLegendMoves > 2) { return null; }
    const a = legend.getBoundingClientRect(), b = bar.getBoundingClientRect();
    const overlap = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (overlap <= 0 || a.right <= b.left || b.right <= a.left) { return null; }
    gd._viLegendMoves = (gd._viLegendMoves || 0) + 1;
    // The plot moves down by the overlap (from the top margin in use, legends' pushes
    // included); a legend placed in the figure's own coordinates moves down with it.
    const full = gd._fullLayout, shift = overlap + 4, out = {};
    out["margin.t"] = ((full._size && full._size.t) || full.margin.t || 0) + shift;
    gd._viLegendTop = out["margin.t"];
    if (full.legend && full.legend.yref === "container") {
      out["legend.y"] = full.legend.y - shift / full.height;
    }
    return out;
  }

  function afterPlot(gd) {
    if (!window.Plotly || !gd._fullLayout) { return; }
    const options = gd._context && gd._context.toImageButtonOptions;
    if (options) { options.filename = imageName(gd); }
    const layout = {};
    let restyle = null;
    Object.assign(layout, legendClear(gd) || {});
    if (!Object.keys(layout).length) { Object.assign(layout, badgeClear(gd) || {}); }
    if (presenting()) {
      const big = enlarge(gd);
      Object.assign(layout, big[0] || {});
      restyle = big[1];
      const height = fitHeight(gd);
      if (height !== null) { layout.height = height; }
      if (!big[0] && !restyle && height === null) {
        Object.assign(layout, tickClash(gd), legendBelow(gd) || {}, edgeClear(gd) || {});
      }
    }
    if (restyle) { window.Plotly.restyle(gd, restyle); }
    if (Object.keys(layout).length) { window.Plotly.relayout(gd, layout); }
  }

  // A figure whose layout holds the width of an earlier box kept it when its box changed
  // without a window resize (Masking's figures, side by side at 458 px, kept it once
  // presentation mode stacked them in 1,260 px boxes: their change values overlapped).  No
  // figure sets a width of its own (a phone's wide figure gets its box's min-width from the
  // stylesheet), so the box's width is the figure's.
  function fitWidth(gd) {
    const full = gd._fullLayout;
    if (!window.Plotly || !full || !gd.clientWidth) { return; }
    if (Math.abs(gd.clientWidth - full.width) > 2) {
      window.Plotly.relayout(gd, {width: gd.clientWidth});
    }
  }

  function scan() {
    document.querySelectorAll(".js-plotly-plot").forEach(function (gd) {
      if (!gd.on) { return; }
      if (gd._viHooked !== gd._ev) {   // a new plot object keeps no listeners
        gd._viHooked = gd._ev;
        gd.on("plotly_afterplot", () => afterPlot(gd));
        if (window.ResizeObserver && !gd._viSized) {
          gd._viSized = new ResizeObserver(() => fitWidth(gd));
          gd._viSized.observe(gd);
        }
        afterPlot(gd);
      } else if (presenting() && gd._fullLayout) {
        const height = fitHeight(gd);   // something above the figure changed its height
        if (height !== null) { window.Plotly.relayout(gd, {height: height}); }
      }
    });
  }

  let pending = false;
  function schedule() {
    if (pending) { return; }
    pending = true;
    window.requestAnimationFrame(function () { pending = false; scan(); });
  }
  new MutationObserver(schedule).observe(document.documentElement,
    {childList: true, subtree: true, attributes: true, attributeFilter: ["class"]});
  window.addEventListener("resize", schedule);
  // The name follows settings changed after the last draw.
  document.addEventListener("click", function (e) {
    const gd = e.target.closest && e.target.closest(".js-plotly-plot");
    if (gd && gd._context && gd._context.toImageButtonOptions) {
      gd._context.toImageButtonOptions.filename = imageName(gd);
    }
  }, true);
})();

/* A link to a part of a page (the Table 2 demo: /masking?problem=led#table2) opens on that
 * part.  Dash draws the page after the browser's own jump, and a dcc.Link never jumps, so the
 * part is scrolled to when it appears and kept there while what is above it is drawn, until
 * the reader scrolls, clicks or types, or 60 s have passed (what is above may take long to
 * draw: on a loaded server Masking's three figures took over 10 s).  A new page or part
 * re-arms it; a control that changes the query does not. */
(function () {
  let where = "", until = 0;
  const stop = function () { until = 0; };
  ["wheel", "touchmove", "keydown", "mousedown"].forEach(function (name) {
    window.addEventListener(name, stop, {passive: true, capture: true});
  });
  function follow() {
    const here = window.location.pathname + window.location.hash;
    if (here !== where) {
      where = here;
      until = window.location.hash.length > 1 ? Date.now() + 60000 : 0;
    }
    if (Date.now() > until) { return; }
    const target = document.getElementById(decodeURIComponent(window.location.hash.slice(1)));
    if (!target) { return; }
    const margin = parseFloat(getComputedStyle(target).scrollMarginTop) || 0;
    if (Math.abs(target.getBoundingClientRect().top - margin) > 2) {
      target.scrollIntoView({block: "start"});
    }
  }
  new MutationObserver(follow).observe(document.documentElement,
    {childList: true, subtree: true});
})();

/* A callback the server refuses with 429 (too many uploads or computations in a short time,
 * pages/_server/ratelimit.py) or 503 (Redis unreachable, pages/_server/hygiene.py) answers
 * a sentence: show it, since Dash shows nothing. */
(function () {
  const original = window.fetch;
  if (!original) { return; }
  function showServerNote(text) {
    let note = document.getElementById("vi-server-note");
    if (!note) {
      note = document.createElement("div");
      note.id = "vi-server-note";
      note.className = "vi-server-note";
      note.setAttribute("role", "alert");
      const words = document.createElement("span");
      const close = document.createElement("button");
      close.type = "button";
      close.textContent = "Close";
      close.className = "vi-server-note-close";
      close.addEventListener("click", function () { note.hidden = true; });
      note.appendChild(words);
      note.appendChild(close);
      document.body.appendChild(note);
    }
    note.firstChild.textContent = text;
    note.hidden = false;
  }
  window.fetch = function (input) {
    const url = typeof input === "string" ? input : (input && input.url) || "";
    return original.apply(this, arguments).then(function (response) {
      if ((response.status === 429 || response.status === 503) &&
          url.indexOf("_dash-update-component") >= 0) {
        response.clone().text().then(showServerNote, function () {});
      }
      return response;
    });
  };
})();
