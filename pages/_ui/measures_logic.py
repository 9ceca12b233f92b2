"""Logic behind the Measures page, as plain functions tests can call.

Three views, each a background job whose pieces are cached server-side one by
one (so a cancelled job leaves what it finished, and the page shows it):

1. the importance measures of one scikit-learn forest side by side
   (:func:`varimp_core.measure_suite.compute_measures`, one cache entry per
   measure), with the exact asymptotic MDI of built-in problems that have an
   exact distribution (:func:`varimp_core.api.compute_importances`);
2. the noisy-feature protocol of Li et al. (2019), Table 1
   (:func:`varimp_core.noisy_protocol.noisy_feature_auc`, one entry per
   repetition and depth setting);
3. MDI and MDI-oob against min leaf size and depth, Figs 1-3
   (:func:`varimp_core.noisy_protocol.mdi_bias_curves`, one entry per forest).

Entries are written without the cache's lock (:func:`_cached`): a job killed
by Cancel must not leave a lock behind that blocks the next request.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.api import compute_importances
from varimp_core.measure_suite import DEFAULT_MEASURES, MEASURES, compute_measures, measures_frame
from varimp_core.noisy_protocol import (DEPTH_SETTINGS, LI2019_TABLE1, mdi_bias_curves,
                                        noisy_feature_auc)
from varimp_core.plots.measures import (SCALES, make_auc_figure, make_bias_curves,
                                        make_measures_figure, measure_label, scale_values)
from varimp_core.problems import get_problem
from varimp_core.result import ImportanceResult

from . import cache, datasource, jobs, limits
from .common import neutralise_cell, placeholder_figure
from .importances_logic import data_feature_count, data_params_for_page, whole_number
from .state import Param, bool_parser, choice_parser, encode_query, int_parser, parse_query

__all__ = [
    "PREFIX", "AUC", "BIAS", "PARAMS", "FOREST_KEYS", "STUDY_KEYS", "BIAS_KEYS", "BIAS_GRIDS",
    "STUDY_PROBLEMS", "forest_settings", "study_settings", "bias_settings", "page_query",
    "initial_state", "query_from_controls", "rows_params", "exact_params", "resolve_k",
    "measures_view", "measures_note", "measures_warning", "measures_table", "measures_csv",
    "render_measures", "study_units", "auc_view", "auc_summary", "auc_table", "auc_note",
    "auc_csv", "render_auc", "bias_units", "bias_view", "bias_note", "render_bias",
    "frame_csv", "csv_filename", "measures_outputs", "rescaled_figure", "auc_outputs",
    "bias_outputs", "download", "placeholder_figure",
]

PREFIX = "meas"
AUC = f"{PREFIX}-auc"     # job prefix of the noisy-feature protocol
BIAS = f"{PREFIX}-bias"   # job prefix of the bias curves
#: The page's own caps; the server's limits (:mod:`pages._ui.limits`) may lower them.
MAX_TREES_UI = 2000
MAX_REPS = 40
STUDY_MAX_TREES = 500
BIAS_MAX_TREES = 1000
BIAS_MAX_REPS = 20
#: Measures computed on the main forest (one fit serves them all), and those needing OOB rows.
MAIN_FOREST = ("mdi", "mdi_normalised", "mdi_oob", "mdi_in_sample", "naive_oob", "mda_oob")
NEEDS_OOB = ("mdi_oob", "naive_oob", "mda_oob")
#: "mtry" of Li et al. (2019), section 4, for the noisy-feature protocol.
STUDY_MAX_FEATURES = 10
STUDY_PROBLEMS = {"strobl-classification": "strobl:task=classification",
                  "strobl-regression": "strobl:task=regression", "madelon": "madelon"}
STUDY_OPTIONS = [
    {"label": "strobl, classification (paper's simulation)", "value": "strobl-classification"},
    {"label": "strobl, regression (paper's simulation)", "value": "strobl-regression"},
    {"label": "madelon (500 inputs, no paper values)", "value": "madelon"},
]
DEPTH_OPTIONS = [{"label": "Shallow (min leaf size 100)", "value": "shallow"},
                 {"label": "Deep (min leaf size 1)", "value": "deep"}]
#: Grids of (min leaf size, max depth) of the bias curves; "full" is the paper's.
BIAS_GRIDS = {"coarse": ((1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50),
                         (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20)),
              "full": (tuple(range(1, 51)), tuple(range(1, 21)))}
KIND_OPTIONS = [{"label": "Random forest", "value": "rf"}, {"label": "Extra-trees", "value": "et"}]
CRITERION_OPTIONS = [
    {"label": "Automatic (Gini, or variance for regression)", "value": "auto"},
    {"label": "Gini (classification only)", "value": "gini"},
    {"label": "Entropy, bits (classification only)", "value": "entropy"},
]
MEASURE_OPTIONS = [{"label": measure_label(m), "value": m} for m in MEASURES]


def _measures_parser(values) -> list[str]:
    chosen = [str(v).strip().lower() for v in values if str(v).strip()]
    bad = [v for v in chosen if v not in MEASURES]
    if bad:
        raise ValueError(f"the measure {bad[0]!r} is unknown; use {', '.join(MEASURES)}")
    if not chosen:
        raise ValueError("it names no measure")
    return [m for m in MEASURES if m in chosen]


def _depths_parser(values) -> list[str]:
    chosen = [str(v).strip().lower() for v in values if str(v).strip()]
    if not chosen or any(v not in DEPTH_SETTINGS for v in chosen):
        raise ValueError("the depth settings must be shallow and/or deep")
    return [d for d in DEPTH_SETTINGS if d in chosen]


#: URL parameters (after the data parameters); settings dicts use the same keys.
PARAMS: tuple[Param, ...] = (
    Param("kind", "rf", choice_parser(("rf", "et"), what="forest kind"), "forest kind"),
    Param("trees", 100, limits.count_parser(2, lambda: limits.max_trees(MAX_TREES_UI),
                                            what="number of trees"), "number of trees"),
    Param("K", None, int_parser(1, 100_000, what="K"), "K"),
    Param("leaf", 1, int_parser(1, 100_000, what="min leaf size"), "min leaf size"),
    Param("depth", None, int_parser(1, 10_000, what="max depth"), "max depth"),
    Param("bootstrap", True, bool_parser, "bootstrap"),
    Param("tree_seed", 0, int_parser(0, 2**32 - 1, what="seed"), "seed"),
    Param("measures", list(DEFAULT_MEASURES), _measures_parser, "measures", multi=True),
    Param("criterion", "auto", choice_parser(("auto", "gini", "entropy"), what="impurity"),
          "impurity"),
    Param("scale", "max", choice_parser(SCALES, what="scale"), "scale"),
    Param("study", "strobl-classification", choice_parser(tuple(STUDY_PROBLEMS), what="study"),
          "study problem"),
    Param("study_depth", ["shallow", "deep"], _depths_parser, "depth settings", multi=True),
    # Light defaults so the page answers in seconds; the paper used 40 repetitions,
    # 100 trees per forest and 300 trees for the curves: raise them on the page.
    Param("reps", 3, limits.count_parser(1, lambda: limits.max_replicates(MAX_REPS),
                                         what="number of repetitions"), "repetitions"),
    Param("study_trees", 50, limits.count_parser(2, lambda: limits.max_trees(STUDY_MAX_TREES),
                                                  what="number of trees"), "study trees"),
    Param("bias_trees", 100, limits.count_parser(2, lambda: limits.max_trees(BIAS_MAX_TREES),
                                                 what="number of trees"), "curve trees"),
    Param("bias_grid", "coarse", choice_parser(tuple(BIAS_GRIDS), what="grid"), "grid"),
    Param("bias_reps", 1, limits.count_parser(1, lambda: limits.max_replicates(BIAS_MAX_REPS),
                                              what="number of repetitions"),
          "curve repetitions"),
    Param("bias_n", 200, int_parser(20, 5000, what="sample size"), "curve sample size"),
)
FOREST_KEYS = ("kind", "trees", "K", "leaf", "depth", "bootstrap", "tree_seed", "measures",
               "criterion")
STUDY_KEYS = ("study", "study_depth", "reps", "study_trees")
BIAS_KEYS = ("bias_trees", "bias_grid", "bias_reps", "bias_n")


# -- settings and URL ---------------------------------------------------------------
def forest_settings(*, kind="rf", trees=100, K=None, leaf=1, depth=None, bootstrap=True,
                    tree_seed=0, measures=DEFAULT_MEASURES, criterion="auto",
                    p: int | None = None) -> dict:
    """Canonical settings of the side-by-side view from control values.

    Raises ``ValueError`` with a sentence for the page (one tree, K above p,
    no measure ticked ...).  ``K`` None means :math:`\\lfloor\\sqrt{p}\\rfloor`.
    """
    if kind not in ("rf", "et"):
        raise ValueError("Choose a forest kind: random forest or extra-trees.")
    most = limits.max_trees(MAX_TREES_UI)
    n = whole_number(trees, "number of trees", 1, most, None)
    if n is None:
        raise ValueError(f"Enter the number of trees (2 to {most:,}).")
    if n < 2:
        raise ValueError("One tree is not enough: every measure reports its spread over the "
                         "trees, which needs at least 2. Use 2 trees or more.")
    if isinstance(bootstrap, (list, tuple)):
        bootstrap = bool(bootstrap)
    chosen = [m for m in MEASURES if m in set(measures or ())]
    if not chosen:
        raise ValueError("Tick at least one measure.")
    if criterion not in ("auto", "gini", "entropy"):
        raise ValueError("The impurity must be automatic, Gini or entropy.")
    return {"kind": kind, "trees": n, "K": whole_number(K, "K (variables drawn at each node)",
                                                         1, p, None),
            "leaf": whole_number(leaf, "min leaf size", 1, None, 1),
            "depth": whole_number(depth, "max depth", 1, None, None),
            "bootstrap": bool(bootstrap), "tree_seed": whole_number(tree_seed, "seed", 0,
                                                                    2**32 - 1, 0),
            "measures": chosen, "criterion": criterion}


def study_settings(*, study="strobl-classification", study_depth=("shallow", "deep"), reps=3,
                   study_trees=50) -> dict:
    """Canonical settings of the noisy-feature protocol (ValueError with a sentence)."""
    if study not in STUDY_PROBLEMS:
        raise ValueError("Choose a problem for the protocol: strobl or madelon.")
    depths = [d for d in DEPTH_SETTINGS if d in set(study_depth or ())]
    if not depths:
        raise ValueError("Tick shallow or deep trees (or both).")
    return {"study": study, "study_depth": depths,
            "reps": whole_number(reps, "number of repetitions", 1,
                                 limits.max_replicates(MAX_REPS), 3),
            "study_trees": whole_number(study_trees, "number of trees", 2,
                                        limits.max_trees(STUDY_MAX_TREES), 50)}


def bias_settings(*, bias_trees=100, bias_grid="coarse", bias_reps=1, bias_n=200) -> dict:
    """Canonical settings of the bias curves (ValueError with a sentence)."""
    if bias_grid not in BIAS_GRIDS:
        raise ValueError("Choose the coarse or the full grid.")
    return {"bias_trees": whole_number(bias_trees, "number of trees", 2,
                                       limits.max_trees(BIAS_MAX_TREES), 100),
            "bias_grid": bias_grid,
            "bias_reps": whole_number(bias_reps, "number of repetitions", 1,
                                      limits.max_replicates(BIAS_MAX_REPS), 1),
            "bias_n": whole_number(bias_n, "sample size", 20, 5000, 200)}


def page_query(data: Mapping[str, Any], forest: Mapping[str, Any], study: Mapping[str, Any],
               bias: Mapping[str, Any], scale: str = "max") -> str:
    """The page's URL query: the data query, then every section's settings."""
    parts = [datasource.data_query(data),
             encode_query({**forest, "scale": scale, **study, **bias})]
    return "&".join(part for part in parts if part)


def _pick(values: Mapping[str, Any], keys) -> dict:
    return {k: values[k] for k in keys}


def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """What ``layout(**query)`` needs.

    Returns ``data``, ``p``, ``values`` (one per control), ``notes`` and ``query``.
    """
    data, notes = data_params_for_page(query, vi_data)
    values, more = parse_query(query, PARAMS)
    notes += more
    p = data_feature_count(data, vi_data)
    if p is not None and values["K"] is not None and values["K"] > p:
        notes.append(f"The link's K was ignored: this data has {p} inputs, so K must be from 1 "
                     f"to {p}. Using \u221ap instead.")
        values["K"] = None
    try:
        text = page_query(data, forest_settings(**_pick(values, FOREST_KEYS), p=p),
                          study_settings(**_pick(values, STUDY_KEYS)),
                          bias_settings(**_pick(values, BIAS_KEYS)), values["scale"])
    except ValueError:
        text = datasource.data_query(data)
    return {"data": data, "p": p, "values": values, "notes": notes, "query": text}


# -- caching -----------------------------------------------------------------------------
def _cached(key: str, fn: Callable[[], Any] | None):
    """The JSON value under ``key``; on a miss ``fn()`` stored (None: only look)."""
    value = cache.get_json(key)
    if value is None and fn is not None:
        value = fn()
        cache.put_json(key, value)
    return value


def _say(progress):
    return progress if progress is not None else (lambda *a, **k: None)


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


def frame_csv(df: pd.DataFrame) -> str:
    """CSV of a table with text cells a spreadsheet would run as formulas neutralised."""
    df = df.copy()
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def measures_csv(view: Mapping[str, Any]) -> str:
    """Tidy CSV: :func:`measures_frame`, ``scaled`` (max |value| = 1 per measure), exact rows."""
    results = dict(view["results"])
    if view["exact"] is not None:
        results["exact_mdi"] = view["exact"]
    df = measures_frame(results)
    df["scaled"] = np.concatenate([scale_values(r.importances)[0] for r in results.values()])
    return frame_csv(df)


def render_measures(view: Mapping[str, Any], forest: Mapping[str, Any], scale: str) -> dict:
    """``figure``, ``columns``, ``rows``, ``note`` and ``warning`` of a computed view."""
    if not view["results"]:
        raise ValueError("No measure finished before the job was cancelled.")
    figure = make_measures_figure(view["results"], view["exact"], scale=scale)
    figure.update_layout(height=None)  # the page sizes it
    cols, rows = measures_table(view)
    return {"figure": figure, "columns": cols, "rows": rows,
            "note": measures_note(view, forest), "warning": measures_warning(view)}


# -- 2. the noisy-feature protocol ------------------------------------------------------------
_AUC_COLUMNS = ["problem", "task", "depth_setting", "min_samples_leaf", "measure", "seed", "auc"]


def study_units(settings: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(depth setting, seed) of each run; seeds outermost, so a cancelled study stays balanced."""
    return [(d, seed) for seed in range(settings["reps"]) for d in settings["study_depth"]]


