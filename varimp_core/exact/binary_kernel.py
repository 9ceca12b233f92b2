"""Compiled exact Extra-Trees recursion at K = 1 on at most 64 distinct rows.

The same expectation as :class:`varimp_core.exact.binary.BinarySolver` for
``exact-et`` with ``max_features=1``, fully grown trees and an entropy or Gini
criterion, one node at a time instead of numpy batches (issue #30: the batched
solver spent 35 to 80 microseconds a node, against a floor of about 2 for the
look-ups alone).  With at most 64 distinct rows a node is a 64-bit mask of its
rows: a split's left child is the node's mask and a prefix of the chosen
feature's rank order, its right child the rest.  Without a depth limit a node's
horizon is its number of rows minus one, so the mask alone is its key.

At K = 1 scikit-learn's ExtraTrees draws one of the node's m non-constant
features (``draw1[m]``, :func:`varimp_core.exact.binary._draw_weights`), then a
threshold uniformly between the feature's lowest and highest value in the node:
gap g of feature j is chosen with probability

.. math::

    P(j, g) = w_m \\, \\frac{v_{g+1} - v_g}{v_{\\max} - v_{\\min}},

zero where a side would hold fewer than ``min_samples_leaf`` samples.  The
node adds :math:`r(t) \\sum_g P(j, g)\\, \\Delta(j, g)` to feature j's
importance (:math:`\\Delta` the weighted impurity decrease), and each child
that can split gets :math:`r(t) P(j, g)` of reach one level deeper.  Nodes are
taken by decreasing number of rows: every parent of a node holds more rows, so
its reach is complete when its turn comes.
"""

from __future__ import annotations

import numpy as np

from varimp_core.compiled import HAVE_NUMBA
from varimp_core.compiled import jit as _jit

__all__ = ["HAVE_NUMBA", "MAX_ROWS", "et_k1_profile"]

#: Most distinct rows a node mask holds.
MAX_ROWS = 64


@_jit
def _impurity(c, gini):
    """W i(W) of class weights ``c``: entropy in bits, or Gini."""
    W = 0.0
    for k in range(c.shape[0]):
        W += c[k]
    if W <= 0.0:
        return 0.0
    if gini:
        s = 0.0
        for k in range(c.shape[0]):
            s += c[k] * c[k]
        return W - s / W
    out = W * np.log2(W)
    for k in range(c.shape[0]):
        if c[k] > 0.0:
            out -= c[k] * np.log2(c[k])
    return out


@_jit
def _slot(table, keys, key, mask_bits):
    """Index in ``table`` of ``key``, or of the empty slot where it goes (open addressing)."""
    h = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - mask_bits)
    i = np.int64(h)
    size = table.shape[0]
    while True:
        at = table[i]
        if at < 0 or keys[at] == key:
            return i
        i += 1
        if i == size:
            i = 0


@_jit
def _table_for(keys, n_nodes, cap):
    """An open-addressing table of at least twice ``cap`` slots holding nodes 0..n_nodes-1."""
    bits = 1
    while (1 << bits) < 2 * cap:
        bits += 1
    table = np.full(1 << bits, -1, dtype=np.int64)
    for i in range(n_nodes):
        table[_slot(table, keys, keys[i], bits)] = i
    return table, bits


