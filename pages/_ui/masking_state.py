"""State of the Masking page: its problems, URL parameters and URL query.

The page's problem is LED, XOR or SYM (a built-in problem with a small exact
distribution) with 0..6 irrelevant fair bits and optionally a noisy copy of
one variable.  This module holds the page's constants and URL parameters,
reads the link into the page's state and writes the page's URL query; the
control settings and the computing live in :mod:`pages._ui.masking_logic`,
which re-exports everything here.
"""

from __future__ import annotations

from typing import Any, Mapping

from varimp_core.problems.registry import get_problem, parse_spec

from . import datasource, limits
from .state import (Param, bool_parser, choice_parser, encode_query, float_parser, int_parser,
                    parse_query)

__all__ = [
    "PREFIX", "PROBLEMS", "MAX_IRRELEVANT", "MAX_TREES", "MAX_FLIP", "DEFAULT_PROBLEM",
    "NO_COPY", "PARAMS", "problem_options", "split_spec", "full_spec", "copy_options",
    "n_inputs", "problem_description", "problem_controls", "initial_state", "page_query",
]

PREFIX = "masking"
#: Built-in problems with a small exact distribution and an ``irrelevant`` option.
PROBLEMS = ("led", "xor", "sym")
MAX_IRRELEVANT = 6
MAX_TREES = 2000  # the page's cap; VARIMP_MAX_TREES may lower it (pages._ui.limits)
MAX_FLIP = 0.5
DEFAULT_PROBLEM = "led"
NO_COPY = "none"

_PRESET_PROBLEMS = (
    ("led", "LED \u2014 7 segments (Table 2)"),
    ("led:noise=0.1", "LED \u2014 segments flipped with probability 0.1"),
    ("xor", "XOR of 2 bits"),
    ("xor:relevant=3", "XOR of 3 bits"),
    ("sym", "SYM \u2014 2 bits, symmetric"),
)


def _problem_parser(text: str) -> str:
    name, _ = parse_spec(str(text))
    if name not in PROBLEMS:
        raise ValueError(f"the Masking page shows LED, XOR or SYM (problems with a small exact "
                         f"distribution), not {name!r}")
    spec = get_problem(str(text)).spec
    if split_spec(spec)[1] > MAX_IRRELEVANT:
        raise ValueError(f"the Masking page adds at most {MAX_IRRELEVANT} irrelevant variables")
    return spec


def _copy_parser(text: str) -> str | None:
    t = str(text).strip()
    if t == "" or t.lower() == NO_COPY:
        return None
    return t.upper()


#: URL parameters of the page (after the data choice's ``problem``).
PARAMS: tuple[Param, ...] = (
    Param("problem", DEFAULT_PROBLEM, _problem_parser, "problem"),
    Param("copy", None, _copy_parser, "noisy copy"),
    Param("flip", 0.1, float_parser(0.0, MAX_FLIP, what="copy noise"), "copy noise"),
    Param("semantics", "id3", choice_parser(("id3", "sklearn"), what="K semantics"),
          "K semantics"),
    Param("axis", "K", choice_parser(("K", "depth"), what="x axis"), "x axis"),
    Param("K", 1, int_parser(1, 64, what="K of the depth view"), "K of the depth view"),
    Param("depth", None, int_parser(1, 64, what="maximum depth"), "maximum depth"),
    Param("sampled", False, bool_parser, "sampled forests"),
    Param("trees", 200, limits.count_parser(1, lambda: limits.max_trees(MAX_TREES),
                                            what="number of trees"), "number of trees"),
    Param("tree_seed", 0, int_parser(0, 2**32 - 1, what="forest seed"), "forest seed"),
)
_DEFAULTS = {p.name: p.default for p in PARAMS}


# -- problems ------------------------------------------------------------------------
def split_spec(spec: str) -> tuple[str, int]:
    """``"led:irrelevant=3,noise=0.1"`` -> ``("led:noise=0.1", 3)``."""
    name, options = parse_spec(spec)
    base = {k: v for k, v in options.items() if k != "irrelevant"}
    return datasource.spec_from_options(name, base), int(options.get("irrelevant", 0))


def full_spec(base: str, irrelevant: int) -> str:
    """Base spec plus ``irrelevant`` fair bits, canonical."""
    name, options = parse_spec(base)
    options = {k: v for k, v in options.items() if k != "irrelevant"}
    if irrelevant:
        options["irrelevant"] = int(irrelevant)
    return datasource.spec_from_options(name, options)


def problem_options(current: str | None = None) -> list[dict]:
    """Dropdown options: a few presets, plus ``current`` when it is another base spec."""
    opts = [{"label": label, "value": spec} for spec, label in _PRESET_PROBLEMS]
    if current and current not in {o["value"] for o in opts}:
        opts.append({"label": current, "value": current})
    return opts


def copy_options(base: str) -> list[dict]:
    """Variables of the base problem that can get a noisy copy, after "No copy"."""
    relevant = get_problem(base).relevant or ()
    return [{"label": "No copy", "value": NO_COPY}] + [{"label": v, "value": v} for v in relevant]


