"""Importances page: MDI per variable, exact or sampled, with the Theorem 2 check."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update

from pages._framework import controls as ui
from pages import importances_render as draw
from pages._server import jobs, limits
from pages._framework import results, state
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                  table_style)
from pages._framework.params import Context, Param, ParamSet
from pages._framework.view import JobView, context_for
from varimp_core.exact.binary import BINARY_METHODS
from varimp_core.studies import convergence
from varimp_core.studies.chance import chance_levels
from varimp_core.exact.information import joint_information

dash.register_page(__name__, path="/importances", name="Importances", order=1,
                   title="varimp \u2014 Importances")

PREFIX = "imp"
#: At most this many trees from the page; the server's VARIMP_MAX_TREES may lower it.
MAX_TREES_UI = 10_000
SAMPLED = results.SAMPLED
#: scikit-learn's and the core's bootstrap defaults per method.
DEFAULT_BOOTSTRAP = {"exact": False, "forest": False, "sklearn-rf": True, "sklearn-et": False,
                     "exact-rf": False, "exact-et": False}
METHOD_OPTIONS = [("exact", "Exact (infinite forest)"), ("forest", "Multiway forest (sampled)"),
                  ("sklearn-rf", "scikit-learn random forest"),
                  ("sklearn-et", "scikit-learn extra-trees"),
                  ("exact-rf", "Exact: scikit-learn RandomForest, bootstrap off (binary splits)"),
                  ("exact-et", "Exact: scikit-learn ExtraTrees (binary splits)")]
CRITERIA = [("entropy", "Entropy (bits)"), ("gini", "Gini index")]


def method_options(ctx: Context) -> list[dict]:
    """Method choices; the exact method is disabled above the server's limit of inputs."""
    most = limits.max_exact_features()
    over = ctx.p is not None and ctx.p > most
    return [{"label": f"{label} \u2014 at most {most} inputs" if over and v == "exact" else label,
             "value": v, "disabled": over and v == "exact"} for v, label in METHOD_OPTIONS]


def default_method(p: int | None) -> str:
    """Exact up to the server's limit of inputs, else scikit-learn's extra-trees."""
    return "exact" if p is None or p <= limits.max_exact_features() else "sklearn-et"


def _sampled(s) -> bool:
    return s.get("method") in SAMPLED


PARAMS = ParamSet(PREFIX, [
    Param("method", "Method", "choice", "exact", choices=method_options),
    Param("max_features", "K", default=1, key="K", low=1, high=lambda c: c.p or 10_000,
          help=lambda c: f"Variables drawn at each node, 1 to {c.p}." if c.p
          else "Variables drawn at each node."),
    Param("max_depth", "Max depth", default=None, key="depth", low=1, blank="full",
          help="Blank grows the trees fully."),
    Param("criterion", "Impurity", "choice", "entropy", choices=CRITERIA,
          help="Entropy measures in bits (Theorem 2 applies); Gini in Gini units."),
    Param("k_semantics", "K semantics", "choice", "id3", key="semantics",
          choices=ui.SEMANTICS_CHOICES, applies=lambda s: s.get("method") in ("exact", "forest")),
    Param("n_estimators", "Number of trees", default=100, key="trees", low=1,
          high=lambda c: limits.max_trees(MAX_TREES_UI), applies=_sampled,
          help=lambda c: limits.at_most_help(limits.max_trees(MAX_TREES_UI))),
    Param("bootstrap", "Bootstrap", "bool", None, applies=_sampled,
          help="Draw a bootstrap sample per tree"),
    Param("random_state", "Seed", default=0, key="tree_seed", low=0, high=2**32 - 1,
          applies=_sampled, help="Seeds the trees; the same seed grows the same forest."),
    Param("spread", "Whiskers", "choice", "se", key="whiskers", applies=_sampled,
          choices=[("se", "Standard error of the mean"), ("trees", "Per-tree spread")],
          help="The standard error (per-tree SD / \u221aT) says how precise a bar is; the "
               "spread of single trees is \u221aT times wider and can dwarf the bars."),
])


