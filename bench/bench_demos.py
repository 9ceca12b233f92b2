"""Seconds from a click on a Home "Teach" demo to its first figure, each on a cold server.

    python bench/bench_demos.py [--repeat N] [--warm] [--only TEXT]

Issue 26's goal: "Table 2 and every demo show their first figure within 2 s on a cold
server".  For each demo of :data:`pages._framework.lessons.TEACH` (the upload one, which
opens the Data page, has no figure and is left out) a new server is started as ``make run``
starts it, with an empty cache (``--warm`` leaves the start's warming of the
data-independent studies on, as ``make run`` does, and waits for it; without it nothing
is precomputed).  A teacher's browser opens Home, waits until its scripts have run (Plotly's
too, which Home loads ahead for this) and clicks the demo's link; "first" is the time from the click until one of the new page's
visible graphs holds data (Table 2's link: the table's first row of numbers, or a graph),
or an error box a sentence.  The browser, the server and its jobs share this machine's
cores.  Needs Chromium and chromedriver (``make browser``).  Timings are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _serve import chromium, served, wait  # noqa: E402

# a visible graph of the page's content holding data, Table 2's numbers, or an error sentence
FIRST = """
const drawn = Array.from(document.querySelectorAll('.vi-content .js-plotly-plot'))
  .filter(g => g.offsetParent !== null && g.data && g.data.some(t =>
     (t.x && t.x.length) || (t.y && t.y.length) || (t.z && t.z.length))).length;
const table = Array.from(document.querySelectorAll('.vi-content .ag-cell'))
  .filter(c => c.offsetParent !== null && /\\d\\.\\d/.test(c.innerText)).length;
const errors = Array.from(document.querySelectorAll("[id$='-error']"))
  .filter(e => e.offsetParent !== null && e.innerText.trim()).map(e => e.innerText.trim());
return drawn || table ? 'drawn' : (errors.length ? errors[0] : null);
"""


def one(index: int, warm: bool) -> tuple[float, str]:
    """Seconds from a click on Home's demo ``index`` to its first figure, on a new server,
    and the error sentence shown instead of a figure (empty when drawn)."""
    from selenium.webdriver.common.by import By

    tmp = Path(tempfile.mkdtemp(prefix="varimp-bench-demos-"))
    with served(tmp, warm=warm, secret="d" * 32) as port:
        if warm:
            time.sleep(50)  # the start's warming of the data-independent studies
        driver = chromium()
        try:
            driver.get(f"http://127.0.0.1:{port}/")
            link = wait(lambda: driver.find_element(By.ID, f"home-demo-{index}"), 60)
            # a reader on Home: its scripts (Plotly's too, which Home loads ahead) have run
            wait(lambda: driver.execute_script("return !!window.Plotly"), 10)
            time.sleep(1)
            t0 = time.time()
            link.click()
            got = wait(lambda: driver.execute_script(FIRST), 120, every=0.02)
            return time.time() - t0, "" if got == "drawn" else str(got)[:70]
        finally:
            driver.quit()


def main(argv=None) -> int:
    from pages._framework.lessons import TEACH

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--warm", action="store_true")
    ap.add_argument("--only", default="", help="demos whose title contains this text")
    args = ap.parse_args(argv)
    print(f"{'demo':<44}{'first (s), each run':>24}  note", flush=True)
    for i, (title, _text, href) in enumerate(TEACH):
        if href.startswith("/data") or args.only.lower() not in title.lower():
            continue
        runs = [one(i, args.warm) for _ in range(args.repeat)]
        secs = [r[0] for r in runs]
        note = next((r[1] for r in runs if r[1]), "")
        shown = ", ".join(f"{s:.2f}" for s in secs)
        med = f" (median {statistics.median(secs):.2f})" if len(secs) > 1 else ""
        print(f"{title[:43]:<44}{shown + med:>24}  {note}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
