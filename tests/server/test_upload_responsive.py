"""Uploads and first link visits do their work outside the web workers (issue #17).

The probe of issue #17 found two computations in gunicorn's workers: a 5 MB, 1,000-column
upload parsed there in 3.5 s (with two uploaders ``/_health`` went from a p95 of 7 ms to
654 ms), and link restoring sampled ``madelon:samples=99000`` there, about 2 s per new link.
Here ``gunicorn app:server`` (2 workers, the Diskcache manager) gets those requests over HTTP
from two clients in a loop, as dash-renderer sends them (the upload is a background job,
polled), while a third client times ``/_health`` and a cheap callback (the Data page's
problem form).  The cheap requests must answer in under 200 ms (the issue's figure),
asserted on the median of many so that one request delayed by the loaded test machine does
not decide it; the figures are printed.  The upload's own time is never asserted.
"""

from __future__ import annotations

import base64
import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import requests
from _servers import DashCallbackClient, Processes, start_web

# Its medians would measure the other tests running beside it: run alone (see the Makefile).
pytestmark = pytest.mark.serial

COLUMNS, ROWS = 1000, 750


@pytest.fixture(scope="module")
def base():
    tmp = Path(tempfile.mkdtemp(prefix="varimp-upload-responsive-"))
    env = {**os.environ, "VARIMP_CACHE_DIR": str(tmp / "cache"), "OMP_NUM_THREADS": "1"}
    env.pop("REDIS_URL", None)
    procs = Processes(tmp, env)
    try:
        yield start_web(procs, workers=2)
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def _wide_csv() -> bytes:
    """About 5 MB: 999 inputs with 4 decimals and a 0/1 target, seeded."""
    rng = np.random.default_rng(17)
    x = rng.random((ROWS, COLUMNS - 1)).round(4)
    y = (x[:, 0] > 0.5).astype(int)
    lines = [",".join([*(f"x{j}" for j in range(COLUMNS - 1)), "y"])]
    lines += [",".join([*(f"{v:.4f}" for v in row), str(t)]) for row, t in zip(x, y)]
    return ("\n".join(lines) + "\n").encode()


