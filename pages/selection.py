"""Selection page: relevance classes, permutation p-values, RS against SRS (Geurts 2016)."""

from __future__ import annotations

import uuid

import dash
from dash import Input, Output, State, callback, ctx, dash_table, dcc, html, no_update

from pages._ui import common
from pages._ui import controls as ui
from pages._ui import jobs, state
from pages._ui import selection_logic as logic
from pages._ui.dataviews import error_box

dash.register_page(__name__, path="/selection", name="Selection", order=8,
                   title="varimp \u2014 Selection")

PREFIX = logic.PREFIX
NULL = logic.NULL_PREFIX
RS = logic.RS_PREFIX
state.register_url_sync(PREFIX)

_NULL_IDS = [f"{NULL}-{n}" for n in ("problem", "tol", "R", "trees", "method", "seed", "N")]
_RS_IDS = [f"{RS}-{n}" for n in ("data", "q", "alpha", "K", "T", "L", "beta", "seeds")]
_NULL_INPUTS = [Input(i, "value") for i in _NULL_IDS]
_RS_INPUTS = [Input(i, "value") for i in _RS_IDS]
_GRAPH_CONFIG = {"displaylogo": False,
                 "toImageButtonOptions": {"format": "png", "filename": "varimp-selection",
                                          "scale": 2}}
_TABLE_STYLE = dict(
    sort_action="native", page_size=25, style_as_list_view=True,
    style_table={"overflowX": "auto"},
    style_cell={"fontFamily": "var(--vi-font)", "fontSize": "0.88rem",
                "padding": "0.3rem 0.6rem"},
    style_header={"fontWeight": 650, "backgroundColor": "#f0f3f8"},
    style_cell_conditional=[{"if": {"column_id": c}, "textAlign": "left"}
                            for c in ("variable", "relevance")],
)
_RS_LABELS = {"480": "Madelon, 480 irrelevant (p = 500)",
              "1480": "Madelon, 1,480 irrelevant (p = 1,500)",
              "2980": "Madelon, 2,980 irrelevant (p = 3,000)",
              "5480": "Madelon, 5,480 irrelevant (p = 5,500)", "data": "The data above"}


def _job_options(prefix: str, disable: list[str]) -> dict:
    opts = jobs.background_options(prefix, disable=disable)
    # Cancel sets a stop flag the core checks between permutations or trees, so the work
    # finished so far comes back and is shown with a note (instead of killing the job).
    opts.pop("cancel")
    return opts


def _null_controls(v: dict, start: dict) -> html.Section:
    return ui.card(
        "Data, relevance and p-values",
        html.Fieldset(id=f"{NULL}-fieldset", className="vi-fieldset", children=[
            ui.field("Data", dcc.Dropdown(
                id=f"{NULL}-problem", options=logic.problem_options(start["data"]),
                value=v["problem"], clearable=False, searchable=True,
                className="vi-dropdown"), help="The Data page sets the session's data."),
            ui.field("Threshold tol (bits)", ui.number_input(
                f"{NULL}-tol", v["tol"], min=0, max=1, step="any", placeholder="default"),
                help="Plug-in only: a conditional information at or below tol counts as 0. "
                     "Blank: the core's default."),
            html.Div(className="vi-row", children=[
                ui.field("Permutations R", ui.number_input(
                    f"{NULL}-R", v["R"], min=1, max=logic.max_permutations())),
                ui.field("Trees", ui.number_input(f"{NULL}-trees", v["trees"], min=1,
                                                  max=logic.max_null_trees())),
            ]),
            ui.field("Forest", dcc.Dropdown(
                id=f"{NULL}-method", options=logic.METHOD_OPTIONS, value=v["method"],
                clearable=False, searchable=False, className="vi-dropdown")),
            html.Div(className="vi-row", children=[
                ui.field("Seed", ui.number_input(f"{NULL}-seed", v["null_seed"], min=0,
                                                 max=2**32 - 1)),
                ui.field("Sample N", ui.number_input(f"{NULL}-N", v["N"], min=2)),
            ]),
            html.P("N: rows drawn from an exact distribution for the permutation null "
                   "(a sample is used as it is).", className="vi-help"),
        ]),
    )


