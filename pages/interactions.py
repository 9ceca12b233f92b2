"""Interactions page: Ciss's local importance, what comes first and second, per class.

What the Interactions page shows: figures, sentences, the tile table and the CSV exports.

Every figure is drawn from the cached local importance
(:func:`pages._framework.local_forest.load_local`) by :mod:`varimp_core.plots.interactions`,
which is cheap.
"""

from __future__ import annotations

from typing import Any, Mapping

import dash
import numpy as np
from dash import Input, Output, callback, ctx, dcc, html, no_update

from pages._framework import controls as ui
from pages._framework import local_forest as forest
from pages._framework import state
from pages._framework.common import frame_table, placeholder_figure
from pages._framework.grid import grid
from pages._framework.local_forest import FOREST_NAMES, load_local
from pages._framework.page_frame import (download_button, download_note, figure_config, page_frame,
                                         register_csv_downloads)
from pages._framework.params import Context, Param, ParamSet, sentence
from pages._framework.view import JobView
from pages._server import jobs
from varimp_core.csvtext import csv_filename as common_csv_filename
from varimp_core.csvtext import safe_csv
from varimp_core.local.interactions import (OTHER_FEATURES, importance_over_labels,
                                            interaction_importance, interactions, pairs_frame,
                                            partial_importance, tile_frame, variables_frame)
from varimp_core.plots.interactions import (make_importance_over_labels, make_mosaic,
                                            make_partial_importance_figure, make_vii_bars)
from varimp_core.plots.style import unescape_text

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
                    grid(f"{PREFIX}-tile-table", page_size=10)),
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
                                 not_a_verdict("inter-vii-caveat", "VII"),
                                 download_button(PREFIX, "Download variables (CSV)",
                                                        "variables")),
                         ui.card("Partial importance", _part("partial", "400px"),
                                 html.P("Share of the chosen observations with each "
                                        "variable at position 1.", className="vi-help")),
                     ]),
            ui.card("Importance over labels", _part("over", "360px"),
                    not_a_verdict("inter-over-caveat", "The ranking over labels")),
        ])


PARTS = ("mosaic", "vii", "partial", "over")


def not_a_verdict(id_: str, what: str) -> html.P:
    """The sentence under a figure that ranks the variables by where the trees put them."""
    return html.P([
        f"{what} measures where the forest's trees put each variable (how often it comes "
        "first or second on an observation's path), not whether the variable carries "
        "information on the target: a noise variable the trees split on early can rank "
        "first and a leak, which settles the target in one split, last. It is no relevance "
        "verdict; the ", dcc.Link("Importances page", href="/importances"),
        " gives those, each tested against label permutations."], id=id_,
        className="vi-help")
#: What the page draws: ``inter-<name>``'s property, in the order of :func:`outputs`.
OUTPUTS = [(f"{name}{part}", prop) for name in PARTS for part, prop in (
    ("", "figure"), ("-wrap", "className"), ("-msg", "children"), ("-msg", "className"))] + [
    ("summary", "children"), ("label", "options"), ("label", "value"),
    ("label-field", "className"), ("threshold-field", "className"), ("threshold", "placeholder")]
#: Observations listed for one mosaic tile.
MAX_TILE_ROWS = 1000


def draw(store: Mapping[str, Any], shown: Mapping[str, Any]) -> dict:
    """Figures and sentences of a computed store for the view settings ``shown``.

    Every part is drawn on its own: a part that does not apply (importance over
    labels for a regression target, interactions of a single tree) gets a
    sentence and a placeholder figure, and the other parts still show.

    Returns
    -------
    out : dict
        ``mosaic``, ``vii``, ``partial``, ``over`` (figures) with
        ``<part>_message`` (a sentence, "" when fine), ``summary`` (text),
        ``label`` (the class shown, classification), ``threshold`` (the
        threshold used, regression) and ``median`` (of the predictions, regression).
    """
    local, _ = load_local(store["local"])
    variables = list(local.variables)
    out: dict[str, Any] = {"median": None}
    found: dict[str, Any] = {}

    def part(name, fn):
        try:
            out[name] = fn().update_layout(height=None)  # the page sizes the graph
            out[name + "_message"] = ""
        except ValueError as exc:
            out[name], out[name + "_message"] = placeholder_figure(sentence(exc)), sentence(exc)

    def mosaic():
        found["it"] = interactions(local, min_share=shown["min_share"])
        return make_mosaic(found["it"], variables=variables)

    def over():
        if local.task != "classification":
            raise ValueError(f"Importance over labels compares classes, and the target "
                             f"\u201c{store['target']}\u201d is numeric (regression); partial "
                             "importance above or below a threshold is its counterpart.")
        return make_importance_over_labels(importance_over_labels(local))

    if local.task == "classification":
        label = shown["label"]
        if label not in local.classes:  # the first class the forest predicts
            label = next((c for c in local.classes if np.any(local.prediction == c)),
                         local.classes[0])
        subset = {"label": label}
    else:
        out["median"] = float(np.median(local.prediction))
        threshold = out["median"] if shown["threshold"] is None else shown["threshold"]
        subset = {"threshold": threshold, "direction": shown["direction"]}
    out["label"], out["threshold"] = subset.get("label"), subset.get("threshold")
    part("mosaic", mosaic)
    part("vii", lambda: make_vii_bars(interaction_importance(local)))
    part("partial", lambda: make_partial_importance_figure(partial_importance(local, **subset),
                                                           variables=variables))
    part("over", over)
    out["summary"] = summary_sentence(store, found.get("it"))
    return out


