"""Selection page: relevance classes, permutation p-values, RS against SRS (Geurts 2016).

The Selection page's study: relevance, the permutation null, RS against SRS, and drawing.

Three views of "which variables matter" (Geurts 2016, parts 1 and 3):
relevance classes, degrees and a Markov boundary of the data
(:func:`varimp_core.exact.relevance.relevance`) with each variable's K = 1
infinite-forest importance; permutation-null p-values
(:func:`varimp_core.studies.nulls.permutation_null`); and Random Subspace
against Sequential Random Subspace
(:func:`varimp_core.studies.rs_srs.compare_subspace_methods`) on Madelon-like
data or on the page's data.  An RS/SRS study is a set of independent (seed,
method) runs: :func:`rs_run` is registered as the fan-out task
:data:`RS_TASK`, so with ``REDIS_URL`` set the runs spread over the Celery
workers (:mod:`pages._server.fanout`), with the numbers of a local run.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
import numpy as np
from dash import Input, Output, callback, html

from pages._framework import controls as ui
from pages._framework import datasource, state, studies
from pages._framework.common import placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.grid import grid
from pages._framework.page_frame import page_frame
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.studies import partial_note
from pages._framework.view import JobView, warm
from pages._server import fanout, limits
from varimp_core.csvtext import csv_filename, safe_csv
from varimp_core.exact.relevance import RelevanceResult, relevance_with_importances
from varimp_core.plots.selection import (make_pvalue_figure, make_relevance_figure,
                                         make_selected_figure, make_subspace_curves)
from varimp_core.plots.selection_captions import (RS_NOTE, null_sentences, pvalues_frame,
                                                  relevance_sentences, relevance_table_frame,
                                                  rs_data_words, rs_sentences, selected_sentence)
from varimp_core.problems.registry import get_problem
from varimp_core.studies.nulls import PermutationNull, permutation_null
from varimp_core.studies.rs_srs import (RUN_OPTIONS, SOURCES, SubspaceComparison, check_study,
                                        compare_subspace_methods, random_split, selection_run,
                                        study_source)
from varimp_core.studies.selection import SplitData, curve_statistics, madelon_split

dash.register_page(__name__, path="/selection", name="Selection", order=8,
                   title="varimp \u2014 Selection")

PREFIX, NULL, RS = "sel", "sel-null", "sel-rs"


RS_TASK = "varimp.selection_run"
MAX_SEEDS = 10
MAX_NULL_TOTAL = 100_000           # R x T of one permutation null
MAX_RS_TOTAL = 60_000              # seeds x 2 methods x T


def max_null_trees() -> int:
    """Largest T of the permutation forests: 1,000 or ``VARIMP_MAX_TREES`` if lower."""
    return limits.max_trees(1000)


def max_rs_trees() -> int:
    """Largest T of one RS/SRS run: 5,000 or ``VARIMP_MAX_TREES`` if lower."""
    return limits.max_trees(5000)


def max_permutations() -> int:
    """Largest R: 1,000 or ``VARIMP_MAX_REPLICATES`` if lower."""
    return limits.max_replicates(1000)


def caps_text() -> str:
    return (f"Limits on this server: R \u2264 {max_permutations():,} permutations of "
            f"T \u2264 {max_null_trees():,} trees (R \u00d7 T \u2264 {MAX_NULL_TOTAL:,}); "
            f"RS/SRS T \u2264 {max_rs_trees():,}, at most {MAX_SEEDS} seeds and "
            f"{MAX_RS_TOTAL:,} trees per study (seeds \u00d7 2 \u00d7 T); relevance classes "
            f"for at most {limits.max_exact_features()} inputs.")


def check_null_budget(R: int, T: int) -> None:
    if R * T > MAX_NULL_TOTAL:
        raise ValueError(f"R \u00d7 T = {R * T:,} trees is more than the limit of "
                         f"{MAX_NULL_TOTAL:,}; lower R or the number of trees.")


# -- computing --------------------------------------------------------------------------------
def relevance_view(data, tol: float | None) -> dict:
    """Relevance classes of ``data`` with each variable's K = 1 importance, or why none."""
    prepared = data.load()
    return {**relevance_with_importances(prepared.table, tol=tol,
                                         max_features=limits.max_exact_features()),
            "n": prepared.n_samples}


def rs_study(settings: Mapping[str, Any], data) -> dict:
    """The study's JSON settings (what a worker gets), checked by :func:`check_study`:
    the source, q, alpha, K, T, L, beta."""
    s = {k: v for k, v in settings.items() if k not in ("source", "show")}
    source, p = study_source(settings["source"], data.as_dict, data.n_features())
    check_study(s, n_features=p, max_trees=MAX_RS_TOTAL)
    return {**s, "source": source}


