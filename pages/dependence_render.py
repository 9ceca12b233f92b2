"""What the Dependence page shows: its figures and CSV exports, from the cached results.

Two different answers to "how do the predictions depend on this input?":
Friedman's partial dependence with ICE lines (the forest is asked about rows
whose input is *set* to each grid value, and the answers are averaged), and
Ciss's dependence over responses (the observed values of the input against the
forest's predictions, where the input is locally important; nothing is set or
averaged).  Figures come from :mod:`varimp_core.plots.dependence`.  The
Dependence page (:mod:`pages.dependence`) is its only user.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import pandas as pd

from varimp_core.local.partial_dependence import PartialDependence
from varimp_core.local.response_dependence import dependence_frame, dependence_over_responses
from varimp_core.plots.dependence import (make_dependence_over_responses, make_pd2_figure,
                                          make_pd_figure)
from varimp_core.plots.style import variable_color

from dash import html, no_update

from varimp_core.csvtext import csv_filename as common_csv_filename, safe_csv

from pages._framework.common import placeholder_figure
from pages._framework.local_forest import FOREST_NAMES, cached_entry, load_local
from pages._framework.params import sentence

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