def compute(settings, data: DataChoice, progress) -> dict:
    """The method's importances, the exact reference of a sampled method, and I(X;Y)."""
    load = results.make_loader(data.as_dict, progress)
    p = data.n_features()
    p = load().table.n_features if p is None else p
    method, most = settings["method"], limits.max_exact_features()
    if method == "exact" and p > most:
        raise ValueError(f"The exact method accepts at most {most} input variables on this "
                         f"server and this data has {p}; choose a sampled method.")
    kwargs = {k: v for k, v in settings.items() if k != "spread"}  # spread: drawing only
    if method in SAMPLED and kwargs.get("bootstrap") is None:
        kwargs["bootstrap"] = DEFAULT_BOOTSTRAP[method]
    if method in BINARY_METHODS and results.peek_importances(data.as_dict, kwargs) is None:
        progress(0, 1, "Estimating the number of nodes\u2026")
        refusal = convergence.binary_refusal(load(), method=method, max_features=kwargs[
            "max_features"], max_depth=kwargs["max_depth"])
        if refusal is not None:
            raise ValueError(refusal)
    progress(0, 1, "Computing the importances\u2026")
    result = results.cached_importances(
        data.as_dict, kwargs, load,
        (lambda d, t: progress(d, t, jobs.count_message(d, t, "trees"))) if method in SAMPLED
        else None, lambda so_far: progress.publish(
            {"result": so_far.to_dict(), "exact": None, "information": None, "p": p,
             "notes": ["Trees are still being grown: the bars refine as they arrive."],
             "chance": None}))
    notes, exact = [], None
    if method in SAMPLED:
        progress(1, 1, "Computing the exact values\u2026")
        reference, note = convergence.exact_reference(load, kwargs)
        notes += [note] if note else []
        if reference["method"] == "exact" and p > most:
            notes.append(f"No exact values are drawn: the exact method handles at most "
                         f"{most} inputs and this data has {p}.")
        elif result.units != ("gini" if kwargs.get("criterion") == "gini" else "bits"):
            notes.append(f"No exact values are drawn: this forest measures {result.units} "
                         "while the exact values are impurities of the binned target.")
        else:
            try:
                exact = results.cached_importances(data.as_dict, reference, load)
            except ValueError as exc:
                notes.append(f"No exact values are drawn: {exc}")
    information = result.information if result.information is not None else (
        exact.information if exact is not None else None)
    if information is None and result.units == "bits":
        information = float(joint_information(load().table))
    chance = None
    if method == "exact" and not load().table.exact:   # a sample: its bars' chance levels
        chance = chance_levels(load(), **{k: v for k, v in kwargs.items() if k != "method"},
                               observed=result.importances, n_jobs=limits.n_jobs(),
                               progress=lambda d, t: progress(d, t, f"{d} of {t} permutations"))
    return {"result": result.to_dict(), "exact": None if exact is None else exact.to_dict(),
            "information": information, "notes": notes, "p": p,
            "chance": None if chance is None else chance.to_dict()}


def render(out, settings, data):
    view = draw.view_from_dict(out)
    r = draw.render(view, settings.get("spread", "se"))
    return (r["figure"], r["theorem2"], r["theorem2_figure"], r["columns"], r["rows"], r["note"],
            r["convergence"])


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store="imp-data",
               outputs=[("imp-graph", "figure"), ("imp-theorem2", "children"),
                        ("imp-theorem2-graph", "figure"), ("imp-table", "columns"),
                        ("imp-table", "data"), ("imp-note", "children"),
                        ("imp-convergence-graph", "figure")],
               query_store="imp-query",
               url=lambda s, data: "&".join(q for q in (data.query(), PARAMS.query(s)) if q),
               disable=["imp-fieldset", "imp-download-button"], what="The figure")
