"""How many trees do I need?  The distance of a forest of T trees to its exact limit.

A pure builder: it draws the columns of
:func:`varimp_core.studies.convergence.convergence_curve` and computes nothing.
"""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from varimp_core.plots.style import EXACT_COLOR, base_layout, empty_figure, user_text_safe

__all__ = ["make_convergence_figure"]


#: Colour of the exact expected-error law (green: the exact badge's).
EXPECTED_COLOR = "#1f7a3d"
#: Colour of the sampled curve drawn over the exact law (the sampled badge's blue).
SAMPLED_COLOR = "#2b6cb0"


@user_text_safe
def make_convergence_figure(curve: pd.DataFrame | None, *, label: str = "forest",
                            units: str = "bits", note: str | None = None,
                            height: int = 320, expected: pd.DataFrame | None = None,
                            stable_trees: int | None = None, level: float = 0.95
                            ) -> go.Figure:
    """|sampled − exact| against the number of trees T, both axes on a log scale.

    Parameters
    ----------
    curve : DataFrame or None
        Columns ``n_trees``, ``l1``, ``max_abs`` and ``reference`` (see
        :func:`~varimp_core.studies.convergence.convergence_curve`); None draws
        ``note`` alone.
    label : str
        The forest, for the legend (e.g. ``"scikit-learn extra-trees"``).
    units : str
    note : str, optional
        Sentence of an empty figure (drawn when there is neither ``curve`` nor
        ``expected``).
    height : int, default=320
    expected : DataFrame, optional
        The exact law, columns ``n_trees``, ``l1`` and ``max_abs`` of
        :func:`~varimp_core.studies.convergence.expected_error_curve`
        (:math:`\\sqrt{2/\\pi}\\sum_j\\sigma_j/\\sqrt T` and
        :math:`\\sqrt{2/\\pi}\\max_j\\sigma_j/\\sqrt T`, exact
        :math:`\\sigma_j`): drawn first, so a sampled curve lies on top of it.
    stable_trees : int, optional
        The T from which the ranking is right with probability ``level``
        (:meth:`~varimp_core.exact.moments.ImportanceMoments.stable_ranking_trees`):
        a dotted vertical line.
    level : float, default=0.95

    Returns
    -------
    fig : go.Figure
        Without ``expected``: trace 0 is the L1 distance
        :math:`\\sum_j |\\bar I_j(T) - I_j^*|` (``y`` equals ``curve.l1``);
        trace 1 the largest :math:`|\\bar I_j(T) - I_j^*|`; trace 2 the
        1/sqrt(T) reference :math:`\\sqrt{2/\\pi}\\sum_j\\sigma_j/\\sqrt T`
        with the sampled :math:`\\sigma_j`.  With ``expected``: its two traces
        (``meta`` ``"expected-l1"`` and ``"expected-max"``) come first, then the
        sampled curve's L1 and largest traces, whose reference line the exact
        law replaces; the stable-ranking line is a layout shape.
    """
    has_curve = curve is not None and len(curve) > 0
    has_expected = expected is not None and len(expected) > 0
    if not has_curve and not has_expected:
        return empty_figure(note or "No curve to draw.", height)
    fig = go.Figure()
    if has_expected:
        _add_expected(fig, expected, units, stable_trees, level)
    if not has_curve:
        base_layout(fig, height=height)
        fig.update_layout(margin=dict(t=80))
        fig.update_xaxes(type="log", title_text="Number of trees T of a forest")
        fig.update_yaxes(type="log", title_text=f"expected |forest \u2212 exact| ({units})")
        return fig
    T = curve["n_trees"]
    hover = "T = %{x:,}<br>%{y:.3g} " + units + "<extra>%{fullData.name}</extra>"
    colour = dict(color=SAMPLED_COLOR) if has_expected else {}
    fig.add_trace(go.Scatter(x=T, y=curve["l1"], mode="lines", name=f"{label}:<br>sum over "
                             "variables of |sampled \u2212 exact|",
                             line=dict(width=2.5, **colour), hovertemplate=hover))
    fig.add_trace(go.Scatter(x=T, y=curve["max_abs"], mode="lines", name="largest |sampled "
                             "\u2212 exact| of one variable",
                             line=dict(width=1.5, dash="dot", **colour), hovertemplate=hover))
    if not has_expected:
        fig.add_trace(go.Scatter(x=T, y=curve["reference"], mode="lines",
                                 name="\u221a(2/\u03c0)\u00b7\u03a3\u03c3\u2c7c/\u221aT "
                                 "(expected sum, central limit theorem)",
                                 line=dict(color=EXACT_COLOR, width=1.5, dash="dash"),
                                 hovertemplate=hover))
    base_layout(fig, height=height)
    fig.update_layout(margin=dict(t=95))   # the legend's first entry takes two lines
    fig.update_xaxes(type="log", title_text="Number of trees T (the first T of this forest)")
    fig.update_yaxes(type="log", title_text=f"|sampled \u2212 exact| ({units})")
    return fig


def _add_expected(fig: go.Figure, expected: pd.DataFrame, units: str,
                  stable_trees: int | None, level: float) -> None:
    """The exact expected-error law (sum and largest variable) and the stable-ranking line."""
    hover = "T = %{x:,}<br>%{y:.3g} " + units + "<extra>%{fullData.name}</extra>"
    T = expected["n_trees"]
    fig.add_trace(go.Scatter(x=T, y=expected["l1"], mode="lines", meta="expected-l1",
                             name="exact law: \u221a(2/\u03c0)\u00b7\u03a3\u2c7c\u03c3\u2c7c/"
                             "\u221aT,<br>expected sum of |forest \u2212 exact|",
                             line=dict(color=EXPECTED_COLOR, width=2), hovertemplate=hover))
    fig.add_trace(go.Scatter(x=T, y=expected["max_abs"], mode="lines", meta="expected-max",
                             name="exact law, largest variable:<br>\u221a(2/\u03c0)\u00b7"
                             "max\u2c7c \u03c3\u2c7c/\u221aT",
                             line=dict(color=EXPECTED_COLOR, width=1.2, dash="dot"),
                             hovertemplate=hover))
    if stable_trees is not None:
        fig.add_vline(x=stable_trees, line=dict(color=EXPECTED_COLOR, width=1.5, dash="dot"))
        fig.add_annotation(x=math.log10(stable_trees), y=1, xref="x", yref="paper",
                           text=f"ranking right with {level:.0%}<br>from T = {stable_trees:,}",
                           showarrow=False, xanchor="left", yanchor="top", align="left",
                           font=dict(size=11, color=EXPECTED_COLOR), bgcolor="rgba(255,255,255,0.8)")
