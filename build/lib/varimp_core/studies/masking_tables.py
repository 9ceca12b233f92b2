"""Long tables of importances for :mod:`varimp_core.studies.masking`: checks, ranks and builder.

The input checks shared by the masking functions, :func:`rank_importances`
(ranks within each K or depth, ties averaged) and the builder of the long ``variable`` / ``K``
(or ``depth``) / ``importance`` / ``rank`` tables.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from varimp_core.exact.splitting import TIE_TOLERANCE, validate_max_features
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import validate_max_depth

__all__ = ["rank_importances"]

#: Decimals kept when ranking: importances closer than TIE_TOLERANCE tie.
_RANK_DECIMALS = int(round(-math.log10(TIE_TOLERANCE)))


# -- validation -----------------------------------------------------------------
def check_table(table) -> DiscreteTable:
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")
    if table.n_rows == 0 or table.total_weight <= 0:
        raise ValueError("The table is empty: it has no rows with positive weight.")
    return table


def _grid(values, p: int, validate: Callable[[int, int], int], empty: str) -> list[int]:
    """Sorted distinct values of K or D, each checked by ``validate(value, p)``; default 1..p."""
    if values is None:
        return list(range(1, p + 1))
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        values = [values]
    out = sorted({validate(v, p) for v in values})
    if not out:
        raise ValueError(empty)
    return out


def check_ks(ks, p: int) -> list[int]:
    return _grid(ks, p, validate_max_features, "Give at least one value of K.")


def check_depths(depths, p: int) -> list[int]:
    return _grid(depths, p, validate_max_depth, "Give at least one depth.")


# -- ranks and long tables --------------------------------------------------------
def rank_importances(df: pd.DataFrame, *, by: str, column: str = "importance") -> pd.Series:
    """Rank of each variable within each value of ``by``: 1 = most important.

    Parameters
    ----------
    df : DataFrame
        Long table with ``by`` and ``column``.
    by : str
        Grouping column (``"K"`` or ``"depth"``).
    column : str, default="importance"

    Returns
    -------
    ranks : Series of float
        Ties (values closer than ``TIE_TOLERANCE``) share the average of their
        ranks, so two variables tied for first both get 1.5.
    """
    values = df[column].astype(float).round(_RANK_DECIMALS)
    return values.groupby(df[by]).rank(ascending=False, method="average")


def long_frame(variables: Sequence[str], xs: Sequence[int], values: np.ndarray, x: str,
           extra: dict | None = None) -> pd.DataFrame:
    """Long table from a (len(xs), p) array of importances."""
    p = len(variables)
    df = pd.DataFrame({
        "variable": np.tile(np.asarray(variables, dtype=object), len(xs)),
        x: np.repeat(np.asarray(xs, dtype=int), p),
        "importance": np.asarray(values, dtype=float).ravel(),
    })
    for name, col in (extra or {}).items():
        df[name] = np.asarray(col, dtype=float).ravel()
    df["rank"] = rank_importances(df, by=x)
    return df
