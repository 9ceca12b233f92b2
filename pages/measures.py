"""Measures page: MDI, MDI-oob, permutation and corrected importances side by side;
the noisy-feature protocol and the MDI bias curves of Li et al. (2019)."""

from __future__ import annotations

import dash
from dash import dash_table, dcc, html

from pages._server import jobs, limits

from pages._framework import state, studies
from pages._framework import controls as ui
from pages import measures_views as views
from pages._framework.common import placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                  table_style)
from pages._framework.params import Param, ParamSet, seed_param
from pages._framework.view import JobView, context_for, warm
from varimp_core.measures.suite import DEFAULT_MEASURES, MEASURES
from varimp_core.plots.measures import measure_label

dash.register_page(__name__, path="/measures", name="Measures", order=4,
                   title="varimp \u2014 Measures")

PREFIX = "meas"
#: The page's own caps; the server's limits (:mod:`pages._server.limits`) may lower them.
MAX_TREES_UI, MAX_REPS, STUDY_MAX_TREES, BIAS_MAX_TREES, BIAS_MAX_REPS = 2000, 40, 500, 1000, 20


def _capped(limit, cap: int, what: str = "trees", before: str = "") -> dict:
    """``high`` and ``help`` of a count that the page caps at ``cap`` and the server may lower."""
    return {"high": lambda c: limit(cap),
            "help": lambda c: before + limits.at_most_help(limit(cap), what)}


FOREST = ParamSet(PREFIX, [
    Param("kind", "Kind", "choice", "rf", what="Forest kind",
          choices=[("rf", "Random forest"), ("et", "Extra-trees")]),
    Param("n_estimators", "Number of trees", default=100, key="trees", low=2,
          **_capped(limits.max_trees, MAX_TREES_UI)),
    Param("max_features", "K", key="K", low=1, high=lambda c: c.p or 100_000, blank="\u221ap",
          help=lambda c: "Variables drawn at each node" + (f", 1 to {c.p}" if c.p else "")
          + "; blank: \u221ap."),
    Param("min_samples_leaf", "Min leaf size", default=1, key="leaf", low=1),
    Param("max_depth", "Max depth", key="depth", low=1, blank="full",
          help="Blank grows the trees fully."),
    Param("bootstrap", "Bootstrap", "bool", True, help="Draw a bootstrap sample per tree"),
    seed_param(help="Seeds the forests, the held-out split and the permutations."),
    views.Ticks("measures", "Measures", default=list(DEFAULT_MEASURES),
                choices=[(m, measure_label(m)) for m in MEASURES],
                empty="Tick at least one measure."),
    Param("criterion", "Impurity", "choice", "auto", control="dropdown", choices=[
        ("auto", "Automatic (Gini, or variance for regression)"),
        ("gini", "Gini (classification only)"),
        ("entropy", "Entropy, bits (classification only)")]),
    Param("scale", "Scale", "choice", "max", choices=[
        ("max", "Each measure scaled to its largest value"),
        ("raw", "Raw values (each in its own units)")]),
])
# Light defaults so the page answers in seconds; the paper used 40 repetitions,
# 100 trees per forest and 300 trees for the curves: raise them on the page.
STUDY = ParamSet(PREFIX, [
    Param("problem", "Problem", "choice", "strobl-classification", key="study",
          control="dropdown", what="Study problem", choices=[
              ("strobl-classification", "strobl, classification (paper's simulation)"),
              ("strobl-regression", "strobl, regression (paper's simulation)"),
              ("madelon", "madelon (500 inputs, no paper values)")]),
    views.Ticks("depth_settings", "Trees", default=["shallow", "deep"], key="study_depth",
                choices=[("shallow", "Shallow (min leaf size 100)"),
                         ("deep", "Deep (min leaf size 1)")],
                empty="Tick shallow or deep trees (or both)."),
    Param("n_repeats", "Repetitions", default=3, key="reps", low=1, what="Number of repetitions",
          **_capped(limits.max_replicates, MAX_REPS, "repetitions",
                    "The paper repeats 40 times; each run draws new data. ")),
    Param("n_estimators", "Number of trees", default=50, key="study_trees", low=2,
          **_capped(limits.max_trees, STUDY_MAX_TREES)),
])
BIAS = ParamSet(PREFIX, [
    Param("n_estimators", "Number of trees", default=100, key="bias_trees", low=2,
          **_capped(limits.max_trees, BIAS_MAX_TREES, before="The paper uses 300. ")),
    Param("grid", "Grid", "choice", "coarse", key="bias_grid", choices=[
        ("coarse", "Coarse (11 + 11 forests)"), ("full", "Full: leaf 1\u201350, depth 1\u201320")]),
    Param("n_repeats", "Repetitions", default=1, key="bias_reps", low=1,
          what="Number of repetitions", **_capped(limits.max_replicates, BIAS_MAX_REPS,
                                                  "repetitions")),
    Param("n_samples", "Sample size N", default=200, key="bias_n", low=20, high=5000),
])
SECTIONS = (FOREST, STUDY, BIAS)