def auc_view(settings: Mapping[str, Any], *, progress=None, compute: bool = True) -> dict:
    """AUC scores of the protocol, one cache entry per (depth setting, seed).

    Returns ``scores`` (as :func:`noisy_feature_auc`'s, depth settings in
    :data:`DEPTH_SETTINGS` order then seeds), ``summary``, ``done`` and ``total``.
    """
    say = _say(progress)
    spec = STUDY_PROBLEMS[settings["study"]]
    units = study_units(settings)
    rows: list = []
    done = 0
    for i, (depth, seed) in enumerate(units):
        key = cache.key_for("meas-auc", spec, depth, seed, settings["study_trees"],
                            STUDY_MAX_FEATURES, list(DEFAULT_MEASURES))

        def run(depth=depth, seed=seed):
            say(i, len(units), f"Repetition {seed + 1} of {settings['reps']}, {depth} trees")
            res = noisy_feature_auc(problems=[spec], depth_settings=[depth], seeds=[seed],
                                    n_estimators=settings["study_trees"],
                                    max_features=STUDY_MAX_FEATURES)
            return res.scores.to_dict("records")

        part = _cached(key, run if compute else None)
        if part is not None:
            rows.extend(part)
            done += 1
    say(len(units), len(units))
    scores = pd.DataFrame(rows, columns=_AUC_COLUMNS)
    order = scores["depth_setting"].map({d: i for i, d in enumerate(DEPTH_SETTINGS)})
    scores = scores.iloc[np.lexsort((scores["seed"].to_numpy(), order.to_numpy()))]
    scores = scores.reset_index(drop=True)
    return {"scores": scores, "summary": auc_summary(scores), "done": done, "total": len(units)}


