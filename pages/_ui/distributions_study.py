"""The Distributions study's pieces: its choices, caps and checks, and drawing.

The choices and their sentences (replicate kinds, sweepable parameters, sweep
values, the server's caps, read from the environment on every call), the
checks a run must pass before it grows a forest, and what the page draws.
The run is the core's (:func:`varimp_core.studies.distributions.importance_distribution`);
every figure comes from :mod:`varimp_core.plots.distributions`; results are
read back with their ``from_dict``.  The Distributions page
(:mod:`pages.distributions`) is its only user.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd
from dash import html
from dash.dash_table.Format import Format, Scheme

from varimp_core.data.csvfile import env_limit
from varimp_core.plots.distributions import (MAX_PANELS, MAX_VIOLINS, make_distribution_figure,
                                             make_summary_table_frame, make_sweep_figure,
                                             parameter_label)
from varimp_core.problems.registry import get_problem
from varimp_core.serialize import from_jsonable
from varimp_core.studies.distributions import ImportanceDistribution
from varimp_core.studies.montecarlo import SWEEP_PARAMETERS, MonteCarloResult
from varimp_core.studies.nulls import PermutationNull

from . import limits, studies
from .common import placeholder_figure, safe_csv, table_number
from .datachoice import DataChoice
from .studies import generator, is_exact

__all__ = ["MODES", "cap", "caps_text", "mode_options", "sweep_options", "parse_values",
           "default_values", "forest_options", "link_values", "replicate_rows", "check_sweep",
           "check_budget", "default_mode", "description", "allowed", "MAX_FITTED",
           "result_of", "fit_table", "summary_table", "summary_sentences", "render",
           "render_sweep", "csv_text"]

MODES = {"samples": "Fresh samples of the problem", "bootstrap": "Bootstrap replicates of the data",
         "permutation": "Permutation null (Y shuffled)"}
#: Caps read from the environment on every call: (variable, default).
CAPS = {"T": ("VARIMP_MAX_MC_TREES", 1000), "N": ("VARIMP_MAX_MC_SAMPLES", 100_000),
        "total": ("VARIMP_MAX_MC_TOTAL_TREES", 500_000), "values": ("VARIMP_MAX_SWEEP_VALUES", 8)}
SWEEP_DEFAULTS = {"n_samples": "50,200,1000", "n_estimators": "1,10,50", "max_depth": "1,2,3",
                  "irrelevant": "0,2,4", "noise": "0,0.1,0.2,0.3", "input_noise": "0,0.1,0.2,0.3"}


# -- choices, caps and sweep values --------------------------------------------------------
def cap(name: str) -> int:
    return limits.max_replicates() if name == "R" else env_limit(*CAPS[name])


def caps_text() -> str:
    return (f"Limits on this server: R \u2264 {cap('R'):,}, T \u2264 {cap('T'):,}, "
            f"N \u2264 {cap('N'):,}, at most {cap('total'):,} trees per run or sweep "
            f"(R \u00d7 T, summed over a sweep's values) and {cap('values')} sweep values.")


def mode_options(data: DataChoice | None) -> list[dict]:
    """Replicate kinds; fresh samples only for problems with a generator."""
    off = data is not None and generator(data) is None
    return [{"label": label + (" (needs a built-in problem)" if off and v == "samples" else ""),
             "value": v, "disabled": off and v == "samples"} for v, label in MODES.items()]


def sweep_options(data: DataChoice | None, mode: str | None) -> list[dict]:
    """Sweepable parameters for the data and replicate kind (others disabled, with why)."""
    own = set() if data is None or data.is_upload else \
        set(get_problem(data["problem"]).options)
    out = [{"label": "No sweep", "value": "none"}]
    for name in SWEEP_PARAMETERS:
        why = None
        if mode == "permutation":
            why = "not with a permutation null"
        elif name in ("irrelevant", "noise") and (mode != "samples" or name not in own):
            why = "needs fresh samples of a problem with this option"
        out.append({"label": parameter_label(name) + (f" \u2014 {why}" if why else ""),
                    "value": name, "disabled": data is not None and why is not None})
    return out


def parse_values(text, parameter: str, *, p: int | None = None) -> list:
    """The sweep values from the text input, checked, without duplicates, in increasing order.

    Raises
    ------
    ValueError
        With a sentence naming the bad value and what is allowed.
    """
    parts = [t for t in re.split(r"[,;\s]+", str(text or "").strip()) if t]
    label = parameter_label(parameter)
    if not parts:
        raise ValueError(f"Enter the values of {label} to sweep, separated by commas "
                         "(e.g. 1, 10, 50).")
    if len(parts) > cap("values"):
        raise ValueError(f"A sweep takes at most {cap('values')} values; got {len(parts)}.")
    low = 0 if parameter == "irrelevant" else 1
    high = {"n_samples": cap("N"), "n_estimators": cap("T"), "max_features": p,
            "max_depth": 1000, "irrelevant": 50}.get(parameter)
    out = []
    for t in parts:
        try:
            x = float(t)
        except ValueError:
            raise ValueError(f"The sweep value {t!r} is not a number.") from None
        if not math.isfinite(x):
            raise ValueError(f"The sweep value {t!r} is not a finite number.")
        if parameter not in ("noise", "input_noise"):
            if x != int(x) or x < low or (high is not None and x > high):
                upper = f" to {high:,}" if high is not None else " or more"
                raise ValueError(f"Values of {label} must be whole numbers from {low}{upper}; "
                                 f"{t!r} is not.")
            out.append(int(x))
        elif not 0 <= x <= 1:
            raise ValueError(f"Values of {label} are probabilities from 0 to 1; {t!r} is not.")
        else:
            out.append(x)
    return sorted(set(out))


def default_values(parameter: str, p: int | None = None) -> str:
    """Values a new sweep of ``parameter`` starts with (text for the input)."""
    if parameter in (None, "none"):
        return ""
    if parameter == "max_features":
        return ",".join(str(k) for k in range(1, max(1, min(p or 3, 4)) + 1))
    return SWEEP_DEFAULTS.get(parameter, "")


# -- checks, computing and drawing ---------------------------------------------------------
#: Variables that get fitted laws (the first ones): each fit runs a KS test.
MAX_FITTED = 60
METHOD_WORDS = {"forest": "multiway trees", "sklearn-et": "scikit-learn extra-trees",
                "sklearn-rf": "scikit-learn random-forest trees"}
_NUM = Format(precision=4, scheme=Scheme.fixed)
_SIGNED = Format(precision=4, scheme=Scheme.fixed, sign="+")


def forest_options(s, progress, what: str) -> dict:
    return dict(method=s["method"], n_estimators=s["n_estimators"],
                max_features=s["max_features"], max_depth=s["max_depth"],
                **studies.run_options(progress, s["n_replicates"], what))


def link_values(query, parameter: str, p: int | None) -> tuple[str, list[str]]:
    """The sweep values of a link (normalised), else the defaults, and a note when ignored."""
    if parameter == "none" or not query.get("values"):
        return default_values(parameter, p), []
    try:
        return ",".join(f"{v:g}" for v in parse_values(query["values"], parameter, p=p)), []
    except ValueError as exc:
        return default_values(parameter, p), [f"The link's sweep values were ignored: {exc} "
                                              "Using the defaults."]


def replicate_rows(settings, data: DataChoice) -> int | None:
    """N of each replicate data set (None: the table's own size), checked against the mode.

    Raises
    ------
    ValueError
        Fresh samples of data without a generator, a missing N, a run over the tree budget.
    """
    mode, n = settings["mode"], settings["n_samples"]
    if mode == "samples" and generator(data) is None:
        raise ValueError("Fresh samples need a built-in problem with a generator (XOR, SYM, "
                         "LED, Madelon, Strobl); use bootstrap replicates for this data.")
    drawn = mode == "samples" or is_exact(data)
    if n is None and drawn:
        raise ValueError("Enter the sample size N: each data set is drawn from the problem's "
                         "distribution.")
    check_budget(settings["n_replicates"] * settings["n_estimators"])
    return n if drawn or mode != "permutation" else None  # a null runs on the table as it is


def check_sweep(parameter: str, data: DataChoice, mode: str) -> None:
    """Raise a sentence when ``parameter`` cannot be swept for this data and replicate kind."""
    if parameter not in allowed(sweep_options(data, mode)):
        raise ValueError("Sweeps repeat Monte Carlo runs, not a permutation null; switch the "
                         "replicates to fresh samples or bootstrap to sweep."
                         if mode == "permutation" else f"Sweeping {parameter_label(parameter)} "
                         "needs fresh samples of a problem that has this option.")


def check_budget(trees: int) -> None:
    if trees > cap("total"):
        raise ValueError(f"This would grow {trees:,} trees, more than the limit of "
                         f"{cap('total'):,} (VARIMP_MAX_MC_TOTAL_TREES); lower R, T or the "
                         "sweep values.")


def default_mode(data: DataChoice) -> str:
    return "samples" if generator(data) is not None else "bootstrap"


def description(data: DataChoice) -> str:
    if data.is_upload:
        return ("Your uploaded table: replicates are bootstrap samples of its rows, or "
                "permutations of its target.")
    return get_problem(data["problem"]).description


def allowed(options) -> set:
    return {o["value"] for o in options if not o.get("disabled")}


def result_of(out: Mapping[str, Any]) -> MonteCarloResult | PermutationNull:
    """The core result of a computed run (:meth:`ImportanceDistribution.from_dict`)."""
    return ImportanceDistribution.from_dict(out).result


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
                         "ks_statistic": table_number(r["ks_statistic"]),
                         "ks_pvalue": table_number(r["ks_pvalue"]),
                         "closer": "\u2713" if i == best else ""})
    return cols, rows


def summary_table(result) -> tuple[list, list]:
    """The mean \u00b1 sd table (:func:`make_summary_table_frame`): DataTable columns, rows."""
    df = make_summary_table_frame(result)
    numeric = {c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and c != "R"}
    cols = [{"name": c, "id": c, **({"type": "numeric", "format": _SIGNED if "\u2212" in c
                                     else _NUM} if c in numeric else {})} for c in df.columns]
    rows = [{c: (table_number(v) if c in numeric else v) for c, v in row.items()}
            for row in df.to_dict("records")]
    return cols, rows


def _data_name(data) -> str:
    return data["problem"] if not data.is_upload else (data["file"] or "the upload")


def summary_sentences(dist: ImportanceDistribution, settings: Mapping[str, Any], data,
                      kind: str = "histogram") -> list[str]:
    """What the figures show, in a few sentences with the core's numbers."""
    result, N, overlay = dist.result, dist.n_samples, dist.overlay
    depth = "fully grown" if settings["max_depth"] is None else \
        f"depth \u2264 {settings['max_depth']}"
    trees = (f"T = {settings['n_estimators']:,} {METHOD_WORDS[settings['method']]} "
             f"(K = {settings['max_features']}, {depth})")
    what = _data_name(data)
    if isinstance(result, PermutationNull):
        n = result.n_permutations
        out_ = [f"{n:,} permutations of the target of {what}; on each, a forest of {trees}. "
                "The distributions are the importances a variable gets when it carries no "
                "information; the black marks are the importances on the data itself."]
        if n:
            out_.append(studies.above_null_sentence(result))
        return out_
    n = result.n_replicates
    how = f"fresh samples of N = {N:,} rows of {what}" if settings["mode"] == "samples" else \
        f"bootstrap replicates of {what}" + (f" (N = {N:,} rows each)" if N else "")
    sentences = [f"{n:,} data sets ({how}); on each, a forest of {trees}."]
    if result.exact is not None and n:
        ref = "value on the full sample" if result.exact_source == "full sample" else \
            "exact value (infinite sample, infinite forest)"
        sentences.append(
            f"Black lines: each variable's {ref}; grey curves: a scaled \u03c7\u00b2 (dashed) "
            "and a normal law (solid) fitted to the replicates." if kind == "histogram" else
            f"Black diamonds: each variable's {ref}.")
    if overlay is not None and n:
        irr = overlay[(overlay["relevant"] == False) & overlay["expected"].notna()]  # noqa: E712
        if len(irr):
            means = ", ".join(f"{v} {m:.4f}" for v, m in zip(irr["variable"], irr["mean"]))
            sentences.append(
                f"Irrelevant variables still get positive importances (mean {means} bits): "
                "finite samples bias the plug-in mutual information upwards (Geurts 2016). The "
                f"red {'dotted line' if kind == 'histogram' else 'cross'} is the K = 1 "
                f"prediction of that bias, {irr['expected'].mean():.4f} bits on average.")
    return sentences


def render(out: Mapping[str, Any], settings: Mapping[str, Any], data, **_) -> tuple:
    """Figure, summary and fit tables, sentences and the partial-result note of a run.

    Raises
    ------
    ValueError
        When Cancel stopped the run before any replicate finished.
    """
    dist = ImportanceDistribution.from_dict(out)
    result, kind = dist.result, settings["view"]
    done = result.null.shape[0] if isinstance(result, PermutationNull) else result.n_replicates
    if dist.partial and not done:
        raise ValueError("Cancelled before any replicate finished.")
    figure = make_distribution_figure(result, dist.fits, overlay=dist.overlay, kind=kind)
    sentences = summary_sentences(dist, settings, data, kind)
    p = len(result.variables)
    if p > MAX_FITTED:
        sentences.append(f"Laws are fitted to the first {MAX_FITTED} of the {p} variables; "
                         f"the histograms show the first {MAX_PANELS}, the violins the first "
                         f"{MAX_VIOLINS}; the table has them all.")
    note = (f"Partial result: cancelled after {done:,} of {result.n_requested:,} replicates."
            if dist.partial else "")
    return (figure, *summary_table(result), *fit_table(dist.fits), [html.P(t) for t in sentences],
            note, "vi-notes" if note else "vi-hidden")


def render_sweep(out: Mapping[str, Any], *_, **__) -> tuple:
    """Sweep figure and its note (the view's settings are not needed)."""
    if out.get("parameter") is None:
        figure = placeholder_figure("Choose a parameter to sweep (left).")
        figure.update_layout(height=160)
        return figure, ""
    stats, parameter = from_jsonable(out["stats"]), out["parameter"]
    if out.get("partial") and not len(stats):
        raise ValueError("Cancelled before the first value finished.")
    values = [float(v) for v in out["values"]]
    log_x = parameter in ("n_estimators", "n_samples") and min(values) > 0 and \
        max(values) / min(values) >= 10
    note = ("Dashed lines: exact values. Standard deviations are over the R data sets; for T, "
            "the dotted line falls as 1/\u221aT: the tree part of the variance (b/T in "
            "Var = a + b/T, Sutera 2013 eq. 3.23) follows it, the data-set part a does not."
            if parameter == "n_estimators" else
            "Dashed lines: exact values. Standard deviations are over the R data sets; rank "
            "stability is the share of replicates that rank a variable where the exact values "
            "(or, without them, the means) rank it.")
    if out.get("partial"):
        note = "Partial result (cancelled). " + note
    return make_sweep_figure(stats, parameter, log_x=log_x), note


def csv_text(what: str, out: Mapping[str, Any]) -> str:
    """CSV of the ``"summary"`` table, the ``"replicates"`` or the ``"sweep"`` statistics.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "sweep":
        if out.get("parameter") is None:
            raise ValueError("There is no sweep to download yet.")
        df = from_jsonable(out["stats"])
        df.insert(0, "parameter", out["parameter"])
        return safe_csv(df)
    result = result_of(out)
    if what == "summary":
        return safe_csv(make_summary_table_frame(result))
    if isinstance(result, PermutationNull):
        return safe_csv(result.null_frame())
    df = result.replicates_frame()
    if result.exact is not None:
        df["exact"] = np.tile(result.exact, result.n_replicates)
    return safe_csv(df)
