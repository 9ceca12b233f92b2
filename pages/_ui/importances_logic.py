"""Logic behind the Importances page, as plain functions tests can call.

The page wires these to components; every number comes from the core
(:func:`varimp_core.api.compute_importances`) through the shared cache, and
every figure from :mod:`varimp_core.plots.importances`.
"""

from __future__ import annotations

import json

import math
import re
from typing import Any, Mapping

import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.api import METHODS, compute_importances
from varimp_core.forest import MAX_TREES
from varimp_core.information import joint_information
from varimp_core.plots.importances import (make_importance_figure, make_theorem2_figure,
                                           method_label)
from varimp_core.problems import get_problem
from varimp_core.result import ImportanceResult

from . import cache, datasource, limits
from .common import neutralise_cell
from .state import Param, bool_parser, choice_parser, encode_query, int_parser, parse_query

__all__ = [
    "PREFIX",
    "PARAMS",
    "SAMPLED",
    "METHOD_OPTIONS",
    "SEMANTICS_OPTIONS",
    "MAX_TREES_UI",
    "DEFAULT_BOOTSTRAP",
    "data_params_for_page",
    "data_feature_count",
    "initial_state",
    "default_method",
    "method_options",
    "whole_number",
    "settings_from_controls",
    "page_query",
    "field_classes",
    "exact_settings_for",
    "make_loader",
    "cached_result",
    "compute_view",
    "theorem2_text",
    "exact_note",
    "table_columns",
    "table_rows",
    "csv_text",
    "csv_filename",
    "neutralise_cell",
    "render",
]

PREFIX = "imp"
#: At most this many trees from the page (the core allows more, at a cost); the
#: server's ``VARIMP_MAX_TREES`` may lower it (:func:`pages._ui.limits.max_trees`).
MAX_TREES_UI = min(10_000, MAX_TREES)
#: scikit-learn's and the core's bootstrap defaults per method.
DEFAULT_BOOTSTRAP = {"exact": False, "forest": False, "sklearn-rf": True, "sklearn-et": False}
SAMPLED = ("forest", "sklearn-rf", "sklearn-et")

METHOD_OPTIONS = [
    {"label": "Exact (infinite forest)", "value": "exact"},
    {"label": "Multiway forest (sampled)", "value": "forest"},
    {"label": "scikit-learn random forest", "value": "sklearn-rf"},
    {"label": "scikit-learn extra-trees", "value": "sklearn-et"},
]
SEMANTICS_OPTIONS = [
    {"label": "id3: K of the unused variables", "value": "id3"},
    {"label": "sklearn: K of all p, constant ones skipped", "value": "sklearn"},
]

#: URL parameters of the page (after the data parameters of :mod:`datasource`).
PARAMS: tuple[Param, ...] = (
    Param("method", None, choice_parser(METHODS, what="method"), "method"),
    Param("K", 1, int_parser(1, 10_000, what="K"), "K"),
    Param("depth", None, int_parser(1, 10_000, what="max depth"), "max depth"),
    Param("trees", 100, limits.count_parser(1, lambda: limits.max_trees(MAX_TREES_UI),
                                            what="number of trees"), "number of trees"),
    Param("bootstrap", None, bool_parser, "bootstrap"),
    Param("semantics", "id3", choice_parser(("id3", "sklearn"), what="K semantics"),
          "K semantics"),
    Param("tree_seed", 0, int_parser(0, 2**32 - 1, what="seed"), "seed"),
)

_DATA_KEYS = {p.name for p in datasource.DATA_PARAMS}


# -- data choice -------------------------------------------------------------
def data_params_for_page(query: Mapping[str, Any], vi_data: Any = None) -> tuple[dict, list[str]]:
    """The data choice of a page: from its URL, else the session's ``vi-data``.

    Parameters
    ----------
    query : mapping
        What Dash passes to ``layout(**query)``.
    vi_data : dict or None
        The ``vi-data`` store (``{"params": ...}``) of the session.

    Returns
    -------
    params : dict
        Canonical data parameters.
    notes : list of str
        Sentences about link values that were ignored.
    """
    if not _DATA_KEYS & set(query) and isinstance(vi_data, dict) and vi_data.get("params"):
        return datasource.parse_data_query(
            {k: v for k, v in vi_data["params"].items() if v is not None})
    return datasource.parse_data_query(query)


