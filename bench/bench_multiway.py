"""The multiway forest against scikit-learn's ExtraTrees, one core each, same trees (issue #30).

    PYTHONPATH=. python bench/bench_multiway.py [--quick] [--repeat 3] [--only TEXT]
                                                [--before REV]

``--before cef732c`` also times the multiway forest of that git revision (the numpy
version) in the same run, interleaved, and prints its ratio beside.

Each case grows the same number of trees at the same K with both libraries, one process,
n_jobs = 1, timed side by side in this run (varimp, then scikit-learn, ``--repeat`` times,
interleaved; the medians are printed) with the load average, and the goal of issue #30 beside
the ratio (scikit-learn seconds / varimp seconds; above 1 means varimp is faster):

* LED, noise 0.1, N = 100,000, 1,000 trees, K = 1 (816 distinct rows): keep a lead of 10x;
* LED, noise 0.1 with 10 irrelevant bits, N = 20,000 (16,369 distinct rows), 100 trees,
  K = 1 and K = 3: at least 1x;
* the seeded 10,000 x 60 analyst table of ``bench/bench_pages.py``, prepared by
  :func:`varimp_core.api.load_data` (5 quantile bins, 10,000 distinct rows), 100 trees,
  K = 1 and K = 8: at least 1x;
* ``digits`` (1,797 x 64, codes 0-16), 100 trees, K = 1 and K = 8: at least 1x.

varimp runs :func:`varimp_core.api.compute_importances` (``method="forest"``) on the table of
distinct rows with counts; scikit-learn ``ExtraTreesClassifier(criterion="entropy")`` on the
N numeric rows (missing values as NaN, split natively).  The numba kernels are compiled (or
read from numba's cache) before the first timing; that one-off time is printed first.

Where the time went (numpy version before the kernels, cProfile and per-section timers on
LED + 10 irrelevant bits, 100 trees, K = 1; 14.7 s on a loaded machine, 2.9 s on a quiet
one): the per-level (node, candidate, value, class) ``bincount`` and its gathers 21 %,
``np.unique(node * cmax + value, return_inverse=True)`` to number the children 17 %
(its argsort alone 1.2 s of 10.2 s under cProfile), drawing a key per (node, variable)
and ``argpartition`` 17 % (argpartition 1.0 s), the impurities of the dense
(node, candidate, value, class) array, mostly zeros deep in the trees (``_xlogx`` and
sums) 16 %, filtering entries of split nodes 12 %, node class counts 12 %.  No single hot
spot: a dozen full passes over entries x candidates per level, each allocating its
output.  :mod:`varimp_core.forests.multiway_kernel` replaces them with one loop per node
over its own entries (grouped by node) and a counting sort for the children.

Measured 2026-11-28 on the shared 2-core machine (load average 11 to 20: absolute seconds
are several times a quiet machine's, ratios are what to read), ``--repeat 3 --before
cef732c``, medians; scikit-learn / varimp after, then before (the numpy forest):

    LED +10 irrelevant, K = 1     1.2x   (before 0.29x)
    LED +10 irrelevant, K = 3     1.5x   (before 0.29x)
    analyst 10,000 x 60, K = 1    2.4x   (before 0.27x)
    analyst 10,000 x 60, K = 8    1.8x   (before 0.18x)
    digits, K = 1                 4.2x   (before 0.24x)
    digits, K = 8                 3.3x   (before 0.09x)
    LED N = 100,000, 1,000 trees  344x   (before 117x; --repeat 1, load 14.6)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from _timing import quick_parser  # noqa: E402
from sklearn.ensemble import ExtraTreesClassifier  # noqa: E402

from varimp_core.api import compute_importances, load_data  # noqa: E402


def _analyst():
    from bench_pages import analyst_table

    return load_data(data=analyst_table(), target="churned")


def cases(quick: bool):
    """(name, data thunk, trees, K, goal ratio)."""
    led_n, led_trees = (20_000, 200) if quick else (100_000, 1000)
    trees = 30 if quick else 100
    led_irr = lambda: load_data(problem="led:noise=0.1,irrelevant=10", n_samples=20_000,  # noqa: E731
                                random_state=0)
    return [
        (f"LED noise 0.1, N={led_n:,}", lambda: load_data(problem="led:noise=0.1",
                                                          n_samples=led_n, random_state=0),
         led_trees, 1, 10.0),
        ("LED +10 irrelevant, N=20,000", led_irr, trees, 1, 1.0),
        ("LED +10 irrelevant, N=20,000", led_irr, trees, 3, 1.0),
        ("analyst 10,000 x 60", _analyst, trees, 1, 1.0),
        ("analyst 10,000 x 60", _analyst, trees, 8, 1.0),
        ("digits 1,797 x 64", lambda: load_data(problem="digits"), trees, 1, 1.0),
        ("digits 1,797 x 64", lambda: load_data(problem="digits"), trees, 8, 1.0),
    ]


def first_call_seconds() -> float:
    """Seconds of a fresh process to import the forest and grow one tiny forest, minus the
    same without the forest: numba's import and the kernels' compile (or cache load)."""
    code = ("import time, numpy as np; t=time.perf_counter();"
            "from varimp_core.forests.multiway import grow_forest;"
            "from varimp_core.data.table import DiscreteTable;"
            "grow_forest(DiscreteTable.from_codes(np.array([[0,1],[1,0]]), np.array([0,1])),"
            " n_estimators=2); print(time.perf_counter()-t)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    return float(out.stdout.strip().splitlines()[-1])


def forest_at(rev: str):
    """``grow_forest`` of ``varimp_core/forests/multiway.py`` at git revision ``rev``."""
    import types

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = subprocess.run(["git", "show", f"{rev}:varimp_core/forests/multiway.py"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    mod = types.ModuleType(f"multiway_{rev}")
    exec(compile(src, f"multiway@{rev}", "exec"), mod.__dict__)
    return mod.grow_forest


def median_seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> None:
    ap = quick_parser("N = 20,000 LED rows, 200 / 30 trees instead of 100,000, 1,000 / 100")
    ap.add_argument("--repeat", type=int, default=3, help="timings per case (median)")
    ap.add_argument("--only", default="", help="cases whose name contains this text")
    ap.add_argument("--before", default="", help="git revision whose forest to time too")
    args = ap.parse_args(argv)
    old = forest_at(args.before) if args.before else None
    print(f"first forest in a fresh process (import + numba compile or cache load): "
          f"{first_call_seconds():.2f} s")
    print(f"{'case':<31} {'trees':>5} {'K':>2} {'varimp s':>9} {'sklearn s':>10} "
          f"{'ratio':>7} {'goal':>6}  load" + (f"  {'before s':>8} {'ratio':>6}" if old else ""))
    loaded = {}
    for name, thunk, trees, k, goal in cases(args.quick):
        if args.only and args.only not in name:
            continue
        if name not in loaded:
            loaded[name] = thunk()
        data = loaded[name]
        X = data.native_X()
        y = data.y
        compute_importances(data, method="forest", max_features=k, n_estimators=2)  # warm
        ours, theirs, before = [], [], []
        for _ in range(args.repeat):   # interleaved, so both see the same load
            if old is not None:
                before.append(median_seconds(lambda: old(
                    data.table, n_estimators=trees, max_features=k), 1))
            ours.append(median_seconds(lambda: compute_importances(
                data, method="forest", max_features=k, n_estimators=trees, n_jobs=1), 1))
            theirs.append(median_seconds(lambda: ExtraTreesClassifier(
                n_estimators=trees, max_features=k, criterion="entropy", n_jobs=1,
                random_state=0).fit(X, y), 1))
        a, b = statistics.median(ours), statistics.median(theirs)
        verdict = "ok" if b / a >= goal else "MISSED"
        extra = ""
        if before:
            c = statistics.median(before)
            extra = f"  {c:>8.2f} {b / c:>5.2f}x"
        print(f"{name:<31} {trees:>5} {k:>2} {a:>9.2f} {b:>10.2f} {b / a:>6.1f}x {goal:>5.0f}x"
              f"  {os.getloadavg()[0]:.1f} {verdict}{extra}", flush=True)


if __name__ == "__main__":
    main()
