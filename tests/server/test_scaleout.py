"""Scale-out on a real engine: Redis, two gunicorn workers and Celery workers.

The test starts everything itself, on loopback only: Debian's ``redis-server``
(``make test`` installs it) on a free port without persistence, ``gunicorn
app:server`` with 2 workers and Celery workers ``celery -A app:celery_app
worker``, all with ``REDIS_URL`` set.  The web server and each worker have a
``VARIMP_CACHE_DIR`` of their own, as on separate machines: Redis is the only
state they share (uploads and results too, :mod:`pages._server.store`).
Each process runs in its own process group, which the fixtures' finalizers
kill.  Jobs go through Dash's background callback HTTP protocol
(``/_dash-update-component``: a first POST returns signed ``cacheKey`` and
``job`` handles, polls carry them and get ``progress`` until ``response``).
No timing is asserted (speed-ups are measured in ``bench/bench_fanout.py``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from _pages import page_module
from _servers import (BIN, ROOT, DashCallbackClient, Processes, die_with_parent, free_port,
                      job_ended, job_status, serves_health, start_redis, wait)
LOST_AFTER = 3  # seconds without a heartbeat before a job counts as lost (workers' setting)
IMPORTANCES = "imp-graph.figure"  # an output of the importances page's background callback


# -- processes (tests/_servers.py) ---------------------------------------------------
_free_port, _wait, _die_with_parent, _Processes = free_port, wait, die_with_parent, Processes


@pytest.fixture(scope="module", autouse=True)
def without_redis():
    """``import app`` without ``REDIS_URL``, in a subprocess started before the cluster."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    code = ("import sys, app; from dash import DiskcacheManager; "
            "assert isinstance(app.background_manager, DiskcacheManager); "
            "assert app.celery_app is None; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('redis', 'celery', 'kombu', 'billiard')))")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_die_with_parent)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


@pytest.fixture(scope="module")
def cluster(request):
    """Redis, gunicorn (2 workers) and two Celery workers (``a`` and ``b``)."""
    tmp = Path(tempfile.mkdtemp(prefix="varimp-scaleout-"))
    web_port = _free_port()
    env = {**os.environ, "VARIMP_JOB_LOST_AFTER": str(LOST_AFTER), "OMP_NUM_THREADS": "1",
           "PYTHONUNBUFFERED": "1"}
    env.pop("VARIMP_CACHE_URL", None)
    procs = _Processes(tmp, env)
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    request.addfinalizer(procs.stop_all)
    url = procs.env["REDIS_URL"] = start_redis(procs)
    procs.start("web", [str(BIN / "gunicorn"), "app:server", "--workers", "2",
                        "--bind", f"127.0.0.1:{web_port}", "--timeout", "120",
                        "--graceful-timeout", "2"],
                env={"VARIMP_CACHE_DIR": str(tmp / "cache-web")})
    c = _Cluster(procs, url, f"http://127.0.0.1:{web_port}")
    for name in ("a", "b"):
        c.start_worker(name)
    _wait(lambda: serves_health(c.base), 40, "gunicorn to serve /_health", procs.procs["web"], tmp / "web.log")
    for name in ("a", "b"):
        c.wait_worker(name)
    return c


