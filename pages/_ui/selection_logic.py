"""Logic behind the Selection page's callbacks, as plain functions tests can call.

Three views of "which variables matter" (Geurts 2016, parts 1 and 3):

1. relevance classes, degrees and a Markov boundary of the current data
   (:func:`varimp_core.relevance.relevance`; exact on an exact distribution,
   plug-in with a threshold ``tol`` on a sample), with each variable's K = 1
   infinite-forest importance (:func:`varimp_core.api.compute_importances`);
2. permutation-null p-values (:func:`varimp_core.nulls.permutation_null`);
3. Random Subspace against Sequential Random Subspace
   (:func:`varimp_core.selection.subspace_selection`) on Madelon-like data or
   on the current data: AUPRC and accuracy curves and the selected set.

Results are cached server-side as JSON keyed by a hash of the settings.  Cancel
sets a stop flag (shared with the Distributions page's helpers) that the core
checks between permutations or trees, so a cancelled run keeps what it
finished, in a short-lived entry of its own.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.api import compute_importances
from varimp_core.nulls import permutation_null
from varimp_core.plots.selection import (make_pvalue_figure, make_relevance_figure,
                                         make_selected_figure, make_subspace_curves)
from varimp_core.problems import get_problem
from varimp_core.relevance import RelevanceResult, relevance
from varimp_core.selection import MADELON_IRRELEVANT, SubspaceSelection, subspace_selection

from . import cache, datasource, fanout_selection, limits
from .common import (Stopped, cached_view, clear_stop, keep_view, neutralise_cell,
                     placeholder_figure, request_stop, stop_requested)
from .distributions_logic import (METHOD_OPTIONS, data_for_choice, problem_options,
                                  result_from_dict, result_to_dict)
from .importances_logic import data_feature_count, data_params_for_page
from .state import Param, choice_parser, encode_query, float_parser, int_parser, parse_query

__all__ = [
    "PREFIX", "NULL_PREFIX", "RS_PREFIX", "DEFAULTS", "RS_CHOICES", "METHOD_OPTIONS",
    "max_null_trees", "max_rs_trees", "max_seeds", "caps_text", "page_params", "initial_state",
    "null_settings", "rs_settings", "page_query", "query_from_controls", "null_key", "rs_key",
    "compute_relevance", "compute_null", "compute_rs", "run_null", "run_rs", "render_null",
    "render_rs", "relevance_to_dict", "relevance_from_dict", "selection_to_dict",
    "selection_from_dict", "csv_text", "csv_filename", "placeholder_figure", "request_stop",
    "HONEST_NOTE",
]

PREFIX = "sel"
NULL_PREFIX = "sel-null"
RS_PREFIX = "sel-rs"
DEFAULTS = {"tol": None, "R": 50, "trees": 50, "method": "forest", "null_seed": 0, "N": 500,
            "rs": "480", "q": 50, "alpha": 0.5, "K": None, "T": 300, "L": 5, "beta": 0.95,
            "seeds": 1, "show": "srs"}
#: Problems of the RS/SRS section: Madelon with k irrelevant features, or the page's data.
RS_CHOICES = tuple(str(k) for k in MADELON_IRRELEVANT) + ("data",)
_N_TRAIN, _N_TEST = 1000, 500          # the slides' Madelon split
_MAX_SEEDS = 10
_MAX_NULL_TOTAL = 100_000              # R x T of one permutation null
_MAX_RS_TOTAL = 60_000                 # seeds x 2 methods x T

HONEST_NOTE = ("What the numbers show: on the slides' Madelon protocol (Geurts 2016) SRS ranks "
               "and predicts better than RS, more so as q/p shrinks. Over 3 seeds at T = 2,000, "
               "AUPRC goes from 0.90 (RS) to 1.00 (SRS) with 480 irrelevant features and from "
               "0.39 to 0.64 with 5,480; test accuracy from 0.69 to 0.82 and from 0.53 to 0.74. "
               "SRS needs trees to find its first features, so a short run of one seed, like the "
               "default T = 300, can show a smaller gain. The generator follows Guyon's design "
               "(randomly labelled hypercube vertices); it is not the original Madelon data.")


# -- caps ------------------------------------------------------------------------------
def max_null_trees() -> int:
    """Largest T of the permutation forests: 1,000 or ``VARIMP_MAX_TREES`` if lower."""
    return limits.max_trees(1000)


def max_rs_trees() -> int:
    """Largest T of one RS/SRS run: 5,000 or ``VARIMP_MAX_TREES`` if lower."""
    return limits.max_trees(5000)


def max_permutations() -> int:
    """Largest R: 1,000 or ``VARIMP_MAX_REPLICATES`` if lower."""
    return limits.max_replicates(1000)


def max_seeds() -> int:
    return _MAX_SEEDS


def caps_text() -> str:
    return (f"Limits on this server: R \u2264 {max_permutations():,} permutations of "
            f"T \u2264 {max_null_trees():,} trees (R \u00d7 T \u2264 {_MAX_NULL_TOTAL:,}); "
            f"RS/SRS T \u2264 {max_rs_trees():,}, at most {_MAX_SEEDS} seeds and "
            f"{_MAX_RS_TOTAL:,} trees per study (seeds \u00d7 2 \u00d7 T); relevance classes "
            f"for at most {limits.max_exact_features()} inputs.")


# -- URL parameters -------------------------------------------------------------------
def _tol(text) -> float:
    return float_parser(0.0, 1.0, what="threshold tol")(text)


def page_params() -> tuple[Param, ...]:
    """URL parameters of the page (after the data parameters), with today's caps."""
    return (
        Param("tol", None, _tol, "threshold tol"),
        Param("R", DEFAULTS["R"], int_parser(1, max_permutations(), what="number of "
                                             "permutations R"), "number of permutations R"),
        Param("trees", DEFAULTS["trees"], int_parser(1, max_null_trees(), what="number of "
                                                     "trees"), "number of trees"),
        Param("method", DEFAULTS["method"],
              choice_parser([o["value"] for o in METHOD_OPTIONS], what="method"), "method"),
        Param("null_seed", 0, int_parser(0, 2**32 - 1, what="seed"), "seed"),
        Param("N", DEFAULTS["N"], int_parser(2, datasource.MAX_SAMPLES, what="sample size N"),
              "sample size N"),
        Param("rs", DEFAULTS["rs"], choice_parser(RS_CHOICES, what="RS/SRS problem"),
              "RS/SRS problem"),
        Param("q", DEFAULTS["q"], int_parser(1, 100_000, what="subspace size q"),
              "subspace size q"),
        Param("alpha", DEFAULTS["alpha"], float_parser(0.0, 1.0, what="\u03b1"), "\u03b1"),
        Param("K", None, int_parser(1, 100_000, what="K"), "K"),
        Param("T", DEFAULTS["T"], int_parser(1, max_rs_trees(), what="number of trees T"),
              "number of trees T"),
        Param("L", DEFAULTS["L"], int_parser(1, 100_000, what="L"), "L"),
        Param("beta", DEFAULTS["beta"], float_parser(0.01, 1.0, what="\u03b2"), "\u03b2"),
        Param("seeds", DEFAULTS["seeds"], int_parser(1, _MAX_SEEDS, what="number of seeds"),
              "number of seeds"),
        Param("show", DEFAULTS["show"], choice_parser(("srs", "rs"), what="shown method"),
              "shown method"),
    )


