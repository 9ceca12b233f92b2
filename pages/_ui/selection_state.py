"""State and settings of the Selection page: caps, URL parameters and settings.

Part of :mod:`pages._ui.selection_logic` (which re-exports every public name
here): the page's constants and caps (read from the environment on every
call), the URL parameters and the state ``layout(**query)`` starts from, and
the canonical settings of sections 1 and 2 (relevance and permutation null)
and of the RS/SRS study built from the controls, with the URL query that
reproduces them.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from varimp_core.studies.selection import MADELON_IRRELEVANT

from . import datasource, limits
from .distributions_logic import METHOD_OPTIONS, data_for_choice
from .datasource import data_feature_count, data_params_for_page
from .state import whole_number as _whole
from .state import Param, choice_parser, encode_query, float_parser, int_parser, parse_query

__all__ = [
    "PREFIX", "NULL_PREFIX", "RS_PREFIX", "DEFAULTS", "RS_CHOICES", "max_null_trees",
    "max_rs_trees", "max_permutations", "max_seeds", "caps_text", "page_params",
    "initial_state", "null_settings", "rs_settings", "page_query", "query_from_controls",
]

PREFIX = "sel"
NULL_PREFIX = "sel-null"
RS_PREFIX = "sel-rs"
DEFAULTS = {"tol": None, "R": 50, "trees": 50, "method": "forest", "null_seed": 0, "N": 500,
            "rs": "480", "q": 50, "alpha": 0.5, "K": None, "T": 300, "L": 5, "beta": 0.95,
            "seeds": 1, "show": "srs"}
#: Problems of the RS/SRS section: Madelon with k irrelevant features, or the page's data.
RS_CHOICES = tuple(str(k) for k in MADELON_IRRELEVANT) + ("data",)
_MAX_SEEDS = 10
_MAX_NULL_TOTAL = 100_000              # R x T of one permutation null
_MAX_RS_TOTAL = 60_000                 # seeds x 2 methods x T


# -- caps ------------------------------------------------------------------------------
def max_null_trees() -> int:
    """Largest T of the permutation forests: 1,000 or ``VARIMP_MAX_TREES`` if lower."""
    return limits.max_trees(1000)


def max_rs_trees() -> int:
    """Largest T of one RS/SRS run: 5,000 or ``VARIMP_MAX_TREES`` if lower."""
    return limits.max_trees(5000)


def max_permutations() -> int:
    """Largest R: 1,000 or ``VARIMP_MAX_REPLICATES`` if lower."""
    return limits.max_replicates(1000)


def max_seeds() -> int:
    return _MAX_SEEDS


def caps_text() -> str:
    return (f"Limits on this server: R \u2264 {max_permutations():,} permutations of "
            f"T \u2264 {max_null_trees():,} trees (R \u00d7 T \u2264 {_MAX_NULL_TOTAL:,}); "
            f"RS/SRS T \u2264 {max_rs_trees():,}, at most {_MAX_SEEDS} seeds and "
            f"{_MAX_RS_TOTAL:,} trees per study (seeds \u00d7 2 \u00d7 T); relevance classes "
            f"for at most {limits.max_exact_features()} inputs.")


# -- URL parameters -------------------------------------------------------------------
def _tol(text) -> float:
    return float_parser(0.0, 1.0, what="threshold tol")(text)


def page_params() -> tuple[Param, ...]:
    """URL parameters of the page (after the data parameters), with today's caps."""
    return (
        Param("tol", None, _tol, "threshold tol"),
        Param("R", DEFAULTS["R"], int_parser(1, max_permutations(), what="number of "
                                             "permutations R"), "number of permutations R"),
        Param("trees", DEFAULTS["trees"], int_parser(1, max_null_trees(), what="number of "
                                                     "trees"), "number of trees"),
        Param("method", DEFAULTS["method"],
              choice_parser([o["value"] for o in METHOD_OPTIONS], what="method"), "method"),
        Param("null_seed", 0, int_parser(0, 2**32 - 1, what="seed"), "seed"),
        Param("N", DEFAULTS["N"], int_parser(2, datasource.MAX_SAMPLES, what="sample size N"),
              "sample size N"),
        Param("rs", DEFAULTS["rs"], choice_parser(RS_CHOICES, what="RS/SRS problem"),
              "RS/SRS problem"),
        Param("q", DEFAULTS["q"], int_parser(1, 100_000, what="subspace size q"),
              "subspace size q"),
        Param("alpha", DEFAULTS["alpha"], float_parser(0.0, 1.0, what="\u03b1"), "\u03b1"),
        Param("K", None, int_parser(1, 100_000, what="K"), "K"),
        Param("T", DEFAULTS["T"], int_parser(1, max_rs_trees(), what="number of trees T"),
              "number of trees T"),
        Param("L", DEFAULTS["L"], int_parser(1, 100_000, what="L"), "L"),
        Param("beta", DEFAULTS["beta"], float_parser(0.01, 1.0, what="\u03b2"), "\u03b2"),
        Param("seeds", DEFAULTS["seeds"], int_parser(1, _MAX_SEEDS, what="number of seeds"),
              "number of seeds"),
        Param("show", DEFAULTS["show"], choice_parser(("srs", "rs"), what="shown method"),
              "shown method"),
    )


