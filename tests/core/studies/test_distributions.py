"""The Distributions study in one call (varimp_core.studies.distributions)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from varimp_core.data.prepare import prepare_problem
from varimp_core.problems.registry import get_problem
from varimp_core.studies.distributions import (ImportanceDistribution, check_sweep,
                                               check_tree_budget, histogram_edges,
                                               histogram_panels, importance_distribution,
                                               replicate_rows, sweep_refusal, sweep_trees)
from varimp_core.studies.fits import fit_laws
from varimp_core.studies.montecarlo import monte_carlo
from varimp_core.studies.nulls import permutation_null, plugin_bias_overlay

XOR = "xor:relevant=2,irrelevant=2"
RUN = dict(n_estimators=5, max_features=1, random_state=3)


@pytest.fixture(scope="module")
def sample():
    return prepare_problem(get_problem(XOR), n_samples=300, random_state=0)


def test_fresh_samples_are_monte_carlo_with_both_laws_and_the_bias():
    got = importance_distribution(XOR, n_replicates=12, n_samples=200, **RUN)
    mc = monte_carlo(XOR, n_replicates=12, n_samples=200, **RUN)
    np.testing.assert_array_equal(got.result.replicates, mc.replicates)
    pd.testing.assert_frame_equal(got.fits, fit_laws(mc.replicates, mc.variables,
                                                     relevant=[True, True, False, False]))
    pd.testing.assert_frame_equal(got.overlay, plugin_bias_overlay(mc))
    assert (got.mode, got.n_samples, got.partial) == ("samples", 200, False)


def test_bootstrap_and_permutation_null_of_a_table(sample):
    boot = importance_distribution(sample, mode="bootstrap", n_replicates=6, max_fitted=3, **RUN)
    mc = monte_carlo(sample, n_replicates=6, **RUN)
    np.testing.assert_array_equal(boot.result.replicates, mc.replicates)
    assert boot.result.parameters["replicates_from"] == "bootstrap"
    assert boot.fits["variable"].unique().tolist() == ["X1", "X2", "X3"]   # max_fitted=3
    null = importance_distribution(sample, mode="permutation", n_replicates=6, **RUN)
    direct = permutation_null(sample, n_permutations=6, **RUN)
    np.testing.assert_array_equal(null.result.null, direct.null)
    assert null.overlay is None and null.fits["relevant"].isna().all()
    pd.testing.assert_frame_equal(null.fits, fit_laws(direct.null, direct.variables))


def test_a_stopped_run_is_partial_and_results_round_trip(sample):
    stopped = importance_distribution(XOR, n_replicates=20, n_samples=100, chunk_size=2,
                                      should_stop=lambda: True, **RUN)
    assert stopped.partial and stopped.result.n_replicates == 0 and stopped.overlay is None
    null = importance_distribution(sample, mode="permutation", n_replicates=4, **RUN)
    for d in (importance_distribution(XOR, n_replicates=4, n_samples=100, **RUN), null):
        back = ImportanceDistribution.from_dict(json.loads(json.dumps(d.to_dict())))
        assert type(back.result) is type(d.result) and back.mode == d.mode
        pd.testing.assert_frame_equal(back.fits, d.fits)
        pd.testing.assert_frame_equal(back.panels.bins, d.panels.bins)
        pd.testing.assert_frame_equal(back.panels.curves, d.panels.curves)


def test_the_source_must_fit_the_mode(sample):
    with pytest.raises(ValueError, match="need a table"):
        importance_distribution(XOR, mode="bootstrap", n_replicates=2)
    with pytest.raises(ValueError, match="need a problem"):
        importance_distribution(sample, n_replicates=2)
    with pytest.raises(ValueError, match="mode must be one of"):
        importance_distribution(sample, mode="jackknife", n_replicates=2)


# -- what the histograms draw ---------------------------------------------------------------
def test_histogram_edges_follow_the_square_root_rule_and_hold_every_value():
    rng = np.random.default_rng(0)
    for R, bins in [(4, 5), (100, 10), (101, 11), (10_000, 40)]:   # ceil(sqrt(R)) in [5, 40]
        x = rng.normal(size=R)
        edges = histogram_edges(x)
        assert len(edges) == bins + 1
        np.testing.assert_allclose(np.diff(edges), np.diff(edges)[0], rtol=1e-9)
        assert edges[0] == x.min() and x.max() < edges[-1]     # half-open bins hold the max
    # a constant column (e.g. all zeros) still gets one bin around its value
    edges = histogram_edges(np.zeros(6))
    assert len(edges) == 2 and edges[0] < 0 < edges[1]


def test_histogram_panels_count_every_value_once_and_evaluate_the_fitted_laws():
    mc = monte_carlo(XOR, n_replicates=30, n_samples=200, **RUN)
    fits = fit_laws(mc.replicates, mc.variables)
    panels = histogram_panels(mc, fits, max_panels=3, n_points=40)
    assert panels.variables == ["X1", "X2", "X3"]
    for v in panels.variables:
        x = mc.replicates[:, mc.variables.index(v)]
        b = panels.bins[panels.bins["variable"] == v]
        # brute force: the values in [left, right), and a density whose bars have area 1
        counts = [int(((x >= lo) & (x < hi)).sum()) for lo, hi in zip(b["left"], b["right"])]
        assert b["count"].tolist() == counts and sum(counts) == 30
        np.testing.assert_allclose(b["density"], np.asarray(counts) / (30 * (b["right"] -
                                                                             b["left"])))
        np.testing.assert_allclose((b["density"] * (b["right"] - b["left"])).sum(), 1.0)
        bins = panels.xbins(v)
        assert bins["start"] == b["left"].iloc[0] and bins["end"] == b["right"].iloc[-1]
        for law, d in panels.curves[panels.curves["variable"] == v].groupby("distribution"):
            row = fits[(fits["variable"] == v) & (fits["distribution"] == law)].iloc[0]
            pdf = stats.chi2(row["df"], scale=row["scale"]).pdf if law == "chi2" else \
                stats.norm(row["mean"], row["std"]).pdf
            assert len(d) == 40 and d["x"].min() <= x.min() and d["x"].max() >= x.max()
            np.testing.assert_allclose(d["density"], pdf(d["x"].to_numpy()), rtol=1e-12)
        heights = [*b["density"], *panels.curves.loc[panels.curves["variable"] == v, "density"]]
        assert panels.peak(v) == max(heights)
    assert set(panels.curves["variable"]) == {"X1", "X2", "X3"}     # X4 is not shown
    assert histogram_panels(mc).curves.empty                     # no fits: bars only


def test_a_run_stopped_before_any_replicate_has_no_bins():
    stopped = importance_distribution(XOR, n_replicates=6, n_samples=100, chunk_size=2,
                                      should_stop=lambda: True, **RUN)
    assert stopped.panels.bins.empty and stopped.panels.curves.empty


# -- what a study can run -----------------------------------------------------------------
def test_which_runs_and_sweeps_a_study_refuses_with_a_sentence():
    with pytest.raises(ValueError, match="Fresh samples need a built-in problem"):
        replicate_rows("samples", 100, has_generator=False, exact=False)
    with pytest.raises(ValueError, match="Enter the sample size N"):
        replicate_rows("bootstrap", None, has_generator=True, exact=True)
    assert replicate_rows("bootstrap", None, has_generator=False, exact=False) is None
    assert replicate_rows("permutation", 300, has_generator=True, exact=False) is None
    assert replicate_rows("permutation", 300, has_generator=True, exact=True) == 300
    assert sweep_refusal("n_estimators", "bootstrap") is None
    assert sweep_refusal("noise", "samples", {"noise"}) is None
    assert "permutation" in sweep_refusal("n_estimators", "permutation")
    assert "fresh samples" in sweep_refusal("noise", "bootstrap", {"noise"})
    with pytest.raises(ValueError, match="switch the replicates"):
        check_sweep("n_samples", "permutation")
    with pytest.raises(ValueError, match="needs fresh samples"):
        check_sweep("irrelevant", "samples", {"noise"})
    with pytest.raises(ValueError, match="must be one of"):
        check_sweep("colour", "samples")
    # R = 10: a sweep of T over 1, 10, 50 grows 10 x 61 trees; of N over 3 values at T = 5,
    # 10 x 5 x 3
    assert sweep_trees("n_estimators", [1, 10, 50], n_replicates=10, n_estimators=7) == 610
    assert sweep_trees("n_samples", [50, 200, 1000], n_replicates=10, n_estimators=5) == 150
    check_tree_budget(500, 500)
    with pytest.raises(ValueError, match="501 trees, more than the limit of 500"):
        check_tree_budget(501, 500)
