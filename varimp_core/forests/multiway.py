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

import contextlib

import joblib

import numpy as np

from varimp_core.exact.information import joint_information
from varimp_core.exact.lattice import CRITERIA
from varimp_core.result import ImportanceResult
from varimp_core.exact.splitting import TIE_TOLERANCE, validate_max_features, validate_semantics
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import validate_max_depth

__all__ = ["grow_forest", "TREES_PER_CHUNK", "trees_per_chunk"]

#: The most trees grown together (a chunk).  A chunk's size depends on the work only
#: (:func:`trees_per_chunk`), never on ``n_jobs`` nor memory, so results do not either.
TREES_PER_CHUNK = 64

#: Work of a chunk, in entry-levels (distinct rows x levels x trees): enough that the
#: per-level Python work of a chunk is a few percent of its kernel time, small enough
#: that a job of a second or more has a dozen chunks or more to share between cores.
CHUNK_WORK = 1 << 21

#: Whole counts up to this total are grown as counts, their entropies read from a table
#: of k log2 k (8 bytes a count) instead of a logarithm per cell.
MAX_COUNT_TABLE = 1 << 22


def _row_groups(table) -> np.ndarray:
    """An id per row, equal for rows of equal codes (computed once per table)."""
    cached = _GROUPS.get(id(table))
    if cached is not None and cached[0] is table:
        return cached[1]
    _, inverse = np.unique(table.X, axis=0, return_inverse=True)
    groups = np.ascontiguousarray(inverse.ravel(), dtype=np.int64)
    _GROUPS.clear()                      # one table at a time: no growth, no stale ids
    _GROUPS[id(table)] = (table, groups)
    return groups


_GROUPS: dict = {}



@contextlib.contextmanager
def _signal_exceptions_as_themselves():
    """Re-raise an exception a signal handler raised while numba dispatched a kernel call.

    A handler's exception (a job's time-limit alarm, Ctrl-C) that lands while numba's
    dispatcher is in Python code comes out as ``SystemError: CPUDispatcher(...) returned a
    result with an exception set``, the handler's exception only its cause; callers that
    turn a time limit into a sentence would see an unknown error instead.
    """
    try:
        yield
    except SystemError as exc:
        cause = exc.__cause__
        while isinstance(cause, SystemError):
            cause = cause.__cause__
        if cause is None:
            raise
        raise cause.with_traceback(cause.__traceback__) from None


