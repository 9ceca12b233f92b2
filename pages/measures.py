"""Measures page: MDI, MDI-oob, permutation and corrected importances side by side;
the noisy-feature protocol and the MDI bias curves of Li et al. (2019)."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import jobs, limits, state
from pages._ui import measures_logic as logic
from pages._ui.dataviews import error_box
from pages._ui.page_frame import table_style

dash.register_page(__name__, path="/measures", name="Measures", order=4,
                   title="varimp \u2014 Measures")

P, AUC, BIAS = logic.PREFIX, logic.AUC, logic.BIAS
state.register_url_sync(P)
_FOREST = ["meas-kind", "meas-trees", "meas-k", "meas-leaf", "meas-depth", "meas-bootstrap",
           "meas-tree-seed", "meas-measures", "meas-criterion"]
_STUDY = ["meas-study", "meas-study-depth", "meas-reps", "meas-study-trees"]
_BIAS = ["meas-bias-trees", "meas-bias-grid", "meas-bias-reps", "meas-bias-n"]
_TABLE_STYLE = table_style(["variable", "measure"])
_H2 = {"fontSize": "1.35rem", "margin": "2.2rem 0 0.3rem"}


def _graph(id_, height, name):
    return dcc.Graph(id=id_, className="vi-figure", style={"height": height},
                     figure=logic.placeholder_figure(), config={
        "displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": name}})


def _download(prefix):
    return html.Button("Download CSV", id=f"{prefix}-download-button", n_clicks=0,
                       className="vi-button vi-button-secondary", style={"marginTop": "0.75rem"})


def _check(id_, label, on):
    return dcc.Checklist(id=id_, options=[{"label": label, "value": "on"}],
                         value=["on"] if on else [], className="vi-check")


def _radio(id_, options, value):
    return dcc.RadioItems(id=id_, options=options, value=value, className="vi-radio",
                          labelStyle={"display": "flex"})


def _section(heading: str, controls, job: str, cards: list, warning=None) -> list:
    """A section: its heading, then its controls beside its error box, job panel and cards."""
    return [html.H2(heading, style=_H2),
            html.Div(className="vi-layout", children=[
                html.Aside(controls, className="vi-controls"),
                html.Div(className="vi-content", children=[
                    error_box(None, id=f"{job}-error"),
                    *([] if warning is None else [warning]),  # a Div with no children is falsy
                    jobs.job_panel(job), *cards]),
            ])]


def layout(vi_data=None, **query):
    start = logic.initial_state(query, vi_data)
    v, p = start["values"], start["p"]
    most = dict(trees=limits.max_trees(logic.MAX_TREES_UI),
                reps=limits.max_replicates(logic.MAX_REPS),
                study_trees=limits.max_trees(logic.STUDY_MAX_TREES),
                bias_trees=limits.max_trees(logic.BIAS_MAX_TREES),
                bias_reps=limits.max_replicates(logic.BIAS_MAX_REPS))
    forest = html.Fieldset(id="meas-fieldset", className="vi-fieldset", children=[
        ui.card("Forest",
                ui.field("Kind", _radio("meas-kind", logic.KIND_OPTIONS, v["kind"])),
                ui.field("Number of trees", ui.number_input("meas-trees", v["trees"], min=1,
                                                            max=most["trees"]),
                         help=limits.at_most_help(most["trees"])),
                ui.field("K", ui.number_input("meas-k", v["K"], min=1, max=p,
                                              placeholder="\u221ap"),
                         help="Variables drawn at each node" + (f", 1 to {p}" if p else "")
                         + "; blank: \u221ap."),
                ui.field("Min leaf size", ui.number_input("meas-leaf", v["leaf"], min=1)),
                ui.field("Max depth", ui.number_input("meas-depth", v["depth"], min=1,
                                                      placeholder="full"),
                         help="Blank grows the trees fully."),
                ui.field("Bootstrap", _check("meas-bootstrap", "Draw a bootstrap sample per "
                                             "tree", v["bootstrap"]),
                         help="The out-of-bag measures need it."),
                ui.field("Impurity", dcc.Dropdown(id="meas-criterion", clearable=False,
                                                  options=logic.CRITERION_OPTIONS,
                                                  value=v["criterion"], searchable=False)),
                ui.seed_field("meas-tree", v["tree_seed"],
                              help="Seeds the forests, the held-out split and the "
                                   "permutations.")),
        ui.card("Measures", dcc.Checklist(id="meas-measures", options=logic.MEASURE_OPTIONS,
                                          value=v["measures"], className="vi-check",
                                          labelStyle={"display": "flex"})),
    ])
    study = html.Fieldset(id="meas-auc-fieldset", className="vi-fieldset", children=[
        ui.card("Protocol",
                ui.field("Problem", dcc.Dropdown(id="meas-study", options=logic.STUDY_OPTIONS,
                                                 value=v["study"], clearable=False,
                                                 searchable=False)),
                ui.field("Trees", dcc.Checklist(id="meas-study-depth",
                                                options=logic.DEPTH_OPTIONS,
                                                value=v["study_depth"], className="vi-check",
                                                labelStyle={"display": "flex"})),
                ui.field("Repetitions", ui.number_input("meas-reps", v["reps"], min=1,
                                                        max=most["reps"]),
                         help="The paper repeats 40 times; each run draws new data. "
                              + limits.at_most_help(most["reps"], "repetitions")),
                ui.field("Number of trees", ui.number_input("meas-study-trees",
                                                            v["study_trees"], min=2,
                                                            max=most["study_trees"]),
                         help=limits.at_most_help(most["study_trees"]))),
    ])
    bias = html.Fieldset(id="meas-bias-fieldset", className="vi-fieldset", children=[
        ui.card("Simulation",
                ui.field("Number of trees", ui.number_input("meas-bias-trees", v["bias_trees"],
                                                            min=2, max=most["bias_trees"]),
                         help="The paper uses 300. "
                              + limits.at_most_help(most["bias_trees"])),
                ui.field("Grid", _radio("meas-bias-grid", [
                    {"label": "Coarse (11 + 11 forests)", "value": "coarse"},
                    {"label": "Full: leaf 1\u201350, depth 1\u201320", "value": "full"}],
                    v["bias_grid"])),
                ui.field("Repetitions", ui.number_input("meas-bias-reps", v["bias_reps"],
                                                        min=1, max=most["bias_reps"]),
                         help=limits.at_most_help(most["bias_reps"], "repetitions")),
                ui.field("Sample size N", ui.number_input("meas-bias-n", v["bias_n"], min=20,
                                                          max=5000))),
    ])
    return html.Div([
        state.query_store(P, start["query"]),
        dcc.Store(id="meas-data-params", data=start["data"]),
        dcc.Store(id="meas-current"), dcc.Store(id="meas-auc-current"),
        dcc.Store(id="meas-bias-current"),
        dcc.Download(id="meas-download"), dcc.Download(id="meas-auc-download"),
        dcc.Download(id="meas-bias-download"),
        html.H1("Measures", className="vi-page-title"),
        html.P("MDI credits a variable with every impurity decrease of the nodes that split "
               "on it, measured on the rows the tree was grown on, so deep trees reward noisy "
               "variables with many values. Li et al. (2019) rewrite MDI as a sum over rows "
               "and evaluate it on out-of-bag rows (MDI-oob). Here it stands next to the "
               "other measures, on your data and on the paper's experiments.",
               className="vi-page-lead"),
        state.notes_box(start["notes"], id="meas-link-notes"),
        *_section("1 \u00b7 The measures side by side", forest, P, [
            ui.card("Importance per variable",
                    _radio("meas-scale", [
                        {"label": "Each measure scaled to its largest value", "value": "max"},
                        {"label": "Raw values (each in its own units)", "value": "raw"}],
                        v["scale"]),
                    _graph("meas-graph", "460px", "varimp-measures"),
                    html.P(id="meas-note", className="vi-help")),
            ui.card("Table",
                    dash_table.DataTable(id="meas-table", columns=[], data=[],
                                         sort_action="native", page_size=20, **_TABLE_STYLE),
                    _download(P)),
        ], warning=html.Div(id="meas-warning", className="vi-hidden")),
        *_section("2 \u00b7 Telling noisy from relevant features (Li et al., Table 1)", study,
                  AUC, [ui.card("AUC per measure",
                                dash_table.DataTable(id="meas-auc-table", columns=[], data=[],
                                                     **_TABLE_STYLE),
                                _graph("meas-auc-graph", "440px", "varimp-measures-auc"),
                                html.P(id="meas-auc-note", className="vi-help"),
                                _download(AUC))]),
        *_section("3 \u00b7 MDI against min leaf size and depth (Li et al., Figs 1\u20133)",
                  bias, BIAS, [ui.card("Importance as the trees deepen",
                                       _graph("meas-bias-graph", "580px",
                                              "varimp-measures-bias"),
                                       html.P(id="meas-bias-note", className="vi-help"),
                                       _download(BIAS))]),
    ], className="vi-page")


@callback(
    Output("meas-query", "data"),
    *(Input(i, "value") for i in _FOREST + ["meas-scale"] + _STUDY + _BIAS),
    State("meas-data-params", "data"),
    prevent_initial_call=True,
)
def write_query(*args):
    return logic.query_from_controls(*args) or no_update


def _job_with_cancel(prefix, outputs, controls, states, disable, outputs_of):
    """A section's background job, and what its Cancel button shows: the parts that finished."""
    @callback(*outputs, *(Input(i, "value") for i in controls), *states,
              **jobs.background_options(prefix, disable=disable))
    def compute(set_progress, *args):
        return outputs_of(*args, progress=jobs.Progress(set_progress))

    @callback(*[Output(o.component_id, o.component_property, allow_duplicate=True)
                for o in outputs],
              Input(f"{prefix}-job-cancel", "n_clicks"), *(State(i, "value") for i in controls),
              *states, prevent_initial_call=True)
    def after_cancel(n_clicks, *args):
        return outputs_of(*args, compute=False) if n_clicks else no_update