def data_feature_count(params: Mapping[str, Any], vi_data: Any = None) -> int | None:
    """Number of inputs p of a data choice, without loading the data (None if unknown)."""
    p = datasource.canonical_params(params)
    if isinstance(vi_data, dict) and vi_data.get("params") == p and vi_data.get("p"):
        return int(vi_data["p"])
    if p["source"] == "problem":
        try:
            return len(get_problem(p["problem"]).variables)
        except ValueError:
            return None
    columns = datasource.upload_columns(p.get("upload"))
    return None if columns is None else max(len(columns["columns"]) - 1, 0)


def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """Everything ``layout(**query)`` needs: data, control values, notes.

    Returns
    -------
    state : dict
        ``data`` (canonical data parameters), ``p`` (or None), ``values``
        (one value per control: ``method``, ``K``, ``depth``, ``trees``,
        ``bootstrap``, ``semantics``, ``tree_seed``), ``notes`` and ``query``
        (the page's canonical query string).
    """
    data, notes = data_params_for_page(query, vi_data)
    values, more = parse_query(query, PARAMS)
    notes += more
    p = data_feature_count(data, vi_data)
    if values["method"] is None:
        values["method"] = default_method(p)
    if values["bootstrap"] is None:
        values["bootstrap"] = DEFAULT_BOOTSTRAP[values["method"]]
    if p is not None and values["K"] > p:
        notes.append(f"The link's K was ignored: this data has {p} inputs, so K must be "
                     f"from 1 to {p}. Using K = 1 instead.")
        values["K"] = 1
    try:
        query_text = page_query(data, settings_from_controls(**values, p=p))
    except ValueError:
        query_text = datasource.data_query(data)
    return {"data": data, "p": p, "values": values, "notes": notes, "query": query_text}


def default_method(p: int | None) -> str:
    """``"exact"`` up to the server's exact-method limit of inputs, else scikit-learn's extra-trees.

    Extra-trees with K = 1 are the fast relative of totally randomized trees;
    the multiway forest is slow on hundreds of inputs.  The limit is
    :func:`pages._ui.limits.max_exact_features` (the core's MAX_SUBSET_FEATURES
    unless ``VARIMP_MAX_EXACT_FEATURES`` lowers it).
    """
    return "exact" if p is None or p <= limits.max_exact_features() else "sklearn-et"


def method_options(p: int | None) -> list[dict]:
    """Method choices; the exact method is disabled above the server's limit of inputs."""
    most = limits.max_exact_features()
    if p is None or p <= most:
        return METHOD_OPTIONS
    return [dict(o, label=f"{o['label']} \u2014 at most {most} inputs",
                 disabled=True) if o["value"] == "exact" else o for o in METHOD_OPTIONS]


# -- settings ----------------------------------------------------------------
def whole_number(value, what: str, low: int, high: int | None, default=None):
    """A whole number from a control, or ``default`` when blank.

    Raises
    ------
    ValueError
        With a sentence naming ``what`` and the allowed range.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"The {what} must be a whole number, got {value!r}.") from None
    limit = f"from {low:,} to {high:,}" if high is not None else f"of at least {low:,}"
    if not math.isfinite(number) or number != int(number) or number < low \
            or (high is not None and number > high):
        raise ValueError(f"The {what} must be a whole number {limit}, got {value!r}.")
    return int(number)


def settings_from_controls(*, method, K, depth=None, trees=100, bootstrap=None,
                           semantics="id3", tree_seed=0, p: int | None = None) -> dict:
    """Canonical computation settings from the page's control values.

    Only the settings that matter for the method are kept (the number of
    trees, bootstrap and seed only for sampled methods; K semantics not for
    scikit-learn, which always reads K its own way), so two equivalent
    choices share one cache entry and one URL.

    Parameters
    ----------
    method : str
        One of :data:`varimp_core.api.METHODS`.
    K, depth, trees, tree_seed : int, str or None
        Control values; ``depth`` blank means fully grown trees.
    bootstrap : bool, list or None
        A checklist value (``["on"]`` / ``[]``) or a bool; None: the
        method's default.
    semantics : {"id3", "sklearn"}
    p : int, default=None
        Number of inputs, to check K against.

    Returns
    -------
    settings : dict

    Raises
    ------
    ValueError
        With a sentence for the page.
    """
    if method not in METHODS:
        raise ValueError(f"Choose a method: one of {', '.join(METHODS)}.")
    k = whole_number(K, "K (variables drawn at each node)", 1, p, None)
    if k is None:
        raise ValueError("Enter K, the number of variables drawn at each node: a whole number "
                         + (f"from 1 to {p}." if p else "of at least 1."))
    out: dict[str, Any] = {"method": method, "K": k,
                           "depth": whole_number(depth, "max depth", 1, None, None)}
    if method in ("exact", "forest"):
        if semantics not in ("id3", "sklearn"):
            raise ValueError("K semantics must be id3 or sklearn.")
        out["semantics"] = semantics
    if method in SAMPLED:
        most = limits.max_trees(MAX_TREES_UI)
        n = whole_number(trees, "number of trees", 1, most, None)
        if n is None:
            raise ValueError(f"Enter the number of trees (1 to {most:,}).")
        out["trees"] = n
        if isinstance(bootstrap, (list, tuple)):
            bootstrap = bool(bootstrap)
        out["bootstrap"] = DEFAULT_BOOTSTRAP[method] if bootstrap is None else bool(bootstrap)
        out["tree_seed"] = whole_number(tree_seed, "seed", 0, 2**32 - 1, 0)
    return out


def page_query(data: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """The page's URL query: the data query followed by the settings."""
    parts = [datasource.data_query(data), encode_query(dict(settings))]
    return "&".join(part for part in parts if part)


