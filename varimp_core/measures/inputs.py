"""Validation shared by the importance measures: each bad input fails with a sentence.

Shared by :mod:`varimp_core.measures` and :mod:`varimp_core.forests.sklearn_mdi`; the
public functions call them at the top, so the work in :mod:`varimp_core.measures.tree_kernels` can assume clean arrays.
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                              RandomForestRegressor)

_FORESTS = (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier, ExtraTreesRegressor)
_CLASSIFIERS = (RandomForestClassifier, ExtraTreesClassifier)


def is_classifier_forest(estimator) -> bool:
    return isinstance(estimator, _CLASSIFIERS)


def check_forest(estimator, *, what: str) -> None:
    """A fitted single-output scikit-learn random forest or extra-trees ensemble."""
    if not isinstance(estimator, _FORESTS):
        raise ValueError(f"{what} needs a scikit-learn RandomForest or ExtraTrees estimator, "
                         f"got {type(estimator).__name__}.")
    if getattr(estimator, "estimators_", None) is None:
        raise ValueError(f"{what} needs a fitted forest: call fit first (it has no estimators_).")
    if getattr(estimator, "n_outputs_", 1) != 1:
        raise ValueError(f"{what} handles a single output, and this forest was fitted on "
                         f"{estimator.n_outputs_} outputs.")


def variable_names(X, p: int, variables=None, *, width: str = "X has {p} columns") -> tuple[str, ...]:
    """Names of the p inputs: ``variables``, else X's columns, else ``x1 ... xp``.

    ``width`` ends the error sentence when the count is wrong (``{p}`` is filled in).
    """
    if variables is None:
        if hasattr(X, "columns"):
            variables = [str(c) for c in X.columns]
        else:
            variables = [f"x{i + 1}" for i in range(p)]
    variables = tuple(str(v) for v in variables)
    if len(variables) != p:
        raise ValueError(f"variables has {len(variables)} names but {width.format(p=p)}.")
    return variables


def check_X(X, *, n_features: int | None = None, allow_nan: bool = False) -> np.ndarray:
    """Numeric, finite, 2-D; float64 copy-free when possible.  ``allow_nan`` lets NaN (a
    missing value) through to a forest that splits it natively; infinities are refused."""
    try:
        Xa = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("X must be numeric: encode categorical columns as numbers first.") from None
    if Xa.ndim != 2 or Xa.shape[0] < 1 or Xa.shape[1] < 1:
        raise ValueError(f"X has shape {Xa.shape}: it must be 2-D with at least one row and one column.")
    if not np.all(np.isfinite(Xa) | (allow_nan & np.isnan(Xa))):
        raise ValueError("X contains NaN or infinite values: impute or drop them first.")
    if n_features is not None and Xa.shape[1] != n_features:
        raise ValueError(f"X has {Xa.shape[1]} columns but the forest was fitted on {n_features}.")
    return Xa


def check_target(y, n_rows: int, task: str) -> np.ndarray:
    """1-D, one value per row, finite; a classification target must look like labels."""
    ya = np.asarray(y)
    ya = ya[:, 0] if ya.ndim == 2 and ya.shape[1] == 1 else ya
    if ya.ndim != 1 or ya.shape[0] != n_rows:
        raise ValueError(f"y has shape {ya.shape}: it must be 1-D with one value per row of X "
                         f"({n_rows} rows).")
    if ya.dtype.kind in "fc" and not np.all(np.isfinite(ya)):
        raise ValueError("y contains NaN or infinite values: drop those rows first.")
    if ya.dtype.kind == "O" and any(v is None or (isinstance(v, float) and math.isnan(v)) for v in ya):
        raise ValueError("y contains missing values: drop those rows first.")
    if task == "regression":
        try:
            ya = ya.astype(float)
        except (TypeError, ValueError):
            raise ValueError("y must be numeric for task='regression'.") from None
    elif ya.dtype.kind == "f" and not np.all(ya == np.round(ya)):
        n_distinct = np.unique(ya).size
        raise ValueError(f"y has non-integer values ({n_distinct} distinct): it looks like a "
                         "regression target, and this is a classification measure; use "
                         "task='regression'.")
    return ya


def encode_target(estimator, y) -> tuple[np.ndarray, np.ndarray]:
    """Response matrix of Li et al. (2019): one-hot rows (classes_ order) or y itself.

    Returns ``(Y, target)`` with ``Y`` of shape (n, K) float and ``target`` the
    class index (classification) or y (regression).
    """
    if is_classifier_forest(estimator):
        classes = estimator.classes_
        ya = np.asarray(y)
        if ya.dtype.kind == "f" and classes.dtype.kind != "f" and np.all(ya == np.round(ya)):
            ya = ya.astype(classes.dtype)
        code = np.searchsorted(classes, ya)
        code = np.clip(code, 0, len(classes) - 1)
        bad = classes[code] != ya
        if np.any(bad):
            unseen = np.unique(ya[bad])[:5]
            shown = ", ".join(map(str, unseen))
            raise ValueError(f"y has labels the forest was not fitted on ({shown}); "
                             "pass the labels of the training data.")
        Y = np.zeros((ya.shape[0], len(classes)))
        Y[np.arange(ya.shape[0]), code] = 1.0
        return Y, code
    yf = np.asarray(y, dtype=float)
    return yf[:, None], yf


def check_fitted_rows(estimator, n_rows: int, samples: list[np.ndarray]) -> None:
    """The in-bag indices must refer to X's rows: X is the training data."""
    top = max((int(s.max()) for s in samples if s.size), default=-1)
    same_size = getattr(estimator, "max_samples", None) is None or not estimator.bootstrap
    if top >= n_rows or (same_size and samples and samples[0].size != n_rows):
        fitted = samples[0].size if same_size and samples else top + 1
        raise ValueError(f"X has {n_rows} rows but the forest was fitted on {fitted}: "
                         "out-of-bag measures need the training data itself.")


