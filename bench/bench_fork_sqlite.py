"""Jobs that inherit a locked SQLite mutex (#27.1): how many forked children hang in connect.

One thread opens and closes SQLite connections while the main thread starts child processes
that connect too, as ``make run`` (a threaded server) forks one process per job while its
other threads use the diskcache (SQLite).  A child forked while the thread held SQLite's
allocator mutex inherits it locked and hangs in ``sqlite3.connect`` for ever.  Each child
here has ``--hang`` seconds to connect; one that does not is counted hung and killed.

    PYTHONPATH=. python bench/bench_fork_sqlite.py [--jobs 500] [--methods fork,forkserver,spawn]

``fork`` is what Dash's DiskcacheManager does today; ``forkserver`` and ``spawn`` start a job
from a process with no other thread.

Measured 2026-11-28 on the shared 2-core machine (load average about 16), two churning threads:
fork 95 of 300 hung (31.7 %, 1,077 ms per start); forkserver 0 of 100 (690 ms); spawn 4 of 60
"hung" (2,126 ms per start: slower than the 3 s allowance under that load, not deadlocked).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sqlite3
import tempfile
import threading
import time


def _child(path: str) -> None:
    sqlite3.connect(path).execute("select 1").fetchall()


def _churn(path: str, stop: threading.Event) -> None:
    while not stop.is_set():
        sqlite3.connect(path).close()


def run(method: str, jobs: int, hang: float, path: str) -> dict:
    ctx = multiprocessing.get_context(method)
    stop = threading.Event()
    threads = [threading.Thread(target=_churn, args=(path, stop), daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    hung, started = 0, time.perf_counter()
    try:
        for _ in range(jobs):
            proc = ctx.Process(target=_child, args=(path,))
            proc.start()
            proc.join(hang)
            if proc.exitcode is None:
                hung += 1
                proc.kill()
                proc.join()
    finally:
        stop.set()
        for t in threads:
            t.join()
    seconds = time.perf_counter() - started
    return {"method": method, "jobs": jobs, "hung": hung, "ms_per_job": 1000 * seconds / jobs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=300)
    ap.add_argument("--hang", type=float, default=3.0)
    ap.add_argument("--methods", default="fork,forkserver,spawn")
    args = ap.parse_args()
    path = os.path.join(tempfile.mkdtemp(prefix="varimp-fork-sqlite-"), "db.sqlite")
    sqlite3.connect(path).close()
    for method in args.methods.split(","):
        r = run(method, args.jobs, args.hang, path)
        print(f"{r['method']:>10}: {r['hung']:4d} of {r['jobs']} jobs hung "
              f"({100 * r['hung'] / r['jobs']:.1f} %), {r['ms_per_job']:.1f} ms per job start")


if __name__ == "__main__":
    main()
