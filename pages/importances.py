"""Importances page: MDI per variable, exact or sampled, with the Theorem 2 check.

It reads top to bottom: parameters, compute, what it shows (figures, texts, table,
CSV export), layout.  Every figure comes from :mod:`varimp_core.plots.importances`.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
from dash import Input, Output, State, callback, dash_table, dcc, html, no_update
from dash.dash_table.Format import Format, Scheme

from pages._framework import controls as ui
from pages._framework import datasource, results, state
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                         table_style)
from pages._framework.params import Context, Param, ParamSet
from pages._framework.results import SAMPLED
from pages._framework.view import JobView, context_for
from pages._server import jobs, limits
from varimp_core.csvtext import csv_filename as common_csv_filename
from varimp_core.csvtext import safe_csv, table_number
from varimp_core.exact.binary import BINARY_METHODS
from varimp_core.exact.information import joint_information
from varimp_core.plots.convergence import make_convergence_figure
from varimp_core.plots.importances import (make_importance_figure, make_theorem2_figure,
                                           method_label)
from varimp_core.result import ImportanceResult
from varimp_core.studies import convergence
from varimp_core.studies.chance import ChanceLevels, chance_levels
from varimp_core.studies.convergence import convergence_curve, convergence_note

dash.register_page(__name__, path="/importances", name="Importances", order=1,
                   title="varimp \u2014 Importances")

PREFIX = "imp"
#: At most this many trees from the page; the server's VARIMP_MAX_TREES may lower it.
MAX_TREES_UI = 10_000
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


def exact_note(view: Mapping[str, Any], spread: str = "se") -> str:
    """One sentence on what the bars, whiskers and diamonds are."""
    result, exact = view["result"], view["exact"]
    sentences = [f"Bars: {method_label(result)}."]
    if result.importances_sem is not None:
        sentences.append("Whiskers: one standard error of the mean over trees (per-tree "
                         "SD / \u221aT)" + ("; boxes: the spread of the per-tree values "
                                           "(minimum, quartiles, maximum)." if spread == "trees"
                                           else "."))
    if exact is not None and exact.method in BINARY_METHODS:
        sentences.append(f"Black diamonds: {method_label(exact)}, the value this forest "
                         "converges to as its trees grow in number (same rows, K, depth "
                         "and impurity).")
    elif exact is not None:
        sentences.append(f"Black diamonds: the exact infinite-forest value for the same K and "
                         f"depth ({exact.parameters.get('k_semantics')} semantics).")
        if result.method in ("sklearn-rf", "sklearn-et"):
            sentences.append("scikit-learn grows binary trees on the raw values (and "
                             "bootstraps when asked), so its bars need not match the "
                             "multiway diamonds.")
    if result.method in ("eqn3", "exact") and not result.exact:
        sentences.append("The data is a sample: these are the exact values for its "
                         "empirical distribution (plug-in estimates).")
    chance = view.get("chance")
    return " ".join(sentences + list(view.get("notes", []))
                    + (chance.sentences() if chance is not None else []))


def table_columns(units: str = "bits", *, exact: bool = False, sampled: bool = False,
                  chance: ChanceLevels | None = None) -> list:
    """DataTable column specs (numbers with 4 decimals, in ``units``; the chance levels last)."""
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
        cols += [{"name": f"Exact ({units})", "id": "exact", "type": "numeric", "format": num},
                 {"name": "Bar \u2212 exact", "id": "difference", "type": "numeric",
                  "format": Format(precision=4, scheme=Scheme.fixed, sign="+")}]
    return cols + [{"name": name, "id": cid, "type": "numeric", "format": num}
                   for cid, name in (chance.table_columns() if chance is not None else [])]


def table_rows(result: ImportanceResult, exact: ImportanceResult | None = None,
               chance: ChanceLevels | None = None) -> list[dict]:
    """One row per variable, with the exact numbers of the result (not rounded)."""
    sem, std = result.importances_sem, result.importances_std
    rows, extra = [], chance.table_rows() if chance is not None else []
    for i, name in enumerate(result.variables):
        row = {"variable": name, "importance": table_number(result.importances[i]),
               "normalised": table_number(result.normalised[i])}
        if sem is not None:
            row["sem"], row["std"] = table_number(sem[i]), table_number(std[i])
        if exact is not None:
            row["exact"] = table_number(exact.importances[i])
            row["difference"] = table_number(result.importances[i] - exact.importances[i])
        row.update({k: table_number(v) for k, v in (extra[i] if extra else {}).items()})
        rows.append(row)
    return rows


def csv_text(result: ImportanceResult, exact: ImportanceResult | None = None,
             chance: ChanceLevels | None = None) -> str:
    """CSV of ``result.to_frame()`` (plus the exact and chance columns), safe for a spreadsheet."""
    df = result.to_frame()
    if exact is not None:
        df["exact_importance"] = exact.importances
    if chance is not None:
        df = df.join(chance.to_frame().drop(columns=["variable", "importance"]))
    return safe_csv(df)


def csv_filename(data: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """``varimp-importances-<data>-<method>-K<k>.csv`` with only safe characters."""
    return common_csv_filename("importances", datasource.canonical_params(data),
                               settings["method"], f"K{settings['max_features']}")


def view_from_dict(out: Mapping[str, Any]) -> dict:
    """The page's cached result with its core results rebuilt by the core's ``from_dict``."""
    return {**out, "result": ImportanceResult.from_dict(out["result"]),
            "exact": None if out.get("exact") is None else ImportanceResult.from_dict(out["exact"]),
            "chance": None if out.get("chance") is None else ChanceLevels.from_dict(out["chance"])}


def render_view(view: Mapping[str, Any], spread: str = "se") -> dict:
    """Figures, texts and table of a computed view.

    Returns
    -------
    out : dict
        ``figure``, ``theorem2_figure``, ``convergence`` (how many trees),
        ``theorem2`` (text), ``note`` (text),
        ``columns`` and ``rows`` of the table.
    """
    result, exact, chance = view["result"], view["exact"], view.get("chance")
    info = view.get("information")
    shown = result
    if result.information is None and info is not None:
        shown = ImportanceResult(**{**result.__dict__, "information": info})
    figure = make_importance_figure(result, exact, spread=spread, chance=chance)
    why = convergence_note(result, exact)
    curve = None if why else convergence_curve(result, exact, points=400)
    figure.update_layout(height=None)  # the page sizes it (taller in presentation mode)
    return {
        "figure": figure,
        "theorem2_figure": make_theorem2_figure(shown),
        "convergence": make_convergence_figure(curve, label=method_label(result),
                                               units=result.units, note=why),
        "theorem2": theorem2_text(result, info),
        "note": exact_note(view, spread),
        "columns": table_columns(result.units, exact=exact is not None,
                                 sampled=result.importances_sem is not None, chance=chance),
        "rows": table_rows(result, exact, chance),
    }


def render(out, settings, data):
    view = view_from_dict(out)
    r = render_view(view, settings.get("spread", "se"))
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
    view = view_from_dict(out)
    return (csv_text(view["result"], view["exact"], view["chance"]),
            csv_filename(data.as_dict, settings))


VIEW.register_downloads({"imp-download-button": csv_of})