# -- 1. side by side ------------------------------------------------------------------
_job_with_cancel(
    P, [Output("meas-graph", "figure"), Output("meas-table", "columns"),
        Output("meas-table", "data"), Output("meas-note", "children"),
        Output("meas-warning", "children"), Output("meas-warning", "className"),
        Output("meas-current", "data"), Output("meas-error", "children"),
        Output("meas-error", "className"), jobs.status_output(P)],
    _FOREST, [State("meas-scale", "value"), State("meas-data-params", "data"),
              State("meas-current", "data")],
    ["meas-fieldset", "meas-download-button"], logic.measures_outputs)


@callback(
    Output("meas-graph", "figure", allow_duplicate=True),
    Input("meas-scale", "value"), State("meas-current", "data"),
    prevent_initial_call=True,
)
def rescale(scale, current):
    return logic.rescaled_figure(current, scale) or no_update


# -- 2. noisy-feature protocol ---------------------------------------------------------------
_job_with_cancel(
    AUC, [Output("meas-auc-graph", "figure"), Output("meas-auc-table", "columns"),
          Output("meas-auc-table", "data"), Output("meas-auc-note", "children"),
          Output("meas-auc-current", "data"), Output("meas-auc-error", "children"),
          Output("meas-auc-error", "className"), jobs.status_output(AUC)],
    _STUDY, [State("meas-auc-current", "data")],
    ["meas-auc-fieldset", "meas-auc-download-button"], logic.auc_outputs)

