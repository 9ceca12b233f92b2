"""Monte Carlo engine and sweeps: Sutera (2013) ch. 3 experiments, checked against theory.

Tolerances are Monte Carlo standard errors of the run itself (3 SE), plus a
derived allowance where the theory is only first order.
"""

import math

import numpy as np
import pytest

from varimp_core.api import compute_importances
from varimp_core.data.prepare import prepare_problem
from varimp_core.exact.recursion import exact_importances
from varimp_core.studies.montecarlo import MonteCarloResult, monte_carlo, sweep
from varimp_core.studies.replicates import child_seed, flip_input
from varimp_core.studies.nulls import expected_irrelevant_importance
from varimp_core.problems.registry import get_problem

XOR22 = "xor:relevant=2,irrelevant=2"
LN2 = math.log(2)


@pytest.fixture(scope="module")
def xor_run():
    # Sutera (2013) Table 3.11, "big" data sets: N=500, 100 trees (R reduced to 200)
    return monte_carlo(XOR22, n_replicates=200, n_samples=500, n_estimators=100, random_state=0)


def test_result_shapes_and_exact_values(xor_run):
    r = xor_run
    assert isinstance(r, MonteCarloResult)
    assert r.replicates.shape == (200, 4) and not r.cancelled
    assert r.variables == ("X1", "X2", "X3", "X4") and r.relevant == ("X1", "X2")
    np.testing.assert_allclose(r.exact, [0.5, 0.5, 0, 0], atol=1e-12)  # Eqn 3: 1/m, Sutera eq. 3.18
    assert r.exact_source == "distribution"
    s = r.summary()
    assert list(s.columns[:5]) == ["variable", "mean", "std", "sem", "std_sem"]
    assert {"q05", "q25", "q50", "q75", "q95", "exact"} <= set(s.columns)
    assert (s["q05"] <= s["q50"]).all() and (s["q50"] <= s["q95"]).all()
    assert r.replicates_frame().shape == (800, 3)


def test_theorem2_holds_replicate_by_replicate(xor_run):
    # Fully grown K=1 trees: every tree's importances sum to the sample's plug-in I(X;Y)
    np.testing.assert_allclose(xor_run.replicates.sum(axis=1), xor_run.information, atol=1e-9)


def test_xor_relevant_mean_is_half_minus_the_finite_sample_erosion(xor_run):
    r, N = xor_run, 500
    # Y is a function of (X1, X2): sum = plug-in H(Y), E = 1 - 1/(2N ln 2) (Miller-Madow),
    # shared by X1, X2 once the irrelevant variables took their bias (17/12 root biases each)
    irrelevant = expected_irrelevant_importance(get_problem(XOR22).exact_table(), N)[2:]
    expected = (1 - 1 / (2 * N * LN2) - irrelevant.sum()) / 2          # 0.4972
    assert np.all(np.abs(r.mean[:2] - expected) < 3 * r.sem[:2])
    # the asymptotic 0.5, allowing for that erosion (0.0028, about one SE at R=200)
    assert np.all(np.abs(r.mean[:2] - 0.5) < 3 * r.sem[:2] + (0.5 - expected))


def test_xor_irrelevant_means_are_small_and_positive(xor_run):
    r = xor_run
    assert np.all(r.replicates[:, 2:] >= 0)
    assert np.all(r.mean[2:] > 3 * r.sem[2:])         # positive beyond doubt
    assert np.all(r.mean[2:] < 0.01)                  # and small: Table 3.11 reports 0.0020


