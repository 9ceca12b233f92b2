"""Sections 1 and 2 of the Selection page: relevance classes and the permutation null.

Part of :mod:`pages._ui.selection_logic` (which re-exports every public name
here): relevance classes, degrees and a Markov boundary of the current data
with each variable's K = 1 infinite-forest importance, and the permutation-null
p-values, each cached server-side as JSON keyed by a hash of the settings.  A
cancelled null keeps its finished permutations in a short-lived entry.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from varimp_core.api import compute_importances
from varimp_core.studies.nulls import permutation_null
from varimp_core.exact.relevance import relevance

from . import cache, datasource, limits
from .common import Stopped, cached_view, clear_stop, keep_view, stop_requested
from .distributions_logic import result_to_dict
from .selection_results import _floats, relevance_to_dict

__all__ = ["null_key", "relevance_key", "compute_relevance", "compute_null", "run_null"]


def null_key(settings: Mapping[str, Any]) -> str:
    s = {k: v for k, v in settings.items() if k != "tol"}
    return cache.key_for("sel-null", s)


def relevance_key(settings: Mapping[str, Any]) -> str:
    return cache.key_for("sel-relevance", settings["data"], settings["tol"], settings["N"],
                         settings["seed"])


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
