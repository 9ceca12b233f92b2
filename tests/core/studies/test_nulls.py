"""Null distributions: plug-in bias, chi-square / normal fits, permutation null."""

import math

import numpy as np
import pytest
from scipy import stats

from _tables import with_irrelevant, xor_table
from varimp_core.data.prepare import prepare_problem
from varimp_core.studies.montecarlo import monte_carlo
from varimp_core.studies.fits import (density_curves, fit_laws, fit_normal,
                                      fit_null_distributions, fit_scaled_chi2)
from varimp_core.studies.nulls import (expected_irrelevant_importance, permutation_null,
                                       plugin_bias_overlay)
from varimp_core.problems.registry import get_problem
from varimp_core.data.table import DiscreteTable

XOR22 = "xor:relevant=2,irrelevant=2"
LN2 = math.log(2)


def _independent_table(p=4):
    """p fair bits and a fair Y independent of them (exact)."""
    return with_irrelevant(DiscreteTable(np.zeros((2, 0), dtype=int), [0, 1], [0.5, 0.5], (),
                                         exact=True), p)


@pytest.fixture(scope="module")
def xor_run():
    return monte_carlo(XOR22, n_replicates=200, n_samples=500, n_estimators=100, random_state=10)


# -- plug-in bias --------------------------------------------------------------
def test_expected_irrelevant_importance_closed_forms():
    unit = 1 / (2 * 500 * LN2)   # (|Y|-1)(|X|-1)/(2N ln 2) for binary X, Y
    # XOR 2+2: 1/4 (root) + 6/12 (three pairs, two impure cells each) + 8/12 (two of the
    # three triples are impure) + 0 (cells of X1, X2, X4 are pure) = 17/12 nodes
    v = expected_irrelevant_importance(xor_table(2, 2), 500)
    np.testing.assert_allclose(v[2:] / unit, 17 / 12)
    # Y independent of 4 bits: every cell impure, sum_k C(3,k) 2^k / (C(4,k)(4-k)) = 15/4
    np.testing.assert_allclose(expected_irrelevant_importance(_independent_table(), 500) / unit,
                               15 / 4)
    # depth 1: only the root term 1/p (Louppe et al. 2013, Proposition 6)
    np.testing.assert_allclose(expected_irrelevant_importance(xor_table(2, 2), 500, max_depth=1)
                               / unit, 1 / 4)


def test_overlay_predicts_the_irrelevant_means(xor_run):
    o = plugin_bias_overlay(xor_run)
    irr = o[o.relevant == False]  # noqa: E712 (None means unknown)
    assert list(irr.variable) == ["X3", "X4"]
    # first-order theory (Miller-Madow); at N=500 its second-order terms are O(1/N_cell)
    # ~ 1/60 of the bias, below a tenth of the 3 SE tolerance
    assert np.all(np.abs(irr.z) < 3), irr
    np.testing.assert_allclose(o.plugin_bias, 1 / (2 * 500 * LN2))
    assert np.all(irr.nodes > 1)   # more than one root node's worth: 17/12 expected


def test_overlay_leaves_expected_empty_when_theory_does_not_apply():
    r = monte_carlo(XOR22, n_replicates=5, n_samples=200, n_estimators=10, max_features=2)
    assert plugin_bias_overlay(r)["expected"].isna().all()


# -- fits ----------------------------------------------------------------------
@pytest.mark.parametrize("method", ["moments", "mle"])
def test_scaled_chi2_recovers_known_parameters(method):
    k, s, n = 2.0, 0.001, 2000
    x = s * np.random.default_rng(0).chisquare(k, size=n)
    fit = fit_scaled_chi2(x, method=method)
    # moment estimators, delta method with the cumulants k_r = s^r k 2^(r-1) (r-1)!:
    # Var(s_hat)/s^2 = (2 + 6/k)/n, Var(k_hat)/k^2 = (2 + 4/k)/n; the MLE is more efficient
    assert abs(fit.params["scale"] / s - 1) < 3 * math.sqrt((2 + 6 / k) / n)
    assert abs(fit.params["df"] / k - 1) < 3 * math.sqrt((2 + 4 / k) / n)
    # the true law: KS p-value is uniform (larger still, with fitted parameters)
    assert fit.ks_pvalue > 0.01
    assert fit.pdf(np.array([s])) > 0 and 0 < fit.cdf(s * k) < 1


