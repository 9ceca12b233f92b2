"""How the predictions depend on one input: two different tools under one roof.

* **Partial dependence and ICE** (Friedman 2001; Goldstein et al. 2015) --
  :func:`partial_dependence` and :func:`partial_dependences`: set feature
  :math:`X_S` to each value of a grid *for every row* and average the model's
  response, :math:`\\mathrm{PD}_S(v) = \\frac{1}{n}\\sum_i f(v, x_{i,C})`; the
  individual curves :math:`v \\mapsto f(v, x_{i,C})` are the ICE lines.  It
  evaluates the model on rows that may never occur.  Computed by
  :func:`sklearn.inspection.partial_dependence` with ``method="brute"``, so
  that the average is exactly the mean of the ICE lines and a classifier's
  response is its predicted probability.

* **Dependence over responses** (Ciss 2015, section 5, called "partial
  dependence" there, which it is *not* in Friedman's sense) --
  :func:`dependence_over_responses`: nothing is set or averaged; it lists the
  observed pairs (feature value, forest prediction) of the observations for
  which the feature is locally important at the chosen position(s)
  (:mod:`varimp_core.local.importance`); it lives in
  :mod:`varimp_core.local.response_dependence`.

References
----------
.. [1] J. H. Friedman, "Greedy function approximation: a gradient boosting
   machine", Annals of Statistics 29, 2001.
.. [2] A. Goldstein, A. Kapelner, J. Bleich and E. Pitkin, "Peeking inside the
   black box: visualizing statistical learning with plots of individual
   conditional expectation", JCGS 24, 2015.
.. [3] S. Ciss, "Variable Importance in Random Uniform Forests", hal-01104751, 2015.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.base import is_classifier
from sklearn.inspection import partial_dependence as _sk_partial_dependence

from varimp_core.data.columns import MISSING_LABEL
from varimp_core.local.features import feature_index, is_int
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["PartialDependence", "PartialDependenceSet", "partial_dependence", "partial_dependences"]

_KINDS = ("average", "individual", "both")


# -- Friedman's partial dependence and ICE -----------------------------------------------
@dataclass(frozen=True)
class PartialDependence:
    """Partial dependence on one feature or a pair, with optional ICE lines.

    Parameters
    ----------
    features : tuple of str
        One name (1-D) or two (2-D).
    grid : tuple of ndarray
        The grid values of each feature.
    outputs : tuple
        What each output is: ``("prediction",)`` for a regressor, the classes
        of a classifier (both classes for a binary one, class 0 as one minus
        class 1).
    average : ndarray of shape (n_outputs, len(grid[0])[, len(grid[1])])
        The partial dependence.
    individual : ndarray of shape (n_outputs, n_lines, len(grid[0])) or None
        ICE lines of the observations ``ice_rows`` (1-D only).
    ice_rows : ndarray of shape (n_lines,) or None
        Row indices of X behind the ICE lines (a seeded subsample).
    categorical : tuple of bool
        Whether each feature was treated as categorical (grid = its categories).
    response : {"prediction", "probability", "decision function"}
    n_samples : int
        Rows averaged.
    grid_labels : tuple of (tuple of str or None), default=()
        Per feature, the label of each grid value (a category's name for an
        ordinal-coded input), or None where the values are their own labels.
    """

    features: tuple[str, ...]
    grid: tuple[np.ndarray, ...]
    outputs: tuple
    average: np.ndarray
    individual: np.ndarray | None
    ice_rows: np.ndarray | None
    categorical: tuple[bool, ...]
    response: str
    n_samples: int
    grid_labels: tuple = ()

    def to_frame(self) -> pd.DataFrame:
        """Tidy averages: ``feature``, ``value`` (``_1``/``_2`` for a pair), ``output``, ``average``.

        A value with a label in :attr:`grid_labels` is written as it: every
        value of a categorical feature is its category's name ("Biscoe", not
        0), and the stand-in of a numeric feature's missing rows is
        ``"missing"``; other numbers stay numbers.
        """
        k = len(self.outputs)
        g = [self._named(i) for i in range(len(self.features))]
        outputs = np.asarray(self.outputs, dtype=object)
        if len(self.features) == 1:
            return pd.DataFrame({"feature": self.features[0], "value": np.tile(g[0], k),
                                 "output": np.repeat(outputs, g[0].size),
                                 "average": self.average.reshape(-1)})
        g1, g2 = g
        m = g1.size * g2.size
        return pd.DataFrame({"feature_1": self.features[0], "value_1": np.tile(np.repeat(g1, g2.size), k),
                             "feature_2": self.features[1], "value_2": np.tile(np.tile(g2, g1.size), k),
                             "output": np.repeat(outputs, m),
                             "average": self.average.reshape(-1)})

    def _named(self, i: int) -> np.ndarray:
        """Grid ``i`` with the values that have a name written as it (see :meth:`to_frame`)."""
        labels = (tuple(self.grid_labels) + (None,) * len(self.features))[i]
        if not labels:
            return np.asarray(self.grid[i])
        own = not self.categorical[i]   # a numeric value is its own number, unless missing
        return np.array([v if own and lab != MISSING_LABEL else lab
                         for v, lab in zip(np.asarray(self.grid[i]).tolist(), labels)],
                        dtype=object)

    def ice_frame(self) -> pd.DataFrame:
        """Tidy ICE lines: ``observation`` (row of X), ``feature``, ``value``, ``output``, ``prediction``."""
        if self.individual is None:
            raise ValueError("No ICE lines were computed; use kind='individual' or 'both'.")
        k, n_lines, g = self.individual.shape
        return pd.DataFrame({
            "observation": np.tile(np.repeat(self.ice_rows, g), k),
            "feature": self.features[0],
            "value": np.tile(self.grid[0], k * n_lines),
            "output": np.repeat(np.asarray(self.outputs, dtype=object), n_lines * g),
            "prediction": self.individual.reshape(-1)})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PartialDependence":
        """The PartialDependence that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _feature_names(estimator, X, feature_names, p):
    if feature_names is not None:
        names = [str(f) for f in feature_names]
        if len(names) != p:
            raise ValueError(f"feature_names has {len(names)} names but X has {p} columns.")
        return names
    if hasattr(X, "columns"):
        return [str(c) for c in X.columns]
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is not None and len(fitted) == p:
        return [str(f) for f in fitted]
    return [f"x{j + 1}" for j in range(p)]


