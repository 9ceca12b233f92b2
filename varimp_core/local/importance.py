"""Local variable importance of a fitted forest (Ciss 2015, section 4), without labels.

For one observation and one tree, the *locally important* variable is the split
variable of the node just above the leaf the observation falls into: the last
question the tree asked before answering.  Counted over the trees of a forest,
this gives a count matrix :math:`\\mathrm{LVI}(j, i)` (observations x
variables); ranking the variables of each observation by their count gives its
*positions* 1, 2, ... (Ciss calls a position an *order*: "position and order
designate the same term").  Everything here reads only the forest and the rows
it is shown -- training or test rows, never their labels -- plus the forest's
own predictions for partial importance.

* :func:`local_importance` -- counts and positions (:class:`LocalImportance`);
* :func:`fit_uniform_forest` -- scikit-learn trees with uniform random cut-points,
  as close to Random Uniform Forests as scikit-learn allows.

What the positions say -- interactions, the importance based on them, partial
importance and importance over labels -- is in :mod:`varimp_core.local.interactions`;
Ciss's dependence over responses and Friedman's partial dependence are in
:mod:`varimp_core.local.partial_dependence`.

References
----------
.. [1] S. Ciss, "Variable Importance in Random Uniform Forests", hal-01104751, 2015.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import is_classifier

from varimp_core.measures.inputs import variable_names
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["LocalImportance", "fit_uniform_forest", "local_importance"]


# -- fitting -------------------------------------------------------------------------
def fit_uniform_forest(X, y, *, task="classification", n_estimators=100, max_features=None,
                       max_depth=None, min_samples_leaf=1, criterion=None, random_state=0,
                       n_jobs=None):
    """Fit trees grown with uniform random cut-points, as in Random Uniform Forests.

    A random uniform decision tree (Ciss 2015, section 2) draws, for each
    candidate variable of a node, one cut-point
    :math:`\\alpha_j \\sim \\mathcal{U}(\\min X^{(j)}, \\max X^{(j)})` over the
    node's rows and keeps the candidate with the largest information gain (the
    smallest squared error in regression).  scikit-learn's extra-trees draw
    their thresholds the same way (uniformly between the node's minimum and
    maximum of the feature), so this is ``ExtraTrees*`` with bootstrap samples,
    every variable a candidate (``max_features=None``) and fully grown trees.

    The equivalence is not complete, and these are the differences from the
    randomUniformForest R package's defaults: it draws ``floor(4/3 p)``
    candidate variables *with replacement* (so a variable may get two
    cut-points and some none), scikit-learn draws ``max_features`` distinct
    variables with one cut-point each; in regression it grows each tree on a
    70% subsample without replacement, here on a bootstrap sample; it treats
    categorical inputs with a dedicated engine, here every input is numeric.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric inputs, no missing values, no constant column.
    y : array-like of shape (n_samples,)
    task : {"classification", "regression"}, default="classification"
    n_estimators : int, default=100
        Number of trees (the package's default).
    max_features : int or None, default=None
        Candidate variables per node; None means all of them.
    max_depth : int or None, default=None
    min_samples_leaf : int, default=1
    criterion : str or None, default=None
        ``"entropy"`` (classification) or ``"squared_error"`` (regression) by default.
    random_state : int or None, default=0
    n_jobs : int or None, default=None

    Returns
    -------
    estimator : ExtraTreesClassifier or ExtraTreesRegressor
        Fitted, with ``bootstrap=True``.

    Raises
    ------
    ValueError
        For a constant column (no cut-point can be drawn strictly inside its
        range) and for the bad options :func:`~varimp_core.forests.sklearn_mdi.fit_sklearn_forest` refuses.
    """
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    try:
        Xa = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        Xa = None                       # fit_sklearn_forest says what is wrong
    if Xa is not None and Xa.ndim == 2 and Xa.shape[0] > 0:
        constant = np.flatnonzero(np.ptp(Xa, axis=0) == 0)
        if constant.size:
            shown = [names[j] if names else f"x{j + 1}" for j in constant[:10]]
            raise ValueError(f"Column{'s' if constant.size > 1 else ''} {', '.join(map(repr, shown))} "
                             f"{'are' if constant.size > 1 else 'is'} constant, so no uniform cut-point "
                             f"can be drawn in {'their ranges' if constant.size > 1 else 'its range'}; "
                             "remove constant columns first.")
    return fit_sklearn_forest(X, y, kind="et", task=task, n_estimators=n_estimators,
                              max_features=max_features, max_depth=max_depth,
                              min_samples_leaf=min_samples_leaf, bootstrap=True,
                              criterion=criterion, random_state=random_state, n_jobs=n_jobs)


# -- reading the forest ---------------------------------------------------------------
def forest_trees(estimator) -> list:
    """The fitted trees of a forest (or the tree itself), checked to use all inputs in order."""
    if hasattr(estimator, "tree_"):
        return [estimator]
    trees = getattr(estimator, "estimators_", None)
    if trees is None:
        raise ValueError("The estimator is not a fitted forest or tree (it has neither "
                         "estimators_ nor tree_); fit it first.")
    trees = list(np.ravel(np.asarray(trees, dtype=object)))
    if not trees or not all(hasattr(t, "tree_") for t in trees):
        raise ValueError(f"{type(estimator).__name__} is not a forest of decision trees; use a "
                         "fitted RandomForest*, ExtraTrees* or decision tree.")
    p = int(estimator.n_features_in_)
    feats = getattr(estimator, "estimators_features_", None)
    if any(int(t.n_features_in_) != p for t in trees) or (
            feats is not None and any(not np.array_equal(f, np.arange(p)) for f in feats)):
        raise ValueError("The trees of this ensemble see different subsets of the inputs "
                         "(feature bagging); local importance needs trees on all inputs.")
    return trees


def prepare_features(estimator, X, variables):
    """Validate X; return (X for predict, float32 C array for tree_.apply, float array, names)."""
    p = int(estimator.n_features_in_)
    fitted_names = getattr(estimator, "feature_names_in_", None)
    if hasattr(X, "columns"):
        cols = [str(c) for c in X.columns]
        if fitted_names is not None:
            missing = [str(c) for c in fitted_names if str(c) not in cols]
            if missing:
                raise ValueError(f"X has no column {', '.join(map(repr, missing[:10]))}, which the "
                                 "forest was fitted on; give X the same columns.")
            X = X[list(fitted_names)]
        elif len(cols) != p:
            raise ValueError(f"X has {len(cols)} columns but the forest was fitted on {p} inputs.")
    try:
        Xa = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("X must be numeric: encode categorical columns as numbers first.") from None
    if Xa.ndim != 2 or Xa.shape[0] < 1:
        raise ValueError(f"X has shape {Xa.shape}: it must be 2-D with at least one row.")
    if Xa.shape[1] != p:
        raise ValueError(f"X has {Xa.shape[1]} columns but the forest was fitted on {p} inputs.")
    if not np.all(np.isfinite(Xa)):
        raise ValueError("X contains NaN or infinite values: impute or drop them first.")
    if variables is None and fitted_names is not None:
        variables = [str(v) for v in fitted_names]
    variables = variable_names(X, p, variables, width="the forest has {p} inputs")
    if len(set(variables)) != p:
        raise ValueError("variables must be distinct names.")
    if fitted_names is not None:
        X_pred = pd.DataFrame(Xa, columns=list(fitted_names))
    else:
        X_pred = Xa
    return X_pred, np.ascontiguousarray(Xa, dtype=np.float32), Xa, variables


def _parents(tree_) -> np.ndarray:
    """Parent of every node (-1 for the root), from the children arrays."""
    left, right = tree_.children_left, tree_.children_right
    parent = np.full(left.shape[0], -1, dtype=np.intp)
    internal = np.flatnonzero(left >= 0)
    parent[left[internal]] = internal
    parent[right[internal]] = internal
    return parent


def _count_split_variables(trees, X32, p, max_level, chunk=64):
    """(max_level, n, p) counts of the split variable ``level`` nodes above each row's leaf.

    Trees are taken ``chunk`` at a time: their split variables, an (n, chunk)
    array per level, go into one ``bincount``, so memory stays O(n * chunk).
    """
    n = X32.shape[0]
    counts = np.zeros((max_level, n * p), dtype=np.int64)
    rows = np.arange(n, dtype=np.intp)[:, None] * p
    for start in range(0, len(trees), chunk):
        block = trees[start:start + chunk]
        var = np.full((max_level, n, len(block)), -1, dtype=np.intp)
        for t, tree in enumerate(block):
            tr = tree.tree_
            node = tr.apply(X32)                       # leaf of every row
            parent, feature = _parents(tr), tr.feature
            for level in range(max_level):
                node = np.where(node >= 0, parent[np.maximum(node, 0)], -1)
                has = node >= 0
                if not has.any():
                    break
                var[level, has, t] = feature[node[has]]
        for level in range(max_level):
            ok = var[level] >= 0
            counts[level] += np.bincount((rows + var[level])[ok], minlength=n * p)
    return counts.reshape(max_level, n, p)


# -- the container --------------------------------------------------------------------
@dataclass(frozen=True)
class LocalImportance:
    """Local variable importance of every observation (Ciss 2015, section 4).

    Parameters
    ----------
    variables : tuple of str
        Input names, in the order of every variable axis below.
    counts : ndarray of shape (n_obs, n_features)
        :math:`\\mathrm{LVI}(j, i)`: the number of trees in which observation
        ``i`` reaches a leaf whose parent node splits on variable ``j``.  A tree
        that is a single leaf counts for no variable.
    positions : ndarray of shape (n_obs, n_features)
        Column ``q - 1`` holds the index of the variable at position ``q`` for
        each observation: variables sorted by decreasing count, ties broken by
        the lower column index; -1 where fewer than ``q`` variables have a
        non-zero count (the position is empty).
    prediction : ndarray of shape (n_obs,)
        The forest's prediction :math:`\\bar g(X_i)` (class label or value).
    X : ndarray of shape (n_obs, n_features)
        The rows assessed.
    task : {"classification", "regression"}
    classes : tuple or None
        The forest's classes (classification).
    n_estimators : int
        Trees counted.
    counts_by_level : ndarray of shape (max_level, n_obs, n_features)
        Level ``l`` (index ``l - 1``) counts the split variable ``l`` nodes above
        the leaf; level 1 is ``counts``.  Levels above 1 are an extension, not
        part of Ciss's definition.
    """

    variables: tuple[str, ...]
    counts: np.ndarray
    positions: np.ndarray
    prediction: np.ndarray
    X: np.ndarray
    task: str
    classes: tuple | None
    n_estimators: int
    counts_by_level: np.ndarray
    parameters: dict = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return len(self.variables)

    @property
    def n_observations(self) -> int:
        return int(self.counts.shape[0])

    @property
    def frequencies(self) -> np.ndarray:
        """``counts / n_estimators``: the share of trees behind each count."""
        return self.counts / self.n_estimators

    @property
    def ranks(self) -> np.ndarray:
        """(n_obs, n_features) position of each variable for each observation, 0 if it has none."""
        n, p = self.positions.shape
        ranks = np.zeros((n, p), dtype=np.intp)
        rows, q = np.nonzero(self.positions >= 0)
        ranks[rows, self.positions[rows, q]] = q + 1
        return ranks

    def position_counts(self, mask=None) -> np.ndarray:
        """(n_features, n_features) :math:`\\mathrm{SLI}_q(j, \\cdot)`.

        Row ``j``, column ``q - 1``: the number of observations (among ``mask``
        when given) with variable ``j`` at position ``q``.
        """
        pos = self.positions if mask is None else self.positions[np.asarray(mask, bool)]
        p = self.n_features
        out = np.zeros((p, p), dtype=np.int64)
        for q in range(p):
            col = pos[:, q]
            out[:, q] = np.bincount(col[col >= 0], minlength=p)
        return out

    def counts_frame(self, level: int = 1) -> pd.DataFrame:
        """Counts at one level (1 = the leaf's parent) as an (n_obs x variables) frame."""
        if not 1 <= level <= self.counts_by_level.shape[0]:
            raise ValueError(f"level={level!r} is not available: use 1 to "
                             f"{self.counts_by_level.shape[0]} (set max_level when computing).")
        return pd.DataFrame(self.counts_by_level[level - 1], columns=list(self.variables))

    def to_frame(self, max_position: int | None = None) -> pd.DataFrame:
        """One row per observation: prediction, variable and frequency at each position.

        Columns ``prediction``, ``position_1`` ... (names, None when empty) and
        ``frequency_1`` ... (share of trees); the table of section 4, step ii.
        """
        p = self.n_features
        m = p if max_position is None else check_position(max_position, p)
        names = np.array(list(self.variables) + [None], dtype=object)
        sorted_counts = np.take_along_axis(self.counts, np.maximum(self.positions, 0), axis=1)
        sorted_counts[self.positions < 0] = 0
        df = pd.DataFrame({"prediction": self.prediction})
        for q in range(m):
            df[f"position_{q + 1}"] = names[self.positions[:, q]]
        for q in range(m):
            df[f"frequency_{q + 1}"] = sorted_counts[:, q] / self.n_estimators
        return df

    def summary_frame(self) -> pd.DataFrame:
        """Tidy :math:`\\mathrm{SLI}_q`: one row per (variable, position) with count and share."""
        sli = self.position_counts()
        p = self.n_features
        return pd.DataFrame({"variable": np.repeat(self.variables, p),
                             "position": np.tile(np.arange(1, p + 1), p),
                             "count": sli.ravel(),
                             "share": sli.ravel() / self.n_observations})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LocalImportance":
        """The LocalImportance that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def check_position(max_position, p):
    if isinstance(max_position, bool) or not isinstance(max_position, (int, np.integer)) \
            or not 1 <= max_position <= p:
        raise ValueError(f"max_position={max_position!r} is not allowed: use an integer "
                         f"from 1 to {p} (the number of inputs).")
    return int(max_position)


def local_importance(estimator, X, *, variables=None, max_level: int = 1) -> LocalImportance:
    """Count, for each row and tree, the split variable just above the row's leaf.

    Parameters
    ----------
    estimator : fitted forest or decision tree
        ``RandomForest*``, ``ExtraTrees*`` (including :func:`fit_uniform_forest`),
        or a single ``DecisionTree*`` / ``ExtraTree*``.
    X : array-like of shape (n_obs, n_features)
        Training or test rows; labels are never used.
    variables : sequence of str, optional
        Input names; default the estimator's ``feature_names_in_``, the columns
        of a DataFrame ``X``, else ``x1 ... xp``.
    max_level : int, default=1
        Also count the split variable up to ``max_level`` nodes above the leaf
        (``counts_by_level``).  Positions always come from level 1.

    Returns
    -------
    local : LocalImportance

    Notes
    -----
    With :math:`T` trees, leaf :math:`\\ell_b(X_i)` of tree :math:`b` and
    :math:`v_b(t)` the split variable of node :math:`t`,

    .. math::

        \\mathrm{LVI}(j, i) = \\sum_{b=1}^{T}
        \\mathbf{1}\\{v_b(\\mathrm{parent}(\\ell_b(X_i))) = j\\},

    Ciss's :math:`\\mathrm{LVI}^{(b)}(j, i)` summed over trees: the variable is
    counted when it is the optimal one of the node that leads to the leaf.
    The cost is one ``tree_.apply`` and a few array lookups per tree.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 2, dtype=float)
    >>> tree = DecisionTreeClassifier(random_state=0).fit(X, 2 * X[:, 0] + X[:, 1])
    >>> local_importance(tree, X).counts.sum(axis=1).tolist()   # one leaf parent per tree
    [1, 1, 1, 1, 1, 1, 1, 1]
    """
    trees = forest_trees(estimator)
    if isinstance(max_level, bool) or not isinstance(max_level, (int, np.integer)) or max_level < 1:
        raise ValueError(f"max_level={max_level!r} is not allowed: use an integer >= 1.")
    X_pred, X32, Xa, variables = prepare_features(estimator, X, variables)
    n, p = Xa.shape
    by_level = _count_split_variables(trees, X32, p, int(max_level))
    counts = by_level[0]
    positions = np.argsort(-counts, axis=1, kind="stable")
    positions[np.take_along_axis(counts, positions, axis=1) == 0] = -1
    classifier = is_classifier(estimator)
    prediction = np.asarray(estimator.predict(X_pred))
    classes = tuple(np.asarray(estimator.classes_).tolist()) if classifier else None
    return LocalImportance(
        variables=variables, counts=counts, positions=positions, prediction=prediction, X=Xa,
        task="classification" if classifier else "regression", classes=classes,
        n_estimators=len(trees), counts_by_level=by_level,
        parameters={"estimator": type(estimator).__name__, "max_level": int(max_level)})