class _Cluster:
    def __init__(self, procs: _Processes, url: str, base: str):
        from pages._server import celery_jobs

        self.procs, self.url, self.base = procs, url, base
        # This process only sends tasks; the app stays out of fanout's default.
        self.celery = celery_jobs.make_celery_app(url, default=False)

    def node(self, name: str) -> str:
        return f"varimp-test-{name}@{socket.gethostname()}"

    def start_worker(self, name: str) -> None:
        self.procs.start(f"worker-{name}", [
            str(BIN / "celery"), "-A", "app:celery_app", "worker", "-P", "prefork", "-c", "1",
            "-n", self.node(name), "--without-gossip", "--without-mingle", "-l", "INFO"],
            env={"VARIMP_CACHE_DIR": str(self.procs.logdir / f"cache-{name}")})

    def wait_worker(self, name: str) -> None:
        key = f"worker-{name}"
        _wait(lambda: f"{self.node(name)} ready." in self.procs.log(key), 60,
              f"Celery worker {name} to be ready", self.procs.procs.get(key),
              self.procs.logdir / f"{key}.log")

    def worker_alive(self, name: str) -> bool:
        proc = self.procs.procs.get(f"worker-{name}")
        return proc is not None and proc.poll() is None

    def ensure_worker(self, name: str) -> None:
        if not self.worker_alive(name):
            self.procs.kill(f"worker-{name}")
            self.start_worker(name)
            self.wait_worker(name)

    def consume(self, name: str, on: bool) -> None:
        """Let worker ``name`` take tasks from the default queue, or not."""
        control = self.celery.control
        call = control.add_consumer if on else control.cancel_consumer
        replies = call("celery", destination=[self.node(name)], reply=True, timeout=5)
        assert replies, f"worker {name} did not answer"


# -- Dash's background callback protocol (tests/_servers.py) ----------------------------
def _client(cluster, output_part: str) -> DashCallbackClient:
    """Drives the background callback with ``output_part`` over HTTP, as dash-renderer does."""
    return DashCallbackClient.over_http(cluster.base, output_part, "/importances")


def _importances_values(trees: int, seed: int, method: str = "forest") -> dict:
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_page({"problem": "xor:irrelevant=8", "sampling": "sample",
                                 "n": "20000"})[0]
    controls = {"method": method, "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3",
                "n_estimators": trees, "bootstrap": [], "random_state": seed, "spread": "se", "order": "columns", "show": "plugin", "n_permutations": 19}
    # what the page's plain callback writes to the miss store on a cache miss
    return {"imp-miss.data": {"values": controls, "extra": {}, "data": data.to_store()},
            "imp-instance.data": "test"}


def _task_id(signed_job: str) -> str:
    return signed_job.rpartition("~")[0]


def _on_both_workers(cluster, run, task: str) -> None:
    """Run on worker a alone, then on a and b: the second run's tasks reach both workers.

    Speed-ups are not asserted here: on a loaded machine a timed assertion fails (it did,
    with ratios of 0.77 to 1.11 against the 1.2 it asked for).
    """
    for n_workers in (1, 2):
        cluster.consume("b", n_workers == 2)
        before = {w: cluster.procs.log(f"worker-{w}").count(task) for w in "ab"}
        run(n_workers)
        after = {w: cluster.procs.log(f"worker-{w}").count(task) for w in "ab"}
        if n_workers == 1:
            assert after["b"] == before["b"], "worker b took work while it was not consuming"
        else:
            assert after["a"] > before["a"] and after["b"] > before["b"], (before, after)


# -- tests ---------------------------------------------------------------------------
def test_fanned_out_monte_carlo_is_identical_on_one_and_two_workers(cluster):
    from pages._server import fanout
    from varimp_core.studies.montecarlo import monte_carlo

    cluster.ensure_worker("a")
    cluster.ensure_worker("b")
    mapper = fanout.replicate_mapper(cluster.celery, local=False, timeout=30)
    spec = "xor:irrelevant=4"
    # Same seed, same numbers as the local run (and warms both workers up).
    small = dict(n_replicates=12, n_samples=300, n_estimators=20, chunk_size=2,
                 random_state=5, exact=False)
    here = monte_carlo(spec, **small)
    for m in (mapper, fanout.replicate_mapper(cluster.celery)):  # dispatch only; and helping
        there = monte_carlo(spec, mapper=m, **small)
        np.testing.assert_array_equal(there.replicates, here.replicates)
        np.testing.assert_array_equal(there.information, here.information)

    study = dict(n_replicates=40, n_samples=1000, n_estimators=300, chunk_size=2,
                 random_state=7, exact=False)
    results = {}

    def study_run(n_workers):
        ticks = []
        results[n_workers] = monte_carlo(spec, mapper=mapper,
                                         progress=lambda d, t: ticks.append(d), **study)
        assert ticks == sorted(ticks) and len(ticks) == 20 and ticks[-1] == 40

    _on_both_workers(cluster, study_run, "Task varimp.replicate_chunk[")
    np.testing.assert_array_equal(results[1].replicates, results[2].replicates)

    # Stopping a study revokes the chunks no worker has started.
    def discarded():
        logs = cluster.procs.log("worker-a") + cluster.procs.log("worker-b")
        return logs.count("Discarding revoked task: varimp.replicate_chunk")

    before, seen = discarded(), []
    stopped = monte_carlo(spec, mapper=mapper, should_stop=lambda: bool(seen),
                          progress=lambda d, t: seen.append(d), **{**study, "random_state": 8})
    assert stopped.cancelled and stopped.n_replicates < 40
    # 60 s: a worker busy with a chunk on loaded cores reaches the revoked ones later (CI,
    # 2026-11-29, under other work: none within 10 s)
    _wait(lambda: discarded() > before, 60, "workers discarding the revoked chunks")


