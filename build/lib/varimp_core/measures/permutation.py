"""Importance measures that permute: Breiman's OOB MDA, held-out MDA, and shadow-corrected MDI.

All three return an :class:`~varimp_core.result.ImportanceResult` with
``by_degree=None``.

References
----------
.. [1] L. Breiman, "Random forests", Machine Learning 45, 2001 (OOB permutation).
.. [2] S. Nembrini, I. R. Koenig and M. N. Wright, "The revival of the Gini
   importance?", Bioinformatics 34(21), 2018.
"""

from __future__ import annotations

import numpy as np
from sklearn.inspection import permutation_importance
from sklearn.metrics import accuracy_score, r2_score

from varimp_core.measures import inputs as chk
from varimp_core.measures.tree_kernels import tree_permutation_increase
from varimp_core.result import ImportanceResult
from varimp_core.forests.sklearn_mdi import fit_forest, forest_mdi

__all__ = ["mda_oob", "mda_holdout", "impurity_corrected"]


def mda_oob(estimator, X, y, *, random_state=0, variables=None, problem=None) -> ImportanceResult:
    """Breiman's (2001) out-of-bag permutation importance, tree by tree.

    Parameters
    ----------
    estimator : fitted RandomForest* or ExtraTrees* with ``bootstrap=True``
    X, y : array-like of shape (n_samples, n_features) and (n_samples,)
        The training data, as for :func:`~varimp_core.measures.mdi_oob.mdi_oob`.
    random_state : int or None, default=0
        Seed of the permutations.
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    result : ImportanceResult
        ``units`` ``"error rate"`` (misclassification) or ``"mse"``;
        ``per_tree[s, k]`` is tree s's increase of error.

    Notes
    -----
    For tree T and variable k, permute column k among T's out-of-bag rows
    :math:`D \\setminus D(T)` and take the increase of T's error on them,

    .. math::

        \\mathrm{MDA}(k, T) = \\mathrm{err}_T(\\tilde X^{(k)}_{oob}) - \\mathrm{err}_T(X_{oob}),

    averaged over trees.  A variable the tree never splits on scores exactly 0.
    All permuted copies of a tree's out-of-bag rows go down the tree at once.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2))
    >>> rf = RandomForestRegressor(n_estimators=20, random_state=0).fit(X, X[:, 0])
    >>> r = mda_oob(rf, X, X[:, 0])
    >>> bool(r.importances[0] > 10 * abs(r.importances[1]))
    True
    """
    chk.check_forest(estimator, what="mda_oob")
    chk.check_has_oob(estimator, what="Breiman's out-of-bag permutation importance (mda_oob)")
    p, X32, _, target, in_bag = chk.prepare(estimator, X, y, "mda_oob")
    random_state = chk.check_int("random_state", random_state, low=0, allow_none=True)
    classification = chk.is_classifier_forest(estimator)
    rng = np.random.default_rng(random_state)
    rows = []
    for tree, w in zip(estimator.estimators_, chk.tree_weights(in_bag, X32.shape[0], "oob")):
        oob = np.flatnonzero(w)
        if oob.size:
            rows.append(tree_permutation_increase(tree, X32[oob], target[oob], p, classification, rng))
    if not rows:
        raise ValueError("mda_oob found no out-of-bag rows in any tree: use more rows.")
    variables = chk.variable_names(X, p, variables)
    return chk.make_result(estimator, variables, np.vstack(rows), measure="mda_oob",
                           units="error rate" if classification else "mse",
                           extra={"permutation_seed": random_state}, problem=problem)


def _forest_score(estimator, X, y) -> float:
    """The forest's default score (accuracy or R^2), computed as scikit-learn does.

    Adds the trees' ``predict_proba`` (``predict``) in ``estimators_`` order and
    divides by their number, exactly like the forest's own prediction with
    ``n_jobs=1``, but without the per-call parallel machinery: the same number,
    much faster for the many calls of permutation importance.
    """
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    trees = estimator.estimators_
    if chk.is_classifier_forest(estimator):
        proba = np.zeros((X32.shape[0], estimator.n_classes_))
        for tree in trees:
            proba += tree.predict_proba(X32, check_input=False)
        proba /= len(trees)
        return accuracy_score(y, estimator.classes_.take(np.argmax(proba, axis=1), axis=0))
    pred = np.zeros(X32.shape[0])
    for tree in trees:
        pred += tree.predict(X32, check_input=False)
    pred /= len(trees)
    return r2_score(y, pred)


