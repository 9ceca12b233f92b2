"""RS/SRS runs fanned out as a Celery task group (``pages/_ui/fanout_selection.py``).

First a fake mapper that runs the JSON tasks itself, then the real task group
on an in-process Celery app (in-memory broker and result store) with one
worker thread (solo pool): same numbers as a local run, runs nobody started
computed by the caller, a stuck worker's run recomputed, Cancel stopping the
worker's running run.  ``tests/test_scaleout.py`` does it on Redis with
worker processes.
"""

from __future__ import annotations

import json
import threading
import time
from types import SimpleNamespace

import pytest

from pages._ui import cache, fanout, fanout_selection
from pages._ui import selection_logic as logic


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def _rs(**kw):
    controls = dict(choice="480", data={}, q=20, alpha=0.5, K=None, T=30, L=5, beta=0.95,
                    seeds=2)
    controls.update(kw)
    return logic.rs_settings(**controls)


def _local(settings, monkeypatch, tmp_path):
    """The study computed in this process, in a cache of its own."""
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "local"))
    view = logic.compute_rs(settings)
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "cache"))
    return view


def _runs(settings):
    return [(s, m) for s in range(settings["seeds"]) for m in ("rs", "srs")]


def test_fanned_out_study_equals_the_local_run(monkeypatch, cache_dir):
    settings = _rs(T=15, q=20, seeds=2)
    here = _local(settings, monkeypatch, cache_dir)
    seen = []

    def mapper(settings, runs, *, progress=None, should_stop=None):
        # what workers do: JSON in, the task's function, JSON out; in reverse order
        seen.append(list(runs))
        task = SimpleNamespace(request=SimpleNamespace(id=None), app=None)
        for i in reversed(range(len(runs))):
            args = json.loads(json.dumps([settings, *runs[i]]))
            yield i, json.loads(json.dumps(fanout_selection._selection_run(task, *args)))

    monkeypatch.setattr(fanout_selection, "run_mapper", lambda: mapper)
    there = logic.compute_rs(settings)
    assert seen == [[(0, "rs"), (0, "srs"), (1, "rs"), (1, "srs")]]
    assert there == here   # curves, selections, trees: every number
    assert there["trees_done"] == 60 and not there["partial"]


# -- a real task group, in-process ------------------------------------------------
@pytest.fixture(scope="module")
def celery_app():
    from celery import Celery
    from celery.contrib.testing.worker import start_worker

    app = Celery("varimp-test", broker="memory://", backend="cache+memory://")
    app.conf.update(task_serializer="json", result_serializer="json", accept_content=["json"],
                    result_accept_content=["json"], task_track_started=True,
                    worker_prefetch_multiplier=1,
                    broker_transport_options={"polling_interval": 0.01})
    fanout.install(app, default=False)
    fanout_selection.install(app)
    with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                      loglevel="WARNING"):
        yield app


@pytest.fixture
def threads(monkeypatch):
    """Where each run was computed: (seed, method, "worker" or "caller", T); a stuck worker."""
    real, calls = logic.rs_run, []
    hold = {"run": None, "event": threading.Event()}

    def spy(settings, seed, method, **kw):
        worker = threading.current_thread() is not threading.main_thread()
        calls.append((seed, method, "worker" if worker else "caller", settings["T"]))
        if worker and hold["run"] == (seed, method):
            hold["event"].wait(30)   # a stuck worker
        return real(settings, seed, method, **kw)

    monkeypatch.setattr(logic, "rs_run", spy)
    yield SimpleNamespace(calls=calls, hold=hold)
    hold["event"].set()


def test_worker_and_caller_share_the_runs_with_the_same_numbers(
        celery_app, threads, monkeypatch, cache_dir):
    settings = _rs(T=40, q=20, seeds=2)
    here = _local(settings, monkeypatch, cache_dir)
    threads.calls.clear()
    mapper = fanout_selection.run_mapper(celery_app)
    monkeypatch.setattr(fanout_selection, "run_mapper", lambda: mapper)
    ticks = []
    there = logic.compute_rs(settings, progress=lambda d, t, text: ticks.append((d, t, text)))
    assert there == here
    who = {c[2] for c in threads.calls}
    assert who == {"worker", "caller"}, threads.calls   # both took a share
    assert ticks[-1][:2] == (160, 160) and "runs done" in ticks[-1][2]


def test_a_stuck_workers_run_is_recomputed(celery_app, threads):
    settings = _rs(T=20, q=20, seeds=2)
    runs = _runs(settings)
    threads.hold["run"] = (0, "rs")    # the first run a worker starts never ends
    mapper = fanout_selection.run_mapper(celery_app, stall_after=0.5)
    t0 = time.monotonic()
    got = dict(mapper(settings, runs))
    assert time.monotonic() - t0 < 20
    assert (0, "rs", "worker", 20) in threads.calls and (0, "rs", "caller", 20) in threads.calls
    assert got == {i: logic.rs_run(settings, *run) for i, run in enumerate(runs)}


def test_cancel_stops_the_workers_running_run(celery_app, threads, monkeypatch):
    # local=False: the caller only dispatches, so every run is the worker's
    settings = _rs(T=3000, q=20, seeds=2)
    worker_trees = {}

    def progress(i, done):
        worker_trees[i] = done

    mapper = fanout_selection.run_mapper(celery_app, local=False, timeout=30)
    t0 = time.monotonic()
    got = dict(mapper(settings, _runs(settings), progress=progress,
                      should_stop=lambda: worker_trees.get(0, 0) >= 20))
    elapsed = time.monotonic() - t0
    assert list(got) == [0]                      # the queued runs were dropped (revoked)
    assert got[0]["stopped"] and 20 <= got[0]["n_estimators"] < 3000
    assert elapsed < 15, elapsed                 # 3,000 trees would take far longer
    # (a solo worker reads the revokes of a previous test's runs late: those may run now)
    assert [c for c in threads.calls if c[3] == 3000] == [(0, "rs", "worker", 3000)]

    # and through compute_rs: a partial view, nothing cached
    monkeypatch.setattr(fanout_selection, "run_mapper", lambda: mapper)
    trees = [0]
    view = logic.compute_rs(settings, progress=lambda d, t, text: trees.append(d),
                            should_stop=lambda: trees[-1] >= 20)
    assert view["partial"] and 20 <= view["trees_done"] < 3000
    assert set(view["curves"]["method"]) == {"rs"} and set(view["curves"]["seed"]) == {0}
    assert cache.get_json(logic.rs_key(settings)) is None


def test_cancelling_the_dash_job_raises_the_stop_flag(celery_app):
    token = "t" * 32
    celery_app.backend.set("varimp-fanout-job-1", json.dumps({"ids": [], "stop": token}))
    flag = fanout.stop_flag(celery_app, token)
    assert not flag()
    fanout.revoke_children(celery_app, "job-1")
    assert fanout.stop_flag(celery_app, token)()
