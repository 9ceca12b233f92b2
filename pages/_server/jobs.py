"""Background jobs with a progress bar, a Cancel button and disabled controls.

Work that can take more than about a second runs as a Dash background
callback.  Pages never wire one by hand: a :class:`pages._framework.view.JobView`
registers it with :func:`background_options`, shows its panel (:func:`pages._framework.view.job_panel`:
progress bar, Cancel, status line), reports through :class:`Progress` and
words failures with :func:`error_message` and :func:`failure_message`.

The app's manager comes from :func:`make_manager`: ``DiskcacheManager`` by
default, ``CeleryManager`` with Redis when ``REDIS_URL`` is set (then run a
worker: ``celery -A app:celery_app worker``; see :mod:`pages._server.celery_jobs`
for jobs whose worker is gone, :mod:`pages._server.fanout` for Monte Carlo
studies spread over every worker).

Limits (:mod:`pages._server.limits`): a job runs at most ``VARIMP_JOB_TIMEOUT``
seconds.  :class:`Progress` raises :class:`JobTimeout` at the first progress
report past the limit; a job process of the Diskcache manager also gets an
alarm at the limit and at most ``VARIMP_MAX_MEMORY_MB`` more memory
(:mod:`pages._server.guards`).  :func:`error_message` turns both into sentences.
The poll of a Diskcache job stops one that hung as it started (``VARIMP_JOB_START_TIMEOUT``)
or that, once started, went ``VARIMP_JOB_STALL_AFTER`` seconds with no progress report and
no processor time (:func:`_lost_or_overdue`), each with its own sentence.
Cancel kills the job's process and its children; a cache lock it held is
freed by the next caller (:func:`pages._server.cache.get_or_compute`).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import secrets
import signal
import time
from typing import Any, Callable, Iterable

import psutil

from dash import CeleryManager, DiskcacheManager, Input, Output, clientside_callback

from pages._server import fanout

from pages._server import cache, celery_jobs, guards, job_host, limits
from pages._server.hygiene import client_id, request_id
from pages._server.job_signals import (IDLE, IDLE_CPU, IDLE_SENTENCE, STALLED, TIMEOUT,
                                      JobAbandoned, check_heartbeat, tree_cpu,
                                      cpu_sample, end_reason, forget_job_state,
                                      forget_old_beats, job_started, keep_cpu_sample,
                                      last_report, mark_polled, mark_progress, mark_started,
                                      record_end_reason, start_job, start_timeout,
                                      stop_requested)
from pages._server.cache import cache_dir
from pages._server.guards import JobTimeout

log = logging.getLogger(__name__)

#: Exception types whose message is written for users and shown as is.
USER_ERRORS: tuple[type[BaseException], ...] = (ValueError,)


def job_ids(prefix: str) -> dict[str, str]:
    """Ids of the job widgets of a page: ``{prefix}-job``, ``-job-progress`` ..."""
    return {
        "panel": f"{prefix}-job",
        "progress": f"{prefix}-job-progress",
        "message": f"{prefix}-job-message",
        "cancel": f"{prefix}-job-cancel",
        "status": f"{prefix}-job-status",
    }


def background_options(
    prefix: str, *, disable: Iterable[str] = (), interval: int = 400, manager=None
) -> dict[str, Any]:
    """Keyword arguments for ``@callback`` that make it a uniform background job.

    Parameters
    ----------
    prefix : str
        The page prefix (the ids of :func:`job_ids`).
    disable : iterable of str, default=()
        Ids of controls whose ``disabled`` is True while the job runs.
    interval : int, default=400
        Milliseconds between progress polls.
    manager : dash background callback manager, default=None
        None uses the app's manager (:func:`make_manager`).

    Returns
    -------
    options : dict
        ``background``, ``running``, ``cancel``, ``progress``,
        ``progress_default`` and ``interval``: the callback's first argument is
        then ``set_progress``; wrap it in :class:`Progress`.
    """
    ids = job_ids(prefix)
    running = [(Output(i, "disabled"), True, False) for i in disable]
    running += [
        (Output(ids["cancel"], "disabled"), False, True),
        (Output(ids["panel"], "className"), "vi-job vi-job-running", "vi-job"),
    ]
    opts: dict[str, Any] = dict(
        background=True,
        running=running,
        # Cancel, and leaving the page (the app shell's location changes): the job is killed.
        cancel=[Input(ids["cancel"], "n_clicks"), Input("vi-url", "pathname")],
        progress=[
            Output(ids["progress"], "value"),
            Output(ids["progress"], "max"),
            Output(ids["message"], "children"),
        ],
        progress_default=[None, "1", ""],
        interval=interval,
        on_error=_show_error(ids["status"]),
    )
    if manager is not None:
        opts["manager"] = manager
    _register_cancel_note(prefix)
    return opts


def _show_error(status_id: str) -> Callable[[Exception], None]:
    """``on_error`` of a job: its sentence goes to the status line (the outputs keep theirs).

    Reached when the job raised past the page's own ``try``, or its worker was
    lost (:meth:`_KeyPerRequest.lost`).
    """
    def on_error(exc: Exception) -> None:
        from dash import set_props

        set_props(status_id, {"children": celery_jobs.lost_job_sentence(exc)
                              or error_message(exc)})

    return on_error


_cancel_notes: set[str] = set()  # prefixes whose "Cancelled." callback exists (no user data)


def _register_cancel_note(prefix: str) -> None:
    """Write "Cancelled." to the status line when Cancel is clicked (once per prefix)."""
    if prefix in _cancel_notes:
        return
    _cancel_notes.add(prefix)
    ids = job_ids(prefix)
    clientside_callback(
        """
        function(n) {
            return n ? "Cancelled; the page shows the last finished result." :
                window.dash_clientside.no_update;
        }
        """,
        Output(ids["status"], "children", allow_duplicate=True),
        Input(ids["cancel"], "n_clicks"),
        prevent_initial_call=True,
    )


#: A job draws a partial result at most this often (seconds; the first at once).
PUBLISH_EVERY = 1.5


class Progress:
    """Adapter from ``set_progress`` to a ``progress(done, total, text)`` callable.

    ``progress(3, 10)`` fills the bar to 30 % with "3 of 10";
    ``progress(text="Sampling…")`` shows an indeterminate bar with a message.

    Pass an instance to core functions that accept a progress callback.  Calls
    closer together than ``min_interval`` seconds are dropped (except the last
    step), so fast loops do not flood the manager's store.  A call made more
    than ``timeout`` seconds after the start raises :class:`JobTimeout`, which
    stops the computation; :func:`error_message` turns it into a sentence.
    Every call and every :meth:`publish` also records, at most once a second, that the
    job is alive (:func:`pages._server.job_signals.mark_progress`): a started job with no
    report and no processor time for ``VARIMP_JOB_STALL_AFTER`` seconds is stopped as stuck
    (:func:`_lost_or_overdue`).

    Parameters
    ----------
    set_progress : callable
        The first argument Dash gives a background callback.
    min_interval : float, default=0.2
        Seconds between two forwarded updates.
    timeout : float, default=None
        Wall-time limit in seconds; None reads ``VARIMP_JOB_TIMEOUT``
        (:func:`pages._server.limits.job_timeout`).
    """

    def __init__(self, set_progress: Callable | None, *, min_interval: float = 0.2,
                 timeout: float | None = None, stop: tuple[str, str] | None = None,
                 sink: Callable | None = None):
        self._set = set_progress
        self.sink, self.render, self._published = sink, None, -float("inf")
        self._min_interval = float(min_interval)
        self._last = -float("inf")
        self.timeout = float(limits.job_timeout() if timeout is None else timeout)
        self.started = time.monotonic()
        self._stop = stop
        self._looked = -float("inf")
        self._beat_read = self._marked = -float("inf")
        self._stopped = False

    def __call__(self, done: float = 0, total: float | None = None,
                 text: str | None = None) -> None:
        """Report ``done`` steps of ``total`` (None: unknown, an indeterminate bar).

        Raises
        ------
        JobTimeout
            When the job has run longer than its time limit.
        JobAbandoned
            When no browser has asked for this job's progress for
            ``VARIMP_HEARTBEAT_TIMEOUT`` seconds (its page was closed).
        """
        now = time.monotonic()
        if now - self.started > self.timeout:
            raise JobTimeout(self.timeout)
        self._beat(now)
        final = bool(total) and done >= total
        if self._set is None or (now - self._last < self._min_interval and not final):
            return
        self._last = now
        if text is None:
            text = f"{int(done)} of {int(total)}" if total and total > 1 else ""
        if not total:
            self._set((None, "1", text))
        else:
            self._set((str(done), str(total), text))

    def _beat(self, now: float) -> None:
        """At most once a second: read the page's heartbeat (:func:`check_heartbeat`, which
        may raise :class:`JobAbandoned`) and record this job's progress
        (:func:`mark_progress`, its liveness for the poll side)."""
        self._alive(now)
        if now - self._beat_read >= 1.0:
            self._beat_read = now
            check_heartbeat()

    def _alive(self, now: float) -> None:
        """Record this job's liveness (:func:`mark_progress`), at most once a second."""
        if now - self._marked >= 1.0:
            self._marked = now
            mark_progress()

    def publish(self, result, every: float = PUBLISH_EVERY) -> None:
        """Draw ``result``, a partial result, while the job goes on: ``sink(render(result))``
        (set by :class:`pages._framework.view.JobView`), the first at once, then one per ``every`` s.
        A partial result that cannot be drawn yet (a ValueError) is skipped.  It counts as
        progress (:func:`mark_progress`)."""
        now = time.monotonic()
        self._alive(now)
        if self.sink is None or self.render is None or now - self._published < every:
            return
        try:
            self.sink(self.render(result))
        except ValueError:
            return
        self._published = now

    def should_stop(self) -> bool:
        """True once Cancel asked this job to stop (read at most every 0.25 s)."""
        if self._stop is None or self._stopped:
            return self._stopped
        now = time.monotonic()
        self._alive(now)  # a job that asks between its chunks is alive
        if now - self._looked >= 0.25:
            self._looked = now
            self._stopped = stop_requested(*self._stop)
        return self._stopped

    @property
    def elapsed(self) -> float:
        """Seconds since the job started."""
        return time.monotonic() - self.started


