"""Logic behind the Interactions page, as plain functions tests can call.

The page fits a forest (random uniform forest, random forest or extra-trees)
on the training part of the shared data, counts Ciss's local importance on the
training or the held-out rows (:func:`varimp_core.local.local_importance`) and
shows what the positions say: interactions (a mosaic of first x second order),
the importance based on interactions, partial importance for one class or
range of responses, and importance over labels.

Forest fitting is the slow step.  Its result is cached server-side as JSON
(counts, positions, predictions and the rows assessed; never the fitted
forest, never a pickle), keyed by a hash of the data choice and the forest
settings; every figure is recomputed from that cached entry, which is cheap.
The Dependence page reuses the forest settings, the fitting and the cached
entry (:func:`forest_settings`, :func:`make_forest_loader`, :func:`local_view`).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.data import DataError
from varimp_core.interactions import (OTHER_FEATURES, Interactions, importance_over_labels,
                                      interaction_importance, interactions, partial_importance)
from varimp_core.forest_local import forest_local_importance
from varimp_core.local import LocalImportance, fit_uniform_forest, local_importance
from varimp_core.table import DiscreteTable
from varimp_core.plots.interactions import (make_importance_over_labels, make_mosaic,
                                            make_partial_importance_figure, make_vii_bars)
from varimp_core.problems import get_problem
from varimp_core.sklearn_forests import fit_sklearn_forest

from dash import dcc, html

from . import cache, datasource, limits
from . import controls as ui
from .common import neutralise_cell, placeholder_figure
from .importances_logic import data_params_for_page, whole_number
from .state import Param, choice_parser, encode_query, float_parser, int_parser, parse_query

__all__ = [
    "PREFIX",
    "FOREST_KINDS",
    "FOREST_OPTIONS",
    "FOREST_PARAMS",
    "SKLEARN_KINDS",
    "forest_params",
    "multiway_table",
    "PARAMS",
    "MAX_TREES_UI",
    "MAX_ROWS",
    "TEST_SHARE",
    "DEFAULT_MIN_SHARE",
    "MAX_MIN_SHARE",
    "page_data",
    "data_variables",
    "forest_settings",
    "forest_cards",
    "split_rows",
    "fit_forest",
    "make_forest_loader",
    "local_key",
    "local_view",
    "local_from_json",
    "view_settings",
    "initial_state",
    "page_query",
    "compute",
    "draw",
    "summary_sentence",
    "tile_rows",
    "pairs_csv",
    "variables_csv",
    "csv_text",
    "csv_filename",
    "placeholder_figure",
]

PREFIX = "inter"
#: Forests this page fits; the scikit-learn ones also serve partial dependence.
SKLEARN_KINDS = ("uniform", "rf", "et")
FOREST_KINDS = SKLEARN_KINDS + ("multiway",)
FOREST_OPTIONS = [
    {"label": "Random uniform forest (uniform cut-points, bootstrap)", "value": "uniform"},
    {"label": "Random forest (RF)", "value": "rf"},
    {"label": "Extra-trees (ET)", "value": "et"},
    {"label": "varimp's multiway forest (one branch per value of the coded inputs)",
     "value": "multiway"},
]
FOREST_NAMES = {"uniform": "random uniform forest", "rf": "random forest", "et": "extra-trees",
                "multiway": "multiway forest"}
#: At most this many trees from the page.
MAX_TREES_UI = 1000
#: At most this many rows are assessed (a seeded subset of the chosen rows beyond it).
MAX_ROWS = 5000
#: Share of the rows held out from fitting (the "held-out rows").
TEST_SHARE = 0.3
DEFAULT_MIN_SHARE = 0.01
MAX_MIN_SHARE = 0.2
#: Observations listed for one mosaic tile.
MAX_TILE_ROWS = 1000

def forest_params(kinds: Sequence[str] = FOREST_KINDS) -> tuple[Param, ...]:
    """URL parameters of the forest, offering ``kinds``."""
    return (Param("forest", "uniform", choice_parser(tuple(kinds), what="forest kind"),
                  "forest kind"),) + _FOREST_REST


_FOREST_REST: tuple[Param, ...] = (
    Param("trees", 100, int_parser(1, MAX_TREES_UI, what="number of trees"), "number of trees"),
    Param("K", None, int_parser(1, 100_000, what="K"), "K"),
    Param("tree_seed", 0, int_parser(0, 2**32 - 1, what="seed"), "seed"),
    Param("rows", "train", choice_parser(("train", "test"), what="rows assessed"),
          "rows assessed"),
)
#: URL parameters of the forest on this page (the Dependence page: ``forest_params(SKLEARN_KINDS)``).
FOREST_PARAMS: tuple[Param, ...] = forest_params()


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


# -- data ------------------------------------------------------------------------------
def page_data(data: Mapping[str, Any]) -> tuple[dict, list[str]]:
    """The data these pages compute on, and a note when it differs from the choice.

    An exact distribution has no observations to follow through trees, so a
    built-in problem chosen as "exact" is replaced by a seeded sample of its
    default size.

    Returns
    -------
    data : dict
        Canonical data parameters with observations.
    notes : list of str
    """
    data = datasource.canonical_params(data)
    if data["source"] == "problem" and data["sampling"] == "exact":
        try:
            n = get_problem(data["problem"]).default_samples
        except ValueError:
            return data, []
        sampled = datasource.canonical_params({**data, "sampling": "sample"})
        return sampled, [f"Local importance follows observations through the trees, and the "
                         f"exact distribution of {data['problem']} has none; this page uses "
                         f"a sample of {n:,} rows (seed {sampled['seed']}). Choose a sample "
                         "size on the Data page to change it."]
    return data, []


def data_variables(data: Mapping[str, Any]) -> list[str]:
    """Input names of a data choice (cached; loads the data on a miss).

    Raises
    ------
    DataError
        As :func:`pages._ui.datasource.load_prepared`.
    """
    data = datasource.canonical_params(data)
    key = cache.key_for("data-variables", data)
    return cache.get_or_compute(key, lambda: list(datasource.load_prepared(data).variables))


# -- forest settings -------------------------------------------------------------------
def forest_settings(*, forest, trees, K=None, tree_seed=0, rows="train",
                    p: int | None = None, kinds: Sequence[str] = FOREST_KINDS) -> dict:
    """Canonical forest settings from control values.

    Parameters
    ----------
    forest : {"uniform", "rf", "et", "multiway"}
        One of ``kinds``.
    trees : int
        Number of trees, 1 to :data:`MAX_TREES_UI`.
    K : int or None
        Variables drawn at each node; None (blank) means all inputs.
    tree_seed : int
        Seed of the split into fitted and held-out rows and of the forest.
    rows : {"train", "test"}
        Rows assessed: those the forest was fitted on, or the held-out ones.
    p : int, optional
        Number of inputs, to check K.
    kinds : sequence of str, default=FOREST_KINDS
        The kinds the page offers (partial dependence needs a scikit-learn forest).

    Raises
    ------
    ValueError
        With a sentence for the page.
    """
    if forest not in kinds:
        names = [FOREST_NAMES[k] for k in kinds]
        raise ValueError(f"Choose a forest: {', '.join(names[:-1])} or {names[-1]}.")
    most = limits.max_trees(MAX_TREES_UI)  # VARIMP_MAX_TREES can lower the page's cap
    n = whole_number(trees, "number of trees", 1, most, None)
    if n is None:
        raise ValueError(f"Enter the number of trees (1 to {most:,}).")
    k = whole_number(K, "K (variables drawn at each node)", 1, p, None)
    if rows not in ("train", "test"):
        raise ValueError("Choose the rows to assess: training rows or held-out rows.")
    return {"forest": forest, "trees": n, "K": k,
            "tree_seed": whole_number(tree_seed, "seed", 0, 2**32 - 1, 0), "rows": rows}


def split_rows(n: int, seed: int, rows: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of ``n`` rows: (rows fitted, rows assessed).

    ``floor(TEST_SHARE * n)`` rows are held out; the forest is fitted on the
    others.  ``rows="train"`` assesses the fitted rows, ``"test"`` the held-out
    ones; at most :data:`MAX_ROWS` are assessed (the first of the shuffled order).

    Raises
    ------
    ValueError
        When there are no held-out rows, or fewer than two rows to fit on.
    """
    order = np.random.default_rng(seed).permutation(n)
    n_test = int(math.floor(TEST_SHARE * n))
    fit, held = np.sort(order[n_test:]), np.sort(order[:n_test])
    if fit.size < 2:
        raise ValueError(f"This data has {n} row{'s' if n != 1 else ''}: too few to fit a "
                         "forest; use more rows.")
    if rows == "test":
        if held.size == 0:
            raise ValueError(f"There are no held-out rows: {TEST_SHARE:.0%} of {n} rows is less "
                             "than one row. Assess the training rows instead, or use more data.")
        assessed = held
    else:
        assessed = fit
    if assessed.size > MAX_ROWS:
        keep = np.random.default_rng(seed + 1).choice(assessed.size, MAX_ROWS, replace=False)
        assessed = np.sort(assessed[keep])
    return fit, assessed


