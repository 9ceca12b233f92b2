"""Logic behind the Interactions page, as plain functions tests can call.

The page fits a forest (random uniform forest, random forest, extra-trees or
varimp's multiway forest) on the training part of the shared data, counts
Ciss's local importance on the training or the held-out rows
(:func:`varimp_core.local.local_importance`) and shows what the positions say:
interactions (a mosaic of first x second order), the importance based on
interactions, partial importance for one class or range of responses, and
importance over labels.

The forest, its settings, its fitting and its cached entry are shared with
the Dependence page and live in :mod:`pages._ui.local_forest`; they are
re-exported here.  Every figure is recomputed from the cached entry, which is
cheap.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.local.interactions import (OTHER_FEATURES, Interactions, importance_over_labels,
                                            interaction_importance, interactions,
                                            partial_importance)
from varimp_core.local.importance import LocalImportance
from varimp_core.plots.interactions import (make_importance_over_labels, make_mosaic,
                                            make_partial_importance_figure, make_vii_bars)

from . import cache, datasource
from .common import neutralise_cell, safe_csv
from .datasource import data_params_for_page
from .local_forest import (FOREST_KINDS, FOREST_NAMES, FOREST_OPTIONS, FOREST_PARAMS,
                           MAX_ROWS, MAX_TREES_UI, SKLEARN_KINDS, TEST_SHARE,
                           data_variables, fit_forest, forest_cards, forest_params,
                           forest_settings, local_from_json, local_key, local_view,
                           make_forest_loader, multiway_table, page_data, placeholder_figure,
                           split_rows)
from .state import Param, choice_parser, encode_query, float_parser, parse_query

__all__ = [
    # this page
    "PREFIX", "PARAMS", "DEFAULT_MIN_SHARE", "MAX_MIN_SHARE", "view_settings", "initial_state",
    "page_query", "compute", "draw", "summary_sentence", "tile_rows", "pairs_csv",
    "variables_csv", "csv_filename",
    # the shared forest, re-exported from :mod:`pages._ui.local_forest`
    "FOREST_KINDS", "FOREST_OPTIONS", "FOREST_PARAMS", "SKLEARN_KINDS", "forest_params",
    "multiway_table", "MAX_TREES_UI", "MAX_ROWS", "TEST_SHARE", "page_data", "data_variables",
    "forest_settings", "forest_cards", "split_rows", "fit_forest", "make_forest_loader",
    "local_key", "local_view", "local_from_json", "placeholder_figure",
]

PREFIX = "inter"
DEFAULT_MIN_SHARE = 0.01
MAX_MIN_SHARE = 0.2
#: Observations listed for one mosaic tile.
MAX_TILE_ROWS = 1000


def _label_text(text) -> str:
    return str(text)[:200]


def _finite(text) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise ValueError(f"the threshold must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"the threshold must be a finite number, got {text!r}")
    return value


#: URL parameters of the Interactions page (after the data and forest parameters).
PARAMS: tuple[Param, ...] = FOREST_PARAMS + (
    Param("other", DEFAULT_MIN_SHARE, float_parser(0.0, MAX_MIN_SHARE, what="other-features "
                                                   "threshold"), "other-features threshold"),
    Param("label", None, _label_text, "class"),
    Param("threshold", None, _finite, "threshold"),
    Param("direction", "above", choice_parser(("above", "below"), what="direction"),
          "direction"),
)

_FOREST_DEFAULTS = {p.name: p.default for p in FOREST_PARAMS}
_VIEW_DEFAULTS = {"other": DEFAULT_MIN_SHARE, "direction": "above"}


# -- state -----------------------------------------------------------------------------
def view_settings(*, other=DEFAULT_MIN_SHARE, label=None, threshold=None,
                  direction="above") -> dict:
    """Canonical view settings (cheap to change: no refit).

    Raises
    ------
    ValueError
        With a sentence for an out-of-range threshold of other features or a
        threshold that is not a number.
    """
    try:
        other = DEFAULT_MIN_SHARE if other is None or other == "" else float(other)
    except (TypeError, ValueError):
        raise ValueError(f"The other-features threshold must be a number, got {other!r}.") \
            from None
    if not 0 <= other <= MAX_MIN_SHARE:
        raise ValueError(f"The other-features threshold must be from 0 to {MAX_MIN_SHARE:g}, "
                         f"got {other:g}.")
    if threshold is not None and threshold != "":
        try:
            threshold = float(threshold)
        except (TypeError, ValueError):
            raise ValueError(f"The threshold must be a number, got {threshold!r}.") from None
        if not math.isfinite(threshold):
            raise ValueError("The threshold must be a finite number.")
    else:
        threshold = None
    if direction not in ("above", "below"):
        raise ValueError("Choose above or below for the threshold.")
    return {"other": round(other, 4), "label": None if label in (None, "") else str(label),
            "threshold": threshold, "direction": direction}


def initial_state(query: Mapping[str, Any], vi_data: Any = None,
                  params: Sequence[Param] = PARAMS) -> dict:
    """Everything ``layout(**query)`` needs: data, control values, notes, query.

    Returns
    -------
    state : dict
        ``data`` (the data choice), ``page_data`` (with observations, see
        :func:`page_data`), ``values`` (one per parameter of ``params``),
        ``notes`` and ``query``.
    """
    data, notes = data_params_for_page(query, vi_data)
    values, more = parse_query(query, params)
    notes += more
    used, more = page_data(data)
    notes += more
    return {"data": data, "page_data": used, "values": values, "notes": notes,
            "query": page_query(data, values)}


def page_query(data: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    """The page's URL query: the data query, then the values that differ from their defaults."""
    defaults = {**_FOREST_DEFAULTS, **_VIEW_DEFAULTS}
    kept = {k: v for k, v in values.items()
            if v is not None and v != "" and (k not in defaults or v != defaults[k])}
    parts = [datasource.data_query(data), encode_query(kept)]
    return "&".join(part for part in parts if part)