def _saved(compute):
    """What a view's CSV is made of: the runs (or measures) finished so far, never computing."""
    return lambda settings, data: compute(settings, data, jobs.Progress(None), compute=False)


class ForestView(JobView):
    """A JobView whose result is not keyed by the scale: a new scale only redraws."""

    def key(self, data, settings, extra):
        return super().key(data, {k: v for k, v in settings.items() if k != "scale"}, extra)


FOREST_VIEW = ForestView(
    PREFIX, FOREST, compute=views.compute_forest, render=views.render_forest,
    outputs=[("meas-graph", "figure"), ("meas-table", "columns"), ("meas-table", "data"),
             ("meas-note", "children"), ("meas-warning", "children"),
             ("meas-warning", "className")],
    data_store="meas-data", disable=["meas-fieldset", "meas-download-button"], partial=True,
    what="The figure", saved=_saved(views.compute_forest))
# The studies draw their own data: no data store, so their results are keyed by their settings.
AUC_VIEW = JobView(f"{PREFIX}-auc", STUDY, compute=views.compute_auc, render=views.render_auc,
                   outputs=[("meas-auc-graph", "figure"), ("meas-auc-table", "columns"),
                            ("meas-auc-table", "data"), ("meas-auc-note", "children")],
                   data_store=None, partial=True, saved=_saved(views.compute_auc),
                   disable=["meas-auc-fieldset", "meas-auc-download-button"])
BIAS_VIEW = JobView(f"{PREFIX}-bias", BIAS, compute=views.compute_bias,
                    render=views.render_bias, data_store=None, partial=True,
                    saved=_saved(views.compute_bias),
                    outputs=[("meas-bias-graph", "figure"), ("meas-bias-note", "children")],
                    disable=["meas-bias-fieldset", "meas-bias-download-button"])
VIEWS = (FOREST_VIEW, AUC_VIEW, BIAS_VIEW)
for _view in VIEWS:
    _view.register()
studies.register_url("meas-query", "meas-data", *SECTIONS)
state.register_url_sync(PREFIX)


# -- the page -------------------------------------------------------------------------------
_H2 = {"fontSize": "1.35rem", "margin": "2.2rem 0 0.3rem"}
_TABLE = table_style(["Variable", "Measure"])


def _graph(id_, height, name):
    return dcc.Graph(id=id_, className="vi-figure", style={"height": height},
                     figure=placeholder_figure(), config=figure_config(name))


def _button(view):
    return html.Div([download_button(view.prefix), download_note(view.prefix)])


def _section(heading, view, controls, *cards) -> list:
    """A study's section: its heading, then its controls beside its status and cards."""
    return [html.H2(heading, style=_H2), html.Div(className="vi-layout", children=[
        html.Aside(controls, className="vi-controls"),
        html.Div([*view.status(), *cards], className="vi-content")])]


