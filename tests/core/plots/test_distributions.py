"""Distribution figures: every drawn number is the core's number (replicates, exact, fits)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from varimp_core.data.prepare import prepare_problem
from varimp_core.studies.montecarlo import monte_carlo, sweep
from varimp_core.studies.fits import fit_null_distributions
from varimp_core.studies.nulls import permutation_null, plugin_bias_overlay
from varimp_core.plots.distributions import (make_distribution_figure, make_summary_table_frame,
                                             make_sweep_figure)
from varimp_core.studies.distributions import histogram_panels
from varimp_core.studies.montecarlo import sweep_statistics
from varimp_core.plots.style import EXACT_COLOR, variable_color
from varimp_core.problems.registry import get_problem

XOR = "xor:irrelevant=2"           # Sutera (2013): 2 relevant, 2 irrelevant bits


@pytest.fixture(scope="module")
def mc():
    return monte_carlo(XOR, n_replicates=40, n_samples=500, n_estimators=10, random_state=1)


def _traces(fig, meta):
    return [t for t in fig.data if t.meta == meta]


def test_histograms_are_the_replicates_and_the_lines_the_exact_values(mc):
    fig = make_distribution_figure(mc, histogram_panels(mc))
    hists = _traces(fig, "replicates")
    assert [t.name for t in hists] == ["X1", "X2", "X3", "X4"]
    for j, t in enumerate(hists):
        np.testing.assert_array_equal(np.asarray(t.x), mc.replicates[:, j])
        assert t.histnorm == "probability density"
        assert t.marker.color == variable_color(j)
    exact = _traces(fig, "exact")
    assert len(exact) == 4
    for j, t in enumerate(exact):
        assert list(t.x) == [mc.exact[j], mc.exact[j]]
        assert t.line.color == EXACT_COLOR
    # Eqn 3 (Louppe et al. 2013): XOR's relevant bits get 1/2 bit each, irrelevant ones 0
    np.testing.assert_allclose([t.x[0] for t in exact], [0.5, 0.5, 0.0, 0.0], atol=1e-12)
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["X1 \u00b7 relevant", "X2 \u00b7 relevant", "X3 \u00b7 irrelevant",
                      "X4 \u00b7 irrelevant"]
    # one legend key per kind of line, not one per panel
    assert sum(bool(t.showlegend) for t in exact) == 1


def test_default_fits_are_chi2_for_irrelevant_and_normal_for_relevant(mc):
    fig = make_distribution_figure(mc, histogram_panels(mc, fit_null_distributions(mc)))
    fits = fit_null_distributions(mc)
    for meta, dist, variables in [("fit-normal", "normal", ["X1", "X2"]),
                                  ("fit-chi2", "chi2", ["X3", "X4"])]:
        curves = _traces(fig, meta)
        assert len(curves) == 2
        for v, t in zip(variables, curves):
            row = fits.set_index("variable").loc[v]
            law = stats.norm(row["mean"], row["std"]) if dist == "normal" else \
                stats.chi2(row["df"], scale=row["scale"])
            np.testing.assert_allclose(t.y, law.pdf(np.asarray(t.x)), rtol=1e-12)
            j = mc.variables.index(v)
            assert min(t.x) <= mc.replicates[:, j].min() and max(t.x) >= mc.replicates[:, j].max()


def test_every_given_fit_row_is_drawn_and_an_empty_frame_draws_none(mc):
    both = pd.concat([fit_null_distributions(mc, relevant=[]),
                      fit_null_distributions(mc, relevant=list(mc.variables))])
    fig = make_distribution_figure(mc, histogram_panels(mc, both))
    assert len(_traces(fig, "fit-chi2")) == 4 and len(_traces(fig, "fit-normal")) == 4
    fig = make_distribution_figure(mc, histogram_panels(mc, both.iloc[0:0]))
    assert not _traces(fig, "fit-chi2") and not _traces(fig, "fit-normal")


def test_plugin_bias_lines_sit_at_the_closed_form_for_irrelevant_bits(mc):
    fig = make_distribution_figure(mc, histogram_panels(mc), overlay=plugin_bias_overlay(mc))
    bias = _traces(fig, "bias")
    overlay = plugin_bias_overlay(mc).set_index("variable")
    assert len(bias) == 2       # X3 and X4 only: the formula is for irrelevant variables
    # nulls.expected_irrelevant_importance docstring: 1/4 + 6/12 + 8/12 = 17/12 root-node
    # biases of (|Y|-1)(|X|-1) / (2 N ln 2) each, for XOR with two irrelevant bits
    closed = 17 / 12 / (2 * 500 * math.log(2))
    for v, t in zip(["X3", "X4"], bias):
        assert list(t.x) == [overlay.loc[v, "expected"]] * 2
        assert t.x[0] == pytest.approx(closed, rel=1e-12)
    # the overlay passed in (e.g. read back from a cache) is what is drawn
    given = plugin_bias_overlay(mc).assign(expected=[np.nan, np.nan, 0.01, 0.02])
    fig = make_distribution_figure(mc, histogram_panels(mc), overlay=given)
    xs = [t.x[0] for t in _traces(fig, "bias")]
    assert xs == [0.01, 0.02]


def test_histogram_bins_cover_every_replicate_once(mc):
    fig = make_distribution_figure(mc, histogram_panels(mc))
    for t in _traces(fig, "replicates"):
        x = np.asarray(t.x)
        edges = np.arange(t.xbins.start, t.xbins.end + t.xbins.size / 2, t.xbins.size)
        counts, _ = np.histogram(x, bins=edges)
        assert counts.sum() == x.size
        assert t.xbins.start <= x.min() and x.max() < t.xbins.end


def test_violins_hold_the_replicates_and_diamonds_the_exact_values(mc):
    fig = make_distribution_figure(mc, kind="violin", overlay=plugin_bias_overlay(mc))
    violins = _traces(fig, "replicates")
    for j, t in enumerate(violins):
        assert t.type == "violin" and t.x0 == mc.variables[j]
        np.testing.assert_array_equal(np.asarray(t.y), mc.replicates[:, j])
    (exact,) = _traces(fig, "exact")
    assert list(exact.x) == list(mc.variables)
    np.testing.assert_array_equal(exact.y, mc.exact)
    (bias,) = _traces(fig, "bias")
    assert list(bias.x) == ["X3", "X4"]
    with pytest.raises(ValueError, match="kind"):
        make_distribution_figure(mc, kind="boxes")


def test_permutation_null_draws_the_null_and_the_observed_values():
    sample = prepare_problem(get_problem(XOR), n_samples=300, random_state=2)
    null = permutation_null(sample, n_permutations=12, n_estimators=5, random_state=3)
    fig = make_distribution_figure(null, histogram_panels(null))
    for j, t in enumerate(_traces(fig, "replicates")):
        np.testing.assert_array_equal(np.asarray(t.x), null.null[:, j])
    assert [t.x[0] for t in _traces(fig, "exact")] == list(null.observed)
    assert _traces(fig, "exact")[0].name == "observed"
    assert not _traces(fig, "bias")
    table = make_summary_table_frame(null)
    np.testing.assert_array_equal(table["observed"], null.observed)
    np.testing.assert_array_equal(table["p-value"], null.p_values)
    np.testing.assert_allclose(table["null std"], null.null.std(axis=0, ddof=1))


def test_a_run_cancelled_before_any_replicate_draws_a_message():
    r = monte_carlo(XOR, n_replicates=10, n_samples=100, n_estimators=2, should_stop=lambda: True)
    assert r.cancelled and r.n_replicates == 0
    fig = make_distribution_figure(r, histogram_panels(r))
    assert not fig.data and "No replicate" in fig.layout.annotations[0].text


def test_panels_are_the_core_s_panels():
    r = monte_carlo("xor:irrelevant=6", n_replicates=5, n_samples=50, n_estimators=2,
                    max_depth=1, exact=False)
    fig = make_distribution_figure(r, histogram_panels(r, max_panels=3))
    assert [t.name for t in _traces(fig, "replicates")] == ["X1", "X2", "X3"]
    assert not _traces(fig, "exact")
    with pytest.raises(ValueError, match="histogram_panels"):
        make_distribution_figure(r)          # histograms draw the core's bins, never their own


def test_summary_table_is_the_thesis_mean_pm_std(mc):
    table = make_summary_table_frame(mc)
    assert list(table.columns) == ["variable", "relevance", "mean", "std", "mean \u00b1 std",
                                   "sem", "exact", "mean \u2212 exact", "R"]
    np.testing.assert_array_equal(table["mean"], mc.replicates.mean(axis=0))
    np.testing.assert_array_equal(table["std"], mc.replicates.std(axis=0, ddof=1))
    np.testing.assert_array_equal(table["exact"], mc.exact)
    np.testing.assert_array_equal(table["mean \u2212 exact"], mc.mean - mc.exact)
    assert list(table["relevance"]) == ["relevant", "relevant", "irrelevant", "irrelevant"]
    m, s = mc.mean[0], mc.std[0]
    assert table["mean \u00b1 std"][0] == f"{m:.4f} \u00b1 {s:.4f}"   # four digits as the thesis
    assert (table["R"] == 40).all()


# -- sweeps --------------------------------------------------------------------------
def test_rank_stability_counts_replicates_in_the_reference_order():
    # A beats B in 3 of 4 replicates; the exact order is A > B
    df = pd.DataFrame({"param": "n_estimators", "value": 1, "replicate": np.repeat(range(4), 2),
                       "variable": ["A", "B"] * 4,
                       "importance": [0.9, 0.1, 0.8, 0.2, 0.3, 0.4, 0.7, 0.0],
                       "exact": [1.0, 0.0] * 4})
    s = sweep_statistics(df).set_index("variable")
    assert s.loc["A", "stability"] == 0.75 and s.loc["B", "stability"] == 0.75
    assert s.loc["A", "mean"] == pytest.approx(np.mean([0.9, 0.8, 0.3, 0.7]))
    assert s.loc["A", "std"] == pytest.approx(np.std([0.9, 0.8, 0.3, 0.7], ddof=1))
    # tied exact values (XOR's X1 = X2) share their ranks: any order between them is stable
    tied = df.assign(exact=0.5)
    assert (sweep_statistics(tied)["stability"] == 1.0).all()


def test_sweep_statistics_match_the_core_summary():
    long = sweep(XOR, "n_estimators", [1, 5], n_replicates=15, n_samples=200, replicates=True)
    short = sweep(XOR, "n_estimators", [1, 5], n_replicates=15, n_samples=200)
    s = sweep_statistics(long)
    np.testing.assert_allclose(s["mean"], short["mean"], rtol=1e-12)
    np.testing.assert_allclose(s["std"], short["std"], rtol=1e-12)
    np.testing.assert_array_equal(s["exact"], short["exact"])
    passed = sweep_statistics(short)
    assert passed["stability"].isna().all()
    np.testing.assert_array_equal(passed["mean"], short["mean"])


def test_sweep_figure_draws_mean_std_stability_and_the_sqrt_t_reference():
    df = sweep(XOR, "n_estimators", [1, 4, 16], n_replicates=20, n_samples=200,
               replicates=True)
    s = sweep_statistics(df)
    fig = make_sweep_figure(sweep_statistics(df), "n_estimators", log_x=True)
    for meta, column in [("mean", "mean"), ("std", "std"), ("stability", "stability")]:
        traces = _traces(fig, meta)
        assert [t.name for t in traces] == ["X1", "X2", "X3", "X4"]
        for t in traces:
            d = s[s.variable == t.name].sort_values("value")
            assert list(t.x) == d["value"].tolist()
            np.testing.assert_array_equal(t.y, d[column].to_numpy())
    for t in _traces(fig, "mean"):
        d = s[s.variable == t.name].sort_values("value")
        np.testing.assert_array_equal(t.error_y.array, d["std"].to_numpy())
    (ref,) = _traces(fig, "reference")
    products = np.asarray(ref.y) * np.sqrt(np.asarray(ref.x))
    np.testing.assert_allclose(products, products[0], rtol=1e-12)      # y = c / sqrt(T)
    first = s[s.value == 1]
    assert ref.y[0] == pytest.approx(first["std"].max())
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis2.type == "log"
    assert [t.y for t in _traces(fig, "exact")][0] == (0.5, 0.5, 0.5)


def test_sweep_of_a_noise_rate_has_linear_axes_and_no_reference():
    df = sweep(XOR, "noise", [0.0, 0.2], n_replicates=6, n_samples=200, n_estimators=5)
    fig = make_sweep_figure(sweep_statistics(df), "noise")
    assert not _traces(fig, "reference") and not _traces(fig, "stability")
    assert fig.layout.xaxis.type in (None, "linear", "-")
    assert "noise" in fig.layout.xaxis2.title.text
    # exact values fall with the output noise (Sutera 2013, Table 3.23)
    x1 = _traces(fig, "exact")[0]
    assert x1.y[0] == pytest.approx(0.5) and x1.y[1] < x1.y[0]


def test_a_sweep_over_irrelevant_variables_draws_each_variable_where_it_exists():
    df = sweep("xor", "irrelevant", [0, 2], n_replicates=6, n_samples=200, n_estimators=3,
               replicates=True)
    s = sweep_statistics(df)
    assert s.groupby("value")["variable"].apply(list).to_dict() == \
        {0: ["X1", "X2"], 2: ["X1", "X2", "X3", "X4"]}
    fig = make_sweep_figure(sweep_statistics(df), "irrelevant")
    xs = {t.name: list(t.x) for t in _traces(fig, "mean")}
    assert xs == {"X1": [0, 2], "X2": [0, 2], "X3": [2], "X4": [2]}
    # Theorem 5 (Louppe et al. 2013): at K = 1 the relevant bits keep their 1/2 bit
    assert [t.y for t in _traces(fig, "exact")][0] == (0.5, 0.5)
