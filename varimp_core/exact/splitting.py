"""Which variable wins a node: the exact law of the randomized split choice.

Shared by the exact infinite-ensemble recursion (:mod:`varimp_core.exact.recursion`),
which needs the *probability* that each candidate wins, and the multiway
forest (:mod:`varimp_core.forests.multiway`), which *draws* the winner.  Both follow
the same two semantics of K (``max_features``):

``"id3"``
    Louppe et al. (2013): K' = min(K, |R|) candidates are drawn uniformly
    without replacement among the R variables not yet used on the branch; the
    best impurity decrease wins, ties broken uniformly.

``"sklearn"``
    scikit-learn's splitter: all p features are drawn in random order; those
    constant in the node (including every feature already used on the branch)
    count towards K; drawing goes on past K until at least one non-constant
    feature has been seen; the best non-constant feature drawn wins.  This is
    why scikit-learn does not reproduce Table 2 of Louppe et al. for K >= 2:
    used features are duds that use up part of the K draws.

Impurity decreases closer than :data:`TIE_TOLERANCE` bits count as ties.
"""

from __future__ import annotations

from functools import lru_cache
from math import comb

import numpy as np

__all__ = ["K_SEMANTICS", "TIE_TOLERANCE", "win_probability_table", "sklearn_draw_law",
           "validate_semantics", "validate_max_features"]

K_SEMANTICS = ("id3", "sklearn")
TIE_TOLERANCE = 1e-10


def validate_semantics(k_semantics: str) -> str:
    if k_semantics not in K_SEMANTICS:
        raise ValueError(
            f"k_semantics must be one of {', '.join(K_SEMANTICS)}, got {k_semantics!r}."
        )
    return k_semantics


def validate_max_features(max_features, n_features: int) -> int:
    """K as an int in 1..p; ``None`` means p."""
    if max_features is None:
        return n_features
    if isinstance(max_features, bool) or not isinstance(max_features, (int, np.integer)):
        raise ValueError(f"max_features (K) must be a whole number, got {max_features!r}.")
    if not 1 <= max_features <= n_features:
        raise ValueError(
            f"max_features (K) must be a whole number from 1 to {n_features} (the number of "
            f"variables), got {max_features}."
        )
    return int(max_features)


@lru_cache(maxsize=4096)
def _id3_table(n: int, k: int) -> np.ndarray:
    """P(v wins | a better, t tied others) with K'=k of n candidates: array [a, t]."""
    out = np.zeros((n, n))
    total = comb(n, k)
    for a in range(n):
        for t in range(n - a):
            rest = n - 1 - a - t
            s = 0.0
            for j in range(0, min(t, k - 1) + 1):
                s += comb(t, j) * comb(rest, k - 1 - j) / (j + 1)
            out[a, t] = s / total
    out.setflags(write=False)
    return out


@lru_cache(maxsize=4096)
def sklearn_draw_law(n_total: int, n_nonconstant: int, k: int) -> np.ndarray:
    """Law of the number h of non-constant features scikit-learn evaluates.

    Features are read in a uniformly random order until at least K have been
    read and at least one is non-constant.  h is hypergeometric
    (n_total, n_nonconstant, K) on h >= 1, and the mass at h = 0 moves to h = 1
    (the reading continues to the first non-constant feature).

    Returns
    -------
    ndarray of shape (n_nonconstant + 1,)
        ``law[h]``; ``law[0] == 0``.
    """
    law = np.zeros(n_nonconstant + 1)
    if n_nonconstant == 0:
        return law
    denom = comb(n_total, k)
    for h in range(0, min(k, n_nonconstant) + 1):
        law[h] = comb(n_nonconstant, h) * comb(n_total - n_nonconstant, k - h) / denom
    law[1] += law[0]
    law[0] = 0.0
    return law


@lru_cache(maxsize=4096)
def win_probability_table(n_candidates: int, max_features: int, k_semantics: str,
                          n_total: int) -> np.ndarray:
    """P(a candidate wins | a strictly better, t tied), as an array indexed [a, t].

    The id3 formula (K' = min(K, n)):

    .. math::

        P = \\sum_{j} \\frac{C(t, j)\\, C(n-1-a-t, K'-1-j)}{(j+1)\\, C(n, K')}

    (draw v, j of its t ties and K'-1-j of the n-1-a-t worse candidates; v then
    wins the uniform tie-break with probability 1/(j+1)).  The sklearn law mixes
    it over :func:`sklearn_draw_law`.

    Parameters
    ----------
    n_candidates : int
        id3: variables not used on the branch; sklearn: non-constant variables.
    max_features : int
        K.
    k_semantics : {"id3", "sklearn"}
    n_total : int
        sklearn only: all p features (constant ones included).
    """
    n = n_candidates
    if n == 0:
        return np.zeros((0, 0))
    if k_semantics == "id3":
        return _id3_table(n, min(max_features, n))
    law = sklearn_draw_law(n_total, n, min(max_features, n_total))
    out = np.zeros((n, n))
    for h in range(1, n + 1):
        if law[h] > 0:
            out += law[h] * _id3_table(n, h)
    out.setflags(write=False)
    return out
