"""Monte Carlo replicates fanned out to Celery workers as a task group.

With ``REDIS_URL`` set, a study's chunks of replicates run on every Celery
worker instead of in one process, so adding worker machines shortens it:

.. code-block:: python

    from pages._ui import fanout
    from varimp_core.montecarlo import monte_carlo

    result = monte_carlo(spec, n_replicates=500, progress=progress,
                         mapper=fanout.replicate_mapper())   # None without Redis: local run

Each chunk is one task of a ``celery.group``.  Every message is JSON, never
pickle: the job travels as ``job.to_dict()``, its seeds as their entropy and
spawn keys, the rows come back as lists of floats (NaN as null).  Replicate r
gets the same ``SeedSequence`` as in a local run, so the numbers are the same.

The caller (usually a background callback, itself a Celery task) collects the
results as they finish and, when ``local=True``, computes chunks no worker has
started yet itself, revoking their tasks: a job never waits for a free worker
slot (no deadlock when every slot runs a caller), and a chunk whose worker
died is recomputed.  Cancelling the caller's job revokes its chunks
(:func:`revoke_children`, called by the app's manager).

Jobs on uploaded tables (no ``to_dict``) run in the caller as before.
"""

from __future__ import annotations

import json
import math
import time

import numpy as np

__all__ = ["TASK_NAME", "install", "replicate_mapper", "revoke_children"]

#: Name of the chunk task the workers run.
TASK_NAME = "varimp.replicate_chunk"
_CHILDREN_KEY = "varimp-fanout-{}"  # task ids of the chunks a job fanned out
_FINISHED = ("SUCCESS", "FAILURE", "REVOKED")
_STATE = {"app": None}  # the Celery app of this process (set by install; no user data)


def install(celery_app, *, default: bool = True) -> None:
    """Register the chunk task on ``celery_app``; ``default``: :func:`replicate_mapper` uses it."""
    if TASK_NAME not in celery_app.tasks:
        celery_app.task(name=TASK_NAME, serializer="json", acks_late=False)(_replicate_chunk)
    if default:
        _STATE["app"] = celery_app


def _replicate_chunk(job: dict, entropy, spawn_keys: list, pool_size: int = 4) -> list:
    """Worker side: the rows of the replicates seeded by ``spawn_keys`` (JSON in, JSON out)."""
    from varimp_core.montecarlo import job_from_dict

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


def revoke_children(celery_app, job_id) -> None:
    """Revoke the chunk tasks that job ``job_id`` fanned out (on Cancel)."""
    if not job_id:
        return
    backend = celery_app.backend
    key = _CHILDREN_KEY.format(job_id)
    ids = backend.get(key)
    if ids:
        celery_app.control.revoke(json.loads(ids))
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
        return self._run(job, to_dict(), chunks)

    def _run(self, job, spec, chunks):
        from celery import current_task, group

        app, backend = self.app, self.app.backend
        seed = chunks[0][0]
        sigs = [app.signature(TASK_NAME, args=(spec, seed.entropy,
                                               [list(s.spawn_key) for s in chunk], seed.pool_size))
                for chunk in chunks]
        ids = [r.id for r in group(sigs).apply_async().results]
        in_task = current_task and not current_task.request.called_directly
        parent = current_task.request.id if in_task else None  # the Dash job, on a worker
        if parent:
            backend.set(_CHILDREN_KEY.format(parent), json.dumps(ids))
        todo = dict(enumerate(ids))  # chunk index -> task id, until its rows are yielded
        start = last = time.monotonic()
        slowest = 0.0  # longest chunk seen (computed here, or until the first result)
        try:
            while todo:
                metas = self._metas(todo)
                finished = [i for i, m in metas.items() if m["status"] in _FINISHED]
                for i in finished:
                    meta = metas[i]
                    del todo[i]
                    if meta["status"] == "SUCCESS":
                        yield i, _rows(meta["result"])
                    elif self.local:
                        yield i, np.vstack([job(s) for s in chunks[i]])
                    else:
                        raise RuntimeError(f"A worker failed on replicates chunk {i}: "
                                           f"{meta['result']!r}")
                if finished:
                    last = time.monotonic()
                    slowest = slowest or last - start
                    continue
                now = time.monotonic()
                queued = [i for i in todo if i not in metas]
                stalled = todo and now - last > max(10.0, 4 * slowest)
                if self.local and (queued or stalled):
                    # Nobody started it (take it from the end), or its worker seems gone.
                    i = queued[-1] if queued else min(todo)
                    task_id = todo.pop(i)
                    if queued:
                        app.control.revoke(task_id)
                    t0 = time.monotonic()
                    yield i, np.vstack([job(s) for s in chunks[i]])
                    slowest = max(slowest, time.monotonic() - t0)
                    last = time.monotonic()
                    continue
                if self.timeout is not None and now - last > self.timeout:
                    raise RuntimeError(f"No replicates chunk finished within {self.timeout:g} s; "
                                       "are the workers running?")
                time.sleep(self.poll)
        finally:
            if todo:
                app.control.revoke(list(todo.values()))
            if parent:
                backend.delete(_CHILDREN_KEY.format(parent))

    def _metas(self, todo: dict) -> dict:
        """Chunk index -> decoded task meta, for the chunks a worker started or finished."""
        backend = self.app.backend
        order = list(todo)
        raw = backend.mget([backend.get_key_for_task(todo[i]) for i in order])
        return {i: backend.decode_result(r) for i, r in zip(order, raw) if r is not None}


def _rows(result) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in row] for row in result], dtype=float)
