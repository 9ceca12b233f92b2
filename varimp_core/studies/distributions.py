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

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from varimp_core.problems.registry import Problem
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict
from varimp_core.studies.fits import density_curves, fit_laws
from varimp_core.studies.montecarlo import (SWEEP_PARAMETERS, MonteCarloResult,
                                            default_sweep_values, monte_carlo,
                                            parameter_label, parse_sweep_values)
from varimp_core.studies.nulls import PermutationNull, permutation_null, plugin_bias_overlay

__all__ = ["MODES", "MAX_FITTED", "MAX_PANELS", "MAX_VIOLINS", "HistogramPanels", "samples_of",
           "histogram_edges", "histogram_panels", "ImportanceDistribution",
           "importance_distribution", "MODE_LABELS", "replicate_rows", "sweep_refusal",
           "check_sweep", "check_tree_budget", "sweep_trees", "link_sweep_values"]

#: The replicates of a study: fresh samples of a problem, bootstrap replicates of a table,
#: or the table with its target permuted.
MODES = ("samples", "bootstrap", "permutation")
#: Each kind of replicates, in words.
MODE_LABELS = {"samples": "Fresh samples of the problem",
               "bootstrap": "Bootstrap replicates of the data",
               "permutation": "Permutation null (Y shuffled)"}
#: Variables that get fitted laws on the dashboard (the first ones): each fit runs a KS test.
MAX_FITTED = 60
#: Histogram panels drawn at most (the first variables); violins go further.
MAX_PANELS = 16
#: Violins drawn at most.
MAX_VIOLINS = 60


def samples_of(result: MonteCarloResult | PermutationNull) -> np.ndarray:
    """The values of shape (R, p) a study looks at: the replicates, or the null importances."""
    return np.asarray(result.null if isinstance(result, PermutationNull) else result.replicates,
                      dtype=float)


def histogram_edges(x) -> np.ndarray:
    """Equal-width bin edges of ``x``, with its maximum strictly inside the last bin.

    :math:`\\lceil\\sqrt{R}\\rceil` bins for R values (the square-root rule),
    at least 5 and at most 40, widened by a relative :math:`10^{-9}` so that
    the largest value falls inside the last bin, as plotly's half-open bins
    need.  Constant values get one bin centred on them.

    Parameters
    ----------
    x : array-like of shape (R,)
        At least one value.

    Returns
    -------
    ndarray of shape (n_bins + 1,)

    Examples
    --------
    >>> histogram_edges([0.0, 0.0, 0.0]).size, histogram_edges(np.arange(100.0)).size
    (2, 11)
    """
    x = np.asarray(x, dtype=float)
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= 1e-12 * max(1.0, abs(hi)):
        half = max(abs(hi) * 1e-3, 1e-6)
        lo, hi, n = lo - half, hi + half, 1
    else:
        n = int(np.clip(math.ceil(math.sqrt(x.size)), 5, 40))
    size = (hi - lo) / n * (1 + 1e-9)
    return lo + size * np.arange(n + 1)


