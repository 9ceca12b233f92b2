"""Speed of the importance measures against scikit-learn's own forest fit, side by side.

    python bench/bench_measures.py [--quick]

Each line prints the time of one measure on an already fitted forest, the time
scikit-learn takes to fit that forest (``n_jobs=1``), and the ratio
measure / fit.  Goal (issue "Beyond MDI", part 1): MDI-oob for 500 trees on
1000 x 50 data takes at most 2x the fit.  ``mda_holdout`` includes its
``permutation_importance`` calls (5 repeats) but not a fit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import quick_parser, timed  # noqa: E402
from varimp_core.measures.permutation import mda_holdout, mda_oob
from varimp_core.measures.mdi_oob import mdi, mdi_oob, naive_oob


def data(task, n=1000, p=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    signal = X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * X[:, 3]
    y = (signal + rng.normal(size=n) > 0).astype(int) if task == "classification" else signal
    return X, y


def main(argv=None):
    args = quick_parser("100 trees instead of 500").parse_args(argv)
    n_trees = 100 if args.quick else 500
    ok = True
    for task, cls in (("classification", RandomForestClassifier),
                      ("regression", RandomForestRegressor)):
        X, y = data(task)
        Xt, yt = data(task, n=300, seed=1)
        fit, est = timed(lambda: cls(n_estimators=n_trees, max_features="sqrt", random_state=0,
                                     n_jobs=1).fit(X, y))
        print(f"\n{task}: {n_trees} trees on {X.shape[0]} x {X.shape[1]}, "
              f"scikit-learn fit {fit:.3f} s")
        jobs = [("mdi (unnormalised)", lambda: mdi(est), None),
                ("mdi_oob (Li et al. eq. 14)", lambda: mdi_oob(est, X, y), 2.0),
                ("mdi_in_sample (Prop. 1)", lambda: mdi_oob(est, X, y, samples="in_bag"), None),
                ("naive_oob", lambda: naive_oob(est, X, y), None),
                ("mda_oob (Breiman)", lambda: mda_oob(est, X, y), None),
                ("mda_holdout (5 repeats)", lambda: mda_holdout(est, Xt, yt), None)]
        for name, fn, goal in jobs:
            ours, _ = timed(fn, repeat=2)
            ratio = ours / fit
            verdict = "" if goal is None else (f"   goal <= {goal:.0f}x fit: "
                                               + ("met" if ratio <= goal else "MISSED"))
            ok &= goal is None or ratio <= goal
            print(f"  {name:<28} {ours:8.3f} s   fit {fit:8.3f} s   "
                  f"measure/fit {ratio:6.2f}x{verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
