"""Independent pieces of a job fanned out to Celery workers as a task group.

With ``REDIS_URL`` set, a Monte Carlo study's chunks of replicates
(:func:`replicate_mapper`) and the pieces of any task a page registered
(:func:`register`, :func:`task_mapper`: an RS/SRS study's runs) run on every
Celery worker instead of in one process, so adding worker machines shortens
them:

.. code-block:: python

    from pages._server import fanout
    from varimp_core.studies.montecarlo import monte_carlo

    result = monte_carlo(spec, n_replicates=500, progress=progress,
                         mapper=fanout.replicate_mapper())   # None without Redis: local run

Each piece is one task of a ``celery.group`` (:class:`TaskGroup`).  Every
message is JSON, never pickle: a Monte Carlo job travels as ``job.to_dict()``,
its seeds as their entropy and spawn keys, the rows come back as lists of
floats (NaN as null).  Replicate r gets the same ``SeedSequence`` as in a
local run, so the numbers are the same.

The caller (usually a background callback, itself a Celery task) collects the
results as they finish and, when ``local=True``, computes pieces no worker has
started yet itself, revoking their tasks: a job never waits for a free worker
slot (no deadlock when every slot runs a caller), and a piece whose worker
died (or failed) is recomputed.  Cancelling the caller's job revokes its
pieces and raises the group's stop flag, which long tasks poll between steps
(:func:`revoke_children`, called by the app's manager; :func:`stop_flag`).

Monte Carlo jobs on uploaded tables (no ``to_dict``) run in the caller as before.

A page fans out work of its own by registering a function under a task name,
when its module is imported (the workers import ``app``, hence every page, so
they know it too); this module knows only the name:

.. code-block:: python

    fanout.register("varimp.selection_run", run_one)      # run_one(*args, progress, should_stop)
    mapper = fanout.task_mapper("varimp.selection_run")   # None without Redis: run locally
    for i, value in mapper([args_0, args_1], progress=report, should_stop=stop):
        ...

A registered task gets JSON arguments and returns JSON; while it runs it
stores its ``progress(done)`` as the task's PROGRESS state, and between two
steps it looks at the group's stop flag, so Cancel (or the Dash job being
cancelled or lost, :func:`revoke_children`) ends it with what it finished.
"""

from __future__ import annotations

import json
import math
import time
import uuid

import numpy as np

from pages._server.job_signals import mark_alive

__all__ = ["TASK_NAME", "TASKS", "install", "register", "replicate_mapper", "task_mapper",
           "revoke_children", "TaskGroup", "stop_flag", "progress_reporter"]

#: Name of the chunk task the workers run.
TASK_NAME = "varimp.replicate_chunk"
_CHILDREN_KEY = "varimp-fanout-{}"  # task ids (and stop token) of the pieces a job fanned out
_STOP_KEY = "varimp-fanout-stop-{}"  # set: the group's running tasks end early
_STOP_TTL = 6 * 3600  # seconds a stop flag is kept (longer than a job may run)
_FINISHED = ("SUCCESS", "FAILURE", "REVOKED")
_STATE = {"app": None}  # the Celery app of this process (set by install; no user data)
_APPS: list = []  # every Celery app given to install: registered tasks reach each of them
#: Registered task name -> ``fn(*args, progress=..., should_stop=...)`` (functions, no data).
TASKS: dict = {}


def install(celery_app, *, default: bool = True) -> None:
    """Register the chunk task and every :func:`register`-ed task on ``celery_app``.

    ``default``: :func:`replicate_mapper` and :func:`task_mapper` use this app.
    """
    if TASK_NAME not in celery_app.tasks:
        celery_app.task(name=TASK_NAME, serializer="json", acks_late=False)(_replicate_chunk)
    for name in TASKS:
        _install_task(celery_app, name)
    if celery_app not in _APPS:
        _APPS.append(celery_app)
    if default:
        _STATE["app"] = celery_app


def register(name: str, fn) -> None:
    """Make ``fn`` a task the workers run under ``name`` (call at import, once per name).

    ``fn(*args, progress=callable(done), should_stop=callable())`` takes and
    returns JSON; ``should_stop()`` turns True once the group is stopped.
    """
    TASKS[name] = fn
    for app in _APPS:
        _install_task(app, name)


def _install_task(celery_app, name: str) -> None:
    if name not in celery_app.tasks:
        celery_app.task(name=name, bind=True, serializer="json", acks_late=False)(_registered)


def _registered(task, *args, stop: str | None = None):
    """Worker side: the registered function of ``task.name`` (JSON in, JSON out)."""
    report = progress_reporter(task)
    return TASKS[task.name](*args, progress=lambda done: report(done=int(done)),
                            should_stop=stop_flag(task.app, stop))


