"""Shared look of every figure: one colour per variable, colour-blind-safe scales.

Variable colours, keyed by the variable's position so X3 has the same colour on every
page, begin with four of Okabe and Ito's colour-blind-safe colours (blue, vermillion,
bluish green, reddish purple) and go on with six chosen to stay apart from them, from
each other and from the black of exact values: every colour has a contrast of at least
3:1 against white (WCAG 2.1, success criterion 1.4.11, graphics), so none is yellow, and
every two differ by a CIE76 colour difference of more than 15 in normal vision and in
simulated protanopia, deuteranopia and tritanopia (Machado et al. 2009, severity 1; see
``tests/browser/test_layout.py``).  After ten variables the colours repeat.  Heatmaps use the
perceptually uniform, colour-blind-safe ``cividis`` scale; signed differences use the
diverging ``RdBu`` scale centred on zero.
"""

from __future__ import annotations

import functools
import re
import textwrap

import numpy as np
import plotly.graph_objects as go

__all__ = ["variable_color", "variable_colors", "N_VARIABLE_COLORS", "MANY_VARIABLES_COLOR", "HEATMAP_SCALE", "DIVERGING_SCALE",
           "EXACT_COLOR", "SAMPLED_OPACITY", "base_layout", "empty_figure", "BITS", "plain_text",
           "user_text_safe"]

_PALETTE = (
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#8800FF", "#773311", "#4433AA", "#BB55FF",
    "#EE0055", "#663377",
)
#: How many variables get a colour of their own (after that the colours repeat).
N_VARIABLE_COLORS = len(_PALETTE)
#: One slate colour for every bar when there are more variables than colours: a repeated
#: colour would claim that two variables are one (contrast 7.6:1 against white).
MANY_VARIABLES_COLOR = "#44546A"
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


#: Characters per line of a figure's note: Plotly never wraps an annotation, and a long line
#: ran past both edges of a figure; 48 characters of 15 px text fit a phone's width.
NOTE_WIDTH = 48


def wrap_note(text: str, width: int = NOTE_WIDTH) -> str:
    """``text`` broken into lines of at most ``width`` characters with ``<br>``.

    >>> wrap_note("choose a sampled method on data where the exact value can be computed", 30)
    'choose a sampled method on<br>data where the exact value<br>can be computed'
    """
    return "<br>".join(textwrap.wrap(text, width, break_long_words=False)) or text


def empty_figure(text: str, height: int) -> go.Figure:
    """A blank figure of ``height`` pixels that only says ``text`` (nothing to draw yet),
    in lines that fit the figure (:func:`wrap_note`)."""
    fig = go.Figure()
    fig.update_layout(template="plotly_white", height=height, xaxis=dict(visible=False),
                      yaxis=dict(visible=False),
                      annotations=[dict(text=wrap_note(text), showarrow=False, x=0.5, y=0.5,
                                        xref="paper", yref="paper",
                                        font=dict(size=15, color="#5b6477"))])
    return fig


# Plotly draws a subset of HTML in every text of a figure: a variable named
# '<a href="https://…">X</a>' in an uploaded file became a live link on the pages and in
# every shared link.  Our own figures use only these tags.
_NOT_OUR_TAG = re.compile(r"<(?!/?(?:b|br|i|sup|sub|extra)>)", re.IGNORECASE)


def plain_text(text: str) -> str:
    """``text`` with every ``<`` that does not open one of our own tags written ``&lt;``.

    Plotly shows ``&lt;`` as ``<``, so a name reads as it was typed but is never
    markup (a link, a style).

    >>> plain_text('<a href="https://x">X</a> <b>bold</b>')
    '&lt;a href="https://x">X&lt;/a> <b>bold</b>'
    """
    return _NOT_OUR_TAG.sub("&lt;", text) if "<" in text else text


def _plain(obj):
    """The cleaned value of ``obj``, or None when no text of it changes."""
    if isinstance(obj, str):
        out = plain_text(obj)
        return out if out != obj else None
    if isinstance(obj, dict):
        changed = {k: c for k, c in ((k, _plain(v)) for k, v in obj.items()) if c is not None}
        return changed or None
    if isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray) and obj.dtype.kind in "OU"):
        items = list(obj.ravel().tolist() if isinstance(obj, np.ndarray) else obj)
        cleaned = [_plain(v) for v in items]
        if all(c is None for c in cleaned):
            return None
        full = [v if c is None else (c if not isinstance(v, dict) else {**v, **c})
                for v, c in zip(items, cleaned)]
        return np.array(full, dtype=object).reshape(obj.shape) \
            if isinstance(obj, np.ndarray) else full
    return None


def user_text_safe(builder):
    """Decorator of a figure builder: every text of the figure it returns is :func:`plain_text`.

    Names, labels and file names come from users' files; this makes them text
    wherever Plotly shows them (ticks, legends, titles, hovers, annotations).
    """
    @functools.wraps(builder)
    def build(*args, **kwargs):
        fig = builder(*args, **kwargs)
        if not isinstance(fig, go.Figure):
            return fig
        for trace in fig.data:
            changed = _plain(trace.to_plotly_json())
            if changed:
                trace.update(changed)
        changed = _plain(fig.layout.to_plotly_json())
        if changed:
            fig.update_layout(changed)
        return fig

    return build
