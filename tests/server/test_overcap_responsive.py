"""Over-cap requests are refused with a sentence and the web workers stay responsive (#17).

The probe of issue #17 sent the Importances page's CSV download and its background job with
``n_estimators=50000``: the download recomputed inside a gunicorn worker (24.5 s with both
workers held, a cheap request waited 23.4 s) and the job accepted 5,000 trees under
``VARIMP_MAX_TREES=200``.  Here ``gunicorn app:server`` (2 workers, the Diskcache manager,
``VARIMP_MAX_TREES=200``) gets the same requests over HTTP from two hostile clients in a
loop while a third client times ``/_health`` and a cheap callback (the download refused).
Every hostile request must end in a sentence naming the cap, never a figure, and the cheap
requests made meanwhile must answer in under 200 ms (the issue's figure): asserted on the
median of many, so one request delayed by the loaded test machine does not decide it; the
figures are printed.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import pytest
import requests
from _servers import DashCallbackClient, Processes, start_web

# Its medians would measure the other tests running beside it: run alone (see the Makefile).
pytestmark = pytest.mark.serial

CAP = 200
OVER = 50_000


def _controls(trees: int) -> dict:
    return {"method": "forest", "max_features": 1, "max_depth": None, "criterion": "entropy",
            "k_semantics": "id3", "n_estimators": trees, "bootstrap": [], "random_state": 5,
            "spread": "se", "order": "columns", "show": "above", "n_permutations": 19}


def _store() -> dict:
    from pages._framework.datachoice import DataChoice

    return DataChoice.from_page({"problem": "xor:irrelevant=8", "sampling": "sample",
                                 "n": "20000"})[0].to_store()


def _download_values(trees: int) -> dict:
    c = _controls(trees)
    names = {"method": "imp-method", "max_features": "imp-k", "max_depth": "imp-depth",
             "criterion": "imp-criterion", "k_semantics": "imp-semantics",
             "n_estimators": "imp-trees", "bootstrap": "imp-bootstrap",
             "random_state": "imp-tree-seed", "spread": "imp-whiskers", "show": "imp-show",
             "n_permutations": "imp-perms", "order": "imp-order"}
    return {"imp-download-button.n_clicks": 1, "imp-data.data": _store(),
            **{f"{names[k]}.value": v for k, v in c.items()}}


def test_over_cap_requests_get_a_sentence_and_cheap_requests_stay_fast():
    tmp = Path(tempfile.mkdtemp(prefix="varimp-overcap-"))
    env = {**os.environ, "VARIMP_CACHE_DIR": str(tmp / "cache"), "VARIMP_MAX_TREES": str(CAP),
           "OMP_NUM_THREADS": "1"}
    env.pop("REDIS_URL", None)
    procs = Processes(tmp, env)
    try:
        base = start_web(procs, workers=2)
        job_values = {"imp-miss.data": {"values": _controls(OVER), "extra": {},
                                        "data": _store()}, "imp-instance.data": "overcap"}
        answers, stop = [], threading.Event()

        def hostile():
            job = DashCallbackClient.over_http(base, "imp-graph.figure", "/importances")
            download = DashCallbackClient.over_http(base, "imp-download.data", "/importances")
            body = download.body(_download_values(OVER), "imp-download-button.n_clicks")
            while not stop.is_set():
                _, _, last = job.run(job_values, "imp-miss.data", timeout=60)
                answers.append(("job", last))
                answers.append(("download", download.post(body)))

        threads = [threading.Thread(target=hostile, daemon=True) for _ in range(2)]
        for t in threads:
            t.start()
        cheap = DashCallbackClient.over_http(base, "imp-download.data", "/importances")
        cheap_body = cheap.body(_download_values(100), "imp-download-button.n_clicks")
        health, callback = [], []
        http = requests.Session()
        time.sleep(1.0)  # the hostile loops are running
        for _ in range(25):
            t0 = time.perf_counter()
            assert http.get(base + "/_health", timeout=30).status_code == 200
            health.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            note = cheap.post(cheap_body)["response"]["imp-download-note"]["children"]
            callback.append(time.perf_counter() - t0)
            assert note.startswith("This result is not in the server's cache"), note
            time.sleep(0.1)
        stop.set()
        for t in threads:
            t.join(90)
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)

    def ms(xs):
        xs = sorted(xs)
        return (f"median {1000 * statistics.median(xs):.0f} ms, "
                f"p95 {1000 * xs[int(0.95 * (len(xs) - 1))]:.0f} ms, max {1000 * xs[-1]:.0f} ms")

    print(f"\n{len(answers)} over-cap answers; /_health {ms(health)}; "
          f"cheap callback {ms(callback)} (machine loaded)")
    assert {kind for kind, _ in answers} == {"job", "download"}
    for kind, last in answers:
        text = str(last.get("response", {}))
        assert f"{CAP:,}" in text or str(CAP) in text, (kind, text[:500])
        assert "imp-graph" not in last.get("response", {}), kind  # no figure was drawn
        assert "Traceback" not in text
        assert "imp-download" not in last["response"], kind  # no CSV was made
    print({kind: str(last["response"])[:300] for kind, last in answers[:2]})
    assert statistics.median(health) < 0.2
    assert statistics.median(callback) < 0.2
