"""Fan-out on Celery workers: 1 worker against 2, and a job through a worker's kill -9 (issue #16).

The script starts its own ``redis-server`` (a free loopback port, no persistence) and two
Celery workers ``celery -A app:celery_app worker -c 1``, each with a cache directory of
its own, as on two machines: Redis is the only state they share.  It then times

* Selection: the RS/SRS runs of a study (``varimp.selection_run``, 2 seeds x RS/SRS = 4
  runs on the 480-variable problem), sent as a task group with this process only waiting;
* Distributions: a Monte Carlo study with fresh samples (``varimp.replicate_chunk``), the
  Distributions page's fan-out, the same way;

first with worker ``b`` not consuming (1 worker), then with both (2 workers): the
ratio is the fan-out's speed-up (at most 2; the machine's cores bound it too).  The
numbers of both runs are compared (they must be identical).

Then the kill-and-restart figure: the Selection study with this process helping, as the
page's job does on its worker (``local=True``: it computes the runs nobody started and
those whose worker stalls), once undisturbed and once with worker ``b`` killed with
SIGKILL while it runs a run and started again at once.  Printed: both times and whether
the numbers are identical.  ``tests/server/test_scaleout.py`` asserts the same through gunicorn.

    PYTHONPATH=. python bench/bench_fanout.py [--quick]
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
from _servers import BIN, Processes, start_redis, wait  # noqa: E402
from _timing import quick_parser, timed  # noqa: E402


class Cluster:
    """redis-server and Celery workers ``a`` and ``b`` in a temporary directory."""

    def __init__(self, tmp: Path):
        env = {k: v for k, v in os.environ.items() if k != "VARIMP_CACHE_URL"}
        env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        self.procs = Processes(tmp, env)
        self.url = self.procs.env["REDIS_URL"] = start_redis(self.procs)
        from pages._server import celery_jobs

        self.celery = celery_jobs.make_celery_app(self.url, default=False)
        for name in "ab":
            self.start(name)
        for name in "ab":
            self.ready(name)

    def node(self, name: str) -> str:
        return f"varimp-bench-{name}@{socket.gethostname()}"

    def start(self, name: str) -> None:
        self.procs.start(f"worker-{name}", [
            str(BIN / "celery"), "-A", "app:celery_app", "worker", "-P", "prefork", "-c", "1",
            "-n", self.node(name), "--without-gossip", "--without-mingle", "-l", "INFO"],
            env={"VARIMP_CACHE_DIR": str(self.procs.logdir / f"cache-{name}")})

    def ready(self, name: str) -> None:
        key = f"worker-{name}"
        wait(lambda: f"{self.node(name)} ready." in self.procs.log(key), 120,
             f"worker {name} ready", self.procs.procs.get(key), self.procs.logdir / f"{key}.log")

    def consume(self, name: str, on: bool) -> None:
        control = self.celery.control
        call = control.add_consumer if on else control.cancel_consumer
        assert call("celery", destination=[self.node(name)], reply=True, timeout=5)

    def runs_received(self, name: str) -> int:
        return self.procs.log(f"worker-{name}").count("Task varimp.selection_run[")


def selection(cluster: Cluster, trees: int):
    from pages._framework.datachoice import DataChoice
    from pages._server import fanout
    from tests._pages import page_module

    study = page_module("selection")  # a page module imports once the app exists

    settings = study.rs_study(dict(source="480", subspace_size=50, alpha=0.5, max_features=None,
                                   n_estimators=trees, min_sampled=5, beta=0.95, n_seeds=2,
                                   show="srs"), DataChoice.from_page({})[0])
    runs = [(settings, seed, m) for seed in range(2) for m in ("rs", "srs")]
    mapper = fanout.task_mapper(study.RS_TASK, cluster.celery, local=False, timeout=600)
    return lambda: sorted(dict(mapper(runs)).items())


def distributions(cluster: Cluster, replicates: int):
    from pages._server import fanout
    from varimp_core.studies.montecarlo import monte_carlo

    mapper = fanout.replicate_mapper(cluster.celery, local=False, timeout=600)
    return lambda: monte_carlo("xor:irrelevant=4", mapper=mapper, n_replicates=replicates,
                               n_samples=1000, n_estimators=300, chunk_size=2, random_state=7,
                               exact=False).replicates


def one_against_two(cluster: Cluster, name: str, run) -> None:
    cluster.consume("b", True)
    run()  # warm-up: both workers import what the task needs
    times, outs = {}, {}
    for n in (1, 2):
        cluster.consume("b", n == 2)
        times[n], outs[n] = timed(run, repeat=2)  # the best of two: the machine is shared
    same = (np.array_equal(outs[1], outs[2]) if isinstance(outs[1], np.ndarray)
            else outs[1] == outs[2])
    print(f"{name:<14} {times[1]:>10.1f} {times[2]:>10.1f} {times[1] / times[2]:>9.2f}x"
          f"   identical numbers: {same}")


def kill_and_restart(cluster: Cluster, trees: int) -> None:
    """The Selection study with this process helping; worker b killed mid-run, restarted."""
    from pages._framework.datachoice import DataChoice
    from pages._server import fanout
    from tests._pages import page_module

    study = page_module("selection")  # a page module imports once the app exists

    cluster.consume("b", True)
    settings = study.rs_study(dict(source="480", subspace_size=50, alpha=0.5, max_features=None,
                                   n_estimators=trees, min_sampled=5, beta=0.95, n_seeds=2,
                                   show="srs"), DataChoice.from_page({})[0])
    runs = [(settings, seed, m) for seed in range(2) for m in ("rs", "srs")]
    mapper = fanout.task_mapper(study.RS_TASK, cluster.celery, local=True, timeout=600)
    quiet, expected = timed(lambda: sorted(dict(mapper(runs)).items()))
    before, killed = cluster.runs_received("b"), {}

    def kill_b_once_it_runs(*_):  # a progress report, in this thread (no fork from another)
        if not killed and cluster.runs_received("b") > before:
            cluster.procs.kill("worker-b")  # SIGKILL while it runs a run
            killed["at"] = time.perf_counter()
            cluster.start("b")  # back at once, with an empty cache directory

    t0 = time.perf_counter()
    got = sorted(dict(mapper(runs, progress=kill_b_once_it_runs)).items())
    end = time.perf_counter()
    cluster.ready("b")
    print(f"Selection, {trees} trees x 4 runs, this process helping: undisturbed {quiet:.1f} s; "
          f"worker b killed {killed['at'] - t0:.1f} s in and restarted: {end - t0:.1f} s; "
          f"identical numbers: {got == expected}")


def main(argv=None) -> None:
    args = quick_parser("fewer trees and replicates").parse_args(argv)
    trees, replicates = (100, 12) if args.quick else (400, 200)
    tmp = Path(tempfile.mkdtemp(prefix="varimp-bench-fanout-"))
    cluster = None
    try:
        cluster = Cluster(tmp)
        print(f"{os.cpu_count()} cores; 2 Celery workers of 1 process each, separate cache "
              "directories, Redis shared")
        print(f"{'fan-out':<14} {'1 worker s':>10} {'2 workers s':>10} {'1 / 2':>10}")
        one_against_two(cluster, "Selection", selection(cluster, trees))
        one_against_two(cluster, "Distributions", distributions(cluster, replicates))
        kill_and_restart(cluster, trees)
    finally:
        if cluster is not None:
            cluster.procs.stop_all()
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
