"""Unnormalised MDI importances of scikit-learn forests, split by node depth.

scikit-learn's ``feature_importances_`` normalises each tree's importances to
sum to one before averaging, which hides the scale that the theory of Louppe
et al. (2013) speaks about (bits, for the entropy criterion).  This module
reads the public ``tree_`` arrays of each fitted tree and returns the raw
decreases of impurity as an :class:`~varimp_core.result.ImportanceResult`.

Missing values: scikit-learn 1.9.1's ``RandomForest*`` and ``ExtraTrees*``
(every criterion used here) split NaN natively (a node sends its missing rows to
the side that lowers the impurity most), so NaN in ``X`` is passed through;
infinities are refused.  :func:`varimp_core.api.compute_importances` gives them
NaN where an upload has a missing number (:meth:`PreparedData.native_X`).  The
forests varimp traces itself keep a number for it: the multiway forest and the
exact methods read missing as a level of its own, and the local-importance forests
(the random uniform forest, which draws cut-points between a column's minimum and
maximum, and the scikit-learn forests whose paths it follows) get the stand-in
below every value (:meth:`PreparedData.missing_value`).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                              RandomForestRegressor)

from varimp_core.measures.inputs import check_int, check_X
from varimp_core.result import ImportanceResult

__all__ = ["sklearn_importances", "fit_sklearn_forest", "fit_forest", "check_forest_options", "forest_mdi",
           "tree_mdi_by_depth", "encode_nominal", "nominal_columns", "NOMINAL_FOLDS",
           "NOMINAL_SMOOTHING"]

#: Folds of the out-of-fold target statistic that encodes a nominal input.
NOMINAL_FOLDS = 5
#: Weight, in rows, of the global statistic that a level's own is shrunk toward.
NOMINAL_SMOOTHING = 10.0

_ESTIMATORS = {("rf", "classification"): RandomForestClassifier, ("rf", "regression"): RandomForestRegressor,
               ("et", "classification"): ExtraTreesClassifier, ("et", "regression"): ExtraTreesRegressor}
# User-facing criterion name -> scikit-learn's name, per task.
_CRITERIA = {
    "classification": {"entropy": "entropy", "log_loss": "entropy", "gini": "gini"},
    "regression": {"squared_error": "squared_error", "variance": "squared_error"},
}
_UNITS = {"entropy": "bits", "log_loss": "bits", "gini": "gini", "squared_error": "variance"}


def _is_int(value) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_forest_options(kind, task, criterion):
    if kind not in ("rf", "et"):
        raise ValueError(f"kind={kind!r} is not allowed: use 'rf' (random forest) or 'et' (extra trees).")
    if task not in _CRITERIA:
        raise ValueError(f"task={task!r} is not allowed: use 'classification' or 'regression'.")
    allowed = _CRITERIA[task]
    if criterion is None:
        return "entropy" if task == "classification" else "squared_error"
    if criterion not in allowed:
        names = ", ".join(repr(c) for c in allowed)
        raise ValueError(f"criterion={criterion!r} is not allowed with task={task!r}: use one of {names}.")
    return allowed[criterion]


def _check_data(X, y, task):
    Xa = check_X(X, allow_nan=True)
    ya = np.asarray(y)
    ya = ya[:, 0] if ya.ndim == 2 and ya.shape[1] == 1 else ya
    if ya.ndim != 1 or ya.shape[0] != Xa.shape[0]:
        raise ValueError(f"y has shape {ya.shape}: it must be 1-D with one value per row of X "
                         f"({Xa.shape[0]} rows).")
    if task == "regression":
        try:
            ya = ya.astype(float)
        except (TypeError, ValueError):
            raise ValueError("y must be numeric for task='regression'.") from None
        if not np.all(np.isfinite(ya)):
            raise ValueError("y contains NaN or infinite values: drop those rows first.")
    return Xa, ya


def _forest_params(X, *, kind, task, n_estimators, max_features, max_depth, min_samples_leaf,
                   bootstrap, criterion, random_state):
    """Validate every option; return the canonical parameter dict."""
    criterion = check_forest_options(kind, task, criterion)
    n_features = np.shape(X)[1]
    n_estimators = check_int("n_estimators", n_estimators, low=1)
    max_features = min(check_int("max_features", max_features, low=1, allow_none=True) or n_features,
                       n_features)
    max_depth = check_int("max_depth", max_depth, low=1, allow_none=True)
    min_samples_leaf = check_int("min_samples_leaf", min_samples_leaf, low=1)
    if bootstrap is None:
        bootstrap = kind == "rf"
    elif not isinstance(bootstrap, (bool, np.bool_)):
        raise ValueError(f"bootstrap={bootstrap!r} is not allowed: use True, False or None "
                         "(True for 'rf', False for 'et').")
    random_state = check_int("random_state", random_state, low=0, allow_none=True)
    return {"kind": kind, "task": task, "criterion": criterion, "n_estimators": n_estimators,
            "max_features": max_features, "max_depth": max_depth,
            "min_samples_leaf": min_samples_leaf, "bootstrap": bool(bootstrap),
            "random_state": random_state}


def fit_sklearn_forest(X, y, *, kind="rf", task="classification", n_estimators=100, max_features=1,
                       max_depth=None, min_samples_leaf=1, bootstrap=None, criterion=None,
                       random_state=0, n_jobs=None):
    """Validate the options and fit a scikit-learn random forest or extra-trees ensemble.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric inputs without missing values.
    y : array-like of shape (n_samples,)
        Class labels (classification) or numbers (regression).
    kind : {"rf", "et"}, default="rf"
        ``RandomForest*`` or ``ExtraTrees*``.
    task : {"classification", "regression"}, default="classification"
    n_estimators : int, default=100
        Number of trees.
    max_features : int or None, default=1
        K, the number of variables drawn at each node; clipped to ``n_features``
        (None means ``n_features``).  K=1 with ``kind="et"`` gives totally
        randomized trees.
    max_depth : int or None, default=None
        None grows the trees fully.
    min_samples_leaf : int, default=1
        Minimum number of samples in a leaf.
    bootstrap : bool or None, default=None
        None means True for ``"rf"`` and False for ``"et"``.
    criterion : str or None, default=None
        ``"entropy"`` (alias ``"log_loss"``) or ``"gini"`` for classification,
        ``"squared_error"`` (alias ``"variance"``) for regression; None means
        ``"entropy"`` / ``"squared_error"``.
    random_state : int or None, default=0
        Seed of scikit-learn's randomness (sample draws, variables, thresholds).
    n_jobs : int or None, default=None
        Passed to scikit-learn; does not change the result.

    Returns
    -------
    estimator : RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier or ExtraTreesRegressor
        The fitted ensemble.
    """
    return _fit(X, y, kind=kind, task=task, n_estimators=n_estimators, max_features=max_features,
                max_depth=max_depth, min_samples_leaf=min_samples_leaf, bootstrap=bootstrap,
                criterion=criterion, random_state=random_state, n_jobs=n_jobs)[0]


def nominal_columns(data) -> list[int]:
    """Inputs of prepared data that are nominal: discrete, text labels, more than two levels.

    They reach scikit-learn's binary forests, and their exact limits, as an
    out-of-fold target statistic of their level (:func:`encode_nominal`)
    rather than as codes in label order (``docs/categories.md``).  Numbers
    with few values stay ordinal; two levels need no order.  Empty for a
    DiscreteTable or a built-in problem without numeric inputs.
    """
    X = getattr(data, "X_numeric", None)
    if X is None:
        return []
    out = []
    for j, name in enumerate(data.variables):
        labels = data.table.x_labels[j]
        if data.kinds.get(name) == "discrete" and len(labels) > 2 and \
                all(isinstance(v, str) for v in labels):
            out.append(j)
    return out


def _target_matrix(y, task):
    """Per row, what a level's statistic averages: Y (regression) or class indicators."""
    if task == "regression":
        return np.asarray(y, dtype=float).reshape(-1, 1)
    _, code = np.unique(np.asarray(y), return_inverse=True)
    code = code.ravel()
    Z = np.zeros((code.size, int(code.max()) + 1))
    Z[np.arange(code.size), code] = 1.0
    return Z


