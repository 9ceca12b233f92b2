"""Distributions page: importances over R data sets, fitted laws, plug-in bias, sweeps.

The Distributions study's pieces: its choices, caps and checks, and drawing.

The choices and their sentences (replicate kinds, sweepable parameters, sweep
values, the server's caps, read from the environment on every call), the
checks a run must pass before it grows a forest, and what the page draws.
The run is the core's (:func:`varimp_core.studies.distributions.importance_distribution`);
every figure comes from :mod:`varimp_core.plots.distributions`; results are
read back with their ``from_dict``.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
from dash import Input, Output, State, callback, html, no_update

from pages._framework import controls as ui
from pages._framework import state, studies
from pages._framework.common import frame_table, placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.grid import grid
from pages._framework.page_frame import page_frame
from pages._framework.params import Context, Param, ParamSet, seed_param
from pages._framework.studies import generator, is_exact, partial_note
from pages._framework.view import JobView, context_for
from pages._server import fanout, limits
from varimp_core.csvtext import csv_filename, safe_csv
from varimp_core.plots.distributions import (make_distribution_figure, make_summary_table_frame,
                                             make_sweep_figure)
from varimp_core.plots.distributions_captions import (distribution_csv_frame,
                                                      distribution_sentences, fit_table_frame,
                                                      sweep_note)
from varimp_core.problems.registry import get_problem
from varimp_core.serialize import from_jsonable, to_jsonable
from varimp_core.studies import distributions as study
from varimp_core.studies.distributions import (ImportanceDistribution, MAX_FITTED, check_sweep,
                                               check_tree_budget, importance_distribution,
                                               sweep_trees)
from varimp_core.studies.montecarlo import (SWEEP_PARAMETERS, default_sweep_values,
                                            parameter_label, parse_sweep_values, sweep,
                                            sweep_statistics)
from varimp_core.studies.nulls import PermutationNull

dash.register_page(__name__, path="/distributions", name="Distributions", order=7,
                   title="varimp \u2014 Distributions")

PREFIX, SWEEP = "dist", "dist-sweep"


CAPS = {"R": "replicates", "T": "mc_trees", "N": "mc_samples", "total": "mc_total_trees",
        "values": "sweep_values"}


# -- choices, caps and sweep values --------------------------------------------------------
def cap(name: str) -> int:
    return limits.value(CAPS[name])


def caps_text() -> str:
    return (f"Limits on this server: R \u2264 {cap('R'):,}, T \u2264 {cap('T'):,}, "
            f"N \u2264 {cap('N'):,}, at most {cap('total'):,} trees per run or sweep "
            f"(R \u00d7 T, summed over a sweep's values) and {cap('values')} sweep values.")


def mode_options(data: DataChoice | None) -> list[dict]:
    """Replicate kinds; fresh samples only for problems with a generator."""
    off = data is not None and generator(data) is None
    return [{"label": label + (" (needs a built-in problem)" if off and v == "samples" else ""),
             "value": v, "disabled": off and v == "samples"}
            for v, label in study.MODE_LABELS.items()]


def sweep_options(data: DataChoice | None, mode: str | None) -> list[dict]:
    """Sweepable parameters for the data and replicate kind (others disabled, with why)."""
    own = problem_options(data)
    out = [{"label": "No sweep", "value": "none"}]
    for name in SWEEP_PARAMETERS:
        why = study.sweep_refusal(name, mode, own)
        out.append({"label": parameter_label(name) + (f" \u2014 {why}" if why else ""),
                    "value": name, "disabled": data is not None and why is not None})
    return out


def parse_values(text, parameter: str, *, p: int | None = None) -> list:
    """The sweep values typed in, checked against this server's caps (:func:`parse_sweep_values`)."""
    return parse_sweep_values(text, parameter, p=p, max_values=cap("values"),
                              max_samples=cap("N"), max_trees=cap("T"))


# -- checks, computing and drawing ---------------------------------------------------------
def forest_options(s, progress, what: str) -> dict:
    return dict(method=s["method"], n_estimators=s["n_estimators"],
                max_features=s["max_features"], max_depth=s["max_depth"],
                **studies.run_options(progress, s["n_replicates"], what))


def link_values(query, parameter: str, p: int | None) -> tuple[str, list[str]]:
    """The sweep values of a link (normalised), else the defaults, and a note when ignored."""
    return study.link_sweep_values(query.get("values"), parameter, p=p, max_values=cap("values"),
                                   max_samples=cap("N"), max_trees=cap("T"))


def replicate_rows(settings, data: DataChoice) -> int | None:
    """N of each replicate data set (:func:`study.replicate_rows`), within the tree budget."""
    n = study.replicate_rows(settings["mode"], settings["n_samples"], exact=is_exact(data),
                             has_generator=generator(data) is not None)
    study.check_tree_budget(settings["n_replicates"] * settings["n_estimators"], cap("total"))
    return n


def problem_options(data: DataChoice) -> set:
    """The options of the data's built-in problem (none for an upload)."""
    return set() if data is None or data.is_upload else set(get_problem(data["problem"]).options)


