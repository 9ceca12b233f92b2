"""Measures page: MDI, MDI-oob, permutation and corrected importances side by side;
the noisy-feature protocol and the MDI bias curves of Li et al. (2019).

What the Measures page's three views compute and show.

1. the importance measures of one scikit-learn forest side by side
   (:func:`compute_forest`: the core's ``ImportanceResult`` of each measure,
   cached one by one, and the exact MDI where the data has an exact
   distribution);
2. the noisy-feature protocol of Li et al. (2019), Table 1
   (:func:`compute_auc`), and
3. MDI and MDI-oob against min leaf size and depth, Figs 1-3
   (:func:`compute_bias`): both the core's ``StudyResult`` of the runs that
   finished (:func:`~varimp_core.studies.noisy_protocol.combine_runs`), each run
   cached on its own.

Each ``compute_*`` is a :class:`pages._framework.view.JobView`'s ``compute``: it stops
between its cached pieces when Cancel asks (the result is then ``partial``),
and with ``compute=False`` it only reads the cache (a download).  Figures come
from :mod:`varimp_core.plots.measures`; the units of the importances come from
the results.  :class:`~pages._framework.params.Ticks` is the page's checklist parameter (the measures, the
depth settings).
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Mapping, Sequence

import dash
import numpy as np
import pandas as pd
from dash import dcc, html

from pages._framework import controls as ui
from pages._framework import datasource, parts, results, state, studies
from pages._framework.common import frame_table, placeholder_figure
from pages._framework.grid import grid
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import (controls_panel, download_button, download_note, figure_config,
                                         page_frame)
from pages._framework.params import Param, ParamSet, Ticks, seed_param
from pages._framework.view import JobView, context_for, warm
from pages._server import cache, jobs, limits
from varimp_core.csvtext import csv_filename, data_name, safe_csv
from varimp_core.measures.inputs import resolve_max_features
from varimp_core.measures.suite import (DEFAULT_MEASURES, MEASURES, NEEDS_OOB, ON_MAIN_FOREST,
                                        check_measure_inputs, measures_frame, measures_or_refusals)
from varimp_core.plots.measures import (make_auc_figure, make_bias_curves, make_measures_figure,
                                        measure_label, scale_values)
from varimp_core.plots.measures_captions import auc_caption as study_auc_caption
from varimp_core.plots.measures_captions import bias_caption as study_bias_caption
from varimp_core.plots.measures_captions import (auc_table_frame, forest_caption, forest_warning,
                                                 measure_names)
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult
from varimp_core.studies.noisy_protocol import (StudyResult, combine_runs, mdi_bias_curves,
                                                noisy_feature_auc, paper_auc)

dash.register_page(__name__, path="/measures", name="Measures", order=4,
                   title="varimp \u2014 Measures")

PREFIX = "meas"
#: The page's own caps; the server's limits (:mod:`pages._server.limits`) may lower them.
MAX_TREES_UI, MAX_REPS, STUDY_MAX_TREES, BIAS_MAX_TREES, BIAS_MAX_REPS = 2000, 40, 500, 1000, 20


def _capped(limit, cap: int, what: str = "trees", before: str = "") -> dict:
    """``high`` and ``help`` of a count that the page caps at ``cap`` and the server may lower."""
    return {"high": lambda c: limit(cap),
            "help": lambda c: before + limits.at_most_help(limit(cap), what)}


STUDY_MAX_FEATURES = 10
STUDY_PROBLEMS = {"strobl-classification": "strobl:task=classification",
                  "strobl-regression": "strobl:task=regression", "madelon": "madelon"}
#: Grids of (min leaf size, max depth) of the bias curves; "full" is the paper's.
BIAS_GRIDS = {"coarse": ((1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50),
                         (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20)),
              "full": (tuple(range(1, 51)), tuple(range(1, 21)))}


# -- the data the measures use --------------------------------------------------------------
def rows_params(data: Mapping[str, Any]) -> dict:
    """Data parameters with rows: an exact distribution is replaced by a sample of it."""
    data = datasource.canonical_params(data)
    if data["source"] == "problem" and data["sampling"] == "exact":
        return datasource.canonical_params({**data, "sampling": "sample"})
    return data


def exact_params(data: Mapping[str, Any]) -> dict | None:
    """The exact distribution behind a built-in problem's data choice, or None."""
    data = datasource.canonical_params(data)
    if data["source"] != "problem":
        return None
    try:
        problem = get_problem(data["problem"])
    except ValueError:
        return None
    if not problem.has_exact or problem.task != "classification" \
            or len(problem.variables) > limits.max_exact_features():
        return None
    return datasource.canonical_params({**data, "sampling": "exact"})


