"""Settings, URL and cache helpers of the Measures page.

The page's constants and URL parameters (:data:`PARAMS`), the canonical
settings of its three sections (:func:`forest_settings`,
:func:`study_settings`, :func:`bias_settings`), the page's URL query and
the server-side cache the views share.

Entries are written without the cache's lock (:func:`_cached`): a job killed
by Cancel must not leave a lock behind that blocks the next request.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from varimp_core.measures.suite import DEFAULT_MEASURES, MEASURES
from varimp_core.studies.noisy_protocol import DEPTH_SETTINGS
from varimp_core.plots.measures import SCALES, measure_label

from . import cache, datasource, limits
from .datasource import data_feature_count, data_params_for_page
from .state import whole_number
from .state import Param, bool_parser, choice_parser, encode_query, int_parser, parse_query

__all__ = [
    "PREFIX", "AUC", "BIAS", "MAX_TREES_UI", "MAX_REPS", "STUDY_MAX_TREES", "BIAS_MAX_TREES",
    "BIAS_MAX_REPS", "MAIN_FOREST", "NEEDS_OOB", "STUDY_MAX_FEATURES", "STUDY_PROBLEMS",
    "STUDY_OPTIONS", "DEPTH_OPTIONS", "BIAS_GRIDS", "KIND_OPTIONS", "CRITERION_OPTIONS",
    "MEASURE_OPTIONS", "PARAMS", "FOREST_KEYS", "STUDY_KEYS", "BIAS_KEYS", "forest_settings",
    "study_settings", "bias_settings", "page_query", "initial_state",
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
