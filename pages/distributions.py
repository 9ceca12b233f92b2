"""Distributions page: importances over R data sets, fitted laws, plug-in bias, sweeps."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dash_table, html, no_update

from pages._framework import controls as ui
from pages import distributions_study as draw
from pages._framework import state, studies
from pages._server import fanout
from pages._framework.datachoice import DataChoice
from pages._framework.page_frame import page_frame, table_style
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.view import JobView, context_for
from varimp_core.csvtext import csv_filename
from varimp_core.serialize import to_jsonable
from varimp_core.studies.distributions import (MAX_FITTED, check_sweep, check_tree_budget,
                                               importance_distribution, sweep_trees)
from varimp_core.studies.montecarlo import default_sweep_values, sweep, sweep_statistics

dash.register_page(__name__, path="/distributions", name="Distributions", order=7,
                   title="varimp \u2014 Distributions")

PREFIX, SWEEP = "dist", "dist-sweep"
RUN = ParamSet(PREFIX, [
    Param("mode", "Replicates", "choice", "samples",
          choices=lambda c: draw.mode_options(c.extra.get("data")), what="replicate kind"),
    Param("method", "Method", "choice", "forest", choices=studies.METHOD_OPTIONS),
    Param("n_replicates", "Replicates R", default=100, key="R", low=1,
          high=lambda c: draw.cap("R"), what="number of replicates R"),
    Param("n_samples", "Samples N", default=500, key="N", low=1, high=lambda c: draw.cap("N"),
          blank="all rows", what="sample size N"),
    Param("n_estimators", "Trees T", default=50, key="T", low=1,
          high=lambda c: draw.cap("T"), what="number of trees T"),
    Param("max_features", "K", default=1, key="K", low=1, high=lambda c: c.p or 100_000),
    Param("max_depth", "Max depth", default=None, key="depth", low=1, blank="full",
          what="maximum depth"),
    seed_param("mc_seed"),
    Param("view", "View", "choice", "histogram",
          choices=[("histogram", "Histograms with fits"), ("violin", "Violins")]),
])
SWEEPS = ParamSet(SWEEP, [
    Param("parameter", "Parameter", "choice", "n_estimators", key="sweep", control="dropdown",
          choices=lambda c: draw.sweep_options(c.extra.get("data"), c.extra.get("mode")),
          what="swept parameter"),
    Param("values", "Values", "text", "", blank="e.g. 1, 10, 50", what="sweep values",
          help=lambda c: f"Comma-separated, at most {draw.cap('values')}; every value is a "
                         "full run of R replicates with the settings above."),
])
RUN_NAMES = [n for n in RUN.names if n != "view"]  # the sweep's run settings


def run_study(s, data: DataChoice, n, progress) -> dict:
    """The core's study of the importances over R replicates, with fitted laws and the bias."""
    mode, seed = s["mode"], s["random_state"]
    fresh = mode == "samples"  # with REDIS_URL, fresh samples fan out to the Celery workers
    what = "permutations" if mode == "permutation" else "replicates"
    dist = importance_distribution(
        data["problem"] if fresh else studies.sample_of(data, n, seed), mode=mode,
        n_replicates=s["n_replicates"], n_samples=n, random_state=seed,
        max_fitted=MAX_FITTED, mapper=fanout.replicate_mapper() if fresh else None,
        partial=lambda so_far: progress.publish(so_far.lean_dict(running=True)),
        **draw.forest_options(s, progress, what))
    return dist.lean_dict()


def compute(settings, data: DataChoice, progress, data_store=None) -> dict:
    n = draw.replicate_rows(settings, data)
    s = {k: v for k, v in settings.items() if k != "view"}  # drawing only: same study
    return studies.cached_study("dist-run", [data.as_dict, s, n],
                                lambda: run_study(s, data, n, progress))