# -- computing -------------------------------------------------------------------------
def compute(data: Mapping[str, Any], settings: Mapping[str, Any], *,
            progress: Callable | None = None) -> dict:
    """Fit (on a cache miss) and count; the small store value the figures are drawn from.

    Returns
    -------
    store : dict
        ``key`` (of the cached local importance), ``data``, ``settings``,
        ``task``, ``classes``, ``variables``, ``target``, ``n`` (rows
        assessed), ``n_fit``, ``median`` (of the predictions, regression).

    Raises
    ------
    ValueError, DataError
        With a sentence.
    """
    data = datasource.canonical_params(data)
    settings = dict(settings)
    view = local_view(data, settings, make_forest_loader(data, settings, progress), progress)
    median = None
    if view["task"] == "regression":
        median = float(np.median(np.asarray(view["prediction"], dtype=float)))
    return {"key": view["key"], "data": data, "settings": settings, "task": view["task"],
            "classes": view["classes"], "variables": view["variables"],
            "target": view["target"], "n": len(view["rows"]), "n_fit": view["n_fit"],
            "median": median}


def _load_local(store: Mapping[str, Any]) -> tuple[LocalImportance, dict]:
    d = cache.get_json(store["key"])
    if d is None:
        raise ValueError("The result is no longer on the server (the cache was cleared); "
                         "change a setting or reload the page to recompute it.")
    return local_from_json(d), d


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip() or "These settings cannot be shown."
    return text if text.endswith((".", "!", "?")) else text + "."


def _subset_args(local: LocalImportance, view: Mapping[str, Any], median: float | None) -> dict:
    if local.task == "classification":
        label = view["label"]
        if label not in local.classes:
            label = next((c for c in local.classes if np.any(local.prediction == c)),
                         local.classes[0])
        return {"label": label}
    threshold = view["threshold"]
    if threshold is None:
        threshold = median if median is not None else float(np.median(local.prediction))
    return {"threshold": threshold, "direction": view["direction"]}


def draw(store: Mapping[str, Any], view: Mapping[str, Any]) -> dict:
    """Figures and sentences of the page for a computed store and view settings.

    Every part is drawn on its own: a part that does not apply (importance over
    labels for a regression target, interactions of a single tree) gets a
    sentence and a placeholder figure, and the other parts still show.

    Returns
    -------
    out : dict
        ``mosaic``, ``vii``, ``partial``, ``over`` (figures) with
        ``<part>_message`` (a sentence, "" when fine), ``summary`` (text),
        ``label`` (the class shown, classification) and ``threshold`` (the
        threshold used, regression).
    """
    local, d = _load_local(store)
    out: dict[str, Any] = {}

    def part(name, fn):
        try:
            out[name], out[name + "_message"] = fn(), ""
        except ValueError as exc:
            out[name], out[name + "_message"] = placeholder_figure(_sentence(exc)), \
                _sentence(exc)

    variables = list(local.variables)
    result: dict[str, Interactions] = {}

    def mosaic():
        result["it"] = interactions(local, min_share=view["other"])
        fig = make_mosaic(result["it"], variables=variables)
        fig.update_layout(height=None)
        return fig

    part("mosaic", mosaic)
    part("vii", lambda: _no_height(make_vii_bars(interaction_importance(local))))
    subset = _subset_args(local, view, store.get("median"))
    out["label"] = subset.get("label")
    out["threshold"] = subset.get("threshold")
    part("partial", lambda: _no_height(make_partial_importance_figure(
        partial_importance(local, **subset), variables=variables)))

    def over():
        if local.task != "classification":
            raise ValueError(f"Importance over labels compares classes, and the target "
                             f"\u201c{d['target']}\u201d is numeric (regression); partial "
                             "importance above or below a threshold is its counterpart.")
        return _no_height(make_importance_over_labels(importance_over_labels(local)))

    part("over", over)
    out["summary"] = summary_sentence(store, result.get("it"))
    return out


def _no_height(fig):
    fig.update_layout(height=None)
    return fig


