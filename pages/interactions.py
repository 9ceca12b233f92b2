"""Interactions page: Ciss's local importance, what comes first and second, per class."""

from __future__ import annotations

import dash
from dash import Input, Output, State, callback, ctx, dash_table, dcc, html, no_update

from pages._ui import controls as ui
from pages._ui import jobs, state
from pages._ui import interactions_logic as logic
from pages._ui.local_forest import page_stores
from pages._ui.page_frame import (figure_config, job_outputs, page_frame,
                                  register_csv_downloads, store_job, table_style)

dash.register_page(__name__, path="/interactions", name="Interactions", order=5,
                   title="varimp \u2014 Interactions")

PREFIX = logic.PREFIX
state.register_url_sync(PREFIX)

_FOREST = [f"{PREFIX}-{n}" for n in ("forest", "trees", "k", "tree-seed", "rows")]
_VIEW = [f"{PREFIX}-{n}" for n in ("other", "label", "threshold", "direction")]
_PARTS = ("mosaic", "vii", "partial", "over")


def _part(name: str, height: str) -> html.Div:
    """A figure with a message line that replaces it when the view does not apply."""
    return html.Div([
        html.Div(id=f"{PREFIX}-{name}-msg", className="vi-hidden", role="status"),
        html.Div(dcc.Graph(id=f"{PREFIX}-{name}", figure=logic.placeholder_figure(),
                           config=figure_config(f"{PREFIX}-{name}"), className="vi-figure",
                           style={"height": height}),
                 id=f"{PREFIX}-{name}-wrap"),
    ])


def layout(vi_data=None, **query):
    st = logic.initial_state(query, vi_data)
    v = st["values"]
    view_card = ui.card(
        "View",
        ui.field("\u201cOther features\u201d below", dcc.Slider(
            id=f"{PREFIX}-other", min=0, max=logic.MAX_MIN_SHARE, step=0.01,
            value=v["other"],
            marks={0: "0", 0.05: "5%", 0.1: "10%", 0.15: "15%", 0.2: "20%"}),
            help="Variables whose share of positions 1 and 2 is below this are merged into "
                 "one meta-variable in the mosaic."),
        ui.field("Partial importance for the class", dcc.Dropdown(
            id=f"{PREFIX}-label", options=[], value=v["label"], clearable=False,
            searchable=False, className="vi-dropdown"),
            id=f"{PREFIX}-label-field",
            help="Observations the forest predicts as this class."),
        html.Div(id=f"{PREFIX}-threshold-field", className="vi-hidden", children=[
            ui.field("Partial importance for predictions", dcc.RadioItems(
                id=f"{PREFIX}-direction", value=v["direction"], className="vi-radio",
                options=[{"label": "above", "value": "above"},
                         {"label": "at most", "value": "below"}])),
            ui.field("Threshold", ui.number_input(f"{PREFIX}-threshold", v["threshold"],
                                                  step="any", placeholder="median"),
                     help="Blank: the median prediction."),
        ]),
    )
    return page_frame(
        PREFIX, title="Interactions", notes=st["notes"],
        lead="Ciss (2015) follows every observation down every tree and notes the variable "
             "of the node just above its leaf: the last question asked before the answer. "
             "Ranked by how many trees ask it, these give each observation a variable at "
             "position 1, 2, \u2026 Two variables interact when they come first and second "
             "for the same observation. No label is used, only the forest and the rows.",
        stores=page_stores(PREFIX, st),
        controls=[html.Fieldset(logic.forest_cards(PREFIX, v), id=f"{PREFIX}-fieldset",
                                className="vi-fieldset"),
                  view_card],
        content=[
            ui.card("Position 1 \u00d7 position 2",
                    _part("mosaic", "480px"),
                    html.P("Column width: the share of observations with that variable at "
                           "position 1. Within a column, tile heights: which variable "
                           "comes second for them. Click a tile to list its observations.",
                           className="vi-help"),
                    html.P(id=f"{PREFIX}-summary", className="vi-description"),
                    html.Button("Download pairs (CSV)", id=f"{PREFIX}-download-pairs",
                                n_clicks=0, className="vi-button vi-button-secondary",
                                style={"marginTop": "0.75rem"})),
            ui.card("Observations behind a tile",
                    html.P("Click a tile of the mosaic.", id=f"{PREFIX}-tile-caption",
                           className="vi-help"),
                    dash_table.DataTable(
                        id=f"{PREFIX}-tile-table", columns=[], data=[], page_size=10,
                        sort_action="native",
                        **table_style(font_size="0.85rem", padding="0.25rem 0.5rem",
                                      wrap=False))),
            html.Div(style={"display": "grid", "gap": "1rem",
                            "gridTemplateColumns": "repeat(auto-fit, minmax(380px, 1fr))"},
                     children=[
                         ui.card("Importance based on interactions", _part("vii", "400px"),
                                 html.P("Ciss's VII(j,\u00b7): grows with how often the "
                                        "variable is first or second. His formula gives "
                                        "every variable the same floor, 1/(2p) when every "
                                        "observation has two positions, so a variable "
                                        "never first or second sits at that floor.",
                                        className="vi-help"),
                                 html.Button("Download variables (CSV)",
                                             id=f"{PREFIX}-download-variables", n_clicks=0,
                                             className="vi-button vi-button-secondary",
                                             style={"marginTop": "0.75rem"})),
                         ui.card("Partial importance", _part("partial", "400px"),
                                 html.P("Share of the chosen observations with each "
                                        "variable at position 1.", className="vi-help")),
                     ]),
            ui.card("Importance over labels", _part("over", "360px")),
        ])


