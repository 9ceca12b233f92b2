"""A forest fitted on some rows and assessed on others: local importance and partial dependence.

Ciss's local importance (:func:`~varimp_core.local.importance.local_importance`)
reads only a fitted forest and the rows it is shown, never their labels, so it
can be counted on rows the forest never saw.  For prepared data
(:class:`~varimp_core.data.prepare.PreparedData`) this module holds the protocol
of the dashboard's Interactions and Dependence pages, so that a notebook
reproduces their numbers:

1. :func:`split_rows`: a seeded split into the rows the forest is fitted on and
   the rows assessed (the fitted rows themselves, or the held-out share);
2. :func:`fit_local_forest`: a random uniform forest (Ciss), a random forest or
   extra-trees fitted on the fitted rows;
3. :func:`heldout_local_importance`: the local importance of the assessed rows,
   from that forest or from varimp's multiway forest grown on the fitted rows,
   with the data's class labels as text;
4. :func:`heldout_partial_dependences`: Friedman's partial dependence of the
   same forest on one or two variables, averaged over the assessed rows.

References
----------
.. [1] S. Ciss, "Variable Importance in Random Uniform Forests", hal-01104751, 2015.
.. [2] J. H. Friedman, "Greedy function approximation: a gradient boosting
   machine", Annals of Statistics 29, 2001.
"""

from __future__ import annotations

import math
from dataclasses import replace
from numbers import Real
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from varimp_core.data.prepare import PreparedData
from varimp_core.data.table import DiscreteTable
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest
from varimp_core.local.importance import LocalImportance, fit_uniform_forest, local_importance
from varimp_core.local.multiway import forest_local_importance
from varimp_core.local.partial_dependence import PartialDependence, partial_dependence
from varimp_core.measures.inputs import check_int

__all__ = ["TEST_SHARE", "LOCAL_FORESTS", "split_rows", "fit_local_forest",
           "heldout_local_importance", "heldout_partial_dependences"]

#: Share of the rows held out from fitting (the "held-out rows").
TEST_SHARE = 0.3
#: The scikit-learn forests :func:`fit_local_forest` fits.
LOCAL_FORESTS = ("uniform", "rf", "et")


def _subset(rows: np.ndarray, most: int | None, seed: int) -> np.ndarray:
    """At most ``most`` of ``rows``: a subset seeded by ``seed``, sorted."""
    if most is None or rows.size <= most:
        return rows
    keep = np.random.default_rng(seed).choice(rows.size, most, replace=False)
    return np.sort(rows[keep])


