"""Chance levels of exact importances on a sample: what an irrelevant variable would get.

On a sample (an upload, or a built-in problem drawn with ``n_samples``) the
exact method computes the infinite forest of the *empirical* distribution,
whose plug-in informations are biased upwards: an irrelevant variable with
many levels gets a visible bar (Strobl et al. 2007; Li et al. 2019).
:func:`chance_levels` puts two yardsticks beside each bar:

* the **analytic chance level** of
  :func:`~varimp_core.studies.nulls.expected_irrelevant_importance` (Miller-Madow
  per cell, summed with Eqn 3's weights, each cell capped by what it can hold);
* the **permutation band**: the exact method again on R copies of the table
  with Y permuted (:func:`~varimp_core.studies.nulls.permutation_null`), its
  middle 95% per variable and the p-value
  :math:`(1 + \\#\\{\\text{null} \\ge \\text{observed}\\})/(R+1)`.

It also says when the plug-in distribution is nearly deterministic (almost
every row has its own inputs), where no in-sample importance is honest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from varimp_core.api import compute_importances
from varimp_core.data.prepare import PreparedData
from varimp_core.exact.information import joint_information, output_entropy
from varimp_core.exact.lattice import lattice_cost
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict
from varimp_core.studies.montecarlo_jobs import as_prepared
from varimp_core.studies.nulls import (PermutationNull, expected_irrelevant_importance,
                                       permutation_null)

__all__ = ["ChanceLevels", "chance_levels", "band_permutations", "BAND_PERMUTATIONS",
           "MIN_BAND_PERMUTATIONS", "BAND_COST", "BAND_SECONDS", "NEAR_DETERMINISTIC_SHARE"]

#: Permutations of the band when the table is small enough.
BAND_PERMUTATIONS = 99
#: Fewer than this and no band is drawn (its p-values could not go below 0.05).
MIN_BAND_PERMUTATIONS = 19
#: Seconds one exact computation takes, ``(fixed, per work unit)`` with work units of
#: :func:`~varimp_core.exact.lattice.lattice_cost`, measured on this project's 2-core
#: machine (upper ends): Eqn 3 (K = 1, entropy, id3) and the any-K recursion.
BAND_COST = {"eqn3": (0.01, 80e-9), "recursion": (0.08, 2e-6)}
#: Seconds of one core the band may take.
BAND_SECONDS = 4.0
#: Distinct input rows at or above this share of N make the plug-in nearly deterministic.
NEAR_DETERMINISTIC_SHARE = 0.8


def _uses_eqn3(max_features: int, criterion: str, k_semantics: str) -> bool:
    return max_features == 1 and criterion == "entropy" and k_semantics == "id3"


def band_permutations(table, *, max_features: int = 1, max_depth: int | None = None,
                      criterion: str = "entropy", k_semantics: str = "id3") -> int:
    """R of the permutation band: :data:`BAND_PERMUTATIONS`, fewer on large tables, or 0.

    The size rule: R is the largest number, at most 99, whose R exact
    computations take at most :data:`BAND_SECONDS` by the cost model
    :data:`BAND_COST`, a fixed time plus a time per unit of
    :func:`~varimp_core.exact.lattice.lattice_cost` (the smaller of its dense
    and sparse estimates, the sparse one for the rows a permuted table can have:
    at most N and at most |Y| per distinct input row); below
    :data:`MIN_BAND_PERMUTATIONS` it is 0 (no band).

    Examples
    --------
    >>> from varimp_core.api import load_data
    >>> led = load_data(problem="led", n_samples=500).table
    >>> band_permutations(led), band_permutations(led, max_features=3)
    (99, 23)
    """
    depth = table.n_features if max_depth is None else min(max_depth, table.n_features)
    dense, sparse = lattice_cost(table, depth)
    # a permuted Y splits rows that shared their inputs: at most |Y| rows per input row
    inputs = np.unique(table.X, axis=0).shape[0]
    after = min(round(table.total_weight), inputs * table.n_classes)
    work = max(min(dense, sparse * after / max(table.n_rows, 1)), 1.0)
    fixed, unit = BAND_COST["eqn3" if _uses_eqn3(max_features, criterion, k_semantics)
                            else "recursion"]
    r = min(BAND_PERMUTATIONS, int(BAND_SECONDS // (fixed + unit * work)))
    return r if r >= MIN_BAND_PERMUTATIONS else 0


def _names(variables, mask) -> str:
    return ", ".join(v for v, m in zip(variables, mask) if m)


@dataclass(frozen=True)
class ChanceLevels:
    """Chance levels of each variable's exact importance on a sample.

    Parameters
    ----------
    variables : tuple of str
    n_levels : ndarray of shape (n_features,)
        Levels of each input.
    n_samples : int
        N, the rows of the sample.
    observed : ndarray of shape (n_features,)
        The exact importances on the sample (plug-in).
    analytic : ndarray of shape (n_features,) or None
        The analytic chance level (bits); None where it does not apply
        (``analytic_note`` says why).
    permutation : PermutationNull or None
        The exact importances on R copies with Y permuted; None when the table
        is too large for the size rule (``band_note`` says why).
    distinct_inputs : int
        Rows of the sample with distinct inputs.
    information, output_entropy : float
        Plug-in :math:`I(X;Y)` and :math:`H(Y)` in bits.
    parameters : dict
        ``max_features``, ``max_depth``, ``k_semantics``, ``criterion``,
        ``random_state`` of the exact method.
    units : str
    analytic_note, band_note : str
    elapsed : float
    """

    variables: tuple[str, ...]
    n_levels: np.ndarray
    n_samples: int
    observed: np.ndarray
    analytic: np.ndarray | None
    permutation: PermutationNull | None
    distinct_inputs: int
    information: float
    output_entropy: float
    parameters: dict = field(default_factory=dict)
    units: str = "bits"
    analytic_note: str = ""
    band_note: str = ""
    elapsed: float = 0.0

    @property
    def n_permutations(self) -> int:
        return 0 if self.permutation is None else self.permutation.n_permutations

    @property
    def p_values(self) -> np.ndarray | None:
        """:math:`(1 + \\#\\{\\text{null} \\ge \\text{observed}\\}) / (R + 1)` per variable."""
        return None if not self.n_permutations else self.permutation.p_values

    @property
    def band(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The 2.5% and 97.5% quantiles of the permutation null, per variable."""
        if not self.n_permutations:
            return None
        return self.permutation.null_quantile(0.025), self.permutation.null_quantile(0.975)

    @property
    def near_deterministic(self) -> bool:
        """At least :data:`NEAR_DETERMINISTIC_SHARE` of the rows have inputs of their own."""
        return self.distinct_inputs >= NEAR_DETERMINISTIC_SHARE * self.n_samples

    @property
    def at_chance(self) -> np.ndarray:
        """True where the importance is at or below its analytic chance level or inside the band
        (p-value above 0.05)."""
        out = np.zeros(len(self.variables), dtype=bool)
        if self.analytic is not None:
            out |= self.observed <= self.analytic
        if self.p_values is not None:
            out |= self.p_values > 0.05
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per variable: ``variable``, ``levels``, ``importance``, ``chance``,
        ``null_low``, ``null_high``, ``p_value`` (NaN where not computed)."""
        p = len(self.variables)
        nan = np.full(p, np.nan)
        low, high = self.band or (nan, nan)
        return pd.DataFrame({
            "variable": list(self.variables), "levels": self.n_levels,
            "importance": self.observed,
            "chance": nan if self.analytic is None else self.analytic,
            "null_low": low, "null_high": high,
            "p_value": nan if self.p_values is None else self.p_values})

    def table_columns(self) -> list[tuple[str, str]]:
        """``(id, name)`` of the columns :meth:`table_rows` fills, for a page's table."""
        cols = []
        if self.analytic is not None:
            cols.append(("chance", f"Chance level ({self.units})"))
        if self.n_permutations:
            cols += [("null_high", f"Null 97.5% ({self.units})"), ("p_value", "p-value")]
        return cols

    def table_rows(self) -> list[dict]:
        """One dict per variable with the :meth:`table_columns` values (floats)."""
        frame = self.to_frame()
        ids = [c for c, _ in self.table_columns()]
        return [{c: float(row[c]) for c in ids} for _, row in frame.iterrows()]

    def sentences(self) -> list[str]:
        """What the marks mean, how they were computed, and what they say."""
        N, R = self.n_samples, self.n_permutations
        out = []
        if self.analytic is not None:
            out.append(
                f"Red dashes: the chance level, the importance an irrelevant variable with the "
                f"same number of levels gets on average from these N = {N:,} rows (the "
                "Miller\u2013Madow bias (|Y_b|\u22121)(|X|\u22121)/(2N ln 2) of each plug-in "
                "term I(X;Y|B=b), each cell b capped at p(b)H(Y|B=b), summed with Eqn 3's "
                "weights 1/(C(p,k)(p\u2212k))).")
        else:
            out.append(f"No analytic chance level: {self.analytic_note}")
        if R:
            out.append(
                f"Grey whiskers: the middle 95% of the exact importances over R = {R} copies of "
                "the data with Y permuted, and in the table the p-value (1 + #{null \u2265 "
                f"observed}})/(R + 1). R is {BAND_PERMUTATIONS} on small tables and fewer on "
                "larger ones so that the band takes a few seconds; below "
                f"{MIN_BAND_PERMUTATIONS} no band is drawn.")
        else:
            out.append(f"No permutation band: {self.band_note}")
        chance = self.at_chance
        if chance.any():
            out.append(f"Not distinguishable from chance: {_names(self.variables, chance)}.")
        if self.near_deterministic:
            out.append(
                f"{self.distinct_inputs:,} of the N = {N:,} rows have inputs of their own, so the "
                "plug-in distribution is nearly deterministic: I(X;Y) = "
                f"{self.information:.3f} bits of H(Y) = {self.output_entropy:.3f} bits, shared "
                "out among the inputs whether they matter or not. Out-of-sample measures are "
                "honest here: MDI-oob and the permutation importances on the Measures page.")
        return out

    def to_dict(self) -> dict:
        """Plain JSON types (:mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ChanceLevels":
        """The ChanceLevels that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def chance_levels(data, *, max_features: int = 1, max_depth: int | None = None,
                  k_semantics: str = "id3", criterion: str = "entropy",
                  n_permutations: int | None = None, random_state: int = 0, n_jobs: int = 1,
                  observed=None, progress=None, should_stop=None) -> ChanceLevels:
    """Chance levels, permutation band and p-values of the exact importances on a sample.

    Parameters
    ----------
    data : PreparedData or DiscreteTable
        A sample (an upload or a drawn problem), not an exact distribution.
    max_features, max_depth, k_semantics, criterion
        The exact method's settings, as in :func:`varimp_core.api.compute_importances`.
    n_permutations : int, optional
        R; by default :func:`band_permutations` (99, fewer on large tables, 0 for none).
    random_state : int, default=0
        Seeds the permutations.
    observed : array-like of shape (n_features,), optional
        The exact importances, when already computed (used when no band is drawn;
        the band computes them again with its null).
    n_jobs, progress, should_stop
        As in :func:`~varimp_core.studies.nulls.permutation_null`.

    Returns
    -------
    ChanceLevels

    Notes
    -----
    The analytic level is
    :func:`~varimp_core.studies.nulls.expected_irrelevant_importance` with
    ``capped=True``: for :math:`X_m`,

    .. math::

        \\sum_{k=0}^{D-1} \\frac{1}{C_p^k (p-k)} \\sum_{B \\in \\mathcal{P}_k(V^{-m})}
        \\sum_b \\min\\Big(\\frac{(|\\mathcal{Y}_b|-1)(|\\mathcal{X}_m|-1)}{2N\\ln 2},
        \\; p(b)\\,H(Y \\mid B=b)\\Big),

    the Miller-Madow bias of each plug-in term :math:`p(b)\\hat I(X_m;Y|B=b)`
    between independent variables (Goebel et al. 2005: :math:`2N\\ln 2\\,\\hat I`
    is asymptotically :math:`\\chi^2` with :math:`(|\\mathcal{Y}|-1)(|\\mathcal{X}|-1)`
    degrees of freedom), summed with Eqn 3's weights (Louppe et al. 2013;
    Proposition 6 for the depth D).  It applies to totally randomized trees
    (K = 1, entropy, id3 semantics at any depth; scikit-learn's semantics at
    full depth give the same importances).

    The band permutes Y, which makes every input irrelevant *and* keeps Y
    impure in every cell: it is the null of "no input matters", so an
    irrelevant input beside strong ones usually scores below it (a
    conservative test), while the analytic level keeps the other inputs' cells.

    Examples
    --------
    An irrelevant 20-level column beside a relevant bit: its importance is
    near its chance level and its p-value is large.

    >>> import numpy as np
    >>> from varimp_core.data.table import DiscreteTable
    >>> rng = np.random.default_rng(0)
    >>> x1, x2 = rng.integers(0, 2, 300), rng.integers(0, 20, 300)
    >>> y = np.where(rng.random(300) < 0.8, x1, 1 - x1)
    >>> t = DiscreteTable.from_codes(np.column_stack([x1, x2]), y, variables=("x1", "x2"),
    ...                              x_labels=(("0", "1"), tuple(map(str, range(20)))),
    ...                              y_labels=("0", "1"))
    >>> c = chance_levels(t, n_permutations=49)
    >>> bool(c.p_values[0] < 0.05), bool(c.p_values[1] > 0.05), bool(c.at_chance[1])
    (True, True, True)
    """
    t0 = time.perf_counter()
    d = as_prepared(data) if not isinstance(data, PreparedData) else data
    table = d.table
    if table.exact:
        raise ValueError("Chance levels are for samples, and this table is an exact "
                         "distribution: its importances have no finite-sample bias.")
    N = int(round(table.total_weight))
    analytic, analytic_note = None, ""
    if not (max_features == 1 and criterion == "entropy"
            and (k_semantics == "id3" or max_depth is None)):
        analytic_note = ("the formula is for totally randomized trees (K = 1) with the "
                         "entropy, so only the permutation band applies to these settings.")
    else:
        try:
            analytic = expected_irrelevant_importance(table, N, max_depth=max_depth,
                                                      capped=True)
        except ValueError as exc:
            analytic_note = str(exc)
    R = band_permutations(table, max_features=max_features, max_depth=max_depth,
                          criterion=criterion, k_semantics=k_semantics) \
        if n_permutations is None else n_permutations
    permutation, band_note = None, ""
    if R:
        permutation = permutation_null(d, n_permutations=R, method="exact",
                                       max_features=max_features, max_depth=max_depth,
                                       k_semantics=k_semantics, criterion=criterion,
                                       random_state=random_state, n_jobs=n_jobs,
                                       progress=progress, should_stop=should_stop)
        observed = permutation.observed
    else:
        band_note = (f"this table is too large for {MIN_BAND_PERMUTATIONS} exact computations "
                     "in a few seconds (fewer inputs, levels or rows make it possible).")
        observed = observed if observed is not None else compute_importances(
            d, method="exact", max_features=max_features,
            max_depth=max_depth, k_semantics=k_semantics, criterion=criterion).importances
    return ChanceLevels(
        variables=tuple(table.variables), n_levels=np.asarray(table.n_levels), n_samples=N,
        observed=np.asarray(observed, dtype=float), analytic=analytic, permutation=permutation,
        distinct_inputs=int(np.unique(table.X, axis=0).shape[0]),
        information=float(joint_information(table)), output_entropy=float(output_entropy(table)),
        parameters={"max_features": max_features, "max_depth": max_depth,
                    "k_semantics": k_semantics, "criterion": criterion,
                    "random_state": random_state},
        units="gini" if criterion == "gini" else "bits", analytic_note=analytic_note,
        band_note=band_note, elapsed=time.perf_counter() - t0)
