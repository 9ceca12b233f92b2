"""Importances page: MDI per variable, exact or sampled, with the Theorem 2 check."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import jobs, limits, state
from pages._ui import importances_logic as logic
from pages._ui.page_frame import page_frame, table_style

dash.register_page(__name__, path="/importances", name="Importances", order=1,
                   title="varimp \u2014 Importances")

PREFIX = logic.PREFIX
state.register_url_sync(PREFIX)
_CONTROLS = ["imp-method", "imp-k", "imp-depth", "imp-trees", "imp-bootstrap",
             "imp-semantics", "imp-tree-seed"]


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v, p = start["values"], start["p"]
    classes = logic.field_classes(v["method"])
    most_trees = limits.max_trees(logic.MAX_TREES_UI)
    k_help = f"Variables drawn at each node, 1 to {p}." if p else "Variables drawn at each node."
    settings = html.Fieldset(id="imp-fieldset", className="vi-fieldset", children=[
        ui.card("Method", dcc.RadioItems(id="imp-method", options=logic.method_options(p),
                                         value=v["method"], className="vi-radio",
                                         labelStyle={"display": "flex"})),
        ui.card(
            "Trees",
            ui.field("K", ui.number_input("imp-k", v["K"], min=1, max=p), help=k_help),
            ui.field("Max depth", ui.number_input("imp-depth", v["depth"], min=1,
                                                  placeholder="full"),
                     help="Blank grows the trees fully."),
            ui.field("K semantics", dcc.RadioItems(
                id="imp-semantics", options=logic.SEMANTICS_OPTIONS, value=v["semantics"],
                className="vi-radio", labelStyle={"display": "flex"}),
                id="imp-semantics-field",
                className=classes["semantics"]),
        ),
        ui.card(
            "Sampling",
            ui.field("Number of trees", ui.number_input("imp-trees", v["trees"], min=1,
                                                        max=most_trees),
                     help=limits.at_most_help(most_trees)),
            ui.field("Bootstrap", dcc.Checklist(
                id="imp-bootstrap", options=[{"label": "Draw a bootstrap sample per tree",
                                              "value": "on"}],
                value=["on"] if v["bootstrap"] else [], className="vi-check")),
            ui.seed_field("imp-tree", v["tree_seed"],
                          help="Seeds the trees; the same seed grows the same forest."),
            id="imp-sampled", className=classes["sampled"],
        ),
    ])
    return page_frame(
        PREFIX, title="Importances", notes=start["notes"],
        lead=[
            "Mean decrease of impurity (MDI) of each variable, unnormalised and in bits: the "
            "sum over the nodes that split on it of p(t)\u00b7\u0394i, averaged over trees. "
            "scikit-learn's own ", html.Code("feature_importances_"), " is normalised (each "
            "tree's importances are divided by their sum, so they add up to 1); the Share "
            "column of the table gives that view. In bits, the importances of fully grown "
            "totally randomized trees add up to I(X;Y) (Theorem 2)."],
        stores=[state.query_store(PREFIX, start["query"]),
                dcc.Store(id="imp-data-params", data=start["data"]),
                dcc.Store(id="imp-current"), dcc.Store(id="imp-miss"),
                dcc.Download(id="imp-download")],
        controls=settings,
        content=[
            ui.card("Importances",
                    dcc.Graph(id="imp-graph", config={"displaylogo": False},
                              className="vi-figure", style={"height": "440px"}),
                    html.P(id="imp-note", className="vi-help")),
            ui.card("Theorem 2",
                    html.P(id="imp-theorem2", style={"margin": "0 0 0.5rem", "fontWeight": 600}),
                    dcc.Graph(id="imp-theorem2-graph", config={"displayModeBar": False},
                              style={"height": "170px"})),
            ui.card("Table",
                    dash_table.DataTable(
                        id="imp-table", columns=[], data=[], sort_action="native",
                        page_size=20, **table_style(["variable"])),
                    html.P("The CSV has the same rows, with the importance split by "
                           "degree k (by-degree columns).", className="vi-help"),
                    html.Button("Download CSV", id="imp-download-button", n_clicks=0,
                                className="vi-button vi-button-secondary",
                                style={"marginTop": "0.75rem"})),
        ])


@callback(Output("imp-sampled", "className"), Output("imp-semantics-field", "className"),
          Output("imp-bootstrap", "value"), Input("imp-method", "value"),
          State("imp-bootstrap", "value"), prevent_initial_call=True)
def show_method_fields(method, bootstrap):
    classes = logic.field_classes(method)
    default = ["on"] if logic.DEFAULT_BOOTSTRAP.get(method) else []
    return classes["sampled"], classes["semantics"], \
        no_update if default == (bootstrap or []) else default


@callback(
    Output("imp-query", "data"),
    *(Input(i, "value") for i in _CONTROLS),
    State("imp-data-params", "data"),
    prevent_initial_call=True,
)
def write_query(method, k, depth, trees, bootstrap, semantics, seed, data):
    try:
        settings = logic.settings_from_controls(method=method, K=k, depth=depth, trees=trees,
                                                bootstrap=bootstrap, semantics=semantics,
                                                tree_seed=seed)
    except ValueError:
        return no_update
    return logic.page_query(data, settings)


_VIEW = [("imp-graph", "figure"), ("imp-theorem2", "children"),
         ("imp-theorem2-graph", "figure"), ("imp-table", "columns"), ("imp-table", "data"),
         ("imp-note", "children"), ("imp-current", "data"), ("imp-error", "children"),
         ("imp-error", "className")]


def _settings(method, k, depth, trees, bootstrap, semantics, seed, data):
    return logic.settings_from_controls(
        method=method, K=k, depth=depth, trees=trees, bootstrap=bootstrap, semantics=semantics,
        tree_seed=seed, p=logic.data_feature_count(data))


def _view(data, settings, progress=None, peek=False):
    out = logic.cached_render(data, settings, progress=progress, peek=peek)
    return (out["figure"], out["theorem2"], out["theorem2_figure"], out["columns"], out["rows"],
            out["note"], {"data": data, "settings": settings}, "", "vi-hidden")


def _failed(exc, shown):
    message = jobs.failure_message(exc, bool(shown), "The figure")  # never a traceback
    return (*[no_update] * 7, message, "vi-error")


# A control change first asks this plain callback, which answers from the cache within
# the request (no job process, no polling); only a miss starts the background job below.
@callback(
    *(Output(i, p, allow_duplicate=True) for i, p in _VIEW),
    Output(f"{PREFIX}-job-status", "children", allow_duplicate=True),
    Output("imp-miss", "data"),
    *(Input(i, "value") for i in _CONTROLS),
    State("imp-data-params", "data"),
    State("imp-current", "data"),
    prevent_initial_call="initial_duplicate",
)
def answer_from_cache(method, k, depth, trees, bootstrap, semantics, seed, data, shown):
    try:
        settings = _settings(method, k, depth, trees, bootstrap, semantics, seed, data)
        return (*_view(data, settings, peek=True), "Done (cached).", no_update)
    except logic.CacheMiss:
        return (*[no_update] * len(_VIEW), no_update, {"data": data, "settings": settings})
    except Exception as exc:
        return (*_failed(exc, shown), "", no_update)


@callback(*(Output(i, p) for i, p in _VIEW), jobs.status_output(PREFIX),
          Input("imp-miss", "data"), State("imp-current", "data"), prevent_initial_call=True,
          **jobs.background_options(PREFIX, disable=["imp-fieldset", "imp-download-button"]))
def compute(set_progress, miss, shown):
    progress = jobs.Progress(set_progress)
    try:
        out = _view(miss["data"], miss["settings"], progress=progress)
    except Exception as exc:
        return (*_failed(exc, shown), "")
    return (*out, jobs.done_message(progress))


@callback(
    Output("imp-download", "data"),
    Input("imp-download-button", "n_clicks"),
    State("imp-current", "data"),
    prevent_initial_call=True,
)
def download(n_clicks, current):
    if not n_clicks or not current:
        return no_update
    view = logic.compute_view(current["data"], current["settings"])  # cached
    return dict(content=logic.csv_text(view["result"], view["exact"]),
                filename=logic.csv_filename(current["data"], current["settings"]),
                type="text/csv")
