"""Logic behind the Distributions page's callbacks, as plain functions tests can call.

The page repeats a forest over R data sets and shows the spread of every
variable's importance (Sutera 2013, ch. 3): fresh samples of a built-in
problem (:func:`varimp_core.montecarlo.monte_carlo`), bootstrap replicates of
the session's data, or a permutation null
(:func:`varimp_core.nulls.permutation_null`); then a sweep of one parameter
(:func:`varimp_core.montecarlo.sweep`).  Results are cached server-side as
JSON, keyed by a hash of the settings; a run stopped with Cancel keeps its
finished replicates (``should_stop``) in a short-lived entry of its own and is
never stored as the settings' result.

Caps (read from the environment on every call): ``VARIMP_MAX_REPLICATES``
(R, default 2,000), ``VARIMP_MAX_MC_TREES`` (T, 1,000), ``VARIMP_MAX_MC_SAMPLES``
(N, 100,000), ``VARIMP_MAX_MC_TOTAL_TREES`` (trees per run or sweep, 500,000)
and ``VARIMP_MAX_SWEEP_VALUES`` (8).
"""

from __future__ import annotations

import math
import os
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd
from dash.dash_table.Format import Format, Scheme

from varimp_core.montecarlo import MonteCarloResult, SWEEP_PARAMETERS, monte_carlo, sweep
from varimp_core.nulls import (PermutationNull, fit_normal, fit_scaled_chi2, permutation_null,
                               plugin_bias_overlay)
from varimp_core.plots.distributions import (MAX_PANELS, MAX_VIOLINS, make_distribution_figure,
                                             make_summary_table_frame, make_sweep_figure,
                                             parameter_label, sweep_statistics)
from varimp_core.problems import get_problem

from . import cache, datasource, fanout, limits
from .controls import problem_choices
from .common import (Stopped, cached_view, clear_stop, keep_view, neutralise_cell,
                     placeholder_figure, request_stop, stop_key, stop_requested)
from .importances_logic import data_feature_count, data_params_for_page
from .state import Param, choice_parser, encode_query, int_parser, parse_query

__all__ = [
    "PREFIX", "SWEEP_PREFIX", "MAX_FITTED", "METHOD_OPTIONS", "MODE_LABELS", "VIEWS", "DEFAULTS",
    "max_replicates", "max_trees", "max_samples", "max_total_trees", "max_sweep_values",
    "caps_text", "page_params", "is_synthetic", "problem_options", "mode_options",
    "sweep_options", "default_values", "parse_values", "initial_state", "data_for_choice",
    "settings_from_controls", "sweep_settings", "page_query", "query_from_controls",
    "problem_controls", "run_key", "sweep_key", "stop_key", "request_stop", "clear_stop",
    "stop_requested", "compute_view", "compute_sweep", "run_monte_carlo", "run_sweep",
    "result_to_dict", "result_from_dict", "render", "render_sweep", "fit_table",
    "summary_sentences", "csv_text", "csv_filename", "placeholder_figure",
]

PREFIX = "dist"
SWEEP_PREFIX = "dist-sweep"
METHOD_OPTIONS = [
    {"label": "ours: multiway totally randomized trees", "value": "forest"},
    {"label": "scikit-learn extra-trees", "value": "sklearn-et"},
    {"label": "scikit-learn random forest", "value": "sklearn-rf"},
]
_METHOD_WORDS = {"forest": "multiway trees", "sklearn-et": "scikit-learn extra-trees",
                 "sklearn-rf": "scikit-learn random-forest trees"}
MODE_LABELS = {
    "samples": "Fresh samples of the problem",
    "bootstrap": "Bootstrap replicates of the data",
    "permutation": "Permutation null (Y shuffled)",
}
VIEWS = ("histogram", "violin")
DEFAULTS = {"R": 100, "N": 500, "T": 50, "K": 1, "depth": None, "method": "forest",
            "mc_seed": 0, "view": "histogram", "sweep": "n_estimators"}
_SWEEP_DEFAULTS = {"n_samples": "50,200,1000", "n_estimators": "1,10,50",
                   "max_depth": "1,2,3", "irrelevant": "0,2,4", "noise": "0,0.1,0.2,0.3",
                   "input_noise": "0,0.1,0.2,0.3"}
_INTEGER_SWEEPS = ("n_samples", "n_estimators", "max_features", "max_depth", "irrelevant")
_PRESETS = (
    ("xor:irrelevant=2", "XOR, 2 relevant + 2 irrelevant bits (Sutera 2013)"),
    ("xor:irrelevant=2,noise=0.1", "XOR + 2 irrelevant, 10 % output noise"),
    ("sym:irrelevant=2", "SYM, 2 relevant + 2 irrelevant bits"),
    ("led", "LED \u2014 7 segments (Louppe et al. 2013)"),
    ("led:irrelevant=3", "LED + 3 irrelevant bits"),
)
#: Variables that get fitted laws (the first ones): each fit runs a KS test.
MAX_FITTED = 60


# -- caps ------------------------------------------------------------------------
def _env_int(name: str, default: int) -> int:
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


def max_replicates() -> int:
    """Largest R: the server's ``VARIMP_MAX_REPLICATES`` (:mod:`pages._ui.limits`)."""
    return limits.max_replicates()


def max_trees() -> int:
    """Largest T: ``VARIMP_MAX_MC_TREES`` or 1,000."""
    return _env_int("VARIMP_MAX_MC_TREES", 1000)


def max_samples() -> int:
    """Largest N: ``VARIMP_MAX_MC_SAMPLES`` or 100,000."""
    return _env_int("VARIMP_MAX_MC_SAMPLES", 100_000)