def _rs_study(**kw):
    study = page_module("selection")
    from pages._framework.datachoice import DataChoice

    settings = dict(source="480", subspace_size=50, alpha=0.5, max_features=None,
                    n_estimators=150, min_sampled=5, beta=0.95, n_seeds=2, show="srs")
    return study.rs_study({**settings, **kw}, DataChoice.from_page({})[0])


class _Progress:
    """A job's progress: ``report(done, total, text)``, Cancel from ``stop()``, and the
    partial results the job hands out (``published``)."""

    def __init__(self, report=None, stop=None):
        self.report, self.stop, self.published = report, stop, []

    def publish(self, result):
        self.published.append(result)

    def __call__(self, done=0, total=None, text=None):
        if self.report is not None:
            self.report(done, total, text)

    def should_stop(self):
        return self.stop is not None and self.stop()


def test_fanned_out_selection_study_is_identical_on_one_and_two_workers(
        cluster, monkeypatch, tmp_path):
    from pages._server import fanout
    study = page_module("selection")

    cluster.ensure_worker("a")
    cluster.ensure_worker("b")
    cluster.consume("b", True)
    mapper = fanout.task_mapper(study.RS_TASK, cluster.celery, local=False, timeout=30)
    settings = _rs_study()
    runs = [(settings, seed, m) for seed in range(2) for m in ("rs", "srs")]
    # Same numbers as the study computed here (and warms both workers up).
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "local"))
    here = study.run_rs_study(settings, _Progress())
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "fanned"))
    monkeypatch.setattr(fanout, "task_mapper", lambda name: mapper)
    ticks = []
    progress = _Progress(lambda d, t, text: ticks.append(d))
    there = study.run_rs_study(settings, progress)
    assert there == here and not there["partial"]
    assert ticks[-1] == 600 and any(d % 150 for d in ticks)  # the workers' trees as they grow
    # The runs done are drawn as they arrive: after each of the 4 runs of 150 trees but the last.
    assert [(r["trees_done"], r["partial"], r["running"]) for r in progress.published] == [
        (150, True, True), (300, True, True), (450, True, True)]

    def study_run(n_workers):
        got = dict(mapper(runs))
        assert sorted(got) == [0, 1, 2, 3] and not any(r["stopped"] for r in got.values())

    _on_both_workers(cluster, study_run, "Task varimp.selection_run[")

    # Cancel: the running runs end after their current tree, the queued ones are discarded.
    def discarded():
        logs = cluster.procs.log("worker-a") + cluster.procs.log("worker-b")
        return logs.count("Discarding revoked task: varimp.selection_run")

    before, grown = discarded(), {}
    long = [(dict(settings, n_estimators=3000), *run[1:]) for run in runs]
    got = dict(mapper(long, progress=lambda i, d: grown.__setitem__(i, d),
                      should_stop=lambda: sum(grown.values()) >= 40))
    # each run ended early, after its current tree (not a timing: a count of trees grown)
    assert got and all(r["stopped"] and r["n_estimators"] < 3000 for r in got.values())
    _wait(lambda: discarded() > before, 10, "workers discarding the revoked runs")


