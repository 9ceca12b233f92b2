"""Node statistics of every possible node of a multiway tree, computed once.

A node of a multiway tree grown on discrete inputs is a partial assignment
:math:`X_B = b` of the variables already split on its branch; it does not
depend on the order of those splits.  For every subset S (up to a size) and
every cell b of S this module computes the node's probability p(b), whether
it is pure, and for each candidate v not in S the impurity decrease
:math:`\\Delta i(v \\mid b)` and whether v is constant in the node.  The exact
recursion (:mod:`varimp_core.exact.recursion`) then only pushes probabilities through
this lattice, once per depth for every K at once.

Two interchangeable backends build it:

* dense: cells are all combinations of values (from the marginal tensors of
  :func:`~varimp_core.exact.information.subset_marginals`), cheap when
  :math:`|Y|\\prod_j (1+c_j)` is small (built-in problems);
* sparse: cells are the combinations present in the rows, grouped with
  mixed-radix keys, for uploaded tables with many levels.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from varimp_core.exact.information import MAX_SUBSET_FEATURES, subset_marginals, target_values
from varimp_core.data.table import DiscreteTable

__all__ = ["NodeStats", "build_lattice", "CRITERIA", "MAX_LATTICE_CELLS", "target_values"]

#: Impurities: Shannon entropy (bits), Gini index, and the variance of a numeric Y
#: (``"squared_error"``, Louppe's thesis section 6: Eqn 3 and Theorems 3-5 hold with
#: G(Y; X_m | B) = Var(Y | B) - Var(Y | B, X_m) in place of I(X_m; Y | B)).
CRITERIA = ("entropy", "gini", "squared_error")
#: Budget for the summed size of all node arrays (cells times candidates).
MAX_LATTICE_CELLS = 60_000_000


@dataclass
class NodeStats:
    """Statistics of the cells (nodes) of one subset S.

    Attributes
    ----------
    mask : int
    prob : ndarray of shape (n_cells,)
        p(b), probability of reaching the node.
    pure : ndarray of bool, shape (n_cells,)
        Output constant in the node (or empty node).
    candidates : list of int
        Variables not in S.
    delta : ndarray of shape (n_candidates, n_cells)
        :math:`\\Delta i(v \\mid b)`, impurity decrease of splitting the node on v.
    constant : ndarray of bool, shape (n_candidates, n_cells)
        v takes a single value in the node.
    child_parent : list of ndarray
        For each candidate v, the parent cell (in S) of every cell of S+{v}.
    """

    mask: int
    prob: np.ndarray
    pure: np.ndarray
    candidates: list
    delta: np.ndarray
    constant: np.ndarray
    child_parent: list


def _xlogx(a: np.ndarray) -> np.ndarray:
    out = np.zeros_like(a, dtype=float)
    pos = a > 0
    out[pos] = a[pos] * np.log2(a[pos])
    return out




def weighted_impurity(counts: np.ndarray, criterion: str,
                       values: np.ndarray | None = None) -> np.ndarray:
    """p(t) i(t) from class weights along the last axis (weights are probabilities).

    ``squared_error``: :math:`\\sum_c w_c y_c^2 - (\\sum_c w_c y_c)^2 / W`, i.e.
    :math:`p(t)\\,\\mathrm{Var}(Y \\mid t)` with ``values`` the :math:`y_c`; exactly 0
    in a node holding one value.
    """
    n = counts.sum(axis=-1)
    if criterion == "entropy":
        return _xlogx(n) - _xlogx(counts).sum(axis=-1)
    if criterion == "squared_error":
        s1 = counts @ values
        s2 = counts @ (values * values)
        out = np.zeros_like(n, dtype=float)
        pos = n > 0
        out[pos] = s2[pos] - s1[pos] ** 2 / n[pos]
        out[(counts > 0).sum(axis=-1) <= 1] = 0.0
        return np.maximum(out, 0.0)
    sq = (counts ** 2).sum(axis=-1)
    out = n.copy()
    pos = n > 0
    out[pos] -= sq[pos] / n[pos]
    return out


def _finish(mask, prob, node_imp, pure, cands, child_imps, child_nonempty, parents):
    n_cells = prob.shape[0]
    delta = np.zeros((len(cands), n_cells))
    constant = np.ones((len(cands), n_cells), dtype=bool)
    safe = np.where(prob > 0, prob, 1.0)
    for i, (g, ne, par) in enumerate(zip(child_imps, child_nonempty, parents)):
        gsum = np.bincount(par, weights=g, minlength=n_cells)
        delta[i] = np.maximum(node_imp - gsum, 0.0) / safe
        constant[i] = np.bincount(par, weights=ne.astype(float), minlength=n_cells) <= 1
    return NodeStats(mask, prob, pure, cands, delta, constant, parents)


def _parent_index(child_shape: tuple, pos: int) -> np.ndarray:
    """Flat parent cell of every flat cell of a C-ordered grid, dropping axis ``pos``."""
    lo = int(np.prod(child_shape[pos + 1:], dtype=np.int64))
    idx = np.arange(int(np.prod(child_shape, dtype=np.int64)), dtype=np.int64)
    return (idx // (child_shape[pos] * lo)) * lo + idx % lo


def _dense_lattice(table, criterion, depth, values=None):
    p = table.n_features
    marg = subset_marginals(table, max_size=depth)
    imp_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def cell_stats(mask):
        if mask not in imp_cache:
            t = marg[mask]
            counts = t.reshape(-1, t.shape[-1])
            imp_cache[mask] = (weighted_impurity(counts, criterion, values),
                               counts.sum(axis=-1) > 0)
        return imp_cache[mask]

    out = {}
    for mask, t in sorted(marg.items(), key=lambda kv: bin(kv[0]).count("1")):
        variables = [j for j in range(p) if mask >> j & 1]
        if len(variables) >= depth:
            continue
        counts = t.reshape(-1, t.shape[-1])
        node_imp, _ = cell_stats(mask)
        cands, imps, nonempty, parents = [], [], [], []
        for v in range(p):
            if mask >> v & 1:
                continue
            child = marg[mask | 1 << v]
            pos = sum(1 for j in variables if j < v)
            c_imp, c_ne = cell_stats(mask | 1 << v)
            cands.append(v)
            imps.append(c_imp)
            nonempty.append(c_ne)
            parents.append(_parent_index(child.shape[:-1], pos))
        imp_cache.pop(mask, None)
        out[mask] = _finish(mask, counts.sum(axis=-1), node_imp, (counts > 0).sum(axis=-1) <= 1,
                            cands, imps, nonempty, parents)
    return out


def _sparse_lattice(table, criterion, depth, values=None):
    p = table.n_features
    levels = table.n_levels
    if float(np.prod(levels.astype(float))) * table.n_classes >= 2.0 ** 62:
        raise ValueError("These inputs have too many combinations of levels for exact methods; "
                         "bin numeric columns into fewer bins.")
    strides = np.concatenate([[1], np.cumprod(levels[:-1])]).astype(np.int64)
    w = table.probabilities
    ny = table.n_classes
    group: dict[int, tuple[np.ndarray, int]] = {}

    def groups(mask):
        if mask not in group:
            key = np.zeros(table.n_rows, dtype=np.int64)
            for j in range(p):
                if mask >> j & 1:
                    key += table.X[:, j] * strides[j]
            uniq, inv = np.unique(key, return_inverse=True)
            group[mask] = (inv.ravel(), uniq.size)
        return group[mask]

    def class_counts(gid, n):
        return np.bincount(gid * ny + table.y, weights=w, minlength=n * ny).reshape(n, ny)

    if criterion == "squared_error":   # three moments per node, not |Y| class weights
        yv = values[table.y]

        def node_stats(gid, n):
            """(p(t) Var(Y|t), p(t), pure) of every group, from W, sum w y and sum w y^2."""
            s0 = np.bincount(gid, weights=w, minlength=n)
            s1 = np.bincount(gid, weights=w * yv, minlength=n)
            s2 = np.bincount(gid, weights=w * yv * yv, minlength=n)
            distinct = np.bincount(np.unique(gid * ny + table.y) // ny, minlength=n)
            imp = np.zeros(n)
            pos = s0 > 0
            imp[pos] = s2[pos] - s1[pos] ** 2 / s0[pos]
            pure = distinct <= 1
            imp[pure] = 0.0
            return np.maximum(imp, 0.0), s0, pure
    else:
        def node_stats(gid, n):
            counts = class_counts(gid, n)
            return (weighted_impurity(counts, criterion), counts.sum(axis=-1),
                    (counts > 0).sum(axis=-1) <= 1)

    stats: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def stats_of(mask):
        """node_stats of a subset, worked out once: a child of size s + 1 has s + 1 parents."""
        if mask not in stats:
            stats[mask] = node_stats(*groups(mask))
        return stats[mask]

    out = {}
    for size in range(depth):
        for combo in combinations(range(p), size):
            mask = sum(1 << j for j in combo)
            gid, n = groups(mask)
            node_imp, prob, pure = stats_of(mask)
            cands, imps, nonempty, parents = [], [], [], []
            for v in range(p):
                if mask >> v & 1:
                    continue
                cg, cn = groups(mask | 1 << v)
                par = np.zeros(cn, dtype=np.int64)
                par[cg] = gid
                child_imp, child_prob, _ = stats_of(mask | 1 << v)
                cands.append(v)
                imps.append(child_imp)
                # a group only rows of weight 0 reach is an empty child, as in the dense lattice
                nonempty.append(child_prob > 0)
                parents.append(par)
            out[mask] = _finish(mask, prob, node_imp, pure, cands, imps, nonempty, parents)
        for m in [m for m in group if bin(m).count("1") <= size]:
            del group[m]
            stats.pop(m, None)
    return out


def lattice_cost(table: DiscreteTable, depth: int) -> tuple[float, float]:
    """Estimated work of the dense and sparse backends (cells times candidates)."""
    from math import comb

    p = table.n_features
    dense = float(table.n_classes) * float(np.prod(1.0 + table.n_levels)) * p
    sparse = float(sum(comb(p, k) * (p - k) for k in range(min(depth, p)))) * table.n_rows
    return dense, sparse


def build_lattice(table: DiscreteTable, *, criterion: str = "entropy",
                  max_depth: int | None = None,
                  y_values: np.ndarray | None = None) -> dict[int, NodeStats]:
    """Statistics of every splittable node, keyed by the bit mask of its subset.

    Parameters
    ----------
    table : DiscreteTable
    criterion : {"entropy", "gini", "squared_error"}
    max_depth : int, optional
        Only subsets of size < max_depth are splittable.
    y_values : ndarray of shape (n_classes,), optional
        ``squared_error`` only: the number each output code stands for (default
        :func:`target_values`); each distinct value of Y is a class, nothing is binned.

    Raises
    ------
    ValueError
        Unknown criterion, too many inputs, or a lattice over the work budget.
    """
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}.")
    p = table.n_features
    if p > MAX_SUBSET_FEATURES:
        raise ValueError(
            f"The exact method accepts at most {MAX_SUBSET_FEATURES} variables; this table has "
            f"{p}. Use the sampled forest method, or select fewer variables."
        )
    if table.n_rows == 0 or table.total_weight <= 0:
        raise ValueError("The table is empty: it has no rows with positive weight.")
    depth = p if max_depth is None else min(int(max_depth), p)
    values = None
    if criterion == "squared_error":
        values = target_values(table) if y_values is None else np.asarray(y_values, float)
    dense, sparse = lattice_cost(table, depth)
    if min(dense, sparse) > MAX_LATTICE_CELLS:
        raise ValueError(
            f"The exact method would visit about {min(dense, sparse):.2g} node statistics for "
            f"these {p} variables (limit {MAX_LATTICE_CELLS:.0e}); lower the depth, use fewer "
            "variables or bins, or the sampled forest method."
        )
    if dense <= sparse:
        return _dense_lattice(table, criterion, depth, values)
    return _sparse_lattice(table, criterion, depth, values)