def test_std_falls_as_one_over_sqrt_trees():
    # Var = a + b/T (Sutera eq. 3.23): a from infinite forests on the same kind of data
    df = sweep(XOR22, "n_estimators", [10, 160], n_replicates=400, n_samples=500, random_state=1)
    inf = monte_carlo(XOR22, n_replicates=100, n_samples=500, method="exact", random_state=2)
    lo, hi = (df[(df.variable == "X1") & (df.value == t)].iloc[0] for t in (10, 160))
    a = inf.std[0] ** 2
    assert a < 0.01 * hi["std"] ** 2     # data variance negligible: eps = a / s160^2 < 1%
    # then ratio^2 = 16 - 15 eps lies in [15.85, 16]; SE of log s by the delta method
    # (X2 is not a second test: X1 + X2 is nearly constant within a replicate)
    ratio = lo["std"] / hi["std"]
    se = math.hypot(lo["std_sem"] / lo["std"], hi["std_sem"] / hi["std"])
    assert abs(math.log(ratio / 4)) < 3 * se + math.log(4 / math.sqrt(15.85)), (ratio, se)


def test_sym_output_noise_sweep_decreases_strictly():
    noise = [0, 0.1, 0.2, 0.3, 0.4]
    df = sweep("sym", "noise", noise, n_replicates=40, n_samples=500, random_state=3)
    x1 = df[df.variable == "X1"].reset_index(drop=True)
    # theory first: exact K=1 values on sym:noise=q, strictly decreasing
    exact = [exact_importances(get_problem(f"sym:noise={q}").exact_table()).importances[0]
             for q in noise]
    np.testing.assert_allclose(x1["exact"], exact, atol=1e-12)
    assert exact[0] == pytest.approx(0.25) and np.all(np.diff(exact) < -0.02)
    gaps = -np.diff(x1["mean"])
    combined = np.hypot(x1["sem"][:-1].to_numpy(), x1["sem"][1:].to_numpy())
    assert np.all(gaps > 3 * combined), (gaps, combined)


def test_deterministic_across_n_jobs_and_chunks():
    kw = dict(n_replicates=12, n_samples=200, n_estimators=20, random_state=5)
    a = monte_carlo(XOR22, n_jobs=1, **kw)
    b = monte_carlo(XOR22, n_jobs=2, chunk_size=5, **kw)
    c = monte_carlo(XOR22, n_jobs=1, chunk_size=1, **kw)
    np.testing.assert_array_equal(a.replicates, b.replicates)
    np.testing.assert_array_equal(a.replicates, c.replicates)
    other = monte_carlo(XOR22, **{**kw, "random_state": 6})
    assert not np.array_equal(a.replicates, other.replicates)
    # replicate r is seeded by SeedSequence(random_state).spawn(R)[r]
    assert np.array_equal(child_seed(np.random.SeedSequence(5), 3).generate_state(4),
                          np.random.SeedSequence(5).spawn(4)[3].generate_state(4))
    # scikit-learn forests are seeded per replicate too
    kw = dict(n_replicates=4, n_samples=100, n_estimators=5, method="sklearn-et", random_state=0)
    np.testing.assert_array_equal(monte_carlo(XOR22, n_jobs=1, **kw).replicates,
                                  monte_carlo(XOR22, n_jobs=2, chunk_size=1, **kw).replicates)


def test_progress_and_cancellation_return_the_first_replicates():
    calls = []
    full = monte_carlo(XOR22, n_replicates=50, n_samples=100, n_estimators=10, chunk_size=10)
    part = monte_carlo(XOR22, n_replicates=50, n_samples=100, n_estimators=10, chunk_size=10,
                       progress=lambda d, t: calls.append((d, t)),
                       should_stop=lambda: len(calls) >= 2)
    assert part.cancelled and part.n_replicates == 20 and part.n_requested == 50
    assert calls == [(10, 50), (20, 50)]
    np.testing.assert_array_equal(part.replicates, full.replicates[:20])
    # in worker processes: stop as soon as the first chunk is back
    done = []
    par = monte_carlo(XOR22, n_replicates=400, n_samples=100, n_estimators=10, chunk_size=10,
                      n_jobs=2, progress=lambda d, t: done.append(d),
                      should_stop=lambda: bool(done))
    assert par.cancelled and par.n_replicates == 10 and done == [10]
    np.testing.assert_array_equal(par.replicates, full.replicates[:10])