def field_classes(method: str | None) -> dict:
    """CSS classes of the method-dependent fields: hidden when they do not apply."""
    sampled = method in SAMPLED
    return {"sampled": "vi-sampled" if sampled else "vi-sampled vi-hidden",
            "semantics": "vi-hidden" if method in ("sklearn-rf", "sklearn-et") else ""}


# -- computing -----------------------------------------------------------------
def _core_kwargs(settings: Mapping[str, Any]) -> dict:
    kwargs = dict(method=settings["method"], max_features=settings["K"],
                  max_depth=settings.get("depth"), criterion="entropy")
    if "semantics" in settings:
        kwargs["k_semantics"] = settings["semantics"]
    if settings["method"] in SAMPLED:
        kwargs.update(n_estimators=settings["trees"], bootstrap=settings["bootstrap"],
                      random_state=settings["tree_seed"])
    return kwargs


def exact_settings_for(settings: Mapping[str, Any]) -> dict:
    """Settings of the exact reference drawn over a sampled method.

    Same K and depth; scikit-learn forests read K their own way, so their
    reference uses ``sklearn`` semantics.
    """
    semantics = settings.get("semantics", "sklearn")
    if settings["method"] in ("sklearn-rf", "sklearn-et"):
        semantics = "sklearn"
    return {"method": "exact", "K": settings["K"], "depth": settings.get("depth"),
            "semantics": semantics}


def make_loader(data: Mapping[str, Any], progress=None):
    """A zero-argument function loading the data once (on first call), for cache misses."""
    loaded: dict[str, Any] = {}

    def load():
        if "prepared" not in loaded:
            if progress is not None:
                progress(0, 1, "Loading the data\u2026")
            loaded["prepared"] = datasource.load_prepared(data)
        return loaded["prepared"]

    return load


class CacheMiss(Exception):
    """Raised by :func:`compute_view` with ``peek=True`` when something is not cached."""


def _miss(*_args, **_kwargs):
    raise CacheMiss


def cached_result(data: Mapping[str, Any], settings: Mapping[str, Any], load,
                  progress=None, *, peek: bool = False) -> ImportanceResult:
    """The result of ``settings`` on ``data`` from the shared cache, computed on a miss.

    ``load()`` returns the core's ``PreparedData`` (called only on a miss);
    other pages with the same data and settings share the entry.  With
    ``peek=True`` a miss raises :class:`CacheMiss` instead of computing.
    """
    key = cache.key_for("importances", data, dict(settings))
    if peek:
        stored = cache.get_json(key)
        if stored is None:
            raise CacheMiss
        return ImportanceResult.from_dict(stored)
    return cache.get_or_compute_result(
        key, lambda: compute_importances(load(), progress=progress, **_core_kwargs(settings)))


