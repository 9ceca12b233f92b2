"""Independent brute-force oracles, written without any varimp_core code.

* ``eqn3_bruteforce``: Eqn 3 of Louppe et al. (2013) term by term, each
  conditional mutual information computed from its own joint distribution.
* ``enumerate_trees``: the expected importances of a randomized multiway tree
  by walking *every* tree: at each node, every K-subset of candidates (id3)
  or every ordering of all p features (scikit-learn's reading rule) is
  enumerated with its probability, the best impurity decrease wins, ties
  shared equally.  Exponential; only for p <= 4 or so.

Rows are ``(x_tuple, y, probability)``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict


def _entropy(probs):
    total = sum(probs)
    return -sum(p / total * math.log2(p / total) for p in probs if p > 0) if total > 0 else 0.0


def _marginal(rows, cols, with_y):
    acc = defaultdict(float)
    for x, y, w in rows:
        key = tuple(x[c] for c in cols) + ((y,) if with_y else ())
        acc[key] += w
    return list(acc.values())


def cmi(rows, m, given):
    """I(X_m; Y | X_given) from scratch."""
    given = list(given)
    h = lambda cols, wy: _entropy(_marginal(rows, cols, wy))  # noqa: E731
    return h([m] + given, False) + h(given, True) - h([m] + given, True) - h(given, False)


def eqn3_bruteforce(rows, p):
    imp = [0.0] * p
    for m in range(p):
        others = [j for j in range(p) if j != m]
        for k in range(p):
            for b in itertools.combinations(others, k):
                imp[m] += cmi(rows, m, b) / (math.comb(p, k) * (p - k))
    return imp


def _node_entropy(rows):
    acc = defaultdict(float)
    for _, y, w in rows:
        acc[y] += w
    return _entropy(list(acc.values()))


def _split(rows, v):
    parts = defaultdict(list)
    for r in rows:
        parts[r[0][v]].append(r)
    return parts


def _delta(rows, v):
    total = sum(w for _, _, w in rows)
    parts = _split(rows, v)
    return _node_entropy(rows) - sum(sum(w for _, _, w in part) / total * _node_entropy(part)
                                     for part in parts.values())


def enumerate_trees(rows, p, k, *, semantics="id3", max_depth=None, tol=1e-10):
    """Expected importance of each variable over all random trees (brute force)."""
    depth_limit = p if max_depth is None else max_depth
    imp = [0.0] * p

    def winners_id3(rows, unused):
        n = len(unused)
        kk = min(k, n)
        subsets = list(itertools.combinations(unused, kk))
        law = defaultdict(float)
        deltas = {v: _delta(rows, v) for v in unused}
        for s in subsets:
            best = max(deltas[v] for v in s)
            tied = [v for v in s if deltas[v] >= best - tol]
            for v in tied:
                law[v] += 1.0 / len(subsets) / len(tied)
        return law

    def winners_sklearn(rows, used):
        law = defaultdict(float)
        perms = list(itertools.permutations(range(p)))
        deltas = {}
        for v in range(p):
            const = v in used or len(_split(rows, v)) <= 1
            deltas[v] = None if const else _delta(rows, v)
        for order in perms:
            drawn, seen_nonconst = [], False
            for i, v in enumerate(order):
                if i >= k and seen_nonconst:
                    break
                drawn.append(v)
                seen_nonconst |= deltas[v] is not None
            cands = [v for v in drawn if deltas[v] is not None]
            if not cands:
                continue
            best = max(deltas[v] for v in cands)
            tied = [v for v in cands if deltas[v] >= best - tol]
            for v in tied:
                law[v] += 1.0 / len(perms) / len(tied)
        return law

    def grow(rows, used, weight, depth):
        if depth >= depth_limit or len(used) == p or _node_entropy(rows) <= 0:
            return
        node_p = sum(w for _, _, w in rows)
        if semantics == "id3":
            law = winners_id3(rows, [v for v in range(p) if v not in used])
        else:
            law = winners_sklearn(rows, used)
        for v, prob in law.items():
            imp[v] += weight * prob * node_p * _delta(rows, v)
            for part in _split(rows, v).values():
                grow(part, used | {v}, weight * prob, depth + 1)

    total = sum(w for _, _, w in rows)
    grow([(x, y, w / total) for x, y, w in rows], frozenset(), 1.0, 0)
    return imp
