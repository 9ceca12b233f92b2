"""Local MDI: the mean decrease of impurity of one input row (Sutera et al. 2021).

For one tree, the *local* MDI of :math:`X_m` at a row :math:`x` sums, over the
nodes :math:`t` on :math:`x`'s path that split on :math:`X_m`, the impurity
decrease from :math:`t` to the child :math:`t_x` that :math:`x` goes to,

.. math::

    \\mathrm{Imp}_m(x) = \\sum_{t \\ni x:\\, v(t) = X_m} \\big[i(t) - i(t_x)\\big].

Averaged over the learning rows (weighted by their counts) it gives the tree's
global unnormalised MDI :math:`\\sum_t p(t)\\,\\Delta i(t)`, and along one path
the terms telescope: :math:`\\sum_m \\mathrm{Imp}_m(x) = i(\\mathrm{root}) -
i(\\mathrm{leaf}(x))`.  For the infinite forest of totally randomized trees
(K=1, multiway, fully grown) on a known distribution, Sutera et al. (2021,
Theorem 1) show

.. math::

    \\mathrm{Imp}_m(x) = \\sum_{k=0}^{p-1} \\frac{1}{C_p^k (p-k)}
        \\sum_{B \\subseteq V^{-m},\\, |B| = k}
        \\big[H(Y \\mid X_B = x_B) - H(Y \\mid X_B = x_B, X_m = x_m)\\big],

the Shapley value of the game :math:`v_x(S) = H(Y) - H(Y \\mid X_S = x_S)`:
the values sum to :math:`H(Y) - H(Y \\mid X = x)`, a variable that is locally
irrelevant at :math:`x` gets 0, and their mean over :math:`x` is Eqn 3 of
Louppe et al. (2013).

This module computes it exactly, for any K (both ``k_semantics``) and depth,
by the recursion of :mod:`varimp_core.exact.recursion` over merged nodes:
a node :math:`b` reached with probability :math:`r(b)` that splits on
:math:`v` with probability :math:`P(v \\mid b)` credits every distinct row
:math:`x \\in b` with :math:`r(b)\\,P(v \\mid b)\\,[i(b) - i(b \\cup \\{v = x_v\\})]`
(:func:`exact_local_mdi`).  The walk is re-implemented here on the groups
of rows (the sparse lattice of :mod:`varimp_core.exact.lattice`) so that
every row knows its node; its global values are checked against
:func:`~varimp_core.exact.recursion.exact_importances` in the tests.

References
----------
.. [1] A. Sutera, G. Louppe, V. A. Huynh-Thu, L. Wehenkel and P. Geurts, "From
   global to local MDI variable importances for random forests and when they
   are Shapley values", NeurIPS 2021 (arXiv:2111.02218).
.. [2] G. Louppe, L. Wehenkel, A. Sutera and P. Geurts, "Understanding variable
   importances in forests of randomized trees", NIPS 2013.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import validate_max_depth
from varimp_core.exact.lattice import CRITERIA
from varimp_core.exact.splitting import (TIE_TOLERANCE, validate_max_features, validate_semantics,
                                         win_probability_table)
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["LocalMDI", "exact_local_mdi", "impurity_of_counts", "MAX_LOCAL_WORK"]

#: Budget for the exact walk: rows times (subset, candidate) pairs visited.
MAX_LOCAL_WORK = 200_000_000


@dataclass(frozen=True)
class LocalMDI:
    """Local MDI importances of rows, with the global values they average to.

    Parameters
    ----------
    variables : tuple of str
        Input names, in the order of every variable axis below.
    X : ndarray of shape (n_rows, n_features)
        The rows explained (codes for discrete tables, values for numeric data).
    weight : ndarray of shape (n_rows,)
        The rows' weights: :math:`p(x)` for an exact table, counts (or 1) for a
        sample.  ``global_importances`` is the ``weight``-weighted mean of
        ``values`` when the rows are the learning rows.
    values : ndarray of shape (n_rows, n_features)
        :math:`\\mathrm{Imp}_m(x)`: the expected (exact) or mean over trees
        (sampled) sum over the nodes on x's path that split on :math:`X_m` of
        :math:`i(t) - i(t_x)`.
    global_importances : ndarray of shape (n_features,)
        The forest's global unnormalised MDI (bits for entropy, Gini units,
        variance units for regression).
    method : str
        ``"exact"``, ``"forest"`` (multiway), ``"sklearn-rf"`` or ``"sklearn-et"``.
    units : str
        ``"bits"``, ``"gini"`` or ``"variance"``.
    root_impurity : float
        :math:`i(\\mathrm{root})`: :math:`H(Y)` in bits for entropy.
    leaf_impurity : ndarray of shape (n_rows,)
        Mean over trees of :math:`i(\\mathrm{leaf}(x))`; ``values.sum(axis=1)``
        is ``root_impurity - leaf_impurity`` (the sum telescopes on each path).
    standard_errors : ndarray of shape (n_rows, n_features) or None
        Sampled forests: standard deviation over trees divided by
        :math:`\\sqrt{T}`; None for exact values.
    parameters : dict
        The options of the forest.
    """

    variables: tuple[str, ...]
    X: np.ndarray
    weight: np.ndarray
    values: np.ndarray
    global_importances: np.ndarray
    method: str
    units: str
    root_impurity: float
    leaf_impurity: np.ndarray
    standard_errors: np.ndarray | None = None
    parameters: dict = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return len(self.variables)

    @property
    def n_rows(self) -> int:
        return int(self.values.shape[0])

    @property
    def totals(self) -> np.ndarray:
        """:math:`\\sum_m \\mathrm{Imp}_m(x)` per row (= ``root_impurity - leaf_impurity``)."""
        return self.values.sum(axis=1)

    def weighted_mean(self) -> np.ndarray:
        """``weight``-weighted mean of ``values`` over the rows (the global MDI on learning rows)."""
        w = np.asarray(self.weight, dtype=float)
        return w @ self.values / w.sum()

    def to_frame(self) -> pd.DataFrame:
        """Tidy frame: one row per (row, variable) with ``value`` and ``standard_error``."""
        n, p = self.values.shape
        se = self.standard_errors if self.standard_errors is not None else np.full((n, p), np.nan)
        return pd.DataFrame({"row": np.repeat(np.arange(n), p),
                             "variable": np.tile(np.array(self.variables, dtype=object), n),
                             "value": self.values.ravel(), "standard_error": se.ravel(),
                             "weight": np.repeat(np.asarray(self.weight, dtype=float), p)})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "LocalMDI":
        """The LocalMDI that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def impurity_of_counts(counts: np.ndarray, criterion: str) -> np.ndarray:
    """Impurity :math:`i(t)` of class weights on the last axis (0 for an empty node).

    Entropy in bits, :math:`-\\sum_k p_k \\log_2 p_k`; Gini :math:`1 - \\sum_k p_k^2`.
    """
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=-1, keepdims=True)
    frac = np.divide(counts, n, out=np.zeros_like(counts), where=n > 0)
    if criterion == "entropy":
        logs = np.log2(frac, out=np.zeros_like(frac), where=frac > 0)
        return np.maximum(-(frac * logs).sum(axis=-1), 0.0)
    if criterion == "gini":
        return np.where(n[..., 0] > 0, 1.0 - (frac ** 2).sum(axis=-1), 0.0)
    raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}.")


