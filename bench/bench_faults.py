"""Web load during faults under Celery: errors, p95 of cheap requests, time to the sentence.

    python bench/bench_faults.py [--clients 6] [--rounds 3] [--json out.json]

Starts Redis (loopback, no persistence), ``gunicorn app:server`` (2 workers) with
``REDIS_URL`` and a ``VARIMP_SECRET_KEY``, and one Celery worker with one pool process.
``--clients`` users then change K on the Importances page (cache hits answered in the
request, checked against the core's exact importances, as ``bench_web.py`` does) for the
whole run, while a fault client starts a long Importances job (10,000 trees) and, once
it reports progress, injects a fault:

* ``kill-pool``: ``SIGKILL`` of the pool process running the job (what the OOM killer does);
* ``restart-redis``: Redis stopped, and started again 2 s later (its data lost) while the
  page polls on.

For each fault it records the seconds from the fault to the page's sentence (the status
line of the poll that ends the job), and for the cheap requests made meanwhile the count,
errors and p50/p95.  The goal is a sentence within 10 s and no cheap request lost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import requests

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests", ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from _servers import DashCallbackClient  # noqa: E402  (tests/_servers.py: Dash's protocol)
from bench_web import (DashClient, check_answer, control_change,  # noqa: E402
                       expected_importances, free_port, percentiles, serve)

DEADLINE_S = 10.0
FAULTS = ("kill-pool", "restart-redis")


class Redis:
    def __init__(self, tmp: str):
        self.port, self.tmp, self.proc = free_port(), tmp, None
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [shutil.which("redis-server") or "/usr/bin/redis-server", "--bind", "127.0.0.1",
             "--port", str(self.port), "--save", "", "--appendonly", "no"],
            cwd=self.tmp, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
            start_new_session=True)
        import redis

        client = redis.Redis.from_url(self.url, socket_timeout=1)
        for _ in range(100):
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)
            self.proc = None


def start_worker(env: dict, tmp: str) -> subprocess.Popen:
    log = open(Path(tmp) / "worker.log", "wb")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("celery")), "-A", "app:celery_app", "worker",
         "-P", "prefork", "-c", "1", "-n", "bench-faults@%h", "--without-gossip",
         "--without-mingle", "-l", "INFO"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(900):
        if b" ready." in Path(log.name).read_bytes():
            return proc
        time.sleep(0.1)
    raise RuntimeError("the Celery worker did not start")


def long_job_values(seed: int) -> dict:
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_page({"problem": "xor:irrelevant=8", "sampling": "sample",
                                 "n": "20000"})[0]
    controls = {"method": "forest", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3", "n_estimators": 10_000, "bootstrap": [],
                "random_state": seed, "spread": "se"}
    return {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
            "imp-instance.data": "bench-faults"}


def fault_round(base: str, fault: str, seed: int, worker: subprocess.Popen,
                redis: Redis) -> dict:
    """One long job and one fault; the seconds from the fault to the page's sentence."""
    at: dict = {}

    def inject(first, progress):
        if at or not progress:
            return
        at["t"] = time.monotonic()
        if fault == "kill-pool":
            for child in psutil.Process(worker.pid).children():
                os.kill(child.pid, signal.SIGKILL)
        else:  # polls go on while Redis is away, as a browser's do
            redis.stop()
            at["restart"] = threading.Timer(2.0, redis.start)
            at["restart"].start()

    client = DashCallbackClient.over_http(base, "imp-graph.figure", "/importances")
    _, _, last = client.run(long_job_values(seed), "imp-miss.data", timeout=120,
                            on_poll=inject)
    took = time.monotonic() - at["t"] if at else None
    if "restart" in at:
        at["restart"].join(30)  # Redis is back before the next round
    sentence = (last.get("sideUpdate") or {}).get("imp-job-status", {}).get("children")
    return {"fault": fault, "seconds_to_sentence": None if took is None else round(took, 2),
            "sentence": sentence}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each fault")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args(argv)
    expected = expected_importances()
    tmp = tempfile.mkdtemp(prefix="varimp-bench-faults-")
    redis = Redis(tmp)
    redis.start()
    env = {"REDIS_URL": redis.url, "VARIMP_SECRET_KEY": "bench-faults-secret",
           "OMP_NUM_THREADS": "1", "VARIMP_CACHE_DIR": str(Path(tmp) / "cache")}
    worker = None
    rounds, latencies, errors = [], [], []
    try:
        with serve(workers=2, cache_dir=env["VARIMP_CACHE_DIR"], env=env) as base:
            worker = start_worker({**os.environ, **env}, tmp)
            probe = DashClient(base)
            page = probe.open_page("/importances")
            for k, values in expected.items():  # warm the cache: each distinct request once
                problem = check_answer(control_change(probe, page, k), values)
                if problem:
                    raise SystemExit(f"Warm-up request K={k} failed: {problem}")
            probe.close()
            stop, lock = threading.Event(), threading.Lock()

            def user(i: int) -> None:
                client = DashClient(base)
                page = client.open_page("/importances")
                k = 1 + i % 7
                while not stop.is_set():
                    k = 1 + k % 7
                    try:
                        answer = control_change(client, page, k)
                        error = check_answer(answer, expected[k])
                    except Exception as exc:  # counted, never fatal
                        answer, error = None, f"{type(exc).__name__}: {exc}"
                    with lock:
                        if error:
                            errors.append(error)
                        else:
                            latencies.append(answer.ms)
                client.close()

            users = [threading.Thread(target=user, args=(i,), daemon=True)
                     for i in range(args.clients)]
            for t in users:
                t.start()
            t0 = time.monotonic()
            for r in range(args.rounds):
                for fault in FAULTS:
                    one = fault_round(base, fault, 100 * r + len(rounds), worker, redis)
                    print(f"{fault:<14} sentence after {one['seconds_to_sentence']} s: "
                          f"{one['sentence']}")
                    rounds.append(one)
            seconds = time.monotonic() - t0
            stop.set()
            for t in users:
                t.join(60)
    finally:
        if worker is not None:
            os.killpg(worker.pid, signal.SIGKILL)
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    p = percentiles(latencies)
    times = [r["seconds_to_sentence"] for r in rounds]
    worst = max((t for t in times if t is not None), default=float("nan"))
    print(f"cheap requests during {seconds:.0f} s of faults ({args.clients} clients): "
          f"count {len(latencies)}, errors {len(errors)}, p50 {p['p50']:.0f} ms, "
          f"p95 {p['p95']:.0f} ms; slowest sentence {worst:.1f} s (goal {DEADLINE_S:g} s)")
    for e in sorted(set(errors))[:5]:
        print(f"    error: {e}")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "clients": args.clients, "seconds": round(seconds, 1), "rounds": rounds,
            "cheap": {"count": len(latencies), "errors": len(errors),
                      **{k: round(v, 1) for k, v in p.items()}}}, indent=2) + "\n")
    ok = not errors and all(t is not None and t < DEADLINE_S for t in times)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
