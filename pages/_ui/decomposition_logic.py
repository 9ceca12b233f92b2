"""Logic behind the Decomposition page, as plain functions tests can call.

The page shows the importances of K=1 (Eqn 3) and of a chosen K split by the
degree k of the conditioning set (Figure 2 of Louppe et al. 2013), greys the
degrees a depth limit removes (Proposition 6), and lists the conditioning
sets B of a clicked cell with their weighted terms (level iii of Eqn 3).
Every number comes from the core through the shared cache.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.plots.decomposition import (make_degree_pair, make_terms_figure, pair_height,
                                             set_label)
from varimp_core.exact.eqn3 import conditional_terms

from . import cache, datasource, limits
from .datasource import data_feature_count, data_params_for_page
from .results import cached_importances, make_loader
from .state import whole_number
from .state import Param, choice_parser, encode_query, int_parser, parse_query

__all__ = [
    "PREFIX",
    "PARAMS",
    "MAX_TERM_ROWS",
    "initial_state",
    "settings_from_controls",
    "page_query",
    "figure_height",
    "cell_from_click",
    "compute_view",
    "render",
    "terms_view",
    "render_terms",
]

PREFIX = "decomp"
SEMANTICS_OPTIONS = [
    {"label": "id3: K of the unused variables", "value": "id3"},
    {"label": "sklearn: K of all p, constant ones skipped", "value": "sklearn"},
]
#: Rows of the terms table (the largest terms; the figure and sums use all of them).
MAX_TERM_ROWS = 500
_PANELS = ("K1", "K")

PARAMS: tuple[Param, ...] = (
    Param("K", None, int_parser(1, 10_000, what="K"), "K"),
    Param("depth", None, int_parser(1, 10_000, what="max depth"), "max depth"),
    Param("semantics", "id3", choice_parser(("id3", "sklearn"), what="K semantics"),
          "K semantics"),
    Param("var", None, lambda text: str(text)[:200], "variable"),
    Param("degree", None, int_parser(0, 10_000, what="degree"), "degree"),
    Param("panel", "K1", choice_parser(_PANELS, what="panel"), "panel"),
)


def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """What ``layout(**query)`` needs: data, control values, selected cell, notes.

    Returns
    -------
    state : dict
        ``data``, ``p``, ``values`` (``K``, ``depth``, ``semantics``),
        ``cell`` (``{"var", "degree", "panel"}`` or None), ``notes``, ``query``.
    """
    data, notes = data_params_for_page(query, vi_data)
    values, more = parse_query(query, PARAMS)
    notes += more
    p = data_feature_count(data, vi_data)
    if values["K"] is None:
        values["K"] = p or 1
    elif p is not None and values["K"] > p:
        notes.append(f"The link's K was ignored: this data has {p} inputs, so K must be "
                     f"from 1 to {p}. Using K = {p} instead.")
        values["K"] = p
    cell = None
    if values["var"] is not None and values["degree"] is not None:
        cell = {"var": values["var"], "degree": values["degree"], "panel": values["panel"]}
    settings = {"K": values["K"], "depth": values["depth"], "semantics": values["semantics"]}
    return {"data": data, "p": p, "values": settings, "cell": cell, "notes": notes,
            "query": page_query(data, settings, cell)}


def settings_from_controls(*, K, depth=None, semantics="id3", p: int | None = None) -> dict:
    """Canonical settings ``{"K", "depth", "semantics"}``; raises ValueError with a sentence."""
    k = whole_number(K, "K (variables drawn at each node)", 1, p, None)
    if k is None:
        raise ValueError("Enter K, the number of variables drawn at each node: a whole number "
                         + (f"from 1 to {p}." if p else "of at least 1."))
    if semantics not in ("id3", "sklearn"):
        raise ValueError("K semantics must be id3 or sklearn.")
    return {"K": k, "depth": whole_number(depth, "max depth", 1, None, None),
            "semantics": semantics}


def page_query(data: Mapping[str, Any], settings: Mapping[str, Any],
               cell: Mapping[str, Any] | None = None) -> str:
    """The page's URL query: data, settings and the selected cell."""
    values = dict(settings)
    if cell:
        values.update(var=cell["var"], degree=cell["degree"], panel=cell.get("panel", "K1"))
    parts = [datasource.data_query(data), encode_query(values)]
    return "&".join(part for part in parts if part)


def figure_height(p: int | None) -> int:
    """Pixels of the heatmap pair for p variables (7 when p is unknown)."""
    return pair_height(p or 7)


