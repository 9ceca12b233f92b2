"""Helpers shared by the benchmark scripts (not a benchmark itself: ``make bench`` skips ``_*``)."""

from __future__ import annotations

import argparse
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
