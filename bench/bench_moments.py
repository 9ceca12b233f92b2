"""Exact per-tree covariance of MDI (issue 29): its time against the mean's.

    python bench/bench_moments.py [--quick]

Each line: the problem and settings, the mean's time
(:func:`~varimp_core.api.compute_importances`, which takes Eqn 3's shortcut at K=1 under
id3), the time of the lattice recursion for the same mean (``exact`` only:
:func:`~varimp_core.exact.recursion.exact_importances`, the pass the moments extend), the moments' time
(:func:`~varimp_core.exact.moments.exact_moments`, mean and covariance) and
their ratio; goal: at most 3x.  Problems: LED at K = 1..7 (multiway ``exact``,
id3), XOR 3 + 9 (``xor:relevant=3,irrelevant=9``) at K = 1 and 12, and the
gauss preset with ``exact-et`` at K = 1 (30 rows; the binary moments are a
memoised Python re-walk of the row sets, not the batched solver of the mean).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import quick_parser, timed  # noqa: E402
import varimp_core as vc  # noqa: E402
from varimp_core.exact.moments import exact_moments  # noqa: E402
from varimp_core.exact.recursion import exact_importances  # noqa: E402


def cases(quick):
    led = vc.load_data(problem="led")
    for k in ([1, 7] if quick else range(1, 8)):
        yield f"led K={k}", led, dict(method="exact", max_features=k, k_semantics="id3")
    xor = vc.load_data(problem="xor:relevant=3,irrelevant=9")
    for k in ([1] if quick else [1, 12]):
        yield f"xor 3+9 K={k}", xor, dict(method="exact", max_features=k, k_semantics="id3")
    gauss = vc.load_data(problem="gauss")
    yield "gauss exact-et K=1", gauss, dict(method="exact-et", max_features=1)


def main():
    args = quick_parser("LED at K=1, 7 and XOR at K=1 only").parse_args()
    print(f"{'case':24s} {'mean s':>9s} {'lattice s':>10s} {'moments s':>10s} {'ratio':>7s} "
          f"{'ratio/lattice':>14s}")
    for name, data, kw in cases(args.quick):
        t_mean, _ = timed(lambda: vc.compute_importances(data, **kw))
        t_lat = float("nan")
        if kw["method"] == "exact":
            t_lat, _ = timed(lambda: exact_importances(data.table, max_features=kw["max_features"],
                                                       k_semantics=kw["k_semantics"]))
        try:
            t_mom, _ = timed(lambda: exact_moments(data, **kw))
            print(f"{name:24s} {t_mean:9.3f} {t_lat:10.3f} {t_mom:10.3f} {t_mom / t_mean:7.2f} "
                  f"{t_mom / t_lat:14.2f}", flush=True)
        except ValueError as exc:
            print(f"{name:24s} {t_mean:9.3f}    refused: {exc}", flush=True)


if __name__ == "__main__":
    main()
