"""Finite forests page: how often T trees swap two variables, and the trees of the infinite forest.

It reads top to bottom: parameters, compute (the moments of one tree's importance vector,
exact or estimated, and on a small problem the list of its trees), what it shows, layout.
The numbers come from :mod:`varimp_core.exact.moments` and
:mod:`varimp_core.exact.enumerate_trees`, the figures from :mod:`varimp_core.plots.stability`.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
from dash import dcc, html

from pages._framework import controls as ui
from pages._framework import results, state
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import figure_config, page_frame
from pages._framework.params import Context, Param, ParamSet, sentence
from pages._framework.results import SAMPLED
from pages._framework.view import JobView, context_for
from pages._server import jobs, limits
from varimp_core.exact.enumerate_trees import TreeEnumeration, count_trees, enumerate_trees
from varimp_core.exact.moments import ImportanceMoments, moments_from_trees
from varimp_core.plots.importances import units_label
from varimp_core.plots.stability import (make_flip_figure, make_gallery_mean_figure,
                                         make_tree_figure, probability_text,
                                         tree_importance_text)
from varimp_core.plots.style import empty_figure

dash.register_page(__name__, path="/stability", name="Stability", order=1.5,
                   title="varimp \u2014 Finite forests")

PREFIX = "stab"
#: At most this many trees from the page; the server's VARIMP_MAX_TREES may lower it.
MAX_TREES_UI = 10_000
#: The gallery draws at most this many trees (the core's enumeration refuses beyond).
MAX_GALLERY = 64
#: T of a fresh page.
DEFAULT_T = 100
EXACT = ("exact", "exact-rf", "exact-et")
METHOD_OPTIONS = [("exact", "Exact (multiway trees)"),
                  ("exact-rf", "Exact: scikit-learn RandomForest, bootstrap off"),
                  ("exact-et", "Exact: scikit-learn ExtraTrees"),
                  ("forest", "Multiway forest (sampled: an estimate)"),
                  ("sklearn-rf", "scikit-learn random forest (sampled: an estimate)"),
                  ("sklearn-et", "scikit-learn extra-trees (sampled: an estimate)")]
#: Methods that measure classes only.
CLASSES_ONLY = ("forest", "exact-rf", "exact-et")
#: Presets: (text, link).
PRESETS = [
    ("Louppe's toy, extra-trees, K = 1 (four trees)",
     "/stability?problem=toy&method=exact-et&K=1"),
    ("Louppe's toy, multiway trees, K = 1", "/stability?problem=toy&method=exact&K=1"),
    ("XOR on 4 rows, multiway, K = 1", "/stability?problem=xor&method=exact&K=1"),
    ("LED, K = 7, depth 2", "/stability?problem=led&method=exact&K=7&depth=2"),
]
#: What the page says about the thesis' printed values of the toy (issue #29).
THESIS_NOTE = (
    "Louppe's thesis (section 7.2.3) lists the four extra-trees of its toy, X1 \u2208 {0, 1, 2}, "
    "X2 = Y, Y = (0, 1, 1), with probabilities 1/8, 1/8, 1/4 and 1/2, and prints "
    "Imp(X1) = 0.375 and Imp(X2) = 0.541 bits. Those two sum to 0.916, which misses "
    "H(Y) = 0.9183 bits by 0.002, although fully grown trees must use all of it. The "
    "formula the thesis gives evaluates to 0.3758 and 0.5425 bits, the values drawn here; "
    "totally randomized multiway trees give 0.4591 and 0.4591.")


_regression = ui.is_regression
criterion_options = ui.criterion_options


def method_options(ctx: Context) -> list[dict]:
    """Method choices; the multiway exact method is disabled above the server's limit of
    inputs, the classification-only methods on a numeric target, each with why; exact-rf
    and exact-et as on Importances (:func:`pages._framework.controls.binary_method_note`)."""
    most = limits.max_exact_features()
    out = []
    for v, label in METHOD_OPTIONS:
        why = (f"at most {most} inputs" if v == "exact" and ctx.p is not None and ctx.p > most
               else "classification targets only" if v in CLASSES_ONLY and _regression(ctx)
               else None)
        off = why is not None
        if why is None and v in ("exact-rf", "exact-et"):
            why, off = ui.binary_method_note(ctx, v)
        out.append({"label": f"{label} \u2014 {why}" if why else label, "value": v,
                    "disabled": off})
    return out


def _sampled(s) -> bool:
    return s.get("method") in SAMPLED


PARAMS = ParamSet(PREFIX, [
    Param("method", "Method", "choice", "exact", choices=method_options,
          help="Exact: the law of one tree is computed; sampled: it is estimated from the "
               "forest's trees."),
    Param("max_features", "K", default=1, key="K", low=1, high=lambda c: c.p or 10_000,
          help=lambda c: f"Variables drawn at each node, 1 to {c.p}." if c.p
          else "Variables drawn at each node."),
    Param("max_depth", "Max depth", default=None, key="depth", low=1, blank="full",
          help="Blank grows the trees fully."),
    Param("criterion", "Impurity", "choice", "entropy", choices=criterion_options),
    Param("k_semantics", "K semantics", "choice", "id3", key="semantics",
          choices=ui.SEMANTICS_CHOICES, applies=lambda s: s.get("method") in ("exact", "forest")),
    Param("n_estimators", "Trees of the estimate", default=1000, key="trees", low=2,
          high=lambda c: limits.max_trees(MAX_TREES_UI), applies=_sampled,
          help=lambda c: "The per-tree covariance is estimated from this many trees. "
          + limits.at_most_help(limits.max_trees(MAX_TREES_UI))),
    Param("random_state", "Seed", default=0, key="tree_seed", low=0, high=2**32 - 1,
          applies=_sampled, help="Seeds the trees; the same seed grows the same forest."),
    Param("n_trees", "Trees T", default=None, key="T", low=1, high=10**9,
          blank=str(DEFAULT_T), what="T",
          help=f"The forest whose swaps are shown; blank: {DEFAULT_T}. Changing it "
               "recomputes nothing."),
])
#: Parameters that only change the drawing (not the cache key of the result).
DRAWING = ("n_trees",)


def core_settings(settings: Mapping[str, Any]) -> dict:
    """Keyword arguments of the core: no drawing parameter; the sampled forests without
    bootstrap (their trees then have the exact methods' law)."""
    kwargs = {k: v for k, v in settings.items() if k not in DRAWING}
    if settings["method"] in SAMPLED:
        kwargs["bootstrap"] = False
    if kwargs.get("criterion") == "squared_error" and settings["method"] in SAMPLED:
        kwargs.pop("criterion")     # scikit-learn's forests measure the variance natively
    return kwargs


def _enumeration(prepared, kwargs: Mapping[str, Any]) -> tuple[dict | None, str | None]:
    """The trees of the infinite forest (``to_dict``), or None and the sentence why not."""
    common = {k: kwargs[k] for k in ("method", "max_features", "max_depth") if k in kwargs}
    common.update(k_semantics=kwargs.get("k_semantics", "id3"),
                  criterion=kwargs.get("criterion", "entropy"))
    if common["criterion"] == "squared_error":
        return None, ("The trees are listed for the entropy and Gini impurities (classes); "
                      "this target is numeric.")
    if common["method"] != "exact":
        common.pop("k_semantics")
    try:
        n = count_trees(prepared, **common)
    except ValueError as exc:
        return None, sentence(str(exc))
    if n > MAX_GALLERY:
        many = "at least 10\u00b9\u2078" if n >= 10 ** 18 else f"{n:,}"
        return None, (f"The infinite forest has {many} distinct trees here, more than the "
                      f"{MAX_GALLERY} this page draws. Lower the depth, raise K, or open a "
                      "preset.")
    return enumerate_trees(prepared, **common, max_trees=MAX_GALLERY).to_dict(), None


def compute(settings, data: DataChoice, progress) -> dict:
    """The moments of one tree's importance vector (exact, or estimated from a sampled
    forest's trees), and for an exact method its trees when there are at most 64."""
    method = settings["method"]
    load, p = results.width_checked_loader(data, method, progress)
    task = load().task
    criterion = settings.get("criterion", "entropy")
    if (task == "regression") != (criterion == "squared_error"):
        raise ValueError("The target is numeric: its impurity is its variance." if task ==
                         "regression" else "The target has classes: choose entropy or Gini.")
    if task == "regression" and method in CLASSES_ONLY:
        raise ValueError("This method handles classification targets only; choose the exact "
                         "multiway method or a scikit-learn forest for a numeric target.")
    kwargs = core_settings(settings)
    out: dict[str, Any] = {"exact": None, "enumeration": None, "gallery_note": None}
    if method in EXACT:
        mkw = {k: kwargs[k] for k in ("method", "max_features", "max_depth", "criterion")}
        if method == "exact":
            mkw["k_semantics"] = kwargs.get("k_semantics", "id3")
        progress(0, 1, "Computing the exact importances\u2026")
        exact = results.cached_importances(data, mkw, load)
        out["exact"] = exact.importances.tolist()
        progress(0, 1, "Computing the exact covariance of one tree's importances\u2026")
        # the same cache entry as the Importances page's error bars
        moments = results.cached_moments(data, exact, load)
        progress(0, 1, "Listing the trees of the infinite forest\u2026")
        out["enumeration"], out["gallery_note"] = _enumeration(load(), mkw)
    else:
        result = results.cached_importances(
            data, kwargs, load,
            lambda d, t: progress(d, t, jobs.count_message(d, t, "trees")))
        moments = moments_from_trees(result)
        out["gallery_note"] = ("The trees of the infinite forest are listed for the exact "
                               "methods; choose one (on a small problem).")
    out["moments"] = moments  # a core object: JobView serialises it (a shared part: its key)
    out["sample"] = not load().table.exact
    return out


# -- what it shows ------------------------------------------------------------------------
def stability_sentences(moments: ImportanceMoments, T: int, sample: bool = False) -> list[str]:
    """What the heatmap is (exact or an estimate), and how many trees a stable ranking needs;
    on a sample, that the exact law is the law of trees grown on these rows."""
    units = units_label(moments.units)
    if moments.estimated:
        head = (f"An estimate: the mean and covariance of one tree's importances are those of "
                f"the {moments.n_trees:,} sampled trees (bootstrap off), so these "
                "probabilities carry their own sampling error.")
    else:
        head = ("Exact: the covariance \u03a3 of one tree's importance vector is computed over "
                "the forest's randomisation, and a forest of T trees has covariance \u03a3/T.")
        if sample:
            head += (" On this sample it is the law of trees grown on these rows (a plug-in "
                     "of the population's): it says how far T trees are from the infinite "
                     "forest of this sample, not how far this sample is from the population; "
                     "the Importances page gives each variable its verdict.")
    out = [head, "Each cell: the probability that a forest of T = "
           f"{T:,} trees orders the two variables the other way round, "
           "\u03a6(\u2212|\u03bc\u1d62 \u2212 \u03bc\u2c7c| \u221aT / "
           "\u221a(\u03a3\u1d62\u1d62 + \u03a3\u2c7c\u2c7c \u2212 2\u03a3\u1d62\u2c7c)) by the "
           "central limit theorem; 50% for two variables of equal mean; a blank cell is under "
           "0.5% (hover for its value)."]
    if len(moments.variables) >= 2:
        bound = moments.ranking_error_bound(T)
        try:
            stable = f"{moments.stable_ranking_trees(0.95):,}"
        except ValueError:
            stable = None
        out.append(f"At T = {T:,}, the ranking is wrong with probability at most {bound:.1%} "
                   "(the sum over consecutive variables; tied variables may come in either "
                   "order)" + (f"; it is right with probability at least 95% from "
                               f"T = {stable} trees." if stable else "."))
    se = moments.standard_errors(T)
    out.append("Standard errors at T = {:,}: {} {}.".format(
        T, ", ".join(f"{v} {s:.4f}" for v, s in zip(moments.variables[:12], se)), units)
        + (" (first 12 variables)" if len(se) > 12 else ""))
    return out


def _tree_card(i: int, tree, variables, units: str) -> html.Div:
    return html.Div([
        html.P([html.Span(f"Tree {i + 1} \u00b7 probability "),
                html.Strong(probability_text(tree.probability), className="stab-tree-prob")],
               className="stab-tree-head"),
        dcc.Graph(figure=make_tree_figure(tree.structure, variables, units=units),
                  config={"displayModeBar": False}, className="stab-tree-graph"),
        html.P(tree_importance_text(tree.importances, variables, units),
               className="vi-help stab-tree-imp"),
    ], className="vi-card stab-tree", id=f"stab-tree-{i}")


def render_view(out: Mapping[str, Any], T: int) -> dict:
    """Figures and texts of a computed result for a forest of ``T`` trees."""
    moments = out["moments"] if isinstance(out["moments"], ImportanceMoments) else \
        ImportanceMoments.from_dict(out["moments"])
    units = units_label(moments.units)
    enum = None if out.get("enumeration") is None else \
        TreeEnumeration.from_dict(out["enumeration"])
    if enum is not None:
        total = float(enum.probabilities.sum())
        gallery_note = (f"{len(enum.trees)} distinct tree{'s' if len(enum.trees) != 1 else ''}, "
                        f"most probable first; their probabilities sum to {total:.6g}. The "
                        "probability-weighted mean of their importances (diamonds) equals the "
                        "exact importances (bars).")
        mean_fig = make_gallery_mean_figure(enum, out["exact"], units=units)
        cards = [_tree_card(i, t, enum.variables, units) for i, t in enumerate(enum.trees)]
    else:
        gallery_note = out.get("gallery_note") or ""
        mean_fig = empty_figure(gallery_note or "No trees to list.", 200)
        cards = []
    return {"flip": make_flip_figure(moments, T),
            "flip_text": [html.P(s) for s in stability_sentences(moments, T,
                                                                 bool(out.get("sample")))],
            "gallery_note": gallery_note, "gallery_mean": mean_fig, "gallery": cards}


def render(out, settings, data):
    r = render_view(out, settings.get("n_trees") or DEFAULT_T)
    return (r["flip"], r["flip_text"], r["gallery_note"], r["gallery_mean"], r["gallery"])


class StabilityView(JobView):
    """A JobView whose result is not keyed by T (T only changes the drawing)."""

    def key(self, data, settings, extra):
        return super().key(data, {k: v for k, v in settings.items() if k not in DRAWING}, extra)


VIEW = StabilityView(
    PREFIX, PARAMS, compute=compute, render=render, data_store="stab-data",
    outputs=[("stab-flip-graph", "figure"), ("stab-flip-text", "children"),
             ("stab-gallery-note", "children"), ("stab-gallery-mean", "figure"),
             ("stab-gallery", "children")],
    query_store="stab-query",
    url=lambda s, data: "&".join(q for q in (data.query(), PARAMS.query(s)) if q),
    disable=["stab-fieldset"], what="The figures")
VIEW.register()
state.register_url_sync(PREFIX)


def initial_values(query, ctx: Context) -> tuple[dict, list[str]]:
    """Control values of a fresh page: the link's (with notes), the impurity of the target."""
    values, notes = PARAMS.from_url(query, ctx)
    return ui.allowed_criterion(values, ctx), notes


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    ctx = context_for(data)
    values, more = initial_values(query, ctx)
    f = dict(zip(PARAMS.names, PARAMS.fields(values, ctx)))
    controls = html.Fieldset(id="stab-fieldset", className="vi-fieldset", children=[
        ui.card("Method", f["method"]),
        ui.card("Trees", f["max_features"], f["max_depth"], f["criterion"], f["k_semantics"]),
        ui.card("Sampled forest", f["n_estimators"], f["random_state"],
                className="" if _sampled(values) else "vi-hidden", id="stab-sampled-card"),
        ui.card("Forest of T trees", f["n_trees"]),
    ])
    presets = [html.Li(dcc.Link(text, href=href, id=f"stab-preset-{i}"))
               for i, (text, href) in enumerate(PRESETS)]
    grid = {"display": "grid", "gap": "0.75rem",
            "gridTemplateColumns": "repeat(auto-fill, minmax(min(100%, 15rem), 1fr))"}
    return page_frame(
        PREFIX, title="Finite forests", notes=notes + more, data_label=data.label(),
        lead=["The importances of a forest of T trees scatter around the infinite forest's. "
              "A forest grown without bootstrap averages T independent trees, so it needs "
              "only the mean \u03bc and the covariance \u03a3 of one tree's importance vector: "
              "varimp computes both exactly for the exact methods and estimates them from the "
              "trees of a sampled forest. From them: how often T trees swap two variables. "
              "On a small problem, the infinite forest is a handful of trees, drawn one by one "
              "with their probabilities."],
        stores=[state.query_store(PREFIX, data.query()),
                dcc.Store(id="stab-data", data=data.to_store()), *VIEW.stores()],
        controls=controls, status=VIEW.status(),
        content=[
            ui.card("Presets", html.Ul(presets, className="vi-home-list"),
                    html.P(THESIS_NOTE, className="vi-help", id="stab-thesis-note"),
                    className="vi-phone-after"),  # on a phone, below the figures
            ui.card("Ranking stability",
                    dcc.Graph(id="stab-flip-graph", config=figure_config("ranking-stability"),
                              className="vi-figure"),
                    html.Div(id="stab-flip-text", className="vi-help")),
            ui.card("The trees of the infinite forest",
                    html.P(id="stab-gallery-note", className="vi-help"),
                    dcc.Graph(id="stab-gallery-mean", config=figure_config("trees-mean"),
                              style={"height": "300px"}),
                    html.Div(id="stab-gallery", style=grid)),
        ])


def _sampled_card(method):
    return "vi-card" if method in SAMPLED else "vi-card vi-hidden"


dash.callback(dash.Output("stab-sampled-card", "className"),
              dash.Input(PARAMS.id("method"), "value"), prevent_initial_call=True)(_sampled_card)


@dash.callback([dash.Output(f"{PARAMS.id(n)}-field", "className") for n in PARAMS.names],
               dash.Input(PARAMS.id("method"), "value"), prevent_initial_call=True)
def show_method_fields(method):
    return PARAMS.field_classes({"method": method})