def max_total_trees() -> int:
    """Most trees one run or sweep may grow: ``VARIMP_MAX_MC_TOTAL_TREES`` or 500,000."""
    return _env_int("VARIMP_MAX_MC_TOTAL_TREES", 500_000)


def max_sweep_values() -> int:
    """Most values of one sweep: ``VARIMP_MAX_SWEEP_VALUES`` or 8."""
    return _env_int("VARIMP_MAX_SWEEP_VALUES", 8)


def caps_text() -> str:
    """The caps, as one line to show next to the controls."""
    return (f"Limits on this server: R \u2264 {max_replicates():,}, T \u2264 {max_trees():,}, "
            f"N \u2264 {max_samples():,}, at most {max_total_trees():,} trees per run or sweep "
            f"(R \u00d7 T, summed over a sweep's values) and {max_sweep_values()} sweep values.")


# -- URL parameters --------------------------------------------------------------
def _values_text(text) -> str:
    t = re.sub(r"\s+", "", str(text))
    if len(t) > 200:
        raise ValueError("the sweep values are too long")
    return t


def page_params() -> tuple[Param, ...]:
    """URL parameters of the page (after the data parameters), with today's caps."""
    return (
        Param("mode", None, choice_parser(tuple(MODE_LABELS), what="replicate kind"),
              "replicate kind"),
        Param("R", DEFAULTS["R"], int_parser(1, max_replicates(), what="number of replicates R"),
              "number of replicates R"),
        Param("N", None, int_parser(1, max_samples(), what="sample size N"), "sample size N"),
        Param("T", DEFAULTS["T"], int_parser(1, max_trees(), what="number of trees T"),
              "number of trees T"),
        Param("K", DEFAULTS["K"], int_parser(1, 100_000, what="K"), "K"),
        Param("depth", None, int_parser(1, 100_000, what="maximum depth"), "maximum depth"),
        Param("method", DEFAULTS["method"],
              choice_parser([o["value"] for o in METHOD_OPTIONS], what="method"), "method"),
        Param("mc_seed", 0, int_parser(0, 2**32 - 1, what="seed"), "seed"),
        Param("view", "histogram", choice_parser(VIEWS, what="view"), "view"),
        Param("sweep", DEFAULTS["sweep"],
              choice_parser(("none",) + SWEEP_PARAMETERS, what="swept parameter"),
              "swept parameter"),
        Param("values", None, _values_text, "sweep values"),
    )


# -- data and choices --------------------------------------------------------------
def _problem(params: Mapping[str, Any]):
    if params.get("source") != "problem":
        return None
    try:
        return get_problem(params["problem"])
    except ValueError:
        return None


def is_synthetic(params: Mapping[str, Any]) -> bool:
    """True for a built-in problem with a generator (fresh samples make sense)."""
    problem = _problem(params)
    return problem is not None and problem.relevant is not None


def _needs_drawn_sample(params: Mapping[str, Any]) -> bool:
    """The data is an exact distribution: bootstrap and permutation draw N rows of it first."""
    p = datasource.canonical_params(params)
    return p["source"] == "problem" and p["sampling"] == "exact"


def problem_options(params: Mapping[str, Any]) -> list[dict]:
    """Presets from the thesis, every built-in problem, the current spec and the upload."""
    opts = [{"label": label, "value": spec} for spec, label in _PRESETS]
    seen = {o["value"] for o in opts}
    opts += [o for o in problem_choices() if o["value"] not in seen]
    seen = {o["value"] for o in opts}
    if params.get("source") == "upload":
        name = params.get("file") or "uploaded table"
        opts.insert(0, {"label": f"Uploaded: {name} \u2192 {params.get('target') or 'last column'}",
                        "value": "upload"})
    elif params.get("problem") and params["problem"] not in seen:
        opts.insert(0, {"label": params["problem"], "value": params["problem"]})
    return opts


def mode_options(params: Mapping[str, Any]) -> list[dict]:
    """Replicate kinds; fresh samples only for problems with a generator."""
    synthetic = is_synthetic(params)
    out = []
    for value, label in MODE_LABELS.items():
        disabled = value == "samples" and not synthetic
        out.append({"label": label + (" (needs a built-in problem)" if disabled else ""),
                    "value": value, "disabled": disabled})
    return out


def _default_mode(params) -> str:
    return "samples" if is_synthetic(params) else "bootstrap"


def sweep_options(params: Mapping[str, Any], mode: str) -> list[dict]:
    """Sweepable parameters for the data and replicate kind (others disabled, with why)."""
    problem = _problem(params)
    own = set(problem.options) if problem is not None else set()
    out = [{"label": "No sweep", "value": "none"}]
    for name in SWEEP_PARAMETERS:
        why = None
        if mode == "permutation":
            why = "not with a permutation null"
        elif name in ("irrelevant", "noise") and (mode != "samples" or name not in own):
            why = "needs fresh samples of a problem with this option"
        out.append({"label": parameter_label(name) + (f" \u2014 {why}" if why else ""),
                    "value": name, "disabled": why is not None})
    return out


def _sweep_allowed(params, mode, parameter) -> bool:
    return any(o["value"] == parameter and not o.get("disabled")
               for o in sweep_options(params, mode))


def default_values(parameter: str, p: int | None = None) -> str:
    """Values a new sweep of ``parameter`` starts with (text for the input)."""
    if parameter == "max_features":
        top = max(1, min(p or 3, 4))
        return ",".join(str(k) for k in range(1, top + 1))
    return _SWEEP_DEFAULTS.get(parameter, "")


