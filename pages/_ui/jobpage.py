"""What the pages with stoppable background jobs share: stores, job callbacks, downloads.

The Distributions and Selection pages run jobs that Cancel stops between
chunks (:func:`pages._ui.common.register_cancel`): the job returns what it
finished and the page shows it with a note.  A page ``P`` with such a job ``J``
holds

* ``{P}-query`` (:func:`pages._ui.state.query_store`), ``{P}-data-params``
  (the session's data parameters), ``{P}-instance`` (a random id per page
  view, which keys the Cancel flags) and ``{P}-download``, laid out with the
  title, lead and columns by :func:`job_page`;
* ``{J}-current``: where ``J``'s result lives in the server cache (its key and
  settings, never the numbers), and ``{J}-stop-ack``, the output of its Cancel
  callback;
* an error box ``{J}-error``, the job panel of :func:`pages._ui.jobs.job_panel`
  and, when a result can be partial, a note ``{J}-partial``
  (:func:`job_status`).

:func:`stoppable_job` wires ``J``'s background callback and its Cancel;
:func:`result_view` the callback drawing its result; :func:`register_downloads`
the page's CSV buttons.  Nothing here holds user
data: every value comes in through the callbacks' arguments.
"""

from __future__ import annotations

import uuid
from typing import Any, Callable, Iterable, Mapping, Sequence

from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from . import common, jobs, page_frame, state
from .page_frame import error_box

__all__ = [
    "KEEP",
    "graph_config",
    "graph",
    "table_style",
    "job_page",
    "job_status",
    "button_row",
    "result_view",
    "stoppable_job",
    "register_downloads",
]

#: What a job's compute function returns to leave the page as it is (no new result).
KEEP = object()

_BUTTON = "vi-button vi-button-secondary"


def graph_config(filename: str) -> dict:
    """``config`` of a ``dcc.Graph``: no Plotly logo, PNG export at twice the size."""
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2}}


def graph(graph_id: str, config: Mapping[str, Any]) -> dcc.Graph:
    """A result's figure, with a placeholder until the job's first result."""
    return dcc.Graph(id=graph_id, figure=common.placeholder_figure(), config=dict(config),
                     className="vi-figure")


def table_style(*, page_size: int, left: Iterable[str], wrap: bool = False) -> dict:
    """Keyword arguments of a sortable, paged ``DataTable`` whose ``left`` columns align left."""
    return dict(sort_action="native", page_size=page_size,
                **page_frame.table_style(tuple(left), wrap=wrap))


def _stores(prefix: str, start: Mapping[str, Any], job_prefixes: Sequence[str]) -> list:
    """The page's query, data, instance and download stores, and each job's two stores.

    ``start`` is the page's ``initial_state`` (its ``query`` and ``data``).  The
    instance id is drawn per call, i.e. per page view.
    """
    return [
        state.query_store(prefix, start["query"]),
        dcc.Store(id=f"{prefix}-data-params", data=start["data"]),
        dcc.Store(id=f"{prefix}-instance", data=uuid.uuid4().hex),
        *(dcc.Store(id=f"{j}-current") for j in job_prefixes),
        *(dcc.Store(id=f"{j}-stop-ack") for j in job_prefixes),
        dcc.Download(id=f"{prefix}-download"),
    ]


def job_page(prefix: str, start: Mapping[str, Any], job_prefixes: Sequence[str], *,
             title: str, lead: str, controls, content: Sequence) -> html.Div:
    """The page: its stores, title, lead, ``controls`` and ``content``.

    ``controls`` is the page's ``html.Aside``; ``content`` follows the notes
    about the link's ignored values (``start["notes"]``) in the main column.
    """
    return html.Div([
        *_stores(prefix, start, job_prefixes),
        html.H1(title, className="vi-page-title"),
        html.P(lead, className="vi-page-lead"),
        html.Div(className="vi-layout", children=[
            controls,
            html.Div(className="vi-content", children=[
                state.notes_box(start["notes"], id=f"{prefix}-link-notes"), *content]),
        ]),
    ], className="vi-page")


def job_status(job_prefix: str, *, partial: bool = True) -> list:
    """Error box, job panel and (with ``partial``) the partial-result note of a job."""
    out = [error_box(None, id=f"{job_prefix}-error"), jobs.job_panel(job_prefix)]
    if partial:
        out.append(html.Div(id=f"{job_prefix}-partial", className="vi-hidden"))
    return out


def button_row(*buttons: tuple[str, str]) -> html.Div:
    """A wrapping row of secondary buttons, one per ``(label, id)``."""
    return html.Div(style={"marginTop": "0.75rem", "display": "flex", "gap": "0.6rem",
                           "flexWrap": "wrap"},
                    children=[html.Button(label, id=i, n_clicks=0, className=_BUTTON)
                              for label, i in buttons])


