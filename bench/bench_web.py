"""Web speed: gunicorn serving the app, driven through Dash's own HTTP endpoints.

    python bench/bench_web.py [--seconds 20] [--clients 10] [--workers 2] [--quick]
                              [--poll-ms N] [--json out.json]

Starts ``gunicorn app:server`` on a free loopback port with a throw-away cache
(``VARIMP_CACHE_DIR``), waits for ``/_health``, then behaves like browsers:

* a page load is what the renderer asks for before it can draw a page: the
  HTML (with the per-load ``end_id`` token in ``_dash-config``),
  ``/_dash-layout``, ``/_dash-dependencies`` and the page-routing callback that
  returns the page's layout (static JS/CSS files, cached by browsers, left out);
* a control change is ``POST /_dash-update-component`` of the Importances
  page's plain callback (LED, exact method, K = 1..7), which answers a cache
  hit within the request.  On a miss it writes a store, and the client then
  calls the page's background callback as the renderer does: the first answer
  carries signed ``cacheKey``/``job`` handles and the client polls with
  ``?endId=..&cacheKey=..&job=..`` every ``interval`` ms (``--poll-ms``
  overrides it).  Latency is from the first POST to the complete answer, and
  every answer is checked: the bars must be the core's exact importances.

Each distinct request is sent once to warm the cache, then ``--clients``
threads (one ``requests.Session`` and one page load each, like users) send
cached control changes for ``--seconds``, then page loads of every page for
half as long.  Prints count, errors, p50/p95/p99 and a line against the
300 ms goal; gunicorn and its job processes are stopped at the end.  Traffic
goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import requests

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOAL_MS = 300.0
HOST = "127.0.0.1"
COMPUTE_OUTPUT = "imp-graph.figure"   # the Importances page's view outputs
FAST_OUTPUT = "imp-miss.data"         # its plain callback: answers cache hits in the request
ROUTE_OUTPUT = "_pages_content.children"
_CONFIG = re.compile(r'<script id="_dash-config" type="application/json">(.*?)</script>', re.S)


# -- the server ----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _gunicorn() -> list[str]:
    exe = Path(sys.executable).with_name("gunicorn")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "gunicorn"]


@contextlib.contextmanager
def serve(*, workers: int = 2, cache_dir: str | None = None, port: int | None = None,
          timeout: float = 60.0, app: str = "app:server", threads: int = 1,
          env: dict[str, str] | None = None) -> Iterator[str]:
    """Run gunicorn on loopback for the ``with`` block; yields its base URL.

    The server runs in its own process group, which is stopped (SIGINT, then
    SIGKILL) on exit, background job processes included.  ``env`` adds to the
    environment (``REDIS_URL`` is dropped unless ``env`` sets it).
    """
    port = port or free_port()
    base = f"http://{HOST}:{port}"
    with contextlib.ExitStack() as stack:
        if cache_dir is None:
            cache_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="varimp-web-"))
        log = stack.enter_context(tempfile.TemporaryFile(mode="w+"))
        env = {**{k: v for k, v in os.environ.items() if k != "REDIS_URL"},
               "VARIMP_CACHE_DIR": cache_dir, **(env or {})}
        proc = subprocess.Popen(
            [*_gunicorn(), app, "--workers", str(workers), "--bind", f"{HOST}:{port}",
             "--timeout", "120", *(["--threads", str(threads)] if threads > 1 else [])],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _wait_healthy(base, proc, log, timeout)
            yield base
        finally:
            _stop(proc)


def _wait_healthy(base: str, proc: subprocess.Popen, log, timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            break
        try:
            if requests.get(base + "/_health", timeout=2).text == "ok":
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    log.seek(0)
    raise RuntimeError(f"gunicorn did not become healthy on {base}:\n{log.read()[-3000:]}")


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGINT, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # job processes left behind by the workers


# -- a Dash client -------------------------------------------------------------------------------
@dataclass
class Page:
    """What the renderer holds after loading a page."""

    path: str
    end_id: str
    dependencies: list
    props: dict                     # component id (JSON text) -> props of the page's layout
    nav_paths: list = field(default_factory=list)

    def callback(self, output: str) -> dict:
        """The dependency entry whose output names ``output`` (``"imp-graph.figure"``)."""
        for cb in self.dependencies:
            if output in cb["output"]:
                return cb
        raise KeyError(f"No callback outputs {output} on {self.path}.")

    def value(self, component_id: str, prop: str) -> Any:
        return self.props.get(json.dumps(component_id), {}).get(prop)


@dataclass
class Answer:
    status: int
    body: dict | None
    polls: int
    ms: float


def _outputs(cb: dict) -> list[dict]:
    text = cb["output"]
    parts = text[2:-2].split("...") if text.startswith("..") else [text]
    out = []
    for part in parts:
        cid, prop = part.rsplit(".", 1)
        out.append({"id": json.loads(cid) if cid.startswith("{") else cid,
                    "property": prop.split("@")[0]})
    return out


def _index(node: Any, into: dict) -> dict:
    """Map every component id of a layout (as JSON text) to its props."""
    if isinstance(node, list):
        for item in node:
            _index(item, into)
    elif isinstance(node, dict):
        props = node.get("props") if "type" in node and "namespace" in node else None
        if isinstance(props, dict):
            if "id" in props:
                into[json.dumps(props["id"])] = props
            for v in props.values():
                _index(v, into)
    return into


class DashClient:
    """One browser-like user: a ``requests.Session``, a page, callback requests with polling.

    Parameters
    ----------
    base : str
        ``http://127.0.0.1:<port>``.
    poll_ms : float, default=None
        Milliseconds between polls of a background callback; None uses the
        callback's ``interval``, as the renderer does.
    timeout : float, default=120
        Longest wait for one complete answer, polls included.
    """

    def __init__(self, base: str, *, poll_ms: float | None = None, timeout: float = 120.0):
        self.base = base
        self.http = requests.Session()
        self.poll_ms = poll_ms
        self.timeout = timeout
        self._deps: list | None = None

    def close(self) -> None:
        self.http.close()

    def _get(self, path: str) -> requests.Response:
        r = self.http.get(self.base + path, timeout=self.timeout)
        r.raise_for_status()
        return r

    def open_page(self, path: str, search: str = "") -> Page:
        """Load a page as the renderer does (HTML, layout, dependencies, routing callback)."""
        html = self._get(path + search).text
        match = _CONFIG.search(html)
        if not match:
            raise RuntimeError(f"{path}: no _dash-config in the HTML.")
        end_id = json.loads(match.group(1))["end_id"]
        shell = self._get("/_dash-layout").json()
        self._deps = self._get("/_dash-dependencies").json()
        nav = [p["id"]["path"] for p in _index(shell, {}).values()
               if isinstance(p["id"], dict) and p["id"].get("type") == "vi-nav"]
        page = Page(path, end_id, self._deps, {}, nav)
        route = page.callback(ROUTE_OUTPUT)
        values = {f"{d['id']}.{d['property']}": {"pathname": path, "search": search}[d["property"]]
                  for d in route["inputs"] if d["property"] in ("pathname", "search")}
        answer = self.call(page, route, values,
                           changed=[k for k in values if k.endswith(".pathname")])
        if answer.status != 200 or not answer.body or "response" not in answer.body:
            raise RuntimeError(f"{path}: the routing callback answered {answer.status}.")
        page.props = _index(answer.body["response"]["_pages_content"]["children"], {})
        return page

    def payload(self, page: Page, cb: dict, values: dict[str, Any], changed: list[str]) -> dict:
        """The request body of ``cb`` with the page's current values, ``values`` overriding."""

        def filled(deps):
            out = []
            for d in deps:
                if isinstance(d["id"], str) and "{" in d["id"]:
                    raise ValueError("Pattern-matching ids are not supported by this client.")
                key = f"{d['id']}.{d['property']}"
                value = values[key] if key in values else page.value(d["id"], d["property"])
                out.append({"id": d["id"], "property": d["property"], "value": value})
            return out

        outputs = _outputs(cb)
        body = {"output": cb["output"], "outputs": outputs if len(outputs) > 1 or
                cb["output"].startswith("..") else outputs[0],
                "inputs": filled(cb["inputs"]), "changedPropIds": list(changed)}
        if cb.get("state"):
            body["state"] = filled(cb["state"])
        return body

    def call(self, page: Page, cb: dict, values: dict[str, Any], changed: list[str]) -> Answer:
        """One complete callback answer, polling a background callback until it is done."""
        body = self.payload(page, cb, values, changed)
        url = self.base + "/_dash-update-component"
        t0 = time.perf_counter()
        r = self.http.post(url, params={"endId": page.end_id}, json=body, timeout=self.timeout)
        polls = 0
        data = r.json() if r.status_code == 200 else None
        if cb.get("background") and data is not None and "cacheKey" in data:
            handles = {"endId": page.end_id, "cacheKey": data["cacheKey"], "job": data["job"]}
            blank = json.loads(json.dumps(body))  # the renderer sends no values when polling
            for dep in blank["inputs"] + blank.get("state", []):
                dep["value"] = None
            interval = self.poll_ms if self.poll_ms is not None else \
                cb["background"].get("interval", 500)
            deadline = t0 + self.timeout
            while True:
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"No answer from {cb['output'][:60]} in {self.timeout} s.")
                time.sleep(interval / 1000)
                polls += 1
                r = self.http.post(url, params=handles, json=blank, timeout=self.timeout)
                data = r.json() if r.status_code == 200 else None
                if data is None or "response" in data:
                    break
        return Answer(r.status_code, data, polls, (time.perf_counter() - t0) * 1000)


