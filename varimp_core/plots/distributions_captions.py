"""The words and tables beside the figures of :mod:`varimp_core.plots.distributions`.

Pure functions of an :class:`~varimp_core.studies.distributions.ImportanceDistribution`
(importances over Monte Carlo or bootstrap replicates, or a permutation null)
and of a sweep: the goodness-of-fit table of the fitted laws, what the figures
show in a few sentences with the study's numbers, the note of a sweep, and the
tables a CSV download holds.

>>> name_list(["X1", "X2", "X3"], limit=2)
'X1, X2 and 1 more'
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from varimp_core.plots.distributions import make_summary_table_frame
from varimp_core.studies.distributions import MAX_VIOLINS, ImportanceDistribution
from varimp_core.studies.nulls import PermutationNull

__all__ = ["METHOD_WORDS", "name_list", "above_null_sentence", "fit_table_frame",
           "distribution_sentences", "sweep_note", "distribution_csv_frame"]

#: How a sentence names the trees of each forest method.
METHOD_WORDS = {"forest": "multiway trees", "sklearn-et": "scikit-learn extra-trees",
                "sklearn-rf": "scikit-learn random-forest trees"}


def name_list(items, limit: int = 12) -> str:
    """``"X1, X2 and 40 more"``: names for a sentence, at most ``limit`` of them."""
    items = list(items)
    if not items:
        return "none"
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit:,} more" if len(items) > limit else "")


def above_null_sentence(null: PermutationNull, mark: str = "") -> str:
    """Which variables a permutation null puts above its 95 % quantile, as one sentence."""
    above = [v for v, a in zip(null.variables, null.above_null) if a]
    return (f"Above the 95 % quantile of their null{mark}: {name_list(above)}." if above else
            "No variable is above the 95 % quantile of its null.")


def fit_table_frame(fits: pd.DataFrame) -> pd.DataFrame:
    """Goodness of fit: one row per variable and law, with the Kolmogorov-Smirnov distance.

    ``fits`` comes from :func:`varimp_core.studies.fits.fit_laws` (a scaled
    :math:`\\chi^2` with ``df`` and ``scale``, a normal law with ``mean`` and
    ``std``); the law with the smaller KS distance D of each variable is ticked.
    """
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
            rows.append({"Variable": v, "Relevance": relevance, "Law": law,
                         "Parameters": params or "no fit (constant values)",
                         "KS distance D": float(r["ks_statistic"]),
                         "KS p-value": float(r["ks_pvalue"]),
                         "Closer fit": "\u2713" if i == best else ""})
    return pd.DataFrame(rows, columns=["Variable", "Relevance", "Law", "Parameters",
                                       "KS distance D", "KS p-value", "Closer fit"])


def distribution_sentences(dist: ImportanceDistribution, *, data_name: str, method: str,
                           n_estimators: int, max_features: int, max_depth: int | None,
                           kind: str = "histogram") -> list[str]:
    """What the figures of a study show, in a few sentences with its numbers.

    The irrelevant variables' mean importance is compared with the K = 1
    prediction of the plug-in bias (Geurts 2016) carried by ``dist.overlay``;
    when laws were fitted to the first variables only, the last sentence says
    how many of them each view shows.
    """
    sentences = _study_sentences(dist, data_name=data_name, method=method, kind=kind,
                                 n_estimators=n_estimators, max_features=max_features,
                                 max_depth=max_depth)
    p, fitted = len(dist.result.variables), dist.fits["variable"].nunique()
    if fitted < p:
        sentences.append(f"Laws are fitted to the first {fitted} of the {p} variables; the "
                         f"histograms show the first {len(dist.panels.variables)}, the violins "
                         f"the first {min(p, MAX_VIOLINS)}; the table has them all.")
    return sentences


def _study_sentences(dist: ImportanceDistribution, *, data_name: str, method: str,
                     n_estimators: int, max_features: int, max_depth: int | None,
                     kind: str) -> list[str]:
    result, N, overlay = dist.result, dist.n_samples, dist.overlay
    depth = "fully grown" if max_depth is None else f"depth \u2264 {max_depth}"
    trees = (f"T = {n_estimators:,} {METHOD_WORDS[method]} (K = {max_features}, {depth})")
    if isinstance(result, PermutationNull):
        n = result.n_permutations
        out = [f"{n:,} permutations of the target of {data_name}; on each, a forest of {trees}. "
               "The distributions are the importances a variable gets when it carries no "
               "information; the black marks are the importances on the data itself."]
        if n:
            out.append(above_null_sentence(result))
        return out
    n = result.n_replicates
    how = f"fresh samples of N = {N:,} rows of {data_name}" if dist.mode == "samples" else \
        f"bootstrap replicates of {data_name}" + (f" (N = {N:,} rows each)" if N else "")
    sentences = [f"{n:,} data sets ({how}); on each, a forest of {trees}."]
    if result.exact is not None and n:
        ref = "value on the full sample" if result.exact_source == "full sample" else \
            "exact value (infinite sample, infinite forest)"
        sentences.append(
            f"Black lines: each variable's {ref}; grey curves: a scaled \u03c7\u00b2 (dashed) "
            "and a normal law (solid) fitted to the replicates." if kind == "histogram" else
            f"Black diamonds: each variable's {ref}.")
    if overlay is not None and n:
        irr = overlay[(overlay["relevant"] == False) & overlay["expected"].notna()]  # noqa: E712
        if len(irr):
            means = ", ".join(f"{v} {m:.4f}" for v, m in zip(irr["variable"], irr["mean"]))
            sentences.append(
                f"Irrelevant variables still get positive importances (mean {means} bits): "
                "finite samples bias the plug-in mutual information upwards (Geurts 2016). The "
                f"red {'dotted line' if kind == 'histogram' else 'cross'} is the K = 1 "
                f"prediction of that bias, {irr['expected'].mean():.4f} bits on average.")
    return sentences


def sweep_note(parameter: str) -> str:
    """What the lines of a sweep figure are (for T: Var = a + b/T, Sutera 2013 eq. 3.23)."""
    stability = ("rank stability is the share of replicates that rank a variable where the "
                 "exact values (or, without them, the means) rank it.")
    return ("Dashed lines: exact values. Standard deviations are over the R data sets; for T, "
            "the dotted line falls as 1/\u221aT: the tree part of the variance (b/T in "
            "Var = a + b/T, Sutera 2013 eq. 3.23) follows it, the data-set part a does not. "
            + stability[0].upper() + stability[1:]
            if parameter == "n_estimators" else
            "Dashed lines: exact values. Standard deviations are over the R data sets; "
            + stability)


def distribution_csv_frame(dist: ImportanceDistribution, what: str) -> pd.DataFrame:
    """The ``"summary"`` table (mean ± sd) or the ``"replicates"``: one row per replicate
    (or permutation) and variable, with the exact value beside where there is one."""
    result = dist.result
    if what == "summary":
        return make_summary_table_frame(result)
    if isinstance(result, PermutationNull):
        return result.null_frame()
    df = result.replicates_frame()
    if result.exact is not None:
        df["exact"] = np.tile(result.exact, result.n_replicates)
    return df