def _categorical_mask(categorical_features, names):
    p = len(names)
    if categorical_features is None:
        return np.zeros(p, dtype=bool)
    cats = list(np.atleast_1d(np.asarray(categorical_features, dtype=object)))
    if len(cats) == p and all(isinstance(c, (bool, np.bool_)) for c in cats):
        return np.array(cats, dtype=bool)
    mask = np.zeros(p, dtype=bool)
    mask[[feature_index(c, names) for c in cats]] = True
    return mask


def _check_grid(grid_resolution, percentiles, max_ice_lines, kind):
    if not is_int(grid_resolution) or grid_resolution < 2:
        raise ValueError(f"grid_resolution={grid_resolution!r} is not allowed: use an integer "
                         "of at least 2 (grid points per feature).")
    try:
        lo, hi = (float(v) for v in percentiles)
        ok = 0 <= lo < hi <= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"percentiles={percentiles!r} is not allowed: give two numbers "
                         "0 <= low < high <= 1.")
    if max_ice_lines is not None and (not is_int(max_ice_lines) or max_ice_lines < 1):
        raise ValueError(f"max_ice_lines={max_ice_lines!r} is not allowed: use an integer >= 1 "
                         "or None (all lines).")
    if kind not in _KINDS:
        raise ValueError(f"kind={kind!r} is not allowed: use 'average', 'individual' or 'both'.")
    return (lo, hi)


