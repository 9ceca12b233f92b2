"""Selection page: relevance classes, permutation p-values, RS against SRS (Geurts 2016)."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, ctx, dash_table, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import jobpage, state
from pages._ui import selection_logic as logic

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
_DOWNLOADS = {what: f"{PREFIX}-download-{what}" for what in ("pvalues", "curves", "selected")}
_GRAPH_CONFIG = jobpage.graph_config("varimp-selection")
_TABLE_STYLE = jobpage.table_style(page_size=25, left=("variable", "relevance"))
_RS_LABELS = {"480": "Madelon, 480 irrelevant (p = 500)",
              "1480": "Madelon, 1,480 irrelevant (p = 1,500)",
              "2980": "Madelon, 2,980 irrelevant (p = 3,000)",
              "5480": "Madelon, 5,480 irrelevant (p = 5,500)", "data": "The data above"}


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


def _results(v: dict) -> list:
    """The main column: relevance classes, p-values, then the RS/SRS study."""
    return [
        *jobpage.job_status(NULL),
        ui.card(
            "1. Relevance classes, degrees and the Markov boundary",
            jobpage.graph(f"{PREFIX}-relevance-graph", _GRAPH_CONFIG),
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
            jobpage.graph(f"{PREFIX}-pvalue-graph", _GRAPH_CONFIG),
            html.Div(id=f"{PREFIX}-pvalue-text", className="vi-description"),
            jobpage.button_row(("Download p-values and classes (CSV)",
                                f"{PREFIX}-download-pvalues")),
        ),
        ui.card(
            "3. Random Subspace against Sequential Random Subspace",
            *jobpage.job_status(RS),
            html.P(logic.HONEST_NOTE, className="vi-notes", id=f"{RS}-honest"),
            jobpage.graph(f"{RS}-graph", _GRAPH_CONFIG),
            html.Div(id=f"{RS}-text", className="vi-description"),
            dcc.RadioItems(id=f"{RS}-show", value=v["show"], inline=True,
                           className="vi-radio",
                           options=[{"label": "Selected set of SRS", "value": "srs"},
                                    {"label": "Selected set of RS", "value": "rs"}]),
            jobpage.graph(f"{RS}-selected-graph", _GRAPH_CONFIG),
            html.Div(id=f"{RS}-selected-text", className="vi-description"),
            jobpage.button_row(
                ("Download curves (CSV)", f"{PREFIX}-download-curves"),
                ("Download selections (CSV)", f"{PREFIX}-download-selected")),
        ),
    ]


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v = start["values"]
    return jobpage.job_page(
        PREFIX, start, (NULL, RS), title="Selection",
        controls=html.Aside(className="vi-controls",
                            children=[_null_controls(v, start), _rs_controls(v)]),
        lead="Which variables matter? Kohavi and John's relevance classes answer it for a "
             "distribution: strongly relevant variables carry information no other set "
             "does, weakly relevant ones only some, irrelevant ones none. From data, a "
             "permutation null tells which importances are above chance, and when no tree "
             "may see more than q of the p features, Random Subspace (RS) and Sequential "
             "Random Subspace (SRS) trees look for all relevant ones (Geurts 2016).",
        content=_results(v))


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


# Cancel keeps what finished: it sets the flag "sel-null" (or "sel-rs") of this page view.
@jobpage.stoppable_job(NULL, _NULL_INPUTS, page_prefix=PREFIX, job="sel-null",
                       disable=[f"{NULL}-fieldset", f"{NULL}-problem", f"{NULL}-method",
                                _DOWNLOADS["pvalues"]])
def run_null(*values, data, instance, shown, progress):
    settings = logic.null_settings(**_null_controls_dict(*values, data))
    return logic.run_null(settings, instance=instance, progress=progress)


@jobpage.stoppable_job(RS, [*_RS_INPUTS, Input(f"{NULL}-problem", "value")], page_prefix=PREFIX,
                       job="sel-rs", disable=[f"{RS}-fieldset", f"{RS}-data",
                                              _DOWNLOADS["curves"], _DOWNLOADS["selected"]])
def run_rs(*values, data, instance, shown, progress):
    *rs_values, problem = values
    if ctx.triggered_id == f"{NULL}-problem" and rs_values[0] != "data" and shown:
        return jobpage.KEEP                       # Madelon does not follow the data
    settings = logic.rs_settings(data=logic.data_for_choice(problem, data),
                                 **_rs_controls_dict(*rs_values))
    return logic.run_rs(settings, instance=instance, progress=progress)


jobpage.register_downloads(
    PREFIX, {i: (what, f"{NULL if what == 'pvalues' else RS}-current")
             for what, i in _DOWNLOADS.items()}, logic.csv_text, logic.csv_filename)


@jobpage.result_view(NULL, [Output(f"{PREFIX}-{i}", p) for i, p in (
    ("relevance-graph", "figure"), ("relevance-text", "children"), ("relevance-table", "data"),
    ("pvalue-graph", "figure"), ("pvalue-text", "children"))],
    [Input(f"{NULL}-current", "data")])
def draw_null(current):
    out = logic.render_null(current)
    return (out["relevance_figure"], [html.P(t) for t in out["relevance_sentences"]],
            out["relevance_rows"], out["pvalue_figure"],
            [html.P(t) for t in out["null_sentences"]], out["partial_note"])


@jobpage.result_view(RS, [Output(f"{RS}-{i}", p) for i, p in (
    ("graph", "figure"), ("text", "children"), ("selected-graph", "figure"),
    ("selected-text", "children"))],
    [Input(f"{RS}-current", "data"), Input(f"{RS}-show", "value")])
def draw_rs(current, show):
    out = logic.render_rs(current, show)
    return (out["curves_figure"], [html.P(t) for t in out["sentences"]], out["selected_figure"],
            [html.P(t) for t in out["selected_sentences"]], out["partial_note"])
