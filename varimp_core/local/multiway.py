"""Local variable importance of varimp's own multiway forest (Ciss 2015, section 4).

:func:`varimp_core.forests.multiway.grow_forest` grows all trees of a chunk together,
level by level, and keeps no tree.  To follow observations through those
trees, :func:`forest_local_importance` grows the *same* trees again (same
seeds, same random draws: the routing draws nothing) and sends the rows to
assess down every tree while it grows, recording for each (tree, row) the
split variables of the nodes above the row's leaf and the leaf's class
distribution.  The result is the :class:`~varimp_core.local.importance.LocalImportance`
of scikit-learn forests, so interactions, partial importance, importance over
labels and dependence over responses (:mod:`varimp_core.local.interactions`,
:mod:`varimp_core.local.partial_dependence`) work on it unchanged.

A multiway node has one branch per value *seen in its training rows*.  A row
whose value has no branch there (a value the node's rows never took) stops at
that node: the node is its leaf, its class distribution the prediction, and
the variable counted is the split above that node.

References
----------
.. [1] S. Ciss, "Variable Importance in Random Uniform Forests", hal-01104751, 2015.
.. [2] G. Louppe, L. Wehenkel, A. Sutera and P. Geurts, "Understanding variable
   importances in forests of randomized trees", NIPS 2013, section 3.
"""

from __future__ import annotations

import numpy as np

from varimp_core.local.importance import LocalImportance
from varimp_core.data.table import DiscreteTable

__all__ = ["forest_local_importance"]


class _Router:
    """Rows to assess, routed through the trees of one chunk as they grow.

    ``counts`` (max_level, n_rows * p) and ``proba`` (n_rows, n_classes) are
    accumulators; each finished (tree, row) entry adds its ancestors' split
    variables and its leaf's class distribution.  Each chunk is routed by a
    :meth:`fresh` copy (in whichever process grows it), whose sums :meth:`add`
    adds here in chunk order: floating-point sums in a fixed order, so the
    result does not depend on ``n_jobs``.
    """

    def __init__(self, Q, n_levels, counts, proba):
        self.Q, self.n_levels, self.counts, self.proba = Q, n_levels, counts, proba
        self.p = Q.shape[1]

    def fresh(self) -> "_Router":
        """A router of the same rows with zero accumulators."""
        return _Router(self.Q, self.n_levels, np.zeros_like(self.counts),
                       np.zeros_like(self.proba))

    def gathered(self) -> tuple[np.ndarray, np.ndarray]:
        return self.counts, self.proba

    def add(self, gathered) -> None:
        counts, proba = gathered
        self.counts += counts
        self.proba += proba

    def start(self, n_trees: int) -> None:
        m = self.Q.shape[0]
        self.row = np.tile(np.arange(m), n_trees)
        self.node = np.repeat(np.arange(n_trees), m)        # roots are the trees
        self.hist = np.full((self.row.size, self.counts.shape[0]), -1, dtype=np.intp)

    def _finish(self, done, dist) -> None:
        """Record the entries ``done`` (bool mask) whose leaf has class weights ``dist``."""
        rows, hist = self.row[done], self.hist[done]
        for level in range(hist.shape[1]):
            ok = hist[:, level] >= 0
            self.counts[level] += np.bincount(rows[ok] * self.p + hist[ok, level],
                                              minlength=self.counts.shape[1])
        total = dist.sum(axis=1, keepdims=True)
        np.add.at(self.proba, rows, dist / np.where(total > 0, total, 1.0))
        keep = ~done
        self.row, self.node, self.hist = self.row[keep], self.node[keep], self.hist[keep]

    def _values(self, chosen):
        """Split variable and the entries' value of it; values never seen have no branch."""
        var = chosen[self.node]
        x = self.Q[self.row, var]
        return var, x, x < self.n_levels[var]

    def _move(self, var, new_node) -> None:
        """Every remaining entry goes one level down, below a split on ``var``."""
        self.hist = np.roll(self.hist, 1, axis=1)
        self.hist[:, 0] = var
        self.node = new_node

    def leaves(self, splittable, node_counts) -> None:
        """Entries at nodes that do not split stop there."""
        stop = ~splittable[self.node]
        self._finish(stop, node_counts[self.node[stop]])

    def descend(self, chosen, uniq, cmax, node_counts) -> None:
        """Entries go to their child (``uniq``: the sorted node * cmax + value keys of the
        next level's nodes); those whose value has no branch stop where they are."""
        var, x, seen = self._values(chosen)
        key = self.node * cmax + np.where(seen, x, 0)
        pos = np.minimum(np.searchsorted(uniq, key), uniq.size - 1)
        child = seen & (uniq[pos] == key)
        self._finish(~child, node_counts[self.node[~child]])
        self._move(var[child], pos[child])

    def last(self, chosen, slot, pair_counts, node_counts) -> None:
        """At the depth limit every split node's children are leaves: finish everything."""
        var, x, seen = self._values(chosen)
        n = self.node
        child = pair_counts[n, slot[n], np.where(seen, x, 0)]       # (E, n_classes)
        has = seen & (child.sum(axis=1) > 0)
        self.hist[has] = np.roll(self.hist[has], 1, axis=1)
        self.hist[has, 0] = var[has]
        self._finish(np.ones(n.size, dtype=bool), np.where(has[:, None], child, node_counts[n]))


