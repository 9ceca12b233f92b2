"""Leaks: an input that by itself almost determines the target.

A column that copies the target (an outcome recorded after the fact, a code
derived from the label) gets the largest importance by any method and
crowds out the inputs an analyst is asking about; its importance is right,
the data is what is wrong.  :func:`find_leaks` flags such columns with one
stated rule (``docs/verdicts.md``):

* score each input alone by the **out-of-fold** (5-fold, seeded) score of
  the best constant-per-level predictor: the majority class of each level
  (classification, score = accuracy) or the mean target of each level
  (numeric target, score = :math:`R^2`).  Levels are those of the prepared
  table for discrete inputs; a numeric input is cut into :data:`LEAK_BINS`
  quantile bins of its values (the prepared table's few bins, 5 by default,
  cap the :math:`R^2` of a perfect copy of a normal target near 0.88, below
  any sensible threshold).  A level absent from the training folds predicts
  the training majority class or mean;
* flag a classification input when its accuracy is at least
  :data:`LEAK_ACCURACY` *and* at least the majority-class rate plus half the
  remaining gap, :math:`a_0 + (1 - a_0)/2`; flag an input of a numeric
  target when its :math:`R^2` is at least :data:`LEAK_R2`.

Out of fold, a column with one row per level (an identifier) predicts every
held-out row by the training majority: it scores at chance, not 1.
"""

from __future__ import annotations

import numpy as np

from varimp_core.data.prepare import PreparedData
from varimp_core.data.table import DiscreteTable
from varimp_core.studies.replicates import check_int

__all__ = ["LEAK_ACCURACY", "LEAK_R2", "LEAK_FOLDS", "LEAK_BINS", "find_leaks", "leak_scores"]

#: Smallest out-of-fold accuracy of a leak (classification).
LEAK_ACCURACY = 0.95
#: Smallest out-of-fold R^2 of a leak (numeric target).
LEAK_R2 = 0.9
#: Folds of the out-of-fold score.
LEAK_FOLDS = 5
#: Quantile bins of a numeric input for the leak score.
LEAK_BINS = 20


def _rows(data) -> tuple[np.ndarray, np.ndarray, str, tuple[str, ...]] | None:
    """Per-row input codes, target (class codes or floats), task and names; None if exact."""
    if isinstance(data, DiscreteTable):
        if data.exact:
            return None
        X, y = data.expand()
        return X, y, "classification", tuple(data.variables)
    if not isinstance(data, PreparedData):
        raise ValueError(f"Expected PreparedData or a DiscreteTable, got {type(data).__name__}.")
    if data.table.exact:
        return None
    if data.X_codes is not None and data.y_codes is not None:
        X, codes = data.X_codes, data.y_codes
    else:
        X, codes = data.table.expand()
    X = np.array(X, dtype=np.int64)
    if data.X_numeric is not None and len(data.X_numeric) == len(X):
        for j, name in enumerate(data.variables):
            if data.kinds.get(name) == "numeric":
                X[:, j] = _quantile_codes(data.X_numeric[:, j], LEAK_BINS)
    task = data.task
    if task == "regression" and data.y is not None and len(data.y) == len(X):
        y = np.asarray(data.y, dtype=float)
    elif task == "regression":
        y = codes.astype(float)          # binned target: the best we have
    else:
        y = codes
    return np.asarray(X, dtype=np.int64), np.asarray(y), task, tuple(data.variables)


def _quantile_codes(values: np.ndarray, bins: int) -> np.ndarray:
    """Codes of ``bins`` quantile bins of ``values`` (equal quantiles merged)."""
    inner = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
    return np.searchsorted(inner, values, side="right")


def _folds(n: int, k: int, random_state) -> np.ndarray:
    rng = np.random.default_rng(random_state)
    fold = np.empty(n, dtype=np.int64)
    fold[rng.permutation(n)] = np.arange(n) % k
    return fold


def _oof_accuracy(x: np.ndarray, y: np.ndarray, fold: np.ndarray, k: int) -> float:
    levels, x = np.unique(x, return_inverse=True)
    classes, y = np.unique(y, return_inverse=True)
    L, C = levels.size, classes.size
    hit = 0
    for f in range(k):
        train, test = fold != f, fold == f
        if not test.any():
            continue
        counts = np.zeros((L, C))
        np.add.at(counts, (x[train], y[train]), 1.0)
        overall = int(np.argmax(counts.sum(axis=0)))
        seen = counts.sum(axis=1) > 0
        guess = np.where(seen, np.argmax(counts, axis=1), overall)
        hit += int((guess[x[test]] == y[test]).sum())
    return hit / len(y)


