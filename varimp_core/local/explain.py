"""Why this row: local MDI, Saabas and TreeSHAP of fitted forests, and one row's comparison.

Four answers to "which inputs matter for this row", which explain different things:

* **local MDI** (Sutera et al. 2021; :func:`sklearn_local_mdi`,
  :func:`multiway_local_mdi`, exact: :func:`~varimp_core.local.local_mdi.exact_local_mdi`
  and :func:`~varimp_core.local.local_binary.exact_binary_local_mdi`)
  splits the *information about Y* the trees extract along the row's path,
  :math:`i(\\mathrm{root}) - i(\\mathrm{leaf}(x))`, between the variables: the
  impurity decrease :math:`i(t) - i(t_x)` of each node on the path goes to its
  split variable.  Its mean over the learning rows is the global MDI.
* **Saabas** (treeinterpreter; :func:`sklearn_saabas`, :func:`multiway_saabas`)
  splits the *predicted probability* (or mean): the change of the node's
  prediction from parent to child along the path goes to the parent's split
  variable, and ``bias`` (the root's prediction) plus the contributions is the
  tree's prediction.
* **TreeSHAP** (Lundberg et al. 2020; :func:`sklearn_treeshap`, through
  ``shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")``)
  splits the same predicted probability as Shapley values of the tree's
  conditional expectations; ``expected_value`` plus the values is the prediction.
* **Ciss 2015** (:mod:`varimp_core.local.importance`) counts the variables
  that take the *first positions* above the row's leaves in the trees.

:func:`explain_row` puts the four side by side for one row (:class:`RowExplanation`).

References
----------
.. [1] A. Sutera, G. Louppe, V. A. Huynh-Thu, L. Wehenkel and P. Geurts, "From global to
   local MDI variable importances for random forests and when they are Shapley values",
   NeurIPS 2021 (arXiv:2111.02218).
.. [2] A. Saabas, "Interpreting random forests", 2014; the ``treeinterpreter`` package.
.. [3] S. M. Lundberg et al., "From local explanations to global understanding with
   explainable AI for trees", Nature Machine Intelligence 2, 2020.
.. [4] S. Ciss, "Variable Importance in Random Uniform Forests", hal-01104751, 2015.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse
from sklearn.base import is_classifier

from varimp_core.local.importance import prepare_features, forest_trees, local_importance
from varimp_core.local.local_mdi import LocalMDI, impurity_of_counts
from varimp_core.measures.tree_kernels import node_values, saabas_matrix
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["Contributions", "RowExplanation", "sklearn_local_mdi", "sklearn_saabas",
           "sklearn_treeshap", "multiway_local_mdi", "multiway_saabas", "explain_row"]

_UNITS = {"entropy": "bits", "log_loss": "bits", "gini": "gini", "squared_error": "variance",
          "friedman_mse": "variance"}


@dataclass(frozen=True)
class Contributions:
    """Additive contributions of the inputs to a forest's prediction, per row.

    ``bias + values.sum(axis=1) == prediction`` for every row (to rounding).

    Parameters
    ----------
    variables : tuple of str
    X : ndarray of shape (n_rows, n_features)
        The rows explained.
    outputs : tuple
        What each last-axis column predicts: the classes (class probabilities)
        or ``("value",)`` for regression.
    bias : ndarray of shape (n_rows, n_outputs)
        Saabas: the mean over trees of the root's prediction; TreeSHAP:
        ``expected_value``.
    values : ndarray of shape (n_rows, n_features, n_outputs)
        The contribution of each input to each output.
    prediction : ndarray of shape (n_rows, n_outputs)
        The forest's prediction (mean class probabilities, or mean).
    method : {"saabas", "treeshap"}
    standard_errors : ndarray like ``values`` or None
        Saabas: standard deviation over trees over :math:`\\sqrt{T}`; None for TreeSHAP.
    parameters : dict
    """

    variables: tuple[str, ...]
    X: np.ndarray
    outputs: tuple
    bias: np.ndarray
    values: np.ndarray
    prediction: np.ndarray
    method: str
    standard_errors: np.ndarray | None = None
    parameters: dict = field(default_factory=dict)

    def output_index(self, output=None, row: int = 0) -> int:
        """Column of ``output`` (a class, or None: the row's most probable output)."""
        if output is None:
            return int(np.argmax(self.prediction[row]))
        if output not in self.outputs:
            raise ValueError(f"output {output!r} is not one of {list(self.outputs)}.")
        return self.outputs.index(output)

    def to_frame(self, output=None) -> pd.DataFrame:
        """(n_rows x variables) contributions to one output (default: the first)."""
        k = 0 if output is None else self.output_index(output)
        return pd.DataFrame(self.values[:, :, k], columns=list(self.variables))

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`)."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "Contributions":
        """The Contributions that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _check_single_output(estimator):
    if int(getattr(estimator, "n_outputs_", 1)) != 1:
        raise ValueError("Only single-output forests are supported (this one has "
                         f"{estimator.n_outputs_} outputs).")


def _outputs(estimator) -> tuple:
    if is_classifier(estimator):
        return tuple(np.asarray(estimator.classes_).tolist())
    return ("value",)


def _method_of(estimator) -> str:
    name = type(estimator).__name__
    return "sklearn-et" if name.startswith("ExtraTree") else "sklearn-rf"


def sklearn_local_mdi(estimator, X, *, variables=None, weight=None) -> LocalMDI:
    """Local MDI of rows for a fitted scikit-learn forest (or tree), with standard errors.

    For tree :math:`T` with impurities :math:`i(t)` (``tree_.impurity``),

    .. math::

        \\mathrm{Imp}_{m,T}(x) = \\sum_{t \\in \\mathrm{path}(x):\\, v(t) = X_m}
            \\big[i(t) - i(t_x)\\big],

    computed for all rows at once as ``decision_path(X) @ M`` with the sparse
    (nodes x features) map :math:`M[c, v(\\mathrm{parent}(c))] = i(\\mathrm{parent}(c)) - i(c)`;
    ``values`` is the mean over trees (Sutera et al. 2021, eq. 5), ``standard_errors``
    the spread over trees over :math:`\\sqrt{T}`.

    Parameters
    ----------
    estimator : fitted RandomForest*, ExtraTrees* or DecisionTree* / ExtraTree*
    X : array-like of shape (n_rows, n_features)
        Rows to explain (learning or new rows; labels are not used).
    variables : sequence of str, optional
    weight : array-like of shape (n_rows,), optional
        Row weights stored in the result (default 1): with the learning rows
        and their sample weights, and trees grown without the bootstrap, the
        weighted mean of ``values`` is the forest's unnormalised MDI
        (``global_importances``, from ``tree_`` as in
        :func:`~varimp_core.forests.sklearn_mdi.forest_mdi`).  With the
        bootstrap each tree's MDI is the mean over its own in-bag rows instead.

    Returns
    -------
    LocalMDI
        Units: bits (entropy; scikit-learn's entropy is in base 2), Gini units,
        or variance (squared error) for regression.
    """
    trees = forest_trees(estimator)
    _check_single_output(estimator)
    _, X32, Xa, variables = prepare_features(estimator, X, variables)
    n, p = Xa.shape
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float).ravel()
    if w.shape != (n,):
        raise ValueError(f"weight has {w.size} entries but X has {n} rows.")
    total = np.zeros((n, p))
    total_sq = np.zeros((n, p))
    leaf = np.zeros(n)
    root = 0.0
    glob = np.zeros(p)
    for tree in trees:
        t = tree.tree_
        imp = np.asarray(t.impurity, dtype=float)
        left, right = t.children_left, t.children_right
        internal = np.flatnonzero(left >= 0)
        child = np.concatenate([left[internal], right[internal]])
        parent = np.concatenate([internal, internal])
        feat = t.feature[parent].astype(np.intp)
        M = sparse.csr_matrix((imp[parent] - imp[child], (child, feat)),
                              shape=(t.node_count, p))
        local = (tree.decision_path(X32, check_input=False) @ M).toarray()
        total += local
        total_sq += local * local
        leaf += imp[tree.apply(X32, check_input=False)]
        root += imp[0]
        wn = t.weighted_n_node_samples
        l, r = left[internal], right[internal]
        glob += np.bincount(t.feature[internal].astype(np.intp),
                            weights=(wn[internal] * imp[internal] - wn[l] * imp[l]
                                     - wn[r] * imp[r]) / wn[0], minlength=p)
    T = len(trees)
    mean = total / T
    var = np.maximum(total_sq / T - mean * mean, 0.0) * (T / (T - 1)) if T > 1 \
        else np.full((n, p), np.nan)
    criterion = getattr(estimator, "criterion", getattr(trees[0], "criterion", "gini"))
    return LocalMDI(
        variables=tuple(variables), X=Xa, weight=w, values=mean, global_importances=glob / T,
        method=_method_of(estimator), units=_UNITS.get(criterion, str(criterion)),
        root_impurity=root / T, leaf_impurity=leaf / T, standard_errors=np.sqrt(var / T),
        parameters={"estimator": type(estimator).__name__, "n_estimators": T,
                    "criterion": str(criterion)})


def sklearn_saabas(estimator, X, *, variables=None) -> Contributions:
    """Saabas contributions (treeinterpreter's definition) of a fitted scikit-learn forest.

    For tree :math:`T` with node predictions :math:`\\mu(t)` (class
    probabilities, or means),

    .. math::

        f_{m,T}(x) = \\sum_{t \\in \\mathrm{path}(x):\\, v(t) = X_m}
            \\big[\\mu(t_x) - \\mu(t)\\big], \\qquad
        \\mu(\\mathrm{root}) + \\sum_m f_{m,T}(x) = \\mu(\\mathrm{leaf}(x)),

    averaged over trees.  It explains the *predicted probability* (or value).

    Returns
    -------
    Contributions
        ``method="saabas"``, with per-row standard errors over trees.
    """
    trees = forest_trees(estimator)
    _check_single_output(estimator)
    _, X32, Xa, variables = prepare_features(estimator, X, variables)
    n, p = Xa.shape
    classification = is_classifier(estimator)
    outputs = _outputs(estimator)
    K = len(outputs)
    total = np.zeros((n, p * K))
    total_sq = np.zeros((n, p * K))
    bias = np.zeros(K)
    pred = np.zeros((n, K))
    for tree in trees:
        t = tree.tree_
        val = node_values(t, classification)
        local = (tree.decision_path(X32, check_input=False)
                 @ saabas_matrix(t, p, classification)).toarray()
        total += local
        total_sq += local * local
        bias += val[0]
        pred += val[tree.apply(X32, check_input=False)]
    T = len(trees)
    mean = total / T
    var = np.maximum(total_sq / T - mean * mean, 0.0) * (T / (T - 1)) if T > 1 \
        else np.full(mean.shape, np.nan)
    return Contributions(
        variables=tuple(variables), X=Xa, outputs=outputs,
        bias=np.repeat((bias / T)[None, :], n, axis=0), values=mean.reshape(n, p, K),
        prediction=pred / T, method="saabas",
        standard_errors=np.sqrt(var / T).reshape(n, p, K),
        parameters={"estimator": type(estimator).__name__, "n_estimators": T})


def sklearn_treeshap(estimator, X, *, variables=None) -> Contributions:
    """TreeSHAP values of a fitted scikit-learn forest, computed by ``shap``.

    ``shap.TreeExplainer(estimator, feature_perturbation="tree_path_dependent")``:
    the Shapley values of :math:`v_x(S) = E[f(X) \\mid X_S = x_S]`, the
    conditional expectation estimated by following the training-cover
    proportions down the branches of the unknown inputs (Lundberg et al. 2020,
    Algorithm 2).  They explain the *predicted probability* (or value):
    ``bias`` (shap's ``expected_value``) plus the values is the prediction.
    This function only calls shap; it does not reimplement it.

    Returns
    -------
    Contributions
        ``method="treeshap"``, ``standard_errors=None``.
    """
    import shap

    forest_trees(estimator)
    _check_single_output(estimator)
    _, X32, Xa, variables = prepare_features(estimator, X, variables)
    n, p = Xa.shape
    outputs = _outputs(estimator)
    K = len(outputs)
    explainer = shap.TreeExplainer(estimator, feature_perturbation="tree_path_dependent")
    sv = np.asarray(explainer.shap_values(Xa, check_additivity=False), dtype=float)
    values = sv.reshape(n, p, K)
    expected = np.asarray(explainer.expected_value, dtype=float).reshape(K)
    if is_classifier(estimator):
        prediction = np.asarray(estimator.predict_proba(X32), dtype=float)
    else:
        prediction = np.asarray(estimator.predict(X32), dtype=float).reshape(n, 1)
    return Contributions(
        variables=tuple(variables), X=Xa, outputs=outputs,
        bias=np.repeat(expected[None, :], n, axis=0), values=values, prediction=prediction,
        method="treeshap", standard_errors=None,
        parameters={"estimator": type(estimator).__name__,
                    "feature_perturbation": "tree_path_dependent", "shap": shap.__version__})


# -- varimp's multiway forest -----------------------------------------------------------
class _ExplainRouter:
    """Rows routed through the multiway trees of one chunk as they grow (see
    :class:`varimp_core.local.multiway._Router` for the protocol).

    Each (tree, row) entry carries the impurity and class distribution of the node it came
    from and that node's split variable; on arriving at a child it credits the variable with
    :math:`i(t) - i(t_x)` (local MDI, per tree, for the spread) and
    :math:`\\mu(t_x) - \\mu(t)` (Saabas).  A row whose value has no branch stops at the node.
    """

    def __init__(self, Q, n_levels, criterion, n_classes):
        self.Q, self.n_levels, self.criterion, self.ny = Q, n_levels, criterion, n_classes
        m, p = Q.shape
        self.p = p
        self.sums = [np.zeros((m, p)), np.zeros((m, p)), np.zeros((m, p, n_classes)),
                     np.zeros((m, n_classes)), np.zeros((m, n_classes)), np.zeros(m),
                     np.zeros(1)]           # mdi, mdi^2, saabas, bias, proba, leaf imp, root imp

    def fresh(self):
        return _ExplainRouter(self.Q, self.n_levels, self.criterion, self.ny)

    def gathered(self):
        return self.sums

    def add(self, gathered):
        for a, b in zip(self.sums, gathered):
            a += b

    def start(self, n_trees):
        m = self.Q.shape[0]
        self.row = np.tile(np.arange(m), n_trees)
        self.tree = np.repeat(np.arange(n_trees), m)
        self.node = self.tree.copy()
        self.pend_var = np.full(self.row.size, -1, dtype=np.intp)
        self.pend_imp = np.zeros(self.row.size)
        self.pend_mu = np.zeros((self.row.size, self.ny))
        self.acc = np.zeros((n_trees, m, self.p))
        self.first = True
        self.closed = False

    def _stats(self, counts):
        total = counts.sum(axis=-1, keepdims=True)
        return impurity_of_counts(counts, self.criterion), counts / np.where(total > 0, total, 1.0)

    def _credit(self, sel, var, imp_from, imp_to, mu_from, mu_to):
        np.add.at(self.acc, (self.tree[sel], self.row[sel], var), imp_from - imp_to)
        np.add.at(self.sums[2], (self.row[sel], var), mu_to - mu_from)

    def _finish(self, done, counts):
        imp, mu = self._stats(counts)
        rows = self.row[done]
        np.add.at(self.sums[4], rows, mu)
        np.add.at(self.sums[5], rows, imp)
        keep = ~done
        for name in ("row", "tree", "node", "pend_var", "pend_imp", "pend_mu"):
            setattr(self, name, getattr(self, name)[keep])

    def _close(self):
        if self.closed:
            return
        self.closed = True
        self.sums[0] += self.acc.sum(axis=0)
        self.sums[1] += (self.acc ** 2).sum(axis=0)

    def leaves(self, splittable, node_counts):
        imp, mu = self._stats(node_counts[self.node])
        if self.first:
            np.add.at(self.sums[3], self.row, mu)
            self.sums[6] += imp[self.row == 0].sum() if self.row.size else 0.0
            self.first = False
        sel = self.pend_var >= 0
        self._credit(sel, self.pend_var[sel], self.pend_imp[sel], imp[sel], self.pend_mu[sel],
                     mu[sel])
        self.pend_var[:] = -1
        self._finish(~splittable[self.node], node_counts[self.node[~splittable[self.node]]])
        if self.row.size == 0:
            self._close()

    def _values(self, chosen):
        var = chosen[self.node]
        x = self.Q[self.row, var]
        return var, x, x < self.n_levels[var]

    def descend(self, chosen, uniq, cmax, node_counts):
        var, x, seen = self._values(chosen)
        key = self.node * cmax + np.where(seen, x, 0)
        pos = np.minimum(np.searchsorted(uniq, key), max(uniq.size - 1, 0))
        child = seen & (uniq[pos] == key) if uniq.size else np.zeros(key.size, dtype=bool)
        imp, mu = self._stats(node_counts[self.node])
        self.pend_var, self.pend_imp, self.pend_mu = np.where(child, var, -1), imp, mu
        self._finish(~child, node_counts[self.node[~child]])
        self.node = pos[child]
        if self.row.size == 0:
            self._close()

    def last(self, chosen, slot, pair_counts, node_counts):
        var, x, seen = self._values(chosen)
        n = self.node
        child = pair_counts[n, slot[n], np.where(seen, x, 0)]
        has = seen & (child.sum(axis=1) > 0)
        imp, mu = self._stats(node_counts[n])
        cimp, cmu = self._stats(child)
        self._credit(has, var[has], imp[has], cimp[has], mu[has], cmu[has])
        self._finish(np.ones(n.size, dtype=bool), np.where(has[:, None], child, node_counts[n]))
        self._close()


def _route_multiway(table, X, *, n_estimators, max_features, max_depth, bootstrap, k_semantics,
                    criterion, random_state, n_samples, n_jobs):
    from varimp_core.data.table import DiscreteTable
    from varimp_core.forests.multiway import grow_forest_routed
    from varimp_core.local.multiway import check_rows

    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")
    Q = check_rows(X, table)
    router = _ExplainRouter(Q, table.n_levels, criterion, table.n_classes)
    result = grow_forest_routed(table, router, n_estimators=n_estimators,
                                max_features=max_features, max_depth=max_depth,
                                bootstrap=bootstrap, k_semantics=k_semantics,
                                criterion=criterion, random_state=random_state,
                                n_samples=n_samples, n_jobs=n_jobs)
    return Q, router.sums, result


def multiway_local_mdi(table, X=None, *, n_estimators: int = 100, max_features: int = 1,
                       max_depth=None, bootstrap: bool = False, k_semantics: str = "id3",
                       criterion: str = "entropy", random_state=0, n_samples=None,
                       n_jobs=None) -> LocalMDI:
    """Local MDI of rows for the forest :func:`~varimp_core.forests.multiway.grow_forest` grows.

    The same trees are grown again (same seeds; routing draws nothing) and the rows are
    sent down them as they grow; each node on a row's path credits its split variable
    with :math:`i(t) - i(t_x)` (bits for entropy, Gini units for gini).  A row whose
    value has no branch at a node stops there.

    Parameters
    ----------
    table : DiscreteTable
        Learning rows, as for ``grow_forest``.
    X : array-like of int, optional
        Rows to explain as codes; default the table's rows, with ``weight`` their
        probabilities, so that without the bootstrap the weighted mean of ``values``
        is ``global_importances`` (the forest's MDI).
    n_estimators, max_features, max_depth, bootstrap, k_semantics, criterion, random_state, n_samples, n_jobs
        As in ``grow_forest``.

    Returns
    -------
    LocalMDI
        ``method="forest"``, with standard errors over trees.  The exact limit of
        ``T -> infinity`` (without bootstrap) is
        :func:`~varimp_core.local.local_mdi.exact_local_mdi`.
    """
    return _multiway_results(table, X, *_route_multiway(
        table, X, n_estimators=n_estimators, max_features=max_features, max_depth=max_depth,
        bootstrap=bootstrap, k_semantics=k_semantics, criterion=criterion,
        random_state=random_state, n_samples=n_samples, n_jobs=n_jobs))[0]


def _multiway_results(table, X, Q, sums, result):
    """(LocalMDI, Saabas Contributions) from what one routing of the rows gathered."""
    T = int(result.parameters["n_estimators"])
    mean = sums[0] / T
    var = np.maximum(sums[1] / T - mean ** 2, 0.0) * (T / (T - 1)) if T > 1 \
        else np.full(mean.shape, np.nan)
    weight = table.probabilities if X is None else np.ones(Q.shape[0])
    local = LocalMDI(
        variables=tuple(table.variables), X=Q, weight=weight, values=mean,
        global_importances=result.importances, method="forest", units=result.units,
        root_impurity=float(sums[6][0]) / T, leaf_impurity=sums[5] / T,
        standard_errors=np.sqrt(var / T), parameters=dict(result.parameters))
    saabas = Contributions(
        variables=tuple(table.variables), X=Q, outputs=tuple(table.y_labels),
        bias=sums[3] / T, values=sums[2] / T, prediction=sums[4] / T, method="saabas",
        standard_errors=None, parameters={"estimator": "multiway forest", **result.parameters})
    return local, saabas


def multiway_saabas(table, X=None, *, n_estimators: int = 100, max_features: int = 1,
                    max_depth=None, bootstrap: bool = False, k_semantics: str = "id3",
                    criterion: str = "entropy", random_state=0, n_samples=None,
                    n_jobs=None) -> Contributions:
    """Saabas contributions of rows for varimp's multiway forest (class probabilities).

    Same trees and routing as :func:`multiway_local_mdi`; each node on the path credits its
    split variable with :math:`\\mu(t_x) - \\mu(t)`, the change of the class
    distribution.  TreeSHAP is not available for this forest: it keeps no trees
    (they are grown level by level and discarded), and shap reads stored trees.

    Returns
    -------
    Contributions
        ``method="saabas"``, ``outputs`` the table's class labels, no standard errors.
    """
    return _multiway_results(table, X, *_route_multiway(
        table, X, n_estimators=n_estimators, max_features=max_features, max_depth=max_depth,
        bootstrap=bootstrap, k_semantics=k_semantics, criterion=criterion,
        random_state=random_state, n_samples=n_samples, n_jobs=n_jobs))[1]


# -- one row, four answers ----------------------------------------------------------------
@dataclass(frozen=True)
class RowExplanation:
    """Local MDI, Saabas, TreeSHAP and Ciss (2015) of one row, side by side.

    They answer different questions:

    * ``local_mdi`` -- the *information about Y* the trees extract on the row's path,
      :math:`i(\\mathrm{root}) - i(\\mathrm{leaf}(x))` (bits, Gini or variance units), split
      between the variables (Sutera et al. 2021); it sums to ``local_mdi_total``.
    * ``saabas`` -- the *predicted probability* of ``output`` (or predicted value) minus
      ``saabas_bias`` (the root's prediction), split along the path (treeinterpreter).
    * ``treeshap`` -- the same predicted probability minus ``treeshap_bias`` (shap's
      expected value), split as Shapley values (Lundberg et al. 2020); NaN when the
      forest is varimp's multiway forest (``notes`` says why).
    * ``ciss`` -- the share of trees whose leaf for the row sits right below a split on the
      variable: the *first position* of Ciss (2015), a count, not an amount.

    Parameters
    ----------
    variables : tuple of str
    x : ndarray of shape (n_features,)
        The row.
    output : object
        The class whose probability Saabas and TreeSHAP explain (or ``"value"``).
    prediction : float
        The forest's predicted probability of ``output`` (or value).
    local_mdi, local_mdi_se, saabas, treeshap, ciss : ndarray of shape (n_features,)
    local_mdi_total : float
    units : str
        Units of ``local_mdi``.
    saabas_bias, treeshap_bias : float
    method : str
        ``"sklearn-rf"``, ``"sklearn-et"`` or ``"forest"`` (multiway).
    notes : dict
        Sentences about what is missing or how it was computed.
    """

    variables: tuple[str, ...]
    x: np.ndarray
    output: object
    prediction: float
    local_mdi: np.ndarray
    local_mdi_se: np.ndarray
    local_mdi_total: float
    units: str
    saabas: np.ndarray
    saabas_bias: float
    treeshap: np.ndarray
    treeshap_bias: float
    ciss: np.ndarray
    method: str
    notes: dict = field(default_factory=dict)

    def to_frame(self) -> pd.DataFrame:
        """One row per variable: ``local_mdi``, ``local_mdi_se``, ``saabas``, ``treeshap``, ``ciss``."""
        return pd.DataFrame({"variable": list(self.variables), "x": self.x,
                             "local_mdi": self.local_mdi, "local_mdi_se": self.local_mdi_se,
                             "saabas": self.saabas, "treeshap": self.treeshap,
                             "ciss": self.ciss})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`)."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "RowExplanation":
        """The RowExplanation that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _pick_row(X, row):
    if hasattr(X, "iloc"):
        n = len(X)
        sub = lambda i: X.iloc[[i]]          # noqa: E731
    else:
        Xa = np.asarray(X)
        if Xa.ndim != 2:
            raise ValueError(f"X has shape {Xa.shape}: it must be 2-D.")
        n = Xa.shape[0]
        sub = lambda i: Xa[[i]]              # noqa: E731
    if isinstance(row, bool) or not isinstance(row, (int, np.integer)) or not -n <= row < n:
        raise ValueError(f"row={row!r} is not a row of X (it has {n} rows).")
    return sub(int(row) % n)


def explain_row(model, X, row: int = 0, *, output=None, variables=None, treeshap: bool = True,
                **forest_options) -> RowExplanation:
    """Local MDI, Saabas, TreeSHAP and Ciss (2015) of one row, in one result.

    Parameters
    ----------
    model : fitted scikit-learn forest, or DiscreteTable
        A ``RandomForest*`` / ``ExtraTrees*`` (TreeSHAP by shap), or the learning table
        of varimp's multiway forest (grown with ``forest_options``, as in
        :func:`~varimp_core.forests.multiway.grow_forest`; no TreeSHAP).
    X : array-like of shape (n_rows, n_features)
        Rows (codes for a DiscreteTable); ``X[row]`` is explained.
    row : int, default=0
    output : class label, optional
        The class whose probability Saabas and TreeSHAP explain; default the row's
        most probable class.
    variables : sequence of str, optional
    treeshap : bool, default=True
        False leaves TreeSHAP out (NaN, with a note): the other three cost one pass of the
        row through the trees, TreeSHAP far more on deep trees.
    **forest_options
        Multiway forest only: ``n_estimators``, ``max_features``, ``max_depth``,
        ``bootstrap``, ``k_semantics``, ``criterion``, ``random_state``.

    Returns
    -------
    RowExplanation
    """
    from varimp_core.data.table import DiscreteTable

    x1 = _pick_row(X, row)
    notes = {}
    if isinstance(model, DiscreteTable):
        from varimp_core.local.multiway import forest_local_importance

        opts = {"n_estimators": 100, "max_features": 1, "max_depth": None, "bootstrap": False,
                "k_semantics": "id3", "criterion": "entropy", "random_state": 0}
        unknown = set(forest_options) - set(opts)
        if unknown:
            raise ValueError(f"Unknown multiway forest options: {', '.join(sorted(unknown))}.")
        opts.update(forest_options)
        lm, sa = _multiway_results(model, x1, *_route_multiway(
            model, x1, n_samples=None, n_jobs=None, **opts))     # one routing for both
        ciss = forest_local_importance(model, x1, **{k: opts[k] for k in opts})
        k = sa.output_index(output)
        ts, ts_bias = np.full(model.n_features, np.nan), float("nan")
        notes["treeshap"] = ("TreeSHAP is not available for varimp's multiway forest: it keeps "
                             "no trees for shap to read; use a scikit-learn forest.")
        method, names = "forest", tuple(model.variables)
    else:
        if forest_options:
            raise ValueError("forest_options apply to the multiway forest only; fit the "
                             "scikit-learn forest with them instead.")
        lm = sklearn_local_mdi(model, x1, variables=variables)
        sa = sklearn_saabas(model, x1, variables=variables)
        ciss = local_importance(model, x1, variables=variables)
        k = sa.output_index(output)
        if treeshap:
            sh = sklearn_treeshap(model, x1, variables=variables)
            ts, ts_bias = sh.values[0, :, k], float(sh.bias[0, k])
        else:
            ts, ts_bias = np.full(len(lm.variables), np.nan), float("nan")
            notes["treeshap"] = "not computed (treeshap=False)"
        method, names = lm.method, lm.variables
    notes["ciss"] = "share of trees whose leaf for the row is right below a split on the variable"
    return RowExplanation(
        variables=tuple(names), x=np.asarray(lm.X[0], dtype=float), output=sa.outputs[k],
        prediction=float(sa.prediction[0, k]), local_mdi=lm.values[0],
        local_mdi_se=lm.standard_errors[0], local_mdi_total=float(lm.totals[0]),
        units=lm.units, saabas=sa.values[0, :, k], saabas_bias=float(sa.bias[0, k]),
        treeshap=np.asarray(ts, dtype=float), treeshap_bias=ts_bias,
        ciss=np.asarray(ciss.frequencies[0], dtype=float), method=method, notes=notes)
