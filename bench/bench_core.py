"""Speed of the core against scikit-learn, measured side by side in one run.

    python bench/bench_core.py [--quick]

Each line prints our time, scikit-learn's time for the comparable job, and
their ratio (>1: we are faster).  Goals (issue 2): exact LED K=1..7 < 0.2 s;
exact any K on xor:relevant=3,irrelevant=9 < 5 s; Eqn 3 on 16 inputs and
1e5 rows < 5 s; forest of 1000 trees (K=1, led:noise=0.1) >= 10x faster than
ExtraTreesClassifier at 1e5 samples and not slower at 500.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import ExtraTreesClassifier

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import quick_parser, timed  # noqa: E402
from varimp_core.api import load_data  # noqa: E402
from varimp_core.exact.recursion import exact_importances, exact_importances_path  # noqa: E402
from varimp_core.forests.multiway import grow_forest  # noqa: E402
from varimp_core.exact.eqn3 import eqn3_importances  # noqa: E402
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest, forest_mdi  # noqa: E402


def et(X, y, n, k=1):
    return ExtraTreesClassifier(n_estimators=n, max_features=k, criterion="entropy",
                                random_state=0, n_jobs=1).fit(X, y)


def line(name, ours, theirs, what, goal):
    print(f"{name:<46} ours {ours:8.3f} s   {what:<34} {theirs:8.3f} s   "
          f"ratio {theirs / ours:7.1f}x   goal: {goal}")


def main(argv=None):
    args = quick_parser("smaller scikit-learn comparisons").parse_args(argv)
    n_ref = 1000 if args.quick else 10000

    led = load_data(problem="led").table
    ours, _ = timed(lambda: [exact_importances_path(led, max_features=range(1, 8),
                                                    k_semantics=s) for s in ("id3",)], repeat=3)
    Xl, yl = led.X.astype(float), led.y
    theirs, _ = timed(lambda: [et(Xl, yl, n_ref // 7, k) for k in range(1, 8)])
    line("exact LED, K=1..7, with decomposition", ours, theirs,
         f"ET {n_ref // 7} trees x 7 K", "< 0.2 s")

    xor = load_data(problem="xor:relevant=3,irrelevant=9").table
    ks = (1, 3, 6, 12)
    times = []
    for k in ks:
        t, _ = timed(lambda: exact_importances(xor, max_features=k, k_semantics="sklearn"))
        times.append(t)
    theirs, _ = timed(lambda: et(xor.X.astype(float), xor.y, 1000, 3))
    line(f"exact xor 3+9 (p=12), worst of K={ks}", max(times), theirs, "ET 1000 trees K=3",
         "< 5 s")

    data = load_data(problem="led:noise=0.1,irrelevant=9", n_samples=100_000, random_state=0)
    t16 = data.table
    ours, _ = timed(lambda: eqn3_importances(t16))
    theirs, _ = timed(lambda: et(data.X_numeric, data.y, 10 if args.quick else 100))
    line(f"Eqn 3, 16 inputs, 1e5 rows ({t16.n_rows} distinct)", ours, theirs,
         f"ET {10 if args.quick else 100} trees", "< 5 s")

    for n in (100_000, 500):
        d = load_data(problem="led:noise=0.1", n_samples=n, random_state=0)
        ours, _ = timed(lambda: grow_forest(d.table, n_estimators=1000, max_features=1))
        theirs, _ = timed(lambda: et(d.X_numeric, d.y, 1000))
        line(f"forest 1000 trees K=1 led:noise=0.1 N={n}", ours, theirs, "ET 1000 trees K=1",
             ">= 10x" if n > 500 else ">= 1x")

    # MDI of a fitted scikit-learn forest (was a timed test, tests/core/forests/test_sklearn_mdi.py)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5))
    y = (X[:, 0] + rng.normal(size=1000) > 0).astype(int)
    est = fit_sklearn_forest(X, y, kind="et", n_estimators=500, n_jobs=-1)
    ours, _ = timed(lambda: forest_mdi(est), repeat=3)
    theirs, _ = timed(lambda: est.feature_importances_, repeat=3)
    line("forest_mdi of a fitted ET, 500 trees", ours, theirs, "sklearn feature_importances_",
         "< 1 s")


if __name__ == "__main__":
    main()
