"""The RS/SRS study of the Selection page: Random Subspace against Sequential RS.

Part of :mod:`pages._ui.selection_logic` (which re-exports every public name
here): :func:`varimp_core.selection.subspace_selection` on Madelon-like data
or on the current data, for each seed and both methods; the (seed, method)
runs fan out to the Celery workers when there are some
(:mod:`pages._ui.fanout_selection`).  The study is cached server-side as
JSON; a cancelled one keeps the trees it grew in a short-lived entry.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.problems.registry import get_problem
from varimp_core.studies.selection import subspace_selection

from . import cache, datasource, fanout_selection
from .common import Stopped, cached_view, clear_stop, keep_view, stop_requested
from .selection_results import _floats, selection_to_dict

__all__ = ["rs_key", "rs_run", "compute_rs", "run_rs"]

_N_TRAIN, _N_TEST = 1000, 500          # the slides' Madelon split


def rs_key(settings: Mapping[str, Any]) -> str:
    return cache.key_for("sel-rs", dict(settings))


def _rs_data(settings: Mapping[str, Any], seed: int):
    """Train and test rows, names and the truth for one seed of the study."""
    src = settings["source"]
    if src["kind"] == "madelon":
        prob = get_problem(f"madelon:irrelevant={src['irrelevant']}")
        df = prob.sample(_N_TRAIN + _N_TEST, random_state=seed)       # as madelon_curves
        X = df[list(prob.variables)].to_numpy()
        y = df[prob.target].to_numpy()
        return (X[:_N_TRAIN], y[:_N_TRAIN], X[_N_TRAIN:], y[_N_TRAIN:], prob.variables,
                prob.relevant)
    params = datasource.canonical_params(src["data"])
    relevant = None
    if params["source"] == "problem":
        problem = get_problem(params["problem"])
        relevant = problem.relevant
        if params["sampling"] == "exact":
            params = dict(params, sampling="sample", n=problem.default_samples, seed=0)
    prepared = datasource.load_prepared(params)
    if prepared.task != "classification":
        raise ValueError("RS and SRS select features for a classification target; this data's "
                         "target is numeric (regression). Choose Madelon or another data set.")
    X, y = prepared.X_numeric, prepared.y
    n = X.shape[0]
    if n < 6:
        raise ValueError(f"This data has {n} rows; RS/SRS needs at least 6 (two thirds to "
                         "train, one third to test).")
    order = np.random.default_rng(seed).permutation(n)
    cut = (2 * n) // 3
    tr, te = order[:cut], order[cut:]
    return X[tr], y[tr], X[te], y[te], prepared.variables, relevant


def rs_run(settings: Mapping[str, Any], seed: int, method: str, *, progress=None,
           should_stop=None) -> dict:
    """One (seed, method) run of the study as JSON: what a Celery worker returns.

    ``progress(trees_done)``; ``should_stop()`` is checked before each tree.
    Returns ``curve`` (the run's curve columns, NaN as None), ``selection``
    (:func:`selection_to_dict` for seed 0, else None), ``n_estimators``,
    ``stopped``, ``p`` and ``truth_known``.
    """
    Xtr, ytr, Xte, yte, names, relevant = _rs_data(settings, seed)
    res = subspace_selection(
        Xtr, ytr, method=method, subspace_size=settings["q"], alpha=settings["alpha"],
        max_features=settings["K"], n_estimators=settings["T"], min_sampled=settings["L"],
        beta=settings["beta"], random_state=seed, variables=names, relevant=relevant,
        X_test=Xte, y_test=yte, progress=None if progress is None else
        (lambda d, t: progress(d)), should_stop=should_stop)
    return {"curve": {c: _floats(res.curve[c]) for c in res.curve.columns},
            "selection": selection_to_dict(res) if seed == 0 else None,
            "n_estimators": int(res.n_estimators), "stopped": bool(res.stopped),
            "p": len(names), "truth_known": relevant is not None}


def _local_runs(settings, runs, progress, should_stop):
    """The runs one after the other in this process, up to the first one stopped."""
    for i, (seed, method) in enumerate(runs):
        run = rs_run(settings, seed, method, progress=lambda d, i=i: progress(i, d),
                     should_stop=should_stop)
        yield i, run
        if run["stopped"]:
            return


def compute_rs(settings: Mapping[str, Any], *, progress=None, should_stop=None) -> dict:
    """The RS/SRS study (cached), or its partial view when stopped.

    For each seed, both methods run on the same train/test split (Madelon:
    1,000 + 500 fresh rows, as :func:`varimp_core.selection.madelon_curves`;
    the current data: a random two-thirds / one-third split of its rows).
    With ``REDIS_URL`` set the (seed, method) runs fan out to the Celery
    workers (:mod:`pages._ui.fanout_selection`), with the same numbers;
    otherwise they run one after the other here.

    Returns
    -------
    view : dict
        ``curves`` (records, the columns of ``madelon_curves``),
        ``selections`` (``{"rs": ..., "srs": ...}``: the first seed's
        :func:`selection_to_dict`), ``truth_known``, ``p``, ``partial``.
        Stopped, it holds the runs that had started, each with its trees.
    """
    settings = dict(settings)
    T, seeds = settings["T"], settings["seeds"]
    total = 2 * T * seeds
    runs = [(seed, method) for seed in range(seeds) for method in ("rs", "srs")]

    def compute() -> dict:
        results, trees = {}, {}
        mapper = fanout_selection.run_mapper()

        def report(i, d):
            trees[i] = int(d)
            if progress is not None:
                done = sum(trees.values())
                where = (f"seed {runs[i][0]}, {runs[i][1].upper()}" if mapper is None else
                         f"{len(results)} of {len(runs)} runs done")
                progress(done, total, f"{done:,} of {total:,} trees ({where})")

        source = _local_runs(settings, runs, report, should_stop) if mapper is None else \
            mapper(settings, runs, progress=report, should_stop=should_stop)
        for i, run in source:
            results[i] = run
            report(i, run["n_estimators"])
        frames, selections = [], {}
        for i in sorted(results):
            (seed, method), run = runs[i], results[i]
            curve = pd.DataFrame({c: [np.nan if v is None else v for v in vals]
                                  for c, vals in run["curve"].items()})
            curve.insert(0, "seed", seed)
            curve.insert(0, "p", run["p"])
            curve.insert(0, "method", method)
            frames.append(curve)
            if run["selection"] is not None:
                selections[method] = run["selection"]
        stopped = len(results) < len(runs) or any(r["stopped"] for r in results.values())
        last = results[max(results)] if results else {"p": None, "truth_known": False}
        cols = ["method", "p", "seed", "n_trees", "auprc", "accuracy", "n_selected",
                "precision", "recall"]
        df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
        df = df.reindex(columns=cols)
        view = {"curves": {c: (_floats(df[c]) if c != "method" else df[c].tolist())
                           for c in cols},
                "selections": selections, "truth_known": last["truth_known"], "p": last["p"],
                "trees_done": sum(r["n_estimators"] for r in results.values()),
                "trees_asked": total}
        if stopped:
            raise Stopped(view)
        return view

    return cached_view(rs_key(settings), compute)


def run_rs(settings: Mapping[str, Any], *, instance: str, progress=None) -> dict:
    """The RS/SRS study; the page's current value and status."""
    clear_stop(instance, "sel-rs")
    view = compute_rs(settings, progress=progress,
                      should_stop=lambda: stop_requested(instance, "sel-rs"))
    key, partial = keep_view(view, rs_key(settings), instance, "sel-partial")
    if partial and not view["curves"]["n_trees"]:
        return {"current": None, "status": "Cancelled before the first checkpoint; the page "
                                           "shows the last finished result."}
    current = {"key": key, "partial": partial, "settings": dict(settings)}
    if partial:
        status = (f"Cancelled after {view['trees_done']:,} of {view['trees_asked']:,} trees; "
                  "the curves show these.")
    else:
        status = f"{view['trees_asked']:,} trees grown ({settings['seeds']} seed(s) \u00d7 RS " \
                 f"and SRS \u00d7 T = {settings['T']:,})."
    return {"current": current, "status": status}