def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """Everything ``layout(**query)`` needs: data, control values, notes and the query.

    The data is the URL's when it names one, else the session's (``vi-data``).
    """
    data, notes = data_params_for_page(query or {}, vi_data)
    values, more = parse_query(query or {}, page_params())
    notes += more
    values["problem"] = "upload" if data["source"] == "upload" else data["problem"]
    query_text = None
    try:
        ns = null_settings(problem=values["problem"], data=data, tol=values["tol"],
                           R=values["R"], trees=values["trees"], method=values["method"],
                           seed=values["null_seed"], N=values["N"])
        rs = rs_settings(choice=values["rs"], data=data, q=values["q"], alpha=values["alpha"],
                         K=values["K"], T=values["T"], L=values["L"], beta=values["beta"],
                         seeds=values["seeds"])
        query_text = page_query(ns, rs, show=values["show"])
    except ValueError as exc:
        notes.append(f"The link's settings cannot run together: {exc} Using the defaults.")
        for k in ("trees", "R", "T", "seeds", "q", "K"):
            values[k] = DEFAULTS[k]
    if query_text is None:
        query_text = datasource.data_query(data)
    return {"data": data, "p": data_feature_count(data, vi_data), "values": values,
            "notes": notes, "query": query_text}


# -- settings ---------------------------------------------------------------------------
def _whole(value, what: str, low: int, high: int | None, default=None):
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"The {what} must be a whole number, got {value!r}.") from None
    limit = f"from {low:,} to {high:,}" if high is not None else f"of at least {low:,}"
    if not math.isfinite(number) or number != int(number) or number < low \
            or (high is not None and number > high):
        raise ValueError(f"The {what} must be a whole number {limit}, got {value!r}.")
    return int(number)


