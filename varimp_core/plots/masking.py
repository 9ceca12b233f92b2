"""Figures of masking: importances, ranks and changes against K or the depth.

Pure functions from the long tables of :mod:`varimp_core.studies.masking` to plotly
figures.  Every figure takes ``x`` (``"K"`` or ``"depth"``; inferred from the
table when omitted), colours each variable with
:func:`~varimp_core.plots.style.variable_color` by its position in the table,
puts importances in bits and shows the exact values on hover.  Exact values
are lines; sampled forests are open diamonds with error bars.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from varimp_core.studies.masking import grid_column, importance_change
from varimp_core.plots.style import (BITS, DIVERGING_SCALE, SAMPLED_OPACITY, base_layout,
                                     variable_color)
from varimp_core.plots.style import user_text_safe

__all__ = ["make_k_lines", "make_rank_bump", "make_delta_heatmap", "axis_title",
           "masking_lines", "masking_figures"]

_AXIS = {
    "K": "K (variables drawn at each node)",
    "depth": "maximum depth D",
}
_SHORT = {"K": "K", "depth": "D"}
#: Standard errors each side of a sampled mean.
ERROR_BAR_SE = 2


def axis_title(x: str) -> str:
    """Axis title of the varying parameter (``"K"`` or ``"depth"``)."""
    return _AXIS.get(x, x)


def _variables(df: pd.DataFrame) -> list[str]:
    """Variables in table order (first appearance), which fixes their colours."""
    return list(dict.fromkeys(df["variable"].tolist()))


def _widths(df: pd.DataFrame, x: str, column: str, variables: list[str],
            base: float = 2.5, step: float = 2.0) -> dict[str, float]:
    """Line width per variable: ``base``, wider under lines that coincide with it.

    Variables whose whole series are equal (ties, e.g. symmetric or irrelevant
    variables) would hide each other; the earlier ones are drawn wider so that
    every tied line stays visible around the one on top.
    """
    series = {v: tuple(np.round(df.loc[df["variable"] == v].sort_values(x)[column]
                                .to_numpy(dtype=float), 9)) for v in variables}
    out = {}
    for v in variables:
        later = [w for w in variables[variables.index(v) + 1:] if series[w] == series[v]]
        out[v] = base + step * len(later)
    return out


def _xaxis(fig: go.Figure, x: str, values) -> None:
    values = sorted(set(int(v) for v in values))
    fig.update_xaxes(title_text=axis_title(x), tickmode="array", tickvals=values,
                     range=[values[0] - 0.4, values[-1] + 0.4] if values else None)


@user_text_safe
def make_k_lines(df_exact: pd.DataFrame, df_sampled: pd.DataFrame | None = None, *,
                 x: str | None = None, title: str | None = None,
                 height: int = 440) -> go.Figure:
    """Importance of each variable against K (or depth): exact lines, sampled points.

    Parameters
    ----------
    df_exact : DataFrame
        Output of :func:`~varimp_core.studies.masking.importance_vs_k` or
        :func:`~varimp_core.studies.masking.importance_vs_depth`: columns
        ``variable``, ``x``, ``importance``, ``rank``.
    df_sampled : DataFrame, optional
        Output of :func:`~varimp_core.studies.masking.sampled_vs_k` (columns ``se``,
        ``n_estimators`` ...); drawn as open diamonds with bars of
        :data:`ERROR_BAR_SE` standard errors, in the variable's colour.
    x : {"K", "depth"}, optional
        Varying column; inferred from ``df_exact``.
    title : str, optional
    height : int, default=440

    Returns
    -------
    go.Figure
        One ``lines+markers`` trace per variable (``name`` = the variable,
        ``meta`` = ``"exact"``), then one ``markers`` trace per variable for
        the sampled points (``meta`` = ``"sampled"``), with ``customdata``
        holding the rank (exact) or the standard error and tree count
        (sampled).
    """
    x = grid_column(df_exact, x)
    fig = go.Figure()
    variables = _variables(df_exact)
    widths = _widths(df_exact, x, "importance", variables)
    for i, v in enumerate(variables):
        d = df_exact[df_exact["variable"] == v].sort_values(x)
        fig.add_trace(go.Scatter(
            x=d[x].tolist(), y=d["importance"].tolist(), mode="lines+markers", name=v,
            legendgroup=v, meta="exact",
            line=dict(color=variable_color(i), width=widths[v]),
            marker=dict(size=2 * widths[v] + 2, color=variable_color(i)),
            customdata=d[["rank"]].to_numpy(),
            hovertemplate=(f"<b>{v}</b>, {_SHORT[x] if x in _SHORT else x} = %{{x}}<br>"
                           f"exact importance %{{y:.6f}} {BITS}<br>rank %{{customdata[0]:g}}"
                           "<extra>exact</extra>"),
        ))
    if df_sampled is not None and len(df_sampled):
        xs = grid_column(df_sampled, x)
        for i, v in enumerate(variables):
            d = df_sampled[df_sampled["variable"] == v].sort_values(xs)
            if d.empty:
                continue
            se = d["se"].to_numpy(dtype=float)
            trees = d["n_estimators"].to_numpy() if "n_estimators" in d else np.zeros(len(d))
            fig.add_trace(go.Scatter(
                x=d[xs].tolist(), y=d["importance"].tolist(), mode="markers",
                name=f"{v} (sampled)", legendgroup=v, showlegend=False, meta="sampled",
                opacity=SAMPLED_OPACITY,
                marker=dict(symbol="diamond-open", size=11, color=variable_color(i),
                            line=dict(width=2)),
                error_y=dict(type="data", array=ERROR_BAR_SE * se, visible=True,
                             color=variable_color(i), thickness=1.5, width=4),
                customdata=np.column_stack([se, trees]),
                hovertemplate=(f"<b>{v}</b>, {_SHORT.get(xs, xs)} = %{{x}}<br>"
                               f"sampled mean %{{y:.4f}} {BITS}<br>"
                               "SE %{customdata[0]:.4f} over %{customdata[1]:,} trees"
                               "<extra>sampled</extra>"),
            ))
        # legend keys telling the two kinds apart
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines+markers", meta="legend",
                                 name="exact", hoverinfo="skip",
                                 line=dict(color="#555555", width=2.5),
                                 marker=dict(color="#555555", size=7)))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", meta="legend",
                                 name=f"sampled \u00b1{ERROR_BAR_SE} SE",
                                 hoverinfo="skip",
                                 marker=dict(symbol="diamond-open", size=11, color="#555555",
                                             line=dict(width=2))))
    base_layout(fig, title=title, height=height)
    _xaxis(fig, x, df_exact[x])
    fig.update_yaxes(title_text=f"importance ({BITS})", rangemode="tozero")
    fig.update_layout(hovermode="closest", margin=dict(t=36 if not title else 60, r=20),
                      legend=dict(orientation="v", yanchor="top", y=1.0, x=1.02,
                                  xanchor="left", tracegroupgap=2))
    return fig


@user_text_safe
def make_rank_bump(df: pd.DataFrame, *, x: str | None = None, title: str | None = None,
                   height: int = 400, end_labels: bool = True) -> go.Figure:
    """Bump chart: the rank of each variable against K (or depth), rank 1 on top.

    Parameters
    ----------
    df : DataFrame
        Columns ``variable``, ``x``, ``importance``, ``rank`` (exact or sampled).
    x : {"K", "depth"}, optional
    title : str, optional
    height : int, default=400
    end_labels : bool, default=True
        Name the lines at their right end (variables tied there share one
        label) instead of a legend.

    Returns
    -------
    go.Figure
        One ``lines+markers`` trace per variable with ``y`` = rank (ties share
        their average rank) and the importance in ``customdata``; the y axis
        is reversed so rank 1 is at the top.
    """
    x = grid_column(df, x)
    fig = go.Figure()
    variables = _variables(df)
    widths = _widths(df, x, "rank", variables, base=3.0)
    for i, v in enumerate(variables):
        d = df[df["variable"] == v].sort_values(x)
        fig.add_trace(go.Scatter(
            x=d[x].tolist(), y=d["rank"].tolist(), mode="lines+markers", name=v,
            legendgroup=v, line=dict(color=variable_color(i), width=widths[v]),
            marker=dict(size=2 * widths[v] + 4, color=variable_color(i),
                        line=dict(color="white", width=1)),
            customdata=d[["importance"]].to_numpy(),
            hovertemplate=(f"<b>{v}</b>, {_SHORT.get(x, x)} = %{{x}}<br>rank %{{y:g}}<br>"
                           f"importance %{{customdata[0]:.6f}} {BITS}<extra></extra>"),
        ))
    base_layout(fig, title=title, height=height)
    _xaxis(fig, x, df[x])
    n = len(variables)
    fig.update_yaxes(title_text="rank (1 = most important)", autorange=False,
                     range=[n + 0.5, 0.5], tickmode="array",
                     tickvals=list(range(1, n + 1)), zeroline=False)
    if end_labels and len(df):
        last = df[df[x] == df[x].max()]
        for rank, group in last.groupby("rank", sort=True):
            names = [v for v in variables if v in set(group["variable"])]
            fig.add_annotation(x=1.0, xref="paper", xanchor="left", xshift=6, y=rank,
                               yref="y", text=", ".join(names), showarrow=False,
                               font=dict(color=variable_color(variables.index(names[0])),
                                         size=12))
        longest = max((len(", ".join(g["variable"])) for _, g in last.groupby("rank")),
                      default=4)
        fig.update_layout(showlegend=False,
                          margin=dict(r=min(24 + 7 * longest, 260), t=36 if not title else 60))
    return fig


def _cell_text(value: float) -> str:
    """Cell label: signed, two decimals; "0" for a change below 0.005 bits."""
    return "0" if abs(value) < 0.005 else f"{value:+.2f}"


@user_text_safe
def make_delta_heatmap(df: pd.DataFrame, *, x: str | None = None,
                       title: str | None = None, height: int | None = None) -> go.Figure:
    """Heatmap of the change of each importance from a reference K (or depth).

    Parameters
    ----------
    df : DataFrame
        :func:`~varimp_core.studies.masking.importance_change` of a masking
        table: columns ``variable``, ``x``, ``importance``,
        ``reference_importance`` and ``change``; ``attrs["reference"]`` is the
        value of ``x`` subtracted (by default the smallest: ``Imp_K - Imp_1``).
    x : {"K", "depth"}, optional
    title : str, optional
    height : int, optional
        Default grows with the number of variables.

    Returns
    -------
    go.Figure
        One ``Heatmap`` trace: ``z[i, j]`` is the change of variable i (rows
        in table order, first on top) at the j-th value of ``x``, in bits, on
        a diverging scale centred at 0 (``zmid=0``); ``customdata`` holds the
        importance and the reference importance.
    """
    x = grid_column(df, x)
    if "change" not in df.columns or "reference" not in df.attrs:
        raise ValueError("make_delta_heatmap draws changes: pass importance_change(df) "
                         "(varimp_core.studies.masking), not the masking table itself.")
    changed = df
    ref = changed.attrs["reference"]
    variables = _variables(df)
    xs = sorted(set(int(v) for v in changed[x]))
    z = changed.pivot(index="variable", columns=x, values="change").loc[variables, xs]
    imp = changed.pivot(index="variable", columns=x, values="importance").loc[variables, xs]
    ref_imp = changed.pivot(index="variable", columns=x,
                            values="reference_importance").loc[variables, xs]
    zmax = float(np.nanmax(np.abs(z.to_numpy()))) if z.size else 0.0
    zmax = zmax if zmax > 0 else 1e-9
    s = _SHORT.get(x, x)
    custom = np.dstack([imp.to_numpy(), ref_imp.to_numpy()])
    show_text = z.size <= 120
    fig = go.Figure(go.Heatmap(
        z=z.to_numpy(), x=xs, y=variables, colorscale=DIVERGING_SCALE, zmid=0.0,
        zmin=-zmax, zmax=zmax, customdata=custom,
        text=np.vectorize(_cell_text)(z.to_numpy()) if show_text else None,
        texttemplate="%{text}" if show_text else None, textfont=dict(size=11),
        colorbar=dict(title=dict(text=f"\u0394 ({BITS})", side="right")),
        hovertemplate=(f"<b>%{{y}}</b>, {s} = %{{x}}<br>"
                       f"Imp({s}=%{{x}}) \u2212 Imp({s}={ref}) = %{{z:+.6f}} {BITS}<br>"
                       "%{customdata[0]:.6f} vs %{customdata[1]:.6f}<extra></extra>"),
        xgap=1, ygap=1,
    ))
    base_layout(fig, title=title, height=height or max(260, 60 + 28 * len(variables)))
    fig.update_layout(margin=dict(t=36 if not title else 60))
    fig.update_xaxes(title_text=axis_title(x), tickmode="array", tickvals=xs, showgrid=False)
    fig.update_yaxes(autorange="reversed", showgrid=False, title_text=None)
    return fig


def delta_min_width(n_columns: int) -> int:
    """Fewest pixels :func:`make_delta_heatmap` needs for ``n_columns`` values of K (or depth).

    Plotly shrinks a cell to fit its figure: at a phone's 400 px the 7 columns of the LED
    were about 20 px wide and their signed values ("+0.17") ran into each other.  About
    44 px a cell (a signed 2-decimal value at 11 px) and 170 px for the row labels, the gap
    and the colour bar with its title; the page scrolls the figure sideways when its screen
    is narrower.
    """
    return 170 + 44 * int(n_columns)


def masking_lines(curves, sampled: pd.DataFrame | None = None) -> go.Figure:
    """:func:`make_k_lines` of a :class:`~varimp_core.studies.masking.MaskingCurves`, with
    the finite forests ``sampled`` (:func:`~varimp_core.studies.masking.sampled_vs_k`) as
    open diamonds."""
    return make_k_lines(curves.frame, sampled, x=curves.x)


def masking_figures(curves) -> tuple[go.Figure, go.Figure, go.Figure]:
    """The three figures of a masking study (a
    :class:`~varimp_core.studies.masking.MaskingCurves`): importance against K or depth,
    the rank bump chart, and the change from the first column
    (:func:`~varimp_core.studies.masking.importance_change`)."""
    df, x = curves.frame, curves.x
    return (masking_lines(curves), make_rank_bump(df, x=x),
            make_delta_heatmap(importance_change(df, x=x), x=x))
