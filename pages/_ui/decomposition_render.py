"""What the Decomposition page shows: the heatmap pair, the totals, the terms of a cell.

Every figure comes from :mod:`varimp_core.plots.decomposition`.  The
Decomposition page (:mod:`pages.decomposition`) is its only user.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.plots.decomposition import make_degree_pair, make_terms_figure, set_label
from varimp_core.result import ImportanceResult

__all__ = ["MAX_TERM_ROWS", "NO_SPLIT", "view_from_dict", "render", "render_terms"]

#: Rows of the terms table (the largest terms; the figure and sums use all of them).
MAX_TERM_ROWS = 500
#: Said instead of the heatmaps when a result has no ``by_degree`` (the core returns None
#: for scikit-learn semantics at K = 1 beyond the exact recursion's size budget).
NO_SPLIT = ("The split by degree k is not available for these settings (scikit-learn's K "
            "semantics at K = 1 on this many inputs is beyond the exact recursion), so only "
            "the importances are shown, in the Totals table.")
RESULTS = ("k1", "k", "k1_depth", "k_depth")
_NUM = Format(precision=4, scheme=Scheme.fixed)


def view_from_dict(out: Mapping[str, Any]) -> dict:
    """The page's cached result with its core results rebuilt by the core's ``from_dict``."""
    view = dict(out)
    for name in RESULTS:
        view[name] = None if out.get(name) is None else ImportanceResult.from_dict(out[name])
    view["terms"] = None if out.get("terms") is None else pd.DataFrame(out["terms"])
    return view


def _totals(view: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[list, list]:
    K, depth = settings["max_features"], settings.get("max_depth")
    heads = {"k1": "K = 1 (bits)", "k1_depth": f"K = 1, depth {depth}",
             "k": f"K = {K} (bits)", "k_depth": f"K = {K}, depth {depth}"}
    shown = [n for n in ("k1", "k1_depth", "k", "k_depth") if view[n] is not None]
    cols = [{"name": "Variable", "id": "variable"}] + [
        {"name": heads[n], "id": n, "type": "numeric", "format": _NUM} for n in shown]
    rows = [{"variable": name, **{n: float(view[n].importances[i]) for n in shown}}
            for i, name in enumerate(view["k1"].variables)]
    rows.append({"variable": "Sum", **{n: view[n].total for n in shown}})
    return cols, rows


def _summary(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    K, depth = settings["max_features"], settings.get("max_depth")
    k1, k = view["k1"], view["k"]
    parts = [f"Sums: K = 1 {k1.total:.4f} bits, K = {K} {k.total:.4f} bits"]
    if k1.information is not None:
        parts.append(f"I(X;Y) = {k1.information:.4f} bits (Theorem 2)")
    if depth is not None and depth < view["p"]:
        parts.append(f"at depth {depth} only the degrees k < {depth} count (Proposition 6): "
                     f"K = 1 {view['k1_depth'].total:.4f} bits, K = {K} "
                     f"{view['k_depth'].total:.4f} bits")
    summary = "; ".join(parts) + "."
    if not k1.exact:
        summary += (" The data is a sample: these are exact values for its empirical "
                    "distribution (plug-in estimates).")
    return summary


def _terms_note(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What the terms of the selected cell are (level iii of Eqn 3), and when they apply."""
    cell, variables = view["cell"], list(view["k1"].variables)
    var, degree, p = cell["var"], cell["degree"], len(variables)
    K, depth = settings["max_features"], settings.get("max_depth")
    m = variables.index(var)
    cell_k1 = view["k1"].by_degree[m, degree]
    weight = f"1/(C({p},{degree})\u00b7{p - degree}) = 1/{math.comb(p, degree) * (p - degree):,}"
    sentences = [f"Level iii of Eqn 3 for {var} at k = {degree}: the "
                 f"{math.comb(p - 1, degree):,} conditioning sets B of size {degree} without "
                 f"{var}, each I({var}; Y | B) weighted by {weight}. They add up to the K = 1 "
                 f"cell, {cell_k1:.4f} bits."]
    if cell["panel"] == "K" and K > 1:
        cell_k = view["k"].by_degree[m, degree]
        sentences.insert(0, f"At K = {K} masking decides which nodes a tree reaches, so the "
                            f"cell ({cell_k:.4f} bits) is not a weighted sum over all sets B "
                            "and its level-iii split is not defined. Shown instead: the K = 1 "
                            "terms of the same cell.")
    if depth is not None and degree >= depth:
        sentences.append(f"Depth {depth} removes this degree (Proposition 6: only k < {depth} "
                         "counts), so these terms are not part of the importance at that depth.")
    return " ".join(sentences)


def render_terms(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """Figure, table and note of the selected cell's terms (none without a cell)."""
    terms = view["terms"]
    if terms is None:
        return {"figure": None, "columns": [], "rows": [],
                "note": "Click a cell of a heatmap to list its conditioning sets B."}
    shown = terms.sort_values("term", ascending=False, kind="stable").iloc[:MAX_TERM_ROWS]
    rows = [{"B": set_label(b), "size": int(d), "cmi": float(c), "weight": float(w),
             "term": float(t)}
            for b, d, c, w, t in zip(shown["conditioning"], shown["degree"], shown["cmi"],
                                     shown["weight"], shown["term"])]
    num = Format(precision=6, scheme=Scheme.fixed)
    var = view["cell"]["var"]
    cols = [{"name": "Conditioning set B", "id": "B"},
            {"name": "|B|", "id": "size", "type": "numeric"},
            {"name": f"I({var}; Y | B) (bits)", "id": "cmi", "type": "numeric", "format": num},
            {"name": "Weight", "id": "weight", "type": "numeric",
             "format": Format(precision=6, scheme=Scheme.decimal_or_exponent)},
            {"name": "Term (bits)", "id": "term", "type": "numeric", "format": num}]
    note = _terms_note(view, settings)
    if len(terms) > MAX_TERM_ROWS:
        note += f" The table lists the {MAX_TERM_ROWS} largest of {len(terms):,} terms."
    return {"figure": make_terms_figure(terms, variables=list(view["k1"].variables)),
            "columns": cols, "rows": rows, "note": note}


def render(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """Heatmap pair (and its height in pixels), totals, summary and the cell's terms.

    Without a split by degree (a ``by_degree`` of None) the figure is None and the
    summary starts with :data:`NO_SPLIT`.
    """
    cols, rows = _totals(view, settings)
    out = {"figure": None, "height": None, "columns": cols, "rows": rows,
           "summary": _summary(view, settings), "terms": render_terms(view, settings)}
    if view["k1"].by_degree is None or view["k"].by_degree is None:
        return {**out, "summary": f"{NO_SPLIT} {out['summary']}"}
    figure = make_degree_pair(view["k1"], view["k"], max_depth=settings.get("max_depth"))
    out["height"] = figure.layout.height
    figure.update_layout(height=None)  # the page sizes it (taller in presentation mode)
    return {**out, "figure": figure}
