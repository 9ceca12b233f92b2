"""Page pieces several pages share: the frame of a page, figure and table styles, downloads.

* :func:`page_frame`: title, lead, the stores, then the controls beside the
  content, which starts with the link notes, the error box and the job panel
  (ids ``{prefix}-link-notes``, ``{prefix}-error``, ``{prefix}-job``...);
* :func:`controls_panel`: the controls' column, folded under a "Settings" switch on a
  phone, always shown on a wider screen;
* :func:`figure_config`: the options of a page's ``dcc.Graph`` (its tables:
  :mod:`pages._framework.grid`);
* :func:`register_csv_downloads`: the buttons that fill a page's one
  ``dcc.Download`` with a CSV of the shown result.

Nothing here holds user data: every function builds components or answers
from its arguments.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from dash import Input, Output, State, callback, ctx, dcc, html, no_update

from pages._framework import datasource, state
from pages._server import limits
from pages._framework.datachoice import DataChoice
from pages._framework.params import sentence


def page_frame(prefix: str, *, title: str, lead, controls, content: Sequence, status: Sequence,
               stores: Sequence = (), notes: Sequence[str] = (), data: DataChoice | None = None,
               data_store: Mapping | None = None, data_label: str | None = None,
               query: str | None = None, download: bool = False) -> html.Div:
    """A page: its stores, title, the data it shows, lead, then ``controls`` beside the content.

    ``data`` is the page's data choice: the header names it (``data_label``
    overrides the name, for a page that builds its own data) with a link to the
    Data page, and the store ``{prefix}-data`` holds ``data_store`` (default
    :meth:`DataChoice.to_store`).  ``query`` adds the URL's store
    ``{prefix}-query``, ``download`` the page's ``dcc.Download`` ``{prefix}-download``.
    The content column starts with the notes about the link (``{prefix}-link-notes``),
    then ``status`` (a :class:`pages._framework.view.JobView`'s error box and job panel), then
    ``content``.
    """
    label = data.label() if data_label is None and data is not None else data_label
    own = [*([state.query_store(prefix, query)] if query is not None else []),
           *([dcc.Store(id=f"{prefix}-data", data=data_store or data.to_store())]
             if data is not None else []),
           *([dcc.Download(id=f"{prefix}-download")] if download else [])]
    return html.Div([
        *own, *stores,
        html.H1(title, className="vi-page-title"),
        *([html.P(["Data: ", html.Strong(label, id=f"{prefix}-dataset"), " \u00b7 ",
                   dcc.Link("change", href="/data")], className="vi-dataset")]
          if label else []),
        html.P(lead, className="vi-page-lead"),
        html.Div(className="vi-layout", children=[
            controls_panel(controls),
            html.Div(className="vi-content", children=[
                state.notes_box(notes, id=f"{prefix}-link-notes"),
                *status,
                *content,
            ]),
        ]),
    ], className="vi-page")


def controls_panel(controls) -> html.Aside:
    """The controls' column: ``controls`` under a "Settings" switch.

    On a phone (at most 600 px wide) the controls are folded until the switch (a checkbox
    in its label, dcc.Checklist) is ticked, so the page's first figure is not 1,200 to 2,000 px of
    controls down (issue 26); on a wider screen ``assets/varimp.css`` hides the switch and
    always shows the controls, so the column is as it was.  Only CSS decides: no callback,
    the same on every page.  Not a ``<details>``: a closed one's content is hidden to
    WebDriver at every width (the wide screen's controls would read as not shown).
    """
    return html.Aside(html.Div([
        dcc.Checklist(options=[{"label": "Settings", "value": "open"}], value=[],
                      className="vi-settings-summary", inputClassName="vi-settings-toggle"),
        html.Div(controls, className="vi-settings-body"),
    ], className="vi-settings"), className="vi-controls")


def scroll_style(min_width: int | None) -> dict:
    """The style of a figure's ``vi-figure-scroll`` box: the width under which a phone
    scrolls the figure sideways (Decomposition's heatmap pair, Masking's change heatmap).

    ``--vi-min-width`` is read by ``assets/varimp.css`` only at most 600 px wide: there the
    figure keeps that width inside its box instead of shrinking its cells (and their
    values) to a few pixels; wider, the figure fills its card.  On the box, not the graph:
    dcc.Graph drops a custom property from its ``style``.
    """
    return {} if not min_width else {"--vi-min-width": f"{min_width}px"}


def figure_config(name: str, image: str = "png") -> dict:
    """``dcc.Graph`` config: no logo, share or selection buttons; ``image`` download.

    The download is named ``varimp-{name}`` until the figure is drawn; then
    ``assets/varimp.js`` names it after the page, the figure and the URL's settings.
    """
    return {"displaylogo": False, "showSendToCloud": False,
            "modeBarButtonsToRemove": ["sendChartToCloud", "select2d", "lasso2d", "zoomIn2d",
                                       "zoomOut2d", "autoScale2d"],
            "toImageButtonOptions": {"format": image, "filename": f"varimp-{name}"}}


def register_csv_downloads(prefix: str, makers: Mapping[str, Callable[[dict, Any], tuple]],
                           view: str) -> None:
    """Buttons filling ``{prefix}-download`` with a CSV of the result in ``{prefix}-current``.

    ``makers`` maps a button id to ``make(store, value) -> (text, filename)``,
    ``value`` being the ``value`` of the control ``view``.  When there is nothing
    to send (no result shown yet, or ``make`` refuses with a ValueError), the
    sentence goes to ``{prefix}-download-note`` (:func:`download_note`).
    """
    @callback(Output(f"{prefix}-download", "data"), Output(f"{prefix}-download-note", "children"),
              *(Input(button, "n_clicks") for button in makers),
              State(f"{prefix}-current", "data"), State(view, "value"),
              prevent_initial_call=True)
    def download(*args):
        *clicks, store, value = args
        make = makers.get(ctx.triggered_id)
        if not any(clicks) or make is None:
            return no_update, no_update
        return csv_download(make, store, value)


def csv_download(make: Callable[[dict, Any], tuple], store: Any, value: Any) -> tuple:
    """``(download data, note)`` for one of :func:`register_csv_downloads`' buttons."""
    if not store:
        return no_update, "Nothing to download yet: wait until the figures are drawn."
    try:
        text, name = make(store, value)
    except ValueError as exc:
        return no_update, sentence(str(exc))
    return dict(content=text, filename=name, type="text/csv"), ""


def download_button(prefix: str, text: str = "Download CSV", name: str = "button"
                    ) -> html.Button:
    """The button ``{prefix}-download-{name}`` of a CSV download."""
    return html.Button(text, id=f"{prefix}-download-{name}", n_clicks=0,
                       className="vi-button vi-button-secondary", style={"marginTop": "0.75rem"})


def download_note(prefix: str) -> html.P:
    """Where :func:`register_csv_downloads` says why a click sent nothing."""
    return html.P(id=f"{prefix}-download-note", className="vi-field-error", role="alert")


def data_label(store: Any) -> str:
    """What the header names for a page's data store (:meth:`DataChoice.label`)."""
    try:
        return DataChoice.from_store(store).label()
    except ValueError:
        return no_update


def register_data_label(prefix: str, store: str | None = None) -> None:
    """Keep the header (``{prefix}-dataset``) naming the data of ``store``
    (default ``{prefix}-data``)."""
    callback(Output(f"{prefix}-dataset", "children"),
             Input(store or f"{prefix}-data", "data"), prevent_initial_call=True)(data_label)


def nav_limits(vi_data: Any, pages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``{path: reason}`` of the pages that cannot run on the session's data (issue #26):
    the navigation shows them dimmed, with the reason as their title.

    A page declares ``exact_inputs`` in ``dash.register_page``: ``"any"`` when every view
    is exact (Decomposition), ``"upload"`` when only an uploaded table can pass the limit
    (Masking's own problems all fit).  The limit is the server's
    (:func:`pages._server.limits.max_exact_features`); the number of inputs is the session
    store's, or a problem's definition: nothing is loaded here.
    """
    try:
        data = DataChoice.from_store(vi_data)
        p = datasource.data_feature_count(data.as_dict, vi_data)
    except (ValueError, TypeError, KeyError):
        return {}
    most = limits.max_exact_features()
    if p is None or p <= most:
        return {}
    out = {}
    for page in pages:
        needs = page.get("exact_inputs")
        if needs == "any" or (needs == "upload" and data.is_upload):
            out[page["relative_path"]] = (f"{page['name']}: its views are exact, for at most "
                                          f"{most} inputs; this data has {p:,}.")
    return out