def outputs(store: Mapping[str, Any] | None, shown: Mapping[str, Any]) -> list:
    """The values of :data:`OUTPUTS` for a computed store (None: the job failed)."""
    if not store:  # the first job failed: its sentence is above
        empty = placeholder_figure("No figure for these settings; see the message above.")
        return [empty, "", "", "vi-hidden"] * len(PARTS) + [""] + [no_update] * 5
    out, parts = draw(store, shown), []
    for name in PARTS:
        msg = out[name + "_message"]
        parts += [out[name], "vi-hidden" if msg else "", msg, "vi-notes" if msg else "vi-hidden"]
    classes = store.get("classes")
    return parts + [out["summary"], [{"label": c, "value": c} for c in classes or []],
                    no_update if out["label"] == shown["label"] else out["label"],
                    "vi-field" if classes else "vi-field vi-hidden",
                    "vi-hidden" if classes else "",
                    "median" if out["median"] is None else f"median: {out['median']:.4g}"]


def summary_sentence(store: Mapping[str, Any], it=None) -> str:
    """What the figures are computed on, in one or two sentences."""
    s = store["settings"]
    k = "all inputs" if s["max_features"] is None else f"K = {s['max_features']}"
    n = s["n_estimators"]
    if s["rows"] == "test":
        rows = f"{store['n']:,} held-out rows"
    else:
        rows = "the same rows" if store["n"] == store["n_fit"] else f"{store['n']:,} of them"
    text = (f"A {FOREST_NAMES[s['forest']]} of {n:,} tree{'s' if n != 1 else ''} ({k}) fitted "
            f"on {store['n_fit']:,} rows, assessed on {rows}; labels are not used.")
    if it is not None:
        text += (f" {it.n_pairs:,} of {it.n_observations:,} observations have a variable at "
                 "both positions 1 and 2.")
        if it.merged:
            more = f" and {len(it.merged) - 8:,} more" if len(it.merged) > 8 else ""
            text += (f" Merged into \u201c{OTHER_FEATURES}\u201d: "
                     f"{', '.join(it.merged[:8])}{more}.")
    return text


def tile_rows(store: Mapping[str, Any], min_share: float, first: str, second: str
              ) -> tuple[list[dict], list[dict], str]:
    """Grid columns and rows of the observations behind the mosaic tile ``(first,
    second)`` (:func:`tile_frame`, at most :data:`MAX_TILE_ROWS`), and a caption."""
    local, data_rows = load_local(store["local"])
    names = {f: dict(map(tuple, v["names"])) for f, v in store.get("labels", {}).items()}
    frame = tile_frame(local, interactions(local, min_share=min_share), first, second,
                       rows=data_rows, value_names=names).rename(columns={"Prediction":
                                                       f"Prediction ({store['target']})"})
    caption = (f"{len(frame):,} observation{'s' if len(frame) != 1 else ''} with {first} at "
               f"position 1 and {second} at position 2")
    if len(frame) > MAX_TILE_ROWS:
        caption += f"; the first {MAX_TILE_ROWS:,} are listed"
    return (*frame_table(frame.head(MAX_TILE_ROWS), {"Row": None}, default="fixed6"),
            caption + ".")


def pairs_csv(store: Mapping[str, Any], min_share: float) -> str:
    """CSV of the interaction tables: one row per (first, second) pair."""
    return safe_csv(pairs_frame(interactions(load_local(store["local"])[0], min_share=min_share)))


def variables_csv(store: Mapping[str, Any]) -> str:
    """CSV per variable: importance based on interactions and shares at positions 1 and 2."""
    return safe_csv(variables_frame(load_local(store["local"])[0]))


def csv_filename(store: Mapping[str, Any], what: str) -> str:
    """``varimp-interactions-<data>-<forest>-<what>.csv`` with only safe characters."""
    return common_csv_filename("interactions", store["data"], store["settings"]["forest"],
                                     what)


forest.register_view(PREFIX, PARAMS, DISPLAY, page_query, OUTPUTS, outputs,
                     lambda message: [no_update, "vi-hidden", message, "vi-error"] * len(PARTS)
                     + [no_update] * (len(OUTPUTS) - 4 * len(PARTS)))


def _min_share(value) -> float:
    return DISPLAY.by_name["min_share"].parse(value, Context())


@callback(Output(f"{PREFIX}-tile-table", "columnDefs"), Output(f"{PREFIX}-tile-table", "rowData"),
          Output(f"{PREFIX}-tile-caption", "children"), Input(f"{PREFIX}-mosaic", "clickData"),
          Input(f"{PREFIX}-current", "data"), Input(DISPLAY.id("min_share"), "value"),
          prevent_initial_call=True)
def show_tile(click, store, min_share):
    if ctx.triggered_id != f"{PREFIX}-mosaic" or not click or not store:
        return [], [], "Click a tile of the mosaic."
    try:
        first, second = map(unescape_text, click["points"][0]["customdata"][:2])
        return tile_rows(store, _min_share(min_share), first, second)
    except (KeyError, IndexError, TypeError):
        return [], [], "Click a tile of the mosaic."
    except ValueError as exc:
        return [], [], jobs.error_message(exc)


register_csv_downloads(PREFIX, {
    f"{PREFIX}-download-pairs": lambda store, other: (
        pairs_csv(store, _min_share(other)), csv_filename(store, "pairs")),
    f"{PREFIX}-download-variables": lambda store, other: (
        variables_csv(store), csv_filename(store, "variables")),
}, view=DISPLAY.id("min_share"))