def _fraction(value, what: str, low: float, high: float, default=None, *, open_low=False):
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is None:
            raise ValueError(f"Enter {what} (a number from {low:g} to {high:g}).")
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what[0].upper() + what[1:]} must be a number, got {value!r}.") \
            from None
    if not math.isfinite(number) or number > high or number < low or (open_low and
                                                                      number <= low):
        side = "above" if open_low else "from"
        raise ValueError(f"{what[0].upper() + what[1:]} must be a number {side} {low:g} to "
                         f"{high:g}, got {value!r}.")
    return float(number)


def _needs_sample(data: Mapping[str, Any]) -> bool:
    p = datasource.canonical_params(data)
    return p["source"] == "problem" and p["sampling"] == "exact"


def null_settings(*, problem, data, tol, R, trees, method, seed, N) -> dict:
    """Canonical settings of sections 1 and 2 from the control values.

    Raises
    ------
    ValueError
        With a sentence naming the bad value.
    """
    params = data_for_choice(problem, data)
    if method not in {o["value"] for o in METHOD_OPTIONS}:
        raise ValueError("Choose the forest of the permutation null: ours, scikit-learn "
                         "extra-trees or random forest.")
    r = _whole(R, "number of permutations R", 1, max_permutations())
    t = _whole(trees, "number of trees", 1, max_null_trees())
    if r is None or t is None:
        raise ValueError(f"Enter the number of permutations R (1 to {max_permutations():,}) "
                         f"and of trees (1 to {max_null_trees():,}).")
    if r * t > _MAX_NULL_TOTAL:
        raise ValueError(f"R \u00d7 T = {r * t:,} trees is more than the limit of "
                         f"{_MAX_NULL_TOTAL:,}; lower R or the number of trees.")
    n = _whole(N, "sample size N", 2, datasource.MAX_SAMPLES, DEFAULTS["N"])
    tol_value = None if tol is None or (isinstance(tol, str) and not tol.strip()) else \
        _fraction(tol, "the threshold tol (bits)", 0.0, 1.0, 0.0)
    return {"data": params, "tol": tol_value, "R": r, "T": t, "method": method,
            "seed": _whole(seed, "seed", 0, 2**32 - 1, 0),
            "N": n if _needs_sample(params) else None}


