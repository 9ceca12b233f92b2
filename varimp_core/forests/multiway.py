"""Forests of randomized multiway trees on discrete data, grown on weighted rows.

Each split on a discrete variable has one branch per value, and a variable is
used at most once per branch -- the trees of Louppe et al. (2013), section 3.
Trees are grown on the distinct rows of a :class:`DiscreteTable` with weights
(bootstrap draws multinomial counts), and all trees of a chunk are grown
*together*, level by level: one ``bincount`` per level gives the class counts
of every (node, variable, value), so the cost is a handful of numpy passes per
level instead of Python work per node.

The split law is the one of :mod:`varimp_core.exact.splitting` (K candidates, best
impurity decrease, uniform tie-break; ``id3`` or ``sklearn`` semantics), so a
large forest converges to :func:`varimp_core.exact.recursion.exact_importances`.
"""

from __future__ import annotations

import joblib
import numpy as np

from varimp_core.exact.information import joint_information
from varimp_core.exact.lattice import CRITERIA
from varimp_core.result import ImportanceResult
from varimp_core.exact.splitting import TIE_TOLERANCE, validate_max_features, validate_semantics
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import validate_max_depth

__all__ = ["grow_forest", "TREES_PER_CHUNK"]

#: Trees grown together; fixed so that results do not depend on memory.
TREES_PER_CHUNK = 64


def _xlogx(a):
    out = np.zeros_like(a)
    np.log2(a, out=out, where=a > 0)     # no boolean gather/scatter: most cells are 0
    out *= a
    return out


def _wimp(counts, criterion):
    """p(t) i(t) from class weights on the last axis."""
    n = counts.sum(axis=-1)
    if criterion == "entropy":
        return _xlogx(n) - _xlogx(counts).sum(axis=-1)
    sq = (counts ** 2).sum(axis=-1)
    return n - np.divide(sq, n, out=np.zeros_like(n), where=n > 0)


def _pair_counts(node, xcol, ye, w, pair_slot, width, cmax, ny, n_nodes):
    """Class weights of every (node, candidate slot, value): (n_nodes, width, cmax, ny).

    Arguments broadcast together (entries x candidate slots).
    """
    flat = ((node * width + pair_slot) * cmax + xcol) * ny + ye
    w = np.broadcast_to(w, flat.shape)
    # float even when no entry has a candidate (bincount of nothing is int64)
    return np.bincount(flat.ravel(), weights=w.ravel(), minlength=n_nodes * width * cmax * ny).astype(
        float, copy=False).reshape(n_nodes, width, cmax, ny)


def _is_constant(node, row, X, nodes_vars, cmax, n_nodes):
    """For each node and its variable in ``nodes_vars`` (-1: none), is it constant there?"""
    v = nodes_vars[node]
    ok = v >= 0
    flat = node[ok] * cmax + X[row[ok], v[ok]]
    present = np.bincount(flat, minlength=n_nodes * cmax).reshape(n_nodes, cmax) > 0
    return present.sum(axis=1) <= 1


def _draw_sklearn(keys, used, node, row, X, max_features, cmax):
    """scikit-learn's reading rule: candidates (n_nodes, width) var ids, -1 padded.

    Features are read in the random order of ``keys``; used ones are constant;
    reading stops once K were read and one of them was non-constant.  Constancy
    is only computed for features actually read.
    """
    n_nodes, p = keys.shape
    order = np.argsort(keys, axis=1)
    k = min(max_features, p)
    const = np.zeros((n_nodes, p), dtype=bool)   # in reading order
    for j in range(k):
        var = order[:, j]
        c = used[np.arange(n_nodes), var].copy()
        todo = np.where(~c, var, -1)
        c |= _is_constant(node, row, X, todo, cmax, n_nodes) & (todo >= 0)
        const[:, j] = c
    n_read = np.full(n_nodes, k)
    open_ = const[:, :k].all(axis=1)
    j = k
    while open_.any() and j < p:
        var = np.where(open_, order[:, j], -1)
        c = np.ones(n_nodes, dtype=bool)
        live = open_ & ~used[np.arange(n_nodes), np.maximum(var, 0)]
        todo = np.where(live, var, -1)
        c[live] = _is_constant(node, row, X, todo, cmax, n_nodes)[live]
        const[:, j] = c
        n_read[open_] = j + 1
        open_ &= c
        j += 1
    read = np.arange(p)[None, :] < n_read[:, None]
    chosen = read & ~const
    width = max(int(chosen.sum(axis=1).max()), 1)
    cand = np.full((n_nodes, width), -1)
    rows, cols = np.nonzero(chosen)            # row-major: grouped by node
    before = np.concatenate([[0], np.cumsum(chosen.sum(axis=1))[:-1]])
    slot = np.arange(rows.size) - before[rows]  # position among the node's candidates
    cand[rows, slot] = order[rows, cols]
    return cand