# -- the importances page: requests and their expected answers ------------------------------------
def decode_array(value: Any) -> np.ndarray:
    """A Plotly JSON array: a list, or a typed array ``{"dtype", "bdata"}``."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        return arr.reshape(value["shape"]) if "shape" in value else arr
    return np.asarray(value, dtype=float)


def expected_importances(ks=range(1, 8)) -> dict[int, np.ndarray]:
    """The core's exact importances on the LED for each K (what the bars must show)."""
    from varimp_core.api import compute_importances, load_data

    data = load_data(problem="led")
    return {k: compute_importances(data, method="exact", max_features=k).importances
            for k in ks}


def compute_job(page: Page) -> dict:
    """The background callback a cache miss starts (its input is the miss store)."""
    return next(cb for cb in page.dependencies
                if any(d["id"] == "imp-miss" for d in cb["inputs"]))


def control_change(client: DashClient, page: Page, k: int, *, values=None) -> Answer:
    """What the renderer sends when K is set to ``k`` (exact method).

    The page's plain callback answers a cache hit in the request; on a miss it
    writes the miss store, and the renderer then calls the background job and
    polls it.  Latency is the sum of both.
    """
    values = {"imp-method.value": "exact", "imp-k.value": k} if values is None else values
    first = client.call(page, page.callback(FAST_OUTPUT), values, changed=["imp-k.value"])
    response = (first.body or {}).get("response", {})
    miss = (response.get("imp-miss") or {}).get("data")
    if miss is None:
        return first
    second = client.call(page, compute_job(page), {"imp-miss.data": miss},
                         changed=["imp-miss.data"])
    return Answer(second.status, second.body, first.polls + second.polls, first.ms + second.ms)


