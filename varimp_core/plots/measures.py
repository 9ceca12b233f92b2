"""Figures comparing importance measures: side by side, AUC studies, MDI bias curves.

Pure functions from the core's results to plotly figures:

* :func:`make_measures_figure` -- several measures of one forest
  (:func:`varimp_core.measures.suite.compute_measures`) as grouped bars per
  variable, each measure scaled to its largest absolute value (or raw), the
  exact asymptotic MDI as black diamonds over the MDI bars;
* :func:`make_auc_figure` -- the AUC of each measure over repetitions
  (:func:`varimp_core.studies.noisy_protocol.noisy_feature_auc`) as box plots with
  every repetition drawn, and the values of Li et al. (2019), Table 1, marked;
* :func:`make_bias_curves` -- MDI and MDI-oob of each feature against the
  minimum leaf size and the maximum depth
  (:func:`varimp_core.studies.noisy_protocol.mdi_bias_curves`, Figs 1-3 of the paper).

Measures keep one colour each on every figure (:data:`MEASURE_COLORS`); the
variables of the bias curves keep their usual colours
(:func:`~varimp_core.plots.style.variable_color`).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from varimp_core.studies.noisy_protocol import DEPTH_SETTINGS, LI2019_TABLE1, StudyResult
from varimp_core.result import ImportanceResult
from varimp_core.plots.style import EXACT_COLOR, base_layout, empty_figure, variable_color
from varimp_core.plots.style import user_text_safe

__all__ = ["MEASURE_LABELS", "MEASURE_COLORS", "SCALES", "measure_label", "scale_values",
           "make_measures_figure", "make_auc_figure", "make_bias_curves"]

#: Short names of the measures of :data:`varimp_core.measures.suite.MEASURES`.
MEASURE_LABELS = {
    "mdi": "MDI",
    "mdi_normalised": "MDI, normalised",
    "mdi_oob": "MDI-oob",
    "mdi_in_sample": "MDI in-sample",
    "naive_oob": "naive-oob",
    "mda_holdout": "MDA, held out",
    "mda_oob": "MDA, out-of-bag",
    "ranger": "ranger (corrected)",
}
#: One colour per measure, the same on every figure: the variables' palette, whose colours
#: stay apart for colour-blind readers and can be read on white (:mod:`.style`), its most
#: distinct ones given to the measures shown by default.
MEASURE_COLORS = {m: variable_color(i) for m, i in (
    ("mdi", 0), ("mdi_oob", 1), ("naive_oob", 2), ("mda_holdout", 3), ("mda_oob", 5),
    ("ranger", 4), ("mdi_normalised", 6), ("mdi_in_sample", 8))}
#: ``"max"``: each measure divided by its largest absolute value; ``"raw"``: as computed.
SCALES = ("max", "raw")

_STUDY_TITLES = {"min_samples_leaf": "min leaf size", "max_depth": "max depth"}
_CHANCE_COLOR = "#888888"


def measure_label(measure: str) -> str:
    """Display name of a measure (``"mdi_oob"`` -> ``"MDI-oob"``); unknown names unchanged."""
    return MEASURE_LABELS.get(measure, measure)


def _color(measure: str, index: int = 0) -> str:
    return MEASURE_COLORS.get(measure, variable_color(index))


def scale_values(values, scale: str = "max") -> tuple[np.ndarray, float]:
    """Values on the chosen scale, and the factor they were divided by.

    Parameters
    ----------
    values : array-like of shape (n_features,)
    scale : {"max", "raw"}, default="max"
        ``"max"`` divides by :math:`\\max_k |v_k|` (left as is when all are 0),
        so every measure peaks at 1 (or -1) whatever its units.

    Returns
    -------
    scaled : ndarray of shape (n_features,)
    divisor : float
    """
    if scale not in SCALES:
        raise ValueError(f"scale={scale!r} is not allowed: use 'max' or 'raw'.")
    v = np.asarray(values, dtype=float)
    divisor = 1.0
    if scale == "max" and v.size:
        top = float(np.max(np.abs(v)))
        divisor = top if top > 0 else 1.0
    return v / divisor, divisor


def _check_results(results: Mapping[str, ImportanceResult]) -> tuple[str, ...]:
    if not isinstance(results, Mapping) or not results:
        raise ValueError("results must be a non-empty dict of measure name to ImportanceResult.")
    variables = None
    for name, r in results.items():
        if not isinstance(r, ImportanceResult):
            raise ValueError(f"results[{name!r}] is a {type(r).__name__}, not an ImportanceResult.")
        if variables is None:
            variables = r.variables
        elif r.variables != variables:
            raise ValueError(f"results[{name!r}] has other variables than the first measure.")
    return variables


@user_text_safe
def make_measures_figure(results: Mapping[str, ImportanceResult],
                         exact: ImportanceResult | None = None, *, scale: str = "max",
                         max_variables: int = 30, height: int = 460) -> go.Figure:
    """Several importance measures side by side: one group of bars per variable.

    Parameters
    ----------
    results : dict of str to ImportanceResult
        As returned by :func:`~varimp_core.measures.suite.compute_measures`: one
        entry per measure, all on the same variables, drawn in this order.
    exact : ImportanceResult, default=None
        Exact asymptotic MDI (infinite forest on the exact distribution) on
        the same variables, drawn as black diamonds over the ``mdi`` bars
        (over the middle of each group when ``mdi`` is not shown).
    scale : {"max", "raw"}, default="max"
        ``"max"``: each measure (and the exact values) divided by its largest
        absolute value, so measures in different units (gini, error rate,
        accuracy ...) share one axis; ``"raw"``: the values as computed.
    max_variables : int, default=30
        With more variables, only the ``max_variables`` with the largest mean
        scaled importance are drawn, largest first.
    height : int, default=460

    Returns
    -------
    fig : go.Figure
        One bar trace per measure (``legendgroup`` is the measure's name,
        ``y`` its scaled importances, ``customdata[:, 1]`` the raw ones), in
        the order of ``results``; the exact diamonds come last.  The x axis is
        numeric (group ``i`` centred on ``i``) with the variable names as
        tick labels; with ``scale="raw"`` the y axis names the results' units
        (the legend says whose).
    """
    variables = _check_results(results)
    if exact is not None and tuple(exact.variables) != tuple(variables):
        raise ValueError("The exact result must have the same variables as the measures.")
    names = list(results)
    p, m = len(variables), len(names)
    scaled = {n: scale_values(results[n].importances, scale) for n in names}
    idx = np.arange(p)
    if p > max_variables:
        ref = np.mean([np.abs(scale_values(results[n].importances, "max")[0]) for n in names],
                      axis=0)
        idx = np.argsort(-ref, kind="stable")[:max_variables]
    shown = [variables[i] for i in idx]
    group, width = 0.8, 0.8 / m
    offsets = {n: -group / 2 + width * (j + 0.5) for j, n in enumerate(names)}
    x0 = np.arange(len(idx), dtype=float)

    fig = go.Figure()
    for j, n in enumerate(names):
        r = results[n]
        values, divisor = scaled[n]
        sem = r.importances_sem
        units = r.units
        custom = np.empty((len(idx), 3), dtype=object)
        custom[:, 0] = shown
        custom[:, 1] = r.importances[idx]
        custom[:, 2] = np.nan if sem is None else sem[idx]
        lines = [f"<b>%{{customdata[0]}}</b> \u2014 {measure_label(n)}",
                 f"importance = %{{customdata[1]:.5g}} {units}"]
        if scale == "max":
            lines.append("scaled = %{y:.3f}")
        if sem is not None:
            lines.append(f"standard error = %{{customdata[2]:.3g}} {units}")
        label = measure_label(n) + (f" ({units})" if scale == "raw" else "")
        fig.add_trace(go.Bar(
            x=x0 + offsets[n], y=values[idx], width=width * 0.92, name=label,
            legendgroup=n, marker=dict(color=_color(n, j), line=dict(width=0)),
            error_y=None if sem is None else dict(type="data", array=sem[idx] / divisor,
                                                  visible=True, color="#444444",
                                                  thickness=1, width=2),
            customdata=custom, hovertemplate="<br>".join(lines) + "<extra></extra>",
        ))
    if exact is not None:
        values, _ = scale_values(exact.importances, scale)
        at = offsets.get("mdi", 0.0)
        custom = np.column_stack([np.asarray(shown, dtype=object), exact.importances[idx]])
        fig.add_trace(go.Scatter(
            x=x0 + at, y=values[idx], mode="markers", legendgroup="exact",
            name="exact MDI (infinite forest)" + (f" ({exact.units})" if scale == "raw" else ""),
            marker=dict(symbol="diamond", size=11, color=EXACT_COLOR,
                        line=dict(color="#ffffff", width=1.5)),
            customdata=custom,
            hovertemplate=("<b>%{customdata[0]}</b> \u2014 exact MDI<br>importance = "
                           f"%{{customdata[1]:.5g}} {exact.units}"
                           + ("<br>scaled = %{y:.3f}" if scale == "max" else "")
                           + "<extra></extra>"),
        ))
    base_layout(fig, height=height)
    fig.update_layout(barmode="overlay", bargap=0, showlegend=True, margin=dict(t=30, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.16, x=0))
    title = "Variable"
    if p > max_variables:
        title = f"The {max_variables} of {p} variables with the largest mean scaled importance"
    fig.update_xaxes(title_text=title, tickmode="array", tickvals=x0.tolist(), ticktext=shown,
                     range=[-0.6, len(idx) - 0.4], showgrid=False)
    shown_results = [*results.values(), *([exact] if exact is not None else [])]
    units = ", ".join(dict.fromkeys(r.units for r in shown_results))   # the legend says whose
    # On two short lines, with room kept for them: a long title centred on a short plot
    # (presentation mode's 18 px text) ran off the top of the figure.
    fig.update_yaxes(title_text=("Scaled importance<br>(largest = 1)" if scale == "max"
                                 else f"Importance<br>({units})"), automargin=True,
                     zeroline=True, zerolinecolor="#888888")
    return fig


# -- AUC study -------------------------------------------------------------------
def _scores(study) -> pd.DataFrame:
    scores = study.scores if isinstance(study, StudyResult) else study
    if not isinstance(scores, pd.DataFrame):
        raise ValueError("study must be a StudyResult or its scores DataFrame.")
    _require_columns(scores, ("problem", "task", "depth_setting", "measure", "seed", "auc"),
                     "noisy_feature_auc")
    return scores


def _require_columns(df: pd.DataFrame, columns, source: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"The table has no column {missing[0]!r}; pass the result of {source} "
                         "or its table.")


def _setting_title(problem: str, task: str, depth: str) -> str:
    leaf = DEPTH_SETTINGS.get(depth)
    what = problem if problem != "strobl" else f"strobl, {task}"
    # two lines: side by side, a panel is a third of a phone's width
    return f"{what}<br>{depth}" + (f" (min leaf {leaf})" if leaf is not None else "")


@user_text_safe
def make_auc_figure(study, *, paper: Mapping | None = None, height: int = 440) -> go.Figure:
    """AUC of each measure over the repetitions, per problem and depth setting.

    Parameters
    ----------
    study : StudyResult or pandas.DataFrame
        From :func:`~varimp_core.studies.noisy_protocol.noisy_feature_auc`, or its
        ``scores`` (columns ``problem``, ``task``, ``depth_setting``,
        ``measure``, ``seed``, ``auc``).
    paper : mapping, default=None
        Reference values keyed by ``(task, depth_setting)`` then measure;
        None uses :data:`~varimp_core.studies.noisy_protocol.LI2019_TABLE1`.  They are
        marked on the panels of the ``strobl`` problem (the paper's simulated
        data) only.
    height : int, default=440

    Returns
    -------
    fig : go.Figure
        One panel per (problem, task, depth setting) in the order of the
        scores; per panel one box trace per measure (``y`` the AUCs of the
        repetitions, every point drawn, ``legendgroup`` the measure) and,
        for strobl, a trace of black dashes named "Li et al. (2019), Table 1"
        (``x`` measure labels, ``y`` the paper's values).  A dotted line marks
        AUC = 0.5 (no better than chance).
    """
    scores = _scores(study)
    paper = LI2019_TABLE1 if paper is None else paper
    if scores.empty:
        return empty_figure("No repetition has finished yet.", height)
    panels = list(dict.fromkeys(zip(scores["problem"], scores["task"], scores["depth_setting"])))
    measures = list(dict.fromkeys(scores["measure"]))
    fig = make_subplots(rows=1, cols=len(panels), shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=[_setting_title(*k) for k in panels])
    paper_legend = True
    for c, (problem, task, depth) in enumerate(panels, start=1):
        part = scores[(scores["problem"] == problem) & (scores["task"] == task)
                      & (scores["depth_setting"] == depth)]
        for j, m in enumerate(measures):
            rows = part[part["measure"] == m]
            if rows.empty:
                continue
            fig.add_trace(go.Box(
                x=[measure_label(m)] * len(rows), y=rows["auc"].to_numpy(dtype=float),
                name=measure_label(m), legendgroup=m, showlegend=False,
                marker=dict(color=_color(m, j), size=6), line=dict(color=_color(m, j)),
                boxpoints="all", jitter=0.35, pointpos=0, boxmean=True,
                customdata=rows["seed"].to_numpy(),
                hovertemplate=(f"<b>{measure_label(m)}</b><br>AUC = %{{y:.3f}}<br>"
                               "seed %{customdata}<extra></extra>"),
            ), row=1, col=c)
        ref = paper.get((task, depth), {}) if problem == "strobl" else {}
        marked = [m for m in measures if m in ref]
        if marked:
            fig.add_trace(go.Scatter(
                x=[measure_label(m) for m in marked], y=[ref[m] for m in marked],
                mode="markers", name="Li et al. (2019), Table 1 (40 repetitions)",
                legendgroup="paper", showlegend=paper_legend,
                marker=dict(symbol="line-ew", size=30, color=EXACT_COLOR,
                            line=dict(color=EXACT_COLOR, width=3)),
                hovertemplate="<b>%{x}</b><br>paper: AUC = %{y:.2f}<extra></extra>",
            ), row=1, col=c)
            paper_legend = False
        fig.add_hline(y=0.5, line=dict(color=_CHANCE_COLOR, width=1, dash="dot"), row=1, col=c)
    base_layout(fig, height=height)
    fig.update_layout(showlegend=not paper_legend, margin=dict(t=62, b=40),
                      legend=dict(orientation="h", yanchor="top", y=-0.22, x=0))
    fig.update_yaxes(range=[-0.02, 1.02], row=1, col=1,
                     title_text="AUC: relevant vs noisy features")
    fig.update_xaxes(type="category", tickangle=-30)
    return fig


# -- MDI against leaf size and depth ------------------------------------------------
def _curve_means(df) -> pd.DataFrame:
    if isinstance(df, StudyResult):
        df = df.summary
    if not isinstance(df, pd.DataFrame):
        raise ValueError("df must be a StudyResult or the summary of mdi_bias_curves.")
    if "mean" not in df.columns and "importance" in df.columns:
        raise ValueError("make_bias_curves draws means over seeds: pass the StudyResult or "
                         "bias_curve_summary(scores) (varimp_core.studies.noisy_protocol), "
                         "not the per-seed scores.")
    _require_columns(df, ("parameter", "value", "measure", "variable", "mean"), "mdi_bias_curves")
    return df


@user_text_safe
def make_bias_curves(df, *, relevant=("X2",), units: Mapping[str, str] | None = None,
                     height: int = 560) -> go.Figure:
    """MDI (and MDI-oob) of each feature against min leaf size and max depth.

    The panels reproduce Li et al. (2019), Fig. 1 (MDI against min leaf
    size), Fig. 2 (MDI against depth) and Fig. 3 (MDI-oob against min leaf
    size), plus MDI-oob against depth.

    Parameters
    ----------
    df : StudyResult or pandas.DataFrame
        From :func:`~varimp_core.studies.noisy_protocol.mdi_bias_curves`: its
        ``summary`` (columns ``parameter``, ``value``, ``measure``,
        ``variable``, ``mean``, ``sem`` ...), e.g.
        :func:`~varimp_core.studies.noisy_protocol.bias_curve_summary` of its
        ``scores``.
    relevant : sequence of str, default=("X2",)
        Variables drawn as thick solid lines (the others dashed); X2 is the
        only relevant feature of the paper's simulation.
    units : mapping of str to str, optional
        Units of each measure, named on its y axis; default: a StudyResult's
        own ``units`` (none for a table).
    height : int, default=560

    Returns
    -------
    fig : go.Figure
        One row per measure (MDI first), columns min leaf size then max
        depth; one line per variable and panel (``legendgroup`` the variable,
        ``x`` the grid, ``y`` the mean importance over seeds, error bars of
        one standard error when there are several seeds).
    """
    if units is None:
        units = df.units if isinstance(df, StudyResult) else {}
    means = _curve_means(df)
    if means.empty:
        return empty_figure("No forest has finished yet.", height)
    measures = [m for m in ("mdi", "mdi_oob") if m in set(means["measure"])]
    measures += [m for m in dict.fromkeys(means["measure"]) if m not in measures]
    parameters = [p for p in ("min_samples_leaf", "max_depth") if p in set(means["parameter"])]
    variables = list(dict.fromkeys(means["variable"]))
    titles = [f"{measure_label(m)} against {_STUDY_TITLES.get(p, p)}"
              for m in measures for p in parameters]
    fig = make_subplots(rows=len(measures), cols=len(parameters), shared_xaxes="columns",
                        horizontal_spacing=0.07, vertical_spacing=0.12, subplot_titles=titles)
    for r, m in enumerate(measures, start=1):
        for c, par in enumerate(parameters, start=1):
            part = means[(means["measure"] == m) & (means["parameter"] == par)]
            for i, v in enumerate(variables):
                line = part[part["variable"] == v].sort_values("value")
                if line.empty:
                    continue
                key = v in set(relevant)
                sem = line["sem"].to_numpy(dtype=float) if "sem" in line else None
                several = "n" in line and (line["n"] > 1).any()
                fig.add_trace(go.Scatter(
                    x=line["value"].to_numpy(), y=line["mean"].to_numpy(dtype=float),
                    mode="lines+markers", legendgroup=v, showlegend=(r == 1 and c == 1),
                    name=f"{v} (relevant)" if key else f"{v} (noisy)",
                    line=dict(color=variable_color(i), width=3 if key else 1.8,
                              dash="solid" if key else "dash"),
                    marker=dict(size=5 if key else 4),
                    error_y=dict(type="data", array=sem, visible=True, thickness=1, width=2)
                    if several and sem is not None else None,
                    hovertemplate=(f"<b>{v}</b><br>{_STUDY_TITLES.get(par, par)} = %{{x}}<br>"
                                   f"{measure_label(m)} = %{{y:.4f}}<extra></extra>"),
                ), row=r, col=c)
            fig.add_hline(y=0, line=dict(color="#bbbbbb", width=1), row=r, col=c)
        fig.update_yaxes(title_text=measure_label(m) + (f" ({units[m]})" if m in units else ""),
                         row=r, col=1)
    for c, par in enumerate(parameters, start=1):
        fig.update_xaxes(title_text=_STUDY_TITLES.get(par, par), row=len(measures), col=c)
    base_layout(fig, height=height)
    fig.update_layout(margin=dict(t=40, r=10),
                      legend=dict(orientation="v", x=1.02, xanchor="left", y=1, yanchor="top"))
    return fig