def rs_settings(*, choice, data, q, alpha, K, T, L, beta, seeds) -> dict:
    """Canonical settings of the RS/SRS study from the control values.

    ``choice`` is a number of irrelevant Madelon features or ``"data"`` (the
    page's data: a built-in problem or an upload, classification only).

    Raises
    ------
    ValueError
        With a sentence naming the bad value.
    """
    if choice not in RS_CHOICES:
        raise ValueError("Choose the RS/SRS problem: Madelon with 480, 1,480, 2,980 or 5,480 "
                         "irrelevant features, or the current data.")
    if choice == "data":
        params = datasource.canonical_params(data or {})
        p = data_feature_count(params)
        source = {"kind": "data", "data": params}
    else:
        p = 20 + int(choice)
        source = {"kind": "madelon", "irrelevant": int(choice)}
    qv = _whole(q, "subspace size q", 1, p)
    if qv is None:
        raise ValueError(f"Enter the subspace size q (1 to {p:,}, the number of inputs).")
    t = _whole(T, "number of trees T", 1, max_rs_trees())
    if t is None:
        raise ValueError(f"Enter the number of trees T (1 to {max_rs_trees():,}).")
    s = _whole(seeds, "number of seeds", 1, _MAX_SEEDS, 1)
    if 2 * s * t > _MAX_RS_TOTAL:
        raise ValueError(f"{s} seed(s) \u00d7 2 methods \u00d7 T = {2 * s * t:,} trees is more "
                         f"than the limit of {_MAX_RS_TOTAL:,}; lower T or the seeds.")
    return {"source": source, "q": qv,
            "alpha": _fraction(alpha, "\u03b1", 0.0, 1.0, DEFAULTS["alpha"]),
            "K": _whole(K, "K (candidates per node)", 1, qv + 1, None), "T": t,
            "L": _whole(L, "L (least number of draws)", 1, 100_000, DEFAULTS["L"]),
            "beta": _fraction(beta, "\u03b2", 0.0, 1.0, DEFAULTS["beta"], open_low=True),
            "seeds": s}


def page_query(null: Mapping[str, Any], rs: Mapping[str, Any], *, show: str = "srs") -> str:
    """URL query (no ``?``) of both sections' settings; defaults are left out."""
    page = {"tol": null["tol"], "R": null["R"], "trees": null["T"], "method": null["method"],
            "null_seed": null["seed"], "N": null["N"],
            "rs": "data" if rs["source"]["kind"] == "data" else str(rs["source"]["irrelevant"]),
            "q": rs["q"], "alpha": rs["alpha"], "K": rs["K"], "T": rs["T"], "L": rs["L"],
            "beta": rs["beta"], "seeds": rs["seeds"], "show": show}
    page = {k: v for k, v in page.items() if v is not None and v != DEFAULTS.get(k)}
    parts = [datasource.data_query(null["data"]), encode_query(page)]
    return "&".join(part for part in parts if part)


def query_from_controls(null_controls: Mapping[str, Any], rs_controls: Mapping[str, Any],
                        show: str) -> str | None:
    """The URL query of the current controls, or None while they are not valid."""
    try:
        ns = null_settings(**null_controls)
        rs = rs_settings(data=ns["data"], **rs_controls)
    except ValueError:
        return None
    return page_query(ns, rs, show=show if show in ("rs", "srs") else "srs")


# -- results as JSON -------------------------------------------------------------------
def _floats(a) -> list:
    return [None if not math.isfinite(v) else v for v in np.asarray(a, float).ravel().tolist()]


def relevance_to_dict(r: RelevanceResult) -> dict:
    return r.to_dict()


def relevance_from_dict(d: Mapping[str, Any]) -> RelevanceResult:
    return RelevanceResult(
        variables=tuple(d["variables"]), relevance=tuple(d["relevance"]),
        degree=tuple(d["degree"]),
        markov_boundary=None if d["markov_boundary"] is None else tuple(d["markov_boundary"]),
        minimal_boundary=tuple(d["minimal_boundary"]),
        strictly_positive=bool(d["strictly_positive"]), tol=float(d["tol"]))


def selection_to_dict(s: SubspaceSelection) -> dict:
    curve = s.curve
    return {"variables": list(s.variables), "importances": _floats(s.importances),
            "n_sampled": [int(v) for v in s.n_sampled], "n_wins": [int(v) for v in s.n_wins],
            "selected": list(s.selected), "method": s.method,
            "parameters": json.loads(json.dumps(s.parameters, default=str)),
            "n_estimators": int(s.n_estimators), "stopped": bool(s.stopped),
            "curve": {c: _floats(curve[c]) for c in curve.columns},
            "relevant": None if s.relevant is None else list(s.relevant)}


