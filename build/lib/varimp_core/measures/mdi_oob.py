"""MDI, MDI-oob, naive-oob and Saabas contributions of scikit-learn random forests.

Each function takes a fitted forest and returns an
:class:`~varimp_core.result.ImportanceResult` with ``by_degree=None`` and
``per_tree`` for the spread.  The table names every measure of the package;
:func:`~varimp_core.measures.suite.compute_measures` fits and runs several at once.

=================  ===========================================================
``mdi``            unnormalised mean decrease of impurity (:func:`mdi`)
``mdi_normalised`` scikit-learn's ``feature_importances_`` (per-tree shares)
``mdi_oob``        Li et al. (2019) eq. 14 on out-of-bag rows (:func:`mdi_oob`)
``mdi_in_sample``  in-bag rows: MDI exactly (Prop. 1; log score for entropy)
``naive_oob``      impurity decreases recomputed on out-of-bag rows
``mda_holdout``    permutation importance on a held-out set
``mda_oob``        Breiman's per-tree out-of-bag permutation importance
``ranger``         impurity corrected by permuted shadow copies (Nembrini et al. 2018)
=================  ===========================================================

The permutation-based ones live in :mod:`varimp_core.measures.permutation`
and :func:`compute_measures` in :mod:`varimp_core.measures.suite`.

References
----------
.. [1] X. Li, Y. Wang, S. Basu, K. Kumbier and B. Yu, "A debiased MDI feature
   importance measure for random forests", NeurIPS 2019.
.. [2] A. Saabas, "Interpreting random forests", 2014 (feature contributions).
.. [3] L. Breiman, "Random forests", Machine Learning 45, 2001 (OOB permutation).
.. [4] S. Nembrini, I. R. Koenig and M. N. Wright, "The revival of the Gini
   importance?", Bioinformatics 34(21), 2018.
"""

from __future__ import annotations

import numpy as np

from varimp_core.measures import UndefinedMeasure
from varimp_core.measures import inputs as chk
from varimp_core.measures.tree_kernels import (node_values, saabas_matrix, tree_mdi_oob,
                                               tree_mdi_oob_log, tree_naive_oob)
from varimp_core.result import ImportanceResult
from varimp_core.forests.sklearn_mdi import forest_mdi

__all__ = ["saabas_contributions", "mdi", "mdi_oob", "naive_oob"]

_IMPURITY = {"gini": "gini", "entropy": "entropy", "log_loss": "entropy",
             "squared_error": "variance", "friedman_mse": "variance"}
_UNITS = {"gini": "gini", "entropy": "bits", "variance": "variance"}


def saabas_contributions(tree, X):
    """Feature contributions of one fitted tree (Saabas 2014), vectorised.

    Parameters
    ----------
    tree : fitted DecisionTree* or ExtraTree* (e.g. one of ``forest.estimators_``)
    X : array-like of shape (n_samples, n_features)

    Returns
    -------
    bias : ndarray of shape (n_samples,) or (n_samples, n_classes)
        The root value :math:`\\mu(t_0)` (class probabilities for a classifier).
    contributions : ndarray of shape (n_samples, n_features) or (n_samples, n_features, n_classes)
        :math:`f_{T,k}(x) = \\sum_{t \\in \\mathrm{path}(x),\\, v(t) = k} \\mu(\\mathrm{child}_x(t)) - \\mu(t)`,
        the sum along the decision path of the value changes at splits on k.

    Notes
    -----
    The sum telescopes: ``bias + contributions.sum(axis=1)`` is the tree's
    prediction (its leaf value), and by Li et al. (2019), Prop. 1, the mean of
    :math:`\\langle f_{T,k}(x_i), y_i\\rangle` over the training rows is the
    tree's unnormalised MDI for the Gini and variance impurities.
    """
    tree_ = getattr(tree, "tree_", None)
    if tree_ is None:
        raise ValueError("saabas_contributions needs a fitted scikit-learn tree (it has no tree_).")
    p = int(tree.n_features_in_)
    X32 = np.ascontiguousarray(chk.check_X(X, n_features=p), dtype=np.float32)
    classification = hasattr(tree, "classes_")
    val = node_values(tree_, classification)
    K = val.shape[1]
    contrib = np.asarray((tree.decision_path(X32, check_input=False)
                          @ saabas_matrix(tree_, p, classification)).todense())
    bias = np.repeat(val[:1], X32.shape[0], axis=0)
    if classification:
        return bias, contrib.reshape(-1, p, K)
    return bias[:, 0], contrib


