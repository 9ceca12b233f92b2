"""The words and tables beside the figures of :mod:`varimp_core.plots.selection`.

Pure functions of the core's results: the relevance classes of Kohavi & John
as a table and sentences (Louppe et al. 2013, section 4; Sutera's thesis,
chapter 5), the permutation null's sentences, and the random-subspace (RS)
against sequential-random-subspace (SRS) comparison of Sutera's thesis,
chapter 6.
"""

from __future__ import annotations

import math

import pandas as pd

from varimp_core.exact.relevance import RelevanceResult
from varimp_core.plots.distributions_captions import above_null_sentence, name_list
from varimp_core.studies.nulls import PermutationNull
from varimp_core.studies.rs_srs import SubspaceComparison

__all__ = ["undecided_words", "relevance_table_frame", "relevance_sentences", "null_sentences", "rs_sentences",
           "selected_sentence", "pvalues_frame", "RS_NOTE", "rs_data_words"]

#: What the RS/SRS numbers show, measured on the slides' Madelon protocol (Geurts 2016).
RS_NOTE = ("What the numbers show: on the slides' Madelon protocol (Geurts 2016) SRS ranks "
           "and predicts better than RS, more so as q/p shrinks. Over 3 seeds at T = 2,000, "
           "AUPRC goes from 0.90 (RS) to 1.00 (SRS) with 480 irrelevant features and from "
           "0.39 to 0.64 with 5,480; test accuracy from 0.69 to 0.82 and from 0.53 to 0.74. "
           "SRS needs trees to find its first features, so a short run of one seed, like the "
           "default T = 300, can show a smaller gain. The generator follows Guyon's design "
           "(randomly labelled hypercube vertices); it is not the original Madelon data.")


def undecided_words(r: RelevanceResult) -> str:
    """What "undecided" means on this sample: ``"cannot be decided from 300 rows"``."""
    n = (r.test or {}).get("n")
    return f"cannot be decided from {n:,.0f} rows" if n else "cannot be decided from these rows"


def relevance_table_frame(r: RelevanceResult) -> pd.DataFrame:
    """One row per variable: relevance class, degree, membership of the minimal Markov boundary.

    An undecided class reads ``"undecided: cannot be decided from N rows"``.
    """
    boundary = set(r.minimal_boundary)
    words = f"undecided: {undecided_words(r)}"
    return pd.DataFrame(
        [{"variable": v, "relevance": words if c == "undecided" else c,
          "degree": "" if d is None else d,
          "in_markov_boundary": "\u2713" if v in boundary else ""}
         for v, c, d in zip(r.variables, r.relevance, r.degree)],
        columns=["variable", "relevance", "degree", "in_markov_boundary"])


def _known_relevant(r: RelevanceResult) -> str:
    """Undecided variables a G-test still showed relevant (strong or weak unknown)."""
    if r.test is None or not r.test.get("relevant"):
        return ""
    shown = [v for v, c, k in zip(r.variables, r.relevance, r.test["relevant"])
             if c == "undecided" and k]
    return (f" (of the undecided, {name_list(shown)} "
            + ("is" if len(shown) == 1 else "are")
            + " relevant: a test rejects, but too few rows tell strong from weak)"
            if shown else "")


def relevance_sentences(r: RelevanceResult, *, exact: bool, n: int | None = None,
                        default_tol: bool = True) -> list[str]:
    """How the classes were found, the classes, the Markov boundary and what the bars are.

    Parameters
    ----------
    r : RelevanceResult
    exact : bool
        Computed on the exact distribution (else a plug-in estimate on ``n`` rows).
    default_tol : bool
        ``r.tol`` is the core's default, not the user's.
    """
    if r.test is not None:   # a sample classed by G-tests (issue 24)
        t = r.test
        how = (f"On this sample of N = {t['n']:,.0f} rows each I(X; Y | B) = 0 is a "
               f"{t.get('name', 'G-test')} (G = 2 N ln 2 \u00d7 I in bits against "
               f"chi-square) at level {t['level']:g}, {t['correction']}, and a test with "
               "fewer than 5 rows per cell on average never rejects, so a variable it leaves "
               f"open is undecided: it {undecided_words(r)}.")
    else:
        how = None
    how = how or ("Exact: computed on the exact distribution, a conditional mutual information "
           f"counts as zero at or below tol = {r.tol:.3g} bits (rounding only)." if exact
           else f"Plug-in estimate from a sample of N = {n:,} rows: a conditional mutual "
           f"information counts as zero at or below tol = {r.tol:.3g} bits"
           + (" (the core's default, the plug-in bias of the largest conditioning set, "
              "capped at 0.05 bits)." if default_tol else " (yours)."))
    by = {c: [v for v, k in zip(r.variables, r.relevance) if k == c]
          for c in ("strong", "weak", "irrelevant", "undecided")}
    tested = (r.test or {}).get("boundary")
    if tested is not None and not tested["decided"]:
        mb = (f"Markov boundary: cannot be decided from {r.test['n']:,.0f} rows: "
              f"{tested['sparse']:,} of the blanket G-tests of smaller sets have fewer than "
              "5 rows per cell, so a smaller blanket cannot be ruled out.")
    elif tested is not None:
        mb = ("Markov boundary (tested): " + name_list(r.minimal_boundary) + ", the "
              f"smallest set M whose G-test of Y independent of the other inputs given X_M "
              f"does not reject at {tested['level']:g}, every smaller set rejected"
              + ("." if tested["unique"] else "; other sets of its size were accepted too."))
    else:
        mb = None
    mb = mb or ("Markov boundary (unique, the input distribution is strictly positive): "
          + name_list(r.markov_boundary) + "." if r.markov_boundary is not None else
          "A minimal Markov boundary: " + name_list(r.minimal_boundary) + " (the input "
          "distribution is not strictly positive, so it need not be unique"
          + {True: "; here it is the only one).", False: "; there are others)."}.get(
              r.boundary_unique, ")."))
    return [how,
            f"Strongly relevant: {name_list(by['strong'])}; weakly relevant: "
            f"{name_list(by['weak'])}; irrelevant: {name_list(by['irrelevant'])}"
            + (f"; undecided: {name_list(by['undecided'])} ({undecided_words(r)})"
               if by["undecided"] else "")
            + _known_relevant(r)
            + ". The degree d is the size of the smallest set B with I(X; Y | B) > 0"
            + (" (a rejected test)." if r.test is not None else "."), mb,
            "Bars: each variable's importance in an infinite forest of totally randomized trees "
            "(K = 1, Eqn 3) on the same " + ("distribution" if exact else "sample")
            + "; it is zero exactly for the irrelevant variables (Louppe et al. 2013, "
            "Theorem 3)" + ("." if exact else ", which a plug-in estimate only "
                            "approaches: the bias keeps it above zero.")]


