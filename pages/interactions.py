"""Interactions page: Ciss's local importance, what comes first and second, per class."""

from __future__ import annotations

import dash
from dash import Input, Output, callback, ctx, dash_table, dcc, html, no_update

from pages._framework import controls as ui
from pages import interactions_render as draw
from pages._framework import local_forest as forest
from pages._server import jobs
from pages._framework import state
from pages._framework.common import placeholder_figure
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                   register_csv_downloads, table_style)
from pages._framework.params import Context, Param, ParamSet
from pages._framework.view import JobView

dash.register_page(__name__, path="/interactions", name="Interactions", order=5,
                   title="varimp \u2014 Interactions")

PREFIX = "inter"
DEFAULT_MIN_SHARE = 0.01
MAX_MIN_SHARE = 0.2

#: What the job computes on: the forest and the rows assessed.
PARAMS = ParamSet(PREFIX, forest.forest_params())
#: How the result is shown: cheap to change, nothing is refitted.
DISPLAY = ParamSet(PREFIX, [
    Param("min_share", "\u201cOther features\u201d below", "float", DEFAULT_MIN_SHARE,
          key="other", low=0.0, high=MAX_MIN_SHARE, step=0.01, control="slider",
          what="other-features threshold",
          help="Variables whose share of positions 1 and 2 is below this are merged into one "
               "meta-variable in the mosaic."),
    Param("label", "Partial importance for the class", "text", None, blank="",
          control="dropdown", what="class",
          help="Observations the forest predicts as this class."),
    Param("threshold", "Threshold", "float", None, blank="median",
          help="Blank: the median prediction."),
    Param("direction", "Partial importance for predictions", "choice", "above",
          choices=[("above", "above"), ("below", "at most")]),
])


def compute(settings, data, progress) -> dict:
    """Fit (on a cache miss) and count: the summary of the cached local importance."""
    return forest.local_view(data, settings, forest.make_forest_loader(data, settings, progress),
                             progress)


def render(out, settings, data) -> tuple:
    return ({**out, "settings": settings, "data": data.as_dict},)


VIEW = JobView(PREFIX, PARAMS, compute=compute, render=render, data_store="inter-data",
               outputs=[("inter-current", "data")], what="The figures",
               requires=lambda out: [out["local"]],
               disable=["inter-fieldset", "inter-download-pairs", "inter-download-variables"])
VIEW.register()
state.register_url_sync(PREFIX)


def page_query(store, settings, shown) -> str:
    """The page's link: the user's data choice, the forest, then the view."""
    return forest.link(store.get("query", ""), PARAMS.query(settings), DISPLAY.query(shown))


def _part(name: str, height: str) -> html.Div:
    """A figure with a message line that replaces it when the view does not apply."""
    return html.Div([
        html.Div(id=f"{PREFIX}-{name}-msg", className="vi-hidden", role="status"),
        html.Div(dcc.Graph(id=f"{PREFIX}-{name}", figure=placeholder_figure(),
                           config=figure_config(f"{PREFIX}-{name}"), className="vi-figure",
                           style={"height": height}),
                 id=f"{PREFIX}-{name}-wrap"),
    ])


