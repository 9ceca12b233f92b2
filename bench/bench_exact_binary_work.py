"""How much work the exact Extra-Trees value needs, whatever the code: a floor for issue 15's goals.

    python bench/bench_exact_binary_work.py [--quick]

The exact ``exact-et`` recursion (:mod:`varimp_core.exact.binary`) visits every tight box
of the table that holds two classes (at K=1 every such box is a reachable node).  Each
node t with c_f(t) distinct values of feature f has sum_f (c_f(t) - 1) candidate gaps,
each giving a left and a right child, whose tight box has to be formed and looked up
among the nodes already found (to merge the reach probabilities of equal boxes).  So any
algorithm that visits the nodes one by one does at least

    E = sum over nodes t of 2 sum_f (c_f(t) - 1)

child look-ups.  This script counts the nodes and E without running the recursion, by
drawing rank boxes uniformly (pairs lo <= hi per feature) and keeping the tight impure
ones, on the data of ``bench/bench_exact_binary.py``.  The node count is what
:func:`~varimp_core.exact.binary.estimate_binary_nodes` estimates; it is written apart here,
and the core's estimate is printed beside it, so that each checks the other.  It then times the
cheapest possible look-up on this machine, a plain random read ``table[i]`` from an array
the size of the node table (numpy gathers many at once, so their memory misses overlap),
and prints E times that cost: a floor on the time of the look-ups alone, one core.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import quick_parser  # noqa: E402
from bench.bench_exact_binary import data  # noqa: E402
from varimp_core.exact.binary import estimate_binary_nodes  # noqa: E402

GOALS = {(50, 3): 10.0, (200, 2): 30.0}  # seconds, issue 15


def work(n, p, samples=400_000, chunk=10_000, seed=1):
    """(nodes, mean distinct rows per node, child look-ups E) of exact-et at K=1, sampled."""
    X, y = data(n, p)
    ranks = np.stack([np.unique(X[:, f], return_inverse=True)[1].ravel() for f in range(p)], 1)
    c = ranks.max(axis=0) + 1
    n_boxes = float(np.prod(c * (c + 1) / 2.0))
    rng = np.random.default_rng(seed)
    found = rows = looks = 0.0
    for start in range(0, samples, chunk):
        a = rng.integers(0, c, size=(chunk, p))
        b = rng.integers(0, c, size=(chunk, p))
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        # the min and max of two uniform draws hit lo < hi twice as often as lo == hi
        weight = np.prod(np.where(lo == hi, 2.0, 1.0), axis=1)
        inside = np.all((ranks[None] >= lo[:, None]) & (ranks[None] <= hi[:, None]), axis=2)
        size = inside.sum(axis=1)
        tight = size > 0
        gaps = np.zeros(chunk)
        for f in range(p):
            r = ranks[None, :, f]
            tight &= (np.where(inside, r, -1).max(axis=1) == hi[:, f])
            tight &= (np.where(inside, r, c[f]).min(axis=1) == lo[:, f])
            distinct = np.zeros((chunk, c[f]), bool)
            at = np.nonzero(inside)
            distinct[at[0], ranks[at[1], f]] = True
            gaps += np.maximum(distinct.sum(axis=1) - 1, 0)
        ones = (inside & (y[None] == 1)).sum(axis=1)
        node = tight & (ones > 0) & (ones < size)
        found += (weight * node).sum()
        rows += (weight * node * size).sum()
        looks += (weight * node * 2 * gaps).sum()
    # E[weight] = prod_f (c_f + 1) / c_f: dividing by it makes the draws uniform over boxes
    per_draw = n_boxes / (samples * float(np.prod((c + 1) / c)))
    return found * per_draw, rows / max(found, 1e-300), looks * per_draw


def gather_ns(n_nodes, reads=20_000_000, seed=0):
    """Nanoseconds per random read of one float from an array of 2 floats per node (best of 3)."""
    rng = np.random.default_rng(seed)
    table = rng.random(max(int(n_nodes), 1_000_000) * 2)
    idx = rng.integers(0, table.size, reads)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        table[idx].sum()
        best = min(best, time.perf_counter() - t0)
    return best / reads * 1e9


def main(argv=None):
    parser = quick_parser("N = 50 and 100 only, fewer sampled boxes")
    args = parser.parse_args(argv)
    grid = [(50, 2), (100, 2), (50, 3)] if args.quick else [(50, 2), (100, 2), (200, 2), (30, 3),
                                                            (50, 3)]
    samples = 100_000 if args.quick else 400_000
    print("| N | p | nodes (sampled) | core's estimate | rows per node | child look-ups E | "
          "read ns | floor of the look-ups, 1 core | goal |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, p in grid:
        nodes, rows, looks = work(n, p, samples=samples)
        estimate = estimate_binary_nodes(*data(n, p), method="exact-et", max_features=1)
        ns = gather_ns(nodes)
        goal = GOALS.get((n, p))
        print(f"| {n} | {p} | {nodes:.3g} | {estimate:.3g} | {rows:.1f} | {looks:.3g} | {ns:.1f} | "
              f"{looks * ns * 1e-9:.1f} s | {f'{goal:g} s' if goal else '-'} |", flush=True)


if __name__ == "__main__":
    main()
