"""Slow clients do not hold the web server (#27.5).

Three sockets sending a request a byte every 2 s held both sync gunicorn workers: every
other request waited.  Here the Dockerfile's CMD (gthread workers, ``make serve`` and
docker-compose run the same options) serves with ``WEB_CONCURRENCY=2`` while three such
clients trickle, and ``/_health`` timed meanwhile must answer with a p95 under 300 ms.
The slow clients run for at most 60 s (after the server is up); the figures are printed.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests
from _servers import BIN, ROOT, Processes, free_port, serves_health, wait

pytestmark = pytest.mark.serial  # it times requests


def _cmd_of_dockerfile() -> str:
    text = (ROOT / "Dockerfile").read_text()
    return re.search(r'^CMD \["sh", "-c", "exec (.*)"\]$', text, re.M).group(1)


def _trickle(port: int, stop: threading.Event) -> None:
    request = b"GET /_health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        for byte in request:
            if stop.is_set():
                return
            try:
                s.send(bytes([byte]))
            except OSError:
                return  # the server closed it (its timeout): that is fine too
            stop.wait(2.0)


def test_three_slow_clients_do_not_hold_the_server():
    tmp = Path(tempfile.mkdtemp(prefix="varimp-slow-"))
    port = free_port()
    cmd = _cmd_of_dockerfile().replace("${PORT}", str(port)).replace(
        "${WEB_CONCURRENCY}", "2").replace("${WEB_THREADS}", "4").replace("0.0.0.0", "127.0.0.1")
    args = cmd.split()
    args[0] = str(BIN / "gunicorn")
    env = {**os.environ, "VARIMP_CACHE_DIR": str(tmp / "cache"), "VARIMP_WARM": "0"}
    env.pop("REDIS_URL", None)
    procs = Processes(tmp, env)
    stop = threading.Event()
    base = f"http://127.0.0.1:{port}"
    try:
        procs.start("web", args)
        wait(lambda: serves_health(base), 150, "gunicorn to serve /_health", procs.procs["web"],
             tmp / "web.log")
        slow = [threading.Thread(target=_trickle, args=(port, stop), daemon=True)
                for _ in range(3)]
        for t in slow:
            t.start()
        time.sleep(3)  # each slow client has been accepted and holds what it holds
        times, deadline = [], time.monotonic() + 15
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                requests.get(base + "/_health", timeout=5).raise_for_status()
                times.append(time.perf_counter() - start)
            except requests.RequestException:
                times.append(5.0)
            time.sleep(0.1)
    finally:
        stop.set()
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)
    p95 = statistics.quantiles(times, n=20)[-1]
    print(f"/_health with 3 slow clients: {len(times)} requests, median "
          f"{statistics.median(times) * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms")
    assert p95 < 0.3, p95