def _rs_controls(v: dict) -> html.Section:
    return ui.card(
        "RS / SRS",
        html.Fieldset(id=f"{RS}-fieldset", className="vi-fieldset", children=[
            ui.field("Problem", dcc.Dropdown(
                id=f"{RS}-data", value=v["rs"], clearable=False, searchable=False,
                className="vi-dropdown",
                options=[{"label": _RS_LABELS[c], "value": c} for c in logic.RS_CHOICES])),
            html.Div(className="vi-row", children=[
                ui.field("q", ui.number_input(f"{RS}-q", v["q"], min=1)),
                ui.field("\u03b1", ui.number_input(f"{RS}-alpha", v["alpha"], min=0, max=1,
                                                   step="any")),
                ui.field("K", ui.number_input(f"{RS}-K", v["K"], min=1, placeholder="q+1")),
            ]),
            html.Div(className="vi-row", children=[
                ui.field("T", ui.number_input(f"{RS}-T", v["T"], min=1,
                                              max=logic.max_rs_trees())),
                ui.field("L", ui.number_input(f"{RS}-L", v["L"], min=1)),
                ui.field("\u03b2", ui.number_input(f"{RS}-beta", v["beta"], min=0, max=1,
                                                   step="any")),
            ]),
            ui.field("Seeds", ui.number_input(f"{RS}-seeds", v["seeds"], min=1,
                                              max=logic.max_seeds())),
            html.P("q: features per tree; \u03b1: share of the subspace taken from the "
                   "features found so far (SRS); K: candidates per node (blank: all); T: trees; "
                   "a feature is kept when drawn more than L times and better than the random "
                   "probe in at least a fraction \u03b2 of its trees. Each seed draws new data "
                   "(or a new split) and runs RS and SRS on it.", className="vi-help"),
        ]),
        html.P(logic.caps_text(), id=f"{PREFIX}-caps", className="vi-help",
               style={"marginTop": "0.4rem"}),
    )


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v = start["values"]
    return html.Div([
        state.query_store(PREFIX, start["query"]),
        dcc.Store(id=f"{PREFIX}-data-params", data=start["data"]),
        dcc.Store(id=f"{PREFIX}-instance", data=uuid.uuid4().hex),
        dcc.Store(id=f"{NULL}-current"),
        dcc.Store(id=f"{RS}-current"),
        dcc.Store(id=f"{NULL}-stop-ack"),
        dcc.Store(id=f"{RS}-stop-ack"),
        dcc.Download(id=f"{PREFIX}-download"),
        html.H1("Selection", className="vi-page-title"),
        html.P("Which variables matter? Kohavi and John's relevance classes answer it for a "
               "distribution: strongly relevant variables carry information no other set "
               "does, weakly relevant ones only some, irrelevant ones none. From data, a "
               "permutation null tells which importances are above chance, and when no tree "
               "may see more than q of the p features, Random Subspace (RS) and Sequential "
               "Random Subspace (SRS) trees look for all relevant ones (Geurts 2016).",
               className="vi-page-lead"),
        html.Div(className="vi-layout", children=[
            html.Aside(className="vi-controls",
                       children=[_null_controls(v, start), _rs_controls(v)]),
            html.Div(className="vi-content", children=[
                state.notes_box(start["notes"], id=f"{PREFIX}-link-notes"),
                error_box(None, id=f"{NULL}-error"),
                jobs.job_panel(NULL),
                html.Div(id=f"{NULL}-partial", className="vi-hidden"),
                ui.card(
                    "1. Relevance classes, degrees and the Markov boundary",
                    dcc.Graph(id=f"{PREFIX}-relevance-graph",
                              figure=logic.placeholder_figure(), config=_GRAPH_CONFIG,
                              className="vi-figure"),
                    html.Div(id=f"{PREFIX}-relevance-text", className="vi-description"),
                    dash_table.DataTable(
                        id=f"{PREFIX}-relevance-table", data=[], **_TABLE_STYLE,
                        columns=[{"name": "Variable", "id": "variable"},
                                 {"name": "Class", "id": "relevance"},
                                 {"name": "Degree d", "id": "degree"},
                                 {"name": "In the Markov boundary", "id": "in_markov_boundary"}]),
                ),
                ui.card(
                    "2. Permutation-null p-values",
                    dcc.Graph(id=f"{PREFIX}-pvalue-graph", figure=logic.placeholder_figure(),
                              config=_GRAPH_CONFIG, className="vi-figure"),
                    html.Div(id=f"{PREFIX}-pvalue-text", className="vi-description"),
                    html.Button("Download p-values and classes (CSV)",
                                id=f"{PREFIX}-download-pvalues", n_clicks=0,
                                className="vi-button vi-button-secondary",
                                style={"marginTop": "0.75rem"}),
                ),
                ui.card(
                    "3. Random Subspace against Sequential Random Subspace",
                    error_box(None, id=f"{RS}-error"),
                    jobs.job_panel(RS),
                    html.Div(id=f"{RS}-partial", className="vi-hidden"),
                    html.P(logic.HONEST_NOTE, className="vi-notes", id=f"{RS}-honest"),
                    dcc.Graph(id=f"{RS}-graph", figure=logic.placeholder_figure(),
                              config=_GRAPH_CONFIG, className="vi-figure"),
                    html.Div(id=f"{RS}-text", className="vi-description"),
                    dcc.RadioItems(id=f"{RS}-show", value=v["show"], inline=True,
                                   className="vi-radio",
                                   options=[{"label": "Selected set of SRS", "value": "srs"},
                                            {"label": "Selected set of RS", "value": "rs"}]),
                    dcc.Graph(id=f"{RS}-selected-graph", figure=logic.placeholder_figure(),
                              config=_GRAPH_CONFIG, className="vi-figure"),
                    html.Div(id=f"{RS}-selected-text", className="vi-description"),
                    html.Div(style={"marginTop": "0.75rem", "display": "flex",
                                    "gap": "0.6rem", "flexWrap": "wrap"}, children=[
                        html.Button("Download curves (CSV)", id=f"{PREFIX}-download-curves",
                                    n_clicks=0, className="vi-button vi-button-secondary"),
                        html.Button("Download selections (CSV)",
                                    id=f"{PREFIX}-download-selected", n_clicks=0,
                                    className="vi-button vi-button-secondary"),
                    ]),
                ),
            ]),
        ]),
    ], className="vi-page")


