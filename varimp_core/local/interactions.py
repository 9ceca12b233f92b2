"""What the positions say: interactions, partial importance, importance over labels.

Measures of Ciss (2015, sections 4.1, 4.2 and 6.1) computed from the positions
of a :class:`~varimp_core.local.importance.LocalImportance`, without labels:

* :func:`interactions` and :func:`interaction_importance` (section 4.2);
* :func:`partial_importance` -- the positions of the observations predicted as
  one class, or above / below a threshold in regression (section 4.1);
* :func:`importance_over_labels` -- partial importance of every class side by side.

Interactions
------------

"A predictor interacts with another one if, for a same observation, and for
all trees, both have respectively the first and the second highest frequency
of occurrence in a terminal node."  :func:`interactions` builds two
first-order x second-order tables:

* ``joint`` -- the cross-tabulation of the pair (variable at position 1,
  variable at position 2) over the observations: how often the two *co-occur*
  as first and second for the same observation;
* ``vii`` -- Ciss's :math:`\\mathrm{VII}_{(1,2)}(j, j') =
  (\\mathrm{SLI}_1(j, \\cdot) + \\mathrm{SLI}_2(j', \\cdot)) / 2n`, which
  adds the two margins (how often ``j`` is first plus how often ``j'`` is
  second) and so is large for two influential variables even when they never
  meet in one observation.

and :func:`interaction_importance`, Ciss's variable importance based on
interactions, computed from ``vii``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from varimp_core.local.importance import LocalImportance, check_position
from varimp_core.result import ImportanceResult
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["Interactions", "PartialImportance", "ImportanceOverLabels", "OTHER_FEATURES",
           "interactions", "interaction_importance", "partial_importance",
           "importance_over_labels", "tile_frame", "pairs_frame", "variables_frame"]

#: Name of the meta-variable that gathers the variables of weak influence.
OTHER_FEATURES = "other features"


@dataclass(frozen=True)
class Interactions:
    """First-order x second-order interaction tables.

    Parameters
    ----------
    labels : tuple of str
        Row and column names: variables by decreasing influence, then
        :data:`OTHER_FEATURES` when some were merged.
    joint : ndarray of shape (n_labels, n_labels)
        Row ``r`` (position 1), column ``c`` (position 2): the share of the
        observations that have both positions whose first variable is
        ``labels[r]`` and second is ``labels[c]``.  Sums to 1; the diagonal is
        zero except for the merged meta-variable.
    vii : ndarray of shape (n_labels, n_labels)
        :math:`\\mathrm{VII}_{(1,2)}(r, c) = (\\mathrm{SLI}_1(r) + \\mathrm{SLI}_2(c)) / 2n`.
    first, second : ndarray of shape (n_labels,)
        :math:`\\mathrm{SLI}_1 / n` and :math:`\\mathrm{SLI}_2 / n`: the share of
        observations with each label at position 1, and at position 2.
    n_observations : int
        n, all observations assessed.
    n_pairs : int
        Observations that have a variable at both positions 1 and 2.
    merged : tuple of str
        The variables gathered into :data:`OTHER_FEATURES`.
    min_share : float
        The influence below which a variable was merged.
    """

    labels: tuple[str, ...]
    joint: np.ndarray
    vii: np.ndarray
    first: np.ndarray
    second: np.ndarray
    n_observations: int
    n_pairs: int
    merged: tuple[str, ...]
    min_share: float

    @property
    def influence(self) -> np.ndarray:
        """``(first + second) / 2``: each label's share of positions 1 and 2."""
        return (self.first + self.second) / 2

    def to_matrix(self, kind: str = "joint") -> pd.DataFrame:
        """The table as a frame: index = position 1 (``first``), columns = position 2 (``second``)."""
        if kind not in ("joint", "vii"):
            raise ValueError(f"kind={kind!r} is not allowed: use 'joint' or 'vii'.")
        table = self.joint if kind == "joint" else self.vii
        return pd.DataFrame(table, index=pd.Index(self.labels, name="first"),
                            columns=pd.Index(self.labels, name="second"))

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per (first, second) pair with its joint share and VII score."""
        m = len(self.labels)
        return pd.DataFrame({"first": np.repeat(self.labels, m),
                             "second": np.tile(self.labels, m),
                             "joint": self.joint.ravel(),
                             "vii": self.vii.ravel()})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Interactions":
        """The Interactions that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _check_forest(local: LocalImportance) -> None:
    if not isinstance(local, LocalImportance):
        raise ValueError(f"Expected a LocalImportance (from local_importance), got "
                         f"{type(local).__name__}.")
    if local.n_estimators < 2:
        raise ValueError("Interactions need a forest of at least two trees: with a single tree "
                         "every observation has one locally important variable, so none can "
                         "come second.")


