"""Speed and memory of Random Subspace / Sequential Random Subspace selection on Madelon.

    python bench/bench_selection.py [--quick] [--curves]

Goal (issue "Finite-sample studies and feature selection", part 3): one SRS run
on Madelon with p = 5500 (20 relevant + 5480 probes), 1000 training rows and
1000 trees of q = 50 features finishes in under 5 minutes and fits in memory
(peak RSS printed).  RS and a plain ``ExtraTreesClassifier(n_estimators=1000,
max_features=50)`` on all p features are timed on the same data for
comparison; each line prints the ratio (>1: the other job is slower than SRS).

``--curves`` also runs the slides' Madelon experiment (p = 500, 1500, 3000,
5500; RS vs SRS; seeds averaged) and prints AUPRC and test accuracy against the
number of trees.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier
from sklearn.metrics import average_precision_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import quick_parser, timed  # noqa: E402
from varimp_core.problems.registry import get_problem  # noqa: E402
from varimp_core.studies.selection import madelon_curves, subspace_selection  # noqa: E402
from varimp_core.forests.sklearn_mdi import forest_mdi  # noqa: E402

GOAL_SECONDS = 300.0


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports kilobytes)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    ap = quick_parser("200 trees instead of 1000")
    ap.add_argument("--curves", action="store_true", help="also run the Madelon RS/SRS curves")
    ap.add_argument("--seeds", type=int, default=3, help="seeds for --curves")
    ap.add_argument("--curve-trees", type=int, default=2000, help="trees per run for --curves")
    args = ap.parse_args(argv)
    n_trees = 200 if args.quick else 1000

    prob = get_problem("madelon:irrelevant=5480")
    df = prob.sample(1500, random_state=0)
    X = df[list(prob.variables)].to_numpy()
    y = df[prob.target].to_numpy()
    del df
    Xtr, ytr, Xte, yte = X[:1000], y[:1000], X[1000:], y[1000:]
    print(f"madelon p={X.shape[1]}, {len(ytr)} train / {len(yte)} test rows, {n_trees} trees, "
          f"q=50, K=q; peak RSS after loading the data {peak_rss_mb():.0f} MB")

    runs = {}
    for method in ("srs", "rs"):
        secs, res = timed(lambda m=method: subspace_selection(
            Xtr, ytr, method=m, subspace_size=50, n_estimators=n_trees, random_state=0,
            variables=prob.variables, relevant=prob.relevant, X_test=Xte, y_test=yte))
        runs[method] = (secs, res)
        last = res.curve.iloc[-1]
        print(f"{method.upper():<4} {secs:7.2f} s  ({1e3 * secs / n_trees:.1f} ms/tree)  "
              f"peak RSS {peak_rss_mb():6.0f} MB  auprc {last.auprc:.3f}  accuracy "
              f"{last.accuracy:.3f}  selected {len(res.selected)} (precision "
              f"{res.precision:.2f}, recall {res.recall:.2f})")

    def fit_et():
        return ExtraTreesClassifier(n_estimators=n_trees, max_features=50, criterion="entropy",
                                    bootstrap=False, random_state=0, n_jobs=1).fit(Xtr, ytr)

    secs_et, et = timed(fit_et)
    truth = np.isin(prob.variables, prob.relevant)
    auprc_et = average_precision_score(truth, forest_mdi(et).importances)
    print(f"ET   {secs_et:7.2f} s  ({1e3 * secs_et / n_trees:.1f} ms/tree)  peak RSS "
          f"{peak_rss_mb():6.0f} MB  auprc {auprc_et:.3f}  accuracy {et.score(Xte, yte):.3f}  "
          "(ExtraTreesClassifier on all p, max_features=50)")

    srs = runs["srs"][0]
    print(f"\nSRS, p=5500, {n_trees} trees: {srs:.1f} s (goal < {GOAL_SECONDS:.0f} s: "
          f"{'met' if srs < GOAL_SECONDS else 'MISSED'}); peak RSS of the process "
          f"{peak_rss_mb():.0f} MB")
    print(f"ratio RS / SRS time        {runs['rs'][0] / srs:6.2f}x")
    print(f"ratio ExtraTrees / SRS time {secs_et / srs:6.2f}x")

    if args.curves:
        secs, curves = timed(lambda: madelon_curves(
            seeds=range(args.seeds), n_estimators=args.curve_trees,
            checkpoints=[100, 250, 500, 1000, 1500, 2000, 3000, 5000]))
        table = (curves.groupby(["p", "n_trees", "method"])[["auprc", "accuracy", "n_selected"]]
                 .mean().unstack("method").round(3))
        print(f"\nMadelon curves, mean over {args.seeds} seeds ({secs:.0f} s):")
        print(table.to_string())


if __name__ == "__main__":
    main()
