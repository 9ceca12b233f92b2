"""Logic behind the Dependence page, as plain functions tests can call.

Two different answers to "how do the predictions depend on this input?":

* Friedman's partial dependence with ICE lines
  (:func:`varimp_core.dependence.partial_dependence`): the forest is asked
  about rows whose input is *set* to each grid value, and the answers are
  averaged; one variable gives a line, two give a surface;
* Ciss's dependence over responses
  (:func:`varimp_core.dependence.dependence_over_responses`): the observed
  values of the input against the forest's predictions, for the observations
  where the input is locally important.  Nothing is set or averaged.

The forest comes from the same settings, fitting and cache as the Interactions
page (:mod:`pages._ui.local_forest`).  Partial dependences are cached
server-side as JSON keyed by a hash of the data, forest and grid settings.

The page's URL parameters, state and settings live in
:mod:`pages._ui.dependence_state`; this module computes, draws and exports
the dependences, and re-exports the state's names (the page and the tests use
``dependence_logic`` only).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.local.partial_dependence import PartialDependence, partial_dependence
from varimp_core.local.response_dependence import dependence_over_responses
from varimp_core.plots.dependence import (make_dependence_over_responses, make_pd2_figure,
                                          make_pd_figure)
from varimp_core.plots.style import variable_color

from . import cache, datasource
from . import local_forest as forest
from .common import safe_csv
from .common import placeholder_figure
from .dependence_state import (ALL_CLASSES, MAX_GRID, MAX_GRID_2D, MAX_ICE, MAX_PD_ROWS, PARAMS,
                               POSITION_OPTIONS, PREFIX, _POSITIONS, check_positions,
                               dependence_settings, initial_state, page_query)

__all__ = [
    "PREFIX",
    "PARAMS",
    "MAX_GRID",
    "MAX_GRID_2D",
    "MAX_ICE",
    "MAX_PD_ROWS",
    "POSITION_OPTIONS",
    "ALL_CLASSES",
    "initial_state",
    "dependence_settings",
    "page_query",
    "pd_key",
    "pd_from_json",
    "compute",
    "class_options",
    "default_class",
    "check_positions",
    "draw",
    "pd_csv",
    "dor_csv",
    "csv_filename",
]


# -- computing -------------------------------------------------------------------------
def pd_key(data: Mapping[str, Any], settings: Mapping[str, Any], features: Sequence[str],
           dep: Mapping[str, Any]) -> str:
    """Cache key of one partial dependence (1-D with its ICE lines, or 2-D)."""
    pair = len(features) == 2
    return cache.key_for("partial-dependence", datasource.canonical_params(data),
                         dict(settings), list(features),
                         min(dep["grid"], MAX_GRID_2D) if pair else dep["grid"],
                         dep["percentiles"], 0 if pair else dep["ice"])


def _pd_to_json(r: PartialDependence, labels: list[str] | None, rows: np.ndarray) -> dict:
    outputs = list(r.outputs)
    if labels is not None and r.response != "prediction":
        outputs = [labels[int(o)] for o in outputs]
    return {"features": list(r.features), "grid": [np.asarray(g).tolist() for g in r.grid],
            "outputs": [str(o) for o in outputs], "average": r.average.tolist(),
            "individual": None if r.individual is None else r.individual.tolist(),
            "ice_rows": None if r.ice_rows is None else rows[r.ice_rows].tolist(),
            "categorical": list(r.categorical), "response": r.response,
            "n_samples": int(r.n_samples)}


def pd_from_json(d: Mapping[str, Any]) -> PartialDependence:
    """Rebuild the core's :class:`PartialDependence` from a cached JSON entry."""
    return PartialDependence(
        features=tuple(d["features"]), grid=tuple(np.asarray(g, dtype=float) for g in d["grid"]),
        outputs=tuple(d["outputs"]), average=np.asarray(d["average"], dtype=float),
        individual=None if d["individual"] is None else np.asarray(d["individual"], dtype=float),
        ice_rows=None if d["ice_rows"] is None else np.asarray(d["ice_rows"], dtype=np.intp),
        categorical=tuple(bool(c) for c in d["categorical"]), response=d["response"],
        n_samples=int(d["n_samples"]))


def _pd_rows(assessed: np.ndarray, seed: int) -> np.ndarray:
    if assessed.size <= MAX_PD_ROWS:
        return assessed
    keep = np.random.default_rng(seed + 2).choice(assessed.size, MAX_PD_ROWS, replace=False)
    return np.sort(assessed[keep])