def parse_values(text, parameter: str, *, p: int | None = None) -> list:
    """The sweep values from the text input, checked, without duplicates, in increasing order.

    Raises
    ------
    ValueError
        With a sentence naming the bad value and what is allowed.
    """
    parts = [t for t in re.split(r"[,;\s]+", str(text or "").strip()) if t]
    if not parts:
        raise ValueError(f"Enter the values of {parameter_label(parameter)} to sweep, "
                         "separated by commas (e.g. 1, 10, 50).")
    limit = max_sweep_values()
    if len(parts) > limit:
        raise ValueError(f"A sweep takes at most {limit} values; got {len(parts)}.")
    integer = parameter in _INTEGER_SWEEPS
    low = 0 if parameter == "irrelevant" else 1
    high = {"n_samples": max_samples(), "n_estimators": max_trees(), "max_features": p,
            "max_depth": 1000, "irrelevant": 50}.get(parameter)
    out = []
    for t in parts:
        try:
            number = float(t)
        except ValueError:
            raise ValueError(f"The sweep value {t!r} is not a number.") from None
        if not math.isfinite(number):
            raise ValueError(f"The sweep value {t!r} is not a finite number.")
        if integer:
            if number != int(number) or number < low or (high is not None and number > high):
                upper = f" to {high:,}" if high is not None else " or more"
                raise ValueError(f"Values of {parameter_label(parameter)} must be whole numbers "
                                 f"from {low}{upper}; {t!r} is not.")
            out.append(int(number))
        else:
            if not 0 <= number <= 1:
                raise ValueError(f"Values of {parameter_label(parameter)} are probabilities "
                                 f"from 0 to 1; {t!r} is not.")
            out.append(float(number))
    return sorted(set(out))


def _values_query(values: list) -> str:
    return ",".join(str(v) if not isinstance(v, float) else f"{v:g}" for v in values)


# -- state -----------------------------------------------------------------------
def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """Everything ``layout(**query)`` needs: data, control values and notes.

    The data is the URL's when it names one, else the session's (``vi-data``).

    Returns
    -------
    state : dict
        ``data`` (canonical data parameters), ``p``, ``values`` (``problem``,
        ``mode``, ``R``, ``N``, ``T``, ``K``, ``depth``, ``method``,
        ``mc_seed``, ``view``, ``sweep``, ``values``), ``notes`` and ``query``.
    """
    data, notes = data_params_for_page(query or {}, vi_data)
    values, more = parse_query(query or {}, page_params())
    notes += more
    p = data_feature_count(data, vi_data)
    mode = values["mode"] or _default_mode(data)
    if mode == "samples" and not is_synthetic(data):
        notes.append("The link asks for fresh samples, but this data has no generator; "
                     "showing bootstrap replicates of it instead.")
        mode = "bootstrap"
    values["mode"] = mode
    if p is not None and values["K"] > p:
        notes.append(f"The link's K was ignored: this data has {p} inputs, so K must be from 1 "
                     f"to {p}. Using K = 1 instead.")
        values["K"] = 1
    if values["N"] is None and (mode == "samples" or _needs_drawn_sample(data)):
        values["N"] = DEFAULTS["N"]
    if values["sweep"] != "none" and not _sweep_allowed(data, mode, values["sweep"]):
        if "sweep" in (query or {}):
            notes.append(f"The link's sweep of {parameter_label(values['sweep'])} was "
                         "ignored: it is not available for this data and replicate kind.")
        values["sweep"], values["values"] = "none", None
    if values["sweep"] != "none":
        try:
            parsed = parse_values(values["values"] or default_values(values["sweep"], p),
                                  values["sweep"], p=p)
            values["values"] = _values_query(parsed)
        except ValueError as exc:
            notes.append(f"The link's sweep values were ignored: {exc} Using the defaults.")
            values["values"] = default_values(values["sweep"], p)
    else:
        values["values"] = ""
    values["problem"] = "upload" if data["source"] == "upload" else data["problem"]
    return {"data": data, "p": p, "values": values, "notes": notes,
            "query": _query_of(data, values, p)}


def data_for_choice(choice: str | None, base: Mapping[str, Any]) -> dict:
    """Data parameters for the problem dropdown's value (``"upload"`` keeps the session's table).

    Raises
    ------
    ValueError
        For an unknown problem, or "upload" without an uploaded table.
    """
    base = datasource.canonical_params(base or {})
    if choice == "upload":
        if base["source"] != "upload":
            raise ValueError("No uploaded table in this session: choose a problem, or upload a "
                             "CSV file on the Data page.")
        return base
    if not choice:
        raise ValueError("Choose a problem.")
    spec = get_problem(str(choice)).spec
    if base["source"] == "problem" and base["problem"] == spec:
        return base        # keeps the session's own sample (sampling, n, seed)
    return datasource.canonical_params({"source": "problem", "problem": spec,
                                        "bins": base.get("bins", 5)})


def _whole(value, what: str, low: int, high: int | None, default=None):
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"The {what} must be a whole number, got {value!r}.") from None
    limit = f"from {low:,} to {high:,}" if high is not None else f"of at least {low:,}"
    if not math.isfinite(number) or number != int(number) or number < low \
            or (high is not None and number > high):
        raise ValueError(f"The {what} must be a whole number {limit}, got {value!r}.")
    return int(number)


