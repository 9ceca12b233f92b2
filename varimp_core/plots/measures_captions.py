"""The words and tables beside the figures of :mod:`varimp_core.plots.measures`.

Pure functions of the core's results, like the figures: the caption and the
warning of several measures of one forest side by side, the table and caption
of the noisy-feature AUC protocol (Li et al. 2019, Table 1), and the caption of
the MDI bias curves (Li et al. 2019, Figs 1-3).  How far a study stopped early got is
for its caller to say (the dashboard's Measures page does).

>>> measure_names(["mdi_oob", "naive_oob"])
'MDI-oob and naive-oob'
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from varimp_core.plots.measures import measure_label
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult
from varimp_core.studies.noisy_protocol import paper_auc

__all__ = ["measure_names", "forest_caption", "forest_warning", "auc_table_frame",
           "auc_caption", "bias_caption"]


def measure_names(measures: Sequence[str]) -> str:
    """``"MDI-oob and naive-oob"``: the measures' labels in a sentence."""
    labels = [measure_label(m) for m in measures]
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def forest_caption(results: Mapping[str, ImportanceResult], exact: ImportanceResult | None, *,
                   K: int, p: int, default_k: bool, exact_possible: bool,
                   notes: Sequence[str] = ()) -> str:
    """What the bars and diamonds of :func:`~varimp_core.plots.measures.make_measures_figure` are.

    Parameters
    ----------
    results : mapping of str to ImportanceResult
        The measures drawn, by name.
    exact : ImportanceResult or None
        The exact asymptotic MDI drawn as diamonds.
    K, p : int
        Inputs drawn at each node, and inputs.
    default_k : bool
        K is scikit-learn's default :math:`\\lfloor\\sqrt{p}\\rfloor`.
    exact_possible : bool
        The data has an exact distribution (False: say why there are no diamonds).
    notes : sequence of str
        Sentences put first (how the rows were drawn, say).
    """
    out = [f"K = {K} of {p} inputs drawn at each node"
           + (" (\u221ap, scikit-learn's default)." if default_k else ".")]
    units = {measure_label(m): r.units for m, r in results.items()}
    out.append("Units: " + "; ".join(f"{k} in {v}" for k, v in units.items()) + ". "
               "Error bars: one standard error over trees (over permutation repeats for MDA, "
               "held out).")
    if exact is not None:
        out.append(f"Black diamonds: the exact MDI of an infinite forest on the exact "
                   f"distribution (impurity {exact.units}, the same K drawn the "
                   f"scikit-learn way, the same max depth), over the MDI bars. The min leaf "
                   "size does not enter it; a finite sample, the bootstrap and a min leaf "
                   "size above 1 move the bars away from it.")
    elif not exact_possible:
        out.append("No exact values: only built-in problems with an exact distribution "
                   "(led, xor, sym) have them.")
    return " ".join([*notes, *out])


def forest_warning(*, skipped: Sequence[str] = (), refused: Sequence[str] = ()) -> str:
    """A sentence about measures left out ("" when none).

    ``skipped``: out-of-bag measures of a forest grown without the bootstrap;
    ``refused``: MDI-oob undefined on an entropy forest
    (:func:`varimp_core.measures.suite.measures_or_refusals`).
    """
    out = []
    if skipped:
        out.append(f"{measure_names(skipped)} {'is' if len(skipped) == 1 else 'are'} left out: "
                   "they need out-of-bag rows, and without the bootstrap every tree sees every "
                   "row. Turn Bootstrap on to see them.")
    if refused:
        out.append("MDI-oob is left out: with the entropy impurity its out-of-bag log score is "
                   "\u2212\u221e here (out-of-bag rows reach nodes whose in-bag rows have none "
                   "of their class); choose the Gini impurity, for which Li et al. (2019) "
                   "define it.")
    return " ".join(out)


def auc_table_frame(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per measure; per depth setting ``mean ± sd (n = …)`` and the paper's value.

    ``summary`` is the summary of a noisy-feature AUC study (columns
    ``depth_setting``, ``measure``, ``mean``, ``std``, ``n``); the paper's
    values are Li et al. (2019), Table 1 (:func:`~varimp_core.studies.noisy_protocol.paper_auc`),
    "\u2014" where it has none.
    """
    depths = list(dict.fromkeys(summary["depth_setting"]))
    rows = {m: {"Measure": measure_label(m),
                **{c: "\u2014" for d in depths for c in (f"{d.capitalize()}: mean \u00b1 sd",
                                                         f"{d.capitalize()}: paper")}}
            for m in dict.fromkeys(summary["measure"])}
    for s, ref in zip(summary.itertuples(), paper_auc(summary)):
        row, d = rows[s.measure], s.depth_setting.capitalize()
        row[f"{d}: mean \u00b1 sd"] = (f"{s.mean:.2f} \u00b1 {s.std:.2f} (n = {int(s.n)})"
                                       if s.n > 1 else f"{s.mean:.2f} (n = 1)")
        row[f"{d}: paper"] = "\u2014" if np.isnan(ref) else f"{ref:.2f}"
    return pd.DataFrame(list(rows.values()))


def auc_caption(problem: str, *, n_estimators: int, max_features: int, n_repeats: int) -> str:
    """What the AUC study is and how it differs from the paper's run.

    AUC 1: every relevant feature ranks above every noisy one (Li et al. 2019,
    section 4).
    """
    spec = get_problem(problem)
    text = (f"{len(spec.variables)} inputs, {len(spec.relevant)} of them relevant; "
            f"{n_estimators} trees with K = {max_features} (mtry), "
            f"{n_repeats} repetition{'s' if n_repeats > 1 else ''} (seeds 0 to "
            f"{n_repeats - 1}). AUC 1: every relevant feature ranks above every noisy one; "
            "0.5: chance; below 0.5: the measure prefers noisy features.")
    if spec.name == "strobl":
        text += (" Black dashes: Li et al. (2019), Table 1 (100 trees, 40 repetitions; their "
                 "MDA is the held-out permutation importance; they report no out-of-bag MDA).")
    else:
        text += " The paper has no madelon numbers (its second data set, ChIP, is not here)."
    return text


def bias_caption(*, n_samples: int, n_estimators: int, n_repeats: int) -> str:
    """What the MDI bias curves show (Li et al. 2019, section 4, first simulation)."""
    text = (f"N = {n_samples} rows: X1 ~ N(0, 1), X2 a fair bit, X3, X4, X5 with 4, "
            "10 and 20 equally likely categories; P(Y = 1) = (1 + X2)/3, so only X2 is "
            f"relevant. {n_estimators} trees, K = 2. Figs 1 and 2 of the paper: the "
            "MDI of the noisy features falls as the min leaf size grows and rises with the "
            "depth; Fig. 3: MDI-oob keeps them near 0.")
    if n_repeats > 1:
        text += f" Mean over {n_repeats} data sets, with one standard error."
    return text
