"""Contract tests: the behaviours of Dash's background-callback managers that
``pages/_server/jobs.py`` overrides or relies on (dash pinned >=4.4.1,<4.5).

Each test states one behaviour of Dash 4.4.1 and fails when a Dash release changes it,
so that an override is re-read before it silently works against a new Dash.  The tests
marked "bug" reproduce a Dash bug we work around; ``docs/dash-workarounds.md`` holds the
reproduction for an upstream report, and says which override to delete once it fails.
"""

from __future__ import annotations

import inspect
import os

import dash
import diskcache
import pytest
from dash import Dash, DiskcacheManager, Input, Output, html
from dash.background_callback.managers import BaseBackgroundCallbackManager
from dash.background_callback.managers.celery_manager import CeleryManager
from dash.background_callback.managers.diskcache_manager import _make_job_fn
from _servers import DashCallbackClient

from pages._server import celery_jobs


class _Recording(DiskcacheManager):
    """Runs each job in this process at once (no fork) and records the manager calls."""

    def __init__(self, *args, running: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[str] = []
        self.running = running

    def call_job_fn(self, key, job_fn, args, context):
        self.calls.append("call_job_fn")
        job_fn(key, self._make_progress_key(key), args, context)
        return os.getpid()

    def get_progress(self, key):
        self.calls.append("get_progress")
        return super().get_progress(key)

    def get_result(self, key, job):
        self.calls.append("get_result")
        return super().get_result(key, job)

    def job_running(self, job):
        self.calls.append("job_running")
        return self.running

    def terminate_job(self, job):
        self.calls.append("terminate_job")

    def get_updated_props(self, key):
        self.calls.append("get_updated_props")
        return super().get_updated_props(key)


def _app(manager, tmp_path, *, on_error=None, fail: bool = False):
    app = Dash(__name__, background_callback_manager=manager)
    app.layout = html.Div([html.Button(id="go"), html.Div(id="out"), html.Div(id="bar")])

    @app.callback(Output("out", "children"), Input("go", "n_clicks"), background=True,
                  progress=[Output("bar", "children")], prevent_initial_call=True,
                  on_error=on_error)
    def work(set_progress, n):
        set_progress(["half"])
        if fail:
            raise ValueError("the job failed")
        return f"clicked {n}"

    return DashCallbackClient.over_flask(app.server.test_client(), "out.children", "/")


def test_a_poll_reads_progress_then_result_then_running_then_props(tmp_path):
    """``_KeyPerRequest.job_running`` answers "running" for a job whose result appeared
    between Dash's ``get_result`` and its ``job_running`` (a job that ended just then); that
    needs this order, as ``get_progress`` being called on every poll needs ``mark_polled``."""
    manager = _Recording(diskcache.Cache(str(tmp_path / "jobs")))
    client = _app(manager, tmp_path)
    body = client.body({"go.n_clicks": 1}, "go.n_clicks")
    first = client.post(body)
    assert manager.calls == ["call_job_fn"]
    manager.calls.clear()
    last = client.post(body, cacheKey=first["cacheKey"], job=first["job"])
    assert last["response"]["out"]["children"] == "clicked 1"
    assert last["progress"] == {"bar.children": "half"}
    # get_result ends the job it read (Diskcache), then Dash asks whether it runs, ends a
    # running one whose result is there (a cached result), and reads the props last
    assert manager.calls == ["get_progress", "get_result", "terminate_job", "job_running",
                             "terminate_job", "get_updated_props"]


def test_a_poll_of_a_job_not_running_without_a_result_is_no_update(tmp_path):
    """Dash answers "no update" (the callback ends, HTTP 204) when the job is not running
    and has no result: the answer ``_KeyPerRequest.job_running`` and ``lost`` replace with
    "running" (a result about to appear) or a sentence (a job that died)."""
    manager = _Recording(diskcache.Cache(str(tmp_path / "jobs")), running=False)
    client = _app(manager, tmp_path)
    body = client.body({"go.n_clicks": 1}, "go.n_clicks")
    first = client.post(body)
    for key in list(manager.handle.iterkeys()):   # the job's result and progress: gone
        if "secret" not in str(key):
            manager.handle.delete(key)
    status, _ = client._post_json({"endId": client.end_id, "cacheKey": first["cacheKey"],
                                   "job": first["job"]}, body)
    assert status == 204


def test_a_result_is_deleted_once_read_and_keyed_by_the_arguments(tmp_path):
    """Without ``cache_by``, ``get_result`` deletes the result it returns, and
    ``build_cache_key`` is a function of the callback and its arguments: two sessions sending
    the same request at once share one key and the second gets nothing, which is why
    ``_KeyPerRequest.build_cache_key`` draws a key per request."""
    manager = DiskcacheManager(diskcache.Cache(str(tmp_path / "jobs")))

    def fn(x):
        return x

    one = manager.build_cache_key(fn, [1], [], None)
    assert manager.build_cache_key(fn, [1], [], None) == one
    assert manager.build_cache_key(fn, [2], [], None) != one
    manager.handle.set(one, "answer")
    assert manager.get_result(one, None) == "answer"
    assert manager.get_result(one, None) is manager.UNDEFINED
    assert list(inspect.signature(BaseBackgroundCallbackManager.build_cache_key).parameters) \
        == ["self", "fn", "args", "cache_args_to_ignore", "triggered"]


def test_progress_and_set_props_keys():
    """The keys ``jobs.py`` reads and clears besides the result's."""
    assert BaseBackgroundCallbackManager._make_progress_key("k") == "k-progress"
    assert BaseBackgroundCallbackManager._make_set_props_key("k") == "k-set_props"


def test_a_failed_job_stores_the_error_envelope_that_error_value_imitates():
    """A job that raises stores ``{"background_callback_error": {"msg", "tb"}}``;
    ``celery_jobs.error_value`` writes the same shape for a lost job."""
    store = {}

    class Cache:
        def set(self, key, value):
            store[key] = value

    def fn():
        raise ValueError("the job failed")

    _make_job_fn(fn, Cache(), False)("r", "r-progress", [], {})
    assert set(store["r"]) == {"background_callback_error"}
    assert store["r"]["background_callback_error"]["msg"] == "the job failed"
    assert set(store["r"]["background_callback_error"]) == \
        set(celery_jobs.error_value("x")["background_callback_error"]) == {"msg", "tb"}


def test_on_error_gets_the_message_and_traceback_in_the_text_lost_job_sentence_parses(tmp_path):
    """``on_error`` receives "An error occurred inside a background callback: {msg}\\n{tb}";
    ``celery_jobs.lost_job_sentence`` takes the sentence back out of it."""
    seen = []
    manager = _Recording(diskcache.Cache(str(tmp_path / "jobs")), running=False)

    def on_error(exc):
        seen.append(str(exc))
        return "shown"

    client = _app(manager, tmp_path, on_error=on_error)
    body = client.body({"go.n_clicks": 1}, "go.n_clicks")
    first = client.post(body)
    key = next(k for k in manager.handle.iterkeys()
               if not str(k).endswith(("-progress", "-set_props")) and "secret" not in str(k))
    manager.handle.set(key, celery_jobs.error_value("The worker is gone."))
    client.post(body, cacheKey=first["cacheKey"], job=first["job"])
    assert seen and celery_jobs.lost_job_sentence(Exception(seen[0])) == "The worker is gone."


def test_bug_celery_get_updated_props_deletes_the_result_key():
    """Bug (Dash 4.4.1): ``CeleryManager.get_updated_props`` reads the ``set_props`` key but
    deletes the result key, so a partial result is sent again on every poll.  When this
    fails, Dash deletes the right key: remove ``_CeleryManager._take_updated_props``."""
    deleted, read = [], []

    class Backend:
        def get(self, key):
            read.append(key)
            return '{"x": {"children": 1}}'

        def delete(self, key):
            deleted.append(key)

    manager = CeleryManager.__new__(CeleryManager)
    manager.handle = type("App", (), {"backend": Backend()})()
    assert manager.get_updated_props("job") == {"x": {"children": 1}}
    assert read == ["job-set_props"]
    assert deleted == ["job"]           # the bug: not "job-set_props"


def test_the_private_names_jobs_and_hygiene_use_exist():
    """``hygiene.install`` turns dev tools off through ``app._dev_tools``; ``jobs.py``
    compares results with ``UNDEFINED``."""
    app = Dash(__name__)
    assert {"ui", "props_check", "hot_reload", "serve_dev_bundles"} <= set(app._dev_tools)
    assert BaseBackgroundCallbackManager.UNDEFINED is not None
    assert dash.__version__.startswith("4.4.")
