"""Why this row: local MDI, Saabas and TreeSHAP of fitted forests, and one row's comparison.

Four answers to "which inputs matter for this row", which explain different things:

* **local MDI** (Sutera et al. 2021; :func:`sklearn_local_mdi`,
  :func:`multiway_local_mdi`, exact: :func:`~varimp_core.local.local_mdi.exact_local_mdi`)
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

from varimp_core.local.importance import _prepare_X, _trees_of, local_importance
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
    trees = _trees_of(estimator)
    _check_single_output(estimator)
    _, X32, Xa, variables = _prepare_X(estimator, X, variables)
    n, p = Xa.shape
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
        w = t.weighted_n_node_samples
        l, r = left[internal], right[internal]
        glob += np.bincount(t.feature[internal].astype(np.intp),
                            weights=(w[internal] * imp[internal] - w[l] * imp[l] - w[r] * imp[r])
                            / w[0], minlength=p)
    T = len(trees)
    mean = total / T
    var = np.maximum(total_sq / T - mean * mean, 0.0) * (T / (T - 1)) if T > 1 \
        else np.full((n, p), np.nan)
    criterion = getattr(estimator, "criterion", getattr(trees[0], "criterion", "gini"))
    w = np.ones(n) if weight is None else np.asarray(weight, dtype=float).ravel()
    if w.shape != (n,):
        raise ValueError(f"weight has {w.size} entries but X has {n} rows.")
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
    trees = _trees_of(estimator)
    _check_single_output(estimator)
    _, X32, Xa, variables = _prepare_X(estimator, X, variables)
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

    _trees_of(estimator)
    _check_single_output(estimator)
    _, X32, Xa, variables = _prepare_X(estimator, X, variables)
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
