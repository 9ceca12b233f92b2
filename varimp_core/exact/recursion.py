"""Exact infinite-ensemble MDI importances for any K and any depth.

The papers *sample* thousands of trees to see masking at K > 1; this module
*computes* the value an infinite forest converges to, by taking the
expectation over the randomized tree level by level.

For a node :math:`b` (a partial assignment of the set B of variables used on
its branch) with reach :math:`r(b)` -- the probability that a random tree
contains it -- and :math:`P(v \\mid b)` the probability that v wins the split
(:mod:`varimp_core.exact.splitting`),

.. math::

    \\mathrm{Imp}(v) = \\sum_b r(b)\\, P(v \\mid b)\\, p(b)\\, \\Delta i(v \\mid b),
    \\qquad r(b \\cup \\{v = x\\}) \\mathrel{+}= r(b)\\, P(v \\mid b).

Nodes reached by different split orders are merged, since the split law at a
node depends only on the conditional distribution there.  The recursion
stops at pure nodes, at depth ``max_depth``, and when no variable remains.
At K=1 and full depth it equals Eqn 3 of Louppe et al. (2013); Theorem 2
(importances sum to :math:`I(X;Y)`) holds for every K at full depth.

``criterion="squared_error"`` uses the variance of a numeric Y as impurity
(Louppe's thesis, section 6): each distinct value of Y is a class of the
lattice, nothing is binned, :math:`\\Delta i` is
:math:`\\mathrm{Var}(Y \\mid b) - E[\\mathrm{Var}(Y \\mid b, X_v) \\mid b]`, and at
full depth the importances sum to :math:`\\mathrm{Var}(Y) - E\\,\\mathrm{Var}(Y \\mid X)`
(``information``), in units of the variance of Y.  The lattice runs on Y
standardized (so ties between candidates are judged on one scale) and the
importances are scaled back by :math:`\\mathrm{Var}(Y)`.
"""

from __future__ import annotations

import numpy as np

from varimp_core.exact.information import subset_entropies
from varimp_core.exact.information import target_values
from varimp_core.exact.lattice import NodeStats, build_lattice
from varimp_core.result import ImportanceResult
from varimp_core.exact.splitting import (TIE_TOLERANCE, validate_max_features, validate_semantics,
                                         win_probability_table)
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import validate_max_depth

__all__ = ["exact_importances", "exact_importances_path", "explained_variance",
           "VARIANCE_UNITS"]

#: ``units`` of squared_error importances.
VARIANCE_UNITS = "variance of Y"


def target_moments(table: DiscreteTable) -> tuple[float, float, np.ndarray]:
    """Mean and variance of Y under the table's probabilities, and Y's values."""
    values = target_values(table)
    w = table.probabilities
    yv = values[table.y]
    mean = float(np.dot(w, yv))
    var = float(np.dot(w, (yv - mean) ** 2))
    return mean, var, values


def explained_variance(table: DiscreteTable) -> float:
    """:math:`\\mathrm{Var}(Y) - E\\,\\mathrm{Var}(Y \\mid X)` (plug-in on a sample).

    The Theorem 2 analogue: what fully grown trees' variance importances sum to.
    """
    mean, var, values = target_moments(table)
    w = table.probabilities
    z = values[table.y] - mean
    _, cell = np.unique(table.X, axis=0, return_inverse=True)
    cell = cell.ravel()
    n = int(cell.max()) + 1
    s0 = np.bincount(cell, weights=w, minlength=n)
    s1 = np.bincount(cell, weights=w * z, minlength=n)
    s2 = np.bincount(cell, weights=w * z * z, minlength=n)
    within = float(np.sum(s2 - s1 ** 2 / s0))
    return max(var - max(within, 0.0), 0.0)


def win_probabilities(node: NodeStats, active: np.ndarray, max_features: int,
                       k_semantics: str, n_features: int) -> np.ndarray:
    """P(v wins | b) for every candidate v and active cell b: (n_candidates, n_active)."""
    return win_probabilities_many(node, active, (max_features,), k_semantics, n_features)[0]


