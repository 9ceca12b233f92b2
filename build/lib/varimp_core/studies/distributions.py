"""Each variable's importance as a random variable: R replicates, fitted laws, plug-in bias.

One forest on one data set gives one number per variable; another data set,
or other trees, give another.  Sutera (2013, ch. 3) looks at the importance
over R replicate data sets as a random variable: its histogram against the
exact value, a scaled :math:`\\chi^2` law for irrelevant variables and a
normal law for relevant ones (:func:`varimp_core.studies.fits.fit_laws`), and
the plug-in bias that lifts irrelevant variables above zero (Geurts 2016;
:func:`varimp_core.studies.nulls.plugin_bias_overlay`).
:func:`importance_distribution` runs that study in one call, on fresh
samples of a problem or bootstrap replicates of a table
(:func:`varimp_core.studies.montecarlo.monte_carlo`), or on the table with
its target permuted (:func:`varimp_core.studies.nulls.permutation_null`):
the numbers of the dashboard's Distributions page.

References
----------
.. [1] A. Sutera, "Characterization of variable importance measures derived
   from decision trees", Master's thesis, University of Liege, 2013, ch. 3.
.. [2] P. Geurts, "Random forests variable importances: towards a better
   understanding and large-scale feature selection", CIRM, Feb 2016 (slides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pandas as pd

from varimp_core.problems.registry import Problem
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict
from varimp_core.studies.fits import fit_laws
from varimp_core.studies.montecarlo import MonteCarloResult, monte_carlo
from varimp_core.studies.nulls import PermutationNull, permutation_null, plugin_bias_overlay

__all__ = ["MODES", "ImportanceDistribution", "importance_distribution"]

#: The replicates of a study: fresh samples of a problem, bootstrap replicates of a table,
#: or the table with its target permuted.
MODES = ("samples", "bootstrap", "permutation")


@dataclass(frozen=True)
class ImportanceDistribution:
    """Result of :func:`importance_distribution`.

    Attributes
    ----------
    result : MonteCarloResult or PermutationNull
        The importances over the replicates, or the null and the observed values.
    fits : pandas.DataFrame
        Both laws fitted to the first variables' values (:func:`fit_laws`).
    overlay : pandas.DataFrame or None
        The plug-in bias beside the means (:func:`plugin_bias_overlay`); None for
        a permutation null or a run stopped before its first replicate.
    mode : {"samples", "bootstrap", "permutation"}
    n_samples : int or None
        N of each replicate data set as asked (None: the table's own size).
    partial : bool
        The run was stopped early: fewer replicates than asked.
    """

    result: MonteCarloResult | PermutationNull
    fits: pd.DataFrame
    overlay: pd.DataFrame | None
    mode: str
    n_samples: int | None = None
    partial: bool = False

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ImportanceDistribution":
        """The ImportanceDistribution that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, dict(d))


def importance_distribution(source, *, mode: str = "samples", n_replicates: int = 100,
                            n_samples: int | None = None, method: str = "forest",
                            n_estimators: int = 100, max_features: int = 1,
                            max_depth: int | None = None, random_state: int | None = 0,
                            max_fitted: int | None = None, chunk_size: int | None = None,
                            mapper: Callable | None = None,
                            progress: Callable[[int, int], None] | None = None,
                            should_stop: Callable[[], bool] | None = None
                            ) -> ImportanceDistribution:
    """Grow a forest on each of R replicates; fit both laws and the plug-in bias to the values.

    Parameters
    ----------
    source : str, Problem, PreparedData or DiscreteTable
        A problem (spec) for ``mode="samples"``, else a sample (not an exact
        distribution: draw N rows of it first).
    mode : {"samples", "bootstrap", "permutation"}, default="samples"
        R fresh samples of N rows of the problem, R bootstrap replicates of the
        table (N rows each, default its size), or R permutations of its target.
    n_replicates : int, default=100
        R.
    n_samples : int, optional
        N (not used by a permutation null, which runs on the table as it is).
    method, n_estimators, max_features, max_depth
        As in :func:`varimp_core.api.compute_importances` (T, K, depth).
    random_state : int or None, default=0
        Replicate r is seeded by child r of ``SeedSequence(random_state)``.
    max_fitted : int, optional
        Fit the laws to the first ``max_fitted`` variables only (each fit runs a
        Kolmogorov-Smirnov test); default all.
    chunk_size, mapper, progress, should_stop
        As in :func:`monte_carlo` (a permutation null takes no ``mapper``).

    Returns
    -------
    ImportanceDistribution

    Raises
    ------
    ValueError
        An unknown ``mode``, or a source that does not fit it.

    Examples
    --------
    >>> d = importance_distribution("xor:relevant=2,irrelevant=2", n_replicates=20,
    ...                             n_samples=300, n_estimators=10)
    >>> d.result.replicates.shape, d.fits["distribution"].tolist()[:2]
    ((20, 4), ['chi2', 'normal'])
    >>> bool((d.overlay["expected"][2:] > 0).all())   # the bias of the irrelevant bits
    True
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}.")
    if (mode == "samples") != isinstance(source, (str, Problem)):
        raise ValueError("Fresh samples need a problem (a spec); bootstrap replicates and a "
                         "permutation null need a table.")
    forest = dict(method=method, n_estimators=n_estimators, max_features=max_features,
                  max_depth=max_depth, random_state=random_state, chunk_size=chunk_size,
                  progress=progress, should_stop=should_stop)
    if mode == "permutation":
        result = permutation_null(source, n_permutations=n_replicates, **forest)
        samples, relevance, overlay = result.null, [None] * len(result.variables), None
    else:
        result = monte_carlo(source, n_replicates=n_replicates, n_samples=n_samples,
                             mapper=mapper, **forest)
        samples = result.replicates
        relevance = [None if result.relevant is None else v in result.relevant
                     for v in result.variables]
        overlay = plugin_bias_overlay(result) if result.n_replicates else None
    first = slice(0, max_fitted)
    fits = fit_laws(samples[:, first], result.variables[first], relevant=relevance[first])
    return ImportanceDistribution(result, fits, overlay, mode, n_samples, bool(result.cancelled))
