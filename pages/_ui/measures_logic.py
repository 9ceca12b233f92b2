"""Logic behind the Measures page, as plain functions tests can call.

Three views, each a background job whose pieces are cached server-side one by
one (so a cancelled job leaves what it finished, and the page shows it):

1. the importance measures of one scikit-learn forest side by side
   (:mod:`pages._ui.measures_compare`);
2. the noisy-feature protocol of Li et al. (2019), Table 1, and
3. MDI and MDI-oob against min leaf size and depth, Figs 1-3
   (both in :mod:`pages._ui.measures_studies`).

Settings, URL and cache live in :mod:`pages._ui.measures_state`; this module
holds the CSV downloads and what the callbacks return, and re-exports the
names the page uses.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from varimp_core.measures.suite import measures_frame
from varimp_core.plots.measures import SCALES, scale_values

from . import datasource, jobs
from .common import neutralise_cell, placeholder_figure, safe_csv
from .datasource import data_feature_count
from .measures_compare import (exact_params, measures_note, measures_table,  # noqa: F401
                               measures_view, measures_warning, render_measures, resolve_k,
                               rows_params)
from .measures_state import (AUC, BIAS, BIAS_GRIDS, BIAS_KEYS, BIAS_MAX_REPS,  # noqa: F401
                             BIAS_MAX_TREES, CRITERION_OPTIONS, DEPTH_OPTIONS, FOREST_KEYS,
                             KIND_OPTIONS, MAIN_FOREST, MAX_REPS, MAX_TREES_UI,
                             MEASURE_OPTIONS, NEEDS_OOB, PARAMS, PREFIX, STUDY_KEYS,
                             STUDY_MAX_FEATURES, STUDY_MAX_TREES, STUDY_OPTIONS, STUDY_PROBLEMS,
                             bias_settings, forest_settings, initial_state, page_query,
                             study_settings)
from .measures_studies import (_AUC_COLUMNS, _paper_value, auc_note,  # noqa: F401
                               auc_summary, auc_table, auc_view, bias_note, bias_units,
                               bias_view, render_auc, render_bias, study_units)

__all__ = [
    "PREFIX", "AUC", "BIAS", "PARAMS", "FOREST_KEYS", "STUDY_KEYS", "BIAS_KEYS", "BIAS_GRIDS",
    "STUDY_PROBLEMS", "forest_settings", "study_settings", "bias_settings", "page_query",
    "initial_state", "query_from_controls", "rows_params", "exact_params", "resolve_k",
    "measures_view", "measures_note", "measures_warning", "measures_table", "measures_csv",
    "render_measures", "study_units", "auc_view", "auc_summary", "auc_table", "auc_note",
    "auc_csv", "render_auc", "bias_units", "bias_view", "bias_note", "render_bias",
    "csv_filename", "measures_outputs", "rescaled_figure", "auc_outputs",
    "bias_outputs", "download", "placeholder_figure",
]


# -- downloads ------------------------------------------------------------------------------
def measures_csv(view: Mapping[str, Any]) -> str:
    """Tidy CSV: :func:`measures_frame`, ``scaled`` (max |value| = 1 per measure), exact rows."""
    results = dict(view["results"])
    if view["exact"] is not None:
        results["exact_mdi"] = view["exact"]
    df = measures_frame(results)
    df["scaled"] = np.concatenate([scale_values(r.importances)[0] for r in results.values()])
    return safe_csv(df)


def auc_csv(view: Mapping[str, Any]) -> str:
    """Tidy CSV of the AUC scores with the paper's value on each row (blank when none)."""
    df = view["scores"].copy()
    df["paper_auc"] = [_paper_value(t, d, m, p) for t, d, m, p in
                       zip(df["task"], df["depth_setting"], df["measure"], df["problem"])]
    return safe_csv(df)


