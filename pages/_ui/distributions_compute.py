"""Results as JSON, cache keys and computing of the Distributions page.

Part of :mod:`pages._ui.distributions_logic` (which re-exports every public
name here).  Runs repeat a forest over R data sets: fresh samples of a
built-in problem (:func:`varimp_core.montecarlo.monte_carlo`, fanned out
through :func:`pages._ui.fanout.replicate_mapper`), bootstrap replicates of
the session's data, or a permutation null
(:func:`varimp_core.nulls.permutation_null`); sweeps repeat runs over the
values of one parameter (:func:`varimp_core.montecarlo.sweep`).  Results are
cached server-side as JSON, keyed by a hash of the settings; a run stopped
with Cancel keeps its finished replicates in a short-lived entry of its own.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.studies.montecarlo import MonteCarloResult, monte_carlo, sweep
from varimp_core.studies.nulls import PermutationNull, permutation_null, plugin_bias_overlay
from varimp_core.studies.fits import fit_normal, fit_scaled_chi2
from varimp_core.studies.montecarlo import sweep_statistics

from . import cache, datasource, fanout
from .common import Stopped, cached_view, clear_stop, keep_view, stop_requested
from .distributions_choices import MAX_FITTED, _needs_drawn_sample

__all__ = [
    "run_key", "sweep_key", "compute_view", "compute_sweep", "run_monte_carlo", "run_sweep",
    "result_to_dict", "result_from_dict",
]


# -- results as JSON ------------------------------------------------------------------
def _floats(a) -> list:
    return [None if not math.isfinite(v) else v for v in np.asarray(a, float).ravel().tolist()]


def _array(values, shape=None) -> np.ndarray:
    a = np.array([np.nan if v is None else v for v in values], dtype=float)
    return a.reshape(shape) if shape is not None else a


def result_to_dict(result) -> dict:
    """JSON-able form of a MonteCarloResult (without its population) or PermutationNull."""
    if isinstance(result, PermutationNull):
        return {"kind": "permutation", "variables": list(result.variables),
                "observed": _floats(result.observed), "null": result.null.tolist(),
                "parameters": result.parameters, "source": result.source,
                "n_requested": result.n_requested, "cancelled": bool(result.cancelled),
                "elapsed": float(result.elapsed)}
    return {"kind": "monte_carlo", "variables": list(result.variables),
            "replicates": result.replicates.tolist(), "information": _floats(result.information),
            "exact": None if result.exact is None else _floats(result.exact),
            "exact_source": result.exact_source,
            "relevant": None if result.relevant is None else list(result.relevant),
            "n_levels": [int(v) for v in result.n_levels], "n_classes": int(result.n_classes),
            "parameters": result.parameters, "problem": str(result.problem),
            "n_requested": int(result.n_requested), "cancelled": bool(result.cancelled),
            "elapsed": float(result.elapsed)}


def result_from_dict(d: Mapping[str, Any]):
    """Inverse of :func:`result_to_dict` (the population is not restored)."""
    p = len(d["variables"])
    if d["kind"] == "permutation":
        null = np.array(d["null"], dtype=float).reshape(-1, p)
        return PermutationNull(variables=tuple(d["variables"]), observed=_array(d["observed"]),
                               null=null, parameters=dict(d["parameters"]), source=d["source"],
                               n_requested=d["n_requested"], cancelled=d["cancelled"],
                               elapsed=d["elapsed"])
    reps = np.array(d["replicates"], dtype=float).reshape(-1, p)
    return MonteCarloResult(
        variables=tuple(d["variables"]), replicates=reps, information=_array(d["information"]),
        exact=None if d["exact"] is None else _array(d["exact"]),
        exact_source=d["exact_source"],
        relevant=None if d["relevant"] is None else tuple(d["relevant"]),
        n_levels=np.array(d["n_levels"]), n_classes=d["n_classes"],
        parameters=dict(d["parameters"]), problem=d["problem"], n_requested=d["n_requested"],
        cancelled=d["cancelled"], elapsed=d["elapsed"])


def _records(df: pd.DataFrame) -> dict:
    return {c: [None if isinstance(v, float) and not math.isfinite(v) else v
                for v in df[c].tolist()] for c in df.columns}


def _frame(records: Mapping[str, list] | None) -> pd.DataFrame | None:
    if records is None:
        return None
    df = pd.DataFrame(dict(records))
    for c in df.columns:
        if df[c].dtype == object and df[c].map(lambda v: v is None or isinstance(
                v, (int, float)) and not isinstance(v, bool)).all():
            df[c] = df[c].astype(float)
    return df


#: A fit's columns before (or without) a fit.
_NO_FIT = dict.fromkeys(("df", "scale", "mean", "std", "ks_statistic", "ks_pvalue"), np.nan)


def _fits(variables, samples: np.ndarray, relevance) -> pd.DataFrame:
    """A scaled chi-square and a normal fit for every column (NaN where impossible)."""
    rows = []
    for j, v in enumerate(variables):
        for kind, fit in (("chi2", fit_scaled_chi2), ("normal", fit_normal)):
            row = {"variable": v, "relevant": relevance[j], "distribution": kind, **_NO_FIT,
                   "n": int(samples.shape[0])}
            try:
                f = fit(samples[:, j])
            except ValueError:
                f = None
            if f is not None:
                row.update(f.params, ks_statistic=f.ks_statistic, ks_pvalue=f.ks_pvalue)
            rows.append(row)
    return pd.DataFrame(rows)


# -- computing ------------------------------------------------------------------------
def run_key(settings: Mapping[str, Any]) -> str:
    return cache.key_for("dist-run", dict(settings))


def sweep_key(sweep: Mapping[str, Any]) -> str:
    return cache.key_for("dist-sweep", dict(sweep))


def _prepared(settings: Mapping[str, Any]):
    """The data that bootstrap and permutation replicates start from."""
    params = settings["data"]
    if _needs_drawn_sample(params):
        params = dict(params, sampling="sample", n=settings["N"], seed=settings["seed"])
    return datasource.load_prepared(params)


def _core_options(settings: Mapping[str, Any], progress, should_stop, what: str) -> dict:
    R = settings["R"]

    def report(done, total):
        if progress is not None:
            progress(done, total, f"{int(done):,} of {int(total):,} {what}")

    return dict(method=settings["method"], n_estimators=settings["T"],
                max_features=settings["K"], max_depth=settings["depth"],
                random_state=settings["seed"], chunk_size=max(1, math.ceil(R / 50)),
                progress=report, should_stop=should_stop)


def _monte_carlo_view(settings, progress=None, should_stop=None) -> dict:
    opts = _core_options(settings, progress, should_stop,
                         "permutations" if settings["mode"] == "permutation" else "replicates")
    if settings["mode"] == "samples":
        # With REDIS_URL set, replicates fan out as a Celery group (None: run here).
        result = monte_carlo(settings["data"]["problem"], n_replicates=settings["R"],
                             n_samples=settings["N"], mapper=fanout.replicate_mapper(), **opts)
    elif settings["mode"] == "bootstrap":
        result = monte_carlo(_prepared(settings), n_replicates=settings["R"],
                             n_samples=settings["N"], **opts)
    else:
        opts.pop("random_state")
        result = permutation_null(_prepared(settings), n_permutations=settings["R"],
                                  random_state=settings["seed"], **opts)
    if isinstance(result, PermutationNull):
        samples, relevance = result.null, [None] * len(result.variables)
        overlay = None
    else:
        samples = result.replicates
        relevance = [None if result.relevant is None else v in result.relevant
                     for v in result.variables]
        overlay = _records(plugin_bias_overlay(result)) if result.n_replicates else None
    fitted = slice(0, MAX_FITTED)
    return {"result": result_to_dict(result),
            "fits": _records(_fits(result.variables[fitted], samples[:, fitted],
                                   relevance[fitted])),
            "overlay": overlay}


def compute_view(settings: Mapping[str, Any], *, progress=None, should_stop=None) -> dict:
    """The run's view (cached), or its partial view when ``should_stop`` ended it.

    Returns
    -------
    view : dict
        ``result`` (:func:`result_to_dict`), ``fits`` (records of a chi-square
        and a normal fit per variable), ``overlay`` (records of
        :func:`varimp_core.nulls.plugin_bias_overlay` or None), ``partial``
        (True when cancelled; then nothing was cached under :func:`run_key`).
    """
    settings = dict(settings)

    def compute() -> dict:
        view = _monte_carlo_view(settings, progress, should_stop)
        if view["result"]["cancelled"]:
            raise Stopped(view)
        return view

    return cached_view(run_key(settings), compute)


def compute_sweep(sweep_spec: Mapping[str, Any], *, progress=None, should_stop=None) -> dict:
    """Statistics of a sweep (cached), or the partial ones when ``should_stop`` ended it.

    Returns
    -------
    view : dict
        ``stats`` (records of
        :func:`varimp_core.plots.distributions.sweep_statistics`),
        ``parameter``, ``values`` (asked), ``done`` (values with replicates),
        ``partial``.
    """
    spec = dict(sweep_spec)
    settings, parameter = spec["run"], spec["parameter"]

    def compute() -> dict:
        opts = _core_options(settings, progress, should_stop, "replicates")
        kwargs = {"method": opts["method"], "n_estimators": opts["n_estimators"],
                  "max_features": opts["max_features"], "max_depth": opts["max_depth"],
                  "chunk_size": opts["chunk_size"]}
        if settings["N"] is not None:
            kwargs["n_samples"] = settings["N"]
        kwargs.pop(parameter, None)
        source = settings["data"]["problem"] if settings["mode"] == "samples" else \
            _prepared(settings)
        if isinstance(source, str):
            kwargs["mapper"] = fanout.replicate_mapper()
        df = sweep(source, parameter, spec["values"], n_replicates=settings["R"],
                   random_state=settings["seed"], replicates=True, progress=opts["progress"],
                   should_stop=should_stop, **kwargs)
        stats = sweep_statistics(df)
        view = {"stats": _records(stats), "parameter": parameter, "values": spec["values"],
                "done": sorted(set(stats["value"].tolist()))}
        if df.attrs.get("cancelled"):
            raise Stopped(view)
        return view

    return cached_view(sweep_key(spec), compute)


def run_monte_carlo(settings: Mapping[str, Any], *, instance: str, progress=None) -> dict:
    """Run (or read) the Monte Carlo view; the page's ``dist-current`` value and status.

    Returns
    -------
    out : dict
        ``current``: ``{"key", "partial", "settings", "done", "requested"}``
        (None when cancelled before any replicate finished); ``status``: a
        sentence for the status line.
    """
    clear_stop(instance, "run")
    view = compute_view(settings, progress=progress,
                        should_stop=lambda: stop_requested(instance, "run"))
    result = view["result"]
    done = len(result["null"] if result["kind"] == "permutation" else result["replicates"])
    key, partial = keep_view(view, run_key(settings), instance, "dist-partial")
    if partial and done == 0:
        return {"current": None, "status": "Cancelled before any replicate finished; the page "
                                           "shows the last finished result."}
    current = {"key": key, "partial": partial, "settings": dict(settings), "done": done,
               "requested": settings["R"]}
    if partial:
        status = (f"Cancelled after {done:,} of {settings['R']:,} replicates; the figures and "
                  "tables show these.")
    else:
        status = f"{done:,} replicates (computed in {result['elapsed']:.1f} s)."
    return {"current": current, "status": status}


def run_sweep(spec: Mapping[str, Any], *, instance: str, progress=None) -> dict:
    """Run (or read) a sweep; the page's ``dist-sweep-current`` value and status."""
    clear_stop(instance, "sweep")
    view = compute_sweep(spec, progress=progress,
                         should_stop=lambda: stop_requested(instance, "sweep"))
    key, partial = keep_view(view, sweep_key(spec), instance, "dist-partial")
    done, asked = len(view["done"]), len(spec["values"])
    if partial and done == 0:
        return {"current": None, "status": "Cancelled before the first value finished."}
    current = {"key": key, "partial": partial, "spec": dict(spec)}
    if partial:
        stats = _frame(view["stats"])
        last = int(stats["n_replicates"].iloc[-1]) if len(stats) else 0
        status = (f"Cancelled: {done} of {asked} values reached, the last with {last:,} of "
                  f"{spec['run']['R']:,} replicates; the chart shows these.")
    else:
        status = f"Sweep of {asked} values done."
    return {"current": current, "status": status}