def settings_from_controls(*, problem, data, mode, R, N, T, K, depth, method, mc_seed) -> dict:
    """Canonical settings of one Monte Carlo run from the control values.

    Raises
    ------
    ValueError
        With a sentence: a value out of range, K above the number of inputs,
        a run over the tree budget, fresh samples of data without a generator.
    """
    params = data_for_choice(problem, data)
    if mode not in MODE_LABELS:
        raise ValueError("Choose how the replicates are made: fresh samples, bootstrap or "
                         "permutation null.")
    if mode == "samples" and not is_synthetic(params):
        raise ValueError("Fresh samples need a built-in problem with a generator (XOR, SYM, "
                         "LED, Madelon, Strobl); use bootstrap replicates for this data.")
    if method not in _METHOD_WORDS:
        raise ValueError(f"Choose a method: one of {', '.join(_METHOD_WORDS)}.")
    r = _whole(R, "number of replicates R", 1, max_replicates(), None)
    if r is None:
        raise ValueError(f"Enter the number of replicates R (1 to {max_replicates():,}).")
    t = _whole(T, "number of trees T", 1, max_trees(), None)
    if t is None:
        raise ValueError(f"Enter the number of trees T (1 to {max_trees():,}).")
    n = _whole(N, "sample size N", 1, max_samples(), None)
    drawn = mode == "samples" or _needs_drawn_sample(params)
    if n is None and drawn:
        n = DEFAULTS["N"]
    if mode == "permutation" and not drawn:
        n = None           # the permutation null runs on the data as it is
    p = data_feature_count(params)
    k = _whole(K, "K (variables drawn at each node)", 1, p, None)
    if k is None:
        raise ValueError("Enter K, the number of variables drawn at each node"
                         + (f" (1 to {p})." if p else "."))
    settings = {"data": params, "mode": mode, "R": r, "N": n, "T": t, "K": k,
                "depth": _whole(depth, "maximum depth", 1, None, None), "method": method,
                "seed": _whole(mc_seed, "seed", 0, 2**32 - 1, 0)}
    _check_budget(r * t)
    return settings


def _check_budget(trees: int) -> None:
    cap = max_total_trees()
    if trees > cap:
        raise ValueError(f"This would grow {trees:,} trees, more than the limit of {cap:,} "
                         "(VARIMP_MAX_MC_TOTAL_TREES); lower R, T or the sweep values.")


def sweep_settings(settings: Mapping[str, Any], parameter: str, values_text) -> dict | None:
    """Canonical settings of a sweep (None for "No sweep").

    Raises
    ------
    ValueError
        With a sentence: a parameter not available here, bad values, over budget.
    """
    if parameter in (None, "", "none"):
        return None
    if parameter not in SWEEP_PARAMETERS:
        raise ValueError(f"Choose a parameter to sweep: one of {', '.join(SWEEP_PARAMETERS)}.")
    data, mode = settings["data"], settings["mode"]
    if not _sweep_allowed(data, mode, parameter):
        if mode == "permutation":
            raise ValueError("Sweeps repeat Monte Carlo runs, not a permutation null; switch "
                             "the replicates to fresh samples or bootstrap to sweep.")
        raise ValueError(f"Sweeping {parameter_label(parameter)} needs fresh samples of a "
                         "problem that has this option.")
    values = parse_values(values_text, parameter, p=data_feature_count(data))
    R, T = settings["R"], settings["T"]
    _check_budget(R * sum(values) if parameter == "n_estimators" else R * T * len(values))
    return {"run": dict(settings), "parameter": parameter, "values": values}


def _query_of(data, values: Mapping[str, Any], p) -> str:
    defaults = {"R": DEFAULTS["R"], "T": DEFAULTS["T"], "K": 1, "method": "forest",
                "mc_seed": 0, "view": "histogram", "sweep": DEFAULTS["sweep"],
                "mode": _default_mode(data)}
    page = {}
    for key in ("mode", "R", "N", "T", "K", "depth", "method", "mc_seed", "view", "sweep",
                "values"):
        v = values.get(key)
        if key == "values" and (values.get("sweep") in (None, "none")
                                or v == _values_query(_safe_values(values, p))):
            continue
        if v is None or v == "" or defaults.get(key) == v:
            continue
        if key == "N" and v == DEFAULTS["N"] and (values.get("mode") == "samples"
                                                  or _needs_drawn_sample(data)):
            continue
        page[key] = v
    parts = [datasource.data_query(data), encode_query(page)]
    return "&".join(part for part in parts if part)


def _safe_values(values, p) -> list:
    try:
        return parse_values(default_values(values["sweep"], p), values["sweep"], p=p)
    except ValueError:
        return []


def page_query(settings: Mapping[str, Any], *, view: str = "histogram", sweep_param="none",
               values_text: str = "") -> str:
    """URL query (no ``?``) of run settings plus the view and the sweep."""
    data = settings["data"]
    p = data_feature_count(data)
    values = {"mode": settings["mode"], "R": settings["R"], "N": settings["N"],
              "T": settings["T"], "K": settings["K"], "depth": settings["depth"],
              "method": settings["method"], "mc_seed": settings["seed"], "view": view,
              "sweep": sweep_param or "none", "values": values_text}
    return _query_of(data, values, p)


def query_from_controls(controls: Mapping[str, Any], *, view, sweep_param, values_text
                        ) -> str | None:
    """The URL query of the current controls, or None while they are not valid."""
    try:
        settings = settings_from_controls(**controls)
        if sweep_param not in (None, "", "none"):
            sweep = sweep_settings(settings, sweep_param, values_text)
            values_text = _values_query(sweep["values"])
    except ValueError:
        return None
    return page_query(settings, view=view if view in VIEWS else "histogram",
                      sweep_param=sweep_param, values_text=values_text)