def _selection_job(cluster, n_estimators: int, instance: str):
    """A client of the Selection page's RS/SRS job over gunicorn, and what the page's plain
    callback writes to the miss store on a cache miss (Madelon 480, 2 seeds, SRS)."""
    from pages._framework.datachoice import DataChoice

    store = DataChoice.from_page({})[0].to_store()
    controls = {"source": "480", "subspace_size": 50, "alpha": 0.5, "max_features": None,
                "n_estimators": n_estimators, "min_sampled": 5, "beta": 0.95, "n_seeds": 2,
                "show": "srs"}
    return _client(cluster, "sel-rs-graph.figure"), {
        "sel-rs-miss.data": {"values": controls, "extra": {"data_store": store}, "data": store},
        "sel-rs-instance.data": instance}


def _assert_cluster_result_is_a_local_run(cluster, monkeypatch, n_estimators: int) -> None:
    """The study the cluster cached in Redis equals the same study run in this process."""
    from pages._server import cache
    from pages._framework import studies
    study = page_module("selection")

    settings = _rs_study(n_estimators=n_estimators)
    monkeypatch.setenv("VARIMP_CACHE_URL", cluster.url)  # the cluster's store: Redis
    there = cache.get_json(studies.study_key("sel-rs", settings))
    monkeypatch.delenv("VARIMP_CACHE_URL")
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(cluster.procs.logdir / "here"))
    assert there == study.run_rs_study(settings, _Progress())


def test_selection_page_job_shares_its_runs_with_the_other_worker(cluster, monkeypatch):
    cluster.ensure_worker("a")
    cluster.ensure_worker("b")
    cluster.consume("b", True)
    client, values = _selection_job(cluster, 120, "t-scaleout")
    first, progress, last = client.run(values, "sel-rs-miss.data", timeout=60)
    status = job_status(last, "sel-rs-job-status")
    assert status.startswith("Done in"), status
    messages = [p.get("sel-rs-job-message.children", "") for p in progress]
    assert any("of 480 trees" in m and "runs done" in m for m in messages), messages
    # The job (the caller) ran on one worker and gave runs to the other, same numbers.
    task = _task_id(first["job"])
    logs = cluster.procs.log("worker-a") + cluster.procs.log("worker-b")
    assert re.search(rf"Task background_callback_\w+\[{task}\] succeeded", logs)
    assert "Task varimp.selection_run[" in logs
    _assert_cluster_result_is_a_local_run(cluster, monkeypatch, 120)


def test_a_job_survives_its_helper_worker_killed_and_restarted(cluster, monkeypatch):
    """``kill -9`` the worker running a Selection job's runs, start it again: the job ends
    with the numbers of a run in this process.  Redis is the only state the processes share
    (each has its own cache directory); the time it took is printed (README), not asserted."""
    for name in ("a", "b"):
        cluster.ensure_worker(name)
    cluster.consume("b", True)
    client, values = _selection_job(cluster, 160, "t-kill-restart")
    runs = {w: cluster.procs.log(f"worker-{w}").count("Task varimp.selection_run[") for w in "ab"}
    killed, t0 = {}, time.monotonic()

    def kill_the_helper_once_it_runs(first, progress):
        if killed:
            return
        runner = (cluster.celery.AsyncResult(_task_id(first["job"])).info or {}).get("hostname")
        for name in [n for n in "ab" if runner not in (None, cluster.node(n))]:
            if cluster.procs.log(f"worker-{name}").count("Task varimp.selection_run[") > runs[name]:
                cluster.procs.kill(f"worker-{name}")  # SIGKILL, mid-run
                killed[name] = time.monotonic()
                cluster.start_worker(name)  # back at once, with an empty cache directory

    first, progress, last = client.run(values, "sel-rs-miss.data", timeout=300,
                                       on_poll=kill_the_helper_once_it_runs)
    done = time.monotonic()
    assert killed, f"the job ended before a helper took a run: {last}"[:3000]
    status = job_status(last, "sel-rs-job-status")
    assert status.startswith("Done in"), status
    name = next(iter(killed))
    cluster.wait_worker(name)
    print(f"\nworker {name} killed {killed[name] - t0:.1f} s into the job and restarted; the job "
          f"ended {done - t0:.1f} s after it started, {done - killed[name]:.1f} s after the kill")
    _assert_cluster_result_is_a_local_run(cluster, monkeypatch, 160)


