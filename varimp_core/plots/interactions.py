"""Figures of Ciss's local importance: interactions, VII, partial importance, over labels.

Pure functions from the containers of :mod:`varimp_core.local.interactions` to
plotly figures; nothing is recomputed except the conditional shares of the
mosaic, which are the rows of ``joint`` divided by their sums.

Colours follow :func:`~varimp_core.plots.style.variable_color` by the
variable's position in the data (pass ``variables=``, the data's input names,
so X3 has its usual colour even when the interaction table sorts it first);
the meta-variable :data:`~varimp_core.local.interactions.OTHER_FEATURES` is grey.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from varimp_core.local.interactions import (OTHER_FEATURES, ImportanceOverLabels, Interactions,
                                            PartialImportance)
from varimp_core.result import ImportanceResult
from varimp_core.plots.style import HEATMAP_SCALE, base_layout, variable_color
from varimp_core.plots.style import user_text_safe

__all__ = ["OTHER_COLOR", "MOSAIC_MIN_WIDTH", "fit_label", "label_colors", "mosaic_geometry", "make_mosaic", "make_vii_bars",
           "make_partial_importance_figure", "make_importance_over_labels"]

#: Colour of the "other features" meta-variable.
OTHER_COLOR = "#BBBBBB"
#: The mosaic's labels are sized for a plot area this many pixels wide (a phone's), at the
#: figure's font size, so that no two ever overlap on a wider one: a column too narrow for
#: its name shows it shortened with "…", or nothing; hovering a tile gives both names.
MOSAIC_MIN_WIDTH = 240
_EM = 0.7  # the advance of one character, in em, with room for the wide ones (W, m)
_FONT = 13  # base_layout's font size, in pixels


def fit_label(label: str, pixels: float, font: float = _FONT, others: Sequence[str] = ()) -> str:
    """``label`` as it fits ``pixels`` of width at ``font`` pixels, told apart from ``others``.

    Parameters
    ----------
    label : str
    pixels : float
        The width available, in pixels.
    font : float, default=13
        The font size, in pixels.
    others : sequence of str, default=()
        The other labels shown beside it (``label`` itself among them is ignored).

    Returns
    -------
    text : str
        ``label`` whole when it fits; else its first characters and an ellipsis, with at
        least two characters and, when ``others`` share its start, enough characters to
        differ from each of them ("bill_l…" and "bill_d…", never "bil…" twice); else
        ``""`` (the hover names it).  Two different labels never get the same text.
    """
    room = int(pixels // (_EM * font))
    if len(label) <= room:
        return label
    # The shortest prefix no other label starts with: one character past the longest start
    # it shares with another label.
    shared = max((_common_prefix(label, o) for o in others if o != label), default=0)
    keep = max(room - 1, 2, shared + 1)
    return label[:keep] + "…" if keep + 1 <= room else ""


def _common_prefix(a: str, b: str) -> int:
    """The number of leading characters ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _layout(fig: go.Figure, title: str | None, height: int, *, legend: bool = False) -> go.Figure:
    """:func:`base_layout`, with the title left-aligned above the legend, clear of the modebar."""
    base_layout(fig, title=title, height=height)
    top = 8                                   # pixels from the top of the figure
    if title:
        fig.update_layout(title=dict(text=title, x=0.01, xref="container", xanchor="left",
                                     y=1 - top / height, yanchor="top", font=dict(size=14)))
        top += 26
    if legend:
        top += 28        # base_layout's legend sits above the plot and pushes the margin
    fig.update_layout(margin=dict(t=top + 20))
    return fig


def label_colors(labels: Sequence[str], variables: Sequence[str] | None = None) -> dict:
    """``{label: colour}``: by position in ``variables`` (default: ``labels``), grey for others."""
    order = [v for v in (variables if variables is not None else labels) if v != OTHER_FEATURES]
    index = {v: i for i, v in enumerate(order)}
    out = {}
    for label in labels:
        if label == OTHER_FEATURES or label not in index:
            out[label] = OTHER_COLOR
        else:
            out[label] = variable_color(index[label])
    return out


def mosaic_geometry(result: Interactions) -> dict:
    """Column widths and tile heights of the Marimekko chart.

    Returns
    -------
    geometry : dict
        ``widths`` (ndarray of shape (n_labels,)): ``joint.sum(axis=1)``, the
        share of the observations with both positions whose first variable is
        each label (sums to 1); ``lefts``: the cumulative left edges;
        ``heights`` (ndarray of shape (n_labels, n_labels)): row ``r`` is
        ``joint[r] / widths[r]``, the second-order shares given the first
        (zero in an empty column).
    """
    joint = np.asarray(result.joint, dtype=float)
    widths = joint.sum(axis=1)
    lefts = np.concatenate([[0.0], np.cumsum(widths)[:-1]])
    heights = np.divide(joint, widths[:, None], out=np.zeros_like(joint),
                        where=widths[:, None] > 0)
    return {"widths": widths, "lefts": lefts, "heights": heights}


