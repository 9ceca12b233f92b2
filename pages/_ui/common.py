"""Helpers every page uses: safe CSV cells and a placeholder figure."""

from __future__ import annotations

__all__ = ["neutralise_cell", "safe_csv", "placeholder_figure"]

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


def placeholder_figure(text: str = "Computing\u2026"):
    """An empty figure carrying one line of text (before the first result, or after an error)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.update_layout(template="plotly_white", xaxis=dict(visible=False),
                      yaxis=dict(visible=False), margin=dict(l=20, r=20, t=20, b=20),
                      annotations=[dict(text=text, showarrow=False, x=0.5, y=0.5,
                                        xref="paper", yref="paper",
                                        font=dict(size=15, color="#5b6477"))])
    return fig