def test_ks_rejects_a_bimodal_sample():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.normal(1, 0.05, 500), rng.normal(3, 0.05, 500)])
    assert fit_scaled_chi2(x).ks_pvalue < 1e-6
    assert fit_normal(x).ks_pvalue < 1e-6


def test_normal_fit_recovers_mean_and_std():
    mu, sd, n = 0.5, 0.04, 1000
    fit = fit_normal(np.random.default_rng(2).normal(mu, sd, n))
    assert abs(fit.params["mean"] - mu) < 3 * sd / math.sqrt(n)
    assert abs(fit.params["std"] - sd) < 3 * sd / math.sqrt(2 * n)


def test_fit_null_distributions_on_xor(xor_run):
    f = fit_null_distributions(xor_run)
    assert list(f.distribution) == ["normal", "normal", "chi2", "chi2"]
    # Sutera (2013, 3.2.1.5): Gaussian relevant, chi-square irrelevant importances.  If those
    # laws hold, each (conservative) KS p-value is below 0.001 with probability < 0.001.
    assert (f.ks_pvalue > 0.001).all(), f
    # moments: df * scale reproduces the mean exactly
    irr = f[f.distribution == "chi2"]
    np.testing.assert_allclose(irr.df * irr.scale, xor_run.mean[2:])
    curves = density_curves(f, xor_run.replicates, xor_run.variables, n_points=50)
    assert curves.groupby("variable").size().tolist() == [50] * 4
    assert (curves.density >= 0).all()
    with pytest.raises(ValueError, match="unknown variables"):
        fit_null_distributions(xor_run, relevant=["Z"])


def test_fit_laws_fits_both_laws_to_every_variable(xor_run):
    f = fit_laws(xor_run.replicates, xor_run.variables, relevant=[True, True, False, False])
    assert list(zip(f.variable, f.distribution))[:2] == [("X1", "chi2"), ("X1", "normal")]
    assert len(f) == 8 and f.relevant.tolist() == [True] * 4 + [False] * 4
    # each row is the law's own fit: the same numbers as fitting that law alone
    expected = fit_null_distributions(xor_run).set_index(["variable", "distribution"])
    for _, row in f.iterrows():
        if (row.variable, row.distribution) in expected.index:
            want = expected.loc[(row.variable, row.distribution)]
            assert row.ks_statistic == want.ks_statistic and row.n == 200
    # irrelevant variables: the scaled chi-square is the closer law (Sutera 2013, 3.2.1.5; a
    # relevant variable's chi-square of many degrees of freedom is nearly normal itself)
    closer = f.loc[f.groupby("variable").ks_statistic.idxmin(), "distribution"].tolist()
    assert closer[2:] == ["chi2", "chi2"]
    # a constant column cannot be fitted: NaN, not an error; relevance unknown by default
    const = fit_laws(np.ones((10, 1)), ["c"])
    assert const.ks_statistic.isna().all() and const.relevant.tolist() == [None, None]


def test_fit_laws_chi2_row_is_satterthwaites_moments_and_their_ks_distance():
    # a weighted sum of chi-squares (the shape of an irrelevant importance), a column of
    # plain chi-square values and a constant column that cannot be fitted
    rng = np.random.default_rng(7)
    n = 300
    mix = 0.002 * rng.chisquare(1, n) + 0.0005 * rng.chisquare(3, n)
    samples = np.column_stack([mix, 0.01 * rng.chisquare(4, n), np.full(n, 0.3)])
    f = fit_laws(samples, ["A", "B", "C"])
    assert list(f.distribution) == ["chi2", "normal"] * 3
    for j, v in enumerate(["A", "B"]):
        x = samples[:, j]
        # Satterthwaite (1946): match the mean and variance of s * chi2_k,
        # E = s k and Var = 2 s^2 k, so k = 2 m^2 / v and s = v / (2 m)
        m, var = x.sum() / n, ((x - x.sum() / n) ** 2).sum() / (n - 1)
        k, s = 2 * m**2 / var, var / (2 * m)
        law = stats.chi2(k, scale=s)
        ks = stats.kstest(x, law.cdf)
        # the KS distance by hand: the largest gap between the law's cdf and the
        # empirical cdf, just before and at each sorted value
        cdf = law.cdf(np.sort(x))
        by_hand = max((np.arange(1, n + 1) / n - cdf).max(), (cdf - np.arange(n) / n).max())
        row = f[(f.variable == v) & (f.distribution == "chi2")].iloc[0]
        assert row.df == pytest.approx(k, rel=1e-12)
        assert row.scale == pytest.approx(s, rel=1e-12)
        assert row.ks_statistic == pytest.approx(ks.statistic, rel=1e-12)
        assert row.ks_statistic == pytest.approx(by_hand, rel=1e-12)
        assert row.ks_pvalue == pytest.approx(ks.pvalue, rel=1e-9)
        assert row.n == n and np.isnan(row["mean"]) and np.isnan(row["std"])
        # the normal row: maximum likelihood, the mean and the std with ddof=0
        normal = f[(f.variable == v) & (f.distribution == "normal")].iloc[0]
        sd = math.sqrt(((x - m) ** 2).sum() / n)
        assert normal["mean"] == pytest.approx(m, rel=1e-12)
        assert normal["std"] == pytest.approx(sd, rel=1e-12)
        assert normal.ks_statistic == pytest.approx(
            stats.kstest(x, stats.norm(m, sd).cdf).statistic, rel=1e-12)
    # a constant column: both rows keep NaN parameters and KS values
    const = f[f.variable == "C"]
    assert const[["df", "scale", "mean", "std", "ks_statistic", "ks_pvalue"]].isna().all().all()
    assert const.n.tolist() == [n, n]


