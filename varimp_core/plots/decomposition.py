"""Decomposition figures: importances along the degree k of interaction (Figure 2).

Row m, column k of a result's ``by_degree`` is the part of
:math:`\\mathrm{Imp}(X_m)` that comes from nodes whose conditioning set B has
k variables; for totally randomized trees (K=1) it is the degree-k term of
Eqn 3 of Louppe et al. (2013),

.. math::

    \\frac{1}{C_p^k}\\frac{1}{p-k}\\sum_{B \\in \\mathcal{P}_k(V^{-m})} I(X_m; Y \\mid B).

A depth limit q keeps only the columns k < q (Proposition 6); the builders
grey the columns a depth limit removes instead of hiding them, so one sees
what is lost.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from varimp_core.result import ImportanceResult
from varimp_core.plots.importances import units_label
from varimp_core.plots.style import HEATMAP_SCALE, base_layout, variable_color
from varimp_core.plots.style import user_text_safe

__all__ = ["make_degree_heatmap", "make_degree_pair", "make_terms_figure", "set_label",
           "pair_height", "pair_min_width", "CUT_SCALE"]

#: Colour scale of the cells a depth limit removes (light to mid grey).
CUT_SCALE = [[0.0, "#f2f2f2"], [1.0, "#8c8c8c"]]
_TEXT_MAX_FEATURES = 10  # write the value in each cell up to this many variables
_OTHER_COLOR = "#bbbbbb"


def set_label(conditioning) -> str:
    """``"{X2, X3}"`` for a conditioning set, ``"\u2205"`` for the empty set."""
    names = list(conditioning)
    return "{" + ", ".join(str(n) for n in names) + "}" if names else "\u2205"


def _k_of(result: ImportanceResult) -> int | None:
    k = result.parameters.get("max_features")
    return None if k is None else int(k)


def _describe(result: ImportanceResult) -> str:
    """Panel title: "K = 3, exact" / "K = 3, sampled (T = 100)"."""
    k = _k_of(result)
    head = f"K = {k}" if k is not None else result.method
    if result.method in ("eqn3", "exact"):
        how = "exact" if result.exact else "plug-in, infinite forest"
    else:
        n = result.parameters.get("n_estimators")
        how = f"sampled (T = {int(n):,})" if n else "sampled"
    return f"{head}, {how}"


def _check_depth(max_depth, p: int) -> int:
    if max_depth is None:
        return p
    if isinstance(max_depth, bool) or int(max_depth) != max_depth or max_depth < 1:
        raise ValueError(f"max_depth must be a positive whole number or None, got {max_depth!r}.")
    return min(int(max_depth), p)


def _heatmap_traces(result: ImportanceResult, *, name: str, zmax: float, max_depth,
                    coloraxis: str | None, text: bool) -> list[go.Heatmap]:
    """Kept cells (k < q) on the colour scale, cut cells (k >= q) in grey."""
    bd = result.by_degree
    p = result.n_features
    q = _check_depth(max_depth, p)
    units = units_label(result)
    ks = list(range(p))
    rows = bd.sum(axis=1)
    kept_rows = bd[:, :q].sum(axis=1)
    custom = np.empty((p, p, 3))
    custom[:, :, 0] = rows[:, None]
    custom[:, :, 1] = kept_rows[:, None]
    custom[:, :, 2] = [math.comb(p - 1, k) for k in range(p)]
    kept = np.where(np.arange(p)[None, :] < q, bd, np.nan)
    hover = ("<b>%{y}</b>, k = %{x}<br>term = %{z:.6f} " + units
             + "<br>over %{customdata[2]:,} sets B of size k"
             + "<br>row total = %{customdata[0]:.6f} " + units)
    if q < p:
        hover += f"<br>total at depth {q} = %{{customdata[1]:.6f}} {units}"
    common = dict(x=ks, y=list(result.variables), customdata=custom, xgap=1, ygap=1,
                  texttemplate="%{z:.3f}" if text else None)
    if coloraxis:
        scale = dict(coloraxis=coloraxis)
    else:
        scale = dict(colorscale=HEATMAP_SCALE, zmin=0.0, zmax=zmax,
                     colorbar=dict(title=dict(text=units)))
    traces = [go.Heatmap(z=kept, name=name, hovertemplate=hover + "<extra></extra>",
                         **common, **scale)]
    if q < p:
        cut = np.where(np.arange(p)[None, :] >= q, bd, np.nan)
        traces.append(go.Heatmap(
            z=cut, name=f"{name}: cut by depth {q}", colorscale=CUT_SCALE, zmin=0.0,
            zmax=zmax, showscale=False,
            hovertemplate=("<b>%{y}</b>, k = %{x}<br>term = %{z:.6f} " + units
                           + f"<br>not counted at depth {q} (Proposition 6: only k < {q})"
                           + "<extra></extra>"),
            **common))
    return traces


def _zmax(*results: ImportanceResult) -> float:
    top = max(float(np.nanmax(r.by_degree)) if r.by_degree.size else 0.0 for r in results)
    return top if top > 0 else 1.0


def _axes(fig: go.Figure, p: int, q: int, *, col: int | None = None) -> None:
    where = {} if col is None else dict(row=1, col=col)
    fig.update_xaxes(title_text="degree k = |B|", tickmode="array", tickvals=list(range(p)),
                     range=[-0.5, p - 0.5], showgrid=False, zeroline=False, **where)
    fig.update_yaxes(autorange="reversed", type="category", showgrid=False, **where)
    if q < p:
        ref = "x" if not col or col == 1 else f"x{col}"
        yref = "y domain" if not col or col == 1 else f"y{col} domain"
        fig.add_shape(type="line", x0=q - 0.5, x1=q - 0.5, y0=0, y1=1, xref=ref, yref=yref,
                      layer="above", line=dict(color="#d55e00", width=3))
        fig.add_annotation(x=(q - 0.5 + p - 0.5) / 2, y=1.0, xref=ref, yref="paper",
                           yanchor="bottom", showarrow=False, font=dict(size=11, color="#d55e00"),
                           text=f"cut by depth {q}")


@user_text_safe
def make_degree_heatmap(result: ImportanceResult, zmax: float | None = None, *,
                        max_depth: int | None = None, height: int | None = None) -> go.Figure:
    """Heatmap of ``result.by_degree``: variables down, degree k across (Figure 2).

    Parameters
    ----------
    result : ImportanceResult
        ``by_degree`` of shape (n_features, n_features).
    zmax : float, default=None
        Top of the colour scale (bits); None uses the largest cell.  Give the
        same value to several heatmaps to compare them.
    max_depth : int, default=None
        Depth limit q: the columns k >= q are drawn in grey and the dashed
        line marks the cut (Proposition 6).  None: nothing is cut.
    height : int, default=None
        Pixels; None grows with the number of variables.

    Returns
    -------
    fig : go.Figure
        Trace 0 holds the kept cells (``z`` equals ``by_degree`` where
        k < q, NaN elsewhere); trace 1, present when q < p, the cut cells.
        Each cell's ``customdata`` is ``[row total, row total at depth q,
        C(p-1, k)]``.

    Notes
    -----
    Cividis is perceptually uniform and safe for colour-blind readers.

    References
    ----------
    G. Louppe et al. Understanding variable importances in forests of
    randomized trees. NIPS 2013, Figure 2 and Proposition 6.
    """
    p = result.n_features
    q = _check_depth(max_depth, p)
    top = _zmax(result) if zmax is None else float(zmax)
    fig = go.Figure(_heatmap_traces(result, name=_describe(result), zmax=top, max_depth=max_depth,
                                    coloraxis=None, text=p <= _TEXT_MAX_FEATURES))
    base_layout(fig, title=_describe(result), height=height or max(320, 60 + 38 * p))
    _axes(fig, p, q)
    return fig


def pair_height(n_features: int) -> int:
    """Pixels :func:`make_degree_pair` uses for ``n_features`` rows."""
    return max(340, 90 + 38 * int(n_features))


def pair_min_width(n_features: int) -> int:
    """Fewest pixels :func:`make_degree_pair` needs for ``n_features`` columns a panel.

    Plotly shrinks a cell's value to fit its cell: at a phone's 400 px the 2 x 7 cells of
    the default data were 15 px wide and their values 5 px high, the panel titles and axis
    titles ran into each other.  About 44 px a cell (a 3-decimal value at 11 px) and 170 px
    for the row labels, the gap and the colour bar; the page scrolls the figure sideways
    when its screen is narrower.
    """
    return 170 + 2 * 44 * int(n_features)


@user_text_safe
def make_degree_pair(result_k1: ImportanceResult, result_k: ImportanceResult,
                     zmax: float | None = None, *, max_depth: int | None = None,
                     height: int | None = None) -> go.Figure:
    """Two degree heatmaps side by side on one colour scale (K=1 left, K right).

    Parameters
    ----------
    result_k1 : ImportanceResult
        Totally randomized trees (Eqn 3 terms).
    result_k : ImportanceResult
        The same data at the chosen K; masking moves weight between cells.
    zmax : float, default=None
        Top of the shared colour scale; None uses the largest cell of both.
    max_depth : int, default=None
        Depth limit q shown as greyed columns k >= q in both panels.
    height : int, default=None

    Returns
    -------
    fig : go.Figure
        Both panels' colour traces use ``layout.coloraxis`` (one scale, one
        colour bar).  Traces of the left panel come first, on axes ``x``/``y``;
        those of the right panel are on ``x2``/``y2`` (how a click tells the
        panels apart).

    Raises
    ------
    ValueError
        When the two results do not have the same variables.
    """
    if tuple(result_k1.variables) != tuple(result_k.variables):
        raise ValueError("Both heatmaps must show the same variables.")
    p = result_k1.n_features
    q = _check_depth(max_depth, p)
    top = _zmax(result_k1, result_k) if zmax is None else float(zmax)
    text = p <= _TEXT_MAX_FEATURES
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[_describe(result_k1), _describe(result_k)])
    for col, res in enumerate((result_k1, result_k), start=1):
        for trace in _heatmap_traces(res, name=_describe(res), zmax=top, max_depth=max_depth,
                                     coloraxis="coloraxis", text=text):
            fig.add_trace(trace, row=1, col=col)
        _axes(fig, p, q, col=col)
    base_layout(fig, height=height or pair_height(p))
    units = units_label(result_k1)
    fig.update_layout(coloraxis=dict(colorscale=HEATMAP_SCALE, cmin=0.0, cmax=top,
                                     colorbar=dict(title=dict(text=units))),
                      margin=dict(t=60))
    fig.update_yaxes(autorange="reversed", row=1, col=2)
    return fig


@user_text_safe
def make_terms_figure(terms_df: pd.DataFrame, *, variables=None, max_bars: int = 40,
                      units: str = "bits", height: int = 360) -> go.Figure:
    """Bars of the level-iii terms of one cell: one bar per conditioning set B.

    Parameters
    ----------
    terms_df : DataFrame
        From :func:`varimp_core.exact.eqn3.conditional_terms`: columns
        ``variable, conditioning, degree, weight, cmi, term``.
    variables : sequence of str, default=None
        All variable names, to colour the bars in the variable's colour.
    max_bars : int, default=40
        Largest number of bars; the smaller terms beyond it are summed into
        one grey "other sets" bar, so the bars still add up to the cell.
    units : str, default="bits"
    height : int, default=360

    Returns
    -------
    fig : go.Figure
        Trace 0: ``y`` is the weighted term
        :math:`I(X_m;Y|B)/(C_p^k (p-k))` of each B (sorted as given);
        a second trace holds the "other sets" bar when there is one.
    """
    fig = go.Figure()
    if terms_df is None or len(terms_df) == 0:
        base_layout(fig, height=height)
        fig.add_annotation(text="No conditioning sets for this cell.", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5)
        return fig
    name = str(terms_df["variable"].iloc[0])
    k = int(terms_df["degree"].iloc[0])
    color = "#0072B2"
    if variables is not None and name in list(variables):
        color = variable_color(list(variables).index(name))
    order = terms_df.sort_values("term", ascending=False, kind="stable")
    shown, rest = order.iloc[:max_bars], order.iloc[max_bars:]
    labels = [set_label(b) for b in shown["conditioning"]]
    fig.add_trace(go.Bar(
        x=labels, y=shown["term"].to_numpy(float), name=f"{name}, k = {k}",
        marker=dict(color=color),
        customdata=np.column_stack([shown["cmi"].to_numpy(float), shown["weight"].to_numpy(float)]),
        hovertemplate=(f"<b>B = %{{x}}</b><br>I({name}; Y | B) = %{{customdata[0]:.6f}} {units}"
                       "<br>weight 1/(C(p,k)(p\u2212k)) = %{customdata[1]:.6g}"
                       f"<br>term = %{{y:.6f}} {units}<extra></extra>"),
    ))
    if len(rest):
        fig.add_trace(go.Bar(
            x=[f"other {len(rest):,} sets"], y=[float(rest["term"].sum())], name="other sets",
            marker=dict(color=_OTHER_COLOR),
            hovertemplate=(f"<b>%{{x}}</b><br>sum of their terms = %{{y:.6f}} {units}"
                           "<extra></extra>"),
        ))
    total = float(terms_df["term"].sum())
    base_layout(fig, height=height,
                title=f"{name}, k = {k}: {len(terms_df):,} sets B, sum = {total:.6f} {units}")
    fig.update_layout(showlegend=False, bargap=0.25)
    fig.update_xaxes(title_text="conditioning set B", type="category",
                     tickangle=-35 if len(shown) > 8 else 0)
    fig.update_yaxes(title_text=f"weighted I({name}; Y | B) ({units})", rangemode="tozero")
    return fig
