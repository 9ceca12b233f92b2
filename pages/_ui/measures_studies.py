"""The Measures page's studies of Li et al. (2019).

2. the noisy-feature protocol, Table 1
   (:func:`varimp_core.noisy_protocol.noisy_feature_auc`, one cache entry per
   repetition and depth setting);
3. MDI and MDI-oob against min leaf size and depth, Figs 1-3
   (:func:`varimp_core.noisy_protocol.mdi_bias_curves`, one entry per forest).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.measures.suite import DEFAULT_MEASURES
from varimp_core.studies.noisy_protocol import (DEPTH_SETTINGS, LI2019_TABLE1, bias_curve_summary,
                                                mdi_bias_curves, noisy_feature_auc)
from varimp_core.plots.measures import make_auc_figure, make_bias_curves, measure_label
from varimp_core.problems.registry import get_problem

from . import cache
from .measures_state import BIAS_GRIDS, STUDY_MAX_FEATURES, STUDY_PROBLEMS, _cached, _say

__all__ = ["study_units", "auc_view", "auc_summary", "auc_table", "auc_note", "render_auc",
           "bias_units", "bias_view", "bias_note", "render_bias"]


def _gather(units: Sequence[tuple], key: Callable[..., str], run: Callable[..., Any], *,
            compute: bool, say: Callable[..., Any]) -> tuple[list, int]:
    """The cached rows of every unit, in order, and how many units have them.

    ``key(*unit)`` is a unit's cache key; on a miss ``run(i, *unit)`` computes
    its rows when ``compute`` (False only reads the cache).  ``say`` hears the end.
    """
    rows: list = []
    done = 0
    for i, unit in enumerate(units):
        part = _cached(key(*unit), (lambda i=i, unit=unit: run(i, *unit)) if compute else None)
        if part is not None:
            rows.extend(part)
            done += 1
    say(len(units), len(units))
    return rows, done


def _cancelled(view: Mapping[str, Any], what: str, text: str) -> str:
    """``text``, after how far a cancelled job got (``done`` of ``total`` ``what``)."""
    if view["done"] < view["total"]:
        text = f"Cancelled after {view['done']} of {view['total']} {what}. " + text
    return text


# -- 2. the noisy-feature protocol ------------------------------------------------------------
_AUC_COLUMNS = ["problem", "task", "depth_setting", "min_samples_leaf", "measure", "seed", "auc"]


def study_units(settings: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(depth setting, seed) of each run; seeds outermost, so a cancelled study stays balanced."""
    return [(d, seed) for seed in range(settings["reps"]) for d in settings["study_depth"]]


def auc_view(settings: Mapping[str, Any], *, progress=None, compute: bool = True) -> dict:
    """AUC scores of the protocol, one cache entry per (depth setting, seed).

    Returns ``scores`` (as :func:`noisy_feature_auc`'s, depth settings in
    :data:`DEPTH_SETTINGS` order then seeds), ``summary``, ``done`` and ``total``.
    """
    say = _say(progress)
    spec = STUDY_PROBLEMS[settings["study"]]
    units = study_units(settings)

    def key(depth, seed):
        return cache.key_for("meas-auc", spec, depth, seed, settings["study_trees"],
                             STUDY_MAX_FEATURES, list(DEFAULT_MEASURES))

    def run(i, depth, seed):
        say(i, len(units), f"Repetition {seed + 1} of {settings['reps']}, {depth} trees")
        res = noisy_feature_auc(problems=[spec], depth_settings=[depth], seeds=[seed],
                                n_estimators=settings["study_trees"],
                                max_features=STUDY_MAX_FEATURES)
        return res.scores.to_dict("records")

    rows, done = _gather(units, key, run, compute=compute, say=say)
    scores = pd.DataFrame(rows, columns=_AUC_COLUMNS)
    order = scores["depth_setting"].map({d: i for i, d in enumerate(DEPTH_SETTINGS)})
    scores = scores.iloc[np.lexsort((scores["seed"].to_numpy(), order.to_numpy()))]
    scores = scores.reset_index(drop=True)
    return {"scores": scores, "summary": auc_summary(scores), "done": done, "total": len(units)}


