"""Distributions page: importances over R data sets, fitted laws, plug-in bias, sweeps."""

from __future__ import annotations

import uuid

import dash
from dash import Input, Output, State, callback, ctx, dash_table, dcc, html, no_update

from pages._ui import common
from pages._ui import controls as ui
from pages._ui import distributions_logic as logic
from pages._ui import jobs, state
from pages._ui.dataviews import error_box

dash.register_page(__name__, path="/distributions", name="Distributions", order=7,
                   title="varimp \u2014 Distributions")

PREFIX = logic.PREFIX
SWEEP = logic.SWEEP_PREFIX
state.register_url_sync(PREFIX)

_RUN = [f"{PREFIX}-{n}" for n in ("problem", "mode", "method", "n", "trees", "k", "depth",
                                  "replicates", "seed")]
_RUN_INPUTS = [Input(i, "value") for i in _RUN]
_GRAPH_CONFIG = {"displaylogo": False,
                 "toImageButtonOptions": {"format": "png", "filename": "varimp-distributions",
                                          "scale": 2}}
_TABLE_STYLE = dict(
    sort_action="native", page_size=20, style_as_list_view=True,
    style_table={"overflowX": "auto"},
    style_cell={"fontFamily": "var(--vi-font)", "fontSize": "0.88rem",
                "padding": "0.3rem 0.6rem", "whiteSpace": "normal"},
    style_header={"fontWeight": 650, "backgroundColor": "#f0f3f8"},
    style_cell_conditional=[{"if": {"column_id": c}, "textAlign": "left"}
                            for c in ("variable", "relevance", "law", "parameters")],
)


def _job_options(prefix: str, disable: list[str]) -> dict:
    opts = jobs.background_options(prefix, disable=disable)
    # Cancel asks the job to stop between chunks (should_stop) instead of killing it, so
    # the replicates finished so far come back and are shown with a note.
    opts.pop("cancel")
    return opts


