"""User tables: loading, typing, binning and validation.

An uploaded CSV file goes through :func:`read_csv_bytes` (size, encoding and
shape checks) and then :func:`prepare_table`, which decides for each column
whether it is discrete or numeric, bins numeric columns into quantile bins and
returns a :class:`PreparedData`: a compressed
:class:`~varimp_core.data.table.DiscreteTable` for the information-theoretic
methods together with the plain matrices scikit-learn needs.
:func:`prepare_problem` does the same for a built-in problem.

Every refusal is a :class:`DataError` (a ``ValueError``) whose message is one
sentence naming the problem and what to do about it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from varimp_core.data.csvfile import (MAX_UPLOAD_BYTES, DataError, env_limit, quoted_names,
                                      plain_value, decode_upload, load_csv, read_csv_bytes)
from varimp_core.data.table import DiscreteTable
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["DataError", "MAX_CELLS", "MAX_CLASSES", "MAX_UPLOAD_BYTES", "PreparedData",
           "decode_upload", "exact_limit_message", "load_csv", "prepare_problem",
           "prepare_table", "read_csv_bytes"]

#: Largest table, in cells, :func:`prepare_table` accepts; ``VARIMP_MAX_CELLS`` overrides it.
MAX_CELLS = 5_000_000
#: Most classes a classification target may have.
MAX_CLASSES = 50



# -- typing and binning --------------------------------------------------------
@dataclass(frozen=True)
class PreparedData:
    """A table ready for every importance method.

    Parameters
    ----------
    table : DiscreteTable
        Coded (numeric inputs binned) inputs and target, compressed; ``exact``
        is True only for the exact distribution of a built-in problem.
    X_numeric : ndarray of shape (n_samples, n_features) or None
        Float inputs for scikit-learn (text columns ordinal-coded in sorted
        order, booleans 0/1); None for exact tables.
    y : ndarray of shape (n_samples,) or None
        Target for scikit-learn: class codes for classification, floats for
        regression; None for exact tables.
    variables : tuple of str
        Input names.
    target : str
        Target name.
    kinds : dict of str to str
        ``"discrete"`` or ``"numeric"`` per input.
    task : {"classification", "regression"}
        Kind of target.
    bin_edges : dict of str to list of float
        Quantile bin edges (minimum, inner edges, maximum) of each binned input.
    n_samples : int or None
        Number of rows N; None for exact tables.
    source : str
        Problem spec or ``"upload:<filename>"``.
    notes : tuple of str, default=()
        Warnings worth showing, e.g. a text column that looks like an identifier.
    X_codes : ndarray of int64, shape (n_samples, n_features), or None
        Per-sample codes of the inputs (those of ``table``, before rows are
        merged), for varimp's multiway forest on individual rows; None for
        exact tables.
    y_codes : ndarray of int64, shape (n_samples,), or None
        Per-sample codes of the target.
    """

    table: DiscreteTable
    X_numeric: np.ndarray | None
    y: np.ndarray | None
    variables: tuple[str, ...]
    target: str
    kinds: dict[str, str]
    task: str
    bin_edges: dict[str, list[float]]
    n_samples: int | None
    source: str
    notes: tuple[str, ...] = field(default=())
    X_codes: np.ndarray | None = None
    y_codes: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name, codes, rows in (("X_codes", self.X_codes, self.X_numeric),
                                  ("y_codes", self.y_codes, self.y)):
            if codes is not None and rows is not None and len(codes) != len(rows):
                raise ValueError(f"{name} has {len(codes)} rows but the data has {len(rows)}; "
                                 f"set {name}=None when replacing the rows.")

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PreparedData":
        """The PreparedData that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _column_values(s: pd.Series) -> tuple[str, np.ndarray, tuple | None]:
    """Classify a column: ``("number" | "text" | "bool" | "category", values, order)``.

    Missing values are reported as ``"missing"``.
    """
    dtype = s.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        if s.isna().any():
            return "missing", np.array([]), None
        used = set(s.cat.codes.unique())
        cats = [c for i, c in enumerate(dtype.categories) if i in used]
        return "category", s.to_numpy(dtype=object), tuple(cats)
    if pd.api.types.is_bool_dtype(dtype):
        if s.isna().any():
            return "missing", np.array([]), None
        return "bool", s.to_numpy(dtype=bool), None
    if pd.api.types.is_complex_dtype(dtype):
        raise DataError(f"Column {s.name!r} holds complex numbers; keep real-valued "
                        "columns only.")
    if pd.api.types.is_numeric_dtype(dtype):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        return ("number" if np.isfinite(values).all() else "missing"), values, None
    if s.isna().any():
        return "missing", np.array([]), None
    obj = s.to_numpy(dtype=object)
    if all(isinstance(v, (bool, np.bool_)) for v in obj):
        return "bool", obj.astype(bool), None
    numbers = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    if not np.isnan(numbers).any():
        return ("number" if np.isfinite(numbers).all() else "missing"), numbers, None
    return "text", np.array([str(v).strip() for v in obj], dtype=object), None