def _time_cheap(base: str, rounds: int = 25) -> tuple[list[float], list[float]]:
    """Seconds of ``/_health`` and of the Data page's problem-form callback, ``rounds`` each."""
    form = DashCallbackClient.over_http(base, "data-options.children", "/data")
    body = form.body({"data-problem.value": "xor", "data-sampling.value": "exact"},
                     "data-problem.value")
    http, health, callback = requests.Session(), [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        assert http.get(base + "/_health", timeout=30).status_code == 200
        health.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assert "data-options" in form.post(body)["response"]
        callback.append(time.perf_counter() - t0)
        time.sleep(0.1)
    return health, callback


def _while_looping(base: str, work, clients: int = 2) -> tuple[list, list, list]:
    """:func:`_time_cheap` while ``clients`` threads run ``work()`` in a loop; their answers."""
    answers, errors, stop = [], [], threading.Event()

    def loop():
        try:
            while not stop.is_set():
                answers.append(work())
        except BaseException as exc:  # pylint: disable=broad-except  # the test reports it
            errors.append(exc)

    threads = [threading.Thread(target=loop, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(1.0)  # the loops are running
    try:
        health, callback = _time_cheap(base)
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    if errors:
        raise errors[0]
    return answers, health, callback


def _ms(xs) -> str:
    xs = sorted(xs)
    return (f"median {1000 * statistics.median(xs):.0f} ms, "
            f"p95 {1000 * xs[int(0.95 * (len(xs) - 1))]:.0f} ms, max {1000 * xs[-1]:.0f} ms")


def test_cheap_requests_stay_fast_while_two_clients_upload_wide_files(base):
    raw = _wide_csv()
    assert 4.5e6 < len(raw) < 5.5e6
    contents = "data:text/csv;base64," + base64.b64encode(raw).decode()
    values = {"data-upload.contents": contents, "data-upload.filename": "wide.csv"}

    def upload():
        client = DashCallbackClient.over_http(base, "data-upload-info.data", "/data")
        assert client.dep.get("background")  # a job, never a web worker's parse
        return client.run(values, "data-upload.contents", timeout=120)

    answers, health, callback = _while_looping(base, upload)
    print(f"\n{len(answers)} uploads; /_health {_ms(health)}; cheap callback {_ms(callback)} "
          "(machine loaded)")
    assert answers
    for _, progress, last in answers:
        got = last["response"]
        assert got["data-upload-note"]["children"] == f"wide.csv: {ROWS:,} rows, {COLUMNS} columns."
        assert len(got["data-upload-info"]["data"]["columns"]) == COLUMNS
        assert progress and all(p["data-upload-job-message.children"] == "Reading the file\u2026"
                                for p in progress)
    assert statistics.median(health) < 0.2
    assert statistics.median(callback) < 0.2


def test_cheap_requests_stay_fast_while_two_clients_open_new_large_problem_links(base):
    link = DashCallbackClient.over_http(base, "vi-data.data", "/data")
    deps = requests.get(base + "/_dash-dependencies", timeout=30).json()
    link.dep = next(d for d in deps if d["inputs"] == [{"id": "vi-url", "property": "search"}])
    seeds = iter(range(10**6))

    def open_link():  # a new seed each time: a first link, never seen by the cache
        seed = next(seeds)
        search = f"?problem=madelon:samples=99000&seed={seed}"
        answer = link.post(link.body({"vi-url.search": search}, "vi-url.search"))
        return seed, answer["response"]["vi-data"]["data"]

    answers, health, callback = _while_looping(base, open_link)
    print(f"\n{len(answers)} first links; /_health {_ms(health)}; cheap callback "
          f"{_ms(callback)} (machine loaded)")
    assert answers
    for seed, store in answers:  # the choice is kept for the navigation
        assert store["params"]["problem"] == "madelon:samples=99000"
        assert store["params"]["seed"] == seed and f"seed={seed}" in store["query"]
    assert statistics.median(health) < 0.2
    assert statistics.median(callback) < 0.2


# The probe of issue #27 (item 4): a Dependence link to a legal large sample loaded the data in
# the routing callback, 5 to 8 s and +3.5 GB a worker; two at once held /_health 15.8 s.
LARGE_SAMPLE = "?problem=led:irrelevant=49&sampling=sample&n=870000"


def test_cheap_requests_stay_fast_while_two_clients_open_large_sample_links_to_every_page(base):
    """Two clients open new large-sample links, a new seed each (never in the cache), on
    every page of the navigation in turn, as a browser opens a link: the page's HTML, the
    layout, the dependencies and the routing callback (which writes the data choice)."""
    from bench.bench_web import DashClient

    paths = DashClient(base).open_page("/").nav_paths
    assert {"/dependence", "/importances", "/selection", "/explain"} <= set(paths), paths
    seeds, opened = iter(range(10**6)), []
    clients = threading.local()

    def open_link():
        if not hasattr(clients, "one"):
            clients.one = DashClient(base, timeout=60)
        seed = next(seeds)
        path = paths[seed % len(paths)]
        t0 = time.perf_counter()
        page = clients.one.open_page(path, f"{LARGE_SAMPLE}&seed={seed}")
        opened.append((path, time.perf_counter() - t0))
        return seed, page

    answers, health, callback = _while_looping(base, open_link)
    pages = sorted({p for p, _ in opened})
    print(f"\n{len(answers)} large-sample links on {len(pages)} pages, each opened in "
          f"{_ms([s for _, s in opened])}; /_health {_ms(health)}; cheap callback "
          f"{_ms(callback)} (machine loaded)")
    assert len(pages) >= min(len(paths), 6), pages   # the loop went round the pages
    for seed, page in answers:  # each page got its link's data choice, not loaded data
        data = next((props["data"] for props in page.props.values()
                     if props.get("id") == "vi-data" and "data" in props), None)
        if data is not None:
            assert data["params"]["problem"] == "led:irrelevant=49" and data["params"]["seed"] == seed
    assert statistics.median(health) < 0.2
    assert statistics.median(callback) < 0.2