def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """Everything ``layout(**query)`` needs: data, control values, notes and the query.

    The data is the URL's when it names one, else the session's (``vi-data``).
    """
    data, notes = data_params_for_page(query or {}, vi_data)
    values, more = parse_query(query or {}, page_params())
    notes += more
    values["problem"] = "upload" if data["source"] == "upload" else data["problem"]
    query_text = None
    try:
        ns = null_settings(problem=values["problem"], data=data, tol=values["tol"],
                           R=values["R"], trees=values["trees"], method=values["method"],
                           seed=values["null_seed"], N=values["N"])
        rs = rs_settings(choice=values["rs"], data=data, q=values["q"], alpha=values["alpha"],
                         K=values["K"], T=values["T"], L=values["L"], beta=values["beta"],
                         seeds=values["seeds"])
        query_text = page_query(ns, rs, show=values["show"])
    except ValueError as exc:
        notes.append(f"The link's settings cannot run together: {exc} Using the defaults.")
        for k in ("trees", "R", "T", "seeds", "q", "K"):
            values[k] = DEFAULTS[k]
    if query_text is None:
        query_text = datasource.data_query(data)
    return {"data": data, "p": data_feature_count(data, vi_data), "values": values,
            "notes": notes, "query": query_text}


# -- settings ---------------------------------------------------------------------------
def _fraction(value, what: str, low: float, high: float, default=None, *, open_low=False):
    if value is None or (isinstance(value, str) and not value.strip()):
        if default is None:
            raise ValueError(f"Enter {what} (a number from {low:g} to {high:g}).")
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what[0].upper() + what[1:]} must be a number, got {value!r}.") \
            from None
    if not math.isfinite(number) or number > high or number < low or (open_low and
                                                                      number <= low):
        side = "above" if open_low else "from"
        raise ValueError(f"{what[0].upper() + what[1:]} must be a number {side} {low:g} to "
                         f"{high:g}, got {value!r}.")
    return float(number)


def _needs_sample(data: Mapping[str, Any]) -> bool:
    p = datasource.canonical_params(data)
    return p["source"] == "problem" and p["sampling"] == "exact"


def null_settings(*, problem, data, tol, R, trees, method, seed, N) -> dict:
    """Canonical settings of sections 1 and 2 from the control values.

    Raises
    ------
    ValueError
        With a sentence naming the bad value.
    """
    params = data_for_choice(problem, data)
    if method not in {o["value"] for o in METHOD_OPTIONS}:
        raise ValueError("Choose the forest of the permutation null: ours, scikit-learn "
                         "extra-trees or random forest.")
    r = _whole(R, "number of permutations R", 1, max_permutations())
    t = _whole(trees, "number of trees", 1, max_null_trees())
    if r is None or t is None:
        raise ValueError(f"Enter the number of permutations R (1 to {max_permutations():,}) "
                         f"and of trees (1 to {max_null_trees():,}).")
    if r * t > _MAX_NULL_TOTAL:
        raise ValueError(f"R \u00d7 T = {r * t:,} trees is more than the limit of "
                         f"{_MAX_NULL_TOTAL:,}; lower R or the number of trees.")
    n = _whole(N, "sample size N", 2, datasource.MAX_SAMPLES, DEFAULTS["N"])
    tol_value = None if tol is None or (isinstance(tol, str) and not tol.strip()) else \
        _fraction(tol, "the threshold tol (bits)", 0.0, 1.0, 0.0)
    return {"data": params, "tol": tol_value, "R": r, "T": t, "method": method,
            "seed": _whole(seed, "seed", 0, 2**32 - 1, 0),
            "N": n if _needs_sample(params) else None}