def mda_holdout(estimator, X_test, y_test, *, n_repeats=5, random_state=0, variables=None,
                problem=None) -> ImportanceResult:
    """Permutation importance on held-out rows, by :func:`sklearn.inspection.permutation_importance`.

    Parameters
    ----------
    estimator : fitted RandomForest* or ExtraTrees*
        Fitted on other rows than ``X_test``.
    X_test : array-like of shape (n_test, n_features)
    y_test : array-like of shape (n_test,)
    n_repeats : int, default=5
        Permutations per variable.
    random_state : int or None, default=0
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    result : ImportanceResult
        ``importances[k]`` is the mean decrease of the forest's default score
        (accuracy, or :math:`R^2` for regression) when column k of ``X_test``
        is permuted; ``per_tree`` holds one row per permutation repeat
        (``parameters["per_tree_rows"] == "repeats"``).

    Notes
    -----
    The score is the forest's own (``estimator.score``), computed by a helper
    that adds the trees' predictions in the forest's order, which gives the
    same numbers in a fraction of the time.
    """
    chk.check_forest(estimator, what="mda_holdout")
    p = int(estimator.n_features_in_)
    Xa = chk.check_X(X_test, n_features=p)
    classification = chk.is_classifier_forest(estimator)
    ya = chk.check_target(y_test, Xa.shape[0], "classification" if classification else "regression")
    if classification:
        ya = estimator.classes_[chk.encode_target(estimator, ya)[1]]   # labels known to the forest
    n_repeats = chk.check_int("n_repeats", n_repeats, low=1)
    random_state = chk.check_int("random_state", random_state, low=0, allow_none=True)
    variables = chk.variable_names(X_test, p, variables)
    pi = permutation_importance(estimator, Xa, ya, scoring=_forest_score, n_repeats=n_repeats,
                                random_state=random_state)
    return chk.make_result(estimator, variables, pi.importances.T, measure="mda_holdout",
                           units="accuracy" if classification else "R^2",
                           extra={"n_repeats": n_repeats, "n_test": int(Xa.shape[0]),
                                  "per_tree_rows": "repeats"}, problem=problem)


def impurity_corrected(X, y, *, kind="rf", task="classification", n_estimators=100,
                       max_features="sqrt", min_samples_leaf=1, max_depth=None, bootstrap=True,
                       criterion=None, random_state=0, variables=None, problem=None,
                       n_jobs=None) -> ImportanceResult:
    """Impurity importance corrected with permuted shadow variables (ranger's "impurity_corrected").

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    kind, task, n_estimators, min_samples_leaf, max_depth, bootstrap, criterion, random_state, n_jobs
        As in :func:`~varimp_core.measures.suite.compute_measures`.
    max_features : int, "sqrt", "log2" or None, default="sqrt"
        Resolved on the p original columns; as in ranger, the candidates at
        each node are then drawn among all 2p columns.
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    result : ImportanceResult
        ``per_tree[s, k]`` is :math:`\\mathrm{MDI}_s(X_k) - \\mathrm{MDI}_s(\\tilde X_k)`
        (unnormalised MDI, see :func:`~varimp_core.forests.sklearn_mdi.forest_mdi`).

    Notes
    -----
    Nembrini, Koenig and Wright (2018): append :math:`\\tilde X = X_{\\pi(\\cdot)}`,
    the rows of X in one random order (a shadow of each column, independent of
    y but with the column's own distribution), fit the forest on
    :math:`[X, \\tilde X]`, and report

    .. math:: \\mathrm{AIR}(k) = \\mathrm{MDI}(X_k) - \\mathrm{MDI}(\\tilde X_k).

    A noisy variable and its shadow are exchangeable, so its expected value is 0.
    """
    Xa = chk.check_X(X)
    p = Xa.shape[1]
    variables = chk.variable_names(X, p, variables)
    random_state = chk.check_int("random_state", random_state, low=0, allow_none=True)
    perm = np.random.default_rng(random_state).permutation(Xa.shape[0])
    augmented = np.hstack([Xa, Xa[perm]])
    k = chk.resolve_max_features(max_features, p)
    est, params = fit_forest(augmented, y, kind=kind, task=task, n_estimators=n_estimators,
                                 max_features=k, min_samples_leaf=min_samples_leaf,
                                 max_depth=max_depth, bootstrap=bootstrap, criterion=criterion,
                                 random_state=random_state, n_jobs=n_jobs)
    base = forest_mdi(est)
    per_tree = base.per_tree[:, :p] - base.per_tree[:, p:]
    params.update({"shadow_seed": random_state, "max_features": k})
    return chk.make_result(est, variables, per_tree, measure="ranger", units=base.units,
                           parameters=params, problem=problem)