def _forest(forest, trees, k, seed, rows) -> dict:
    return logic.forest_settings(forest=forest, trees=trees, K=k, tree_seed=seed, rows=rows)


@callback(*job_outputs(PREFIX), *(Input(i, "value") for i in _FOREST),
          State(f"{PREFIX}-page-data", "data"), State(f"{PREFIX}-current", "data"),
          **jobs.background_options(PREFIX, disable=[
              f"{PREFIX}-fieldset", f"{PREFIX}-download-pairs", f"{PREFIX}-download-variables"]))
def compute(set_progress, *values):
    *controls, data, shown = values
    return store_job(set_progress, shown, lambda progress: logic.compute(
        data, _forest(*controls), progress=progress))


@callback(
    *(o for name in _PARTS for o in (Output(f"{PREFIX}-{name}", "figure"),
                                     Output(f"{PREFIX}-{name}-wrap", "className"),
                                     Output(f"{PREFIX}-{name}-msg", "children"),
                                     Output(f"{PREFIX}-{name}-msg", "className"))),
    *(Output(f"{PREFIX}-{name}", prop) for name, prop in (
        ("summary", "children"), ("label", "options"), ("label", "value"),
        ("label-field", "className"), ("threshold-field", "className"),
        ("threshold", "placeholder"))),
    Input(f"{PREFIX}-current", "data"),
    *(Input(i, "value") for i in _VIEW),
)
def draw(store, other, label, threshold, direction):
    n_out = 4 * len(_PARTS) + 6
    if not store:
        return [no_update] * n_out
    if store.get("error"):
        empty = logic.placeholder_figure("No figure for these settings; see the message above.")
        return [empty, "", "", "vi-hidden"] * len(_PARTS) + [""] + [no_update] * 5
    try:
        view = logic.view_settings(other=other, label=label, threshold=threshold,
                                   direction=direction)
        out = logic.draw(store, view)
    except ValueError as exc:
        message = jobs.error_message(exc)
        return [no_update, "vi-hidden", message, "vi-error"] * len(_PARTS) + \
            [no_update] * 6
    parts = []
    for name in _PARTS:
        msg = out[name + "_message"]
        parts += [out[name], "vi-hidden" if msg else "", msg, "vi-notes" if msg else "vi-hidden"]
    classification = store["task"] == "classification"
    options = [{"label": c, "value": c} for c in store["classes"]] if classification else []
    shown = out["label"] if classification else None
    placeholder = f"median: {store['median']:.4g}" if store.get("median") is not None \
        else "median"
    return parts + [out["summary"], options, no_update if shown == label else shown,
                    "vi-field" if classification else "vi-field vi-hidden",
                    "vi-hidden" if classification else "", placeholder]


@callback(Output(f"{PREFIX}-tile-table", "columns"), Output(f"{PREFIX}-tile-table", "data"),
          Output(f"{PREFIX}-tile-caption", "children"), Input(f"{PREFIX}-mosaic", "clickData"),
          Input(f"{PREFIX}-current", "data"), Input(f"{PREFIX}-other", "value"),
          prevent_initial_call=True)
def show_tile(click, store, other):
    if ctx.triggered_id != f"{PREFIX}-mosaic" or not click or not store:
        return [], [], "Click a tile of the mosaic."
    try:
        first, second = click["points"][0]["customdata"][:2]
        view = logic.view_settings(other=other)
        return logic.tile_rows(store, view["other"], first, second)
    except (KeyError, IndexError, TypeError):
        return [], [], "Click a tile of the mosaic."
    except ValueError as exc:
        return [], [], jobs.error_message(exc)


@callback(Output(f"{PREFIX}-query", "data"), *(Input(i, "value") for i in _FOREST + _VIEW),
          State(f"{PREFIX}-data-params", "data"), prevent_initial_call=True)
def sync_url(*values):
    *controls, other, label, threshold, direction, data = values
    try:
        values = _forest(*controls)
        values.update(logic.view_settings(other=other, label=label, threshold=threshold,
                                          direction=direction))
    except ValueError:
        return no_update
    return logic.page_query(data, values)


register_csv_downloads(PREFIX, {
    f"{PREFIX}-download-pairs": lambda store, other: (
        logic.pairs_csv(store, logic.view_settings(other=other)["other"]),
        logic.csv_filename(store, "pairs")),
    f"{PREFIX}-download-variables": lambda store, other: (
        logic.variables_csv(store), logic.csv_filename(store, "variables")),
}, view=f"{PREFIX}-other")
