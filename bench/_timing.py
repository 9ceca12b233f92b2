"""Helpers shared by the benchmark scripts (not a benchmark itself: ``make bench`` skips ``_*``)."""

from __future__ import annotations

import argparse
import os
import time


def timed(fn, repeat=1):
    """Best wall-clock time in seconds over ``repeat`` calls of ``fn()``, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def quick_parser(quick_help: str, description: str | None = None) -> argparse.ArgumentParser:
    """An argument parser with the ``--quick`` flag every benchmark has (``quick_help`` says what it cuts)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    return ap


def amdahl(t1: float, t2: float, cores: int = 16) -> tuple[float, float]:
    """Serial fraction from the times at 1 and 2 jobs, and the time it projects on ``cores``.

    Amdahl's law, :math:`t_n = t_1 (f + (1 - f) / n)`, gives
    :math:`t_2 / t_1 = (1 + f) / 2`, so :math:`f = 2 t_2 / t_1 - 1` (clipped to [0, 1]).
    A projection, not a measurement: it assumes the parallel part keeps scaling (no memory
    bandwidth limit, no other load) and that two points on a loaded machine measure ``f``.
    """
    f = min(1.0, max(0.0, 2.0 * t2 / t1 - 1.0))
    return f, t1 * (f + (1.0 - f) / cores)


def print_projection(name: str, ours: dict, theirs: dict, cores: int = 16) -> None:
    """One line: the serial fractions measured at n_jobs 1 and 2 and the ratio they project
    on ``cores`` cores (``ours`` and ``theirs``: {1: seconds, 2: seconds})."""
    f_ours, t_ours = amdahl(ours[1], ours[2], cores)
    f_theirs, t_theirs = amdahl(theirs[1], theirs[2], cores)
    print(f"{name}: serial fraction {f_ours:.2f} (varimp), {f_theirs:.2f} (scikit-learn); "
          f"PROJECTED, not measured, on {cores} cores: varimp {t_ours:.2f} s, scikit-learn "
          f"{t_theirs:.2f} s, ratio {t_theirs / t_ours:.1f}x (Amdahl from n_jobs 1 and 2)")
    load, cores_here = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores_here:
        print(f"  (load average {load:.1f} on {cores_here} cores: a second job found no free "
              "core, so these serial fractions overstate the true ones)")
