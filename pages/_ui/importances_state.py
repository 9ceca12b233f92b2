"""State of the Importances page: URL parameters, data choice and control values.

The constants and choices of the page, its URL parameters (:data:`PARAMS`),
the data choice shared with the other pages (:func:`data_params_for_page`,
:func:`data_feature_count`) and the canonical settings built from the
controls (:func:`settings_from_controls`).  :mod:`pages._ui.importances_logic`
re-exports all of them.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from varimp_core.api import METHODS
from varimp_core.forests.multiway import MAX_TREES
from varimp_core.problems.registry import get_problem

from . import datasource, limits
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
def whole_number(value, what: str, low: int, high: int | None, default=None, *,
                 grouped: bool = True):
    """A whole number from a control, or ``default`` when blank.

    ``grouped=False`` writes the range without thousands separators
    ("from 1 to 2000" rather than "from 1 to 2,000").

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
    fmt = "," if grouped else ""
    limit = (f"from {low:{fmt}} to {high:{fmt}}" if high is not None
             else f"of at least {low:{fmt}}")
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