def _controls(v: dict, start: dict) -> html.Div:
    p = start["p"]
    form = logic.problem_controls(v["problem"], start["data"], v["mode"], v["K"])
    data_card = ui.card(
        "Data",
        ui.field("Problem", dcc.Dropdown(
            id=f"{PREFIX}-problem", options=logic.problem_options(start["data"]),
            value=v["problem"], clearable=False, searchable=True, className="vi-dropdown")),
        html.P(form["description"], id=f"{PREFIX}-problem-help", className="vi-help",
               style={"marginBottom": "0.9rem"}),
        ui.field("Replicates", dcc.RadioItems(
            id=f"{PREFIX}-mode", options=form["mode_options"], value=v["mode"],
            className="vi-radio", labelStyle={"display": "flex"}),
            help="Fresh samples show the spread over data sets; the bootstrap imitates it "
                 "from one table; the permutation null shows what a variable gets by chance."),
    )
    forest_card = ui.card(
        "Forests",
        ui.field("Method", dcc.RadioItems(
            id=f"{PREFIX}-method", options=logic.METHOD_OPTIONS, value=v["method"],
            className="vi-radio", labelStyle={"display": "flex"})),
        html.Div(className="vi-row", children=[
            ui.field("Replicates R", ui.number_input(f"{PREFIX}-replicates", v["R"], min=1,
                                                     max=logic.max_replicates())),
            ui.field("Samples N", ui.number_input(f"{PREFIX}-n", v["N"], min=1,
                                                  max=logic.max_samples(),
                                                  placeholder=form["n_placeholder"])),
        ]),
        html.Div(className="vi-row", children=[
            ui.field("Trees T", ui.number_input(f"{PREFIX}-trees", v["T"], min=1,
                                                max=logic.max_trees())),
            ui.field("K", ui.number_input(f"{PREFIX}-k", v["K"], min=1, max=p)),
        ]),
        html.Div(className="vi-row", children=[
            ui.field("Max depth", ui.number_input(f"{PREFIX}-depth", v["depth"], min=1,
                                                  placeholder="full")),
            ui.field("Seed", ui.number_input(f"{PREFIX}-seed", v["mc_seed"], min=0,
                                             max=2**32 - 1)),
        ]),
        html.P("N: rows per data set (blank: the data's size for the bootstrap). K: variables "
               "drawn at each node. The seed fixes every replicate.", className="vi-help"),
        html.P(logic.caps_text(), id=f"{PREFIX}-caps", className="vi-help",
               style={"marginTop": "0.4rem"}),
    )
    sweep_card = ui.card(
        "Sweep",
        html.Fieldset(id=f"{SWEEP}-fieldset", className="vi-fieldset", children=[
            ui.field("Parameter", dcc.Dropdown(
                id=f"{SWEEP}-param", options=form["sweep_options"], value=v["sweep"],
                clearable=False, searchable=False, className="vi-dropdown")),
            ui.field("Values", dcc.Input(
                id=f"{SWEEP}-values", type="text", value=v["values"], debounce=True,
                className="vi-input", placeholder="e.g. 1, 10, 50"),
                help=f"Comma-separated, at most {logic.max_sweep_values()}; every value is a "
                     "full run of R replicates with the settings above."),
        ]),
    )
    return html.Aside(className="vi-controls", children=[
        html.Fieldset(id=f"{PREFIX}-fieldset", className="vi-fieldset",
                      children=[data_card, forest_card]),
        sweep_card,
    ])


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v = start["values"]
    return html.Div([
        state.query_store(PREFIX, start["query"]),
        dcc.Store(id=f"{PREFIX}-data-params", data=start["data"]),
        dcc.Store(id=f"{PREFIX}-instance", data=uuid.uuid4().hex),
        dcc.Store(id=f"{PREFIX}-current"),
        dcc.Store(id=f"{SWEEP}-current"),
        dcc.Store(id=f"{PREFIX}-stop-ack"),
        dcc.Store(id=f"{SWEEP}-stop-ack"),
        dcc.Download(id=f"{PREFIX}-download"),
        html.H1("Distributions", className="vi-page-title"),
        html.P("One forest on one data set gives one number per variable; another data set, or "
               "other trees, give another. Here R data sets are drawn, a forest is grown on "
               "each, and every variable's importance is looked at as a random variable "
               "(Sutera 2013, ch. 3): its histogram against the exact value, a scaled "
               "\u03c7\u00b2 law for irrelevant variables and a normal law for relevant ones, "
               "the plug-in bias that lifts irrelevant variables above zero (Geurts 2016), and "
               "how all of it moves when one setting is swept.", className="vi-page-lead"),
        html.Div(className="vi-layout", children=[
            _controls(v, start),
            html.Div(className="vi-content", children=[
                state.notes_box(start["notes"], id=f"{PREFIX}-link-notes"),
                error_box(None, id=f"{PREFIX}-error"),
                jobs.job_panel(PREFIX),
                html.Div(id=f"{PREFIX}-partial", className="vi-hidden"),
                ui.card(
                    "Importance over the replicates",
                    dcc.RadioItems(id=f"{PREFIX}-view", value=v["view"], className="vi-radio",
                                   inline=True,
                                   options=[{"label": "Histograms with fits", "value": "histogram"},
                                            {"label": "Violins", "value": "violin"}]),
                    dcc.Graph(id=f"{PREFIX}-graph", figure=logic.placeholder_figure(),
                              config=_GRAPH_CONFIG, className="vi-figure"),
                    html.Div(id=f"{PREFIX}-summary", className="vi-description"),
                ),
                ui.card(
                    "Mean \u00b1 standard deviation (as in Sutera 2013, Tables 3.2\u20133.33)",
                    dash_table.DataTable(id=f"{PREFIX}-table", columns=[], data=[],
                                         **_TABLE_STYLE),
                    html.Div(style={"marginTop": "0.75rem", "display": "flex",
                                    "gap": "0.6rem", "flexWrap": "wrap"}, children=[
                        html.Button("Download table (CSV)", id=f"{PREFIX}-download-summary",
                                    n_clicks=0, className="vi-button vi-button-secondary"),
                        html.Button("Download replicates (CSV)",
                                    id=f"{PREFIX}-download-replicates", n_clicks=0,
                                    className="vi-button vi-button-secondary"),
                    ]),
                ),
                ui.card(
                    "Goodness of fit",
                    dash_table.DataTable(id=f"{PREFIX}-fit-table", columns=[], data=[],
                                         **_TABLE_STYLE),
                    html.P("Kolmogorov\u2013Smirnov distance D between the replicates and each "
                           "fitted law (smaller is closer). The laws are fitted to the same "
                           "values, so the p-values are too large (Lilliefors 1967): read D as "
                           "a distance, not as a test.", className="vi-help",
                           style={"marginTop": "0.5rem"}),
                ),
                ui.card(
                    "Sweep",
                    error_box(None, id=f"{SWEEP}-error"),
                    jobs.job_panel(SWEEP),
                    dcc.Graph(id=f"{SWEEP}-graph", figure=logic.placeholder_figure(),
                              config=_GRAPH_CONFIG, className="vi-figure"),
                    html.P(id=f"{SWEEP}-note", className="vi-help"),
                    html.Button("Download sweep (CSV)", id=f"{SWEEP}-download", n_clicks=0,
                                className="vi-button vi-button-secondary",
                                style={"marginTop": "0.75rem"}),
                ),
            ]),
        ]),
    ], className="vi-page")