def resolve_k(K: int | None, p: int) -> int:
    """K itself, or scikit-learn's ``"sqrt"`` default :math:`\\lfloor\\sqrt{p}\\rfloor`."""
    return resolve_max_features("sqrt" if K is None else int(K), p)


# -- 1. the measures side by side -------------------------------------------------------
def compute_forest(settings: Mapping[str, Any], data, progress, *,
                   compute: bool = True) -> dict:
    """The measures of one forest, each cached on its own (a cancelled job keeps what it
    finished; a new measure costs only itself), and the exact MDI where there is one.

    Parameters
    ----------
    settings : mapping
        The page's forest settings (scikit-learn's names, ``measures``, ``criterion``).
    data : DataChoice
        An exact distribution is sampled (:func:`rows_params`).
    progress : pages._server.jobs.Progress
    compute : bool, default=True
        False only reads the cache.

    Returns
    -------
    out : dict
        ``results`` (measure -> its ``ImportanceResult``, each a part of its own: the
        page's cached result refers to it, never a copy), ``exact`` (the exact MDI's
        ``ImportanceResult``, a shared part, or None),
        ``missing`` (not computed: cancelled), ``skipped`` (OOB measures without the
        bootstrap), ``refused`` (undefined on this forest: :func:`measures_or_refusals`), ``notes``,
        ``p``, ``K``, ``rows`` and ``partial``.
    """
    s, rows = settings, rows_params(data.as_dict)
    load = results.make_loader(rows, progress)
    p = data.n_features() or len(load().variables)
    k = resolve_k(s["max_features"], p)
    skipped = [m for m in s["measures"] if m in NEEDS_OOB and not s["bootstrap"]]
    wanted = [m for m in s["measures"] if m not in skipped]
    if not wanted:
        raise ValueError(f"{measure_names(skipped)} need{'s' if len(skipped) == 1 else ''} "
                         "out-of-bag rows, and without the bootstrap every tree sees every row. "
                         "Turn Bootstrap on, or tick another measure.")
    fit = {n: s[n] for n in ("kind", "n_estimators", "min_samples_leaf", "max_depth",
                             "bootstrap", "random_state")}
    # Each measure's result is a part of its own (stored once; the page's result refers to
    # it), its refusal a sentence beside it.
    core = {m: {**fit, "criterion": s["criterion"], "max_features": k, "measure": m}
            for m in wanted}
    refusals = {m: cache.key_for("meas-refused", rows, core[m]) for m in wanted}

    def view(notes, exact, **more) -> dict:
        missing = [m for m in wanted if found[m] is None]
        return {"results": {m: found[m] for m in wanted if isinstance(found[m], ImportanceResult)},
                "exact": exact, "missing": missing,  # parts, by their keys
                "skipped": skipped, "refused": [m for m in wanted if isinstance(found[m], dict)],
                "notes": notes, "p": p, "K": k, "rows": rows, "partial": bool(missing), **more}

    found = {m: parts.peek("measure", rows, core[m]) for m in wanted}
    found.update({m: cache.get_json(refusals[m]) for m in wanted if found[m] is None})
    if compute and None in found.values():
        prepared = load()
        check_measure_inputs(prepared.X_numeric, task=prepared.task, target=prepared.target,
                             variables=prepared.variables, criterion=s["criterion"])
        todo = [m for m in wanted if found[m] is None]
        batches = [b for b in ([m for m in todo if m in ON_MAIN_FOREST],
                               *([m] for m in todo if m not in ON_MAIN_FOREST)) if b]
        for i, batch in enumerate(batches):
            if progress.should_stop():
                break
            text = f"Computing {measure_names(batch)}\u2026"
            progress(i, len(batches) + 1, text)
            out = measures_or_refusals(
                prepared.X_numeric, prepared.y, task=prepared.task, measures=batch,
                variables=list(prepared.variables), problem=prepared.source, max_features=k,
                criterion=None if s["criterion"] == "auto" else s["criterion"], **fit,
                progress=lambda done, total, i=i, text=text: progress(
                    round(i + done / total, 3), len(batches) + 1, text))
            for m, r in out.items():  # a refusal (a sentence) is kept beside the results
                if isinstance(r, str):
                    found[m] = {"refused": r}
                    cache.put_json(refusals[m], found[m])
                else:
                    found[m] = parts.put("measure", rows, core[m], r)
            progress.publish(view([], None, running=True))
    missing = [m for m in wanted if found[m] is None]
    notes, exact, ep = [], None, exact_params(data.as_dict)
    if rows != data.as_dict:
        n = get_problem(rows["problem"]).default_samples
        notes.append(f"The measures need rows, so they use N = {n:,} rows drawn from the exact "
                     f"distribution (seed {rows['seed']}); choose a sample on the Data page to "
                     "change them.")
    if ep is not None:
        kwargs = {"method": "exact", "max_features": k, "max_depth": s["max_depth"],
                  "k_semantics": "sklearn",
                  "criterion": "gini" if s["criterion"] == "auto" else s["criterion"]}
        try:
            if compute and not missing:
                progress(0, None, "Computing the exact MDI\u2026")
                exact = results.cached_importances(ep, kwargs, results.make_loader(ep))
            else:
                exact = results.peek_importances(ep, kwargs)
        except ValueError as exc:  # the measures still show, with a sentence
            notes.append(f"No exact values are drawn: {exc}")
    return view(notes, exact)


