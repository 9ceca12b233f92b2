"""Compiled per-level kernels of the multiway forest (:mod:`varimp_core.forests.multiway`).

Why compiled.  Profiling the numpy version (``bench/bench_multiway.py``'s docstring has
the numbers) showed no single hot spot: on a high-cardinality table (LED with 10
irrelevant bits, 16,369 distinct rows, 100 trees, K = 1) the time was spread over the
(node, candidate, value, class) ``bincount`` (21 %), ``np.unique`` to number the children
(17 %), drawing a key per (node, variable) and ``argpartition`` (17 %), the impurities of
a dense (node, candidate, value, class) array that is almost all zeros (16 %), filtering
the entries (12 %) and the node class counts (12 %).  Each is a full pass over
entries x candidates (or nodes x variables) in memory, a dozen per level, and deep in
the trees most nodes hold one or two entries, so dense per-node arrays are mostly
zeros.  numpy cannot skip those zeros nor fuse the passes; a loop per node over its own
entries (kept contiguous, grouped by node) can: the work is O(entries x K) per level,
the cells touched are the only ones visited, and children are numbered by a counting
sort instead of a sort.

The trees are grown breadth-first, all trees of a chunk together, exactly as before:
one call of :func:`grow_level` per level, so
:class:`varimp_core.local.multiway._Router` still follows rows level by level, and the
nodes of a level are numbered as ``np.unique(parent * cmax + value)`` would number them.

Randomness.  Each node draws from its own splitmix64 stream, seeded by a key: a root's
from the chunk's numpy generator, a child's mixed from its parent's key and its value.
So a chunk's trees depend on its seed only (not on ``n_jobs``, not on the process), and
a node's draws not on which other nodes were grown (a node of one repeated row of codes
can be left unsplit without changing any other draw).  Per node: the
candidates (id3: K distinct unused variables by rejection when K is at most a quarter
of the unused ones, else by a partial Fisher-Yates shuffle;
sklearn: variables read in the order of a lazy Fisher-Yates shuffle, with the reading
rule of :mod:`varimp_core.exact.splitting`), then one uniform draw per tie
(reservoir sampling: the winner is uniform among the tied candidates).

Compilation.  numba compiles the kernel lazily, at the first forest of a process, and
keeps it in its on-disk cache (``__pycache__`` beside this file, or numba's user cache
directory): measured on the shared 2-core machine, a cold compile took 17 s at load
average 5 (two kernels then; one now), and a later process's first forest 2.7 s
(cache load and LLVM start) after 2.2 s to import numba, at load average 6.8; expect
several times less on a quiet machine.  Only the first forest of a process pays it.  Where the cache directory is not writable the kernels
are compiled without cache; where numba is missing they run as plain Python (same
numbers, much slower).
"""

from __future__ import annotations

import numpy as np

from varimp_core.compiled import HAVE_NUMBA
from varimp_core.compiled import jit as _jit

__all__ = ["HAVE_NUMBA", "grow_level", "root_keys", "xlogx_table"]

_INV53 = 1.0 / 9007199254740992.0


@_jit
def _mix(z):
    """splitmix64's finaliser: 64 well-mixed bits of ``z``."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@_jit
def _next(state):
    """splitmix64: the next 64 random bits (state: uint64 array of length 1)."""
    z = state[0] + np.uint64(0x9E3779B97F4A7C15)
    state[0] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@_jit
def _uniform(state):
    """A double uniform on [0, 1) with 53 random bits."""
    return float(_next(state) >> np.uint64(11)) * _INV53


@_jit
def _below(state, n):
    """An integer uniform on {0, ..., n - 1} (bias below 2**-53 * n)."""
    k = int(_uniform(state) * n)
    return k if k < n else n - 1


def root_keys(rng: np.random.Generator, n_trees: int) -> np.ndarray:
    """The seeds of the roots' random streams, drawn from a numpy generator."""
    return rng.integers(0, 2 ** 63, size=n_trees, dtype=np.int64).astype(np.uint64)


@_jit
def _xlogx(a, xlx):
    """a log2 a (0 at 0); read from ``xlx`` (k log2 k by k) when it is not empty, where
    the weights are whole counts."""
    if xlx.shape[0] > 0:
        return xlx[int(a)]
    return a * np.log2(a) if a > 0.0 else 0.0


def xlogx_table(total: int) -> np.ndarray:
    """k log2 k for k = 0 .. total: entropies of whole counts without a logarithm each."""
    k = np.arange(total + 1, dtype=float)
    out = np.zeros_like(k)
    np.log2(k, out=out, where=k > 0)
    return out * k


@_jit
def _is_constant(col, row, lo, hi):
    x0 = col[row[lo]]
    for e in range(lo + 1, hi):
        if col[row[e]] != x0:
            return False
    return True


