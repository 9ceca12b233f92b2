"""The Measures page's first section: the importance measures side by side.

The measures of one scikit-learn forest
(:func:`varimp_core.measure_suite.compute_measures`, one cache entry per
measure), with the exact asymptotic MDI of built-in problems that have an
exact distribution (:func:`varimp_core.api.compute_importances`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
from dash.dash_table.Format import Format, Scheme

from varimp_core.api import compute_importances
from varimp_core.measures.suite import compute_measures
from varimp_core.plots.measures import make_measures_figure, measure_label
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult

from . import cache, datasource, limits
from .datasource import data_feature_count
from .measures_state import MAIN_FOREST, NEEDS_OOB, _cached, _say

__all__ = ["rows_params", "exact_params", "resolve_k", "measures_view", "measures_note",
           "measures_warning", "measures_table", "render_measures"]


# -- 1. the measures side by side -----------------------------------------------------------
def rows_params(data: Mapping[str, Any]) -> dict:
    """Data parameters with rows: an exact distribution is replaced by a sample of it."""
    data = datasource.canonical_params(data)
    if data["source"] == "problem" and data["sampling"] == "exact":
        return datasource.canonical_params({**data, "sampling": "sample"})
    return data


def exact_params(data: Mapping[str, Any]) -> dict | None:
    """The exact distribution behind a built-in problem's data choice, or None."""
    data = datasource.canonical_params(data)
    if data["source"] != "problem":
        return None
    try:
        problem = get_problem(data["problem"])
    except ValueError:
        return None
    if not problem.has_exact or problem.task != "classification" \
            or len(problem.variables) > limits.max_exact_features():
        return None
    return datasource.canonical_params({**data, "sampling": "exact"})


def resolve_k(K: int | None, p: int) -> int:
    """K itself, or scikit-learn's ``"sqrt"`` default :math:`\\lfloor\\sqrt{p}\\rfloor`."""
    return max(1, int(math.sqrt(p))) if K is None else int(K)


def _impurity(criterion: str) -> str:
    return "gini" if criterion == "auto" else criterion


def _check_rows(prepared, forest: Mapping[str, Any]) -> None:
    """Sentences for data the measures cannot use (regression + Gini, constant columns)."""
    if prepared.task == "regression" and forest["criterion"] != "auto":
        raise ValueError(f"The {forest['criterion'].capitalize()} impurity is for class labels, "
                         f"and the target {prepared.target} is a regression target (numbers). "
                         "Choose the automatic impurity (variance for regression), or a "
                         "classification target on the Data page.")
    X = prepared.X_numeric
    const = [v for j, v in enumerate(prepared.variables) if np.all(X[:, j] == X[0, j])]
    if const:
        names = ", ".join(repr(v) for v in const[:5]) + (" \u2026" if len(const) > 5 else "")
        raise ValueError(f"The input{'s' if len(const) > 1 else ''} {names} "
                         f"{'have' if len(const) > 1 else 'has'} a single value in every row, so "
                         "no tree can split on it and no measure can rank it. Remove it from "
                         "the file and upload it again, or choose other data.")


def measures_view(data: Mapping[str, Any], forest: Mapping[str, Any], *, progress=None,
                  compute: bool = True) -> dict:
    """The measures of ``forest`` on ``data`` (and the exact MDI), cached per measure.

    Parameters
    ----------
    data : mapping
        Data parameters; an exact distribution is sampled (:func:`rows_params`).
    forest : mapping
        From :func:`forest_settings`.
    progress : callable, optional
        ``progress(done, total, text)``.
    compute : bool, default=True
        False only reads the cache (what a cancelled job finished).

    Returns
    -------
    view : dict
        ``results`` (measure -> ImportanceResult, in MEASURES order), ``exact``
        (ImportanceResult or None), ``missing`` (measures not computed),
        ``skipped`` (OOB measures left out without bootstrap), ``notes``,
        ``p``, ``K``, ``rows`` (data parameters of the rows).

    Raises
    ------
    ValueError, DataError
        With a sentence.
    """
    say = _say(progress)
    rows = rows_params(data)
    loaded: dict[str, Any] = {}

    def load():
        if "rows" not in loaded:
            say(0, 1, "Loading the data\u2026")
            loaded["rows"] = datasource.load_prepared(rows)
        return loaded["rows"]

    p = data_feature_count(rows)
    if p is None:
        p = len(load().variables)
    if forest["K"] is not None and forest["K"] > p:
        raise ValueError(f"K must be a whole number from 1 to {p} (this data has {p} inputs), "
                         f"got {forest['K']}.")
    k = resolve_k(forest["K"], p)
    skipped = [m for m in forest["measures"] if m in NEEDS_OOB and not forest["bootstrap"]]
    wanted = [m for m in forest["measures"] if m not in skipped]
    if not wanted:
        raise ValueError(f"{_names(skipped)} need{'s' if len(skipped) == 1 else ''} out-of-bag "
                         "rows, and without the bootstrap every tree sees every row. Turn "
                         "Bootstrap on, or tick another measure.")
    fit = {key: forest[key] for key in ("kind", "trees", "leaf", "depth", "bootstrap",
                                        "tree_seed", "criterion")}
    keys = {m: cache.key_for("meas-measure", rows, fit, k, m) for m in wanted}
    found = {m: cache.get_json(keys[m]) for m in wanted}
    missing = [m for m in wanted if found[m] is None]
    if missing and compute:
        prepared = load()
        _check_rows(prepared, forest)
        batches = [b for b in ([m for m in missing if m in MAIN_FOREST],
                               *([m] for m in missing if m not in MAIN_FOREST)) if b]
        for i, batch in enumerate(batches):
            text = f"Computing {_names(batch)}\u2026"
            say(i, len(batches) + 1, text)
            out = compute_measures(
                prepared.X_numeric, prepared.y, kind=forest["kind"], task=prepared.task,
                measures=batch, n_estimators=forest["trees"], max_features=k,
                min_samples_leaf=forest["leaf"], max_depth=forest["depth"],
                bootstrap=forest["bootstrap"],
                criterion=None if forest["criterion"] == "auto" else forest["criterion"],
                random_state=forest["tree_seed"], variables=list(prepared.variables),
                problem=prepared.source,
                progress=lambda done, total, i=i, text=text: say(
                    round(i + done / total, 3), len(batches) + 1, text))
            for m, r in out.items():
                found[m] = r.to_dict()
                cache.put_json(keys[m], found[m])
        missing = []
    results = {m: ImportanceResult.from_dict(found[m]) for m in wanted if found[m] is not None}
    notes = []
    if rows != datasource.canonical_params(data):
        n = get_problem(rows["problem"]).default_samples
        notes.append(f"The measures need rows, so they use N = {n:,} rows drawn from the exact "
                     f"distribution (seed {rows['seed']}); choose a sample on the Data page to "
                     "change them.")
    exact = None
    ep = exact_params(data)
    if ep is not None:
        crit = _impurity(forest["criterion"])
        key = cache.key_for("meas-exact", ep, k, forest["depth"], crit)

        def exact_fn():
            say(0, None, "Computing the exact MDI\u2026")
            return compute_importances(datasource.load_prepared(ep), method="exact",
                                       max_features=k, max_depth=forest["depth"],
                                       k_semantics="sklearn", criterion=crit).to_dict()

        try:
            d = _cached(key, exact_fn if compute else None)
        except ValueError as exc:  # the measures still show, with a sentence
            d = None
            notes.append(f"No exact values are drawn: {exc}")
        exact = None if d is None else ImportanceResult.from_dict(d)
    return {"results": results, "exact": exact, "missing": missing, "skipped": skipped,
            "notes": notes, "p": p, "K": k, "rows": rows}


