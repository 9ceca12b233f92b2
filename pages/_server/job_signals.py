"""How a running job learns that nobody wants it any more: a heartbeat and a Cancel flag.

Every poll of a background job's progress (the page still shows it) marks the
job as wanted (a file's modification time) (:func:`mark_polled`, called by the managers in
:mod:`pages._server.jobs`).  The job's own process or Celery task knows its key
(:func:`start_job`) and, at each progress report, :func:`check_heartbeat`
raises :class:`JobAbandoned` when no poll came for
``VARIMP_HEARTBEAT_TIMEOUT`` seconds (the tab was closed).  Cooperative
Cancel is a flag per page view and job that the job reads between chunks.
Both live in the shared cache, so they work with Diskcache and Celery; with a Redis
cache (:func:`pages._server.cache.is_shared`) the heartbeat is a Redis key too, aged by
Redis's clock, so a worker on another machine reads it.
"""

from __future__ import annotations

import contextvars
import logging
import os
import time

from pages._server import cache
from pages._server.cache import cache_dir, get_cache, is_shared, key_for
from pages._server.limits import env_seconds

log = logging.getLogger(__name__)

_JOB_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar("varimp_job_key",
                                                                      default=None)


class JobAbandoned(RuntimeError):
    """No page has polled this job for ``VARIMP_HEARTBEAT_TIMEOUT`` seconds: nobody waits."""


def heartbeat_timeout() -> float:
    """Seconds without a poll after which a job stops (``VARIMP_HEARTBEAT_TIMEOUT``, 20)."""
    return env_seconds("VARIMP_HEARTBEAT_TIMEOUT", 20.0)


_BEAT_EXPIRE = 3600.0  # heartbeat files older than this are removed


def _beat_file(job_key: str) -> str:
    safe = "".join(c for c in str(job_key) if c.isalnum() or c in "-_")[:128]
    return os.path.join(cache_dir(), "polled", safe or "job")


def _beat_key(job_key: str) -> str:
    return key_for("job-polled", str(job_key))


def _last_poll(job_key: str) -> float:
    """Seconds since the epoch of the job's last poll (OSError: not polled yet)."""
    if not is_shared():
        return os.stat(_beat_file(job_key)).st_mtime
    left = get_cache().ttl(_beat_key(job_key))
    if left is None:
        raise FileNotFoundError(job_key)
    return time.time() - (_BEAT_EXPIRE - left)


def mark_polled(job_key: str) -> None:
    """Record that a browser asked for job ``job_key``'s progress now.

    The heartbeat is a file's modification time, not a cache entry: a job process
    forked from a web worker reads it with one ``stat``, and never opens SQLite, whose
    locks another thread of the parent may hold at the fork.
    """
    if is_shared():
        get_cache().set(_beat_key(job_key), "polled", expire=_BEAT_EXPIRE, retry=True)
        return
    path = _beat_file(job_key)
    try:
        os.utime(path)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(path, "a"):
            pass


def start_timeout() -> float:
    """Seconds a job process has to report its start (``VARIMP_JOB_START_TIMEOUT``, 5)."""
    return env_seconds("VARIMP_JOB_START_TIMEOUT", 5.0)


#: Why a job process ended, as :func:`record_end_reason` writes it: its time limit, hung as it
#: started, or stopped making progress after it started (``"idle <seconds>"``).
TIMEOUT, STALLED, IDLE = "timeout", "stalled", "idle"
#: A started job that went ``seconds`` with no progress report and no processor time (stuck
#: on a lock, say): a true sentence, never one about memory (Diskcache and Celery jobs).
IDLE_SENTENCE = ("The process computing this view stopped making progress (no report and no "
                 "processor time for {seconds:g} s) and was stopped. Run it again.")
#: Processor seconds of a job's process tree under which it counts as idle: a Python
#: process blocked on a lock uses none; a numba or scikit-learn fit uses one a second.
IDLE_CPU = 0.05


def _state_file(pid: int, what: str) -> str:
    return os.path.join(cache_dir(), "jobstate", f"{int(pid)}.{what}")


def _write_state(pid: int, what: str, text: str) -> None:
    path = _state_file(pid, what)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def _read_state(pid: int, what: str) -> str | None:
    try:
        with open(_state_file(pid, what), encoding="utf-8") as got:
            return got.read().strip()
    except (OSError, ValueError):
        return None


def mark_started() -> None:
    """Called in a job's own process once it has opened the cache (the step a lock inherited
    locked at the fork hangs): it started.  The file holds the process's start time, so a
    later process given the same id is not taken for it."""
    import psutil

    _write_state(os.getpid(), "started", repr(psutil.Process().create_time()))


def mark_progress(now: float | None = None) -> None:
    """Record, in a job's own process, that it reported progress now (its liveness).

    Called by :class:`pages._server.jobs.Progress` at most once a second (with its heartbeat
    read), so every progress report, partial result and wait on another process's
    computation of the same value counts.  A file's modification time, as the heartbeat:
    the web worker that polls (any of them) reads it with one ``stat``
    (:func:`last_report`).  Outside a job (no :func:`start_job` key) it does nothing.
    """
    if _JOB_KEY.get() is None:
        return
    path = _state_file(os.getpid(), "progress")
    try:
        try:
            os.utime(path, None if now is None else (now, now))
        except FileNotFoundError:
            _write_state(os.getpid(), "progress", "")
    except OSError:  # pragma: no cover - a full disk: the CPU rule still holds
        log.debug("Could not record a job's progress", exc_info=True)


_marked_at = [-float("inf")]  # this process's last mark_alive (job-side, per process)


