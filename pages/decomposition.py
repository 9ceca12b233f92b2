"""Decomposition page: importances along the degree k (Figure 2), terms of a clicked cell."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update

from pages._server import cache, jobs, limits

from pages._framework import results, state
from pages._framework import controls as ui
from pages import decomposition_render as draw
from pages._framework.common import placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                  table_style)
from pages._framework.params import Context, Param, ParamSet
from pages._framework.view import JobView, context_for
from varimp_core.exact.eqn3 import conditional_terms
from varimp_core.serialize import to_jsonable
from varimp_core.plots.decomposition import pair_height

dash.register_page(__name__, path="/decomposition", name="Decomposition", order=2,
                   title="varimp \u2014 Decomposition")

PREFIX = "decomp"
_TABLE_STYLE = table_style(["variable", "B"])

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


def compute(settings, data: DataChoice, progress, cell=None) -> dict:
    """Exact results at K = 1 and K, fully grown and at the depth, and the cell's terms."""
    load = results.make_loader(data.as_dict, progress)
    p = data.n_features()
    p = load().table.n_features if p is None else p
    most = limits.max_exact_features()
    if p > most:
        raise ValueError(f"The decomposition is computed exactly, which handles at most "
                         f"{most} inputs on this server; this data has {p}. Choose data with "
                         "fewer inputs on the Data page.")
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
        out[name] = results.cached_importances(data.as_dict, kwargs, load).to_dict()
    progress(len(runs), len(runs), "")
    if cell:
        try:
            out["cell"] = CELL.settings(cell if isinstance(cell, dict) else {}, Context(p=p))
            out["terms"] = cell_terms(data, load, out["k1"]["variables"], out["cell"], progress)
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


def render(out, settings, data, cell=None):
    r = draw.render(draw.view_from_dict(out), settings)
    terms = r["terms"]
    graph = None if terms["figure"] is None else dcc.Graph(
        id="decomp-terms-graph", figure=terms["figure"], className="vi-figure",
        config=figure_config("decomposition-terms"))
    figure, shown = r["figure"], {"height": f"{r['height']}px"}
    if figure is None:  # no split by degree: the summary says why
        figure, shown = placeholder_figure(""), {"display": "none"}
    return (figure, shown, r["columns"], r["rows"], r["summary"],
            graph, terms["columns"], terms["rows"], terms["note"], out["terms_error"],
            "vi-error" if out["terms_error"] else "vi-hidden")


def url(settings, data: DataChoice, cell=None) -> str:
    """The page's URL query: data, settings and the selected cell."""
    parts = (data.query(), PARAMS.query(settings), CELL.query(cell or {}))
    return "&".join(q for q in parts if q)


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store="decomp-data",
               namespace="decomposition",  # its terms: to_jsonable, not the old lists
               extra=[("cell", Input("decomp-cell", "data"))],
               outputs=[("decomp-graph", "figure"), ("decomp-graph", "style"),
                        ("decomp-totals", "columns"), ("decomp-totals", "data"),
                        ("decomp-summary", "children"), ("decomp-terms-figure", "children"),
                        ("decomp-terms-table", "columns"), ("decomp-terms-table", "data"),
                        ("decomp-terms-note", "children"), ("decomp-terms-error", "children"),
                        ("decomp-terms-error", "className")],
               query_store="decomp-query", url=url, disable=["decomp-fieldset"],
               what="The heatmaps")
VIEW.register()
VIEW.register_downloads(draw.CSV)
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
            ui.card("By degree k",
                    dcc.Graph(id="decomp-graph", config=figure_config("decomposition"),
                              className="vi-figure",
                              style={"height": f"{pair_height(ctx.p or 7)}px"}),
                    html.P(id="decomp-summary", className="vi-help"),
                    download_button(PREFIX, "Download the heatmaps' values (CSV)", "degrees")),
            ui.card("Totals",
                    dash_table.DataTable(id="decomp-totals", columns=[], data=[],
                                         **_TABLE_STYLE), download_button(PREFIX, "Download the totals (CSV)", "totals")),
            ui.card("Terms of the selected cell",
                    html.Div(id="decomp-terms-error", className="vi-hidden"),
                    html.P("Click a cell of a heatmap to list its conditioning sets B.",
                           id="decomp-terms-note", className="vi-help"),
                    html.Div(id="decomp-terms-figure"),
                    dash_table.DataTable(id="decomp-terms-table", columns=[], data=[],
                                         sort_action="native", page_size=15,
                                         **_TABLE_STYLE), download_button(PREFIX, "Download every term (CSV)", "terms")),
        ])


def cell_from_click(click_data, figure) -> dict | None:
    """The cell ``{"var", "degree", "panel"}`` of a heatmap click, or None.

    The variables are the first trace's ``y`` of the figure (as the browser holds it);
    a trace on the second x axis belongs to the right panel (``"K"``).
    """
    traces = (figure or {}).get("data") or []
    try:
        point = click_data["points"][0]
        var, degree = str(point["y"]), int(point["x"])
        trace = traces[int(point.get("curveNumber", 0))]
        variables = list(traces[0]["y"])
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
