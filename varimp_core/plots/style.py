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

import dataclasses
import functools
import html
import re
import textwrap
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["variable_color", "variable_colors", "N_VARIABLE_COLORS", "MANY_VARIABLES_COLOR", "HEATMAP_SCALE", "DIVERGING_SCALE",
           "EXACT_COLOR", "SAMPLED_OPACITY", "base_layout", "empty_figure", "BITS", "plain_text",
           "user_text_safe", "escape_text", "unescape_text", "NAME_FIELDS"]

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
    'choose a sampled method on<br>data where the exact value can<br>be computed'
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


#: Fields of the core's results that hold names from users' files (variables, class and
#: level labels, the target): the only strings :func:`user_text_safe` takes as names.
NAME_FIELDS = frozenset({
    "variables", "labels", "merged", "features", "feature", "outputs", "classes",
    "grid_labels", "copy_name", "relevant", "selected", "set_aside", "x_labels", "y_labels",
    "target", "subset", "markov_boundary", "minimal_boundary", "flip_variable", "levels"})
#: Our own tags, written out: a name that is a piece of one of them (``"<b>"``, ``"b>"``) is
#: escaped where it stands alone, never inside a longer text (that would undo our markup).
_OUR_TAGS = "<b></b><br><i></i><sup></sup><sub></sub><extra></extra>"
_MARKUP = re.compile(r"[<>&]")
_MOST_NAMES = 10_000


def escape_text(text: str) -> str:
    """``text`` with ``&``, ``<`` and ``>`` written as entities: Plotly shows it as typed.

    >>> escape_text("<b>bold</b> & co")
    '&lt;b&gt;bold&lt;/b&gt; &amp; co'
    """
    return html.escape(text, quote=False)


def unescape_text(text: str) -> str:
    """The name a figure's text (a clicked tick, a hovered point's data) stands for: the
    inverse of :func:`escape_text`, for callbacks that read a name back from a figure.

    >>> unescape_text(escape_text("<b>x</b> & y")) == "<b>x</b> & y"
    True
    """
    return html.unescape(text) if "&" in text else text


def _names(obj, out: set, names: bool = True, depth: int = 0) -> None:
    """Add to ``out`` the strings of ``obj`` that hold markup characters and are names:
    strings in sequences, frames and mappings given to a builder, and in a result's
    :data:`NAME_FIELDS`; never a builder's own text argument (a title, a note)."""
    if depth > 6 or len(out) >= _MOST_NAMES or obj is None or isinstance(obj, (int, float)):
        return
    if isinstance(obj, str):
        if names and depth and _MARKUP.search(obj):
            out.add(obj)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for field in dataclasses.fields(obj):
            _names(getattr(obj, field.name, None), out, field.name in NAME_FIELDS, depth + 1)
    elif isinstance(obj, pd.DataFrame):
        _names(obj.columns, out, True, depth + 1)
        _names(obj.index, out, True, depth + 1)
        for column in obj.columns[obj.dtypes == object]:
            _names(obj[column].to_numpy(), out, True, depth + 1)
    elif isinstance(obj, (pd.Index, pd.Series)):
        if obj.dtype == object:
            _names(obj.to_numpy(), out, names, depth)
    elif isinstance(obj, np.ndarray):
        if obj.dtype.kind in "OU":
            for item in obj.ravel().tolist():
                if len(out) >= _MOST_NAMES:
                    break
                _names(item, out, names, depth + 1)
    elif isinstance(obj, Mapping):
        for value in obj.values():
            _names(value, out, names, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for item in obj:
            if len(out) >= _MOST_NAMES:
                break
            _names(item, out, names, depth + 1)


class _Cleaner:
    """Writes a figure's texts safely: each user name (see :func:`_names`) escaped whole
    (:func:`escape_text`), alone, inside a longer text, or cut short with an ellipsis;
    then any ``<`` left that does not open one of our tags (:func:`plain_text`)."""

    def __init__(self, names: set):
        self.names = names
        # longest first, so a name inside another is never replaced half-way
        self.inside = sorted((n for n in names if ("<" in n or ">" in n) and n not in _OUR_TAGS),
                             key=len, reverse=True)

    def text(self, text: str) -> str:
        if self.names:
            if text in self.names:
                return escape_text(text)
            if text.endswith("\u2026") and len(text) > 2 and _MARKUP.search(text) and any(
                    n.startswith(text[:-1]) for n in self.names):
                return escape_text(text)        # a name cut to fit (interactions.fit_label)
            for name in self.inside:
                if name in text:
                    text = text.replace(name, escape_text(name))
        return plain_text(text)

    def clean(self, obj):
        """The cleaned value of ``obj``, or None when no text of it changes."""
        if isinstance(obj, str):
            out = self.text(obj)
            return out if out != obj else None
        if isinstance(obj, dict):
            changed = {k: c for k, c in ((k, self.clean(v)) for k, v in obj.items())
                       if c is not None}
            return changed or None
        if isinstance(obj, (list, tuple)) or (isinstance(obj, np.ndarray)
                                              and obj.dtype.kind in "OU"):
            items = list(obj.ravel().tolist() if isinstance(obj, np.ndarray) else obj)
            cleaned = [self.clean(v) for v in items]
            if all(c is None for c in cleaned):
                return None
            full = [v if c is None else (c if not isinstance(v, dict) else {**v, **c})
                    for v, c in zip(items, cleaned)]
            return np.array(full, dtype=object).reshape(obj.shape) \
                if isinstance(obj, np.ndarray) else full
        return None


def user_text_safe(builder):
    """Decorator of a figure builder: users' names in the figure it returns are text.

    Names, labels and file names come from users' files.  Every name found in the
    builder's arguments (:func:`_names`: sequences, frames and the results' name fields) is
    written with entities wherever the figure shows it (ticks, legends, titles, hovers,
    annotations, a click's data), so a column named ``<b>x</b>`` reads ``<b>x</b>`` and is
    not bold; any other ``<`` that does not open one of our own tags is written ``&lt;``
    (:func:`plain_text`), so no text becomes a link or a style.  A callback that reads a
    name back from a click undoes it with :func:`unescape_text`.
    """
    @functools.wraps(builder)
    def build(*args, **kwargs):
        fig = builder(*args, **kwargs)
        if not isinstance(fig, go.Figure):
            return fig
        names: set = set()
        _names([a for a in args if not isinstance(a, str)], names)
        _names([v for v in kwargs.values() if not isinstance(v, str)], names)
        cleaner = _Cleaner(names)
        for trace in fig.data:
            changed = cleaner.clean(trace.to_plotly_json())
            if changed:
                trace.update(changed)
        changed = cleaner.clean(fig.layout.to_plotly_json())
        if changed:
            fig.update_layout(changed)
        return fig

    return build