@callback(
    Output(f"{PREFIX}-mode", "options"),
    Output(f"{PREFIX}-mode", "value"),
    Output(f"{PREFIX}-k", "max"),
    Output(f"{PREFIX}-k", "value"),
    Output(f"{PREFIX}-problem-help", "children"),
    Output(f"{PREFIX}-n", "placeholder"),
    Output(f"{SWEEP}-param", "options"),
    Input(f"{PREFIX}-problem", "value"),
    Input(f"{PREFIX}-mode", "value"),
    State(f"{PREFIX}-data-params", "data"),
    State(f"{PREFIX}-k", "value"),
    prevent_initial_call=True,
)
def show_problem(problem, mode, data, k):
    f = logic.problem_controls(problem, data, mode, k)
    return (f["mode_options"], f["mode"], f["k_max"], f["k"] if f["k"] != k else no_update,
            f["description"], f["n_placeholder"], f["sweep_options"])


@callback(
    Output(f"{SWEEP}-param", "value"),
    Input(f"{SWEEP}-param", "options"),
    State(f"{SWEEP}-param", "value"),
    prevent_initial_call=True,
)
def keep_sweep_param(options, value):
    allowed = {o["value"] for o in options or [] if not o.get("disabled")}
    return no_update if value in allowed else "none"


@callback(
    Output(f"{SWEEP}-values", "value"),
    Input(f"{SWEEP}-param", "value"),
    State(f"{PREFIX}-k", "max"),
    prevent_initial_call=True,
)
def default_values(parameter, p):
    return logic.default_values(parameter, p) if parameter not in (None, "none") else ""


@callback(
    Output(f"{PREFIX}-query", "data"),
    *_RUN_INPUTS,
    Input(f"{PREFIX}-view", "value"),
    Input(f"{SWEEP}-param", "value"),
    Input(f"{SWEEP}-values", "value"),
    State(f"{PREFIX}-data-params", "data"),
    prevent_initial_call=True,
)
def sync_url(problem, mode, method, n, trees, k, depth, replicates, seed, view, sweep, values,
             data):
    query = logic.query_from_controls(
        dict(problem=problem, data=data, mode=mode, R=replicates, N=n, T=trees, K=k,
             depth=depth, method=method, mc_seed=seed),
        view=view, sweep_param=sweep, values_text=values)
    return no_update if query is None else query


@callback(
    Output(f"{PREFIX}-current", "data"),
    Output(f"{PREFIX}-error", "children"),
    Output(f"{PREFIX}-error", "className"),
    jobs.status_output(PREFIX),
    *_RUN_INPUTS,
    State(f"{PREFIX}-data-params", "data"),
    State(f"{PREFIX}-instance", "data"),
    State(f"{PREFIX}-current", "data"),
    **_job_options(PREFIX, disable=[f"{PREFIX}-fieldset", f"{PREFIX}-problem",
                                    f"{PREFIX}-download-summary",
                                    f"{PREFIX}-download-replicates"]),
)
def run(set_progress, problem, mode, method, n, trees, k, depth, replicates, seed, data,
        instance, shown):
    progress = jobs.Progress(set_progress)
    try:
        settings = logic.settings_from_controls(
            problem=problem, data=data, mode=mode, R=replicates, N=n, T=trees, K=k,
            depth=depth, method=method, mc_seed=seed)
        out = logic.run_monte_carlo(settings, instance=instance, progress=progress)
    except Exception as exc:  # a sentence on the page, never a traceback
        message = jobs.failure_message(exc, bool(shown), "The figures")
        return no_update, message, "vi-error", ""
    current = out["current"] if out["current"] is not None else no_update
    return current, "", "vi-hidden", out["status"]


