"""Start Diskcache jobs from a fork server, never as a bare fork of a threaded web server (#27.1).

Dash's ``DiskcacheManager`` forks one process per job from the web process.  Under
``python app.py`` (a threaded server) another thread may be inside SQLite at that moment:
the job then inherits SQLite's allocator mutex locked and hangs in ``sqlite3.connect`` for
ever, or inherits SQLite's file state ("database disk image is malformed").
``bench/bench_fork_sqlite.py`` reproduces it without the app.

Here a job is started from Python's ``forkserver``: a process started by :func:`start`
when the manager is made (at import of the app, before the server has a thread), which
imports the app once (:data:`PRELOAD`, so a job start stays a fork, fast) and then forks
one child per job.  That server has one thread and holds no SQLite connection open in a
transaction, so nothing is inherited locked.  The job's callback is found in the child
by Dash's own key of it (``BaseBackgroundCallbackManager.functions``, filled when the
preloaded app registered its callbacks); its arguments and context are pickled; the
child writes to the manager's store (by its folder) through Dash's own job function.

The server was started with the web process's environment of that moment; a job gets the
web process's environment of its start (:func:`run_job`), so limits and cache folders set
later (tests, ``monkeypatch``) hold in the job.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
from typing import Any, Callable

log = logging.getLogger(__name__)

#: Modules the fork server imports before it forks any job: the app and its pages (when the
#: main script is not ``app.py``: gunicorn, tests).
PRELOAD = ["app"]
#: Set in the fork server's environment: importing the app there starts no other server.
HOST_FLAG = "VARIMP_JOB_HOST"

#: The web process's main script, for the fork server (see :func:`_skip_main_in_jobs`).
MAIN_FLAG = "VARIMP_JOB_HOST_MAIN"

_context: dict[str, Any] = {}


def _skip_main_in_jobs() -> None:
    """In the fork server: each child it forks would run the web process's main script
    (``app.py``) again as ``__mp_main__`` before its job (multiprocessing's ``prepare``;
    Python 3.11's forkserver drops the main path it was to preload), seconds under load, so
    jobs were taken for hung.  The app is preloaded instead (:data:`PRELOAD`); naming the
    script as this server's ``__main__`` file makes ``prepare`` skip it."""
    main = os.environ.get(MAIN_FLAG)
    if main:
        sys.modules["__main__"].__file__ = os.path.normpath(main)


def in_host() -> bool:
    """True in the fork server and in the jobs it forks."""
    return os.environ.get(HOST_FLAG) == "1"


def context():
    """The ``forkserver`` multiprocessing context (started by :func:`start`)."""
    if "ctx" not in _context:
        start()
    return _context["ctx"]


def start(preload: list[str] | None = None) -> None:
    """Start the fork server now, with ``preload`` (default :data:`PRELOAD`) imported in it.

    Call it before the web server starts threads.  Its environment is this process's, with
    :data:`HOST_FLAG` set and warm-up processes off (``VARIMP_WARM=0``).
    """
    if "ctx" in _context or in_host():
        return
    from multiprocessing import forkserver

    ctx = multiprocessing.get_context("forkserver")
    if preload is None:
        preload = [__name__, *PRELOAD]
    ctx.set_forkserver_preload(list(preload))
    names = (HOST_FLAG, "VARIMP_WARM", MAIN_FLAG)
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update({HOST_FLAG: "1", "VARIMP_WARM": "0",
                       MAIN_FLAG: getattr(sys.modules["__main__"], "__file__", None) or ""})
    try:
        forkserver.ensure_running()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    _context["ctx"] = ctx


def start_job(func_key: str, directory: str, target_args: tuple, hooks: tuple[Callable, Callable],
              request_id: str = "-") -> int:
    """Start the job of the callback Dash keys ``func_key`` in a child of the fork server;
    its pid.  ``target_args`` are ``(result_key, progress_key, args, context)``; ``hooks``
    the ``on_start`` and ``started`` of :class:`pages._server.guards.GuardedJob` (module-level
    functions: they are pickled by name)."""
    key, progress_key, args, ctx_value = target_args
    process = context().Process(
        target=run_job,
        args=(func_key, directory, key, progress_key, args, dict(ctx_value), dict(os.environ),
              hooks, request_id),
        name="varimp-job")
    process.start()
    return process.pid


def run_job(func_key, directory, key, progress_key, args, ctx_value, env, hooks, request_id="-"):
    """In the job's process: the web process's environment, then Dash's job function of
    the callback, on the manager's store, under the job's guards."""
    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # ``kill -USR1``: where it is
    os.environ.clear()
    os.environ.update(env)
    import diskcache
    from dash.background_callback.managers import BaseBackgroundCallbackManager
    from dash.background_callback.managers.diskcache_manager import _make_job_fn

    from pages._server import guards, hygiene

    hygiene.request_id.set(request_id)
    store = diskcache.Cache(directory)
    found = [(fn, progress) for k, fn, progress in BaseBackgroundCallbackManager.functions
             if k == func_key]
    if not found:  # a callback the app did not register at its import
        log.error("A job's callback is unknown to the job server (%s)", func_key)
        store.set(key, {"background_callback_error": {
            "msg": "This computation could not be started on this server. Reload the page.",
            "tb": ""}})
        return
    fn, progress = found[-1]
    job_fn = _make_job_fn(fn, store, progress)
    on_start, started = hooks
    guards.GuardedJob(job_fn, on_start=on_start, started=started)(
        key, progress_key, args, ctx_value)


if os.environ.get(HOST_FLAG) == "1" and multiprocessing.parent_process() is None:
    _skip_main_in_jobs()  # imported by the fork server as its first preload
