"""How many trees do I need?  The distance of a forest of T trees to its exact limit.

A pure builder: it draws the columns of
:func:`varimp_core.studies.convergence.convergence_curve` and computes nothing.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from varimp_core.plots.style import EXACT_COLOR, base_layout, empty_figure, user_text_safe

__all__ = ["make_convergence_figure"]


@user_text_safe
def make_convergence_figure(curve: pd.DataFrame | None, *, label: str = "forest",
                            units: str = "bits", note: str | None = None,
                            height: int = 320) -> go.Figure:
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
        Sentence of an empty figure.
    height : int, default=320

    Returns
    -------
    fig : go.Figure
        Trace 0: the L1 distance :math:`\\sum_j |\\bar I_j(T) - I_j^*|`
        (``y`` equals ``curve.l1``); trace 1: the largest
        :math:`|\\bar I_j(T) - I_j^*|`; trace 2: the 1/sqrt(T) reference
        :math:`\\sqrt{2/\\pi}\\sum_j\\sigma_j/\\sqrt T`.
    """
    if curve is None or len(curve) == 0:
        return empty_figure(note or "No curve to draw.", height)
    T = curve["n_trees"]
    fig = go.Figure()
    hover = "T = %{x:,}<br>%{y:.3g} " + units + "<extra>%{fullData.name}</extra>"
    fig.add_trace(go.Scatter(x=T, y=curve["l1"], mode="lines", name=f"{label}:<br>sum over "
                             "variables of |sampled \u2212 exact|", line=dict(width=2.5),
                             hovertemplate=hover))
    fig.add_trace(go.Scatter(x=T, y=curve["max_abs"], mode="lines", name="largest |sampled "
                             "\u2212 exact| of one variable", line=dict(width=1.5, dash="dot"),
                             hovertemplate=hover))
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