# y = x1 XOR x2 over the 8 rows of (x1, x2, x3) in {0, 1}^3, each 4 times; x3 is irrelevant.
XOR_CSV = "x1,x2,x3,y\n" + "".join(f"{i >> 2 & 1},{i >> 1 & 1},{i & 1},{(i >> 2 ^ i >> 1) & 1}\n"
                                   for i in range(8)) * 4


def test_an_upload_is_processed_by_a_worker_that_never_saw_the_web_disk(cluster):
    """Upload to gunicorn, compute on a Celery worker: each has its own cache directory.

    Expected importances, Louppe et al. (2013), Theorem 1 with p = 3 and K = 1:
    Imp(X1) = I(X1;Y|X2)/(3*2) + I(X1;Y|X2,X3)/3 = 1/6 + 1/3 = 1/2 bit, the same for X2,
    and 0 for X3; they sum to I(X1,X2,X3;Y) = 1 bit (Theorem 2).
    """
    import base64

    cluster.ensure_worker("a")
    cluster.ensure_worker("b")
    upload = DashCallbackClient.over_http(cluster.base, "data-upload-info.data", "/data")
    values = {"data-upload.contents": "data:text/csv;base64," +
              base64.b64encode(XOR_CSV.encode()).decode(), "data-upload.filename": "xor.csv"}
    answer = (upload.run(values, "data-upload.contents", timeout=60)[2]
              if upload.dep.get("background")
              else upload.post(upload.body(values, "data-upload.contents")))
    info = answer["response"]["data-upload-info"]["data"]
    assert info["rows"] == 32 and info["columns"] == ["x1", "x2", "x3", "y"]
    data = {"params": {"source": "upload", "upload": info["key"], "file": "xor.csv",
                       "target": "y"}}
    controls = {"method": "exact", "max_features": 1, "max_depth": None,
                "criterion": "entropy", "k_semantics": "id3", "n_estimators": 100,
                "bootstrap": [], "random_state": 0, "spread": "se", "order": "columns", "show": "plugin", "n_permutations": 19}
    first, _, last = _client(cluster, IMPORTANCES).run(
        {"imp-miss.data": {"values": controls, "extra": {}, "data": data},
         "imp-instance.data": "t-upload"}, "imp-miss.data", timeout=120)
    status = job_status(last, "imp-job-status")
    assert status.startswith("Done in"), status
    bars = last["response"]["imp-graph"]["figure"]["data"][0]
    heights = bars["y"]
    if isinstance(heights, dict):  # Plotly's typed array: base64 of little-endian doubles
        heights = np.frombuffer(base64.b64decode(heights["bdata"]), dtype="<f8")
    assert bars["x"] == ["x1", "x2", "x3"]
    np.testing.assert_allclose(heights, [0.5, 0.5, 0.0], atol=1e-12)
    task = _task_id(first["job"])
    logs = cluster.procs.log("worker-a") + cluster.procs.log("worker-b")
    assert re.search(rf"Task background_callback_\w+\[{task}\] succeeded", logs)
    # Nobody used a disk store: the table and the result went through Redis alone.
    for name in ("web", "a", "b"):
        assert not (cluster.procs.logdir / f"cache-{name}" / "data").exists(), name