def auc_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1) and count of the AUC per setting and measure."""
    keys = ["problem", "task", "depth_setting", "measure"]
    if scores.empty:
        return pd.DataFrame(columns=[*keys, "mean", "std", "n"])
    return scores.groupby(keys, sort=False)["auc"].agg(mean="mean", std="std",
                                                       n="count").reset_index()


def _paper_value(task: str, depth: str, measure: str, problem: str) -> float | None:
    if problem != "strobl":
        return None
    return LI2019_TABLE1.get((task, depth), {}).get(measure)


def auc_table(view: Mapping[str, Any]) -> tuple[list, list]:
    """One row per measure; per depth setting ``mean ± sd`` and the paper's value."""
    summary = view["summary"]
    depths = list(dict.fromkeys(summary["depth_setting"]))
    cols = [{"name": "Measure", "id": "measure"}]
    for d in depths:
        cols += [{"name": f"{d.capitalize()}: mean \u00b1 sd", "id": d},
                 {"name": f"{d.capitalize()}: paper", "id": f"{d}_paper"}]
    rows = []
    for m in dict.fromkeys(summary["measure"]):
        row = {"measure": measure_label(m)}
        for d in depths:
            hit = summary[(summary["measure"] == m) & (summary["depth_setting"] == d)]
            if hit.empty:
                row[d] = "\u2014"
            else:
                s = hit.iloc[0]
                row[d] = (f"{s['mean']:.2f} \u00b1 {s['std']:.2f} (n = {int(s['n'])})"
                          if s["n"] > 1 else f"{s['mean']:.2f} (n = 1)")
                ref = _paper_value(s["task"], d, m, s["problem"])
                row[f"{d}_paper"] = "\u2014" if ref is None else f"{ref:.2f}"
        rows.append(row)
    return cols, rows


def auc_note(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What the study is, how it differs from the paper's run, and a cancelled study's size."""
    spec = STUDY_PROBLEMS[settings["study"]]
    problem = get_problem(spec)
    text = (f"{len(problem.variables)} inputs, {len(problem.relevant)} of them relevant; "
            f"{settings['study_trees']} trees with K = {STUDY_MAX_FEATURES} (mtry), "
            f"{settings['reps']} repetition{'s' if settings['reps'] > 1 else ''} (seeds 0 to "
            f"{settings['reps'] - 1}). AUC 1: every relevant feature ranks above every noisy "
            "one; 0.5: chance; below 0.5: the measure prefers noisy features.")
    if problem.name == "strobl":
        text += (" Black dashes: Li et al. (2019), Table 1 (100 trees, 40 repetitions; their "
                 "MDA is the held-out permutation importance; they report no out-of-bag MDA).")
    else:
        text += " The paper has no madelon numbers (its second data set, ChIP, is not here)."
    return _cancelled(view, "runs: the table and the plot show those", text)


def render_auc(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """``figure``, ``columns``, ``rows`` and ``note`` of a computed study."""
    figure = make_auc_figure(view["scores"])
    figure.update_layout(height=None)
    cols, rows = auc_table(view)
    return {"figure": figure, "columns": cols, "rows": rows, "note": auc_note(view, settings)}


# -- 3. MDI against min leaf size and depth --------------------------------------------------
def bias_units(settings: Mapping[str, Any]) -> list[tuple[int, str, int]]:
    """(seed, parameter, value) of each forest; the two grids interleaved."""
    leaf, depth = BIAS_GRIDS[settings["bias_grid"]]
    pairs = [u for i in range(max(len(leaf), len(depth)))
             for u in ([("min_samples_leaf", leaf[i])] if i < len(leaf) else [])
             + ([("max_depth", depth[i])] if i < len(depth) else [])]
    return [(seed, par, v) for seed in range(settings["bias_reps"]) for par, v in pairs]


def bias_view(settings: Mapping[str, Any], *, progress=None, compute: bool = True) -> dict:
    """Scores of :func:`mdi_bias_curves`, cached per forest: ``scores``, ``done``, ``total``."""
    say = _say(progress)
    units = bias_units(settings)

    def key(seed, par, value):
        return cache.key_for("meas-bias", settings["bias_n"], settings["bias_trees"], seed,
                             par, value)

    def run(i, seed, par, value):
        say(i, len(units), f"Forest {i + 1} of {len(units)}")
        res = mdi_bias_curves(
            min_samples_leaf=[value] if par == "min_samples_leaf" else [],
            max_depth=[value] if par == "max_depth" else [], n_samples=settings["bias_n"],
            n_estimators=settings["bias_trees"], seeds=[seed])
        return res.scores.to_dict("records")

    rows, done = _gather(units, key, run, compute=compute, say=say)
    scores = pd.DataFrame(rows, columns=["parameter", "value", "measure", "variable",
                                         "relevant", "seed", "importance"])
    return {"scores": scores, "done": done, "total": len(units)}


def bias_note(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What the curves show (Li et al. 2019, section 4, first simulation)."""
    text = (f"N = {settings['bias_n']} rows: X1 ~ N(0, 1), X2 a fair bit, X3, X4, X5 with 4, 10 "
            "and 20 equally likely categories; P(Y = 1) = (1 + X2)/3, so only X2 is relevant. "
            f"{settings['bias_trees']} trees, K = 2. Figs 1 and 2 of the paper: the MDI of the "
            "noisy features falls as the min leaf size grows and rises with the depth; Fig. 3: "
            "MDI-oob keeps them near 0.")
    if settings["bias_reps"] > 1:
        text += f" Mean over {settings['bias_reps']} data sets, with one standard error."
    return _cancelled(view, "forests: the curves show those", text)


def render_bias(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """``figure`` and ``note`` of computed curves."""
    figure = make_bias_curves(bias_curve_summary(view["scores"]))
    figure.update_layout(height=None)
    return {"figure": figure, "note": bias_note(view, settings)}
