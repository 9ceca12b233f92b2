"""Speed of local variable importance (Ciss 2015), printed next to the forest's fit time.

    python bench/bench_local.py [--quick] [--n-jobs-only]

Goal (issue "Beyond MDI"): the local-importance table of 1000 observations
for a forest of 500 trees in under 2 s.  Each line prints the time of the
forest fit (scikit-learn) and of our computation on the same forest, and
their ratio (fit / ours: how many local-importance tables fit in one fit).

n_jobs (issue #16): varimp's multiway forest grown and routed (K=1) against scikit-learn's
extra-trees (K=1) fitted and then counted (``local_importance``), both at n_jobs 1 and 2
side by side, and what 16 cores would give by Amdahl's law from the serial fraction those
measure (a projection, not a measurement).  The counts are the same for every n_jobs
(tests/core/local/test_multiway.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import print_projection, quick_parser, timed  # noqa: E402
from varimp_core.local.partial_dependence import partial_dependence  # noqa: E402
from varimp_core.local.interactions import (importance_over_labels, interaction_importance,
                                            interactions, partial_importance)
from varimp_core.forests.multiway import grow_forest  # noqa: E402
from varimp_core.local.multiway import forest_local_importance  # noqa: E402
from varimp_core.local.importance import fit_uniform_forest, local_importance  # noqa: E402
from varimp_core.data.table import DiscreteTable  # noqa: E402
from varimp_core.problems.registry import get_problem  # noqa: E402
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest  # noqa: E402

GOAL = 2.0


def line(name, fit, ours, goal=""):
    print(f"{name:<52} fit {fit:7.3f} s   local {ours:7.3f} s   fit/local {fit / ours:6.1f}x"
          f"   {goal}")


def n_jobs_lines(table, X, y, X_test, n_trees):
    """varimp's local forest and scikit-learn's extra-trees + local counts at n_jobs 1, 2."""
    print(f"\n{'n_jobs':>6} {'varimp grown + routed':>22} {'sklearn ET fit + count':>23} "
          f"{'sklearn / varimp':>17}")
    ours, theirs = {}, {}
    for jobs in (1, 2):
        ours[jobs], _ = timed(lambda: forest_local_importance(
            table, X_test.to_numpy(), n_estimators=n_trees, max_features=1, n_jobs=jobs),
            repeat=2)  # the best of two: joblib starts its workers once
        theirs[jobs], _ = timed(lambda: local_importance(fit_sklearn_forest(
            X, y, kind="et", n_estimators=n_trees, max_features=1, n_jobs=jobs), X_test),
            repeat=2)
        print(f"{jobs:>6} {ours[jobs]:>20.3f} s {theirs[jobs]:>21.3f} s "
              f"{theirs[jobs] / ours[jobs]:>16.1f}x")
    print_projection("local importance", ours, theirs)


def main(argv=None):
    ap = quick_parser("100 trees instead of 500")
    ap.add_argument("--n-jobs-only", action="store_true", help="only the n_jobs 1 / 2 lines")
    args = ap.parse_args(argv)
    n_trees = 100 if args.quick else 500
    n_obs = 1000

    problem = get_problem("led:noise=0.1,irrelevant=10")
    train = problem.sample(n_obs, random_state=0)
    test = problem.sample(n_obs, random_state=1)
    X, y = train.drop(columns=problem.target), train[problem.target]
    X_test = test.drop(columns=problem.target)
    print(f"{problem.spec}: {n_obs} training rows, {n_obs} test rows, {X.shape[1]} inputs, "
          f"{n_trees} fully grown trees, load average {os.getloadavg()[0]:.1f}")
    table = DiscreteTable.from_codes(X.to_numpy(), y.to_numpy(), variables=problem.variables)
    if args.n_jobs_only:
        n_jobs_lines(table, X, y, X_test, n_trees)
        return

    fits = {
        "random forest (K=sqrt p)": lambda: fit_sklearn_forest(
            X, y, kind="rf", n_estimators=n_trees, max_features=int(np.sqrt(X.shape[1]))),
        "extra-trees (K=1)": lambda: fit_sklearn_forest(X, y, kind="et", n_estimators=n_trees),
        "uniform forest (K=p, bootstrap)": lambda: fit_uniform_forest(X, y, n_estimators=n_trees),
    }
    forest = None
    for name, fit in fits.items():
        t_fit, forest = timed(fit)
        n_nodes = sum(t.tree_.node_count for t in forest.estimators_)
        t_local, local = timed(lambda: local_importance(forest, X_test), repeat=3)
        ok = "OK" if t_local < GOAL else "SLOW"
        line(f"{name}, {n_nodes / n_trees:.0f} nodes/tree", t_fit, t_local,
             f"goal < {GOAL:g} s: {ok}")

    # varimp's multiway forest keeps no trees: it grows them again while routing the
    # rows, so its "local" time includes growing; "fit" is grow_forest alone.
    for k in (1, X.shape[1]):
        t_fit, _ = timed(lambda: grow_forest(table, n_estimators=n_trees, max_features=k))
        t_local, _ = timed(lambda: forest_local_importance(table, X_test.to_numpy(),
                                                            n_estimators=n_trees, max_features=k),
                           repeat=3)
        ok = "OK" if t_local < GOAL else "SLOW"
        line(f"varimp multiway forest (K={k}), grown + routed", t_fit, t_local,
             f"goal < {GOAL:g} s: {ok}")

    t_fit, forest = timed(fits["uniform forest (K=p, bootstrap)"])
    t_lvl, _ = timed(lambda: local_importance(forest, X_test, max_level=5), repeat=3)
    line("  same, 5 levels above the leaf", t_fit, t_lvl)
    local = local_importance(forest, X_test)
    for name, fn in [("  interactions (joint + VII tables)", lambda: interactions(local)),
                     ("  importance based on interactions", lambda: interaction_importance(local)),
                     ("  partial importance, class 2", lambda: partial_importance(local, label=2)),
                     ("  importance over labels (10 classes)", lambda: importance_over_labels(local))]:
        t, _ = timed(fn, repeat=3)
        print(f"{name:<52} {t:7.4f} s")
    t_pd, _ = timed(lambda: partial_dependence(forest, X_test, "X5", kind="both",
                                               grid_resolution=20))
    print(f"{'  Friedman partial dependence + ICE, X5 (2 values)':<52} {t_pd:7.4f} s")
    n_jobs_lines(table, X, y, X_test, n_trees)


if __name__ == "__main__":
    main()