def summary_sentence(store: Mapping[str, Any], it: Interactions | None) -> str:
    """What the figures are computed on, in one or two sentences."""
    s = store["settings"]
    k = "all inputs" if s["K"] is None else f"K = {s['K']}"
    trees = f"{s['trees']:,} tree{'s' if s['trees'] != 1 else ''}"
    if s["rows"] == "test":
        rows = f"{store['n']:,} held-out rows"
    elif store["n"] == store["n_fit"]:
        rows = "the same rows"
    else:
        rows = f"{store['n']:,} of them"
    text = (f"A {FOREST_NAMES[s['forest']]} of {trees} ({k}) fitted on {store['n_fit']:,} "
            f"rows, assessed on {rows}; labels are not used.")
    if it is not None:
        text += (f" {it.n_pairs:,} of {it.n_observations:,} observations have a variable at "
                 "both positions 1 and 2.")
        if it.merged:
            more = f" and {len(it.merged) - 8:,} more" if len(it.merged) > 8 else ""
            text += (f" Merged into \u201c{OTHER_FEATURES}\u201d: "
                     f"{', '.join(it.merged[:8])}{more}.")
    return text


def tile_rows(store: Mapping[str, Any], other: float, first: str, second: str
              ) -> tuple[list[dict], list[dict], str]:
    """The observations behind the mosaic tile ``(first, second)``.

    Returns
    -------
    columns, rows : list of dict
        DataTable columns and rows: ``row`` (row number in the data, from 0),
        the value of every input, ``prediction``, ``first`` and ``second``
        (the variables at positions 1 and 2) and ``share_first`` (share of
        trees whose leaf parent is the first variable).
    caption : str
    """
    local, d = _load_local(store)
    it = interactions(local, min_share=other)
    code = {v: (v if v in it.labels else OTHER_FEATURES) for v in local.variables}
    if first not in it.labels or second not in it.labels:
        raise ValueError("That tile is not in the current mosaic; click a tile again.")
    pos = local.positions
    names = np.array(list(local.variables) + [None], dtype=object)
    v1, v2 = names[pos[:, 0]], names[pos[:, 1]]      # interactions() needs p >= 2
    has = (pos[:, 0] >= 0) & (pos[:, 1] >= 0)
    keep = np.flatnonzero(has & np.array([code.get(a) == first for a in v1])
                          & np.array([code.get(b) == second for b in v2]))
    variables = list(local.variables)
    columns = ([{"name": "Row", "id": "row", "type": "numeric"}]
               + [{"name": v, "id": f"x{j}", "type": "numeric"} for j, v in enumerate(variables)]
               + [{"name": f"Prediction ({d['target']})", "id": "prediction",
                   "type": "text" if local.task == "classification" else "numeric"},
                  {"name": "Position 1", "id": "first"}, {"name": "Position 2", "id": "second"},
                  {"name": "Share of trees, position 1", "id": "share_first", "type": "numeric"}])
    rows = []
    shown = keep[:MAX_TILE_ROWS]
    data_rows = np.asarray(d["rows"])
    for i in shown:
        row = {"row": int(data_rows[i])}
        row.update({f"x{j}": _num(local.X[i, j]) for j in range(len(variables))})
        pred = local.prediction[i]
        row["prediction"] = str(pred) if local.task == "classification" else _num(pred)
        row["first"], row["second"] = v1[i], v2[i]
        row["share_first"] = _num(local.counts[i, pos[i, 0]] / local.n_estimators)
        rows.append(row)
    caption = (f"{keep.size:,} observation{'s' if keep.size != 1 else ''} with {first} at "
               f"position 1 and {second} at position 2")
    if keep.size > len(shown):
        caption += f"; the first {len(shown):,} are listed"
    return columns, rows, caption + "."


def _num(v) -> float | None:
    v = float(v)
    return round(v, 6) if math.isfinite(v) else None


# -- export ----------------------------------------------------------------------------
def pairs_csv(store: Mapping[str, Any], other: float) -> str:
    """CSV of the interaction tables: one row per (first, second) pair."""
    local, _ = _load_local(store)
    it = interactions(local, min_share=other)
    df = it.to_frame()
    df["observations"] = np.rint(df["joint"].to_numpy() * it.n_pairs).astype(int)
    return safe_csv(df)


def variables_csv(store: Mapping[str, Any]) -> str:
    """CSV per variable: importance based on interactions and shares at positions 1 and 2."""
    local, _ = _load_local(store)
    sli = local.position_counts()
    n = local.n_observations
    df = pd.DataFrame({"variable": list(local.variables),
                       "share_position_1": sli[:, 0] / n,
                       "share_position_2": (sli[:, 1] / n) if local.n_features > 1 else 0.0})
    try:
        vii = interaction_importance(local)
        df["vii"] = vii.importances
        df["vii_share"] = vii.normalised
    except ValueError:
        pass
    return safe_csv(df)


def csv_filename(store: Mapping[str, Any], what: str) -> str:
    """``varimp-interactions-<data>-<forest>-<what>.csv`` with only safe characters."""
    data = store["data"]
    name = data.get("problem") if data["source"] == "problem" else (data.get("file") or "upload")
    name = re.sub(r"\.csv$", "", str(name), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{store['settings']['forest']}-{what}")
    return f"varimp-interactions-{slug.strip('-.')[:80]}.csv"
