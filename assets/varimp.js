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