def csv_filename(what: str, data: Mapping[str, Any] | None = None) -> str:
    """``varimp-measures-<what>[-<data>].csv`` with only safe characters."""
    import re

    part = what
    if data is not None:
        data = datasource.canonical_params(data)
        name = data.get("problem") if data["source"] == "problem" else (data.get("file")
                                                                         or "upload")
        part += "-" + re.sub(r"\.csv$", "", str(name), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", part).strip("-.")[:80]
    return f"varimp-measures-{slug}.csv"


# -- what the callbacks return ----------------------------------------------------------------
def query_from_controls(*values) -> str | None:
    """The URL query from every control of the page (in the page's order), or None if invalid."""
    *controls, data = values
    n1, n2 = len(FOREST_KEYS), len(STUDY_KEYS)
    forest = dict(zip(FOREST_KEYS, controls[:n1]))
    scale = controls[n1]
    study = dict(zip(STUDY_KEYS, controls[n1 + 1:n1 + 1 + n2]))
    bias = dict(zip(BIAS_KEYS, controls[n1 + 1 + n2:]))
    try:
        return page_query(data, forest_settings(**forest, p=data_feature_count(data)),
                          study_settings(**study), bias_settings(**bias),
                          scale if scale in SCALES else "max")
    except ValueError:
        return None


def _failed(exc: BaseException, n_outputs: int, shown: Any) -> tuple:
    """``no_update`` for the views (the figure says why it is empty when nothing was shown
    yet), then the error sentence, its class and a blank status."""
    from dash import no_update

    message = jobs.error_message(exc)
    if shown:
        message += " The page still shows the previous settings."
    figure = no_update if shown else placeholder_figure("Nothing to show yet: see the "
                                                        "message above.")
    return (figure, *[no_update] * (n_outputs - 1), message, "vi-error", "")


def _status(progress, compute: bool, complete: bool) -> str:
    if compute:
        return jobs.done_message(progress)
    return ("Cancelled; the page shows the parts that finished." if not complete else
            "Cancelled after the last part finished; the page shows the whole result.")


def measures_outputs(*values, progress=None, compute: bool = True) -> tuple:
    """Outputs of the side-by-side job (or, with ``compute=False``, of Cancel).

    ``values``: the controls of :data:`FOREST_KEYS`, the scale, the data
    parameters and the last shown view.  Returns figure, table columns and
    rows, note, warning and its class, current view, error and its class,
    status.
    """
    *controls, scale, data, shown = values
    try:
        forest = forest_settings(**dict(zip(FOREST_KEYS, controls)),
                                 p=data_feature_count(data))
        view = measures_view(data, forest, progress=progress, compute=compute)
        out = render_measures(view, forest, scale if scale in SCALES else "max")
    except Exception as exc:  # a sentence on the page, never a traceback
        return _failed(exc, 7, shown)
    return (out["figure"], out["columns"], out["rows"], out["note"], out["warning"],
            "vi-notes" if out["warning"] else "vi-hidden", {"data": data, "forest": forest},
            "", "vi-hidden", _status(progress, compute, not view["missing"]))


def rescaled_figure(current: Mapping[str, Any] | None, scale: str):
    """The side-by-side figure of the shown view on another scale (None when there is none)."""
    if not current or scale not in SCALES:
        return None
    try:
        view = measures_view(current["data"], current["forest"], compute=False)
        return render_measures(view, current["forest"], scale)["figure"]
    except Exception:  # the next job run reports errors
        return None


def _study_outputs(values, *, keys, settings_of, view_of, render, shows, cancelled,
                   progress, compute) -> tuple:
    """Outputs of a study job (or of Cancel): the ``shows`` parts of the rendered view,
    the current settings, error and its class, status."""
    *controls, shown = values
    try:
        settings = settings_of(**dict(zip(keys, controls)))
        view = view_of(settings, progress=progress, compute=compute)
        if not view["done"]:
            raise ValueError(cancelled)
        out = render(view, settings)
    except Exception as exc:  # a sentence on the page, never a traceback
        return _failed(exc, len(shows) + 1, shown)
    return (*(out[k] for k in shows), settings, "", "vi-hidden",
            _status(progress, compute, view["done"] == view["total"]))


def auc_outputs(*values, progress=None, compute: bool = True) -> tuple:
    """Outputs of the protocol job (or of Cancel): figure, table columns and rows, note,
    current settings, error and its class, status."""
    return _study_outputs(values, keys=STUDY_KEYS, settings_of=study_settings,
                          view_of=auc_view, render=render_auc,
                          shows=("figure", "columns", "rows", "note"),
                          cancelled="Cancelled before the first repetition finished.",
                          progress=progress, compute=compute)


def bias_outputs(*values, progress=None, compute: bool = True) -> tuple:
    """Outputs of the bias-curve job (or of Cancel): figure, note, current settings, error
    and its class, status."""
    return _study_outputs(values, keys=BIAS_KEYS, settings_of=bias_settings,
                          view_of=bias_view, render=render_bias, shows=("figure", "note"),
                          cancelled="Cancelled before the first forest finished.",
                          progress=progress, compute=compute)


def download(what: str, current: Mapping[str, Any] | None) -> dict | None:
    """``dcc.Download`` data of the shown view of a section (``measures``, ``auc``, ``bias``)."""
    from dash import no_update

    if not current:
        return no_update
    if what == "measures":
        view = measures_view(current["data"], current["forest"], compute=False)
        return dict(content=measures_csv(view), type="text/csv",
                    filename=csv_filename("side-by-side", current["data"]))
    if what == "auc":
        view = auc_view(current, compute=False)
        return dict(content=auc_csv(view), type="text/csv",
                    filename=csv_filename(f"auc-{current['study']}"))
    view = bias_view(current, compute=False)
    return dict(content=safe_csv(view["scores"]), type="text/csv",
                filename=csv_filename("bias-curves"))