def error_message(exc: BaseException) -> str:
    """A sentence for the page about a failed job; never a traceback.

    Errors the core raises for bad input (``DataError``, ``ValueError`` ...)
    carry a sentence written for users and are shown as they are; a job over
    its time or memory limit gets a sentence naming the limit; anything else
    is logged with its traceback and reported generically.
    """
    over_limit = guards.limit_sentence(exc)
    if over_limit is not None:
        return over_limit
    if isinstance(exc, JobAbandoned):
        return "This computation was stopped: its page was closed."
    text = str(exc).strip()
    # Our own refusals (DataError is a ValueError) are sentences; a library's ValueError
    # ("operands could not be broadcast ...") is a bug of ours, so it is logged, not shown.
    if isinstance(exc, USER_ERRORS) and text and (text[0].isupper() or text[0] in "'\"`"):
        return text if text.endswith((".", "?", "!")) else text + "."
    log.exception("Unexpected error in a background job", exc_info=exc)
    return "Something went wrong while computing this view; the error was logged. " \
           "Try other settings, or reload the page."


def failure_message(exc: BaseException, shown: bool = False, what: str = "The figures",
                    hint: str | None = None) -> str:
    """:func:`error_message`, then ``hint`` (what in the data caused it, when known), and a
    note that ``what`` still shows the last result, if any."""
    message = error_message(exc)
    if hint:
        message += " " + hint
    if shown:
        verb = "shows" if what.endswith(("figure", "heatmap", "page", "summary")) else "show"
        message += f" {what} still {verb} the previous settings."
    return message


