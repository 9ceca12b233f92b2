"""Finite forests: how often T trees swap two variables, and the trees of the infinite forest.

Pure builders: they draw what
:class:`~varimp_core.exact.moments.ImportanceMoments` and
:class:`~varimp_core.exact.enumerate_trees.TreeEnumeration` hold and compute
nothing but a tree's drawing positions.

* :func:`make_flip_figure`: a heatmap of
  :math:`P(\\text{T trees order } i, j \\text{ the other way round}) =
  \\Phi\\big(-|\\mu_i-\\mu_j|\\sqrt{T}/\\sqrt{\\Sigma_{ii}+\\Sigma_{jj}-2\\Sigma_{ij}}\\big)`;
* :func:`make_tree_figure`: one tree of the infinite forest as a small
  diagram (:func:`tree_layout` places it);
* :func:`make_gallery_mean_figure`: the exact importances as bars and the
  probability-weighted mean of the listed trees as diamonds, which must agree.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import plotly.graph_objects as go

from varimp_core.plots.style import (EXACT_COLOR, base_layout, empty_figure, user_text_safe,
                                     variable_color)

__all__ = ["FLIP_SCALE", "probability_text", "tree_layout", "make_flip_figure",
           "make_tree_figure", "make_gallery_mean_figure", "tree_importance_text"]

#: White (never swapped) to dark red (a coin toss, 1/2).
FLIP_SCALE = [[0.0, "#ffffff"], [0.2, "#fde0c5"], [0.6, "#f08a5d"], [1.0, "#8b1a1a"]]
_NODE = "#2b4c7e"
_LEAF = "#555555"


def probability_text(p: float, max_denominator: int = 4096) -> str:
    """``"1/8"`` when ``p`` is a fraction with a small denominator (to 1e-12), else ``"0.0625"``.

    Examples
    --------
    >>> probability_text(0.125), probability_text(1 / 3), probability_text(0.1234567)
    ('1/8', '1/3', '0.1235')
    """
    f = Fraction(float(p)).limit_denominator(max_denominator)
    if abs(float(f) - float(p)) <= 1e-12:
        return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"
    return f"{float(p):.4g}"


def _edge_label(child: dict) -> str:
    if "value" in child:
        return f"= {child['value']}"
    lo, hi = child.get("threshold", (None, None))
    return f"\u2264 {lo:g}" if child.get("side") == "<=" else f"\u2265 {hi:g}"


def _leaf_label(node: dict, short: bool = True) -> str:
    """``y = c`` at a pure leaf; the classes of a mixed one (``{1,3,7}``, or ``5 classes``
    beyond three when ``short``)."""
    labels = list(node.get("class_weights", {}))
    if len(labels) == 1:
        return f"y = {labels[0]}"
    if short and len(labels) > 3:
        return f"{len(labels)} classes"
    return "{" + ",".join(labels) + "}"


def tree_layout(structure: dict) -> tuple[list[dict], list[dict]]:
    """Positions of a tree's nodes for drawing: leaves 0, 1, 2... left to right.

    Parameters
    ----------
    structure : dict
        A tree of :class:`~varimp_core.exact.enumerate_trees.EnumeratedTree`.

    Returns
    -------
    nodes : list of dict
        ``x`` (a leaf's rank; an inner node sits at the mean of its children's
        ``x``), ``depth`` (0 at the root), ``label`` (the split variable, or
        ``y = class`` at a pure leaf, the classes of a mixed one), ``leaf``,
        ``classes`` (a leaf's every class) and, for a split, ``gain``
        :math:`p(t)\\Delta i(t)`.
    edges : list of dict
        ``x0, depth0, x1, depth1`` and ``label`` (``= value`` for a multiway
        child, ``<= lo`` / ``>= hi`` for a binary one).
    """
    nodes, edges = [], []
    leaves = [0]

    def place(node, depth):
        if node.get("leaf", False) or not node.get("children"):
            x = float(leaves[0])
            leaves[0] += 1
            nodes.append({"x": x, "depth": depth, "label": _leaf_label(node), "leaf": True,
                          "classes": _leaf_label(node, short=False)})
            return x
        xs = [place(child["node"], depth + 1) for child in node["children"]]
        x = float(np.mean(xs))
        nodes.append({"x": x, "depth": depth, "label": str(node["variable"]), "leaf": False,
                      "gain": float(node.get("gain", 0.0))})
        for child, cx in zip(node["children"], xs):
            edges.append({"x0": x, "depth0": depth, "x1": cx, "depth1": depth + 1,
                          "label": _edge_label(child)})
        return x

    place(structure, 0)
    return nodes, edges


@user_text_safe
def make_tree_figure(structure: dict, variables, *, units: str = "bits",
                     height: int | None = None) -> go.Figure:
    """One tree of the infinite forest as a small diagram.

    Parameters
    ----------
    structure : dict
        The tree (see :func:`tree_layout`).
    variables : sequence of str
        All the inputs, for the colour of each split variable.
    units : str, default="bits"
    height : int, optional
        Default: 70 px per level plus 40.

    Returns
    -------
    fig : go.Figure
        Edges as line shapes, one annotation per node (the split variable in
        its colour, or the leaf's class) and per edge (the branch's values);
        trace 0 holds the nodes' positions and hovers (the gain
        :math:`p(t)\\Delta i(t)` of a split).
    """
    nodes, edges = tree_layout(structure)
    depth = max(n["depth"] for n in nodes)
    width = max(n["x"] for n in nodes)
    colour = {str(v): variable_color(i) for i, v in enumerate(variables)}
    n_leaves = sum(n["leaf"] for n in nodes)
    fig = go.Figure()
    for e in edges:
        fig.add_shape(type="line", x0=e["x0"], y0=-e["depth0"], x1=e["x1"], y1=-e["depth1"],
                      line=dict(color="#9aa5b1", width=1.5), layer="below")
        fig.add_annotation(x=(e["x0"] + e["x1"]) / 2, y=-(e["depth0"] + e["depth1"]) / 2,
                           text=e["label"], showarrow=False, font=dict(size=10, color="#444"),
                           bgcolor="rgba(255,255,255,0.85)")
    for n in nodes:
        fig.add_annotation(x=n["x"], y=-n["depth"], text=n["label"] if n["leaf"]
                           else f"<b>{n['label']}</b>", showarrow=False,
                           font=dict(size=(9 if n_leaves > 3 else 11) if n["leaf"] else 12,
                                     color=_LEAF if n["leaf"] else "#ffffff"),
                           bgcolor="#eef1f5" if n["leaf"] else colour.get(n["label"], _NODE),
                           bordercolor="#c7ced6" if n["leaf"] else colour.get(n["label"], _NODE),
                           borderpad=3)
    fig.add_trace(go.Scatter(
        x=[n["x"] for n in nodes], y=[-n["depth"] for n in nodes], mode="markers",
        marker=dict(size=1, color="rgba(0,0,0,0)"), showlegend=False,
        customdata=[[n.get("classes", n["label"]), n.get("gain", 0.0)] for n in nodes],
        hovertemplate=[("leaf: %{customdata[0]}<extra></extra>" if n["leaf"] else
                        "split on %{customdata[0]}<br>p(t)\u00b7\u0394i = %{customdata[1]:.4f} "
                        + units + "<extra></extra>") for n in nodes]))
    base_layout(fig, height=height or 70 * depth + 60)
    fig.update_layout(margin=dict(l=8, r=8, t=8, b=8), showlegend=False,
                      plot_bgcolor="#ffffff")
    fig.update_xaxes(visible=False, range=[-0.6, width + 0.6], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-depth - 0.45, 0.45], fixedrange=True)
    return fig


def tree_importance_text(importances, variables, units: str = "bits") -> str:
    """``"X1 0.9183 · X2 0.0000 bits"``: a tree's importance of every variable, 4 decimals
    (a no-break space inside each pair, so a line breaks only between variables)."""
    parts = [f"{v}\u00a0{float(x):.4f}" for v, x in zip(variables, importances)]
    return " \u00b7 ".join(parts) + f" {units}"


@user_text_safe
def make_flip_figure(moments, n_trees: int, *, height: int | None = None) -> go.Figure:
    """Heatmap of the probability that a forest of T trees swaps each pair of variables.

    Parameters
    ----------
    moments : ImportanceMoments
        Exact, or estimated from a sampled forest's trees (``estimated``).
    n_trees : int
        T.
    height : int, optional
        Default: grows with the number of variables.

    Returns
    -------
    fig : go.Figure
        Trace 0 is the heatmap: ``z[i][j]`` is
        :meth:`~varimp_core.exact.moments.ImportanceMoments.flip_probabilities`
        (T) for variables in decreasing order of their mean importance (rows
        top to bottom, columns left to right), None on the diagonal, each cell's
        text the whole percent (blank under 0.5%); a badge says "exact" or "estimate".
    """
    p = len(moments.variables)
    if p < 2:
        return empty_figure("Two variables at least are needed to swap.", height or 200)
    flips = moments.flip_probabilities(n_trees)
    order = np.argsort(-moments.mean, kind="stable")
    names = [str(moments.variables[i]) for i in order]
    z = flips[np.ix_(order, order)].astype(object)
    for i in range(p):
        z[i, i] = None
    # whole percents, blank under 0.5% (the hover has every value): short enough for a
    # phone's cells
    text = [["" if a == b or flips[a, b] < 0.005 else f"{flips[a, b]:.0%}" for b in order]
            for a in order]
    fig = go.Figure(go.Heatmap(
        z=z.tolist(), x=names, y=names, zmin=0, zmax=0.5, colorscale=FLIP_SCALE,
        text=text, texttemplate="%{text}" if p <= 12 else None, textfont=dict(size=11),
        colorbar=dict(title=dict(text="P(swap)", side="right"), tickformat=".0%",
                      thickness=12),
        hovertemplate=(f"T = {n_trees:,} trees<br>P(%{{y}} and %{{x}} come out the other way "
                       "round) = %{z:.4f}<extra></extra>"), xgap=1, ygap=1))
    base_layout(fig, height=height or max(260, min(700, 60 + 34 * p)))
    fig.update_layout(margin=dict(l=60, r=20, t=40, b=50))
    fig.update_xaxes(type="category", side="bottom", title_text="", tickangle=-45 if p > 8 else 0)
    fig.update_yaxes(type="category", autorange="reversed", title_text="")
    label = ("estimate from " + (f"{moments.n_trees:,} trees" if moments.n_trees else "trees")
             if moments.estimated else "exact")
    fig.add_annotation(text=label, xref="paper", yref="paper", x=0, y=1, xanchor="left",
                       yanchor="bottom", showarrow=False, font=dict(color="#ffffff", size=12),
                       bgcolor="#2b6cb0" if moments.estimated else "#1f7a3d", borderpad=4)
    return fig


@user_text_safe
def make_gallery_mean_figure(enumeration, exact_importances, *, units: str = "bits",
                             height: int = 300) -> go.Figure:
    """The exact importances (bars) against the probability-weighted mean of the trees.

    Parameters
    ----------
    enumeration : TreeEnumeration
        The trees, with probabilities :math:`q_t` and importance vectors :math:`I_t`.
    exact_importances : array (p,)
        The exact method's own values (the mean's recursion, not the trees).
    units : str
    height : int, default=300

    Returns
    -------
    fig : go.Figure
        Trace 0: bars, ``y`` = ``exact_importances``; trace 1: diamonds,
        ``y`` = :math:`\\sum_t q_t I_t`.
    """
    names = [str(v) for v in enumeration.variables]
    exact = np.asarray(exact_importances, float)
    mean = enumeration.mean
    fig = go.Figure()
    fig.add_trace(go.Bar(x=names, y=exact, name="exact importances (the mean's recursion)",
                         marker=dict(color=[variable_color(i) for i in range(len(names))]),
                         hovertemplate=f"<b>%{{x}}</b><br>exact = %{{y:.6f}} {units}"
                         "<extra></extra>"))
    fig.add_trace(go.Scatter(x=names, y=mean, mode="markers",
                             name=f"\u03a3 probability \u00d7 importances of the "
                             f"{len(enumeration.trees)} trees",
                             marker=dict(symbol="diamond", size=13, color=EXACT_COLOR,
                                         line=dict(color="#ffffff", width=1.5)),
                             hovertemplate=f"<b>%{{x}}</b><br>mean of the trees = %{{y:.6f}} "
                             f"{units}<extra></extra>"))
    base_layout(fig, height=height)
    fig.update_layout(bargap=0.4, margin=dict(t=70))
    fig.update_xaxes(type="category", title_text="Variable")
    fig.update_yaxes(title_text=f"MDI importance ({units})", rangemode="tozero")
    return fig