def compute(data: Mapping[str, Any], settings: Mapping[str, Any], dep: Mapping[str, Any], *,
            progress: Callable | None = None) -> dict:
    """Fit (on a cache miss), count local importance and compute the partial dependences.

    Parameters
    ----------
    data : mapping
        Data parameters with observations (:func:`local_forest.page_data`).
    settings : mapping
        From :func:`local_forest.forest_settings`.
    dep : mapping
        From :func:`dependence_settings`.
    progress : callable, optional
        ``progress(done, total, text)``.

    Returns
    -------
    store : dict
        ``data``, ``settings``, ``dep``, ``local`` (key of the cached local
        importance), ``pd`` (keys of the 1-D results, one per variable),
        ``pair`` (key of the 2-D result, or None), ``task``, ``classes``,
        ``target``, ``n`` (rows assessed), ``n_pd`` (rows averaged) and
        ``notes``.

    Raises
    ------
    ValueError, DataError
        With a sentence (unknown variable, constant variable, bad percentiles ...).
    """
    data = datasource.canonical_params(data)
    settings, dep = dict(settings), dict(dep)
    say = progress or (lambda *a, **k: None)
    load = forest.make_forest_loader(data, settings, say)
    local = forest.local_view(data, settings, load, say)
    variables = local["variables"]
    dependence_settings(**{k: v for k, v in dep.items() if k != "percentiles"},
                        low=dep["percentiles"][0], high=dep["percentiles"][1],
                        variables=variables)
    features = [dep["feature"]] + ([dep["feature2"]] if dep["feature2"] else [])
    jobs = [[f] for f in features] + ([features] if len(features) == 2 else [])
    keys = []
    for step, feats in enumerate(jobs):
        key = pd_key(data, settings, feats, dep)
        pair = len(feats) == 2

        def one(feats=feats, pair=pair):
            f = load()
            prepared = f["prepared"]
            rows = _pd_rows(f["assessed"], settings["tree_seed"])
            what = " and ".join(feats)
            say(step, len(jobs), f"Partial dependence on {what} over {rows.size:,} rows\u2026")
            discrete = [v for v in feats if prepared.kinds.get(v) == "discrete"]
            r = partial_dependence(
                f["estimator"], prepared.X_numeric[rows], feats if pair else feats[0],
                kind="average" if pair or dep["ice"] == 0 else "both",
                grid_resolution=min(dep["grid"], MAX_GRID_2D) if pair else dep["grid"],
                percentiles=tuple(dep["percentiles"]), categorical_features=discrete or None,
                feature_names=list(prepared.variables), max_ice_lines=dep["ice"] or None,
                random_state=settings["tree_seed"])
            return _pd_to_json(r, f["labels"], rows)

        cache.get_or_compute(key, one)
        keys.append(key)
        say(step + 1, len(jobs), "")
    n_pd = min(len(local["rows"]), MAX_PD_ROWS)
    notes = []
    if len(local["rows"]) > MAX_PD_ROWS:
        notes.append(f"Partial dependences average over {MAX_PD_ROWS:,} of the "
                     f"{len(local['rows']):,} rows assessed (a seeded subset), to stay fast.")
    if len(features) == 2 and dep["grid"] > MAX_GRID_2D:
        notes.append(f"The 2-D partial dependence uses {MAX_GRID_2D} grid points per "
                     "variable (its cost grows with the square of the grid).")
    return {"data": data, "settings": settings, "dep": dep, "local": local["key"],
            "pd": keys[:len(features)], "pair": keys[2] if len(keys) == 3 else None,
            "task": local["task"], "classes": local["classes"], "target": local["target"],
            "variables": variables, "n": len(local["rows"]), "n_pd": n_pd, "notes": notes}


def _get(key: str) -> dict:
    d = cache.get_json(key)
    if d is None:
        raise ValueError("The result is no longer on the server (the cache was cleared); "
                         "change a setting or reload the page to recompute it.")
    return d


def class_options(store: Mapping[str, Any] | None) -> list[dict]:
    """Class choices for the partial dependence: every class, or all of them side by side."""
    if not store or not store.get("classes"):
        return []
    return [{"label": "All classes (one panel each)", "value": ALL_CLASSES}] + [
        {"label": f"Class {c}", "value": c} for c in store["classes"]]


