"""Figures of "why this row": one row's four explanations, and local MDI over all rows.

Pure functions from the results of :mod:`varimp_core.local.explain` and
:mod:`varimp_core.local.local_mdi` to plotly figures:

* :func:`make_row_explanation` -- a row's local MDI, Saabas, TreeSHAP and Ciss (2015)
  side by side (a :class:`~varimp_core.local.explain.RowExplanation`), four panels, each
  titled with what it explains: information about Y, the predicted probability (twice),
  first positions in the trees;
* :func:`make_local_mdi_strip` -- the local MDI of every row per variable (a strip
  plot; ``customdata`` holds each point's row, for a click to pick it), the
  weighted mean of each variable marked, drawn over the global MDI bar it equals.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from varimp_core.local.explain import RowExplanation
from varimp_core.local.local_mdi import LocalMDI
from varimp_core.plots.style import base_layout, user_text_safe, variable_color

#: Points (rows x variables) drawn in the strip plot: SVG stays responsive below this.
MAX_POINTS = 5000

__all__ = ["MAX_POINTS", "PANELS", "panel_titles", "make_row_explanation", "make_local_mdi_strip",
           "jitter"]

#: The four explanations: RowExplanation field, name, what it explains.
PANELS = (("local_mdi", "Local MDI", "information about Y"),
          ("saabas", "Saabas", "the predicted probability"),
          ("treeshap", "TreeSHAP", "the predicted probability"),
          ("ciss", "Ciss 2015", "first positions in the trees"))


def panel_titles(e: RowExplanation) -> list[str]:
    """The titles of the four panels: the method and what it explains, with its unit."""
    what = ("the predicted value" if e.output == "value"
            else f"the predicted P({e.output})")
    # What each explains on lines of at most 16 characters: side by side at 400 px a panel
    # is about 110 px wide, and one line ran into the next panel's title.
    return [f"<b>{name}</b><br>{_wrap(text, 16)}" for name, text in (
        ("Local MDI", f"information about Y ({e.units})"), ("Saabas", what),
        ("TreeSHAP", what), ("Ciss 2015", "first positions in trees"))]


@user_text_safe
def make_row_explanation(e: RowExplanation, *, height: int = 560) -> go.Figure:
    """Four panels (2 x 2) of horizontal bars, one bar per variable, for one row.

    A panel whose values are all missing (TreeSHAP of varimp's multiway forest) says
    why, from ``e.notes``.  Local MDI bars carry their standard error when known.
    """
    names = list(e.variables)
    titles = panel_titles(e)
    fig = make_subplots(rows=2, cols=2, subplot_titles=titles, horizontal_spacing=0.05,
                        vertical_spacing=0.25)   # three-line titles over the lower panels
    colors = [variable_color(i) for i in range(len(names))]
    for k, (field, label, _) in enumerate(PANELS):
        r, c = divmod(k, 2)
        values = np.asarray(getattr(e, field), dtype=float)
        if not np.isfinite(values).any():
            note = e.notes.get(field, "not available")
            fig.add_annotation(text=_wrap(note, 22), showarrow=False, xref=f"x{k + 1} domain",
                               yref=f"y{k + 1} domain", x=0.5, y=0.5,
                               font=dict(size=11, color="#5b6477"))
            fig.add_trace(go.Bar(x=[0] * len(names), y=names, orientation="h",
                                 showlegend=False, hoverinfo="skip"), row=r + 1, col=c + 1)
            continue
        error = None
        if field == "local_mdi" and e.local_mdi_se is not None and \
                np.isfinite(np.asarray(e.local_mdi_se, dtype=float)).any():
            error = dict(type="data", array=np.nan_to_num(np.asarray(e.local_mdi_se)),
                         visible=True, thickness=1)
        fig.add_trace(go.Bar(x=values, y=names, orientation="h", marker_color=colors,
                             error_x=error, name=label, showlegend=False,
                             hovertemplate=f"{label}<br>%{{y}}: %{{x:.4g}}<extra></extra>"),
                      row=r + 1, col=c + 1)
    # Every panel lists the variables in one order, coloured alike: the right-hand panels
    # leave the names to the left-hand ones (long names drawn beside them ran over the
    # left-hand bars at 1024 px: "signup_weekday" over Local MDI's error bars).
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_yaxes(showticklabels=False, col=2)
    fig.update_xaxes(zeroline=True, zerolinecolor="#888", automargin=True)
    base_layout(fig, height=height)
    fig.update_layout(margin=dict(l=10, r=10, t=70, b=30), bargap=0.25)
    for a in fig.layout.annotations[:4]:
        a.font = dict(size=11)
    return fig


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "<br>".join(textwrap.wrap(text, width)) or text


def jitter(n: int, seed: int = 0) -> np.ndarray:
    """``n`` vertical offsets in [-0.3, 0.3], the same for the same ``n`` and ``seed``."""
    return np.random.default_rng(seed).uniform(-0.3, 0.3, n)


@user_text_safe
def make_local_mdi_strip(local: LocalMDI, *, rows: Sequence[int] | None = None,
                         chosen: int | None = None, height: int | None = None,
                         max_points: int = MAX_POINTS) -> go.Figure:
    """Local MDI of every row, per variable (one horizontal strip each).

    Parameters
    ----------
    local : LocalMDI
        Its rows, ``weight`` and ``global_importances``.
    rows : sequence of int, optional
        The data row of each of ``local``'s rows (``customdata`` of its points: a click
        gives the row); default ``0..n-1``.
    chosen : int, optional
        A data row drawn larger, outlined.
    max_points : int
        At most this many points are drawn, at least 50 rows (a seeded subset of the
        rows; the mean is over all of them).

    The ``weight``-weighted mean of each variable is a black diamond, drawn on the
    global MDI bar; the title says they are equal when they are (to 1e-9).
    """
    names = list(local.variables)
    n, p = local.values.shape
    rows = np.arange(n) if rows is None else np.asarray(rows)
    mean = local.weighted_mean()
    glob = np.asarray(local.global_importances, dtype=float)
    equal = bool(np.allclose(mean, glob, rtol=0, atol=1e-9))
    fig = go.Figure()
    fig.add_trace(go.Bar(x=glob, y=list(range(p)), orientation="h", name="global MDI",
                         marker_color="rgba(120,130,150,0.25)", width=0.8,
                         hovertemplate="global MDI of %{customdata}: %{x:.4g}<extra></extra>",
                         customdata=names))
    offsets = jitter(n)
    m = max(50, max_points // max(p, 1))
    drawn = np.arange(n) if n <= m else np.sort(
        np.random.default_rng(0).choice(n, m, replace=False))
    big = len(drawn) > 300
    for j, name in enumerate(names):
        fig.add_trace(go.Scatter(
            x=local.values[drawn, j], y=j + offsets[drawn], mode="markers", name=name,
            showlegend=False, customdata=rows[drawn],
            marker=dict(color=variable_color(j), size=5 if big else 8, opacity=0.6),
            hovertemplate=f"row %{{customdata}}<br>{name}: %{{x:.4g}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=mean, y=list(range(p)), mode="markers", name="mean over rows",
                             marker=dict(symbol="diamond", size=12, color="#111",
                                         line=dict(color="white", width=1)),
                             hovertemplate="mean: %{x:.4g}<extra></extra>"))
    if chosen is not None and chosen in set(rows.tolist()):
        i = int(np.flatnonzero(rows == chosen)[0])
        fig.add_trace(go.Scatter(
            x=local.values[i], y=np.arange(p) + offsets[i], mode="markers",
            name=f"row {chosen}", customdata=[chosen] * p,
            marker=dict(size=13, color="rgba(0,0,0,0)", line=dict(color="#d62728", width=2.5)),
            hovertemplate=f"row {chosen}: %{{x:.4g}}<extra></extra>"))
    said = ("\u25c6 mean of the rows = global MDI (grey bar)" if equal else
            "\u25c6 mean of these rows; grey bar: global MDI")
    if chosen is not None:
        said += f"<br>\u25cb row {chosen}"
    if len(drawn) < n:
        said += f"; {len(drawn):,} of {n:,} rows drawn"
    base_layout(fig, height=height or max(260, 60 + 46 * p))
    fig.update_layout(
        title=dict(text=said, font=dict(size=12), x=0.01, xanchor="left"),
        margin=dict(l=10, r=10, t=60, b=40), showlegend=False,
        xaxis_title=f"local MDI ({local.units})", clickmode="event",
        yaxis=dict(tickvals=list(range(p)), ticktext=names, autorange="reversed",
                   automargin=True, range=[p - 0.5, -0.5]))
    return fig
