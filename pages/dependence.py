"""Dependence page: Friedman's partial dependence with ICE, and Ciss's dependence over responses."""

from __future__ import annotations

from dataclasses import dataclass

import dash
from dash import dcc, html, no_update

from pages._framework import controls as ui
from pages import dependence_render as draw
from pages._framework import local_forest as forest
from pages._framework import state
from pages._framework.common import placeholder_figure
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                   register_csv_downloads)
from pages._framework.params import Context, Param, ParamSet, sentence
from pages._framework.view import JobView
from varimp_core.local.heldout import heldout_partial_dependences

dash.register_page(__name__, path="/dependence", name="Dependence", order=6,
                   title="varimp \u2014 Dependence")

PREFIX = "dep"
MAX_GRID = 200
MAX_ICE = 500
NONE = "none"
POSITION_OPTIONS = [("1", "1st"), ("12", "1st or 2nd"), ("all", "any")]


@dataclass(frozen=True)
class SecondVariable(Param):
    """A variable, or "none" (None in the settings), which its dropdown shows as "none"."""

    def control_value(self, value):
        return NONE if value is None else value


@dataclass(frozen=True)
class Percentiles(Param):
    """The grid's span, ``[low, high]`` from a range slider (links write ``low`` and ``high``)."""

    def parse(self, raw, ctx):
        try:
            low, high = (float(v) for v in raw)
        except (TypeError, ValueError):
            raise ValueError("The percentiles must be numbers from 0 to 1.") from None
        if not 0 <= low < high <= 1:
            raise ValueError(f"The percentiles must satisfy 0 \u2264 low < high \u2264 1, got "
                             f"{low:g} and {high:g}.")
        return [round(low, 4), round(high, 4)]

    def component(self, cid, value, ctx):
        return dcc.RangeSlider(id=cid, min=0, max=1, step=0.01, value=value, allowCross=False,
                               marks={0: "0", 0.25: "25%", 0.5: "50%", 0.75: "75%", 1: "100%"},
                               tooltip={"placement": "bottom"})


def _variables(ctx: Context) -> list:
    return [(v, v) for v in ctx.extra.get("variables", ())]


#: What the job computes on: the forest, the variables and the grid.
PARAMS = ParamSet(PREFIX, [
    *forest.forest_params(forest.SKLEARN_KINDS),
    Param("feature", "Variable", "text", None, choices=_variables, control="dropdown",
          what="a variable"),
    SecondVariable("feature2", "Second variable (2-D)", "text", None, blank="",
                   check=lambda text: None if text == NONE else text, control="dropdown",
                   choices=lambda c: [(NONE, "none"), *_variables(c)],
                   help="A second variable adds its own curves and the 2-D partial dependence."),
    Param("grid_resolution", "Grid resolution", default=30, key="grid", low=2, high=MAX_GRID,
          help=f"Grid points per variable (at most {draw.MAX_GRID_2D} per axis in 2-D); "
               "fewer when the variable has fewer distinct values."),
    Percentiles("percentiles", "Percentiles of the grid", "float", [0.05, 0.95],
                help="The grid spans these percentiles of the variable's values."),
    Param("max_ice_lines", "ICE lines", default=50, key="ice", low=0, high=MAX_ICE,
          help="Individual curves of a seeded subset of the rows; 0 draws none."),
])
#: How the result is shown: cheap to change, nothing is recomputed.
DISPLAY = ParamSet(PREFIX, [
    Param("label", "Class", "text", None, blank="", control="dropdown", what="class",
          help="Partial dependence of the predicted probability of this class."),
    Param("positions", "Dependence over responses: the variable at position", "choice", "all",
          choices=POSITION_OPTIONS, what="positions"),
])