def win_probabilities_many(node: NodeStats, active: np.ndarray, ks, k_semantics: str,
                           n_features: int) -> np.ndarray:
    """P(v wins | b) for every K of ``ks``, candidate v and active cell b:
    (len(ks), n_candidates, n_active).

    The ranks (how many candidates are strictly better, how many tie) do not depend on K;
    only the law read from them does (:func:`win_probability_table`), so they are counted
    once for every K.
    """
    delta = node.delta[:, active]
    n_c = delta.shape[0]
    if k_semantics == "id3":
        eligible = np.ones_like(delta, dtype=bool)
    else:
        eligible = ~node.constant[:, active]
    d = np.where(eligible, delta, -np.inf)
    with np.errstate(invalid="ignore"):  # -inf - -inf for ineligible pairs, masked below
        better = (d[None, :, :] > d[:, None, :] + TIE_TOLERANCE) & eligible[None, :, :]
        tied = (np.abs(d[None, :, :] - d[:, None, :]) <= TIE_TOLERANCE) & eligible[None, :, :]
    a = better.sum(axis=1)
    t = np.maximum(tied.sum(axis=1) - 1, 0)
    out = np.zeros((len(ks), *delta.shape))
    if k_semantics == "id3":
        for j, k in enumerate(ks):
            out[j] = win_probability_table(n_c, k, "id3", n_features)[a, t]
        return out
    n_elig = eligible.sum(axis=0)
    for n in np.unique(n_elig):
        if n == 0:
            continue
        cols = n_elig == n
        sub_a, sub_t = np.minimum(a[:, cols], n - 1), np.minimum(t[:, cols], n - 1)
        for j, k in enumerate(ks):
            table = win_probability_table(int(n), k, "sklearn", n_features)
            out[j][:, cols] = np.where(eligible[:, cols], table[sub_a, sub_t], 0.0)
    return out


def _propagate(lattice: dict[int, NodeStats], n_features: int, ks, max_depth: int,
               k_semantics: str) -> np.ndarray:
    """Run the level-by-level expectation for every K of ``ks`` at once; return the
    (len(ks), p, p) by-degree matrices.

    The reach of a cell is carried for every K side by side (an array of
    ``(len(ks), n_cells)``): the lattice, its cells and the walk over its subsets are the
    same for every K, only the split law differs.  A cell no K reaches is skipped; a cell
    some K does not reach carries 0 for that K, which adds 0 to its importances.
    """
    p = n_features
    n_k = len(ks)
    by_degree = np.zeros((n_k, p, p))
    reach: dict[int, np.ndarray] = {0: np.ones((n_k, lattice[0].prob.shape[0]))}
    order = sorted(lattice, key=lambda m: bin(m).count("1"))
    for mask in order:
        r = reach.pop(mask, None)
        if r is None:
            continue
        node = lattice[mask]
        depth = bin(mask).count("1")
        if depth >= max_depth:
            continue
        active = (r > 0).any(axis=0) & (node.prob > 0) & ~node.pure
        if not active.any():
            continue
        win = win_probabilities_many(node, active, ks, k_semantics, p)
        flow = r[:, None, active] * win  # (n_k, n_candidates, n_active)
        gain = (flow * (node.prob[active] * node.delta[:, active])).sum(axis=2)
        n_cells = node.prob.shape[0]
        for i, v in enumerate(node.candidates):
            by_degree[:, v, depth] += gain[:, i]
            if depth + 1 >= max_depth:
                continue
            push = np.zeros((n_k, n_cells))
            push[:, active] = flow[:, i]
            child = mask | 1 << v
            contrib = push[:, node.child_parent[i]]
            if child in reach:
                reach[child] += contrib
            else:
                reach[child] = contrib
    return by_degree


