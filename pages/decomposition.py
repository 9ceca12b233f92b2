"""Decomposition page: importances along the degree k (Figure 2), terms of a clicked cell.

What the Decomposition page shows: the heatmap pair, the totals, the terms of a cell, and
their CSV downloads.  Every figure comes from :mod:`varimp_core.plots.decomposition`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import dash
import pandas as pd
from dash import Input, Output, State, callback, dcc, html, no_update

from pages._framework import controls as ui
from pages._framework import datasource, results, state
from pages._framework.common import placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.grid import grid, grid_table, number_format
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                         scroll_style)
from pages._framework.params import Context, Param, ParamSet
from pages._framework.view import JobView, context_for
from pages._server import cache, jobs, limits
from varimp_core.csvtext import csv_filename, safe_csv
from varimp_core.exact.eqn3 import conditional_terms
from varimp_core.plots.decomposition import (make_degree_pair, make_terms_figure, pair_height,
                                             pair_min_width, set_label)
from varimp_core.plots.style import unescape_text
from varimp_core.result import ImportanceResult
from varimp_core.serialize import from_jsonable, to_jsonable

dash.register_page(__name__, path="/decomposition", name="Decomposition", order=2,
                   title="varimp \u2014 Decomposition", exact_inputs="any")

PREFIX = "decomp"

PARAMS = ParamSet(PREFIX, [
    Param("max_features", "K (right heatmap)", default=None, key="K", low=1,
          high=lambda c: c.p or 10_000, what="K",
          help=lambda c: "Variables drawn at each node"
          + (f", 1 to {c.p}; K = {c.p} gives non-random trees." if c.p else ".")),
    Param("max_depth", "Max depth q", default=None, key="depth", low=1, blank="full",
          help="Blank grows the trees fully. A depth q keeps the degrees k < q "
               "(Proposition 6); the others are greyed."),
    Param("k_semantics", "K semantics", "choice", "id3", key="semantics",
          choices=ui.SEMANTICS_CHOICES),
])
#: The clicked cell: in the URL only (a click on a heatmap sets it).
CELL = ParamSet(PREFIX, [
    Param("var", "Variable", "text", what="the cell's variable"),
    Param("degree", "Degree", default=None, low=0, what="the cell's degree"),
    Param("panel", "Panel", "choice", "K1", choices=[("K1", "K = 1"), ("K", "chosen K")]),
])


def too_many_inputs(p: int | None) -> str | None:
    """The sentence shown instead of the figures when p exceeds the exact limit, else None."""
    most = limits.max_exact_features()
    if p is None or p <= most:
        return None
    return (f"The decomposition is computed exactly, which handles at most {most} inputs on "
            f"this server; this data has {p}. Choose data with fewer inputs on the Data page "
            "(a built-in problem, or an upload with some columns excluded).")


def compute(settings, data: DataChoice, progress, cell=None) -> dict:
    """Exact results at K = 1 and K, fully grown and at the depth, and the cell's terms."""
    load = results.make_loader(data.as_dict, progress)
    p = data.n_features()
    p = load().table.n_features if p is None else p
    too_many = too_many_inputs(p)
    if too_many:
        raise ValueError(too_many)
    K, depth, sem = settings["max_features"], settings["max_depth"], settings["k_semantics"]
    runs = {"k1": (1, None, "id3"), "k": (K, None, sem)}
    if depth is not None:
        runs.update(k1_depth=(1, depth, "id3"), k_depth=(K, depth, sem))
    out = {"p": p, "k1_depth": None, "k_depth": None, "cell": None, "terms": None,
           "terms_error": ""}
    for i, (name, (k, d, s)) in enumerate(runs.items()):
        progress(i, len(runs), f"Exact importances, K = {k}"
                 + (f", depth {d}" if d else "") + "\u2026")
        kwargs = results.exact_reference({"method": "exact", "max_features": k,  # as the
                                          "max_depth": d, "k_semantics": s})  # Importances page
        out[name] = results.cached_importances(data, kwargs, load)  # a shared part
    progress(len(runs), len(runs), "")
    if cell:
        try:
            out["cell"] = CELL.settings(cell if isinstance(cell, dict) else {}, Context(p=p))
            out["terms"] = cell_terms(data, load, out["k1"].variables, out["cell"], progress)
        except ValueError as exc:  # a sentence beside the terms; the heatmaps still show
            out["cell"], out["terms_error"] = None, jobs.error_message(exc)
    return out


def cell_terms(data: DataChoice, load, variables, cell, progress) -> dict:
    """Level iii of Eqn 3 for the cell: every conditioning set B, cached per data and cell."""
    var, degree = cell["var"], cell["degree"]
    if var not in variables or not 0 <= degree < len(variables):
        raise ValueError(f"The selected cell ({var}, k = {degree}) is not in this data; "
                         "click a cell of the heatmap.")
    progress(0, 1, f"Terms of {var} at k = {degree}\u2026")

    return cache.get_or_compute(cache.key_for("eqn3-terms-frame", data.as_dict, var, degree),
                                lambda: to_jsonable(conditional_terms(load().table, var, degree)))


