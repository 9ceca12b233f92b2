"""Seconds to the first drawn figure of every page in headless Chromium, on a served app.

    python bench/bench_browser_first.py [upload|fair] [--warm]

What a user sees, where :mod:`bench_pages` times the pages' compute functions alone: the
app is served as ``make run`` serves it (a fresh cache; ``--warm`` lets the start's warming
of the data-independent studies finish first, as on a server that has been up a minute),
the table of :mod:`bench_pages` (the 10,000 x 60 analyst's file, or Fair's affairs data) is
uploaded on the Data page, and each page is opened from the navigation bar.  "First" is
the time from the click until one of the page's own graphs holds data, or its error box a
sentence.  Chromium, the
server and the page's jobs share this machine's cores, so the seconds include the browser's
own work, the job's start, its polls (every 0.4 s) and the result's transfer.  Needs
Chromium and chromedriver (``make browser``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _serve import chromium, served, wait  # noqa: E402
PAGES = dict(importances="imp", decomposition="decomp", dependence="dep", interactions="inter",
             distributions="dist", selection="sel", measures="meas", masking="masking")
# the page's visible graphs (ids start with its prefix) that hold data; its error boxes and
# its refusal of the data (Decomposition above 20 inputs: decomp-too-many, no graph)
DRAWN = ("return Array.from(document.querySelectorAll('.js-plotly-plot')).filter(g => "
         "((g.closest('.dash-graph') || g.parentElement).id || '').startsWith(arguments[0] + '-')"
         " && g.offsetParent !== null).filter(g => g.data && g.data.some(t => (t.x && "
         "t.x.length) || (t.y && t.y.length) || (t.z && t.z.length))).length")
ERRORS = ("return Array.from(document.querySelectorAll(\"[id$='-error'], [id$='-too-many']\"))"
          ".filter(e => "
          "e.offsetParent !== null && e.id.startsWith(arguments[0] + '-'))"
          ".map(e => e.innerText.trim()).filter(t => t)")


def visit_pages(driver, port: int, path: Path, which: str) -> None:
    """Upload ``path`` on the Data page, then open each page from the navigation bar and
    print the seconds to its first drawn graph (or its sentence)."""
    from selenium.webdriver.common.by import By

    driver.get(f"http://127.0.0.1:{port}/data")
    wait(lambda: driver.find_element(By.ID, "data-summary-p").text, 60)
    driver.find_element(By.CSS_SELECTOR, "#data-source input[value='upload']").click()
    t0 = time.time()
    driver.find_element(By.CSS_SELECTOR, "#data-upload input[type='file']").send_keys(str(path))
    target = "churned" if which == "upload" else "affairs"
    ok = wait(lambda: f"Target {target}" in driver.find_element(
        By.ID, "data-summary-exact").text, 120)
    print(f"{which}: read and summarised on the Data page in {time.time() - t0:.1f} s"
          + ("" if ok else " (not seen)"), flush=True)
    print(f"{'page':<15}{'first (s)':>10}  sentence", flush=True)
    time.sleep(2)
    for page, prefix in PAGES.items():
        link = driver.find_element(By.CSS_SELECTOR, f"a[href^='/{page}']")
        t0 = time.time()
        link.click()
        wait(lambda: driver.execute_script("return location.pathname") == f"/{page}", 10)
        wait(lambda: driver.execute_script(DRAWN, prefix)
             or driver.execute_script(ERRORS, prefix), 120)
        first = time.time() - t0
        errors = driver.execute_script(ERRORS, prefix)
        print(f"{page:<15}{first:>10.1f}  {errors[0][:70] if errors else ''}", flush=True)
        time.sleep(10)  # let the page's jobs go on a while, as a user reading it would


def main(argv=None) -> int:
    import bench_pages as bp

    args = sys.argv[1:] if argv is None else argv
    which = "fair" if "fair" in args else "upload"
    tmp = Path(tempfile.mkdtemp(prefix="varimp-bench-browser-"))
    path = tmp / f"{which}.csv"
    if which == "upload":
        bp.analyst_table().to_csv(path, index=False)
    else:
        path.write_text(bp.fair_csv())
    with served(tmp, warm="--warm" in args) as port:
        if "--warm" in args:
            time.sleep(50)  # the start's warming: Measures' AUC and bias, Selection's RS/SRS
        driver = chromium()
        try:
            visit_pages(driver, port, path, which)
        finally:
            driver.quit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
