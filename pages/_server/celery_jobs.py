"""Background jobs on Celery workers: the Celery app, worker heartbeats, lost jobs.

With ``REDIS_URL`` set, :func:`pages._server.jobs.make_manager` runs background
callbacks on Celery workers (``celery -A app:celery_app worker``; importing
``app`` imports every page, so the workers know every page's callbacks).

A worker can vanish mid-job (restarted, out of memory, machine gone) and Dash
would then poll a job that never ends.  So each job has a liveness key in
Redis: ``"queued"`` when submitted (kept ``VARIMP_JOB_QUEUE_TIMEOUT`` s,
default 300), then ``"running"``, renewed by a heartbeat thread in the worker
and kept ``VARIMP_JOB_LOST_AFTER`` s (default 5) after the last beat.  Redis
expires the key, so no clocks are compared across machines.  A poll that finds
no result and either no key or a failed task (a pool process killed, as by the
OOM killer) ends the job with a sentence on the page; so does a poll that
cannot reach Redis (:func:`store_errors`).  Every task runs under the memory
limit (:func:`pages._server.process_limits.lift_memory_limit_later`) and the time limits.
The heartbeat thread also applies the Diskcache jobs' stall rule (#27.2): a job with no
progress report and no processor time for ``VARIMP_JOB_STALL_AFTER`` seconds (stuck on a
lock, say) has its stack logged, its reason recorded and its pool process ended, and the
poll says it stopped making progress (:func:`_stalled`).

Messages are JSON only (``task_serializer``, ``accept_content``): nothing a
worker receives is unpickled.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import sys
import threading
import time

from pages._server.process_limits import lift_memory_limit_later

from pages._server import guards, limits
from pages._server.job_signals import (IDLE_CPU, IDLE_SENTENCE, last_report, start_job,
                                      tree_cpu)

log = logging.getLogger(__name__)

#: Traceback text of the error Dash gets for a lost job (recognised by the page's on_error).
LOST_MARK = "varimp: the job's worker is gone"
_KEY = "varimp-job-{}"
_QUEUED = "varimp-queued-since-{}"  # Dash's result key of a job no worker has taken yet
_STALLED = "varimp-job-stalled-{}"  # a job its worker ended for making no progress: seconds
#: Seconds a job waits for a worker before its page says so (it keeps waiting).
QUEUED_NOTE_AFTER = 15.0
_DASH_TASK = "background_callback_"
_beats: dict[str, threading.Event] = {}  # task id -> its heartbeat's stop flag (no user data)
_limits: dict[str, object] = {}  # task id -> what lifts its memory limit (no user data)


def queue_timeout() -> float:
    """Seconds a job may wait for a worker: ``VARIMP_JOB_QUEUE_TIMEOUT`` (default 300)."""
    return limits.env_seconds("VARIMP_JOB_QUEUE_TIMEOUT", 300.0)


def lost_after() -> float:
    """Seconds without a heartbeat after which a job is lost: ``VARIMP_JOB_LOST_AFTER`` (5).

    Beats come every quarter of it, so the page's sentence comes at most this long
    (plus a poll) after a worker vanished: well within the 10 s a user waits.
    """
    return limits.env_seconds("VARIMP_JOB_LOST_AFTER", 5.0)


def store_errors() -> tuple[type[BaseException], ...]:
    """Exceptions of a Redis (or broker) that cannot be reached."""
    from kombu.exceptions import OperationalError
    from redis.exceptions import RedisError

    return RedisError, OperationalError


def make_celery_app(url: str, *, default: bool = True):
    """The Celery app on Redis ``url``: JSON messages, started-state tracking, heartbeats.

    Also registers the Monte Carlo chunk task and the tasks pages registered
    (:mod:`pages._server.fanout`); with ``default``, ``fanout.replicate_mapper()``
    and ``fanout.task_mapper(name)`` send them through this app.
    """
    from celery import Celery
    from celery.signals import task_postrun, task_prerun

    from pages._server import fanout

    app = Celery("varimp", broker=url, backend=url)
    app.conf.update(
        task_serializer="json",
        result_serializer="json",
        accept_content=["json"],
        result_accept_content=["json"],
        event_serializer="json",
        task_track_started=True,         # queued (PENDING) and running (STARTED) differ
        worker_prefetch_multiplier=1,    # long tasks: a worker holds no more than it runs
        broker_connection_retry_on_startup=True,
        # VARIMP_JOB_TIMEOUT: a job past it gets SoftTimeLimitExceeded (a sentence on
        # the page, see jobs.error_message); one that ignores it is killed a minute later.
        task_soft_time_limit=limits.job_timeout(),
        task_time_limit=limits.job_timeout() + 60,
    )
    task_prerun.connect(_start_heartbeat, weak=False, dispatch_uid="varimp-heartbeat-start")
    task_postrun.connect(_stop_heartbeat, weak=False, dispatch_uid="varimp-heartbeat-stop")
    fanout.install(app, default=default)
    return app


def submit(celery_app, job_fn, args) -> str:
    """Send a Dash job to the workers, marked queued; returns its task id."""
    from celery.utils import uuid

    task_id = uuid()
    client = celery_app.backend.client
    client.set(_KEY.format(task_id), "queued", px=int(queue_timeout() * 1000))
    client.set(_QUEUED.format(args[0]), repr(time.time()), px=int(queue_timeout() * 1000))
    job_fn.apply_async(args, task_id=task_id)
    return task_id


def queued_for(celery_app, key) -> float | None:
    """Seconds the job of Dash's result key ``key`` has waited for a worker; None once a
    worker took it (or it was never queued here).  Measured on the web server's clock, which
    wrote the time."""
    since = celery_app.backend.client.get(_QUEUED.format(key))
    return None if since is None else max(0.0, time.time() - float(since))


def queued_sentence(seconds: float) -> str:
    """The page's progress message for a job no worker has taken for ``seconds``."""
    return (f"Waiting for a worker: none has taken this computation in {seconds:.0f} s (all "
            "busy, or none running). It stays in the queue until one does, for up to "
            f"{queue_timeout():g} s; Cancel takes it out.")


