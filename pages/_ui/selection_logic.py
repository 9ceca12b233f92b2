"""Logic behind the Selection page's callbacks, as plain functions tests can call.

Three views of "which variables matter" (Geurts 2016, parts 1 and 3):

1. relevance classes, degrees and a Markov boundary of the current data
   (:func:`varimp_core.relevance.relevance`; exact on an exact distribution,
   plug-in with a threshold ``tol`` on a sample), with each variable's K = 1
   infinite-forest importance (:func:`varimp_core.api.compute_importances`);
2. permutation-null p-values (:func:`varimp_core.nulls.permutation_null`);
3. Random Subspace against Sequential Random Subspace
   (:func:`varimp_core.selection.subspace_selection`) on Madelon-like data or
   on the current data: AUPRC and accuracy curves and the selected set.

Results are cached server-side as JSON keyed by a hash of the settings.  Cancel
sets a stop flag (shared with the Distributions page's helpers) that the core
checks between permutations or trees, so a cancelled run keeps what it
finished, in a short-lived entry of its own.

The page's constants, caps, URL parameters and settings live in
:mod:`pages._ui.selection_state`, its results as JSON in
:mod:`pages._ui.selection_results`, the computing of sections 1 and 2 in
:mod:`pages._ui.selection_null` and of the RS/SRS study in
:mod:`pages._ui.selection_study`; this module renders the figures, tables and
CSV exports, and re-exports all of them (the page, the tests and
:mod:`pages._ui.fanout_selection` use ``selection_logic`` only).
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.plots.selection import (make_pvalue_figure, make_relevance_figure,
                                         make_selected_figure, make_subspace_curves)
from varimp_core.exact.relevance import RelevanceResult

from . import cache
from .common import neutralise_cell, placeholder_figure, request_stop, safe_csv
from .distributions_logic import METHOD_OPTIONS, data_for_choice, problem_options, \
    result_from_dict
from .selection_null import compute_null, compute_relevance, null_key, relevance_key, run_null
from .selection_results import (relevance_from_dict, relevance_to_dict, selection_from_dict,
                                selection_to_dict)
from .selection_state import (DEFAULTS, NULL_PREFIX, PREFIX, RS_CHOICES, RS_PREFIX, caps_text,
                              initial_state, max_null_trees, max_permutations, max_rs_trees,
                              max_seeds, null_settings, page_params, page_query,
                              query_from_controls, rs_settings)
from .selection_study import compute_rs, rs_key, rs_run, run_rs

__all__ = [
    "PREFIX", "NULL_PREFIX", "RS_PREFIX", "DEFAULTS", "RS_CHOICES", "METHOD_OPTIONS",
    "max_null_trees", "max_rs_trees", "max_seeds", "caps_text", "page_params", "initial_state",
    "null_settings", "rs_settings", "page_query", "query_from_controls", "null_key", "rs_key",
    "compute_relevance", "compute_null", "compute_rs", "run_null", "run_rs", "render_null",
    "render_rs", "relevance_to_dict", "relevance_from_dict", "selection_to_dict",
    "selection_from_dict", "csv_text", "csv_filename", "placeholder_figure", "request_stop",
    "HONEST_NOTE", "max_permutations", "relevance_key", "rs_run", "data_for_choice",
    "problem_options",
]

HONEST_NOTE = ("What the numbers show: on the slides' Madelon protocol (Geurts 2016) SRS ranks "
               "and predicts better than RS, more so as q/p shrinks. Over 3 seeds at T = 2,000, "
               "AUPRC goes from 0.90 (RS) to 1.00 (SRS) with 480 irrelevant features and from "
               "0.39 to 0.64 with 5,480; test accuracy from 0.69 to 0.82 and from 0.53 to 0.74. "
               "SRS needs trees to find its first features, so a short run of one seed, like the "
               "default T = 300, can show a smaller gain. The generator follows Guyon's design "
               "(randomly labelled hypercube vertices); it is not the original Madelon data.")


# -- rendering ------------------------------------------------------------------------------
def _load(key: str | None, what: str):
    if not key:
        return None
    view = cache.get_json(key)
    if view is None:
        raise ValueError(f"The {what} is no longer on the server (it may have expired); change a "
                         "setting or reload the page to compute it again.")
    return view


def _names(items, limit: int = 12) -> str:
    items = list(items)
    if not items:
        return "none"
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit:,} more" if len(items) > limit else "")


def relevance_rows(r: RelevanceResult) -> list[dict]:
    """One table row per variable: class, degree, Markov boundary membership."""
    boundary = set(r.minimal_boundary)
    return [{"variable": v, "relevance": c, "degree": "" if d is None else d,
             "in_markov_boundary": "\u2713" if v in boundary else ""}
            for v, c, d in zip(r.variables, r.relevance, r.degree)]


def render_null(current: Mapping[str, Any] | None) -> dict:
    """Figures, relevance table and sentences of sections 1 and 2 (from the cache).

    Raises
    ------
    ValueError
        When the stored view expired.
    """
    empty = {"relevance_figure": placeholder_figure("No result yet."),
             "pvalue_figure": placeholder_figure("No result yet."), "relevance_rows": [],
             "relevance_sentences": [], "null_sentences": [], "partial_note": ""}
    if not current:
        return empty
    rel = _load(current.get("relevance_key"), "relevance result")
    view = _load(current.get("key"), "permutation null")
    settings = current["settings"]
    out = dict(empty)
    if rel is not None and rel.get("relevance"):
        r = relevance_from_dict(rel["relevance"])
        out["relevance_figure"] = make_relevance_figure(r, rel["importances"],
                                                        units=rel.get("units", "bits"))
        out["relevance_rows"] = relevance_rows(r)
        how = ("Exact: computed on the exact distribution, a conditional mutual information "
               f"counts as zero at or below tol = {r.tol:.3g} bits (rounding only)."
               if rel["exact"] else
               f"Plug-in estimate from a sample of N = {rel['n']:,} rows: a conditional mutual "
               f"information counts as zero at or below tol = {r.tol:.3g} bits"
               + (" (the core's default, the plug-in bias of the largest conditioning set, "
                  "capped at 0.05 bits)." if settings["tol"] is None else " (yours)."))
        strong = [v for v, c in zip(r.variables, r.relevance) if c == "strong"]
        weak = [v for v, c in zip(r.variables, r.relevance) if c == "weak"]
        irr = [v for v, c in zip(r.variables, r.relevance) if c == "irrelevant"]
        mb = ("Markov boundary (unique, the input distribution is strictly positive): "
              + _names(r.markov_boundary) + "." if r.markov_boundary is not None else
              "A minimal Markov boundary: " + _names(r.minimal_boundary) + " (the input "
              "distribution is not strictly positive, so it need not be unique).")
        out["relevance_sentences"] = [
            how,
            f"Strongly relevant: {_names(strong)}; weakly relevant: {_names(weak)}; "
            f"irrelevant: {_names(irr)}. The degree d is the size of the smallest set B with "
            "I(X; Y | B) > 0.",
            mb,
            "Bars: each variable's importance in an infinite forest of totally randomized trees "
            "(K = 1, Eqn 3) on the same " + ("distribution" if rel["exact"] else "sample")
            + "; it is zero exactly for the irrelevant variables (Louppe et al. 2013, "
            "Theorem 3)" + ("." if rel["exact"] else ", which a plug-in estimate only "
                            "approaches: the bias keeps it above zero."),
        ]
    elif rel is not None:
        out["relevance_figure"] = placeholder_figure("No relevance classes for this data.")
        out["relevance_sentences"] = [rel["message"]]
    if view is not None:
        pn = result_from_dict(view["null"])
        out["pvalue_figure"] = make_pvalue_figure(pn)
        above = [v for v, a in zip(pn.variables, pn.above_null) if a]
        R = pn.n_permutations
        rows = f"{view['n']:,} rows" if view.get("n") else "the data"
        out["null_sentences"] = [
            f"{R:,} permutations of the target; on each, {settings['T']:,} K = 1 trees "
            f"({settings['method']}) on {rows}"
            + (f" drawn from the exact distribution (seed {settings['seed']})"
               if settings["N"] is not None else "") + ".",
            (f"Above the 95 % quantile of their null (\u2605): {_names(above)}." if above else
             "No variable is above the 95 % quantile of its null.")
            + f" The smallest possible p-value with R = {R:,} is 1/(R + 1) = {1 / (R + 1):.3g}.",
            "The null keeps Y impure in every cell, so an irrelevant variable of the real data "
            "often scores below its null (a large p-value): the test is conservative for "
            "irrelevant variables.",
        ]
    if current.get("partial"):
        out["partial_note"] = (f"Partial result: cancelled after {current['done']:,} of "
                               f"{current['requested']:,} permutations.")
    return out


def _curves_frame(view: Mapping[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame({c: [np.nan if v is None else v for v in vals]
                       for c, vals in view["curves"].items()})
    for c in df.columns:
        if c != "method":
            df[c] = df[c].astype(float)
    return df


def rs_sentences(view: Mapping[str, Any], settings: Mapping[str, Any]) -> list[str]:
    """The final numbers of the curves, RS against SRS, in sentences."""
    df = _curves_frame(view)
    if not len(df):
        return []
    out = []
    src = settings["source"]
    what = (f"Madelon-like data with 20 relevant and {src['irrelevant']:,} irrelevant features "
            "(1,000 training and 500 test rows per seed)" if src["kind"] == "madelon" else
            "the current data (two thirds of the rows train, one third tests, per seed)")
    k = "q + 1 (every column of the subspace and the probe)" if settings["K"] is None \
        else str(settings["K"])
    out.append(f"{what}; q = {settings['q']}, \u03b1 = {settings['alpha']:g}, K = {k}, "
               f"L = {settings['L']}, \u03b2 = {settings['beta']:g}; mean over "
               f"{int(df['seed'].nunique())} seed(s)" + (" with \u00b1 1 sd bands." if
                                                          df['seed'].nunique() > 1 else "."))
    last = df[df.groupby(["method", "seed"])["n_trees"].transform("max") == df["n_trees"]]
    means = last.groupby("method")[["n_trees", "auprc", "accuracy"]].mean()
    parts = []
    for m in ("rs", "srs"):
        if m in means.index:
            row = means.loc[m]
            auprc = "" if math.isnan(row["auprc"]) else f"AUPRC {row['auprc']:.3f}, "
            parts.append(f"{m.upper()} {auprc}accuracy {row['accuracy']:.3f}")
    if parts:
        out.append("At the last checkpoint: " + "; ".join(parts) + ".")
    return out


def render_rs(current: Mapping[str, Any] | None, show: str = "srs") -> dict:
    """Curves, the selected set and sentences of the RS/SRS study (from the cache)."""
    view = _load((current or {}).get("key"), "RS/SRS study")
    if view is None:
        return {"curves_figure": placeholder_figure("No result yet."),
                "selected_figure": placeholder_figure("No result yet."), "sentences": [],
                "selected_sentences": [], "partial_note": ""}
    settings = current["settings"]
    fig = make_subspace_curves(_curves_frame(view))
    sentences = rs_sentences(view, settings)
    sels = view["selections"]
    method = show if show in sels else next(iter(sels), None)
    selected_sentences = []
    if method is None:
        sel_fig = placeholder_figure("No selection yet.")
    else:
        s = selection_from_dict(sels[method])
        sel_fig = make_selected_figure(s)
        line = (f"Seed 0, {method.upper()}: F holds the {len(s.selected):,} features drawn "
                f"more than L = {settings['L']} times that beat the random probe in at least "
                f"\u03b2 = {settings['beta']:g} of their trees: {_names(s.selected, 20)}.")
        if s.relevant is not None:
            prec, rec = s.precision, s.recall
            line += (f" Precision {'n/a (nothing selected)' if math.isnan(prec) else f'{prec:.2f}'}"
                     f", recall {rec:.2f} against the {len(s.relevant)} truly relevant "
                     "features (outlined, \u2713).")
        else:
            line += " The truly relevant features of this data are unknown, so there is no " \
                    "precision or recall."
        selected_sentences.append(line)
    note = ""
    if current.get("partial"):
        note = (f"Partial result: cancelled after {view['trees_done']:,} of "
                f"{view['trees_asked']:,} trees.")
    return {"curves_figure": fig, "selected_figure": sel_fig, "sentences": sentences,
            "selected_sentences": selected_sentences, "partial_note": note}


# -- export ---------------------------------------------------------------------------------
def csv_text(what: str, current: Mapping[str, Any] | None) -> str:
    """CSV of ``"pvalues"`` (relevance classes joined when known), ``"curves"`` or ``"selected"``.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "pvalues":
        view = _load((current or {}).get("key"), "permutation null")
        if view is None:
            raise ValueError("There is no result to download yet.")
        df = result_from_dict(view["null"]).to_frame()
        rel = cache.get_json(current.get("relevance_key") or "")
        if rel and rel.get("relevance"):
            r = relevance_from_dict(rel["relevance"]).to_frame()
            df = df.merge(r, on="variable", how="left")
        return safe_csv(df)
    view = _load((current or {}).get("key"), "RS/SRS study")
    if view is None:
        raise ValueError("There is no RS/SRS study to download yet.")
    if what == "curves":
        return safe_csv(_curves_frame(view))
    frames = []
    for method, d in view["selections"].items():
        f = selection_from_dict(d).to_frame()
        f.insert(0, "method", method)
        frames.append(f)
    return safe_csv(pd.concat(frames, ignore_index=True))


def csv_filename(what: str, current: Mapping[str, Any] | None) -> str:
    """``varimp-selection-<data>-<what>.csv`` with only safe characters."""
    settings = (current or {}).get("settings") or {}
    if "source" in settings:
        src = settings["source"]
        name = f"madelon-{src['irrelevant']}" if src["kind"] == "madelon" else \
            _data_name(src["data"])
    else:
        name = _data_name(settings.get("data") or {})
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{what}").strip("-.")[:80]
    return f"varimp-selection-{slug}.csv"


def _data_name(data: Mapping[str, Any]) -> str:
    name = data.get("problem") if data.get("source") == "problem" else \
        (data.get("file") or "upload")
    return re.sub(r"\.csv$", "", str(name or "data"), flags=re.I)
