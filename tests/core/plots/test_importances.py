"""Figure builders of varimp_core.plots.importances: the figures carry the core's numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from varimp_core.api import compute_importances, load_data
from varimp_core.plots.importances import (make_importance_figure, make_theorem2_figure,
                                           method_label)
from varimp_core.plots.style import EXACT_COLOR, MANY_VARIABLES_COLOR, variable_color
from varimp_core.result import ImportanceResult

# Louppe et al. (2013), Table 2, column "Eqn. 3" (printed to 3 decimals, truncated).
PAPER_EQN3_LED = [0.412, 0.581, 0.531, 0.542, 0.656, 0.225, 0.372]


@pytest.fixture(scope="module")
def led():
    return load_data(problem="led")


@pytest.fixture(scope="module")
def xor():
    return load_data(problem="xor:relevant=2,irrelevant=1")


@pytest.fixture(scope="module")
def led_forest(led):
    return compute_importances(led, method="forest", max_features=3, n_estimators=64,
                               random_state=1)


@pytest.fixture(scope="module")
def led_exact_k3(led):
    return compute_importances(led, method="exact", max_features=3)


def test_exact_bars_are_eqn3_values_of_the_paper(led):
    result = compute_importances(led, method="exact", max_features=1)
    fig = make_importance_figure(result)
    bars = fig.data[0]
    assert bars.type == "bar"
    assert list(bars.x) == list(led.variables)
    np.testing.assert_array_equal(np.asarray(bars.y, dtype=float), result.importances)
    np.testing.assert_allclose(bars.y, PAPER_EQN3_LED, atol=1.5e-3)
    assert bars.error_y.array is None  # no spread for an exact result
    assert len(fig.data) == 1


def test_xor_bars_by_hand(xor):
    # p = 3, Y = X1 xor X2, X3 irrelevant. Eqn 3 for X1: I(X1;Y) = 0 (k=0);
    # k=1: I(X1;Y|X2) = 1 with weight 1/(C(3,1)*2) = 1/6, I(X1;Y|X3) = 0;
    # k=2: I(X1;Y|X2,X3) = 1 with weight 1/(C(3,2)*1) = 1/3.  Total 1/6 + 1/3 = 1/2.
    result = compute_importances(xor, method="exact", max_features=1)
    fig = make_importance_figure(result)
    np.testing.assert_allclose(fig.data[0].y, [0.5, 0.5, 0.0], atol=1e-12)


def test_bars_use_the_variable_colours(led):
    result = compute_importances(led, method="exact", max_features=1)
    colors = make_importance_figure(result).data[0].marker.color
    assert list(colors) == [variable_color(i) for i in range(7)]


def test_sampled_bars_have_standard_errors_and_spread(led_forest):
    assert [t.type for t in make_importance_figure(led_forest).data] == ["bar"]   # by default
    with pytest.raises(ValueError, match="not 'box'"):
        make_importance_figure(led_forest, spread="box")
    fig = make_importance_figure(led_forest, spread="trees")
    bars, box = fig.data[0], fig.data[1]
    per_tree = led_forest.per_tree
    t = per_tree.shape[0]
    np.testing.assert_allclose(bars.y, per_tree.mean(axis=0), rtol=1e-12)
    # One Monte Carlo standard error: per-tree SD (ddof=1) / sqrt(T).
    np.testing.assert_allclose(bars.error_y.array, per_tree.std(axis=0, ddof=1) / math.sqrt(t),
                               rtol=1e-12)
    assert box.type == "box"
    np.testing.assert_allclose(box.q1, np.percentile(per_tree, 25, axis=0))
    np.testing.assert_allclose(box.median, np.median(per_tree, axis=0))
    np.testing.assert_allclose(box.q3, np.percentile(per_tree, 75, axis=0))
    np.testing.assert_allclose(box.lowerfence, per_tree.min(axis=0))
    np.testing.assert_allclose(box.upperfence, per_tree.max(axis=0))
    assert f"T = {t}" in box.name


def test_exact_overlay_is_black_diamonds(led_forest, led_exact_k3):
    fig = make_importance_figure(led_forest, led_exact_k3)
    diamonds = fig.data[-1]
    assert diamonds.type == "scatter" and diamonds.marker.symbol == "diamond"
    assert diamonds.marker.color == EXACT_COLOR
    np.testing.assert_array_equal(np.asarray(diamonds.y, dtype=float), led_exact_k3.importances)
    # Table 2, K = 3 (10,000 sampled trees): within Monte Carlo error of the exact value.
    np.testing.assert_allclose(diamonds.y, [0.327, 0.715, 0.496, 0.484, 0.778, 0.126, 0.392],
                               atol=5e-3)


def test_exact_and_sampled_look_different(led, led_forest):
    exact = compute_importances(led, method="exact", max_features=1)
    solid = make_importance_figure(exact)
    hatched = make_importance_figure(led_forest)
    assert solid.data[0].marker.pattern.shape == ""
    assert hatched.data[0].marker.pattern.shape == "/"
    assert solid.data[0].marker.opacity == 1.0 and hatched.data[0].marker.opacity < 1.0
    assert solid.layout.annotations[0].text == "exact"
    assert hatched.layout.annotations[0].text.startswith("sampled")


def test_axes_in_bits_and_hover_gives_values(led_forest, led_exact_k3):
    fig = make_importance_figure(led_forest, led_exact_k3)
    assert "bits" in fig.layout.yaxis.title.text
    assert "%{y:.6f} bits" in fig.data[0].hovertemplate
    assert "standard error" in fig.data[0].hovertemplate
    assert "%{y:.6f} bits" in fig.data[-1].hovertemplate


def test_overlay_needs_the_same_variables(led_forest, xor):
    other = compute_importances(xor, method="exact")
    with pytest.raises(ValueError, match="same variables"):
        make_importance_figure(led_forest, other)


def test_method_label():
    r = ImportanceResult(variables=("a",), importances=[1.0], by_degree=[[1.0]], method="forest",
                         parameters={"n_estimators": 250})
    assert method_label(r) == "multiway forest, T = 250"
    assert method_label(ImportanceResult(variables=("a",), importances=[1.0],
                                         by_degree=[[1.0]], method="exact")) \
        == "exact (infinite forest)"


def test_theorem2_figure_stacks_to_the_sum_and_marks_information(led):
    result = compute_importances(led, method="exact", max_features=7)
    fig = make_theorem2_figure(result)
    widths = [tr.x[0] for tr in fig.data]
    np.testing.assert_allclose(widths, result.importances)
    # Theorem 2: the sum is I(X1..X7; Y) = H(Y) = log2(10) for LED.
    assert sum(widths) == pytest.approx(math.log2(10), abs=1e-9)
    line = fig.layout.shapes[0]
    assert line.x0 == pytest.approx(math.log2(10), abs=1e-9)
    assert "3.3219 bits" in fig.layout.xaxis.title.text


def test_many_variables_show_the_largest_first():
    rng = np.random.default_rng(0)
    p, t = 80, 5
    per_tree = rng.random((t, p))
    r = ImportanceResult(variables=tuple(f"V{i}" for i in range(p)),
                         importances=per_tree.mean(axis=0),
                         by_degree=np.diag(per_tree.mean(axis=0)), method="forest",
                         per_tree=per_tree)
    fig = make_importance_figure(r, r, max_bars=10, spread="trees")
    top = np.argsort(-r.importances)[:10]
    assert list(fig.data[0].x) == [f"V{i}" for i in top]
    np.testing.assert_array_equal(np.asarray(fig.data[0].y, float), r.importances[top])
    np.testing.assert_allclose(fig.data[0].error_y.array, r.importances_sem[top])
    # 80 variables, 10 colours: one slate colour, not ten colours each claiming 8 variables.
    assert set(fig.data[0].marker.color) == {MANY_VARIABLES_COLOR}
    np.testing.assert_allclose(fig.data[1].median, np.median(per_tree[:, top], axis=0))
    np.testing.assert_array_equal(np.asarray(fig.data[-1].y, float), r.importances[top])
    assert "10 largest of 80" in fig.layout.xaxis.title.text


def test_chance_levels_are_red_dashes_and_grey_null_whiskers(led):
    """The figure draws the chance levels it is given: dashes at the analytic level, whiskers
    from the null's 2.5% to its 97.5% quantile, the p-values in the hover."""
    from varimp_core.studies.chance import ChanceLevels
    from varimp_core.studies.nulls import PermutationNull

    p = len(led.variables)
    r = compute_importances(led, method="exact")
    null = np.outer(np.arange(40) / 400, np.ones(p))           # 0 .. 0.0975 for every variable
    c = ChanceLevels(variables=led.variables, n_levels=np.full(p, 2), n_samples=500,
                     observed=r.importances, analytic=np.full(p, 0.05),
                     permutation=PermutationNull(led.variables, r.importances, null),
                     distinct_inputs=10, information=3.0, output_entropy=3.3)
    fig = make_importance_figure(r, chance=c)
    dash, band = fig.data[-2], fig.data[-1]
    np.testing.assert_allclose(dash.y, 0.05)
    assert "chance level" in dash.name and "R = 40" in band.name
    # numpy's linear quantiles of 0, 1/400, ..., 39/400: 0.975*39/400 and 38.025/400
    np.testing.assert_allclose(band.y, 38.025 / 400)
    np.testing.assert_allclose(np.asarray(band.y) - band.error_y.arrayminus, 0.975 / 400)
    np.testing.assert_allclose(np.asarray(band.customdata)[:, 1], 1 / 41)  # above all 40 nulls
    with pytest.raises(ValueError, match="same variables"):
        make_importance_figure(compute_importances(load_data(problem="xor"), method="exact"),
                               chance=c)


def test_order_importance_sorts_largest_first_and_keeps_colours(led):
    """Table 2's Eqn 3 column (Louppe et al. 2013), largest first: X5 0.656, X2 0.581,
    X4 0.542, X3 0.531, X1 0.412, X7 0.372, X6 0.225; each bar keeps its variable's colour,
    the exact diamonds follow their bars."""
    result = compute_importances(led, method="exact", max_features=1)
    fig = make_importance_figure(result, result, order="importance")
    assert list(fig.data[0].x) == ["X5", "X2", "X4", "X3", "X1", "X7", "X6"]
    np.testing.assert_allclose(fig.data[0].y, sorted(PAPER_EQN3_LED, reverse=True), atol=1.5e-3)
    assert list(fig.data[0].marker.color) == [variable_color(i) for i in (4, 1, 3, 2, 0, 6, 5)]
    assert list(fig.data[-1].x) == list(fig.data[0].x)
    assert "largest first" in fig.layout.xaxis.title.text
    with pytest.raises(ValueError, match="not 'size'"):
        make_importance_figure(result, order="size")