def lost_sentence(celery_app, job) -> str | None:
    """A sentence when job ``job`` has no result and never will, else None."""
    task = celery_app.AsyncResult(job)
    state = task.state
    if state in ("SUCCESS", "REVOKED"):
        return None  # finished (its result is being written), or cancelled
    stalled = celery_app.backend.client.get(_STALLED.format(job))
    if stalled is not None:   # its worker ended it (:func:`_stalled`), recorded first
        log.warning("Background job %s made no progress and was stopped", job)
        return IDLE_SENTENCE.format(seconds=float(stalled))
    if state != "FAILURE" and celery_app.backend.client.get(_KEY.format(job)) is not None:
        return None  # queued within the timeout, or its heartbeat is fresh
    if state == "FAILURE" and type(task.result).__name__ == "TimeLimitExceeded":
        sentence = guards.JobTimeout(limits.job_timeout()).sentence()  # the hard limit
    elif state == "PENDING":
        sentence = (f"This job is no longer in the job queue: no worker took it within "
                    f"{queue_timeout():g} s, or the queue (Redis) was restarted. Run it again.")
    else:
        # No reason recorded: a job over the memory limit says so itself, so this one was
        # ended from outside (a restart, the system); no guess at which.
        sentence = ("The worker computing this view stopped before it finished, without a "
                    "result or a reason (it was restarted, or the system ended it). Run it "
                    "again; if this keeps happening, ask for less work (fewer trees, "
                    "replicates or rows).")
    log.warning("Background job %s is lost (state %s)", job, state)
    return sentence


def error_value(sentence: str) -> dict:
    """What a poll answers for a job that ended without a result: ``sentence`` on the page."""
    return {"background_callback_error": {"msg": sentence, "tb": LOST_MARK}}