def auc_summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation (ddof 1) and count of the AUC per setting and measure."""
    keys = ["problem", "task", "depth_setting", "measure"]
    if scores.empty:
        return pd.DataFrame(columns=[*keys, "mean", "std", "n"])
    return scores.groupby(keys, sort=False)["auc"].agg(mean="mean", std="std",
                                                       n="count").reset_index()


def _paper_value(task: str, depth: str, measure: str, problem: str) -> float | None:
    if problem != "strobl":
        return None
    return LI2019_TABLE1.get((task, depth), {}).get(measure)


def auc_table(view: Mapping[str, Any]) -> tuple[list, list]:
    """One row per measure; per depth setting ``mean ± sd`` and the paper's value."""
    summary = view["summary"]
    depths = list(dict.fromkeys(summary["depth_setting"]))
    cols = [{"name": "Measure", "id": "measure"}]
    for d in depths:
        cols += [{"name": f"{d.capitalize()}: mean \u00b1 sd", "id": d},
                 {"name": f"{d.capitalize()}: paper", "id": f"{d}_paper"}]
    rows = []
    for m in dict.fromkeys(summary["measure"]):
        row = {"measure": measure_label(m)}
        for d in depths:
            hit = summary[(summary["measure"] == m) & (summary["depth_setting"] == d)]
            if hit.empty:
                row[d] = "\u2014"
            else:
                s = hit.iloc[0]
                row[d] = (f"{s['mean']:.2f} \u00b1 {s['std']:.2f} (n = {int(s['n'])})"
                          if s["n"] > 1 else f"{s['mean']:.2f} (n = 1)")
                ref = _paper_value(s["task"], d, m, s["problem"])
                row[f"{d}_paper"] = "\u2014" if ref is None else f"{ref:.2f}"
        rows.append(row)
    return cols, rows