@_jit
def _solve(order, ranks, vals, stats, count, y, draw1, L, gini, n_cols, max_nodes, start,
           total):
    """Fill ``total`` (p, n_cols) with the unnormalised profile; the number of split nodes,
    or -1 past ``max_nodes``.  Node arrays start with ``start`` slots and double."""
    p, U = order.shape
    C = stats.shape[1]
    cap = max(2, min(start, max_nodes))
    keys = np.zeros(cap, dtype=np.uint64)
    reach = np.zeros((cap, n_cols))
    nxt = np.full(cap, -1, dtype=np.int64)
    head = np.full(U + 1, -1, dtype=np.int64)
    full = np.uint64(0)
    for r in range(U):
        full |= np.uint64(1) << np.uint64(r)
    keys[0] = full
    reach[0, 0] = 1.0
    n_nodes = 1
    table, bits = _table_for(keys, n_nodes, cap)
    head[U] = 0
    rows = np.zeros((p, U), dtype=np.int64)
    cw = np.zeros((U, C))
    tot = np.zeros(C)
    right = np.zeros(C)
    deeper = np.zeros(n_cols)
    suf_lo = np.zeros(U, dtype=np.int64)
    suf_hi = np.zeros(U, dtype=np.int64)
    for size in range(U, 1, -1):
        t = head[size]
        while t >= 0:
            mask = keys[t]
            m = 0                      # the node's rows in each feature's order, and how
            n = 0                      # many features are not constant there (the draw)
            for j in range(p):
                n = 0
                for a in range(U):
                    r = order[j, a]
                    if (mask >> np.uint64(r)) & np.uint64(1):
                        rows[j, n] = r
                        n += 1
                if ranks[rows[j, n - 1], j] > ranks[rows[j, 0], j]:
                    m += 1
            if m == 0:
                t = nxt[t]
                continue
            w_draw = draw1[m]
            for d in range(n_cols):    # the reach one level deeper of this node's children
                deeper[d] = 0.0
            for d in range(1, n_cols):
                deeper[d] = reach[t, d - 1]
            deeper[n_cols - 1] += reach[t, n_cols - 1]
            for j in range(p):
                first, last = ranks[rows[j, 0], j], ranks[rows[j, n - 1], j]
                if last == first:
                    continue
                span = vals[j, last] - vals[j, first]
                for k in range(C):
                    tot[k] = 0.0
                n_total = 0.0
                for a in range(n):
                    n_total += count[rows[j, a]]
                    for k in range(C):
                        tot[k] += stats[rows[j, a], k]
                        cw[a, k] = tot[k]
                suf_lo[n - 1] = y[rows[j, n - 1]]
                suf_hi[n - 1] = y[rows[j, n - 1]]
                for a in range(n - 2, -1, -1):
                    suf_lo[a] = min(suf_lo[a + 1], y[rows[j, a]])
                    suf_hi[a] = max(suf_hi[a + 1], y[rows[j, a]])
                whole = _impurity(tot, gini)
                left_mask = np.uint64(0)
                n_left = 0.0
                y_lo, y_hi = y[rows[j, 0]], y[rows[j, 0]]
                own = 0.0
                for a in range(n - 1):
                    r = rows[j, a]
                    left_mask |= np.uint64(1) << np.uint64(r)
                    n_left += count[r]
                    y_lo = min(y_lo, y[r])
                    y_hi = max(y_hi, y[r])
                    ra, rb = ranks[r, j], ranks[rows[j, a + 1], j]
                    if ra == rb or n_left < L or n_total - n_left < L:
                        continue
                    prob = w_draw * (vals[j, rb] - vals[j, ra]) / span
                    for k in range(C):
                        right[k] = tot[k] - cw[a, k]
                    own += prob * (whole - _impurity(cw[a], gini) - _impurity(right, gini))
                    # the two children: those that can split get reach one level deeper
                    for side in range(2):
                        if side == 0:
                            child, n_uni, n_smp = left_mask, a + 1, n_left
                            impure = y_hi > y_lo
                        else:
                            child, n_uni, n_smp = mask ^ left_mask, n - a - 1, n_total - n_left
                            impure = suf_hi[a + 1] > suf_lo[a + 1]
                        if not impure or n_smp < max(2.0, 2.0 * L) or n_uni < 2:
                            continue
                        s = _slot(table, keys, child, bits)
                        c = table[s]
                        if c < 0:
                            if n_nodes >= max_nodes:
                                return -1
                            if n_nodes == cap:          # double the node arrays
                                cap = min(2 * cap, max_nodes)
                                k2 = np.zeros(cap, dtype=np.uint64)
                                r2 = np.zeros((cap, n_cols))
                                x2 = np.full(cap, -1, dtype=np.int64)
                                k2[:n_nodes] = keys[:n_nodes]
                                r2[:n_nodes] = reach[:n_nodes]
                                x2[:n_nodes] = nxt[:n_nodes]
                                keys, reach, nxt = k2, r2, x2
                                table, bits = _table_for(keys, n_nodes, cap)
                                s = _slot(table, keys, child, bits)
                            c = n_nodes
                            n_nodes += 1
                            keys[c] = child
                            table[s] = c
                            nxt[c] = head[n_uni]
                            head[n_uni] = c
                        for d in range(n_cols):
                            reach[c, d] += prob * deeper[d]
                for d in range(n_cols):
                    total[j, d] += own * reach[t, d]
            t = nxt[t]
    return n_nodes


def et_k1_profile(d, draw1, min_samples_leaf, n_cols, max_nodes):
    """The profile of :meth:`BinarySolver.solve` for exact-et at K = 1, fully grown, entropy
    or Gini, on ``d`` (:class:`~varimp_core.exact.binary.PreparedBinary`) of at most
    :data:`MAX_ROWS` distinct rows: ``(profile / W, n_split_nodes)``; ``n_split_nodes`` is
    -1 past ``max_nodes``."""
    U, p = d.ranks.shape
    order = np.argsort(d.ranks, axis=0, kind="stable").T.copy()
    cmax = max(d.n_distinct)
    vals = np.zeros((p, cmax))
    for f, v in enumerate(d.values):
        vals[f, :v.size] = v
    total = np.zeros((p, n_cols))
    n = _solve(order.astype(np.int64), d.ranks.astype(np.int64), vals,
               d.stats().astype(float), d.count.astype(float), d.y.astype(np.int64),
               np.asarray(draw1, dtype=float), float(min_samples_leaf),
               d.criterion == "gini", int(n_cols), int(max_nodes), 4096, total)
    return total / d.total_weight, int(n)
