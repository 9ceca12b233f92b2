"""Results of the Selection page as JSON: relevance classes and RS/SRS selections.

Part of :mod:`pages._ui.selection_logic` (which re-exports every public name
here): what the cache stores, NaN written as None, and back.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.exact.relevance import RelevanceResult
from varimp_core.studies.selection import SubspaceSelection

__all__ = ["relevance_to_dict", "relevance_from_dict", "selection_to_dict",
           "selection_from_dict"]


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