def _grow_chunk(table, weights, rng, max_features, depth, k_semantics, criterion, router=None,
                total_count=0):
    """Grow ``weights.shape[0]`` trees; return (per_tree (T, p), by_degree (p, p) summed).

    ``router`` (:class:`varimp_core.local.multiway._Router`) follows rows to
    assess down the trees as they grow; it draws no random numbers, so the
    trees are the same with or without it.  ``total_count`` > 0: the weights are whole
    counts summing to it in each tree (entropies read from a table of k log2 k), and the
    importances are divided by it.
    """
    from varimp_core.forests import multiway_kernel as kern   # late: numba loads on first use

    n_trees, _ = weights.shape
    p = table.n_features
    ny = table.n_classes
    cmax = int(table.n_levels.max())
    per_tree = np.zeros((n_trees, p))
    by_degree = np.zeros((p, p))
    tree_of_entry, row = np.nonzero(weights > 0)   # tree-major: entries grouped by root
    w = np.ascontiguousarray(weights[tree_of_entry, row], dtype=float)
    row = row.astype(np.int32)
    start = np.searchsorted(tree_of_entry, np.arange(n_trees + 1)).astype(np.int64)
    node_tree = np.arange(n_trees, dtype=np.int64)   # node -> tree (roots are the trees)
    used = np.zeros((n_trees, (p + 63) // 64), dtype=np.uint64)   # a bit per variable
    Xt = np.ascontiguousarray(table.X.T, dtype=np.int32)   # a column per variable
    y = np.ascontiguousarray(table.y, dtype=np.int32)
    n_levels = np.ascontiguousarray(table.n_levels, dtype=np.int64)
    node_counts = np.bincount(tree_of_entry * ny + y[row], weights=w,
                              minlength=n_trees * ny).reshape(n_trees, ny)
    node_key = kern.root_keys(rng, n_trees)
    # id3 splits a node of one repeated row of codes on constant variables, gaining nothing:
    # without a router to follow rows through those splits, such a node is a leaf at once
    group = np.zeros(0, dtype=np.int64) if router is not None or k_semantics != "id3" \
        else _row_groups(table)
    xlx = kern.xlogx_table(total_count) if total_count and criterion == "entropy" \
        else np.zeros(0)
    sklearn_sem = k_semantics != "id3"
    gini = criterion == "gini"
    if router is not None:
        router.start(n_trees)
    for level in range(depth):
        n_nodes = node_tree.shape[0]
        if n_nodes == 0 or row.size == 0:
            break
        last = level + 1 >= depth
        with np.errstate(over="ignore"), _signal_exceptions_as_themselves():
            # (the uncompiled kernel's 64-bit hashes wrap, as meant)
            (splittable, chosen, row2, w2, start2, tree2, used2, counts2, uniq, keys2) = \
                kern.grow_level(Xt, y, n_levels, row, w, start, node_tree, used, node_counts,
                                level, not last, max_features, sklearn_sem, gini, ny, cmax,
                                TIE_TOLERANCE, xlx, node_key, group, per_tree, by_degree)
        if router is not None:
            router.leaves(splittable, node_counts)
        if last:
            if router is not None:   # class weights of each node's children: (nodes, 1, cmax, ny)
                node = np.repeat(np.arange(n_nodes), np.diff(start))
                flat = (node * cmax + Xt[chosen[node], row]) * ny + y[row]
                counts = np.bincount(flat, weights=w, minlength=n_nodes * cmax * ny
                                     ).reshape(n_nodes, 1, cmax, ny)
                router.last(chosen, np.zeros(n_nodes, dtype=np.int64), counts, node_counts)
            break
        if router is not None:
            router.descend(chosen, uniq, cmax, node_counts)
        row, w, start, node_tree, used, node_counts = row2, w2, start2, tree2, used2, counts2
        node_key = keys2
    if total_count:
        per_tree /= total_count
        by_degree /= total_count
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
        every core; None or 1 this process).  Chunk c of :func:`trees_per_chunk` trees
        (at most 64, from the work alone) draws from the c-th child of
        ``SeedSequence(random_state)``, so the result is the same
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
    total = 0   # whole counts (a sample's, or the bootstrap's) are grown as they are
    if n_samples is not None:  # the bootstrap
        weights = rng.multinomial(n_samples, probs, size=n_trees)
        if n_samples <= MAX_COUNT_TABLE:
            total, weights = n_samples, weights.astype(float)
        else:
            weights = weights / n_samples
    else:
        wt = np.asarray(table.weight, dtype=float)
        if not table.exact and table.total_weight <= MAX_COUNT_TABLE \
                and np.array_equal(wt, np.round(wt)):
            total = int(round(table.total_weight))
            weights = np.broadcast_to(wt, (n_trees, table.n_rows))
        else:
            weights = np.broadcast_to(probs, (n_trees, table.n_rows))
    own = None if router is None else router.fresh()
    per_tree, by_degree = _grow_chunk(table, weights, rng, k, depth, k_semantics, criterion, own,
                                      total_count=total)
    return per_tree, by_degree, None if own is None else own.gathered()


def trees_per_chunk(n_rows: int, depth: int) -> int:
    """Trees of a chunk: about :data:`CHUNK_WORK` entry-levels, 1 to :data:`TREES_PER_CHUNK`.

    A tree's work is its distinct rows times its levels; a tree grown to purity has about
    log2(rows) + 2 levels or ``depth``, whichever is fewer.  From the table and the depth
    only, so the forest is the same for every ``n_jobs``.
    """
    levels = max(1, min(int(depth), int(np.ceil(np.log2(max(n_rows, 2)))) + 2))
    return int(min(TREES_PER_CHUNK, max(1, CHUNK_WORK // (max(n_rows, 1) * levels))))


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
    size = trees_per_chunk(table.n_rows, depth)
    seeds = np.random.SeedSequence(random_state).spawn((n_estimators + size - 1) // size)
    bounds = [(c * size, min((c + 1) * size, n_estimators)) for c in range(len(seeds))]
    args = (probs, n_samples if bootstrap else None, k, depth, k_semantics, criterion)
    workers = 1 if n_jobs is None else \
        max(1, min(int(joblib.effective_n_jobs(n_jobs)), len(seeds)))
    if workers == 1:
        parts = (_seeded_chunk(table, seed, hi - lo, *args, router=router)
                 for seed, (lo, hi) in zip(seeds, bounds))
    else:  # threads: the kernels release the GIL, and nothing is copied nor imported again
        parts = joblib.Parallel(n_jobs=workers, backend="threading", return_as="generator")(
            joblib.delayed(_seeded_chunk)(table, seed, hi - lo, *args, router=router)
            for seed, (lo, hi) in zip(seeds, bounds))
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