@dataclass(frozen=True)
class HistogramPanels:
    """What the histogram view of a study draws: each shown variable's bins and fitted densities.

    Attributes
    ----------
    bins : pandas.DataFrame
        One row per bin of each shown variable, in the order shown: ``variable``,
        ``left``, ``right`` (the bin is :math:`[\\text{left}, \\text{right})`),
        ``count`` (values in the bin) and ``density`` (:math:`\\text{count} /
        (R\\,(\\text{right} - \\text{left}))`, so that the bars' area is 1).
    curves : pandas.DataFrame
        The fitted laws' densities of the shown variables
        (:func:`varimp_core.studies.fits.density_curves`).
    """

    bins: pd.DataFrame
    curves: pd.DataFrame

    @property
    def variables(self) -> list[str]:
        """The shown variables, in order."""
        return list(dict.fromkeys(self.bins["variable"]))

    def xbins(self, variable: str) -> dict:
        """``start``, ``end`` and ``size`` of ``variable``'s equal-width bins."""
        b = self.bins[self.bins["variable"] == variable]
        return dict(start=float(b["left"].iloc[0]), end=float(b["right"].iloc[-1]),
                    size=float(b["right"].iloc[0] - b["left"].iloc[0]))

    def peak(self, variable: str) -> float:
        """The highest density drawn for ``variable``: its tallest bar or fitted curve."""
        heights = [*self.bins.loc[self.bins["variable"] == variable, "density"],
                   *self.curves.loc[self.curves["variable"] == variable, "density"]]
        finite = [h for h in heights if np.isfinite(h)]
        return float(max(finite)) if finite else 1.0

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "HistogramPanels":
        """The HistogramPanels that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, dict(d))


def histogram_panels(result: MonteCarloResult | PermutationNull,
                     fits: pd.DataFrame | None = None, *, max_panels: int = MAX_PANELS,
                     n_points: int = 200) -> HistogramPanels:
    """Bin the first variables' values and evaluate their fitted laws, for the histogram view.

    Parameters
    ----------
    result : MonteCarloResult or PermutationNull
        The replicates, or the null importances, of each variable.
    fits : DataFrame, optional
        Fitted laws (:func:`~varimp_core.studies.fits.fit_laws`); the rows of the
        shown variables become density curves.  None: no curve.
    max_panels : int, default=MAX_PANELS
        Variables shown (the first ones).
    n_points : int, default=200
        Grid points of each density curve.

    Returns
    -------
    HistogramPanels
        Empty frames when no replicate finished.

    Examples
    --------
    >>> mc = monte_carlo("xor", n_replicates=25, n_samples=100, n_estimators=2)
    >>> panels = histogram_panels(mc)
    >>> panels.variables, int(panels.bins["count"].sum())
    (['X1', 'X2'], 50)
    """
    values, variables = samples_of(result), list(result.variables)
    shown = variables[:max(1, int(max_panels))] if values.shape[0] else []
    frames = []
    for v in shown:
        x = values[:, variables.index(v)]
        edges = histogram_edges(x)
        counts, _ = np.histogram(x, bins=edges)
        frames.append(pd.DataFrame({"variable": v, "left": edges[:-1], "right": edges[1:],
                                    "count": counts,
                                    "density": counts / (x.size * np.diff(edges))}))
    bins = pd.concat(frames, ignore_index=True) if frames else \
        pd.DataFrame(columns=["variable", "left", "right", "count", "density"])
    chosen = pd.DataFrame() if fits is None or not len(fits) or not shown else \
        fits[fits["variable"].isin(shown)]
    curves = density_curves(chosen, values, variables, n_points=n_points)
    return HistogramPanels(bins, curves)


@dataclass(frozen=True)
class ImportanceDistribution:
    """Result of :func:`importance_distribution`.

    Attributes
    ----------
    result : MonteCarloResult or PermutationNull
        The importances over the replicates, or the null and the observed values.
    fits : pandas.DataFrame
        Both laws fitted to the first variables' values (:func:`fit_laws`).
    panels : HistogramPanels
        The first variables' histogram bins and fitted densities (:func:`histogram_panels`).
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
    panels: HistogramPanels
    overlay: pd.DataFrame | None
    mode: str
    n_samples: int | None = None
    partial: bool = False

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    def lean_dict(self, running: bool = False) -> dict:
        """:meth:`to_dict` without the population of a Monte Carlo run (the figures need
        none: a smaller cache entry); ``running`` marks a result drawn while the run goes on
        (:meth:`from_dict` reads it without that key)."""
        dist = self
        if self.mode != "permutation":
            dist = replace(self, result=replace(self.result, population=None))
        return {**dist.to_dict(), **({"running": True} if running else {})}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ImportanceDistribution":
        """The ImportanceDistribution that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, dict(d))


def importance_distribution(source, *, mode: str = "samples", n_replicates: int = 100,
                            n_samples: int | None = None, method: str = "forest",
                            n_estimators: int = 100, max_features: int = 1,
                            max_depth: int | None = None, random_state: int | None = 0,
                            max_fitted: int | None = None, max_panels: int = MAX_PANELS,
                            chunk_size: int | None = None,
                            mapper: Callable | None = None,
                            progress: Callable[[int, int], None] | None = None,
                            should_stop: Callable[[], bool] | None = None,
                            partial: Callable | None = None,
                            partial_every: float = 0.0) -> ImportanceDistribution:
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
    max_panels : int, default=MAX_PANELS
        Bin the first ``max_panels`` variables' values and evaluate their fitted
        laws for the histograms (:func:`histogram_panels`).
    chunk_size, mapper, progress, should_stop
        As in :func:`monte_carlo` (a permutation null takes no ``mapper``).
    partial : callable, optional
        ``partial(distribution)`` after each chunk but the last: the
        :class:`ImportanceDistribution` of the replicates done so far (``partial`` set), so a
        page draws the histograms as they fill; the final result does not depend on it.
    partial_every : float, default=0.0
        Seconds at least between two partial results
        (:func:`~varimp_core.studies.replicates.run_replicates`): the others are not built.

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
                  progress=progress, should_stop=should_stop, partial_every=partial_every)

    def build(result) -> ImportanceDistribution:
        if mode == "permutation":
            samples, relevance, overlay = result.null, [None] * len(result.variables), None
        else:
            samples = result.replicates
            relevance = [None if result.relevant is None else v in result.relevant
                         for v in result.variables]
            overlay = plugin_bias_overlay(result) if result.n_replicates else None
        first = slice(0, max_fitted)
        fits = fit_laws(samples[:, first], result.variables[first], relevant=relevance[first])
        panels = histogram_panels(result, fits, max_panels=max_panels)
        return ImportanceDistribution(result, fits, panels, overlay, mode, n_samples,
                                      bool(result.cancelled))

    more = None if partial is None else (lambda so_far: partial(build(so_far)))
    if mode == "permutation":
        return build(permutation_null(source, n_permutations=n_replicates, partial=more,
                                      **forest))
    return build(monte_carlo(source, n_replicates=n_replicates, n_samples=n_samples,
                             mapper=mapper, partial=more, **forest))


# -- what a study can run -----------------------------------------------------------------
def replicate_rows(mode: str, n_samples: int | None, *, has_generator: bool,
                   exact: bool) -> int | None:
    """N of each replicate data set (None: the table's own size), checked against the mode.

    Parameters
    ----------
    mode : {"samples", "bootstrap", "permutation"}
    n_samples : int or None
        The N asked (None: blank).
    has_generator : bool
        The data is a built-in problem that draws fresh samples.
    exact : bool
        The data is an exact distribution: every kind of replicates draws N rows of it first.

    Returns
    -------
    int or None
        None for a permutation null of a table, which runs on the table as it is.

    Raises
    ------
    ValueError
        Fresh samples of data without a generator, or no N where rows are drawn.

    Examples
    --------
    >>> replicate_rows("permutation", 500, has_generator=False, exact=False) is None
    True
    """
    if mode == "samples" and not has_generator:
        raise ValueError("Fresh samples need a built-in problem with a generator (XOR, SYM, "
                         "LED, Madelon, Strobl); use bootstrap replicates for this data.")
    drawn = mode == "samples" or exact
    if n_samples is None and drawn:
        raise ValueError("Enter the sample size N: each data set is drawn from the problem's "
                         "distribution.")
    return n_samples if drawn or mode != "permutation" else None


def sweep_refusal(parameter: str, mode: str, problem_options=()) -> str | None:
    """Why ``parameter`` cannot be swept with ``mode`` replicates, or None when it can.

    A sweep repeats Monte Carlo runs (:func:`~varimp_core.studies.montecarlo.sweep`),
    never a permutation null; the number of irrelevant variables and the
    output noise change the problem itself, so they need fresh samples of a
    problem that has that option (``problem_options``).
    """
    if mode == "permutation":
        return "not with a permutation null"
    if parameter in ("irrelevant", "noise") and (mode != "samples"
                                                 or parameter not in problem_options):
        return "needs fresh samples of a problem with this option"
    return None


def check_sweep(parameter: str, mode: str, problem_options=()) -> None:
    """Raise a sentence when ``parameter`` cannot be swept (:func:`sweep_refusal`)."""
    if parameter not in SWEEP_PARAMETERS:
        raise ValueError(f"The swept parameter must be one of {', '.join(SWEEP_PARAMETERS)}, "
                         f"not {parameter!r}.")
    if sweep_refusal(parameter, mode, problem_options) is None:
        return
    raise ValueError("Sweeps repeat Monte Carlo runs, not a permutation null; switch the "
                     "replicates to fresh samples or bootstrap to sweep."
                     if mode == "permutation" else f"Sweeping {parameter_label(parameter)} "
                     "needs fresh samples of a problem that has this option.")


def sweep_trees(parameter: str, values, *, n_replicates: int, n_estimators: int) -> int:
    """Trees a sweep grows: R x T summed over its values (T is the value in a sweep of T)."""
    if parameter == "n_estimators":
        return n_replicates * sum(int(v) for v in values)
    return n_replicates * n_estimators * len(values)


def check_tree_budget(trees: int, limit: int) -> None:
    """Raise a sentence when a run or sweep would grow more than ``limit`` trees."""
    if trees > limit:
        raise ValueError(f"This would grow {trees:,} trees, more than the limit of {limit:,} "
                         "(VARIMP_MAX_MC_TOTAL_TREES); lower R, T or the sweep values.")


def link_sweep_values(text, parameter: str, *, p: int | None = None,
                      **caps) -> tuple[str, list[str]]:
    """The sweep values of a shared link, normalised, else the defaults and a note why.

    Parameters
    ----------
    text : str or None
        The link's values (None or blank: the defaults, without a note).
    parameter : str
        The swept parameter, or ``"none"``.
    p : int, optional
        The number of inputs (K's upper bound).
    **caps
        ``max_values``, ``max_samples``, ``max_trees`` of
        :func:`~varimp_core.studies.montecarlo.parse_sweep_values`.

    Examples
    --------
    >>> link_sweep_values("50 1 10", "n_estimators")
    ('1,10,50', [])
    >>> values, notes = link_sweep_values("0", "n_estimators")
    >>> values, notes[0].startswith("The link's sweep values were ignored")
    ('1,10,50', True)
    """
    if parameter == "none" or not text:
        return default_sweep_values(parameter, p), []
    try:
        return ",".join(f"{v:g}" for v in parse_sweep_values(text, parameter, p=p, **caps)), []
    except ValueError as exc:
        return default_sweep_values(parameter, p), [f"The link's sweep values were ignored: "
                                                    f"{exc} Using the defaults."]
