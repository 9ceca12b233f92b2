"""Fitted laws of the importances: scaled chi-square for irrelevant, normal for relevant variables.

:math:`2N\\ln 2\\,\\hat I` is asymptotically :math:`\\chi^2`, and an importance
is a weighted sum of such terms, which a scaled :math:`\\chi^2` approximates
(Satterthwaite 1946; Sutera 2013, section 3.2.1.5 sees :math:`\\chi^2` shapes
for irrelevant and Gaussian shapes for relevant variables).  The second view
of :mod:`varimp_core.studies.nulls`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy import stats

from varimp_core.studies.montecarlo import MonteCarloResult
from varimp_core.serialize import dataclass_from_dict, dataclass_to_dict

__all__ = ["DistributionFit", "fit_scaled_chi2", "fit_normal", "fit_null_distributions",
           "fit_laws", "density_curves"]


@dataclass(frozen=True)
class DistributionFit:
    """A fitted distribution and its Kolmogorov-Smirnov goodness of fit.

    Parameters
    ----------
    kind : {"chi2", "normal"}
    params : dict
        ``df`` and ``scale`` (chi2, location 0) or ``mean`` and ``std`` (normal).
    method : {"moments", "mle"}
    ks_statistic, ks_pvalue : float
        One-sample KS test of the data against the fitted law.  The
        parameters come from the same data, so the p-value is conservative
        (too large; Lilliefors 1967): read it as a distance, not a test.
    n : int
    """

    kind: str
    params: dict
    method: str
    ks_statistic: float
    ks_pvalue: float
    n: int

    def frozen(self):
        """The scipy.stats frozen distribution."""
        if self.kind == "chi2":
            return stats.chi2(self.params["df"], loc=0.0, scale=self.params["scale"])
        return stats.norm(self.params["mean"], self.params["std"])

    def pdf(self, x):
        return self.frozen().pdf(x)

    def cdf(self, x):
        return self.frozen().cdf(x)

    def to_dict(self) -> dict:
        """Plain JSON types (see :mod:`varimp_core.serialize`); :meth:`from_dict` reads them back."""
        return dataclass_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DistributionFit":
        """The DistributionFit that :meth:`to_dict` wrote."""
        return dataclass_from_dict(cls, d)


def _sample(samples) -> np.ndarray:
    x = np.asarray(samples, dtype=float).ravel()
    if x.size < 3 or not np.all(np.isfinite(x)):
        raise ValueError(f"Fitting needs at least 3 finite values, got {x.size}.")
    return x


def _ks(x, dist) -> tuple[float, float]:
    res = stats.kstest(x, dist.cdf)
    return float(res.statistic), float(res.pvalue)


def fit_scaled_chi2(samples, *, method: str = "moments") -> DistributionFit:
    """Fit :math:`s\\,\\chi^2_k` (location 0) to non-negative values.

    Parameters
    ----------
    samples : array-like
    method : {"moments", "mle"}, default="moments"
        ``moments``: :math:`s = \\mathrm{var}/(2\\,\\mathrm{mean})`,
        :math:`k = 2\\,\\mathrm{mean}^2/\\mathrm{var}` (Satterthwaite, 1946), with the
        sample mean and the unbiased sample variance (``ddof=1``);
        ``mle``: ``scipy.stats.chi2.fit`` with the location fixed at 0.

    Returns
    -------
    DistributionFit
    """
    x = _sample(samples)
    if np.any(x < 0):
        raise ValueError("A scaled chi-square needs non-negative values.")
    mean, var = float(x.mean()), float(x.var(ddof=1))
    if mean <= 0 or var <= 0:
        raise ValueError("A scaled chi-square needs values with positive mean and spread.")
    if method == "moments":
        k, s = 2 * mean**2 / var, var / (2 * mean)
    elif method == "mle":
        pos = x[x > 0] if np.any(x == 0) else x     # log-density is -inf at 0 when k > 2
        k, _, s = stats.chi2.fit(pos, floc=0.0)
    else:
        raise ValueError(f"method must be 'moments' or 'mle', got {method!r}.")
    fit = DistributionFit("chi2", {"df": float(k), "scale": float(s)}, method, 0.0, 1.0, x.size)
    d, pv = _ks(x, fit.frozen())
    return replace(fit, ks_statistic=d, ks_pvalue=pv)


def fit_normal(samples) -> DistributionFit:
    """Fit a normal law by maximum likelihood (mean, std with ddof=0)."""
    x = _sample(samples)
    mu, sd = stats.norm.fit(x)
    if sd <= 0:
        raise ValueError("A normal fit needs values with positive spread.")
    fit = DistributionFit("normal", {"mean": float(mu), "std": float(sd)}, "mle", 0.0, 1.0, x.size)
    d, pv = _ks(x, fit.frozen())
    return replace(fit, ks_statistic=d, ks_pvalue=pv)


def _relevance(result: MonteCarloResult, relevant) -> list[bool]:
    if relevant is not None:
        names = set(relevant)
        unknown = names - set(result.variables)
        if unknown:
            raise ValueError(f"relevant names unknown variables {sorted(unknown)}; choose among: "
                             f"{', '.join(result.variables)}.")
        return [v in names for v in result.variables]
    if result.relevant is not None:
        return [v in result.relevant for v in result.variables]
    if result.exact is not None:
        return [bool(e > 1e-12) for e in result.exact]
    raise ValueError("Which variables are relevant is unknown for this data; pass relevant=[...].")


def _fit_row(values: np.ndarray, variable: str, relevant, distribution: str,
             method: str = "moments") -> dict:
    """One row of a fits table: ``distribution`` fitted to one variable's values.

    The parameters and KS values stay NaN where the law cannot be fitted
    (too few or constant values: the fit's ValueError).
    """
    row = {"variable": variable, "relevant": relevant, "distribution": distribution,
           "df": np.nan, "scale": np.nan, "mean": np.nan, "std": np.nan,
           "ks_statistic": np.nan, "ks_pvalue": np.nan, "n": int(values.shape[0])}
    try:
        fit = fit_normal(values) if distribution == "normal" else \
            fit_scaled_chi2(values, method=method)
    except ValueError:
        return row
    row.update(fit.params, ks_statistic=fit.ks_statistic, ks_pvalue=fit.ks_pvalue)
    return row


def fit_null_distributions(result: MonteCarloResult, *, relevant=None,
                           method: str = "moments") -> pd.DataFrame:
    """Scaled chi-square fits to irrelevant variables, normal fits to relevant ones.

    Parameters
    ----------
    result : MonteCarloResult
    relevant : sequence of str, optional
        Default: the problem's relevant variables, else those with a positive
        exact value.
    method : {"moments", "mle"}
        For the chi-square fits.

    Returns
    -------
    pandas.DataFrame
        One row per variable: ``variable``, ``relevant``, ``distribution``,
        ``df``, ``scale`` (chi2), ``mean``, ``std`` (normal), ``ks_statistic``,
        ``ks_pvalue``, ``n``; NaN where a fit is impossible (constant values).
    """
    rows = [_fit_row(result.replicates[:, j], v, rel, "normal" if rel else "chi2", method)
            for j, (v, rel) in enumerate(zip(result.variables, _relevance(result, relevant)))]
    return pd.DataFrame(rows)


def fit_laws(samples, variables, *, relevant=None) -> pd.DataFrame:
    """Both laws, a scaled chi-square and a normal, fitted to every variable's values.

    :func:`fit_null_distributions` fits the law that theory expects of each
    variable; this fits both to every variable, so that their
    Kolmogorov-Smirnov distances say which one is closer.  The scaled
    chi-square is fitted by moments (:func:`fit_scaled_chi2`: Satterthwaite's
    :math:`k = 2m^2/v`, :math:`s = v/(2m)` with the sample mean :math:`m` and
    the unbiased sample variance :math:`v`), the normal by maximum likelihood
    (:func:`fit_normal`).

    Parameters
    ----------
    samples : array-like of shape (n_replicates, n_features)
        A variable's importance in each column: replicates, or a permutation null.
    variables : sequence of str
    relevant : sequence of bool or None, optional
        Each variable's relevance when known (None: unknown), copied to its rows.

    Returns
    -------
    pandas.DataFrame
        Two rows per variable, ``distribution`` "chi2" then "normal", with the
        columns of :func:`fit_null_distributions`; NaN parameters and KS values
        where a law cannot be fitted (constant values).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> fits = fit_laws(rng.chisquare(3, size=(400, 1)), ["X1"])
    >>> fits["distribution"].tolist(), bool(fits["ks_statistic"].idxmin() == 0)
    (['chi2', 'normal'], True)
    """
    samples = np.asarray(samples, dtype=float)
    relevant = [None] * len(variables) if relevant is None else list(relevant)
    rows = [_fit_row(samples[:, j], v, relevant[j], kind)
            for j, v in enumerate(variables) for kind in ("chi2", "normal")]
    return pd.DataFrame(rows)


def density_curves(fits: pd.DataFrame, samples, variables, *,
                   n_points: int = 200) -> pd.DataFrame:
    """Fitted densities on a grid spanning each variable's values, for overlays.

    Parameters
    ----------
    fits : DataFrame
        Rows of :func:`fit_laws` or :func:`fit_null_distributions`; a row whose
        law could not be fitted (NaN parameters) gets no curve.
    samples : array-like of shape (n_replicates, n_features)
        The values the laws were fitted to (replicates, or a permutation null).
    variables : sequence of str
        The names of the columns of ``samples``.
    n_points : int, default=200
        Grid points of each curve: equally spaced from the smallest to the
        largest value, widened by a tenth of their range on each side (and cut
        at 0 for a scaled chi-square, whose support is :math:`[0, \\infty)`).

    Returns
    -------
    pandas.DataFrame
        A tidy frame with ``variable``, ``distribution``, ``x``, ``density``
        (the law's probability density at ``x``).
    """
    samples, variables = np.asarray(samples, dtype=float), list(variables)
    frames = []
    for _, row in fits.iterrows():
        x = samples[:, variables.index(row["variable"])]
        if row["distribution"] == "chi2" and np.isfinite(row["df"]):
            dist = stats.chi2(row["df"], scale=row["scale"])
        elif row["distribution"] == "normal" and np.isfinite(row["mean"]):
            dist = stats.norm(row["mean"], row["std"])
        else:
            continue
        lo, hi = float(x.min()), float(x.max())
        pad = 0.1 * (hi - lo) if hi > lo else 1e-6
        grid = np.linspace(max(lo - pad, 0.0) if row["distribution"] == "chi2" else lo - pad,
                           hi + pad, n_points)
        frames.append(pd.DataFrame({"variable": row["variable"],
                                    "distribution": row["distribution"],
                                    "x": grid, "density": dist.pdf(grid)}))
    return pd.concat(frames, ignore_index=True) if frames else \
        pd.DataFrame(columns=["variable", "distribution", "x", "density"])