def encode_nominal(X, y, nominal, *, task="classification", random_state=0,
                   n_folds=NOMINAL_FOLDS, smoothing=NOMINAL_SMOOTHING):
    r"""X with each nominal column replaced by an out-of-fold target statistic of its level.

    A binary tree splits a column by thresholds, so a nominal input given as
    arbitrary codes is split by the order of the codes: a relevant 40-level
    category whose effect is not monotone in its codes needs many splits to be
    used and is hidden.  Ordering the levels by the target (Breiman's result:
    for two classes or a numeric Y, the best binary partition of the levels is
    a threshold on the class-1 frequency or the mean of Y) makes one threshold
    enough.  Computed on all rows, that order leaks: an irrelevant many-level
    input, sorted by its own noise, becomes a strong-looking one.  So the
    statistic of a row's level is computed *out of fold*: the rows are cut
    into ``n_folds`` seeded folds, and the rows of a fold get the statistic of
    their level in the other folds, shrunk toward the global value:

    .. math::

        s_\ell = \frac{n_\ell\, \bar z_\ell + m\, \bar z}{n_\ell + m},

    with :math:`n_\ell` the level's rows outside the fold, m = ``smoothing``.
    z is Y (regression); for two classes the indicator of the second class
    (its frequency); for more classes the vector of class indicators,
    projected on the first principal direction of the levels' smoothed
    class-frequency vectors (weighted by their rows; Coppersmith, Hong and
    Hosking 1999).  That one direction is computed on all rows, once per
    column: computed per fold it can turn from fold to fold (two near-equal
    principal values), and the folds' values would not agree.  It is a single
    direction in the space of classes, not a value per level, so it carries
    next to nothing of any row's own Y; the level statistics projected on it
    are out of fold as above, so a row's own Y never enters its level's
    statistic.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    nominal : sequence of int
        The columns to encode (their values are level codes).
    task : {"classification", "regression"}
    random_state : int, default=0
        Seeds the folds.  :func:`sklearn_importances` and the exact binary
        methods keep the default, so that the encoded table, hence the limit
        the forests converge to, does not depend on the forest's seed.
    n_folds : int, default=NOMINAL_FOLDS
    smoothing : float, default=NOMINAL_SMOOTHING

    Returns
    -------
    ndarray of shape (n_samples, n_features), float
    """
    Xa = np.array(X, dtype=float, copy=True)
    nominal = [int(j) for j in nominal]
    if not nominal:
        return Xa
    n = Xa.shape[0]
    Z = _target_matrix(y, task)
    fold = np.random.default_rng(random_state).permutation(n) % max(1, min(n_folds, n))
    for j in nominal:
        _, level = np.unique(Xa[:, j], return_inverse=True)
        level = level.ravel()
        L = int(level.max()) + 1
        out = np.empty(n)
        direction = None
        if Z.shape[1] > 2:      # one direction for every fold, or the folds disagree on it
            cnt = np.bincount(level, minlength=L).astype(float)
            sums = np.zeros((L, Z.shape[1]))
            np.add.at(sums, level, Z)
            glob = Z.mean(axis=0)
            stat = (sums + smoothing * glob) / (cnt + smoothing)[:, None]
            centred = (stat - glob) * np.sqrt(cnt)[:, None]
            direction = np.linalg.svd(centred, full_matrices=False)[2][0]
            if direction[np.argmax(np.abs(direction))] < 0:
                direction = -direction                      # one sign, whatever the SVD says
        for f in np.unique(fold):
            train, test = fold != f, fold == f
            if not train.any():
                out[test] = 0.0
                continue
            cnt = np.bincount(level[train], minlength=L).astype(float)
            sums = np.zeros((L, Z.shape[1]))
            np.add.at(sums, level[train], Z[train])
            glob = Z[train].mean(axis=0)
            stat = (sums + smoothing * glob) / (cnt + smoothing)[:, None]     # (L, C)
            if Z.shape[1] == 1:
                score = stat[:, 0]
            elif Z.shape[1] == 2:
                score = stat[:, 1]
            else:
                score = (stat - glob) @ direction
            out[test] = score[level[test]]
        Xa[:, j] = out
    return Xa