def default_app():
    """The app given to :func:`install` with ``default=True``, or None (no ``REDIS_URL``)."""
    return _STATE["app"]


def _replicate_chunk(job: dict, entropy, spawn_keys: list, pool_size: int = 4) -> list:
    """Worker side: the rows of the replicates seeded by ``spawn_keys`` (JSON in, JSON out)."""
    from varimp_core.studies.montecarlo_jobs import job_from_dict

    fn = job_from_dict(job)
    rows = [fn(np.random.SeedSequence(entropy, spawn_key=tuple(key), pool_size=pool_size))
            for key in spawn_keys]
    return [[None if math.isnan(v) else v for v in np.asarray(r, dtype=float).tolist()]
            for r in rows]


def replicate_mapper(celery_app=None, *, local: bool = True, poll: float = 0.05,
                     timeout: float | None = None):
    """A ``mapper`` for :func:`varimp_core.replicates.run_replicates` on Celery workers.

    Parameters
    ----------
    celery_app : celery.Celery, default=None
        None uses the app given to :func:`install` (the dashboard's, when
        ``REDIS_URL`` is set).
    local : bool, default=True
        Also compute chunks in this process when no worker has started them
        (and recompute a chunk whose worker failed): right on a worker, whose
        slot would otherwise idle while waiting.  False only dispatches.
    poll : float, default=0.05
        Seconds between two looks at the results.
    timeout : float, default=None
        With ``local=False``: raise when no chunk finished for this many seconds.

    Returns
    -------
    mapper : callable or None
        None when there is no Celery app (no ``REDIS_URL``): run locally.
    """
    app = celery_app or _STATE["app"]
    if app is None:
        return None
    install(app, default=False)
    return _Mapper(app, local=local, poll=poll, timeout=timeout)


def task_mapper(name: str, celery_app=None, *, local: bool = True, poll: float = 0.05,
                timeout: float | None = None, stall_after: float = 10.0):
    """The pieces of registered task ``name`` on Celery workers, or None (no Celery app).

    Parameters
    ----------
    name : str
        A :func:`register`-ed task.
    celery_app : celery.Celery, default=None
        None uses the app given to :func:`install` (the dashboard's, when
        ``REDIS_URL`` is set).
    local : bool, default=True
        Also compute in this process the pieces no worker has started (taken
        from the end) and those whose worker failed or seems gone.  False only
        dispatches.
    poll : float, default=0.05
        Seconds between two looks at the results.
    timeout : float, default=None
        With ``local=False``: raise when no piece finished for this many seconds.
    stall_after : float, default=10.0
        Seconds without news of a running piece before its worker counts as
        gone (at least 4 times the slowest piece; see :class:`TaskGroup`).

    Returns
    -------
    mapper : callable or None
        ``mapper(args, *, progress=None, should_stop=None)`` with ``args`` a
        list of argument tuples (JSON), one per piece; it returns an iterator of
        ``(index, value)`` pairs in the order the pieces finish.
        ``progress(index, done)`` reports a piece's steps, also those of pieces
        still on a worker.  Once ``should_stop()`` is True the running pieces
        end after their current step and the pieces nobody started are left out.
    """
    app = celery_app or _STATE["app"]
    if app is None:
        return None
    install(app, default=False)

    def mapper(args, *, progress=None, should_stop=None):
        args, report = [tuple(a) for a in args], progress or (lambda i, done: None)

        def compute(i: int):
            def tick(done):
                report(i, done)
                group.peek()  # the workers' pieces move on too

            return TASKS[name](*args[i], progress=tick, should_stop=should_stop)

        group = TaskGroup(app, name, args, compute, local=local, poll=poll, timeout=timeout,
                          stall_after=stall_after, what=name, stoppable=True,
                          should_stop=should_stop,
                          on_progress=lambda i, info: report(i, int(info.get("done", 0))))
        return iter(group)

    return mapper


def revoke_children(celery_app, job_id) -> None:
    """Revoke the tasks that job ``job_id`` fanned out and raise their stop flag (on Cancel)."""
    if not job_id:
        return
    backend = celery_app.backend
    key = _CHILDREN_KEY.format(job_id)
    raw = backend.get(key)
    if raw:
        children = json.loads(raw)
        if isinstance(children, list):  # written by an older version
            children = {"ids": children}
        if children.get("stop"):
            _raise_stop_flag(celery_app, children["stop"])
        celery_app.control.revoke(children["ids"])
        backend.delete(key)