def mdi(estimator, *, normalised=False, variables=None, problem=None) -> ImportanceResult:
    """Mean decrease of impurity, unnormalised (default) or as scikit-learn normalises it.

    Parameters
    ----------
    estimator : fitted RandomForest* or ExtraTrees*
    normalised : bool, default=False
        False: each tree's :math:`\\sum_{t: v(t)=k} \\frac{N(t)}{n}\\Delta I(t)`
        (Li et al. eq. 4), averaged over trees (see
        :func:`~varimp_core.forests.sklearn_mdi.forest_mdi`).  True: each tree's
        values divided by their sum, averaged, divided again by the sum:
        ``estimator.feature_importances_``.
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    result : ImportanceResult
        ``units`` is the criterion's (``"gini"``, ``"bits"``, ``"variance"``) or ``"share"``.
    """
    chk.check_forest(estimator, what="MDI")
    base = forest_mdi(estimator, variables=variables, problem=problem)
    if not normalised:
        params = {**base.parameters, "measure": "mdi"}
        return ImportanceResult(**{**base.__dict__, "parameters": params})
    per_tree = base.per_tree
    sums = per_tree.sum(axis=1, keepdims=True)
    shares = np.divide(per_tree, sums, out=np.zeros_like(per_tree), where=sums > 0)
    mean = shares.mean(axis=0)
    total = mean.sum()
    scale = 1.0 / total if total > 0 else 0.0
    return chk.make_result(estimator, base.variables, shares * scale, measure="mdi_normalised",
                           units="share", parameters=base.parameters, problem=problem)


def _loop(estimator, X, y, *, samples, what, kernel):
    chk.check_forest(estimator, what=what)
    samples = chk.check_samples(samples)
    if samples == "oob":
        chk.check_has_oob(estimator, what=what)
    p, X32, Y, _, in_bag = chk.prepare(estimator, X, y, what)
    rows = [kernel(tree, X32, Y, w, p)
            for tree, w in zip(estimator.estimators_, chk.tree_weights(in_bag, X32.shape[0], samples))
            if w.sum() > 0]
    if not rows:
        raise ValueError(f"{what} found no out-of-bag rows in any tree: use more rows or "
                         "turn bootstrap on.")
    return p, np.vstack(rows)


def mdi_oob(estimator, X, y, *, samples="oob", variables=None, problem=None) -> ImportanceResult:
    """MDI-oob of Li et al. (2019), eq. 14: Saabas contributions against the out-of-bag response.

    Parameters
    ----------
    estimator : fitted RandomForest* or ExtraTrees* with ``bootstrap=True``
    X : array-like of shape (n_samples, n_features)
        The training inputs (the rows ``estimators_samples_`` refers to).
    y : array-like of shape (n_samples,)
        The training target.
    samples : {"oob", "in_bag"}, default="oob"
        ``"oob"``: eq. 14 on each tree's out-of-bag rows.  ``"in_bag"``: the
        same sum over the bootstrap sample :math:`D(T)` with its multiplicities
        (eq. 12), which equals the unnormalised MDI for the Gini and variance
        impurities (Prop. 1).
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    result : ImportanceResult
        ``per_tree[s, k]`` is tree s's value; ``importances`` their mean;
        ``units`` the forest's own impurity: ``"gini"``, ``"bits"`` (entropy
        or log_loss) or ``"variance"``; ``parameters["impurity"]`` names it.

    Raises
    ------
    UndefinedMeasure
        (a ValueError, :class:`varimp_core.measures.UndefinedMeasure`) For an
        entropy forest on out-of-bag rows whose value is :math:`-\\infty` (see
        Notes), with a sentence naming ``criterion='gini'``.
    ValueError
        For an unfitted or unsupported forest, X or y it was not fitted on,
        or no out-of-bag rows, with a sentence.

    Notes
    -----
    For a tree T with out-of-bag rows :math:`D \\setminus D(T)`,

    .. math::

        \\mathrm{MDI\\text{-}oob}(k, T) = \\frac{1}{|D \\setminus D(T)|}
        \\sum_{i \\in D \\setminus D(T)} \\langle f_{T,k}(x_i), y_i \\rangle,
        \\qquad
        f_{T,k}(x) = \\sum_{t:\\, v(t)=k} \\mu(t_L) 1_{R_{t_L}}(x) + \\mu(t_R) 1_{R_{t_R}}(x) - \\mu(t) 1_{R_t}(x),

    with y one-hot for classification (Li et al., Remark of section 3: the
    Gini index is the variance of the one-hot response) and not centred, as in
    eq. 14.  Values are averaged over trees.  Cost: one ``decision_path`` of
    the out-of-bag rows per tree.

    Entropy forests.  Prop. 1 rests on :math:`N(t)\\,\\mathrm{Gini}(t) =
    \\sum_{x_i \\in R_t} (1 - \\mu_{y_i}(t))`; for the entropy the same identity
    reads :math:`N(t)\\,H(t) = -\\sum_{x_i \\in R_t} \\log_2 \\mu_{y_i}(t)`, so the
    MDI of an entropy tree is eq. 12 with :math:`\\log_2 \\mu` in place of
    :math:`\\mu` (the log score instead of the linear one):

    .. math::

        \\mathrm{MDI}(k, T) = \\frac{1}{|D(T)|} \\sum_{i \\in D(T)}
        \\sum_{t:\\,v(t)=k,\\, x_i \\in R_t}
        \\log_2 \\mu_{y_i}(\\mathrm{child}_{x_i}(t)) - \\log_2 \\mu_{y_i}(t).

    For an entropy (``log_loss``) classifier this function takes that form,
    in bits: on the in-bag rows it equals the forest's MDI exactly, and on
    the out-of-bag rows (eq. 14's average) it is the out-of-bag gain in log
    score.  That gain is :math:`-\\infty` as soon as an out-of-bag row reaches
    a node whose in-bag rows have none of its class -- in practice in every
    fully grown tree -- and then :class:`~varimp_core.measures.UndefinedMeasure`
    is raised with a sentence rather than a value in
    another impurity's units: Li et al. define MDI-oob for the Gini and
    variance impurities, so grow the forest with ``criterion="gini"``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); y = (X[:, 0] > 0).astype(int)
    >>> rf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> r = mdi_oob(rf, X, y)
    >>> int(np.argmax(r.importances))
    0
    """
    chk.check_forest(estimator, what="MDI-oob")
    classification = chk.is_classifier_forest(estimator)
    impurity = _IMPURITY.get(getattr(estimator, "criterion", None),
                             "gini" if classification else "variance")
    if not classification:
        impurity = "variance"
    if impurity == "entropy":
        kernel = lambda tree, X32, Y, w, p: tree_mdi_oob_log(tree, X32, Y, w, p)  # noqa: E731
    else:
        kernel = lambda tree, X32, Y, w, p: tree_mdi_oob(tree, X32, Y, w, p,  # noqa: E731
                                                         classification)
    p, per_tree = _loop(estimator, X, y, samples=samples, what="MDI-oob", kernel=kernel)
    if not np.isfinite(per_tree).all():
        raise UndefinedMeasure(
            "MDI-oob of an entropy forest, in bits (the log score), is -inf here because "
            "out-of-bag rows reach nodes whose in-bag rows have none of their class; grow the "
            "forest with criterion='gini', the impurity Li et al. (2019) define MDI-oob for.")
    variables = chk.variable_names(X, p, variables)
    name = "mdi_oob" if samples == "oob" else "mdi_in_sample"
    return chk.make_result(estimator, variables, per_tree, measure=name, units=_UNITS[impurity],
                           extra={"samples": samples, "impurity": impurity}, problem=problem)