def count_message(done, total, what: str) -> str:
    """``"1,200 of 5,000 trees"``; while ``total`` is None (the same result is being computed
    by another job, :func:`pages._server.cache.get_or_compute`) a sentence that says so."""
    if total is None:
        return "Waiting for the same computation, started by another request\u2026"
    return f"{int(done):,} of {int(total):,} {what}"


def done_message(progress: Progress | None = None, what: str = "Done") -> str:
    """``"Done in 1.2 s."`` (or just ``"Done."`` without a :class:`Progress`)."""
    if progress is None:
        return f"{what}."
    return f"{what} in {progress.elapsed:.1f} s."


def make_manager():
    """The app's background callback manager, and the Celery app if any.

    Returns
    -------
    manager : DiskcacheManager or CeleryManager
        ``CeleryManager`` on Redis when ``REDIS_URL`` is set, else a
        ``DiskcacheManager`` on ``<VARIMP_CACHE_DIR>/jobs``.
    celery_app : celery.Celery or None
        Start workers with ``celery -A app:celery_app worker``.
    """
    expire = int(os.environ.get("VARIMP_JOB_EXPIRE", "3600"))
    url = os.environ.get("REDIS_URL")
    if url:
        celery_app = celery_jobs.make_celery_app(url)
        return _CeleryManager(celery_app, expire=expire), celery_app
    import diskcache

    manager = _DiskcacheManager(diskcache.Cache(os.path.join(cache_dir(), "jobs")),
                                expire=expire)
    job_host.start()  # before the server starts a thread
    return manager, None


