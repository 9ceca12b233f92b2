"""What a prepared data set is, in numbers and first rows: the Data page's summary.

:func:`describe` gives the counts a user checks before trusting any importance
(inputs p, rows N, classes, the output entropy H(Y) in bits, distinct rows,
how many inputs are numeric and binned); :func:`preview` the first rows as
they are shown: an upload's raw rows, the exact distribution's distinct rows
with their probabilities, or a sample's rows.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from varimp_core.data.prepare import PreparedData
from varimp_core.exact.information import mutual_information, output_entropy

__all__ = ["describe", "preview", "display_cell", "column_table", "data_label", "rank_inputs",
           "leak_sentence"]


def display_cell(v: Any) -> Any:
    """A cell as JSON for display: 6 significant digits, NaN as None, infinities as text."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        if not math.isfinite(v):
            return None if math.isnan(v) else repr(v)
        return float(f"{v:.6g}")
    if isinstance(v, (bool, int, str)) or v is None:
        return v
    return str(v)


def data_label(prepared: PreparedData, upload: str | None = None) -> str:
    """The data's name in the Data page's summary: ``"file.csv → target"`` for an upload
    (``upload``: its file name, "" when it has none), else ``"spec (exact)"`` or
    ``"spec (N = 500)"``."""
    if upload is not None:
        return f"{upload or 'uploaded table'} \u2192 {prepared.target}"
    how = "exact" if prepared.table.exact else f"N = {prepared.n_samples:,}"
    return f"{prepared.source} ({how})"


def describe(prepared: PreparedData) -> dict:
    """Counts of a prepared data set.

    Returns
    -------
    summary : dict
        ``p``, ``N`` (None for an exact distribution), ``classes`` (None for
        regression), ``H_Y`` = H(Y) = -sum_y p(y) log2 p(y) in bits of the
        (binned) output, ``exact``, ``task``, ``distinct_rows``, ``target``,
        ``numeric`` (names of the binned numeric inputs), ``n_numeric``,
        ``n_discrete``, ``y_binned`` (a numeric target binned into classes),
        ``source``.
    """
    t = prepared.table
    numeric = sorted(v for v, k in prepared.kinds.items() if k == "numeric")
    return {
        "p": len(prepared.variables),
        "N": prepared.n_samples,
        "classes": t.n_classes if prepared.task == "classification" else None,
        "H_Y": float(output_entropy(t)),
        "exact": bool(t.exact),
        "task": prepared.task,
        "distinct_rows": int(t.n_rows),
        "target": prepared.target,
        "numeric": numeric,
        "n_numeric": len(numeric),
        "n_discrete": len(prepared.variables) - len(numeric),
        "y_binned": prepared.task == "regression",
        "source": prepared.source,
    }


def preview(prepared: PreparedData, *, raw: pd.DataFrame | None = None, rows: int = 20,
            columns: int = 30, file: str | None = None, seed: int = 0) -> dict:
    """The first ``rows`` rows and ``columns`` inputs (then the target), as shown.

    Parameters
    ----------
    prepared : PreparedData
    raw : DataFrame, optional
        The uploaded table: its raw rows are shown rather than the coded ones,
        every column (the first ``columns`` besides the target), used or not.
    rows, columns : int
    file : str, optional
        The upload's file name, for the caption.
    seed : int, default=0
        The sample's seed, for the caption.

    Returns
    -------
    preview : dict
        ``columns`` (names; an exact distribution adds ``"P(row)"``), ``rows``
        (lists of display cells), ``kind`` (``"upload"``, ``"exact"`` or
        ``"sample"``), ``total_rows``, ``n_inputs``, ``target`` and ``caption`` (which rows
        these are, in a sentence).
    """
    t = prepared.table
    names = list(prepared.variables)
    shown = names[:columns]
    if raw is not None:
        head = raw.head(rows)  # every column of the file, excluded and date ones too
        head.columns = [str(c) for c in head.columns]
        cols = [c for c in head.columns if c != prepared.target][:columns] + [prepared.target]
        body = [list(r) for r in head[cols].itertuples(index=False)]
        kind, total = "upload", len(raw)
    elif t.exact:
        idx = [names.index(c) for c in shown]
        cols = shown + [prepared.target, "P(row)"]
        body = [[t.x_labels[j][t.X[i, j]] for j in idx] + [t.y_labels[t.y[i]], t.weight[i]]
                for i in range(min(rows, t.n_rows))]
        kind, total = "exact", t.n_rows
    else:
        X, y = prepared.X_numeric, prepared.y
        cols = shown + [prepared.target]
        labels = t.y_labels if prepared.task == "classification" else None
        body = [list(X[i, :len(shown)]) + [labels[int(y[i])] if labels is not None else y[i]]
                for i in range(min(rows, X.shape[0]))]
        kind, total = "sample", X.shape[0]
    k = len(body)
    caption = {
        "upload": f"First {k} of {total:,} rows of {file or 'the file'}.",
        "exact": f"First {k} of {total:,} rows of the exact distribution "
                 "(each distinct configuration with its probability).",
        "sample": f"First {k} of {total:,} sampled rows (seed {seed}).",
    }[kind]
    if len(names) > columns:
        caption += f" Showing the first {columns} of {len(names)} inputs."
    return {"columns": cols, "rows": [[display_cell(v) for v in r] for r in body],
            "kind": kind, "total_rows": int(total), "n_inputs": len(names),
            "target": prepared.target, "caption": caption}