def null_sentences(pn: PermutationNull, *, n_estimators: int, method: str,
                   n_rows: int | None = None, drawn_seed: int | None = None) -> list[str]:
    """What the permutation null is, which variables beat it, and its smallest p-value 1/(R+1).

    Without any permutation yet (``pn.n_permutations == 0``) only the observed importances
    are described.
    """
    R = pn.n_permutations
    rows = f"{n_rows:,} rows" if n_rows else "the data"
    if not R:
        return [f"Observed importances of {n_estimators:,} K = 1 trees ({method}) on {rows}."]
    return [
        f"{R:,} permutations of the target; on each, {n_estimators:,} K = 1 trees "
        f"({method}) on {rows}" + (f" drawn from the exact distribution (seed {drawn_seed})"
                                   if drawn_seed is not None else "") + ".",
        above_null_sentence(pn, " (\u2605)")
        + f" The smallest possible p-value with R = {R:,} is 1/(R + 1) = {1 / (R + 1):.3g}.",
        "The null keeps Y impure in every cell, so an irrelevant variable of the real data "
        "often scores below its null (a large p-value): the test is conservative for "
        "irrelevant variables."]


def rs_data_words(source: str, drawn_rows: int | None = None) -> str:
    """What an RS/SRS study ran on, for :func:`rs_sentences`.

    Parameters
    ----------
    source : str
        The number of irrelevant Madelon features, or ``"data"``
        (:data:`varimp_core.studies.rs_srs.SOURCES`).
    drawn_rows : int, optional
        For data that is an exact distribution: the rows drawn from it first (seed 0).
    """
    if source != "data":
        return (f"Madelon-like data with 20 relevant and {int(source):,} irrelevant features "
                "(1,000 training and 500 test rows per seed)")
    if drawn_rows is not None:
        return (f"the current data, an exact distribution: {drawn_rows:,} rows drawn from it "
                "(seed 0), two thirds of them train and one third tests, per seed")
    return "the current data (two thirds of the rows train, one third tests, per seed)"


def rs_sentences(result: SubspaceComparison, *, data_words: str, subspace_size: int,
                 alpha: float, max_features: int | None, min_sampled: int,
                 beta: float) -> list[str]:
    """The settings and the final numbers of the RS and SRS curves, in sentences.

    ``data_words`` says what the runs were on; ``max_features`` None is q + 1.
    """
    if not len(result.curves):
        return []
    n_seeds = int(result.curves["seed"].nunique())
    k = "q + 1 (every column of the subspace and the probe)" if max_features is None \
        else str(max_features)
    out = [f"{data_words}; q = {subspace_size}, \u03b1 = {alpha:g}, K = {k}, "
           f"L = {min_sampled}, \u03b2 = {beta:g}; mean over "
           f"{n_seeds} seed(s)" + (" with \u00b1 1 sd bands." if n_seeds > 1 else ".")]
    means = result.final()
    parts = [f"{m.upper()} " + ("" if math.isnan(means.loc[m, "auprc"]) else
                                f"AUPRC {means.loc[m, 'auprc']:.3f}, ")
             + f"accuracy {means.loc[m, 'accuracy']:.3f}" for m in ("rs", "srs")
             if m in means.index]
    if parts:
        out.append("At the last checkpoint: " + "; ".join(parts) + ".")
    return out


def selected_sentence(selection, method: str, *, min_sampled: int, beta: float) -> str:
    """The features a method selected on seed 0, with precision and recall where known."""
    s = selection
    line = (f"Seed 0, {method.upper()}: F holds the {len(s.selected):,} features drawn "
            f"more than L = {min_sampled} times that beat the random probe in "
            f"at least \u03b2 = {beta:g} of their trees: {name_list(s.selected, 20)}.")
    if s.relevant is not None:
        prec = "n/a (nothing selected)" if math.isnan(s.precision) else f"{s.precision:.2f}"
        line += (f" Precision {prec}, recall {s.recall:.2f} against the {len(s.relevant)} "
                 "truly relevant features (outlined, \u2713).")
    else:
        line += " The truly relevant features of this data are unknown, so there is no " \
                "precision or recall."
    return line


def pvalues_frame(pn: PermutationNull, relevance: RelevanceResult | None = None) -> pd.DataFrame:
    """The null's p-values, one row per variable, with the relevance classes joined if known."""
    df = pn.to_frame()
    if relevance is not None:
        df = df.merge(relevance.to_frame(), on="variable", how="left")
    return df