#: (result key, job) of this request's poll that found no result yet (see
#: :meth:`_KeyPerRequest.job_running`); per request, never shared between users.
_looked_for: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar(
    "varimp_looked_for", default=None)

#: Job handles with no process or task behind them: refused by the per-browser cap, or not
#: started since the job queue (Redis) could not be reached.
REFUSED, UNREACHABLE = "refused", "unreachable"


class _KeyPerRequest:
    """Mixin: each background request gets its own result key; lost jobs end in a sentence.

    Dash keys a job's result by the callback's arguments alone and deletes it
    once a poll has read it, so two sessions sending the same request at the
    same time (a class opening one shared link) shared one key: the first poll
    took the result and the other request got no update (HTTP 204, an empty
    figure).  Results are shared through :mod:`cache` instead; the job store
    only hands each answer to the request that asked for it.  Dash also answers
    "no update" for ever when a job ended without a result (its process killed
    for memory, its worker gone): :meth:`lost` says so in a sentence instead.
    """

    def build_cache_key(self, fn, args, cache_args_to_ignore, triggered):
        return secrets.token_hex(32)

    def admit(self) -> bool:
        """False when this browser runs its cap of jobs.

        Never trust the browser: one client opening many tabs or looping requests
        started one process per job; ``VARIMP_MAX_JOBS_PER_CLIENT`` bounds them.
        """
        slot = cache.key_for("client-jobs", client_id())
        running = [j for j in (cache.get_json(slot) or []) if self.job_running(j)]
        cache.put_json(slot, running, expire=limits.job_timeout() + 60)
        if len(running) < limits.max_client_jobs():
            return True
        log.warning("A client was refused a job: %d running", len(running))
        return False

    def started(self, job) -> None:
        """Count ``job`` against its browser's cap until it ends."""
        slot = cache.key_for("client-jobs", client_id())
        cache.put_json(slot, [*(cache.get_json(slot) or []), str(job)],
                       expire=limits.job_timeout() + 60)

    def job_running(self, job):
        """Whether ``job`` runs; also True for a job that ended since this request's poll found
        no result, and whose result is there now.

        Dash's poll reads the result, then asks whether the job runs: a job that ended
        between the two (a quick job, a loaded server) was "not running, no result", which
        Dash answers as a cancelled job, with no update, ending the callback: the page kept
        its old figure and never drew the new one.  Answered "running", the poll says "not
        yet" and the next one reads the result.
        """
        if job in (None, REFUSED, UNREACHABLE):
            return False
        try:
            if super().job_running(job):
                return True
        except psutil.NoSuchProcess:
            # Dash looks the pid up twice; a job started from the forkserver is reaped by it
            # at once, so it can end between the two looks (no zombie lingers, as a child of
            # this process did): it is not running.
            pass
        looked, _ = _looked_for.get(), _looked_for.set(None)  # this poll's look only
        return looked is not None and looked[1] == job and self.result_ready(looked[0])

    def get_progress(self, key):
        mark_polled(key)  # the page still waits for this job (see check_heartbeat)
        return super().get_progress(key)

    def get_updated_props(self, key):
        """The job's ``set_props``; for a poll whose handles this server did not sign (a new
        secret, or altered), which Dash answers with silence, a sentence on its page."""
        if key is not None:
            return super().get_updated_props(key)
        from flask import request

        ids = " " + str(request.get_json(silent=True).get("output"))
        pages = [p for p in _cancel_notes if f".{p}-" in ids or f" {p}-" in ids]
        return {f"{max(pages, key=len)}-job-status": {"children": (
            "This computation can no longer be followed (the server's key changed, or the "
            "request was altered). Run it again.")}} if pages else {}

    def get_result(self, key, job):
        """The job's result, or a sentence when it has none and never will."""
        if job == UNREACHABLE:
            sentence = celery_jobs.STORE_DOWN
        elif job == REFUSED:
            sentence = (f"This browser already runs {limits.max_client_jobs()} computations "
                        "on this server, the most it may run at once; wait for one to finish, "
                        "or cancel it, and try again.")
        else:
            result = super().get_result(key, job)
            _looked_for.set((key, job) if result is self.UNDEFINED else None)
            sentence = self.lost(key, job) if result is self.UNDEFINED and job else None
            if sentence is None:
                return result
            self.clear_cache_entry(self._make_progress_key(key))
            self.terminate_job(job)
            log.warning("Background job %s ended without a result: %s", job, sentence)
        return celery_jobs.error_value(sentence)


