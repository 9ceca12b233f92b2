"""Helpers every page uses: safe CSV cells and names, table numbers, a placeholder figure."""

from __future__ import annotations

import math
import re
from typing import Any

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


def frame_table(df, formats: dict | None = None, default: str = "fixed4") -> tuple[list, list]:
    """DataTable columns and rows of a DataFrame the core built (its column names shown).

    Numeric columns get a number format by name: ``fixed4`` (the default), ``fixed3``,
    ``fixed6``, ``signed4``, ``pct2`` or ``exp4`` (``formats`` maps a column to one, or to
    None: shown as it is);
    NaN and infinities are blank cells (:func:`table_number`).
    """
    import pandas as pd
    from dash.dash_table.Format import Format, Scheme

    fixed, exp = Scheme.fixed, Scheme.decimal_or_exponent
    specs = {"fixed3": dict(precision=3, scheme=fixed), "fixed4": dict(precision=4, scheme=fixed),
             "fixed6": dict(precision=6, scheme=fixed), "exp4": dict(precision=4, scheme=exp),
             "signed4": dict(precision=4, scheme=fixed, sign="+"),
             "pct2": dict(precision=2, scheme=Scheme.percentage)}
    fmt = lambda name: Format(**specs[name])  # noqa: E731

    formats = formats or {}
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
               and not pd.api.types.is_bool_dtype(df[c])]
    cols = [{"name": str(c), "id": str(c), **({"type": "numeric"} if c in numeric else {}),
             **({"format": fmt(formats.get(c, default))}
                if c in numeric and formats.get(c, default) else {})} for c in df.columns]
    rows = [{str(c): table_number(v) if c in numeric else v for c, v in row.items()}
            for row in df.to_dict("records")]
    return cols, rows


def placeholder_figure(text: str = "Computing\u2026"):
    """An empty figure carrying one line of text (before the first result, or after an error).

    The text may quote a user's column name, so it is Plotly text, never markup.
    """
    import plotly.graph_objects as go

    from varimp_core.plots.style import plain_text, wrap_note

    fig = go.Figure()
    fig.update_layout(template="plotly_white", xaxis=dict(visible=False),
                      yaxis=dict(visible=False), margin=dict(l=20, r=20, t=20, b=20),
                      annotations=[dict(text=wrap_note(plain_text(text)), showarrow=False, x=0.5, y=0.5,
                                        xref="paper", yref="paper",
                                        font=dict(size=15, color="#5b6477"))])
    return fig
