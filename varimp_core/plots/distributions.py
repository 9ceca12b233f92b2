"""Importances over many data sets: histograms with fitted laws, sweeps, the thesis' tables.

Sutera (2013, ch. 3) grows a forest on each of a thousand data sets and looks
at every variable's importance as a random variable: its histogram against
the asymptotic value, its mean and standard deviation (Tables 3.2-3.33), and
how these move with the number of trees T, the sample size N, the noise ...
These builders draw the numbers of :func:`varimp_core.studies.montecarlo.monte_carlo`
(or of :func:`varimp_core.studies.nulls.permutation_null`) and of
:func:`varimp_core.studies.montecarlo.sweep`, and the bins and fitted densities of
:func:`varimp_core.studies.distributions.histogram_panels`; nothing is computed here.

Every trace carries a ``meta`` tag saying what it draws: ``"replicates"``
(the histogram or violin of a variable's R values), ``"fit-chi2"`` and
``"fit-normal"`` (fitted densities), ``"exact"`` (the exact value, or the
observed value for a permutation null), ``"bias"`` (the plug-in bias
prediction for an irrelevant variable), and in sweeps ``"mean"``, ``"std"``,
``"stability"`` and ``"reference"``.  Values are plain lists, not numpy arrays, so
the browser gets numbers rather than plotly's base64 typed arrays.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from varimp_core.studies.distributions import MAX_VIOLINS, HistogramPanels
from varimp_core.studies.montecarlo import MonteCarloResult, parameter_label
from varimp_core.studies.nulls import PermutationNull
from varimp_core.plots.style import (EXACT_COLOR, SAMPLED_OPACITY, base_layout, empty_figure,
                                     variable_color)
from varimp_core.plots.style import user_text_safe

__all__ = ["make_distribution_figure", "make_sweep_figure", "make_summary_table_frame"]

_FIT_STYLE = {
    "chi2": dict(color="#3b3b3b", dash="dash", name="scaled \u03c7\u00b2 fit"),
    "normal": dict(color="#7a7a7a", dash="solid", name="normal fit"),
}
_BIAS_COLOR = "#B2182B"
_REFERENCE_COLOR = "#888888"
_SYMBOLS = {"n_samples": "N", "n_estimators": "T"}


# -- what a result holds ---------------------------------------------------------
def _units(result) -> str:
    criterion = (getattr(result, "parameters", None) or {}).get("criterion", "entropy")
    return "bits" if criterion in (None, "entropy") else criterion


def _relevance(result) -> list:
    relevant = getattr(result, "relevant", None)
    if relevant is None:
        return [None] * len(result.variables)
    return [v in relevant for v in result.variables]


def _samples(result) -> tuple[np.ndarray, np.ndarray | None, str]:
    """(values of shape (R, p), reference values or None, name of the reference)."""
    if isinstance(result, PermutationNull):
        return np.asarray(result.null, float), np.asarray(result.observed, float), "observed"
    if not isinstance(result, MonteCarloResult):
        raise ValueError(f"Expected a MonteCarloResult or a PermutationNull, got "
                         f"{type(result).__name__}.")
    reference = None if result.exact is None else np.asarray(result.exact, float)
    name = "full-sample value" if result.exact_source == "full sample" else "exact value"
    return np.asarray(result.replicates, float), reference, name


def _bias_positions(result, overlay: pd.DataFrame | None) -> dict:
    """``{variable: x}`` of the plug-in bias prediction, for known irrelevant variables."""
    if isinstance(result, PermutationNull) or overlay is None:
        return {}
    shift = {}
    if result.exact_source == "full sample" and result.exact is not None:
        # the table's own plug-in value already holds its bias (nulls.plugin_bias_overlay)
        shift = dict(zip(result.variables, np.asarray(result.exact, float)))
    out = {}
    for _, row in overlay.iterrows():
        expected = row.get("expected")
        relevant = row.get("relevant")
        known_irrelevant = relevant is not None and not pd.isna(relevant) and not bool(relevant)
        if known_irrelevant and expected is not None and np.isfinite(expected):
            out[row["variable"]] = float(expected) + float(shift.get(row["variable"], 0.0))
    return out


# -- histograms and violins --------------------------------------------------------
@user_text_safe
def make_distribution_figure(mc_result, panels: HistogramPanels | None = None, *,
                             overlay: pd.DataFrame | None = None, kind: str = "histogram",
                             height: int | None = None, title: str | None = None) -> go.Figure:
    """Distribution of each variable's importance over the replicates.

    Parameters
    ----------
    mc_result : MonteCarloResult or PermutationNull
        From :func:`~varimp_core.studies.montecarlo.monte_carlo` (the replicates, the
        exact values) or :func:`~varimp_core.studies.nulls.permutation_null` (the null
        importances, the observed values).
    panels : HistogramPanels
        :func:`~varimp_core.studies.distributions.histogram_panels` of the result:
        one panel per variable it bins (the first ones), with its bins and its
        fitted densities (``meta="fit-chi2"``, ``"fit-normal"``).  Needed by
        the histograms, not by the violins.
    overlay : DataFrame, optional
        :func:`~varimp_core.studies.nulls.plugin_bias_overlay` of the result; None
        draws no bias line.  Its
        ``expected`` column is drawn, for known irrelevant variables, as a
        dotted vertical line (shifted by the full-sample value for bootstrap
        replicates, as the overlay's docstring explains).
    kind : {"histogram", "violin"}, default="histogram"
        One panel per variable of ``panels`` with density histograms and
        fitted curves, or one violin per variable on a common axis (at most
        :data:`~varimp_core.studies.distributions.MAX_VIOLINS`; no fitted curves).
    height : int, optional
    title : str, optional

    Returns
    -------
    go.Figure
        Histogram traces (``meta="replicates"``, ``x`` = the replicates of
        one variable, ``histnorm="probability density"``) or violin traces
        (``y`` = the replicates); ``meta="exact"`` traces at the exact (or
        observed) values: vertical lines with ``x = [value, value]`` in
        histograms, one marker trace with ``x`` = variables and ``y`` = values
        in violins; ``meta="fit-chi2"``/``"fit-normal"`` curves and
        ``meta="bias"`` lines.
    """
    if kind not in ("histogram", "violin"):
        raise ValueError(f"kind must be 'histogram' or 'violin', got {kind!r}.")
    if kind == "histogram" and panels is None:
        raise ValueError("Histograms draw the core's bins: pass histogram_panels(result, fits) "
                         "(varimp_core.studies.distributions).")
    values, reference, ref_name = _samples(mc_result)
    variables = list(mc_result.variables)
    units = _units(mc_result)
    if values.shape[0] == 0:
        return empty_figure("No replicate finished; nothing to draw yet.", height or 300)
    bias = _bias_positions(mc_result, overlay)
    relevance = _relevance(mc_result)
    if kind == "violin":
        return _violins(values, variables, reference, ref_name, bias, relevance, units,
                        height=height, title=title)
    return _histograms(values, variables, reference, ref_name, panels, bias, relevance, units,
                       height=height, title=title)


def _panel_title(v: str, relevant) -> str:
    return v if relevant is None else f"{v} \u00b7 {'relevant' if relevant else 'irrelevant'}"


def _histograms(values, variables, reference, ref_name, panels, bias, relevance, units, *,
                height, title) -> go.Figure:
    shown = panels.variables
    n = len(shown)
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig = make_subplots(rows=rows, cols=cols,
                        subplot_titles=[_panel_title(v, relevance[i]) for i, v in enumerate(shown)],
                        horizontal_spacing=0.07 if cols > 1 else 0.0,
                        vertical_spacing=min(0.16, 0.5 / rows) if rows > 1 else 0.0)
    curves = panels.curves
    legend_done: set[str] = set()

    def legend(key: str) -> bool:
        first = key not in legend_done
        legend_done.add(key)
        return first

    R = values.shape[0]
    for i, v in enumerate(shown):
        j = variables.index(v)
        row, col = i // cols + 1, i % cols + 1
        fig.add_trace(go.Histogram(
            x=values[:, j].tolist(), name=v, meta="replicates", showlegend=False,
            xbins=panels.xbins(v),
            histnorm="probability density", marker=dict(color=variable_color(j)),
            opacity=SAMPLED_OPACITY,
            hovertemplate=(f"<b>{v}</b><br>importance %{{x}}<br>density %{{y:.3g}}"
                           f"<extra>{R:,} replicates</extra>"),
        ), row=row, col=col)
        for dist, d in curves[curves["variable"] == v].groupby("distribution", sort=False):
            style = _FIT_STYLE.get(dist, _FIT_STYLE["normal"])
            fig.add_trace(go.Scatter(
                x=d["x"].tolist(), y=d["density"].tolist(), mode="lines",
                name=style["name"], legendgroup=f"fit-{dist}", meta=f"fit-{dist}",
                showlegend=legend(f"fit-{dist}"),
                line=dict(color=style["color"], dash=style["dash"], width=2),
                hovertemplate=(f"<b>{v}</b>, {style['name']}<br>importance %{{x:.4f}}<br>"
                               "density %{y:.3g}<extra></extra>"),
            ), row=row, col=col)
        top = panels.peak(v) * 1.08  # the lines reach a little above the tallest bar or curve
        if reference is not None and np.isfinite(reference[j]):
            e = float(reference[j])
            fig.add_trace(go.Scatter(
                x=[e, e], y=[0.0, top], mode="lines", name=ref_name, legendgroup="exact",
                meta="exact", showlegend=legend("exact"),
                line=dict(color=EXACT_COLOR, width=2.5),
                hovertemplate=f"<b>{v}</b>, {ref_name}<br>{e:.6f} {units}<extra></extra>",
            ), row=row, col=col)
        if v in bias:
            b = bias[v]
            fig.add_trace(go.Scatter(
                x=[b, b], y=[0.0, top], mode="lines", name="plug-in bias prediction",
                legendgroup="bias", meta="bias", showlegend=legend("bias"),
                line=dict(color=_BIAS_COLOR, width=2, dash="dot"),
                hovertemplate=(f"<b>{v}</b>: expected importance of an irrelevant variable "
                               f"from the plug-in bias<br>{b:.6f} {units}<extra></extra>"),
            ), row=row, col=col)
    base_layout(fig, title=title, height=height or max(300, 240 * rows + 90))
    fig.update_layout(bargap=0.04, hovermode="closest",
                      margin=dict(l=60, r=20, t=70 if title else 60, b=55),
                      legend=dict(orientation="h", x=0, xanchor="left", y=0.995,
                                  yanchor="top", yref="container"))
    fig.update_xaxes(tickformat=".3~g", nticks=5)
    fig.update_yaxes(rangemode="tozero", nticks=4)
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text=f"importance ({units})", row=rows, col=c)
    for r in range(1, rows + 1):
        fig.update_yaxes(title_text="density", row=r, col=1)
    fig.update_annotations(font_size=13)
    return fig


def _violins(values, variables, reference, ref_name, bias, relevance, units, *, height,
             title) -> go.Figure:
    shown = variables[:MAX_VIOLINS]
    fig = go.Figure()
    R = values.shape[0]
    for v in shown:
        j = variables.index(v)
        fig.add_trace(go.Violin(
            y=values[:, j].tolist(), x0=v, name=v, meta="replicates", showlegend=False,
            line=dict(color=variable_color(j)), fillcolor=variable_color(j),
            opacity=SAMPLED_OPACITY, box=dict(visible=True), meanline=dict(visible=True),
            points=False, spanmode="hard", scalemode="width",
            hoveron="violins+kde",
            hovertemplate=f"<b>{v}</b><br>%{{y:.4f}} {units}<extra>{R:,} replicates</extra>",
        ))
    if reference is not None:
        keep = [v for v in shown if np.isfinite(reference[variables.index(v)])]
        fig.add_trace(go.Scatter(
            x=keep, y=[float(reference[variables.index(v)]) for v in keep], mode="markers",
            name=ref_name, meta="exact",
            marker=dict(symbol="diamond", size=11, color=EXACT_COLOR,
                        line=dict(color="#ffffff", width=1)),
            hovertemplate=f"<b>%{{x}}</b>, {ref_name}<br>%{{y:.6f}} {units}<extra></extra>",
        ))
    marked = [v for v in shown if v in bias]
    if marked:
        fig.add_trace(go.Scatter(
            x=marked, y=[bias[v] for v in marked], mode="markers",
            name="plug-in bias prediction", meta="bias",
            marker=dict(symbol="x-thin", size=12, color=_BIAS_COLOR, line=dict(width=2.5,
                                                                               color=_BIAS_COLOR)),
            hovertemplate=(f"<b>%{{x}}</b>: expected importance if irrelevant (plug-in bias)"
                           f"<br>%{{y:.6f}} {units}<extra></extra>"),
        ))
    base_layout(fig, title=title, height=height or 460)
    fig.update_layout(violinmode="overlay", violingap=0.25, hovermode="closest")
    fig.update_yaxes(title_text=f"importance ({units})", rangemode="tozero")
    fig.update_xaxes(title_text="variable", type="category",
                     ticktext=[_panel_title(v, relevance[variables.index(v)]).replace(
                         " \u00b7 ", "<br>") for v in shown],
                     tickvals=shown)
    return fig


# -- the thesis' table ------------------------------------------------------------
def make_summary_table_frame(mc_result, *, decimals: int = 4) -> pd.DataFrame:
    """Mean ± standard deviation per variable, as in Sutera (2013), Tables 3.2-3.33.

    Parameters
    ----------
    mc_result : MonteCarloResult or PermutationNull
    decimals : int, default=4
        Digits of the ``"mean ± std"`` text (the thesis prints four); the
        numeric columns keep the core's values unrounded.

    Returns
    -------
    DataFrame
        For a Monte Carlo result, one row per variable: ``variable``,
        ``relevance`` ("relevant", "irrelevant" or "" when unknown), ``mean``,
        ``std`` (ddof=1, the thesis' "standard deviation"), ``mean ± std``,
        ``sem`` (std/√R), ``exact``, ``mean − exact`` and ``R``.  For a
        permutation null: ``variable``, ``observed``, ``null mean``,
        ``null std``, ``null mean ± std``, ``null q95``, ``p-value`` and ``R``.
    """
    def pm(m, s):
        if not np.isfinite(m):
            return ""
        return f"{m:.{decimals}f} \u00b1 {s:.{decimals}f}" if np.isfinite(s) else \
            f"{m:.{decimals}f}"

    if isinstance(mc_result, PermutationNull):
        s = mc_result.summary()
        return pd.DataFrame({
            "variable": s["variable"], "observed": s["observed"], "null mean": s["mean"],
            "null std": s["std"],
            "null mean \u00b1 std": [pm(m, sd) for m, sd in zip(s["mean"], s["std"])],
            "null q95": s["q95"], "p-value": s["p_value"], "R": s["R"],
        })
    s = mc_result.summary()
    relevance = ["" if r is None else ("relevant" if r else "irrelevant")
                 for r in _relevance(mc_result)]
    return pd.DataFrame({
        "variable": s["variable"], "relevance": relevance, "mean": s["mean"], "std": s["std"],
        "mean \u00b1 std": [pm(m, sd) for m, sd in zip(s["mean"], s["std"])],
        "sem": s["sem"], "exact": s["exact"], "mean \u2212 exact": s["mean"] - s["exact"],
        "R": s["n_replicates"],
    })


# -- sweeps ---------------------------------------------------------------------
@user_text_safe
def make_sweep_figure(df: pd.DataFrame, parameter: str, log_x: bool = False, *,
                      height: int | None = None, title: str | None = None) -> go.Figure:
    """Mean ± std, std and rank stability of every variable against a swept parameter.

    Parameters
    ----------
    df : DataFrame
        :func:`~varimp_core.studies.montecarlo.sweep_statistics` of a sweep (or
        the summary frame of ``sweep(..., replicates=False)``, which has the
        same columns but ``stability``).
    parameter : str
        The swept parameter (``"n_estimators"``, ``"n_samples"``, ``"noise"`` ...).
    log_x : bool, default=False
        Logarithmic x axes.  For T and N the standard deviation panel then
        has a logarithmic y axis too, where the reference
        :math:`\\propto 1/\\sqrt{T}` (or :math:`1/\\sqrt{N}`) is a straight line:
        the tree part :math:`b/T` of :math:`\\mathrm{Var} = a + b/T`
        (Sutera 2013, eq. 3.23) falls that way, the data-set part :math:`a`
        does not.
    height : int, optional
    title : str, optional

    Returns
    -------
    go.Figure
        Row 1: ``meta="mean"`` lines with ``error_y`` = std, ``meta="exact"``
        dashed lines; row 2: ``meta="std"`` lines and, for T or N, one
        ``meta="reference"`` line through the largest first standard
        deviation; row 3 (when replicates are available): ``meta="stability"``.
    """
    if "importance" in df.columns:
        raise ValueError("make_sweep_figure draws sweep statistics: pass "
                         "sweep_statistics(df) (varimp_core.studies.montecarlo), not the "
                         "per-replicate sweep.")
    stats = df if "stability" in df.columns else df.assign(stability=np.nan)
    if stats.empty:
        return empty_figure("The sweep has no finished value yet.", height or 300)
    has_stability = bool(np.isfinite(stats["stability"].to_numpy(float)).any())
    n_rows = 3 if has_stability else 2
    titles = ["mean importance \u00b1 standard deviation", "standard deviation over data sets"]
    if has_stability:
        titles.append("rank stability (share of replicates<br>at the variable's reference rank)")
    fig = make_subplots(rows=n_rows, cols=1, shared_xaxes=True, vertical_spacing=0.09,
                        subplot_titles=titles)
    variables = list(dict.fromkeys(stats["variable"]))
    label = parameter_label(parameter)
    symbol = _SYMBOLS.get(parameter, parameter)
    for j, v in enumerate(variables):
        d = stats[stats["variable"] == v].sort_values("value")
        x = d["value"].tolist()
        color = variable_color(j)
        fig.add_trace(go.Scatter(
            x=x, y=d["mean"].tolist(), mode="lines+markers", name=v, legendgroup=v, meta="mean",
            line=dict(color=color, width=2), marker=dict(color=color, size=7),
            error_y=dict(type="data", array=d["std"].fillna(0).tolist(), visible=True,
                         color=color, thickness=1.2, width=4),
            customdata=np.column_stack([d["std"].to_numpy(float),
                                        d["n_replicates"].to_numpy(float)]).tolist(),
            hovertemplate=(f"<b>{v}</b>, {symbol} = %{{x}}<br>mean %{{y:.4f}} \u00b1 "
                           "%{customdata[0]:.4f}<br>%{customdata[1]:,} replicates"
                           "<extra></extra>"),
        ), row=1, col=1)
        if np.isfinite(d["exact"].to_numpy(float)).any():
            fig.add_trace(go.Scatter(
                x=x, y=d["exact"].tolist(), mode="lines", name=f"{v} exact", legendgroup=v,
                meta="exact", showlegend=False, line=dict(color=color, dash="dash", width=1.5),
                hovertemplate=f"<b>{v}</b>, {symbol} = %{{x}}<br>exact %{{y:.4f}}<extra></extra>",
            ), row=1, col=1)
        fig.add_trace(go.Scatter(
            x=x, y=d["std"].tolist(), mode="lines+markers", name=v, legendgroup=v, meta="std",
            showlegend=False, line=dict(color=color, width=2), marker=dict(color=color, size=7),
            hovertemplate=f"<b>{v}</b>, {symbol} = %{{x}}<br>std %{{y:.4f}}<extra></extra>",
        ), row=2, col=1)
        if has_stability:
            fig.add_trace(go.Scatter(
                x=x, y=d["stability"].tolist(), mode="lines+markers", name=v, legendgroup=v,
                meta="stability", showlegend=False, line=dict(color=color, width=2),
                marker=dict(color=color, size=7),
                hovertemplate=(f"<b>{v}</b>, {symbol} = %{{x}}<br>rank as in the reference in "
                               "%{y:.0%} of the replicates<extra></extra>"),
            ), row=3, col=1)
    log_y = False
    if parameter in _SYMBOLS:
        first = stats[stats["value"] == stats["value"].min()]
        anchor = first.loc[first["std"].idxmax()] if first["std"].notna().any() else None
        x0 = float(stats["value"].min())
        if anchor is not None and anchor["std"] > 0 and x0 > 0:
            xs = np.array(sorted(set(stats["value"].astype(float))))
            ref = float(anchor["std"]) * np.sqrt(x0 / xs)
            fig.add_trace(go.Scatter(
                x=xs.tolist(), y=ref.tolist(), mode="lines", name=f"\u221d 1/\u221a{symbol}",
                meta="reference", line=dict(color=_REFERENCE_COLOR, dash="dot", width=2),
                hovertemplate=(f"1/\u221a{symbol} through {anchor['variable']}'s first "
                               "value<br>%{y:.4f}<extra></extra>"),
            ), row=2, col=1)
            log_y = bool(log_x and (stats["std"] > 0).all())
    base_layout(fig, title=title, height=height or (260 * n_rows + 80))
    fig.update_layout(hovermode="closest", margin=dict(l=60, r=20, t=70 if title else 50, b=55),
                      legend=dict(orientation="v", x=1.02, xanchor="left", y=1.0,
                                  yanchor="top"))
    ticks = sorted(set(stats["value"].tolist()))
    fig.update_xaxes(type="log" if log_x else None, showticklabels=True,
                     tickvals=ticks if len(ticks) <= 12 else None)
    fig.update_xaxes(title_text=label, row=n_rows, col=1)
    fig.update_yaxes(title_text="importance", row=1, col=1, rangemode="tozero")
    fig.update_yaxes(title_text="std", row=2, col=1, type="log" if log_y else None,
                     rangemode=None if log_y else "tozero")
    if has_stability:
        fig.update_yaxes(title_text="share", row=3, col=1, range=[-0.03, 1.03],
                         tickformat=".0%")
    fig.update_annotations(font_size=13)
    return fig
