"""One job pattern for every page: cached result, else a background job, then draw.

A page describes each computed view once, as a :class:`JobView`: its
parameters (a :class:`pages._framework.params.ParamSet`), a ``compute(settings,
data, progress)`` that calls the core and returns its result (JSON values, and at the
top level of a dict the core's result objects), and a ``render(result, settings,
data)`` that turns the result into the values of the view's outputs.  The view's
cache entry is the only one it writes: the result is serialised once, at the edge
(:func:`pages._framework.parts.encode`), the core results several pages share
(:func:`pages._framework.parts.shared`) as references to their own entries; a hit is
decoded once, and on the compute path render draws the objects ``compute`` made.  :meth:`JobView.register` wires it the same way for
every page:

1. a plain callback validates the controls' values (a sentence beside each
   control whose value cannot be used, and nothing runs), writes the URL,
   and looks for the result in the server cache under a hash of the data and
   settings; a hit is drawn at once;
2. a miss starts the background job (progress bar, Cancel): it parses the
   data choice and validates the values **again** (the browser can send
   anything), computes, caches the result and draws it;
3. a job whose inputs change is replaced by the new one, and a job whose page
   is left (the app's ``vi-url`` path changes) or whose page stops polling
   (the tab was closed) is stopped (:mod:`pages._server.jobs`).

A failure is a sentence in the view's error box; the previous view stays.
Views with ``partial=True`` stop cooperatively on Cancel: ``compute`` asks
``progress.should_stop()`` between chunks and returns what it finished, which
is drawn (with ``result["partial"]`` set) but not cached.  A ``compute`` may
also hand ``progress.publish(result)`` the result so far: it is drawn at once
(through the ``{prefix}-streamed`` store) while the job goes on.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import uuid
from typing import Any, Callable, Mapping, Sequence

from dash import (Input, Output, State, callback, clientside_callback, ctx, dcc, html,
                  no_update, set_props)
from plotly.utils import PlotlyJSONEncoder

from pages._server import cache, jobs
from pages._server.job_signals import clear_stop, request_stop
from pages._framework.common import NOTHING_DRAWN, is_pending, placeholder_figure
from pages._framework import parts
from pages._framework.datachoice import DataChoice
from pages._framework.params import Context, ParamSet

_HIDDEN = "vi-hidden"


def context_for(data: DataChoice | None, store: Any = None) -> Context:
    """The validation context of a data choice: its number of inputs p, and in ``extra`` the
    target's ``task``, whether the data is a ``sample`` and what the exact binary methods
    can afford on it (``binary``: :attr:`DataChoice.binary_size`), which choices depend on.

    p is always counted on the server from the parsed choice; the ``p`` a page's store
    carries came back from the browser and could say anything (``store`` is accepted
    for the callers' convenience and not read).
    """
    if data is None:
        return Context()
    return Context(p=data.n_features(), extra={"task": data.task(), "sample": data.is_sample,
                                               "binary": data.binary_size})


def job_panel(prefix: str) -> html.Div:
    """Progress bar, progress message, Cancel button and status line of a page.

    The bar and Cancel button show only while the job runs (CSS class
    ``vi-job-running``); the status line stays, for "Done in 1.2 s" or an error
    sentence.
    """
    ids = jobs.job_ids(prefix)
    return html.Div(
        id=ids["panel"],
        className="vi-job",
        children=[
            html.Div(className="vi-job-live", children=[
                html.Progress(id=ids["progress"], max="1", className="vi-job-bar"),
                html.Span(id=ids["message"], className="vi-job-message"),
                html.Button("Cancel", id=ids["cancel"], n_clicks=0, disabled=True,
                            className="vi-button vi-button-secondary vi-job-cancel"),
            ]),
            html.Div(id=ids["status"], className="vi-job-status", role="status",
                     **{"aria-live": "polite"}),
        ],
    )


class JobView:
    """One computed view of a page (see the module docstring).

    Parameters
    ----------
    prefix : str
        The view's id prefix: its job panel is ``{prefix}-job``, its error box
        ``{prefix}-error``, its stores ``{prefix}-miss`` and ``{prefix}-instance``.
    params : ParamSet
        The parameters whose controls drive the view.
    compute : callable
        ``compute(settings, data, progress, **extra) -> dict``: JSON values, and core
        objects (:data:`pages._framework.parts.CORE_TYPES`) at the top level.
    render : callable
        ``render(result, settings, data, **extra) -> tuple`` of output values.
    outputs : sequence of (id, property)
    data_store : str or None
        Id of the store holding the page's :meth:`DataChoice.to_store`; None for
        the view that makes the data choice (the Data page): ``data`` is None.
    extra : sequence of (name, Input or State)
        More inputs, passed to ``compute`` and ``render`` by name (a clicked
        cell, a checkbox of another view).  ``compute`` must check them.
    query_store : str, optional
        Store whose value the page mirrors into the URL; gets
        ``url(settings, data, **extra)``.
    url : callable, optional
    disable : sequence of str
        Ids disabled while the job runs.
    partial : bool, default=False
        Cancel stops the job cooperatively and its partial result is drawn.
    namespace : str, optional
        Cache namespace (default ``prefix``).
    what : str
        Name of the view in sentences ("The figures").
    instant : callable, optional
        ``instant(settings, data, **extra) -> dict or None``: a result known
        without any work (the Data page before a file is chosen), drawn by the
        plain callback; None goes on to the cache and the job.
    quick : callable, optional
        ``quick(settings, data, **extra) -> bool``: True when the result costs a small,
        bounded amount of work (a built-in exact problem of a few inputs: milliseconds to
        a quarter of a second), so the plain callback computes and caches it at once
        rather than start a job, whose start and first poll cost a second or two before
        the figure (issue 26: a demo's first figure within 2 s).  False goes to the job.
    saved : callable, optional
        ``saved(settings, data, **extra) -> result`` read by :meth:`download` instead of the
        whole cached result: what a cancelled study finished (a ValueError says why none).
    requires : callable, optional
        ``requires(result) -> list of cache keys`` the result is read through
        (Dependence and Interactions keep their local-importance table in its own
        entry).  A cached result one of whose entries the cache has evicted is a
        miss: it is forgotten and computed again, never shown as a lasting error.
    """

    def __init__(self, prefix: str, params: ParamSet, *, compute: Callable, render: Callable,
                 outputs: Sequence[tuple[str, str]], data_store: str | None,
                 extra: Sequence[tuple[str, Any]] = (), query_store: str | None = None,
                 url: Callable | None = None, disable: Sequence[str] = (),
                 partial: bool = False, namespace: str | None = None,
                 what: str = "The figures", instant: Callable | None = None,
                 quick: Callable | None = None,
                 requires: Callable[[Any], Sequence[str]] | None = None,
                 saved: Callable | None = None):
        self.prefix, self.params = prefix, params
        self.compute_fn, self.render_fn = compute, render
        self.outputs = [tuple(o) for o in outputs]
        self.data_store = data_store
        self.extra = list(extra)
        self.query_store, self.url = query_store, url
        self.disable = list(disable)
        self.partial = partial
        self.namespace = namespace or prefix
        self.what = what
        self.instant = instant
        self.quick = quick
        self.requires, self.saved = requires, saved

    # -- layout -----------------------------------------------------------------------
    def stores(self) -> list:
        """The view's stores: the pending miss, the page view's instance id, the last drawn hit."""
        return [dcc.Store(id=f"{self.prefix}-miss"),
                dcc.Store(id=f"{self.prefix}-instance", data=uuid.uuid4().hex),
                dcc.Store(id=f"{self.prefix}-stop-ack"), dcc.Store(id=f"{self.prefix}-drawn"),
                dcc.Store(id=f"{self.prefix}-streamed")]

    def status(self) -> list:
        """The view's error box and job panel (progress bar, Cancel, status line)."""
        return [html.Div(id=f"{self.prefix}-error", className=_HIDDEN),
                job_panel(self.prefix)]

    # -- plain functions (tests call them) ---------------------------------------------
    def key(self, data: DataChoice, settings: Mapping[str, Any], extra: Mapping[str, Any]
            ) -> str:
        return cache.key_for(self.namespace, None if data is None else data.as_dict,
                             dict(settings), dict(extra))

    def data(self, store: Any) -> DataChoice | None:
        """The data choice the browser sent back, parsed again (None without a data store)."""
        return DataChoice.from_store(store) if self.data_store else None

    def check(self, values: Mapping[str, Any], store: Any) -> tuple[DataChoice, dict]:
        """Parse the data store and validate the control values, as the job does.

        Raises
        ------
        DataError or ParamErrors
            With sentences.
        """
        data = self.data(store)
        return data, self.params.settings(values, context_for(data, store))

    def cached(self, data: DataChoice, settings: Mapping[str, Any],
               extra: Mapping[str, Any] | None = None) -> Any:
        """The cached result of these inputs, or None: nothing is computed.

        The stored result is decoded once (:func:`pages._framework.parts.decode`: its core
        objects rebuilt, its shared parts read).  A result whose :attr:`requires` entries or
        shared parts the cache has evicted is forgotten (None).
        """
        key = self.key(data, settings, dict(extra or {}))
        stored = cache.get_json(key)
        if stored is None:
            return None
        result = None if self.requires is not None and not all(
            k in cache.get_cache() for k in self.requires(stored)) else parts.decode(stored)
        if result is None:  # a part evicted: forgotten, so the job computes it again
            cache.get_cache().delete(key)
            cache.get_cache().delete(self.drawn_key(data, settings, dict(extra or {})))
        return result

    def run(self, values: Mapping[str, Any], store: Any, extra: Mapping[str, Any] | None = None,
            progress: Any = None) -> tuple[dict, dict, DataChoice]:
        """The view's result for control values: cached, else computed and cached.

        Returns ``(result, settings, data)``.  A computed result is serialised once here
        (:func:`pages._framework.parts.encode`: the shared parts ``compute`` read as
        references to their entries) and returned as ``compute`` made it: render draws
        its objects, never a copy read back.
        """
        extra = dict(extra or {})
        data, settings = self.check(values, store)
        key = self.key(data, settings, extra)
        result = self.cached(data, settings, extra)
        if result is None:
            progress = progress or jobs.Progress(None)
            progress.render = lambda partial: self.draw(partial, settings, data, extra)
            with parts.collecting():
                result = self.compute_fn(settings, data, progress, **extra)
                if not (isinstance(result, Mapping) and result.get("partial")):
                    cache.put_json(key, parts.encode(result))
        return result, settings, data

    def download(self, make: Callable, values: Mapping[str, Any], store: Any,
                 extra: Mapping[str, Any] | None = None) -> tuple:
        """``(download data, sentence)`` of a CSV of the cached result: nothing is computed.

        The values and the data store are validated again, as the job does; ``make(result,
        settings, data, **extra) -> (text, filename)`` may refuse with a ValueError.
        """
        extra = dict(extra or {})
        try:
            data, settings = self.check(values, store)
            result = self.saved(settings, data, **extra) if self.saved else \
                self.cached(data, settings, extra)
            if result is None:
                return no_update, ("This result is not in the server's cache: wait until it "
                                   "is drawn (or change a control and back), then download.")
            text, filename = make(result, settings, data, **extra)
        except ValueError as exc:
            return no_update, jobs.error_message(exc)
        return dict(content=text, filename=filename, type="text/csv"), ""

    def register_downloads(self, makers: Mapping[str, Callable], target: str | None = None,
                           note: str | None = None) -> None:
        """Buttons (ids: the keys of ``makers``) filling ``target`` (default
        ``{prefix}-download``, which several views may share) with a CSV of the view's cached
        result, by :meth:`download`; the sentence goes to ``note`` (``{prefix}-download-note``)."""
        names, extra_names = self.params.names, [name for name, _ in self.extra]
        states = [*(State(i.component_id, i.component_property)
                    for i in [*self.params.inputs(), *(dep for _, dep in self.extra)]),
                  *([State(self.data_store, "data")] if self.data_store else [])]

        @callback(Output(target or f"{self.prefix}-download", "data", allow_duplicate=True),
                  Output(note or f"{self.prefix}-download-note", "children"),
                  *(Input(button, "n_clicks") for button in makers), *states,
                  prevent_initial_call=True)
        def download(*args):
            clicks, rest = args[:len(makers)], args[len(makers):]
            if not any(clicks) or ctx.triggered_id not in makers:
                return no_update, no_update
            values = dict(zip(names, rest))
            extra = dict(zip(extra_names, rest[len(names):]))
            return self.download(makers[ctx.triggered_id], values,
                                 rest[-1] if self.data_store else None, extra)

    def _request_stop(self, n_clicks, instance):
        request_stop(instance, self.prefix)
        return n_clicks

    def draw(self, result, settings, data, extra) -> tuple:
        return tuple(self.render_fn(result, settings, data, **extra))

    def drawn_key(self, data: DataChoice, settings: Mapping[str, Any],
                  extra: Mapping[str, Any]) -> str:
        """Key of the drawn outputs: every input of ``render`` (a view's own :meth:`key` may
        leave out what only changes the drawing, as the Measures page's scale), and the
        outputs it fills: a drawing kept before a page gained an output is not sent to it."""
        return cache.key_for("drawn", self.namespace, [list(o) for o in self.outputs],
                             None if data is None else data.as_dict, dict(settings), dict(extra))

    def nothing_drawn(self) -> list:
        """Outputs after a first job that failed: each figure says :data:`NOTHING_DRAWN`, the
        other outputs stay as they are."""
        return [placeholder_figure(NOTHING_DRAWN) if prop == "figure" else no_update
                for _, prop in self.outputs]

    def draw_and_keep(self, result, settings, data, extra) -> tuple:
        """:meth:`draw`, kept in the cache as JSON so the next hit skips building figures.

        A cached control change is then a cache read (milliseconds) rather than a
        render (about 40 ms of plotly for the Importances page's two figures).
        """
        out = self.draw(result, settings, data, extra)
        if not (isinstance(result, Mapping) and result.get("partial")) \
                and not any(o is no_update for o in out):
            cache.put_json(self.drawn_key(data, settings, extra),
                           json.loads(json.dumps(out, cls=PlotlyJSONEncoder)))
        return out

    # -- callbacks ----------------------------------------------------------------------
    def register(self) -> None:
        """Register the view's callbacks (once, when the page module is imported)."""
        n_out, names = len(self.outputs), self.params.names
        extra_names = [name for name, _ in self.extra]
        view_out = [Output(i, p, allow_duplicate=True) for i, p in self.outputs]
        status = Output(jobs.job_ids(self.prefix)["status"], "children", allow_duplicate=True)
        err = [Output(f"{self.prefix}-error", "children", allow_duplicate=True),
               Output(f"{self.prefix}-error", "className", allow_duplicate=True)]
        url_out = [Output(self.query_store, "data", allow_duplicate=True)] \
            if self.query_store else []
        inputs = [*self.params.inputs(), *(dep for _, dep in self.extra),
                  *([State(self.data_store, "data")] if self.data_store else [])]

        def split(args):
            values = dict(zip(names, args[:len(names)]))
            extra = dict(zip(extra_names, args[len(names):len(names) + len(extra_names)]))
            return values, extra, args[-1] if self.data_store else None

        def peek(*args):
            values, extra, store = split(args)
            data, settings, errors = None, {}, {}
            try:
                data = self.data(store)
                settings, errors = self.params.validate(values, context_for(data, store))
            except Exception as exc:  # a sentence, never a traceback
                return (*[no_update] * n_out, *[""] * len(names), *[no_update] * len(url_out),
                        no_update, no_update, "", jobs.error_message(exc), "vi-error")
            texts = [errors.get(n, "") for n in names]
            if errors:
                return (*[no_update] * n_out, *texts, *[no_update] * len(url_out), no_update,
                        no_update, "Nothing was recomputed: correct the value marked beside its control.",
                        "", _HIDDEN)
            query = [self.url(settings, data, **extra)] if self.query_store else []
            try:
                result = self.instant and self.instant(settings, data, **extra)
                # A hit is drawn now, and the drawn store cancels a job still computing
                # older settings, which would otherwise draw over it when it ends.
                if result is not None:
                    return (*self.draw(result, settings, data, extra), *texts, *query,
                            no_update, uuid.uuid4().hex, "", "", _HIDDEN)
                drawn = None if self.requires else \
                    cache.get_json(self.drawn_key(data, settings, extra))
                result = None if drawn else self.cached(data, settings, extra)
                out = drawn if result is None else \
                    self.draw_and_keep(result, settings, data, extra)
                if out:
                    return (*out, *texts, *query,
                            no_update, uuid.uuid4().hex, "Done (cached).", "", _HIDDEN)
                if self.quick is not None and self.quick(settings, data, **extra):
                    started = time.perf_counter()
                    result, _, _ = self.run(values, store, extra)
                    return (*self.draw_and_keep(result, settings, data, extra), *texts, *query,
                            no_update, uuid.uuid4().hex,
                            f"Done in {time.perf_counter() - started:.1f} s.", "", _HIDDEN)
            except Exception as exc:
                return (*[no_update] * n_out, *texts, *query, no_update, no_update, "",
                        jobs.error_message(exc), "vi-error")
            miss = {"values": values, "extra": extra, "data": store, "n": uuid.uuid4().hex}
            return (*[no_update] * n_out, *texts, *query, miss, no_update, no_update, "",
                    _HIDDEN)

        self.peek = peek  # tests call it as the browser would
        callback(*view_out, *self.params.error_outputs(), *url_out,
                 Output(f"{self.prefix}-miss", "data"), Output(f"{self.prefix}-drawn", "data"),
                 status, *err, *inputs,
                 prevent_initial_call="initial_duplicate")(peek)

        opts = jobs.background_options(self.prefix, disable=self.disable)
        if self.partial:  # Cancel asks the job to stop between chunks and keep what it has
            opts["cancel"] = [Input("vi-url", "pathname")]
            callback(Output(f"{self.prefix}-stop-ack", "data"),
                     Input(jobs.job_ids(self.prefix)["cancel"], "n_clicks"),
                     State(f"{self.prefix}-instance", "data"),
                     prevent_initial_call=True)(self._request_stop)
        opts["cancel"] = [*opts["cancel"], Input(f"{self.prefix}-drawn", "data")]

        def job(set_progress, miss, instance, shown):
            if not isinstance(miss, Mapping):
                return (*[no_update] * n_out, "", no_update, no_update)
            progress = jobs.Progress(set_progress, stop=(instance, self.prefix)
                                     if self.partial else None, sink=publish)
            if self.partial:
                clear_stop(instance, self.prefix)
            extra = dict(miss.get("extra") or {})
            try:
                result, settings, data = self.run(miss.get("values") or {}, miss.get("data"),
                                                  extra, progress)
                out = self.draw_and_keep(result, settings, data, extra)
            except Exception as exc:  # a sentence on the page, never a traceback
                # A first job that fails leaves no "Computing\u2026" figure behind for good.
                pending = is_pending(shown)
                hint = memory_hint(miss.get("data")) if isinstance(exc, MemoryError) else None
                return (*(self.nothing_drawn() if pending else [no_update] * n_out), "",
                        jobs.failure_message(exc, bool(shown) and not pending, self.what,
                                             hint), "vi-error")
            publish(None)  # a partial result not yet read is not drawn over this one
            done = jobs.done_message(progress)
            if isinstance(result, Mapping) and result.get("partial"):
                done = "Cancelled: showing what was finished."
            return (*out, done, "", _HIDDEN)

        def publish(out) -> None:
            set_props(f"{self.prefix}-streamed", {"data": out})

        clientside_callback("function(d) { if (!d) { throw window.dash_clientside."
                            "PreventUpdate; } return d; }", *view_out,
                            Input(f"{self.prefix}-streamed", "data"), prevent_initial_call=True)
        callback(*[Output(i, p, allow_duplicate=True) for i, p in self.outputs],
                 status, *err, Input(f"{self.prefix}-miss", "data"),
                 State(f"{self.prefix}-instance", "data"), State(*self.outputs[0]),
                 prevent_initial_call=True, **opts)(job)


#: An input with more distinct values than this is named when a job runs out of memory.
MANY_LEVELS = 50


def memory_hint(store: Any) -> str | None:
    """The input that most likely made a job run out of memory, as a sentence, or None.

    Forests, nulls and sweeps grow with the number of distinct values of an input (a
    multiway node has one child per value; a name-like text column of 4,800 values in
    10,000 rows fills the memory limit): the input with the most values is named when it
    has more than :data:`MANY_LEVELS` (issue #26).  The data is the page's, already
    prepared in this process's cache; nothing is named when it cannot be read.
    """
    try:
        prepared = DataChoice.from_store(store).load()
        levels = [len(labels) for labels in prepared.table.x_labels]
    except Exception:  # the refusal stands without a hint
        return None
    if not levels or max(levels) <= MANY_LEVELS:
        return None
    j = max(range(len(levels)), key=lambda i: (levels[i], -i))
    return (f"The input {prepared.variables[j]!r} has {levels[j]:,} distinct values, the "
            f"most of any input, and forests grow with them: exclude it or group its values "
            f"on the Data page.")


def warm_now(runs: Sequence[tuple[JobView, Mapping[str, Any], Any]]) -> None:
    """Compute, cache and draw each of ``runs`` (``(view, values, data store)``) whose result
    is not in the cache (never computed, or evicted since), each under the lock of its own
    result's key (:func:`cache.get_or_compute`): another worker warming the same run waits
    and finds it done.  Values a server's limits refuse (VARIMP_MAX_TREES...) are left to
    the page."""
    for view, values, store in runs:
        try:
            data, settings = view.check(values, store)
            if view.cached(data, settings) is None:
                made: list = []

                def compute(view=view, data=data, settings=settings):
                    made.append(view.compute_fn(settings, data, jobs.Progress(None)))
                    return parts.encode(made[0])

                with parts.collecting():
                    stored = cache.get_or_compute(view.key(data, settings, {}), compute)
                result = made[0] if made else parts.decode(stored)
                if result is not None:
                    view.draw_and_keep(result, settings, data, {})
        except ValueError:
            continue


def warm(name: str, runs: Sequence[tuple[JobView, Mapping[str, Any], Any]]):
    """:func:`warm_now` in a background process, at every start of a server: a first visit
    finds ``runs`` in the cache.  Returns the process; None when ``VARIMP_WARM=0`` (tests)."""
    if os.environ.get("VARIMP_WARM", "1") == "0":
        return None
    # A fork at import, before the server has a thread (no SQLite call can be in flight).
    process = multiprocessing.get_context("fork").Process(
        target=warm_now, args=(list(runs),), daemon=True, name=f"varimp-warm-{name}")
    process.start()
    return process
