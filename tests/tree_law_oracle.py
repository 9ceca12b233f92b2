"""Brute-force law of one random tree's importance vector, written without varimp_core.

Extends the two oracles (``oracle.enumerate_trees``: multiway; ``binary_oracle``:
scikit-learn's binary trees) from the *mean* to the *whole distribution*: every
tree is enumerated with its probability and its importance vector
:math:`\\sum_t p(t)\\Delta i(t)\\, e_{v(t)}`.  Sibling subtrees are grown
independently given the split, so a node's law is the gain plus the
convolution of its children's laws, mixed over the split law.  Returned as a
list of (probability, vector) with equal vectors merged.  Tiny tables only.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from itertools import permutations, product

import numpy as np

from oracle import _delta, _node_entropy, _split


def _merge(items):
    acc = defaultdict(float)
    vec = {}
    for pr, v in items:
        key = tuple(np.round(v, 13))
        acc[key] += pr
        vec.setdefault(key, np.asarray(v, float))
    return [(acc[k], vec[k]) for k in acc]


def _convolve(laws, p):
    out = [(1.0, np.zeros(p))]
    for law in laws:
        out = _merge([(a * b, u + v) for a, u in out for b, v in law])
    return out


def moments(law):
    mean = sum(pr * v for pr, v in law)
    second = sum(pr * np.outer(v, v) for pr, v in law)
    return mean, second - np.outer(mean, mean)


def multiway_law(rows, p, k, *, semantics="id3", max_depth=None, tol=1e-10):
    """Law of the importance vector of a random multiway tree (rows: (x, y, w))."""
    depth_limit = p if max_depth is None else max_depth

    def winners(rows, used):
        law = defaultdict(float)
        if semantics == "id3":
            unused = [v for v in range(p) if v not in used]
            subsets = list(itertools.combinations(unused, min(k, len(unused))))
            deltas = {v: _delta(rows, v) for v in unused}
            for s in subsets:
                best = max(deltas[v] for v in s)
                tied = [v for v in s if deltas[v] >= best - tol]
                for v in tied:
                    law[v] += 1.0 / len(subsets) / len(tied)
            return law
        perms = list(itertools.permutations(range(p)))
        deltas = {v: None if (v in used or len(_split(rows, v)) <= 1) else _delta(rows, v)
                  for v in range(p)}
        for order in perms:
            drawn, seen = [], False
            for i, v in enumerate(order):
                if i >= k and seen:
                    break
                drawn.append(v)
                seen |= deltas[v] is not None
            cands = [v for v in drawn if deltas[v] is not None]
            if not cands:
                continue
            best = max(deltas[v] for v in cands)
            tied = [v for v in cands if deltas[v] >= best - tol]
            for v in tied:
                law[v] += 1.0 / len(perms) / len(tied)
        return law

    def grow(rows, used, depth):
        if depth >= depth_limit or len(used) == p or _node_entropy(rows) <= 0:
            return [(1.0, np.zeros(p))]
        node_p = sum(w for _, _, w in rows)
        out, total = [], 0.0
        for v, prob in winners(rows, used).items():
            total += prob
            gain = np.zeros(p)
            gain[v] = node_p * _delta(rows, v)
            kids = _convolve([grow(part, used | {v}, depth + 1)
                              for part in _split(rows, v).values()], p)
            out += [(prob * a, gain + u) for a, u in kids]
        if total < 1 - 1e-12:
            out.append((1 - total, np.zeros(p)))
        return _merge(out)

    total = sum(w for _, _, w in rows)
    return grow([(x, y, w / total) for x, y, w in rows], frozenset(), 0)


def _wimp(weights_by_class, criterion):
    W = sum(weights_by_class)
    if W <= 0:
        return 0.0
    if criterion == "entropy":
        return -sum(c * math.log2(c / W) for c in weights_by_class if c > 0)
    return W * (1.0 - sum((c / W) ** 2 for c in weights_by_class))


def binary_law(X, y, *, kind, max_features, max_depth=None, criterion="entropy"):
    """Law of the importance vector of a random scikit-learn tree (bootstrap off).

    Same literal walk as ``binary_oracle.brute_force_mdi``: every order of the
    features (1/p! each) and, for extra trees, every combination of the gaps
    the evaluated features draw; strictly better wins (first read keeps ties).
    """
    X = np.asarray(X, dtype=float)
    y = list(np.asarray(y))
    n, p = X.shape
    classes = sorted(set(y))
    K = p if max_features is None else max_features
    perms = list(permutations(range(p)))
    W0 = float(n)

    def wimp(rows):
        return _wimp([sum(1.0 for i in rows if y[i] == c) for c in classes], criterion)

    def cands_of(rows, f):
        srt = sorted(rows, key=lambda i: X[i, f])
        vals = [X[i, f] for i in srt]
        out = []
        for k in range(1, len(srt)):
            if vals[k] == vals[k - 1]:
                continue
            left, right = tuple(sorted(srt[:k])), tuple(sorted(srt[k:]))
            out.append((left, right, -(wimp(left) + wimp(right)), vals[k] - vals[k - 1]))
        rng = vals[-1] - vals[0]
        return [(l, r, pr, ln / rng) for (l, r, pr, ln) in out]

    def grow(rows, depth):
        if (max_depth is not None and depth >= max_depth) or len(rows) < 2 \
                or len({y[i] for i in rows}) == 1:
            return [(1.0, np.zeros(p))]
        tol = 1e-9 * len(rows)
        node_imp = wimp(rows)
        cands = {f: cands_of(rows, f) for f in range(p)}
        outcomes = defaultdict(float)
        for perm in perms:
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
                best, bp = None, -math.inf
                for f in evaluated:
                    for (l, r, pr, _) in cands[f]:
                        if pr > bp + tol:
                            best, bp = (f, l, r), pr
                if best is not None:
                    outcomes[best] += 1.0 / len(perms)
            else:
                for combo in product(*[cands[f] for f in evaluated]):
                    prob = 1.0 / len(perms)
                    best, bp = None, -math.inf
                    for f, (l, r, pr, q) in zip(evaluated, combo):
                        prob *= q
                        if pr > bp + tol:
                            best, bp = (f, l, r), pr
                    if prob > 0 and best is not None:
                        outcomes[best] += prob
        out, total = [], 0.0
        for (f, l, r), prob in outcomes.items():
            total += prob
            gain = np.zeros(p)
            gain[f] = (node_imp - wimp(l) - wimp(r)) / W0
            kids = _convolve([grow(l, depth + 1), grow(r, depth + 1)], p)
            out += [(prob * a, gain + u) for a, u in kids]
        if total < 1 - 1e-12:
            out.append((1 - total, np.zeros(p)))
        return _merge(out)

    return grow(tuple(range(n)), 0)