def _code(kind: str, values: np.ndarray, order: tuple | None):
    """Codes, labels and float values of a discrete column."""
    if kind == "category":
        index = {c: i for i, c in enumerate(order)}
        codes = np.array([index[v] for v in values], dtype=np.int64)
        numeric = all(isinstance(c, (int, float, np.number)) and not isinstance(c, bool)
                      for c in order)
        floats = np.asarray(values, dtype=float) if numeric else codes.astype(float)
        return codes, tuple(order), floats
    levels, codes = np.unique(values, return_inverse=True)
    codes = codes.astype(np.int64).ravel()
    if kind == "number":
        integral = np.all(levels == np.round(levels))
        labels = tuple(int(v) if integral else float(v) for v in levels)
        return codes, labels, values.astype(float)
    if kind == "bool":
        return codes, tuple(bool(v) for v in levels), values.astype(float)
    return codes, tuple(str(v) for v in levels), codes.astype(float)


def _bin(values: np.ndarray, bins: int):
    """Quantile bins: codes, edges and interval labels; empty bins are merged."""
    edges = np.unique(np.quantile(values, np.linspace(0.0, 1.0, bins + 1)))
    inner = list(edges[1:-1])
    while True:
        codes = np.searchsorted(np.asarray(inner, dtype=float), values, side="right")
        counts = np.bincount(codes, minlength=len(inner) + 1)
        empty = np.flatnonzero(counts == 0)
        if not len(empty):
            break
        del inner[max(int(empty[0]) - 1, 0)]
    full = [float(values.min()), *map(float, inner), float(values.max())]
    labels = tuple(f"[{a:.4g}, {b:.4g}{']' if i == len(full) - 2 else ')'}"
                   for i, (a, b) in enumerate(zip(full[:-1], full[1:])))
    return codes.astype(np.int64), full, labels


def _check_options(max_levels, bins, task, max_cells):
    if not isinstance(max_levels, (int, np.integer)) or max_levels < 1:
        raise DataError(f"max_levels must be a whole number of at least 1, got {max_levels!r}.")
    if not isinstance(bins, (int, np.integer)) or bins < 2:
        raise DataError(f"bins must be a whole number of at least 2, got {bins!r}.")
    if task not in (None, "classification", "regression"):
        raise DataError(f"task must be 'classification', 'regression' or None, got {task!r}.")
    limit = max_cells if max_cells is not None else env_limit("VARIMP_MAX_CELLS", MAX_CELLS)
    return int(limit)