def _names(measures: Sequence[str]) -> str:
    labels = [measure_label(m) for m in measures]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def measures_note(view: Mapping[str, Any], forest: Mapping[str, Any]) -> str:
    """Sentences under the figure: what the bars and diamonds are."""
    out = [f"K = {view['K']} of {view['p']} inputs drawn at each node"
           + (" (\u221ap, scikit-learn's default)." if forest["K"] is None else ".")]
    units = {measure_label(m): r.units for m, r in view["results"].items()}
    out.append("Units: " + "; ".join(f"{k} in {v}" for k, v in units.items()) + ". "
               "Error bars: one standard error over trees (over permutation repeats for MDA, "
               "held out).")
    if view["exact"] is not None:
        out.append(f"Black diamonds: the exact MDI of an infinite forest on the exact "
                   f"distribution (impurity {view['exact'].units}, the same K drawn the "
                   f"scikit-learn way, the same max depth), over the MDI bars. The min leaf "
                   "size does not enter it; a finite sample, the bootstrap and a min leaf "
                   "size above 1 move the bars away from it.")
    elif exact_params(view["rows"]) is None:
        out.append("No exact values: only built-in problems with an exact distribution "
                   "(led, xor, sym) have them.")
    return " ".join(view["notes"] + out)


def measures_warning(view: Mapping[str, Any]) -> str:
    """A sentence about measures left out (no bootstrap) or not finished (cancelled)."""
    out = []
    if view["skipped"]:
        out.append(f"{_names(view['skipped'])} {'is' if len(view['skipped']) == 1 else 'are'} "
                   "left out: they need out-of-bag rows, and without the bootstrap every tree "
                   "sees every row. Turn Bootstrap on to see them.")
    if view["missing"]:
        out.append(f"Cancelled before {_names(view['missing'])} finished: the figure and the "
                   "table show the measures that did.")
    return " ".join(out)


def measures_table(view: Mapping[str, Any]) -> tuple[list, list]:
    """DataTable columns and rows: one row per variable, one column per measure (raw)."""
    num = Format(precision=4, scheme=Scheme.decimal_or_exponent)
    results, exact = view["results"], view["exact"]
    cols = [{"name": "Variable", "id": "variable"}]
    cols += [{"name": f"{measure_label(m)} ({r.units})", "id": m, "type": "numeric",
              "format": num} for m, r in results.items()]
    if exact is not None:
        cols.append({"name": f"Exact MDI ({exact.units})", "id": "exact", "type": "numeric",
                     "format": num})
    first = next(iter(results.values()), None)
    rows = []
    for i, v in enumerate(first.variables if first is not None else ()):
        row = {"variable": v, **{m: _number(r.importances[i]) for m, r in results.items()}}
        if exact is not None:
            row["exact"] = _number(exact.importances[i])
        rows.append(row)
    return cols, rows


def _number(v) -> float | None:
    v = float(v)
    return v if math.isfinite(v) else None


def render_measures(view: Mapping[str, Any], forest: Mapping[str, Any], scale: str) -> dict:
    """``figure``, ``columns``, ``rows``, ``note`` and ``warning`` of a computed view."""
    if not view["results"]:
        raise ValueError("No measure finished before the job was cancelled.")
    figure = make_measures_figure(view["results"], view["exact"], scale=scale)
    figure.update_layout(height=None)  # the page sizes it
    cols, rows = measures_table(view)
    return {"figure": figure, "columns": cols, "rows": rows,
            "note": measures_note(view, forest), "warning": measures_warning(view)}
