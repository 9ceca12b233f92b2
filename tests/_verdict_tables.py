"""Generated tables with known truth for the verdict and leak tests (seeded numpy).

Relevant by construction: ``x1``, ``x2`` (numeric), ``shop`` (32 levels, each with its
own effect), the XOR pair ``a``, ``b`` (each independent of y alone: a XOR b is uniform
whatever a is), ``x1_copy`` (x1 plus a little noise) and ``leak`` (y itself on 97% of the
rows).  Irrelevant by construction (drawn independently of everything): ``branch`` (32
levels), ``weekday`` (7 uniform levels) and ``z`` (numeric).
"""
import numpy as np
import pandas as pd

RELEVANT = ("x1", "x2", "shop", "a", "b", "x1_copy", "leak")
IRRELEVANT = ("branch", "weekday", "z")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def known_truth(seed: int, n: int = 480, task: str = "classification") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1, x2, z = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    shop = rng.integers(0, 32, n)
    effect = np.where(np.arange(32) < 16, 1.5, -1.5)        # shops s00-s15 up, s16-s31 down
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    score = x1 + x2 + effect[shop] + 3.0 * ((a ^ b) - 0.5)
    if task == "classification":
        y = (score + 0.5 * rng.normal(size=n) > 0).astype(int)
        leak = np.where(rng.random(n) < 0.97, y, 1 - y)
    else:
        y = score + 0.5 * rng.normal(size=n)
        leak = np.where(rng.random(n) < 0.97, y, rng.permutation(y))
    return pd.DataFrame({
        "x1": x1, "x2": x2, "shop": [f"s{v:02d}" for v in shop],
        "branch": [f"b{v:02d}" for v in rng.integers(0, 32, n)],
        "a": a, "b": b, "weekday": [WEEKDAYS[v] for v in rng.integers(0, 7, n)],
        "z": z, "x1_copy": x1 + 0.1 * rng.normal(size=n), "leak": leak, "y": y})


def pure_noise(seed: int, n: int = 120) -> pd.DataFrame:
    """Y independent of every input: four inputs of 2, 3, 4 and 6 levels, y of 2 classes."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"u": rng.integers(0, 2, n), "v": rng.integers(0, 3, n),
                         "w": rng.integers(0, 4, n), "s": rng.integers(0, 6, n),
                         "y": rng.integers(0, 2, n)})
