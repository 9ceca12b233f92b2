"""Dependence page: Friedman's partial dependence with ICE, and Ciss's dependence over responses."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import dependence_logic as logic
from pages._ui import local_forest as forest
from pages._ui import jobs, state
from pages._ui.page_frame import (figure_config, job_outputs, page_frame, register_csv_downloads,
                                  store_job)

dash.register_page(__name__, path="/dependence", name="Dependence", order=6,
                   title="varimp \u2014 Dependence")

PREFIX = logic.PREFIX
state.register_url_sync(PREFIX)

_FOREST = [f"{PREFIX}-{n}" for n in ("forest", "trees", "k", "tree-seed", "rows")]
_PD = [f"{PREFIX}-{n}" for n in ("feature", "feature2", "grid", "percentiles", "ice")]
_VIEW = [f"{PREFIX}-{n}" for n in ("label", "positions")]
NONE = "none"


def _graph(name: str, height: str, hidden: bool = False) -> html.Div:
    return html.Div(dcc.Graph(id=f"{PREFIX}-{name}", figure=forest.placeholder_figure(),
                              config=figure_config(f"{PREFIX}-{name}"), className="vi-figure",
                              style={"height": height}),
                    id=f"{PREFIX}-{name}-wrap", className="vi-hidden" if hidden else "")


def layout(vi_data=None, **query):
    st = logic.initial_state(query, vi_data)
    v, variables = st["values"], st["variables"]
    notes = list(st["notes"])
    if st["data_error"]:
        notes.append(st["data_error"])
    options = [{"label": name, "value": name} for name in variables]
    choose = ui.card(
        "Variables",
        ui.field("Variable", dcc.Dropdown(id=f"{PREFIX}-feature", options=options,
                                          value=v["feature"], clearable=False,
                                          className="vi-dropdown")),
        ui.field("Second variable (2-D)", dcc.Dropdown(
            id=f"{PREFIX}-feature2", options=[{"label": "none", "value": NONE}] + options,
            value=v["feature2"] or NONE, clearable=False, className="vi-dropdown"),
            help="A second variable adds its own curves and the 2-D partial dependence."),
    )
    grid_card = ui.card(
        "Partial dependence",
        ui.field("Grid resolution", ui.number_input(f"{PREFIX}-grid", v["grid"], min=2,
                                                    max=logic.MAX_GRID),
                 help=f"Grid points per variable (at most {logic.MAX_GRID_2D} per axis in "
                      "2-D); fewer when the variable has fewer distinct values."),
        ui.field("Percentiles of the grid", dcc.RangeSlider(
            id=f"{PREFIX}-percentiles", min=0, max=1, step=0.01,
            value=[v["low"], v["high"]], allowCross=False,
            marks={0: "0", 0.25: "25%", 0.5: "50%", 0.75: "75%", 1: "100%"},
            tooltip={"placement": "bottom"}),
            help="The grid spans these percentiles of the variable's values."),
        ui.field("ICE lines", ui.number_input(f"{PREFIX}-ice", v["ice"], min=0,
                                              max=logic.MAX_ICE),
                 help="Individual curves of a seeded subset of the rows; 0 draws none."),
    )
    view_card = ui.card(
        "View",
        ui.field("Class", dcc.Dropdown(id=f"{PREFIX}-label", options=[], value=v["label"],
                                       clearable=False, searchable=False,
                                       className="vi-dropdown"),
                 id=f"{PREFIX}-label-field", className="vi-hidden",
                 help="Partial dependence of the predicted probability of this class."),
        ui.field("Dependence over responses: the variable at position", dcc.RadioItems(
            id=f"{PREFIX}-positions", options=logic.POSITION_OPTIONS, value=v["positions"],
            className="vi-radio")),
    )
    return page_frame(
        PREFIX, title="Dependence", notes=notes,
        lead="Two different answers to \u201chow do the predictions depend on this "
             "variable?\u201d. Friedman's partial dependence sets the variable to each grid "
             "value in every row and averages the forest's answers (ICE lines: one row "
             "each), so it also asks about rows that never occur. Ciss's dependence over "
             "responses sets nothing: it plots the observed values against the forest's "
             "predictions, for the observations where the variable is locally important.",
        stores=forest.page_stores(PREFIX, st),
        controls=[
            html.Fieldset([choose, grid_card], id=f"{PREFIX}-fieldset", className="vi-fieldset"),
            view_card,
            html.Fieldset(forest.forest_cards(PREFIX, v, forest.SKLEARN_KINDS),
                          id=f"{PREFIX}-forest-fieldset", className="vi-fieldset"),
        ],
        content=[
            html.Div(id=f"{PREFIX}-messages", className="vi-hidden", role="status"),
            ui.card("Partial dependence and ICE (Friedman)",
                    _graph("pd", "420px"), _graph("pd-b", "420px", hidden=True),
                    html.P("Thick line: the partial dependence, the average over all rows "
                           "of their ICE lines; thin lines: the ICE lines of a seeded "
                           "subset of the rows.", className="vi-help"),
                    html.P(id=f"{PREFIX}-summary", className="vi-description"),
                    html.Button("Download partial dependence (CSV)",
                                id=f"{PREFIX}-download-pd", n_clicks=0,
                                className="vi-button vi-button-secondary",
                                style={"marginTop": "0.75rem"})),
            ui.card("2-D partial dependence", _graph("pd2", "480px"),
                    id=f"{PREFIX}-pd2-card", className="vi-hidden"),
            ui.card("Dependence over responses (Ciss) \u2014 not a partial dependence",
                    _graph("dor", "420px"), _graph("dor-b", "420px", hidden=True),
                    html.P("Each point is an observation: its observed value and the "
                           "forest's prediction, kept when the variable stands at the "
                           "chosen position of its local importance.", className="vi-help"),
                    html.Button("Download dependence over responses (CSV)",
                                id=f"{PREFIX}-download-dor", n_clicks=0,
                                className="vi-button vi-button-secondary",
                                style={"marginTop": "0.75rem"})),
        ])


def _settings(forest_kind, trees, k, seed, rows, feature, feature2, grid, percentiles, ice):
    settings = forest.forest_settings(forest=forest_kind, trees=trees, K=k, tree_seed=seed,
                                      rows=rows, kinds=forest.SKLEARN_KINDS)
    low, high = (percentiles or [None, None])[:2]
    dep = logic.dependence_settings(feature=feature,
                                    feature2=None if feature2 == NONE else feature2,
                                    grid=grid, low=low, high=high, ice=ice)
    return settings, dep


@callback(*job_outputs(PREFIX), *(Input(i, "value") for i in _FOREST + _PD),
          State(f"{PREFIX}-page-data", "data"), State(f"{PREFIX}-current", "data"),
          **jobs.background_options(PREFIX, disable=[
              f"{PREFIX}-fieldset", f"{PREFIX}-forest-fieldset", f"{PREFIX}-download-pd",
              f"{PREFIX}-download-dor"]))
def compute(set_progress, *values):
    *controls, data, shown = values
    return store_job(set_progress, shown, lambda progress: logic.compute(
        data, *_settings(*controls), progress=progress))


_DRAWN = [("pd", "figure"), ("pd", "style"), ("pd-b", "figure"), ("pd-b", "style"),
          ("pd-b-wrap", "className"), ("pd2", "figure"), ("pd2-card", "className"),
          ("dor", "figure"), ("dor-b", "figure"), ("dor-b-wrap", "className"),
          ("messages", "children"), ("messages", "className"), ("summary", "children"),
          ("label", "options"), ("label", "value"), ("label-field", "className")]


@callback(*(Output(f"{PREFIX}-{name}", prop) for name, prop in _DRAWN),
          Input(f"{PREFIX}-current", "data"), *(Input(i, "value") for i in _VIEW))
def draw(store, label, positions):
    if not store:
        return [no_update] * 16
    if store.get("error"):
        empty = forest.placeholder_figure("No figure for these settings; see the message above.")
        return [empty, no_update, empty, no_update, "vi-hidden", empty, "vi-card vi-hidden",
                empty, empty, "vi-hidden", [], "vi-hidden", ""] + [no_update] * 3
    try:
        out = logic.draw(store, label, positions)
    except ValueError as exc:
        return [no_update] * 10 + [jobs.error_message(exc), "vi-error"] + [no_update] * 4
    two = len(out["pd"]) > 1
    empty = forest.placeholder_figure("")
    messages = [html.P(m) for m in dict.fromkeys(out["messages"] + store.get("notes", []))]
    classification = bool(store.get("classes"))
    s = store["settings"]
    summary = (f"{forest.FOREST_NAMES[s['forest']].capitalize()} of {s['trees']:,} "
               f"tree{'s' if s['trees'] != 1 else ''}; partial dependence averaged over "
               f"{store['n_pd']:,} {'held-out' if s['rows'] == 'test' else 'training'} rows.")
    heights = [{"height": f"{h}px"} for h in out["pd_heights"]]
    return (out["pd"][0], heights[0], out["pd"][1] if two else empty,
            heights[1] if two else no_update,
            "" if two else "vi-hidden",
            out["pd2"] if out["pd2"] is not None else empty,
            "vi-card" if out["pd2"] is not None else "vi-card vi-hidden",
            out["dor"][0], out["dor"][1] if two else empty, "" if two else "vi-hidden",
            messages, "vi-notes" if messages else "vi-hidden", summary,
            logic.class_options(store), no_update if out["label"] == label else out["label"],
            "vi-field" if classification else "vi-field vi-hidden")


@callback(Output(f"{PREFIX}-query", "data"), *(Input(i, "value") for i in _FOREST + _PD + _VIEW),
          State(f"{PREFIX}-data-params", "data"), prevent_initial_call=True)
def sync_url(*values):
    *controls, label, positions, data = values
    try:
        settings, dep = _settings(*controls)
    except ValueError:
        return no_update
    values = {**settings, "feature": dep["feature"], "feature2": dep["feature2"],
              "grid": dep["grid"], "low": dep["percentiles"][0], "high": dep["percentiles"][1],
              "ice": dep["ice"], "label": label, "positions": positions}
    return logic.page_query(data, values)


register_csv_downloads(PREFIX, {
    f"{PREFIX}-download-pd": lambda store, positions: (
        logic.pd_csv(store), logic.csv_filename(store, "partial-dependence")),
    f"{PREFIX}-download-dor": lambda store, positions: (
        logic.dor_csv(store, positions),
        logic.csv_filename(store, "dependence-over-responses")),
}, view=f"{PREFIX}-positions")
