"""The Selection page's study: relevance, the permutation null, RS against SRS, and drawing.

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
workers (:mod:`pages._server.fanout`), with the numbers of a local run.  The
Selection page (:mod:`pages.selection`) is this module's only user.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
from dash import html

from varimp_core.csvtext import safe_csv
from varimp_core.exact.relevance import RelevanceResult, relevance_with_importances
from varimp_core.studies.replicates import partial_note
from varimp_core.plots.selection import (make_pvalue_figure, make_relevance_figure,
                                         make_selected_figure, make_subspace_curves)
from varimp_core.plots.selection_captions import (null_sentences, pvalues_frame,
                                                  relevance_sentences, relevance_table_frame,
                                                  rs_data_words, rs_sentences, selected_sentence)
from varimp_core.problems.registry import get_problem
from varimp_core.studies.nulls import PermutationNull
from varimp_core.studies.rs_srs import (RUN_OPTIONS, SubspaceComparison, check_study,
                                        compare_subspace_methods, random_split, selection_run,
                                        study_source)
from varimp_core.studies.selection import SplitData, curve_statistics, madelon_split

from pages._server import fanout

from pages._framework import datasource, studies

from pages._server import limits
from pages._framework.common import placeholder_figure

#: Name of the fan-out task computing one (seed, method) run of an RS/SRS study.
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
    note = partial_note(R, settings["n_permutations"], "permutations",
                        running=bool(out.get("running"))) if out["partial"] else ""
    return (rel_figure, [html.P(t) for t in rel_text], rows, make_pvalue_figure(pn),
            [html.P(t) for t in null_text], note, "vi-notes" if note else "vi-hidden")


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
