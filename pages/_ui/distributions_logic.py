"""Logic behind the Distributions page's callbacks, as plain functions tests can call.

The page repeats a forest over R data sets and shows the spread of every
variable's importance (Sutera 2013, ch. 3): fresh samples of a built-in
problem (:func:`varimp_core.montecarlo.monte_carlo`), bootstrap replicates of
the session's data, or a permutation null
(:func:`varimp_core.nulls.permutation_null`); then a sweep of one parameter
(:func:`varimp_core.montecarlo.sweep`).  Results are cached server-side as
JSON, keyed by a hash of the settings; a run stopped with Cancel keeps its
finished replicates (``should_stop``) in a short-lived entry of its own and is
never stored as the settings' result.

Caps (read from the environment on every call): ``VARIMP_MAX_REPLICATES``
(R, default 2,000), ``VARIMP_MAX_MC_TREES`` (T, 1,000), ``VARIMP_MAX_MC_SAMPLES``
(N, 100,000), ``VARIMP_MAX_MC_TOTAL_TREES`` (trees per run or sweep, 500,000)
and ``VARIMP_MAX_SWEEP_VALUES`` (8).

The page's constants, caps and choices live in
:mod:`pages._ui.distributions_choices`, its state and settings in
:mod:`pages._ui.distributions_state`, results and computing in
:mod:`pages._ui.distributions_compute`; this module renders the figures,
tables and CSV exports, and re-exports all of them (the page and the tests
use ``distributions_logic`` only).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.studies.nulls import PermutationNull
from varimp_core.plots.distributions import (MAX_PANELS, MAX_VIOLINS, make_distribution_figure,
                                             make_summary_table_frame, make_sweep_figure)

from . import cache, fanout  # noqa: F401  (fanout: tests patch distributions_logic.fanout)
from .common import clear_stop, neutralise_cell, placeholder_figure, safe_csv, request_stop, stop_key, \
    stop_requested
from .distributions_choices import (DEFAULTS, MAX_FITTED, METHOD_OPTIONS, MODE_LABELS, PREFIX,
                                    SWEEP_PREFIX, VIEWS, _METHOD_WORDS, caps_text,
                                    default_values, is_synthetic, max_replicates, max_samples,
                                    max_sweep_values, max_total_trees, max_trees, mode_options,
                                    page_params, parse_values, problem_options, sweep_options)
from .distributions_compute import (_frame, compute_sweep, compute_view, result_from_dict,
                                    result_to_dict, run_key, run_monte_carlo, run_sweep,
                                    sweep_key)
from .distributions_state import (data_for_choice, initial_state, page_query, problem_controls,
                                  query_from_controls, settings_from_controls, sweep_settings)

__all__ = [
    "PREFIX", "SWEEP_PREFIX", "MAX_FITTED", "METHOD_OPTIONS", "MODE_LABELS", "VIEWS", "DEFAULTS",
    "max_replicates", "max_trees", "max_samples", "max_total_trees", "max_sweep_values",
    "caps_text", "page_params", "is_synthetic", "problem_options", "mode_options",
    "sweep_options", "default_values", "parse_values", "initial_state", "data_for_choice",
    "settings_from_controls", "sweep_settings", "page_query", "query_from_controls",
    "problem_controls", "run_key", "sweep_key", "stop_key", "request_stop", "clear_stop",
    "stop_requested", "compute_view", "compute_sweep", "run_monte_carlo", "run_sweep",
    "result_to_dict", "result_from_dict", "render", "render_sweep", "fit_table",
    "summary_sentences", "csv_text", "csv_filename", "placeholder_figure",
]


# -- rendering ---------------------------------------------------------------------
_NUM = Format(precision=4, scheme=Scheme.fixed)
_SIGNED = Format(precision=4, scheme=Scheme.fixed, sign="+")


def _load(current: Mapping[str, Any] | None, what: str):
    if not current or not current.get("key"):
        return None
    view = cache.get_json(current["key"])
    if view is None:
        raise ValueError(f"The {what} is no longer on the server (it may have expired); change a "
                         "setting or reload the page to compute it again.")
    return view


def fit_table(fits: pd.DataFrame) -> tuple[list, list]:
    """Goodness-of-fit table: one row per variable and law, with the KS distance."""
    cols = [{"name": "Variable", "id": "variable"}, {"name": "Relevance", "id": "relevance"},
            {"name": "Law", "id": "law"}, {"name": "Parameters", "id": "parameters"},
            {"name": "KS distance D", "id": "ks_statistic", "type": "numeric", "format": _NUM},
            {"name": "KS p-value", "id": "ks_pvalue", "type": "numeric",
             "format": Format(precision=3, scheme=Scheme.fixed)},
            {"name": "Closer fit", "id": "closer"}]
    rows = []
    for v, d in fits.groupby("variable", sort=False):
        best = d["ks_statistic"].idxmin() if d["ks_statistic"].notna().any() else None
        for i, r in d.iterrows():
            rel = r["relevant"]
            relevance = "" if rel is None or (isinstance(rel, float) and math.isnan(rel)) else \
                ("relevant" if rel else "irrelevant")
            if r["distribution"] == "chi2":
                law = "scaled \u03c7\u00b2"
                params = "" if not np.isfinite(r["df"]) else \
                    f"k = {r['df']:.3g}, s = {r['scale']:.3g}"
            else:
                law = "normal"
                params = "" if not np.isfinite(r["mean"]) else \
                    f"\u03bc = {r['mean']:.4f}, \u03c3 = {r['std']:.4f}"
            rows.append({"variable": v, "relevance": relevance, "law": law,
                         "parameters": params or "no fit (constant values)",
                         "ks_statistic": _num(r["ks_statistic"]),
                         "ks_pvalue": _num(r["ks_pvalue"]),
                         "closer": "\u2713" if i == best else ""})
    return cols, rows


def _num(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _summary_table(result) -> tuple[list, list]:
    df = make_summary_table_frame(result)
    numeric = {c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])}
    cols = []
    for c in df.columns:
        col = {"name": c, "id": c}
        if c in numeric and c != "R":
            col.update(type="numeric", format=_SIGNED if "\u2212" in c else _NUM)
        cols.append(col)
    rows = [{c: (_num(v) if c in numeric and c != "R" else v) for c, v in row.items()}
            for row in df.to_dict("records")]
    return cols, rows


def summary_sentences(view: Mapping[str, Any], settings: Mapping[str, Any],
                      kind: str = "histogram") -> list[str]:
    """What the figures show, in a few sentences with the core's numbers."""
    result = result_from_dict(view["result"])
    N, T, K = settings["N"], settings["T"], settings["K"]
    depth = "fully grown" if settings["depth"] is None else f"depth \u2264 {settings['depth']}"
    trees = f"T = {T:,} {_METHOD_WORDS[settings['method']]} (K = {K}, {depth})"
    data = settings["data"]
    what = data["problem"] if data["source"] == "problem" else (data.get("file") or "the upload")
    out = []
    if isinstance(result, PermutationNull):
        n = result.n_permutations
        out.append(f"{n:,} permutations of the target of {what}; on each, a forest of {trees}. "
                   "The distributions are the importances a variable gets when it carries no "
                   "information; the black marks are the importances on the data itself.")
        above = [v for v, a in zip(result.variables, result.above_null) if a]
        if n:
            out.append(("Above the 95 % quantile of their null: " + ", ".join(above) + "."
                        ) if above else "No variable is above the 95 % quantile of its null.")
        return out
    n = result.n_replicates
    if settings["mode"] == "samples":
        how = f"fresh samples of N = {N:,} rows of {what}"
    else:
        how = f"bootstrap replicates of {what}" + (f" (N = {N:,} rows each)" if N else "")
    out.append(f"{n:,} data sets ({how}); on each, a forest of {trees}.")
    if result.exact is not None and n:
        ref = "value on the full sample" if result.exact_source == "full sample" else \
            "exact value (infinite sample, infinite forest)"
        out.append(f"Black lines: each variable's {ref}; grey curves: a scaled \u03c7\u00b2 "
                   "(dashed) and a normal law (solid) fitted to the replicates." if kind ==
                   "histogram" else f"Black diamonds: each variable's {ref}.")
    overlay = _frame(view.get("overlay"))
    if overlay is not None and n:
        irr = overlay[(overlay["relevant"] == False) & overlay["expected"].notna()]  # noqa: E712
        if len(irr):
            means = ", ".join(f"{v} {m:.4f}" for v, m in zip(irr["variable"], irr["mean"]))
            out.append(f"Irrelevant variables still get positive importances (mean {means} "
                       "bits): finite samples bias the plug-in mutual information upwards "
                       f"(Geurts 2016). The red {'dotted line' if kind == 'histogram' else 'cross'}"
                       f" is the K = 1 prediction of that bias, {irr['expected'].mean():.4f} "
                       "bits on average.")
    return out