def problem_controls(choice, data, mode, K) -> dict:
    """What the controls show for a problem choice: mode options, K range, description.

    Returns
    -------
    out : dict
        ``mode_options``, ``mode`` (kept when still allowed), ``k_max``,
        ``k`` (clamped), ``description``, ``n_placeholder``,
        ``sweep_options``.
    """
    try:
        params = data_for_choice(choice, data)
    except ValueError:
        params = datasource.canonical_params(data or {})
    options = mode_options(params)
    allowed = {o["value"] for o in options if not o["disabled"]}
    mode = mode if mode in allowed else _default_mode(params)
    p = data_feature_count(params)
    k = K if isinstance(K, (int, float)) and p is not None and 1 <= K <= p else 1
    problem = _problem(params)
    description = problem.description if problem is not None else \
        "Your uploaded table: replicates are bootstrap samples of its rows, or permutations " \
        "of its target."
    blank = "all rows" if not (mode == "samples" or _needs_drawn_sample(params)) \
        else f"{DEFAULTS['N']}"
    return {"mode_options": options, "mode": mode, "k_max": p, "k": k,
            "description": description, "n_placeholder": blank,
            "sweep_options": sweep_options(params, mode)}


# -- results as JSON ------------------------------------------------------------------
def _floats(a) -> list:
    return [None if not math.isfinite(v) else v for v in np.asarray(a, float).ravel().tolist()]


def _array(values, shape=None) -> np.ndarray:
    a = np.array([np.nan if v is None else v for v in values], dtype=float)
    return a.reshape(shape) if shape is not None else a


def result_to_dict(result) -> dict:
    """JSON-able form of a MonteCarloResult (without its population) or PermutationNull."""
    if isinstance(result, PermutationNull):
        return {"kind": "permutation", "variables": list(result.variables),
                "observed": _floats(result.observed), "null": result.null.tolist(),
                "parameters": result.parameters, "source": result.source,
                "n_requested": result.n_requested, "cancelled": bool(result.cancelled),
                "elapsed": float(result.elapsed)}
    return {"kind": "monte_carlo", "variables": list(result.variables),
            "replicates": result.replicates.tolist(), "information": _floats(result.information),
            "exact": None if result.exact is None else _floats(result.exact),
            "exact_source": result.exact_source,
            "relevant": None if result.relevant is None else list(result.relevant),
            "n_levels": [int(v) for v in result.n_levels], "n_classes": int(result.n_classes),
            "parameters": result.parameters, "problem": str(result.problem),
            "n_requested": int(result.n_requested), "cancelled": bool(result.cancelled),
            "elapsed": float(result.elapsed)}


def result_from_dict(d: Mapping[str, Any]):
    """Inverse of :func:`result_to_dict` (the population is not restored)."""
    p = len(d["variables"])
    if d["kind"] == "permutation":
        null = np.array(d["null"], dtype=float).reshape(-1, p)
        return PermutationNull(variables=tuple(d["variables"]), observed=_array(d["observed"]),
                               null=null, parameters=dict(d["parameters"]), source=d["source"],
                               n_requested=d["n_requested"], cancelled=d["cancelled"],
                               elapsed=d["elapsed"])
    reps = np.array(d["replicates"], dtype=float).reshape(-1, p)
    return MonteCarloResult(
        variables=tuple(d["variables"]), replicates=reps, information=_array(d["information"]),
        exact=None if d["exact"] is None else _array(d["exact"]),
        exact_source=d["exact_source"],
        relevant=None if d["relevant"] is None else tuple(d["relevant"]),
        n_levels=np.array(d["n_levels"]), n_classes=d["n_classes"],
        parameters=dict(d["parameters"]), problem=d["problem"], n_requested=d["n_requested"],
        cancelled=d["cancelled"], elapsed=d["elapsed"])


def _records(df: pd.DataFrame) -> dict:
    return {c: [None if isinstance(v, float) and not math.isfinite(v) else v
                for v in df[c].tolist()] for c in df.columns}


def _frame(records: Mapping[str, list] | None) -> pd.DataFrame | None:
    if records is None:
        return None
    df = pd.DataFrame(dict(records))
    for c in df.columns:
        if df[c].dtype == object and df[c].map(lambda v: v is None or isinstance(
                v, (int, float)) and not isinstance(v, bool)).all():
            df[c] = df[c].astype(float)
    return df


def _fits(variables, samples: np.ndarray, relevance) -> pd.DataFrame:
    """A scaled chi-square and a normal fit for every column (NaN where impossible)."""
    rows = []
    for j, v in enumerate(variables):
        for kind, fit in (("chi2", fit_scaled_chi2), ("normal", fit_normal)):
            row = {"variable": v, "relevant": relevance[j], "distribution": kind,
                   "df": np.nan, "scale": np.nan, "mean": np.nan, "std": np.nan,
                   "ks_statistic": np.nan, "ks_pvalue": np.nan, "n": int(samples.shape[0])}
            try:
                f = fit(samples[:, j])
            except ValueError:
                rows.append(row)
                continue
            row.update(f.params)
            row.update(ks_statistic=f.ks_statistic, ks_pvalue=f.ks_pvalue)
            rows.append(row)
    return pd.DataFrame(rows)


# -- computing ------------------------------------------------------------------------
def run_key(settings: Mapping[str, Any]) -> str:
    return cache.key_for("dist-run", dict(settings))


def sweep_key(sweep: Mapping[str, Any]) -> str:
    return cache.key_for("dist-sweep", dict(sweep))


def _prepared(settings: Mapping[str, Any]):
    """The data that bootstrap and permutation replicates start from."""
    params = settings["data"]
    if _needs_drawn_sample(params):
        params = dict(params, sampling="sample", n=settings["N"], seed=settings["seed"])
    return datasource.load_prepared(params)