def _null_controls_dict(problem, tol, R, trees, method, seed, N, data):
    return dict(problem=problem, data=data, tol=tol, R=R, trees=trees, method=method,
                seed=seed, N=N)


def _rs_controls_dict(choice, q, alpha, K, T, L, beta, seeds):
    return dict(choice=choice, q=q, alpha=alpha, K=K, T=T, L=L, beta=beta, seeds=seeds)


@callback(
    Output(f"{PREFIX}-query", "data"),
    *_NULL_INPUTS,
    *_RS_INPUTS,
    Input(f"{RS}-show", "value"),
    State(f"{PREFIX}-data-params", "data"),
    prevent_initial_call=True,
)
def sync_url(problem, tol, R, trees, method, seed, N, choice, q, alpha, K, T, L, beta, seeds,
             show, data):
    query = logic.query_from_controls(
        _null_controls_dict(problem, tol, R, trees, method, seed, N, data),
        _rs_controls_dict(choice, q, alpha, K, T, L, beta, seeds), show)
    return no_update if query is None else query


@callback(
    Output(f"{NULL}-current", "data"),
    Output(f"{NULL}-error", "children"),
    Output(f"{NULL}-error", "className"),
    jobs.status_output(NULL),
    *_NULL_INPUTS,
    State(f"{PREFIX}-data-params", "data"),
    State(f"{PREFIX}-instance", "data"),
    State(f"{NULL}-current", "data"),
    **_job_options(NULL, disable=[f"{NULL}-fieldset", f"{NULL}-problem", f"{NULL}-method",
                                  f"{PREFIX}-download-pvalues"]),
)
def run_null(set_progress, problem, tol, R, trees, method, seed, N, data, instance, shown):
    progress = jobs.Progress(set_progress)
    try:
        settings = logic.null_settings(
            **_null_controls_dict(problem, tol, R, trees, method, seed, N, data))
        out = logic.run_null(settings, instance=instance, progress=progress)
    except Exception as exc:  # a sentence on the page, never a traceback
        message = jobs.failure_message(exc, bool(shown), "The figures")
        return no_update, message, "vi-error", ""
    return out["current"], "", "vi-hidden", out["status"]


common.register_cancel(NULL, f"{PREFIX}-instance", "sel-null")  # Cancel keeps what finished


