"""Time and memory guards of background jobs (``VARIMP_JOB_TIMEOUT``, ``VARIMP_MAX_MEMORY_MB``).

:class:`JobTimeout` is raised by :class:`pages._server.jobs.Progress` at the first
progress report past the time limit, and by the alarm :class:`GuardedJob`
sets in a job's own process (:func:`pages._server.process_limits.time_limit`, for
work that reports no progress).  In that
process :class:`GuardedJob` also caps the address space
(:func:`pages._server.process_limits.limit_memory`),
so an allocation past the memory limit raises ``MemoryError`` there instead of
exhausting the server.  :func:`limit_sentence` says what happened in a
sentence for the page.
"""

from __future__ import annotations

import faulthandler
import logging
import signal
from typing import Callable

from pages._server.process_limits import JobTimeout, limit_memory, time_limit

from pages._server import limits
from pages._server.job_signals import TIMEOUT, record_end_reason

log = logging.getLogger(__name__)
__all__ = ["GRACE", "GuardedJob", "JobTimeout", "limit_sentence"]

#: Seconds past ``VARIMP_JOB_TIMEOUT`` after which a job the alarm could not stop is killed.
GRACE = 30.0


class GuardedJob:
    """A job function run under the time and memory limits, in the job's own process.

    Dash's Diskcache manager forks one process per job and calls the job
    function there; this wrapper first limits that process's address space to
    its size at the start plus ``VARIMP_MAX_MEMORY_MB`` (a bigger allocation
    raises ``MemoryError``), and sets an alarm at ``VARIMP_JOB_TIMEOUT``
    seconds that raises :class:`JobTimeout` wherever the job is.  The page's
    ``try`` (or the job's ``on_error``) turns either into a sentence.  Never
    call it in a web worker: both limits are process-wide.
    """

    def __init__(self, job_fn: Callable, on_start: Callable[[str], None] | None = None,
                 started: Callable[[], None] | None = None):
        self.job_fn = job_fn
        self.on_start = on_start
        self.started = started

    def __call__(self, *args, **kwargs):
        # ``kill -USR1 <pid>`` prints where a job is (every thread, even one stuck in C).
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        if self.on_start is not None and args:
            self.on_start(args[0])  # Dash's result key (job_signals.check_heartbeat)
        limit_memory(limits.max_memory_mb())
        limit = limits.job_timeout()
        with time_limit(limit, GRACE, on_kill=lambda: record_end_reason(f"{TIMEOUT} {limit:g}")):
            if self.started is not None:
                self.started()  # the web worker ends a job that does not get this far
            return self.job_fn(*args, **kwargs)


def limit_sentence(exc: BaseException) -> str | None:
    """A sentence for a job stopped by its time or memory limit, else None.

    Also recognises Celery's ``SoftTimeLimitExceeded`` (its workers get
    ``VARIMP_JOB_TIMEOUT`` as their soft time limit).
    """
    if type(exc).__name__ == "SoftTimeLimitExceeded":
        exc = JobTimeout(limits.job_timeout())
    if isinstance(exc, JobTimeout):
        log.warning("A background job was stopped at its time limit of %g s", exc.limit)
        return exc.sentence()
    if isinstance(exc, MemoryError):
        log.warning("A background job ran out of memory", exc_info=exc)
        return ("This computation needs more memory than one computation may use on this "
                f"server ({limits.max_memory_mb():,} MB). Use fewer rows, trees or variables.")
    return None
