"""The forest shared by the Interactions and Dependence pages, as plain functions.

Both pages fit a forest on the training part of the shared data and count
Ciss's local importance on the training or the held-out rows
(:func:`varimp_core.local.local_importance`).  Fitting is the slow step; its
result is cached server-side as JSON (counts, positions, predictions and the
rows assessed; never the fitted forest, never a pickle), keyed by a hash of the
data choice and the forest settings (:func:`forest_settings`,
:func:`make_forest_loader`, :func:`local_view`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.data.prepare import DataError
from varimp_core.local.multiway import forest_local_importance
from varimp_core.local.importance import LocalImportance, fit_uniform_forest, local_importance
from varimp_core.data.table import DiscreteTable
from varimp_core.problems.registry import get_problem
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest

from dash import dcc, html

from . import cache, datasource, limits
from . import controls as ui
from .common import placeholder_figure
from .state import whole_number
from .state import Param, choice_parser, int_parser, query_store

__all__ = [
    "FOREST_KINDS", "FOREST_OPTIONS", "FOREST_NAMES", "FOREST_PARAMS", "SKLEARN_KINDS",
    "MAX_TREES_UI", "MAX_ROWS", "TEST_SHARE",
    "forest_params", "page_data", "data_variables", "forest_settings", "split_rows",
    "fit_forest", "multiway_table", "make_forest_loader", "local_key", "local_view",
    "local_from_json", "forest_cards", "page_stores", "placeholder_figure",
]

#: Forests the Interactions page fits; the scikit-learn ones also serve partial dependence.
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
#: URL parameters of the forest on the Interactions page (the Dependence page:
#: ``forest_params(SKLEARN_KINDS)``).
FOREST_PARAMS: tuple[Param, ...] = forest_params()


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


def page_stores(prefix: str, start: Mapping[str, Any]) -> list:
    """Stores of a page on this forest: its query, data choice, page data, result, download."""
    return [query_store(prefix, start["query"]),
            dcc.Store(id=f"{prefix}-data-params", data=start["data"]),
            dcc.Store(id=f"{prefix}-page-data", data=start["page_data"]),
            dcc.Store(id=f"{prefix}-current"), dcc.Download(id=f"{prefix}-download")]
