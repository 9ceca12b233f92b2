"""Constants, caps, URL parameters and choices of the Distributions page.

Part of :mod:`pages._ui.distributions_logic` (which re-exports every public
name here): the page's constants, the caps read from the environment on every
call (``VARIMP_MAX_REPLICATES``, ``VARIMP_MAX_MC_TREES``,
``VARIMP_MAX_MC_SAMPLES``, ``VARIMP_MAX_MC_TOTAL_TREES``,
``VARIMP_MAX_SWEEP_VALUES``), the URL parameters, the dropdowns' options and
the parsing of sweep values.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping

from varimp_core.data.csvfile import env_limit as _env_int
from varimp_core.studies.montecarlo import SWEEP_PARAMETERS
from varimp_core.plots.distributions import parameter_label
from varimp_core.problems.registry import get_problem

from . import datasource, limits
from .controls import problem_choices
from .state import Param, choice_parser, int_parser

__all__ = [
    "PREFIX", "SWEEP_PREFIX", "MAX_FITTED", "METHOD_OPTIONS", "MODE_LABELS", "VIEWS", "DEFAULTS",
    "max_replicates", "max_trees", "max_samples", "max_total_trees", "max_sweep_values",
    "caps_text", "page_params", "is_synthetic", "problem_options", "mode_options",
    "sweep_options", "default_values", "parse_values",
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
