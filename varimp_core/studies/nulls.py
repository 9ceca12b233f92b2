"""What importance does a variable get by chance?  Null distributions and their fits.

Three views of the importance an *irrelevant* variable picks up from a finite
sample (Geurts 2016, "irrelevant variables get positive importances"):

* **Plug-in bias.**  Under independence the plug-in mutual information of a
  node with :math:`N_t` samples has mean
  :math:`(|\\mathcal{Y}_t|-1)(|\\mathcal{X}|-1)/(2N_t\\ln 2)`; weighted by
  :math:`p(t) = N_t/N`, every impure node split on the variable adds
  :math:`(|\\mathcal{Y}_t|-1)(|\\mathcal{X}|-1)/(2N\\ln 2)`, whatever its size.
  For K=1 the expected number of such nodes follows from Eqn 3 of Louppe et
  al. (2013): :func:`expected_irrelevant_importance`.
* **Distribution fits.**  :math:`2N\\ln 2\\,\\hat I` is asymptotically
  :math:`\\chi^2`, and an importance is a weighted sum of such terms, which a
  scaled :math:`\\chi^2` approximates (Satterthwaite; Sutera 2013, section
  3.2.1.5 sees :math:`\\chi^2` shapes for irrelevant and Gaussian shapes for
  relevant variables): :func:`~varimp_core.studies.fits.fit_null_distributions`, with the other fits in
  :mod:`varimp_core.studies.fits`.
* **Permutation null** for any data set: permute Y, regrow, repeat:
  :func:`permutation_null`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from varimp_core.api import METHODS
from varimp_core.data.prepare import PreparedData
from varimp_core.exact.information import plugin_bias, popcount
from varimp_core.studies.montecarlo_jobs import JobOptions, as_prepared
from varimp_core.studies.montecarlo import MonteCarloResult
from varimp_core.studies.replicates import (check_int, child_seed, int_seed, root_seed,
                                            seed_record, run_replicates)
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import eqn3_weights, validate_max_depth
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["expected_irrelevant_importance", "plugin_bias_overlay",
           "PermutationNull", "permutation_null", "MAX_BIAS_COST"]

_LN2 = math.log(2.0)
#: Largest 2**p x rows for :func:`expected_irrelevant_importance`.
MAX_BIAS_COST = 2**26


# -- plug-in bias --------------------------------------------------------------
def expected_irrelevant_importance(table: DiscreteTable, n_samples: int, *,
                                   max_depth: int | None = None,
                                   capped: bool = False) -> np.ndarray:
    """First-order importance of each variable *if it were irrelevant*, for K=1.

    For totally randomized trees (K=1) grown on N samples of the distribution
    ``table``, an input :math:`X_m` independent of Y and of the other inputs
    gets on average

    .. math::

        \\mathbb{E}[\\widehat{\\mathrm{Imp}}(X_m)] \\approx
        \\sum_{k=0}^{D-1} \\frac{1}{C_p^k (p-k)}
        \\sum_{B \\in \\mathcal{P}_k(V^{-m})} \\sum_{b}
        \\frac{(|\\mathcal{Y}_b| - 1)(|\\mathcal{X}_m|-1)}{2N\\ln 2},

    with :math:`|\\mathcal{Y}_b|` the number of classes of positive probability
    in the cell :math:`B=b`: the Miller-Madow bias of each plug-in
    :math:`p(b)\\,\\hat I(X_m; Y \\mid B=b)` (the cell's :math:`N_b = p(b)N`
    samples cancel), weighted as in Eqn 3 (Louppe et al. 2013,
    Theorem 1; Proposition 6 for the depth D).  Pure cells add nothing.  For a
    relevant variable the value is only the bias part, not its expectation.

    With ``capped=True`` each cell's term is at most
    :math:`p(b)\\,H(Y \\mid B=b)`, the most information any input can have in
    that cell: the first-order formula assumes many samples per level of
    :math:`X_m` in the cell and overshoots that bound in sparse cells (a
    cell of two rows with |X| = 40 levels), where the plug-in value saturates.

    Parameters
    ----------
    table : DiscreteTable
        The distribution the samples are drawn from (exact, or the data set
        whose bootstrap replicates are studied).
    n_samples : int
        N.
    max_depth : int, optional
    capped : bool, default=False
        Bound each cell's term by :math:`p(b)\\,H(Y \\mid B=b)` of ``table``.

    Returns
    -------
    ndarray of shape (n_features,), in bits.

    Examples
    --------
    XOR with two irrelevant bits: 1/4 + 6/12 + 8/12 = 17/12 root-node biases.

    >>> from varimp_core.problems.registry import get_problem
    >>> t = get_problem("xor:relevant=2,irrelevant=2").exact_table()
    >>> v = expected_irrelevant_importance(t, 500)
    >>> round(float(v[2] * 2 * 500 * math.log(2)), 4)
    1.4167
    """
    if not isinstance(table, DiscreteTable):
        raise ValueError(f"Expected a DiscreteTable, got {type(table).__name__}.")
    N = check_int("n_samples", n_samples, 1)
    p = table.n_features
    depth = validate_max_depth(max_depth, p)
    if (1 << p) * max(table.n_rows, 1) > MAX_BIAS_COST:
        raise ValueError(f"The bias sum visits 2**{p} subsets of {table.n_rows:,} rows, more "
                         f"than the limit of {MAX_BIAS_COST:,}; use fewer variables.")
    keep = table.weight > 0
    X, y, w = table.X[keep], table.y[keep], table.weight[keep] / table.total_weight
    alpha = eqn3_weights(p)
    masks = np.arange(1 << p)
    sizes = popcount(masks)
    ny, levels = table.n_classes, table.n_levels
    # one column per distinct |X_m| - 1: the sum over cells b of each cell's term
    unit = np.unique(levels - 1) / (2 * N * _LN2)
    spread = np.zeros((1 << p, unit.size))

    def visit(cell: np.ndarray, n_cells: int, mask: int, start: int) -> None:
        # cells of B refined one variable at a time, as in subset_entropies
        joint = np.bincount(cell * ny + y, weights=w, minlength=n_cells * ny).reshape(-1, ny)
        term = np.outer(np.count_nonzero(joint, axis=1) - 1, unit)   # Miller-Madow per cell
        if capped:
            pb = joint.sum(axis=1)
            logs = np.log2(np.where(joint > 0, joint, 1.0))
            cap = pb * np.log2(np.where(pb > 0, pb, 1.0)) - (joint * logs).sum(axis=1)
            term = np.minimum(term, np.maximum(cap, 0.0)[:, None])   # p(b) H(Y | B=b)
        spread[mask] = term.sum(axis=0)
        if sizes[mask] + 1 >= depth:
            return
        for j in range(start, p):
            uniq, new = np.unique(cell * int(levels[j]) + X[:, j], return_inverse=True)
            visit(new.ravel(), uniq.size, mask | (1 << j), j + 1)

    visit(np.zeros(len(y), dtype=np.int64), 1, 0, 0)
    weighted = np.where((sizes < depth)[:, None],
                        alpha[np.minimum(sizes, p - 1)][:, None] * spread, 0.0)
    column = np.searchsorted(np.unique(levels - 1), levels - 1)
    return np.array([weighted[(masks >> m) & 1 == 0, column[m]].sum() for m in range(p)])


def _bias_applies(result: MonteCarloResult) -> bool:
    par = result.parameters
    method = par["method"]
    binary = bool(np.all(result.n_levels == 2))
    return (par["max_features"] == 1 and not par.get("bootstrap")
            and (method in ("forest", "exact") or (method == "sklearn-et" and binary)))


def plugin_bias_overlay(result: MonteCarloResult) -> pd.DataFrame:
    """Plug-in bias beside the Monte Carlo means, one row per variable.

    Columns: ``variable``, ``relevant``, ``mean``, ``sem``; ``plugin_bias``, the
    one-node bias :math:`(|\\mathcal{Y}|-1)(|\\mathcal{X}|-1)/(2N\\ln 2)`
    (:func:`varimp_core.exact.information.plugin_bias`); ``expected``, the K=1
    prediction of :func:`expected_irrelevant_importance` on the population
    (NaN for known relevant variables, when K > 1, with the bootstrap, or
    without a known population);
    ``z`` = (mean - expected) / sem; ``nodes`` = mean / plugin_bias, the number
    of root-sized nodes' worth of bias.

    For bootstrap replicates of uploaded data the population is the table
    itself, whose own plug-in bias is already in ``result.exact``: there
    ``mean - exact`` is what compares with ``expected``.
    """
    N = result.parameters["n_samples"]
    single = plugin_bias(result.n_levels, result.n_classes, N)
    expected = np.full(len(result.variables), np.nan)
    if result.population is not None and _bias_applies(result):
        try:
            expected = expected_irrelevant_importance(result.population, N,
                                                      max_depth=result.parameters["max_depth"])
        except ValueError:
            pass
    relevant = [None if result.relevant is None else v in result.relevant
                for v in result.variables]
    expected[[r is True for r in relevant]] = np.nan   # the bias formula is for irrelevant ones
    sem = result.sem
    return pd.DataFrame({
        "variable": list(result.variables), "relevant": relevant, "mean": result.mean,
        "sem": sem, "plugin_bias": single, "expected": expected,
        "z": np.divide(result.mean - expected, sem, out=np.full_like(sem, np.nan), where=sem > 0),
        "nodes": result.mean / single,
    })

# -- permutation null ----------------------------------------------------------
@dataclass(frozen=True)
class PermutationNull:
    """Importances on the data and on R copies with Y permuted.

    Parameters
    ----------
    variables : tuple of str
    observed : ndarray of shape (n_features,)
    null : ndarray of shape (n_permutations, n_features)
    parameters : dict
    source : str
    n_requested : int
    cancelled : bool
    elapsed : float
    """

    variables: tuple[str, ...]
    observed: np.ndarray
    null: np.ndarray
    parameters: dict = field(default_factory=dict)
    source: str = ""
    n_requested: int = 0
    cancelled: bool = False
    elapsed: float = 0.0

    @property
    def n_permutations(self) -> int:
        return int(self.null.shape[0])

    @property
    def p_values(self) -> np.ndarray:
        """:math:`(1 + \\#\\{\\text{null} \\ge \\text{observed}\\}) / (R + 1)` per variable
        (NaN before the first permutation: no p-value yet)."""
        if not self.n_permutations:
            return np.full(len(self.variables), np.nan)
        return (1 + (self.null >= self.observed).sum(axis=0)) / (self.n_permutations + 1)

    def summary(self) -> pd.DataFrame:
        """One row per variable: ``variable``, ``observed``, the null's ``mean`` and ``std``
        (ddof=1; NaN with fewer permutations than they need), ``q95``, ``p_value``, ``R``."""
        R, nan = self.n_permutations, np.full(len(self.variables), np.nan)
        return pd.DataFrame({
            "variable": list(self.variables), "observed": self.observed,
            "mean": self.null.mean(axis=0) if R else nan,
            "std": self.null.std(axis=0, ddof=1) if R > 1 else nan,
            "q95": self.null_quantile(0.95), "p_value": self.p_values, "R": R})

    def null_quantile(self, q: float = 0.95) -> np.ndarray:
        if not self.n_permutations:
            return np.full(len(self.variables), np.nan)
        return np.quantile(self.null, q, axis=0)

    @property
    def above_null(self) -> np.ndarray:
        """True where the observed importance exceeds the 95% null quantile."""
        return self.observed > self.null_quantile(0.95)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"variable": list(self.variables), "observed": self.observed,
                             "null_mean": self.null.mean(axis=0) if self.n_permutations else np.nan,
                             "null_q95": self.null_quantile(0.95), "p_value": self.p_values,
                             "above_null_q95": self.above_null,
                             "n_permutations": self.n_permutations})

    def null_frame(self) -> pd.DataFrame:
        """Long format: one row per (permutation, variable) with ``importance`` and ``observed``.

        The permutation is in column ``replicate``, as in
        :meth:`MonteCarloResult.replicates_frame`.
        """
        R, p = self.null.shape
        return pd.DataFrame({"replicate": np.repeat(np.arange(R), p),
                             "variable": list(self.variables) * R,
                             "importance": self.null.ravel(),
                             "observed": np.tile(self.observed, R)})

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PermutationNull":
        """The PermutationNull that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