class _DiskcacheManager(_KeyPerRequest, DiskcacheManager):
    """``DiskcacheManager`` with per-request keys that does not wait on other workers' jobs.

    Its jobs run under the time and memory limits (:class:`pages._server.guards.GuardedJob`).
    """

    def call_job_fn(self, key, job_fn, args, context):
        forget_old_beats()
        if not self.admit():
            return REFUSED
        mark_polled(key)
        # From the fork server (job_host), never a fork of this (threaded) process: a job
        # forked while another thread was inside SQLite hung for ever (#27.1).
        func_key = next(k for k, fn in self.func_registry.items() if fn is job_fn)
        job = job_host.start_job(func_key, self.handle.directory,
                                 (key, self._make_progress_key(key), args, context),
                                 (start_job, _report_start), request_id=request_id.get())
        self.started(job)
        return job

    def lost(self, key, job) -> str | None:
        """A sentence when job ``job`` (a process) died or overran its time limit, else None.

        A hung job (stuck in a library after the fork) would run on: the page then
        waited in silence.
        """
        sentence = _lost_or_overdue(job)
        if sentence is None or cache.get_json(cache.key_for("cancelled-job", str(job))):
            return None  # running, or killed by a Cancel: a poll still in flight says nothing
        return None if self.result_ready(key) else sentence  # it may have finished just now

    def terminate_job(self, job):
        """Stop a job; one started by another worker process is not waited for.

        Dash kills the job and waits up to 1 s for it to exit.  Under gunicorn
        the poll that reads a result often reaches another worker than the
        job's parent; only the parent can reap the finished process, so that
        wait always ran to its 1 s timeout, on about half of all requests.
        """
        import psutil

        if job is None or not str(job).isdigit():  # none, or refused: no process
            return
        cache.put_json(cache.key_for("cancelled-job", str(job)), True, expire=60)
        try:
            proc = psutil.Process(int(job))
            if proc.ppid() == os.getpid():
                return super().terminate_job(job)
            if proc.status() == psutil.STATUS_ZOMBIE:  # finished; its parent reaps it
                return
            for child in proc.children(recursive=True):
                try:
                    child.kill()
                except psutil.NoSuchProcess:
                    pass
            proc.kill()
        except psutil.NoSuchProcess:
            return