def _core_options(settings: Mapping[str, Any], progress, should_stop, what: str) -> dict:
    R = settings["R"]

    def report(done, total):
        if progress is not None:
            progress(done, total, f"{int(done):,} of {int(total):,} {what}")

    return dict(method=settings["method"], n_estimators=settings["T"],
                max_features=settings["K"], max_depth=settings["depth"],
                random_state=settings["seed"], chunk_size=max(1, math.ceil(R / 50)),
                progress=report, should_stop=should_stop)


def _monte_carlo_view(settings, progress=None, should_stop=None) -> dict:
    opts = _core_options(settings, progress, should_stop,
                         "permutations" if settings["mode"] == "permutation" else "replicates")
    if settings["mode"] == "samples":
        # With REDIS_URL set, replicates fan out as a Celery group (None: run here).
        result = monte_carlo(settings["data"]["problem"], n_replicates=settings["R"],
                             n_samples=settings["N"], mapper=fanout.replicate_mapper(), **opts)
    elif settings["mode"] == "bootstrap":
        result = monte_carlo(_prepared(settings), n_replicates=settings["R"],
                             n_samples=settings["N"], **opts)
    else:
        opts.pop("random_state")
        result = permutation_null(_prepared(settings), n_permutations=settings["R"],
                                  random_state=settings["seed"], **opts)
    if isinstance(result, PermutationNull):
        samples, relevance = result.null, [None] * len(result.variables)
        overlay = None
    else:
        samples = result.replicates
        relevance = [None if result.relevant is None else v in result.relevant
                     for v in result.variables]
        overlay = _records(plugin_bias_overlay(result)) if result.n_replicates else None
    fitted = slice(0, MAX_FITTED)
    return {"result": result_to_dict(result),
            "fits": _records(_fits(result.variables[fitted], samples[:, fitted],
                                   relevance[fitted])),
            "overlay": overlay}


def compute_view(settings: Mapping[str, Any], *, progress=None, should_stop=None) -> dict:
    """The run's view (cached), or its partial view when ``should_stop`` ended it.

    Returns
    -------
    view : dict
        ``result`` (:func:`result_to_dict`), ``fits`` (records of a chi-square
        and a normal fit per variable), ``overlay`` (records of
        :func:`varimp_core.nulls.plugin_bias_overlay` or None), ``partial``
        (True when cancelled; then nothing was cached under :func:`run_key`).
    """
    settings = dict(settings)

    def compute() -> dict:
        view = _monte_carlo_view(settings, progress, should_stop)
        if view["result"]["cancelled"]:
            raise Stopped(view)
        return view

    return cached_view(run_key(settings), compute)


def compute_sweep(sweep_spec: Mapping[str, Any], *, progress=None, should_stop=None) -> dict:
    """Statistics of a sweep (cached), or the partial ones when ``should_stop`` ended it.

    Returns
    -------
    view : dict
        ``stats`` (records of
        :func:`varimp_core.plots.distributions.sweep_statistics`),
        ``parameter``, ``values`` (asked), ``done`` (values with replicates),
        ``partial``.
    """
    spec = dict(sweep_spec)
    settings, parameter = spec["run"], spec["parameter"]

    def compute() -> dict:
        opts = _core_options(settings, progress, should_stop, "replicates")
        kwargs = {"method": opts["method"], "n_estimators": opts["n_estimators"],
                  "max_features": opts["max_features"], "max_depth": opts["max_depth"],
                  "chunk_size": opts["chunk_size"]}
        if settings["N"] is not None:
            kwargs["n_samples"] = settings["N"]
        kwargs.pop(parameter, None)
        source = settings["data"]["problem"] if settings["mode"] == "samples" else \
            _prepared(settings)
        if isinstance(source, str):
            kwargs["mapper"] = fanout.replicate_mapper()
        df = sweep(source, parameter, spec["values"], n_replicates=settings["R"],
                   random_state=settings["seed"], replicates=True, progress=opts["progress"],
                   should_stop=should_stop, **kwargs)
        stats = sweep_statistics(df)
        view = {"stats": _records(stats), "parameter": parameter, "values": spec["values"],
                "done": sorted(set(stats["value"].tolist()))}
        if df.attrs.get("cancelled"):
            raise Stopped(view)
        return view

    return cached_view(sweep_key(spec), compute)


def run_monte_carlo(settings: Mapping[str, Any], *, instance: str, progress=None) -> dict:
    """Run (or read) the Monte Carlo view; the page's ``dist-current`` value and status.

    Returns
    -------
    out : dict
        ``current``: ``{"key", "partial", "settings", "done", "requested"}``
        (None when cancelled before any replicate finished); ``status``: a
        sentence for the status line.
    """
    clear_stop(instance, "run")
    view = compute_view(settings, progress=progress,
                        should_stop=lambda: stop_requested(instance, "run"))
    result = view["result"]
    done = len(result["null"] if result["kind"] == "permutation" else result["replicates"])
    key, partial = keep_view(view, run_key(settings), instance, "dist-partial")
    if partial and done == 0:
        return {"current": None, "status": "Cancelled before any replicate finished; the page "
                                           "shows the last finished result."}
    current = {"key": key, "partial": partial, "settings": dict(settings), "done": done,
               "requested": settings["R"]}
    if partial:
        status = (f"Cancelled after {done:,} of {settings['R']:,} replicates; the figures and "
                  "tables show these.")
    else:
        status = f"{done:,} replicates (computed in {result['elapsed']:.1f} s)."
    return {"current": current, "status": status}