def check_rows(X, table: DiscreteTable) -> np.ndarray:
    if X is None:
        return table.X.copy()
    try:
        Q = np.asarray(X)
    except (TypeError, ValueError):
        raise ValueError("X must be an array of integer codes, one column per input.") from None
    if Q.ndim != 2 or Q.shape[0] < 1:
        raise ValueError(f"X has shape {Q.shape}: it must be 2-D with at least one row.")
    if Q.shape[1] != table.n_features:
        raise ValueError(f"X has {Q.shape[1]} columns but the table has {table.n_features} inputs.")
    if not np.issubdtype(Q.dtype, np.integer):
        if not (np.issubdtype(Q.dtype, np.floating) and np.all(np.isfinite(Q))
                and np.all(Q == np.round(Q))):
            raise ValueError("X must hold integer codes (the table's codes of each input), "
                             "not arbitrary numbers; code the rows like the table first.")
    Q = Q.astype(np.int64)
    if Q.min() < 0:
        raise ValueError(f"X contains the negative code {int(Q.min())}; codes start at 0.")
    return Q


def forest_local_importance(table: DiscreteTable, X=None, *, n_estimators: int = 100,
                            max_features: int = 1, max_depth=None, bootstrap: bool = False,
                            k_semantics: str = "id3", criterion: str = "entropy",
                            random_state=0, n_samples: int | None = None,
                            max_level: int = 1, progress=None,
                            n_jobs: int | None = None) -> LocalImportance:
    """Local importance of the forest :func:`~varimp_core.forests.multiway.grow_forest` grows.

    Parameters
    ----------
    table : DiscreteTable
        Training rows, as for :func:`~varimp_core.forests.multiway.grow_forest`.
    X : array-like of int, shape (n_obs, n_features), optional
        Rows to assess, as codes of the table's inputs (training or new rows;
        no labels).  Default: the table's distinct rows.
    n_estimators, max_features, max_depth, bootstrap, k_semantics, criterion, random_state, n_samples
        As in :func:`~varimp_core.forests.multiway.grow_forest`; the same values grow the
        same trees.
    max_level : int, default=1
        Also count the split variable up to ``max_level`` nodes above the leaf.
    progress : callable, optional
        ``progress(done, total)`` after each chunk of trees.
    n_jobs : int, optional
        Processes growing and routing chunks of trees side by side (joblib's
        convention: -1 every core; None or 1 this process).  Each chunk draws
        from its own child of ``SeedSequence(random_state)`` and its sums are
        added in chunk order, so the result is the same for every ``n_jobs``.

    Returns
    -------
    LocalImportance
        ``counts[i, j]`` is :math:`\\mathrm{LVI}(j, i) = \\sum_b
        \\mathbf{1}\\{v_b(\\mathrm{parent}(\\ell_b(X_i))) = j\\}`; ``prediction``
        is the class (an entry of ``table.y_labels``) of largest mean leaf
        probability over trees, the first one on ties; ``classes`` is
        ``table.y_labels``; ``parameters["proba"]`` holds the mean leaf
        class probabilities, shape (n_obs, n_classes).

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> table = get_problem("xor:relevant=2,irrelevant=1").exact_table()
    >>> loc = forest_local_importance(table, n_estimators=50, max_features=3)
    >>> int(loc.counts[:, 2].sum())      # greedy trees never split on the noise bit X3
    0
    """
    from varimp_core.forests.multiway import grow_forest_routed   # late: forest imports nothing from here

    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")
    if isinstance(max_level, bool) or not isinstance(max_level, (int, np.integer)) or max_level < 1:
        raise ValueError(f"max_level={max_level!r} is not allowed: use an integer >= 1.")
    Q = check_rows(X, table)
    m, p = Q.shape
    counts = np.zeros((int(max_level), m * p), dtype=np.int64)
    proba = np.zeros((m, table.n_classes))
    router = _Router(Q, table.n_levels, counts, proba)
    result = grow_forest_routed(table, router, n_estimators=n_estimators,
                                max_features=max_features, max_depth=max_depth,
                                bootstrap=bootstrap, k_semantics=k_semantics,
                                criterion=criterion, random_state=random_state,
                                n_samples=n_samples, progress=progress, n_jobs=n_jobs)
    by_level = counts.reshape(int(max_level), m, p)
    first = by_level[0]
    positions = np.argsort(-first, axis=1, kind="stable")
    positions[np.take_along_axis(first, positions, axis=1) == 0] = -1
    proba /= result.parameters["n_estimators"]
    labels = np.asarray(table.y_labels, dtype=object)
    prediction = labels[np.argmax(proba, axis=1)]
    if all(isinstance(v, (int, np.integer)) for v in table.y_labels):
        prediction = prediction.astype(np.int64)
    params = {"estimator": "multiway forest", "max_level": int(max_level), "proba": proba,
              **result.parameters}
    return LocalImportance(
        variables=table.variables, counts=first, positions=positions, prediction=prediction,
        X=Q.astype(float), task="classification", classes=tuple(table.y_labels),
        n_estimators=int(n_estimators), counts_by_level=by_level, parameters=params)