def _report_start() -> None:
    """In a Diskcache job's process: open the cache (where a lock inherited locked at the
    fork hangs a job for ever), then record that the job started (:func:`mark_started`)."""
    cache.get_cache().get("varimp-job-start-probe", default=None, retry=True)
    mark_started()


#: A job whose process never reported its start (hung as it began, before any work).
STALLED_SENTENCE = ("The process computing this view hung as it started (it did not begin "
                    "within {seconds:g} s) and was stopped. Run it again.")
#: A job whose process ended without a result and without a recorded reason.
DIED_SENTENCE = ("The process computing this view stopped before it finished, without a "
                 "result or a reason (the system ended it). Run it again; if this keeps "
                 "happening, ask for less work (fewer trees, replicates or rows).")


def _lost_or_overdue(job) -> str | None:
    """A sentence when Diskcache job ``job`` (a process id) is gone, stalled or past its
    limit, else None.

    A job's own alarm stops it at ``VARIMP_JOB_TIMEOUT``; one that is still alive
    :data:`guards.GRACE` seconds later is stuck where the alarm cannot reach it.  A job
    that has not reported its start (:func:`job_signals.mark_started`)
    ``VARIMP_JOB_START_TIMEOUT`` seconds after it was forked hung as it began: it is
    reported then, not at the time limit.  A started job is stuck (:func:`_idle_for`) once
    it went ``VARIMP_JOB_STALL_AFTER`` seconds with neither a report
    (:func:`job_signals.mark_progress`) nor :data:`IDLE_CPU` seconds of processor time in
    its process tree: a long fit that reports nothing still computes and is left to its
    time limit.  A stuck job's stack goes to the log (``SIGUSR1``) and its reason is
    recorded; the caller kills it.  A process that is gone is reported with the reason it
    recorded before it was killed (its watchdog, or this function), else with no guess at
    one: never memory, which would have been said by the job itself.
    """
    import psutil

    try:
        pid = int(job)
        proc = psutil.Process(pid)
        if proc.status() != psutil.STATUS_ZOMBIE:
            created = proc.create_time()
            age = time.time() - created
            if age > limits.job_timeout() + guards.GRACE:
                record_end_reason(f"{TIMEOUT} {limits.job_timeout():g}", pid)
                return JobTimeout(limits.job_timeout()).sentence()
            if not job_started(pid, created):
                if age <= start_timeout():
                    return None
                log.warning("Job process %s did not start within %g s; it is stopped", pid,
                            start_timeout())
                _dump_stack(pid)
                record_end_reason(STALLED, pid)
                return STALLED_SENTENCE.format(seconds=start_timeout())
            stall = limits.job_stall_after()
            idle = _idle_for(proc)
            if idle is None or idle < stall:
                return None
            log.warning("Job process %s made no progress and used no processor time for "
                        "%.1f s; it is stopped", pid, idle)
            _dump_stack(pid)
            record_end_reason(f"{IDLE} {stall:g}", pid)
            return IDLE_SENTENCE.format(seconds=stall)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        pass
    try:
        reason = end_reason(int(job))
        forget_job_state(int(job))
    except ValueError:
        reason = None
    kind, _, seconds = (reason or "").partition(" ")
    if kind == TIMEOUT:
        try:
            return JobTimeout(float(seconds)).sentence()
        except ValueError:
            return JobTimeout(limits.job_timeout()).sentence()
    if reason == STALLED:
        return STALLED_SENTENCE.format(seconds=start_timeout())
    if kind == IDLE:
        try:
            return IDLE_SENTENCE.format(seconds=float(seconds))
        except ValueError:
            return IDLE_SENTENCE.format(seconds=limits.job_stall_after())
    return DIED_SENTENCE


def _dump_stack(pid: int) -> None:
    """Where job process ``pid`` is stuck, in the log (GuardedJob's faulthandler), before
    it is killed."""
    try:
        os.kill(pid, signal.SIGUSR1)
        time.sleep(0.2)
    except OSError:
        pass


