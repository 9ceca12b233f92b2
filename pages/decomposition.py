"""Decomposition page: importances along the degree k (Figure 2), terms of a clicked cell."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import dataviews, jobs, state
from pages._ui import decomposition_logic as logic
from pages._ui.datasource import data_feature_count
from pages._ui.page_frame import page_frame, table_style

dash.register_page(__name__, path="/decomposition", name="Decomposition", order=2,
                   title="varimp \u2014 Decomposition")

PREFIX = logic.PREFIX
TERMS = f"{PREFIX}-terms"  # second job panel: the terms of the clicked cell
state.register_url_sync(PREFIX)
_CONTROLS = ["decomp-k", "decomp-depth", "decomp-semantics"]
_TABLE_STYLE = table_style(["variable", "B"])


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v, p = start["values"], start["p"]
    settings = html.Fieldset(id="decomp-fieldset", className="vi-fieldset", children=[
        ui.card(
            "Trees",
            ui.field("K (right heatmap)", ui.number_input("decomp-k", v["K"], min=1, max=p),
                     help="Variables drawn at each node"
                          + (f", 1 to {p}; K = {p} gives non-random trees." if p else ".")),
            ui.field("Max depth q", ui.number_input("decomp-depth", v["depth"], min=1,
                                                    placeholder="full"),
                     help="Blank grows the trees fully. A depth q keeps the degrees k < q "
                          "(Proposition 6); the others are greyed."),
            ui.field("K semantics", dcc.RadioItems(
                id="decomp-semantics", options=logic.SEMANTICS_OPTIONS, value=v["semantics"],
                className="vi-radio", labelStyle={"display": "flex"})),
        ),
    ])
    return page_frame(
        PREFIX, title="Decomposition", notes=start["notes"],
        lead="Each importance split by the degree k of interaction: the size of the "
             "conditioning set B (Figure 2 of Louppe et al. 2013). Left: totally randomized "
             "trees (K = 1), where every term of Eqn 3 counts with its weight. Right: the "
             "chosen K, where masking moves importance between cells. Both use one colour "
             "scale, in bits. Click a cell to list its conditioning sets.",
        stores=[state.query_store(PREFIX, start["query"]),
                dcc.Store(id="decomp-data-params", data=start["data"]),
                dcc.Store(id="decomp-cell", data=start["cell"])],
        controls=settings,
        content=[
            ui.card("By degree k",
                    dcc.Graph(id="decomp-graph", config={"displaylogo": False},
                              className="vi-figure",
                              style={"height": f"{logic.figure_height(p)}px"}),
                    html.P(id="decomp-summary", className="vi-help")),
            ui.card("Totals",
                    dash_table.DataTable(id="decomp-totals", columns=[], data=[],
                                         **_TABLE_STYLE)),
            ui.card("Terms of the selected cell",
                    jobs.job_panel(TERMS),
                    dataviews.error_box(None, id="decomp-terms-error"),
                    html.P("Click a cell of a heatmap to list its conditioning sets B.",
                           id="decomp-terms-note", className="vi-help"),
                    html.Div(id="decomp-terms-figure"),
                    dash_table.DataTable(id="decomp-terms-table", columns=[], data=[],
                                         sort_action="native", page_size=15,
                                         **_TABLE_STYLE)),
        ])


@callback(
    Output("decomp-query", "data"),
    *(Input(i, "value") for i in _CONTROLS),
    Input("decomp-cell", "data"),
    State("decomp-data-params", "data"),
    prevent_initial_call=True,
)
def write_query(k, depth, semantics, cell, data):
    try:
        settings = logic.settings_from_controls(K=k, depth=depth, semantics=semantics)
    except ValueError:
        return no_update
    return logic.page_query(data, settings, cell)


@callback(Output("decomp-cell", "data"), Input("decomp-graph", "clickData"),
          State("decomp-graph", "figure"), prevent_initial_call=True)
def select_cell(click, figure):
    cell = logic.cell_from_click(click, figure)
    return cell if cell is not None else no_update


@callback(
    Output("decomp-graph", "figure"),
    Output("decomp-graph", "style"),
    Output("decomp-totals", "columns"),
    Output("decomp-totals", "data"),
    Output("decomp-summary", "children"),
    Output("decomp-error", "children"),
    Output("decomp-error", "className"),
    jobs.status_output(PREFIX),
    *(Input(i, "value") for i in _CONTROLS),
    State("decomp-data-params", "data"),
    State("decomp-totals", "data"),
    **jobs.background_options(PREFIX, disable=["decomp-fieldset"]),
)
def compute(set_progress, k, depth, semantics, data, shown):
    progress = jobs.Progress(set_progress)
    try:
        settings = logic.settings_from_controls(K=k, depth=depth, semantics=semantics,
                                                p=data_feature_count(data))
        out = logic.render(logic.compute_view(data, settings, progress=progress), settings)
    except Exception as exc:  # a sentence on the page, never a traceback
        message = jobs.failure_message(exc, bool(shown), "The heatmaps")
        return (*[no_update] * 5, message, "vi-error", "")
    return (out["figure"], {"height": f"{out['height']}px"}, out["columns"], out["rows"],
            out["summary"], "", "vi-hidden", jobs.done_message(progress))


@callback(
    Output("decomp-terms-figure", "children"),
    Output("decomp-terms-table", "columns"),
    Output("decomp-terms-table", "data"),
    Output("decomp-terms-note", "children"),
    Output("decomp-terms-error", "children"),
    Output("decomp-terms-error", "className"),
    jobs.status_output(TERMS),
    Input("decomp-cell", "data"),
    *(Input(i, "value") for i in _CONTROLS),
    State("decomp-data-params", "data"),
    **jobs.background_options(TERMS),
)
def show_terms(set_progress, cell, k, depth, semantics, data):
    if not cell:
        return (*[no_update] * 4, "", "vi-hidden", "")
    progress = jobs.Progress(set_progress)
    try:
        settings = logic.settings_from_controls(K=k, depth=depth, semantics=semantics,
                                                p=data_feature_count(data))
        out = logic.render_terms(logic.terms_view(data, settings, cell, progress=progress))
    except Exception as exc:  # a sentence on the page, never a traceback
        return (*[no_update] * 4, jobs.error_message(exc), "vi-error", "")
    graph = dcc.Graph(id="decomp-terms-graph", figure=out["figure"], className="vi-figure",
                      config={"displaylogo": False})
    return graph, out["columns"], out["rows"], out["note"], "", "vi-hidden", ""