def _float_numeric(X, columns):
    """Integer numeric features as floats: scikit-learn refuses integer grids (rounding)."""
    if hasattr(X, "iloc"):
        ints = [X.columns[j] for j in columns if pd.api.types.is_integer_dtype(X.dtypes.iloc[j])]
        return X.astype({c: float for c in ints}) if ints else X
    if np.issubdtype(X.dtype, np.integer) and columns:
        return X.astype(float)
    return X


def _column(X, j):
    return X.iloc[:, j].to_numpy() if hasattr(X, "iloc") else np.asarray(X)[:, j]


def partial_dependence(estimator, X, features, *, kind="average", grid_resolution=100,
                       percentiles=(0.05, 0.95), categorical_features=None, feature_names=None,
                       max_ice_lines=100, random_state=0, custom_values=None
                       ) -> PartialDependence:
    """Partial dependence (and ICE lines) of a fitted model on one feature or a pair.

    Parameters
    ----------
    estimator : fitted scikit-learn regressor or classifier
    X : array-like or DataFrame of shape (n_samples, n_features)
        The rows averaged over (usually the training rows).
    features : str or int, or a pair of them
        One feature for a 1-D dependence, two for a 2-D one.
    kind : {"average", "individual", "both"}, default="average"
        ``"individual"`` and ``"both"`` also keep ICE lines (1-D only); the
        average is always returned.
    grid_resolution : int, default=100
        Grid points per numeric feature, equally spaced between the
        ``percentiles`` of its values (fewer when it has fewer distinct values).
    percentiles : (float, float), default=(0.05, 0.95)
        Ends of the grid, as fractions in [0, 1].
    categorical_features : sequence of str or int, or bool mask, optional
        Features whose grid is the list of their categories.
    feature_names : sequence of str, optional
        Names of the columns of X when it is not a DataFrame.
    max_ice_lines : int or None, default=100
        Keep at most this many ICE lines, a seeded subsample of the rows
        (the average always uses every row).
    random_state : int or None, default=0
        Seed of that subsample.
    custom_values : dict, optional
        ``{feature name: grid}``: these grids instead of the percentile grids
        (scikit-learn's ``custom_values``).

    Returns
    -------
    result : PartialDependence

    Raises
    ------
    ValueError
        For an unknown feature name, ``grid_resolution < 2``, bad percentiles,
        a constant feature, ICE asked for a pair, or a model that is neither a
        regressor nor a classifier.
    """
    lo_hi = _check_grid(grid_resolution, percentiles, max_ice_lines, kind)
    if not (is_classifier(estimator) or hasattr(estimator, "predict")):
        raise ValueError("The estimator must be a fitted scikit-learn regressor or classifier.")
    if not hasattr(X, "iloc"):
        X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X has shape {X.shape}: it must be 2-D with at least one row.")
    n, p = X.shape
    names = _feature_names(estimator, X, feature_names, p)
    pair = isinstance(features, (tuple, list, np.ndarray)) and not isinstance(features, str)
    feats = list(features) if pair else [features]
    if not 1 <= len(feats) <= 2:
        raise ValueError(f"features={features!r} is not allowed: give one feature or a pair.")
    idx = [feature_index(f, names) for f in feats]
    if len(idx) == 2 and idx[0] == idx[1]:
        raise ValueError("The two features of a 2-D partial dependence must differ.")
    if len(idx) == 2 and kind != "average":
        raise ValueError("ICE lines are drawn for one feature; use kind='average' for a pair.")
    for j in idx:
        values = pd.unique(_column(X, j))
        if values.size < 2:
            only = values[0].item() if hasattr(values[0], "item") else values[0]
            raise ValueError(f"Feature {names[j]!r} is constant in X (every row is "
                             f"{only!r}); partial dependence needs at least two values.")
    cat_mask = _categorical_mask(categorical_features, names)
    X = _float_numeric(X, [j for j in idx if not cat_mask[j]])
    fitted_names = getattr(estimator, "feature_names_in_", None)
    if fitted_names is not None and not hasattr(X, "iloc"):
        X = pd.DataFrame(X, columns=[str(c) for c in fitted_names])
    elif fitted_names is None and hasattr(X, "iloc") and all(
            pd.api.types.is_numeric_dtype(t) for t in X.dtypes):
        X = X.to_numpy(dtype=float)          # fitted on an array: no feature-name warning
    classifier = is_classifier(estimator)
    response_method = "auto"
    if classifier:
        response_method = "predict_proba" if hasattr(estimator, "predict_proba") else "decision_function"
    ice = kind != "average"
    out = _sk_partial_dependence(
        estimator, X, [tuple(idx)] if len(idx) == 2 else idx, categorical_features=cat_mask,
        response_method=response_method, percentiles=lo_hi, grid_resolution=int(grid_resolution),
        method="brute", kind="both" if ice else "average",
        custom_values={names.index(f): np.asarray(v, dtype=float)
                       for f, v in (custom_values or {}).items()} or None)
    average = np.asarray(out["average"], dtype=float)
    individual = np.asarray(out["individual"], dtype=float) if ice else None
    if classifier:
        classes = tuple(np.asarray(estimator.classes_).tolist())
        if response_method == "predict_proba" and len(classes) == 2:
            average = np.concatenate([1.0 - average, average])
            if individual is not None:
                individual = np.concatenate([1.0 - individual, individual])
            outputs = classes
        else:
            outputs = classes if average.shape[0] == len(classes) else classes[1:]
        response = "probability" if response_method == "predict_proba" else "decision function"
    else:
        outputs = ("prediction",) if average.shape[0] == 1 else \
            tuple(f"output {k}" for k in range(average.shape[0]))
        response = "prediction"
    rows = None
    if individual is not None:
        rows = np.arange(n)
        if max_ice_lines is not None and n > max_ice_lines:
            rng = np.random.default_rng(random_state)
            rows = np.sort(rng.choice(n, size=int(max_ice_lines), replace=False))
        individual = individual[:, rows]
    return PartialDependence(
        features=tuple(names[j] for j in idx), grid=tuple(np.asarray(g) for g in out["grid_values"]),
        outputs=outputs, average=average, individual=individual, ice_rows=rows,
        categorical=tuple(bool(cat_mask[j]) for j in idx), response=response, n_samples=int(n))