def selection_from_dict(d: Mapping[str, Any]) -> SubspaceSelection:
    """Inverse of :func:`selection_to_dict` (the probe's per-tree importances are not kept)."""
    return SubspaceSelection(
        variables=tuple(d["variables"]),
        importances=np.array([np.nan if v is None else v for v in d["importances"]], float),
        n_sampled=np.array(d["n_sampled"], dtype=np.int64),
        n_wins=np.array(d["n_wins"], dtype=np.int64), selected=tuple(d["selected"]),
        method=d["method"], parameters=dict(d["parameters"]),
        n_estimators=int(d["n_estimators"]), stopped=bool(d["stopped"]),
        curve=pd.DataFrame({c: [np.nan if v is None else v for v in vals]
                            for c, vals in d["curve"].items()}),
        relevant=None if d["relevant"] is None else tuple(d["relevant"]))


# -- computing --------------------------------------------------------------------------
def null_key(settings: Mapping[str, Any]) -> str:
    s = {k: v for k, v in settings.items() if k != "tol"}
    return cache.key_for("sel-null", s)


def relevance_key(settings: Mapping[str, Any]) -> str:
    return cache.key_for("sel-relevance", settings["data"], settings["tol"], settings["N"],
                         settings["seed"])


def rs_key(settings: Mapping[str, Any]) -> str:
    return cache.key_for("sel-rs", dict(settings))


def _sample_params(settings: Mapping[str, Any]) -> dict:
    """Data parameters of the sample the permutation null runs on."""
    params = settings["data"]
    if settings["N"] is not None:
        params = dict(params, sampling="sample", n=settings["N"], seed=settings["seed"])
    return params


def compute_relevance(settings: Mapping[str, Any]) -> dict:
    """Relevance classes of the data (cached), or a sentence saying why there are none.

    Returns
    -------
    view : dict
        ``relevance`` (:meth:`RelevanceResult.to_dict` or None), ``importances``
        (K = 1 infinite-forest importances of the same table, Eqn 3),
        ``exact`` (bool), ``n`` (rows of a sample, None when exact),
        ``message`` (None, or why nothing was computed).
    """
    def compute() -> dict:
        prepared = datasource.load_prepared(settings["data"])
        t = prepared.table
        p, cap = t.n_features, limits.max_exact_features()
        if p > cap:
            return {"relevance": None, "importances": None, "exact": bool(t.exact),
                    "n": prepared.n_samples,
                    "message": f"Relevance classes test every subset of the other inputs: "
                               f"this data has {p:,} inputs, more than the {cap} this server "
                               f"allows (VARIMP_MAX_EXACT_FEATURES). Choose data with fewer "
                               f"inputs; the p-values below work for any number."}
        r = relevance(t, tol=settings["tol"])
        imp = compute_importances(t, method="exact", max_features=1)
        return {"relevance": relevance_to_dict(r), "importances": _floats(imp.importances),
                "units": imp.units, "exact": bool(t.exact), "n": prepared.n_samples,
                "message": None}

    return cache.get_or_compute(relevance_key(settings), compute)


def compute_null(settings: Mapping[str, Any], *, progress=None, should_stop=None) -> dict:
    """The permutation null of the data (cached), or its partial view when stopped."""
    def report(done, total):
        if progress is not None:
            progress(done, total, f"{int(done):,} of {int(total):,} permutations")

    def compute() -> dict:
        prepared = datasource.load_prepared(_sample_params(settings))
        R = settings["R"]
        result = permutation_null(prepared, n_permutations=R, method=settings["method"],
                                  n_estimators=settings["T"], max_features=1,
                                  random_state=settings["seed"],
                                  chunk_size=max(1, math.ceil(R / 50)), progress=report,
                                  should_stop=should_stop)
        view = {"null": result_to_dict(result), "n": prepared.n_samples}
        if result.cancelled:
            raise Stopped(view)
        return view

    return cached_view(null_key(settings), compute)


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