def initial_values(query, data: DataChoice) -> tuple[list[dict], list[str]]:
    """Each section's control values from a link, and a note for each value ignored."""
    parsed = [params.from_url(query, context_for(data)) for params in SECTIONS]
    return [values for values, _ in parsed], [note for _, notes in parsed for note in notes]


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    values, more = initial_values(query, data)
    values[0]["n_estimators"], scaled = studies.scale_trees(values[0]["n_estimators"], query, data)
    ctx = context_for(data)
    fo, st, bi = (dict(zip(p.names, p.fields(v, ctx))) for p, v in zip(SECTIONS, values))
    error, panel = FOREST_VIEW.status()
    frame = page_frame(
        PREFIX, title="Measures", notes=notes + more, data=data, query="",
        lead="MDI credits a variable with every impurity decrease of the nodes that split on "
             "it, measured on the rows the tree was grown on, so deep trees reward noisy "
             "variables with many values. Li et al. (2019) rewrite MDI as a sum over rows and "
             "evaluate it on out-of-bag rows (MDI-oob). Here it stands next to the other "
             "measures, on your data and on the paper's experiments.",
        stores=[*(x for view in VIEWS for x in [*view.stores(),
                                                dcc.Download(id=f"{view.prefix}-download")])],
        controls=html.Fieldset(id="meas-fieldset", className="vi-fieldset", children=[
            ui.card("Forest", fo["kind"], fo["n_estimators"], html.P(scaled, className="vi-help"),
                    fo["max_features"],
                    fo["min_samples_leaf"], fo["max_depth"], fo["bootstrap"],
                    html.P("The out-of-bag measures need it.", className="vi-help"),
                    fo["criterion"], fo["random_state"]),
            ui.card("Measures", fo["measures"])]),
        status=[error, html.Div(id="meas-warning", className="vi-hidden"), panel],
        content=[
            ui.card("Importance per variable", fo["scale"],
                    _graph("meas-graph", "460px", "measures"),
                    html.P(id="meas-note", className="vi-help")),
            ui.card("Table", dash_table.DataTable(id="meas-table", columns=[], data=[],
                                                  sort_action="native", page_size=20, **_TABLE),
                    _button(FOREST_VIEW))])
    # Three sections: the frame's controls and content are the first; the studies follow.
    frame.children.insert(-1, html.H2("1 \u00b7 The measures side by side", style=_H2))
    frame.children += [
        *_section("2 \u00b7 Telling noisy from relevant features (Li et al., Table 1)", AUC_VIEW,
                  html.Fieldset(ui.card("Protocol", *st.values()), id="meas-auc-fieldset",
                                className="vi-fieldset"),
                  ui.card("AUC per measure",
                          dash_table.DataTable(id="meas-auc-table", columns=[], data=[], **_TABLE),
                          _graph("meas-auc-graph", "440px", "measures-auc"),
                          html.P(id="meas-auc-note", className="vi-help"), _button(AUC_VIEW))),
        *_section("3 \u00b7 MDI against min leaf size and depth (Li et al., Figs 1\u20133)",
                  BIAS_VIEW, html.Fieldset(ui.card("Simulation", *bi.values()),
                                           id="meas-bias-fieldset", className="vi-fieldset"),
                  ui.card("Importance as the trees deepen",
                          _graph("meas-bias-graph", "580px", "measures-bias"),
                          html.P(id="meas-bias-note", className="vi-help"), _button(BIAS_VIEW)))]
    return frame


for _view, _make in zip(VIEWS, (views.measures_csv, views.auc_csv, views.bias_csv)):
    _view.register_downloads({f"{_view.prefix}-download-button": _make})
#: A first visit finds the paper's studies (and the default data's measures) computed.
WARM_RUNS = [(AUC_VIEW, STUDY.defaults(), None), (BIAS_VIEW, BIAS.defaults(), None),
             (FOREST_VIEW, FOREST.defaults(), DataChoice.from_page({})[0].to_store())]
WARMING = warm("measures", WARM_RUNS)