def test_web_job_runs_on_a_worker_with_progress(cluster):
    cluster.ensure_worker("a")
    client = _client(cluster, IMPORTANCES)
    # 2,000 trees on 20,000 rows, then the verdicts' 20 forests of 50 trees
    first, progress, last = client.run(_importances_values(2000, 11), "imp-miss.data",
                                       timeout=90)
    status = job_status(last, "imp-job-status")
    assert status.startswith("Done in"), status
    assert last["response"]["imp-graph"]["figure"]["data"]
    messages = [p.get("imp-job-message.children", "") for p in progress]
    # The worker's counts reach the page: of the trees, or of the verdicts' permutations
    # (with the compiled kernels loaded as the worker starts, the 2,000 trees of this
    # compressible table can grow between two polls).
    assert any(re.search(r"^\d[\d,]* of [\d,]+ (trees|permutations)$", m) for m in messages), \
        messages
    # The job ran on a Celery worker, not in the web process.
    task = _task_id(first["job"])
    logs = cluster.procs.log("worker-a") + cluster.procs.log("worker-b")
    assert re.search(rf"Task background_callback_\w+\[{task}\] succeeded", logs)


def test_each_partial_result_reaches_the_page_once(cluster):
    """A job's partial figure (``imp-streamed``) comes with one poll, not with every poll after
    it: Dash's Celery manager never deleted it (it deleted the job's result key instead), so
    a scikit-learn forest growing in ten chunks sent the same figure again every 0.4 s."""
    cluster.ensure_worker("a")
    client = _client(cluster, IMPORTANCES)
    body = client.body(_importances_values(1000, 13, "sklearn-et"), "imp-miss.data")
    first = client.post(body)
    streamed, deadline = [], time.monotonic() + 240  # the forest, then R = 19 regrowths for the verdicts
    while time.monotonic() < deadline:
        time.sleep(0.2)
        answer = client.post(body, cacheKey=first["cacheKey"], job=first["job"])
        side = (answer.get("sideUpdate") or {}).get("imp-streamed")
        if side is not None:
            streamed.append(json.dumps(side, sort_keys=True))
        if job_ended(answer):
            break
    assert job_status(answer, "imp-job-status").startswith("Done in"), answer
    partials = [s for s in streamed if s != json.dumps({"data": None})]
    assert partials, f"no partial result was drawn while the trees grew: {streamed}"
    assert len(streamed) == len(set(streamed)), f"{len(streamed)} answers, " \
        f"{len(set(streamed))} distinct"


def test_killed_worker_ends_the_job_with_an_error_sentence(cluster):
    cluster.ensure_worker("a")
    client = _client(cluster, IMPORTANCES)
    killed = {}

    def kill_when_running(first, progress):
        if killed or not progress:
            return
        info = cluster.celery.AsyncResult(_task_id(first["job"])).info or {}
        for name in ("a", "b"):
            if info.get("hostname") == cluster.node(name):
                cluster.procs.kill(f"worker-{name}")
                killed[name] = time.monotonic()

    _, progress, last = client.run(_importances_values(10000, 12), "imp-miss.data",
                                   timeout=40, on_poll=kill_when_running)
    assert killed, f"the job ended before its worker could be killed: {progress[-2:]} {last}"[:3000]
    waited = time.monotonic() - next(iter(killed.values()))
    message = last["sideUpdate"]["imp-job-status"]["children"]
    print(f"\nworker killed; {waited:.1f} s later the page says: {message}")
    assert "worker computing this view stopped" in message
    assert "Traceback" not in message
    assert not last["response"]  # the outputs keep what they showed


def test_compose_shares_redis_and_the_secret_and_no_volume():
    """docker-compose.yml: web and worker merge one environment (REDIS_URL and the signing
    key), no volume is shared, and Redis evicts only keys that expire (the cache's)."""
    text = (ROOT / "docker-compose.yml").read_text()
    assert "volumes:" not in text
    anchor = text.split("x-varimp-env: &varimp-env\n", 1)[1].split("\n\n", 1)[0]
    assert "REDIS_URL: redis://redis:6379/0" in anchor and "VARIMP_SECRET_KEY: ${" in anchor
    assert text.count("<<: *varimp-env") == 2  # web and worker
    assert '"--maxmemory-policy", "volatile-lru"' in text


def test_without_redis_url_the_app_uses_diskcache_and_never_imports_redis(without_redis):
    out, err = without_redis.communicate(timeout=60)
    assert without_redis.returncode == 0, err[-2000:]
    assert out.strip() == "[]"
