"""Jobs started against jobs hung under ``make run`` (the threaded development server), #27.1.

Starts ``python app.py`` as ``make run`` does (its own cache folder and port), then
``--clients`` threads each start ``--jobs``/clients short Importances jobs one after another
(a 100-row xor sample, 5 trees, a new seed each: no cache hit) and poll them as the browser
does.  Every poll is a request thread of the server that uses the diskcache (SQLite) while
other jobs are forked.  A job whose process hangs as it starts ends, after
``VARIMP_JOB_START_TIMEOUT`` (5 s), in the sentence "hung as it started"; it is counted hung.

    PYTHONPATH=. python bench/bench_job_starts.py [--jobs 300] [--clients 3] [--server gunicorn]

``BENCH_LOG=path`` keeps the server's log.  Jobs that end otherwise are printed.

Measured 2026-11-28 on the shared 2-core machine (load average 4-7, three other agents'
tests running), 3 clients, main as it is: 300 jobs, 0 hung, 0 other (177 s); 150 jobs,
0 hung, 4 other, each "database disk image is malformed" from SQLite in the job process
(171 s).  A variant that closed each request thread's connections at the end of the request
made it worse (disk I/O errors in the children, 204s): a job forked from the threaded
server shares SQLite's file and lock state with its parent, which SQLite says never to
carry across a fork.  Starting jobs from a process with no SQLite connection and no thread
(a forkserver) is the fix (#27.1).

With jobs started from the fork server (``pages/_server/job_host.py``), same machine and
load, 3 clients: a first version, whose children ran ``app.py`` again as ``__mp_main__``
before their job (Python 3.11's forkserver drops the main path), had 7 of 300 jobs (625 s)
and 13 of 60 jobs reported "hung as it started", all in the first minute after the server
started: slow starts past the 5 s allowance (no stack was ever dumped from ``run_job``), not
deadlocks.  Run side by side with it, the parent commit (bare forks) had 300 jobs, 0 hung, 0
other (544 s): the SQLite hazard is rare at this scale.  With the main script skipped in the
children: 60 jobs, 0 hung, 0 other (240 s); 150 jobs, 0 hung, 0 other (464 s).

1,000 jobs (issue #27.1's count), 4 clients, same machine, 2026-11-28/29, other test suites
running beside it (load 5-15), each job a 5-tree forest on the exact XOR with one irrelevant
bit (no permutation test, so more starts per minute): ``make run``: 1,000 jobs, 0 hung, 0
other (2,379 s); ``--server gunicorn`` (``make serve``'s 2 gthread workers of 4 threads):
1,000 jobs, 0 hung, 0 other (1,705 s).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]   # the app, and the tests' callback client


def _values(seed: int) -> dict:
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_page({"problem": "xor:irrelevant=1"})[0]
    controls = {"method": "forest", "max_features": 1, "max_depth": None,
                "criterion": "entropy", "k_semantics": "id3", "n_estimators": 5,
                "bootstrap": [], "random_state": seed, "spread": "se", "n_trees": None,
                "precision": None, "order": "columns", "show": "above",
                "n_permutations": 19}
    return {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
            "imp-instance.data": f"bench-{seed}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--port", type=int, default=8093)
    ap.add_argument("--server", choices=("make-run", "gunicorn"), default="make-run",
                    help="make run's threaded server, or make serve's gunicorn gthread workers")
    args = ap.parse_args()
    import requests
    from _servers import DashCallbackClient, job_status

    env = {**os.environ, "VARIMP_PORT": str(args.port),
           "VARIMP_CACHE_DIR": tempfile.mkdtemp(prefix="varimp-bench-starts-"),
           "VARIMP_SECRET_KEY": "bench-job-starts", "PYTHONPATH": str(ROOT)}
    if args.server == "gunicorn":   # make serve's command line
        command = [str(Path(sys.executable).with_name("gunicorn")), "app:server", "--workers", "2",
                   "--worker-class", "gthread", "--threads", "4", "--timeout", "120",
                   "--graceful-timeout", "30", "--keep-alive", "5",
                   "--bind", f"127.0.0.1:{args.port}"]
    else:                           # make run's
        command = [sys.executable, str(ROOT / "app.py")]
    server = subprocess.Popen(command, env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=open(os.environ.get("BENCH_LOG", os.devnull), "w"))
    base = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(600):
            try:
                if requests.get(base + "/_health", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.1)
        counts = {"done": 0, "hung": 0, "other": 0}
        lock = threading.Lock()
        per = args.jobs // args.clients

        def client(k: int) -> None:
            c = DashCallbackClient.over_http(base, "imp-graph.figure", "/importances")
            for i in range(per):
                status = job_status(c.run(_values(1000 * k + i), "imp-miss.data",
                                          timeout=120)[2], "imp-job-status") or ""
                if os.environ.get("BENCH_VERBOSE"):
                    print("  ", status[:120], flush=True)
                kind = ("done" if status.startswith("Done in") else
                        "hung" if "hung as it started" in status else "other")
                with lock:
                    counts[kind] += 1
                    if kind == "other":
                        print("   other:", status[:200], flush=True)

        started = time.perf_counter()
        threads = [threading.Thread(target=client, args=(k,)) for k in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total = sum(counts.values())
        label = "make serve (gunicorn gthread)" if args.server == "gunicorn" else "make run (threaded)"
        print(f"{label}: {total} jobs, {counts['hung']} hung as they started "
              f"({100 * counts['hung'] / max(total, 1):.1f} %), {counts['other']} other, "
              f"{time.perf_counter() - started:.0f} s")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