def naive_oob(estimator, X, y, *, samples="oob", variables=None, problem=None) -> ImportanceResult:
    """Impurity decreases recomputed on each tree's out-of-bag rows ("naive-oob").

    Parameters
    ----------
    estimator : fitted RandomForest* or ExtraTrees* with ``bootstrap=True``
        Criterion ``gini``, ``entropy``/``log_loss``, ``squared_error`` or ``friedman_mse``.
    X, y : the training data
    samples : {"oob", "in_bag"}, default="oob"
        ``"in_bag"`` (bootstrap multiplicities as weights) reproduces MDI exactly.
    variables : sequence of str, optional
    problem : str, optional

    Returns
    -------
    result : ImportanceResult

    Notes
    -----
    With :math:`N(t)` the out-of-bag rows reaching t and :math:`i(t)` the
    criterion's impurity of their responses,

    .. math::

        \\mathrm{naive}(k, T) = \\sum_{t:\\, v(t)=k} \\frac{N(t)\\, i(t) - N(t_L)\\, i(t_L) - N(t_R)\\, i(t_R)}{N(t_0)}.

    Li et al. (2019, section 3.2) explain why this stays biased: each term is
    still a decrease of impurity, positive unless the out-of-bag responses in
    the node are constant.
    """
    chk.check_forest(estimator, what="naive-oob")
    criterion = estimator.criterion
    if criterion not in _IMPURITY:
        raise ValueError(f"naive-oob supports the criteria {', '.join(_IMPURITY)}, and this forest "
                         f"uses {criterion!r}.")
    impurity = _IMPURITY[criterion]
    p, per_tree = _loop(estimator, X, y, samples=samples, what="naive-oob",
                        kernel=lambda tree, X32, Y, w, p: tree_naive_oob(tree, X32, Y, w, p, impurity))
    variables = chk.variable_names(X, p, variables)
    return chk.make_result(estimator, variables, per_tree, measure="naive_oob",
                           units=_UNITS[impurity], extra={"samples": samples}, problem=problem)

