"""Column roles of a user table: types, missing values, identifiers and dates.

Before any importance is computed, each column of an uploaded table is read
as one of three types and given one of three roles:

* type ``numeric`` (binned into quantile bins for the discrete methods),
  ``categorical`` (one level per value) or ``date`` (expanded into year, month
  and day-of-week inputs, or excluded);
* role ``target``, ``input`` or ``excluded`` (with the reason).

A column that looks like an identifier is excluded by default: every value a
distinct text (names, codes), a name-like text column (more than
:data:`NAME_LIKE_LEVELS` distinct values and fewer than :data:`NAME_LIKE_ROWS`
rows per value on average: customer names, two rows each), or a monotone
integer index (row numbers).  A constant column (one value in every row, see
:func:`constant_reason`) is always excluded: it carries no information, and a
forest or a partial dependence cannot split it.  Such a column splits the sample
into near-singletons, so its plug-in importance is an artefact of the sample
(Strobl et al. 2007; Li et al. 2019), not a property of the variable.

Missing values are a choice (:data:`MISSING_CHOICES`): a level of their own
(``"category"``; a numeric column gets a ``"missing"`` bin beside its
quantile bins, so Eqn 3 of Louppe et al. (2013) applies unchanged to the
distribution where "missing" is a value), dropping the incomplete rows
(``"drop"``) or a refusal that gives the counts (``"refuse"``).  Infinite
values are always refused.

Everything here is pure pandas/numpy; :func:`varimp_core.data.prepare.prepare_table`
applies it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from varimp_core.data.csvfile import DataError, quoted_names

__all__ = ["DATE_CHOICES", "MISSING_CHOICES", "MISSING_LABEL", "DATE_PARTS", "column_values",
           "date_values", "expand_date", "date_parts", "identifier_reason", "constant_reason",
           "missing_sentence", "check_choices", "refuse_missing",
           "number_columns"]

#: How missing values are handled: a level of their own, rows dropped, or a refusal.
MISSING_CHOICES = ("category", "drop", "refuse")
#: What becomes of a date column: year, month and day-of-week inputs, or nothing.
DATE_CHOICES = ("expand", "exclude")
#: The label of the missing level (or bin).
MISSING_LABEL = "missing"
#: The inputs a date column is expanded into, as name suffixes.
DATE_PARTS = ("year", "month", "weekday")
#: A column needs at least this many values before it is called an identifier.
MIN_IDENTIFIER_ROWS = 10
#: A text column with more distinct values than this ...
NAME_LIKE_LEVELS = 50
#: ... and fewer rows per value than this, on average, is name-like (an identifier).
NAME_LIKE_ROWS = 5

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
# ISO dates ("2024-03-01", with an optional time) and dd/mm/yyyy or mm/dd/yyyy.
_DATE = re.compile(r"\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                   r"(?:Z|[+-]\d{2}:?\d{2})?)?|\d{1,2}[/.]\d{1,2}[/.]\d{4}")


def check_choices(missing: str, dates: str) -> None:
    """Refuse an unknown ``missing`` or ``dates`` choice with a sentence."""
    if missing not in MISSING_CHOICES:
        raise DataError(f"missing must be one of {', '.join(MISSING_CHOICES)}, got "
                        f"{missing!r}.")
    if dates not in DATE_CHOICES:
        raise DataError(f"dates must be one of {', '.join(DATE_CHOICES)}, got {dates!r}.")


def column_values(s: pd.Series) -> tuple[str, np.ndarray, tuple | None, np.ndarray]:
    """Classify a column: ``(kind, values, order, missing)``.

    Returns
    -------
    kind : {"number", "text", "bool", "category"}
    values : ndarray
        The column's values (anything where ``missing`` is True).
    order : tuple or None
        The categories in use, in their order, for a pandas categorical.
    missing : ndarray of bool
        Where the value is missing (NaN, None, NaT, blank).

    Raises
    ------
    DataError
        For complex numbers and infinite values.
    """
    dtype = s.dtype
    missing = s.isna().to_numpy(dtype=bool)
    if isinstance(dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy()
        used = set(codes[codes >= 0])
        cats = tuple(c for i, c in enumerate(dtype.categories) if i in used)
        return "category", s.to_numpy(dtype=object), cats, missing
    if pd.api.types.is_bool_dtype(dtype):
        return "bool", s.fillna(False).to_numpy(dtype=bool), None, missing
    if pd.api.types.is_complex_dtype(dtype):
        raise DataError(f"Column {s.name!r} holds complex numbers; keep real-valued "
                        "columns only.")
    if pd.api.types.is_numeric_dtype(dtype):
        values = s.to_numpy(dtype=float, na_value=np.nan)
        _refuse_infinite(s.name, values)
        return "number", values, None, np.isnan(values)
    obj = s.to_numpy(dtype=object)
    text = np.array(["" if m else str(v).strip() for v, m in zip(obj, missing)], dtype=object)
    missing = missing | (text == "")
    present = obj[~missing]
    if len(present) and all(isinstance(v, (bool, np.bool_)) for v in present):
        return "bool", np.array([bool(v) if not m else False for v, m in zip(obj, missing)]), \
            None, missing
    numbers = pd.to_numeric(pd.Series(text[~missing]), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan)
    if len(present) and not np.isnan(numbers).any():
        values = np.full(len(obj), np.nan)
        values[~missing] = numbers
        _refuse_infinite(s.name, values)
        return "number", values, None, missing
    return "text", text, None, missing


def _refuse_infinite(name, values: np.ndarray) -> None:
    n = int(np.isinf(values).sum())
    if n:
        raise DataError(f"Column {name!r} holds {n:,} infinite value{'s' if n > 1 else ''} "
                        "(inf or -inf), which no bin or split can place; replace them with "
                        "numbers, or blank them to make them missing.")


def date_values(s: pd.Series) -> pd.Series | None:
    """The column as datetimes when it is a date or datetime column, else None.

    A date column has a datetime dtype, or holds text whose every value present
    is a date (``2024-03-01``, ``2024-03-01 12:30``, ``01/03/2024``).
    """
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return s
    if not (s.dtype == object or pd.api.types.is_string_dtype(s.dtype)):
        return None
    present = s.dropna().astype(str).str.strip()
    present = present[present != ""]
    if not len(present) or not present.str.fullmatch(_DATE.pattern).all():
        return None
    parsed = pd.to_datetime(s.where(s.astype(str).str.strip() != ""), errors="coerce",
                            format="mixed", utc=present.str.contains(r"Z|[+-]\d{2}:?\d{2}$")
                            .any())
    return parsed if parsed.notna().sum() == len(present) else None


def expand_date(name: str, dt: pd.Series) -> dict[str, pd.Series]:
    """Year, month and day-of-week inputs of a date column (missing stays missing).

    The year is a number; month ("Jan" .. "Dec") and day of week ("Mon" ..
    "Sun") are ordered categories, so their labels and order reach every figure.
    """
    year = dt.dt.year.astype(float)
    month = pd.Categorical.from_codes(
        dt.dt.month.fillna(0).astype(int).to_numpy() - 1, categories=list(_MONTHS))
    day = pd.Categorical.from_codes(
        np.where(dt.isna(), -1, dt.dt.day_of_week.fillna(0).astype(int)), categories=list(_DAYS))
    return {f"{name}_year": pd.Series(year.to_numpy(), index=dt.index),
            f"{name}_month": pd.Series(month, index=dt.index),
            f"{name}_weekday": pd.Series(day, index=dt.index)}


#: A column name that says "identifier": ``id``, ``customer_id``, ``Order No``, ``CustomerID``,
#: ``customerId``, ``key``, ``uuid`` (not ``idea``, ``paid`` or ``grid``).
ID_NAME = re.compile(r"(?i:^(id|uuid|guid|key|index)$|(^|[_\s.-])(id|key|no|nr|number|code)$"
                     r"|^id[_\s.-])|[a-z]I[Dd]$")


def identifier_reason(kind: str, values: np.ndarray, missing: np.ndarray,
                      name: str | None = None) -> str | None:
    """Why a column looks like an identifier, or None.

    Text: every value distinct (at least :data:`MIN_IDENTIFIER_ROWS` of them),
    or name-like: more than :data:`NAME_LIKE_LEVELS` (50) distinct values and fewer than
    :data:`NAME_LIKE_ROWS` (5) rows per value on average.  Such a column splits the rows
    into groups of one to four, so a forest memorises it (and one-hot or per-level work
    grows with the number of values).  Numbers: the row
    numbers themselves, 0, 1, ..., n-1 or 1, 2, ..., n in row order (a spreadsheet's or
    pandas' row index written out).  Other sorted distinct integers are measurements an
    analyst keeps: one row per year (1990, 1991, ...), counts sorted by size, values with
    gaps or in decreasing order.  Distinct integers under a name that says identifier
    (:data:`ID_NAME`: ``customer_id``, ``CustomerID``, ``order_no``) are identifiers too,
    in any order and from any start: customer or order numbers.
    """
    n = int((~missing).sum())
    if n < MIN_IDENTIFIER_ROWS:
        return None
    if kind == "text":
        distinct = len(pd.unique(values[~missing]))
        if distinct == n:
            return f"every one of its {n:,} text values is distinct, like names or codes"
        if distinct > NAME_LIKE_LEVELS and n < NAME_LIKE_ROWS * distinct:
            return (f"name-like: {distinct:,} distinct text values in {n:,} rows "
                    f"({n / distinct:.1f} rows each on average), like names or codes")
        return None
    if kind == "number" and not missing.any():
        if not np.all(values == np.round(values)):
            return None
        if values[0] in (0, 1) and np.array_equal(values, values[0] + np.arange(n)):
            return f"a monotone integer index, {values[0]:.0f} to {values[-1]:.0f} in row order"
        if name is not None and ID_NAME.search(str(name)) and len(np.unique(values)) == n:
            return (f"an identifier: its name says so and each of its {n:,} whole numbers is "
                    "distinct")
    return None


def constant_reason(values: np.ndarray, missing: np.ndarray, how: str = "category"
                    ) -> str | None:
    """Why a column is constant (one value in every row it keeps), or None.

    A column with one distinct value present is constant unless missing values
    are a level of their own (``how="category"``) and some are missing: then
    "present" and "missing" are two levels.  A column whose every value is missing
    is left to the caller.
    """
    present = values[~missing]
    if not len(present):
        return None
    distinct = pd.unique(present)
    if len(distinct) > 1 or (missing.any() and how == "category"):
        return None
    value = distinct[0]
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and value == int(value):
        value = int(value)
    return f"constant: every row holds {value!r}, so it cannot tell rows apart"


def date_parts(name: str, dt: pd.Series) -> tuple[dict[str, pd.Series], list[str]]:
    """The parts of :func:`expand_date` worth keeping, and what was left out, in phrases.

    A part that never changes is left out ("month always Jan").  When month and day of
    the month never change (a year written as 1 January), the weekday only follows the
    year, so it is left out too.
    """
    parts = expand_date(name, dt)
    kept, dropped = {}, []
    present = dt.dropna()
    fixed_day = len(present) and present.dt.month.nunique() == 1 and \
        present.dt.day.nunique() == 1
    for key, part in parts.items():
        suffix = key[len(name) + 1:]
        values = part.dropna()
        if values.nunique() <= 1:
            first = values.iloc[0] if len(values) else None
            shown = f"{first:.0f}" if isinstance(first, float) else str(first)
            dropped.append(f"{suffix} always {shown}")
        elif suffix == "weekday" and fixed_day:
            dropped.append("weekday (it only follows the year, as every date is the same "
                           "day of the year)")
        else:
            kept[key] = part
    return kept, dropped


def missing_sentence(counts: dict[str, int], how: str, *, dropped: int = 0,
                     rows: int = 0) -> str:
    """What became of the missing values, in one sentence ("" when there are none).

    Examples
    --------
    >>> print(missing_sentence({"age": 2, "sex": 11}, "category"))
    Missing values: 'age' 2, 'sex' 11; each is a level of its own ("missing").
    >>> print(missing_sentence({"sex": 11}, "drop", dropped=11, rows=344))
    Missing values: 'sex' 11; the 11 incomplete rows of 344 were dropped.
    """
    if not counts:
        return ""
    listed = ", ".join(f"{c!r} {n:,}" for c, n in list(counts.items())[:10])
    if len(counts) > 10:
        listed += f" and {len(counts) - 10} more columns"
    if how == "drop":
        return (f"Missing values: {listed}; the {dropped:,} incomplete row"
                f"{'s' if dropped != 1 else ''} of {rows:,} were dropped.")
    return f"Missing values: {listed}; each is a level of its own (\"{MISSING_LABEL}\")."


def refuse_missing(counts: dict[str, int], incomplete: int) -> DataError:
    """The refusal of missing values, with the counts and the two ways forward."""
    plural = len(counts) > 1
    return DataError(
        f"Column{'s' if plural else ''} {quoted_names(counts)} "
        f"{'have' if plural else 'has'} missing values "
        f"({', '.join(f'{n:,}' for n in list(counts.values())[:10])}; {incomplete:,} "
        f"incomplete row{'s' if incomplete != 1 else ''}); choose missing values as a level "
        "of their own, or dropping the incomplete rows, or fill them in first.")


def number_columns(df: pd.DataFrame) -> list[str]:
    """Columns stored as numbers (not booleans): the only ones that can be binned as numeric."""
    return [str(c) for c in df.columns
            if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]