def _margins(local: LocalImportance):
    pos = local.positions
    p = local.n_features
    first, second = pos[:, 0], pos[:, 1] if p > 1 else np.full(len(pos), -1)
    a = np.bincount(first[first >= 0], minlength=p)
    b = np.bincount(second[second >= 0], minlength=p)
    return first, second, a, b


def _vii_table(a, b, n):
    """Ciss's :math:`(\\mathrm{SLI}_1(j) + \\mathrm{SLI}_2(j')) / 2n` for every pair."""
    return (a[:, None] + b[None, :]) / (2.0 * n)


def interactions(local: LocalImportance, *, min_share: float = 0.01) -> Interactions:
    """Cross-tabulate, over observations, the variables at positions 1 and 2.

    Parameters
    ----------
    local : LocalImportance
        From a forest of at least two trees.
    min_share : float, default=0.01
        Variables whose influence :math:`(\\mathrm{SLI}_1(j) + \\mathrm{SLI}_2(j)) / 2n`
        is below ``min_share`` are merged into one meta-variable,
        :data:`OTHER_FEATURES` (Ciss's "Others features"); 0 keeps them all.

    Returns
    -------
    result : Interactions

    Raises
    ------
    ValueError
        For a single tree, and when no observation has a second position.

    Notes
    -----
    An observation whose count is non-zero for one variable only has no
    second position; as in the paper ("if we can not get the first and second
    order, then the interaction will be null") it adds nothing to ``joint``.
    """
    _check_forest(local)
    if not 0 <= float(min_share) < 1:
        raise ValueError(f"min_share={min_share!r} is not allowed: use a number in [0, 1).")
    first, second, a, b = _margins(local)
    n, p = local.n_observations, local.n_features
    both = (first >= 0) & (second >= 0)
    if not both.any():
        raise ValueError("No observation has a second locally important variable (every tree "
                         "ends its path on the same variable); interactions are empty.")
    influence = (a + b) / (2.0 * n)
    order = np.lexsort((np.arange(p), -influence))
    keep = order[influence[order] >= float(min_share)]
    merged = order[influence[order] < float(min_share)]
    labels = [local.variables[j] for j in keep] + ([OTHER_FEATURES] if merged.size else [])
    code = np.empty(p, dtype=np.intp)                 # variable -> row of the merged table
    code[keep] = np.arange(keep.size)
    code[merged] = keep.size
    m = len(labels)
    joint = np.bincount(code[first[both]] * m + code[second[both]], minlength=m * m)
    am, bm = np.bincount(code, weights=a, minlength=m), np.bincount(code, weights=b, minlength=m)
    return Interactions(labels=tuple(labels), joint=joint.reshape(m, m) / both.sum(),
                        vii=_vii_table(am, bm, n), first=am / n, second=bm / n,
                        n_observations=n, n_pairs=int(both.sum()),
                        merged=tuple(local.variables[j] for j in merged),
                        min_share=float(min_share))


