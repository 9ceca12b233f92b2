"""One entry point for every importance method, used by the CLI and the dashboard.

>>> from varimp_core.api import load_data, compute_importances
>>> data = load_data(problem="xor:relevant=2,irrelevant=1")
>>> r = compute_importances(data, method="exact", max_features=1)
>>> [round(float(v), 3) for v in r.importances]
[0.5, 0.5, 0.0]
"""

from __future__ import annotations

import numpy as np

from varimp_core.data.prepare import PreparedData, load_csv, prepare_problem, prepare_table
from varimp_core.exact.recursion import exact_importances
from varimp_core.forests.multiway import grow_forest
from varimp_core.exact.information import MAX_SUBSET_FEATURES
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import eqn3_importances
from varimp_core.exact.lattice import MAX_LATTICE_CELLS, lattice_cost

__all__ = ["METHODS", "load_data", "compute_importances", "default_method", "summarize",
           "numeric_target_table"]

METHODS = ("exact", "forest", "sklearn-rf", "sklearn-et", "exact-rf", "exact-et")


def load_data(*, problem: str | None = None, data=None, target: str | None = None,
              n_samples: int | None = None, random_state: int = 0, bins: int = 5,
              max_levels: int = 20, missing: str = "category", exclude=(),
              dates: str = "expand") -> PreparedData:
    """Resolve a problem spec or a CSV file / DataFrame into :class:`PreparedData`.

    Parameters
    ----------
    problem : str, optional
        Built-in problem spec such as ``"led:noise=0.1"``.
    data : path, file-like or DataFrame, optional
        User table (with ``target``).
    target : str, optional
        Target column of ``data``.
    n_samples : int, optional
        Sample size for a problem; None uses its exact distribution when it has one.
    random_state : int, default=0
    bins, max_levels : int
        Binning of numeric inputs for the discrete methods.
    missing, exclude, dates
        Missing values, columns left out and date columns of ``data``, as in
        :func:`~varimp_core.data.prepare.prepare_table` (identifier-like
        columns are left out too).
    """
    if (problem is None) == (data is None):
        raise ValueError("Give exactly one of a problem spec or a data table.")
    if problem is not None:
        return prepare_problem(get_problem(problem), n_samples=n_samples,
                               random_state=random_state, bins=bins, max_levels=max_levels)
    if target is None:
        raise ValueError("A data table needs a target column; name it with target=.")
    import pandas as pd

    frame = data if isinstance(data, pd.DataFrame) else load_csv(data)
    source = "dataframe" if isinstance(data, pd.DataFrame) else f"upload:{getattr(data, 'name', data)}"
    return prepare_table(frame, target, bins=bins, max_levels=max_levels, source=str(source),
                         missing=missing, exclude=exclude, dates=dates)


def default_method(data: PreparedData | DiscreteTable) -> str:
    """``"exact"`` where it applies (at most MAX_SUBSET_FEATURES inputs), else ``"forest"``."""
    table = data.table if isinstance(data, PreparedData) else data
    return "exact" if table.n_features <= MAX_SUBSET_FEATURES else "forest"


def _sklearn_inputs(data: PreparedData | DiscreteTable):
    if isinstance(data, PreparedData) and data.X_numeric is not None:
        return data.native_X(), data.y, data.task  # missing numbers as NaN, split natively
    table = data.table if isinstance(data, PreparedData) else data
    w = table.weight
    if not np.allclose(w, w[0]):
        raise ValueError(
            "scikit-learn forests need samples, and this exact distribution has unequal "
            "probabilities; set a sample size (n_samples) to draw a data set first."
        )
    task = data.task if isinstance(data, PreparedData) else "classification"
    return table.X.astype(float), table.y, task


def _eqn3_without_profile(table: DiscreteTable, problem) -> ImportanceResult:
    """K=1, fully grown, sklearn semantics, on a table too large for the exact recursion.

    Under scikit-learn's reading rule at K=1 a node splits on a variable drawn
    uniformly among those not constant in it; under the paper's rule (id3) it
    draws among all unused variables, and a constant one only adds a split
    with a single child.  The sequence of effective splits, hence the fully
    grown importances, are the same, so Eqn 3 of Louppe et al. (2013) gives
    them.  Their depth profile is not the same: the id3 no-op splits push
    later splits deeper, so Eqn 3's split by :math:`|B|` is not the profile of
    sklearn-semantics trees.  Without the recursion it cannot be had, so
    ``by_degree`` is None here rather than a wrong profile.
    """
    r = eqn3_importances(table, problem=problem)
    return ImportanceResult(**{**r.__dict__, "method": "exact", "by_degree": None,
                               "parameters": {**r.parameters, "k_semantics": "sklearn",
                                              "formula": "eqn3"}})