def _grow_chunk(table, weights, rng, max_features, depth, k_semantics, criterion, router=None):
    """Grow ``weights.shape[0]`` trees; return (per_tree (T, p), by_degree (p, p) summed).

    ``router`` (:class:`varimp_core.local.multiway._Router`) follows rows to
    assess down the trees as they grow; it draws no random numbers, so the
    trees are the same with or without it.
    """
    n_trees, _ = weights.shape
    p = table.n_features
    ny = table.n_classes
    cmax = int(table.n_levels.max())
    per_tree = np.zeros((n_trees, p))
    by_degree = np.zeros((p, p))
    tree_of_entry, row = np.nonzero(weights > 0)
    w = weights[tree_of_entry, row]
    node = tree_of_entry.copy()           # entry -> node id (roots are the trees)
    node_tree = np.arange(n_trees)        # node -> tree
    used = np.zeros((n_trees, p), dtype=bool)
    X, y_all = table.X, table.y
    if router is not None:
        router.start(n_trees)
    for level in range(depth):
        n_nodes = node_tree.shape[0]
        if n_nodes == 0 or node.size == 0:
            break
        ye = y_all[row]
        node_counts = np.bincount(node * ny + ye, weights=w,
                                  minlength=n_nodes * ny).reshape(n_nodes, ny)
        n_node = node_counts.sum(axis=1)
        pure = (node_counts > 0).sum(axis=1) <= 1
        node_imp = _wimp(node_counts, criterion)
        keys = rng.random((n_nodes, p))
        if k_semantics == "id3":
            keys[used] = 2.0
            k_eff = min(max_features, p - level)
            cand = np.argpartition(keys, k_eff - 1, axis=1)[:, :k_eff] if k_eff < p \
                else np.argsort(keys, axis=1)
        else:
            cand = _draw_sklearn(keys, used, node, row, X, max_features, cmax)
        width = cand.shape[1]
        valid = cand >= 0
        splittable = ~pure & valid.any(axis=1)
        # class weights of the candidate splits only: cost entries x K, not entries x p
        # (entries, width) arrays by broadcasting; a padded slot (-1) reads column -1
        # with weight 0, which adds exactly nothing
        vars_e = cand[node]
        w_e = np.where(vars_e >= 0, w[:, None], 0.0)
        counts = _pair_counts(node[:, None], X[row[:, None], vars_e], ye[:, None], w_e,
                              np.arange(width)[None, :], width, cmax, ny, n_nodes)
        child_imp = _wimp(counts, criterion).sum(axis=2)          # (nodes, width)
        delta = np.maximum(node_imp[:, None] - child_imp, 0.0) / \
            np.where(n_node > 0, n_node, 1)[:, None]
        score = np.where(valid, delta, -np.inf)
        best = score.max(axis=1)
        tied = valid & (score >= best[:, None] - TIE_TOLERANCE)
        tie_keys = np.where(tied, rng.random((n_nodes, width)), -1.0)
        slot = np.argmax(tie_keys, axis=1)
        chosen = cand[np.arange(n_nodes), slot]
        split_nodes = np.nonzero(splittable)[0]
        gain = n_node[split_nodes] * best[split_nodes]
        np.add.at(per_tree, (node_tree[split_nodes], chosen[split_nodes]), gain)
        np.add.at(by_degree[:, level], chosen[split_nodes], gain)
        if router is not None:
            router.leaves(splittable, node_counts)
        if level + 1 >= depth:
            if router is not None:
                router.last(chosen, slot, counts, node_counts)
            break
        keep = splittable[node]
        node, row, w = node[keep], row[keep], w[keep]
        x_split = X[row, chosen[node]]
        uniq, new_node = np.unique(node * cmax + x_split, return_inverse=True)
        if router is not None:
            router.descend(chosen, uniq, cmax, node_counts)
        parent = uniq // cmax
        node_tree = node_tree[parent]
        used = used[parent].copy()
        used[np.arange(parent.size), chosen[parent]] = True
        node = new_node.ravel()
    return per_tree, by_degree


