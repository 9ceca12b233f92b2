"""Helpers every page uses: grid columns and rows (:mod:`pages._framework.grid`), a placeholder figure (safe CSV
text and names: :mod:`varimp_core.csvtext`)."""

from __future__ import annotations

from typing import Mapping

from varimp_core.csvtext import table_number


def frame_table(df, formats: dict | None = None, default: str = "fixed4") -> tuple[list, list]:
    """Grid ``columnDefs`` and ``rowData`` of a DataFrame the core built (its column names shown).

    Numeric columns get a number format by name: ``fixed4`` (the default), ``fixed3``,
    ``fixed6``, ``signed4``, ``pct2`` or ``exp4`` (``formats`` maps a column to one, or to
    None: shown as it is), shown by the grid's d3 formatter (:func:`grid_table`).
    NaN and infinities are blank cells (:func:`table_number`).
    """
    import pandas as pd

    from pages._framework.grid import grid_table, number_format
    formats = formats or {}
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
               and not pd.api.types.is_bool_dtype(df[c])]
    cols = [{"name": str(c), "id": str(c), **({"type": "numeric"} if c in numeric else {}),
             **({"format": number_format(formats.get(c, default))}
                if c in numeric and formats.get(c, default) else {})} for c in df.columns]
    rows = [{str(c): table_number(v) if c in numeric else v for c, v in row.items()}
            for row in df.to_dict("records")]
    return grid_table(cols, rows)


#: ``layout.meta`` of the "Computing\u2026" figure a page opens with: nothing drawn yet.
PENDING = "vi-pending"
#: What a pending figure says once its first job failed (the sentence is beside Cancel).
NOTHING_DRAWN = "Nothing drawn: see the message above."


def is_pending(figure) -> bool:
    """Whether ``figure`` (a figure's JSON, as the browser sends it) is still the page's
    opening "Computing\u2026" figure, with nothing drawn."""
    layout = figure.get("layout") if isinstance(figure, Mapping) else None
    return isinstance(layout, Mapping) and layout.get("meta") == PENDING


def placeholder_figure(text: str = "Computing\u2026"):
    """An empty figure carrying one line of text (before the first result, or after an error).

    The text may quote a user's column name (even one written in Plotly's own tags, such as
    ``<b>x</b>``), so every ``&``, ``<`` and ``>`` of it is an entity: text, never markup.  The
    default "Computing\u2026" figure is marked :data:`PENDING` (:func:`is_pending`), so a first
    job that fails replaces it with :data:`NOTHING_DRAWN` instead of leaving it for good.
    """
    import plotly.graph_objects as go

    from varimp_core.plots.style import escape_text, wrap_note

    fig = go.Figure()
    fig.update_layout(template="plotly_white", xaxis=dict(visible=False),
                      yaxis=dict(visible=False), margin=dict(l=20, r=20, t=20, b=20),
                      annotations=[dict(text=wrap_note(escape_text(text)), showarrow=False, x=0.5, y=0.5,
                                        xref="paper", yref="paper",
                                        font=dict(size=15, color="#5b6477"))])
    if text == "Computing\u2026":
        fig.update_layout(meta=PENDING)
    return fig