@user_text_safe
def make_mosaic(result: Interactions, *, variables: Sequence[str] | None = None,
                title: str | None = None, height: int = 460) -> go.Figure:
    """Marimekko chart of the variables at positions 1 and 2 of each observation.

    Parameters
    ----------
    result : Interactions
        From :func:`varimp_core.local.interactions.interactions`.
    variables : sequence of str, optional
        The data's input names, which fix the colours; default ``result.labels``.
    title : str, optional
    height : int, default=460

    Returns
    -------
    fig : go.Figure
        One stacked ``go.Bar`` trace per second-order label (``name`` = the
        label, in the label's colour).  Its bars stand at the column centres
        (``x``) with ``width`` the first-order share of the column, and ``y``
        the second-order share given the first; ``customdata`` rows are
        ``[first, second, joint share, share given the first, first-order
        share, observations]`` and clicking a tile reports them.  Empty
        columns (a label never first) are left out.  Axis and tile labels are
        shortened or left out where they would not fit (:func:`fit_label`,
        :data:`MOSAIC_MIN_WIDTH`), so none overlaps another; the hover names both.

    Notes
    -----
    Tile ``(r, c)`` has area ``joint[r, c]``: the share of the observations
    whose most frequent leaf-parent variable is ``labels[r]`` and second most
    frequent is ``labels[c]`` (Ciss 2015, section 4.2).
    """
    g = mosaic_geometry(result)
    widths, lefts, heights = g["widths"], g["lefts"], g["heights"]
    labels = list(result.labels)
    colors = label_colors(labels, variables)
    cols = [r for r in range(len(labels)) if widths[r] > 0]
    centres = lefts[cols] + widths[cols] / 2
    counts = np.rint(np.asarray(result.joint) * result.n_pairs).astype(int)
    fig = go.Figure()
    for c, second in enumerate(labels):
        y = heights[cols, c]
        if not np.any(y > 0):
            continue
        custom = [[labels[r], second, float(result.joint[r, c]), float(heights[r, c]),
                   float(widths[r]), int(counts[r, c])] for r in cols]
        text = [fit_label(second, widths[r] * MOSAIC_MIN_WIDTH - 4, others=labels)
                if heights[r, c] >= 0.08 else "" for r in cols]
        fig.add_trace(go.Bar(
            x=centres, y=y, width=widths[cols], name=second, customdata=custom,
            marker=dict(color=colors[second], line=dict(color="#ffffff", width=1.5)),
            text=text, textposition="inside", insidetextanchor="middle",
            textfont=dict(color="#ffffff"), meta="tile",
            hovertemplate=("first: <b>%{customdata[0]}</b> (%{customdata[4]:.2%} of "
                           "observations)<br>second: <b>%{customdata[1]}</b><br>"
                           "share given the first: %{customdata[3]:.2%}<br>"
                           "joint share: %{customdata[2]:.2%} (%{customdata[5]:,} "
                           "observations)<extra></extra>")))
    _layout(fig, title, height, legend=True)
    fig.update_layout(barmode="stack", bargap=0, clickmode="event",  # plotly hides, rather
                      uniformtext=dict(mode="hide", minsize=_FONT),  # than shrinks, a tile's
                      legend=dict(title=dict(text="second: ")))      # text that overflows
    fig.update_xaxes(title_text=f"variable at position 1<br>(column width = its share of the "
                                f"{result.n_pairs:,} observations)",
                     tickmode="array", tickvals=centres, tickangle=0, ticktext=[
                         fit_label(labels[r], widths[r] * MOSAIC_MIN_WIDTH - 4, others=labels)
                         for r in cols],
                     range=[0, 1], showgrid=False, automargin=True)
    fig.update_yaxes(title_text="variable at position 2, given the first", range=[0, 1],
                     tickformat=".0%", showgrid=False)
    return fig


@user_text_safe
def make_vii_bars(result: ImportanceResult, *, title: str | None = None,
                  height: int = 400) -> go.Figure:
    """Horizontal bars of Ciss's importance based on interactions, largest on top.

    Parameters
    ----------
    result : ImportanceResult
        From :func:`varimp_core.local.interactions.interaction_importance`.
    title : str, optional
    height : int, default=400

    Returns
    -------
    fig : go.Figure
        One ``go.Bar`` (``orientation="h"``): ``x`` are the VII scores of the
        variables in ``y``, sorted by decreasing score (ties in variable
        order); ``customdata`` holds the normalised shares.  Colours are by
        the variable's position in ``result.variables``.
    """
    scores = np.asarray(result.importances, dtype=float)
    order = np.lexsort((np.arange(len(scores)), -scores))
    shares = np.asarray(result.normalised, dtype=float)
    names = [result.variables[j] for j in order]
    fig = go.Figure(go.Bar(
        x=scores[order], y=names, orientation="h", customdata=shares[order],
        marker=dict(color=[variable_color(j) for j in order]), meta="vii",
        hovertemplate="%{y}<br>VII = %{x:.4f}<br>share %{customdata:.2%}<extra></extra>"))
    _layout(fig, title, height)
    fig.update_yaxes(autorange="reversed", title_text=None, type="category", automargin=True)
    fig.update_xaxes(title_text="VII(j, \u00b7)")
    fig.update_layout(showlegend=False)
    return fig