def n_inputs(base: str, irrelevant: int, copy: str | None) -> int:
    """Number of inputs p of the page's table."""
    return len(get_problem(base).variables) + int(irrelevant or 0) + (1 if copy else 0)


def problem_description(base: str) -> str:
    """One or two sentences about the base problem, from the core."""
    return get_problem(base).description


def problem_controls(base: str | None, copy: str | None) -> tuple[list[dict], str, str]:
    """Copy options, the copy value to show (kept when still valid) and the description."""
    try:
        options = copy_options(base or DEFAULT_PROBLEM)
        description = problem_description(base or DEFAULT_PROBLEM)
    except ValueError:
        options, description = copy_options(DEFAULT_PROBLEM), problem_description(DEFAULT_PROBLEM)
    values = {o["value"] for o in options}
    return options, copy if copy in values else NO_COPY, description


# -- URL ------------------------------------------------------------------------------
def initial_state(query: Mapping[str, Any], vi_data: Mapping[str, Any] | None = None
                  ) -> tuple[dict, list[str]]:
    """Validated page state from the URL, falling back to the session's data choice.

    The page's problem is the URL's ``problem`` when there is one, else the
    session's problem when it is LED, XOR or SYM, else LED.

    Returns
    -------
    state : dict
        ``base`` (spec without irrelevant bits), ``irrelevant``, ``copy``
        (variable name or None), ``flip``, ``semantics``, ``axis``, ``k``,
        ``depth`` (None: full), ``sampled``, ``trees``, ``forest_seed``.
    notes : list of str
        Sentences about values of the link that could not be used.
    """
    query = dict(query or {})
    notes: list[str] = []
    params = (vi_data or {}).get("params") if isinstance(vi_data, Mapping) else None
    params = params if isinstance(params, Mapping) else {}
    upload = query.get("source") == "upload" or (
        "problem" not in query and params.get("source") == "upload")
    if upload:
        query.pop("problem", None)
        notes.append("The Masking page needs a built-in problem with an exact distribution "
                     "(LED, XOR or SYM), so it shows LED; your uploaded table is still "
                     "used by the other pages.")
    elif "problem" not in query and params.get("problem"):
        query["problem"] = params["problem"]
    if "problem" in query:
        try:
            _problem_parser(_last(query["problem"]))
        except ValueError:
            notes.append(_not_shown(_last(query["problem"])))
            query.pop("problem")
    values, more = parse_query(query, PARAMS)
    notes += more
    base, irrelevant = split_spec(values["problem"])
    variables = [o["value"] for o in copy_options(base)][1:]
    if values["copy"] is not None and values["copy"] not in variables:
        notes.append(f"The link's noisy copy of {values['copy']} was ignored: "
                     f"{base} has the variables {', '.join(variables)}.")
        values["copy"] = None
    p = n_inputs(base, irrelevant, values["copy"])
    k = min(values["K"], p)
    depth = values["depth"]
    if depth is not None and depth >= p:
        depth = None
    state = {"base": base, "irrelevant": irrelevant, "copy": values["copy"],
             "flip": values["flip"], "semantics": values["semantics"], "axis": values["axis"],
             "k": k, "depth": depth, "sampled": values["sampled"], "trees": values["trees"],
             "forest_seed": values["tree_seed"]}
    return state, notes


def _last(value):
    return value[-1] if isinstance(value, (list, tuple)) and value else value


def _not_shown(text) -> str:
    try:
        name, _ = parse_spec(str(text))
    except ValueError as exc:
        return f"The link's problem was ignored: {exc} Showing LED instead."
    if name in PROBLEMS:
        return (f"The Masking page adds at most {MAX_IRRELEVANT} irrelevant variables, so it "
                f"shows LED instead of {text}.")
    return (f"The Masking page needs a built-in problem with a small exact distribution "
            f"(LED, XOR or SYM), so it shows LED instead of {name}; the other pages still use "
            f"{name}.")


def page_query(settings: Mapping[str, Any], *, sampled: bool = False, trees: int = 200,
               forest_seed: int = 0, k: int | None = None, depth: int | None = None) -> str:
    """The page's URL query (no ``?``): the problem, then non-default page values.

    ``k`` and ``depth`` keep the value of the control that the current axis
    does not use, so switching the axis back restores it.
    """
    values = {
        "problem": full_spec(settings["base"], settings["irrelevant"]),
        "copy": settings["copy"],
        "flip": settings["flip"] if settings["copy"] else None,
        "semantics": settings["semantics"],
        "axis": settings["axis"],
        "K": settings["k"] if settings["k"] is not None else k,
        "depth": settings["depth"] if settings["depth"] is not None else depth,
        "sampled": bool(sampled),
        "trees": trees,
        "tree_seed": forest_seed,
    }
    kept = {key: v for key, v in values.items()
            if key == "problem" or (v is not None and v != _DEFAULTS.get(key))}
    return encode_query(kept)
