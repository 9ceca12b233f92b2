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

from varimp_core.data.columns import (MISSING_LABEL, check_choices, column_values,
                                      constant_reason, date_parts, date_values,
                                      identifier_reason, missing_sentence, refuse_missing)
from varimp_core.data.csvfile import (DataError, check_cells,
                                      decode_upload, load_csv, plain_value, quoted_names,
                                      read_csv_bytes)
from varimp_core.data.table import DiscreteTable
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["DataError", "MAX_CLASSES", "PreparedData",
           "decode_upload", "exact_limit_message", "load_csv", "prepare_numeric_sample",
           "prepare_problem", "prepare_table", "read_csv_bytes", "default_roles"]

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
    excluded : tuple of (str, str), default=()
        Columns of the table left out, each with the reason (an identifier,
        a date column with ``dates="exclude"``, the user's choice).
    missing : dict of str to int, default={}
        Missing values per used column of the table (target included), before
        any row was dropped; columns without any are left out.
    dropped_rows : int, default=0
        Rows left out: incomplete rows with ``missing="drop"``, rows without a
        target value otherwise.
    dates : tuple of str, default=()
        Date columns expanded into ``<name>_year``, ``<name>_month`` and
        ``<name>_weekday`` inputs (those of the three that change).
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
    excluded: tuple[tuple[str, str], ...] = ()
    missing: dict[str, int] = field(default_factory=dict)
    dropped_rows: int = 0
    dates: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, codes, rows in (("X_codes", self.X_codes, self.X_numeric),
                                  ("y_codes", self.y_codes, self.y)):
            if codes is not None and rows is not None and len(codes) != len(rows):
                raise ValueError(f"{name} has {len(codes)} rows but the data has {len(rows)}; "
                                 f"set {name}=None when replacing the rows.")

    def value_labels(self, name: str, values) -> tuple[str, ...] | None:
        """The labels of values of input ``name`` as scikit-learn sees them (``X_numeric``).

        A text, boolean or categorical input is ordinal-coded for scikit-learn:
        its codes get their labels back ("Biscoe", "Dream", "Torgersen"), a value
        below every code (or below every number) is ``"missing"``.  A numeric
        input with missing rows names its stand-in value (below every number,
        see :meth:`missing_value`) ``"missing"`` and the others by their number
        (4 significant digits).  None for a numeric input without missing rows,
        or a discrete one whose values are their own labels.
        """
        j = self.variables.index(name)
        values = np.asarray(values, dtype=float)
        labels = self.table.x_labels[j]
        if self.kinds.get(name) != "discrete":
            low = self.missing_value(name)
            if low is None:
                return None
            return tuple(MISSING_LABEL if v <= low else f"{v:.4g}" for v in values)
        present = [lv for lv in labels if lv != MISSING_LABEL]
        if all(isinstance(lv, (int, float, np.number)) and not isinstance(lv, (bool, np.bool_))
               for lv in present):
            if len(present) == len(labels):
                return None
            return tuple(f"{v:g}" if v in present else MISSING_LABEL for v in values)
        codes = np.rint(values).astype(np.int64)
        return tuple(str(labels[c]) if 0 <= c < len(labels) else MISSING_LABEL for c in codes)

    def missing_value(self, name: str) -> float | None:
        """The number standing for a missing value of numeric input ``name`` in ``X_numeric``.

        With :math:`a` and :math:`b` the smallest and largest values present,
        the stand-in is :math:`a - \\max(b - a, 1)`, below every value, so
        that a tree can split the missing rows off.  None when the input has no
        missing rows or is not numeric.
        """
        edges = self.bin_edges.get(name)
        labels = self.table.x_labels[self.variables.index(name)]
        if self.kinds.get(name) != "numeric" or not edges or labels[-1] != MISSING_LABEL:
            return None
        lo, hi = float(edges[0]), float(edges[-1])
        return lo - max(hi - lo, 1.0)

    def native_X(self) -> np.ndarray | None:
        """``X_numeric`` with each numeric input's missing rows as NaN, for scikit-learn.

        scikit-learn 1.9.1's random forests and extra-trees split NaN natively (the
        missing rows go to the side that lowers the impurity most); the stand-in of
        :meth:`missing_value` would always send them below every value.  The stand-in
        is the only value below an input's smallest bin edge.  Discrete inputs keep
        their codes ("missing" is a category of its own).
        """
        X = self.X_numeric
        if X is None:
            return None
        out = X
        for j, name in enumerate(self.variables):
            if self.missing_value(name) is not None:
                out = out.copy() if out is X else out
                out[X[:, j] < float(self.bin_edges[name][0]), j] = np.nan
        return out

    def value_names(self, name: str) -> dict[float, str]:
        """The values of input ``name`` in ``X_numeric`` that stand for something else, named.

        An ordinal-coded input: every code and its category ("Biscoe", ...,
        ``"missing"``); a numeric one: its :meth:`missing_value` and
        ``"missing"``.  Empty when every value is its own number.  Tables and
        CSV files write these names instead of the values.
        """
        if self.kinds.get(name) != "discrete":
            low = self.missing_value(name)
            return {} if low is None else {low: MISSING_LABEL}
        if self.X_numeric is None:
            return {}
        values = np.unique(self.X_numeric[:, self.variables.index(name)])
        labels = self.value_labels(name, values)
        return {} if labels is None else dict(zip(values.tolist(), labels))

    def value_ticks(self, name: str) -> dict[float, str]:
        """Axis ticks of input ``name``: value and text, empty where plain numbers do.

        :meth:`value_names` for a discrete input; for a numeric one with
        missing rows, its bin edges (4 significant digits) and the stand-in
        named ``"missing"``, so that the axis says where the missing rows are.
        """
        names = self.value_names(name)
        if not names or self.kinds.get(name) == "discrete":
            return names
        edges = {float(e): f"{e:.4g}" for e in self.bin_edges[name]}
        return {**names, **edges}

    def value_label_pairs(self, features) -> dict[str, dict[str, list]]:
        """:meth:`value_names` and :meth:`value_ticks` of ``features`` as JSON lists.

        ``{feature: {"names": [[value, text], ...], "ticks": [[value, text], ...]}}``
        (pairs, as JSON objects only have text keys); ``dict(map(tuple, pairs))``
        reads one back.
        """
        return {f: {"names": [[v, t] for v, t in self.value_names(f).items()],
                    "ticks": [[v, t] for v, t in self.value_ticks(f).items()]}
                for f in features}

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PreparedData":
        """The PreparedData that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


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
    return codes.astype(np.int64), full, _bin_labels(full)


def _bin_labels(full) -> tuple:
    """Interval labels of bin edges ``full``: ``[a, b)``, the last one closed."""
    return tuple(f"[{a:.4g}, {b:.4g}{']' if i == len(full) - 2 else ')'}"
                 for i, (a, b) in enumerate(zip(full[:-1], full[1:])))


def _bin_columns(X: np.ndarray, bins: int) -> list:
    """:func:`_bin` of every column of ``X`` (finite floats): the same codes, edges and
    labels, with the quantiles of every column taken at once (along axis 0 they are the
    per-column ones, bit for bit).  A column whose quantiles tie, or leave a bin empty,
    goes through :func:`_bin`, which merges them."""
    quantiles = np.quantile(X, np.linspace(0.0, 1.0, bins + 1), axis=0)     # (bins + 1, p)
    out = []
    for j in range(X.shape[1]):
        values, q = X[:, j], quantiles[:, j]
        if np.all(np.diff(q) > 0):                  # np.unique keeps every edge
            inner = q[1:-1]
            codes = np.searchsorted(inner, values, side="right")
            if np.bincount(codes, minlength=bins).min() > 0:
                full = [float(values.min()), *map(float, inner), float(values.max())]
                out.append((codes.astype(np.int64), full, _bin_labels(full)))
                continue
        out.append(_bin(values, bins))
    return out


def prepare_numeric_sample(df, target, *, max_levels=20, bins=5, task=None,
                           source="dataframe", max_cells=None) -> PreparedData | None:
    """:func:`prepare_table` of a frame whose inputs are all finite floats with more than
    ``max_levels`` distinct values each (identifiers kept), without its column-by-column
    reading: every input is binned (:func:`_bin_columns`), the target is read as
    :func:`prepare_table` reads it.  The same :class:`PreparedData`, field for field.

    Made for the replicates of a study, which draw hundreds of fresh samples of a problem
    of continuous inputs (Madelon: 500 x 500 in 0.074 s through :func:`prepare_table`, of
    a replicate's 0.085 s).  None when the frame does not qualify (a text, integer,
    missing or infinite input, one of few values, a missing target, names that are not
    distinct text): then :func:`prepare_table`.
    """
    if not isinstance(df, pd.DataFrame) or target not in df.columns:
        return None
    inputs = [c for c in df.columns if c != target]
    if not inputs or not all(isinstance(c, str) and c.strip() == c and c for c in df.columns) \
            or len(set(df.columns)) != len(df.columns):
        return None
    X = df[inputs].to_numpy()
    if X.dtype.kind != "f" or not X.size or not np.isfinite(X).all():
        return None
    S = np.sort(X, axis=0)
    if (1 + (np.diff(S, axis=0) != 0).sum(axis=0) <= max_levels).any():
        return None
    limit = _check_options(max_levels, bins, task, max_cells, "category", "expand", "keep")
    check_cells(df.shape[0], df.shape[1], limit)
    y_kind, y_values, y_order, y_miss = column_values(df[target])
    if y_miss.any():
        return None
    y_codes, y_labels, y_sk, task = _prepare_target(
        (y_kind, y_values, _used_order(y_order, y_values)), target, task, max_levels, bins)
    binned = _bin_columns(X.astype(float), bins)
    X_codes = np.column_stack([b[0] for b in binned]).astype(np.int64)
    table = DiscreteTable.from_codes(X_codes, y_codes, variables=inputs, target=target,
                                     x_labels=[b[2] for b in binned], y_labels=y_labels,
                                     exact=False)
    n = int(df.shape[0])
    notes = [*df.attrs.get("notes", ()), *_notes([], {}, "category", 0, n, {})]
    return PreparedData(table=table, X_numeric=X.astype(float), y=y_sk,
                        variables=tuple(inputs), target=target,
                        kinds={c: "numeric" for c in inputs}, task=task,
                        bin_edges={c: b[1] for c, b in zip(inputs, binned)}, n_samples=n,
                        source=str(source), notes=tuple(notes), X_codes=X_codes,
                        y_codes=np.asarray(y_codes, dtype=np.int64), excluded=(),
                        missing={}, dropped_rows=0, dates=())


def _check_options(max_levels, bins, task, max_cells, missing, dates, identifiers):
    if not isinstance(max_levels, (int, np.integer)) or max_levels < 1:
        raise DataError(f"max_levels must be a whole number of at least 1, got {max_levels!r}.")
    if not isinstance(bins, (int, np.integer)) or bins < 2:
        raise DataError(f"bins must be a whole number of at least 2, got {bins!r}.")
    if task not in (None, "classification", "regression"):
        raise DataError(f"task must be 'classification', 'regression' or None, got {task!r}.")
    check_choices(missing, dates)
    if identifiers not in ("exclude", "keep"):
        raise DataError(f"identifiers must be 'exclude' or 'keep', got {identifiers!r}.")
    return None if max_cells is None else int(max_cells)


def prepare_table(df, target, *, max_levels=20, bins=5, kinds=None, task=None,
                  max_cells=None, source="dataframe", missing="category", exclude=(),
                  identifiers="exclude", dates="expand") -> PreparedData:
    """Type, code and validate a table for importance computations.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per sample; numbers may be stored as text (as read from CSV).
    target : str
        Name of the output column; every other column is an input unless excluded.
    max_levels : int, default=20
        A numeric column with at most this many distinct values is discrete.
    bins : int, default=5
        Number of quantile bins for numeric inputs (and a regression target)
        in the discrete table.  Equal quantiles are merged, so a column may
        get fewer bins.
    kinds : dict of str to {"discrete", "numeric"}, default=None
        Override the detected kind of some inputs (excluded and date columns
        are left as they are).
    task : {"classification", "regression"}, default=None
        Override the detected task.  None: classification when the target is
        text, boolean, categorical or has at most ``max_levels`` values.
    max_cells : int, default=None
        Largest accepted ``n_rows * n_columns`` (a server's limit, passed in by
        ``pages/_server/limits.py``); None: no limit.
    source : str, default="dataframe"
        Recorded in the result, e.g. ``"upload:data.csv"``.
    missing : {"category", "drop", "refuse"}, default="category"
        Missing values (NaN, None, blank): a level of their own (a numeric
        input gets a ``"missing"`` bin beside its quantile bins, and for
        scikit-learn the value ``min - max(max - min, 1)``, below every value
        seen, so one split separates them in every forest); drop the incomplete
        rows; or refuse with the counts.  Rows without a target value are
        always dropped (or refused).  Infinite values are always refused.
    exclude : sequence of str, default=()
        Columns left out.
    identifiers : {"exclude", "keep"}, default="exclude"
        Whether identifier-like columns (see
        :func:`varimp_core.data.columns.identifier_reason`) are left out.
    dates : {"expand", "exclude"}, default="expand"
        Date columns become ``<name>_year`` (a number), ``<name>_month`` and
        ``<name>_weekday`` (ordered categories) inputs, those of the three that
        change (every date in one year makes no year input), or are left out.

    Returns
    -------
    data : PreparedData
        With the excluded columns and their reasons, the missing counts and
        the dropped rows.

    Raises
    ------
    DataError
        For an empty table, a missing or constant target, infinite values,
        missing values with ``missing="refuse"``, a classification target with
        more than :data:`MAX_CLASSES` classes, no input columns or too many cells.
    """
    limit = _check_options(max_levels, bins, task, max_cells, missing, dates, identifiers)
    try:
        return _prepare(df, str(target), max_levels, bins, kinds, task, limit, source,
                        missing, exclude, identifiers, dates)
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"The table could not be prepared ({type(exc).__name__}: {exc}); "
                        "check the column types and values.") from None


def _check_names(df, target, exclude, kinds) -> tuple[list[str], list[str], dict]:
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
    if target not in columns:
        raise DataError(f"The target {target!r} is not a column; choose one of: "
                        f"{quoted_names(columns, 20)}.")
    exclude = [str(c) for c in ([exclude] if isinstance(exclude, str) else exclude or ())]
    unknown = [c for c in exclude if c not in columns]
    if unknown:
        raise DataError(f"exclude names {quoted_names(unknown)}, not columns of the table; "
                        f"choose among: {quoted_names(columns, 20)}.")
    if target in exclude:
        raise DataError(f"The target {target!r} cannot be excluded; choose another target or "
                        "keep it.")
    kinds = {str(k): v for k, v in (kinds or {}).items()}
    unknown = [k for k in kinds if k not in columns or k == target]
    if unknown:
        raise DataError(f"kinds names {quoted_names(unknown)}, not among the input columns; "
                        f"choose among: {quoted_names([c for c in columns if c != target], 20)}.")
    for key, kind in kinds.items():
        if kind not in ("discrete", "numeric"):
            raise DataError(f"The kind of {key!r} must be 'discrete' or 'numeric', "
                            f"got {kind!r}.")
    return columns, exclude, kinds


def _prepare(df, target, max_levels, bins, kinds, task, limit, source, missing, exclude,
             identifiers, dates) -> PreparedData:
    columns, exclude, kinds = _check_names(df, target, exclude, kinds)
    check_cells(df.shape[0], df.shape[1], limit)
    frame = df.copy()
    frame.columns = columns
    n = frame.shape[0]

    # Roles: excluded by choice, dates, identifiers and empty columns; the rest typed.
    excluded = [(c, _why_excluded(frame[c], missing)) for c in exclude]
    parsed, expanded, date_notes = {}, {}, []
    for c in columns:
        if c == target or c in exclude:
            continue
        dt = date_values(frame[c])
        if dt is not None:
            # A part that never changes (every date in one year) is no input: left out.
            parts, dropped = date_parts(c, dt)
            if dropped and parts and dates != "exclude":
                date_notes.append(f"Date column {c!r} became {quoted_names(parts)}; left "
                                  f"out: {'; '.join(dropped)}.")
            if dates == "exclude":
                excluded.append((c, "a date column, and dates are excluded"))
            elif not parts:
                excluded.append((c, "a date column whose year, month and weekday never change"))
            else:
                expanded[c] = (dt, parts)
            continue
        parsed[c] = column_values(frame[c])
        kind, values, _, miss = parsed[c]
        reason = "every value is missing" if miss.all() else (
            constant_reason(values, miss, missing)
            or (identifier_reason(kind, values, miss, c) if identifiers == "exclude" else None))
        if reason:
            excluded.append((c, reason))
            del parsed[c]
    y_parsed = column_values(frame[target])
    used = [c for c in columns if c in parsed or c in expanded]
    if not used:
        if not excluded:
            raise DataError(f"The table has only the target column {target!r}; add at least "
                            "one input column.")
        raise DataError(f"The table has no input column besides the target {target!r} (the "
                        f"others are excluded: {quoted_names(c for c, _ in excluded)}); "
                        "include at least one input column.")
    clash = [name for c in expanded for name in expanded[c][1] if name in columns]
    if clash:
        raise DataError(f"Expanding the date columns makes {quoted_names(clash)}, already "
                        "columns of the table; rename them.")

    # Missing values: counted per used column, then a level, dropped rows or a refusal.
    miss_of = {c: parsed[c][3] if c in parsed else expanded[c][0].isna().to_numpy()
               for c in used}
    miss_of[target] = y_parsed[3]
    counts = {c: int(miss_of[c].sum()) for c in [*used, target] if miss_of[c].any()}
    any_missing = np.zeros(n, dtype=bool)
    for m in miss_of.values():
        any_missing |= m
    if counts and missing == "refuse":
        raise refuse_missing(counts, int(any_missing.sum()))
    keep = ~any_missing if missing == "drop" else ~y_parsed[3]
    if not keep.any():
        raise DataError(f"Every row has a missing value (in {quoted_names(counts)}); keep "
                        "missing values as a level of their own, or exclude those columns.")

    inputs, x_codes, x_labels, x_float, out_kinds, edges = [], [], [], [], {}, {}
    for c in used:
        parts = [(c, parsed[c])] if c in parsed else [
            (name, column_values(part)) for name, part in expanded[c][1].items()]
        for name, (kind, values, order, miss) in parts:
            codes, labels, floats, want, edge = _input(name, kind, values[keep], order,
                                                       miss[keep], kinds.get(name),
                                                       max_levels, bins)
            inputs.append(name)
            out_kinds[name] = want
            x_codes.append(codes)
            x_labels.append(labels)
            x_float.append(floats)
            if edge is not None:
                edges[name] = edge

    y_kind, y_values, y_order, _ = y_parsed
    y_codes, y_labels, y_sk, task = _prepare_target(
        (y_kind, y_values[keep], _used_order(y_order, y_values[keep])), target, task,
        max_levels, bins)
    notes = [*df.attrs.get("notes", ()),   # what reading the file noticed (decimal commas)
             *_notes(excluded, counts, missing, int(n - keep.sum()), n, expanded), *date_notes]
    X_codes = np.column_stack(x_codes).astype(np.int64)
    table = DiscreteTable.from_codes(X_codes, y_codes, variables=inputs,
                                     target=target, x_labels=x_labels, y_labels=y_labels,
                                     exact=False)
    return PreparedData(table=table, X_numeric=np.column_stack(x_float).astype(float),
                        y=y_sk, variables=tuple(inputs), target=target, kinds=out_kinds,
                        task=task, bin_edges=edges, n_samples=int(keep.sum()),
                        source=str(source), notes=tuple(notes), X_codes=X_codes,
                        y_codes=np.asarray(y_codes, dtype=np.int64),
                        excluded=tuple(excluded), missing=counts,
                        dropped_rows=int(n - keep.sum()), dates=tuple(expanded))


def _why_excluded(s: pd.Series, missing: str = "category") -> str:
    """The reason of a column excluded by choice: constant or identifier-like, if it is."""
    try:
        kind, values, _, miss = column_values(s)
    except DataError:
        return "excluded by choice"
    return (constant_reason(values, miss, missing)
            or identifier_reason(kind, values, miss, s.name) or "excluded by choice")


def _used_order(order, values):
    if order is None:
        return None
    seen = set(values)
    return tuple(c for c in order if c in seen)


def _input(name, kind, values, order, miss, want, max_levels, bins):
    """Codes, labels, floats, kind and bin edges of one input (missing as the last level)."""
    present = values[~miss]
    order = _used_order(order, present)
    n_distinct = len(order) if order is not None else len(pd.unique(present))
    if want == "numeric" and kind != "number":
        raise DataError(f"Column {name!r} holds {kind} values, so it cannot be numeric; "
                        "mark it discrete.")
    if want is None:
        want = "numeric" if kind == "number" and n_distinct > max_levels else "discrete"
    edge = None
    if not len(present):
        codes, labels, floats = np.zeros(0, dtype=np.int64), (), np.zeros(0)
    elif want == "numeric":
        codes, edge, labels = _bin(present.astype(float), bins)
        floats = present.astype(float)
    else:
        codes, labels, floats = _code(kind, present, order)
    if not miss.any():
        return codes, labels, floats, want, edge
    full_codes = np.full(len(values), len(labels), dtype=np.int64)
    full_codes[~miss] = codes
    if kind == "text" and want == "discrete":
        below = float(len(labels))  # the next ordinal code
    else:
        lo, hi = (float(floats.min()), float(floats.max())) if len(floats) else (0.0, 0.0)
        below = lo - max(hi - lo, 1.0)
    full_floats = np.full(len(values), below)
    full_floats[~miss] = floats
    label = MISSING_LABEL if MISSING_LABEL not in labels else f"({MISSING_LABEL})"
    return full_codes, (*labels, label), full_floats, want, edge


def _notes(excluded, counts, missing, dropped, n, expanded) -> list[str]:
    notes = []
    if excluded:
        notes.append("Excluded: " + "; ".join(f"{c!r} ({why})" for c, why in excluded[:10])
                     + (f"; and {len(excluded) - 10} more" if len(excluded) > 10 else "")
                     + ".")
    full = [c for c, (_, parts) in expanded.items() if len(parts) == 3]
    if full:   # the others have a sentence of their own: what they became, what was left out
        notes.append(f"Date column{'s' if len(full) > 1 else ''} "
                     f"{quoted_names(full)} expanded into year, month and day-of-week "
                     "inputs.")
    sentence = missing_sentence(counts, missing, dropped=dropped, rows=n)
    if sentence:
        notes.append(sentence)
    if missing == "category" and dropped:
        notes.append(f"{dropped:,} row{'s' if dropped != 1 else ''} without a target value "
                     f"{'were' if dropped != 1 else 'was'} dropped.")
    return notes


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
                         kinds=kinds, task=problem.task, source=problem.spec,
                         identifiers="keep")  # a problem's variables are all inputs


def exact_limit_message(p: int, limit: int) -> str:
    """Sentence shown when a method's limit on the number of variables is exceeded.

    Examples
    --------
    >>> exact_limit_message(30, 20)[:45]
    'The exact computation handles at most 20 inpu'
    """
    return (f"The exact computation handles at most {limit} input variables and this data "
            f"has {p}; use the sampled forest method instead, or remove variables.")


def default_roles(df: pd.DataFrame, target: str) -> dict:
    """What :func:`prepare_table` makes of each column of ``df`` for ``target`` by default.

    Every other column's type and role is derived again for each target (a former
    target that is numeric becomes a numeric input, not one level per value).

    Returns
    -------
    roles : dict
        ``numeric`` (the columns read as numbers, not the inputs a date column expands
        into) and ``exclude`` (the identifier-like columns left out), sorted; None each
        when the table cannot be prepared for this target.
    """
    try:
        prepared = prepare_table(df, target)
    except (DataError, TypeError):
        return {"numeric": None, "exclude": None}
    columns = set(map(str, df.columns))
    return {"numeric": sorted(v for v, k in prepared.kinds.items()
                              if k == "numeric" and v in columns),
            "exclude": sorted(c for c, _ in prepared.excluded)}


def default_roles_by_target(df: pd.DataFrame, max_levels: int = 20) -> dict[str, dict]:
    """:func:`default_roles` for every column as the target, each column read once.

    What :func:`prepare_table` makes of an input by default does not depend on the
    target, except through the rows it keeps: a column's date parts, its missing,
    constant and identifier-like tests (:func:`_prepare`'s roles) look at the whole
    column.  Only a numeric column's kind (more than ``max_levels`` distinct values
    among the kept rows) can change when the target has missing values, whose rows
    are dropped; it is counted again then.  A target that cannot be prepared (constant,
    too many classes, every value missing, no input left, a date part named like a
    column) gets None, as :func:`default_roles` does.

    So every target's defaults cost one reading of the table, not one preparation per
    target.

    Returns
    -------
    roles : dict of str to dict
        For every column, :func:`default_roles` of that target: ``numeric`` and
        ``exclude`` (sorted names), or None each.
    """
    names = [str(c) for c in df.columns] if isinstance(df, pd.DataFrame) else []
    unknown = {c: {"numeric": None, "exclude": None} for c in names}
    try:
        columns, _, _ = _check_names(df, names[0] if names else "", (), None)
    except DataError:
        return unknown
    frame = df.copy()
    frame.columns = columns
    parsed, dated, reasons = {}, {}, {}
    try:  # a column that cannot be read (infinite values) stops every target's preparation
        for c in columns:
            dt = date_values(frame[c])
            if dt is not None:
                parts, _ = date_parts(c, dt)
                if parts:
                    dated[c] = list(parts)
                else:
                    reasons[c] = "no part changes"
                continue
            parsed[c] = column_values(frame[c])
            kind, values, _, miss = parsed[c]
            if (miss.all() or constant_reason(values, miss)
                    or identifier_reason(kind, values, miss, c)):
                reasons[c] = "excluded"
    except Exception:
        return unknown

    def numeric(c: str, keep: np.ndarray) -> bool:
        kind, values, _, miss = parsed[c]
        return kind == "number" and len(pd.unique(values[keep & ~miss])) > max_levels

    everyone = np.ones(len(frame), dtype=bool)
    inputs = [c for c in parsed if c not in reasons]
    numeric_all = {c for c in inputs if numeric(c, everyone)}
    out = {}
    for t in columns:
        try:
            kind, values, order, miss = parsed[t] if t in parsed else column_values(frame[t])
            keep = ~miss
            used = [c for c in columns if c != t and c not in reasons]
            clash = [name for c in dated if c != t for name in dated[c] if name in columns]
            if not keep.any() or not used or clash:
                out[t] = {"numeric": None, "exclude": None}
                continue
            _prepare_target((kind, values[keep], _used_order(order, values[keep])), t, None,
                            max_levels, 5)
        except Exception:   # prepare_table turns any failure into a DataError: None, too
            out[t] = {"numeric": None, "exclude": None}
            continue
        kinds = (numeric_all - {t} if keep.all()
                 else {c for c in inputs if c != t and numeric(c, keep)})
        out[t] = {"numeric": sorted(kinds), "exclude": sorted(c for c in reasons if c != t)}
    return out


def column_facts(df: pd.DataFrame) -> dict | None:
    """What :func:`prepare_table` reads from each column alone, in a few JSON numbers.

    For every column: ``kind`` (:func:`~varimp_core.data.columns.column_values`),
    ``distinct`` (values present), ``missing`` (how many are missing), ``identifier`` (identifier-
    like, :func:`~varimp_core.data.columns.identifier_reason`) and ``dates`` (the parts a
    date column becomes, possibly none; None for other columns).  Enough to count a
    choice's inputs (:func:`input_names`) and read its task (:func:`target_task`) without
    preparing the table.  None when a column cannot be read (infinite values): no
    preparation of this table succeeds.
    """
    if not isinstance(df, pd.DataFrame) or df.shape[1] == 0:
        return None
    facts = {}
    try:
        for c in df.columns:
            s = df[c]
            kind, values, order, miss = column_values(s)
            dt = date_values(s)
            present = values[~miss]
            facts[str(c)] = {
                "kind": kind,
                "distinct": (len(_used_order(order, present)) if order is not None
                             else int(len(pd.unique(present)))),
                "missing": int(miss.sum()),
                "identifier": dt is None and bool(identifier_reason(kind, values, miss, str(c))),
                "dates": None if dt is None else list(date_parts(str(c), dt)[0])}
    except Exception:
        return None
    return facts


def input_names(facts: dict | None, target: str, *, exclude=None, dates: str = "expand",
                missing: str = "category") -> list[str] | None:
    """The inputs :func:`prepare_table` makes of a table, in order, from :func:`column_facts`.

    ``exclude`` None: identifier-like columns left out (the default); a list: those columns
    (identifiers kept).  Every other column but the target is an input, except one whose
    values are all missing, a constant one (one value present, and no missing value kept as
    a level of its own) and a date column whose parts never change; a date column gives its
    parts (``dates="expand"``) or nothing (``"exclude"``).  None when ``facts`` is None or
    does not name ``target``.  Equal to the ``variables`` of :func:`prepare_table` wherever
    it prepares the table (tested for every target and choice).
    """
    if not facts or target not in facts:
        return None
    out = set(exclude or ())
    names = []
    for c, f in facts.items():
        if c == target or c in out or (exclude is None and f["identifier"]):
            continue
        if f["dates"] is not None:
            names += f["dates"] if dates == "expand" else []
        elif f["distinct"] > 1 or (f["distinct"] == 1 and f["missing"] and missing == "category"):
            names.append(c)
    return names


def target_task(facts: dict | None, target: str, *, task: str | None = None,
                missing: str = "category", max_levels: int = 20) -> str | None:
    """The task :func:`prepare_table` gives ``target``, from :func:`column_facts`.

    ``task`` itself when given; else regression for a number column of more than
    ``max_levels`` values present, classification otherwise.  With ``missing="drop"``
    the rows kept depend on every input, so a number target of more than ``max_levels``
    values keeps more than ``max_levels`` only when fewer rows than that margin can be
    dropped (at most one per missing value of another column); otherwise None (unknown).
    None also without facts.
    """
    if task in ("classification", "regression"):
        return task
    f = (facts or {}).get(target)
    if f is None:
        return None
    if f["kind"] != "number" or f["distinct"] <= max_levels:
        return "classification"
    # Dropping k incomplete rows removes at most k of the target's values: at most one per
    # missing value of another column.
    dropped = sum(g["missing"] for c, g in facts.items() if c != target) \
        if missing == "drop" else 0
    return "regression" if f["distinct"] - dropped > max_levels else None