def fit_forest(X, y, *, task: str, settings: Mapping[str, Any],
               variables: Sequence[str] | None = None):
    """Fit the forest of ``settings`` (see :func:`forest_settings`) on ``X, y``.

    ``variables`` names the columns of ``X`` in messages (a constant column ...).

    Raises
    ------
    ValueError
        With a sentence, e.g. for a constant column under the uniform forest.
    """
    kw = dict(task=task, n_estimators=settings["trees"], max_features=settings["K"],
              random_state=settings["tree_seed"])
    if variables is not None:
        X = pd.DataFrame(X, columns=list(variables))
    if settings["forest"] == "uniform":
        try:
            return fit_uniform_forest(X, y, **kw)
        except ValueError as exc:
            if "constant" in str(exc):
                raise ValueError(f"{exc} Or choose the random forest or extra-trees, which "
                                 "accept constant columns.") from None
            raise
    return fit_sklearn_forest(X, y, kind=settings["forest"], **kw)


def multiway_table(prepared, fit: np.ndarray) -> DiscreteTable:
    """The coded training rows varimp's multiway forest grows on (its "fitted forest").

    The forest itself is grown while the assessed rows are routed through it
    (:func:`varimp_core.forest_local.forest_local_importance`).

    Raises
    ------
    ValueError
        For a numeric (regression) target: the multiway forest classifies.
    """
    if prepared.task != "classification" or prepared.X_codes is None:
        raise ValueError("varimp's multiway forest classifies, and this data's target is "
                         "numeric (regression); choose the random uniform forest, random "
                         "forest or extra-trees.")
    return DiscreteTable.from_codes(prepared.X_codes[fit], prepared.y_codes[fit],
                                    variables=prepared.variables, target=prepared.target,
                                    x_labels=prepared.table.x_labels)