def numeric_target_table(data: PreparedData) -> DiscreteTable:
    """The sample with Y's own numbers as classes (one per distinct value), inputs as coded.

    For ``criterion="squared_error"``: the data layer bins a regression target into
    quantile bins for the discrete methods (``data.table``); the variance needs Y
    itself, kept in ``data.y``.

    Raises
    ------
    ValueError
        With a sentence, for a classification target or data without per-row values.
    """
    if data.task != "regression":
        raise ValueError(f"criterion='squared_error' is the variance of a numeric target, and "
                         f"{data.target!r} is a classification target; use 'entropy' or "
                         "'gini'.")
    if data.X_codes is None or data.y is None:
        raise ValueError("criterion='squared_error' needs the sample's rows; this data has "
                         "none (an exact distribution).")
    values, codes = np.unique(np.asarray(data.y, dtype=float), return_inverse=True)
    t = data.table
    return DiscreteTable.from_codes(data.X_codes, codes.ravel(), variables=t.variables,
                                    target=t.target, x_labels=t.x_labels,
                                    y_labels=tuple(float(v) for v in values), exact=False)


def compute_importances(data: PreparedData | DiscreteTable, *, method: str | None = None,
                        max_features: int = 1, max_depth: int | None = None,
                        n_estimators: int = 100, bootstrap: bool | None = None,
                        k_semantics: str = "id3", criterion: str = "entropy",
                        random_state: int = 0, n_samples: int | None = None,
                        min_samples_leaf: int = 1, progress=None,
                        n_jobs: int | None = None, partial=None) -> ImportanceResult:
    """Importances of one method, in the common :class:`ImportanceResult`.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
    method : {"exact", "forest", "sklearn-rf", "sklearn-et"}, optional
        ``exact``: infinite ensemble (Eqn 3 when K=1 with id3 semantics, at
        any depth by Proposition 6; the exact recursion otherwise, since
        under sklearn semantics Eqn 3's split by :math:`|B|` is not the depth
        profile: see ``by_degree`` in Returns); ``forest``: sampled multiway trees;
        ``sklearn-*``: scikit-learn's binary forests on the numeric inputs;
        ``exact-rf`` / ``exact-et``: what those forests (bootstrap off)
        converge to, computed exactly (:mod:`varimp_core.exact.binary`).
        Default: :func:`default_method`.
    max_features : int, default=1
        K.
    max_depth : int, optional
    n_estimators : int, default=100
        Trees for the sampled methods.
    bootstrap : bool, optional
        Default False for ``forest`` and ``sklearn-et``, True for ``sklearn-rf``.
    k_semantics : {"id3", "sklearn"}, default="id3"
        Multiway methods only (scikit-learn forests always use "sklearn").
    criterion : {"entropy", "gini", "squared_error"}, default="entropy"
        ``squared_error``: the variance of a numeric target, not binned
        (:func:`numeric_target_table`), units "variance of Y"; for ``exact`` it is
        asked for, and refused with a sentence for a classification target. A
        numeric target always uses "squared_error" in the binary-split methods,
        sampled or exact.
    random_state : int, default=0
    n_samples : int, optional
        Bootstrap size of the multiway forest.
    min_samples_leaf : int, default=1
        scikit-learn forests only.
    progress : callable, optional
        ``progress(done, total)`` for the sampled methods.
    n_jobs : int, optional
        Processes (multiway forest) or threads (scikit-learn) growing the trees of
        the sampled methods, joblib's convention (-1: every core).  The numbers do
        not depend on it.
    partial : callable, optional
        scikit-learn forests: ``partial(result)`` with the importances of the trees grown
        so far, after each of about ten chunks (the final result does not depend on it).

    Returns
    -------
    ImportanceResult
        For ``exact``, ``by_degree[m, k]`` is the part of ``importances[m]``
        from nodes at depth k, so under every K and semantics its first q
        columns sum to the depth-q result (a depth limit only stops the
        trees).  Under id3 at K=1 it is also Eqn 3's degree-k term
        :math:`\\frac{1}{C_p^k(p-k)}\\sum_{|B|=k} I(X_m;Y|B)` (Louppe et al.
        2013, Prop 6).  Under sklearn semantics at K=1 and full depth the
        importances equal Eqn 3 but the profile does not (constant variables
        are skipped, not spent as one-child splits); on a table too large for
        the exact recursion that case returns Eqn 3's importances with
        ``by_degree=None``.
    """
    table = data.table if isinstance(data, PreparedData) else data
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected prepared data or a DiscreteTable, got {type(data).__name__}.")
    method = default_method(table) if method is None else method
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}; choose one of: {', '.join(METHODS)}.")
    problem = data.source if isinstance(data, PreparedData) else None
    if criterion == "squared_error":
        if method == "forest":
            raise ValueError("criterion='squared_error' is available for the exact method only "
                             "among the multiway methods, not 'forest'; the binary-split "
                             "methods (sklearn-rf/et, exact-rf/et) take it too.")
        if method == "exact" and isinstance(data, PreparedData):
            table = numeric_target_table(data)
    if method == "exact":
        if table.n_features > MAX_SUBSET_FEATURES:
            raise ValueError(
                f"The exact method handles at most {MAX_SUBSET_FEATURES} input variables and "
                f"this data has {table.n_features}; use the sampled forest method instead."
            )
        if max_features == 1 and criterion == "entropy" and k_semantics == "id3":
            r = eqn3_importances(table, max_depth=max_depth, problem=problem)
            return ImportanceResult(**{**r.__dict__, "method": "exact",
                                       "parameters": {**r.parameters, "k_semantics": k_semantics,
                                                      "formula": "eqn3"}})
        if (max_features == 1 and criterion == "entropy" and max_depth is None
                and k_semantics == "sklearn"
                and min(lattice_cost(table, table.n_features)) > MAX_LATTICE_CELLS):
            return _eqn3_without_profile(table, problem)
        return exact_importances(table, max_features=max_features, max_depth=max_depth,
                                 k_semantics=k_semantics, criterion=criterion, problem=problem)
    if method == "forest":
        return grow_forest(table, n_estimators=n_estimators, max_features=max_features,
                           max_depth=max_depth, bootstrap=bool(bootstrap),
                           k_semantics=k_semantics, criterion=criterion,
                           random_state=random_state, n_samples=n_samples, problem=problem,
                           progress=progress, n_jobs=n_jobs)
    if method in ("exact-rf", "exact-et"):
        from varimp_core.exact.binary import binary_inputs, exact_binary_importances

        # a numeric target: the variance criterion, as the sampled sklearn methods use
        regression = isinstance(data, PreparedData) and data.task == "regression"
        if criterion == "squared_error" and not regression:
            raise ValueError("criterion='squared_error' is for a numeric target; use "
                             "'entropy' or 'gini' for class labels.")
        X, y, sw = binary_inputs(data, regression=regression)
        return exact_binary_importances(
            X, y, method=method, max_features=max_features, max_depth=max_depth,
            min_samples_leaf=min_samples_leaf,
            criterion="squared_error" if regression else criterion, sample_weight=sw,
            variables=list(table.variables), problem=problem)
    from varimp_core.forests.sklearn_mdi import nominal_columns, sklearn_importances

    X, y, task = _sklearn_inputs(data)
    variables = table.variables
    result = sklearn_importances(
        X, y, nominal=nominal_columns(data), kind=method.split("-")[1], task=task,
        n_estimators=n_estimators,
        max_features=max_features, max_depth=max_depth, min_samples_leaf=min_samples_leaf,
        bootstrap=bootstrap, criterion=criterion if task == "classification" else None,
        random_state=random_state, variables=list(variables), problem=problem, n_jobs=n_jobs,
        partial=partial)
    if progress is not None:
        progress(n_estimators, n_estimators)
    return result


def summarize(data: PreparedData) -> dict:
    """Facts the Data page shows: p, N, classes, H(Y), exact or plug-in."""
    from varimp_core.exact.information import output_entropy

    table = data.table
    return {
        "source": data.source,
        "n_features": table.n_features,
        "n_samples": data.n_samples,
        "n_distinct_rows": table.n_rows,
        "n_classes": table.n_classes if data.task == "classification" else None,
        "task": data.task,
        "output_entropy": output_entropy(table),
        "exact": bool(table.exact),
        "estimate": "exact distribution" if table.exact else "plug-in estimate from a sample",
        "exact_method_available": table.n_features <= MAX_SUBSET_FEATURES,
    }
