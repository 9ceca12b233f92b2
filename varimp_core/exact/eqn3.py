"""Eqn 3 of Louppe et al. (2013): importances of totally randomized trees.

For totally randomized, fully developed trees (K=1) grown on an infinite
sample, Theorem 1 of Louppe, Wehenkel, Sutera and Geurts (2013) gives

.. math::

    \\mathrm{Imp}(X_m) = \\sum_{k=0}^{p-1} \\frac{1}{C_p^k}\\frac{1}{p-k}
        \\sum_{B \\in \\mathcal{P}_k(V^{-m})} I(X_m; Y \\mid B).

The weight :math:`1/(C_p^k (p-k))` is the Shapley weight
:math:`|B|!\\,(p-|B|-1)!/p!`, so :math:`\\mathrm{Imp}(X_m)` is exactly the
Shapley value of the cooperative game :math:`v(S) = I(Y; X_S)`: efficiency of
the Shapley value is Theorem 2 (the importances sum to :math:`I(X;Y)`).

Proposition 6: trees pruned at depth q keep the first q terms (k < q) of the
outer sum; Proposition 7: random subspaces of size q give the same result.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from varimp_core.exact.information import (SubsetEntropies, members, popcount, subset_entropies,
                                           subset_variances)
from varimp_core.result import ImportanceResult
from varimp_core.data.table import DiscreteTable

__all__ = ["eqn3_weights", "eqn3_importances", "conditional_terms", "all_terms",
           "validate_max_depth", "random_subspace_importances"]


def eqn3_weights(n_features: int) -> np.ndarray:
    """Weight :math:`1/(C_p^k (p-k))` of a degree-k term, for k = 0..p-1.

    Examples
    --------
    >>> eqn3_weights(2)
    array([0.5, 0.5])
    """
    p = int(n_features)
    if p < 1:
        raise ValueError(f"n_features must be at least 1, got {n_features}.")
    return np.array([1.0 / (math.comb(p, k) * (p - k)) for k in range(p)])


def validate_max_depth(max_depth, n_features: int) -> int:
    """Return the effective depth limit (p when None) or raise a sentence."""
    if max_depth is None:
        return n_features
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) or max_depth < 1:
        raise ValueError(f"max_depth must be a positive integer or None, got {max_depth!r}.")
    return min(int(max_depth), n_features)


def _degree_matrix(ent: SubsetEntropies, depth: int) -> np.ndarray:
    p = ent.n_features
    masks = np.arange(1 << p, dtype=np.int64)
    sizes = popcount(masks)
    weights = eqn3_weights(p)
    out = np.zeros((p, p))
    for m in range(p):
        b = masks[(masks >> m) & 1 == 0]
        k = sizes[b]
        keep = k < depth
        b, k = b[keep], k[keep]
        out[m] = np.bincount(k, weights=weights[k] * ent.cmi(m, b), minlength=p)[:p]
    return out


def eqn3_importances(table: DiscreteTable, *, max_depth: int | None = None,
                     entropies: SubsetEntropies | None = None,
                     problem: str | None = None, criterion: str = "entropy") -> ImportanceResult:
    """Asymptotic MDI importances of totally randomized trees (K=1), by Eqn 3.

    Parameters
    ----------
    table : DiscreteTable
        Exact distribution, or a sample (plug-in estimate of the infinite-forest
        value on that sample's empirical distribution).
    max_depth : int, optional
        Depth limit q of the trees. Proposition 6 keeps the terms k < q.
    entropies : SubsetEntropies, optional
        Reuse a precomputed entropy table.
    problem : str, optional
        Problem spec recorded in the result.
    criterion : {"entropy", "squared_error"}, default="entropy"
        ``squared_error``: the variance of a numeric Y (``table.y_labels``), with
        :math:`G(Y;X_m \\mid B) = \\mathrm{Var}(Y \\mid B) - \\mathrm{Var}(Y \\mid B, X_m)`
        in place of :math:`I(X_m;Y \\mid B)` (Louppe's thesis, section 6;
        :func:`~varimp_core.exact.information.subset_variances`); units "variance of Y".

    Returns
    -------
    ImportanceResult
        ``method="eqn3"``; ``by_degree[m, k]`` is the degree-k term
        :math:`\\frac{1}{C_p^k(p-k)}\\sum_{|B|=k} I(X_m;Y|B)` (Louppe et al.
        2013, Figure 2).

    Notes
    -----
    Cost: one entropy per subset (:func:`~varimp_core.exact.information.subset_entropies`),
    then four look-ups per term.

    References
    ----------
    G. Louppe, L. Wehenkel, A. Sutera, P. Geurts. Understanding variable
    importances in forests of randomized trees. NIPS 2013, Eqn 3, Thm 1, Prop 6.
    """
    depth = validate_max_depth(max_depth, table.n_features)
    if criterion not in ("entropy", "squared_error"):
        raise ValueError(f"Eqn 3 is computed for criterion 'entropy' or 'squared_error', "
                         f"not {criterion!r}.")
    if entropies is None:
        entropies = subset_entropies(table) if criterion == "entropy" else \
            subset_variances(table)
    ent = entropies
    by_degree = _degree_matrix(ent, depth)
    return ImportanceResult(
        variables=table.variables,
        importances=by_degree.sum(axis=1),
        by_degree=by_degree,
        method="eqn3",
        parameters={"max_features": 1, "max_depth": max_depth, "criterion": criterion,
                    "k_semantics": "id3"},
        problem=problem,
        information=ent.information,
        units="bits" if criterion == "entropy" else "variance of Y",
        exact=bool(table.exact),
    )


def random_subspace_importances(table: DiscreteTable, subspace_size: int, *,
                                entropies: SubsetEntropies | None = None) -> np.ndarray:
    """Importances of fully grown totally randomized trees on random subspaces.

    Each tree is grown on q variables drawn uniformly before its construction
    (Ho, 1998); the result averages Eqn 3 *within* each of the
    :math:`C_p^q` subspaces.  Proposition 7 of Louppe et al. (2013) states it
    equals pruning at depth q (``eqn3_importances(table, max_depth=q)``);
    this function computes the left-hand side independently, by enumeration.

    Parameters
    ----------
    table : DiscreteTable
    subspace_size : int
        q, in 1..p.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    from itertools import combinations

    p = table.n_features
    q = validate_max_depth(subspace_size, p)
    ent = entropies if entropies is not None else subset_entropies(table)
    w = eqn3_weights(q)
    total = np.zeros(p)
    subspaces = list(combinations(range(p), q))
    for sub in subspaces:
        for m in sub:
            others = [j for j in sub if j != m]
            for k in range(q):
                conds = [sum(1 << j for j in c) for c in combinations(others, k)]
                total[m] += w[k] * ent.cmi(m, conds).sum()
    return total / len(subspaces)


def conditional_terms(table: DiscreteTable, variable, degree: int, *,
                      entropies: SubsetEntropies | None = None) -> pd.DataFrame:
    """Level iii of Eqn 3: every conditioning set B of one degree for one variable.

    Parameters
    ----------
    table : DiscreteTable
    variable : int or str
        Index or name of :math:`X_m`.
    degree : int
        Size k of the conditioning sets.
    entropies : SubsetEntropies, optional

    Returns
    -------
    DataFrame
        Columns ``variable, conditioning, degree, weight, cmi, term`` with
        ``term = weight * cmi`` and ``weight = 1/(C_p^k (p-k))``, sorted by
        decreasing ``cmi``. The ``term`` column sums to ``by_degree[m, k]``.
    """
    p = table.n_features
    m = _variable_index(table, variable)
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or not 0 <= degree < p:
        raise ValueError(f"degree must be an integer in 0..{p - 1}, got {degree!r}.")
    ent = entropies if entropies is not None else subset_entropies(table)
    masks = np.arange(1 << p, dtype=np.int64)
    b = masks[((masks >> m) & 1 == 0) & (popcount(masks) == degree)]
    cmi = ent.cmi(m, b)
    w = eqn3_weights(p)[degree]
    df = pd.DataFrame({
        "variable": table.variables[m],
        "conditioning": [[table.variables[j] for j in members(int(x))] for x in b],
        "degree": int(degree),
        "weight": w,
        "cmi": cmi,
        "term": w * cmi,
    })
    return df.sort_values("cmi", ascending=False, kind="stable").reset_index(drop=True)


def all_terms(table: DiscreteTable, *, entropies: SubsetEntropies | None = None,
              max_terms: int = 200_000) -> pd.DataFrame:
    """Every term of Eqn 3, for the ``--terms`` output (:math:`p\\,2^{p-1}` rows)."""
    p = table.n_features
    if p * 2 ** (p - 1) > max_terms:
        raise ValueError(
            f"Eqn 3 has {p * 2 ** (p - 1)} terms for {p} variables, more than the "
            f"{max_terms} that can be listed; ask for one variable and degree instead."
        )
    ent = entropies if entropies is not None else subset_entropies(table)
    frames = [conditional_terms(table, m, k, entropies=ent) for m in range(p) for k in range(p)]
    return pd.concat(frames, ignore_index=True)


def _variable_index(table: DiscreteTable, variable) -> int:
    if isinstance(variable, str):
        if variable not in table.variables:
            raise ValueError(
                f"Unknown variable {variable!r}; choose one of: {', '.join(table.variables)}."
            )
        return table.variables.index(variable)
    if isinstance(variable, bool) or not isinstance(variable, (int, np.integer)) or not 0 <= variable < table.n_features:
        raise ValueError(f"Variable index {variable!r} is out of range 0..{table.n_features - 1}.")
    return int(variable)