@callback(
    Output(f"{PREFIX}-relevance-graph", "figure"),
    Output(f"{PREFIX}-relevance-text", "children"),
    Output(f"{PREFIX}-relevance-table", "data"),
    Output(f"{PREFIX}-pvalue-graph", "figure"),
    Output(f"{PREFIX}-pvalue-text", "children"),
    Output(f"{NULL}-partial", "children"),
    Output(f"{NULL}-partial", "className"),
    Input(f"{NULL}-current", "data"),
)
def draw_null(current):
    try:
        out = logic.render_null(current)
    except ValueError as exc:
        return (*[no_update] * 5, str(exc), "vi-error")
    note = out["partial_note"]
    return (out["relevance_figure"], [html.P(t) for t in out["relevance_sentences"]],
            out["relevance_rows"], out["pvalue_figure"],
            [html.P(t) for t in out["null_sentences"]], note,
            "vi-notes" if note else "vi-hidden")


@callback(
    Output(f"{RS}-current", "data"),
    Output(f"{RS}-error", "children"),
    Output(f"{RS}-error", "className"),
    jobs.status_output(RS),
    *_RS_INPUTS,
    Input(f"{NULL}-problem", "value"),
    State(f"{PREFIX}-data-params", "data"),
    State(f"{PREFIX}-instance", "data"),
    State(f"{RS}-current", "data"),
    **_job_options(RS, disable=[f"{RS}-fieldset", f"{RS}-data", f"{PREFIX}-download-curves",
                                f"{PREFIX}-download-selected"]),
)
def run_rs(set_progress, choice, q, alpha, K, T, L, beta, seeds, problem, data, instance,
           shown):
    if ctx.triggered_id == f"{NULL}-problem" and choice != "data" and shown:
        return no_update, no_update, no_update, no_update   # Madelon does not follow the data
    progress = jobs.Progress(set_progress)
    try:
        params = logic.data_for_choice(problem, data)
        settings = logic.rs_settings(data=params,
                                     **_rs_controls_dict(choice, q, alpha, K, T, L, beta, seeds))
        out = logic.run_rs(settings, instance=instance, progress=progress)
    except Exception as exc:  # a sentence on the page, never a traceback
        message = jobs.failure_message(exc, bool(shown), "The figures")
        return no_update, message, "vi-error", ""
    current = out["current"] if out["current"] is not None else no_update
    return current, "", "vi-hidden", out["status"]


common.register_cancel(RS, f"{PREFIX}-instance", "sel-rs")  # Cancel keeps what finished


@callback(
    Output(f"{RS}-graph", "figure"),
    Output(f"{RS}-text", "children"),
    Output(f"{RS}-selected-graph", "figure"),
    Output(f"{RS}-selected-text", "children"),
    Output(f"{RS}-partial", "children"),
    Output(f"{RS}-partial", "className"),
    Input(f"{RS}-current", "data"),
    Input(f"{RS}-show", "value"),
)
def draw_rs(current, show):
    try:
        out = logic.render_rs(current, show)
    except ValueError as exc:
        return (*[no_update] * 4, str(exc), "vi-error")
    note = out["partial_note"]
    return (out["curves_figure"], [html.P(t) for t in out["sentences"]],
            out["selected_figure"], [html.P(t) for t in out["selected_sentences"]], note,
            "vi-notes" if note else "vi-hidden")


@callback(
    Output(f"{PREFIX}-download", "data"),
    Input(f"{PREFIX}-download-pvalues", "n_clicks"),
    Input(f"{PREFIX}-download-curves", "n_clicks"),
    Input(f"{PREFIX}-download-selected", "n_clicks"),
    State(f"{NULL}-current", "data"),
    State(f"{RS}-current", "data"),
    prevent_initial_call=True,
)
def download(_pvalues, _curves, _selected, null_current, rs_current):
    what = {f"{PREFIX}-download-pvalues": "pvalues", f"{PREFIX}-download-curves": "curves",
            f"{PREFIX}-download-selected": "selected"}.get(ctx.triggered_id)
    source = null_current if what == "pvalues" else rs_current
    if what is None or not source:
        return no_update
    try:
        return dict(content=logic.csv_text(what, source),
                    filename=logic.csv_filename(what, source), type="text/csv")
    except ValueError:
        return no_update
