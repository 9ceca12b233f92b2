"""Limits of a process that computes: its memory, and a watchdog for a stuck computation.

A server runs each heavy computation in a process of its own (a forked job
process, a Celery pool process); :func:`limit_memory` caps that process's
address space (``RLIMIT_AS``), so an allocation past the cap raises
``MemoryError`` there instead of exhausting the machine;
:func:`lift_memory_limit_later` does so for a process that runs one
computation after another; :func:`watchdog` kills a process still running
past a deadline.  Linux only (``resource``, ``psutil``); elsewhere they do
nothing.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Callable

log = logging.getLogger(__name__)


def watchdog(seconds: float) -> threading.Event:
    """Kill this process and its children ``seconds`` from now unless the event is set.

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
