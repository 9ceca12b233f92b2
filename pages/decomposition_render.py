"""What the Decomposition page shows: the heatmap pair, the totals, the terms of a cell, and
their CSV downloads.

Every figure comes from :mod:`varimp_core.plots.decomposition`.  The
Decomposition page (:mod:`pages.decomposition`) is its only user.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.csvtext import csv_filename, safe_csv
from varimp_core.plots.decomposition import make_degree_pair, make_terms_figure, set_label
from varimp_core.result import ImportanceResult
from varimp_core.serialize import from_jsonable



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
    view["terms"] = from_jsonable(out.get("terms"))
    return view


def _heads(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """The shown results' names: ``{"k1": "K = 1 (bits)", ...}``."""
    K, depth = settings["max_features"], settings.get("max_depth")
    heads = {"k1": "K = 1 (bits)", "k1_depth": f"K = 1, depth {depth}",
             "k": f"K = {K} (bits)", "k_depth": f"K = {K}, depth {depth}"}
    if K == 1:  # the right panel: scikit-learn's semantics
        heads.update(k="K = 1, scikit-learn (bits)", k_depth=f"K = 1, scikit-learn, depth {depth}")
    return {n: heads[n] for n in ("k1", "k1_depth", "k", "k_depth") if view[n] is not None
            and not (_same(settings) and n in ("k", "k_depth"))}


def _same(settings) -> bool:
    """Whether both panels are the same trees (K = 1, id3): then one sum, one column."""
    return settings["max_features"] == 1 and settings.get("k_semantics", "id3") == "id3"


def _totals(view: Mapping[str, Any], settings: Mapping[str, Any]) -> tuple[list, list]:
    heads = _heads(view, settings)
    shown = list(heads)
    cols = [{"name": "Variable", "id": "variable"}] + [
        {"name": heads[n], "id": n, "type": "numeric", "format": _NUM} for n in shown]
    rows = [{"variable": name, **{n: float(view[n].importances[i]) for n in shown}}
            for i, name in enumerate(view["k1"].variables)]
    rows.append({"variable": "Sum", **{n: view[n].total for n in shown}})
    return cols, rows


def _summary(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    K, depth = settings["max_features"], settings.get("max_depth")

    def sums(k1, k) -> str:
        return f"K = 1 {k1.total:.4f} bits" + (
            "" if _same(settings) else f", K = {K} {k.total:.4f} bits")
    parts = [("Sum: " if _same(settings) else "Sums: ") + sums(view["k1"], view["k"])]
    if view["k1"].information is not None:
        parts.append(f"I(X;Y) = {view['k1'].information:.4f} bits (Theorem 2)")
    if depth is not None and depth < view["p"]:
        parts.append(f"at depth {depth} only the degrees k < {depth} count (Proposition 6): "
                     + sums(view["k1_depth"], view["k_depth"]))
    summary = "; ".join(parts) + "."
    if not view["k1"].exact:
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


def _csv(kind: str):
    """``make(result, settings, data, cell=None) -> (text, filename)`` of one download."""
    def make(out, settings, data, cell=None):
        view, name = view_from_dict(out), f"K{settings['max_features']}" + (
            f"-depth{settings['max_depth']}" if settings.get("max_depth") else "")
        if kind == "degrees":
            df = pd.concat([view[n].to_frame().drop(columns="importance_std").assign(
                trees=h.replace(" (bits)", "")) for n, h in _heads(view, settings).items()])
            df = df[["trees", *df.columns[:-1]]]
        elif kind == "totals":
            df = pd.DataFrame(_totals(view, settings)[1])
            df.columns = ["variable", *_heads(view, settings).values()]
        elif view["terms"] is None:
            raise ValueError("Click a cell of a heatmap first: its terms are what this "
                             "button downloads.")
        else:
            df = view["terms"].assign(conditioning=view["terms"]["conditioning"].map(set_label))
            name += f"-{view['cell']['var']}-degree{view['cell']['degree']}"
        return safe_csv(df), csv_filename("decomposition", data.as_dict, name, kind)
    return make


#: The page's downloads, by button id (``JobView.register_downloads``).
CSV = {f"decomp-download-{kind}": _csv(kind) for kind in ("degrees", "totals", "terms")}
