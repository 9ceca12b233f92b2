"""Relevance classes, degrees and Markov boundaries (Kohavi and John, 1997).

As in the slides of Geurts (2016), for inputs V and output Y, a variable X is

* relevant iff :math:`I(X; Y \\mid B) > 0` for some :math:`B \\subseteq V^{-X}`;
* strongly relevant iff :math:`I(X; Y \\mid V^{-X}) > 0`;
* weakly relevant iff relevant and not strongly relevant;
* irrelevant otherwise.

The degree of a relevant X is the smallest :math:`|B|` with
:math:`I(X;Y \\mid B) > 0`.  A Markov blanket is a set M with
:math:`Y \\perp V \\setminus M \\mid M`, i.e. :math:`H(Y \\mid X_M) = H(Y \\mid X_V)`,
and a Markov boundary a blanket none of whose proper subsets is one.  Blankets
are closed upwards (conditioning on more never raises :math:`H(Y \\mid \\cdot)`),
so M is a boundary iff removing any single variable breaks it, and the
boundary is unique iff exactly one such M exists.  When the input
distribution is strictly positive it is unique and equals the set of strongly
relevant variables (Pearl 1988, the intersection property); otherwise it may
or may not be, and ``boundary_unique`` says which.  By Theorem 3 of Louppe et
al. (2013), X is irrelevant iff its K=1 importance is 0.

All tests use the subset-entropy table, so the cost is one look-up per term.
Plug-in estimates from a sample are never exactly 0; ``tol`` sets the
threshold (in bits) below which a conditional mutual information counts as 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from varimp_core.exact.information import SubsetEntropies, members, popcount, subset_entropies
from varimp_core.data.table import DiscreteTable

__all__ = ["RelevanceResult", "relevance", "relevance_with_importances", "default_tolerances",
           "CLASSES"]

CLASSES = ("strong", "weak", "irrelevant")


@dataclass(frozen=True)
class RelevanceResult:
    """Relevance class and degree of each variable, and a Markov boundary.

    Attributes
    ----------
    variables : tuple of str
    relevance : tuple of str
        ``"strong"``, ``"weak"`` or ``"irrelevant"`` per variable.
    degree : tuple of (int or None)
        Smallest conditioning-set size with positive information; None if irrelevant.
    markov_boundary : tuple of str or None
        A minimal Markov boundary. None when the distribution is not strictly
        positive (then boundaries need not be unique); see ``minimal_boundary``.
    minimal_boundary : tuple of str
        A minimal-size set M with :math:`H(Y|X_M) = H(Y|X_V)` (always reported).
    strictly_positive : bool
        Every combination of input values has positive probability.
    tol : float
        Threshold of the terms :math:`I(X_m;Y \\mid B)`, in bits.
    boundary_unique : bool or None
        True when ``minimal_boundary`` is the only Markov boundary (the only
        blanket from which no variable can be removed, at threshold ``tol``),
        False when there are others; None when not known (a result stored
        before this field existed).
    """

    variables: tuple
    relevance: tuple
    degree: tuple
    markov_boundary: tuple | None
    minimal_boundary: tuple
    strictly_positive: bool
    tol: float
    boundary_unique: bool | None = None

    def to_dict(self) -> dict:
        """The ``relevance --format json`` object of the command line."""
        return {
            "variables": list(self.variables),
            "relevance": list(self.relevance),
            "degree": list(self.degree),
            "markov_boundary": None if self.markov_boundary is None else list(self.markov_boundary),
            "minimal_boundary": list(self.minimal_boundary),
            "strictly_positive": self.strictly_positive,
            "tol": self.tol,
            "boundary_unique": self.boundary_unique,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "RelevanceResult":
        """The RelevanceResult that :meth:`to_dict` wrote."""
        boundary = d["markov_boundary"]
        return cls(variables=tuple(d["variables"]), relevance=tuple(d["relevance"]),
                   degree=tuple(d["degree"]),
                   markov_boundary=None if boundary is None else tuple(boundary),
                   minimal_boundary=tuple(d["minimal_boundary"]),
                   strictly_positive=bool(d["strictly_positive"]), tol=float(d["tol"]),
                   boundary_unique=None if d.get("boundary_unique") is None
                   else bool(d["boundary_unique"]))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame({"variable": list(self.variables), "relevance": list(self.relevance),
                             "degree": list(self.degree),
                             "in_markov_boundary": [v in self.minimal_boundary for v in self.variables]})


#: Largest default threshold for a sample, in bits.
MAX_DEFAULT_TOL = 0.05


def default_tolerances(table: DiscreteTable) -> tuple[float, float]:
    """Default thresholds (bits) of :func:`relevance` for a sample: (terms, boundary).

    Under independence, :math:`2N\\ln 2\\,\\hat I(X;Y \\mid Z)` of the plug-in
    estimate from N draws is asymptotically :math:`\\chi^2` with
    :math:`(|\\mathcal Y|-1)(|\\mathcal X|-1)|\\mathcal Z|` degrees of freedom, so
    its mean (the bias, Miller 1955; ``plugin_bias`` for :math:`Z=\\emptyset`)
    is that number over :math:`2N\\ln 2`.  Each threshold is the bias of the
    largest statistic of its kind that :func:`relevance` tests:

    * the terms :math:`I(X_m;Y \\mid B)` are largest at :math:`B = V^{-m}`:
      :math:`\\max_m (|\\mathcal Y|-1)(c_m-1)\\prod_{j \\ne m} c_j / (2N\\ln 2)`;
    * the boundary test :math:`H(Y \\mid X_M) - H(Y \\mid X_V) = I(Y; X_{V \\setminus M}
      \\mid X_M)` has :math:`(|\\mathcal Y|-1)(\\prod_{V \\setminus M} c - 1)\\prod_M c`
      degrees of freedom, largest at :math:`M = \\emptyset`:
      :math:`(|\\mathcal Y|-1)(\\prod_j c_j - 1) / (2N\\ln 2)`.

    Both are capped at ``MAX_DEFAULT_TOL``.  Heuristics (a mean, not a
    quantile): pass your own ``tol`` for real analyses.

    Parameters
    ----------
    table : DiscreteTable
        A sample (N = its total weight); :math:`c_j` are its declared levels.

    Returns
    -------
    (float, float)
    """
    n = table.total_weight
    scale = (table.n_classes - 1) / (2 * n * np.log(2))
    log_c = np.log(table.n_levels.astype(float))
    with np.errstate(divide="ignore"):   # c_m = 1: a constant input, no degree of freedom
        log_terms = np.log(table.n_levels.astype(float) - 1) + (log_c.sum() - log_c)
    log_all = float(log_c.sum())
    terms = np.exp(min(float(log_terms.max()), 700.0)) if log_terms.size else 0.0
    boundary = np.expm1(min(log_all, 700.0))   # prod c - 1, without overflow for many inputs
    return (float(min(MAX_DEFAULT_TOL, scale * terms)),
            float(min(MAX_DEFAULT_TOL, scale * boundary)))


def relevance(table: DiscreteTable, *, tol: float | None = None,
              entropies: SubsetEntropies | None = None) -> RelevanceResult:
    """Classify every variable as strongly, weakly or not relevant.

    Parameters
    ----------
    table : DiscreteTable
    tol : float, optional
        Information (bits) at or below which a term counts as zero, in the
        relevance classes and in the Markov boundary test. Defaults to 1e-9
        for exact tables and, for samples, to the plug-in bias of the largest
        term tested, :math:`I(X_m;Y \\mid V^{-m})`:
        :math:`\\max_m (|Y|-1)(c_m-1)\\prod_{B=V^{-m}} c / (2N\\ln 2)`, capped at
        0.05 bits; the boundary test then uses the bias of its own largest
        statistic, :math:`(|Y|-1)(\\prod_j c_j - 1)/(2N\\ln 2)`, capped alike
        (:func:`default_tolerances`). Heuristics; pass your own for real
        analyses.
    entropies : SubsetEntropies, optional

    Returns
    -------
    RelevanceResult
        ``tol`` is the threshold of the terms.
    """
    if tol is not None and (not np.isfinite(tol) or tol < 0):
        raise ValueError(f"tol must be a non-negative number of bits, got {tol!r}.")
    ent = entropies if entropies is not None else subset_entropies(table)
    p = table.n_features
    if tol is not None:
        boundary_tol = tol
    elif table.exact:
        tol = boundary_tol = 1e-9
    else:
        tol, boundary_tol = default_tolerances(table)
    masks = np.arange(1 << p, dtype=np.int64)
    sizes = popcount(masks)
    full = (1 << p) - 1
    classes, degrees = [], []
    for m in range(p):
        bit = 1 << m
        b = masks[(masks & bit) == 0]
        cmi = ent.cmi(m, b)
        positive = cmi > tol
        if not positive.any():
            classes.append("irrelevant")
            degrees.append(None)
            continue
        degrees.append(int(sizes[b][positive].min()))
        strong = ent.cmi(m, [full & ~bit])[0] > tol
        classes.append("strong" if strong else "weak")
    h_full = ent.conditional_entropy(full)
    cond = ent.hxy - ent.hx
    blanket = cond <= h_full + boundary_tol
    ok = masks[blanket]
    best = ok[np.argmin(sizes[ok])]
    boundaries = blanket.copy()   # blankets that lose the property without any one variable
    for j in range(p):
        has = (masks >> j & 1).astype(bool)
        boundaries &= ~(has & blanket[masks ^ (1 << j)])
    boundary = tuple(table.variables[j] for j in members(int(best)))
    log_cells = float(np.log(table.n_levels.astype(float)).sum())
    seen = table.X[table.weight > 0]   # a cell is there only with positive probability
    x_rows = np.unique(seen, axis=0).shape[0] if seen.shape[0] else 0
    positive_dist = log_cells < 60 and x_rows == round(np.exp(log_cells))
    return RelevanceResult(
        variables=table.variables,
        relevance=tuple(classes),
        degree=tuple(degrees),
        markov_boundary=boundary if positive_dist else None,
        minimal_boundary=boundary,
        strictly_positive=bool(positive_dist),
        tol=float(tol),
        boundary_unique=bool(np.count_nonzero(boundaries) == 1),
    )


def relevance_with_importances(table: DiscreteTable, *, tol: float | None = None,
                               max_features: int | None = None) -> dict:
    """Relevance classes of ``table`` beside each variable's K = 1 importance, as JSON.

    The importance of a totally randomized infinite forest (Eqn 3) is zero
    exactly for the irrelevant variables (Louppe et al. 2013, Theorem 3), so
    the two are drawn together.

    Parameters
    ----------
    table : DiscreteTable
    tol : float, optional
        As :func:`relevance`.
    max_features : int, optional
        The most inputs to test (every subset of the others is); beyond it
        ``relevance`` is None and ``message`` says why.

    Returns
    -------
    view : dict
        ``relevance`` (:meth:`RelevanceResult.to_dict` or None), ``importances``
        (list, bits), ``units``, ``exact`` and ``message`` (None, or the sentence).
    """
    from varimp_core.exact.eqn3 import eqn3_importances

    p = table.n_features
    if max_features is not None and p > max_features:
        return {"relevance": None, "exact": bool(table.exact), "message":
                f"Relevance classes test every subset of the other inputs: this data has "
                f"{p:,} inputs, more than the {max_features} this server allows "
                f"(VARIMP_MAX_EXACT_FEATURES). Choose data with fewer inputs; the p-values "
                f"below work for any number."}
    imp = eqn3_importances(table)
    return {"relevance": relevance(table, tol=tol).to_dict(), "exact": bool(table.exact),
            "importances": [float(v) for v in imp.importances], "units": imp.units,
            "message": None}
