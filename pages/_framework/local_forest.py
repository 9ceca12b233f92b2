"""The forest the Interactions and Dependence pages grow, and its local importance (Ciss 2015).

Both pages fit a forest on the training part of the data and count Ciss's
local importance on the training or the held-out rows, as
:mod:`varimp_core.local.heldout` does.  This module declares the forest's
parameters once (:func:`forest_params`, shown by :func:`forest_cards`), grows
the forest (:func:`make_forest_loader`) and caches the local importance server-side as
the core's JSON (:func:`local_view`, read back by :func:`load_local`; never
the fitted forest, never a pickle), keyed by a hash of the data choice and the
forest settings, so the two pages share it.  It imports no page.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from dash import Input, Output, State, callback, html, no_update

from varimp_core.data.prepare import DataError, column_facts, input_names
from varimp_core.data.summary import rank_inputs
from varimp_core.local.heldout import (LOCAL_FORESTS, TEST_SHARE, fit_local_forest,
                                       heldout_local_importance, split_rows)
from varimp_core.local.importance import LocalImportance
from varimp_core.problems.registry import get_problem

from pages._server import cache, jobs, limits

from pages._framework import datasource, studies
from pages._framework import controls as ui
from pages._framework.datachoice import DataChoice
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.view import context_for

#: Forests the Interactions page fits; the scikit-learn ones also serve partial dependence.
SKLEARN_KINDS = LOCAL_FORESTS
FOREST_KINDS = SKLEARN_KINDS + ("multiway",)
FOREST_OPTIONS = [
    ("uniform", "Random uniform forest (uniform cut-points, bootstrap)"),
    ("rf", "Random forest (RF)"),
    ("et", "Extra-trees (ET)"),
    ("multiway", "varimp's multiway forest (one branch per value of the coded inputs)"),
]
FOREST_NAMES = {"uniform": "random uniform forest", "rf": "random forest", "et": "extra-trees",
                "multiway": "multiway forest"}
#: At most this many trees from the page (the server's VARIMP_MAX_TREES may lower it).
MAX_TREES_UI = 1000
#: At most this many rows are assessed (a seeded subset of the chosen rows beyond it).
MAX_ROWS = 5000


def forest_params(kinds=FOREST_KINDS) -> list[Param]:
    """The forest's parameters, offering the forest ``kinds`` (old links' keys kept)."""
    return [
        Param("forest", "Kind", "choice", "uniform", what="forest kind",
              choices=[o for o in FOREST_OPTIONS if o[0] in kinds]),
        Param("n_estimators", "Trees", default=100, key="trees", low=1,
              high=lambda c: limits.max_trees(MAX_TREES_UI), what="number of trees"),
        Param("max_features", "K", default=None, key="K", low=1, blank="all",
              high=lambda c: c.p or 100_000),
        seed_param(help="Seeds the split into fitted and held-out rows and the trees."),
        Param("rows", "Rows", "choice", "train", what="rows assessed", choices=[
            ("train", f"Rows the forest was fitted on ({1 - TEST_SHARE:.0%})"),
            ("test", f"Held-out rows ({TEST_SHARE:.0%})")],
            help="Local importance reads only the forest and the rows it is shown, never "
                 "their labels, so it works on new rows too."),
    ]


#: The settings the forest and its local importance depend on (what :func:`forest_params` names).
FOREST_KEYS = ("forest", "n_estimators", "max_features", "random_state", "rows")


def forest_cards(f: Mapping[str, Any]) -> list:
    """The Forest and Rows assessed cards, from the fields of :func:`forest_params`."""
    return [ui.card("Forest", f["forest"],
                    html.Div(className="vi-row", children=[f["n_estimators"], f["max_features"]]),
                    html.P("K: variables drawn at each node; blank draws all of them (Random "
                           "Uniform Forests' choice). " + f.get("scaled", ""), className="vi-help",
                           style={"marginBottom": "0.9rem"}),
                    f["random_state"]),
            ui.card("Rows assessed", f["rows"])]


# -- data --------------------------------------------------------------------------------
def page_data(data: DataChoice) -> tuple[DataChoice, list[str]]:
    """The data these pages compute on, and a note when it differs from the choice.

    An exact distribution has no observations to follow through trees, so a
    built-in problem chosen as "exact" is replaced by a seeded sample of its
    default size.
    """
    if data.is_upload or data["sampling"] != "exact":
        return data, []
    try:
        n = get_problem(data["problem"]).default_samples
    except ValueError:
        return data, []
    sampled = DataChoice.from_params({**data.as_dict, "sampling": "sample"})
    return sampled, [f"Local importance follows observations through the trees, and the "
                     f"exact distribution of {data['problem']} has none; this page uses a "
                     f"sample of {n:,} rows (seed {sampled['seed']}). Choose a sample size on "
                     "the Data page to change it."]


def start(query: Mapping[str, Any], vi_data: Any, *params: ParamSet) -> dict:
    """What a page's layout starts from: its data and the link's values of ``params``.

    Returns a dict: ``data`` (the user's choice, which links keep), ``page`` (the
    data computed on, :func:`page_data`), ``store`` (the page's data store:
    ``page.to_store()`` and the choice's ``query``), ``values``, ``notes``, ``ctx``.
    """
    data, notes = DataChoice.from_page(query, vi_data)
    page, more = page_data(data)
    ctx, values = context_for(page), {}
    for p in params:
        got, bad = p.from_url(query, ctx)
        values.update(got)
        notes += bad
    values["n_estimators"], scaled = studies.scale_trees(values["n_estimators"], query, page)
    return {"data": data, "page": page, "values": values, "notes": notes + more, "ctx": ctx,
            "store": {**page.to_store(), "query": data.query()}, "scaled": scaled}


def fields(st: Mapping[str, Any], *params: ParamSet) -> dict:
    """The fields of ``params`` by parameter name, with the values and context of ``st``."""
    return {**{n: f for p in params for n, f in zip(p.names, p.fields(st["values"], st["ctx"]))},
            "scaled": st.get("scaled", "")}  # the sentence that says T was scaled


def link(*parts: str) -> str:
    """A URL query from the non-empty ``parts``."""
    return "&".join(q for q in parts if q)


def register_view(prefix: str, params: ParamSet, display: ParamSet, page_query: Callable,
                  outputs: Sequence[tuple[str, str]], draw: Callable, failed: Callable) -> None:
    """The callbacks of a page's figures and link, beside its :class:`JobView`.

    The figures are drawn again, cheaply, when the result in ``{prefix}-current``
    or a control of ``display`` changes: ``draw(store, shown)`` gives the values
    of ``{prefix}-<name>``'s properties ``outputs``, ``failed(sentence)`` those
    when drawing raises a ValueError.  ``page_query(store, settings, shown)`` is
    written to ``{prefix}-query`` whenever the values of ``params`` (the job's)
    and ``display`` can be used; the store is ``{prefix}-data`` (:func:`start`).
    """
    @callback(*(Output(f"{prefix}-{name}", prop) for name, prop in outputs),
              *display.error_outputs(), Input(f"{prefix}-current", "data"),
              Input(f"{prefix}-error", "className"), *display.inputs())
    def show(store, error, *values):
        shown, errors = display.validate(dict(zip(display.names, values)), Context())
        texts = [errors.get(n, "") for n in display.names]
        if errors or (not store and error != "vi-error"):  # nothing computed, nothing failed
            return [no_update] * len(outputs) + texts
        try:
            return draw(store, shown) + texts
        except ValueError as exc:
            return failed(jobs.error_message(exc)) + texts

    @callback(Output(f"{prefix}-query", "data"), *params.inputs(), *display.inputs(),
              State(f"{prefix}-data", "data"), prevent_initial_call=True)
    def sync_url(*args):
        n, store = len(params.names), args[-1] or {}
        settings, errors = params.validate(dict(zip(params.names, args[:n])),
                                           Context(store.get("p")))
        shown, more = display.validate(dict(zip(display.names, args[n:-1])), Context())
        return no_update if errors or more else page_query(store, settings, shown)


def problem_variables(data: DataChoice) -> list[str] | None:
    """A built-in problem's inputs, from its definition: nothing is loaded or prepared (a
    link to a large sample opened first cost a web worker seconds and gigabytes, #27.4).

    A generated problem's are its variables.  A data set bundled with scikit-learn, drawn
    whole, has its columns less the constant ones (digits' blank pixels), read from the
    columns alone (:func:`whole_real_inputs`).  None for an upload, an invalid spec and a
    smaller sample of a bundled data set (which columns it leaves constant depends on the
    rows drawn: the page's job prepares it)."""
    if data.is_upload:
        return None
    try:
        problem = datasource.problem_of(str(data["problem"]))
    except (ValueError, KeyError, TypeError):
        return None
    if problem.relevant is not None:
        return list(problem.variables)
    n = data["n"]
    if n is None or n >= problem.default_samples:
        return list(whole_real_inputs(problem.spec))
    return None


@functools.lru_cache(maxsize=16)
def whole_real_inputs(spec: str) -> tuple[str, ...]:
    """The inputs of a data set bundled with scikit-learn drawn whole (at most 1,797 rows,
    read once per process by the registry): the core's :func:`input_names` of its column
    facts, which equal what preparing it keeps (a built-in table, not a user's: kept per
    process)."""
    problem = datasource.problem_of(spec)
    frame = problem.sample(None)
    return tuple(input_names(column_facts(frame), problem.target, exclude=[]) or ())


def data_variables(data: DataChoice) -> list[str]:
    """Input names of a data choice: from the Data page's cached view of it, an upload's
    column facts (:func:`datasource.upload_shape`) or a generated problem's definition
    (:func:`problem_variables`), else cached here (a miss, as for a real data set bundled
    with scikit-learn, loads the data; raises DataError)."""
    view = datasource.data_view(data.as_dict, compute=False)
    if view is not None and "variables" in view:
        return list(view["variables"])
    known = (datasource.upload_shape(data.as_dict)["variables"] if data.is_upload
             else problem_variables(data))
    if known is not None:
        return known
    return cache.get_or_compute(cache.key_for("data-variables", data.as_dict),
                                lambda: list(data.load().variables))


def ranked_variables(data: DataChoice, compute: bool = True) -> list[str] | None:
    """Input names from most to least informative alone (plug-in I(X; Y), the core's
    ``rank_inputs``): from the Data page's cached view, else cached here.  A page opens on
    the first (issue #26).

    ``compute=False`` reads the caches only (None on a miss): a web request's way, since
    ranking needs the data loaded; the page's job ranks instead."""
    view = datasource.data_view(data.as_dict, compute=False)
    if view is not None and "ranked" in view:
        return list(view["ranked"])
    key = cache.key_for("data-ranked", data.as_dict)
    if not compute:
        return cache.get_json(key)
    return cache.get_or_compute(key, lambda: rank_inputs(data.load()))


# -- the forest ----------------------------------------------------------------------------
def make_forest_loader(data: DataChoice, settings: Mapping[str, Any], progress: Callable):
    """A zero-argument function that loads the data and fits the forest once, on first call.

    It returns a dict: ``prepared`` (PreparedData), ``estimator`` (the fitted
    scikit-learn forest; None for varimp's multiway forest, grown while
    counting), ``fit`` and ``assessed`` (row indices, :func:`split_rows`).
    """
    memo: dict[str, Any] = {}

    def load() -> dict:
        if "fit" not in memo:
            progress(0, None, "Loading the data\u2026")
            prepared = data.load()
            if prepared.X_numeric is None or prepared.y is None:
                raise DataError("This data has no observations (it is an exact distribution); "
                                "choose a sample on the Data page.")
            fit, assessed = split_rows(prepared.X_numeric.shape[0], settings["random_state"],
                                       settings["rows"], max_rows=MAX_ROWS)
            estimator = None
            if settings["forest"] != "multiway":
                progress(0, None, f"Fitting {settings['n_estimators']:,} trees on "
                                  f"{fit.size:,} rows\u2026")
                estimator = _fit_forest(prepared, fit, settings)
            memo["fit"] = {"prepared": prepared, "estimator": estimator, "fit": fit,
                           "assessed": assessed}
        return memo["fit"]

    return load


def _fit_forest(prepared, fit: np.ndarray, settings: Mapping[str, Any]):
    """:func:`fit_local_forest` of ``settings``, pointing to the forests that accept constants."""
    try:
        return fit_local_forest(prepared, fit, **{k: settings[k] for k in (
            "forest", "n_estimators", "max_features", "random_state")}, n_jobs=limits.n_jobs())
    except ValueError as exc:
        if settings["forest"] == "uniform" and "constant" in str(exc):
            raise ValueError(f"{exc} Or choose the random forest or extra-trees, which "
                             "accept constant columns.") from None
        raise


# -- local importance ------------------------------------------------------------------------
def local_view(data: DataChoice, settings: Mapping[str, Any], load: Callable,
               progress: Callable) -> dict:
    """The local importance of ``settings`` on ``data``, cached; counted (and fitted) on a miss.

    Returns
    -------
    summary : dict
        ``local`` (its cache key, for :func:`load_local`), ``task``, ``classes``
        (labels as text, or None), ``variables``, ``target``, ``n`` (rows
        assessed), ``n_fit`` (rows fitted) and ``labels`` (the names of values
        that stand for something else, and axis ticks, of every variable:
        :meth:`~varimp_core.data.prepare.PreparedData.value_label_pairs`).
    """
    def count() -> dict:
        f = load()
        rows, n = f["assessed"], settings["n_estimators"]
        progress(0, None, f"Counting leaf parents on {rows.size:,} rows\u2026")
        if f["estimator"] is None:
            progress(0, None, f"Growing {n:,} multiway trees on {f['fit'].size:,} rows and "
                              f"following {rows.size:,} rows down them\u2026")
        local = heldout_local_importance(
            f["prepared"], rows, estimator=f["estimator"], fit=f["fit"], n_estimators=n,
            max_features=settings["max_features"], random_state=settings["random_state"],
            progress=lambda d, t: progress(d, t, f"{d:,} of {t:,} trees"), n_jobs=limits.n_jobs())
        local = replace(local, parameters={k: v for k, v in local.parameters.items()
                                           if k != "proba"})  # not drawn: kept out of the cache
        return {"local": local.to_dict(), "rows": rows.tolist(), "summary": {
            "task": local.task,
            "classes": list(local.classes) if local.task == "classification" else None,
            "variables": list(local.variables), "target": f["prepared"].target,
            "n": int(rows.size), "n_fit": int(f["fit"].size),
            "labels": f["prepared"].value_label_pairs(local.variables)}}

    key = cache.key_for("ciss-local", data.as_dict, {k: settings[k] for k in FOREST_KEYS})
    waiting = lambda: progress(0, None, "Waiting for the same forest, grown for another view\u2026")  # noqa: E731
    return {"local": key, **cache.get_or_compute(key, count, on_wait=waiting)["summary"]}


def cached_entry(key: Any) -> dict:
    """The cached JSON under ``key`` (named by a page's store).

    Raises
    ------
    ValueError
        When it is no longer in the server's cache.
    """
    entry = cache.get_json(key) if isinstance(key, str) else None
    if entry is None:
        raise ValueError("The result is no longer on the server (the cache was cleared); "
                         "change a setting or reload the page to recompute it.")
    return entry


def load_local(key: Any) -> tuple[LocalImportance, np.ndarray]:
    """The cached local importance of :func:`local_view`, and the data rows it assessed."""
    entry = cached_entry(key)
    return LocalImportance.from_dict(entry["local"]), np.asarray(entry["rows"])