def render(current: Mapping[str, Any] | None, view_kind: str = "histogram") -> dict:
    """Figure, tables and sentences of the current run (from the cache).

    Returns
    -------
    out : dict
        ``figure``, ``table_columns``, ``table_rows``, ``fit_columns``,
        ``fit_rows``, ``sentences``, ``partial_note`` ("" unless cancelled).

    Raises
    ------
    ValueError
        When the stored view expired.
    """
    view = _load(current, "result")
    if view is None:
        empty = placeholder_figure("No result yet.")
        return {"figure": empty, "table_columns": [], "table_rows": [], "fit_columns": [],
                "fit_rows": [], "sentences": [], "partial_note": ""}
    result = result_from_dict(view["result"])
    fits = _frame(view["fits"])
    overlay = _frame(view.get("overlay"))
    fig = make_distribution_figure(result, fits, overlay=overlay,
                                   kind=view_kind if view_kind in VIEWS else "histogram")
    table_columns, table_rows = _summary_table(result)
    fit_columns, fit_rows = fit_table(fits)
    sentences = summary_sentences(view, current["settings"], view_kind)
    p = len(result.variables)
    if p > MAX_FITTED:
        sentences.append(f"Laws are fitted to the first {MAX_FITTED} of the {p} variables; "
                         f"the histograms show the first {MAX_PANELS}, the violins the first "
                         f"{MAX_VIOLINS}; the table has them all.")
    note = ""
    if current.get("partial"):
        note = (f"Partial result: cancelled after {current['done']:,} of "
                f"{current['requested']:,} replicates.")
    return {"figure": fig, "table_columns": table_columns, "table_rows": table_rows,
            "fit_columns": fit_columns, "fit_rows": fit_rows,
            "sentences": sentences, "partial_note": note}