def rs_settings(*, choice, data, q, alpha, K, T, L, beta, seeds) -> dict:
    """Canonical settings of the RS/SRS study from the control values.

    ``choice`` is a number of irrelevant Madelon features or ``"data"`` (the
    page's data: a built-in problem or an upload, classification only).

    Raises
    ------
    ValueError
        With a sentence naming the bad value.
    """
    if choice not in RS_CHOICES:
        raise ValueError("Choose the RS/SRS problem: Madelon with 480, 1,480, 2,980 or 5,480 "
                         "irrelevant features, or the current data.")
    if choice == "data":
        params = datasource.canonical_params(data or {})
        p = data_feature_count(params)
        source = {"kind": "data", "data": params}
    else:
        p = 20 + int(choice)
        source = {"kind": "madelon", "irrelevant": int(choice)}
    qv = _whole(q, "subspace size q", 1, p)
    if qv is None:
        raise ValueError(f"Enter the subspace size q (1 to {p:,}, the number of inputs).")
    t = _whole(T, "number of trees T", 1, max_rs_trees())
    if t is None:
        raise ValueError(f"Enter the number of trees T (1 to {max_rs_trees():,}).")
    s = _whole(seeds, "number of seeds", 1, _MAX_SEEDS, 1)
    if 2 * s * t > _MAX_RS_TOTAL:
        raise ValueError(f"{s} seed(s) \u00d7 2 methods \u00d7 T = {2 * s * t:,} trees is more "
                         f"than the limit of {_MAX_RS_TOTAL:,}; lower T or the seeds.")
    return {"source": source, "q": qv,
            "alpha": _fraction(alpha, "\u03b1", 0.0, 1.0, DEFAULTS["alpha"]),
            "K": _whole(K, "K (candidates per node)", 1, qv + 1, None), "T": t,
            "L": _whole(L, "L (least number of draws)", 1, 100_000, DEFAULTS["L"]),
            "beta": _fraction(beta, "\u03b2", 0.0, 1.0, DEFAULTS["beta"], open_low=True),
            "seeds": s}


def page_query(null: Mapping[str, Any], rs: Mapping[str, Any], *, show: str = "srs") -> str:
    """URL query (no ``?``) of both sections' settings; defaults are left out."""
    page = {"tol": null["tol"], "R": null["R"], "trees": null["T"], "method": null["method"],
            "null_seed": null["seed"], "N": null["N"],
            "rs": "data" if rs["source"]["kind"] == "data" else str(rs["source"]["irrelevant"]),
            "q": rs["q"], "alpha": rs["alpha"], "K": rs["K"], "T": rs["T"], "L": rs["L"],
            "beta": rs["beta"], "seeds": rs["seeds"], "show": show}
    page = {k: v for k, v in page.items() if v is not None and v != DEFAULTS.get(k)}
    parts = [datasource.data_query(null["data"]), encode_query(page)]
    return "&".join(part for part in parts if part)


def query_from_controls(null_controls: Mapping[str, Any], rs_controls: Mapping[str, Any],
                        show: str) -> str | None:
    """The URL query of the current controls, or None while they are not valid."""
    try:
        ns = null_settings(**null_controls)
        rs = rs_settings(data=ns["data"], **rs_controls)
    except ValueError:
        return None
    return page_query(ns, rs, show=show if show in ("rs", "srs") else "srs")