def check_answer(answer: Answer, expected: np.ndarray) -> str | None:
    """None when the answer holds the expected bars, else a sentence saying what is wrong."""
    if answer.status != 200 or not answer.body:
        return f"HTTP {answer.status} (no outputs)"
    out = answer.body.get("response", {})
    figure = out.get("imp-graph", {}).get("figure")
    if not figure or not figure.get("data"):
        status = out.get("imp-job-status", {}).get("children")
        return f"no figure in the answer (status line: {status!r})"
    bars = decode_array(figure["data"][0].get("y"))
    if bars.shape != expected.shape or not np.allclose(bars, expected, atol=1e-9):
        return f"wrong bars {np.round(bars, 4).tolist()}"
    return None


# -- load --------------------------------------------------------------------------------------------
@dataclass
class Tally:
    latencies: list = field(default_factory=list)
    polls: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, ms: float, polls: int = 0, error: str | None = None) -> None:
        with self.lock:
            if error:
                self.errors.append(error)
            else:
                self.latencies.append(ms)
                self.polls.append(polls)


def run_clients(n: int, seconds: float, work: Callable[[int, random.Random], None]) -> None:
    """Run ``work(client_index, rng)`` repeatedly in ``n`` threads for ``seconds``."""
    deadline = time.monotonic() + seconds

    def loop(i: int) -> None:
        rng = random.Random(i)
        while time.monotonic() < deadline:
            work(i, rng)

    threads = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def control_load(base: str, *, clients: int, seconds: float, expected: dict[int, np.ndarray],
                 poll_ms: float | None = None) -> Tally:
    """``clients`` users on the Importances page changing K for ``seconds``."""
    tally = Tally()
    users = [DashClient(base, poll_ms=poll_ms) for _ in range(clients)]
    try:
        pages = [u.open_page("/importances") for u in users]
        ks = sorted(expected)

        def work(i: int, rng: random.Random) -> None:
            k = rng.choice(ks)
            try:
                answer = control_change(users[i], pages[i], k)
            except Exception as exc:  # counted, never fatal: the run goes on
                tally.add(0, error=f"K={k}: {type(exc).__name__}: {exc}")
                return
            tally.add(answer.ms, answer.polls, check_answer(answer, expected[k]))

        run_clients(clients, seconds, work)
    finally:
        for u in users:
            u.close()
    return tally


