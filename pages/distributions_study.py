"""The Distributions study's pieces: its choices, caps and checks, and drawing.

The choices and their sentences (replicate kinds, sweepable parameters, sweep
values, the server's caps, read from the environment on every call), the
checks a run must pass before it grows a forest, and what the page draws.
The run is the core's (:func:`varimp_core.studies.distributions.importance_distribution`);
every figure comes from :mod:`varimp_core.plots.distributions`; results are
read back with their ``from_dict``.  The Distributions page
(:mod:`pages.distributions`) is its only user.
"""

from __future__ import annotations

from typing import Any, Mapping

from dash import html

from varimp_core.csvtext import safe_csv
from varimp_core.plots.distributions import (make_distribution_figure, make_summary_table_frame,
                                             make_sweep_figure)
from varimp_core.plots.distributions_captions import (distribution_csv_frame,
                                                      distribution_sentences, fit_table_frame,
                                                      sweep_note)
from varimp_core.problems.registry import get_problem
from varimp_core.serialize import from_jsonable
from varimp_core.studies import distributions as study
from varimp_core.studies.distributions import ImportanceDistribution
from varimp_core.studies.montecarlo import (SWEEP_PARAMETERS, parameter_label,
                                            parse_sweep_values)
from varimp_core.studies.nulls import PermutationNull
from varimp_core.studies.replicates import partial_note

from pages._server import limits

from pages._framework import studies
from pages._framework.common import frame_table, placeholder_figure
from pages._framework.datachoice import DataChoice
from pages._framework.studies import generator, is_exact

#: The server limit (:mod:`pages._server.limits`, read on every call) of each cap.
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
    """The mean \u00b1 sd table (:func:`make_summary_table_frame`): DataTable columns, rows."""
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
    note = sweep_note(parameter, partial=bool(out.get("partial")), running=bool(out.get("running")))
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
