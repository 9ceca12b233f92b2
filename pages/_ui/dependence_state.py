"""State of the Dependence page: its URL parameters and the partial dependences' settings.

The page's link holds the data and forest parameters (shared with the
Interactions page, :mod:`pages._ui.local_forest`), then the variables, grid,
percentiles, ICE lines, class and positions.  This module validates them into
the page's state and canonical settings and writes the page's URL query; the
computing, figures and CSV exports live in :mod:`pages._ui.dependence_logic`,
which re-exports everything here.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from . import datasource
from . import interactions_logic, local_forest as forest
from .state import whole_number
from .state import Param, choice_parser, encode_query, float_parser, int_parser

__all__ = [
    "PREFIX", "PARAMS", "MAX_GRID", "MAX_GRID_2D", "MAX_ICE", "MAX_PD_ROWS", "POSITION_OPTIONS",
    "ALL_CLASSES", "initial_state", "dependence_settings", "page_query", "check_positions",
]

PREFIX = "dep"
MAX_GRID = 200
#: Grid points per axis of a 2-D partial dependence (the cost grows with the square).
MAX_GRID_2D = 20
MAX_ICE = 500
#: Rows averaged by a partial dependence (a seeded subset of the assessed rows beyond it).
MAX_PD_ROWS = 1000
ALL_CLASSES = "all"
POSITION_OPTIONS = [
    {"label": "1st", "value": "1"},
    {"label": "1st or 2nd", "value": "12"},
    {"label": "any", "value": "all"},
]
_POSITIONS = {"1": 1, "12": [1, 2], "all": "all"}


def _name(text) -> str:
    return str(text)[:200]


#: URL parameters of the page (after the data and forest parameters).
PARAMS: tuple[Param, ...] = forest.forest_params(forest.SKLEARN_KINDS) + (
    Param("feature", None, _name, "variable"),
    Param("feature2", None, _name, "second variable"),
    Param("grid", 30, int_parser(2, MAX_GRID, what="grid resolution"), "grid resolution"),
    Param("low", 0.05, float_parser(0.0, 1.0, what="lower percentile"), "lower percentile"),
    Param("high", 0.95, float_parser(0.0, 1.0, what="upper percentile"), "upper percentile"),
    Param("ice", 50, int_parser(0, MAX_ICE, what="number of ICE lines"), "number of ICE lines"),
    Param("label", None, _name, "class"),
    Param("positions", "all", choice_parser(tuple(_POSITIONS), what="positions"), "positions"),
)
_DEFAULTS = {p.name: p.default for p in PARAMS}


# -- state -----------------------------------------------------------------------------
def initial_state(query: Mapping[str, Any], vi_data: Any = None) -> dict:
    """Everything ``layout(**query)`` needs.

    Returns
    -------
    state : dict
        As :func:`interactions_logic.initial_state`, plus ``variables`` (the
        inputs, [] when the data cannot be loaded) and ``data_error`` (a
        sentence, or None).  ``feature`` defaults to the first input;
        unknown variables in the link are dropped with a note.
    """
    st = interactions_logic.initial_state(query, vi_data, PARAMS)
    values, notes = st["values"], st["notes"]
    try:
        variables = forest.data_variables(st["page_data"])
        error = None
    except ValueError as exc:
        variables, error = [], str(exc)
    for key, what in (("feature", "variable"), ("feature2", "second variable")):
        v = values[key]
        if v is not None and variables and v not in variables:
            notes.append(f"The link's {what} {v!r} was ignored: this data has no input of "
                         "that name.")
            values[key] = None
    if values["feature"] is None and variables:
        values["feature"] = variables[0]
    if values["feature2"] == values["feature"]:
        values["feature2"] = None
    if values["low"] >= values["high"]:
        notes.append("The link's percentiles were ignored: the lower one must be below the "
                     "upper one. Using 0.05 and 0.95 instead.")
        values["low"], values["high"] = _DEFAULTS["low"], _DEFAULTS["high"]
    st.update(variables=variables, data_error=error,
              query=page_query(st["data"], values))
    return st


def page_query(data: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    """The page's URL query: the data query, then the values that differ from their defaults."""
    kept = {k: v for k, v in values.items()
            if v is not None and v != "" and v != _DEFAULTS.get(k, object())}
    parts = [datasource.data_query(data), encode_query(kept)]
    return "&".join(part for part in parts if part)


def dependence_settings(*, feature, feature2=None, grid=30, low=0.05, high=0.95, ice=50,
                        variables: Sequence[str] | None = None) -> dict:
    """Canonical settings of the partial dependences (what the background job computes).

    Raises
    ------
    ValueError
        With a sentence for the page.
    """
    if feature in (None, ""):
        raise ValueError("Choose a variable.")
    feature2 = None if feature2 in (None, "", "none") else str(feature2)
    if variables is not None:
        for f in (feature, feature2):
            if f is not None and f not in variables:
                raise ValueError(f"This data has no input {f!r}; choose one of its variables.")
    if feature2 == feature:
        raise ValueError("Choose two different variables for the 2-D partial dependence "
                         "(or no second variable).")
    g = whole_number(grid, "grid resolution", 2, MAX_GRID, None)
    if g is None:
        raise ValueError(f"Enter the grid resolution (2 to {MAX_GRID}).")
    try:
        lo, hi = float(low), float(high)
    except (TypeError, ValueError):
        raise ValueError("The percentiles must be numbers from 0 to 1.") from None
    if not (0 <= lo < hi <= 1):
        raise ValueError(f"The percentiles must satisfy 0 \u2264 low < high \u2264 1, got "
                         f"{lo:g} and {hi:g}.")
    n_ice = whole_number(ice, "number of ICE lines", 0, MAX_ICE, 0)
    return {"feature": str(feature), "feature2": feature2, "grid": g,
            "percentiles": [round(lo, 4), round(hi, 4)], "ice": n_ice}


def check_positions(positions) -> str:
    """The positions choice of the dependence over responses ("1", "12" or "all")."""
    if positions not in _POSITIONS:
        raise ValueError("Choose the positions: 1st, 1st or 2nd, or any.")
    return positions