def default_mode(data: DataChoice) -> str:
    return "samples" if generator(data) is not None else "bootstrap"


def description(data: DataChoice) -> str:
    if data.is_upload:
        return ("Your uploaded table: replicates are bootstrap samples of its rows, or "
                "permutations of its target.")
    return get_problem(data["problem"]).description


def allowed(options) -> set:
    return {o["value"] for o in options if not o.get("disabled")}


def summary_table(result) -> tuple[list, list]:
    """The mean \u00b1 sd table (:func:`make_summary_table_frame`): grid columns, rows."""
    df = make_summary_table_frame(result)
    return frame_table(df, {"R": None, **{c: "signed4" for c in df.columns if "\u2212" in c}})


def render(out: Mapping[str, Any], settings: Mapping[str, Any], data, **_) -> tuple:
    """Figure, summary and fit tables, sentences and the partial-result note of a run.

    Raises
    ------
    ValueError
        When Cancel stopped the run before any replicate finished.
    """
    dist = ImportanceDistribution.from_dict({k: v for k, v in out.items() if k != "running"})
    result, kind = dist.result, settings["view"]
    done = result.null.shape[0] if isinstance(result, PermutationNull) else result.n_replicates
    if dist.partial and not done:
        raise ValueError("Cancelled before any replicate finished.")
    figure = make_distribution_figure(result, dist.panels, overlay=dist.overlay, kind=kind)
    sentences = distribution_sentences(
        dist, data_name=data["problem"] if not data.is_upload else (data["file"] or "the upload"),
        method=settings["method"], n_estimators=settings["n_estimators"], kind=kind,
        max_features=settings["max_features"], max_depth=settings["max_depth"])
    note = partial_note(done, result.n_requested, "replicates",
                        running=bool(out.get("running"))) if dist.partial else ""
    return (figure, *summary_table(result), *frame_table(fit_table_frame(dist.fits),
                                                         {"KS p-value": "fixed3"}),
            [html.P(t) for t in sentences],
            note, "vi-notes" if note else "vi-hidden")


def render_sweep(out: Mapping[str, Any], *_, **__) -> tuple:
    """Sweep figure and its note (the view's settings are not needed)."""
    if out.get("parameter") is None:
        figure = placeholder_figure("Choose a parameter to sweep (left).")
        figure.update_layout(height=160)
        return figure, ""
    stats, parameter = from_jsonable(out["stats"]), out["parameter"]
    if out.get("partial") and not len(stats):
        raise ValueError("Cancelled before the first value finished.")
    values = [float(v) for v in out["values"]]
    log_x = parameter in ("n_estimators", "n_samples") and min(values) > 0 and \
        max(values) / min(values) >= 10
    note = sweep_note(parameter)
    if out.get("running"):
        note = "Partial result: the first values so far; more are coming. " + note
    elif out.get("partial"):
        note = "Partial result (cancelled). " + note
    return make_sweep_figure(stats, parameter, log_x=log_x), note