def auc_note(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What the study is, how it differs from the paper's run, and a cancelled study's size."""
    spec = STUDY_PROBLEMS[settings["study"]]
    problem = get_problem(spec)
    text = (f"{len(problem.variables)} inputs, {len(problem.relevant)} of them relevant; "
            f"{settings['study_trees']} trees with K = {STUDY_MAX_FEATURES} (mtry), "
            f"{settings['reps']} repetition{'s' if settings['reps'] > 1 else ''} (seeds 0 to "
            f"{settings['reps'] - 1}). AUC 1: every relevant feature ranks above every noisy "
            "one; 0.5: chance; below 0.5: the measure prefers noisy features.")
    if problem.name == "strobl":
        text += (" Black dashes: Li et al. (2019), Table 1 (100 trees, 40 repetitions; their "
                 "MDA is the held-out permutation importance; they report no out-of-bag MDA).")
    else:
        text += " The paper has no madelon numbers (its second data set, ChIP, is not here)."
    if view["done"] < view["total"]:
        text = (f"Cancelled after {view['done']} of {view['total']} runs: the table and the "
                "plot show those. ") + text
    return text


def auc_csv(view: Mapping[str, Any]) -> str:
    """Tidy CSV of the AUC scores with the paper's value on each row (blank when none)."""
    df = view["scores"].copy()
    df["paper_auc"] = [_paper_value(t, d, m, p) for t, d, m, p in
                       zip(df["task"], df["depth_setting"], df["measure"], df["problem"])]
    return frame_csv(df)


def render_auc(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """``figure``, ``columns``, ``rows`` and ``note`` of a computed study."""
    figure = make_auc_figure(view["scores"])
    figure.update_layout(height=None)
    cols, rows = auc_table(view)
    return {"figure": figure, "columns": cols, "rows": rows, "note": auc_note(view, settings)}


# -- 3. MDI against min leaf size and depth --------------------------------------------------
def bias_units(settings: Mapping[str, Any]) -> list[tuple[int, str, int]]:
    """(seed, parameter, value) of each forest; the two grids interleaved."""
    leaf, depth = BIAS_GRIDS[settings["bias_grid"]]
    pairs = [u for i in range(max(len(leaf), len(depth)))
             for u in ([("min_samples_leaf", leaf[i])] if i < len(leaf) else [])
             + ([("max_depth", depth[i])] if i < len(depth) else [])]
    return [(seed, par, v) for seed in range(settings["bias_reps"]) for par, v in pairs]


def bias_view(settings: Mapping[str, Any], *, progress=None, compute: bool = True) -> dict:
    """Scores of :func:`mdi_bias_curves`, cached per forest: ``scores``, ``done``, ``total``."""
    say = _say(progress)
    units = bias_units(settings)
    rows: list = []
    done = 0
    for i, (seed, par, value) in enumerate(units):
        key = cache.key_for("meas-bias", settings["bias_n"], settings["bias_trees"], seed,
                            par, value)

        def run(seed=seed, par=par, value=value):
            say(i, len(units), f"Forest {i + 1} of {len(units)}")
            res = mdi_bias_curves(
                min_samples_leaf=[value] if par == "min_samples_leaf" else [],
                max_depth=[value] if par == "max_depth" else [], n_samples=settings["bias_n"],
                n_estimators=settings["bias_trees"], seeds=[seed])
            return res.scores.to_dict("records")

        part = _cached(key, run if compute else None)
        if part is not None:
            rows.extend(part)
            done += 1
    say(len(units), len(units))
    scores = pd.DataFrame(rows, columns=["parameter", "value", "measure", "variable",
                                         "relevant", "seed", "importance"])
    return {"scores": scores, "done": done, "total": len(units)}


def bias_note(view: Mapping[str, Any], settings: Mapping[str, Any]) -> str:
    """What the curves show (Li et al. 2019, section 4, first simulation)."""
    text = (f"N = {settings['bias_n']} rows: X1 ~ N(0, 1), X2 a fair bit, X3, X4, X5 with 4, 10 "
            "and 20 equally likely categories; P(Y = 1) = (1 + X2)/3, so only X2 is relevant. "
            f"{settings['bias_trees']} trees, K = 2. Figs 1 and 2 of the paper: the MDI of the "
            "noisy features falls as the min leaf size grows and rises with the depth; Fig. 3: "
            "MDI-oob keeps them near 0.")
    if settings["bias_reps"] > 1:
        text += f" Mean over {settings['bias_reps']} data sets, with one standard error."
    if view["done"] < view["total"]:
        text = (f"Cancelled after {view['done']} of {view['total']} forests: the curves show "
                "those. ") + text
    return text


def render_bias(view: Mapping[str, Any], settings: Mapping[str, Any]) -> dict:
    """``figure`` and ``note`` of computed curves."""
    figure = make_bias_curves(view["scores"])
    figure.update_layout(height=None)
    return {"figure": figure, "note": bias_note(view, settings)}


def csv_filename(what: str, data: Mapping[str, Any] | None = None) -> str:
    """``varimp-measures-<what>[-<data>].csv`` with only safe characters."""
    import re

    part = what
    if data is not None:
        data = datasource.canonical_params(data)
        name = data.get("problem") if data["source"] == "problem" else (data.get("file")
                                                                         or "upload")
        part += "-" + re.sub(r"\.csv$", "", str(name), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", part).strip("-.")[:80]
    return f"varimp-measures-{slug}.csv"


# -- what the callbacks return ----------------------------------------------------------------
def query_from_controls(*values) -> str | None:
    """The URL query from every control of the page (in the page's order), or None if invalid."""
    *controls, data = values
    n1, n2 = len(FOREST_KEYS), len(STUDY_KEYS)
    forest = dict(zip(FOREST_KEYS, controls[:n1]))
    scale = controls[n1]
    study = dict(zip(STUDY_KEYS, controls[n1 + 1:n1 + 1 + n2]))
    bias = dict(zip(BIAS_KEYS, controls[n1 + 1 + n2:]))
    try:
        return page_query(data, forest_settings(**forest, p=data_feature_count(data)),
                          study_settings(**study), bias_settings(**bias),
                          scale if scale in SCALES else "max")
    except ValueError:
        return None


def _failed(exc: BaseException, n_outputs: int, shown: Any) -> tuple:
    """``no_update`` for the views (the figure says why it is empty when nothing was shown
    yet), then the error sentence, its class and a blank status."""
    from dash import no_update

    message = jobs.error_message(exc)
    if shown:
        message += " The page still shows the previous settings."
    figure = no_update if shown else placeholder_figure("Nothing to show yet: see the "
                                                        "message above.")
    return (figure, *[no_update] * (n_outputs - 1), message, "vi-error", "")


def _status(progress, compute: bool, complete: bool) -> str:
    if compute:
        return jobs.done_message(progress)
    return ("Cancelled; the page shows the parts that finished." if not complete else
            "Cancelled after the last part finished; the page shows the whole result.")


def measures_outputs(*values, progress=None, compute: bool = True) -> tuple:
    """Outputs of the side-by-side job (or, with ``compute=False``, of Cancel).

    ``values``: the controls of :data:`FOREST_KEYS`, the scale, the data
    parameters and the last shown view.  Returns figure, table columns and
    rows, note, warning and its class, current view, error and its class,
    status.
    """
    *controls, scale, data, shown = values
    try:
        forest = forest_settings(**dict(zip(FOREST_KEYS, controls)),
                                 p=data_feature_count(data))
        view = measures_view(data, forest, progress=progress, compute=compute)
        out = render_measures(view, forest, scale if scale in SCALES else "max")
    except Exception as exc:  # a sentence on the page, never a traceback
        return _failed(exc, 7, shown)
    return (out["figure"], out["columns"], out["rows"], out["note"], out["warning"],
            "vi-notes" if out["warning"] else "vi-hidden", {"data": data, "forest": forest},
            "", "vi-hidden", _status(progress, compute, not view["missing"]))


def rescaled_figure(current: Mapping[str, Any] | None, scale: str):
    """The side-by-side figure of the shown view on another scale (None when there is none)."""
    if not current or scale not in SCALES:
        return None
    try:
        view = measures_view(current["data"], current["forest"], compute=False)
        return render_measures(view, current["forest"], scale)["figure"]
    except Exception:  # the next job run reports errors
        return None


def auc_outputs(*values, progress=None, compute: bool = True) -> tuple:
    """Outputs of the protocol job (or of Cancel): figure, table columns and rows, note,
    current settings, error and its class, status."""
    *controls, shown = values
    try:
        settings = study_settings(**dict(zip(STUDY_KEYS, controls)))
        view = auc_view(settings, progress=progress, compute=compute)
        if not view["done"]:
            raise ValueError("Cancelled before the first repetition finished.")
        out = render_auc(view, settings)
    except Exception as exc:
        return _failed(exc, 5, shown)
    return (out["figure"], out["columns"], out["rows"], out["note"], settings, "",
            "vi-hidden", _status(progress, compute, view["done"] == view["total"]))


def bias_outputs(*values, progress=None, compute: bool = True) -> tuple:
    """Outputs of the bias-curve job (or of Cancel): figure, note, current settings, error
    and its class, status."""
    *controls, shown = values
    try:
        settings = bias_settings(**dict(zip(BIAS_KEYS, controls)))
        view = bias_view(settings, progress=progress, compute=compute)
        if not view["done"]:
            raise ValueError("Cancelled before the first forest finished.")
        out = render_bias(view, settings)
    except Exception as exc:
        return _failed(exc, 3, shown)
    return (out["figure"], out["note"], settings, "", "vi-hidden",
            _status(progress, compute, view["done"] == view["total"]))


def download(what: str, current: Mapping[str, Any] | None) -> dict | None:
    """``dcc.Download`` data of the shown view of a section (``measures``, ``auc``, ``bias``)."""
    from dash import no_update

    if not current:
        return no_update
    if what == "measures":
        view = measures_view(current["data"], current["forest"], compute=False)
        return dict(content=measures_csv(view), type="text/csv",
                    filename=csv_filename("side-by-side", current["data"]))
    if what == "auc":
        view = auc_view(current, compute=False)
        return dict(content=auc_csv(view), type="text/csv",
                    filename=csv_filename(f"auc-{current['study']}"))
    view = bias_view(current, compute=False)
    return dict(content=frame_csv(view["scores"]), type="text/csv",
                filename=csv_filename("bias-curves"))