def test_fit_validation():
    with pytest.raises(ValueError, match="non-negative"):
        fit_scaled_chi2([-1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="at least 3"):
        fit_normal([1.0])
    with pytest.raises(ValueError, match="'moments' or 'mle'"):
        fit_scaled_chi2([1.0, 2.0, 3.0], method="bayes")


# -- permutation null ----------------------------------------------------------
@pytest.fixture(scope="module")
def xor_sample():
    return prepare_problem(get_problem(XOR22), n_samples=500, random_state=0)


def test_permutation_null_separates_relevant_from_irrelevant(xor_sample):
    R = 39
    res = permutation_null(xor_sample, n_permutations=R, n_estimators=50, random_state=0)
    assert res.null.shape == (R, 4) and not res.cancelled
    # relevant: ~0.5 bits observed, while a permuted Y gives each input ~0.005 bits
    np.testing.assert_allclose(res.p_values[:2], 1 / (R + 1))
    assert res.above_null[:2].all()
    # irrelevant: its null (15/4 root biases, every cell impure once Y is permuted) lies
    # far above its own expectation on the real data (17/12): the p-value is large
    unit = 1 / (2 * 500 * LN2)
    assert np.allclose(expected_irrelevant_importance(_independent_table(), 500), 15 / 4 * unit)
    assert np.all(res.null.mean(axis=0) > 2 * 17 / 12 * unit)
    assert np.all(res.p_values[2:] > 0.2) and not res.above_null[2:].any()
    frame = res.to_frame()
    assert list(frame.columns) == ["variable", "observed", "null_mean", "null_q95", "p_value",
                                   "above_null_q95", "n_permutations"]
    long = res.null_frame()
    assert list(long.columns) == ["replicate", "variable", "importance", "observed"]
    assert len(long) == R * 4 and long.importance.tolist()[4:8] == res.null[1].tolist()
    assert long.observed.tolist()[4:8] == res.observed.tolist()


def test_permutation_null_is_seeded_parallel_and_cancellable(xor_sample):
    kw = dict(n_permutations=8, n_estimators=10, random_state=3)
    a = permutation_null(xor_sample, **kw)
    b = permutation_null(xor_sample, n_jobs=2, chunk_size=3, **kw)
    np.testing.assert_array_equal(a.null, b.null)
    np.testing.assert_array_equal(a.observed, b.observed)
    done = []
    stopped = permutation_null(xor_sample, chunk_size=2, progress=lambda d, t: done.append(d),
                               should_stop=lambda: len(done) >= 2, **kw)
    assert stopped.cancelled and stopped.n_permutations == 4 and done == [2, 4]
    np.testing.assert_array_equal(stopped.null, a.null[:4])


def test_permutation_null_with_scikit_learn_and_tables(xor_sample):
    res = permutation_null(xor_sample, n_permutations=9, method="sklearn-et", n_estimators=10)
    np.testing.assert_allclose(res.p_values[:2], 1 / 10)
    table = permutation_null(xor_sample.table, n_permutations=4, n_estimators=10)
    assert table.null.shape == (4, 4)
    with pytest.raises(ValueError, match="exact distribution"):
        permutation_null(get_problem(XOR22).exact_table(), n_permutations=3)