#: A job's sentence when the job queue (Redis) cannot be reached.
STORE_DOWN = ("The server cannot reach its job queue (Redis), so this computation did not "
              "start or its result is lost. Try again in a minute.")


def lost_job_sentence(exc: BaseException) -> str | None:
    """The sentence of an :func:`error_value` that reached ``on_error``, else None."""
    head, _, tail = str(exc).rpartition("\n")
    if tail != LOST_MARK:
        return None
    return head.split("background callback: ", 1)[-1]


# -- worker side -----------------------------------------------------------------
def _start_heartbeat(sender=None, task_id=None, task=None, args=None, **_kwargs):
    if task is None:
        return
    # Every task (a Dash job, a fanned-out piece) gets the same memory guard as a Diskcache
    # job's process; lifted after the task, since the pool process runs the next task too.
    _limits[task_id] = lift_memory_limit_later(limits.max_memory_mb())
    if not task.name.startswith(_DASH_TASK):
        return
    if args:
        start_job(args[0])  # Dash's result key: polls of it keep the job wanted
        task.backend.client.delete(_QUEUED.format(args[0]))  # a worker has taken it
    client, key = task.backend.client, _KEY.format(task_id)
    ttl = int(lost_after() * 1000)
    stop = threading.Event()
    client.set(key, "running", px=ttl)
    alive = [time.monotonic(), _own_cpu()]   # when the job last showed life, its CPU then

    def beat():
        while not stop.wait(ttl / 4000):
            try:
                if _stalled(alive, task_id):
                    _end_stalled(client, task_id)
                    return
                client.set(key, "running", px=ttl)
            except Exception:  # Redis briefly away: the next beat retries
                log.warning("Heartbeat of job %s failed", task_id, exc_info=True)

    _beats[task_id] = stop
    threading.Thread(target=beat, name=f"varimp-heartbeat-{task_id}", daemon=True).start()


def _own_cpu() -> float:
    """Processor seconds of this pool process and its children (:func:`tree_cpu`)."""
    import psutil

    return tree_cpu(psutil.Process())


def _stalled(alive: list, task_id: str) -> bool:
    """Whether the job of this pool process has gone ``VARIMP_JOB_STALL_AFTER`` seconds
    with neither a progress report (:func:`pages._server.job_signals.mark_progress`) nor
    :data:`IDLE_CPU` seconds of processor time, the Diskcache jobs' rule (#27.2); the
    heartbeat thread asks at each beat.  ``alive`` ([monotonic time, CPU seconds]) moves on
    at every sign of life: a fit that computes without reporting is left to the time limit.
    """
    now, cpu = time.monotonic(), _own_cpu()
    last = last_report(os.getpid())
    reported = last is not None and time.time() - last < now - alive[0]
    if reported or cpu - alive[1] >= IDLE_CPU:
        alive[:] = [now, cpu]
        return False
    return now - alive[0] >= limits.job_stall_after()


def _end_stalled(client, task_id: str) -> None:
    """End this pool process, whose job stalled: its stack to the log, the reason recorded
    for the poll (:func:`lost_sentence`) first, then ``SIGKILL`` (a thread stuck on a lock
    cannot be interrupted; Celery's worker replaces the pool process)."""
    stall = limits.job_stall_after()
    log.warning("Job %s (pool process %s) made no progress and used no processor time for "
                "%g s; it is stopped. Its threads:", task_id, os.getpid(), stall)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    client.set(_STALLED.format(task_id), repr(stall), px=int(3600 * 1000))
    os.kill(os.getpid(), signal.SIGKILL)


def _stop_heartbeat(sender=None, task_id=None, task=None, **_kwargs):
    lift = _limits.pop(task_id, None)
    if lift is not None:
        lift()
    stop = _beats.pop(task_id, None)
    if stop is not None:
        start_job(None)  # the next task in this process is not that job
        stop.set()
        task.backend.client.delete(_KEY.format(task_id))