def compute_sweep(settings, data: DataChoice, progress, data_store=None, **run_values) -> dict:
    """Statistics of the run repeated over the values of one parameter (Sutera 2013)."""
    parameter = settings["parameter"]
    if parameter == "none":
        return {"parameter": None, "mode": run_values.get("mode")}
    run = RUN.settings({**run_values, "view": "histogram"}, context_for(data, data_store))
    del run["view"]
    n = draw.replicate_rows(run, data)
    check_sweep(parameter, run["mode"], draw.problem_options(data))
    values = draw.parse_values(settings["values"], parameter, p=data.n_features())
    R = run.pop("n_replicates")
    check_tree_budget(sweep_trees(parameter, values, n_replicates=R,
                                  n_estimators=run["n_estimators"]), draw.cap("total"))

    def study() -> dict:
        kwargs = draw.forest_options({**run, "n_replicates": R}, progress, "replicates")
        kwargs.update({"n_samples": n} if n is not None else {})
        kwargs.pop(parameter, None)
        source = data["problem"] if run["mode"] == "samples" else \
            studies.sample_of(data, n, run["random_state"])
        if run["mode"] == "samples":
            kwargs["mapper"] = fanout.replicate_mapper()
        view = lambda df, **more: {"stats": to_jsonable(sweep_statistics(df)),  # noqa: E731
                                   "parameter": parameter, "values": values, "mode": run["mode"],
                                   "partial": bool(df.attrs.get("cancelled")), **more}
        return view(sweep(source, parameter, values, n_replicates=R, replicates=True,
                          random_state=run["random_state"], **kwargs,
                          partial=lambda df: progress.publish(view(df, running=True))))

    return studies.cached_study("dist-sweep", [data.as_dict, run, R, n, parameter, values], study)


DATA = ("data_store", Input("dist-data", "data"))  # choosing another problem reruns the views
VIEW = JobView(PREFIX, RUN, compute=compute, partial=True, data_store="dist-data", extra=[DATA],
               render=draw.render, outputs=[
                   ("dist-graph", "figure"), ("dist-table", "columns"), ("dist-table", "data"),
                   ("dist-fit-table", "columns"), ("dist-fit-table", "data"),
                   ("dist-summary", "children"), ("dist-partial", "children"),
                   ("dist-partial", "className")],
               disable=["dist-fieldset", "dist-problem", "dist-download-summary",
                        "dist-download-replicates"])
SWEEP_VIEW = JobView(SWEEP, SWEEPS, compute=compute_sweep, render=draw.render_sweep, partial=True,
                     data_store="dist-data", outputs=[("dist-sweep-graph", "figure"),
                                                      ("dist-sweep-note", "children")],
                     extra=[DATA, *((n, Input(RUN.id(n), "value")) for n in RUN_NAMES)],
                     disable=["dist-sweep-fieldset", "dist-sweep-download"])
VIEW.register()
SWEEP_VIEW.register()
state.register_url_sync(PREFIX)


def make_csv(what: str):
    """The download of ``what`` (:meth:`JobView.register_downloads`)."""
    return lambda out, s, data, **_: (draw.csv_text(what, out), csv_filename(
        "distributions", data, out["mode"], what))


VIEW.register_downloads({"dist-download-summary": make_csv("summary"),
                         "dist-download-replicates": make_csv("replicates")})
SWEEP_VIEW.register_downloads({"dist-sweep-download": make_csv("sweep")}, "dist-download",
                              "dist-sweep-download-note")