def _idle_for(proc: psutil.Process) -> float | None:
    """Seconds job process ``proc`` has gone with no report and no processor time, else None.

    The CPU sample ``(cpu seconds, when they last advanced by IDLE_CPU)`` lives in the cache
    folder (:func:`job_signals.cpu_sample`), not in this worker: the next poll may reach
    another one.  Measured from the later of the job's last report and the last time its
    processor time was seen to advance; the first sample counts as an advance.
    """
    now, pid = time.time(), proc.pid
    cpu = tree_cpu(proc)
    sample = cpu_sample(pid)
    if (sample is None or sample[1] < proc.create_time()  # none, or an earlier process's
            or cpu - sample[0] >= IDLE_CPU or cpu < sample[0]):
        keep_cpu_sample(pid, cpu, now)
        return None
    report = last_report(pid) or proc.create_time()
    return now - max(report, sample[1])


class _CeleryManager(_KeyPerRequest, CeleryManager):
    """``CeleryManager`` with per-request result keys; a job that is lost ends in a sentence.

    Dash would poll forever a job whose worker is gone (its task stays "started"),
    and answer "no update" for one whose pool process was killed; here the poll
    returns a sentence (:func:`pages._server.celery_jobs.lost_sentence`).  A request
    that cannot reach Redis answers a sentence too, never HTTP 500.  Cancelling a
    job also revokes the Monte Carlo chunks it fanned out.
    """

    def call_job_fn(self, key, job_fn, args, context):
        try:
            if not self.admit():
                return REFUSED
            job = celery_jobs.submit(self.handle, job_fn,
                                     (key, self._make_progress_key(key), args, context))
            self.started(job)
        except celery_jobs.store_errors():
            log.warning("A job was not started: its queue is unreachable", exc_info=True)
            return UNREACHABLE
        return job

    def lost(self, key, job) -> str | None:
        return celery_jobs.lost_sentence(self.handle, job)

    def get_result(self, key, job):
        return _reach(celery_jobs.error_value(celery_jobs.STORE_DOWN), super().get_result,
                      key, job)

    def get_progress(self, key):
        return _reach(None, self._progress_or_queued, key)

    def _progress_or_queued(self, key):
        """The job's progress; before any, once it waited ``QUEUED_NOTE_AFTER`` s for a
        worker, a message saying so (Dash would show nothing until a worker took it)."""
        progress = super().get_progress(key)
        if progress is None:
            waited = celery_jobs.queued_for(self.handle, key)
            if waited is not None and waited >= celery_jobs.QUEUED_NOTE_AFTER:
                return [None, "1", celery_jobs.queued_sentence(waited)]
        return progress

    def get_updated_props(self, key):
        if key is None:
            return _reach({}, super().get_updated_props, key)
        return _reach({}, self._take_updated_props, key)

    def _take_updated_props(self, key) -> dict:
        """The job's latest ``set_props`` (a partial result), read and deleted in one step.

        Dash's ``CeleryManager`` deletes the job's result key here instead of the
        ``set_props`` key it read, so every later poll sent the same partial figure
        again (every 0.4 s, for the whole job); Dash's Diskcache manager deletes it.
        """
        props_key = self._make_set_props_key(key)
        pipe = self.handle.backend.client.pipeline()  # MULTI/EXEC: a newer value is kept
        pipe.get(props_key)
        pipe.delete(props_key)
        value, _ = pipe.execute()
        return json.loads(value) if value else {}

    def job_running(self, job):
        return _reach(False, super().job_running, job)

    def terminate_job(self, job):
        if job not in (None, REFUSED, UNREACHABLE):
            _reach(None, super().terminate_job, job)
            _reach(None, fanout.revoke_children, self.handle, job)


def _reach(default, method, *args):
    """``method(*args)``, or ``default`` when Redis cannot be reached."""
    try:
        return method(*args)
    except celery_jobs.store_errors():
        return default