common.register_cancel(PREFIX, f"{PREFIX}-instance", "run")  # Cancel keeps what finished


@callback(
    Output(f"{PREFIX}-graph", "figure"),
    Output(f"{PREFIX}-table", "columns"),
    Output(f"{PREFIX}-table", "data"),
    Output(f"{PREFIX}-fit-table", "columns"),
    Output(f"{PREFIX}-fit-table", "data"),
    Output(f"{PREFIX}-summary", "children"),
    Output(f"{PREFIX}-partial", "children"),
    Output(f"{PREFIX}-partial", "className"),
    Input(f"{PREFIX}-current", "data"),
    Input(f"{PREFIX}-view", "value"),
)
def draw(current, view):
    try:
        out = logic.render(current, view)
    except ValueError as exc:
        return (*[no_update] * 6, str(exc), "vi-error")
    note = out["partial_note"]
    return (out["figure"], out["table_columns"], out["table_rows"], out["fit_columns"],
            out["fit_rows"], [html.P(t) for t in out["sentences"]], note,
            "vi-notes" if note else "vi-hidden")


@callback(
    Output(f"{SWEEP}-current", "data"),
    Output(f"{SWEEP}-error", "children"),
    Output(f"{SWEEP}-error", "className"),
    jobs.status_output(SWEEP),
    *_RUN_INPUTS,
    Input(f"{SWEEP}-param", "value"),
    Input(f"{SWEEP}-values", "value"),
    State(f"{PREFIX}-data-params", "data"),
    State(f"{PREFIX}-instance", "data"),
    **_job_options(SWEEP, disable=[f"{SWEEP}-fieldset", f"{SWEEP}-param", f"{SWEEP}-download"]),
)
def run_sweep(set_progress, problem, mode, method, n, trees, k, depth, replicates, seed,
              parameter, values, data, instance):
    progress = jobs.Progress(set_progress)
    try:
        settings = logic.settings_from_controls(
            problem=problem, data=data, mode=mode, R=replicates, N=n, T=trees, K=k,
            depth=depth, method=method, mc_seed=seed)
        spec = logic.sweep_settings(settings, parameter, values)
        if spec is None:
            return None, "", "vi-hidden", ""
        out = logic.run_sweep(spec, instance=instance, progress=progress)
    except Exception as exc:  # a sentence on the page, never a traceback
        return no_update, jobs.error_message(exc), "vi-error", ""
    current = out["current"] if out["current"] is not None else no_update
    return current, "", "vi-hidden", out["status"]


common.register_cancel(SWEEP, f"{PREFIX}-instance", "sweep")  # Cancel keeps what finished


@callback(
    Output(f"{SWEEP}-graph", "figure"),
    Output(f"{SWEEP}-note", "children"),
    Input(f"{SWEEP}-current", "data"),
)
def draw_sweep(current):
    try:
        out = logic.render_sweep(current)
    except ValueError as exc:
        return logic.placeholder_figure("No sweep to show."), str(exc)
    return out["figure"], out["note"]


@callback(
    Output(f"{PREFIX}-download", "data"),
    Input(f"{PREFIX}-download-summary", "n_clicks"),
    Input(f"{PREFIX}-download-replicates", "n_clicks"),
    Input(f"{SWEEP}-download", "n_clicks"),
    State(f"{PREFIX}-current", "data"),
    State(f"{SWEEP}-current", "data"),
    prevent_initial_call=True,
)
def download(_summary, _replicates, _sweep, current, sweep_current):
    what = {f"{PREFIX}-download-summary": "summary", f"{PREFIX}-download-replicates": "replicates",
            f"{SWEEP}-download": "sweep"}.get(ctx.triggered_id)
    source = sweep_current if what == "sweep" else current
    if what is None or not source:
        return no_update
    try:
        return dict(content=logic.csv_text(what, source),
                    filename=logic.csv_filename(what, source), type="text/csv")
    except ValueError:
        return no_update
