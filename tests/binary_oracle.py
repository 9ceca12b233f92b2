"""Brute-force oracle for exact binary forests: enumerate every random tree.

Independent of ``varimp_core.exact.binary``: it walks scikit-learn's node
splitting loop literally, row by row, for every ordering of the p features
(probability 1/p! each) and, for extra trees, every combination of the gaps
the evaluated features draw (probability: product of gap lengths over
ranges).  Scores are compared as scikit-learn does (strictly better than the
best so far wins, so the first-read of tied features keeps the split), with
a tolerance for rounding.  Only for tiny tables (N <= 8, p <= 3).
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import permutations, product

import numpy as np


def _wimp(weights_by_class, criterion):
    W = sum(weights_by_class)
    if W <= 0:
        return 0.0
    if criterion == "entropy":
        return -sum(c * math.log2(c / W) for c in weights_by_class if c > 0)
    return W * (1.0 - sum((c / W) ** 2 for c in weights_by_class))


def brute_force_mdi(X, y, *, kind, max_features, max_depth=None, min_samples_leaf=1,
                    criterion="entropy", sample_weight=None):
    """Expected unnormalised MDI by feature and absolute depth, shape (p, N).

    kind : "rf" (best splitter) or "et" (random splitter).
    criterion : "entropy", "gini" or "squared_error" (y numeric: W Var(y) per node).
    """
    X = np.asarray(X, dtype=float)
    y = list(np.asarray(y))
    n, p = X.shape
    w = [1.0] * n if sample_weight is None else [float(v) for v in sample_weight]
    classes = sorted(set(y))
    K = p if max_features is None else max_features
    rows0 = tuple(i for i in range(n) if w[i] > 0)
    W0 = sum(w[i] for i in rows0)
    D = n + 1
    perms = list(permutations(range(p)))

    def class_weights(rows):
        return [sum(w[i] for i in rows if y[i] == c) for c in classes]

    def wimp(rows):
        if criterion == "squared_error":    # W Var(y), two passes over the rows
            Wr = sum(w[i] for i in rows)
            if Wr <= 0:
                return 0.0
            mean = sum(w[i] * y[i] for i in rows) / Wr
            return sum(w[i] * (y[i] - mean) ** 2 for i in rows)
        return _wimp(class_weights(rows), criterion)

    scale = 1.0
    if criterion == "squared_error":        # ties within 1e-9 W Var(Y), whatever Y's units
        scale = wimp(rows0) / W0 or 1.0

    def split_candidates(rows, f):
        """All (left, right, proxy, length, valid) of feature f's gaps, in ascending order."""
        srt = sorted(rows, key=lambda i: X[i, f])
        vals = [X[i, f] for i in srt]
        out = []
        for k in range(1, len(srt)):
            if vals[k] == vals[k - 1]:
                continue
            left, right = tuple(srt[:k]), tuple(srt[k:])
            valid = len(left) >= min_samples_leaf and len(right) >= min_samples_leaf
            proxy = -(wimp(left) + wimp(right))
            out.append((left, right, proxy, vals[k] - vals[k - 1], valid))
        rng = vals[-1] - vals[0]
        return [(l, r, pr, ln / rng if rng > 0 else 0.0, v) for (l, r, pr, ln, v) in out]

    @lru_cache(maxsize=None)
    def value(rows, depth):
        out = np.zeros((p, D))
        if max_depth is not None and depth >= max_depth:
            return out
        if len(rows) < 2 or len(rows) < 2 * min_samples_leaf:
            return out
        if len({y[i] for i in rows}) == 1:
            return out
        Wt = sum(w[i] for i in rows)
        tol = 1e-9 * Wt * scale
        node_imp = wimp(rows)
        cands = {f: split_candidates(rows, f) for f in range(p)}
        outcomes = {}  # (f, left, right, gain) -> probability

        def add(prob, best):
            if best is None:
                return
            f, left, right, proxy = best
            key = (f, left, right)
            outcomes[key] = outcomes.get(key, 0.0) + prob

        for perm in perms:
            # scikit-learn's loop: read features until K were read and one was non-constant
            evaluated, visited, n_const = [], 0, 0
            for f in perm:
                if not (visited < K or visited <= n_const):
                    break
                visited += 1
                if not cands[f]:
                    n_const += 1
                    continue
                evaluated.append(f)
            if kind == "rf":
                best, best_proxy = None, -math.inf
                for f in evaluated:
                    for (left, right, proxy, _, valid) in cands[f]:
                        if valid and proxy > best_proxy + tol:
                            best, best_proxy = (f, left, right, proxy), proxy
                add(1.0 / len(perms), best)
            else:
                for combo in product(*[cands[f] for f in evaluated]):
                    prob = 1.0 / len(perms)
                    best, best_proxy = None, -math.inf
                    for f, (left, right, proxy, pr, valid) in zip(evaluated, combo):
                        prob *= pr
                        if valid and proxy > best_proxy + tol:
                            best, best_proxy = (f, left, right, proxy), proxy
                    if prob > 0:
                        add(prob, best)
        for (f, left, right), prob in outcomes.items():
            gain = (node_imp - wimp(left) - wimp(right)) / W0
            out[f, depth] += prob * gain
            out += prob * (value(left, depth + 1) + value(right, depth + 1))
        return out

    return value(rows0, 0)