def cell_from_click(click_data: Mapping[str, Any] | None,
                    figure: Mapping[str, Any] | None) -> dict | None:
    """The cell ``{"var", "degree", "panel"}`` of a heatmap click, or None.

    Parameters
    ----------
    click_data : dict or None
        ``dcc.Graph.clickData``.
    figure : dict or None
        The figure clicked (as the browser holds it), from
        :func:`varimp_core.plots.decomposition.make_degree_pair`: the
        variables are its first trace's ``y``, and a trace on the second
        x axis belongs to the right panel (``"K"``).
    """
    traces = (figure or {}).get("data") or []
    try:
        point = click_data["points"][0]
        var, degree = str(point["y"]), int(point["x"])
        trace = traces[int(point.get("curveNumber", 0))]
        variables = list(traces[0]["y"])
    except (TypeError, KeyError, IndexError, ValueError):
        return None
    panel = "K" if trace.get("xaxis") == "x2" else "K1"
    if var not in variables or not 0 <= degree < len(variables):
        return None
    return {"var": var, "degree": degree, "panel": panel}


# -- computing -------------------------------------------------------------------
def _exact(K: int, depth, semantics: str) -> dict:
    return {"method": "exact", "K": K, "depth": depth, "semantics": semantics}


def compute_view(data: Mapping[str, Any], settings: Mapping[str, Any], *,
                 progress=None) -> dict:
    """Exact results for K=1 and the chosen K, fully grown and at the depth limit.

    Returns
    -------
    view : dict
        ``k1`` and ``k`` (fully grown, ImportanceResult), ``k1_depth`` and
        ``k_depth`` (at the depth limit, or None without one), ``p``.

    Raises
    ------
    ValueError
        With a sentence: too many inputs for the exact method, K above p ...
    """
    data = datasource.canonical_params(data)
    say = progress or (lambda *a, **k: None)
    load = make_loader(data, say)
    p = data_feature_count(data)
    if p is None:
        p = load().table.n_features
    most = limits.max_exact_features()
    if p > most:
        raise ValueError(f"The decomposition is computed exactly, which handles at most "
                         f"{most} inputs on this server; this data has {p}. Choose data with "
                         "fewer inputs on the Data page.")
    K, depth, sem = settings["K"], settings.get("depth"), settings.get("semantics", "id3")
    if K > p:
        raise ValueError(f"K must be a whole number from 1 to {p} (this data has {p} inputs), "
                         f"got {K}.")
    runs = [("k1", _exact(1, None, "id3")), ("k", _exact(K, None, sem))]
    if depth is not None:
        runs += [("k1_depth", _exact(1, depth, "id3")), ("k_depth", _exact(K, depth, sem))]
    view: dict[str, Any] = {"p": p, "k1_depth": None, "k_depth": None}
    for i, (name, s) in enumerate(runs):
        say(i, len(runs), f"Exact importances, K = {s['K']}"
                          + (f", depth {s['depth']}" if s["depth"] else "") + "\u2026")
        view[name] = cached_importances(data, {
            "method": "exact", "max_features": s["K"], "max_depth": s["depth"],
            "k_semantics": s["semantics"], "criterion": "entropy"}, load)
    say(len(runs), len(runs), "")
    return view