def _rs_data(source: Mapping[str, Any], seed: int) -> SplitData:
    """Train and test rows, names and the truth for one seed of the study."""
    if source["kind"] == "madelon":
        return madelon_split(source["irrelevant"], seed)      # the slides' 1,000 + 500 rows
    params, relevant = datasource.canonical_params(source["data"]), None
    if params["source"] == "problem":
        problem = get_problem(params["problem"])
        relevant = problem.relevant
        if params["sampling"] == "exact":
            params = dict(params, sampling="sample", n=problem.default_samples, seed=0)
    prepared = datasource.load_prepared(params)
    if prepared.task != "classification":
        raise ValueError("RS and SRS select features for a classification target; this data's "
                         "target is numeric (regression). Choose Madelon or another data set.")
    return random_split(prepared.X_numeric, prepared.y, seed, variables=prepared.variables,
                        relevant=relevant)


def rs_run(study: Mapping[str, Any], seed: int, method: str, *, progress=None,
           should_stop=None) -> dict:
    """One (seed, method) run of the study as JSON (:func:`selection_run`): a worker's task.

    ``progress(trees_done)``; ``should_stop()`` is checked before each tree.
    """
    return selection_run(_rs_data(study["source"], seed), method=method, random_state=seed,
                         keep_selection=seed == 0, **{k: study[k] for k in RUN_OPTIONS},
                         progress=None if progress is None else (lambda d, t: progress(d)),
                         should_stop=should_stop)


fanout.register(RS_TASK, rs_run)  # the workers import this page too: they know the task


def run_rs_study(study: Mapping[str, Any], progress) -> dict:
    """Both methods for each seed on the same split, on the workers or here, as JSON.

    Madelon: 1,000 + 500 fresh rows per seed; the page's data: a random
    two-thirds / one-third split of its rows.  Stopped, the result holds the
    runs that had started, each with its trees, and ``partial`` is set.
    """
    return compare_subspace_methods(
        rs_run, study, n_seeds=study["n_seeds"], mapper=fanout.task_mapper(RS_TASK),
        progress=lambda d, t, where: progress(d, t, f"{d:,} of {t:,} trees ({where})"),
        should_stop=progress.should_stop,
        partial=lambda c: progress.publish(dict(c.to_dict(), running=True))).to_dict()


# -- drawing ------------------------------------------------------------------------------------
def render_null(out: Mapping[str, Any], settings: Mapping[str, Any], data, **_) -> tuple:
    """Figures, relevance table and sentences of sections 1 and 2, and the partial note."""
    rel, pn = out["relevance"], PermutationNull.from_dict(out["null"])
    if out["partial"] and not pn.n_permutations and not out.get("running"):
        raise ValueError("Cancelled before any permutation finished.")
    if rel["relevance"] is not None:
        r = RelevanceResult.from_dict(rel["relevance"])
        rel_figure = make_relevance_figure(r, np.asarray(rel["importances"]),
                                           units=rel["units"])
        rows = relevance_table_frame(r).to_dict("records")
        rel_text = relevance_sentences(r, exact=rel["exact"], n=rel.get("n"),
                                       default_tol=settings["tol"] is None)
    else:
        rel_figure = placeholder_figure("No relevance classes for this data.")
        rows, rel_text = [], [rel["message"]]
    R = pn.n_permutations
    null_text = null_sentences(pn, n_estimators=settings["n_estimators"], n_rows=out.get("n"),
                               method=settings["method"], drawn_seed=settings["random_state"]
                               if out["n_samples"] is not None else None)
    if not R:  # drawn while the first permutation grows
        null_text = [null_text[0] + " The permutations of the target are running: the null's "
                     "95 % quantile and the p-values come with the first of them."]
    note = partial_note(R, settings["n_permutations"], "permutations",
                        running=bool(out.get("running"))) if out["partial"] else ""
    return (rel_figure, [html.P(t) for t in rel_text], rows, make_pvalue_figure(pn),
            [html.P(t) for t in null_text], note, "vi-notes" if note else "vi-hidden")


def rs_source_note(source: Any) -> str:
    """The sentence above the RS/SRS study when it does not run on the session's data."""
    if source == "data":
        return ""
    return ("This study runs on Madelon, a built-in benchmark (20 relevant features and "
            f"{int(source):,} irrelevant ones), not on your data: choose \u201cThe data "
            "above\u201d as its problem, under RS / SRS, to run it on the data chosen on the "
            "Data page.")


def rs_words(settings: Mapping[str, Any], data=None) -> str:
    """What an RS/SRS study ran on, for :func:`rs_sentences`."""
    exact = data is not None and studies.is_exact(data)  # rows are drawn first
    return rs_data_words(settings["source"], get_problem(data["problem"]).default_samples
                         if exact else None)