def test_sweep_stops_between_values():
    seen = []
    df = sweep(XOR22, "n_samples", [50, 100, 200], n_replicates=5, n_estimators=5,
               progress=lambda d, t: seen.append((d, t)), should_stop=lambda: len(seen) >= 1,
               chunk_size=5)
    assert df.attrs["cancelled"] and list(df["value"].unique()) == [50]
    assert seen == [(5, 15)]


def test_input_noise_matches_the_flipped_distribution():
    q, N = 0.25, 500
    h = -(q * math.log2(q) + (1 - q) * math.log2(1 - q))
    # flipping X1 of XOR: I(X1', X2; Y) = 1 - h(q), each variable gets half (Eqn 3)
    table = flip_input(get_problem("xor").exact_table(), "X1", q)
    assert table.total_weight == pytest.approx(1.0)
    np.testing.assert_allclose(exact_importances(table).importances, (1 - h) / 2, atol=1e-12)
    df = sweep("xor", "input_noise", [0.0, q], flip_variable="X1", n_replicates=60, n_samples=N,
               n_estimators=20, random_state=4)
    np.testing.assert_allclose(df[df.value == q]["exact"], (1 - h) / 2, atol=1e-12)
    # each replicate sums to its plug-in I(X;Y), with E = 1 - h(q) + 3/(2N ln 2) (4 x-cells)
    r = monte_carlo("xor", flip_variable="X1", flip_probability=q, n_replicates=60,
                    n_samples=N, n_estimators=20, random_state=4)
    total = r.replicates.sum(axis=1)
    se = total.std(ddof=1) / math.sqrt(len(total))
    assert abs(total.mean() - (1 - h + 3 / (2 * N * LN2))) < 3 * se


def test_irrelevant_sweep_changes_the_variables_and_keeps_the_relevant_value():
    df = sweep("xor", "irrelevant", [0, 3], n_replicates=10, n_samples=300, n_estimators=20)
    assert set(df[df.value == 0]["variable"]) == {"X1", "X2"}
    assert set(df[df.value == 3]["variable"]) == {"X1", "X2", "X3", "X4", "X5"}
    # Sutera 3.2.1.6: the asymptotic value of X1 does not depend on irrelevant variables
    np.testing.assert_allclose(df[df.variable == "X1"]["exact"], 0.5, atol=1e-12)


def test_depth_and_k_sweeps_carry_the_exact_values():
    df = sweep(XOR22, "max_depth", [1, None], n_replicates=5, n_samples=200, n_estimators=10)
    np.testing.assert_allclose(df[df.value.isna()]["exact"], [0.5, 0.5, 0, 0], atol=1e-12)
    # XOR: nothing is gained at the root
    np.testing.assert_allclose(df[df.value == 1]["exact"], 0, atol=1e-12)
    df = sweep(XOR22, "max_features", [1, 4], n_replicates=5, n_samples=200, n_estimators=10,
               replicates=True)
    assert list(df.columns) == ["param", "value", "replicate", "variable", "importance", "exact"]
    assert len(df) == 2 * 5 * 4


def test_bootstrap_replicates_of_uploaded_data():
    data = prepare_problem(get_problem(XOR22), n_samples=400, random_state=0)
    r = monte_carlo(data, n_replicates=20, n_estimators=20, random_state=0)
    assert r.parameters["replicates_from"] == "bootstrap" and r.parameters["n_samples"] == 400
    assert r.exact_source == "full sample"
    np.testing.assert_allclose(r.exact, compute_importances(data, method="exact").importances)
    # Theorem 2 on each bootstrap replicate
    np.testing.assert_allclose(r.replicates.sum(axis=1), r.information, atol=1e-9)
    sk = monte_carlo(data, n_replicates=3, n_estimators=5, method="sklearn-et", n_samples=100)
    assert sk.replicates.shape == (3, 4) and np.all(np.isnan(sk.information))
    # an exact table needs a sample size
    with pytest.raises(ValueError, match="n_samples"):
        monte_carlo(get_problem(XOR22).exact_table(), n_replicates=2)
    drawn = monte_carlo(get_problem(XOR22).exact_table(), n_replicates=2, n_samples=50,
                        n_estimators=5)
    assert drawn.exact_source == "distribution"