def make_forest_loader(data: Mapping[str, Any], settings: Mapping[str, Any],
                       progress: Callable | None = None):
    """A zero-argument function that loads the data and fits the forest once, on first call.

    Returns a dict: ``prepared`` (PreparedData), ``estimator``, ``fit`` and
    ``assessed`` (row indices), ``labels`` (class labels as text, or None).
    """
    memo: dict[str, Any] = {}
    say = progress or (lambda *a, **k: None)

    def load() -> dict:
        if "fit" not in memo:
            say(0, None, "Loading the data\u2026")
            prepared = datasource.load_prepared(data)
            if prepared.X_numeric is None or prepared.y is None:
                raise DataError("This data has no observations (it is an exact distribution); "
                                "choose a sample on the Data page.")
            p = prepared.X_numeric.shape[1]
            if settings["K"] is not None and settings["K"] > p:
                raise ValueError(f"K must be a whole number from 1 to {p} (this data has {p} "
                                 f"inputs), got {settings['K']}.")
            fit, assessed = split_rows(prepared.X_numeric.shape[0], settings["tree_seed"],
                                       settings["rows"])
            if settings["forest"] == "multiway":
                est = multiway_table(prepared, fit)
            else:
                say(0, None, f"Fitting {settings['trees']:,} trees on {fit.size:,} rows\u2026")
                est = fit_forest(prepared.X_numeric[fit], prepared.y[fit], task=prepared.task,
                                 settings=settings, variables=prepared.variables)
            labels = None
            if prepared.task == "classification":
                labels = [str(v) for v in prepared.table.y_labels]
            memo["fit"] = {"prepared": prepared, "estimator": est, "fit": fit,
                           "assessed": assessed, "labels": labels}
        return memo["fit"]

    return load


