"""Selection page: relevance classes, permutation p-values, RS against SRS (Geurts 2016)."""

from __future__ import annotations

import dash
from dash import Input, dash_table, html

from pages._framework import controls as ui
from pages._framework import datasource, state, studies
from pages import selection_study as study
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import page_frame, table_style
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.view import JobView, warm
from varimp_core.csvtext import csv_filename
from varimp_core.plots.selection_captions import RS_NOTE
from varimp_core.studies.nulls import permutation_null
from varimp_core.studies.rs_srs import SOURCES

dash.register_page(__name__, path="/selection", name="Selection", order=8,
                   title="varimp \u2014 Selection")

PREFIX, NULL, RS = "sel", "sel-null", "sel-rs"
NULLS = ParamSet(NULL, [
    Param("tol", "Threshold tol (bits)", "float", None, low=0, high=1, blank="default",
          step="any", what="threshold tol",
          help="Plug-in only: a conditional information at or below tol counts as 0. Blank: "
               "the core's default."),
    Param("n_permutations", "Permutations R", default=50, key="R", low=1,
          high=lambda c: study.max_permutations(), what="number of permutations R"),
    Param("n_estimators", "Trees", default=50, key="trees", low=1,
          high=lambda c: study.max_null_trees(), what="number of trees"),
    Param("method", "Forest", "choice", "forest", choices=studies.METHOD_OPTIONS,
          control="dropdown", what="method"),
    seed_param("null_seed", what="seed"),
    Param("n_samples", "Sample N", default=500, key="N", low=2, high=datasource.MAX_SAMPLES,
          what="sample size N"),
])
RSS = ParamSet(RS, [
    Param("source", "Problem", "choice", "480", key="rs", control="dropdown",
          choices=list(SOURCES.items()), what="RS/SRS problem"),
    Param("subspace_size", "q", default=50, key="q", low=1, what="subspace size q"),
    Param("alpha", "\u03b1", "float", 0.5, low=0, high=1, step="any",
          what="share \u03b1 of the subspace"),
    Param("max_features", "K", default=None, key="K", low=1, blank="q+1"),
    Param("n_estimators", "T", default=300, key="T", low=1, high=lambda c: study.max_rs_trees(),
          what="number of trees T"),
    Param("min_sampled", "L", default=5, key="L", low=1, high=100_000),
    Param("beta", "\u03b2", "float", 0.95, low=0.01, high=1, step="any",
          what="fraction \u03b2 of trees"),
    Param("n_seeds", "Seeds", default=1, key="seeds", low=1, high=study.MAX_SEEDS,
          what="number of seeds"),
    Param("show", "Selected set", "choice", "srs", what="shown method",
          choices=[("srs", "Selected set of SRS"), ("rs", "Selected set of RS")]),
])


def compute_null(settings, data: DataChoice, progress, data_store=None) -> dict:
    """Relevance classes of the data (section 1) and its permutation null (section 2)."""
    R, T, seed = settings["n_permutations"], settings["n_estimators"], settings["random_state"]
    study.check_null_budget(R, T)
    n = settings["n_samples"] if studies.is_exact(data) else None  # a sample is used as it is
    progress(text="Relevance classes\u2026")
    rel = studies.cached_study("sel-relevance", [data.as_dict, settings["tol"]],
                               lambda: study.relevance_view(data, settings["tol"]))

    def null() -> dict:
        prepared = studies.sample_of(data, n, seed)
        view = lambda r, **more: {"null": r.to_dict(), "n": prepared.n_samples,  # noqa: E731
                                  "partial": bool(r.cancelled), **more}
        result = permutation_null(
            prepared, n_permutations=R, method=settings["method"], n_estimators=T,
            max_features=1, random_state=seed, partial=lambda r: progress.publish(
                view(r, relevance=rel, n_samples=n, running=True)),
            **studies.run_options(progress, R, "permutations"))
        return view(result)

    s = {k: v for k, v in settings.items() if k != "tol"}  # the null does not use tol
    return {**studies.cached_study("sel-null", [data.as_dict, s, n], null), "relevance": rel,
            "n_samples": n}


def compute_rs(settings, data: DataChoice, progress, data_store=None) -> dict:
    """The RS/SRS study; Madelon's is cached whatever the page's data."""
    s = study.rs_study(settings, data)
    return studies.cached_study("sel-rs", s, lambda: study.run_rs_study(s, progress))


DATA = ("data_store", Input("sel-data", "data"))  # choosing other data reruns the views
NULL_VIEW = JobView(
    NULL, NULLS, compute=compute_null, render=study.render_null, partial=True,
    data_store="sel-data", extra=[DATA], outputs=[
        ("sel-relevance-graph", "figure"), ("sel-relevance-text", "children"),
        ("sel-relevance-table", "data"), ("sel-pvalue-graph", "figure"),
        ("sel-pvalue-text", "children"), ("sel-null-partial", "children"),
        ("sel-null-partial", "className")],
    disable=["sel-null-fieldset", "sel-null-problem", "sel-download-pvalues"])
RS_VIEW = JobView(
    RS, RSS, compute=compute_rs, render=study.render_rs, partial=True, data_store="sel-data",
    extra=[DATA], outputs=[("sel-rs-graph", "figure"), ("sel-rs-text", "children"),
                           ("sel-rs-selected-graph", "figure"), ("sel-rs-selected-text",
                                                                 "children"),
                           ("sel-rs-partial", "children"), ("sel-rs-partial", "className")],
    disable=["sel-rs-fieldset", "sel-download-curves", "sel-download-selected"])