MAX_TERM_ROWS = 500
#: Said instead of the heatmaps when a result has no ``by_degree`` (the core returns None
#: for scikit-learn semantics at K = 1 beyond the exact recursion's size budget).
NO_SPLIT = ("The split by degree k is not available for these settings (scikit-learn's K "
            "semantics at K = 1 on this many inputs is beyond the exact recursion), so only "
            "the importances are shown, in the Totals table.")
RESULTS = ("k1", "k", "k1_depth", "k_depth")
_NUM = number_format("fixed4")


def view_from_dict(out: Mapping[str, Any]) -> dict:
    """The page's result with its core results: the objects ``compute`` returned (or
    JobView decoded) as they are, a ``to_dict()`` (a result kept before them) rebuilt."""
    view = dict(out)
    for name in RESULTS:
        value = out.get(name)
        view[name] = value if value is None or isinstance(value, ImportanceResult) \
            else ImportanceResult.from_dict(value)
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
    num = number_format("fixed6")
    var = view["cell"]["var"]
    cols = [{"name": "Conditioning set B", "id": "B"},
            {"name": "|B|", "id": "size", "type": "numeric"},
            {"name": f"I({var}; Y | B) (bits)", "id": "cmi", "type": "numeric", "format": num},
            {"name": "Weight", "id": "weight", "type": "numeric",
             "format": number_format("sig6")},
            {"name": "Term (bits)", "id": "term", "type": "numeric", "format": num}]
    note = _terms_note(view, settings)
    if len(terms) > MAX_TERM_ROWS:
        note += f" The table lists the {MAX_TERM_ROWS} largest of {len(terms):,} terms."
    return {"figure": make_terms_figure(terms, variables=list(view["k1"].variables)),
            "columns": cols, "rows": rows, "note": note}


def render_view(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """Heatmap pair (its height and least width in pixels), totals, summary and the cell's terms.

    Without a split by degree (a ``by_degree`` of None) the figure is None and the
    summary starts with :data:`NO_SPLIT`.
    """
    cols, rows = _totals(view, settings)
    out = {"figure": None, "height": None, "min_width": None, "columns": cols, "rows": rows,
           "summary": _summary(view, settings), "terms": render_terms(view, settings)}
    if view["k1"].by_degree is None or view["k"].by_degree is None:
        return {**out, "summary": f"{NO_SPLIT} {out['summary']}"}
    figure = make_degree_pair(view["k1"], view["k"], max_depth=settings.get("max_depth"))
    out["height"] = figure.layout.height
    out["min_width"] = pair_min_width(view["k1"].n_features)
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


def instant(settings, data: DataChoice, cell=None) -> dict | None:
    """Too many inputs: the sentence, at once and without a job (the layout shows it)."""
    sentence_ = too_many_inputs(data.n_features())
    return {"too_many": sentence_} if sentence_ else None


def quick(settings, data: DataChoice, cell=None) -> bool:
    """A built-in problem's exact distribution of a few inputs: computed in the request
    (0.01 to 0.12 s for the Home demos), its figure drawn without a job's start and polls."""
    return not data.is_sample and datasource.quick_exact(data["problem"])


def render(out, settings, data, cell=None):
    if out.get("too_many"):
        return (placeholder_figure(""), {"display": "none"}, [], [], out["too_many"], None,
                [], [], "", "", "vi-hidden", {})
    r = render_view(view_from_dict(out), settings)
    terms = r["terms"]
    graph = None if terms["figure"] is None else dcc.Graph(
        id="decomp-terms-graph", figure=terms["figure"], className="vi-figure",
        config=figure_config("decomposition-terms"))
    figure, shown = r["figure"], {"height": f"{r['height']}px"}
    if figure is None:  # no split by degree: the summary says why
        figure, shown = placeholder_figure(""), {"display": "none"}
    return (figure, shown, *grid_table(r["columns"], r["rows"]), r["summary"],
            graph, *grid_table(terms["columns"], terms["rows"]), terms["note"], out["terms_error"],
            "vi-error" if out["terms_error"] else "vi-hidden", scroll_style(r["min_width"]))


def url(settings, data: DataChoice, cell=None) -> str:
    """The page's URL query: data, settings and the selected cell."""
    parts = (data.query(), PARAMS.query(settings), CELL.query(cell or {}))
    return "&".join(q for q in parts if q)


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store="decomp-data",
               namespace="decomposition",  # its terms: to_jsonable, not the old lists
               extra=[("cell", Input("decomp-cell", "data"))],
               outputs=[("decomp-graph", "figure"), ("decomp-graph", "style"),
                        ("decomp-totals", "columnDefs"), ("decomp-totals", "rowData"),
                        ("decomp-summary", "children"), ("decomp-terms-figure", "children"),
                        ("decomp-terms-table", "columnDefs"), ("decomp-terms-table", "rowData"),
                        ("decomp-terms-note", "children"), ("decomp-terms-error", "children"),
                        ("decomp-terms-error", "className"), ("decomp-graph-scroll", "style")],
               query_store="decomp-query", url=url, disable=["decomp-fieldset"],
               instant=instant, quick=quick,
               what="The heatmaps")
