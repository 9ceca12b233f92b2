"""Relevance classes, permutation p-values and random-subspace selection (Geurts 2016).

Figures for the last part of the slides: which variables are strongly, weakly
or not relevant (:func:`varimp_core.exact.relevance.relevance`), which ones a
permutation null finds above chance (:func:`varimp_core.studies.nulls.permutation_null`),
and how Random Subspace (RS) and Sequential Random Subspace (SRS) trees find
the relevant ones when no tree may see more than q features
(:func:`varimp_core.studies.selection.subspace_selection`,
:func:`varimp_core.studies.selection.madelon_curves`).

The builders draw the core's numbers and compute nothing (the means and
standard deviations over seeds are :func:`varimp_core.studies.selection.curve_statistics`).  Every trace carries a ``meta`` tag:
``"class-strong"``, ``"class-weak"``, ``"class-irrelevant"`` (relevance),
``"observed"``, ``"null-q95"``, ``"p-value"`` (p-values), ``"mean"`` and
``"band"`` (curves), ``"selected"`` and ``"not-selected"`` (the selected set).
Values are plain lists so the browser gets numbers, not typed arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from varimp_core.plots.style import EXACT_COLOR, base_layout
from varimp_core.plots.style import user_text_safe

__all__ = ["make_relevance_figure", "make_pvalue_figure", "make_subspace_curves",
           "make_selected_figure", "CLASS_COLORS", "METHOD_COLORS", "MAX_SELECTED_BARS"]

#: One colour per relevance class (Okabe-Ito: blue, orange, grey; reddish purple for
#: "undecided", a sample's class when a needed G-test has too few rows).
CLASS_COLORS = {"strong": "#0072B2", "weak": "#E69F00", "irrelevant": "#999999",
                "undecided": "#CC79A7"}
_CLASS_LABELS = {"strong": "strongly relevant", "weak": "weakly relevant",
                 "irrelevant": "irrelevant", "undecided": "undecided (too few rows)"}
#: RS and SRS colours (Okabe-Ito vermillion and bluish green).
METHOD_COLORS = {"rs": "#D55E00", "srs": "#009E73"}
_METHOD_NAMES = {"rs": "RS", "srs": "SRS"}
#: Bars of :func:`make_selected_figure` at most (the top of the ranking, selected ones first).
MAX_SELECTED_BARS = 40


def _floats(values) -> list:
    return [None if v is None or not math.isfinite(float(v)) else float(v)
            for v in np.asarray(values, dtype=float).ravel().tolist()]


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# -- relevance ------------------------------------------------------------------------
@user_text_safe
def make_relevance_figure(relevance_result, importances=None, *, units: str = "bits"
                          ) -> go.Figure:
    """Every variable coloured by its relevance class, its degree written on its bar.

    Parameters
    ----------
    relevance_result : RelevanceResult
        From :func:`varimp_core.exact.relevance.relevance`.
    importances : array-like of shape (n_features,), optional
        Bar heights (e.g. the forest importances of the same data).  Without
        them every bar has height 1 and the figure is a map of the classes.
    units : str, default="bits"
        Axis label of the importances.

    Returns
    -------
    go.Figure
        One bar trace per class present (``meta`` ``"class-<name>"``), with the
        variables as x, the heights as y, the degree as ``customdata[0]`` and
        membership of the minimal Markov boundary as ``customdata[1]``; bars of
        boundary members have a black outline.
    """
    r = relevance_result
    variables = list(r.variables)
    if importances is not None:
        heights = np.asarray(importances, dtype=float)
        if heights.shape != (len(variables),):
            raise ValueError(f"importances has shape {heights.shape}, expected "
                             f"({len(variables)},): one value per variable.")
    else:
        heights = np.ones(len(variables))
    boundary = set(r.minimal_boundary)
    n = (getattr(r, "test", None) or {}).get("n")
    labels = dict(_CLASS_LABELS, undecided=f"undecided: cannot be decided from {n:,.0f} rows"
                  if n else _CLASS_LABELS["undecided"])
    fig = go.Figure()
    for cls in ("strong", "weak", "irrelevant", "undecided"):
        idx = [j for j, c in enumerate(r.relevance) if c == cls]
        if not idx:
            continue
        degrees = [r.degree[j] for j in idx]
        inside = [variables[j] in boundary for j in idx]
        text = [("cannot be decided" if cls == "undecided" else "irrelevant") if d is None
                else f"d = {d}" for d in degrees]
        fig.add_trace(go.Bar(
            x=[variables[j] for j in idx], y=_floats(heights[idx]), name=labels[cls],
            showlegend=True,
            meta=f"class-{cls}", marker=dict(
                color=CLASS_COLORS[cls],
                line=dict(color=[EXACT_COLOR if b else "rgba(0,0,0,0)" for b in inside],
                          width=[2.5 if b else 0 for b in inside])),
            text=text, textposition="outside" if importances is not None else "inside",
            customdata=[[d if d is not None else -1, bool(b)] for d, b in zip(degrees, inside)],
            hovertemplate=("%{x}: " + labels[cls] + ", %{text}"
                           + ("<br>importance %{y:.4f} " + units if importances is not None
                              else "") + "<extra></extra>")))
    base_layout(fig, height=360)
    fig.update_xaxes(categoryorder="array", categoryarray=variables, title="variable")
    if importances is not None:
        fig.update_yaxes(title=f"importance ({units})", rangemode="tozero")
    else:
        fig.update_yaxes(visible=False, range=[0, 1.05])
    fig.update_layout(bargap=0.25, uniformtext=dict(minsize=9, mode="hide"))
    return fig


# -- permutation null -----------------------------------------------------------------
@user_text_safe
def make_pvalue_figure(perm_null, *, units: str = "bits", level: float = 0.05) -> go.Figure:
    """Observed importance against the null's 95 % quantile, and the permutation p-values.

    Parameters
    ----------
    perm_null : PermutationNull
        From :func:`varimp_core.studies.nulls.permutation_null`.
    units : str, default="bits"
    level : float, default=0.05
        Where the dotted line of the p-value panel is drawn.

    Returns
    -------
    go.Figure
        Top: ``"null-q95"`` (``perm_null.null_quantile(0.95)``) and
        ``"observed"`` markers, the observed ones filled when above the
        quantile (``customdata``: ``above_null``).  Bottom: ``"p-value"`` bars
        (``perm_null.p_values``, log scale).
    """
    pn = perm_null
    variables = list(pn.variables)
    above = [bool(a) for a in np.asarray(pn.above_null)]
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        row_heights=[0.58, 0.42])
    fig.add_trace(go.Scatter(
        x=variables, y=_floats(pn.null_quantile(0.95)), mode="markers", meta="null-q95",
        name="null: 95 % quantile", marker=dict(symbol="line-ew-open", size=22,
                                                 color="#7a7a7a", line=dict(width=3)),
        hovertemplate="%{x}: 95 % null quantile %{y:.4f} " + units + "<extra></extra>"),
        row=1, col=1)
    fig.add_trace(go.Scatter(
        x=variables, y=_floats(pn.observed), mode="markers", meta="observed",
        name="observed (filled: above the quantile)", customdata=above,
        marker=dict(symbol=["diamond" if a else "diamond-open" for a in above], size=11,
                    color=EXACT_COLOR, line=dict(width=1.5, color=EXACT_COLOR)),
        hovertemplate="%{x}: observed %{y:.4f} " + units + "<extra></extra>"), row=1, col=1)
    pvals = _floats(pn.p_values)
    fig.add_trace(go.Bar(
        x=variables, y=pvals, meta="p-value", name="p-value", customdata=above,
        marker=dict(color=["#0072B2" if a else "#bbbbbb" for a in above]),
        text=["\u2605" if a else "" for a in above], textposition="outside",
        hovertemplate="%{x}: p = %{y:.4f}<extra></extra>", showlegend=False), row=2, col=1)
    R = pn.n_permutations
    floor = 1.0 / (R + 1) if R else 0.01
    fig.add_hline(y=level, line=dict(color="#B2182B", dash="dot", width=1.5), row=2, col=1,
                  annotation_text=f"p = {level:g}", annotation_position="top left")
    base_layout(fig, height=440)
    fig.update_yaxes(title=f"importance ({units})", rangemode="tozero", row=1, col=1)
    lowest = math.floor(math.log10(floor))
    ticks = [10.0 ** k for k in range(lowest, 1)]
    fig.update_yaxes(title="p-value", type="log", range=[math.log10(floor) - 0.15, 0.25],
                     tickvals=ticks, ticktext=[f"{t:g}" for t in ticks], row=2, col=1)
    fig.update_xaxes(categoryorder="array", categoryarray=variables)
    fig.update_xaxes(title="variable", row=2, col=1)
    return fig


# -- random subspace curves -----------------------------------------------------------
@user_text_safe
def make_subspace_curves(stats: pd.DataFrame) -> go.Figure:
    """AUPRC and test accuracy against the number of trees, RS against SRS.

    Parameters
    ----------
    stats : pandas.DataFrame
        :func:`varimp_core.studies.selection.curve_statistics` of the curves: per
        ``metric``, ``method``, ``p`` and ``n_trees``, the ``mean``, ``std`` and ``count``
        over seeds.

    Returns
    -------
    go.Figure
        Left AUPRC, right accuracy.  Per method (and p) a ``"mean"`` line, the
        mean over seeds at each tree count, and with two or more seeds a
        ``"band"`` of mean ± one standard deviation over the seeds.
        ``customdata`` of a mean line: the number of seeds at each point.
    """
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1,
                        subplot_titles=("AUPRC of the importance ranking",
                                        "test accuracy"))
    all_p = sorted(stats["p"].unique())
    dashes = ["solid", "dash", "dot", "dashdot"]
    for col, column in enumerate(("auprc", "accuracy"), start=1):
        shown = stats[stats["metric"] == column]
        for (method, p), d in shown.groupby(["method", "p"], sort=False):
            d = d.sort_values("n_trees")
            color = METHOD_COLORS.get(method, "#444444")
            name = _METHOD_NAMES.get(method, str(method)) + (
                f", p = {p:,}" if len(all_p) > 1 else "")
            x = [int(v) for v in d["n_trees"]]
            mean, std = d["mean"].to_numpy(float), d["std"].to_numpy(float)
            if int(d["count"].max()) > 1:
                fig.add_trace(go.Scatter(
                    x=x + x[::-1], y=_floats(np.r_[mean + std, (mean - std)[::-1]]),
                    fill="toself", fillcolor=_rgba(color, 0.18), line=dict(width=0),
                    meta="band", name=f"{name} \u00b1 1 sd", legendgroup=name,
                    showlegend=False, hoverinfo="skip"), row=1, col=col)
            pi = all_p.index(p)
            fig.add_trace(go.Scatter(
                x=x, y=_floats(mean), mode="lines", meta="mean", name=name, legendgroup=name,
                showlegend=col == 1, customdata=[int(c) for c in d["count"]],
                line=dict(color=color, width=2.5, dash=dashes[pi % len(dashes)]),
                hovertemplate=(name + ", %{x} trees: %{y:.3f} (mean of %{customdata} seeds)"
                               "<extra></extra>")), row=1, col=col)
    base_layout(fig, height=380)
    fig.update_layout(margin=dict(t=60))
    fig.update_xaxes(title="number of trees T", rangemode="tozero")
    fig.update_yaxes(title="AUPRC", row=1, col=1)
    fig.update_yaxes(title="accuracy", row=1, col=2)
    fig.update_layout(legend=dict(y=1.12))
    return fig


# -- selected set -------------------------------------------------------------------
@user_text_safe
def make_selected_figure(selection, *, max_bars: int = MAX_SELECTED_BARS) -> go.Figure:
    """The selected set F and the top of the importance ranking.

    Parameters
    ----------
    selection : SubspaceSelection
        From :func:`varimp_core.studies.selection.subspace_selection`.
    max_bars : int, default=40
        Variables shown at most: every selected one first (by importance),
        then the best-ranked others.

    Returns
    -------
    go.Figure
        Horizontal bars of :math:`\\mathrm{Imp}_{q,T}` (``selection.importances``):
        ``"selected"`` and ``"not-selected"`` traces; a truly relevant variable
        (when the truth is known) is labelled with a check mark and its bar
        outlined.  ``customdata``: times drawn, wins over the probe.
    """
    s = selection
    variables = list(s.variables)
    imp = np.asarray(s.importances, dtype=float)
    order = np.argsort(-imp, kind="stable")
    chosen = s.selected_mask
    sel_idx = [j for j in order if chosen[j]]
    other_idx = [j for j in order if not chosen[j]]
    shown = (sel_idx + other_idx)[:max(int(max_bars), 1)]
    shown = sorted(shown, key=lambda j: (-imp[j], j))
    relevant = set(s.relevant) if s.relevant is not None else None
    fig = go.Figure()
    for meta, keep, color, label in (("selected", True, METHOD_COLORS.get(s.method, "#0072B2"),
                                      "selected (beats the probe)"),
                                     ("not-selected", False, "#c8c8c8", "not selected")):
        idx = [j for j in shown if bool(chosen[j]) == keep]
        if not idx:
            continue
        names = [variables[j] for j in idx]
        truth = [relevant is not None and variables[j] in relevant for j in idx]
        fig.add_trace(go.Bar(
            y=names, x=_floats(imp[idx]), orientation="h", meta=meta, name=label,
            showlegend=True,
            marker=dict(color=color, line=dict(color=[EXACT_COLOR if t else "rgba(0,0,0,0)"
                                                      for t in truth],
                                               width=[2 if t else 0 for t in truth])),
            text=["\u2713" if t else "" for t in truth], textposition="outside",
            cliponaxis=False,
            customdata=[[int(s.n_sampled[j]), int(s.n_wins[j])] for j in idx],
            hovertemplate=("%{y}: importance %{x:.4f}<br>drawn in %{customdata[0]} trees, "
                           "beat the probe in %{customdata[1]}<extra></extra>")))
    title = f"{_METHOD_NAMES.get(s.method, s.method)}: {len(s.selected):,} selected of " \
            f"{len(variables):,} after {s.n_estimators:,} trees"
    if s.relevant is not None:
        prec, rec = s.precision, s.recall
        title += (f" \u2014 precision {'n/a' if prec is None or math.isnan(prec) else f'{prec:.2f}'}"
                  f", recall {'n/a' if rec is None or math.isnan(rec) else f'{rec:.2f}'}")
    base_layout(fig, title=title, height=max(320, 22 * len(shown) + 170))
    fig.update_yaxes(categoryorder="array", categoryarray=[variables[j] for j in shown][::-1],
                     title=None)
    fig.update_xaxes(title="Imp(q, T): mean MDI per tree (0 where not drawn)",
                     rangemode="tozero")
    fig.update_layout(bargap=0.2, title=dict(font=dict(size=14), y=0.99, yanchor="top"),
                      margin=dict(t=90, r=40),
                      legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0,
                                  title=dict(text="\u2713 / outlined: truly relevant"
                                             if relevant is not None else "", side="top")))
    fig.update_xaxes(title_standoff=4)
    return fig