def result_view(job_prefix: str, outputs: Sequence[Output], inputs: Sequence[Input]):
    """Decorator: ``render`` becomes the callback that draws job ``job_prefix``'s result.

    ``render(*values)`` gets the values of ``inputs`` and returns one value per
    output, then the partial-result note (``""`` for a full result), which goes
    to ``{job_prefix}-partial``.  When it raises ``ValueError`` (the result left
    the cache), the outputs keep what they show and the note shows the sentence.
    """
    def decorate(render: Callable[..., Sequence]) -> Callable[..., Sequence]:
        def draw(*values):
            try:
                *views, note = render(*values)
            except ValueError as exc:
                return (*[no_update] * len(outputs), str(exc), "vi-error")
            return (*views, note, "vi-notes" if note else "vi-hidden")

        callback(*outputs, Output(f"{job_prefix}-partial", "children"),
                 Output(f"{job_prefix}-partial", "className"), *inputs)(draw)
        return render

    return decorate


def stoppable_job(job_prefix: str, inputs: Sequence[Input], *, page_prefix: str, job: str,
                  disable: Sequence[str], keep_note: str | None = "The figures"):
    """Decorator: ``compute`` becomes the background job ``job_prefix`` of a page.

    The job's callback writes ``{job_prefix}-current``, the error box and the
    status line.  It calls ``compute(*values, data=..., instance=..., shown=...,
    progress=...)`` with the values of ``inputs``, the page's data parameters,
    its instance id, the current ``{job_prefix}-current`` and a
    :class:`pages._ui.jobs.Progress`.  ``compute`` returns

    * ``{"current": ..., "status": ...}``: a new current value (None keeps the
      last one, e.g. cancelled before anything finished) and a status sentence;
    * None: there is nothing to compute; the result and status are cleared;
    * :data:`KEEP`: the page is left as it is.

    An exception becomes a sentence in the error box (never a traceback); with
    ``keep_note`` and a result shown, the sentence says that ``keep_note``
    still shows the previous settings.  Cancel does not kill the job: it sets
    the flag ``job`` of this page view (:func:`pages._ui.common.register_cancel`),
    and the job returns what it finished.  ``disable``: ids disabled meanwhile.
    """
    opts = jobs.background_options(job_prefix, disable=list(disable))
    # Cancel asks the job to stop between chunks (should_stop) instead of killing it, so
    # the work finished so far comes back and is shown with a note.
    opts.pop("cancel")
    instance_id = f"{page_prefix}-instance"
    current_id = f"{job_prefix}-current"
    outputs = [Output(current_id, "data"), *(Output(f"{job_prefix}-error", p)
                                             for p in ("children", "className"))]
    states = [State(f"{page_prefix}-data-params", "data"), State(instance_id, "data"),
              State(current_id, "data")]

    def decorate(compute: Callable[..., Any]) -> Callable[..., Any]:
        def run(set_progress, *args):
            *values, data, instance, shown = args
            progress = jobs.Progress(set_progress)
            try:
                out = compute(*values, data=data, instance=instance, shown=shown,
                              progress=progress)
            except Exception as exc:  # a sentence on the page, never a traceback
                keep = bool(shown) and keep_note is not None
                return no_update, jobs.failure_message(exc, keep, keep_note or ""), "vi-error", ""
            if out is KEEP:
                return no_update, no_update, no_update, no_update
            if out is None:
                return None, "", "vi-hidden", ""
            current = out["current"] if out["current"] is not None else no_update
            return current, "", "vi-hidden", out["status"]

        callback(*outputs, jobs.status_output(job_prefix), *inputs, *states, **opts)(run)
        common.register_cancel(job_prefix, instance_id, job)
        return compute

    return decorate


def register_downloads(prefix: str, buttons: Mapping[str, tuple[str, str]],
                       csv_text: Callable[[str, Any], str],
                       csv_filename: Callable[[str, Any], str]) -> None:
    """CSV downloads into ``{prefix}-download``.

    ``buttons`` maps a button id to ``(what, store id)``: a click sends
    ``csv_text(what, current)`` as ``csv_filename(what, current)``, with
    ``current`` the store's data.  Nothing happens without a result, or when
    ``csv_text`` refuses (``ValueError``, e.g. the result expired).
    """
    ids = list(buttons)
    stores = list(dict.fromkeys(store for _, store in buttons.values()))

    def download(*args):
        currents = dict(zip(stores, args[len(ids):]))
        what, store = buttons.get(ctx.triggered_id, (None, None))
        source = currents.get(store)
        if what is None or not source:
            return no_update
        try:
            return dict(content=csv_text(what, source), filename=csv_filename(what, source),
                        type="text/csv")
        except ValueError:
            return no_update

    callback(Output(f"{prefix}-download", "data"), *(Input(i, "n_clicks") for i in ids),
             *(State(s, "data") for s in stores), prevent_initial_call=True)(download)