@dataclass(frozen=True)
class PartialDependenceSet:
    """Several partial dependences, possibly cut short by ``should_stop``.

    Parameters
    ----------
    results : tuple of PartialDependence
        In the order asked, as far as computed.
    stopped : bool
        True when ``should_stop`` ended the loop early.
    n_requested : int
    """

    results: tuple[PartialDependence, ...]
    stopped: bool
    n_requested: int

    def to_frame(self) -> pd.DataFrame:
        """The averages of every result, stacked (see :meth:`PartialDependence.to_frame`)."""
        frames = [r.to_frame() for r in self.results]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PartialDependenceSet":
        """The PartialDependenceSet that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def partial_dependences(estimator, X, features, *, progress: Callable[[int, int], None] | None = None,
                        should_stop: Callable[[], bool] | None = None, **options) -> PartialDependenceSet:
    """:func:`partial_dependence` for a list of features and pairs, with progress and cancel.

    Parameters
    ----------
    estimator, X
        As in :func:`partial_dependence`.
    features : sequence
        Each item a feature (1-D) or a pair (2-D).  Every class of a
        classifier comes out of each call.
    progress : callable, optional
        ``progress(done, total)`` after each item.
    should_stop : callable, optional
        Checked before each item; when it returns True the loop stops and the
        results so far are returned with ``stopped=True``.
    **options
        Passed to :func:`partial_dependence`.

    Returns
    -------
    result : PartialDependenceSet
    """
    items = list(features) if not isinstance(features, str) else [features]
    if not items:
        raise ValueError("features is empty; give at least one feature or pair.")
    results, stopped = [], False
    for k, item in enumerate(items):
        if should_stop is not None and should_stop():
            stopped = True
            break
        results.append(partial_dependence(estimator, X, item, **options))
        if progress is not None:
            progress(k + 1, len(items))
    return PartialDependenceSet(results=tuple(results), stopped=stopped, n_requested=len(items))