NULL_VIEW.register()
RS_VIEW.register()
# The default RS/SRS study runs on Madelon whatever the data: computed at the server's start.
WARM_RUNS = [(RS_VIEW, RSS.defaults(), DataChoice.from_page({})[0].to_store())]
WARMING = warm("selection", WARM_RUNS)
choose_data = studies.register_data(PREFIX, NULL, NULLS, RSS)
state.register_url_sync(PREFIX)


def make_csv(what: str):
    """The download of ``what`` (a Madelon study is named for its Madelon data)."""
    def make(out, settings, data: DataChoice, **_) -> tuple[str, str]:
        source = settings.get("source", "data")
        return study.csv_text(what, out), csv_filename(
            "selection", data, what, name=None if source == "data" else f"madelon-{source}")
    return make


NULL_VIEW.register_downloads({"sel-download-pvalues": make_csv("pvalues")}, "sel-download",
                             "sel-download-pvalues-note")
RS_VIEW.register_downloads({"sel-download-curves": make_csv("curves"),
                            "sel-download-selected": make_csv("selected")}, "sel-download",
                           "sel-download-rs-note")


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    ctx = Context(p=data.n_features())
    nulls, more = NULLS.from_url(query, ctx)
    scaled = studies.scale_replicates(nulls, "n_permutations", query, data, nulls[
        "n_samples"] if studies.is_exact(data) else None, "permutations")
    rss, most = RSS.from_url(query, ctx)
    f = {f"null-{n}": c for n, c in zip(NULLS.names, NULLS.fields(nulls, ctx))}
    f.update((f"rs-{n}", c) for n, c in zip(RSS.names, RSS.fields(rss, ctx)))
    row = lambda *kids: html.Div(kids, className="vi-row")  # noqa: E731
    controls = [
        ui.card("Data, relevance and p-values", html.Fieldset(
            id="sel-null-fieldset", className="vi-fieldset", children=[
                studies.problem_field(NULL, data),
                f["null-tol"], row(f["null-n_permutations"], f["null-n_estimators"]),
                f["null-method"], row(f["null-random_state"], f["null-n_samples"]),
                html.P("N: rows drawn from an exact distribution for the permutation null "
                       "(a sample is used as it is). " + scaled, className="vi-help")])),
        ui.card("RS / SRS", html.Fieldset(id="sel-rs-fieldset", className="vi-fieldset", children=[
            f["rs-source"], row(f["rs-subspace_size"], f["rs-alpha"], f["rs-max_features"]),
            row(f["rs-n_estimators"], f["rs-min_sampled"], f["rs-beta"]), f["rs-n_seeds"],
            html.P("q: features per tree; \u03b1: share of the subspace taken from the "
                   "features found so far (SRS); K: candidates per node (blank: all); T: trees; "
                   "a feature is kept when drawn more than L times and better than the random "
                   "probe in at least a fraction \u03b2 of its trees. Each seed draws new data "
                   "(or a new split) and runs RS and SRS on it.", className="vi-help")]),
            html.P(study.caps_text(), id="sel-caps", className="vi-help")),
    ]
    table = dict(sort_action="native", page_size=25, **table_style(("variable", "relevance")))
    return page_frame(
        PREFIX, title="Selection", notes=notes + more + most, data_label=data.label(),
        download=True,
        controls=controls,
        lead="Which variables matter? Kohavi and John's relevance classes answer it for a "
             "distribution: strongly relevant variables carry information no other set "
             "does, weakly relevant ones only some, irrelevant ones none. From data, a "
             "permutation null tells which importances are above chance, and when no tree "
             "may see more than q of the p features, Random Subspace (RS) and Sequential "
             "Random Subspace (SRS) trees look for all relevant ones (Geurts 2016).",
        stores=[*studies.stores(PREFIX, data), *NULL_VIEW.stores(), *RS_VIEW.stores()],
        status=[*NULL_VIEW.status(), html.Div(id="sel-null-partial", className="vi-hidden")],
        content=[
            ui.card("1. Relevance classes, degrees and the Markov boundary",
                    studies.graph("sel-relevance-graph", "selection"),
                    html.Div(id="sel-relevance-text", className="vi-description"),
                    dash_table.DataTable(
                        id="sel-relevance-table", data=[], **table,
                        columns=[{"name": "Variable", "id": "variable"},
                                 {"name": "Class", "id": "relevance"},
                                 {"name": "Degree d", "id": "degree"},
                                 {"name": "In the Markov boundary",
                                  "id": "in_markov_boundary"}])),
            ui.card("2. Permutation-null p-values",
                    studies.graph("sel-pvalue-graph", "selection"),
                    html.Div(id="sel-pvalue-text", className="vi-description"),
                    studies.buttons("sel-download-pvalues-note",
                                    ("Download p-values and classes (CSV)",
                                     "sel-download-pvalues"))),
            ui.card("3. Random Subspace against Sequential Random Subspace",
                    *RS_VIEW.status(), html.Div(id="sel-rs-partial", className="vi-hidden"),
                    html.P(RS_NOTE, className="vi-notes", id="sel-rs-honest"),
                    studies.graph("sel-rs-graph", "selection"),
                    html.Div(id="sel-rs-text", className="vi-description"), f["rs-show"],
                    studies.graph("sel-rs-selected-graph", "selection"),
                    html.Div(id="sel-rs-selected-text", className="vi-description"),
                    studies.buttons("sel-download-rs-note",
                                    ("Download curves (CSV)", "sel-download-curves"),
                                    ("Download selections (CSV)", "sel-download-selected"))),
        ])