def local_key(data: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """Cache key of the local importance of a forest on a data choice."""
    return cache.key_for("ciss-local", datasource.canonical_params(data), dict(settings))


def _local_to_json(local: LocalImportance, rows: np.ndarray, labels: list[str] | None,
                   target: str, n_fit: int) -> dict:
    if labels is not None:
        prediction = [labels[int(c)] for c in local.prediction]
        classes = [labels[int(c)] for c in local.classes]
    else:
        prediction = np.asarray(local.prediction, dtype=float).tolist()
        classes = None
    return {"variables": list(local.variables), "counts": local.counts.tolist(),
            "positions": local.positions.tolist(), "prediction": prediction,
            "X": local.X.tolist(), "task": local.task, "classes": classes,
            "n_estimators": int(local.n_estimators), "rows": np.asarray(rows).tolist(),
            "target": target, "n_fit": int(n_fit),
            "parameters": {k: v for k, v in local.parameters.items() if k != "proba"}}


def local_view(data: Mapping[str, Any], settings: Mapping[str, Any], load,
               progress: Callable | None = None) -> dict:
    """The cached local importance (JSON) of ``settings`` on ``data``; fits on a miss.

    Returns
    -------
    view : dict
        ``key`` and the JSON entry: ``variables``, ``counts``, ``positions``,
        ``prediction`` (class labels as text, or numbers), ``X``, ``task``,
        ``classes``, ``n_estimators``, ``rows`` (row numbers in the data),
        ``target``, ``n_fit``.
    """
    key = local_key(data, settings)
    say = progress or (lambda *a, **k: None)

    def compute() -> dict:
        f = load()
        say(0, None, f"Counting leaf parents on {f['assessed'].size:,} rows\u2026")
        prepared = f["prepared"]
        rows = f["assessed"]
        if settings["forest"] == "multiway":
            table = f["estimator"]
            say(0, None, f"Growing {settings['trees']:,} multiway trees on {f['fit'].size:,} "
                         f"rows and following {rows.size:,} rows down them\u2026")
            local = forest_local_importance(
                table, prepared.X_codes[rows], n_estimators=settings["trees"],
                max_features=settings["K"] or table.n_features, random_state=settings["tree_seed"],
                progress=lambda d, t: say(d, t, f"{d:,} of {t:,} trees"))
            local = replace(local, X=prepared.X_numeric[rows])   # values, not codes, in tables
        else:
            local = local_importance(f["estimator"], prepared.X_numeric[rows],
                                     variables=prepared.variables)
        return _local_to_json(local, f["assessed"], f["labels"], prepared.target, f["fit"].size)

    return dict(cache.get_or_compute(key, compute), key=key)


def local_from_json(d: Mapping[str, Any]) -> LocalImportance:
    """Rebuild the core's :class:`LocalImportance` from a cached JSON entry."""
    counts = np.asarray(d["counts"], dtype=np.int64).reshape(len(d["rows"]), -1)
    classification = d["task"] == "classification"
    prediction = np.asarray(d["prediction"], dtype=object if classification else float)
    if classification:
        prediction = prediction.astype(str)
    return LocalImportance(
        variables=tuple(d["variables"]), counts=counts,
        positions=np.asarray(d["positions"], dtype=np.intp).reshape(counts.shape),
        prediction=prediction, X=np.asarray(d["X"], dtype=float).reshape(counts.shape),
        task=d["task"], classes=tuple(d["classes"]) if classification else None,
        n_estimators=int(d["n_estimators"]), counts_by_level=counts[None],
        parameters=dict(d.get("parameters") or {}))


# -- controls --------------------------------------------------------------------------
def forest_cards(prefix: str, v: dict, kinds: Sequence[str] = FOREST_KINDS) -> list:
    """The Forest and Rows cards (ids ``{prefix}-forest`` ... ``{prefix}-rows``)."""
    return [
        ui.card(
            "Forest",
            ui.field("Kind", dcc.RadioItems(
                id=f"{prefix}-forest", options=[o for o in FOREST_OPTIONS if o["value"] in kinds],
                value=v["forest"],
                className="vi-radio", labelStyle={"display": "flex"})),
            html.Div(className="vi-row", children=[
                ui.field("Trees", ui.number_input(f"{prefix}-trees", v["trees"], min=1,
                                                  max=MAX_TREES_UI)),
                ui.field("K", ui.number_input(f"{prefix}-k", v["K"], min=1,
                                              placeholder="all")),
            ]),
            html.P("K: variables drawn at each node; blank draws all of them (Random Uniform "
                   "Forests' choice).", className="vi-help", style={"marginBottom": "0.9rem"}),
            ui.seed_field(f"{prefix}-tree", v["tree_seed"],
                          help="Seeds the split into fitted and held-out rows and the trees."),
        ),
        ui.card(
            "Rows assessed",
            dcc.RadioItems(id=f"{prefix}-rows", value=v["rows"], className="vi-radio",
                           labelStyle={"display": "flex"}, options=[
                               {"label": f"Rows the forest was fitted on "
                                         f"({1 - TEST_SHARE:.0%})", "value": "train"},
                               {"label": f"Held-out rows ({TEST_SHARE:.0%})",
                                "value": "test"}]),
            html.P("Local importance reads only the forest and the rows it is shown, never "
                   "their labels, so it works on new rows too.", className="vi-help"),
        ),
    ]


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
def csv_text(df: pd.DataFrame) -> str:
    """CSV of a frame, text cells a spreadsheet would run as formulas neutralised."""
    df = df.copy()
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def pairs_csv(store: Mapping[str, Any], other: float) -> str:
    """CSV of the interaction tables: one row per (first, second) pair."""
    local, _ = _load_local(store)
    it = interactions(local, min_share=other)
    df = it.to_frame()
    df["observations"] = np.rint(df["joint"].to_numpy() * it.n_pairs).astype(int)
    return csv_text(df)


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
    return csv_text(df)


def csv_filename(store: Mapping[str, Any], what: str) -> str:
    """``varimp-interactions-<data>-<forest>-<what>.csv`` with only safe characters."""
    data = store["data"]
    name = data.get("problem") if data["source"] == "problem" else (data.get("file") or "upload")
    name = re.sub(r"\.csv$", "", str(name), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{store['settings']['forest']}-{what}")
    return f"varimp-interactions-{slug.strip('-.')[:80]}.csv"