def page_load(base: str, *, clients: int, seconds: float, paths: list[str]) -> Tally:
    """``clients`` users loading the pages (cycling through ``paths``) for ``seconds``."""
    tally = Tally()

    def work(i: int, rng: random.Random) -> None:
        path = rng.choice(paths)
        client = DashClient(base)  # a new visitor: new session, new page load
        t0 = time.perf_counter()
        try:
            page = client.open_page(path)
            error = None if page.props else f"{path}: empty layout"
        except Exception as exc:
            error = f"{path}: {type(exc).__name__}: {exc}"
        finally:
            client.close()
        tally.add((time.perf_counter() - t0) * 1000, error=error)

    run_clients(clients, seconds, work)
    return tally


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": float("nan"), "p95": float("nan"), "p99": float("nan")}
    arr = np.asarray(values, dtype=float)
    return {f"p{q}": float(np.percentile(arr, q)) for q in (50, 95, 99)}


def report(name: str, tally: Tally, seconds: float) -> dict:
    p = percentiles(tally.latencies)
    n = len(tally.latencies)
    print(f"{name:<34} count {n:6d}   errors {len(tally.errors):4d}   "
          f"p50 {p['p50']:7.1f} ms   p95 {p['p95']:7.1f} ms   p99 {p['p99']:7.1f} ms   "
          f"({n / seconds:.1f}/s)")
    for e in sorted(set(tally.errors))[:5]:
        print(f"    error: {e}")
    return {"count": n, "errors": len(tally.errors), "error_samples": sorted(set(tally.errors))[:5],
            **{k: round(v, 1) for k, v in p.items()},
            "mean_polls": round(float(np.mean(tally.polls)), 2) if tally.polls else None}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="control-change phase (s)")
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    ap.add_argument("--threads", type=int, default=1,
                    help="gunicorn threads per worker (default 1: sync workers, as deployed)")
    ap.add_argument("--poll-ms", type=float, default=None,
                    help="poll interval of background callbacks (default: the callback's own)")
    ap.add_argument("--app", default="app:server",
                    help="WSGI app for gunicorn (to compare variants; default app:server)")
    ap.add_argument("--quick", action="store_true", help="5 s phases")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    seconds = 5.0 if args.quick else args.seconds

    expected = expected_importances()
    results: dict[str, Any] = {"clients": args.clients, "workers": args.workers,
                               "threads": args.threads, "app": args.app,
                               "seconds": seconds, "goal_ms": GOAL_MS}
    with serve(workers=args.workers, app=args.app, threads=args.threads) as base:
        probe = DashClient(base, poll_ms=args.poll_ms)
        page = probe.open_page("/importances")
        interval = compute_job(page)["background"].get("interval")
        print(f"gunicorn {args.app}: {args.workers} workers x {args.threads} threads on {base}; "
              f"{args.clients} clients; "
              f"Importances: cache hits answered by a plain callback in the request; "
              f"misses by a background job polled every "
              f"{args.poll_ms if args.poll_ms is not None else interval} ms")
        t0 = time.perf_counter()
        for k, values in expected.items():  # warm the cache: each distinct request once
            problem = check_answer(control_change(probe, page, k), values)
            if problem:
                raise SystemExit(f"Warm-up request K={k} failed: {problem}")
        print(f"warm-up: K = 1..7 computed and cached in {time.perf_counter() - t0:.1f} s")
        paths = page.nav_paths or ["/", "/importances"]
        probe.close()

        tally = control_load(base, clients=args.clients, seconds=seconds, expected=expected,
                             poll_ms=args.poll_ms)
        results["control_change"] = report("control change (cached, K=1..7)", tally, seconds)
        page_seconds = max(seconds / 2, 3.0)
        loads = page_load(base, clients=args.clients, seconds=page_seconds, paths=paths)
        results["page_load"] = report(f"page load ({len(paths)} pages)", loads, page_seconds)
        results["pages"] = paths

    p95 = results["control_change"]["p95"]
    verdict = "meets" if p95 <= GOAL_MS else "misses"
    print(f"control change p95 {p95:.0f} ms vs goal {GOAL_MS:.0f} ms: {verdict} the goal "
          f"({p95 / GOAL_MS:.2f}x the goal)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 1 if results["control_change"]["errors"] or results["page_load"]["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