def prepare_table(df, target, *, max_levels=20, bins=5, kinds=None, task=None,
                  max_cells=None, source="dataframe") -> PreparedData:
    """Type, code and validate a table for importance computations.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per sample; numbers may be stored as text (as read from CSV).
    target : str
        Name of the output column; every other column is an input.
    max_levels : int, default=20
        A numeric column with at most this many distinct values is discrete.
    bins : int, default=5
        Number of quantile bins for numeric inputs (and a regression target)
        in the discrete table.  Equal quantiles are merged, so a column may
        get fewer bins.
    kinds : dict of str to {"discrete", "numeric"}, default=None
        Override the detected kind of some inputs.
    task : {"classification", "regression"}, default=None
        Override the detected task.  None: classification when the target is
        text, boolean, categorical or has at most ``max_levels`` values.
    max_cells : int, default=None
        Largest accepted ``n_rows * n_columns``; None uses ``VARIMP_MAX_CELLS``
        from the environment or :data:`MAX_CELLS`.
    source : str, default="dataframe"
        Recorded in the result, e.g. ``"upload:data.csv"``.

    Returns
    -------
    data : PreparedData

    Raises
    ------
    DataError
        For an empty table, a missing or constant target, missing or infinite
        values, a classification target with more than :data:`MAX_CLASSES`
        classes, no input columns or too many cells.
    """
    limit = _check_options(max_levels, bins, task, max_cells)
    try:
        return _prepare(df, target, max_levels, bins, kinds, task, limit, source)
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"The table could not be prepared ({type(exc).__name__}: {exc}); "
                        "check the column types and values.") from None