def render_rs(out: Mapping[str, Any], settings: Mapping[str, Any], data, **_) -> tuple:
    """Curves, the selected set of the shown method, sentences and the partial note."""
    result = SubspaceComparison.from_dict({k: v for k, v in out.items() if k != "running"})
    if result.partial and not len(result.curves):
        raise ValueError("Cancelled before the first checkpoint.")
    sels, show = result.selections, settings["show"]
    method = show if show in sels else next(iter(sels), None)
    selected_text = []
    if method is None:
        selected = placeholder_figure("No selection yet.")
    else:
        selected = make_selected_figure(sels[method])
        selected_text.append(selected_sentence(sels[method], method, beta=settings["beta"],
                                               min_sampled=settings["min_sampled"]))
    note = partial_note(result.trees_done, result.trees_asked, "trees",
                        running=bool(out.get("running"))) if result.partial else ""
    return (make_subspace_curves(curve_statistics(result.curves)),
            [html.P(t) for t in rs_sentences(
                result, data_words=rs_words(settings, data), alpha=settings["alpha"],
                subspace_size=settings["subspace_size"], max_features=settings["max_features"],
                min_sampled=settings["min_sampled"], beta=settings["beta"])], selected,
            [html.P(t) for t in selected_text], note, "vi-notes" if note else "vi-hidden")


# -- export ---------------------------------------------------------------------------------
def csv_text(what: str, out: Mapping[str, Any]) -> str:
    """CSV of ``"pvalues"`` (relevance classes joined when known), ``"curves"`` or ``"selected"``.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "pvalues":
        rel = out["relevance"]["relevance"]
        return safe_csv(pvalues_frame(PermutationNull.from_dict(out["null"]),
                                      None if rel is None else RelevanceResult.from_dict(rel)))
    result = SubspaceComparison.from_dict({k: v for k, v in out.items() if k != "running"})
    return safe_csv(result.curves if what == "curves" else result.selections_frame())


NULLS = ParamSet(NULL, [
    Param("tol", "Threshold tol (bits)", "float", None, low=0, high=1, blank="default",
          step="any", what="threshold tol",
          help="Blank on a sample (an upload, a drawn problem) runs the G-tests of "
               "conditional independence (level 0.05, Holm), and a variable they cannot "
               "settle is undecided; a value here counts a plug-in conditional information "
               "at or below tol as 0 instead. On an exact distribution blank is 1e-9 bits "
               "(rounding only)."),
    Param("n_permutations", "Permutations R", default=50, key="R", low=1,
          high=lambda c: max_permutations(), what="number of permutations R"),
    Param("n_estimators", "Trees", default=50, key="trees", low=1,
          high=lambda c: max_null_trees(), what="number of trees"),
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
    Param("n_estimators", "T", default=300, key="T", low=1, high=lambda c: max_rs_trees(),
          what="number of trees T"),
    Param("min_sampled", "L", default=5, key="L", low=1, high=100_000),
    Param("beta", "\u03b2", "float", 0.95, low=0.01, high=1, step="any",
          what="fraction \u03b2 of trees"),
    Param("n_seeds", "Seeds", default=1, key="seeds", low=1, high=MAX_SEEDS,
          what="number of seeds"),
    Param("show", "Selected set", "choice", "srs", what="shown method",
          choices=[("srs", "Selected set of SRS"), ("rs", "Selected set of RS")]),
])


def compute_null(settings, data: DataChoice, progress, data_store=None) -> dict:
    """Relevance classes of the data (section 1) and its permutation null (section 2)."""
    R, T, seed = settings["n_permutations"], settings["n_estimators"], settings["random_state"]
    check_null_budget(R, T)
    n = settings["n_samples"] if studies.is_exact(data) else None  # a sample is used as it is
    progress(text="Relevance classes\u2026")
    rel = studies.cached_study("sel-relevance", [data.as_dict, settings["tol"]],
                               lambda: relevance_view(data, settings["tol"]))

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
    s = rs_study(settings, data)
    return studies.cached_study("sel-rs", s, lambda: run_rs_study(s, progress))


DATA = ("data_store", Input("sel-data", "data"))  # choosing other data reruns the views
NULL_VIEW = JobView(
    NULL, NULLS, compute=compute_null, render=render_null, partial=True,
    data_store="sel-data", extra=[DATA], outputs=[
        ("sel-relevance-graph", "figure"), ("sel-relevance-text", "children"),
        ("sel-relevance-table", "rowData"), ("sel-pvalue-graph", "figure"),
        ("sel-pvalue-text", "children"), ("sel-null-partial", "children"),
        ("sel-null-partial", "className")],
    disable=["sel-null-fieldset", "sel-null-problem", "sel-download-pvalues"])
RS_VIEW = JobView(
    RS, RSS, compute=compute_rs, render=render_rs, partial=True, data_store="sel-data",
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
        return csv_text(what, out), csv_filename(
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
            html.P(caps_text(), id="sel-caps", className="vi-help")),
    ]
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
                    grid(
                        "sel-relevance-table", page_size=25,
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
                    html.P(rs_source_note(rss["source"]), id="sel-rs-source-note",
                           className="vi-notes" if rs_source_note(rss["source"]) else "vi-hidden"),
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


@callback(Output("sel-rs-source-note", "children"), Output("sel-rs-source-note", "className"),
          Input(RSS.id("source"), "value"), prevent_initial_call=True)
def show_rs_source(source):
    """The Madelon sentence follows the RS/SRS problem chosen."""
    try:
        text = rs_source_note(source)
    except (TypeError, ValueError):
        text = ""
    return text, "vi-notes" if text else "vi-hidden"
