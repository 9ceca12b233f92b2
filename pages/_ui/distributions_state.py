"""Page state and settings of the Distributions page: from URL and controls to settings.

Part of :mod:`pages._ui.distributions_logic` (which re-exports every public
name here): the state ``layout(**query)`` starts from, the canonical settings
of a run or a sweep built from the controls (checked against the caps of
:mod:`pages._ui.distributions_choices`), and the URL query that reproduces them.
"""

from __future__ import annotations

from typing import Any, Mapping

from varimp_core.studies.montecarlo import SWEEP_PARAMETERS
from varimp_core.plots.distributions import parameter_label
from varimp_core.problems.registry import get_problem

from . import datasource
from .distributions_choices import (DEFAULTS, MODE_LABELS, VIEWS, _METHOD_WORDS, _default_mode,
                                    _needs_drawn_sample, _problem, _sweep_allowed,
                                    _values_query, default_values, is_synthetic,
                                    max_replicates, max_samples, max_total_trees, max_trees,
                                    mode_options, page_params, parse_values, sweep_options)
from .datasource import data_feature_count, data_params_for_page
from .state import whole_number as _whole
from .state import encode_query, parse_query

__all__ = [
    "initial_state", "data_for_choice", "settings_from_controls", "sweep_settings",
    "page_query", "query_from_controls", "problem_controls",
]


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
