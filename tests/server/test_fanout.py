"""RS/SRS runs fanned out as a Celery task group (the task the Selection page registers).

The Selection page registers :func:`pages.selection.rs_run` as the
fan-out task ``varimp.selection_run`` (:func:`pages._server.fanout.register`);
the fan-out knows only that name.  First a fake mapper that runs the JSON
tasks itself, then the real task group on an in-process Celery app (in-memory
broker and result store) with one worker thread (solo pool): same numbers as
a local run, runs nobody started computed by the caller, a stuck worker's run
recomputed, Cancel stopping the worker's running run.
``tests/server/test_scaleout.py`` does it on Redis with worker processes.
"""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace

import pytest

from _pages import page_module
from pages._server import jobs
from pages._server import fanout
from pages._framework.datachoice import DataChoice
from varimp_core.studies.rs_srs import SubspaceComparison

study = page_module("selection")

DATA = DataChoice.from_page({"problem": "led"})[0]


@pytest.fixture(autouse=True)
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


class _Stop(jobs.Progress):
    """A job's progress with a ``should_stop`` of the test's own."""

    def __init__(self, report=None, should_stop=None):
        super().__init__(None)
        self.report, self.stop = report, should_stop

    def __call__(self, done=0, total=None, text=None):
        if self.report is not None:
            self.report(done, total, text)

    def should_stop(self):
        return self.stop is not None and self.stop()


def _rs(**kw):
    settings = dict(source="480", subspace_size=20, alpha=0.5, max_features=None,
                    n_estimators=30, min_sampled=5, beta=0.95, n_seeds=2, show="srs")
    settings.update(kw)
    return study.rs_study(settings, DATA)


def _local(settings):
    """The study computed in this process (no Celery app here: no fan-out)."""
    assert fanout.task_mapper(study.RS_TASK) is None
    return study.run_rs_study(settings, _Stop())


def _runs(settings):
    return [(settings, s, m) for s in range(settings["n_seeds"]) for m in ("rs", "srs")]


def test_the_page_registers_its_run_and_the_fan_out_knows_only_the_name():
    assert fanout.TASKS[study.RS_TASK] is study.rs_run
    from pages._server import celery_jobs

    source = open(fanout.__file__).read() + open(celery_jobs.__file__).read()
    assert "selection" not in source.replace("varimp.selection_run", "")


def test_fanned_out_study_equals_the_local_run(monkeypatch):
    settings = _rs(n_estimators=15, subspace_size=20, n_seeds=2)
    here = _local(settings)
    seen = []

    def mapper(args, *, progress=None, should_stop=None):
        # what workers do: JSON in, the registered task, JSON out; in reverse order
        seen.append([a[1:] for a in args])
        task = SimpleNamespace(request=SimpleNamespace(id=None), app=None, name=study.RS_TASK)
        for i in reversed(range(len(args))):
            yield i, json.loads(json.dumps(fanout._registered(task, *json.loads(
                json.dumps(args[i])))))

    monkeypatch.setattr(fanout, "task_mapper", lambda name: mapper)
    there = study.run_rs_study(settings, _Stop())
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
    with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False,
                      loglevel="WARNING"):
        yield app


@pytest.fixture
def threads(monkeypatch):
    """Where each run was computed: (seed, method, "worker" or "caller", T); a stuck worker."""
    real, calls = study.rs_run, []
    hold = {"run": None, "event": threading.Event()}

    def spy(settings, seed, method, **kw):
        worker = threading.current_thread() is not threading.main_thread()
        calls.append((seed, method, "worker" if worker else "caller", settings["n_estimators"]))
        if worker and hold["run"] == (seed, method):
            hold["event"].wait(30)   # a stuck worker
        return real(settings, seed, method, **kw)

    monkeypatch.setitem(fanout.TASKS, study.RS_TASK, spy)
    yield SimpleNamespace(calls=calls, hold=hold)
    hold["event"].set()


def test_worker_and_caller_share_the_runs_with_the_same_numbers(
        celery_app, threads, monkeypatch):
    settings = _rs(n_estimators=40, subspace_size=20, n_seeds=2)
    here = _local(settings)
    threads.calls.clear()
    mapper = fanout.task_mapper(study.RS_TASK, celery_app)
    monkeypatch.setattr(fanout, "task_mapper", lambda name: mapper)
    ticks = []
    there = study.run_rs_study(settings, _Stop(lambda d, t, text: ticks.append((d, t, text))))
    assert there == here
    who = {c[2] for c in threads.calls}
    assert who == {"worker", "caller"}, threads.calls   # both took a share
    assert ticks[-1][:2] == (160, 160) and "runs done" in ticks[-1][2]


def test_a_stuck_workers_run_is_recomputed(celery_app, threads):
    settings = _rs(n_estimators=20, subspace_size=20, n_seeds=2)
    runs = _runs(settings)
    threads.hold["run"] = (0, "rs")    # the first run a worker starts never ends
    mapper = fanout.task_mapper(study.RS_TASK, celery_app, stall_after=0.5)
    got = dict(mapper(runs))
    assert (0, "rs", "worker", 20) in threads.calls and (0, "rs", "caller", 20) in threads.calls
    assert got == {i: study.rs_run(*run) for i, run in enumerate(runs)}


def test_cancel_stops_the_workers_running_run(celery_app, threads, monkeypatch):
    # local=False: the caller only dispatches, so every run is the worker's
    settings = _rs(n_estimators=3000, subspace_size=20, n_seeds=2)
    worker_trees = {}

    def progress(i, done):
        worker_trees[i] = done

    mapper = fanout.task_mapper(study.RS_TASK, celery_app, local=False, timeout=30)
    got = dict(mapper(_runs(settings), progress=progress,
                      should_stop=lambda: worker_trees.get(0, 0) >= 20))
    assert list(got) == [0]                      # the queued runs were dropped (revoked)
    assert got[0]["stopped"] and 20 <= got[0]["n_estimators"] < 3000
    # (a solo worker reads the revokes of a previous test's runs late: those may run now)
    assert [c for c in threads.calls if c[3] == 3000] == [(0, "rs", "worker", 3000)]

    # and through the page's study: a partial result
    monkeypatch.setattr(fanout, "task_mapper", lambda name: mapper)
    trees = [0]
    view = study.run_rs_study(settings, _Stop(lambda d, t, text: trees.append(d),
                                              lambda: trees[-1] >= 20))
    assert view["partial"] and 20 <= view["trees_done"] < 3000
    curves = SubspaceComparison.from_dict(view).curves
    assert set(curves["method"]) == {"rs"} and set(curves["seed"]) == {0}


def test_cancelling_the_dash_job_raises_the_stop_flag(celery_app):
    token = "t" * 32
    celery_app.backend.set("varimp-fanout-job-1", json.dumps({"ids": [], "stop": token}))
    flag = fanout.stop_flag(celery_app, token)
    assert not flag()
    fanout.revoke_children(celery_app, "job-1")
    assert fanout.stop_flag(celery_app, token)()