def render_sweep(current: Mapping[str, Any] | None) -> dict:
    """Sweep figure and a sentence (from the cache)."""
    view = _load(current, "sweep")
    if view is None:
        fig = placeholder_figure("Choose a parameter to sweep (left).")
        fig.update_layout(height=160)
        return {"figure": fig, "note": ""}
    stats = _frame(view["stats"])
    parameter = view["parameter"]
    values = [float(v) for v in view["values"]]
    log_x = parameter in ("n_estimators", "n_samples") and min(values) > 0 and \
        max(values) / min(values) >= 10
    fig = make_sweep_figure(stats, parameter, log_x=log_x)
    note = ("Dashed lines: exact values. Standard deviations are over the R data sets; for T, "
            "the dotted line falls as 1/\u221aT: the tree part of the variance (b/T in "
            "Var = a + b/T, Sutera 2013 eq. 3.23) follows it, the data-set part a does not."
            if parameter == "n_estimators" else
            "Dashed lines: exact values. Standard deviations are over the R data sets; rank "
            "stability is the share of replicates that rank a variable where the exact values "
            "(or, without them, the means) rank it.")
    if current.get("partial"):
        note = "Partial result (cancelled). " + note
    return {"figure": fig, "note": note}


# -- export ---------------------------------------------------------------------------
def csv_text(what: str, current: Mapping[str, Any] | None) -> str:
    """CSV of the ``"summary"`` table, the ``"replicates"`` or the ``"sweep"`` statistics.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "sweep":
        view = _load(current, "sweep")
        if view is None:
            raise ValueError("There is no sweep to download yet.")
        df = _frame(view["stats"])
        df.insert(0, "parameter", view["parameter"])
        return safe_csv(df)
    view = _load(current, "result")
    if view is None:
        raise ValueError("There is no result to download yet.")
    result = result_from_dict(view["result"])
    if what == "summary":
        return safe_csv(make_summary_table_frame(result))
    values = result.null if isinstance(result, PermutationNull) else result.replicates
    R, p = values.shape
    df = pd.DataFrame({"replicate": np.repeat(np.arange(R), p),
                       "variable": list(result.variables) * R, "importance": values.ravel()})
    if isinstance(result, PermutationNull):
        df["observed"] = np.tile(result.observed, R)
    elif result.exact is not None:
        df["exact"] = np.tile(result.exact, R)
    return safe_csv(df)


def csv_filename(what: str, current: Mapping[str, Any] | None) -> str:
    """``varimp-distributions-<data>-<mode>-<what>.csv`` with only safe characters."""
    settings = (current or {}).get("settings") or (current or {}).get("spec", {}).get("run") or {}
    data = settings.get("data") or {}
    name = data.get("problem") if data.get("source") == "problem" else (data.get("file") or
                                                                        "upload")
    name = re.sub(r"\.csv$", "", str(name or "data"), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{settings.get('mode', '')}-{what}")
    return f"varimp-distributions-{slug.strip('-.')[:80]}.csv"