def _check_table(table: DiscreteTable) -> None:
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")


def exact_importances_path(table: DiscreteTable, *, max_features=(1,), max_depth=None,
                           k_semantics: str = "id3", criterion: str = "entropy",
                           problem: str | None = None) -> list[ImportanceResult]:
    """Exact importances for several values of K, sharing one node lattice.

    Parameters
    ----------
    table : DiscreteTable
    max_features : sequence of int
        Values of K. Each in 1..p.
    max_depth : int or sequence of int or None
        Depth limit D (None: fully grown). A sequence gives one result per
        (K, D) pair, K varying slowest.
    k_semantics : {"id3", "sklearn"}
    criterion : {"entropy", "gini", "squared_error"}
        ``squared_error``: the variance of Y (``table.y_labels`` are its
        numbers, one class per distinct value), units "variance of Y".
    problem : str, optional

    Returns
    -------
    list of ImportanceResult
        ``method="exact"``.
    """
    _check_table(table)
    validate_semantics(k_semantics)
    p = table.n_features
    ks = [validate_max_features(k, p) for k in max_features]
    depths = list(max_depth) if isinstance(max_depth, (list, tuple)) else [max_depth]
    eff = [validate_max_depth(d, p) for d in depths]
    scale, y_values = 1.0, None
    if criterion == "squared_error":
        mean, scale, values = target_moments(table)
        sd = np.sqrt(scale) if scale > 0 else 1.0
        y_values = (values - mean) / sd
        scale = sd * sd
    lattice = build_lattice(table, criterion=criterion, max_depth=max(eff), y_values=y_values)
    information = subset_entropies(table).information if criterion == "entropy" else (
        explained_variance(table) if criterion == "squared_error" else None)
    units = {"entropy": "bits", "squared_error": VARIANCE_UNITS}.get(criterion, "gini")
    by_depth = [_propagate(lattice, p, ks, d_eff, k_semantics) * scale for d_eff in eff]
    out = []
    for j, k in enumerate(ks):
        for d, matrices in zip(depths, by_depth):
            by_degree = matrices[j]
            out.append(ImportanceResult(
                variables=table.variables,
                importances=by_degree.sum(axis=1),
                by_degree=by_degree,
                method="exact",
                parameters={"max_features": k, "max_depth": d, "k_semantics": k_semantics,
                            "criterion": criterion},
                problem=problem,
                information=information,
                units=units,
                exact=bool(table.exact),
            ))
    return out


def exact_importances(table: DiscreteTable, *, max_features: int = 1, max_depth=None,
                      k_semantics: str = "id3", criterion: str = "entropy",
                      problem: str | None = None) -> ImportanceResult:
    """Infinite-ensemble MDI importances of randomized multiway trees.

    Parameters
    ----------
    table : DiscreteTable
        Exact distribution, or a sample (then: the infinite forest grown on
        that sample).
    max_features : int, default=1
        K, the number of variables drawn at each node. 1 gives totally
        randomized trees; p gives (ID3-like) non-random trees.
    max_depth : int, optional
        Depth limit D; None grows trees fully.
    k_semantics : {"id3", "sklearn"}, default="id3"
        How K draws its candidates; see :mod:`varimp_core.exact.splitting`.
    criterion : {"entropy", "gini", "squared_error"}, default="entropy"
        ``squared_error``: variance of a numeric Y (see the module docstring).
    problem : str, optional
        Spec recorded in the result.

    Returns
    -------
    ImportanceResult
        ``by_degree[m, k]`` is the part contributed at depth k (conditioning
        sets of size k).

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> led = get_problem("led").exact_table()
    >>> r = exact_importances(led, max_features=7)
    >>> round(r.total, 3)  # Theorem 2: log2(10)
    3.322
    """
    return exact_importances_path(table, max_features=(max_features,), max_depth=max_depth,
                                  k_semantics=k_semantics, criterion=criterion,
                                  problem=problem)[0]