@dataclass(frozen=True)
class _PermutationJob:
    data: PreparedData
    X: np.ndarray | None      # per-sample codes (multiway methods)
    y: np.ndarray | None
    options: JobOptions

    def __call__(self, seed: np.random.SeedSequence) -> np.ndarray:
        rng = np.random.default_rng(child_seed(seed, 0))
        d = self.data
        if self.X is None or (self.options.criterion == "squared_error"
                               and d.y is not None and d.X_codes is not None):
            # the variance reads Y's own numbers beside X_codes (numeric_target_table), not
            # the table's binned Y: permuting only the table left every null value equal
            # to the observed one (p = 1 for every input)
            data = replace(d, y=d.y[rng.permutation(d.y.shape[0])], y_codes=None)
        else:
            t = d.table
            table = DiscreteTable.from_codes(self.X, self.y[rng.permutation(self.y.shape[0])],
                                             variables=t.variables, target=t.target,
                                             x_labels=t.x_labels, y_labels=t.y_labels)
            data = replace(d, table=table, y_codes=None)
        return self.options.importances(data, int_seed(child_seed(seed, 1)))


def permutation_null(data, *, n_permutations: int = 100, method: str = "forest",
                     n_estimators: int = 100, max_features: int = 1,
                     max_depth: int | None = None, bootstrap: bool | None = None,
                     k_semantics: str = "id3", criterion: str = "entropy",
                     min_samples_leaf: int = 1, random_state: int | None = 0, n_jobs: int = 1,
                     chunk_size: int | None = None, progress=None,
                     should_stop=None, partial=None,
                     partial_every: float = 0.0) -> PermutationNull:
    """Permutation null of every variable's importance: regrow with Y permuted, R times.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
        A sample (uploaded data or a drawn problem sample); not an exact distribution.
    n_permutations : int, default=100
        R.
    method, n_estimators, max_features, max_depth, bootstrap, k_semantics, criterion
        As in :func:`varimp_core.api.compute_importances`.
    min_samples_leaf : int, default=1
        scikit-learn forests only.
    random_state : int or None, default=0
        Permutation r uses child r of ``SeedSequence(random_state)``.
    n_jobs, chunk_size, progress, should_stop
        As in :func:`varimp_core.studies.montecarlo.monte_carlo`; stopping returns the
        permutations done with ``cancelled=True``.
    partial : callable, optional
        ``partial(null)``: the :class:`PermutationNull` of the permutations done so far:
        first with none (the observed importances alone, drawn before the first
        permutation is grown), then after each chunk but the last (the final result does
        not depend on it).
    partial_every : float, default=0.0
        Seconds at least between two partial results after the first permutations (the
        others are not built).

    Returns
    -------
    PermutationNull
        ``p_values`` :math:`= (1 + \\#\\{\\text{null} \\ge \\text{obs}\\})/(R+1)` and
        ``above_null`` (observed above the 95% null quantile).

    Notes
    -----
    Permuting Y makes every input irrelevant *and* keeps Y impure in every
    cell, so an irrelevant input of the real data, whose cells are often made
    pure by the relevant inputs, usually scores below its permutation null
    (a large p-value): the test is conservative for irrelevant variables.
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"Unknown method {method!r}; choose one of: {', '.join(METHODS)}.")
    R = check_int("n_permutations", n_permutations, 1)
    d = as_prepared(data)
    if d.table.exact:
        raise ValueError("A permutation null needs a sample, and this table is an exact "
                         "distribution; draw a sample (n_samples) first.")
    options = JobOptions(method, check_int("n_estimators", n_estimators, 1),
                       check_int("max_features", max_features, 1),
                       check_int("max_depth", max_depth, 1, allow_none=True), bootstrap,
                       k_semantics, criterion, check_int("min_samples_leaf", min_samples_leaf, 1))
    # scikit-learn and its exact limits (exact-rf, exact-et) read X_numeric and y, not the table
    if (method.startswith("sklearn") or method in ("exact-rf", "exact-et")) \
            and d.X_numeric is not None:
        X = y = None
    else:
        X, y = d.table.expand()
        if method.startswith("sklearn"):
            d = replace(d, X_numeric=X.astype(float), y=y, X_codes=None, y_codes=None)
            X = y = None
    root = root_seed(random_state)
    observed = options.importances(d, int_seed(root))[:-1]
    p = len(d.variables)

    def build(rows, cancelled: bool) -> PermutationNull:
        return PermutationNull(
            variables=tuple(d.variables), observed=observed,
            null=rows.reshape(-1, p + 1)[:, :p],
            parameters={"method": method, "n_estimators": options.n_estimators,
                        "max_features": options.max_features, "max_depth": options.max_depth,
                        "bootstrap": bootstrap, "k_semantics": k_semantics,
                        "criterion": criterion, "min_samples_leaf": options.min_samples_leaf,
                        "random_state": seed_record(root)},
            source=d.source, n_requested=R, cancelled=cancelled,
            elapsed=time.perf_counter() - t0)

    if partial is not None:
        partial(build(np.empty((0, p + 1)), True))
    rows, cancelled = run_replicates(
        _PermutationJob(d, X, y, options), [child_seed(root, r) for r in range(R)],
        n_jobs=n_jobs, chunk_size=chunk_size, progress=progress, should_stop=should_stop,
        partial_every=partial_every,
        partial=None if partial is None else (lambda done: partial(build(done, True))))
    return build(rows, cancelled)