def compute_view(data: Mapping[str, Any], settings: Mapping[str, Any], *,
                 progress=None, peek: bool = False) -> dict:
    """Compute (or read from the cache) what the page shows.

    Parameters
    ----------
    data : mapping
        Data parameters (:mod:`pages._ui.datasource`).
    settings : mapping
        From :func:`settings_from_controls`.
    progress : callable, default=None
        ``progress(done, total, text)``, e.g. :class:`pages._ui.jobs.Progress`.
    peek : bool, default=False
        Only read the cache: raise :class:`CacheMiss` if anything must be
        computed (the page's request-time fast path for cache hits).

    Returns
    -------
    view : dict
        ``result`` (ImportanceResult), ``exact`` (the exact reference for a
        sampled method, or None), ``information`` (I(X;Y) in bits, or None),
        ``notes`` (sentences) and ``p``.

    Raises
    ------
    ValueError, DataError
        With a sentence (unknown table, too many inputs for the exact method ...).
    """
    data = datasource.canonical_params(data)
    say = progress or (lambda *a, **k: None)
    load = _miss if peek else make_loader(data, say)

    p = data_feature_count(data)
    if p is None:
        p = load().table.n_features
    if settings["K"] > p:
        raise ValueError(f"K must be a whole number from 1 to {p} (this data has {p} inputs), "
                         f"got {settings['K']}.")
    notes: list[str] = []
    exact = None
    method = settings["method"]
    most = limits.max_exact_features()
    if method == "exact" and p > most:
        raise ValueError(f"The exact method accepts at most {most} input variables on this "
                         f"server and this data has {p}; choose a sampled method.")
    if method == "exact":
        say(0, 1, "Computing the exact importances\u2026")
    result = cached_result(data, settings, load,
                           progress=(lambda done, total: say(done, total, f"{int(done):,} of "
                                                             f"{int(total):,} trees"))
                           if method in SAMPLED else None, peek=peek)
    if method != "exact":
        if p > most:
            notes.append(f"No exact values are drawn: the exact method handles at most "
                         f"{most} inputs and this data has {p}.")
        elif result.units != "bits":
            notes.append(f"No exact values are drawn: this forest measures {result.units} "
                         "while the exact values are in bits (entropy of the binned target).")
        else:
            say(1, 1, "Computing the exact values\u2026")
            try:
                exact = cached_result(data, exact_settings_for(settings), load, peek=peek)
            except ValueError as exc:
                notes.append(f"No exact values are drawn: {exc}")
    information = result.information
    if information is None and exact is not None:
        information = exact.information
    if information is None and result.units == "bits":
        key = cache.key_for("information", data)
        information = cache.get_json(key) if peek else None
        if information is None:
            information = cache.get_or_compute(key, lambda: joint_information(load().table))
    return {"result": result, "exact": exact, "information": information, "notes": notes,
            "p": p}


def cached_render(data: Mapping[str, Any], settings: Mapping[str, Any], *, progress=None,
                  peek: bool = False) -> dict:
    """:func:`render` of :func:`compute_view`, kept in the cache as JSON.

    Building the figures costs tens of milliseconds, reading them back about
    one: a cached control change is then answered within the request.  With
    ``peek=True`` nothing is computed (:class:`CacheMiss` on a miss).
    """
    from plotly.io.json import to_json_plotly

    data = datasource.canonical_params(data)
    key = cache.key_for("importances-view", data, dict(settings))
    stored = cache.get_json(key)
    if stored is not None:
        return stored
    out = render(compute_view(data, settings, progress=progress, peek=peek))
    out = json.loads(to_json_plotly(out))
    cache.put_json(key, out)
    return out


# -- what the page shows ---------------------------------------------------------
def theorem2_text(result: ImportanceResult, information: float | None = None) -> str:
    """The Theorem 2 check line, e.g. ``"sum = 3.3219 bits, I(X;Y) = 3.3219 bits ..."``."""
    units = result.units
    info = result.information if information is None else information
    head = f"sum = {result.total:.4f} {units}"
    if info is None or units != "bits":
        return head + "; Theorem 2 compares this sum with I(X;Y) in bits, which does not " \
                      "apply to these units."
    gap = result.total - float(info)
    text = f"{head}, I(X;Y) = {float(info):.4f} bits"
    depth = result.parameters.get("max_depth")
    if abs(gap) < 5e-5:
        return text + " \u2014 equal, as Theorem 2 says for fully grown trees."
    if depth is not None and gap < 0:
        return text + (f" \u2014 the sum is smaller: trees cut at depth {depth} do not use all "
                       f"the information (at K = 1, Proposition 6 keeps only the terms "
                       f"k < {depth} of Eqn 3).")
    if result.method in SAMPLED:
        return text + (f" \u2014 off by {gap:+.4f} bits: a finite forest (and the bootstrap, "
                       "when on) makes the sum differ.")
    return text + f" \u2014 off by {gap:+.4f} bits."