def split_rows(n_samples: int, random_state: int = 0, rows: str = "train", *,
               test_share: float = TEST_SHARE, max_rows: int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of ``n_samples`` rows into the rows fitted and the rows assessed.

    Parameters
    ----------
    n_samples : int
        Number of rows.
    random_state : int, default=0
        Seeds the permutation of the rows (``numpy.random.default_rng(random_state)``)
        and the subset of at most ``max_rows`` assessed rows (``random_state + 1``).
    rows : {"train", "test"}, default="train"
        Assess the rows the forest is fitted on, or the held-out ones.
    test_share : float, default=0.3
        :math:`\\lfloor \\mathrm{test\\_share} \\cdot n \\rfloor` rows are held out;
        the forest is fitted on the others.  Strictly between 0 and 1.
    max_rows : int, optional
        Assess at most this many rows (a seeded subset of the chosen ones); at least 1.

    Returns
    -------
    fit, assessed : ndarray of int
        Sorted row indices.

    Raises
    ------
    ValueError
        For ``rows`` other than "train" or "test", ``test_share`` outside (0, 1),
        ``max_rows`` below 1, when fewer than two rows are left to fit on, or
        when there are no held-out rows to assess.

    Examples
    --------
    >>> fit, assessed = split_rows(10, random_state=0, rows="test")
    >>> len(fit), len(assessed), set(fit) & set(assessed)
    (7, 3, set())
    """
    if rows not in ("train", "test"):
        raise ValueError(f"rows={rows!r} is not allowed: use 'train' or 'test'.")
    if isinstance(test_share, bool) or not isinstance(test_share, Real) \
            or not 0 < test_share < 1:
        raise ValueError(f"test_share={test_share!r} is not allowed: use the share of the rows "
                         "held out, a number strictly between 0 and 1 (0.3 holds out 30%).")
    max_rows = check_int("max_rows", max_rows, low=1, allow_none=True)
    order = np.random.default_rng(random_state).permutation(n_samples)
    n_test = int(math.floor(test_share * n_samples))
    fit, held = np.sort(order[n_test:]), np.sort(order[:n_test])
    if fit.size < 2:
        raise ValueError(f"This data has {n_samples} row{'s' if n_samples != 1 else ''}: too "
                         "few to fit a forest; use more rows.")
    if rows == "test" and held.size == 0:
        raise ValueError(f"There are no held-out rows: {test_share:.0%} of {n_samples} rows is "
                         "less than one row. Assess the training rows instead, or use more data.")
    return fit, _subset(held if rows == "test" else fit, max_rows, random_state + 1)


def _observations(prepared: PreparedData) -> tuple[np.ndarray, np.ndarray]:
    if prepared.X_numeric is None or prepared.y is None:
        raise ValueError("This data has no observations (it is an exact distribution); draw "
                         "a sample first.")
    return prepared.X_numeric, prepared.y


def fit_local_forest(prepared: PreparedData, rows: np.ndarray, *, forest: str = "uniform",
                     n_estimators: int = 100, max_features: int | None = None,
                     random_state: int = 0, n_jobs: int | None = None):
    """Fit a scikit-learn forest on the rows ``rows`` of ``prepared``'s numeric inputs.

    Parameters
    ----------
    prepared : PreparedData
        Data with observations (a sample or an upload).
    rows : ndarray of int
        The rows fitted on (``fit`` of :func:`split_rows`).
    forest : {"uniform", "rf", "et"}, default="uniform"
        Ciss's random uniform forest (:func:`~varimp_core.local.importance.fit_uniform_forest`:
        uniform cut-points, bootstrap), or scikit-learn's random forest or extra-trees
        (:func:`~varimp_core.forests.sklearn_mdi.fit_sklearn_forest`).
    n_estimators : int, default=100
    max_features : int or None, default=None
        K, the variables drawn at each node; None draws all of them.
    random_state : int, default=0
    n_jobs : int, optional
        scikit-learn's ``n_jobs`` (-1: every core); the fitted trees do not depend on it.

    Returns
    -------
    estimator : fitted scikit-learn forest
        Fitted on a DataFrame whose columns are ``prepared.variables``.

    Raises
    ------
    ValueError
        For data without observations, an unknown ``forest``, and what the
        forest refuses (a constant column under the uniform forest).
    """
    X, y = _observations(prepared)
    if forest not in LOCAL_FORESTS:
        raise ValueError(f"forest={forest!r} is not allowed: use one of "
                         f"{', '.join(LOCAL_FORESTS)}.")
    X = pd.DataFrame(X[rows], columns=list(prepared.variables))
    kw = dict(task=prepared.task, n_estimators=n_estimators, max_features=max_features,
              random_state=random_state, n_jobs=n_jobs)
    if forest == "uniform":
        return fit_uniform_forest(X, y[rows], **kw)
    return fit_sklearn_forest(X, y[rows], kind=forest, **kw)


def _class_labels(prepared: PreparedData) -> list[str] | None:
    """The class labels as text, by class code (None for a regression target)."""
    if prepared.task != "classification":
        return None
    return [str(v) for v in prepared.table.y_labels]


def heldout_local_importance(prepared: PreparedData, rows: np.ndarray, *, estimator=None,
                             fit: np.ndarray | None = None, n_estimators: int = 100,
                             max_features: int | None = None, random_state: int = 0,
                             progress: Callable[[int, int], None] | None = None,
                             n_jobs: int | None = None) -> LocalImportance:
    """Ciss's local importance of the rows ``rows`` of ``prepared``, classes as the data's labels.

    Parameters
    ----------
    prepared : PreparedData
        Data with observations.
    rows : ndarray of int
        The rows assessed (``assessed`` of :func:`split_rows`); their labels are not used.
    estimator : fitted scikit-learn forest, optional
        From :func:`fit_local_forest`.  None grows varimp's multiway forest
        (:func:`~varimp_core.local.multiway.forest_local_importance`) on the coded
        rows ``fit``: it classifies only.
    fit : ndarray of int, optional
        The rows the multiway forest grows on (required without ``estimator``).
    n_estimators, max_features, random_state
        The multiway forest's trees, K (an integer >= 1, or None: every input) and seed.
    progress : callable, optional
        ``progress(done, total)`` after each chunk of multiway trees.
    n_jobs : int, optional
        Processes growing the multiway forest's chunks of trees (-1: every core); the
        counts do not depend on it.

    Returns
    -------
    local : LocalImportance
        ``counts[i, j]`` is :math:`\\mathrm{LVI}(j, i)`, the number of trees in
        which row ``rows[i]`` reaches a leaf whose parent splits on variable
        ``j``; ``X`` holds the rows' numeric values (never codes).  For a
        classification target ``prediction`` and ``classes`` are the data's
        class labels as text.

    Raises
    ------
    ValueError
        For data without observations, ``max_features`` below 1, the multiway
        forest on a numeric target, and neither ``estimator`` nor ``fit``.
    """
    X, _ = _observations(prepared)
    max_features = check_int("max_features", max_features, low=1, allow_none=True)
    if estimator is not None:
        local = local_importance(estimator, X[rows], variables=prepared.variables)
    elif fit is None:
        raise ValueError("Give a fitted estimator, or the rows fit to grow the multiway forest on.")
    elif prepared.task != "classification" or prepared.X_codes is None:
        raise ValueError("varimp's multiway forest classifies, and this data's target is "
                         "numeric (regression); choose the random uniform forest, random "
                         "forest or extra-trees.")
    else:
        table = DiscreteTable.from_codes(prepared.X_codes[fit], prepared.y_codes[fit],
                                         variables=prepared.variables, target=prepared.target,
                                         x_labels=prepared.table.x_labels)
        local = forest_local_importance(table, prepared.X_codes[rows], n_estimators=n_estimators,
                                        max_features=table.n_features if max_features is None
                                        else max_features,
                                        random_state=random_state, progress=progress,
                                        n_jobs=n_jobs)
        local = replace(local, X=X[rows])
    labels = _class_labels(prepared)
    if labels is None:
        return local
    return replace(local, prediction=np.asarray([labels[int(c)] for c in local.prediction]),
                   classes=tuple(labels[int(c)] for c in local.classes))


def observed_grids(prepared: PreparedData, X: np.ndarray, features: Sequence[str],
                   grid_resolution: int, percentiles: tuple[float, float]) -> dict:
    """Grids of the numeric ``features`` that have missing rows: observed values, then "missing".

    scikit-learn's grid runs between percentiles of the column, which holds the stand-in
    of a missing value (:meth:`PreparedData.missing_value`, far below every number): with
    more than 5 % missing the grid started there and spread over a range no row has.
    Here the grid is scikit-learn's rule on the observed values only (their distinct
    values when fewer than ``grid_resolution``, else equally spaced between the
    ``percentiles``), and the stand-in comes first as a point of its own, labelled
    "missing" (:meth:`PreparedData.value_labels`).
    """
    grids = {}
    for f in features:
        low = prepared.missing_value(f)
        if low is None:
            continue
        column = X[:, prepared.variables.index(f)]
        seen = column[column > low]
        distinct = np.unique(seen)
        grid = distinct if distinct.size <= grid_resolution else np.linspace(
            *np.quantile(seen, percentiles), int(grid_resolution))
        grids[f] = np.r_[low, grid]
    return grids


def heldout_partial_dependences(prepared: PreparedData, estimator, rows: np.ndarray,
                                features: Sequence[str], *, grid_resolution: int = 100,
                                percentiles: tuple[float, float] = (0.05, 0.95),
                                max_ice_lines: int | None = 100, max_grid_2d: int | None = None,
                                max_rows: int | None = None, random_state: int = 0,
                                progress: Callable[[int, int], None] | None = None
                                ) -> list[PartialDependence]:
    """Friedman's partial dependence of a fitted forest on each variable, then on the pair.

    Parameters
    ----------
    prepared : PreparedData
        Data with observations.
    estimator : fitted scikit-learn forest
        From :func:`fit_local_forest`.
    rows : ndarray of int
        The rows averaged over (the assessed rows).
    features : sequence of str, or str
        One variable (a lone name counts as one), or two different ones: then
        their 2-D partial dependence comes last.
    grid_resolution : int, default=100
        Grid points per numeric variable; the grid of a discrete input is its values.
    percentiles : (float, float), default=(0.05, 0.95)
        Ends of a numeric grid.
    max_ice_lines : int or None, default=100
        ICE lines kept per variable, of a seeded subset of the rows; 0 keeps none
        and None all of them.  The pair has none.
    max_grid_2d : int, optional
        At most this many grid points per axis of the pair (its cost grows with
        the square); at least 2, as a grid.
    max_rows : int, optional
        Average over at most this many rows (at least 1), a subset seeded by
        ``random_state + 2``.
    random_state : int, default=0
        Seeds the subset of ICE lines (and, through ``random_state + 2``, of the rows).
    progress : callable, optional
        ``progress(done, total)`` after each partial dependence.

    Returns
    -------
    results : list of PartialDependence
        :math:`\\mathrm{PD}_S(v) = \\frac{1}{n}\\sum_i f(v, x_{i,C})` over the
        rows (:func:`~varimp_core.local.partial_dependence.partial_dependence`),
        one per variable, then the pair; ``outputs`` are the data's class labels
        as text, ``ice_rows`` indices of ``prepared``'s rows, ``grid_labels``
        the categories' names of ordinal-coded inputs.

    Raises
    ------
    ValueError
        For data without observations, other than one or two different
        variables, ``max_grid_2d`` below 2, ``max_rows`` below 1, and what
        :func:`~varimp_core.local.partial_dependence.partial_dependence` refuses.
    """
    X, _ = _observations(prepared)
    features = [features] if isinstance(features, str) else list(features)
    if not 1 <= len(features) <= 2:
        raise ValueError(f"Partial dependence is drawn on one variable or a pair, not on "
                         f"{len(features)}; give one or two variables.")
    if len(features) == 2 and features[0] == features[1]:
        raise ValueError(f"Both variables are {features[0]!r}; choose two different variables "
                         "for the 2-D partial dependence (or only one).")
    max_grid_2d = check_int("max_grid_2d", max_grid_2d, low=2, allow_none=True)
    max_rows = check_int("max_rows", max_rows, low=1, allow_none=True)
    rows = _subset(np.asarray(rows), max_rows, random_state + 2)
    labels = _class_labels(prepared)
    todo = [[f] for f in features] + ([list(features)] if len(features) == 2 else [])
    out = []
    for step, feats in enumerate(todo):
        pair = len(feats) == 2
        r = partial_dependence(
            estimator, X[rows], feats if pair else feats[0],
            kind="average" if pair or max_ice_lines == 0 else "both",
            grid_resolution=min(grid_resolution, max_grid_2d or grid_resolution) if pair
            else grid_resolution, percentiles=tuple(percentiles),
            categorical_features=[v for v in feats if prepared.kinds.get(v) == "discrete"]
            or None, feature_names=list(prepared.variables), max_ice_lines=max_ice_lines or None,
            random_state=random_state, custom_values=observed_grids(
                prepared, X[rows], feats, min(grid_resolution, max_grid_2d or grid_resolution)
                if pair else grid_resolution, percentiles))
        outputs = tuple(str(labels[int(o)] if labels and r.response != "prediction" else o)
                        for o in r.outputs)
        out.append(replace(r, outputs=outputs,
                           ice_rows=None if r.ice_rows is None else rows[r.ice_rows],
                           grid_labels=tuple(prepared.value_labels(f, g)
                                             for f, g in zip(feats, r.grid))))
        if progress is not None:
            progress(step + 1, len(todo))
    return out