class _Mapper:
    def __init__(self, app, *, local, poll, timeout):
        self.app, self.local, self.poll, self.timeout = app, local, poll, timeout

    def __call__(self, job, chunks):
        to_dict = getattr(job, "to_dict", None)
        if to_dict is None or not chunks:
            return None
        seed = chunks[0][0]
        if not isinstance(seed.entropy, int) or any(
                s.entropy != seed.entropy or s.pool_size != seed.pool_size
                for chunk in chunks for s in chunk):
            return None  # not one root's children: run locally
        spec = to_dict()
        args = [(spec, seed.entropy, [list(s.spawn_key) for s in chunk], seed.pool_size)
                for chunk in chunks]
        group = TaskGroup(self.app, TASK_NAME, args,
                          lambda i: np.vstack([job(s) for s in chunks[i]]), decode=_rows,
                          local=self.local, poll=self.poll, timeout=self.timeout,
                          what="replicates chunk")
        return iter(group)


class TaskGroup:
    """A ``celery.group`` of JSON tasks, collected as they finish, with a local fallback.

    Iterating sends the group and yields ``(index, value)`` pairs in the order
    the pieces finish.  With ``local=True`` the caller computes, with
    ``compute(i)``, every piece no worker has started yet (taking them from
    the end, revoking their tasks) and every piece whose task failed or whose
    worker seems gone (no news for ``max(stall_after, 4 x the slowest piece)``).
    When the iterator is closed early, the pieces left are revoked and the stop
    flag is raised.

    Parameters
    ----------
    app : celery.Celery
    task_name : str
        A registered task; task i gets ``*args[i]`` (and ``stop=token`` with
        ``stoppable``).
    args : list of tuple
        JSON-able positional arguments, one tuple per piece.
    compute : callable
        ``compute(i)``: piece i's value, computed in this process.
    decode : callable, optional
        Turns a task's JSON result into piece i's value (default: as is).
    local : bool, default=True
        Compute pieces here (see above); False only dispatches and raises when a task fails.
    poll : float, default=0.05
        Seconds between two looks at the results.
    timeout : float, optional
        With ``local=False``: raise when no piece finished for this many seconds.
    what : str, default="piece"
        The pieces' name in error messages.
    stoppable : bool, default=False
        The tasks take ``stop=token`` and end early once :func:`stop_flag` says so.
    should_stop : callable, optional
        Asked at every look; True calls :meth:`stop`.
    on_progress : callable, optional
        ``on_progress(i, info)`` for a running task's
        ``update_state(state="PROGRESS", meta=info)`` (see :func:`progress_reporter`).
    stall_after : float, default=10.0
        Least number of seconds without news of a running piece (and without
        any piece finishing) before its worker counts as gone.
    """

    def __init__(self, app, task_name, args, compute, *, decode=None, local=True, poll=0.05,
                 timeout=None, what="piece", stoppable=False, should_stop=None,
                 on_progress=None, stall_after=10.0):
        self.app, self.task_name, self.args, self.compute = app, task_name, list(args), compute
        self.decode = decode or (lambda value: value)
        self.local, self.poll, self.timeout, self.what = local, poll, timeout, what
        self.stoppable, self.should_stop, self.on_progress = stoppable, should_stop, on_progress
        self.stall_after = float(stall_after)
        self.token = uuid.uuid4().hex
        self.stopped = False
        self._todo: dict[int, str] = {}  # piece index -> task id, until its value is yielded
        self._news: dict[int, tuple] = {}  # piece index -> (its state, when it changed)
        self._peeked = 0.0

    def __iter__(self):
        from celery import current_task, group

        app, backend = self.app, self.app.backend
        extra = {"stop": self.token} if self.stoppable else {}
        sigs = [app.signature(self.task_name, args=tuple(a), kwargs=extra) for a in self.args]
        ids = [r.id for r in group(sigs).apply_async().results]
        in_task = current_task and not current_task.request.called_directly
        parent = current_task.request.id if in_task else None  # the Dash job, on a worker
        if parent:
            backend.set(_CHILDREN_KEY.format(parent), json.dumps({"ids": ids,
                                                                  "stop": self.token}))
        todo = self._todo = dict(enumerate(ids))
        start = last = time.monotonic()
        slowest = 0.0  # longest piece seen (computed here, or until the first result)
        try:
            while todo:
                if not self.stopped and self.should_stop is not None and self.should_stop():
                    self.stop()
                    continue
                metas = self._look(todo)
                finished = [i for i, m in metas.items() if m["status"] in _FINISHED]
                for i in finished:
                    meta = metas[i]
                    backend.forget(todo.pop(i))  # read once: Redis need not keep it
                    if meta["status"] == "SUCCESS":
                        yield i, self.decode(meta["result"])
                    elif self.stopped:
                        continue  # cancelled: nothing to recompute
                    elif self.local:
                        yield i, self.compute(i)
                    else:
                        raise piece_failure(self.what, i, meta["result"])
                now = time.monotonic()
                if finished:
                    last, slowest = now, slowest or now - start
                    continue
                quiet = max(self.stall_after, 4 * slowest)
                stalled = [i for i in todo if i in metas
                           and now - max(self._news[i][1], last) > quiet]
                queued = [i for i in todo if i not in metas]
                if stalled and self.stopped:
                    for i in stalled:  # its worker seems gone; the job is ending anyway
                        app.control.revoke(todo.pop(i))
                    continue
                if self.local and not self.stopped and (queued or stalled):
                    # Nobody started it (take it from the end), or its worker seems gone.
                    i = queued[-1] if queued else min(stalled)
                    task_id = todo.pop(i)
                    app.control.revoke(task_id)
                    t0 = time.monotonic()
                    value = self.compute(i)
                    slowest = max(slowest, time.monotonic() - t0)
                    yield i, value
                    last = time.monotonic()
                    continue
                if self.timeout is not None and now - last > self.timeout:
                    raise RuntimeError(f"No {self.what} finished within {self.timeout:g} s; "
                                       "are the workers running?")
                mark_alive()   # waiting on pieces that run elsewhere: a job making progress
                time.sleep(self.poll)
        finally:
            if todo:
                if self.stoppable:
                    _raise_stop_flag(app, self.token)
                app.control.revoke(list(todo.values()))
            if parent:
                backend.delete(_CHILDREN_KEY.format(parent))

    def stop(self) -> None:
        """Raise the stop flag (running tasks end early) and drop the pieces no worker started."""
        if self.stopped:
            return
        self.stopped = True
        if self.stoppable:
            _raise_stop_flag(self.app, self.token)
        started = self._look(self._todo)
        queued = [self._todo.pop(i) for i in list(self._todo) if i not in started]
        if queued:
            self.app.control.revoke(queued)

    def peek(self, every: float = 0.5) -> None:
        """Report the running tasks' progress, at most every ``every`` s (while computing)."""
        now = time.monotonic()
        if self._todo and now - self._peeked >= every:
            self._peeked = now
            self._look({i: t for i, t in self._todo.items()
                        if self._news.get(i, ((None,),))[0][0] not in _FINISHED})

    def _look(self, todo: dict) -> dict:
        """Piece index -> decoded task meta, for the pieces a worker started or finished."""
        backend = self.app.backend
        order = list(todo)
        keys = [backend.get_key_for_task(todo[i]) for i in order]
        raw = backend.mget(keys) if keys else []
        if isinstance(raw, dict):  # a memcached-like store (tests): {key: value}
            raw = [raw.get(k) for k in keys]
        metas = {i: backend.decode_result(r) for i, r in zip(order, raw) if r is not None}
        now = time.monotonic()
        for i, meta in metas.items():
            status = meta.get("status")
            mark = (status,) if status in _FINISHED else (status, meta.get("result"))
            if i not in self._news or self._news[i][0] != mark:
                self._news[i] = (mark, now)  # news of piece i: when its state last changed
            if status == "PROGRESS" and self.on_progress is not None:
                self.on_progress(i, meta.get("result") or {})
        return metas


