"""Figures of how predictions depend on an input: PD with ICE, 2-D PD, dependence over responses.

Pure functions from the containers of :mod:`varimp_core.local.partial_dependence` to plotly
figures; every drawn number is the core's number.

* :func:`make_pd_figure` -- Friedman's partial dependence (thick line) over the
  ICE lines of individual rows (thin, translucent), one panel per class of a
  classifier;
* :func:`make_pd2_figure` -- the partial dependence on a pair, as a heatmap
  with contour lines;
* :func:`make_dependence_over_responses` -- Ciss's observed (value, prediction)
  pairs where the feature is locally important: *not* a partial dependence.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from varimp_core.local.response_dependence import DependenceOverResponses
from varimp_core.local.partial_dependence import PartialDependence
from varimp_core.plots.style import HEATMAP_SCALE, base_layout, variable_color
from varimp_core.plots.style import user_text_safe

__all__ = ["ICE_OPACITY", "integer_ticks", "pd_outputs", "make_pd_figure", "make_pd2_figure",
           "make_dependence_over_responses"]

#: Opacity of an ICE line: many of them darken where they agree.
ICE_OPACITY = 0.25
_PD_COLOR = "#222222"
_MAX_PANELS = 12
_FEW_VALUES = 10


def _layout(fig: go.Figure, title: str | None, height: int, *, legend: bool = False,
            subtitle: str | None = None) -> go.Figure:
    """:func:`base_layout`, with the title left-aligned above the legend, clear of the modebar."""
    base_layout(fig, title=title, height=height)
    top = 8                                   # pixels from the top of the figure
    if title:
        lines = _wrap(subtitle) if subtitle else []
        fig.update_layout(title=dict(text=title, x=0.01, xref="container", xanchor="left",
                                     y=1 - top / height, yanchor="top", font=dict(size=14),
                                     subtitle=dict(text="<br>".join(lines), font=dict(size=12))))
        top += 26 + 20 * len(lines)
    if legend:
        # in pixels from the top, so a tall figure of many panels keeps it under the title
        fig.update_layout(legend=dict(yref="container", y=1 - top / height, yanchor="top"))
        top += 28
    fig.update_layout(margin=dict(t=top + 20))
    return fig


#: Characters of a subtitle line: a line of 110 ran past the figure's right edge in
#: presentation mode (18 px text in a 1024 px window).
SUBTITLE_CHARACTERS = 70


def _wrap(text: str, width: int = SUBTITLE_CHARACTERS) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def _response_label(result: PartialDependence, output) -> str:
    if result.response == "probability":
        return f"P(class {output})"
    if result.response == "decision function":
        return f"decision function ({output})"
    return "predicted response"


def _panel_title(result: PartialDependence, output) -> str:
    return str(output) if result.response == "prediction" else f"class {output}"


def pd_outputs(result: PartialDependence, outputs=None) -> list:
    """Indices into ``result.outputs`` of the outputs to draw.

    ``outputs`` None draws every output (at most 12); a single value or a list
    of values of ``result.outputs`` draws those.  Raises ``ValueError`` with a
    sentence for an output the result does not have.
    """
    all_outputs = list(result.outputs)
    if outputs is None:
        return list(range(min(len(all_outputs), _MAX_PANELS)))
    wanted = [outputs] if isinstance(outputs, (str, int, float, np.generic)) else list(outputs)
    idx = []
    for w in wanted:
        matches = [k for k, o in enumerate(all_outputs) if o == w or str(o) == str(w)]
        if not matches:
            raise ValueError(f"{w!r} is not one of the outputs "
                             f"{', '.join(map(str, all_outputs))}.")
        idx.append(matches[0])
    return idx


def _ice_xy(grid: np.ndarray, lines: np.ndarray) -> tuple[list, list]:
    """All ICE lines as one trace: x and y with None between lines."""
    xs: list = []
    ys: list = []
    for line in lines:
        xs.extend(grid.tolist() + [None])
        ys.extend(line.tolist() + [None])
    return xs, ys


def integer_ticks(grid, most: int = 10) -> list[int] | None:
    """Whole-number ticks (at most ``most``, written without separators) for an axis whose
    grid is all integers, such as a year; None otherwise (issue #26: "2,012.5")."""
    g = np.asarray(grid, dtype=float)
    g = g[np.isfinite(g)]
    if g.size < 2 or not np.all(g == np.round(g)):
        return None
    lo, hi = int(g.min()), int(g.max())
    step = max(1, -(-(hi - lo) // (most - 1)))
    return list(range(lo, hi + 1, step))


@user_text_safe
def make_pd_figure(result: PartialDependence, *, outputs=None, color: str | None = None,
                   title: str | None = None, height: int = 420,
                   value_ticks: Mapping | None = None) -> go.Figure:
    """1-D partial dependence with its ICE lines, one panel per output.

    Parameters
    ----------
    result : PartialDependence
        A 1-D result from :func:`varimp_core.local.partial_dependence.partial_dependence`.
    outputs : output value or list of them, optional
        Which outputs (classes of a classifier) to draw, one panel each;
        default every output (at most 12).
    color : str, optional
        Colour of the ICE lines and the rug; default the first variable colour.
    title : str, optional
    height : int, default=420
    value_ticks : mapping of float to str, optional
        Ticks of the x axis (value to text,
        :meth:`~varimp_core.data.prepare.PreparedData.value_ticks`): a numeric
        input's bin edges and its missing rows' stand-in named "missing".

    Returns
    -------
    fig : go.Figure
        Panel after panel (one per output ``k`` drawn, in order), with ``meta``
        ``"ice"`` (when ICE lines exist) and ``"pd"``: one trace of all ICE
        lines (``y`` is ``result.individual[k]`` row after row, ``None``
        between rows) and one of the partial dependence (``x`` =
        ``result.grid[0]``, ``y`` = ``result.average[k]``, the output in the
        hover text).  The x axis names the categories of an ordinal-coded input
        (``result.grid_labels``, also the hover text of any input that has them).  The legend shows the first panel's two traces.

    Raises
    ------
    ValueError
        For a 2-D result (use :func:`make_pd2_figure`) or an unknown output.
    """
    if len(result.features) != 1:
        raise ValueError("make_pd_figure draws a 1-D partial dependence; use make_pd2_figure "
                         "for a pair.")
    idx = pd_outputs(result, outputs)
    feature = result.features[0]
    grid = np.asarray(result.grid[0], dtype=float)
    color = color or variable_color(0)
    n_panels = len(idx)
    cols = min(n_panels, 3)
    rows = -(-n_panels // cols)
    titles = [_panel_title(result, result.outputs[k]) for k in idx] if n_panels > 1 else None
    fig = make_subplots(rows=rows, cols=cols, shared_yaxes=True, subplot_titles=titles,
                        horizontal_spacing=0.04, vertical_spacing=0.12)
    mode = "lines+markers" if result.categorical[0] or grid.size <= 12 else "lines"
    labels = _labels(result)
    for panel, k in enumerate(idx):
        r, c = panel // cols + 1, panel % cols + 1
        out = result.outputs[k]
        first = panel == 0
        if result.individual is not None:
            xs, ys = _ice_xy(grid, np.asarray(result.individual[k], dtype=float))
            fig.add_trace(go.Scatter(
                x=xs, y=ys, mode="lines", name="ICE lines (one row each)", meta="ice",
                line=dict(color=color, width=1), opacity=ICE_OPACITY, hoverinfo="skip",
                legendgroup="ice", showlegend=first), row=r, col=c)
        fig.add_trace(go.Scatter(
            x=grid, y=np.asarray(result.average[k], dtype=float), mode=mode,
            name="partial dependence (average over all rows)", meta="pd",
            line=dict(color=_PD_COLOR, width=4), legendgroup="pd", showlegend=first,
            text=list(labels[0]) if labels[0] else None,
            hovertemplate=(f"{feature} = {'%{text}' if labels[0] else '%{x:.4g}'}<br>"
                           f"{_response_label(result, out)}: "
                           "%{y:.4f}<extra>average over "
                           f"{result.n_samples:,} rows</extra>")), row=r, col=c)
        fig.update_xaxes(title_text=feature if r == rows else None, row=r, col=c)
    if value_ticks:
        _ticks(fig.update_xaxes, value_ticks)
    elif labels[0] and result.categorical[0]:   # "Biscoe / Dream / Torgersen", not codes
        fig.update_xaxes(tickmode="array", tickvals=list(grid), ticktext=list(labels[0]))
    elif not labels[0]:   # (a grid with labels, such as "missing", keeps them in the hover)
        ticks = integer_ticks(grid)
        if ticks:   # years and counts: 2012, 2013, never "2,012.5"
            fig.update_xaxes(tickmode="array", tickvals=ticks, ticktext=[str(v) for v in ticks])
    if title is None:
        lines = "" if result.individual is None else \
            f" with {result.individual.shape[1]:,} ICE lines"
        title = f"Partial dependence on {feature}{lines}"
    _layout(fig, title, height if rows == 1 else height + 260 * (rows - 1), legend=True)
    if titles:                                    # room for the panel titles
        fig.update_layout(margin=dict(t=fig.layout.margin.t + 16))
    ylabel = "probability" if result.response == "probability" else result.response
    fig.update_yaxes(title_text=ylabel, col=1)
    if result.response == "probability":
        fig.update_yaxes(range=[-0.02, 1.02])
    return fig


@user_text_safe
def make_pd2_figure(result: PartialDependence, *, output=None, title: str | None = None,
                    height: int = 460) -> go.Figure:
    """Partial dependence on a pair of features: heatmap with contour lines.

    Parameters
    ----------
    result : PartialDependence
        A 2-D result (two features).
    output : output value, optional
        The output (class) to draw; default the last one (the positive class
        of a binary classifier, the only output of a regressor).
    title : str, optional
    height : int, default=460

    Returns
    -------
    fig : go.Figure
        A ``go.Heatmap`` (``meta="pd2"``) with ``x`` = ``result.grid[0]``,
        ``y`` = ``result.grid[1]`` and ``z`` = ``result.average[k].T`` (rows
        follow y), then a ``go.Contour`` of the same values drawn as lines.
    """
    if len(result.features) != 2:
        raise ValueError("make_pd2_figure draws the partial dependence on a pair of features.")
    k = pd_outputs(result, output)[0] if output is not None else len(result.outputs) - 1
    out = result.outputs[k]
    f1, f2 = result.features
    g1, g2 = (np.asarray(g, dtype=float) for g in result.grid)
    z = np.asarray(result.average[k], dtype=float).T
    label = _response_label(result, out)
    fig = go.Figure(go.Heatmap(
        x=g1, y=g2, z=z, colorscale=HEATMAP_SCALE, meta="pd2",
        colorbar=dict(title=dict(text=label)),
        hovertemplate=f"{f1} = %{{x:.4g}}<br>{f2} = %{{y:.4g}}<br>{label}: %{{z:.4f}}"
                      "<extra></extra>"))
    if g1.size > 2 and g2.size > 2:
        fig.add_trace(go.Contour(x=g1, y=g2, z=z, showscale=False, hoverinfo="skip",
                                 contours=dict(coloring="none", showlabels=True),
                                 line=dict(color="rgba(255,255,255,0.7)", width=1),
                                 meta="pd2-contour"))
    if title is None:
        title = f"Partial dependence on {f1} and {f2}" + (
            f" \u2014 {label}" if result.response != "prediction" else "")
    _layout(fig, title, height)
    fig.update_xaxes(title_text=f1)
    fig.update_yaxes(title_text=f2)
    # A few grid values (codes of a discrete input) are the ticks: none at the cells' edges
    # (-0.5 and 1.5 of a bit), where the two axes' first labels met at the corner.
    if g1.size <= _FEW_VALUES:
        fig.update_xaxes(tickmode="array", tickvals=g1.tolist())
    if g2.size <= _FEW_VALUES:
        fig.update_yaxes(tickmode="array", tickvals=g2.tolist())
    axes = zip((fig.update_xaxes, fig.update_yaxes), (g1, g2), _labels(result), result.categorical)
    for update, g, lab, categorical in axes:
        if lab and categorical:   # a numeric grid's labels are for the hover text only
            update(tickmode="array", tickvals=list(g), ticktext=list(lab))
    return fig


def _ticks(update, value_ticks: Mapping) -> None:
    """Ticks at the values of ``value_ticks``, each with its text."""
    ticks = sorted(value_ticks)
    update(tickmode="array", tickvals=ticks, ticktext=[value_ticks[v] for v in ticks])


def _labels(result: PartialDependence) -> tuple:
    """The grid labels of each feature (None where the values are their own labels)."""
    labels = tuple(getattr(result, "grid_labels", ()) or ())
    return labels + (None,) * (len(result.features) - len(labels))


@user_text_safe
def make_dependence_over_responses(result: DependenceOverResponses, *,
                                   classes: Sequence | None = None, color: str | None = None,
                                   title: str | None = None, height: int = 420,
                                   value_labels: Mapping | None = None) -> go.Figure:
    """Ciss's dependence over responses: feature values against the forest's predictions.

    Parameters
    ----------
    result : DependenceOverResponses
        From :func:`varimp_core.local.response_dependence.dependence_over_responses`.
    classes : sequence, optional
        Order of the predicted classes (classification); default sorted.
    color : str, optional
        Marker colour; default the first variable colour.
    title : str, optional
        Default says that this is *not* Friedman's partial dependence.
    height : int, default=420
    value_labels : mapping of float to str, optional
        The ticks of the x axis and the names of the values that stand for
        something else, for the hover text: a category's code, a missing
        value's stand-in ("missing"); see
        :meth:`~varimp_core.data.prepare.PreparedData.value_ticks`.

    Returns
    -------
    fig : go.Figure
        Regression: one ``go.Scatter`` (``meta="points"``) with ``x`` =
        ``result.value``, ``y`` = ``result.prediction`` and ``customdata`` =
        ``[observation, position]``.  Classification: one horizontal
        ``go.Box`` per predicted class (``name`` = the class) with all points
        shown, ``x`` = the values of the observations predicted as it.
    """
    color = color or variable_color(0)
    feature = result.feature
    where = "position " + ", ".join(map(str, result.positions)) \
        if len(result.positions) <= 3 else "any position"
    fig = go.Figure()
    custom = np.column_stack([result.observation, result.position])
    names = dict(value_labels or {})
    text = [names.get(v, f"{v:.4g}") for v in np.asarray(result.value, dtype=float).tolist()]
    if result.task == "classification":
        pred = np.asarray(result.prediction, dtype=object)
        order = list(classes) if classes is not None else sorted(set(pred.tolist()), key=str)
        for c in order:
            mask = np.array([p == c or str(p) == str(c) for p in pred], dtype=bool)
            if not mask.any():
                continue
            fig.add_trace(go.Box(
                x=np.asarray(result.value)[mask], name=str(c), orientation="h",
                text=[t for t, m in zip(text, mask) if m],
                boxpoints="all", jitter=0.5, pointpos=0, customdata=custom[mask],
                marker=dict(color=color, size=4, opacity=0.6), line=dict(color="#444444"),
                fillcolor="rgba(0,0,0,0)", meta="points",
                hovertemplate=(f"{feature} = %{{text}}<br>predicted %{{y}}<br>"
                               "row %{customdata[0]}, position %{customdata[1]}<extra></extra>")))
        fig.update_yaxes(title_text="predicted class", type="category")
    else:
        fig.add_trace(go.Scatter(
            x=result.value, y=result.prediction, mode="markers", customdata=custom, text=text,
            marker=dict(color=color, size=6, opacity=0.6), meta="points", name=feature,
            hovertemplate=(f"{feature} = %{{text}}<br>prediction %{{y:.4g}}<br>"
                           "row %{customdata[0]}, position %{customdata[1]}<extra></extra>")))
        fig.update_yaxes(title_text="forest prediction")
    shown = f"{len(result.value):,} of {result.n_observations:,} observations"
    subtitle = (f"Observed {feature} against the forest's prediction where {feature} is at "
                f"{where} ({shown}); nothing is set or averaged.")
    if title is None:
        title = "Dependence over responses (Ciss) \u2014 not Friedman's partial dependence"
    _layout(fig, title, height, subtitle=subtitle)
    fig.update_layout(showlegend=False)
    fig.update_xaxes(title_text=f"{feature} (observed values)")
    if value_labels:   # categories by name, not their codes; "missing" where missing rows are
        _ticks(fig.update_xaxes, value_labels)
    return fig
