"""What a server process loads once, before it answers anyone.

The multiway forests' compiled kernels (:mod:`varimp_core.forests.multiway_kernel`) load
late, on a process's first forest: numba's import and the load of each kernel from its
on-disk cache cost 0.8-1.2 s (2026-11-29, idle 2-core machine).  A built-in exact problem's
explanations are computed in the web request (``JobView(quick=...)``: Why this row's LED
demo, 0.1 s of work), so that second fell on the teacher's first click.  Loading them at
the start moves it to the server's start, once per process; the Diskcache jobs, forked from
the web process, inherit them.
"""

from __future__ import annotations

import logging
import os
import time

__all__ = ["compiled_kernels"]

log = logging.getLogger(__name__)


def compiled_kernels() -> float:
    """Grow and route a forest of two trees on XOR's exact table, through every kernel the
    pages' multiway forests use (plain, Saabas routing, local importance); seconds taken.
    (exact-et's compiled recursion, :mod:`varimp_core.exact.binary_kernel`, loads on its
    first use: 0.35 s, once per process, in a job.)
    ``VARIMP_PRELOAD=0`` skips it (0.0)."""
    if os.environ.get("VARIMP_PRELOAD", "1") == "0":
        return 0.0
    from varimp_core.forests.multiway import grow_forest
    from varimp_core.local.explain import multiway_saabas
    from varimp_core.local.multiway import forest_local_importance
    from varimp_core.problems.registry import get_problem

    started = time.perf_counter()
    table = get_problem("xor").exact_table()
    opts = dict(n_estimators=2, max_features=1, random_state=0)
    grow_forest(table, **opts)
    multiway_saabas(table, table.X, **opts)
    forest_local_importance(table, table.X, **opts)
    took = time.perf_counter() - started
    log.info("compiled kernels loaded in %.2f s", took)
    return took
