"""Dependence page: Friedman's partial dependence with ICE, and Ciss's dependence over responses.

What the Dependence page shows: its figures and CSV exports, from the cached results.

Two different answers to "how do the predictions depend on this input?":
Friedman's partial dependence with ICE lines (the forest is asked about rows
whose input is *set* to each grid value, and the answers are averaged), and
Ciss's dependence over responses (the observed values of the input against the
forest's predictions, where the input is locally important; nothing is set or
averaged).  Figures come from :mod:`varimp_core.plots.dependence`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

import dash
import pandas as pd
from dash import dcc, html, no_update

from pages._framework import controls as ui
from pages._framework import local_forest as forest
from pages._framework import state
from pages._framework.common import placeholder_figure
from pages._framework.local_forest import FOREST_NAMES, cached_entry, load_local
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                         register_csv_downloads)
from pages._framework.params import Context, Param, ParamSet, sentence
from pages._framework.view import JobView
from varimp_core.csvtext import csv_filename as common_csv_filename
from varimp_core.csvtext import safe_csv
from varimp_core.local.heldout import heldout_partial_dependences
from varimp_core.local.partial_dependence import PartialDependence
from varimp_core.local.response_dependence import dependence_frame, dependence_over_responses
from varimp_core.plots.dependence import (make_dependence_over_responses, make_pd2_figure,
                                          make_pd_figure)
from varimp_core.plots.style import variable_color

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


ALL_CLASSES = "all"
#: Rows averaged by a partial dependence (a seeded subset of the assessed rows beyond it).
MAX_PD_ROWS = 1000
#: Grid points per axis of a 2-D partial dependence (the cost grows with the square).
MAX_GRID_2D = 20
#: The positions choice of the dependence over responses, as the core reads it.
POSITIONS = {"1": 1, "12": [1, 2], "all": "all"}
#: What the page draws: ``dep-<name>``'s property, in the order of :func:`outputs`.
OUTPUTS = [("pd", "figure"), ("pd", "style"), ("pd-b", "figure"), ("pd-b", "style"),
           ("pd-b-wrap", "className"), ("pd2", "figure"), ("pd2-card", "className"),
           ("dor", "figure"), ("dor-b", "figure"), ("dor-b-wrap", "className"),
           ("messages", "children"), ("messages", "className"), ("summary", "children"),
           ("label", "options"), ("label", "value"), ("label-field", "className")]


def features(settings: Mapping[str, Any]) -> list[str]:
    """The variable, and the second one when chosen."""
    return [settings["feature"]] + ([settings["feature2"]] if settings["feature2"] else [])


def class_options(classes) -> list[dict]:
    """Class choices for the partial dependence: every class, or all of them side by side."""
    if not classes:
        return []
    return [{"label": "All classes (one panel each)", "value": ALL_CLASSES}] + [
        {"label": f"Class {c}", "value": c} for c in classes]


def default_class(classes, label) -> str | None:
    """``label`` when valid; else the positive class of a binary target, or all classes."""
    if not classes:
        return None
    if label == ALL_CLASSES or label in classes:
        return label
    return classes[-1] if len(classes) == 2 else ALL_CLASSES


def _over_responses(local, rows, feature: str, positions: str):
    """Ciss's dependence over responses of ``feature``, its observations as data rows."""
    r = dependence_over_responses(local, feature, positions=POSITIONS[positions])
    return replace(r, observation=rows[r.observation])


def draw(store: Mapping[str, Any], label=None, positions="all") -> dict:
    """Figures of a computed store.

    ``label`` is the class whose partial dependence is drawn (or
    :data:`ALL_CLASSES`); ``positions`` (a key of :data:`POSITIONS`) those at
    which a variable must stand for an observation to enter the dependence over
    responses.

    Returns
    -------
    out : dict
        ``pd`` and ``dor`` (lists of figures, one per variable), ``pd_heights``
        (pixels each PD figure needs: more rows of panels for many classes), ``pd2``
        (figure or None), ``messages`` (sentences about parts that could not
        be drawn), ``label`` (the class shown).
    """
    result = cached_entry(store["result"])
    asked, label = label, default_class(store["classes"], label)
    out: dict[str, Any] = {"pd2": None, "messages": [], "label": label}
    if store["classes"] and asked not in (None, label):  # a link's class, or a former data's
        out["messages"].append(
            f"Class {asked!r} is not a class of this target (its classes: "
            f"{', '.join(map(str, store['classes']))}); showing "
            f"{'all classes' if label == ALL_CLASSES else f'class {label}'} instead.")
    outputs = None if label in (None, ALL_CLASSES) else label
    variables = list(store["variables"])

    def color(f):
        return variable_color(variables.index(f)) if f in variables else None

    def figure(make):
        try:
            return make()
        except ValueError as exc:
            out["messages"].append(sentence(exc))
            return placeholder_figure(sentence(exc))

    pds = [PartialDependence.from_dict(r) for r in result["pd"]]
    ticks = {f: dict(map(tuple, v["ticks"])) for f, v in store.get("labels", {}).items()}
    out["pd"] = [figure(lambda: make_pd_figure(r, outputs=outputs, color=color(r.features[0]),
                                               value_ticks=ticks.get(r.features[0])))
                 for r in pds]
    if result["pair"] is not None:
        pair = PartialDependence.from_dict(result["pair"])
        out["pd2"] = figure(lambda: make_pd2_figure(pair, output=outputs))
    local, rows = load_local(store["local"])
    out["dor"] = [figure(lambda: make_dependence_over_responses(
        _over_responses(local, rows, f, positions), classes=local.classes, color=color(f),
        value_labels=ticks.get(f)))
        for f in features(store["settings"])]
    out["pd_heights"] = [int(fig.layout.height or 420) for fig in out["pd"]]
    for fig in [*out["pd"], *out["dor"], *([] if out["pd2"] is None else [out["pd2"]])]:
        fig.update_layout(height=None)  # the page sizes the graphs
    return out


