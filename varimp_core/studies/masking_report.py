"""What a masking study says: Table 2 as a table beside the paper's values, and sentences.

:func:`importance_table` turns a long table of :mod:`varimp_core.studies.masking` (one row per
variable and K, or per variable and depth) into the wide table of Louppe et al. (2013, Table 2):
one row per variable and a row of sums, one column per K, with the paper's values and their
differences beside ours when the study is the paper's (:func:`table2_mismatch` says why not
otherwise).  :func:`summary_sentences` writes what to notice in the study, with its numbers.

The paper's values live here, once: :data:`LOUPPE2013_TABLE2`.

References
----------
.. [1] G. Louppe, L. Wehenkel, A. Sutera and P. Geurts, "Understanding variable
   importances in forests of randomized trees", NIPS 2013: Table 2, section 5.3.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from varimp_core.csvtext import csv_filename
from varimp_core.studies.masking import grid_column
from varimp_core.studies.masking_copy import UPLOAD, study_spec

__all__ = ["LOUPPE2013_TABLE2", "LOUPPE2013_TABLE2_SUM", "TABLE2_COLUMNS", "table2_mismatch",
           "importance_table", "table2_sentences", "order_text", "summary_sentences",
           "study_table", "csv_name"]

#: Louppe et al. (2013), Table 2, for X1..X7 of the LED: the column "Eqn. 3" (Theorem 1,
#: computed) and the columns K = 1..7 (10,000 randomized trees), all truncated to 3 decimals.
LOUPPE2013_TABLE2: dict[Any, tuple[float, ...]] = {
    "Eqn 3": (0.412, 0.581, 0.531, 0.542, 0.656, 0.225, 0.372),
    1: (0.414, 0.583, 0.532, 0.543, 0.658, 0.221, 0.368),
    2: (0.362, 0.663, 0.512, 0.525, 0.731, 0.140, 0.385),
    3: (0.327, 0.715, 0.496, 0.484, 0.778, 0.126, 0.392),
    4: (0.309, 0.757, 0.489, 0.445, 0.810, 0.122, 0.387),
    5: (0.304, 0.787, 0.483, 0.414, 0.827, 0.122, 0.382),
    6: (0.305, 0.801, 0.475, 0.409, 0.831, 0.121, 0.375),
    7: (0.306, 0.799, 0.475, 0.412, 0.835, 0.120, 0.372),
}
#: The row of sums the paper prints under every column: I(X;Y) = log2 10 = 3.321 (Theorem 2).
LOUPPE2013_TABLE2_SUM = 3.321
#: The headers of the paper's columns, in its order.
TABLE2_COLUMNS = ("Eqn 3", *(f"K = {k}" for k in range(1, 8)))
_PAPER_SETTINGS = ("the noiseless LED with no irrelevant variable and no copy, "
                   "id3 K semantics and fully grown trees, against K")


def table2_mismatch(settings: Mapping[str, Any]) -> str | None:
    """Why the paper's Table 2 does not apply to a masking study, or None when it does.

    Parameters
    ----------
    settings : mapping
        The study: ``problem`` (a spec without irrelevant bits), ``irrelevant`` (int),
        ``copy`` (a variable name, or None or ``"none"``), ``k_semantics``, ``axis``
        (``"K"`` or ``"depth"``) and ``max_depth`` (``"full"``/None or an int).

    Returns
    -------
    str or None
        One sentence naming every difference from the paper's settings.
    """
    reasons = []
    if settings.get("problem") == UPLOAD:
        reasons.append("the table is your upload")
    elif settings.get("problem") != "led":
        reasons.append(f"the problem is {settings.get('problem')}")
    if settings.get("irrelevant"):
        reasons.append(f"{settings['irrelevant']} irrelevant variables are added")
    if settings.get("copy") not in (None, "", "none"):
        reasons.append(f"a noisy copy of {settings['copy']} is added")
    if settings.get("k_semantics", "id3") != "id3":
        reasons.append("K follows scikit-learn's semantics")
    if settings.get("axis", "K") != "K":
        reasons.append("the view is against depth")
    elif settings.get("max_depth") not in (None, "full"):
        reasons.append(f"trees stop at depth {settings['max_depth']}")
    if not reasons:
        return None
    return (f"The paper's values (Louppe et al. 2013, Table 2) are for {_PAPER_SETTINGS}; here "
            + ", ".join(reasons[:-1]) + (" and " if len(reasons) > 1 else "") + reasons[-1]
            + ", so only our exact values are shown.")


def importance_table(df: pd.DataFrame, *, x: str | None = None, paper: bool = False
                     ) -> pd.DataFrame:
    """Importances as a wide table: one row per variable and a row of sums, one column per K.

    Parameters
    ----------
    df : DataFrame
        A long table of :func:`~varimp_core.studies.masking.importance_vs_k` or
        :func:`~varimp_core.studies.masking.importance_vs_depth` (``variable``, ``K`` or
        ``depth``, ``importance``).
    x : {"K", "depth"}, optional
        The varying column; default: whichever of the two ``df`` has.
    paper : bool, default=False
        Put the paper's Table 2 beside ours: then ``df`` must hold exact, fully grown
        importances of X1..X7 for K = 1..7, and the table starts with the column Eqn 3, ours
        being the exact K = 1 values (Theorem 1: the infinite forest of totally randomized
        trees is Eqn 3).

    Returns
    -------
    DataFrame
        ``variable`` (X1.., then ``"Sum"``), then per column ``c`` (``"K = 1"``, ...,
        ``"depth = 1"``, ...): ``c`` (ours, bits) and, with ``paper``, ``"c (paper)"`` and
        ``"c (ours - paper)"``.  The paper's sum is the 3.321 it prints under every column.

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> from varimp_core.studies.masking import importance_vs_k
    >>> t = importance_table(importance_vs_k(get_problem("xor").exact_table()))
    >>> t.to_dict("list")
    {'variable': ['X1', 'X2', 'Sum'], 'K = 1': [0.5, 0.5, 1.0], 'K = 2': [0.5, 0.5, 1.0]}
    """
    x = grid_column(df, x)
    variables = list(dict.fromkeys(df["variable"]))
    wide = df.pivot(index="variable", columns=x, values="importance").reindex(variables)
    wide.columns = [f"{x} = {v}" for v in wide.columns]
    if paper:
        if variables != [f"X{j}" for j in range(1, 8)] or list(wide.columns) != \
                list(TABLE2_COLUMNS[1:]):
            raise ValueError("The paper's Table 2 is for X1..X7 of the LED and K = 1..7; "
                             f"this table has {', '.join(variables)} and {', '.join(wide.columns)}.")
        wide.insert(0, "Eqn 3", wide["K = 1"])
    wide.loc["Sum"] = wide.sum()
    out = pd.DataFrame({"variable": list(wide.index)})
    for column in wide.columns:
        out[column] = wide[column].to_numpy(dtype=float)
        if paper:
            key = "Eqn 3" if column == "Eqn 3" else int(column.split("= ")[1])
            theirs = [*LOUPPE2013_TABLE2[key], LOUPPE2013_TABLE2_SUM]
            out[f"{column} (paper)"] = theirs
            out[f"{column} (ours - paper)"] = out[column] - theirs
    return out


def table2_sentences(table: pd.DataFrame, mismatch: str | None) -> list[str]:
    """What the table of :func:`importance_table` shows, with its largest differences.

    Parameters
    ----------
    table : DataFrame
        From :func:`importance_table`.
    mismatch : str or None
        :func:`table2_mismatch` of the study (None: the table has the paper's columns).
    """
    if mismatch is not None:
        return [mismatch]
    rows = table[table["variable"] != "Sum"].set_index("variable")
    eqn3 = rows["Eqn 3 (ours - paper)"]
    ks = rows[[f"{c} (ours - paper)" for c in TABLE2_COLUMNS[1:]]].abs()
    var, col = ks.stack().idxmax()
    above = (f"exceeds it by at most {eqn3.max():.4f} bits" if eqn3.min() >= 0 else
             f"differs from it by {eqn3.min():.4f} to {eqn3.max():.4f} bits")
    return [f"Ours are exact (the infinite forest on the exact distribution); the paper's are "
            f"truncated to 3 decimals, so our Eqn 3 column {above}. The paper's K columns average 10,000 randomized trees: "
            f"the largest difference from ours is {ks.loc[var, col]:.4f} bits ({var}, "
            f"{col.split(' (')[0]}), sampling error. Our Eqn 3 and K = 1 columns are the same "
            "exact values (Theorem 1)."]


def order_text(d: pd.DataFrame) -> str:
    """``"X5 > X2 = X3 > X8 (0 bits)"``: every variable, most important first.

    ``d`` holds one K (or depth) of a long table with ``variable``, ``importance`` and
    ``rank``; variables tied in rank are joined by ``=``, and the group with no importance
    at all (irrelevant, or masked) ends the order, marked ``(0 bits)``.
    """
    d = d.sort_values(["rank", "variable"])
    groups = [(" = ".join(g["variable"]), g["importance"].abs().max() <= 1e-9)
              for _, g in d.groupby("rank", sort=True)]
    return " > ".join(text + (" (0 bits)" if zero else "") for text, zero in groups)


def summary_sentences(df: pd.DataFrame, settings: Mapping[str, Any], *,
                      information: float | None, copy_name: str | None = None) -> list[str]:
    """What to notice in a masking study, in a few sentences with its numbers.

    Parameters
    ----------
    df : DataFrame
        A long table of :func:`~varimp_core.studies.masking.importance_vs_k` or
        :func:`~varimp_core.studies.masking.importance_vs_depth`.
    settings : mapping
        As for :func:`table2_mismatch`, with ``max_features`` (K of the depth view),
        ``copy`` and ``flip`` (the noise of the copy).
    information : float or None
        :math:`I(X;Y)` of the table.
    copy_name : str, optional
        Name of the noisy copy in ``df`` (``"X5'"``).
    """
    x = grid_column(df, None)
    p = df["variable"].nunique()
    sums = df.groupby(x)["importance"].sum()
    if x == "depth":
        return [f"{p} inputs, K = {settings['max_features']}. Trees stopped at depth D keep the "
                "parts of the importances from nodes above depth D (Proposition 6 at K=1); the "
                f"full-depth sum {sums.iloc[-1]:.4f} bits is I(X;Y)."]
    out = []
    if settings.get("max_depth") in (None, "full") and information is not None:
        spread = (f"{sums.mean():.4f} bits" if sums.max() - sums.min() < 5e-5 else
                  f"{sums.min():.4f}\u2013{sums.max():.4f} bits")
        out.append(f"{p} inputs; I(X;Y) = {information:.4f} bits. The importances sum to "
                   f"{spread} at every K (Theorem 2).")
    else:
        out.append(f"{p} inputs; trees stop at depth {settings['max_depth']}, so the sums "
                   f"({sums.min():.3f}\u2013{sums.max():.3f} bits) stay below "
                   f"I(X;Y) = {information:.3f} bits.")
    k1 = df[df.K == 1].set_index("variable")["importance"]
    kp = df[df.K == df.K.max()].set_index("variable")["importance"]
    irrelevant = settings.get("irrelevant")
    if irrelevant:
        out.append(f"The {irrelevant} irrelevant variable"
                   f"{'s get' if irrelevant > 1 else ' gets'} 0 at K=1 and leave the "
                   "others' K=1 values unchanged (Theorems 3 and 5); at K>1 they dilute the "
                   "draws, which damps masking.")
    if copy_name:
        orig = settings["copy"]
        out.append(f"{copy_name} copies {orig} with {settings['flip']:g} noise: at K=1 {orig} "
                   f"has {k1[orig]:.3f} and {copy_name} {k1[copy_name]:.3f} bits; at K={p} "
                   f"{orig} has {kp[orig]:.3f} and {copy_name} {kp[copy_name]:.3f} \u2014 "
                   f"{'masked' if kp[copy_name] < 0.5 * k1[copy_name] else 'not masked'}"
                   f" by {orig}.")
    first, last = order_text(df[df.K == 1]), order_text(df[df.K == df.K.max()])
    if first != last:
        out.append(f"The order changes: {first} at K=1, {last} at K={p}.")
    return out


def study_table(curves, settings: Mapping[str, Any]) -> tuple[pd.DataFrame, str | None]:
    """The table of a study: :func:`importance_table` of its
    :class:`~varimp_core.studies.masking.MaskingCurves`, with the paper's columns when
    ``settings`` are the paper's, and :func:`table2_mismatch` (None then, else why not)."""
    mismatch = table2_mismatch(settings)
    return importance_table(curves.frame, x=curves.x, paper=mismatch is None), mismatch


def csv_name(settings: Mapping[str, Any], what: str, data: Any = None) -> str:
    """The file name of a masking study's CSV: ``varimp-masking-<problem>-<settings>-<what>.csv``.

    Parameters
    ----------
    settings : mapping
        As for :func:`summary_sentences`; only the settings that differ from the defaults
        (a noisy copy, a binary method, scikit-learn's K, the K of the depth view, a depth
        limit) are named.
    what : str
        What the file holds (``"table"``, ``"by-K"``).
    data : data choice, optional
        Names the file of an uploaded table (``settings["problem"] == "upload"``).

    Examples
    --------
    >>> csv_name({"problem": "led", "irrelevant": 2, "copy": "X5", "flip": 0.1,
    ...           "k_semantics": "id3", "axis": "K", "max_depth": "full"}, "table")
    'varimp-masking-led-irrelevant-2-copy-X5-0.1-table.csv'
    """
    s = settings
    parts = [f"copy-{s['copy']}-{s['flip']:g}" if s.get("copy", "none") != "none" else "",
             "" if s.get("method", "exact") == "exact" else s["method"],
             "" if s["k_semantics"] == "id3" else s["k_semantics"],
             f"K{s['max_features']}" if s["axis"] == "depth" else
             ("" if s["max_depth"] == "full" else f"depth{s['max_depth']}"), what]
    return csv_filename("masking", data, *(x for x in parts if x),
                        name=None if s["problem"] == UPLOAD else study_spec(s))