@user_text_safe
def make_partial_importance_figure(result: PartialImportance, *,
                                   variables: Sequence[str] | None = None,
                                   title: str | None = None, height: int = 400) -> go.Figure:
    """Bars of the partial importance shares for one class or range of responses.

    Parameters
    ----------
    result : PartialImportance
        From :func:`varimp_core.local.interactions.partial_importance`.
    variables : sequence of str, optional
        The data's input names for the colours; default ``result.variables``.
    title : str, optional
        Default: the subset and its number of observations.
    height : int, default=400

    Returns
    -------
    fig : go.Figure
        One horizontal ``go.Bar``: ``x`` = ``result.shares`` of the variables
        in ``y``, sorted by decreasing score; ``customdata`` = the scores
        (observations with the variable at one of the first
        ``max_position`` positions).
    """
    scores = np.asarray(result.scores, dtype=float)
    shares = np.asarray(result.shares, dtype=float)
    order = np.lexsort((np.arange(len(scores)), -scores))
    names = [result.variables[j] for j in order]
    colors = label_colors(names, variables if variables is not None else result.variables)
    where = "position 1" if result.max_position == 1 else f"positions 1\u2013{result.max_position}"
    fig = go.Figure(go.Bar(
        x=shares[order], y=names, orientation="h", customdata=scores[order],
        marker=dict(color=[colors[v] for v in names]), meta="partial",
        hovertemplate=(f"%{{y}}<br>share %{{x:.2%}}<br>%{{customdata:,.0f}} observations with "
                       f"it at {where}<extra></extra>")))
    if title is None:
        title = f"{result.subset} ({result.n_observations:,} observations)"
    _layout(fig, title, height)
    fig.update_yaxes(autorange="reversed", title_text=None, type="category", automargin=True)
    fig.update_xaxes(title_text=f"share of the observations'<br>{where}", tickformat=".0%")
    fig.update_layout(showlegend=False)
    return fig


@user_text_safe
def make_importance_over_labels(result: ImportanceOverLabels, *, title: str | None = None,
                                height: int | None = None) -> go.Figure:
    """Heatmap of partial importance shares: variables (rows) by predicted class (columns).

    Parameters
    ----------
    result : ImportanceOverLabels
        From :func:`varimp_core.local.interactions.importance_over_labels`.
    title : str, optional
    height : int, optional
        Default grows with the number of variables.

    Returns
    -------
    fig : go.Figure
        One ``go.Heatmap``: ``z[i][k]`` is the share of variable ``y[i]`` in
        class ``x[k]`` (rows in :attr:`ImportanceOverLabels.order`, each column
        sums to 1), on the colour-blind-safe cividis scale; ``customdata``
        holds the rank within the class.  Column labels give the number of
        observations predicted as each class.
    """
    order = result.order
    z = np.asarray(result.shares, dtype=float)[order]
    p, c = result.shares.shape
    ranks = np.empty((p, c), dtype=int)
    for k in range(c):
        ranks[np.lexsort((np.arange(p), -result.shares[:, k])), k] = np.arange(1, p + 1)
    names = [result.variables[j] for j in order]
    columns = [f"{label} (n={int(n):,})" for label, n in zip(result.classes, result.n_per_class)]
    show_text = p * c <= 400
    fig = go.Figure(go.Heatmap(
        z=z, x=columns, y=names, customdata=ranks[order], colorscale=HEATMAP_SCALE, zmin=0,
        zmax=max(float(z.max()), 1e-12), meta="over-labels",
        text=np.vectorize(lambda v: f"{v:.0%}")(z) if show_text else None,
        texttemplate="%{text}" if show_text else None,
        colorbar=dict(title=dict(text="share", side="right"), tickformat=".0%"),
        hovertemplate=("%{y} for %{x}<br>share %{z:.2%}<br>rank %{customdata} in this class"
                       "<extra></extra>")))
    _layout(fig, title, height or max(260, 60 + 26 * p))
    fig.update_xaxes(title_text="predicted class", type="category", side="bottom")
    fig.update_yaxes(autorange="reversed", type="category", automargin=True)
    return fig