def _fit(X, y, *, n_jobs, partial=None, **options):
    """Validate, fit; return the estimator and the canonical parameter dict.  With
    ``partial``, grow in about ten ``warm_start`` chunks and call ``partial(estimator)``
    after each but the last (the same trees as one fit)."""
    check_forest_options(options["kind"], options["task"], options["criterion"])  # before the data
    Xa, ya = _check_data(X, y, options["task"])
    params = _forest_params(Xa, **options)
    if n_jobs is not None and not _is_int(n_jobs):
        raise ValueError(f"n_jobs={n_jobs!r} is not allowed: use an integer or None.")
    cls = _ESTIMATORS[(params["kind"], params["task"])]
    est = cls(n_estimators=params["n_estimators"], criterion=params["criterion"],
              max_features=params["max_features"], max_depth=params["max_depth"],
              min_samples_leaf=params["min_samples_leaf"], bootstrap=params["bootstrap"],
              random_state=params["random_state"], n_jobs=n_jobs)
    params["n_samples"] = int(Xa.shape[0])
    total = params["n_estimators"]
    step = total if partial is None else max(1, -(-total // 10))
    for grown in range(min(step, total), total + step, step):
        est.set_params(n_estimators=min(grown, total), warm_start=grown < total or step < total)
        est.fit(Xa, ya)
        if grown < total:
            partial(est)
    return est.set_params(warm_start=False), params


def fit_forest(X, y, *, kind, task, n_estimators, max_features, min_samples_leaf, max_depth,
               bootstrap, criterion, random_state, n_jobs=None):
    """Fit through :func:`_fit` with Gini by default for classification (for the measures)."""
    if criterion is None:
        criterion = "gini" if task == "classification" else "squared_error"
    return _fit(X, y, kind=kind, task=task, n_estimators=n_estimators, max_features=max_features,
                max_depth=max_depth, min_samples_leaf=min_samples_leaf, bootstrap=bootstrap,
                criterion=criterion, random_state=random_state, n_jobs=n_jobs)


def _node_depths(children_left, children_right):
    """Depth of every node (root 0), one vectorised step per tree level."""
    depth = np.zeros(children_left.shape[0], dtype=np.intp)
    frontier, level = np.array([0]), 0
    while frontier.size:
        depth[frontier] = level
        children = np.concatenate((children_left[frontier], children_right[frontier]))
        frontier, level = children[children >= 0], level + 1
    return depth


def tree_mdi_by_depth(tree) -> np.ndarray:
    """Unnormalised impurity decreases of one fitted tree, by variable and node depth.

    Parameters
    ----------
    tree : DecisionTreeClassifier, DecisionTreeRegressor or ExtraTree*
        A fitted single-output tree (for instance one of ``forest.estimators_``).

    Returns
    -------
    by_depth : ndarray of shape (n_features, max_depth + 1)
        Entry (m, d) sums, over the internal nodes t of depth d split on
        variable m, the weighted impurity decrease

        .. math::

            \\frac{w_t}{w_0} i(t) - \\frac{w_{t_L}}{w_0} i(t_L) - \\frac{w_{t_R}}{w_0} i(t_R)

        with :math:`w` = ``tree_.weighted_n_node_samples`` (:math:`w_0` at the
        root) and :math:`i` = ``tree_.impurity``.  The row sums are the tree's
        unnormalised MDI.  The last column is always zero (leaves do not split).
    """
    t = tree.tree_
    left, right = t.children_left, t.children_right
    n_features = int(tree.n_features_in_)
    n_cols = int(t.max_depth) + 1
    internal = np.flatnonzero(left >= 0)
    w, imp = t.weighted_n_node_samples, t.impurity
    l, r = left[internal], right[internal]
    decrease = (w[internal] * imp[internal] - w[l] * imp[l] - w[r] * imp[r]) / w[0]
    depth = _node_depths(left, right)[internal]
    cell = t.feature[internal].astype(np.intp) * n_cols + depth
    return np.bincount(cell, weights=decrease, minlength=n_features * n_cols).reshape(n_features, n_cols)


def _fold_columns(by_depth, n_cols):
    """Truncate/pad to ``n_cols`` columns, adding deeper columns into the last one."""
    out = np.zeros((by_depth.shape[0], n_cols))
    keep = min(by_depth.shape[1], n_cols)
    out[:, :keep] = by_depth[:, :keep]
    out[:, n_cols - 1] += by_depth[:, n_cols:].sum(axis=1)
    return out


def forest_mdi(estimator, *, variables=None, n_features_in=None, method=None, parameters=None,
               problem=None) -> ImportanceResult:
    """Unnormalised MDI of a fitted scikit-learn forest, with per-tree values and a depth split.

    Parameters
    ----------
    estimator : fitted RandomForest* or ExtraTrees* (any ensemble with ``estimators_`` of trees)
    variables : sequence of str or None, default=None
        Input names; None uses ``feature_names_in_`` when present, else ``x1 ... xp``.
    n_features_in : int or None, default=None
        Expected number of inputs; checked against ``estimator.n_features_in_``.
    method : str or None, default=None
        None means ``"sklearn-et"`` for extra trees and ``"sklearn-rf"`` otherwise.
    parameters : dict or None, default=None
        Stored in the result; None reads them from the estimator.
    problem : str or None, default=None
        Description of the data, stored in the result.

    Returns
    -------
    result : ImportanceResult
        ``importances`` is the mean over the T trees of each tree's
        unnormalised MDI,

        .. math::

            \\mathrm{Imp}(X_m) = \\frac{1}{T} \\sum_{T} \\sum_{t:\\, v(s_t) = X_m}
            \\Big[\\tfrac{w_t}{w_0} i(t) - \\tfrac{w_{t_L}}{w_0} i(t_L) - \\tfrac{w_{t_R}}{w_0} i(t_R)\\Big],

        in bits for the entropy criterion (scikit-learn's entropy uses log base 2),
        in Gini units or in units of variance otherwise.  ``per_tree`` holds the
        (n_estimators, n_features) inner sums; ``by_degree[m, k]`` is the part of
        ``importances[m]`` from nodes at depth k, truncated to ``n_features``
        columns with all deeper nodes folded into the last column.

    Notes
    -----
    scikit-learn's ``feature_importances_`` is the same quantity normalised to
    sum to one within each tree, averaged, and normalised again; this function
    does not normalise (use ``result.normalised`` for a share).  For binary
    trees a node's depth is not the size of its conditioning set as in the
    multiway trees of Louppe et al. (2013): a variable can be split on several
    times along a branch, so ``by_degree`` is only a depth profile.
    """
    trees = getattr(estimator, "estimators_", None)
    if trees is None:
        raise ValueError("estimator is not a fitted forest: fit it first (it has no estimators_).")
    p = int(estimator.n_features_in_)
    if n_features_in is not None and int(n_features_in) != p:
        raise ValueError(f"n_features_in={n_features_in!r} does not match the estimator's {p} inputs.")
    if variables is None:
        names = getattr(estimator, "feature_names_in_", None)
        variables = [str(v) for v in names] if names is not None else [f"x{i + 1}" for i in range(p)]
    if len(variables) != p:
        raise ValueError(f"variables has {len(variables)} names but the estimator has {p} inputs.")
    per_tree = np.zeros((len(trees), p))
    by_degree = np.zeros((p, p))
    for i, tree in enumerate(trees):
        split = tree_mdi_by_depth(tree)
        per_tree[i] = split.sum(axis=1)
        by_degree += _fold_columns(split, p)
    by_degree /= len(trees)
    is_et = isinstance(estimator, (ExtraTreesClassifier, ExtraTreesRegressor))
    if method is None:
        method = "sklearn-et" if is_et else "sklearn-rf"
    if parameters is None:
        parameters = {k: v for k, v in estimator.get_params().items()
                      if k in ("criterion", "n_estimators", "max_features", "max_depth",
                               "min_samples_leaf", "bootstrap", "random_state")}
        parameters["kind"] = "et" if is_et else "rf"
        is_reg = isinstance(estimator, (RandomForestRegressor, ExtraTreesRegressor))
        parameters["task"] = "regression" if is_reg else "classification"
    criterion = getattr(estimator, "criterion", "entropy")
    return ImportanceResult(
        variables=tuple(variables), importances=per_tree.mean(axis=0), by_degree=by_degree,
        method=method, parameters=dict(parameters), problem=problem, information=None,
        per_tree=per_tree, units=_UNITS.get(criterion, str(criterion)), exact=False)


def sklearn_importances(X, y, *, kind="rf", task="classification", n_estimators=100, max_features=1,
                        max_depth=None, min_samples_leaf=1, bootstrap=None, criterion=None,
                        random_state=0, variables=None, problem=None, n_jobs=None,
                        partial=None, nominal=()) -> ImportanceResult:
    """Fit a scikit-learn forest and return its unnormalised MDI importances.

    Parameters are those of :func:`fit_sklearn_forest`, plus

    variables : sequence of str or None, default=None
        Input names; None uses the columns of a DataFrame ``X``, else ``x1 ... xp``.
    problem : str or None, default=None
        Description of the data, stored in the result.
    partial : callable, optional
        ``partial(result)`` with the MDI of the trees grown so far: the forest then
        grows in about ten chunks (``warm_start``; scikit-learn draws the seeds of the
        trees already grown before the new ones, so the final forest is the one a single
        fit grows).
    nominal : sequence of int, default=()
        Columns holding a nominal (unordered) input as level codes: each enters the
        forest as the out-of-fold target statistic of its level
        (:func:`encode_nominal`, folds with a fixed seed: the same encoded table
        whatever ``random_state``, so ``exact-rf`` / ``exact-et`` are its limits), and is
        reported once under its own name.  ``parameters["nominal"]`` lists them.

    Returns
    -------
    result : ImportanceResult
        See :func:`forest_mdi`.  ``method`` is ``"sklearn-rf"`` or
        ``"sklearn-et"``; ``parameters`` holds the validated options (K clipped
        to ``n_features``, ``bootstrap`` resolved) and ``n_samples``;
        ``information`` is None.

    See Also
    --------
    forest_mdi : the computation on an already fitted forest.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 4)
    >>> res = sklearn_importances(X, X[:, 0], kind="et", n_estimators=10)
    >>> round(res.total, 12)   # H(Y) = 1 bit, by Theorem 2
    1.0
    """
    if variables is None and hasattr(X, "columns"):
        variables = [str(c) for c in X.columns]
    p = np.shape(X)[1] if np.ndim(X) == 2 else None
    if variables is not None and p is not None and len(variables) != p:
        raise ValueError(f"variables has {len(variables)} names but X has {p} columns.")
    nominal = [int(j) for j in nominal]
    if nominal:
        if p is None or any(not 0 <= j < p for j in nominal):
            raise ValueError(f"nominal={nominal!r} names columns X does not have.")
        if variables is None:
            variables = [f"x{i + 1}" for i in range(p)]
        X = encode_nominal(X, y, nominal, task=task)
    est, params = _fit(X, y, kind=kind, task=task, n_estimators=n_estimators,
                       max_features=max_features, max_depth=max_depth,
                       min_samples_leaf=min_samples_leaf, bootstrap=bootstrap,
                       criterion=criterion, random_state=random_state, n_jobs=n_jobs,
                       partial=None if partial is None else lambda grown: partial(forest_mdi(
                           grown, variables=variables, method=f"sklearn-{kind}",
                           problem=problem)))
    if nominal:
        params["nominal"] = [variables[j] for j in nominal]
        params["nominal_encoding"] = (f"out-of-fold target statistic ({NOMINAL_FOLDS} folds, "
                                      f"smoothing {NOMINAL_SMOOTHING:g})")
    return forest_mdi(est, variables=variables, method=f"sklearn-{params['kind']}",
                      parameters=params, problem=problem)