def piece_failure(what: str, i: int, result) -> Exception:
    """The error to raise for piece ``i`` that failed on a worker (``result``: its task meta).

    A piece over the worker's memory limit raises ``MemoryError`` in the caller too,
    so the page says what a computation over the limit says in one process.
    """
    if isinstance(result, dict) and result.get("exc_type") == "MemoryError":
        return MemoryError(f"A worker ran out of memory on {what} {i}.")
    return RuntimeError(f"A worker failed on {what} {i}: {result!r}")


def stop_flag(celery_app, token: str | None, every: float = 0.25):
    """Worker side: a ``should_stop()`` that is True once the group of ``token`` was stopped.

    Looks at Redis at most every ``every`` seconds; without a token it is always False.
    """
    if not token:
        return lambda: False
    client, key = celery_app.backend.client, _STOP_KEY.format(token)
    state = {"at": 0.0, "stop": False}

    def should_stop() -> bool:
        now = time.monotonic()
        if not state["stop"] and now - state["at"] >= every:
            state["at"] = now
            state["stop"] = client.get(key) is not None
        return state["stop"]

    return should_stop


def _raise_stop_flag(celery_app, token: str) -> None:
    celery_app.backend.client.set(_STOP_KEY.format(token), "1", ex=_STOP_TTL)


def progress_reporter(task, every: float = 0.5):
    """Worker side: ``report(**info)`` stores ``info`` as the running task's PROGRESS meta.

    At most every ``every`` seconds, unless ``force=True``; read by
    :class:`TaskGroup`'s ``on_progress``.
    """
    state = {"at": 0.0}

    def report(force: bool = False, **info) -> None:
        now = time.monotonic()
        if task.request.id and (force or now - state["at"] >= every):
            state["at"] = now
            task.update_state(state="PROGRESS", meta=info)

    return report


def _rows(result) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in result], dtype=float)
