"""Ciss's dependence over responses: observed (value, prediction) pairs where a feature is locally important.

Ciss (2015, section 5) calls it "partial dependence", which it is *not* in
Friedman's sense (:func:`varimp_core.local.partial_dependence.partial_dependence`): nothing
is set or averaged; :func:`dependence_over_responses` lists the observed pairs
(feature value, forest prediction) of the observations for which the feature
is locally important at the chosen position(s) (:mod:`varimp_core.local.importance`).
Friedman's partial dependence is in :mod:`varimp_core.local.partial_dependence`.

References
----------
.. [1] S. Ciss, "Variable Importance in Random Uniform Forests", hal-01104751, 2015.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from varimp_core.local.features import feature_index, is_int
from varimp_core.local.importance import LocalImportance
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["DependenceOverResponses", "dependence_over_responses", "dependence_frame"]


@dataclass(frozen=True)
class DependenceOverResponses:
    """Observed (feature value, prediction) pairs where the feature is locally important.

    Not Friedman's partial dependence: no value is imposed and nothing is
    averaged (see the module docstring).

    Parameters
    ----------
    feature : str
    positions : tuple of int
        The positions at which the feature had to stand.
    task : {"classification", "regression"}
    observation : ndarray of shape (n_points,)
        Row indices of the observations kept.
    value : ndarray of shape (n_points,)
        :math:`X_i^{(j)}`.
    prediction : ndarray of shape (n_points,)
        :math:`\\bar g(X_i)`, the forest's prediction.
    position : ndarray of shape (n_points,)
        The feature's position for that observation.
    n_observations : int
        All observations assessed.
    """

    feature: str
    positions: tuple[int, ...]
    task: str
    observation: np.ndarray
    value: np.ndarray
    prediction: np.ndarray
    position: np.ndarray
    n_observations: int

    def to_frame(self) -> pd.DataFrame:
        """One row per point: ``observation``, ``value``, ``prediction``, ``position``."""
        return pd.DataFrame({"observation": self.observation, "value": self.value,
                             "prediction": self.prediction, "position": self.position})

    def summary_frame(self) -> pd.DataFrame:
        """Classification: quartiles of the feature's values per predicted class (Ciss's box plots)."""
        if self.task != "classification":
            raise ValueError("summary_frame groups by predicted class; for regression plot "
                             "to_frame() (value against prediction).")
        df = self.to_frame().groupby("prediction")["value"]
        return df.describe()[["count", "min", "25%", "50%", "75%", "max"]].reset_index()

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DependenceOverResponses":
        """The DependenceOverResponses that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def dependence_over_responses(local: LocalImportance, feature, *, positions=1) -> DependenceOverResponses:
    """Ciss's dependence of the predictions on a feature, where that feature is locally important.

    Parameters
    ----------
    local : LocalImportance
    feature : str or int
    positions : int, sequence of int, or "all", default=1
        Keep an observation when the feature stands at one of these positions
        (1 = most frequent leaf-parent variable); ``"all"`` means 1 to p.

    Returns
    -------
    result : DependenceOverResponses

    Notes
    -----
    Ciss (2015, section 5):
    :math:`\\mathrm{pD}_q^{(j)} = \\{(\\bar g(X_i), X_i^{(j)}) : \\mathrm{SLI}_q(j, i) > 0\\}`,
    the union over the chosen positions q.  A variable has one position per
    observation, so each observation appears at most once.
    """
    if not isinstance(local, LocalImportance):
        raise ValueError(f"Expected a LocalImportance (from local_importance), got "
                         f"{type(local).__name__}.")
    p = local.n_features
    j = feature_index(feature, list(local.variables))
    if isinstance(positions, str):
        if positions != "all":
            raise ValueError(f"positions={positions!r} is not allowed: use an integer, a list of "
                             "integers or 'all'.")
        qs = tuple(range(1, p + 1))
    else:
        given = list(np.atleast_1d(np.asarray(positions, dtype=object)))
        if not given or any(not is_int(q) or not 1 <= q <= p for q in given):
            raise ValueError(f"positions={positions!r} is not allowed: use integers from 1 to {p}.")
        qs = tuple(sorted({int(q) for q in given}))
    rank = local.ranks[:, j]
    keep = np.flatnonzero(np.isin(rank, qs))
    if keep.size == 0:
        raise ValueError(f"{local.variables[j]!r} is never at position "
                         f"{', '.join(map(str, qs))} of any observation; use more positions "
                         "(positions='all').")
    return DependenceOverResponses(
        feature=local.variables[j], positions=qs, task=local.task, observation=keep,
        value=local.X[keep, j], prediction=local.prediction[keep], position=rank[keep],
        n_observations=local.n_observations)


def dependence_frame(local: LocalImportance, features, *, positions=1,
                     rows=None, value_names: Mapping[str, Mapping[float, str]] | None = None
                     ) -> pd.DataFrame:
    """:func:`dependence_over_responses` of several features as one tidy table.

    Columns ``feature``, ``row`` (the observation's row in the user's data:
    ``rows[observation]``, default the observation itself), ``value``,
    ``prediction`` and ``position``; a feature with no observation at the
    positions asked is left out.  ``value_names`` maps a feature to the names
    of its values that stand for something else
    (:meth:`~varimp_core.data.prepare.PreparedData.value_names`: a category's
    code, a missing value's stand-in); those values are written as their name.
    """
    frames = []
    for f in features:
        try:
            r = dependence_over_responses(local, f, positions=positions)
        except ValueError:
            continue
        df = r.to_frame().rename(columns={"observation": "row"})
        if rows is not None:
            df["row"] = np.asarray(rows)[df["row"].to_numpy()]
        names = (value_names or {}).get(f)
        if names:
            df["value"] = pd.Series([names.get(v, v) for v in df["value"].tolist()],
                                    dtype=object)
        df.insert(0, "feature", f)
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=["feature", "row", "value", "prediction", "position"])
    return pd.concat(frames, ignore_index=True)