def run_null(settings: Mapping[str, Any], *, instance: str, progress=None) -> dict:
    """Relevance and permutation null for sections 1 and 2; the page's current value and status."""
    clear_stop(instance, "sel-null")
    if progress is not None:
        progress(text="Relevance classes\u2026")
    rel = compute_relevance(settings)
    view = compute_null(settings, progress=progress,
                        should_stop=lambda: stop_requested(instance, "sel-null"))
    done = len(view["null"]["null"])
    key, partial = keep_view(view, null_key(settings), instance, "sel-partial")
    current = {"key": key, "relevance_key": relevance_key(settings), "partial": partial,
               "settings": dict(settings), "done": done, "requested": settings["R"]}
    if partial:
        status = (f"Cancelled after {done:,} of {settings['R']:,} permutations; the p-values "
                  "use these.")
    else:
        status = f"{done:,} permutations (computed in {view['null']['elapsed']:.1f} s)."
    if rel.get("message"):
        status += " No relevance classes for this data (see above)."
    return {"current": current, "status": status}


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


# -- rendering ------------------------------------------------------------------------------
def _load(key: str | None, what: str):
    if not key:
        return None
    view = cache.get_json(key)
    if view is None:
        raise ValueError(f"The {what} is no longer on the server (it may have expired); change a "
                         "setting or reload the page to compute it again.")
    return view


def _names(items, limit: int = 12) -> str:
    items = list(items)
    if not items:
        return "none"
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit:,} more" if len(items) > limit else "")


def relevance_rows(r: RelevanceResult) -> list[dict]:
    """One table row per variable: class, degree, Markov boundary membership."""
    boundary = set(r.minimal_boundary)
    return [{"variable": v, "relevance": c, "degree": "" if d is None else d,
             "in_markov_boundary": "\u2713" if v in boundary else ""}
            for v, c, d in zip(r.variables, r.relevance, r.degree)]


