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

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
PAGES = dict(importances="imp", decomposition="decomp", dependence="dep", interactions="inter",
             distributions="dist", selection="sel", measures="meas", masking="masking")
# the page's visible graphs (ids start with its prefix) that hold data; its error boxes
DRAWN = ("return Array.from(document.querySelectorAll('.js-plotly-plot')).filter(g => "
         "((g.closest('.dash-graph') || g.parentElement).id || '').startsWith(arguments[0] + '-')"
         " && g.offsetParent !== null).filter(g => g.data && g.data.some(t => (t.x && "
         "t.x.length) || (t.y && t.y.length) || (t.z && t.z.length))).length")
ERRORS = ("return Array.from(document.querySelectorAll(\"[id$='-error']\")).filter(e => "
          "e.offsetParent !== null && e.id.startsWith(arguments[0] + '-'))"
          ".map(e => e.innerText.trim()).filter(t => t)")


def wait(cond, timeout: float) -> bool:
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            if cond():
                return True
        except Exception:  # a page being replaced: look again
            pass
        time.sleep(0.05)
    return False


def main(argv=None) -> int:
    from selenium import webdriver
    from selenium.webdriver.common.by import By

    import bench_pages as bp

    args = sys.argv[1:] if argv is None else argv
    which = "fair" if "fair" in args else "upload"
    tmp = Path(tempfile.mkdtemp(prefix="varimp-bench-browser-"))
    path = tmp / f"{which}.csv"
    if which == "upload":
        bp.analyst_table().to_csv(path, index=False)
    else:
        path.write_text(bp.fair_csv())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, VARIMP_PORT=str(port), VARIMP_WARM="1" if "--warm" in args else "0",
               VARIMP_CACHE_DIR=str(tmp / "cache"), VARIMP_SECRET_KEY="b" * 32)
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                              stdout=open(tmp / "server.log", "w"), stderr=subprocess.STDOUT)
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--window-size=1400,1000", "--disable-gpu"):
        opts.add_argument(a)
    driver = None
    try:
        wait(lambda: socket.create_connection(("127.0.0.1", port), 0.5).close() or True, 60)
        if "--warm" in args:
            time.sleep(50)  # the start's warming: Measures' AUC and bias, Selection's RS/SRS
        driver = webdriver.Chrome(options=opts)
        driver.get(f"http://127.0.0.1:{port}/data")
        wait(lambda: driver.find_element(By.ID, "data-summary-p").text, 60)
        driver.find_element(By.CSS_SELECTOR, "#data-source input[value='upload']").click()
        t0 = time.time()
        driver.find_element(By.CSS_SELECTOR, "#data-upload input[type='file']").send_keys(
            str(path))
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
    finally:
        if driver is not None:
            driver.quit()
        server.terminate()
        server.wait(30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
