"""Speed of local MDI (Sutera et al. 2021) against TreeSHAP, and of the exact local MDI.

    python bench/bench_local_mdi.py [--quick]

Goals (issue #28):

* sampled local MDI of every row of a seeded 10,000 x 60 table, for a random forest of 100
  trees, at least 10x faster than shap's TreeSHAP (``feature_perturbation=
  "tree_path_dependent"``) on the same forest and rows.  TreeSHAP runs on a subsample of
  rows and its time is scaled to all rows (its cost is linear in the rows: one pass of
  each row through every tree); the line says so.
* exact local MDI of LED (every distinct row) at K = 1..7 in under 0.5 s each.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import quick_parser, timed  # noqa: E402
from varimp_core.local.explain import sklearn_local_mdi  # noqa: E402
from varimp_core.local.local_mdi import exact_local_mdi  # noqa: E402
from varimp_core.problems.registry import get_problem  # noqa: E402

GOAL_RATIO = 10.0
GOAL_EXACT = 0.5


def main() -> None:
    args = quick_parser("2,000 rows, 20 trees, TreeSHAP on 50 rows").parse_args()
    from sklearn.ensemble import RandomForestClassifier

    n, p, trees, shap_rows = (2_000, 60, 20, 50) if args.quick else (10_000, 60, 100, 200)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    logit = X[:, 0] + 2 * X[:, 1] * X[:, 2] - X[:, 3] ** 2 + 0.5 * X[:, 4]
    y = (logit + rng.logistic(size=n) > 0).astype(int)
    fit, forest = timed(lambda: RandomForestClassifier(
        n_estimators=trees, criterion="entropy", random_state=0).fit(X, y))
    ours, res = timed(lambda: sklearn_local_mdi(forest, X), repeat=2)
    import shap

    sub = X[rng.choice(n, shap_rows, replace=False)]
    build, explainer = timed(lambda: shap.TreeExplainer(
        forest, feature_perturbation="tree_path_dependent"))
    explainer.shap_values(sub[:2], check_additivity=False)        # warm-up, not timed
    shap_t, _ = timed(lambda: explainer.shap_values(sub, check_additivity=False))
    scaled = build + shap_t * n / shap_rows
    nodes = np.mean([t.tree_.node_count for t in forest.estimators_])
    print(f"random forest {n:,} x {p}, {trees} trees (entropy, {nodes:,.0f} nodes per tree), "
          f"fit {fit:.2f} s")
    print(f"  local MDI, all {n:,} rows (with standard errors)  {ours:8.3f} s")
    print(f"  TreeSHAP (shap {shap.__version__}): explainer {build:.3f} s + {shap_rows} rows "
          f"measured {shap_t:.3f} s, rows SCALED to {n:,}: {scaled:8.3f} s")
    ratio = scaled / ours
    print(f"  TreeSHAP / local MDI  {ratio:6.1f}x   (goal >= {GOAL_RATIO:.0f}x: "
          f"{'met' if ratio >= GOAL_RATIO else 'NOT met'})")

    led = get_problem("led").exact_table()
    print(f"\nexact local MDI of LED ({led.n_rows} rows, 7 inputs), K = 1..7 (goal < "
          f"{GOAL_EXACT} s each)")
    for k in range(1, 8):
        t, r = timed(lambda: exact_local_mdi(led, max_features=k), repeat=3)
        print(f"  K={k}  {t * 1000:7.1f} ms   {'met' if t < GOAL_EXACT else 'NOT met'}   "
              f"sum over x of p(x) Imp(x) = {r.global_importances.sum():.4f} bits")
    noisy = get_problem("led:noise=0.1").exact_table()
    t, _ = timed(lambda: exact_local_mdi(noisy, max_features=3), repeat=3)
    print(f"  led:noise=0.1 ({noisy.X.shape[0]} rows, {len(np.unique(noisy.X, axis=0))} "
          f"distinct inputs), K=3  {t * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