def render_null(current: Mapping[str, Any] | None) -> dict:
    """Figures, relevance table and sentences of sections 1 and 2 (from the cache).

    Raises
    ------
    ValueError
        When the stored view expired.
    """
    empty = {"relevance_figure": placeholder_figure("No result yet."),
             "pvalue_figure": placeholder_figure("No result yet."), "relevance_rows": [],
             "relevance_sentences": [], "null_sentences": [], "partial_note": ""}
    if not current:
        return empty
    rel = _load(current.get("relevance_key"), "relevance result")
    view = _load(current.get("key"), "permutation null")
    settings = current["settings"]
    out = dict(empty)
    if rel is not None and rel.get("relevance"):
        r = relevance_from_dict(rel["relevance"])
        out["relevance_figure"] = make_relevance_figure(r, rel["importances"],
                                                        units=rel.get("units", "bits"))
        out["relevance_rows"] = relevance_rows(r)
        how = ("Exact: computed on the exact distribution, a conditional mutual information "
               f"counts as zero at or below tol = {r.tol:.3g} bits (rounding only)."
               if rel["exact"] else
               f"Plug-in estimate from a sample of N = {rel['n']:,} rows: a conditional mutual "
               f"information counts as zero at or below tol = {r.tol:.3g} bits"
               + (" (the core's default, the plug-in bias of the largest conditioning set, "
                  "capped at 0.05 bits)." if settings["tol"] is None else " (yours)."))
        strong = [v for v, c in zip(r.variables, r.relevance) if c == "strong"]
        weak = [v for v, c in zip(r.variables, r.relevance) if c == "weak"]
        irr = [v for v, c in zip(r.variables, r.relevance) if c == "irrelevant"]
        mb = ("Markov boundary (unique, the input distribution is strictly positive): "
              + _names(r.markov_boundary) + "." if r.markov_boundary is not None else
              "A minimal Markov boundary: " + _names(r.minimal_boundary) + " (the input "
              "distribution is not strictly positive, so it need not be unique).")
        out["relevance_sentences"] = [
            how,
            f"Strongly relevant: {_names(strong)}; weakly relevant: {_names(weak)}; "
            f"irrelevant: {_names(irr)}. The degree d is the size of the smallest set B with "
            "I(X; Y | B) > 0.",
            mb,
            "Bars: each variable's importance in an infinite forest of totally randomized trees "
            "(K = 1, Eqn 3) on the same " + ("distribution" if rel["exact"] else "sample")
            + "; it is zero exactly for the irrelevant variables (Louppe et al. 2013, "
            "Theorem 3)" + ("." if rel["exact"] else ", which a plug-in estimate only "
                            "approaches: the bias keeps it above zero."),
        ]
    elif rel is not None:
        out["relevance_figure"] = placeholder_figure("No relevance classes for this data.")
        out["relevance_sentences"] = [rel["message"]]
    if view is not None:
        pn = result_from_dict(view["null"])
        out["pvalue_figure"] = make_pvalue_figure(pn)
        above = [v for v, a in zip(pn.variables, pn.above_null) if a]
        R = pn.n_permutations
        rows = f"{view['n']:,} rows" if view.get("n") else "the data"
        out["null_sentences"] = [
            f"{R:,} permutations of the target; on each, {settings['T']:,} K = 1 trees "
            f"({settings['method']}) on {rows}"
            + (f" drawn from the exact distribution (seed {settings['seed']})"
               if settings["N"] is not None else "") + ".",
            (f"Above the 95 % quantile of their null (\u2605): {_names(above)}." if above else
             "No variable is above the 95 % quantile of its null.")
            + f" The smallest possible p-value with R = {R:,} is 1/(R + 1) = {1 / (R + 1):.3g}.",
            "The null keeps Y impure in every cell, so an irrelevant variable of the real data "
            "often scores below its null (a large p-value): the test is conservative for "
            "irrelevant variables.",
        ]
    if current.get("partial"):
        out["partial_note"] = (f"Partial result: cancelled after {current['done']:,} of "
                               f"{current['requested']:,} permutations.")
    return out