def compute(settings, data, progress) -> dict:
    """Fit, count local importance (cached) and compute the partial dependences.

    They average over at most ``draw.MAX_PD_ROWS`` assessed rows, a pair over at most
    ``draw.MAX_GRID_2D`` grid points per axis (:func:`heldout_partial_dependences`).
    """
    load = forest.make_forest_loader(data, settings, progress)
    out = forest.local_view(data, settings, load, progress)
    features = draw.features(settings)
    for f in features:
        if f not in out["variables"]:
            raise ValueError(f"This data has no input {f!r}; choose one of its variables.")
    if settings["feature2"] == settings["feature"]:
        raise ValueError("Choose two different variables for the 2-D partial dependence "
                         "(or no second variable).")
    fitted, n = load(), min(out["n"], draw.MAX_PD_ROWS)
    todo = [*features, " and ".join(features)] if len(features) == 2 else features

    def report(done, total):
        progress(done, total, "" if done == total else
                 f"Partial dependence on {todo[done]} over {n:,} rows\u2026")

    report(0, len(todo))
    pds = [r.to_dict() for r in heldout_partial_dependences(
        fitted["prepared"], fitted["estimator"], fitted["assessed"], features,
        grid_resolution=settings["grid_resolution"], percentiles=settings["percentiles"],
        max_ice_lines=settings["max_ice_lines"], max_grid_2d=draw.MAX_GRID_2D,
        max_rows=draw.MAX_PD_ROWS, random_state=settings["random_state"], progress=report)]
    return {**out, "pd": pds[:len(features)], "pair": pds[2] if len(pds) == 3 else None,
            "n_pd": n}


def render(out, settings, data) -> tuple:
    """The page's store: where the result is cached, and what the figures need besides."""
    return ({**{k: v for k, v in out.items() if k not in ("pd", "pair")}, "settings": settings,
             "result": VIEW.key(data, settings, {}), "data": data.as_dict},)


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store="dep-data",
               outputs=[("dep-current", "data")], what="The figures",
               requires=lambda out: [out["local"]],
               disable=["dep-fieldset", "dep-forest-fieldset", "dep-download-pd",
                        "dep-download-dor"])
VIEW.register()
state.register_url_sync(PREFIX)


def page_query(store, settings, shown) -> str:
    """The page's link: the user's data choice, the settings, the view (``low`` and ``high``)."""
    low, high = settings["percentiles"]
    return forest.link(store.get("query", ""), PARAMS.query({**settings, "percentiles": None}),
                       f"low={low:g}&high={high:g}", DISPLAY.query(shown))


def initial_state(query, vi_data=None) -> dict:
    """:func:`pages._framework.local_forest.start`, the data's ``variables``, the link's ``query``.

    ``feature`` defaults to the first input; unknown variables and unusable
    percentiles in the link are dropped with a note.
    """
    st = forest.start(query, vi_data, PARAMS, DISPLAY)
    values, notes = st["values"], st["notes"]
    if "low" in query or "high" in query:
        try:
            values["percentiles"] = PARAMS.by_name["percentiles"].parse(
                [query.get("low", 0.05), query.get("high", 0.95)], st["ctx"])
        except ValueError as exc:
            notes.append(f"The link's percentiles were ignored: {sentence(exc)} Using 0.05 "
                         "and 0.95 instead.")
    try:
        variables = forest.data_variables(st["page"])
    except ValueError as exc:
        variables = []
        notes.append(str(exc))
    for name, what in (("feature", "variable"), ("feature2", "second variable")):
        if values[name] is not None and variables and values[name] not in variables:
            notes.append(f"The link's {what} {values[name]!r} was ignored: this data has no "
                         "input of that name.")
            values[name] = None
    if values["feature"] is None and variables:
        values["feature"] = variables[0]
    if values["feature2"] is not None and values["feature2"] == values["feature"]:
        notes.append(f"The link's second variable {values['feature2']!r} was ignored: it is "
                     "the first variable too; the 2-D partial dependence needs two.")
        values["feature2"] = None
    return {**st, "variables": variables, "query": page_query(st["store"], values, values),
            "ctx": Context(p=st["ctx"].p, extra={"variables": variables})}