def test_validation_messages():
    with pytest.raises(ValueError, match="n_replicates"):
        monte_carlo(XOR22, n_replicates=0)
    with pytest.raises(ValueError, match="Unknown method"):
        monte_carlo(XOR22, method="boosting")
    with pytest.raises(ValueError, match="between 1 and the number of variables 4"):
        monte_carlo(XOR22, max_features=5)
    with pytest.raises(ValueError, match="Unknown sweep parameter"):
        sweep(XOR22, "colour", [1])
    with pytest.raises(ValueError, match="has no option 'noise'"):
        sweep("madelon", "noise", [0.1])
    with pytest.raises(ValueError, match="needs a problem spec"):
        sweep(get_problem(XOR22).exact_table(), "irrelevant", [1], n_samples=10)
    with pytest.raises(ValueError, match="flip probability"):
        monte_carlo(XOR22, flip_variable="X1", flip_probability=1.5)
    with pytest.raises(ValueError, match="Unknown variable"):
        monte_carlo(XOR22, flip_variable="Z", flip_probability=0.1)


def test_partial_results_come_at_most_every_so_often_and_change_nothing(monkeypatch):
    """partial_every: a partial result is built after the first chunk, then only when that
    many seconds have passed since the last one (a fake clock, read once per chunk, advances
    half a second a chunk); the replicates are the same with or without it."""
    import varimp_core.studies.replicates as replicates

    ticks = iter(range(10_000))
    monkeypatch.setattr(replicates.time, "monotonic", lambda: float(next(ticks)) / 2)
    kw = dict(n_replicates=12, n_samples=150, n_estimators=4, chunk_size=2, random_state=3)
    seen, every = [], []
    plain = monte_carlo("xor:relevant=2,irrelevant=2", **kw)
    streamed = monte_carlo("xor:relevant=2,irrelevant=2", partial=every.append, **kw)
    slow = monte_carlo("xor:relevant=2,irrelevant=2", partial=seen.append,
                       partial_every=1.0, **kw)
    # chunks at 0, 0.5, 1.0, 1.5, 2.0 s (the sixth is the last: no partial)
    assert [r.n_replicates for r in every] == [2, 4, 6, 8, 10]
    assert [r.n_replicates for r in seen] == [2, 6, 10]
    for r in (streamed, slow):
        np.testing.assert_array_equal(r.replicates, plain.replicates)
    for r in seen:
        np.testing.assert_array_equal(r.replicates, plain.replicates[:r.n_replicates])


@pytest.mark.parametrize("spec", ["gauss", "madelon"])
def test_fresh_samples_of_continuous_problems_give_the_same_replicates_without_the_fast_path(
        spec, monkeypatch):
    """Replicates of a continuous problem are prepared by prepare_numeric_sample (the same
    preparation as prepare_table, field for field): the importances do not change."""
    import varimp_core.studies.montecarlo_jobs as jobs

    kw = dict(n_replicates=3, n_samples=120, n_estimators=3, random_state=5)
    fast = monte_carlo(spec, **kw)
    calls = []
    monkeypatch.setattr(jobs, "prepare_numeric_sample",
                        lambda *a, **k: calls.append(1))     # None: prepare_table instead
    slow = monte_carlo(spec, **kw)
    assert len(calls) >= 3
    np.testing.assert_array_equal(fast.replicates, slow.replicates)
    np.testing.assert_array_equal(fast.information, slow.information)