def _curves_frame(view: Mapping[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame({c: [np.nan if v is None else v for v in vals]
                       for c, vals in view["curves"].items()})
    for c in df.columns:
        if c != "method":
            df[c] = df[c].astype(float)
    return df


def rs_sentences(view: Mapping[str, Any], settings: Mapping[str, Any]) -> list[str]:
    """The final numbers of the curves, RS against SRS, in sentences."""
    df = _curves_frame(view)
    if not len(df):
        return []
    out = []
    src = settings["source"]
    what = (f"Madelon-like data with 20 relevant and {src['irrelevant']:,} irrelevant features "
            "(1,000 training and 500 test rows per seed)" if src["kind"] == "madelon" else
            "the current data (two thirds of the rows train, one third tests, per seed)")
    k = "q + 1 (every column of the subspace and the probe)" if settings["K"] is None \
        else str(settings["K"])
    out.append(f"{what}; q = {settings['q']}, \u03b1 = {settings['alpha']:g}, K = {k}, "
               f"L = {settings['L']}, \u03b2 = {settings['beta']:g}; mean over "
               f"{int(df['seed'].nunique())} seed(s)" + (" with \u00b1 1 sd bands." if
                                                          df['seed'].nunique() > 1 else "."))
    last = df[df.groupby(["method", "seed"])["n_trees"].transform("max") == df["n_trees"]]
    means = last.groupby("method")[["n_trees", "auprc", "accuracy"]].mean()
    parts = []
    for m in ("rs", "srs"):
        if m in means.index:
            row = means.loc[m]
            auprc = "" if math.isnan(row["auprc"]) else f"AUPRC {row['auprc']:.3f}, "
            parts.append(f"{m.upper()} {auprc}accuracy {row['accuracy']:.3f}")
    if parts:
        out.append("At the last checkpoint: " + "; ".join(parts) + ".")
    return out


def render_rs(current: Mapping[str, Any] | None, show: str = "srs") -> dict:
    """Curves, the selected set and sentences of the RS/SRS study (from the cache)."""
    view = _load((current or {}).get("key"), "RS/SRS study")
    if view is None:
        return {"curves_figure": placeholder_figure("No result yet."),
                "selected_figure": placeholder_figure("No result yet."), "sentences": [],
                "selected_sentences": [], "partial_note": ""}
    settings = current["settings"]
    fig = make_subspace_curves(_curves_frame(view))
    sentences = rs_sentences(view, settings)
    sels = view["selections"]
    method = show if show in sels else next(iter(sels), None)
    selected_sentences = []
    if method is None:
        sel_fig = placeholder_figure("No selection yet.")
    else:
        s = selection_from_dict(sels[method])
        sel_fig = make_selected_figure(s)
        line = (f"Seed 0, {method.upper()}: F holds the {len(s.selected):,} features drawn "
                f"more than L = {settings['L']} times that beat the random probe in at least "
                f"\u03b2 = {settings['beta']:g} of their trees: {_names(s.selected, 20)}.")
        if s.relevant is not None:
            prec, rec = s.precision, s.recall
            line += (f" Precision {'n/a (nothing selected)' if math.isnan(prec) else f'{prec:.2f}'}"
                     f", recall {rec:.2f} against the {len(s.relevant)} truly relevant "
                     "features (outlined, \u2713).")
        else:
            line += " The truly relevant features of this data are unknown, so there is no " \
                    "precision or recall."
        selected_sentences.append(line)
    note = ""
    if current.get("partial"):
        note = (f"Partial result: cancelled after {view['trees_done']:,} of "
                f"{view['trees_asked']:,} trees.")
    return {"curves_figure": fig, "selected_figure": sel_fig, "sentences": sentences,
            "selected_sentences": selected_sentences, "partial_note": note}


# -- export ---------------------------------------------------------------------------------
def _safe_csv(df: pd.DataFrame) -> str:
    df = df.copy()
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def csv_text(what: str, current: Mapping[str, Any] | None) -> str:
    """CSV of ``"pvalues"`` (relevance classes joined when known), ``"curves"`` or ``"selected"``.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "pvalues":
        view = _load((current or {}).get("key"), "permutation null")
        if view is None:
            raise ValueError("There is no result to download yet.")
        df = result_from_dict(view["null"]).to_frame()
        rel = cache.get_json(current.get("relevance_key") or "")
        if rel and rel.get("relevance"):
            r = relevance_from_dict(rel["relevance"]).to_frame()
            df = df.merge(r, on="variable", how="left")
        return _safe_csv(df)
    view = _load((current or {}).get("key"), "RS/SRS study")
    if view is None:
        raise ValueError("There is no RS/SRS study to download yet.")
    if what == "curves":
        return _safe_csv(_curves_frame(view))
    frames = []
    for method, d in view["selections"].items():
        f = selection_from_dict(d).to_frame()
        f.insert(0, "method", method)
        frames.append(f)
    return _safe_csv(pd.concat(frames, ignore_index=True))


def csv_filename(what: str, current: Mapping[str, Any] | None) -> str:
    """``varimp-selection-<data>-<what>.csv`` with only safe characters."""
    settings = (current or {}).get("settings") or {}
    if "source" in settings:
        src = settings["source"]
        name = f"madelon-{src['irrelevant']}" if src["kind"] == "madelon" else \
            _data_name(src["data"])
    else:
        name = _data_name(settings.get("data") or {})
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{what}").strip("-.")[:80]
    return f"varimp-selection-{slug}.csv"


def _data_name(data: Mapping[str, Any]) -> str:
    name = data.get("problem") if data.get("source") == "problem" else \
        (data.get("file") or "upload")
    return re.sub(r"\.csv$", "", str(name or "data"), flags=re.I)