def _graph(name: str, height: str, hidden: bool = False) -> html.Div:
    return html.Div(dcc.Graph(id=f"{PREFIX}-{name}", figure=placeholder_figure(),
                              config=figure_config(f"{PREFIX}-{name}"), className="vi-figure",
                              style={"height": height}),
                    id=f"{PREFIX}-{name}-wrap", className="vi-hidden" if hidden else "")


def layout(vi_data=None, **query):
    st = initial_state(query, vi_data)
    f = forest.fields(st, PARAMS, DISPLAY)
    for name in ("feature", "feature2"):  # many inputs: typing a name finds it
        f[name].children[1].searchable = True
    f["label"].className = "vi-field vi-hidden"  # shown for a classification target
    return page_frame(
        PREFIX, title="Dependence", notes=st["notes"], data=st["page"], data_store=st["store"],
        query=st["query"], download=True,
        lead="Two different answers to \u201chow do the predictions depend on this "
             "variable?\u201d. Friedman's partial dependence sets the variable to each grid "
             "value in every row and averages the forest's answers (ICE lines: one row "
             "each), so it also asks about rows that never occur. Ciss's dependence over "
             "responses sets nothing: it plots the observed values against the forest's "
             "predictions, for the observations where the variable is locally important.",
        stores=[dcc.Store(id="dep-current"), *VIEW.stores()],
        controls=[
            html.Fieldset([ui.card("Variables", f["feature"], f["feature2"]),
                           ui.card("Partial dependence", f["grid_resolution"], f["percentiles"],
                                   f["max_ice_lines"])],
                          id=f"{PREFIX}-fieldset", className="vi-fieldset"),
            ui.card("View", f["label"], f["positions"]),
            html.Fieldset(forest.forest_cards(f), id=f"{PREFIX}-forest-fieldset",
                          className="vi-fieldset"),
        ],
        status=[*VIEW.status(), download_note(PREFIX)],
        content=[
            html.Div(id=f"{PREFIX}-messages", className="vi-hidden", role="status"),
            ui.card("Partial dependence and ICE (Friedman)",
                    _graph("pd", "420px"), _graph("pd-b", "420px", hidden=True),
                    html.P("Thick line: the partial dependence, the average over all rows "
                           "of their ICE lines; thin lines: the ICE lines of a seeded "
                           "subset of the rows.", className="vi-help"),
                    html.P(id=f"{PREFIX}-summary", className="vi-description"),
                    download_button(PREFIX, "Download partial dependence (CSV)", "pd")),
            ui.card("2-D partial dependence", _graph("pd2", "480px"),
                    id=f"{PREFIX}-pd2-card", className="vi-hidden"),
            ui.card("Dependence over responses (Ciss) \u2014 not a partial dependence",
                    _graph("dor", "420px"), _graph("dor-b", "420px", hidden=True),
                    html.P("Each point is an observation: its observed value and the "
                           "forest's prediction, kept when the variable stands at the "
                           "chosen position of its local importance.", className="vi-help"),
                    download_button(PREFIX, "Download dependence over responses (CSV)",
                                           "dor")),
        ])


forest.register_view(PREFIX, PARAMS, DISPLAY, page_query, draw.OUTPUTS, draw.outputs,
                     lambda message: [no_update] * 10 + [message, "vi-error"] + [no_update] * 4)


register_csv_downloads(PREFIX, {
    f"{PREFIX}-download-pd": lambda store, positions: (
        draw.pd_csv(store), draw.csv_filename(store, "partial-dependence")),
    f"{PREFIX}-download-dor": lambda store, positions: (
        draw.dor_csv(store, DISPLAY.by_name["positions"].parse(positions, Context())),
        draw.csv_filename(store, "dependence-over-responses")),
}, view=DISPLAY.id("positions"))