def initial_values(query, data: DataChoice) -> tuple[dict, dict, list[str], str]:
    """The controls of a fresh page: the link's values (with notes), else the data's defaults."""
    ctx = Context(p=data.n_features(), extra={"data": data})
    run, notes = RUN.from_url(query, ctx)
    if "mode" not in query or run["mode"] not in draw.allowed(draw.mode_options(data)):
        run["mode"] = draw.default_mode(data)
    if "N" not in query and run["mode"] != "samples" and not studies.is_exact(data):
        run["n_samples"] = None  # the table's own size
    scaled = studies.scale_replicates(run, "n_replicates", query, data, run["n_samples"],
                                      "replicates")
    sctx = Context(p=ctx.p, extra={"data": data, "mode": run["mode"]})
    sweep, more = SWEEPS.from_url(query, sctx)
    if sweep["parameter"] not in draw.allowed(draw.sweep_options(data, run["mode"])):
        sweep["parameter"] = "none"
    sweep["values"], bad = draw.link_values(query, sweep["parameter"], ctx.p)
    return run, sweep, notes + more + bad, scaled


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    run, sweep, more, scaled = initial_values(query, data)
    ctx = Context(p=data.n_features(), extra={"data": data, "mode": run["mode"]})
    f = {**dict(zip(RUN.names, RUN.fields(run, ctx))),
         **dict(zip(SWEEPS.names, SWEEPS.fields(sweep, ctx)))}
    row = lambda *kids: html.Div(kids, className="vi-row")  # noqa: E731
    table = dict(sort_action="native", page_size=20,
                 **table_style(("variable", "relevance", "Variable", "Relevance", "Law",
                                "Parameters"), wrap=True))
    controls = [html.Fieldset(id="dist-fieldset", className="vi-fieldset", children=[
        ui.card("Data", studies.problem_field(PREFIX, data),
                html.P(draw.description(data), id="dist-problem-help", className="vi-help"),
                f["mode"]),
        ui.card("Forests", f["method"], row(f["n_replicates"], f["n_samples"]),
                row(f["n_estimators"], f["max_features"]),
                row(f["max_depth"], f["random_state"]),
                html.P("N: rows per data set (blank: the data's size for the bootstrap). K: "
                       "variables drawn at each node. The seed fixes every replicate.",
                       className="vi-help"),
                html.P(scaled, className="vi-help"),
                html.P(draw.caps_text(), id="dist-caps", className="vi-help"))]),
        ui.card("Sweep", html.Fieldset(id="dist-sweep-fieldset", className="vi-fieldset",
                                       children=[f["parameter"], f["values"]]))]
    return page_frame(
        PREFIX, title="Distributions", notes=notes + more, data_label=data.label(), download=True,
        controls=controls,
        lead="One forest on one data set gives one number per variable; another data set, or "
             "other trees, give another. Here R data sets are drawn, a forest is grown on "
             "each, and every variable's importance is looked at as a random variable "
             "(Sutera 2013, ch. 3): its histogram against the exact value, a scaled "
             "\u03c7\u00b2 law for irrelevant variables and a normal law for relevant ones, "
             "the plug-in bias that lifts irrelevant variables above zero (Geurts 2016), and "
             "how all of it moves when one setting is swept.",
        stores=[*studies.stores(PREFIX, data), *VIEW.stores(), *SWEEP_VIEW.stores()],
        status=[*VIEW.status(), html.Div(id="dist-partial", className="vi-hidden")],
        content=[
            ui.card("Importance over the replicates", f["view"],
                    studies.graph("dist-graph", "distributions"),
                    html.Div(id="dist-summary", className="vi-description")),
            ui.card("Mean \u00b1 standard deviation (as in Sutera 2013, Tables 3.2\u20133.33)",
                    dash_table.DataTable(id="dist-table", columns=[], data=[], **table),
                    studies.buttons("dist-download-note",
                                    ("Download table (CSV)", "dist-download-summary"),
                                    ("Download replicates (CSV)", "dist-download-replicates"))),
            ui.card("Goodness of fit",
                    dash_table.DataTable(id="dist-fit-table", columns=[], data=[], **table),
                    html.P("Kolmogorov\u2013Smirnov distance D between the replicates and each "
                           "fitted law (smaller is closer). The laws are fitted to the same "
                           "values, so the p-values are too large (Lilliefors 1967): read D as "
                           "a distance, not as a test.", className="vi-help")),
            ui.card("Sweep", *SWEEP_VIEW.status(),
                    studies.graph("dist-sweep-graph", "distributions"),
                    html.P(id="dist-sweep-note", className="vi-help"),
                    studies.buttons("dist-sweep-download-note",
                                    ("Download sweep (CSV)", "dist-sweep-download"))),
        ])


def follow_data(data: DataChoice, mode, parameter) -> tuple:
    """The controls that depend on the chosen data (and on the replicate kind)."""
    modes = draw.mode_options(data)
    mode = mode if mode in draw.allowed(modes) else draw.default_mode(data)
    sweeps = draw.sweep_options(data, mode)
    drawn = mode == "samples" or studies.is_exact(data)
    return (modes, mode, draw.description(data), "" if drawn else "all rows", sweeps,
            no_update if parameter in draw.allowed(sweeps) else "none")


choose_data = studies.register_data(
    PREFIX, PREFIX, RUN, SWEEPS, follow=follow_data, outputs=[
        Output(RUN.id("mode"), "options"), Output(RUN.id("mode"), "value"),
        Output("dist-problem-help", "children"), Output(RUN.id("n_samples"), "placeholder"),
        Output(SWEEPS.id("parameter"), "options"), Output(SWEEPS.id("parameter"), "value")],
    inputs=[Input(RUN.id("mode"), "value"), State(SWEEPS.id("parameter"), "value")])


@callback(Output(SWEEPS.id("values"), "value"), Input(SWEEPS.id("parameter"), "value"),
          State("dist-data", "data"), prevent_initial_call=True)
def start_values(parameter, store):
    return default_sweep_values(parameter, store.get("p") if isinstance(store, dict) else None)