# -- 3. bias curves ----------------------------------------------------------------------------
_job_with_cancel(
    BIAS, [Output("meas-bias-graph", "figure"), Output("meas-bias-note", "children"),
           Output("meas-bias-current", "data"), Output("meas-bias-error", "children"),
           Output("meas-bias-error", "className"), jobs.status_output(BIAS)],
    _BIAS, [State("meas-bias-current", "data")],
    ["meas-bias-fieldset", "meas-bias-download-button"], logic.bias_outputs)


# -- downloads ------------------------------------------------------------------------------------
@callback(Output("meas-download", "data"), Input("meas-download-button", "n_clicks"),
          State("meas-current", "data"), prevent_initial_call=True)
def download_measures(n_clicks, current):
    return logic.download("measures", current) if n_clicks else no_update


@callback(Output("meas-auc-download", "data"), Input("meas-auc-download-button", "n_clicks"),
          State("meas-auc-current", "data"), prevent_initial_call=True)
def download_auc(n_clicks, current):
    return logic.download("auc", current) if n_clicks else no_update


@callback(Output("meas-bias-download", "data"), Input("meas-bias-download-button", "n_clicks"),
          State("meas-bias-current", "data"), prevent_initial_call=True)
def download_bias(n_clicks, current):
    return logic.download("bias", current) if n_clicks else no_update