def csv_text(what: str, out: Mapping[str, Any]) -> str:
    """CSV of the ``"summary"`` table, the ``"replicates"`` or the ``"sweep"`` statistics.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "sweep":
        if out.get("parameter") is None:
            raise ValueError("There is no sweep to download yet.")
        df = from_jsonable(out["stats"])
        df.insert(0, "parameter", out["parameter"])
        return safe_csv(df)
    return safe_csv(distribution_csv_frame(ImportanceDistribution.from_dict(out), what))


RUN = ParamSet(PREFIX, [
    Param("mode", "Replicates", "choice", "samples",
          choices=lambda c: mode_options(c.extra.get("data")), what="replicate kind"),
    Param("method", "Method", "choice", "forest", choices=studies.METHOD_OPTIONS),
    Param("n_replicates", "Replicates R", default=100, key="R", low=1,
          high=lambda c: cap("R"), what="number of replicates R"),
    Param("n_samples", "Samples N", default=500, key="N", low=1, high=lambda c: cap("N"),
          blank="all rows", what="sample size N"),
    Param("n_estimators", "Trees T", default=50, key="T", low=1,
          high=lambda c: cap("T"), what="number of trees T"),
    Param("max_features", "K", default=1, key="K", low=1, high=lambda c: c.p or 100_000),
    Param("max_depth", "Max depth", default=None, key="depth", low=1, blank="full",
          what="maximum depth"),
    seed_param("mc_seed"),
    Param("view", "View", "choice", "histogram",
          choices=[("histogram", "Histograms with fits"), ("violin", "Violins")]),
])
SWEEPS = ParamSet(SWEEP, [
    Param("parameter", "Parameter", "choice", "n_estimators", key="sweep", control="dropdown",
          choices=lambda c: sweep_options(c.extra.get("data"), c.extra.get("mode")),
          what="swept parameter"),
    Param("values", "Values", "text", "", blank="e.g. 1, 10, 50", what="sweep values",
          help=lambda c: f"Comma-separated, at most {cap('values')}; every value is a "
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
        **forest_options(s, progress, what))
    return dist.lean_dict()


def compute(settings, data: DataChoice, progress, data_store=None) -> dict:
    n = replicate_rows(settings, data)
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
    n = replicate_rows(run, data)
    check_sweep(parameter, run["mode"], problem_options(data))
    values = parse_values(settings["values"], parameter, p=data.n_features())
    R = run.pop("n_replicates")
    check_tree_budget(sweep_trees(parameter, values, n_replicates=R,
                                  n_estimators=run["n_estimators"]), cap("total"))

    def study() -> dict:
        kwargs = forest_options({**run, "n_replicates": R}, progress, "replicates")
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
               render=render, outputs=[
                   ("dist-graph", "figure"), ("dist-table", "columnDefs"), ("dist-table", "rowData"),
                   ("dist-fit-table", "columnDefs"), ("dist-fit-table", "rowData"),
                   ("dist-summary", "children"), ("dist-partial", "children"),
                   ("dist-partial", "className")],
               disable=["dist-fieldset", "dist-problem", "dist-download-summary",
                        "dist-download-replicates"])
SWEEP_VIEW = JobView(SWEEP, SWEEPS, compute=compute_sweep, render=render_sweep, partial=True,
                     data_store="dist-data", outputs=[("dist-sweep-graph", "figure"),
                                                      ("dist-sweep-note", "children")],
                     extra=[DATA, *((n, Input(RUN.id(n), "value")) for n in RUN_NAMES)],
                     disable=["dist-sweep-fieldset", "dist-sweep-download"])
VIEW.register()
SWEEP_VIEW.register()
state.register_url_sync(PREFIX)


def make_csv(what: str):
    """The download of ``what`` (:meth:`JobView.register_downloads`)."""
    return lambda out, s, data, **_: (csv_text(what, out), csv_filename(
        "distributions", data, out["mode"], what))


VIEW.register_downloads({"dist-download-summary": make_csv("summary"),
                         "dist-download-replicates": make_csv("replicates")})
SWEEP_VIEW.register_downloads({"dist-sweep-download": make_csv("sweep")}, "dist-download",
                              "dist-sweep-download-note")


def initial_values(query, data: DataChoice) -> tuple[dict, dict, list[str], str]:
    """The controls of a fresh page: the link's values (with notes), else the data's defaults."""
    ctx = Context(p=data.n_features(), extra={"data": data})
    run, notes = RUN.from_url(query, ctx)
    if "mode" not in query or run["mode"] not in allowed(mode_options(data)):
        run["mode"] = default_mode(data)
    if "N" not in query and run["mode"] != "samples" and not studies.is_exact(data):
        run["n_samples"] = None  # the table's own size
    scaled = studies.scale_replicates(run, "n_replicates", query, data, run["n_samples"],
                                      "replicates")
    sctx = Context(p=ctx.p, extra={"data": data, "mode": run["mode"]})
    sweep, more = SWEEPS.from_url(query, sctx)
    if sweep["parameter"] not in allowed(sweep_options(data, run["mode"])):
        sweep["parameter"] = "none"
    sweep["values"], bad = link_values(query, sweep["parameter"], ctx.p)
    return run, sweep, notes + more + bad, scaled


def layout(vi_data=None, **query):
    data, notes = DataChoice.from_page(query, vi_data)
    run, sweep, more, scaled = initial_values(query, data)
    ctx = Context(p=data.n_features(), extra={"data": data, "mode": run["mode"]})
    f = {**dict(zip(RUN.names, RUN.fields(run, ctx))),
         **dict(zip(SWEEPS.names, SWEEPS.fields(sweep, ctx)))}
    row = lambda *kids: html.Div(kids, className="vi-row")  # noqa: E731
    controls = [html.Fieldset(id="dist-fieldset", className="vi-fieldset", children=[
        ui.card("Data", studies.problem_field(PREFIX, data),
                html.P(description(data), id="dist-problem-help", className="vi-help"),
                f["mode"]),
        ui.card("Forests", f["method"], row(f["n_replicates"], f["n_samples"]),
                row(f["n_estimators"], f["max_features"]),
                row(f["max_depth"], f["random_state"]),
                html.P("N: rows per data set (blank: the data's size for the bootstrap). K: "
                       "variables drawn at each node. The seed fixes every replicate.",
                       className="vi-help"),
                html.P(scaled, className="vi-help"),
                html.P(caps_text(), id="dist-caps", className="vi-help"))]),
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
                    grid("dist-table", page_size=20),
                    studies.buttons("dist-download-note",
                                    ("Download table (CSV)", "dist-download-summary"),
                                    ("Download replicates (CSV)", "dist-download-replicates"))),
            ui.card("Goodness of fit",
                    grid("dist-fit-table", page_size=20),
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
    modes = mode_options(data)
    mode = mode if mode in allowed(modes) else default_mode(data)
    sweeps = sweep_options(data, mode)
    drawn = mode == "samples" or studies.is_exact(data)
    return (modes, mode, description(data), "" if drawn else "all rows", sweeps,
            no_update if parameter in allowed(sweeps) else "none")


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