def notes(store: Mapping[str, Any]) -> list[str]:
    """Sentences on what the partial dependences leave out, to stay fast."""
    s, out = store["settings"], []
    if store["n"] > store["n_pd"]:
        out.append(f"Partial dependences average over {MAX_PD_ROWS:,} of the {store['n']:,} "
                   "rows assessed (a seeded subset), to stay fast.")
    if s["feature2"] and s["grid_resolution"] > MAX_GRID_2D:
        out.append(f"The 2-D partial dependence uses {MAX_GRID_2D} grid points per variable "
                   "(its cost grows with the square of the grid).")
    return out


def summary_sentence(store: Mapping[str, Any]) -> str:
    """The forest and the rows the partial dependences average over."""
    s, rows = store["settings"], "held-out" if store["settings"]["rows"] == "test" else "training"
    return (f"{FOREST_NAMES[s['forest']].capitalize()} of {s['n_estimators']:,} "
            f"tree{'s' if s['n_estimators'] != 1 else ''}; partial dependence averaged over "
            f"{store['n_pd']:,} {rows} rows.")


def outputs(store: Mapping[str, Any] | None, shown: Mapping[str, Any]) -> list:
    """The values of :data:`OUTPUTS` for a computed store (None: the job failed).

    ``shown`` holds the view's ``label`` and ``positions`` (:func:`draw`); the class
    control is left alone when it already shows the class drawn.
    """
    if not store:  # the first job failed: its sentence is above
        empty = placeholder_figure("No figure for these settings; see the message above.")
        return [empty, no_update, empty, no_update, "vi-hidden", empty, "vi-card vi-hidden",
                empty, empty, "vi-hidden", [], "vi-hidden", ""] + [no_update] * 3
    out = draw(store, shown["label"], shown["positions"])
    two, empty = len(out["pd"]) > 1, placeholder_figure("")
    messages = [html.P(m) for m in dict.fromkeys(out["messages"] + notes(store))]
    heights = [{"height": f"{h}px"} for h in out["pd_heights"]]
    return [out["pd"][0], heights[0], out["pd"][1] if two else empty,
            heights[1] if two else no_update, "" if two else "vi-hidden",
            empty if out["pd2"] is None else out["pd2"],
            "vi-card vi-hidden" if out["pd2"] is None else "vi-card",
            out["dor"][0], out["dor"][1] if two else empty, "" if two else "vi-hidden",
            messages, "vi-notes" if messages else "vi-hidden", summary_sentence(store),
            class_options(store["classes"]),
            no_update if out["label"] == shown["label"] else out["label"],
            "vi-field" if store["classes"] else "vi-field vi-hidden"]


def pd_csv(store: Mapping[str, Any]) -> str:
    """CSV of the partial dependences drawn (averages; 1-D and 2-D rows stacked)."""
    result = cached_entry(store["result"])
    frames = [PartialDependence.from_dict(d).to_frame()
              for d in result["pd"] + ([result["pair"]] if result["pair"] else [])]
    return safe_csv(pd.concat(frames, ignore_index=True))


def dor_csv(store: Mapping[str, Any], positions="all") -> str:
    """CSV of the dependence over responses: one row per (variable, observation) drawn."""
    local, rows = load_local(store["local"])
    names = {f: dict(map(tuple, v["names"])) for f, v in store.get("labels", {}).items()}
    return safe_csv(dependence_frame(local, features(store["settings"]), rows=rows,
                                     positions=POSITIONS[positions], value_names=names))


def csv_filename(store: Mapping[str, Any], what: str) -> str:
    """``varimp-dependence-<data>-<variables>-<what>.csv`` with only safe characters."""
    return common_csv_filename("dependence", store["data"], *features(store["settings"]),
                                     what)