def view_from_dict(out: Mapping[str, Any]) -> dict:
    """The side-by-side result with its core results: each measure's rebuilt by the core's
    ``from_dict``, the exact MDI as computed (or decoded by JobView), or rebuilt."""
    return {**out, "results": {m: d if isinstance(d, ImportanceResult) else
                               ImportanceResult.from_dict(d) for m, d in out["results"].items()},
            "exact": out["exact"] if out["exact"] is None or isinstance(
                out["exact"], ImportanceResult) else ImportanceResult.from_dict(out["exact"])}


def measures_note(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """Sentences under the figure (:func:`forest_caption`)."""
    return forest_caption(view["results"], view["exact"], K=view["K"], p=view["p"],
                          default_k=settings["max_features"] is None, notes=view["notes"],
                          exact_possible=exact_params(view["rows"]) is not None)


def measures_warning(view: Mapping[str, Any]) -> str:
    """A sentence about measures left out (:func:`forest_warning`) or not finished: not
    computed before Cancel, or (``running``) not computed yet while the job goes on."""
    out = [forest_warning(skipped=view["skipped"], refused=view.get("refused", ()))]
    missing, running = view["missing"], bool(view.get("running"))
    if missing:
        out.append(f"{'Still computing' if running else 'Cancelled before'} "
                   f"{measure_names(missing)}{'' if running else ' finished'}: the figure "
                   "and the table show the measures that did.")
    return " ".join(t for t in out if t)


def _with_exact(view: Mapping[str, Any], name: str) -> dict:
    """The view's results, then the exact MDI under ``name`` where there is one."""
    return {**view["results"], **({name: view["exact"]} if view["exact"] is not None else {})}


def measures_table(view: Mapping[str, Any]) -> tuple[list, list]:
    """Grid columns (each naming its units) and rows: one row per variable (raw)."""
    shown = _with_exact(view, "exact")
    first = next(iter(shown.values()), None)
    df = pd.DataFrame({"Variable": list(first.variables if first is not None else ()), **{
        f"{'Exact MDI' if m == 'exact' else measure_label(m)} ({r.units})": r.importances
        for m, r in shown.items()}})
    return frame_table(df, default="exp4")


def render_forest(out: Mapping[str, Any], settings: Mapping[str, Any], data=None) -> tuple:
    """Figure, table columns and rows, note, warning and its class of a computed view."""
    view = view_from_dict(out)
    if not view["results"]:
        raise ValueError(measures_warning(view) if view.get("refused")
                         else "No measure finished before the job was cancelled.")
    figure = make_measures_figure(view["results"], view["exact"], scale=settings["scale"],
                                  height=None)  # the page sizes it
    cols, rows = measures_table(view)
    warning = measures_warning(view)
    return (figure, cols, rows, measures_note(view, settings), warning,
            "vi-notes" if warning else "vi-hidden")


def measures_csv(out: Mapping[str, Any], settings: Mapping[str, Any], data) -> tuple[str, str]:
    """Tidy CSV (:func:`measures_frame`, with ``units``; ``scaled``: max |value| = 1 per
    measure; the exact rows) and its file name."""
    results = _with_exact(view_from_dict(out), "exact_mdi")
    df = measures_frame(results)
    df["scaled"] = np.concatenate([scale_values(r.importances)[0] for r in results.values()])
    return safe_csv(df), csv_filename("measures", None, data_name(data), name="side-by-side")


# -- 2. the noisy-feature protocol (and the studies' pieces) -------------------------
def _runs(units: Sequence[tuple], key, run, progress, compute: bool, **more) -> dict:
    """The study of the units that finished (the core's :func:`combine_runs`), each unit's
    StudyResult cached, else ``run(i, *unit)`` (when ``compute`` and not cancelled) and cached;
    with ``done`` of ``total`` units, ``partial`` and ``more``."""
    finished = []
    for i, unit in enumerate(units):
        part = cache.get_json(key(*unit))
        if part is None and compute and not progress.should_stop():
            # get_or_compute: two users asking for the same run wait for one computation
            part = cache.get_or_compute(key(*unit), lambda: run(i, *unit).to_dict(),
                                        on_wait=lambda: progress(i, len(units)))
        if part is not None:
            finished.append(StudyResult.from_dict(part))
            if compute and i + 1 < len(units):  # drawn while the next units run
                progress.publish(dict(_study(finished, len(units), **more), running=True))
    return _study(finished, len(units), **more)


def _study(runs: Sequence[StudyResult], total: int, **more) -> dict:
    partial = len(runs) < total
    return {"study": combine_runs(runs, cancelled=partial).to_dict() if runs else None,
            "done": len(runs), "total": total, "partial": partial, **more}


def compute_auc(settings: Mapping[str, Any], data, progress, *, compute: bool = True) -> dict:
    """Table 1's AUC protocol (:func:`noisy_feature_auc`), one cached run per (depth setting,
    seed), seeds outermost so that a cancelled study stays balanced.

    Returns ``study`` (:func:`combine_runs`: scores in depth setting, then seed order),
    ``done``, ``total``, ``partial``, ``spec`` and ``max_features``.
    """
    s, spec = settings, STUDY_PROBLEMS[settings["problem"]]
    units = [(d, seed) for seed in range(s["n_repeats"]) for d in s["depth_settings"]]

    def run(i, depth, seed):
        progress(i, len(units), f"Repetition {seed + 1} of {s['n_repeats']}, {depth} trees")
        return noisy_feature_auc(problems=[spec], depth_settings=[depth], seeds=[seed],
                                 n_estimators=s["n_estimators"], max_features=STUDY_MAX_FEATURES)

    return _runs(units, lambda d, seed: cache.key_for(
        "meas-auc-run", spec, d, seed, s["n_estimators"], STUDY_MAX_FEATURES,
        list(DEFAULT_MEASURES)), run, progress, compute, spec=spec,
        max_features=STUDY_MAX_FEATURES)


def _finished(out: Mapping[str, Any], cancelled: str) -> StudyResult:
    """The study of the runs that finished (``cancelled`` says there are none)."""
    if not out["done"]:
        raise ValueError(cancelled)
    return StudyResult.from_dict(out["study"])


def cancelled_caption(text: str, *, done: int, total: int, what: str,
                      running: bool = False) -> str:
    """``text``, after how far a cancelled (or a still ``running``) study got (``done`` of
    ``total`` ``what``)."""
    if done < total:
        head = "So far" if running else "Cancelled after"
        text = f"{head} {done} of {total} {what}{'; more are coming' if running else ''}. " + text
    return text


def auc_caption(problem: str, *, n_estimators: int, max_features: int, n_repeats: int,
                done: int, total: int, running: bool = False) -> str:
    """What the AUC study is (:func:`~varimp_core.plots.measures_captions.auc_caption`) and
    how far its job got."""
    return cancelled_caption(study_auc_caption(problem, n_estimators=n_estimators,
                                               max_features=max_features, n_repeats=n_repeats),
                             done=done, total=total, running=running,
                             what="runs: the table and the plot show those")


def bias_caption(*, n_samples: int, n_estimators: int, n_repeats: int, done: int,
                 total: int, running: bool = False) -> str:
    """What the MDI bias curves show
    (:func:`~varimp_core.plots.measures_captions.bias_caption`) and how far their job got."""
    return cancelled_caption(study_bias_caption(n_samples=n_samples, n_estimators=n_estimators,
                                                n_repeats=n_repeats),
                             done=done, total=total, running=running,
                             what="forests: the curves show those")


def render_auc(out: Mapping[str, Any], settings: Mapping[str, Any], data=None) -> tuple:
    """Figure, table columns and rows, and note of a computed (or cancelled) study."""
    study = _finished(out, "Cancelled before the first repetition finished.")
    return (make_auc_figure(study.scores, height=None), *frame_table(auc_table_frame(
        study.summary)), auc_caption(out["spec"], n_estimators=settings["n_estimators"],
                                     max_features=out["max_features"], done=out["done"],
                                     n_repeats=settings["n_repeats"], total=out["total"],
                                     running=bool(out.get("running"))))


def auc_csv(out: Mapping[str, Any], settings: Mapping[str, Any], data=None) -> tuple[str, str]:
    """Tidy CSV of the AUC scores with the paper's value on each row (blank when none)."""
    scores = _finished(out, "No repetition has finished.").scores
    return (safe_csv(scores.assign(paper_auc=paper_auc(scores))),
            csv_filename("measures", name=f"auc-{settings['problem']}"))


# -- 3. MDI against min leaf size and depth ---------------------------------------------
def bias_units(settings: Mapping[str, Any]) -> list[tuple[int, str, int]]:
    """(seed, parameter, value) of each forest; the two grids interleaved, so that a
    cancelled run draws both curves."""
    leaf, depth = BIAS_GRIDS[settings["grid"]]
    pairs = [u for pair in zip_longest(leaf, depth)
             for u in zip(("min_samples_leaf", "max_depth"), pair) if u[1] is not None]
    return [(seed, par, v) for seed in range(settings["n_repeats"]) for par, v in pairs]


def compute_bias(settings: Mapping[str, Any], data, progress, *, compute: bool = True) -> dict:
    """MDI and MDI-oob against min leaf size and depth (:func:`mdi_bias_curves`), one cached
    forest per point of :func:`bias_units`: ``study``, ``done``, ``total``, ``partial``."""
    s, units = settings, bias_units(settings)

    def run(i, seed, par, value):
        progress(i, len(units), f"Forest {i + 1} of {len(units)}")
        return mdi_bias_curves(min_samples_leaf=[value] if par == "min_samples_leaf" else [],
                               max_depth=[value] if par == "max_depth" else [],
                               n_samples=s["n_samples"], n_estimators=s["n_estimators"],
                               seeds=[seed])

    return _runs(units, lambda seed, par, value: cache.key_for(
        "meas-bias-forest", s["n_samples"], s["n_estimators"], seed, par, value), run,
        progress, compute)


def render_bias(out: Mapping[str, Any], settings: Mapping[str, Any], data=None) -> tuple:
    """Figure (its axes name the units of the study's result) and note of computed (or
    cancelled) curves."""
    study = _finished(out, "Cancelled before the first forest finished.")
    return make_bias_curves(study, height=None), bias_caption(
        n_samples=settings["n_samples"], n_estimators=settings["n_estimators"],
        n_repeats=settings["n_repeats"], done=out["done"], total=out["total"],
        running=bool(out.get("running")))


def bias_csv(out: Mapping[str, Any], settings=None, data=None) -> tuple[str, str]:
    """CSV of the importance of every variable, forest and measure, and its file name."""
    return (safe_csv(_finished(out, "No forest has finished.").scores),
            csv_filename("measures", name="bias-curves"))


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
    Ticks("measures", "Measures", default=list(DEFAULT_MEASURES),
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
    Ticks("depth_settings", "Trees", default=["shallow", "deep"], key="study_depth",
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
    PREFIX, FOREST, compute=compute_forest, render=render_forest,
    outputs=[("meas-graph", "figure"), ("meas-table", "columnDefs"), ("meas-table", "rowData"),
             ("meas-note", "children"), ("meas-warning", "children"),
             ("meas-warning", "className")],
    data_store="meas-data", disable=["meas-fieldset", "meas-download-button"], partial=True,
    what="The figure", saved=_saved(compute_forest))
# The studies draw their own data: no data store, so their results are keyed by their settings.
AUC_VIEW = JobView(f"{PREFIX}-auc", STUDY, compute=compute_auc, render=render_auc,
                   outputs=[("meas-auc-graph", "figure"), ("meas-auc-table", "columnDefs"),
                            ("meas-auc-table", "rowData"), ("meas-auc-note", "children")],
                   data_store=None, partial=True, saved=_saved(compute_auc),
                   disable=["meas-auc-fieldset", "meas-auc-download-button"])
BIAS_VIEW = JobView(f"{PREFIX}-bias", BIAS, compute=compute_bias,
                    render=render_bias, data_store=None, partial=True,
                    saved=_saved(compute_bias),
                    outputs=[("meas-bias-graph", "figure"), ("meas-bias-note", "children")],
                    disable=["meas-bias-fieldset", "meas-bias-download-button"])
VIEWS = (FOREST_VIEW, AUC_VIEW, BIAS_VIEW)
for _view in VIEWS:
    _view.register()
studies.register_url("meas-query", "meas-data", *SECTIONS)
state.register_url_sync(PREFIX)


# -- the page -------------------------------------------------------------------------------
_H2 = {"fontSize": "1.35rem", "margin": "2.2rem 0 0.3rem"}


def _graph(id_, height, name):
    return dcc.Graph(id=id_, className="vi-figure", style={"height": height},
                     figure=placeholder_figure(), config=figure_config(name))


def _button(view):
    return html.Div([download_button(view.prefix), download_note(view.prefix)])


def _section(heading, view, controls, *cards) -> list:
    """A study's section: its heading, then its controls beside its status and cards."""
    return [html.H2(heading, style=_H2), html.Div(className="vi-layout", children=[
        controls_panel(controls),
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
            ui.card("Table", grid("meas-table", page_size=20),
                    _button(FOREST_VIEW))])
    # Three sections: the frame's controls and content are the first; the studies follow.
    frame.children.insert(-1, html.H2("1 \u00b7 The measures side by side", style=_H2))
    frame.children += [
        *_section("2 \u00b7 Telling noisy from relevant features (Li et al., Table 1)", AUC_VIEW,
                  html.Fieldset(ui.card("Protocol", *st.values()), id="meas-auc-fieldset",
                                className="vi-fieldset"),
                  ui.card("AUC per measure",
                          grid("meas-auc-table"),
                          _graph("meas-auc-graph", "440px", "measures-auc"),
                          html.P(id="meas-auc-note", className="vi-help"), _button(AUC_VIEW))),
        *_section("3 \u00b7 MDI against min leaf size and depth (Li et al., Figs 1\u20133)",
                  BIAS_VIEW, html.Fieldset(ui.card("Simulation", *bi.values()),
                                           id="meas-bias-fieldset", className="vi-fieldset"),
                  ui.card("Importance as the trees deepen",
                          _graph("meas-bias-graph", "580px", "measures-bias"),
                          html.P(id="meas-bias-note", className="vi-help"), _button(BIAS_VIEW)))]
    return frame


for _view, _make in zip(VIEWS, (measures_csv, auc_csv, bias_csv)):
    _view.register_downloads({f"{_view.prefix}-download-button": _make})
#: A first visit finds the paper's studies (and the default data's measures) computed.
WARM_RUNS = [(AUC_VIEW, STUDY.defaults(), None), (BIAS_VIEW, BIAS.defaults(), None),
             (FOREST_VIEW, FOREST.defaults(), DataChoice.from_page({})[0].to_store())]
WARMING = warm("measures", WARM_RUNS)
