"""What the Interactions page shows: figures, sentences, the tile table and the CSV exports.

Every figure is drawn from the cached local importance
(:func:`pages._framework.local_forest.load_local`) by :mod:`varimp_core.plots.interactions`,
which is cheap.  The Interactions page (:mod:`pages.interactions`) is its only user.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from varimp_core.csvtext import csv_filename as common_csv_filename, safe_csv
from varimp_core.local.interactions import (OTHER_FEATURES, importance_over_labels,
                                            interaction_importance, interactions, pairs_frame,
                                            partial_importance, tile_frame, variables_frame)
from varimp_core.plots.interactions import (make_importance_over_labels, make_mosaic,
                                            make_partial_importance_figure, make_vii_bars)

from dash import no_update


from pages._framework.common import frame_table, placeholder_figure
from pages._framework.local_forest import FOREST_NAMES, load_local
from pages._framework.params import sentence

#: The page's figures, each with a message line that replaces it when it does not apply.
PARTS = ("mosaic", "vii", "partial", "over")
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
    """DataTable columns and rows of the observations behind the mosaic tile ``(first,
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
