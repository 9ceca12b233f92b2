"""Shared look of every figure: one colour per variable, colour-blind-safe scales.

Variable colours come from the Okabe-Ito palette (safe for the common colour
vision deficiencies; its black replaced by brown so no variable looks like the
black marks of exact values) extended with Tol's muted scheme, keyed by the
variable's position so X3 has the same colour on every page.  Heatmaps use
the perceptually uniform, colour-blind-safe ``cividis`` scale; signed
differences use the diverging ``RdBu`` scale centred on zero.
"""

from __future__ import annotations

import plotly.graph_objects as go

__all__ = ["variable_color", "variable_colors", "HEATMAP_SCALE", "DIVERGING_SCALE",
           "EXACT_COLOR", "SAMPLED_OPACITY", "base_layout", "empty_figure", "BITS"]

_PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#8C510A",
    "#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
    "#AA4499", "#6699CC", "#888888", "#661100",
)
HEATMAP_SCALE = "Cividis"
DIVERGING_SCALE = "RdBu"
EXACT_COLOR = "#222222"
SAMPLED_OPACITY = 0.75
BITS = "bits"


def variable_color(index: int) -> str:
    """Colour of the variable at position ``index`` (0-based), the same on every page."""
    return _PALETTE[int(index) % len(_PALETTE)]


def variable_colors(variables) -> dict:
    """``{name: colour}`` for a sequence of variable names, by position."""
    return {v: variable_color(i) for i, v in enumerate(variables)}


def base_layout(fig: go.Figure, *, title: str | None = None, height: int = 420) -> go.Figure:
    """Apply the common layout (white template, margins, legend, hover) in place."""
    fig.update_layout(template="plotly_white", height=height, title=title,
                      margin=dict(l=60, r=20, t=50 if title else 20, b=50),
                      hoverlabel=dict(namelength=-1), font=dict(size=13),
                      legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0))
    return fig


def empty_figure(text: str, height: int) -> go.Figure:
    """A blank figure of ``height`` pixels that only says ``text`` (nothing to draw yet)."""
    fig = go.Figure()
    fig.update_layout(template="plotly_white", height=height, xaxis=dict(visible=False),
                      yaxis=dict(visible=False),
                      annotations=[dict(text=text, showarrow=False, x=0.5, y=0.5, xref="paper",
                                        yref="paper", font=dict(size=15, color="#5b6477"))])
    return fig