def exact_note(view: Mapping[str, Any]) -> str:
    """One sentence on what the bars and diamonds are."""
    result, exact = view["result"], view["exact"]
    sentences = [f"Bars: {method_label(result)}."]
    if result.importances_sem is not None:
        sentences.append("Error bars: one standard error of the mean over trees (per-tree "
                         "SD / \u221aT); boxes: the spread of the per-tree values (minimum, "
                         "quartiles, maximum).")
    if exact is not None:
        sentences.append(f"Black diamonds: the exact infinite-forest value for the same K and "
                         f"depth ({exact.parameters.get('k_semantics')} semantics).")
        if result.method in ("sklearn-rf", "sklearn-et"):
            sentences.append("scikit-learn grows binary trees on the raw values (and "
                             "bootstraps when asked), so its bars need not match the "
                             "multiway diamonds.")
    if result.method in ("eqn3", "exact") and not result.exact:
        sentences.append("The data is a sample: these are the exact values for its "
                         "empirical distribution (plug-in estimates).")
    return " ".join(sentences + list(view.get("notes", [])))


def table_columns(units: str = "bits", *, exact: bool = False, sampled: bool = False) -> list:
    """DataTable column specs (numbers with 4 decimals, in ``units``)."""
    num = Format(precision=4, scheme=Scheme.fixed)
    cols = [{"name": "Variable", "id": "variable"},
            {"name": f"Importance ({units})", "id": "importance", "type": "numeric",
             "format": num}]
    if sampled:
        cols += [{"name": "Std. error", "id": "sem", "type": "numeric", "format": num},
                 {"name": "Per-tree SD", "id": "std", "type": "numeric", "format": num}]
    cols.append({"name": "Share (normalised)", "id": "normalised", "type": "numeric",
                 "format": Format(precision=2, scheme=Scheme.percentage)})
    if exact:
        cols += [{"name": "Exact (bits)", "id": "exact", "type": "numeric", "format": num},
                 {"name": "Bar \u2212 exact", "id": "difference", "type": "numeric",
                  "format": Format(precision=4, scheme=Scheme.fixed, sign="+")}]
    return cols


def _number(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def table_rows(result: ImportanceResult, exact: ImportanceResult | None = None) -> list[dict]:
    """One row per variable, with the exact numbers of the result (not rounded)."""
    sem, std = result.importances_sem, result.importances_std
    rows = []
    for i, name in enumerate(result.variables):
        row = {"variable": name, "importance": _number(result.importances[i]),
               "normalised": _number(result.normalised[i])}
        if sem is not None:
            row["sem"], row["std"] = _number(sem[i]), _number(std[i])
        if exact is not None:
            row["exact"] = _number(exact.importances[i])
            row["difference"] = _number(result.importances[i] - exact.importances[i])
        rows.append(row)
    return rows




def csv_text(result: ImportanceResult, exact: ImportanceResult | None = None) -> str:
    """CSV of ``result.to_frame()`` (plus the exact column), safe to open in a spreadsheet."""
    df = result.to_frame()
    if exact is not None:
        df["exact_importance"] = exact.importances
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def csv_filename(data: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """``varimp-importances-<data>-<method>-K<k>.csv`` with only safe characters."""
    data = datasource.canonical_params(data)
    what = data.get("problem") if data["source"] == "problem" else (data.get("file") or "upload")
    what = re.sub(r"\.csv$", "", str(what), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{what}-{settings['method']}-K{settings['K']}")
    return f"varimp-importances-{slug.strip('-.')[:80]}.csv"


def render(view: Mapping[str, Any]) -> dict:
    """Figures, texts and table of a computed view.

    Returns
    -------
    out : dict
        ``figure``, ``theorem2_figure``, ``theorem2`` (text), ``note`` (text),
        ``columns`` and ``rows`` of the table.
    """
    result, exact = view["result"], view["exact"]
    info = view.get("information")
    shown = result
    if result.information is None and info is not None:
        shown = ImportanceResult(**{**result.__dict__, "information": info})
    figure = make_importance_figure(result, exact)
    figure.update_layout(height=None)  # the page sizes it (taller in presentation mode)
    return {
        "figure": figure,
        "theorem2_figure": make_theorem2_figure(shown),
        "theorem2": theorem2_text(result, info),
        "note": exact_note(view),
        "columns": table_columns(result.units, exact=exact is not None,
                                 sampled=result.importances_sem is not None),
        "rows": table_rows(result, exact),
    }

