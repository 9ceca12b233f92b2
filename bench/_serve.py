"""The app served for the browser benches, as ``make run`` serves it, and a Chromium to drive it.

Each server gets a free port of its own and an empty cache in a fresh folder (``--warm``
benches leave the start's warming on); its log is ``server.log`` in that folder.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wait(cond, timeout: float, every: float = 0.05):
    """``cond()``'s first truthy value within ``timeout`` seconds, else None (an exception,
    as of a page being replaced, counts as not yet)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        try:
            got = cond()
            if got:
                return got
        except Exception:
            pass
        time.sleep(every)
    return None


@contextmanager
def served(folder: Path, *, warm: bool = False, secret: str = "b" * 32):
    """Run ``python app.py`` on a free port with its cache under ``folder``; yields the port
    once the server accepts connections, and stops the server on leaving."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, VARIMP_PORT=str(port), VARIMP_WARM="1" if warm else "0",
               VARIMP_CACHE_DIR=str(folder / "cache"), VARIMP_SECRET_KEY=secret)
    server = subprocess.Popen([sys.executable, "app.py"], cwd=ROOT, env=env,
                              stdout=open(folder / "server.log", "w"), stderr=subprocess.STDOUT)
    try:
        wait(lambda: socket.create_connection(("127.0.0.1", port), 0.5).close() or True, 60)
        yield port
    finally:
        server.terminate()
        server.wait(30)


def chromium(width: int = 1400, height: int = 1000):
    """A headless Chromium window of ``width`` x ``height``."""
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", f"--window-size={width},{height}",
              "--disable-gpu"):
        opts.add_argument(a)
    return webdriver.Chrome(options=opts)
