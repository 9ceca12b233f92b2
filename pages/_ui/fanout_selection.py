"""The runs of an RS/SRS study fanned out to Celery workers as a task group.

The Selection page's study (:func:`pages._ui.selection_logic.compute_rs`) is a
set of independent runs, one per (seed, method): each rebuilds the seed's
train/test split and grows T trees with
:func:`varimp_core.selection.subspace_selection` seeded by the seed.  With
``REDIS_URL`` set they run as one ``celery.group`` (:class:`pages._ui.fanout.TaskGroup`),
so adding workers shortens the study:

.. code-block:: python

    from pages._ui import fanout_selection

    mapper = fanout_selection.run_mapper()        # None without Redis: run locally
    for i, run in mapper(settings, [(0, "rs"), (0, "srs")], progress=report,
                         should_stop=stop):
        ...                                       # run: selection_logic.rs_run's JSON

A task gets the study's settings (JSON), the seed and the method, never
arrays: it rebuilds the data itself (:func:`pages._ui.selection_logic.rs_run`)
and returns the run as JSON, so the numbers are those of a local run.  An
uploaded table is read from the shared cache (``VARIMP_CACHE_DIR``), which the
workers share already: they run the page's background callbacks, which read
it too.  A worker that cannot read it fails the task and the caller computes
the run itself.

While running, a task stores the trees it has grown as its PROGRESS state
(the caller sums them for the page's bar) and, between two trees, looks at
the group's stop flag in Redis: Cancel on the page (the caller's
``should_stop``), or the Dash job being cancelled or lost
(:func:`pages._ui.fanout.revoke_children`), ends the running tasks after their
current tree with the trees grown so far, as a local run stops.  The flag is
used rather than ``revoke(terminate=True)``, which would kill the worker's
process and lose those trees.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Sequence

from . import fanout

__all__ = ["TASK_NAME", "install", "run_mapper"]

#: Name of the task that computes one (seed, method) run.
TASK_NAME = "varimp.selection_run"


def install(celery_app) -> None:
    """Register the run task on ``celery_app`` (the workers' and the callers' app)."""
    if TASK_NAME not in celery_app.tasks:
        celery_app.task(name=TASK_NAME, bind=True, serializer="json",
                        acks_late=False)(_selection_run)


def _selection_run(task, settings: dict, seed: int, method: str, stop: str | None = None) -> dict:
    """Worker side: one run of the study (JSON in, JSON out); see ``selection_logic.rs_run``."""
    from .selection_logic import rs_run

    report = fanout.progress_reporter(task)
    return rs_run(settings, seed, method, progress=lambda done: report(done=int(done)),
                  should_stop=fanout.stop_flag(task.app, stop))


def run_mapper(celery_app=None, *, local: bool = True, poll: float = 0.05,
               timeout: float | None = None, stall_after: float = 10.0):
    """Runs of an RS/SRS study on Celery workers, or None (no Celery app: run locally).

    Parameters
    ----------
    celery_app : celery.Celery, default=None
        None uses the dashboard's app (:func:`pages._ui.fanout.install`), set
        when ``REDIS_URL`` is.
    local : bool, default=True
        Also compute in this process the runs no worker has started (taken
        from the end) and the runs whose worker failed or seems gone.  False
        only dispatches.
    poll : float, default=0.05
        Seconds between two looks at the results.
    timeout : float, default=None
        With ``local=False``: raise when no run finished for this many seconds.
    stall_after : float, default=10.0
        Seconds without news of a running run before its worker counts as
        gone (at least 4 times the slowest run; see :class:`pages._ui.fanout.TaskGroup`).

    Returns
    -------
    mapper : callable or None
        ``mapper(settings, runs, *, progress=None, should_stop=None)`` with
        ``runs`` a list of ``(seed, method)``; it returns an iterator of
        ``(index, run)`` pairs, in the order the runs finish, where ``run`` is
        :func:`pages._ui.selection_logic.rs_run`'s dict.  ``progress(index,
        trees_done)`` reports a run's trees, also those of runs still on a
        worker.  Once ``should_stop()`` is True the running runs end after
        their current tree (``stopped=True``) and the runs nobody started are
        left out.
    """
    app = celery_app or fanout.default_app()
    if app is None:
        return None
    install(app)
    return _RunMapper(app, dict(local=local, poll=poll, timeout=timeout,
                                stall_after=stall_after))


class _RunMapper:
    def __init__(self, app, options: dict):
        self.app, self.options = app, options

    def __call__(self, settings: Mapping[str, Any], runs: Sequence[tuple[int, str]], *,
                 progress: Callable[[int, int], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> Iterator[tuple[int, dict]]:
        from .selection_logic import rs_run

        settings, runs = dict(settings), [(int(seed), str(m)) for seed, m in runs]
        report = progress or (lambda i, done: None)

        def compute(i: int) -> dict:
            def tick(done):
                report(i, done)
                group.peek()  # the workers' runs move on too

            return rs_run(settings, *runs[i], progress=tick, should_stop=should_stop)

        group = fanout.TaskGroup(
            self.app, TASK_NAME, [(settings, seed, method) for seed, method in runs], compute,
            what="RS/SRS run", stoppable=True, should_stop=should_stop, **self.options,
            on_progress=lambda i, info: report(i, int(info.get("done", 0))))
        return iter(group)