def default_class(store: Mapping[str, Any] | None, label) -> str | None:
    """``label`` when valid; else the positive class of a binary target, or all classes."""
    classes = (store or {}).get("classes")
    if not classes:
        return None
    if label == ALL_CLASSES or label in classes:
        return label
    return classes[-1] if len(classes) == 2 else ALL_CLASSES


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip() or "This view cannot be drawn."
    return text if text.endswith((".", "!", "?")) else text + "."


def draw(store: Mapping[str, Any], label=None, positions="all") -> dict:
    """Figures of a computed store.

    ``label`` is the class whose partial dependence is drawn (or
    :data:`ALL_CLASSES`); ``positions`` those at which a variable must stand
    for an observation to enter the dependence over responses.

    Returns
    -------
    out : dict
        ``pd`` and ``dor`` (lists of figures, one per variable), ``pd_heights``
        (pixels each PD figure needs: more rows of panels for many classes), ``pd2``
        (figure or None), ``messages`` (sentences about parts that could not
        be drawn), ``label`` (the class shown).
    """
    out: dict[str, Any] = {"pd": [], "pd_heights": [], "dor": [], "pd2": None,
                           "messages": []}
    label = default_class(store, label)
    out["label"] = label
    outputs = None if label in (None, ALL_CLASSES) else label
    variables = list(store["variables"])

    def color(f):
        return variable_color(variables.index(f)) if f in variables else None

    def fig_or_message(fn, heights=None):
        try:
            fig = fn()
            if heights is not None:
                heights.append(int(fig.layout.height or 420))
            fig.update_layout(height=None)       # the page sizes the graph
            return fig
        except ValueError as exc:
            if heights is not None:
                heights.append(420)
            out["messages"].append(_sentence(exc))
            return placeholder_figure(_sentence(exc))

    for key in store["pd"]:
        d = _get(key)
        f = d["features"][0]
        out["pd"].append(fig_or_message(
            lambda d=d, f=f: make_pd_figure(pd_from_json(d), outputs=outputs, color=color(f)),
            out["pd_heights"]))
    if store.get("pair"):
        d = _get(store["pair"])
        out["pd2"] = fig_or_message(lambda: make_pd2_figure(pd_from_json(d), output=outputs))
    local_json = _get(store["local"])
    local = forest.local_from_json(local_json)
    positions = _POSITIONS[check_positions(positions)]
    rows = np.asarray(local_json["rows"])
    for key in store["pd"]:
        f = _get(key)["features"][0]

        def dor(f=f):
            r = dependence_over_responses(local, f, positions=positions)
            r = type(r)(**{**r.__dict__, "observation": rows[r.observation]})
            return make_dependence_over_responses(r, classes=local.classes, color=color(f))

        out["dor"].append(fig_or_message(dor))
    return out


# -- export ----------------------------------------------------------------------------
def pd_csv(store: Mapping[str, Any]) -> str:
    """CSV of the partial dependences drawn (averages; 1-D and 2-D rows stacked)."""
    keys = list(store["pd"]) + ([store["pair"]] if store.get("pair") else [])
    frames = [pd_from_json(_get(k)).to_frame() for k in keys]
    return safe_csv(pd.concat(frames, ignore_index=True))


def dor_csv(store: Mapping[str, Any], positions="all") -> str:
    """CSV of the dependence over responses: one row per (variable, observation) drawn."""
    local_json = _get(store["local"])
    local = forest.local_from_json(local_json)
    rows = np.asarray(local_json["rows"])
    positions = _POSITIONS[check_positions(positions)]
    frames = []
    for key in store["pd"]:
        f = _get(key)["features"][0]
        try:
            df = dependence_over_responses(local, f, positions=positions).to_frame()
        except ValueError:
            continue
        df.insert(0, "feature", f)
        df["observation"] = rows[df["observation"].to_numpy()]
        frames.append(df.rename(columns={"observation": "row"}))
    if not frames:
        return safe_csv(pd.DataFrame(columns=["feature", "row", "value", "prediction",
                                              "position"]))
    return safe_csv(pd.concat(frames, ignore_index=True))


def csv_filename(store: Mapping[str, Any], what: str) -> str:
    """``varimp-dependence-<data>-<variables>-<what>.csv`` with only safe characters."""
    data = store["data"]
    name = data.get("problem") if data["source"] == "problem" else (data.get("file") or "upload")
    name = re.sub(r"\.csv$", "", str(name), flags=re.I)
    feats = "-".join(f for f in (store["dep"]["feature"], store["dep"]["feature2"]) if f)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{feats}-{what}")
    return f"varimp-dependence-{slug.strip('-.')[:80]}.csv"