def interaction_importance(local: LocalImportance) -> ImportanceResult:
    """Ciss's variable importance based on interactions.

    Parameters
    ----------
    local : LocalImportance
        From a forest of at least two trees.

    Returns
    -------
    result : ImportanceResult
        ``importances[j]`` is :math:`\\mathrm{VII}(j, \\cdot)` below;
        ``method="ciss-interactions"``, no depth decomposition, ``units="score"``
        (``result.normalised`` gives shares).

    Notes
    -----
    With :math:`\\mathrm{VII}_{(2,1)}(j, j') = \\mathrm{VII}_{(1,2)}(j', j)`
    (the same table read by columns), Ciss (2015, section 4.2) defines

    .. math::

        \\mathrm{VII}(j, \\cdot) = \\frac{1}{2d} \\sum_{j'=1}^{d} \\mathrm{VII}_{(1,2)}(j, j')
        + \\frac{1}{2d} \\sum_{j'=1}^{d} \\mathrm{VII}_{(2,1)}(j, j')
        + \\mathrm{VII}_{(1,2)}(j, j).

    Because :math:`\\mathrm{VII}_{(1,2)}` adds the two margins, this is
    :math:`\\tfrac{3}{4n}(\\mathrm{SLI}_1(j) + \\mathrm{SLI}_2(j)) +
    \\tfrac{1}{4nd}(S_1 + S_2)` with :math:`S_q = \\sum_j \\mathrm{SLI}_q(j)`:
    an increasing function of how often ``j`` is first or second.  The sum
    over variables is :math:`(S_1 + S_2)/n`, 2 when every observation has two
    positions.
    """
    _check_forest(local)
    _, _, a, b = _margins(local)
    n, d = local.n_observations, local.n_features
    t12 = _vii_table(a, b, n)
    vii = t12.sum(axis=1) / (2 * d) + t12.sum(axis=0) / (2 * d) + np.diag(t12)
    return ImportanceResult(
        variables=local.variables, importances=vii, by_degree=None, method="ciss-interactions",
        parameters={"measure": "importance based on interactions", "n_observations": n,
                    "n_estimators": local.n_estimators, **local.parameters},
        units="score", exact=False)


