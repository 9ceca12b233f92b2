"""Multi-core forests: varimp's multiway forest against scikit-learn's ExtraTrees, each with
n_jobs = 1 and 2, on the same sample (issues #16 and #30).

LED with 10 % noise, N rows, 1,000 trees at K = 1; then LED with 10 irrelevant bits,
N = 20,000 (16,369 distinct rows), 400 trees.  The multiway forest grows chunks of trees
(their size from the work: distinct rows x levels, never from n_jobs) in threads, its
numba kernels releasing the GIL.  The multiway forest works on the table of
distinct rows with counts; scikit-learn on the N rows.  Printed: seconds, and the ratios
(scikit-learn time / varimp time) side by side, at n_jobs 1 and 2, and what 16 cores would
give by Amdahl's law from the serial fraction those two measure (a projection, not a
measurement).  The numbers of the multiway forest are the same for every n_jobs
(tests/core/forests/test_multiway.py).

    PYTHONPATH=. python bench/bench_n_jobs.py [--quick]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

from _timing import print_projection, quick_parser, timed  # noqa: E402
from sklearn.ensemble import ExtraTreesClassifier  # noqa: E402

from varimp_core.api import compute_importances, load_data  # noqa: E402


def run_case(title, data, trees) -> None:
    """n_jobs 1 and 2 of both forests on ``data``, side by side, and varimp's speed-up."""
    X, y = data.native_X(), data.y
    compute_importances(data, method="forest", max_features=1, n_estimators=2)  # kernels
    print(f"{title}, {trees:,} trees, K = 1, {os.cpu_count() or 1} cores, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'n_jobs':>8} {'varimp s':>10} {'sklearn ET s':>13} {'sklearn / varimp':>17}")
    mine, sk = {}, {}
    for jobs in (1, 2):
        ours, _ = timed(lambda: compute_importances(data, method="forest", max_features=1,
                                                    n_estimators=trees, n_jobs=jobs),
                        repeat=2)  # the best of two
        theirs, _ = timed(lambda: ExtraTreesClassifier(
            n_estimators=trees, max_features=1, criterion="entropy", n_jobs=jobs,
            random_state=0).fit(X, y))
        print(f"{jobs:>8} {ours:>10.2f} {theirs:>13.2f} {theirs / ours:>16.1f}x")
        mine[jobs], sk[jobs] = ours, theirs
    print(f"n_jobs 2 / n_jobs 1: varimp {mine[1] / mine[2]:.2f}x faster (goal: 1.6x for jobs "
          f"of a second or more, never below 1), scikit-learn {sk[1] / sk[2]:.2f}x; "
          f"load average {os.getloadavg()[0]:.1f}")
    print_projection("forest", mine, sk)


def main(argv=None) -> None:
    args = quick_parser("10,000 rows and 200 trees instead of 100,000 and 1,000; "
                        "100 trees instead of 400 on the wide table").parse_args(argv)
    n, trees = (10_000, 200) if args.quick else (100_000, 1000)
    run_case(f"LED, noise 0.1, N = {n:,}",
             load_data(problem="led:noise=0.1", n_samples=n, random_state=0), trees)
    run_case("LED, noise 0.1, 10 irrelevant bits, N = 20,000 (16,369 distinct rows)",
             load_data(problem="led:noise=0.1,irrelevant=10", n_samples=20_000, random_state=0),
             100 if args.quick else 400)

if __name__ == "__main__":
    main()
