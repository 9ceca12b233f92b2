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

Where the time goes (issue #30, N = 50, p = 3: 822,587 nodes, about 93 child
look-ups a node).  The first version kept a node in four places (a hash slot
pointing at an index, its key, its reach, its link) and computed two entropies
with logarithms per gap: 12.4 us a node.  Now

- a hash slot *is* the node: its row mask and its reach by depth, padded to 32
  or 64 bytes and aligned so that it sits on one cache line (a look-up and the
  update of the child's reach touch one line; 4.4 -> 3.1 us a node);
- a node's children are all formed before any slot is read, and their first
  slots are then read in one loop whose loads do not wait on each other, so
  that their cache misses overlap (4.3 -> 3.1 us with the layout above);
- entropies of integer counts read k log2(k) from a table
  (13.6 -> 4.4 us together with the first change);
- expanded nodes are never looked up again (their parents all hold more
  rows), so when the table is half full it is rebuilt without them, at a
  quarter load; its size follows the nodes alive, not all nodes found.
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
def _impurity_table(c, xlog2x):
    """W i(W) in bits of integer class counts ``c``, from the table of k log2 k."""
    W = 0
    out = 0.0
    for k in range(c.shape[0]):
        ck = np.int64(c[k])
        W += ck
        out -= xlog2x[ck]
    return out + xlog2x[W]


@_jit
def _popcount(x):
    """Number of set bits of the uint64 ``x``."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@_jit
def _home(key, bits):
    """First slot of ``key`` in a table of 2**bits slots (Fibonacci hashing)."""
    return np.int64((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits))


@_jit
def _find(tabk, off, bits, width, key):
    """Slot of ``key`` in the table of 2**bits slots at ``off``, or of the empty slot where
    it goes (linear probing from its home slot)."""
    last = (1 << bits) - 1
    i = _home(key, bits)
    while True:
        at = tabk[off + i * width]
        if at == key or at == np.uint64(0):
            return i
        i = (i + 1) & last


@_jit
def _aligned(n_words):
    """Zeros of ``n_words`` float64 and the offset of the first one on a 64-byte line."""
    buf = np.zeros(n_words + 8)
    off = ((64 - buf.ctypes.data % 64) % 64) // 8
    return buf, off


@_jit
def _rebuild(tab, off, link, bits, new_bits, width, head):
    """A table of 2**new_bits slots holding the nodes of ``tab`` not yet expanded, its
    offset, and the lists of them by size (``head``, ``link``).  A slot is ``width`` words
    on one cache line: the node's row mask (0: empty), then its reach at each depth (-1 once
    expanded)."""
    new, new_off = _aligned((1 << new_bits) * width)
    new_link = np.empty(1 << new_bits, dtype=np.int32)
    newk = new.view(np.uint64)
    oldk = tab.view(np.uint64)
    for b in range(head.shape[0]):
        head[b] = -1
    for s in range(1 << bits):
        at = off + s * width
        key = oldk[at]
        if key == np.uint64(0) or tab[at + 1] < 0.0:
            continue
        i = _find(newk, new_off, new_bits, width, key)
        for w in range(width):
            new[new_off + i * width + w] = tab[at + w]
        size = _popcount(key)
        new_link[i] = head[size]
        head[size] = i
    return new, new_off, new_link


@_jit
def _solve(order, ranks, vals, stats, count, y, draw1, L, gini, xlog2x, n_cols, max_nodes,
           start_bits, total):
    """Fill ``total`` (p, n_cols) with the unnormalised profile; the number of split nodes,
    or -1 past ``max_nodes``.

    The distinct nodes not yet expanded live in one open-addressing table whose slot holds
    the node's row mask, the link to the next node of its size and its reach, so that
    finding a child and adding to its reach touch one place in memory.  A node's children
    are formed first and their slots read once before any is used, so that their memory
    misses overlap.  Expanded nodes are never looked up again (their parents all hold more
    rows), so the table is rebuilt without them when it fills up."""
    p, U = order.shape
    C = stats.shape[1]
    width = 1 + n_cols                   # a slot: the row mask, then the reach by depth,
    if width <= 4:                       # padded so that no slot crosses a cache line
        width = 4
    elif width <= 8:
        width = 8
    use_table = xlog2x.shape[0] > 0
    bits = start_bits
    tab, off = _aligned((1 << bits) * width)
    link = np.empty(1 << bits, dtype=np.int32)
    tabk = tab.view(np.uint64)
    head = np.full(U + 1, -1, dtype=np.int64)
    full = np.uint64(0)
    for r in range(U):
        full |= np.uint64(1) << np.uint64(r)
    s0 = _home(full, bits)
    tabk[off + s0 * width] = full
    link[s0] = -1
    tab[off + s0 * width + 1] = 1.0
    head[U] = s0
    n_nodes = 1
    used = 1                             # occupied slots, expanded or not
    rows = np.zeros((p, U), dtype=np.int64)
    cw = np.zeros((U, C))
    tot = np.zeros(C)
    right = np.zeros(C)
    deeper = np.zeros(n_cols)
    here = np.zeros(n_cols)
    suf_lo = np.zeros(U, dtype=np.int64)
    suf_hi = np.zeros(U, dtype=np.int64)
    kid_mask = np.zeros(2 * p * U, dtype=np.uint64)
    kid_prob = np.zeros(2 * p * U)
    kid_size = np.zeros(2 * p * U, dtype=np.int64)
    for size in range(U, 1, -1):
        t = head[size]
        while t >= 0:
            mask = tabk[off + t * width]
            nxt = link[t]
            for d in range(n_cols):
                here[d] = tab[off + t * width + 1 + d]
            tab[off + t * width + 1] = -1.0    # expanded: never looked up again
            m = 0                              # the node's rows in each feature's order, and
            n = 0                              # how many features are not constant there
            for j in range(p):
                n = 0
                for a in range(U):
                    r = order[j, a]
                    rows[j, n] = r
                    n += np.int64((mask >> np.uint64(r)) & np.uint64(1))
                if ranks[rows[j, n - 1], j] > ranks[rows[j, 0], j]:
                    m += 1
            if m == 0:
                t = nxt
                continue
            w_draw = draw1[m]
            for d in range(n_cols):            # the reach one level deeper of its children
                deeper[d] = 0.0
            for d in range(1, n_cols):
                deeper[d] = here[d - 1]
            deeper[n_cols - 1] += here[n_cols - 1]
            n_kids = 0
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
                if use_table:
                    whole = _impurity_table(tot, xlog2x)
                else:
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
                    if use_table:
                        own += prob * (whole - _impurity_table(cw[a], xlog2x)
                                       - _impurity_table(right, xlog2x))
                    else:
                        own += prob * (whole - _impurity(cw[a], gini) - _impurity(right, gini))
                    # the children that can split get reach one level deeper
                    if y_hi > y_lo and n_left >= max(2.0, 2.0 * L) and a >= 1:
                        kid_mask[n_kids] = left_mask
                        kid_prob[n_kids] = prob
                        kid_size[n_kids] = a + 1
                        n_kids += 1
                    if suf_hi[a + 1] > suf_lo[a + 1] and n_total - n_left >= max(2.0, 2.0 * L) \
                            and n - a - 1 >= 2:
                        kid_mask[n_kids] = mask ^ left_mask
                        kid_prob[n_kids] = prob
                        kid_size[n_kids] = n - a - 1
                        n_kids += 1
                for d in range(n_cols):
                    total[j, d] += own * here[d]
            # room for every child before any slot is read: a rebuild moves the slots
            if n_nodes + n_kids > max_nodes:
                if n_nodes + _new_kids(tabk, off, bits, width, kid_mask, n_kids) > max_nodes:
                    return -1
            if 2 * (used + n_kids) > (1 << bits):
                live = 0
                for s in range(1 << bits):
                    if tabk[off + s * width] != np.uint64(0) and tab[off + s * width + 1] >= 0.0:
                        live += 1
                new_bits = bits
                while 4 * (live + n_kids) > (1 << new_bits):
                    new_bits += 1
                tab, off, link = _rebuild(tab, off, link, bits, new_bits, width, head)
                tabk = tab.view(np.uint64)
                bits = new_bits
                used = live
                nxt = head[size]
            # read every child's first slot at once, so that the misses overlap
            sink = np.uint64(0)
            for c in range(n_kids):
                sink ^= tabk[off + _home(kid_mask[c], bits) * width]
            for c in range(n_kids):
                key = kid_mask[c]
                i = _find(tabk, off, bits, width, key)
                if tabk[off + i * width] == np.uint64(0):
                    tabk[off + i * width] = key
                    link[i] = head[kid_size[c]]
                    head[kid_size[c]] = i
                    n_nodes += 1
                    used += 1
                w = kid_prob[c]
                for d in range(n_cols):
                    tab[off + i * width + 1 + d] += w * deeper[d]
            if sink == np.uint64(1):          # uses the reads, so the compiler keeps them
                total[0, 0] += 0.0
            t = nxt
    return n_nodes


@_jit
def _new_kids(tabk, off, bits, width, kid_mask, n_kids):
    """How many distinct masks among the first ``n_kids`` are not in the table yet."""
    out = 0
    for c in range(n_kids):
        key = kid_mask[c]
        seen = False
        for e in range(c):
            if kid_mask[e] == key:
                seen = True
                break
        if not seen and tabk[off + _find(tabk, off, bits, width, key) * width] == np.uint64(0):
            out += 1
    return out


def et_k1_profile(d, draw1, min_samples_leaf, n_cols, max_nodes, table_bits=12):
    """The profile of :meth:`BinarySolver.solve` for exact-et at K = 1, fully grown, entropy
    or Gini, on ``d`` (:class:`~varimp_core.exact.binary.PreparedBinary`) of at most
    :data:`MAX_ROWS` distinct rows: ``(profile / W, n_split_nodes)``; ``n_split_nodes`` is
    -1 past ``max_nodes``.  The node table starts with ``2**table_bits`` slots and grows."""
    U, p = d.ranks.shape
    order = np.argsort(d.ranks, axis=0, kind="stable").T.copy()
    cmax = max(d.n_distinct)
    vals = np.zeros((p, cmax))
    for f, v in enumerate(d.values):
        vals[f, :v.size] = v
    total = np.zeros((p, n_cols))
    stats = d.stats().astype(float)
    xlog2x = np.zeros(0)                 # entropy of integer counts: k log2 k from a table
    if d.criterion == "entropy" and np.array_equal(stats, np.round(stats)) \
            and stats.sum() <= 1 << 24:
        k = np.arange(int(stats.sum()) + 1, dtype=float)
        xlog2x = k * np.log2(np.maximum(k, 1.0))
    n = _solve(order.astype(np.int64), d.ranks.astype(np.int64), vals, stats,
               d.count.astype(float), d.y.astype(np.int64), np.asarray(draw1, dtype=float),
               float(min_samples_leaf), d.criterion == "gini", xlog2x, int(n_cols),
               int(max_nodes), int(table_bits), total)
    return total / d.total_weight, int(n)
