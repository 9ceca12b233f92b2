"""Importance bar charts: sampled or exact MDI per variable, and the Theorem 2 check.

Every builder is a pure function ``ImportanceResult -> go.Figure``: it reads
the numbers of the result and draws them, nothing is recomputed except order
statistics of the per-tree values (the box of the spread).

Exact and sampled values look different at a glance: exact bars are solid,
sampled bars are hatched and a little transparent, exact values drawn over a
sampled result are black diamonds, and a badge in the corner says which.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from varimp_core.result import ImportanceResult
from varimp_core.studies.chance import ChanceLevels
from varimp_core.studies.verdicts import VerdictResult
from varimp_core.plots.style import (EXACT_COLOR, MANY_VARIABLES_COLOR, N_VARIABLE_COLORS,
                                     SAMPLED_OPACITY, base_layout, variable_color)
from varimp_core.plots.style import user_text_safe

__all__ = ["SPREADS", "SHOWS", "ORDERS", "VERDICT_STYLE", "make_importance_figure", "make_theorem2_figure",
           "method_label", "units_label", "number_format", "hover_format", "fmt_number",
           "verdict_label"]

_METHOD_NAMES = {
    "eqn3": "exact (Eqn 3)",
    "exact": "exact (infinite forest)",
    "forest": "multiway forest",
    "sklearn-rf": "scikit-learn random forest",
    "sklearn-et": "scikit-learn extra-trees",
    "exact-rf": "exact: scikit-learn RandomForest, bootstrap off (binary splits)",
    "exact-et": "exact: scikit-learn ExtraTrees (binary splits)",
}
#: Infinite-ensemble methods (possibly on a sample's empirical distribution).
EXACT_METHODS = ("eqn3", "exact", "exact-rf", "exact-et")
_EXACT_BADGE = "#1f7a3d"
_SAMPLED_BADGE = "#2b6cb0"
#: The analytic chance level and the permutation band.
CHANCE_COLOR = "#c53030"
BAND_COLOR = "rgba(90, 90, 90, 0.55)"


#: What the bars of a sample show (``show`` of :func:`make_importance_figure`).
SHOWS = ("above", "plugin")
#: Verdict -> (legend text, opacity of the bar, grey instead of the variable's colour).
VERDICT_STYLE = {
    "relevant": ("relevant (family-wise error \u2264 alpha)", 1.0, False),
    "chance": ("chance: like an irrelevant variable", 0.55, True),
    "undecided": ("undecided: too few rows to decide", 0.35, False),
}
_CHANCE_GREY = "#9a9a9a"


def units_label(result) -> str:
    """Unit of the result's values for axis titles: ``"bits"``, ``"gini"``, ``"variance of Y"``.

    scikit-learn's regression forests say ``"variance"``: the same variance impurity.
    """
    units = getattr(result, "units", result) or "bits"
    return "variance of Y" if units == "variance" else units


def number_format(units: str) -> str:
    """A d3 format for values in ``units``: 4 significant digits, thousands grouped, for a
    variance (which can be large or small), 4 decimals for bits and Gini units."""
    return ",.4r" if str(units).startswith("variance") else ".4f"


def hover_format(units: str) -> str:
    """The hover's d3 format: 6 decimals for bits and Gini units, 4 significant digits for a
    variance."""
    return ",.4r" if str(units).startswith("variance") else ".6f"


def fmt_number(value: float, units: str, sign: bool = False) -> str:
    """``value`` in 4 decimals (bits, Gini units), or for a variance in 4 significant digits
    with thousands grouped (``"746,100"``, ``"0.01235"``)."""
    value = float(value)
    plus = "+" if sign else ""
    if not str(units).startswith("variance"):
        return format(value, plus + ".4f")
    if value == 0 or not np.isfinite(value):
        return format(value, plus + "g")
    digits = 3 - int(np.floor(np.log10(abs(value))))
    return format(round(value, digits), f"{plus},.{max(digits, 0)}f")


def verdict_label(verdict: str, n_samples: int | None = None) -> str:
    """The text on a bar: ``"relevant"``, ``"chance"`` or ``"undecided"``."""
    return verdict


def method_label(result: ImportanceResult) -> str:
    """Short description of how a result was obtained, e.g. ``"multiway forest, T = 100"``.

    Parameters
    ----------
    result : ImportanceResult

    Returns
    -------
    label : str
        The method's name, followed by the number of trees for a sampled result.
    """
    name = _METHOD_NAMES.get(result.method, result.method)
    if result.exact or result.method in EXACT_METHODS:
        return name
    n_trees = result.parameters.get("n_estimators")
    if n_trees is None and result.per_tree is not None:
        n_trees = result.per_tree.shape[0]
    return f"{name}, T = {int(n_trees):,}" if n_trees else name


def _is_exact(result: ImportanceResult) -> bool:
    """Infinite-ensemble value (possibly on a sample's empirical distribution)."""
    return result.method in EXACT_METHODS


def _badge(fig: go.Figure, text: str, color: str) -> None:
    fig.add_annotation(text=text, xref="paper", yref="paper", x=1, y=1, xanchor="right",
                       yanchor="bottom", showarrow=False, font=dict(color="#ffffff", size=12),
                       bgcolor=color, borderpad=4)


#: What the whiskers of sampled bars show (``spread`` of :func:`make_importance_figure`).
SPREADS = ("se", "trees")
#: The order of the bars (``order`` of :func:`make_importance_figure`).
ORDERS = ("columns", "importance")


@user_text_safe
def make_importance_figure(result: ImportanceResult, exact: ImportanceResult | None = None, *,
                           max_bars: int = 50, height: int = 440, spread: str = "se",
                           chance: ChanceLevels | None = None,
                           verdicts: VerdictResult | None = None, show: str = "above",
                           moments=None, n_trees: int | None = None, level: float = 0.95,
                           order: str = "columns") -> go.Figure:
    """Bar chart of MDI importances, one bar per variable in the variable's colour.

    Parameters
    ----------
    result : ImportanceResult
        The values drawn as bars.  When it is sampled (``per_tree`` present),
        the bars carry error bars of one Monte Carlo standard error
        (per-tree standard deviation divided by :math:`\\sqrt{T}`).
    exact : ImportanceResult, default=None
        Infinite-ensemble values drawn over the bars as black diamonds, with
        the same variables in the same order.
    max_bars : int, default=50
        With more variables than this, only the ``max_bars`` largest
        importances are drawn, largest first (a note says so), whatever ``order``.
    height : int, default=440
        Figure height in pixels.
    spread : {"se", "trees"}, default="se"
        ``"trees"`` adds a thin box of the per-tree values (minimum, quartiles,
        maximum).  Single trees vary far more than their mean (by a factor
        :math:`\\sqrt{T}`), so that box can dwarf the bars; the standard error
        alone never does for a forest of many trees.
    chance : ChanceLevels, default=None
        Chance levels of the same variables
        (:func:`varimp_core.studies.chance.chance_levels`): the analytic level
        as a red dash on each bar, the permutation null's middle 95% as a grey
        whisker beside it.
    verdicts : VerdictResult, default=None
        One verdict per variable on a sample
        (:func:`varimp_core.studies.verdicts.importance_verdicts`): each bar carries its
        verdict as text and is drawn by it (full colour: relevant; grey: chance; pale:
        undecided), with a legend entry per verdict.
    show : {"above", "plugin"}, default="above"
        With ``verdicts``: ``"above"`` draws the importance above chance (plug-in minus
        the mean of the variable's permutation null, noise centred on 0); ``"plugin"``
        draws the plug-in values, biased upwards on a sample, with the null mean as a
        dash on each bar.  The exact diamonds are plug-in values: drawn with ``"plugin"``
        only.
    moments : ImportanceMoments, optional
        The exact mean and per-tree covariance of an exact ``result``
        (:func:`~varimp_core.exact.moments.exact_moments`); with ``n_trees``,
        the exact bars carry whiskers of half-width
        :math:`z_{(1+\\text{level})/2}\\sqrt{\\Sigma_{jj}/T}`, where a forest of
        T trees (bootstrap off) falls with probability ``level``.
    n_trees : int, optional
        T of those whiskers.
    level : float, default=0.95
    order : {"columns", "importance"}, default="columns"
        ``"columns"`` keeps the variables' order (the papers' tables list X1..Xp);
        ``"importance"`` draws the largest value shown first (ties keep column order).
        Each bar keeps its variable's colour (:func:`~varimp_core.plots.style.variable_color`)
        up to :data:`~varimp_core.plots.style.N_VARIABLE_COLORS` variables; with more, every
        bar is one slate colour, since a repeated colour would pair two variables.

    Returns
    -------
    fig : go.Figure
        Trace 0 is the bars (``y`` equals ``result.importances``, for the
        variables drawn), named with what its whiskers are; then the per-tree
        box when asked; the exact diamonds (``y`` equals
        ``exact.importances``); then the chance dashes and the null band.

    Raises
    ------
    ValueError
        When ``exact`` does not have the same variables as ``result``, or
        ``spread`` is not one of :data:`SPREADS`, or ``order`` not one of :data:`ORDERS`.

    Notes
    -----
    The values are unnormalised MDI, :math:`\\sum_t p(t)\\,\\Delta i(s_t, t)`
    averaged over trees, in bits for the entropy criterion; scikit-learn's
    ``feature_importances_`` divides them by their sum.
    """
    for other in (exact, chance, verdicts):
        if other is not None and tuple(other.variables) != tuple(result.variables):
            raise ValueError("The exact values, chance levels and verdicts must have the same "
                             "variables as the result.")
    if show not in SHOWS:
        raise ValueError(f"The bars show 'above' (above chance) or 'plugin', not {show!r}.")
    above = verdicts is not None and show == "above"
    if spread not in SPREADS:
        raise ValueError(f"The whiskers show 'se' (standard error) or 'trees' (per-tree "
                         f"spread), not {spread!r}.")
    if order not in ORDERS:
        raise ValueError(f"The bars are in 'columns' or 'importance' order, not {order!r}.")
    p = result.n_features
    idx = np.arange(p)
    every = verdicts.above_chance if above else result.importances
    if p > max_bars or order == "importance":
        idx = np.argsort(-every, kind="stable")[:max_bars]
    variables = [result.variables[i] for i in idx]
    units = units_label(result)
    fmt = hover_format(units)
    colors = [variable_color(i) if p <= N_VARIABLE_COLORS else MANY_VARIABLES_COLOR
              for i in idx]
    values = every[idx]
    share = result.normalised[idx]
    sem = result.importances_sem
    sem = None if sem is None else sem[idx]
    sampled = not _is_exact(result)
    forest_t = n_trees
    n_trees = None if result.per_tree is None else result.per_tree.shape[0]
    half = None
    if moments is not None and forest_t is not None and not sampled:
        if tuple(moments.variables) != tuple(result.variables):
            raise ValueError("The moments must have the same variables as the result.")
        half = moments.interval_half_widths(forest_t, level)[idx]

    what = "importance above chance" if above else (
        "plug-in importance" if verdicts is not None
        else f"{'sampled' if sampled else 'exact'} importance")
    lines = [f"<b>%{{x}}</b><br>{what} = %{{y:{fmt}}} " + units,
             "share of the sum = %{customdata[0]:.2%}"]
    custom = [[s] for s in share]
    if sem is not None:
        lines.insert(1, f"standard error = %{{customdata[1]:{fmt}}} {units} (T = {n_trees:,})")
        custom = [[s, e] for s, e in zip(share, sem)]
    elif half is not None:
        lines.insert(1, f"a forest of T = {forest_t:,} trees: \u00b1%{{customdata[1]:{fmt}}} "
                     f"{units} ({level:.0%})")
        custom = [[s, e] for s, e in zip(share, half)]
    opacity = SAMPLED_OPACITY if sampled else 1.0
    text = None
    if verdicts is not None:
        verdict = [verdicts.verdicts[i] for i in idx]
        text = [verdict_label(v) for v in verdict]
        opacity = [VERDICT_STYLE[v][1] * (SAMPLED_OPACITY if sampled else 1.0) for v in verdict]
        colors = [_CHANCE_GREY if VERDICT_STYLE[v][2] else c for v, c in zip(verdict, colors)]
        width = len(custom[0])
        custom = [[*c, v, verdicts.reasons[i]] for c, v, i in zip(custom, verdict, idx)]
        lines += [f"verdict: %{{customdata[{width}]}} (%{{customdata[{width + 1}]}})"]
    fig = go.Figure()
    fig.add_trace(go.Bar(
        x=variables, y=values,
        name=(method_label(result) + (", above chance" if above else
                                      ", plug-in (biased on a sample)" if verdicts is not None
                                      else "")
              + ("" if sem is None else ", whiskers \u00b11 standard error")
              + ("" if half is None else f",<br>whiskers: {level:.0%} of forests of "
                 f"T = {forest_t:,} trees")),
        marker=dict(color=colors, opacity=opacity,
                    line=dict(color=colors, width=1.5),
                    pattern=dict(shape="/" if sampled else "", fillmode="overlay",
                                 fgcolor="#ffffff", fgopacity=0.45, size=8)),
        text=text, textposition="outside" if text else None, cliponaxis=False,
        textfont=dict(size=12, color="#222222"),
        error_y=dict(type="data", array=sem if sem is not None else half, visible=True,
                     color="#333333", thickness=1.5, width=6)
        if sem is not None or half is not None else None,
        customdata=custom, hovertemplate="<br>".join(lines) + "<extra></extra>",
    ))
    quartiles = result.per_tree_quartiles if spread == "trees" else None
    if quartiles is not None:
        stats = dict(zip(("lowerfence", "q1", "median", "q3", "upperfence"), quartiles[:, idx]))
        fig.add_trace(go.Box(
            x=variables, name=f"per-tree spread (T = {n_trees:,}): min, quartiles, max",
            width=0.18,
            fillcolor="rgba(255,255,255,0)", line=dict(color="#555555", width=1),
            boxpoints=False, hoverinfo="x+y", **stats,
        ))
    if exact is not None and not above:
        exact_values = exact.importances[idx]
        fig.add_trace(go.Scatter(
            x=variables, y=exact_values, mode="markers", name=method_label(exact),
            marker=dict(symbol="diamond", size=13, color=EXACT_COLOR,
                        line=dict(color="#ffffff", width=1.5)),
            customdata=np.column_stack([exact_values - values]),
            hovertemplate=(f"<b>%{{x}}</b><br>exact importance = %{{y:{fmt}}} " + units
                           + f"<br>bar \u2212 exact = %{{customdata[0]:+{fmt}}} " + units
                           + "<extra></extra>"),
        ))
    if chance is not None:
        _add_chance(fig, chance, idx, variables, units)
    if verdicts is not None:
        _add_verdicts(fig, verdicts, idx, variables, units, above)
    base_layout(fig, height=height)
    fig.update_layout(barmode="overlay", boxmode="overlay", bargap=0.35, showlegend=True)
    title = "Variable, largest first" if order == "importance" else "Variable"
    if p > max_bars:
        title = f"The {max_bars} largest of {p} variables, largest first"
    fig.update_xaxes(title_text=title, type="category")
    ytitle = f"MDI importance ({units})"
    if verdicts is not None:
        ytitle = (f"Importance above chance ({units})" if above
                  else f"Plug-in MDI ({units}), biased up on a sample")
    fig.update_yaxes(title_text=ytitle, rangemode="tozero",
                     zeroline=True, zerolinecolor="#888888")
    if sampled:
        _badge(fig, "sampled" + (" + exact \u25c6" if exact is not None else ""), _SAMPLED_BADGE)
    else:
        _badge(fig, "exact", _EXACT_BADGE)
    return fig


def _add_verdicts(fig: go.Figure, verdicts: VerdictResult, idx, variables, units: str,
                  above: bool) -> None:
    """A legend entry per verdict present; on plug-in bars, the null mean as a dash."""
    fmt = hover_format(units)
    if not above:
        fig.add_trace(go.Scatter(
            x=variables, y=verdicts.null_mean[idx], mode="markers",
            name=(f"chance level: mean of {verdicts.procedure.get('n_permutations', 0)} "
                  "label permutations"),
            marker=dict(symbol="line-ew", size=30, color=CHANCE_COLOR,
                        line=dict(color=CHANCE_COLOR, width=3)),
            hovertemplate=f"<b>%{{x}}</b><br>chance level = %{{y:{fmt}}} {units}<extra></extra>"))
    present = {verdicts.verdicts[i] for i in idx}
    for verdict in (v for v in VERDICT_STYLE if v in present):
        text, opacity, grey = VERDICT_STYLE[verdict]
        if verdict == "relevant" and verdicts.procedure.get("level") is not None:
            text = text.replace("alpha", f"{verdicts.procedure['level']:g}")
        fig.add_trace(go.Bar(x=[None], y=[None], name=text, hoverinfo="skip",
                             marker=dict(color=_CHANCE_GREY if grey else "#4a6fa5",
                                         opacity=opacity)))


def _add_chance(fig: go.Figure, chance: ChanceLevels, idx, variables, units: str) -> None:
    """The analytic chance level as a red dash, the permutation band as a grey whisker."""
    if chance.analytic is not None:
        fig.add_trace(go.Scatter(
            x=variables, y=chance.analytic[idx], mode="markers",
            name="chance level of an irrelevant variable (analytic)",
            marker=dict(symbol="line-ew", size=34, color=CHANCE_COLOR,
                        line=dict(color=CHANCE_COLOR, width=3)),
            hovertemplate=f"<b>%{{x}}</b><br>chance level = %{{y:.6f}} {units}<extra></extra>"))
    band = chance.band
    if band is not None:
        low, high = band[0][idx], band[1][idx]
        p_values = chance.p_values[idx]
        fig.add_trace(go.Scatter(
            x=variables, y=high, mode="markers",
            name=f"permutation null, middle 95% (R = {chance.n_permutations})",
            marker=dict(symbol="line-ew", size=14, color=BAND_COLOR,
                        line=dict(color=BAND_COLOR, width=2)),
            error_y=dict(type="data", symmetric=False, array=np.zeros_like(high),
                         arrayminus=high - low, color=BAND_COLOR, thickness=5, width=0),
            customdata=np.column_stack([low, p_values]),
            hovertemplate=(f"<b>%{{x}}</b><br>null 2.5% to 97.5% = %{{customdata[0]:.6f}} to "
                           f"%{{y:.6f}} {units}<br>p-value = %{{customdata[1]:.3f}}"
                           "<extra></extra>")))


@user_text_safe
def make_theorem2_figure(result: ImportanceResult, *, height: int = 170) -> go.Figure:
    """Theorem 2 at a glance: the importances stacked, against :math:`I(X_1..X_p;Y)`.

    Parameters
    ----------
    result : ImportanceResult
        Its ``importances`` are stacked left to right in variable colours;
        ``information`` (when known) is drawn as a black vertical line.
    height : int, default=170

    Returns
    -------
    fig : go.Figure
        One horizontal bar per variable (``x`` is its importance); the line
        of :math:`I(X;Y)` is a layout shape at ``x = result.information``.

    Notes
    -----
    Theorem 2 of Louppe et al. (2013): for fully grown totally randomized
    trees on an infinite sample, :math:`\\sum_m \\mathrm{Imp}(X_m) = I(X_1, \\dots, X_p; Y)`.
    The exact recursion keeps the identity for every K at full depth; depth
    limits (Proposition 6) and finite forests of binary trees do not.
    """
    units = units_label(result)
    fig = go.Figure()
    for i, (name, value) in enumerate(zip(result.variables, result.importances)):
        fig.add_trace(go.Bar(
            x=[value], y=["sum"], orientation="h", name=name, showlegend=False,
            marker=dict(color=variable_color(i), line=dict(color="#ffffff", width=1)),
            hovertemplate=f"<b>{name}</b><br>%{{x:{hover_format(units)}}} {units}<extra></extra>",
        ))
    total = result.total
    top = total
    if result.information is not None:
        info = float(result.information)
        top = max(total, info)
        fig.add_shape(type="line", x0=info, x1=info, y0=-0.5, y1=0.5, yref="y",
                      line=dict(color=EXACT_COLOR, width=3))
        name = "Var(Y) \u2212 E Var(Y|X)" if units == "variance of Y" else "I(X;Y)"
        fig.add_annotation(x=info, y=0.5, yref="y", text=f"{name} = {fmt_number(info, units)} {units}",
                           showarrow=False, yanchor="bottom", xanchor="right",  # ends at
                           font=dict(size=12))                  # its line, inside the figure
    base_layout(fig, height=height)
    fig.update_layout(barmode="stack", margin=dict(l=50, r=20, t=30, b=45))
    fig.update_xaxes(title_text=f"Sum of importances = {fmt_number(total, units)} {units}",
                     range=[0, top * 1.05 if top > 0 else 1])
    fig.update_yaxes(showticklabels=False)
    return fig
