"""Why this row page: one row's local MDI, Saabas, TreeSHAP and Ciss side by side (issue #28).

What the page shows, from the cached results: the chosen row's four explanations (each
titled with what it explains), its values with their labels, for exact data the identity
"sum of local MDI = H(Y) - H(Y | X = x)" with the numbers, and the local MDI of every
row per variable (click a point to pick its row), whose mean is the global MDI.

The job computes the explanations of every row once (cached under a key without the
row, :func:`all_rows`), then the chosen row's (:func:`compute`); picking another row
reads the first from the cache.  Figures come from :mod:`varimp_core.plots.explain`.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
import numpy as np
import pandas as pd
from dash import Input, Output, callback, dcc, html, no_update

from pages._framework import controls as ui
from pages._framework import local_forest as forest
from pages._framework import datasource, state, studies
from pages._framework.common import placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.local_forest import cached_entry
from pages._framework.page_frame import (download_button, download_note, figure_config,
                                        page_frame)
from pages._framework.grid import grid, grid_table
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.view import JobView, context_for
from pages._server import cache, limits
from varimp_core.csvtext import csv_filename as common_csv_filename
from varimp_core.csvtext import safe_csv
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest
from varimp_core.local.explain import (RowExplanation, explain_row, multiway_saabas,
                                       sklearn_local_mdi, sklearn_saabas, sklearn_treeshap)
from varimp_core.local.importance import local_importance
from varimp_core.local.local_mdi import LocalMDI, exact_local_mdi
from varimp_core.local.multiway import forest_local_importance
from varimp_core.plots.explain import make_local_mdi_strip, make_row_explanation

dash.register_page(__name__, path="/explain", name="Why this row", order=6.5,
                   title="varimp \u2014 Why this row")

PREFIX = "explain"
#: At most this many rows are explained for the summary and the CSV (a seeded subset beyond).
MAX_ROWS = forest.MAX_ROWS
#: TreeSHAP runs on at most this many rows ...
MAX_SHAP_ROWS = 200
#: ... and on at most this many (row, tree node) pairs: its cost grows with the trees' size.
SHAP_WORK = 3_000_000
#: Rows per TreeSHAP call between two progress reports (fewer for big trees: shap_chunk).
SHAP_CHUNK = 10
#: The search table holds at most this many cells (rows x variables) ...
TABLE_CELLS = 60_000
#: ... but at least this many rows.
TABLE_MIN_ROWS = 1_000
METHODS = [("et", "Extra-trees (scikit-learn)"), ("rf", "Random forest (scikit-learn)"),
           ("exact", "Exact local MDI (exact problems, small tables)")]
METHOD_NAMES = {"et": "extra-trees", "rf": "random forest", "exact": "exact"}
#: The settings the explanations of all rows depend on (not the row).
ALL_ROWS_KEYS = ("method", "n_estimators", "max_features", "random_state")

PARAMS = ParamSet(PREFIX, [
    Param("row", "Row", default=0, low=0,
          high=lambda c: c.extra["n_rows"] - 1 if c.extra.get("n_rows") else 10**9,
          what="row", help="The row explained, by its index (0 is the first). Click a point "
                           "of the summary to pick its row."),
    Param("method", "Method", "choice", "et", choices=METHODS, what="method",
          help="Exact: the infinite forest of randomized multiway trees on the table's "
               "distribution (TreeSHAP needs a scikit-learn forest)."),
    Param("n_estimators", "Trees", default=100, key="trees", low=1,
          high=lambda c: limits.max_trees(forest.MAX_TREES_UI), what="number of trees"),
    Param("max_features", "K", default=1, key="K", low=1, blank="all",
          high=lambda c: c.p or 100_000,
          help="Variables drawn at each node. K = 1 (totally randomized trees): the exact "
               "local MDI is the Shapley value of H(Y) \u2212 H(Y | X_S = x_S)."),
    seed_param(help="Seeds the trees and the rows TreeSHAP explains."),
])


# -- the data -----------------------------------------------------------------------------
def method_data(data: DataChoice, method: str) -> tuple[DataChoice, list[str]]:
    """The data a method computes on: a forest needs rows (an exact problem is sampled)."""
    if method == "exact":
        return data, []
    return forest.page_data(data)


def data_rows(data: DataChoice, method: str) -> dict:
    """``variables`` and ``n_rows`` (rows a row index may pick) of the data, cached.

    A sample of a generated built-in problem is known from its definition and size, with
    nothing loaded (:func:`drawn_rows`); an upload's rows from its column facts
    (:func:`datasource.upload_shape`; None each for the exact method's distinct rows, and
    for incomplete rows dropped); other data is loaded once and counted."""
    known = drawn_rows(data, method)
    if known is not None:
        return known
    key = cache.key_for("explain-data-rows", data.as_dict, method)
    if data.is_upload:   # an upload is never prepared in a request (#27.4): its facts, or unknown
        shape = datasource.upload_shape(data.as_dict) if method != "exact" else {}
        return (cache.get_json(key) or {"variables": shape.get("variables"),
                                        "n_rows": shape.get("rows")})

    def count() -> dict:
        prepared = method_data(data, method)[0].load()
        if method == "exact":
            n = int(np.unique(prepared.table.X, axis=0).shape[0])
        else:
            n = int(prepared.X_numeric.shape[0])
        return {"variables": list(prepared.variables), "n_rows": n}

    return cache.get_or_compute(key, count)


def drawn_rows(data: DataChoice, method: str) -> dict | None:
    """``variables`` and ``n_rows`` of a generated problem's sample, from its definition and
    the number of rows drawn (a link to a large sample loaded it in the web worker, #27.4);
    a data set bundled with scikit-learn drawn whole, likewise; None when the rows must be
    loaded to be counted (the exact method's distinct rows, an upload, a smaller sample of a
    bundled data set)."""
    if method == "exact":
        return None
    drawn = method_data(data, method)[0]
    variables = forest.problem_variables(drawn)
    if variables is None or not drawn.is_sample:
        return None
    # no n in the choice: the problem's own size (its ``samples`` option, or its default); a
    # bundled data set is drawn whole (problem_variables answers for it only then)
    problem = datasource.problem_of(str(drawn["problem"]))
    n = drawn["n"] or problem.default_samples
    if problem.relevant is None:
        n = min(n, problem.default_samples)
    return {"variables": variables, "n_rows": int(n)}


def value_names(pairs: Mapping[str, Any], variable: str) -> dict:
    """``{value: label}`` of ``variable`` from a ``value_label_pairs`` mapping."""
    return {float(v): t for v, t in pairs.get(variable, {}).get("names", [])}


def value_label(names: Mapping[float, str], value: float) -> str:
    """A value as its label (a category, "missing") or its number."""
    v = float(value)
    return names.get(v, f"{v:.6g}")


# -- computing ------------------------------------------------------------------------------
def stop_point(progress) -> None:
    """Cancel before the first figure: a sentence (there is nothing to draw yet)."""
    if progress.should_stop():
        raise ValueError("Cancelled before the first figure: nothing was finished to show.")


def _forest_loader(data: DataChoice, settings: Mapping[str, Any], progress) -> Any:
    """Zero-argument function: (prepared data, the fitted forest), fitted once."""
    memo: dict[str, Any] = {}

    def load():
        if "fit" not in memo:
            progress(0, None, "Loading the data\u2026")
            prepared = method_data(data, settings["method"])[0].load()
            if prepared.X_numeric is None or prepared.y is None:
                raise ValueError("This data has no observations; choose a sample on the Data "
                                 "page, or the exact method.")
            X = pd.DataFrame(prepared.X_numeric, columns=list(prepared.variables))
            progress(0, None, f"Fitting {settings['n_estimators']:,} trees on {len(X):,} "
                              "rows\u2026")
            est = fit_sklearn_forest(
                X, prepared.y, kind=settings["method"], task=prepared.task,
                n_estimators=settings["n_estimators"], max_features=settings["max_features"],
                bootstrap=False, random_state=settings["random_state"], n_jobs=limits.n_jobs())
            memo["fit"] = (prepared, X, est)
            stop_point(progress)
        return memo["fit"]

    return load


def shap_rows(n: int, nodes: int, seed: int) -> np.ndarray:
    """Positions (sorted) of the rows TreeSHAP explains: all, or a seeded sample sized so
    that rows x tree nodes stays under :data:`SHAP_WORK` (at least 5, at most
    :data:`MAX_SHAP_ROWS`)."""
    m = int(min(n, MAX_SHAP_ROWS, max(5, SHAP_WORK // max(nodes, 1))))
    if m >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, m, replace=False))


def _class_label(prepared, output) -> str:
    if output == "value":
        return "value"
    labels = prepared.table.y_labels
    try:
        return str(labels[int(output)])
    except (ValueError, IndexError, TypeError):
        return str(output)


class Stopped(Exception):
    """Cancel during TreeSHAP's sample: ``entry`` holds what was finished (not cached)."""

    def __init__(self, entry: dict):
        super().__init__("cancelled")
        self.entry = entry


def shap_chunk(nodes: int) -> int:
    """Rows per TreeSHAP call: fewer for big trees, so that Cancel and the progress bar
    answer within about one call of :data:`SHAP_WORK` / 10 (row, node) pairs."""
    return int(max(1, min(SHAP_CHUNK, SHAP_WORK // (10 * max(nodes, 1)))))


def _forest_rows(data, settings, load, progress, early=None) -> dict:
    prepared, X, est = load()
    N = len(X)
    rows = np.arange(N) if N <= MAX_ROWS else np.sort(
        np.random.default_rng(settings["random_state"]).choice(N, MAX_ROWS, replace=False))
    Xr = X.iloc[rows]
    progress(0, None, f"Local MDI, Saabas and Ciss of {len(rows):,} rows\u2026")
    lm = sklearn_local_mdi(est, Xr)
    stop_point(progress)
    sa = sklearn_saabas(est, Xr)
    k = np.argmax(sa.prediction, axis=1)
    pick = np.arange(len(rows))
    ciss = local_importance(est, Xr).frequencies
    nodes = sum(t.tree_.node_count for t in est.estimators_)
    shap_at = shap_rows(len(rows), nodes, settings["random_state"])
    shap = np.full((len(rows), lm.n_features), np.nan)
    shap_bias = np.full(len(rows), np.nan)
    notes = method_data(data, settings["method"])[1]
    entry = {"rows": rows.tolist(), "n_data": N, "local": lm.to_dict(),
             "saabas": sa.values[pick, :, k].tolist(), "saabas_bias": sa.bias[pick, k].tolist(),
             "output": [_class_label(prepared, sa.outputs[i]) for i in k],
             "prediction": sa.prediction[pick, k].tolist(), "ciss": ciss.tolist(),
             "n_shap": int(len(shap_at)), "nodes": int(nodes), "notes": notes,
             "value_names": prepared.value_label_pairs(prepared.variables),
             "method": settings["method"], "exact": False}

    def with_shap(done: int) -> dict:
        return {**entry, "treeshap": np.where(np.isnan(shap), None, shap).tolist(),
                "treeshap_bias": np.where(np.isnan(shap_bias), None, shap_bias).tolist(),
                "shap_done": done}

    if early is not None:  # the first figure: local MDI, Saabas and Ciss, TreeSHAP to come
        early(with_shap(0))
    # the chosen row first (when TreeSHAP's sample has it): its figure is complete soonest
    first = [a for a in shap_at if early is not None and rows[a] == settings["row"]]
    order = np.array(first + [a for a in shap_at if a not in first], dtype=int)
    step = shap_chunk(nodes)
    for start in range(0, len(order), step):
        if progress.should_stop():
            raise Stopped(with_shap(start))
        progress(start, len(order), f"TreeSHAP: {start:,} of {len(order):,} rows")
        at = order[start:start + step]
        sh = sklearn_treeshap(est, Xr.iloc[at])
        shap[at] = sh.values[np.arange(len(at)), :, k[at]]
        shap_bias[at] = sh.bias[np.arange(len(at)), k[at]]
    progress(len(order), len(order), "")
    return with_shap(len(order))


def _exact_rows(data, settings, progress) -> dict:
    prepared = data.load()
    table = prepared.table
    K = settings["max_features"] or len(table.variables)
    progress(0, None, "Exact local MDI of every distinct row\u2026")
    lm = exact_local_mdi(table, max_features=K, criterion="entropy")
    stop_point(progress)
    T = settings["n_estimators"]
    progress(0, None, f"Saabas and Ciss: growing {T:,} multiway trees\u2026")
    opts = dict(n_estimators=T, max_features=K, random_state=settings["random_state"])
    sa = multiway_saabas(table, lm.X, **opts)
    stop_point(progress)
    k = np.argmax(sa.prediction, axis=1)
    pick = np.arange(lm.n_rows)
    ciss = forest_local_importance(table, lm.X, **opts).frequencies
    names = {v: [[float(c), str(lab)] for c, lab in enumerate(table.x_labels[j])]
             for j, v in enumerate(table.variables)} if table.x_labels else {}
    n = lm.n_rows
    return {"rows": list(range(n)), "n_data": n, "local": lm.to_dict(),
            "saabas": sa.values[pick, :, k].tolist(), "saabas_bias": sa.bias[pick, k].tolist(),
            "output": [_class_label(prepared, sa.outputs[i]) for i in k],
            "prediction": sa.prediction[pick, k].tolist(), "ciss": ciss.tolist(),
            "treeshap": [[None] * lm.n_features] * n, "treeshap_bias": [None] * n,
            "n_shap": 0, "nodes": 0, "notes": [], "exact": bool(table.exact),
            "value_names": {v: {"names": pairs} for v, pairs in names.items()}}


def all_rows(data: DataChoice, settings: Mapping[str, Any], progress, load=None,
             early=None) -> str:
    """The cache key of the explanations of every row (computed on a miss).

    ``early(entry)``, when given, is called with the explanations without TreeSHAP as soon
    as they are known (the first figure); Cancel during TreeSHAP's sample raises
    :class:`Stopped` with what was finished, and nothing is cached.
    """
    def count() -> dict:
        if settings["method"] == "exact":
            out = _exact_rows(data, settings, progress)
        else:
            out = _forest_rows(data, settings, load or _forest_loader(data, settings, progress),
                               progress, early)
        return {"exact": False, **out, "method": settings["method"]}

    key = cache.key_for("explain-rows", data.as_dict, {k: settings[k] for k in ALL_ROWS_KEYS})
    cache.get_or_compute(key, count, on_wait=lambda: progress(
        0, None, "Waiting for the same forest, grown for another row\u2026"))
    return key


def _float(v) -> float:
    return float("nan") if v is None else float(v)


def row_from(entry: Mapping[str, Any], i: int) -> RowExplanation:
    """The RowExplanation of position ``i`` of the cached explanations of every row."""
    lm = LocalMDI.from_dict(entry["local"])
    se = lm.standard_errors[i] if lm.standard_errors is not None else np.zeros(lm.n_features)
    notes = {"ciss": "share of trees whose leaf for the row is right below a split on it"}
    if entry["treeshap_bias"][i] is None:
        if entry["method"] == "exact":
            notes["treeshap"] = ("TreeSHAP reads scikit-learn trees: not available for the "
                                 "exact forest; choose extra-trees or random forest.")
        elif entry.get("shap_done", entry["n_shap"]) < entry["n_shap"]:
            notes["treeshap"] = "TreeSHAP is running (see the progress bar)"
        else:
            notes["treeshap"] = "not computed for this row"
    return RowExplanation(
        variables=lm.variables, x=np.asarray(lm.X[i], dtype=float), output=entry["output"][i],
        prediction=float(entry["prediction"][i]), local_mdi=lm.values[i], local_mdi_se=se,
        local_mdi_total=float(lm.totals[i]), units=lm.units,
        saabas=np.asarray(entry["saabas"][i], dtype=float),
        saabas_bias=float(entry["saabas_bias"][i]),
        treeshap=np.array([_float(v) for v in entry["treeshap"][i]]),
        treeshap_bias=_float(entry["treeshap_bias"][i]),
        ciss=np.asarray(entry["ciss"][i], dtype=float), method=entry["method"], notes=notes)


def _check_row(entry: Mapping[str, Any], row: int) -> None:
    n = entry["n_data"]
    if not 0 <= row < n:
        raise ValueError(f"Row {row} is not a row of this data: choose a row from 0 to "
                         f"{n - 1:,}.")


def entry_of(out: Mapping[str, Any]) -> dict:
    """The explanations of every row a result reads: its own (a first figure, or what a
    cancelled job finished), else the cached entry it names."""
    return out["entry"] if "entry" in out else cached_entry(out["all"])


def compute(settings, data, progress) -> dict:
    """Every row's explanations (cached), then the chosen row's, checked against N.

    The first figure is published (``progress.publish``) before TreeSHAP's sample, which
    runs in chunks; Cancel there draws what was finished, not cached (``partial``).
    """
    load = _forest_loader(data, settings, progress) if settings["method"] != "exact" else None
    row = settings["row"]

    own: dict[bool, RowExplanation] = {}

    def own_row(treeshap: bool = True) -> RowExplanation:
        """A row outside the rows explained (or TreeSHAP's sample): its own answers."""
        if treeshap not in own:
            prepared, X, est = load()
            if treeshap:
                progress(0, None, f"TreeSHAP of row {row:,}\u2026")
            e = explain_row(est, X, row, treeshap=treeshap)
            if not treeshap:
                e.notes["treeshap"] = "TreeSHAP is running (see the progress bar)"
            own[treeshap] = RowExplanation(**{**e.__dict__,
                                              "output": _class_label(prepared, e.output)})
        return own[treeshap]

    def early(entry):  # the first figure, before any TreeSHAP
        _check_row(entry, row)
        e = row_from(entry, entry["rows"].index(row)) if row in entry["rows"] else \
            own_row(treeshap=False)
        progress.publish({"entry": entry, "row": row, "explanation": e.to_dict()})

    try:
        key = all_rows(data, settings, progress, load, early)
    except Stopped as stop:
        entry = stop.entry
        _check_row(entry, row)
        if row in entry["rows"]:
            e = row_from(entry, entry["rows"].index(row))
            if entry["treeshap_bias"][entry["rows"].index(row)] is None:
                e.notes["treeshap"] = "cancelled before TreeSHAP reached this row"
        else:  # TreeSHAP of the row comes after the sample: cancelled before it
            e = own_row(treeshap=False)
            e.notes["treeshap"] = "cancelled before TreeSHAP reached this row"
        return {"entry": entry, "row": row, "explanation": e.to_dict(), "partial": True}
    entry = cached_entry(key)
    _check_row(entry, row)
    rows = entry["rows"]
    at = rows.index(row) if row in rows else None
    if at is not None and (entry["method"] == "exact" or entry["treeshap_bias"][at] is not None):
        e = row_from(entry, at)
    else:  # outside the rows explained, or outside TreeSHAP's sample: its own four answers
        e = own_row()
    return {"all": key, "row": row, "explanation": e.to_dict()}


# -- drawing ------------------------------------------------------------------------------------
def identity_text(entry: Mapping[str, Any], row: int) -> str:
    """"Σ_m local MDI = H(Y) − H(Y | X = x)" for the row, with the numbers (exact method)."""
    if entry["method"] != "exact":
        return ""
    lm = LocalMDI.from_dict(entry["local"])
    i = entry["rows"].index(row)
    h, hx = lm.root_impurity, float(lm.leaf_impurity[i])
    where = "" if entry.get("exact") else " (the table's frequencies as the distribution)"
    return (f"Row {row}: \u03a3\u2098 local MDI = {lm.totals[i]:.4f} bits = H(Y) \u2212 "
            f"H(Y | X = x) = {h:.4f} \u2212 {hx:.4f}{where}.")


def row_values(entry: Mapping[str, Any], e: RowExplanation) -> list:
    """The row's values as labels, then what the forest predicts."""
    names = entry.get("value_names", {})
    items = [html.Li([html.Strong(v), " = ",
                      html.Span(value_label(value_names(names, v), x), className="explain-value")])
             for v, x in zip(e.variables, e.x)]
    what = "predicted value" if e.output == "value" else f"predicted P({e.output})"
    return [html.Ul(items, className="explain-values", id=f"{PREFIX}-values-list"),
            html.P(f"The {what} is {e.prediction:.4g}; Saabas and TreeSHAP explain it, local "
                   f"MDI the {e.local_mdi_total:.4g} {e.units} of information about Y on the "
                   "row's path.", className="vi-help")]


def summary_sentence(entry: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What was computed, on how many rows, and TreeSHAP's sample."""
    T, n, N = settings["n_estimators"], len(entry["rows"]), entry["n_data"]
    if entry["method"] == "exact":
        text = (f"Exact local MDI of the {n:,} distinct rows (weights p(x)); Saabas and Ciss "
                f"from {T:,} multiway trees.")
    else:
        text = (f"{METHOD_NAMES[entry['method']].capitalize()} of {T:,} tree"
                f"{'s' if T != 1 else ''} without the bootstrap, fitted on all {N:,} rows")
        text += (". " if n == N else f"; {n:,} of them (a seeded subset) explained here. ")
        text += ("TreeSHAP on every row." if entry["n_shap"] >= n else
                 f"TreeSHAP on a seeded sample of {entry['n_shap']:,} rows (its cost grows "
                 "with the trees' size); another row gets its own when picked.")
        done = entry.get("shap_done", entry["n_shap"])
        if done < entry["n_shap"]:
            text += f" TreeSHAP so far: {done:,} of {entry['n_shap']:,} rows."
    return text


def search_table(entry: Mapping[str, Any], row: int) -> tuple[list, list, list]:
    """The rows explained as a table to search (``data``, ``columns``, the chosen row's
    highlight as the grid's ``getRowStyle``): one column per variable, its values as labels; at most
    :data:`TABLE_CELLS` cells (the first rows explained; the others by index or a click)."""
    lm = LocalMDI.from_dict(entry["local"])
    names = entry.get("value_names", {})
    by = [value_names(names, v) for v in lm.variables]
    n = table_rows(lm.n_rows, lm.n_features)
    columns = [{"name": "row", "id": "id", "type": "numeric"}] + [
        {"name": v, "id": f"c{j}", "type": "text"} for j, v in enumerate(lm.variables)]
    cols = {f"c{j}": [by[j].get(v) or f"{v:.6g}" for v in lm.X[:n, j].tolist()]
            for j in range(lm.n_features)}       # value_label, column by column (faster)
    data = [{"id": int(r), **{c: values[i] for c, values in cols.items()}}
            for i, r in enumerate(entry["rows"][:n])]
    # a condition dash-ag-grid parses itself (no eval: the CSP allows none)
    style = {"styleConditions": [{"condition": f"params.data.id == {int(row)}",
                                  "style": {"backgroundColor": "var(--vi-accent-soft)",
                                            "fontWeight": 650}}]}
    return data, columns, style


def table_rows(n: int, p: int) -> int:
    """Rows the search table holds: all ``n``, or as many as :data:`TABLE_CELLS` allows (at
    least :data:`TABLE_MIN_ROWS`)."""
    return int(min(n, max(TABLE_MIN_ROWS, TABLE_CELLS // max(p, 1))))


def table_note(entry: Mapping[str, Any]) -> str:
    """Which rows the search table holds."""
    n = len(entry["rows"])
    shown = table_rows(n, len(entry["local"]["variables"]))
    text = ("Type in a column's filter box (a label, a number, or >, < and a number) to find "
            "rows; click a row to explain it.")
    if shown < n:
        text += (f" The table holds the first {shown:,} of the {n:,} rows explained; pick "
                 "another by its index or in the figure.")
    return text


def render(out, settings, data) -> tuple:
    """The two figures, the row's values, the identity, the sentences and the search table."""
    entry = entry_of(out)
    e = RowExplanation.from_dict(out["explanation"])
    fig = make_row_explanation(e).update_layout(height=None)
    lm = LocalMDI.from_dict(entry["local"])
    strip = make_local_mdi_strip(lm, rows=entry["rows"], chosen=out["row"]).update_layout(
        height=None)
    ident = identity_text(entry, out["row"])
    notes = [html.P(n) for n in entry.get("notes", [])]
    table, columns, style = search_table(entry, out["row"])
    columns, table = grid_table(columns, [{**r, "key": str(r["id"])} for r in table])
    return (fig, strip, row_values(entry, e), ident, "vi-identity" if ident else "vi-hidden",
            summary_sentence(entry, settings), notes, "vi-notes" if notes else "vi-hidden",
            {"height": f"{max(300, 80 + 34 * lm.n_features)}px"}, table, columns, style,
            table_note(entry))


def rows_csv(out, settings, data) -> tuple[str, str]:
    """Every row's explanations: one line per (row, variable), the four methods as columns."""
    entry = entry_of(out)
    lm = LocalMDI.from_dict(entry["local"])
    names = entry.get("value_names", {})
    n, p = lm.values.shape
    se = lm.standard_errors if lm.standard_errors is not None else np.full((n, p), np.nan)
    shap = np.array([[_float(v) for v in r] for r in entry["treeshap"]])
    by = {v: value_names(names, v) for v in lm.variables}
    label = [[value_label(by[v], lm.X[i, j]) for j, v in enumerate(lm.variables)]
             for i in range(n)]
    frame = pd.DataFrame({
        "row": np.repeat(entry["rows"], p), "weight": np.repeat(lm.weight, p),
        "variable": np.tile(np.array(lm.variables, dtype=object), n),
        "value": np.array(label, dtype=object).ravel(),
        "output_explained": np.repeat(np.array(entry["output"], dtype=object), p),
        "local_mdi": lm.values.ravel(), "local_mdi_se": se.ravel(),
        "saabas": np.asarray(entry["saabas"], dtype=float).ravel(), "treeshap": shap.ravel(),
        "ciss": np.asarray(entry["ciss"], dtype=float).ravel()})
    return safe_csv(frame), common_csv_filename("explain", data.as_dict, settings["method"],
                                                "rows")


OUTPUTS = [(f"{PREFIX}-row-graph", "figure"), (f"{PREFIX}-strip-graph", "figure"),
           (f"{PREFIX}-values", "children"), (f"{PREFIX}-identity", "children"),
           (f"{PREFIX}-identity", "className"), (f"{PREFIX}-summary", "children"),
           (f"{PREFIX}-notes", "children"), (f"{PREFIX}-notes", "className"),
           (f"{PREFIX}-strip-graph", "style"), (f"{PREFIX}-table", "rowData"),
           (f"{PREFIX}-table", "columnDefs"), (f"{PREFIX}-table", "getRowStyle"),
           (f"{PREFIX}-table-note", "children")]

#: At most this many trees times distinct rows for the exact method computed in the request:
#: its Saabas and Ciss columns grow the trees and route every row (2026-11-29, idle: 100
#: trees on LED + 2 bits, 40 rows, 0.02 s; 200 trees on LED + 4 bits, 160 rows, 0.2 s in
#: all; on SYM + 8 bits, 1,536 rows, 0.9 s; on XOR + 9 bits, 2,048 rows, 3.3 s).
QUICK_TREE_ROWS = 50_000


def quick(settings, data: DataChoice) -> bool:
    """The exact method on a built-in problem's exact distribution of a few inputs and rows
    (the Home demos): every row's explanations in well under a second, computed in the
    request rather than in a job whose start and first poll cost more
    (:func:`datasource.quick_exact`, :data:`QUICK_TREE_ROWS`)."""
    if settings["method"] != "exact" or data.is_sample or not datasource.quick_exact(
            data["problem"]):
        return False
    rows = datasource.problem_of(data["problem"]).exact_rows
    return rows * settings["n_estimators"] <= QUICK_TREE_ROWS


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store=f"{PREFIX}-data",
               outputs=OUTPUTS, query_store=f"{PREFIX}-query", quick=quick,
               url=lambda s, data: forest.link(data.query(), PARAMS.query(s)),
               requires=lambda out: [out["all"]], what="The explanations", partial=True,
               disable=[f"{PREFIX}-fieldset", f"{PREFIX}-download-button"])
VIEW.register()
VIEW.register_downloads({f"{PREFIX}-download-button": rows_csv})
state.register_url_sync(PREFIX)


def _row_or_nothing(row):
    if isinstance(row, bool) or not isinstance(row, (int, float)) or row != int(row):
        return no_update  # a bar (its customdata is the variable's name), no cell
    return int(row)


@callback(Output(PARAMS.id("row"), "value"), Input(f"{PREFIX}-strip-graph", "clickData"),
          prevent_initial_call=True)
def pick_row(click):
    """A click on a point of the summary picks its row."""
    try:
        return _row_or_nothing(click["points"][0]["customdata"])
    except (KeyError, IndexError, TypeError):
        return no_update


@callback(Output(PARAMS.id("row"), "value", allow_duplicate=True),
          Input(f"{PREFIX}-table", "cellClicked"), prevent_initial_call=True)
def pick_table_row(cell):
    """A click on a row of the search table picks it (its grid row id is the row's index)."""
    try:
        row = int(cell.get("rowId")) if isinstance(cell, Mapping) else None
    except (TypeError, ValueError):
        row = None
    return _row_or_nothing(row)


def initial_state(query: Mapping[str, Any], vi_data=None) -> dict:
    """The data choice, the link's values (notes for bad ones), the sizing sentence."""
    data, notes = DataChoice.from_page(query, vi_data)
    ctx = context_for(data)
    values, bad = PARAMS.from_url(query, ctx)
    notes += bad
    try:
        n_rows = data_rows(data, values["method"])["n_rows"]
    except ValueError as exc:
        n_rows = None
        notes.append(str(exc))
    if n_rows is not None and values["row"] >= n_rows:
        notes.append(f"The link's row {values['row']} was ignored: this data has {n_rows:,} "
                     "rows; showing row 0.")
        values["row"] = 0
    values["n_estimators"], scaled = studies.scale_trees(values["n_estimators"], query, data)
    return {"data": data, "values": values, "notes": notes, "scaled": scaled,
            "ctx": Context(p=ctx.p, extra={"n_rows": n_rows}), "n_rows": n_rows}


def layout(vi_data=None, **query):
    st = initial_state(query, vi_data)
    f = dict(zip(PARAMS.names, PARAMS.fields(st["values"], st["ctx"])))
    rows = ("" if st["n_rows"] is None else
            f"Rows 0 to {st['n_rows'] - 1:,} (exact: the distinct rows of the distribution).")
    sizing = (st["scaled"] or "Trees \u00d7 rows \u00d7 inputs is bounded: on large data the "
              "default number of trees is scaled down (as on Interactions and Dependence).")
    controls = html.Fieldset(id=f"{PREFIX}-fieldset", className="vi-fieldset", children=[
        ui.card("Row", f["row"], html.P(rows, className="vi-help")),
        ui.card("Forest", f["method"],
                html.Div(className="vi-row", children=[f["n_estimators"], f["max_features"]]),
                f["random_state"],
                html.P(sizing + f" TreeSHAP runs on at most {MAX_SHAP_ROWS} rows (fewer for big "
                       "trees), the chosen row always; local MDI, Saabas and Ciss on every "
                       f"row (up to {MAX_ROWS:,}).", className="vi-help")),
    ])
    return page_frame(
        PREFIX, title="Why this row", notes=st["notes"], data=st["data"],
        query=forest.link(st["data"].query(), PARAMS.query(st["values"])), download=True,
        lead="Four answers to \u201cwhich inputs matter for this row?\u201d, which explain "
             "different things. Local MDI (Sutera et al. 2021) shares the information about "
             "Y that the trees gain on the row's path; Saabas and TreeSHAP share the "
             "predicted probability; Ciss (2015) counts which variable is asked last "
             "above the row's leaves. Averaged over the rows, local MDI is the global MDI.",
        stores=VIEW.stores(), controls=controls,
        status=[*VIEW.status(), download_note(PREFIX)],
        content=[
            html.Div(id=f"{PREFIX}-notes", className="vi-hidden", role="status"),
            ui.card("This row's four explanations",
                    html.P(id=f"{PREFIX}-identity", className="vi-hidden"),
                    dcc.Graph(id=f"{PREFIX}-row-graph", figure=placeholder_figure(),
                              config=figure_config(f"{PREFIX}-row"), className="vi-figure",
                              style={"height": "560px"}),
                    html.H3("The row", className="vi-subtitle"),
                    html.Div(id=f"{PREFIX}-values")),
            ui.card("Local MDI of every row",
                    dcc.Graph(id=f"{PREFIX}-strip-graph", figure=placeholder_figure(),
                              config=figure_config(f"{PREFIX}-strip"), className="vi-figure",
                              style={"height": "420px"}),
                    html.P("Each point is a row; click one to explain it. The diamond is "
                           "the mean over the rows (weighted by p(x) for exact data), and "
                           "the bar the forest's global MDI: they are equal.",
                           className="vi-help"),
                    html.P(id=f"{PREFIX}-summary", className="vi-description"),
                    download_button(PREFIX, "Download every row's explanations (CSV)")),
            ui.card("Find a row by its values",
                    html.P(id=f"{PREFIX}-table-note", className="vi-help"),
                    grid(f"{PREFIX}-table", page_size=10, filter=True, row_id="key")),
        ])