def constant_columns(Xa: np.ndarray, variables) -> None:
    const = np.flatnonzero(np.all(Xa == Xa[:1], axis=0))
    if const.size:
        names = ", ".join(repr(variables[j]) for j in const[:10])
        more = f" and {const.size - 10} more" if const.size > 10 else ""
        verb = "is" if const.size == 1 else "are"
        raise ValueError(f"Column{'s' if const.size > 1 else ''} {names}{more} {verb} constant: "
                         "a tree can never split on it; drop it first.")


def check_int(name: str, value, *, low: int, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name}={value!r} is not allowed: use an integer >= {low}{extra}.")
    return int(value)


def resolve_max_features(max_features, p: int) -> int:
    """``"sqrt"``, ``"log2"``, None (all) or an integer -> an integer in [1, p]."""
    if max_features is None:
        return p
    if max_features == "sqrt":
        return max(1, int(math.sqrt(p)))
    if max_features == "log2":
        return max(1, int(math.log2(p)))
    if isinstance(max_features, Integral) and not isinstance(max_features, bool) and max_features >= 1:
        return min(int(max_features), p)
    raise ValueError(f"max_features={max_features!r} is not allowed: use 'sqrt', 'log2', None "
                     "or an integer >= 1.")


def check_samples(samples: str) -> str:
    if samples not in ("oob", "in_bag"):
        raise ValueError(f"samples={samples!r} is not allowed: use 'oob' (out-of-bag rows, "
                         "Li et al. eq. 14) or 'in_bag' (the training rows, Prop. 1).")
    return samples


def check_has_oob(estimator, *, what: str) -> None:
    if not estimator.bootstrap:
        raise ValueError(f"{what} needs out-of-bag samples; turn bootstrap on (bootstrap=True).")


# -- shared by the measure modules ---------------------------------------------
def forest_kind(estimator) -> str:
    return "et" if isinstance(estimator, (ExtraTreesClassifier, ExtraTreesRegressor)) else "rf"


def forest_parameters(estimator) -> dict:
    params = {k: v for k, v in estimator.get_params().items()
              if k in ("criterion", "n_estimators", "max_features", "max_depth",
                       "min_samples_leaf", "bootstrap", "random_state")}
    params["kind"] = forest_kind(estimator)
    params["task"] = "classification" if is_classifier_forest(estimator) else "regression"
    return params


def make_result(estimator, variables, per_tree, *, measure, units, extra=None, parameters=None,
                problem=None):
    """An ImportanceResult with ``by_degree=None``, the mean over rows of ``per_tree``."""
    from varimp_core.result import ImportanceResult

    params = dict(parameters) if parameters is not None else forest_parameters(estimator)
    params.update(extra or {})
    params["measure"] = measure
    return ImportanceResult(variables=variables, importances=per_tree.mean(axis=0), by_degree=None,
                            method=f"sklearn-{forest_kind(estimator)}", parameters=params,
                            problem=problem, per_tree=per_tree, units=units)


def prepare(estimator, X, y, what):
    """Validate a fitted forest and its training data; float32 X, encoded y, in-bag indices."""
    check_forest(estimator, what=what)
    p = int(estimator.n_features_in_)
    Xa = check_X(X, n_features=p)
    task = "classification" if is_classifier_forest(estimator) else "regression"
    ya = check_target(y, Xa.shape[0], task)
    Y, target = encode_target(estimator, ya)
    samples = estimator.estimators_samples_
    check_fitted_rows(estimator, Xa.shape[0], samples)
    return p, np.ascontiguousarray(Xa, dtype=np.float32), Y, target, samples


def tree_weights(samples, n_rows, which):
    """Per tree: in-bag multiplicities (``"in_bag"``) or the out-of-bag indicator (``"oob"``)."""
    for s in samples:
        counts = np.bincount(s, minlength=n_rows).astype(float)
        yield counts if which == "in_bag" else (counts == 0).astype(float)

