"""Per-tree kernels of the out-of-bag measures, vectorised over samples and nodes.

Every function here works on one fitted scikit-learn tree and clean arrays
(validated by :mod:`varimp_core.measures.inputs`); the loop over trees lives in
:mod:`varimp_core.measures.mdi_oob`.  Only public scikit-learn APIs are used: the
``tree_`` arrays, ``decision_path`` and the forest's ``estimators_samples_``.

Notation (Li et al. 2019, section 3): for a split node t with children
:math:`t_L, t_R`, :math:`\\mu(t)` is the node value (mean response; the class
probability vector for classification) and :math:`v(t)` the split variable.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

_CHUNK_CELLS = 2_000_000   # largest (permuted rows x features) block traversed at once


def in_bag_counts(samples: list[np.ndarray], n_rows: int) -> np.ndarray:
    """Bootstrap multiplicities, shape (n_trees, n_rows), from ``estimators_samples_``."""
    return np.vstack([np.bincount(s, minlength=n_rows) for s in samples]).astype(float)


def node_values(tree_, classification: bool) -> np.ndarray:
    """:math:`\\mu(t)` for every node, shape (n_nodes, K): means or class probabilities."""
    val = np.asarray(tree_.value[:, 0, :], dtype=float)
    if classification:
        total = val.sum(axis=1, keepdims=True)
        val = val / np.where(total > 0, total, 1.0)
    return val


def splits(tree_):
    """Internal nodes and their children: ``(t, t_L, t_R, v(t))``."""
    t = np.flatnonzero(tree_.children_left >= 0)
    return t, tree_.children_left[t], tree_.children_right[t], tree_.feature[t].astype(np.intp)


def node_sums(tree, X32: np.ndarray, rows: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """:math:`S(t) = \\sum_{i \\in rows,\\, x_i \\in R_t} s_i` for every node t.

    ``stats`` has shape (len(rows), s), already multiplied by the row weights.
    One sparse product with the decision-path indicator (n_rows x n_nodes).
    """
    if rows.size == 0:
        return np.zeros((tree.tree_.node_count, stats.shape[1]))
    path = tree.decision_path(X32[rows], check_input=False)
    return np.asarray(path.T @ stats)


def tree_mdi_oob(tree, X32, Y, weights, n_features, classification) -> np.ndarray:
    """One tree's :math:`\\frac{1}{W}\\sum_i w_i \\langle f_{T,k}(x_i), y_i \\rangle` for all k.

    Grouping the sum by node: every row reaching a split node t goes to one
    child, so

    .. math::

        \\sum_i w_i \\langle f_{T,k}(x_i), y_i\\rangle = \\sum_{t:\\,v(t)=k}
        \\langle \\mu(t_L) - \\mu(t), S(t_L)\\rangle + \\langle \\mu(t_R) - \\mu(t), S(t_R)\\rangle,

    with :math:`S(t) = \\sum_{x_i \\in R_t} w_i y_i`.
    """
    rows = np.flatnonzero(weights > 0)
    S = node_sums(tree, X32, rows, Y[rows] * weights[rows, None])
    val = node_values(tree.tree_, classification)
    t, left, right, feat = splits(tree.tree_)
    gain = (np.einsum("ij,ij->i", val[left] - val[t], S[left])
            + np.einsum("ij,ij->i", val[right] - val[t], S[right]))
    return np.bincount(feat, weights=gain, minlength=n_features) / weights.sum()


def _log_gain(parent: np.ndarray, child: np.ndarray, S: np.ndarray) -> np.ndarray:
    """:math:`\\sum_c S_c (\\log_2 \\mu_c(t_{child}) - \\log_2 \\mu_c(t))` per split, in bits.

    A class with no weighted row (:math:`S_c = 0`) adds 0.  A class absent from
    the parent's in-bag rows is absent from the child's too: the split changes
    nothing for it and adds 0.  A class present in the parent, absent from the
    child and carried by a row that goes there (an out-of-bag row; never an
    in-bag one) adds :math:`-\\infty`.
    """
    present = parent > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.log2(np.where(child > 0, child, 1.0)) - np.log2(np.where(present, parent, 1.0))
    diff = np.where(present & (child <= 0), -np.inf, np.where(present, diff, 0.0))
    with np.errstate(invalid="ignore"):
        terms = np.where(S > 0, S * diff, 0.0)
    return terms.sum(axis=1)


def tree_mdi_oob_log(tree, X32, Y, weights, n_features) -> np.ndarray:
    """One classification tree's MDI-oob in the entropy impurity (bits): the log score.

    The entropy analogue of :func:`tree_mdi_oob`, with :math:`\\log_2 \\mu` in
    place of :math:`\\mu`:

    .. math::

        \\frac{1}{W}\\sum_i w_i \\langle g_{T,k}(x_i), \\tilde y_i \\rangle,\\qquad
        g_{T,k}(x) = \\sum_{t:\\,v(t)=k,\\, x \\in R_t}
        \\log_2 \\mu(\\mathrm{child}_x(t)) - \\log_2 \\mu(t),

    grouped by node as :math:`\\sum_{t:\\,v(t)=k}\\langle \\log_2\\mu(t_L) - \\log_2\\mu(t),
    S(t_L)\\rangle + \\langle \\log_2\\mu(t_R) - \\log_2\\mu(t), S(t_R)\\rangle`.  On the
    in-bag rows it is the tree's entropy MDI exactly, since
    :math:`N(t)\\,H(t) = -\\sum_{x_i \\in R_t} \\log_2 \\mu_{y_i}(t)` (the entropy form of
    Prop. 1 of Li et al. 2019).  On out-of-bag rows a row whose class has
    in-bag probability 0 in a node it reaches makes the value
    :math:`-\\infty` (see :func:`_log_gain`).
    """
    rows = np.flatnonzero(weights > 0)
    S = node_sums(tree, X32, rows, Y[rows] * weights[rows, None])
    val = node_values(tree.tree_, True)
    t, left, right, feat = splits(tree.tree_)
    gain = _log_gain(val[t], val[left], S[left]) + _log_gain(val[t], val[right], S[right])
    return np.bincount(feat, weights=gain, minlength=n_features) / weights.sum()


def _weighted_impurity(S: np.ndarray, kind: str) -> np.ndarray:
    """:math:`N(t)\\, i(t)` from the node sums ``[N, ...]`` (0 for an empty node)."""
    n = S[:, 0]
    safe = np.where(n > 0, n, 1.0)
    if kind == "variance":                     # sum y^2 - (sum y)^2 / N
        out = S[:, 2] - S[:, 1] ** 2 / safe
    elif kind == "gini":                       # N - sum_d S_d^2 / N
        out = n - (S[:, 1:] ** 2).sum(axis=1) / safe
    else:                                      # entropy, bits: N log2 N - sum_d S_d log2 S_d
        counts = S[:, 1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(counts > 0, counts * np.log2(np.where(counts > 0, counts, 1.0)), 0.0)
            out = np.where(n > 0, n * np.log2(safe), 0.0) - terms.sum(axis=1)
    return np.where(n > 0, out, 0.0)


def tree_naive_oob(tree, X32, Y, weights, n_features, impurity) -> np.ndarray:
    """One tree's impurity decreases with every node's impurity recomputed on weighted rows.

    .. math::

        \\frac{1}{N(t_0)} \\sum_{t:\\,v(t)=k} N(t)\\,i(t) - N(t_L)\\,i(t_L) - N(t_R)\\,i(t_R)

    where :math:`N` and :math:`i` count only the rows with ``weights > 0``
    (weighted).  A split whose child receives no row contributes 0.
    """
    rows = np.flatnonzero(weights > 0)
    w = weights[rows, None]
    if impurity == "variance":
        stats = np.hstack([w, w * Y[rows], w * Y[rows] ** 2])
    else:
        stats = np.hstack([w, w * Y[rows]])
    S = node_sums(tree, X32, rows, stats)
    ni = _weighted_impurity(S, impurity)
    t, left, right, feat = splits(tree.tree_)
    gain = ni[t] - ni[left] - ni[right]
    return np.bincount(feat, weights=gain, minlength=n_features) / weights.sum()


def traverse(tree_, X: np.ndarray, features=None, perms=None) -> np.ndarray:
    """Leaf reached by each row, optionally with one column permuted per block.

    Parameters
    ----------
    tree_ : sklearn.tree._tree.Tree
    X : ndarray of shape (m, p), float32
    features : ndarray of shape (q,) or None
        Block b reads column ``features[b]`` from row ``perms[b, i]`` instead of row i.
    perms : ndarray of shape (q, m) or None

    Returns
    -------
    leaves : ndarray of shape (q, m) (q = 1 without permutation)

    Notes
    -----
    Level-synchronous descent (one vectorised step per depth); the test
    ``x <= threshold`` goes left, as in scikit-learn's ``apply``.
    """
    m = X.shape[0]
    q = 1 if features is None else len(features)
    left, right, feature, thr = (tree_.children_left, tree_.children_right,
                                 tree_.feature.astype(np.intp), tree_.threshold)
    node = np.zeros(q * m, dtype=np.intp)
    row = np.tile(np.arange(m), q)
    if features is not None:
        block_feature = np.repeat(np.asarray(features, dtype=np.intp), m)
        perm_row = np.asarray(perms, dtype=np.intp).ravel()
    active = np.arange(q * m)
    for _ in range(int(tree_.max_depth)):
        nd = node[active]
        keep = left[nd] >= 0
        active, nd = active[keep], nd[keep]
        if active.size == 0:
            break
        f = feature[nd]
        r = row[active]
        if features is not None:
            r = np.where(f == block_feature[active], perm_row[active], r)
        go_left = X[r, f] <= thr[nd]
        node[active] = np.where(go_left, left[nd], right[nd])
    return node.reshape(q, m)


def _errors(val, leaves, target, classification) -> np.ndarray:
    """Mean error per block: misclassification rate or mean squared error."""
    if classification:
        return (np.argmax(val[leaves], axis=-1) != target).mean(axis=-1)
    return ((val[leaves, 0] - target) ** 2).mean(axis=-1)


def tree_permutation_increase(tree, X_oob, target, n_features, classification, rng) -> np.ndarray:
    """Breiman's per-tree OOB permutation importance: error(permuted k) - error.

    Each variable the tree splits on is permuted among the tree's OOB rows;
    the others cannot change the tree's predictions and get exactly 0.
    """
    tree_ = tree.tree_
    val = node_values(tree_, classification)
    m = X_oob.shape[0]
    used = np.unique(tree_.feature[tree_.children_left >= 0]).astype(np.intp)
    out = np.zeros(n_features)
    base = _errors(val, tree.apply(X_oob, check_input=False), target, classification)
    if used.size == 0:
        return out
    perms = rng.permuted(np.tile(np.arange(m), (used.size, 1)), axis=1)
    p = X_oob.shape[1]
    # Copying the permuted blocks costs ~p per row and scikit-learn's apply is
    # fast; the numpy descent costs ~16 x depth per row but copies nothing.
    materialise = p <= 16 * max(int(tree_.max_depth), 1)
    step = max(1, _CHUNK_CELLS // max(m * (p if materialise else 1), 1))
    for lo in range(0, used.size, step):
        block = slice(lo, lo + step)
        if materialise:
            leaves = _apply_permuted(tree, X_oob, used[block], perms[block])
        else:
            leaves = traverse(tree_, X_oob, used[block], perms[block])
        out[used[block]] = _errors(val, leaves, target, classification) - base
    return out


def _apply_permuted(tree, X, features, perms) -> np.ndarray:
    """Same as :func:`traverse` through scikit-learn's ``apply`` on stacked copies of X."""
    m, q = X.shape[0], len(features)
    stacked = np.tile(X, (q, 1))
    cols = np.repeat(features, m)
    stacked[np.arange(q * m), cols] = X[np.asarray(perms).ravel(), cols]
    return tree.apply(stacked, check_input=False).reshape(q, m)


def saabas_matrix(tree_, n_features: int, classification: bool) -> sparse.csr_matrix:
    """Sparse (n_nodes, n_features * K) map from visited nodes to contributions.

    Row c (c not the root) holds :math:`\\mu(c) - \\mu(\\mathrm{parent}(c))` in the
    K columns of the parent's split variable; the root's row is empty.
    """
    val = node_values(tree_, classification)
    K = val.shape[1]
    t, left, right, feat = splits(tree_)
    child = np.concatenate([left, right])
    parent = np.concatenate([t, t])
    f = np.concatenate([feat, feat])
    delta = val[child] - val[parent]                                  # (n_children, K)
    rows = np.repeat(child, K)
    cols = (f[:, None] * K + np.arange(K)).ravel()
    return sparse.csr_matrix((delta.ravel(), (rows, cols)),
                             shape=(tree_.node_count, n_features * K))