def _prepare(df, target, max_levels, bins, kinds, task, limit, source) -> PreparedData:
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"Expected a pandas DataFrame, got {type(df).__name__}; load the "
                        "data with load_csv or pandas first.")
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise DataError("The table is empty; it needs a header and at least one data row.")
    columns = [str(c) for c in df.columns]
    dupes = sorted(c for c, k in Counter(columns).items() if k > 1)
    if dupes:
        raise DataError(f"Column names {quoted_names(dupes)} appear more than once; rename the "
                        "columns so every name is unique.")
    target = str(target)
    if target not in columns:
        raise DataError(f"The target {target!r} is not a column; choose one of: "
                        f"{quoted_names(columns, 20)}.")
    inputs = [c for c in columns if c != target]
    if not inputs:
        raise DataError(f"The table has only the target column {target!r}; add at least "
                        "one input column.")
    cells = df.shape[0] * df.shape[1]
    if cells > limit:
        raise DataError(f"The table has {cells:,} cells ({df.shape[0]:,} rows x "
                        f"{df.shape[1]:,} columns), more than the limit of {limit:,}; use "
                        "fewer rows or columns.")
    kinds = {str(k): v for k, v in (kinds or {}).items()}
    unknown = [k for k in kinds if k not in inputs]
    if unknown:
        raise DataError(f"kinds names {quoted_names(unknown)}, not among the input columns; "
                        f"choose among: {quoted_names(inputs, 20)}.")
    for key, kind in kinds.items():
        if kind not in ("discrete", "numeric"):
            raise DataError(f"The kind of {key!r} must be 'discrete' or 'numeric', "
                            f"got {kind!r}.")

    frame = df.copy()
    frame.columns = columns
    parsed = {c: _column_values(frame[c]) for c in columns}
    missing = [c for c in columns if parsed[c][0] == "missing"]
    if missing:
        plural = len(missing) > 1
        raise DataError(f"Column{'s' if plural else ''} {quoted_names(missing)} "
                        f"contain{'' if plural else 's'} missing or infinite values "
                        "(NaN/inf); remove or impute them first.")

    x_codes, x_labels, x_float, out_kinds, edges, notes = [], [], [], {}, {}, []
    n = frame.shape[0]
    for c in inputs:
        kind, values, order = parsed[c]
        n_distinct = len(order) if order is not None else len(pd.unique(values))
        want = kinds.get(c)
        if want == "numeric" and kind != "number":
            raise DataError(f"Column {c!r} holds {kind} values, so it cannot be numeric; "
                            "mark it discrete.")
        if want is None:
            want = "numeric" if kind == "number" and n_distinct > max_levels else "discrete"
        if want == "numeric":
            codes, edges[c], labels = _bin(values, bins)
            floats = values
        else:
            codes, labels, floats = _code(kind, values, order)
            if kind == "text" and n_distinct > max(MAX_CLASSES, n // 2):
                notes.append(f"Column {c!r} has {n_distinct} distinct text values; it looks "
                             "like an identifier and may be better removed.")
        out_kinds[c] = want
        x_codes.append(codes)
        x_labels.append(labels)
        x_float.append(floats)

    y_codes, y_labels, y_sk, task = _prepare_target(parsed[target], target, task,
                                                    max_levels, bins)
    X_codes = np.column_stack(x_codes).astype(np.int64)
    table = DiscreteTable.from_codes(X_codes, y_codes, variables=inputs,
                                     target=target, x_labels=x_labels, y_labels=y_labels,
                                     exact=False)
    return PreparedData(table=table, X_numeric=np.column_stack(x_float).astype(float),
                        y=y_sk, variables=tuple(inputs), target=target, kinds=out_kinds,
                        task=task, bin_edges=edges, n_samples=int(n), source=str(source),
                        notes=tuple(notes), X_codes=X_codes,
                        y_codes=np.asarray(y_codes, dtype=np.int64))


def _prepare_target(parsed, target, task, max_levels, bins):
    kind, values, order = parsed
    n_distinct = len(order) if order is not None else len(pd.unique(values))
    if n_distinct < 2:
        value = plain_value(values[0]) if len(values) else None
        raise DataError(f"The target {target!r} is constant (every row is {value!r}); "
                        "choose a target that takes at least two values.")
    if task is None:
        task = "regression" if kind == "number" and n_distinct > max_levels else \
            "classification"
    if task == "regression":
        if kind != "number":
            raise DataError(f"The target {target!r} holds {kind} values, so it cannot be "
                            "a regression target; use task='classification'.")
        codes, _, labels = _bin(values, bins)
        return codes, labels, values.astype(float), task
    if n_distinct > MAX_CLASSES:
        what = "text values" if kind == "text" else "values"
        hint = " or set task='regression'" if kind == "number" else ""
        raise DataError(f"The target {target!r} has {n_distinct} distinct {what}; a "
                        f"classification target needs at most {MAX_CLASSES}, so choose "
                        f"another target{hint}.")
    codes, labels, _ = _code(kind, values, order)
    return codes, labels, codes.copy(), task


def prepare_problem(problem, *, n_samples=None, random_state=0, bins=5,
                    max_levels=20) -> PreparedData:
    """Prepare a built-in problem: its exact distribution or a seeded sample.

    Parameters
    ----------
    problem : Problem
        From :func:`varimp_core.problems.registry.get_problem`.
    n_samples : int, default=None
        None: the exact distribution when ``problem.has_exact``, otherwise a
        sample of ``problem.default_samples`` rows.  An int: a sample of that size.
    random_state : int or None, default=0
        Seed of the sample.
    bins, max_levels : int
        As in :func:`prepare_table`.  Inputs of discrete problems (``led``,
        ``xor``, ``sym``, ``strobl``) are never binned.

    Returns
    -------
    data : PreparedData
        ``source`` is the problem's canonical spec.
    """
    if n_samples is None and problem.has_exact:
        try:
            table = problem.exact_table()
        except ValueError as exc:
            raise DataError(str(exc)) from None
        return PreparedData(table=table, X_numeric=None, y=None,
                            variables=tuple(problem.variables), target=problem.target,
                            kinds={v: "discrete" for v in problem.variables},
                            task=problem.task, bin_edges={}, n_samples=None,
                            source=problem.spec)
    try:
        frame = problem.sample(n_samples, random_state=random_state)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    kinds = {v: "discrete" for v in problem.variables} if problem.discrete else None
    return prepare_table(frame, problem.target, max_levels=max_levels, bins=bins,
                         kinds=kinds, task=problem.task, source=problem.spec)


def exact_limit_message(p: int, limit: int) -> str:
    """Sentence shown when a method's limit on the number of variables is exceeded.

    Examples
    --------
    >>> exact_limit_message(30, 20)[:45]
    'The exact computation handles at most 20 inpu'
    """
    return (f"The exact computation handles at most {limit} input variables and this data "
            f"has {p}; use the sampled forest method instead, or remove variables.")