def _totals(view: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[list, list]:
    K, depth = settings["K"], settings.get("depth")
    num = Format(precision=4, scheme=Scheme.fixed)
    cols = [{"name": "Variable", "id": "variable"},
            {"name": "K = 1 (bits)", "id": "k1", "type": "numeric", "format": num}]
    pairs = [("k1", view["k1"])]
    if depth is not None:
        cols.append({"name": f"K = 1, depth {depth}", "id": "k1_depth", "type": "numeric",
                     "format": num})
        pairs.append(("k1_depth", view["k1_depth"]))
    cols.append({"name": f"K = {K} (bits)", "id": "k", "type": "numeric", "format": num})
    pairs.append(("k", view["k"]))
    if depth is not None:
        cols.append({"name": f"K = {K}, depth {depth}", "id": "k_depth", "type": "numeric",
                     "format": num})
        pairs.append(("k_depth", view["k_depth"]))
    rows = [{"variable": name, **{key: float(r.importances[i]) for key, r in pairs}}
            for i, name in enumerate(view["k1"].variables)]
    rows.append({"variable": "Sum", **{key: r.total for key, r in pairs}})
    return cols, rows


def render(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """Figure (and its height in pixels), totals table and summary sentence of a view."""
    depth = settings.get("depth")
    k1, k = view["k1"], view["k"]
    cols, rows = _totals(view, settings)
    info = k1.information
    parts = [f"Sums: K = 1 {k1.total:.4f} bits, K = {settings['K']} {k.total:.4f} bits"]
    if info is not None:
        parts.append(f"I(X;Y) = {info:.4f} bits (Theorem 2)")
    if depth is not None and depth < view["p"]:
        parts.append(f"at depth {depth} only the degrees k < {depth} count (Proposition 6): "
                     f"K = 1 {view['k1_depth'].total:.4f} bits, K = {settings['K']} "
                     f"{view['k_depth'].total:.4f} bits")
    summary = "; ".join(parts) + "."
    if not k1.exact:
        summary += (" The data is a sample: these are exact values for its empirical "
                    "distribution (plug-in estimates).")
    figure = make_degree_pair(k1, k, max_depth=depth)
    height = figure.layout.height
    figure.update_layout(height=None)  # the page sizes it (taller in presentation mode)
    return {"figure": figure, "height": height, "columns": cols, "rows": rows,
            "summary": summary}


def terms_view(data: Mapping[str, Any], settings: Mapping[str, Any],
               cell: Mapping[str, Any], *, progress=None) -> dict:
    """The level-iii terms of one cell, with the sentence that explains them.

    Parameters
    ----------
    data, settings : mapping
    cell : mapping
        ``{"var", "degree", "panel"}``.
    progress : callable, default=None

    Returns
    -------
    out : dict
        ``terms`` (DataFrame of :func:`varimp_core.theory.conditional_terms`),
        ``note`` (str), ``variables``, ``cell_k1`` and ``cell_k`` (the
        by-degree values of the clicked cell at K=1 and at the chosen K).
    """
    data = datasource.canonical_params(data)
    view = compute_view(data, settings, progress=progress)
    variables = list(view["k1"].variables)
    var, degree = cell["var"], int(cell["degree"])
    if var not in variables or not 0 <= degree < len(variables):
        raise ValueError(f"The selected cell ({var}, k = {degree}) is not in this data; "
                         "click a cell of the heatmap.")
    m = variables.index(var)
    load = make_loader(data, progress)
    key = cache.key_for("eqn3-terms", data, var, degree)

    def compute():
        df = conditional_terms(load().table, var, degree)
        return {c: df[c].tolist() for c in df.columns}

    if progress is not None:
        progress(0, 1, f"Terms of {var} at k = {degree}\u2026")
    terms = pd.DataFrame(cache.get_or_compute(key, compute))
    p, K, depth = len(variables), settings["K"], settings.get("depth")
    cell_k1 = float(view["k1"].by_degree[m, degree])
    cell_k = float(view["k"].by_degree[m, degree])
    n_sets = math.comb(p - 1, degree)
    weight = f"1/(C({p},{degree})\u00b7{p - degree}) = 1/{math.comb(p, degree) * (p - degree):,}"
    sentences = [f"Level iii of Eqn 3 for {var} at k = {degree}: the {n_sets:,} conditioning "
                 f"sets B of size {degree} without {var}, each I({var}; Y | B) weighted by "
                 f"{weight}. They add up to the K = 1 cell, {cell_k1:.4f} bits."]
    if cell.get("panel") == "K" and K > 1:
        sentences.insert(0, f"At K = {K} masking decides which nodes a tree reaches, so the "
                            f"cell ({cell_k:.4f} bits) is not a weighted sum over all sets B "
                            "and its level-iii split is not defined. Shown instead: the K = 1 "
                            "terms of the same cell.")
    if depth is not None and degree >= depth:
        sentences.append(f"Depth {depth} removes this degree (Proposition 6: only k < {depth} "
                         "counts), so these terms are not part of the importance at that depth.")
    return {"terms": terms, "note": " ".join(sentences), "variables": variables,
            "cell_k1": cell_k1, "cell_k": cell_k}


def render_terms(out: Mapping[str, Any]) -> dict:
    """Figure and table rows of :func:`terms_view`'s output."""
    terms = out["terms"]
    order = terms.sort_values("term", ascending=False, kind="stable")
    shown = order.iloc[:MAX_TERM_ROWS]
    rows = [{"B": set_label(b), "size": int(d), "cmi": float(c), "weight": float(w),
             "term": float(t)}
            for b, d, c, w, t in zip(shown["conditioning"], shown["degree"], shown["cmi"],
                                     shown["weight"], shown["term"])]
    num = Format(precision=6, scheme=Scheme.fixed)
    var = out["terms"]["variable"].iloc[0] if len(terms) else ""
    cols = [{"name": "Conditioning set B", "id": "B"},
            {"name": "|B|", "id": "size", "type": "numeric"},
            {"name": f"I({var}; Y | B) (bits)", "id": "cmi", "type": "numeric", "format": num},
            {"name": "Weight", "id": "weight", "type": "numeric",
             "format": Format(precision=6, scheme=Scheme.decimal_or_exponent)},
            {"name": "Term (bits)", "id": "term", "type": "numeric", "format": num}]
    note = out["note"]
    if len(terms) > MAX_TERM_ROWS:
        note += f" The table lists the {MAX_TERM_ROWS} largest of {len(terms):,} terms."
    return {"figure": make_terms_figure(terms, variables=out["variables"]), "columns": cols,
            "rows": rows, "note": note}