def grow_forest(table: DiscreteTable, *, n_estimators: int = 100, max_features: int = 1,
                max_depth=None, bootstrap: bool = False, k_semantics: str = "id3",
                criterion: str = "entropy", random_state=0, n_samples: int | None = None,
                problem: str | None = None, progress=None, n_jobs: int | None = None
                ) -> ImportanceResult:
    """Grow a forest of randomized multiway trees and return its MDI importances.

    Parameters
    ----------
    table : DiscreteTable
        Distinct rows with weights: counts of a sample, or the probabilities
        of an exact table (for LED, the paper's 10-row data set).
    n_estimators : int, default=100
        Number of trees T.
    max_features : int, default=1
        K; 1 grows totally randomized trees.
    max_depth : int, optional
        Depth limit D; None grows trees until nodes are pure or no variable remains.
    bootstrap : bool, default=False
        Draw each tree's rows as multinomial counts of size ``n_samples``
        (default: the table's total count, or its number of rows for an exact table).
    k_semantics : {"id3", "sklearn"}, default="id3"
    criterion : {"entropy", "gini"}, default="entropy"
    random_state : int, default=0
        Seed; results do not depend on anything else.
    n_samples : int, optional
        Bootstrap sample size.
    problem : str, optional
    progress : callable, optional
        Called as ``progress(done, total)`` after each chunk of trees.
    n_jobs : int, optional
        Processes growing chunks of trees side by side (joblib's convention: -1
        every core; None or 1 this process).  Chunk c of 64 trees draws from the
        c-th child of ``SeedSequence(random_state)``, so the result is the same
        for every ``n_jobs``.

    Returns
    -------
    ImportanceResult
        ``importances`` is the mean over trees of :math:`\\sum_t p(t)\\Delta i(s_t, t)`
        (unnormalised MDI, bits for entropy); ``per_tree`` has shape
        (n_estimators, p); ``by_degree[m, k]`` is the part of node depth k.
    """
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")
    return grow_forest_routed(table, None, n_estimators=n_estimators, max_features=max_features,
                              max_depth=max_depth, bootstrap=bootstrap, k_semantics=k_semantics,
                              criterion=criterion, random_state=random_state,
                              n_samples=n_samples, problem=problem, progress=progress,
                              n_jobs=n_jobs)


def _seeded_chunk(table, seed, n_trees, probs, n_samples, k, depth, k_semantics, criterion,
                  router=None):
    """Per-tree importances and depth profile of ``n_trees`` trees drawn from ``seed``, and
    what a fresh copy of ``router`` (if any) gathered from them (else None)."""
    rng = np.random.default_rng(seed)
    if n_samples is not None:  # the bootstrap
        weights = rng.multinomial(n_samples, probs, size=n_trees) / n_samples
    else:
        weights = np.broadcast_to(probs, (n_trees, table.n_rows))
    own = None if router is None else router.fresh()
    per_tree, by_degree = _grow_chunk(table, weights, rng, k, depth, k_semantics, criterion, own)
    return per_tree, by_degree, None if own is None else own.gathered()