def mark_alive() -> None:
    """:func:`mark_progress`, at most once a second: for wait loops that look every 0.1 s
    (:data:`pages._server.cache.WHILE_WAITING`: a job waiting for another process's
    computation of the same value is alive, whether or not its caller reports progress)."""
    now = time.monotonic()
    if now - _marked_at[0] >= 1.0:
        _marked_at[0] = now
        mark_progress()


cache.WHILE_WAITING.append(mark_alive)


def last_report(pid: int) -> float | None:
    """Seconds since the epoch of process ``pid``'s last report: its start
    (:func:`mark_started`) or its latest progress (:func:`mark_progress`); None: neither."""
    times = []
    for what in ("started", "progress"):
        try:
            times.append(os.stat(_state_file(pid, what)).st_mtime)
        except (OSError, ValueError):
            pass
    return max(times) if times else None


def cpu_sample(pid: int) -> tuple[float, float] | None:
    """The last CPU sample the poll side kept for process ``pid``: ``(cpu seconds of its
    tree, when they last advanced)``, or None."""
    text = _read_state(pid, "cpu")
    try:
        cpu, since = (float(v) for v in (text or "").split())
    except ValueError:
        return None
    return cpu, since


def keep_cpu_sample(pid: int, cpu: float, since: float) -> None:
    """Keep ``(cpu, since)`` for process ``pid`` (read back by :func:`cpu_sample`), in a file
    of the cache folder: the next poll may reach another web worker."""
    try:
        _write_state(pid, "cpu", f"{cpu!r} {since!r}")
    except OSError:  # pragma: no cover - a full disk: the time limit still holds
        log.debug("Could not keep a job's CPU sample", exc_info=True)


def job_started(pid: int, create_time: float) -> bool:
    """Whether process ``pid`` (started at ``create_time``) reported its start."""
    text = _read_state(pid, "started")
    try:
        return text is not None and abs(float(text) - create_time) < 1e-3
    except ValueError:
        return False


def record_end_reason(reason: str, pid: int | None = None) -> None:
    """Write why process ``pid`` (default: this one) is about to be killed, before the kill,
    so the page's sentence says what happened (never "out of memory" for a time limit)."""
    try:
        _write_state(os.getpid() if pid is None else pid, "reason", reason)
    except OSError:  # pragma: no cover - a full disk: the sentence is then the general one
        log.warning("Could not record why job %s ended", pid, exc_info=True)


def end_reason(pid: int) -> str | None:
    """What :func:`record_end_reason` wrote for process ``pid`` (None: nothing)."""
    return _read_state(pid, "reason")


def forget_job_state(pid: int) -> None:
    """Remove the start, progress, CPU and end records of process ``pid`` (its end was
    reported)."""
    for what in ("started", "progress", "cpu", "reason"):
        try:
            os.remove(_state_file(pid, what))
        except (OSError, ValueError):
            pass


def forget_old_beats() -> None:
    """Remove heartbeat files of jobs nobody polled for an hour, and job records as old
    (called as a job starts)."""
    for folder in (os.path.dirname(_beat_file("x")), os.path.join(cache_dir(), "jobstate")):
        _forget_old(folder)


def _forget_old(folder: str) -> None:
    now = time.time()
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        try:
            path = os.path.join(folder, name)
            if now - os.stat(path).st_mtime > _BEAT_EXPIRE:
                os.remove(path)
        except OSError:
            pass  # another worker removed it


def tree_cpu(proc) -> float:
    """Processor seconds used so far by ``proc`` (a ``psutil.Process``), its reaped children
    and its live children (numba and loky workers: their threads count in their process):
    the stall rule's measure of life, for Diskcache jobs and Celery pool processes alike."""
    import psutil

    times = proc.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in proc.children(recursive=True):
        try:
            t = child.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def in_job() -> bool:
    """Whether this code runs in a background job (:func:`start_job`), where the data may
    be loaded and prepared, rather than in a web request."""
    return _JOB_KEY.get() is not None


def start_job(job_key: str | None) -> None:
    """Called in the job's own process or task: this is job ``job_key`` (None: no job).

    It only records the key.  The web worker marked the job as polled before it forked
    the job's process, and a forked child must not open SQLite (the cache) at once: a
    lock another thread of the parent held at the fork can hang it for ever.
    """
    _JOB_KEY.set(job_key)


def check_heartbeat() -> None:
    """Raise :class:`JobAbandoned` in a job whose page stopped polling it."""
    key = _JOB_KEY.get()
    if key is None:
        return
    try:
        last = _last_poll(key)
    except OSError:
        return  # not marked yet (a Celery job before its first poll)
    if time.time() - last > heartbeat_timeout():
        log.info("Job %s stopped: its page stopped asking for it", key)
        raise JobAbandoned(key)


# -- cooperative Cancel: a flag per page view and job ------------------------------------
def _stop_key(instance: str, job: str) -> str:
    return key_for("job-stop", str(instance or ""), str(job))


def request_stop(instance: str, job: str) -> None:
    """Ask the running job ``job`` of this page view to stop after its current chunk."""
    get_cache().set(_stop_key(instance, job), "1", expire=3600, retry=True)


def clear_stop(instance: str, job: str) -> None:
    """Forget a Cancel request (a new job is starting)."""
    get_cache().delete(_stop_key(instance, job), retry=True)


def stop_requested(instance: str, job: str) -> bool:
    """True once :func:`request_stop` was called for this view and job."""
    return get_cache().get(_stop_key(instance, job), default=None, retry=True) is not None
