"""Fit one forest and compute several importance measures on it, side by side.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(300, 3)); y = (X[:, 0] + 0.3 * rng.normal(size=300) > 0).astype(int)
>>> res = compute_measures(X, y, measures=("mdi", "mdi_oob"), n_estimators=20)
>>> sorted(res)
['mdi', 'mdi_oob']
>>> measures_frame(res).query("rank == 1")["variable"].tolist()
['x1', 'x1']
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd

from varimp_core.forests.sklearn_mdi import check_forest_options, fit_forest
from varimp_core.measures import inputs as chk
from varimp_core.measures.mdi_oob import mdi, mdi_oob, naive_oob
from varimp_core.measures.permutation import impurity_corrected, mda_holdout, mda_oob
from varimp_core.result import ImportanceResult

__all__ = ["MEASURES", "DEFAULT_MEASURES", "ON_MAIN_FOREST", "NEEDS_OOB", "compute_measures",
           "measures_frame", "check_measure_inputs", "measures_or_refusals"]

#: Every measure name :func:`compute_measures` knows, in display order.
MEASURES = ("mdi", "mdi_normalised", "mdi_oob", "mdi_in_sample", "naive_oob", "mda_holdout",
            "mda_oob", "ranger")
#: The measures compared in Li et al. (2019), Table 1, available from scikit-learn.
DEFAULT_MEASURES = ("mdi", "mdi_oob", "naive_oob", "mda_holdout", "mda_oob", "ranger")
_NEEDS_OOB = {"mdi_oob": "MDI-oob", "naive_oob": "naive-oob",
              "mda_oob": "Breiman's out-of-bag permutation importance (mda_oob)"}
#: Measures computed on one fitted forest, and those that need its out-of-bag rows.
ON_MAIN_FOREST = ("mdi", "mdi_normalised", "mdi_oob", "mdi_in_sample", "naive_oob", "mda_oob")
NEEDS_OOB = tuple(_NEEDS_OOB)


def _check_measures(measures) -> tuple[str, ...]:
    if isinstance(measures, str):
        measures = (measures,)
    measures = tuple(measures)
    unknown = [m for m in measures if m not in MEASURES]
    if unknown or not measures:
        raise ValueError(f"Unknown measure {unknown[0]!r}; choose among: {', '.join(MEASURES)}."
                         if unknown else "measures is empty: name at least one measure.")
    return tuple(dict.fromkeys(measures))


def _check_test_size(test_size, n_rows) -> float:
    if isinstance(test_size, bool) or not isinstance(test_size, Real) or not 0 < test_size < 1:
        raise ValueError(f"test_size={test_size!r} is not allowed: use a fraction strictly "
                         "between 0 and 1.")
    n_test = int(np.ceil(test_size * n_rows))
    if n_test < 2 or n_rows - n_test < 2:
        raise ValueError(f"test_size={test_size} leaves {n_rows - n_test} training and {n_test} "
                         f"held-out rows out of {n_rows}; mda_holdout needs at least 2 of each.")
    return float(test_size)


def compute_measures(X, y, *, kind="rf", task="classification", measures=DEFAULT_MEASURES,
                     n_estimators=100, max_features="sqrt", min_samples_leaf=1, max_depth=None,
                     bootstrap=True, criterion=None, random_state=0, test_size=0.3, n_repeats=5,
                     variables=None, problem=None, n_jobs=None,
                     progress=None) -> dict[str, ImportanceResult]:
    """Fit a scikit-learn forest and compute the requested importance measures.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Numeric inputs, no missing values, no constant column.
    y : array-like of shape (n_samples,)
        Class labels or numbers.
    kind : {"rf", "et"}, default="rf"
    task : {"classification", "regression"}, default="classification"
    measures : sequence of str, default=DEFAULT_MEASURES
        Names from :data:`MEASURES` (see :mod:`varimp_core.measures.mdi_oob`).
    n_estimators : int, default=100
        At least 2: every result carries its spread over trees.
    max_features : int, "sqrt", "log2" or None, default="sqrt"
        Variables drawn at each node; None means all of them.
    min_samples_leaf : int, default=1
    max_depth : int or None, default=None
    bootstrap : bool, default=True
        Needed by the out-of-bag measures (also for ``kind="et"``).
    criterion : str or None, default=None
        None means ``"gini"`` (classification; Prop. 1 of Li et al. holds for
        it) or ``"squared_error"``.  With ``"entropy"`` the MDI-oob measures
        are in bits (the log score, :func:`~varimp_core.measures.mdi_oob.mdi_oob`),
        and ``mdi_oob`` raises its sentence where that is :math:`-\\infty`.
    random_state : int or None, default=0
        Seeds the forests, the split, the shadow rows and the permutations.
    test_size : float, default=0.3
        Held-out fraction for ``mda_holdout``, which fits its own forest on the rest.
    n_repeats : int, default=5
        Permutations per variable for ``mda_holdout``.
    variables : sequence of str, optional
        Input names; None uses a DataFrame's columns, else ``x1 ... xp``.
    problem : str, optional
        Description of the data, stored in each result.
    n_jobs : int or None, default=None
        Passed to scikit-learn's fits.
    progress : callable, optional
        ``progress(done, total)`` after each fit and each measure.

    Returns
    -------
    results : dict of str to ImportanceResult
        One entry per requested measure, in the order given.

    Raises
    ------
    ValueError
        With a sentence, for bad options or data: NaN, constant columns, a
        continuous target with ``task="classification"``, a single tree,
        out-of-bag measures without bootstrap.
    """
    measures = _check_measures(measures)
    check_forest_options(kind, task, criterion)
    Xa = chk.check_X(X)
    n, p = Xa.shape
    variables = chk.variable_names(X, p, variables)
    ya = chk.check_target(y, n, task)
    chk.constant_columns(Xa, variables)
    n_estimators = chk.check_int("n_estimators", n_estimators, low=1)
    random_state = chk.check_int("random_state", random_state, low=0, allow_none=True)
    if n_estimators < 2:
        raise ValueError("n_estimators=1: compute_measures reports the spread over trees, which "
                         "needs at least 2 trees.")
    if not isinstance(bootstrap, (bool, np.bool_)):
        raise ValueError(f"bootstrap={bootstrap!r} is not allowed: use True or False.")
    for m in measures:
        if m in _NEEDS_OOB and not bootstrap:
            raise ValueError(f"{_NEEDS_OOB[m]} needs out-of-bag samples; turn bootstrap on "
                             "(bootstrap=True).")
    if "mda_holdout" in measures:
        test_size = _check_test_size(test_size, n)
        n_repeats = chk.check_int("n_repeats", n_repeats, low=1)
    k = chk.resolve_max_features(max_features, p)
    forest = dict(kind=kind, task=task, n_estimators=n_estimators, max_features=k,
                  min_samples_leaf=min_samples_leaf, max_depth=max_depth, bootstrap=bool(bootstrap),
                  criterion=criterion, random_state=random_state, n_jobs=n_jobs)


    n_fits = int(any(m in ON_MAIN_FOREST for m in measures)) + int("mda_holdout" in measures)
    total, done = n_fits + len(measures), 0

    def tick():
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    est = None
    if any(m in ON_MAIN_FOREST for m in measures):
        est, params = fit_forest(Xa, ya, **forest)
        tick()
    common = dict(variables=variables, problem=problem)
    out: dict[str, ImportanceResult] = {}
    for m in measures:
        if m == "mdi":
            r = mdi(est, **common)
        elif m == "mdi_normalised":
            r = mdi(est, normalised=True, **common)
        elif m in ("mdi_oob", "mdi_in_sample"):
            r = mdi_oob(est, Xa, ya, samples="oob" if m == "mdi_oob" else "in_bag", **common)
        elif m == "naive_oob":
            r = naive_oob(est, Xa, ya, **common)
        elif m == "mda_oob":
            r = mda_oob(est, Xa, ya, random_state=random_state, **common)
        elif m == "mda_holdout":
            from sklearn.model_selection import train_test_split

            X_tr, X_te, y_tr, y_te = train_test_split(Xa, ya, test_size=test_size,
                                                      random_state=random_state)
            held, _ = fit_forest(X_tr, y_tr, **forest)
            tick()
            r = mda_holdout(held, X_te, y_te, n_repeats=n_repeats, random_state=random_state,
                              **common)
            r = _with(r, test_size=test_size)
        else:  # ranger
            r = impurity_corrected(Xa, ya, **{**forest, "max_features": max_features}, **common)
        if est is not None and m in ON_MAIN_FOREST:
            r = _with(r, **{key: v for key, v in params.items() if key not in r.parameters})
        out[m] = r
        tick()
    return out


def _with(result: ImportanceResult, **extra) -> ImportanceResult:
    return ImportanceResult(**{**result.__dict__, "parameters": {**result.parameters, **extra}})


def measures_frame(results: dict[str, ImportanceResult]) -> pd.DataFrame:
    """Tidy table of several measures: one row per (measure, variable).

    Parameters
    ----------
    results : dict of str to ImportanceResult
        As returned by :func:`compute_measures`.

    Returns
    -------
    frame : pandas.DataFrame
        Columns ``measure``, ``variable``, ``importance``, ``importance_std``
        (over trees, or over permutation repeats for ``mda_holdout``),
        ``importance_sem``, ``rank`` (1 = most important within the measure)
        and ``units``.
    """
    if not isinstance(results, dict) or not results:
        raise ValueError("results must be a non-empty dict of measure name to ImportanceResult.")
    parts = []
    for name, r in results.items():
        if not isinstance(r, ImportanceResult):
            raise ValueError(f"results[{name!r}] is a {type(r).__name__}, not an ImportanceResult.")
        std, sem = r.importances_std, r.importances_sem
        nan = np.full(r.n_features, np.nan)
        parts.append(pd.DataFrame({
            "measure": name, "variable": list(r.variables), "importance": r.importances,
            "importance_std": std if std is not None else nan,
            "importance_sem": sem if sem is not None else nan,
            "rank": pd.Series(-r.importances).rank(method="min").astype(int).to_numpy(),
            "units": r.units}))
    return pd.concat(parts, ignore_index=True)


def check_measure_inputs(X, *, task: str, variables, target: str, criterion: str = "auto") -> None:
    """Refuse, in a sentence, data on which no measure can rank the inputs.

    A classification impurity (``"gini"``, ``"entropy"``) on a regression
    target, and an input with one value in every row (no tree can split on it),
    are refused.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The inputs as numbers.
    task : {"classification", "regression"}
    variables : sequence of str
        Names of the columns of ``X``.
    target : str
        Name of the target, for the sentence.
    criterion : {"auto", "gini", "entropy"}, default="auto"
        ``"auto"``: Gini for classification, squared error for regression.

    Raises
    ------
    ValueError
        With a sentence that says what to change.
    """
    if task == "regression" and criterion != "auto":
        raise ValueError(f"The {criterion.capitalize()} impurity is for class labels, "
                         f"and the target {target} is a regression target (numbers). "
                         "Choose the automatic impurity (variance for regression), or a "
                         "classification target on the Data page.")
    X = np.asarray(X)
    const = [v for j, v in enumerate(variables) if np.all(X[:, j] == X[0, j])]
    if const:
        names = ", ".join(repr(v) for v in const[:5]) + (" \u2026" if len(const) > 5 else "")
        raise ValueError(f"The input{'s' if len(const) > 1 else ''} {names} "
                         f"{'have' if len(const) > 1 else 'has'} a single value in every row, so "
                         "no tree can split on it and no measure can rank it. Remove it from "
                         "the file and upload it again, or choose other data.")


def measures_or_refusals(X, y, *, measures, **options) -> dict:
    """:func:`compute_measures`, with MDI-oob's refusal kept as a sentence beside the others.

    MDI-oob is undefined on an entropy forest whose out-of-bag log score is
    :math:`-\\infty` (an out-of-bag row reaches a node whose in-bag rows have
    none of its class; Li et al. 2019 define it for Gini).  Then the other
    measures are computed again without it (on the same seeded forest), and
    ``"mdi_oob"`` maps to the refusal's sentence.

    Returns
    -------
    out : dict
        Measure name -> :class:`~varimp_core.result.ImportanceResult`, or -> str
        (the refusal) for MDI-oob.
    """
    from varimp_core.measures import UndefinedMeasure  # the package defines it

    measures = _check_measures(measures)
    try:
        return dict(compute_measures(X, y, measures=measures, **options))
    except UndefinedMeasure as exc:  # only this refusal; any other error propagates
        if "mdi_oob" not in measures:
            raise
        rest = [m for m in measures if m != "mdi_oob"]
        out = dict(compute_measures(X, y, measures=rest, **options)) if rest else {}
        return {**out, "mdi_oob": str(exc)}
