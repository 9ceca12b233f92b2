"""CSV text that is safe to open in a spreadsheet, and safe file names for it.

Every CSV the app or the command line writes goes through :func:`safe_csv`: a
text cell (or column name) beginning with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return is one a spreadsheet would run as a formula (CSV injection,
OWASP), so it is prefixed with ``'``.  :func:`csv_filename` names a download
from the page, the data and the settings with safe characters only.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["neutralise_cell", "safe_csv", "csv_filename", "data_name", "table_number"]

_RISKY = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value):
    """Prefix a text cell that a spreadsheet would run as a formula with ``'``."""
    if isinstance(value, str) and value.startswith(_RISKY):
        return "'" + value
    return value


def safe_csv(df) -> str:
    """CSV of a DataFrame (no index, ``\\n`` line ends), header and text cells neutralised."""
    import pandas as pd

    df = df.copy()
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def csv_filename(page: str, data: Any = None, *parts: str, name: str | None = None) -> str:
    """``varimp-<page>-<name>-<parts>.csv`` with only safe characters.

    ``name`` defaults to the data's: its problem spec, or its file name without ``.csv``
    (``data`` is a data choice or its parameters).
    """
    if name is None:
        name = data_name(data)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join([name, *parts]))
    return f"varimp-{page}-{slug.strip('-.')[:80]}.csv"


def data_name(data: Any) -> str:
    """The data's short name: its problem spec, or its file name without ``.csv``."""
    name = data["problem"] if data["source"] != "upload" else (data["file"] or "upload")
    return re.sub(r"\.csv$", "", str(name or "data"), flags=re.I)


def table_number(v) -> float | None:
    """A table cell's number: a finite float, else None (shown blank, never "nan")."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None