def win_probabilities(delta, constant, max_features, k_semantics, n_features):
    """P(v wins | b) for candidates (rows) and cells (columns), as in the exact recursion."""
    n_c = delta.shape[0]
    eligible = np.ones_like(delta, dtype=bool) if k_semantics == "id3" else ~constant
    d = np.where(eligible, delta, -np.inf)
    with np.errstate(invalid="ignore"):
        better = (d[None, :, :] > d[:, None, :] + TIE_TOLERANCE) & eligible[None, :, :]
        tied = (np.abs(d[None, :, :] - d[:, None, :]) <= TIE_TOLERANCE) & eligible[None, :, :]
    a = better.sum(axis=1)
    t = np.maximum(tied.sum(axis=1) - 1, 0)
    if k_semantics == "id3":
        return win_probability_table(n_c, max_features, "id3", n_features)[a, t]
    out = np.zeros_like(delta)
    n_elig = eligible.sum(axis=0)
    for n in np.unique(n_elig):
        if n == 0:
            continue
        cols = n_elig == n
        table = win_probability_table(int(n), max_features, "sklearn", n_features)
        vals = table[np.minimum(a[:, cols], n - 1), np.minimum(t[:, cols], n - 1)]
        out[:, cols] = np.where(eligible[:, cols], vals, 0.0)
    return out


