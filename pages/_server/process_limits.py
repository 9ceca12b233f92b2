"""Limits of a process that computes: its memory, its time, and a watchdog for a stuck one.

A server runs each heavy computation in a process of its own (a forked job
process, a Celery pool process); :func:`limit_memory` caps that process's
address space (``RLIMIT_AS``), so an allocation past the cap raises
``MemoryError`` there instead of exhausting the machine;
:func:`lift_memory_limit_later` does so for a process that runs one
computation after another; :func:`time_limit` raises :class:`JobTimeout` at a
deadline, and :func:`watchdog` kills a process still running past one.  Linux
only (``resource``, ``psutil``, ``SIGALRM``); elsewhere the memory limit does nothing.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from typing import Callable, Iterator

log = logging.getLogger(__name__)


class JobTimeout(RuntimeError):
    """A computation ran past its wall-time limit of ``limit`` seconds."""

    def __init__(self, limit: float):
        super().__init__(f"The job ran longer than {limit:g} s.")
        self.limit = limit

    def sentence(self) -> str:
        return (f"This computation was stopped after {self.limit:,.0f} s, the time limit "
                "for one computation on this server. Use fewer trees, rows or replicates.")


@contextlib.contextmanager
def time_limit(seconds: float, grace: float,
               on_kill: Callable[[], None] | None = None) -> Iterator[None]:
    """Raise :class:`JobTimeout` wherever this process's main thread is after ``seconds``
    (an alarm), and kill the process ``grace`` seconds later if it is still running there
    (:func:`watchdog`: stuck in C, where the alarm's exception never comes).  Main thread
    only, one at a time: the alarm is process-wide."""
    def on_alarm(_signum, _frame):
        raise JobTimeout(seconds)

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(max(int(seconds), 1))
    done = watchdog(seconds + grace, on_kill)
    try:
        yield
    finally:
        signal.alarm(0)
        done.set()


def watchdog(seconds: float, on_kill: Callable[[], None] | None = None) -> threading.Event:
    """Kill this process and its children ``seconds`` from now unless the event is set;
    ``on_kill()`` runs first (it records why, for the page's sentence).

    The alarm's ``JobTimeout`` is raised only when Python code runs; a job stuck
    in C (a lock inherited locked through the fork, say) never sees it, and would
    hold its cache lock and the interpreter's exit for ever.  A thread still runs
    then, since such a wait releases the GIL.
    """
    done = threading.Event()

    def watch():
        if done.wait(seconds):
            return
        log.error("A background job was stuck past its time limit; its process is killed")
        if on_kill is not None:
            try:
                on_kill()
            except Exception:  # pragma: no cover - the kill below matters more
                log.warning("Could not record why a job is killed", exc_info=True)
        try:
            import psutil

            for child in psutil.Process().children(recursive=True):
                child.kill()
        except Exception:  # pragma: no cover - best effort before the kill below
            pass
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="varimp-job-watchdog", daemon=True).start()
    return done


def limit_memory(megabytes: int) -> int | None:
    """Let this process grow its address space by at most ``megabytes`` (``RLIMIT_AS``).

    Only the soft limit is lowered, to the current size plus ``megabytes``
    (never raised, never below what the process uses).  Returns the soft
    limit in bytes, or None where it cannot be set.
    """
    try:
        import resource

        import psutil
    except ImportError:  # pragma: no cover - not on Linux
        return None
    current = psutil.Process().memory_info().vms
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    target = current + int(megabytes) * 2**20
    if hard != resource.RLIM_INFINITY:
        target = min(target, hard)
    if soft != resource.RLIM_INFINITY and soft <= target:
        return soft
    try:
        resource.setrlimit(resource.RLIMIT_AS, (target, hard))
    except (ValueError, OSError):  # pragma: no cover - refused by the system
        log.warning("Could not limit a job's memory to %s MB", megabytes)
        return None
    return target


def lift_memory_limit_later(megabytes: int) -> Callable[[], None]:
    """:func:`limit_memory` now, and a function that puts the previous limit back.

    For a process that runs one job after another (a Celery pool process): each
    job gets ``megabytes`` more than the process held when it started.
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux
        return lambda: None
    before = resource.getrlimit(resource.RLIMIT_AS)
    limit_memory(megabytes)

    def lift() -> None:
        try:
            resource.setrlimit(resource.RLIMIT_AS, before)
        except (ValueError, OSError):  # pragma: no cover - refused by the system
            log.warning("Could not lift a job's memory limit")

    return lift