def run_sweep(spec: Mapping[str, Any], *, instance: str, progress=None) -> dict:
    """Run (or read) a sweep; the page's ``dist-sweep-current`` value and status."""
    clear_stop(instance, "sweep")
    view = compute_sweep(spec, progress=progress,
                         should_stop=lambda: stop_requested(instance, "sweep"))
    key, partial = keep_view(view, sweep_key(spec), instance, "dist-partial")
    done, asked = len(view["done"]), len(spec["values"])
    if partial and done == 0:
        return {"current": None, "status": "Cancelled before the first value finished."}
    current = {"key": key, "partial": partial, "spec": dict(spec)}
    if partial:
        stats = _frame(view["stats"])
        last = int(stats["n_replicates"].iloc[-1]) if len(stats) else 0
        status = (f"Cancelled: {done} of {asked} values reached, the last with {last:,} of "
                  f"{spec['run']['R']:,} replicates; the chart shows these.")
    else:
        status = f"Sweep of {asked} values done."
    return {"current": current, "status": status}


# -- rendering ---------------------------------------------------------------------
_NUM = Format(precision=4, scheme=Scheme.fixed)
_SIGNED = Format(precision=4, scheme=Scheme.fixed, sign="+")


def _load(current: Mapping[str, Any] | None, what: str):
    if not current or not current.get("key"):
        return None
    view = cache.get_json(current["key"])
    if view is None:
        raise ValueError(f"The {what} is no longer on the server (it may have expired); change a "
                         "setting or reload the page to compute it again.")
    return view


def fit_table(fits: pd.DataFrame) -> tuple[list, list]:
    """Goodness-of-fit table: one row per variable and law, with the KS distance."""
    cols = [{"name": "Variable", "id": "variable"}, {"name": "Relevance", "id": "relevance"},
            {"name": "Law", "id": "law"}, {"name": "Parameters", "id": "parameters"},
            {"name": "KS distance D", "id": "ks_statistic", "type": "numeric", "format": _NUM},
            {"name": "KS p-value", "id": "ks_pvalue", "type": "numeric",
             "format": Format(precision=3, scheme=Scheme.fixed)},
            {"name": "Closer fit", "id": "closer"}]
    rows = []
    for v, d in fits.groupby("variable", sort=False):
        best = d["ks_statistic"].idxmin() if d["ks_statistic"].notna().any() else None
        for i, r in d.iterrows():
            rel = r["relevant"]
            relevance = "" if rel is None or (isinstance(rel, float) and math.isnan(rel)) else \
                ("relevant" if rel else "irrelevant")
            if r["distribution"] == "chi2":
                law = "scaled \u03c7\u00b2"
                params = "" if not np.isfinite(r["df"]) else \
                    f"k = {r['df']:.3g}, s = {r['scale']:.3g}"
            else:
                law = "normal"
                params = "" if not np.isfinite(r["mean"]) else \
                    f"\u03bc = {r['mean']:.4f}, \u03c3 = {r['std']:.4f}"
            rows.append({"variable": v, "relevance": relevance, "law": law,
                         "parameters": params or "no fit (constant values)",
                         "ks_statistic": _num(r["ks_statistic"]),
                         "ks_pvalue": _num(r["ks_pvalue"]),
                         "closer": "\u2713" if i == best else ""})
    return cols, rows


def _num(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _summary_table(result) -> tuple[list, list]:
    df = make_summary_table_frame(result)
    numeric = {c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])}
    cols = []
    for c in df.columns:
        col = {"name": c, "id": c}
        if c in numeric and c != "R":
            col.update(type="numeric", format=_SIGNED if "\u2212" in c else _NUM)
        cols.append(col)
    rows = [{c: (_num(v) if c in numeric and c != "R" else v) for c, v in row.items()}
            for row in df.to_dict("records")]
    return cols, rows


def summary_sentences(view: Mapping[str, Any], settings: Mapping[str, Any],
                      kind: str = "histogram") -> list[str]:
    """What the figures show, in a few sentences with the core's numbers."""
    result = result_from_dict(view["result"])
    N, T, K = settings["N"], settings["T"], settings["K"]
    depth = "fully grown" if settings["depth"] is None else f"depth \u2264 {settings['depth']}"
    trees = f"T = {T:,} {_METHOD_WORDS[settings['method']]} (K = {K}, {depth})"
    data = settings["data"]
    what = data["problem"] if data["source"] == "problem" else (data.get("file") or "the upload")
    out = []
    if isinstance(result, PermutationNull):
        n = result.n_permutations
        out.append(f"{n:,} permutations of the target of {what}; on each, a forest of {trees}. "
                   "The distributions are the importances a variable gets when it carries no "
                   "information; the black marks are the importances on the data itself.")
        above = [v for v, a in zip(result.variables, result.above_null) if a]
        if n:
            out.append(("Above the 95 % quantile of their null: " + ", ".join(above) + "."
                        ) if above else "No variable is above the 95 % quantile of its null.")
        return out
    n = result.n_replicates
    if settings["mode"] == "samples":
        how = f"fresh samples of N = {N:,} rows of {what}"
    else:
        how = f"bootstrap replicates of {what}" + (f" (N = {N:,} rows each)" if N else "")
    out.append(f"{n:,} data sets ({how}); on each, a forest of {trees}.")
    if result.exact is not None and n:
        ref = "value on the full sample" if result.exact_source == "full sample" else \
            "exact value (infinite sample, infinite forest)"
        out.append(f"Black lines: each variable's {ref}; grey curves: a scaled \u03c7\u00b2 "
                   "(dashed) and a normal law (solid) fitted to the replicates." if kind ==
                   "histogram" else f"Black diamonds: each variable's {ref}.")
    overlay = _frame(view.get("overlay"))
    if overlay is not None and n:
        irr = overlay[(overlay["relevant"] == False) & overlay["expected"].notna()]  # noqa: E712
        if len(irr):
            means = ", ".join(f"{v} {m:.4f}" for v, m in zip(irr["variable"], irr["mean"]))
            out.append(f"Irrelevant variables still get positive importances (mean {means} "
                       "bits): finite samples bias the plug-in mutual information upwards "
                       f"(Geurts 2016). The red {'dotted line' if kind == 'histogram' else 'cross'}"
                       f" is the K = 1 prediction of that bias, {irr['expected'].mean():.4f} "
                       "bits on average.")
    return out