def _distinct_inputs(table: DiscreteTable):
    """Distinct input rows, p(x), and each table row's distinct-row index."""
    xs, inv = np.unique(table.X, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    w = np.bincount(inv, weights=table.weight, minlength=xs.shape[0])
    return xs, w, inv


def exact_local_mdi(table: DiscreteTable, *, max_features: int = 1, max_depth=None,
                    k_semantics: str = "id3", criterion: str = "entropy") -> LocalMDI:
    """Exact local MDI of every distinct input row for the infinite multiway forest.

    For the infinite forest of :func:`~varimp_core.exact.recursion.exact_importances`
    (randomized multiway trees, K = ``max_features``, depth ``max_depth``),

    .. math::

        \\mathrm{Imp}_m(x) = \\sum_{b \\ni x} r(b)\\, P(X_m \\mid b)\\,
            \\big[i(b) - i(b \\cup \\{X_m = x_m\\})\\big],

    over the nodes :math:`b` (partial assignments, merged over split orders)
    that contain :math:`x`, with :math:`r(b)` the probability that a random
    tree has node :math:`b` and :math:`P(X_m \\mid b)` the probability that
    :math:`X_m` wins its split (:mod:`varimp_core.exact.splitting`).  Then

    * :math:`\\sum_x p(x)\\,\\mathrm{Imp}_m(x)` is the global importance
      (``global_importances``, equal to ``exact_importances(...).importances``);
    * fully grown, :math:`\\sum_m \\mathrm{Imp}_m(x) = i(\\mathrm{root}) -
      i(Y \\mid X = x)`, i.e. :math:`H(Y) - H(Y \\mid X = x)` for entropy;
    * at K=1 (``k_semantics="id3"``), fully grown, with entropy, it is the
      Shapley value of :math:`v_x(S) = H(Y) - H(Y \\mid X_S = x_S)` (Sutera
      et al. 2021, Theorem 1) and 0 for a variable locally irrelevant at x.

    Parameters
    ----------
    table : DiscreteTable
        Exact distribution or sample (then: the infinite forest grown on it).
    max_features : int, default=1
        K.
    max_depth : int, optional
        Depth limit; None grows trees fully.
    k_semantics : {"id3", "sklearn"}, default="id3"
    criterion : {"entropy", "gini"}, default="entropy"

    Returns
    -------
    LocalMDI
        One row per distinct input row of the table (``X`` holds its codes,
        ``weight`` its probability :math:`p(x)` summed over the outputs),
        ``method="exact"``, ``standard_errors=None``.

    Examples
    --------
    >>> from varimp_core.problems.registry import get_problem
    >>> xor = get_problem("xor:relevant=2,irrelevant=1").exact_table()
    >>> r = exact_local_mdi(xor)
    >>> [round(float(v), 3) for v in r.values[0]]     # H(Y) = 1 bit split between X1, X2
    [0.5, 0.5, 0.0]
    """
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}.")
    validate_semantics(k_semantics)
    p = table.n_features
    k = validate_max_features(max_features, p)
    depth = validate_max_depth(max_depth, p)
    if table.n_rows == 0 or table.total_weight <= 0:
        raise ValueError("The table is empty: it has no rows with positive weight.")
    xs, px, inv = _distinct_inputs(table)
    n = xs.shape[0]
    from math import comb
    work = float(sum(comb(p, s) * (p - s) for s in range(depth))) * n
    if work > MAX_LOCAL_WORK:
        raise ValueError(f"Exact local MDI would visit about {work:.2g} (row, node, candidate) "
                         f"triples (limit {MAX_LOCAL_WORK:.0e}); lower the depth or use fewer "
                         "variables or rows.")
    ny = table.n_classes
    w = table.probabilities
    radix = np.concatenate([[1], np.cumprod(table.n_levels[:-1].astype(np.int64))])
    group: dict[int, tuple[np.ndarray, int, np.ndarray, np.ndarray]] = {}

    def groups(mask):
        """Distinct-row group ids of subset ``mask``, group count, probabilities, impurities."""
        if mask not in group:
            key = np.zeros(n, dtype=np.int64)
            for j in range(p):
                if mask >> j & 1:
                    key += xs[:, j] * radix[j]
            _, gid = np.unique(key, return_inverse=True)
            gid = np.asarray(gid).ravel()
            g = int(gid.max()) + 1
            counts = np.bincount(gid[inv] * ny + table.y, weights=w, minlength=g * ny)
            counts = counts.reshape(g, ny)
            group[mask] = (gid, g, counts, impurity_of_counts(counts, criterion))
        return group[mask]

    values = np.zeros((n, p))
    reach: dict[int, np.ndarray] = {0: np.ones(1)}
    for size in range(depth):
        for combo in combinations(range(p), size):
            mask = sum(1 << j for j in combo)
            r = reach.pop(mask, None)
            if r is None:
                continue
            gid, g, counts, imp = groups(mask)
            prob = counts.sum(axis=1)
            pure = (counts > 0).sum(axis=1) <= 1
            active = (r > 0) & (prob > 0) & ~pure
            if not active.any():
                continue
            cands = [v for v in range(p) if not mask >> v & 1]
            delta = np.zeros((len(cands), g))
            constant = np.ones((len(cands), g), dtype=bool)
            children = []
            for i, v in enumerate(cands):
                cgid, cg, ccounts, cimp = groups(mask | 1 << v)
                par = np.zeros(cg, dtype=np.int64)
                par[cgid] = gid
                cprob = ccounts.sum(axis=1)
                wsum = np.bincount(par, weights=cprob * cimp, minlength=g)
                delta[i] = np.maximum(prob * imp - wsum, 0.0) / np.where(prob > 0, prob, 1.0)
                constant[i] = np.bincount(par, weights=(cprob > 0).astype(float), minlength=g) <= 1
                children.append((v, cgid, cg, cimp, par))
            win = np.zeros((len(cands), g))
            win[:, active] = win_probabilities(delta[:, active], constant[:, active], k,
                                                k_semantics, p)
            flow = r[None, :] * win                           # (candidates, cells of mask)
            for i, (v, cgid, cg, cimp, par) in enumerate(children):
                # each child cell c of parent b: r(b) P(v|b) [i(b) - i(c)], read by its rows
                credit = flow[i, par] * (imp[par] - cimp)
                values[:, v] += credit[cgid]
                if size + 1 < depth:
                    child = mask | 1 << v
                    reach[child] = reach.get(child, 0.0) + flow[i, par]
        for m in [m for m in group if bin(m).count("1") <= size]:
            del group[m]
    root = float(impurity_of_counts(np.bincount(table.y, weights=w, minlength=ny), criterion))
    weight = px / px.sum()
    return LocalMDI(
        variables=tuple(table.variables), X=xs, weight=weight, values=values,
        global_importances=weight @ values, method="exact",
        units="bits" if criterion == "entropy" else "gini", root_impurity=root,
        leaf_impurity=root - values.sum(axis=1), standard_errors=None,
        parameters={"max_features": k, "max_depth": max_depth, "k_semantics": k_semantics,
                    "criterion": criterion})
