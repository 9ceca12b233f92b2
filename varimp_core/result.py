"""The one result type that flows from the core to figures, pages and CSV export."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ImportanceResult"]


def _as_list(a):
    if a is None:
        return None
    return np.asarray(a, dtype=float).tolist()


@dataclass(frozen=True)
class ImportanceResult:
    """Variable importances and their decomposition, exact or sampled.

    Parameters
    ----------
    variables : tuple of str
        Input names, in the order of every array below.
    importances : ndarray of shape (n_features,)
        Unnormalised MDI (bits for the entropy criterion).  For an exact
        method this is the infinite-ensemble value; for a forest, the mean
        over trees of :math:`\\sum_t p(t) \\Delta i(s_t, t)`.
    by_degree : ndarray of shape (n_features, n_features) or None
        None for measures without a depth decomposition (permutation
        importance, MDI-oob ...).  Otherwise row m, column k: the part of ``importances[m]`` that comes from nodes
        whose conditioning set has size k (the depth of the node in a
        multiway tree; the node depth for binary scikit-learn trees, truncated
        to ``n_features`` columns with the rest folded into the last one).
        Rows sum to ``importances``.
    method : str
        ``"eqn3"``, ``"exact"``, ``"forest"``, ``"sklearn-rf"`` or ``"sklearn-et"``.
    parameters : dict
        The parameters that produced the result (``max_features``, ``max_depth``,
        ``k_semantics``, ``criterion``, ``n_estimators``, ``random_state`` ...).
    problem : str or None
        Canonical problem spec, or a description of the uploaded data.
    information : float or None
        :math:`I(X_1,\\dots,X_p;Y)` in bits when known (exact or plug-in);
        by Theorem 2 of Louppe et al. (2013) the importances of fully grown
        totally randomized trees sum to it.
    per_tree : ndarray of shape (n_estimators, n_features) or None
        Importance of each variable in each tree, for spread.
    units : str
        ``"bits"`` for entropy, ``"gini"`` or ``"variance"`` otherwise.
    exact : bool
        True for asymptotic (infinite ensemble, exact distribution) values.
    """

    variables: tuple[str, ...]
    importances: np.ndarray
    by_degree: np.ndarray | None
    method: str
    parameters: dict = field(default_factory=dict)
    problem: str | None = None
    information: float | None = None
    per_tree: np.ndarray | None = None
    units: str = "bits"
    exact: bool = False

    def __post_init__(self) -> None:
        imp = np.asarray(self.importances, dtype=float)
        p = len(self.variables)
        if imp.shape != (p,):
            raise ValueError(f"importances has shape {imp.shape}, expected ({p},).")
        if self.by_degree is None:
            bd = None
        else:
            bd = np.asarray(self.by_degree, dtype=float)
            if bd.shape != (p, p):
                raise ValueError(f"by_degree has shape {bd.shape}, expected ({p}, {p}).")
        object.__setattr__(self, "variables", tuple(self.variables))
        object.__setattr__(self, "importances", imp)
        object.__setattr__(self, "by_degree", bd)
        if self.per_tree is not None:
            object.__setattr__(self, "per_tree", np.asarray(self.per_tree, dtype=float))

    # -- summaries ---------------------------------------------------------
    @property
    def n_features(self) -> int:
        return len(self.variables)

    @property
    def importances_std(self) -> np.ndarray | None:
        """Standard deviation over trees of each variable's importance, or None."""
        if self.per_tree is None or self.per_tree.shape[0] < 2:
            return None
        return self.per_tree.std(axis=0, ddof=1)

    @property
    def importances_sem(self) -> np.ndarray | None:
        """Monte Carlo standard error of the mean over trees, or None."""
        std = self.importances_std
        if std is None:
            return None
        return std / math.sqrt(self.per_tree.shape[0])

    @property
    def per_tree_quartiles(self) -> np.ndarray | None:
        """Minimum, quartiles and maximum over trees of each variable's importance.

        An array of shape (5, n_features) (rows: 0, 25, 50, 75 and 100th
        percentiles), or None with fewer than two trees.
        """
        if self.per_tree is None or self.per_tree.shape[0] < 2:
            return None
        return np.percentile(self.per_tree, [0, 25, 50, 75, 100], axis=0)

    @property
    def total(self) -> float:
        """Sum of the importances (Theorem 2 compares it to ``information``)."""
        return float(self.importances.sum())

    @property
    def normalised(self) -> np.ndarray:
        """Importances divided by their sum (scikit-learn's ``feature_importances_`` scale)."""
        s = self.importances.sum()
        return self.importances / s if s > 0 else np.zeros_like(self.importances)

    # -- export ------------------------------------------------------------
    def to_frame(self):
        """One row per variable: importance, spread, normalised share, by-degree columns."""
        import pandas as pd

        df = pd.DataFrame({"variable": list(self.variables), "importance": self.importances})
        std = self.importances_std
        df["importance_std"] = std if std is not None else np.nan
        df["normalised"] = self.normalised
        if self.by_degree is not None:
            for k in range(self.n_features):
                df[f"degree_{k}"] = self.by_degree[:, k]
        return df

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary, the ``--format json`` object of the command line."""
        std = self.importances_std
        return {
            "variables": list(self.variables),
            "importances": _as_list(self.importances),
            "importances_std": _as_list(std),
            "by_degree": _as_list(self.by_degree),
            "information": None if self.information is None else float(self.information),
            "method": self.method,
            "units": self.units,
            "exact": bool(self.exact),
            "problem": self.problem,
            "parameters": _jsonable(self.parameters),
            "per_tree": _as_list(self.per_tree),
        }

    def to_json(self, **kwargs) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ImportanceResult":
        """Inverse of :meth:`to_dict` (used by the dashboard's stores and cache)."""
        pt = d.get("per_tree")
        return cls(
            variables=tuple(d["variables"]),
            importances=np.asarray(d["importances"], dtype=float),
            by_degree=None if d.get("by_degree") is None else np.asarray(d["by_degree"], dtype=float),
            method=d["method"],
            parameters=dict(d.get("parameters") or {}),
            problem=d.get("problem"),
            information=d.get("information"),
            per_tree=None if pt is None else np.asarray(pt, dtype=float),
            units=d.get("units", "bits"),
            exact=bool(d.get("exact", False)),
        )

    @classmethod
    def from_json(cls, s: str) -> "ImportanceResult":
        return cls.from_dict(json.loads(s))


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return obj