def render(current: Mapping[str, Any] | None, view_kind: str = "histogram") -> dict:
    """Figure, tables and sentences of the current run (from the cache).

    Returns
    -------
    out : dict
        ``figure``, ``table_columns``, ``table_rows``, ``fit_columns``,
        ``fit_rows``, ``sentences``, ``partial_note`` ("" unless cancelled).

    Raises
    ------
    ValueError
        When the stored view expired.
    """
    view = _load(current, "result")
    if view is None:
        empty = placeholder_figure("No result yet.")
        return {"figure": empty, "table_columns": [], "table_rows": [], "fit_columns": [],
                "fit_rows": [], "sentences": [], "partial_note": ""}
    result = result_from_dict(view["result"])
    fits = _frame(view["fits"])
    overlay = _frame(view.get("overlay"))
    fig = make_distribution_figure(result, fits, overlay=overlay,
                                   kind=view_kind if view_kind in VIEWS else "histogram")
    table_columns, table_rows = _summary_table(result)
    fit_columns, fit_rows = fit_table(fits)
    sentences = summary_sentences(view, current["settings"], view_kind)
    p = len(result.variables)
    if p > MAX_FITTED:
        sentences.append(f"Laws are fitted to the first {MAX_FITTED} of the {p} variables; "
                         f"the histograms show the first {MAX_PANELS}, the violins the first "
                         f"{MAX_VIOLINS}; the table has them all.")
    note = ""
    if current.get("partial"):
        note = (f"Partial result: cancelled after {current['done']:,} of "
                f"{current['requested']:,} replicates.")
    return {"figure": fig, "table_columns": table_columns, "table_rows": table_rows,
            "fit_columns": fit_columns, "fit_rows": fit_rows,
            "sentences": sentences, "partial_note": note}


def render_sweep(current: Mapping[str, Any] | None) -> dict:
    """Sweep figure and a sentence (from the cache)."""
    view = _load(current, "sweep")
    if view is None:
        fig = placeholder_figure("Choose a parameter to sweep (left).")
        fig.update_layout(height=160)
        return {"figure": fig, "note": ""}
    stats = _frame(view["stats"])
    parameter = view["parameter"]
    values = [float(v) for v in view["values"]]
    log_x = parameter in ("n_estimators", "n_samples") and min(values) > 0 and \
        max(values) / min(values) >= 10
    fig = make_sweep_figure(stats, parameter, log_x=log_x)
    note = ("Dashed lines: exact values. Standard deviations are over the R data sets; for T, "
            "the dotted line falls as 1/\u221aT: the tree part of the variance (b/T in "
            "Var = a + b/T, Sutera 2013 eq. 3.23) follows it, the data-set part a does not."
            if parameter == "n_estimators" else
            "Dashed lines: exact values. Standard deviations are over the R data sets; rank "
            "stability is the share of replicates that rank a variable where the exact values "
            "(or, without them, the means) rank it.")
    if current.get("partial"):
        note = "Partial result (cancelled). " + note
    return {"figure": fig, "note": note}


# -- export ---------------------------------------------------------------------------
def _safe_csv(df: pd.DataFrame) -> str:
    df = df.copy()
    df.columns = [neutralise_cell(str(c)) for c in df.columns]
    for c in df.columns:
        if df[c].dtype == object or pd.api.types.is_string_dtype(df[c]):
            df[c] = df[c].map(neutralise_cell)
    return df.to_csv(index=False, lineterminator="\n")


def csv_text(what: str, current: Mapping[str, Any] | None) -> str:
    """CSV of the ``"summary"`` table, the ``"replicates"`` or the ``"sweep"`` statistics.

    Text cells a spreadsheet would run as formulas (= + - @ ...) are prefixed with ``'``.
    """
    if what == "sweep":
        view = _load(current, "sweep")
        if view is None:
            raise ValueError("There is no sweep to download yet.")
        df = _frame(view["stats"])
        df.insert(0, "parameter", view["parameter"])
        return _safe_csv(df)
    view = _load(current, "result")
    if view is None:
        raise ValueError("There is no result to download yet.")
    result = result_from_dict(view["result"])
    if what == "summary":
        return _safe_csv(make_summary_table_frame(result))
    values = result.null if isinstance(result, PermutationNull) else result.replicates
    R, p = values.shape
    df = pd.DataFrame({"replicate": np.repeat(np.arange(R), p),
                       "variable": list(result.variables) * R, "importance": values.ravel()})
    if isinstance(result, PermutationNull):
        df["observed"] = np.tile(result.observed, R)
    elif result.exact is not None:
        df["exact"] = np.tile(result.exact, R)
    return _safe_csv(df)


def csv_filename(what: str, current: Mapping[str, Any] | None) -> str:
    """``varimp-distributions-<data>-<mode>-<what>.csv`` with only safe characters."""
    settings = (current or {}).get("settings") or (current or {}).get("spec", {}).get("run") or {}
    data = settings.get("data") or {}
    name = data.get("problem") if data.get("source") == "problem" else (data.get("file") or
                                                                        "upload")
    name = re.sub(r"\.csv$", "", str(name or "data"), flags=re.I)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{settings.get('mode', '')}-{what}")
    return f"varimp-distributions-{slug.strip('-.')[:80]}.csv"