VIEW.register()
VIEW.register_downloads(CSV)
state.register_url_sync(PREFIX)


def initial_values(query, ctx: Context) -> tuple[dict, dict | None, list[str]]:
    """Control values (K = p unless the link says), the link's cell, and notes."""
    values, notes = PARAMS.from_url(query, ctx)
    if values["max_features"] is None:
        values["max_features"] = ctx.p or 1
    cell, more = CELL.from_url(query, ctx)
    if cell["var"] is None or cell["degree"] is None:
        cell = None
    return values, cell, notes + more


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    ctx = context_for(data)
    values, cell, more = initial_values(query, ctx)
    settings = html.Fieldset(id="decomp-fieldset", className="vi-fieldset", children=[
        ui.card("Trees", *PARAMS.fields(values, ctx))])
    too_many = too_many_inputs(ctx.p)
    return page_frame(
        PREFIX, title="Decomposition", notes=notes + more, data=data, query=data.query(),
        download=True,
        lead="Each importance split by the degree k of interaction: the size of the "
             "conditioning set B (Figure 2 of Louppe et al. 2013). Left: totally randomized "
             "trees (K = 1), where every term of Eqn 3 counts with its weight. Right: the "
             "chosen K, where masking moves importance between cells. Both use one colour "
             "scale, in bits. Click a cell to list its conditioning sets.",
        stores=[dcc.Store(id="decomp-cell", data=cell), *VIEW.stores()],
        controls=settings, status=[*VIEW.status(), download_note(PREFIX)],
        content=[
            html.P(too_many or "", id="decomp-too-many",
                   className="vi-notes" if too_many else "vi-hidden"),
            # more inputs than the exact computation handles: no empty axes, no downloads
            html.Div(id="decomp-results", className="vi-hidden" if too_many else "", children=[
            ui.card("By degree k",
                    html.Div(dcc.Graph(id="decomp-graph", config=figure_config("decomposition"),
                                       className="vi-figure",
                                       style={"height": f"{pair_height(ctx.p or 7)}px"}),
                             id="decomp-graph-scroll", className="vi-figure-scroll",
                             style=scroll_style(pair_min_width(ctx.p or 7))),
                    html.P(id="decomp-summary", className="vi-help"),
                    download_button(PREFIX, "Download the heatmaps' values (CSV)", "degrees")),
            ui.card("Totals",
                    grid("decomp-totals"), download_button(PREFIX, "Download the totals (CSV)", "totals")),
            ui.card("Terms of the selected cell",
                    html.Div(id="decomp-terms-error", className="vi-hidden"),
                    html.P("Click a cell of a heatmap to list its conditioning sets B.",
                           id="decomp-terms-note", className="vi-help"),
                    html.Div(id="decomp-terms-figure"),
                    grid("decomp-terms-table", page_size=15), download_button(PREFIX, "Download every term (CSV)", "terms")),
            ])])


def cell_from_click(click_data, figure) -> dict | None:
    """The cell ``{"var", "degree", "panel"}`` of a heatmap click, or None.

    The variables are the first trace's ``y`` of the figure (as the browser holds it),
    names written as text (:func:`~varimp_core.plots.style.unescape_text` reads them back);
    a trace on the second x axis belongs to the right panel (``"K"``).
    """
    traces = (figure or {}).get("data") or []
    try:
        point = click_data["points"][0]
        var, degree = unescape_text(str(point["y"])), int(point["x"])
        trace = traces[int(point.get("curveNumber", 0))]
        variables = [unescape_text(str(v)) for v in traces[0]["y"]]
    except (TypeError, KeyError, IndexError, ValueError):
        return None
    if var not in variables or not 0 <= degree < len(variables):
        return None
    return {"var": var, "degree": degree, "panel": "K" if trace.get("xaxis") == "x2" else "K1"}


@callback(Output("decomp-cell", "data"), Input("decomp-graph", "clickData"),
          State("decomp-graph", "figure"), prevent_initial_call=True)
def select_cell(click, figure):
    cell = cell_from_click(click, figure)
    return cell if cell is not None else no_update