def _seeded_chunks(table, seeds, sizes, *args, router=None) -> list:
    """:func:`_seeded_chunk` of each (seed, size), in order (one task of a worker process)."""
    return [_seeded_chunk(table, seed, n, *args, router=router) for seed, n in zip(seeds, sizes)]


def grow_forest_routed(table, router, *, n_estimators, max_features, max_depth, bootstrap,
                       k_semantics, criterion, random_state, n_samples=None, problem=None,
                       progress=None, n_jobs=None) -> ImportanceResult:
    """:func:`grow_forest`, with ``router`` (or None) following rows down the trees.

    Each chunk of trees is routed by a fresh copy of ``router`` (``router.fresh()``, in
    whichever process grows it); what the copies gathered is added to ``router`` in chunk
    order (``router.add``), so the sums are the same for every ``n_jobs``.
    """
    if table.n_rows == 0 or table.total_weight <= 0:
        raise ValueError("The table is empty: it has no rows with positive weight.")
    p = table.n_features
    k = validate_max_features(max_features, p)
    depth = validate_max_depth(max_depth, p)
    validate_semantics(k_semantics)
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}.")
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, (int, np.integer)) \
            or n_estimators < 1:
        raise ValueError(f"n_estimators must be a positive whole number, got {n_estimators!r}.")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer))
                               or n_jobs == 0):
        raise ValueError(f"n_jobs must be a whole number other than 0 (-1: every core) or None, "
                         f"got {n_jobs!r}.")
    probs = table.probabilities
    if bootstrap:
        if n_samples is None:
            n_samples = table.n_rows if table.exact else int(round(table.total_weight))
        if isinstance(n_samples, bool) or int(n_samples) < 1:
            raise ValueError(f"n_samples for the bootstrap must be a positive whole number, got {n_samples!r}.")
        n_samples = int(n_samples)
    seeds = np.random.SeedSequence(random_state).spawn(
        (n_estimators + TREES_PER_CHUNK - 1) // TREES_PER_CHUNK)
    bounds = [(c * TREES_PER_CHUNK, min((c + 1) * TREES_PER_CHUNK, n_estimators))
              for c in range(len(seeds))]
    args = (probs, n_samples if bootstrap else None, k, depth, k_semantics, criterion)
    workers = 1 if n_jobs is None else \
        max(1, min(int(joblib.effective_n_jobs(n_jobs)), len(seeds)))
    if workers == 1:
        parts = (_seeded_chunk(table, seed, hi - lo, *args, router=router)
                 for seed, (lo, hi) in zip(seeds, bounds))
    else:  # a few tasks per worker: each sends the table once and grows several chunks
        groups = np.array_split(np.arange(len(seeds)), min(len(seeds), 2 * workers))
        batches = joblib.Parallel(n_jobs=workers, return_as="generator")(
            joblib.delayed(_seeded_chunks)(table, [seeds[c] for c in g],
                                           [bounds[c][1] - bounds[c][0] for c in g], *args,
                                           router=router)
            for g in groups)
        parts = (part for batch in batches for part in batch)
    per_tree = np.zeros((n_estimators, p))
    by_degree = np.zeros((p, p))
    for (lo, hi), (pt, bd, gathered) in zip(bounds, parts):
        per_tree[lo:hi] = pt
        by_degree += bd
        if router is not None:
            router.add(gathered)
        if progress is not None:
            progress(hi, n_estimators)
    by_degree /= n_estimators
    return ImportanceResult(
        variables=table.variables,
        importances=per_tree.mean(axis=0),
        by_degree=by_degree,
        method="forest",
        parameters={"n_estimators": int(n_estimators), "max_features": k, "max_depth": max_depth,
                    "bootstrap": bool(bootstrap), "k_semantics": k_semantics,
                    "criterion": criterion, "random_state": random_state,
                    "n_samples": n_samples},
        problem=problem,
        information=joint_information(table) if criterion == "entropy" else None,
        per_tree=per_tree,
        units="bits" if criterion == "entropy" else "gini",
        exact=False,
    )