#: Rows and trees of :func:`rank_inputs`' small forest (a cheap, seeded ranking).
RANK_ROWS, RANK_TREES = 2000, 25


def rank_inputs(prepared: PreparedData, random_state: int = 0) -> list[str]:
    """The inputs from most to least important, cheaply: a page opens on the first.

    A sample: the MDI of a small seeded extra-trees forest (:data:`RANK_TREES` trees on at
    most :data:`RANK_ROWS` rows), which sees interactions (XOR's inputs carry nothing
    alone).  An exact distribution of at most 12 inputs: Eqn 3 (K = 1); a larger one:
    plug-in :math:`I(X_j; Y)`.  Ties keep the inputs' order.
    """
    t, p = prepared.table, len(prepared.variables)
    score = None
    if prepared.X_numeric is not None and prepared.y is not None:
        score = _forest_scores(prepared, random_state)
    if score is None and t.exact and p <= 12:
        from varimp_core.exact.eqn3 import eqn3_importances

        score = [float(v) for v in eqn3_importances(t).importances]
    if score is None:  # a larger table, or values the forest refuses (beyond float32)
        score = [float(mutual_information(t, j)) for j in range(p)]
    order = sorted(range(p), key=lambda j: (-round(score[j], 12), j))
    return [prepared.variables[j] for j in order]


def _forest_scores(prepared: PreparedData, random_state) -> list[float] | None:
    """MDI of :func:`rank_inputs`' small forest, or None when scikit-learn refuses X."""
    from sklearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor

    X, y = prepared.X_numeric, prepared.y
    if len(y) > RANK_ROWS:
        rows = np.random.default_rng(random_state).choice(len(y), RANK_ROWS, replace=False)
        X, y = X[rows], y[rows]
    kind = ExtraTreesRegressor if prepared.task == "regression" else ExtraTreesClassifier
    try:
        forest = kind(n_estimators=RANK_TREES, random_state=random_state, n_jobs=1,
                      min_samples_leaf=2).fit(X, y)
    except ValueError:
        return None
    return [float(v) for v in forest.feature_importances_]


def leak_sentence(leak: dict, task: str) -> str:
    """What a leak flag of :func:`varimp_core.data.leaks.find_leaks` means, as a question."""
    what = (f"predicts the target alone with an out-of-fold R\u00b2 of {leak['score']:.2f}"
            if task == "regression" else
            f"alone predicts the target on {leak['score']:.1%} of held-out rows")
    return (f"{leak['column']!r} {what}: is it known before the outcome? If it is recorded "
            "after the fact or derived from the target, exclude it.")


def column_table(prepared: PreparedData, columns, leaks=()) -> list[dict]:
    """Each column of a user table with its role, type, reason and missing count.

    Parameters
    ----------
    prepared : PreparedData
        From :func:`~varimp_core.data.prepare.prepare_table` on the table.
    columns : sequence of str
        The table's columns, in order.

    Returns
    -------
    rows : list of dict
        ``column``; ``role`` (``"target"``, ``"input"`` or ``"excluded"``);
        ``type`` (``"numeric"``, ``"categorical"``, ``"date"``, or ``""`` for a
        column excluded before it was typed); ``reason`` (why it is excluded,
        else ``""``; for an input in ``leaks``, the question whether it is known before
        the outcome); ``missing`` (missing values in it); ``leak`` (the leak score of
        :func:`~varimp_core.data.leaks.find_leaks`, else None).
    """
    excluded = dict(prepared.excluded)
    leaky = {w["column"]: w for w in leaks}
    rows = []
    for c in map(str, columns):
        if c == prepared.target:
            role = "target"
            kind = "numeric" if prepared.task == "regression" else "categorical"
        elif c in excluded:
            role = "excluded"
            kind = "date" if excluded[c].startswith("a date column") else ""
        else:
            role = "input"
            kind = "date" if c in prepared.dates else (
                "numeric" if prepared.kinds.get(c) == "numeric" else "categorical")
        reason = excluded.get(c, "")
        if role == "input" and c in leaky:
            reason = "possible leak: " + leak_sentence(leaky[c], prepared.task)
        rows.append({"column": c, "role": role, "type": kind, "reason": reason,
                     "missing": int(prepared.missing.get(c, 0)),
                     "leak": float(leaky[c]["score"]) if role == "input" and c in leaky
                     else None})
    return rows
