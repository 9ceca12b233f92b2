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
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.dependence import (PartialDependence, dependence_over_responses,
                                    partial_dependence)
from varimp_core.plots.dependence import (make_dependence_over_responses, make_pd2_figure,
                                          make_pd_figure)
from varimp_core.plots.style import variable_color

from . import cache, datasource
from . import interactions_logic, local_forest as forest
from .common import safe_csv
from .importances_logic import whole_number
from .common import placeholder_figure
from .state import Param, choice_parser, encode_query, float_parser, int_parser

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

PREFIX = "dep"
MAX_GRID = 200
#: Grid points per axis of a 2-D partial dependence (the cost grows with the square).
MAX_GRID_2D = 20
MAX_ICE = 500
#: Rows averaged by a partial dependence (a seeded subset of the assessed rows beyond it).
MAX_PD_ROWS = 1000
ALL_CLASSES = "all"
POSITION_OPTIONS = [
    {"label": "1st", "value": "1"},
    {"label": "1st or 2nd", "value": "12"},
    {"label": "any", "value": "all"},
]
_POSITIONS = {"1": 1, "12": [1, 2], "all": "all"}


def _name(text) -> str:
    return str(text)[:200]


#: URL parameters of the page (after the data and forest parameters).
PARAMS: tuple[Param, ...] = forest.forest_params(forest.SKLEARN_KINDS) + (
    Param("feature", None, _name, "variable"),
    Param("feature2", None, _name, "second variable"),
    Param("grid", 30, int_parser(2, MAX_GRID, what="grid resolution"), "grid resolution"),
    Param("low", 0.05, float_parser(0.0, 1.0, what="lower percentile"), "lower percentile"),
    Param("high", 0.95, float_parser(0.0, 1.0, what="upper percentile"), "upper percentile"),
    Param("ice", 50, int_parser(0, MAX_ICE, what="number of ICE lines"), "number of ICE lines"),
    Param("label", None, _name, "class"),
    Param("positions", "all", choice_parser(tuple(_POSITIONS), what="positions"), "positions"),
)
_DEFAULTS = {p.name: p.default for p in PARAMS}


# -- state -----------------------------------------------------------------------------
def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """Everything ``layout(**query)`` needs.

    Returns
    -------
    state : dict
        As :func:`interactions_logic.initial_state`, plus ``variables`` (the
        inputs, [] when the data cannot be loaded) and ``data_error`` (a
        sentence, or None).  ``feature`` defaults to the first input;
        unknown variables in the link are dropped with a note.
    """
    st = interactions_logic.initial_state(query, vi_data, PARAMS)
    values, notes = st["values"], st["notes"]
    try:
        variables = forest.data_variables(st["page_data"])
        error = None
    except ValueError as exc:
        variables, error = [], str(exc)
    for key, what in (("feature", "variable"), ("feature2", "second variable")):
        v = values[key]
        if v is not None and variables and v not in variables:
            notes.append(f"The link's {what} {v!r} was ignored: this data has no input of "
                         "that name.")
            values[key] = None
    if values["feature"] is None and variables:
        values["feature"] = variables[0]
    if values["feature2"] == values["feature"]:
        values["feature2"] = None
    if values["low"] >= values["high"]:
        notes.append("The link's percentiles were ignored: the lower one must be below the "
                     "upper one. Using 0.05 and 0.95 instead.")
        values["low"], values["high"] = _DEFAULTS["low"], _DEFAULTS["high"]
    st.update(variables=variables, data_error=error,
              query=page_query(st["data"], values))
    return st


def page_query(data: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    """The page's URL query: the data query, then the values that differ from their defaults."""
    kept = {k: v for k, v in values.items()
            if v is not None and v != "" and v != _DEFAULTS.get(k, object())}
    parts = [datasource.data_query(data), encode_query(kept)]
    return "&".join(part for part in parts if part)


def dependence_settings(*, feature, feature2=None, grid=30, low=0.05, high=0.95, ice=50,
                        variables: Sequence[str] | None = None) -> dict:
    """Canonical settings of the partial dependences (what the background job computes).

    Raises
    ------
    ValueError
        With a sentence for the page.
    """
    if feature in (None, ""):
        raise ValueError("Choose a variable.")
    feature2 = None if feature2 in (None, "", "none") else str(feature2)
    if variables is not None:
        for f in (feature, feature2):
            if f is not None and f not in variables:
                raise ValueError(f"This data has no input {f!r}; choose one of its variables.")
    if feature2 == feature:
        raise ValueError("Choose two different variables for the 2-D partial dependence "
                         "(or no second variable).")
    g = whole_number(grid, "grid resolution", 2, MAX_GRID, None)
    if g is None:
        raise ValueError(f"Enter the grid resolution (2 to {MAX_GRID}).")
    try:
        lo, hi = float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError("The percentiles must be numbers from 0 to 1.") from None
    if not (0 <= lo < hi <= 1):
        raise ValueError(f"The percentiles must satisfy 0 \u2264 low < high \u2264 1, got "
                         f"{lo:g} and {hi:g}.")
    n_ice = whole_number(ice, "number of ICE lines", 0, MAX_ICE, 0)
    return {"feature": str(feature), "feature2": feature2, "grid": g,
            "percentiles": [round(lo, 4), round(hi, 4)], "ice": n_ice}


def check_positions(positions) -> str:
    """The positions choice of the dependence over responses ("1", "12" or "all")."""
    if positions not in _POSITIONS:
        raise ValueError("Choose the positions: 1st, 1st or 2nd, or any.")
    return positions


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