def _oof_r2(x: np.ndarray, y: np.ndarray, fold: np.ndarray, k: int) -> float:
    levels, x = np.unique(x, return_inverse=True)
    L = levels.size
    pred = np.empty_like(y, dtype=float)
    for f in range(k):
        train, test = fold != f, fold == f
        if not test.any():
            continue
        n = np.bincount(x[train], minlength=L).astype(float)
        s = np.bincount(x[train], weights=y[train], minlength=L)
        mean = y[train].mean()
        level_mean = np.divide(s, n, out=np.full(L, mean), where=n > 0)
        pred[test] = level_mean[x[test]]
    total = float(((y - y.mean()) ** 2).sum())
    if total <= 0:
        return float("nan")
    return 1.0 - float(((y - pred) ** 2).sum()) / total


def leak_scores(data, *, random_state: int = 0, n_folds: int = LEAK_FOLDS) -> dict:
    """Out-of-fold score of each input alone, and the threshold a leak reaches.

    Returns
    -------
    dict
        ``variables``, ``scores`` (list of float), ``threshold`` (float), ``task``,
        ``statistic`` (``"accuracy"`` or ``"r2"``), ``majority`` (the majority-class rate,
        classification only, else None); empty ``variables`` for an exact distribution.
    """
    k = check_int("n_folds", n_folds, 2)
    rows = _rows(data)
    if rows is None:
        return {"variables": [], "scores": [], "threshold": float("nan"), "task": None,
                "statistic": None, "majority": None}
    X, y, task, variables = rows
    n = len(y)
    fold = _folds(n, min(k, max(n, 2)), random_state)
    if task == "regression":
        scores = [_oof_r2(X[:, j], y.astype(float), fold, k) for j in range(X.shape[1])]
        return {"variables": list(variables), "scores": scores, "threshold": LEAK_R2,
                "task": task, "statistic": "r2", "majority": None}
    majority = float(np.bincount(np.unique(y, return_inverse=True)[1]).max() / n)
    threshold = max(LEAK_ACCURACY, majority + (1.0 - majority) / 2)
    scores = [_oof_accuracy(X[:, j], y, fold, k) for j in range(X.shape[1])]
    return {"variables": list(variables), "scores": scores, "threshold": threshold,
            "task": task, "statistic": "accuracy", "majority": majority}


def find_leaks(data, *, random_state: int = 0) -> list[dict]:
    """Inputs that by themselves almost determine the target, as warnings.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
        A sample; an exact distribution has no leaks to report (empty list).
    random_state : int, default=0
        Seeds the assignment of rows to the five folds.

    Returns
    -------
    list of dict
        One ``{"column": name, "kind": "leak", "score": s, "rule": text}`` per flagged
        input, in the order of the inputs; ``score`` is the out-of-fold accuracy
        (classification) or :math:`R^2` (numeric target) of the column alone.

    Examples
    --------
    ``copy`` equals y on 97 of 100 rows, ``row`` has one level per row:

    >>> import numpy as np, pandas as pd
    >>> from varimp_core.data.prepare import prepare_table
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 100)
    >>> copy = np.where(np.arange(100) < 97, y, 1 - y)
    >>> frame = pd.DataFrame({"copy": copy, "row": [f"r{i}" for i in range(100)],
    ...                       "noise": rng.integers(0, 3, 100), "y": y})
    >>> data = prepare_table(frame, "y", identifiers="keep")
    >>> [(w["column"], round(w["score"], 2)) for w in find_leaks(data)]
    [('copy', 0.97)]
    """
    s = leak_scores(data, random_state=random_state)
    if s["statistic"] is None:
        return []
    if s["statistic"] == "r2":
        rule = (f"out-of-fold ({LEAK_FOLDS}-fold) R\u00b2 of the column's per-level mean "
                f"\u2265 {LEAK_R2:g}")
    else:
        rule = (f"out-of-fold ({LEAK_FOLDS}-fold) accuracy of the column's per-level majority "
                f"class \u2265 max({LEAK_ACCURACY:g}, majority rate + half the remaining gap) "
                f"= {s['threshold']:.3f}")
    return [{"column": v, "kind": "leak", "score": float(score), "rule": rule}
            for v, score in zip(s["variables"], s["scores"])
            if np.isfinite(score) and score >= s["threshold"]]