#: What the job computes on: the forest, the variables and the grid.
PARAMS = ParamSet(PREFIX, [
    *forest.forest_params(forest.SKLEARN_KINDS),
    Param("feature", "Variable", "text", None, choices=_variables, control="dropdown",
          what="a variable", blank="The most informative alone",
          help="Blank: the input most informative alone (plug-in I(X; Y)), ranked by the job."),
    SecondVariable("feature2", "Second variable (2-D)", "text", None, blank="",
                   check=lambda text: None if text == NONE else text, control="dropdown",
                   choices=lambda c: [(NONE, "none"), *_variables(c)],
                   help="A second variable adds its own curves and the 2-D partial dependence."),
    Param("grid_resolution", "Grid resolution", default=30, key="grid", low=2, high=MAX_GRID,
          help=f"Grid points per variable (at most {MAX_GRID_2D} per axis in 2-D); "
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

    They average over at most ``MAX_PD_ROWS`` assessed rows, a pair over at most
    ``MAX_GRID_2D`` grid points per axis (:func:`heldout_partial_dependences`).
    """
    load = forest.make_forest_loader(data, settings, progress)
    out = forest.local_view(data, settings, load, progress)
    settings = chosen_feature(settings, data)
    chosen = features(settings)
    for f in chosen:
        if f not in out["variables"]:
            raise ValueError(f"This data has no input {f!r}; choose one of its variables.")
    if settings["feature2"] == settings["feature"]:
        raise ValueError("Choose two different variables for the 2-D partial dependence "
                         "(or no second variable).")
    fitted, n = load(), min(out["n"], MAX_PD_ROWS)
    todo = [*chosen, " and ".join(chosen)] if len(chosen) == 2 else chosen

    def report(done, total):
        progress(done, total, "" if done == total else
                 f"Partial dependence on {todo[done]} over {n:,} rows\u2026")

    report(0, len(todo))
    pds = [r.to_dict() for r in heldout_partial_dependences(
        fitted["prepared"], fitted["estimator"], fitted["assessed"], chosen,
        grid_resolution=settings["grid_resolution"], percentiles=settings["percentiles"],
        max_ice_lines=settings["max_ice_lines"], max_grid_2d=MAX_GRID_2D,
        max_rows=MAX_PD_ROWS, random_state=settings["random_state"], progress=report)]
    return {**out, "pd": pds[:len(chosen)], "pair": pds[2] if len(pds) == 3 else None,
            "n_pd": n, "feature": settings["feature"]}


def chosen_feature(settings: Mapping[str, Any], data) -> dict:
    """``settings`` with the variable chosen: a link that names none opens on the input most
    informative alone (plug-in I(X; Y), :func:`~pages._framework.local_forest.ranked_variables`),
    ranked here in the job, where the data is loaded, and cached for the next visit."""
    if settings["feature"] is not None:
        return dict(settings)
    ranked = [v for v in forest.ranked_variables(data) if v != settings["feature2"]]
    if not ranked:
        raise ValueError("Choose a variable: this data has no input to show.")
    return {**settings, "feature": ranked[0]}


def render(out, settings, data) -> tuple:
    """The page's store: where the result is cached (under the settings asked for), and what
    the figures need besides, with the settings drawn (the variable the job chose)."""
    drawn = {**settings, "feature": out.get("feature", settings["feature"])}
    return ({**{k: v for k, v in out.items() if k not in ("pd", "pair")}, "settings": drawn,
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

    ``feature`` defaults to the input most informative alone (plug-in I(X; Y)) when the
    data's ranking is cached; else it stays None and the job chooses it
    (:func:`chosen_feature`).  Unknown variables and unusable percentiles in the link are
    dropped with a note.
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
    if values["feature"] is None and variables:  # the most informative input alone
        try:  # when already ranked: ranking loads the data, which is the job's work (#27.4)
            ranked = forest.ranked_variables(st["page"], compute=False)
        except ValueError:
            ranked = []
        if ranked is not None:
            values["feature"] = ([v for v in ranked if v in variables] or variables)[0]
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


forest.register_view(PREFIX, PARAMS, DISPLAY, page_query, OUTPUTS, outputs,
                     lambda message: [no_update] * 10 + [message, "vi-error"] + [no_update] * 4)


register_csv_downloads(PREFIX, {
    f"{PREFIX}-download-pd": lambda store, positions: (
        pd_csv(store), csv_filename(store, "partial-dependence")),
    f"{PREFIX}-download-dor": lambda store, positions: (
        dor_csv(store, DISPLAY.by_name["positions"].parse(positions, Context())),
        csv_filename(store, "dependence-over-responses")),
}, view=DISPLAY.id("positions"))