VIEW.register()
state.register_url_sync(PREFIX)


def initial_values(query, data: DataChoice, ctx: Context) -> tuple[dict, list[str]]:
    """Control values of a fresh page: the link's (with notes), the method's defaults."""
    values, notes = PARAMS.from_url(query, ctx)
    if "method" not in query:
        values["method"] = default_method(ctx.p)
    if values["bootstrap"] is None:
        values["bootstrap"] = DEFAULT_BOOTSTRAP[values["method"]]
    return values, notes


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    ctx = context_for(data)
    values, more = initial_values(query, data, ctx)
    f = dict(zip(PARAMS.names, PARAMS.fields(values, ctx)))
    settings = html.Fieldset(id="imp-fieldset", className="vi-fieldset", children=[
        ui.card("Method", f["method"]),
        ui.card("Trees", f["max_features"], f["max_depth"], f["criterion"], f["k_semantics"]),
        ui.card("Sampling", f["n_estimators"], f["bootstrap"], f["random_state"], f["spread"]),
    ])
    return page_frame(
        PREFIX, title="Importances", notes=notes + more, data_label=data.label(),
        lead=[
            "Mean decrease of impurity (MDI) of each variable, unnormalised and in bits: the "
            "sum over the nodes that split on it of p(t)\u00b7\u0394i, averaged over trees. "
            "scikit-learn's own ", html.Code("feature_importances_"), " is normalised (each "
            "tree's importances are divided by their sum, so they add up to 1); the Share "
            "column of the table gives that view. In bits, the importances of fully grown "
            "totally randomized trees add up to I(X;Y) (Theorem 2)."],
        stores=[state.query_store(PREFIX, data.query()),
                dcc.Store(id="imp-data", data=data.to_store()),
                *VIEW.stores(), dcc.Download(id="imp-download")],
        controls=settings, status=VIEW.status(),
        content=[
            ui.card("Importances",
                    dcc.Graph(id="imp-graph", config=figure_config("importances"),
                              className="vi-figure", style={"height": "440px"}),
                    html.P(id="imp-note", className="vi-help")),
            ui.card("How many trees do I need?",
                    dcc.Graph(id="imp-convergence-graph", config=figure_config("convergence"),
                              style={"height": "340px"}),
                    html.P(convergence.CURVE_CAPTION, className="vi-help")),
            ui.card("Theorem 2",
                    html.P(id="imp-theorem2", style={"margin": "0 0 0.5rem", "fontWeight": 600}),
                    dcc.Graph(id="imp-theorem2-graph", config={"displayModeBar": False},
                              style={"height": "170px"})),
            ui.card("Table",
                    dash_table.DataTable(
                        id="imp-table", columns=[], data=[], sort_action="native",
                        page_size=20, **table_style(["variable"])),
                    html.P("The CSV has the same rows, with the importance split by "
                           "degree k (by-degree columns).", className="vi-help"),
                    download_button(PREFIX), download_note(PREFIX)),
        ])


@callback([Output(f"{PARAMS.id(n)}-field", "className") for n in PARAMS.names],
          Output(PARAMS.id("bootstrap"), "value"), Input(PARAMS.id("method"), "value"),
          State(PARAMS.id("bootstrap"), "value"), prevent_initial_call=True)
def show_method_fields(method, bootstrap):
    default = ["on"] if DEFAULT_BOOTSTRAP.get(method) else []
    return [*PARAMS.field_classes({"method": method}),  # one flat list: Dash 4 flattens
            no_update if default == (bootstrap or []) else default]


def csv_of(out, settings, data) -> tuple[str, str]:
    """The CSV of a cached result (``JobView.register_downloads``)."""
    view = draw.view_from_dict(out)
    return (draw.csv_text(view["result"], view["exact"], view["chance"]),
            draw.csv_filename(data.as_dict, settings))


VIEW.register_downloads({"imp-download-button": csv_of})