def layout(vi_data=None, **query):
    st = forest.start(query, vi_data, PARAMS, DISPLAY)
    f = forest.fields(st, PARAMS, DISPLAY)
    f["min_share"].children[1].marks = {0: "0", 0.05: "5%", 0.1: "10%", 0.15: "15%", 0.2: "20%"}
    view_card = ui.card("View", f["min_share"], f["label"], html.Div(
        [f["direction"], f["threshold"]], id=f"{PREFIX}-threshold-field", className="vi-hidden"))
    return page_frame(
        PREFIX, title="Interactions", notes=st["notes"], data=st["page"], data_store=st["store"],
        query=page_query(st["store"], st["values"], st["values"]), download=True,
        lead="Ciss (2015) follows every observation down every tree and notes the variable "
             "of the node just above its leaf: the last question asked before the answer. "
             "Ranked by how many trees ask it, these give each observation a variable at "
             "position 1, 2, \u2026 Two variables interact when they come first and second "
             "for the same observation. No label is used, only the forest and the rows.",
        stores=[dcc.Store(id="inter-current"), *VIEW.stores()],
        controls=[html.Fieldset(forest.forest_cards(f), id=f"{PREFIX}-fieldset",
                                className="vi-fieldset"), view_card],
        status=[*VIEW.status(), download_note(PREFIX)],
        content=[
            ui.card("Position 1 \u00d7 position 2", _part("mosaic", "480px"),
                    html.P("Column width: the share of observations with that variable at "
                           "position 1. Within a column, tile heights: which variable "
                           "comes second for them. Click a tile to list its observations.",
                           className="vi-help"),
                    html.P(id=f"{PREFIX}-summary", className="vi-description"),
                    download_button(PREFIX, "Download pairs (CSV)", "pairs")),
            ui.card("Observations behind a tile",
                    html.P("Click a tile of the mosaic.", id=f"{PREFIX}-tile-caption",
                           className="vi-help"),
                    dash_table.DataTable(
                        id=f"{PREFIX}-tile-table", columns=[], data=[], page_size=10,
                        sort_action="native",
                        **table_style(font_size="0.85rem", padding="0.25rem 0.5rem",
                                      wrap=False))),
            html.Div(style={"display": "grid", "gap": "1rem",
                            "gridTemplateColumns": "repeat(auto-fit, minmax(min(100%, 380px), 1fr))"},
                     children=[
                         ui.card("Importance based on interactions", _part("vii", "400px"),
                                 html.P("Ciss's VII(j,\u00b7): grows with how often the "
                                        "variable is first or second. His formula gives "
                                        "every variable the same floor, 1/(2p) when every "
                                        "observation has two positions, so a variable "
                                        "never first or second sits at that floor.",
                                        className="vi-help"),
                                 download_button(PREFIX, "Download variables (CSV)",
                                                        "variables")),
                         ui.card("Partial importance", _part("partial", "400px"),
                                 html.P("Share of the chosen observations with each "
                                        "variable at position 1.", className="vi-help")),
                     ]),
            ui.card("Importance over labels", _part("over", "360px")),
        ])


forest.register_view(PREFIX, PARAMS, DISPLAY, page_query, draw.OUTPUTS, draw.outputs,
                     lambda message: [no_update, "vi-hidden", message, "vi-error"] * len(draw.PARTS)
                     + [no_update] * (len(draw.OUTPUTS) - 4 * len(draw.PARTS)))


def _min_share(value) -> float:
    return DISPLAY.by_name["min_share"].parse(value, Context())


@callback(Output(f"{PREFIX}-tile-table", "columns"), Output(f"{PREFIX}-tile-table", "data"),
          Output(f"{PREFIX}-tile-caption", "children"), Input(f"{PREFIX}-mosaic", "clickData"),
          Input(f"{PREFIX}-current", "data"), Input(DISPLAY.id("min_share"), "value"),
          prevent_initial_call=True)
def show_tile(click, store, min_share):
    if ctx.triggered_id != f"{PREFIX}-mosaic" or not click or not store:
        return [], [], "Click a tile of the mosaic."
    try:
        first, second = click["points"][0]["customdata"][:2]
        return draw.tile_rows(store, _min_share(min_share), first, second)
    except (KeyError, IndexError, TypeError):
        return [], [], "Click a tile of the mosaic."
    except ValueError as exc:
        return [], [], jobs.error_message(exc)


register_csv_downloads(PREFIX, {
    f"{PREFIX}-download-pairs": lambda store, other: (
        draw.pairs_csv(store, _min_share(other)), draw.csv_filename(store, "pairs")),
    f"{PREFIX}-download-variables": lambda store, other: (
        draw.variables_csv(store), draw.csv_filename(store, "variables")),
}, view=DISPLAY.id("min_share"))