# -- partial importance and importance over labels ---------------------------------------
@dataclass(frozen=True)
class PartialImportance:
    """Partial importance of each variable for one class or one range of responses.

    Parameters
    ----------
    variables : tuple of str
    scores : ndarray of shape (n_features,)
        :math:`\\sum_{q \\le Q} \\mathrm{SLI}_q(j, \\cdot \\mid \\bar g(X) \\in A)`:
        observations of the subset with variable ``j`` at one of the first
        ``max_position`` positions.
    subset : str
        Which observations, e.g. ``"prediction = 2"`` or ``"prediction > 35.4"``.
    n_observations : int
        Observations in the subset.
    max_position : int
    """

    variables: tuple[str, ...]
    scores: np.ndarray
    subset: str
    n_observations: int
    max_position: int

    @property
    def shares(self) -> np.ndarray:
        """Scores divided by their sum (Ciss's "relative influence")."""
        total = self.scores.sum()
        return self.scores / total if total > 0 else np.zeros(len(self.scores))

    def to_frame(self) -> pd.DataFrame:
        """Variables sorted by decreasing score, with share and rank (1 = most important)."""
        df = pd.DataFrame({"variable": list(self.variables), "score": self.scores,
                           "share": self.shares})
        df = df.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
        df["rank"] = np.arange(1, len(df) + 1)
        df["subset"] = self.subset
        return df

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PartialImportance":
        """The PartialImportance that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _subset_mask(local, label, threshold, direction):
    pred = local.prediction
    if local.task == "regression":
        if label is not None:
            raise ValueError("The forest is a regressor, so importance for a class does not "
                             "apply; give threshold= (and direction=) instead of label=.")
        if threshold is None:
            raise ValueError("A regression forest needs threshold= to choose the responses "
                             "(predictions above or below it).")
        if direction not in ("above", "below"):
            raise ValueError(f"direction={direction!r} is not allowed: use 'above' or 'below'.")
        t = float(threshold)
        mask = pred > t if direction == "above" else pred <= t
        text = f"prediction {'>' if direction == 'above' else '≤'} {t:g}"
    else:
        if threshold is not None:
            raise ValueError("threshold= applies to regression; give the class with label=.")
        if label is None or label not in local.classes:
            allowed = ", ".join(repr(c) for c in local.classes)
            raise ValueError(f"label={label!r} is not one of the forest's classes: {allowed}.")
        mask = pred == label
        text = f"prediction = {label}"
    if not mask.any():
        raise ValueError(f"No observation has {text}; choose another "
                         f"{'class' if local.task == 'classification' else 'threshold'}.")
    return mask, text


def partial_importance(local: LocalImportance, *, label=None, threshold=None,
                       direction: str = "above", max_position: int = 1) -> PartialImportance:
    """Importance of each variable among the rows the forest assigns to one class or range.

    Parameters
    ----------
    local : LocalImportance
    label : class label, optional
        Classification: keep the observations predicted as ``label``.
    threshold : float, optional
        Regression: keep the observations predicted above (``direction="above"``,
        strictly) or below (``"below"``, inclusive) ``threshold``.
    direction : {"above", "below"}, default="above"
    max_position : int, default=1
        Count a variable when it stands at one of the first ``max_position``
        positions of an observation.

    Returns
    -------
    result : PartialImportance

    Notes
    -----
    Ciss (2015, section 4.1) defines the score as
    :math:`\\mathrm{SLI}(j, \\cdot, y) = \\sum_{q=1}^{d} \\mathrm{SLI}_q(j, \\cdot \\mid \\bar g(X) = y)`.
    Summed over *all* d positions this counts, for every variable, the
    observations in which it has a non-zero count at all -- once every variable
    appears it is the same number for all of them.  The randomUniformForest
    package's ``partialImportance`` in fact counts position 1 only, and the
    paper notes that partial importance is "almost the same" as variable
    importance over labels, which is computed at position 1; hence the default
    ``max_position=1``.  The definition ("the one that has the highest
    frequency of occurrence in a terminal node") is position 1 as well.
    """
    max_position = check_position(max_position, local.n_features)
    mask, text = _subset_mask(local, label, threshold, direction)
    scores = local.position_counts(mask)[:, :max_position].sum(axis=1).astype(float)
    return PartialImportance(variables=local.variables, scores=scores, subset=text,
                             n_observations=int(mask.sum()), max_position=max_position)


@dataclass(frozen=True)
class ImportanceOverLabels:
    """Variable importance over labels: one partial importance per predicted class.

    Parameters
    ----------
    variables : tuple of str
    classes : tuple
        Classes predicted at least once.
    shares : ndarray of shape (n_features, n_classes)
        Column ``c``: the partial importance shares of class ``classes[c]``
        (each column sums to 1).
    n_per_class : ndarray of shape (n_classes,)
        Observations predicted as each class.
    max_position : int
    """

    variables: tuple[str, ...]
    classes: tuple
    shares: np.ndarray
    n_per_class: np.ndarray
    max_position: int

    @property
    def order(self) -> np.ndarray:
        """Variable indices by decreasing best share over the classes (Ciss's aggregated rank)."""
        return np.lexsort((np.arange(len(self.variables)), -self.shares.max(axis=1)))

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per (variable, class) with share and rank within the class."""
        p, c = self.shares.shape
        ranks = np.empty((p, c), dtype=np.intp)
        for k in range(c):
            ranks[np.lexsort((np.arange(p), -self.shares[:, k])), k] = np.arange(1, p + 1)
        return pd.DataFrame({"variable": np.repeat(self.variables, c),
                             "label": list(self.classes) * p,
                             "share": self.shares.ravel(),
                             "rank": ranks.ravel()})

    def to_matrix(self) -> pd.DataFrame:
        """Variables (rows, in :attr:`order`) by classes (columns) of shares."""
        m = pd.DataFrame(self.shares, index=list(self.variables), columns=list(self.classes))
        return m.iloc[self.order]

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ImportanceOverLabels":
        """The ImportanceOverLabels that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def importance_over_labels(local: LocalImportance, *, max_position: int = 1) -> ImportanceOverLabels:
    """Partial importance of every class predicted, side by side (Ciss 2015, section 6.1 iv).

    Parameters
    ----------
    local : LocalImportance
        From a classifier.
    max_position : int, default=1
        As in :func:`partial_importance`; the package computes position 1.

    Returns
    -------
    result : ImportanceOverLabels
    """
    if local.task != "classification":
        raise ValueError("Importance over labels needs a classifier; for a regression forest "
                         "use partial_importance with threshold=.")
    max_position = check_position(max_position, local.n_features)
    classes = [c for c in local.classes if np.any(local.prediction == c)]
    shares = np.zeros((local.n_features, len(classes)))
    n_per = np.zeros(len(classes), dtype=np.int64)
    for k, c in enumerate(classes):
        r = partial_importance(local, label=c, max_position=max_position)
        shares[:, k], n_per[k] = r.shares, r.n_observations
    return ImportanceOverLabels(variables=local.variables, classes=tuple(classes), shares=shares,
                                n_per_class=n_per, max_position=max_position)


def tile_frame(local: LocalImportance, result: Interactions, first: str, second: str,
               rows=None, value_names: Mapping[str, Mapping[float, str]] | None = None
               ) -> pd.DataFrame:
    """The observations behind one tile of the mosaic: ``first`` at position 1, ``second`` at 2.

    Positions are those of :meth:`LocalImportance.to_frame`; a variable merged
    into :data:`OTHER_FEATURES` by ``result`` counts as that meta-variable, as
    in the mosaic.  So the number of rows is ``result.joint[i, j] * result.n_pairs``.

    Parameters
    ----------
    local : LocalImportance
    result : Interactions
        :func:`interactions` of ``local``, the mosaic the tile belongs to.
    first, second : str
        Labels of ``result``.
    rows : array-like of int, optional
        Row numbers of the observations in the user's data (default 0, 1, ...).
    value_names : mapping, optional
        Per input, the names of its values that stand for something else
        (:meth:`~varimp_core.data.prepare.PreparedData.value_names`: a
        category's code, a missing value's stand-in), written instead of them.

    Returns
    -------
    frame : pandas.DataFrame
        ``Row``, the value of every input (its name where it has one), ``Prediction``, ``Position 1``,
        ``Position 2`` and ``Share of trees, position 1``.

    Raises
    ------
    ValueError
        When ``first`` or ``second`` is not a label of ``result``.
    """
    if first not in result.labels or second not in result.labels:
        raise ValueError("That tile is not in the current mosaic; click a tile again.")
    frame = local.to_frame(max_position=2)
    v1, v2 = frame["position_1"], frame["position_2"]  # a variable's name, None when empty
    tile = {v: OTHER_FEATURES for v in result.merged}
    keep = np.flatnonzero(v1.map(lambda v: tile.get(v, v)).eq(first).to_numpy()
                          & v2.map(lambda v: tile.get(v, v)).eq(second).to_numpy())
    rows = np.arange(local.n_observations) if rows is None else np.asarray(rows)
    out = pd.DataFrame({"Row": rows[keep].astype(int)})
    for j, v in enumerate(local.variables):
        names, values = (value_names or {}).get(v), local.X[keep, j]
        if names:   # "Biscoe", not 0; "missing", not the stand-in number
            values = np.array([names.get(x, x) for x in values.tolist()], dtype=object)
        out[v] = values
    prediction = np.asarray(local.prediction)[keep]
    out["Prediction"] = prediction.astype(str) if local.task == "classification" else prediction
    out["Position 1"] = v1.to_numpy()[keep]
    out["Position 2"] = v2.to_numpy()[keep]
    out["Share of trees, position 1"] = frame["frequency_1"].to_numpy()[keep]
    return out


def pairs_frame(result: Interactions) -> pd.DataFrame:
    """:meth:`Interactions.to_frame` with the number of ``observations`` of each pair."""
    df = result.to_frame()
    df["observations"] = np.rint(df["joint"].to_numpy() * result.n_pairs).astype(int)
    return df


def variables_frame(local: LocalImportance) -> pd.DataFrame:
    """Per variable: shares of observations at positions 1 and 2, and the importance based on
    interactions (``vii``, ``vii_share``) where a forest has one (:func:`interaction_importance`)."""
    sli, n = local.position_counts(), local.n_observations
    df = pd.DataFrame({"variable": list(local.variables),
                       "share_position_1": sli[:, 0] / n,
                       "share_position_2": (sli[:, 1] / n) if local.n_features > 1 else 0.0})
    try:
        vii = interaction_importance(local)
        df["vii"], df["vii_share"] = vii.importances, vii.normalised
    except ValueError:
        pass
    return df
