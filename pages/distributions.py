"""Distributions page: importances over R data sets, fitted laws, plug-in bias, sweeps."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import distributions_logic as logic
from pages._ui import jobpage, state

dash.register_page(__name__, path="/distributions", name="Distributions", order=7,
                   title="varimp \u2014 Distributions")

PREFIX = logic.PREFIX
SWEEP = logic.SWEEP_PREFIX
state.register_url_sync(PREFIX)

_RUN = [f"{PREFIX}-{n}" for n in ("problem", "mode", "method", "n", "trees", "k", "depth",
                                  "replicates", "seed")]
_RUN_INPUTS = [Input(i, "value") for i in _RUN]
_SWEEP_INPUTS = [Input(f"{SWEEP}-param", "value"), Input(f"{SWEEP}-values", "value")]
_DOWNLOADS = {"summary": f"{PREFIX}-download-summary",
              "replicates": f"{PREFIX}-download-replicates", "sweep": f"{SWEEP}-download"}
_GRAPH_CONFIG = jobpage.graph_config("varimp-distributions")
_TABLE_STYLE = jobpage.table_style(page_size=20, wrap=True,
                                   left=("variable", "relevance", "law", "parameters"))


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


def _results(v: dict) -> list:
    """The main column: the run's figure and tables, then the sweep."""
    return [
        *jobpage.job_status(PREFIX),
        ui.card(
            "Importance over the replicates",
            dcc.RadioItems(id=f"{PREFIX}-view", value=v["view"], className="vi-radio",
                           inline=True,
                           options=[{"label": "Histograms with fits", "value": "histogram"},
                                    {"label": "Violins", "value": "violin"}]),
            jobpage.graph(f"{PREFIX}-graph", _GRAPH_CONFIG),
            html.Div(id=f"{PREFIX}-summary", className="vi-description"),
        ),
        ui.card(
            "Mean \u00b1 standard deviation (as in Sutera 2013, Tables 3.2\u20133.33)",
            dash_table.DataTable(id=f"{PREFIX}-table", columns=[], data=[],
                                 **_TABLE_STYLE),
            jobpage.button_row(
                ("Download table (CSV)", f"{PREFIX}-download-summary"),
                ("Download replicates (CSV)", f"{PREFIX}-download-replicates")),
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
            *jobpage.job_status(SWEEP, partial=False),
            jobpage.graph(f"{SWEEP}-graph", _GRAPH_CONFIG),
            html.P(id=f"{SWEEP}-note", className="vi-help"),
            jobpage.button_row(("Download sweep (CSV)", f"{SWEEP}-download")),
        ),
    ]


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v = start["values"]
    return jobpage.job_page(
        PREFIX, start, (PREFIX, SWEEP), title="Distributions", controls=_controls(v, start),
        lead="One forest on one data set gives one number per variable; another data set, or "
             "other trees, give another. Here R data sets are drawn, a forest is grown on "
             "each, and every variable's importance is looked at as a random variable "
             "(Sutera 2013, ch. 3): its histogram against the exact value, a scaled "
             "\u03c7\u00b2 law for irrelevant variables and a normal law for relevant ones, "
             "the plug-in bias that lifts irrelevant variables above zero (Geurts 2016), and "
             "how all of it moves when one setting is swept.",
        content=_results(v))


@callback(
    Output(f"{PREFIX}-mode", "options"), Output(f"{PREFIX}-mode", "value"),
    Output(f"{PREFIX}-k", "max"), Output(f"{PREFIX}-k", "value"),
    Output(f"{PREFIX}-problem-help", "children"), Output(f"{PREFIX}-n", "placeholder"),
    Output(f"{SWEEP}-param", "options"),
    Input(f"{PREFIX}-problem", "value"), Input(f"{PREFIX}-mode", "value"),
    State(f"{PREFIX}-data-params", "data"), State(f"{PREFIX}-k", "value"),
    prevent_initial_call=True,
)
def show_problem(problem, mode, data, k):
    f = logic.problem_controls(problem, data, mode, k)
    return (f["mode_options"], f["mode"], f["k_max"], f["k"] if f["k"] != k else no_update,
            f["description"], f["n_placeholder"], f["sweep_options"])


@callback(Output(f"{SWEEP}-param", "value"), Input(f"{SWEEP}-param", "options"),
          State(f"{SWEEP}-param", "value"), prevent_initial_call=True)
def keep_sweep_param(options, value):
    allowed = {o["value"] for o in options or [] if not o.get("disabled")}
    return no_update if value in allowed else "none"


@callback(Output(f"{SWEEP}-values", "value"), Input(f"{SWEEP}-param", "value"),
          State(f"{PREFIX}-k", "max"), prevent_initial_call=True)
def default_values(parameter, p):
    return logic.default_values(parameter, p) if parameter not in (None, "none") else ""


@callback(Output(f"{PREFIX}-query", "data"), *_RUN_INPUTS, Input(f"{PREFIX}-view", "value"),
          *_SWEEP_INPUTS, State(f"{PREFIX}-data-params", "data"), prevent_initial_call=True)
def sync_url(*values):
    *run_values, view, sweep, text, data = values
    query = logic.query_from_controls(_run_controls(*run_values, data), view=view,
                                      sweep_param=sweep, values_text=text)
    return no_update if query is None else query


def _run_controls(problem, mode, method, n, trees, k, depth, replicates, seed, data) -> dict:
    """The run's control values (in the order of ``_RUN``) by their settings' names."""
    return dict(problem=problem, data=data, mode=mode, R=replicates, N=n, T=trees, K=k,
                depth=depth, method=method, mc_seed=seed)


def _settings(*values):
    return logic.settings_from_controls(**_run_controls(*values))


# Cancel keeps what finished: it sets the flag "run" (or "sweep") of this page view.
@jobpage.stoppable_job(PREFIX, _RUN_INPUTS, page_prefix=PREFIX, job="run", disable=[
    f"{PREFIX}-fieldset", f"{PREFIX}-problem", _DOWNLOADS["summary"], _DOWNLOADS["replicates"]])
def run(*values, data, instance, shown, progress):
    return logic.run_monte_carlo(_settings(*values, data), instance=instance, progress=progress)


@jobpage.stoppable_job(SWEEP, [*_RUN_INPUTS, *_SWEEP_INPUTS], page_prefix=PREFIX, job="sweep",
                       keep_note=None,
                       disable=[f"{SWEEP}-fieldset", f"{SWEEP}-param", _DOWNLOADS["sweep"]])
def run_sweep(*values, data, instance, shown, progress):
    *run_values, parameter, text = values
    spec = logic.sweep_settings(_settings(*run_values, data), parameter, text)
    return None if spec is None else logic.run_sweep(spec, instance=instance, progress=progress)


jobpage.register_downloads(
    PREFIX, {i: (what, f"{SWEEP if what == 'sweep' else PREFIX}-current")
             for what, i in _DOWNLOADS.items()}, logic.csv_text, logic.csv_filename)


@jobpage.result_view(PREFIX, [Output(f"{PREFIX}-{i}", p) for i, p in (
    ("graph", "figure"), ("table", "columns"), ("table", "data"), ("fit-table", "columns"),
    ("fit-table", "data"), ("summary", "children"))],
    [Input(f"{PREFIX}-current", "data"), Input(f"{PREFIX}-view", "value")])
def draw(current, view):
    out = logic.render(current, view)
    return (out["figure"], out["table_columns"], out["table_rows"], out["fit_columns"],
            out["fit_rows"], [html.P(t) for t in out["sentences"]], out["partial_note"])


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