@_jit
def _is_used(used, i, v):
    return (used[i, v >> 6] >> np.uint64(v & 63)) & np.uint64(1) != np.uint64(0)


@_jit
def grow_level(Xt, y, n_levels, row, w, start, node_tree, used, node_counts, level, descend,
               max_features, sklearn_sem, gini, ny, cmax, tie_tol, xlx, node_key, group,
               per_tree, by_degree):
    """Split every node of one level; add the gains to the importances; build the next level.

    ``Xt`` (p, rows) holds the codes column by column; ``row``/``w`` the entries (distinct
    row, weight) grouped by node, node ``i`` owning ``start[i]:start[i + 1]``;
    ``node_tree`` the tree of each node; ``used`` (nodes, ceil(p / 64)) the variables
    split on above it, a bit each; ``node_counts`` (nodes, ny) its class weights.  ``per_tree[tree, var]`` and
    ``by_degree[var, level]`` receive p(t) * decrease (in the weights' unit).  ``xlx``:
    :func:`xlogx_table` where the weights are whole counts, else empty.  ``node_key``: the
    seed of each node's own random stream (a child's is mixed from its parent's and its
    value), so a node's draws do not depend on which other nodes were grown.  ``group``
    (rows; empty: off): equal ids for equal rows of codes; a node whose entries all share
    one is a leaf at once (id3 would split it on constant variables down to the depth limit,
    gaining exactly nothing), which changes no importance and no other node's draws.

    Returns ``splittable``, ``chosen`` (the split variable; 0 where the node does not
    split) and, where ``descend``, the next level: ``row``, ``w``, ``start``,
    ``node_tree``, ``used``, ``node_counts`` of the children of the split nodes (one per
    value of the split variable present in the node, numbered by (parent, value) in
    increasing order, entries grouped by child in their order) and ``key`` = parent *
    cmax + value of each child (sorted); else those seven are empty.
    """
    n_nodes = start.shape[0] - 1
    p = Xt.shape[0]
    n_ent = row.shape[0]
    splittable = np.zeros(n_nodes, dtype=np.bool_)
    chosen = np.zeros(n_nodes, dtype=np.int64)
    cap = n_ent if descend else 0
    row2 = np.empty(cap, dtype=row.dtype)
    w2 = np.empty(cap)
    start2 = np.empty(cap + 1, dtype=np.int64)
    tree2 = np.empty(cap, dtype=node_tree.dtype)
    nw = used.shape[1]
    used2 = np.empty((cap, nw), dtype=np.uint64)
    key = np.empty(cap, dtype=np.int64)
    key2 = np.empty(cap, dtype=np.uint64)
    state = np.zeros(1, dtype=np.uint64)
    prune = group.shape[0] > 0
    counts2 = np.empty((cap, ny))          # rows zeroed as children are made
    cell = np.zeros(cmax * ny)              # class weights by (value, class) of one candidate
    vtot = np.zeros(cmax)                   # weight by value
    vsq = np.zeros(cmax)                    # sum of squared class weights by value (gini)
    vcount = np.zeros((p, cmax), dtype=np.int64)  # entries by (candidate, value)
    cand_vals = np.empty((p, cmax), dtype=np.int64)  # values each candidate touched
    cand_nvals = np.zeros(p, dtype=np.int64)
    offset = np.zeros(cmax, dtype=np.int64)
    child_of = np.zeros(cmax, dtype=np.int64)
    touched_cells = np.empty(cmax * ny, dtype=np.int64)
    touched_vals = np.empty(cmax, dtype=np.int64)
    perm = np.empty(p, dtype=np.int64)
    cand = np.empty(p, dtype=np.int64)
    score = np.empty(p)
    n_child = 0
    pos = 0
    for i in range(n_nodes):
        lo, hi = start[i], start[i + 1]
        if hi <= lo:
            continue
        nc = node_counts[i]
        n_node = 0.0
        n_classes_seen = 0
        for c in range(ny):
            n_node += nc[c]
            if nc[c] > 0.0:
                n_classes_seen += 1
        if n_classes_seen <= 1 or n_node <= 0.0:
            continue                                         # pure: a leaf
        if prune:
            g0 = group[row[lo]]
            same = True
            for e in range(lo + 1, hi):
                if group[row[e]] != g0:
                    same = False
                    break
            if same:
                continue                                     # one row of codes: nothing to gain
        state[0] = node_key[i]
        if gini:
            s = 0.0
            for c in range(ny):
                s += nc[c] * nc[c]
            node_imp = n_node - s / n_node
        else:
            s = 0.0
            for c in range(ny):
                s += _xlogx(nc[c], xlx)
            node_imp = _xlogx(n_node, xlx) - s
        # the candidates
        n_cand = 0
        if not sklearn_sem and 4 * max_features <= p - level:
            # K distinct unused variables by rejection (p - level of them are unused; at
            # least 3/4 of the draws are accepted): no pass over the p variables
            while n_cand < max_features:
                v = _below(state, p)
                if _is_used(used, i, v):
                    continue
                fresh = True
                for q in range(n_cand):
                    if cand[q] == v:
                        fresh = False
                        break
                if fresh:
                    cand[n_cand] = v
                    n_cand += 1
        elif not sklearn_sem:
            m = 0
            for v in range(p):
                if not _is_used(used, i, v):
                    perm[m] = v
                    m += 1
            k = min(max_features, m)
            for j in range(k):
                r = j + _below(state, m - j)
                t = perm[j]
                perm[j] = perm[r]
                perm[r] = t
                cand[n_cand] = perm[j]
                n_cand += 1
        else:
            for v in range(p):
                perm[v] = v
            k = min(max_features, p)
            j = 0
            while j < p:
                if j >= k and n_cand > 0:
                    break                                    # K read, one of them not constant
                r = j + _below(state, p - j)
                t = perm[j]
                perm[j] = perm[r]
                perm[r] = t
                v = perm[j]
                if not _is_used(used, i, v) and not _is_constant(Xt[v], row, lo, hi):
                    cand[n_cand] = v
                    n_cand += 1
                j += 1
        if n_cand == 0:
            continue                                         # nothing to split on: a leaf
        # impurity decrease of each candidate, from the cells its entries touch
        best = -1.0
        for j in range(n_cand):
            col = Xt[cand[j]]
            vc = vcount[j]
            n_cells = 0
            n_vals = 0
            for e in range(lo, hi):
                r = row[e]
                x = col[r]
                we = w[e]
                ci = x * ny + y[r]
                if cell[ci] == 0.0:
                    touched_cells[n_cells] = ci
                    n_cells += 1
                cell[ci] += we
                if vtot[x] == 0.0:
                    touched_vals[n_vals] = x
                    n_vals += 1
                vtot[x] += we
                vc[x] += 1
            for q in range(n_vals):
                cand_vals[j, q] = touched_vals[q]
            cand_nvals[j] = n_vals
            child = 0.0
            if gini:
                for q in range(n_cells):
                    ci = touched_cells[q]
                    vsq[ci // ny] += cell[ci] * cell[ci]
                    cell[ci] = 0.0
                for q in range(n_vals):
                    x = touched_vals[q]
                    child += vtot[x] - vsq[x] / vtot[x]
                    vtot[x] = 0.0
                    vsq[x] = 0.0
            else:
                for q in range(n_cells):
                    ci = touched_cells[q]
                    child -= _xlogx(cell[ci], xlx)
                    cell[ci] = 0.0
                for q in range(n_vals):
                    x = touched_vals[q]
                    child += _xlogx(vtot[x], xlx)
                    vtot[x] = 0.0
            d = node_imp - child
            if d < 0.0:
                d = 0.0
            d /= n_node
            score[j] = d
            if d > best:
                best = d
        # uniform among the ties (reservoir sampling)
        n_tied = 0
        pick = 0
        for j in range(n_cand):
            if score[j] >= best - tie_tol:
                n_tied += 1
                if n_tied == 1 or _below(state, n_tied) == 0:
                    pick = j
        v = cand[pick]
        vc = vcount[pick]
        splittable[i] = True
        chosen[i] = v
        gain = n_node * best
        per_tree[node_tree[i], v] += gain
        by_degree[v, level] += gain
        if descend:   # the children, in value order, and their entries (a counting sort)
            col = Xt[v]
            at = pos
            c0 = n_child
            for x in range(n_levels[v]):
                if vc[x] > 0:
                    offset[x] = at
                    child_of[x] = n_child
                    start2[n_child] = at
                    tree2[n_child] = node_tree[i]
                    for q in range(nw):
                        used2[n_child, q] = used[i, q]
                    used2[n_child, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
                    for c in range(ny):
                        counts2[n_child, c] = 0.0
                    key[n_child] = i * cmax + x
                    key2[n_child] = _mix(node_key[i] + np.uint64(x + 1) * np.uint64(0xD1B54A32D192ED03))
                    at += vc[x]
                    n_child += 1
            for e in range(lo, hi):
                r = row[e]
                x = col[r]
                o = offset[x]
                row2[o] = r
                w2[o] = w[e]
                offset[x] = o + 1
                counts2[child_of[x], y[r]] += w[e]
            pos = at
        for j in range(n_cand):   # clear the candidates' value counts
            for q in range(cand_nvals[j]):
                vcount[j, cand_vals[j, q]] = 0
    start2[n_child] = pos
    return (splittable, chosen, row2[:pos], w2[:pos], start2[:n_child + 1],
            tree2[:n_child], used2[:n_child], counts2[:n_child], key[:n_child], key2[:n_child])
