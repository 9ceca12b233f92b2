"""Figure builders of varimp_core.plots.decomposition: heatmaps and level-iii terms."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from varimp_core.api import compute_importances, load_data
from varimp_core.plots.decomposition import (CUT_SCALE, make_degree_heatmap, make_degree_pair,
                                             make_terms_figure, set_label)
from varimp_core.plots.style import HEATMAP_SCALE, variable_color
from varimp_core.exact.eqn3 import conditional_terms


@pytest.fixture(scope="module")
def led():
    return load_data(problem="led")


@pytest.fixture(scope="module")
def led_k1(led):
    return compute_importances(led, method="exact", max_features=1)


@pytest.fixture(scope="module")
def led_k7(led):
    return compute_importances(led, method="exact", max_features=7)


def _z(trace) -> np.ndarray:
    return np.asarray(trace.z, dtype=float)


def test_heatmap_z_is_by_degree(led_k1):
    fig = make_degree_heatmap(led_k1)
    assert len(fig.data) == 1
    hm = fig.data[0]
    np.testing.assert_array_equal(_z(hm), led_k1.by_degree)
    assert list(hm.y) == list(led_k1.variables) and list(hm.x) == list(range(7))
    assert hm.zmin == 0 and hm.zmax == pytest.approx(led_k1.by_degree.max())
    assert hm.colorbar.title.text == "bits"
    assert "bits" in hm.hovertemplate
    assert fig.layout.yaxis.autorange == "reversed"  # X1 on top, as in Figure 2


def test_heatmap_uses_cividis(led_k1):
    fig = make_degree_heatmap(led_k1)
    # plotly expands a named scale into its stops; compare with the named scale's stops.
    import plotly.express as px

    stops = [c for _, c in fig.data[0].colorscale]
    assert HEATMAP_SCALE.lower() == "cividis" and stops == px.colors.sequential.Cividis


def test_xor_cells_by_hand():
    # p = 2, Y = X1 xor X2: I(Xm;Y) = 0 and I(Xm;Y|X_other) = 1, so row m is
    # [1/(C(2,0)*2) * 0, 1/(C(2,1)*1) * 1] = [0, 0.5].
    r = compute_importances(load_data(problem="xor:relevant=2"), method="exact")
    z = _z(make_degree_heatmap(r).data[0])
    np.testing.assert_allclose(z, [[0.0, 0.5], [0.0, 0.5]], atol=1e-12)


def test_depth_greys_the_cut_degrees(led_k1):
    q = 3
    fig = make_degree_heatmap(led_k1, max_depth=q)
    kept, cut = fig.data
    bd = led_k1.by_degree
    np.testing.assert_array_equal(_z(kept)[:, :q], bd[:, :q])
    assert np.isnan(_z(kept)[:, q:]).all()
    np.testing.assert_array_equal(_z(cut)[:, q:], bd[:, q:])
    assert np.isnan(_z(cut)[:, :q]).all()
    assert [c for _, c in cut.colorscale] == [c for _, c in CUT_SCALE]
    # Proposition 6: the totals at depth q are the sums of the kept columns, which the
    # core computes with max_depth=q.
    led = load_data(problem="led")
    pruned = compute_importances(led, method="exact", max_features=1, max_depth=q)
    np.testing.assert_allclose(np.nansum(_z(kept), axis=1), pruned.importances, atol=1e-12)
    custom = np.asarray(kept.customdata)
    np.testing.assert_allclose(custom[:, 0, 1], pruned.importances, atol=1e-12)
    np.testing.assert_allclose(custom[:, 0, 0], led_k1.importances, atol=1e-12)
    assert custom[0, :, 2].tolist() == [math.comb(6, k) for k in range(7)]


def test_pair_shares_one_colour_scale(led_k1, led_k7):
    fig = make_degree_pair(led_k1, led_k7)
    assert len(fig.data) == 2
    left, right = fig.data
    assert left.coloraxis == right.coloraxis == "coloraxis"
    top = max(led_k1.by_degree.max(), led_k7.by_degree.max())
    assert fig.layout.coloraxis.cmin == 0
    assert fig.layout.coloraxis.cmax == pytest.approx(top)
    np.testing.assert_array_equal(_z(left), led_k1.by_degree)
    np.testing.assert_array_equal(_z(right), led_k7.by_degree)
    # A click tells the panels apart by the trace's axes.
    assert left.xaxis == "x" and right.xaxis == "x2"
    np.testing.assert_allclose(np.asarray(right.customdata)[:, 0, 0], led_k7.importances)
    assert "K = 1" in fig.layout.annotations[0].text
    assert "K = 7" in fig.layout.annotations[1].text


def test_pair_with_given_zmax_and_depth(led_k1, led_k7):
    fig = make_degree_pair(led_k1, led_k7, 1.0, max_depth=2)
    assert fig.layout.coloraxis.cmax == 1.0
    assert len(fig.data) == 4
    assert all(tr.zmax == 1.0 for tr in fig.data if tr.coloraxis is None)
    # Figure 2, right (K = 7): at k = 0 only X2 and X5 are ever chosen, masking the others.
    k0 = _z(fig.data[2])[:, 0]
    assert np.flatnonzero(k0 > 1e-9).tolist() == [1, 4]


def test_pair_needs_the_same_variables(led_k1):
    other = compute_importances(load_data(problem="xor:relevant=2"), method="exact")
    with pytest.raises(ValueError, match="same variables"):
        make_degree_pair(led_k1, other)


def test_terms_bars_sum_to_the_cell_xor():
    # p = 2: X1's k = 1 term is 1/(C(2,1)*1) * I(X1;Y|X2) = 1/2 * 1 = 0.5.
    data = load_data(problem="xor:relevant=2")
    terms = conditional_terms(data.table, "X1", 1)
    fig = make_terms_figure(terms, variables=data.variables)
    assert list(fig.data[0].x) == ["{X2}"]
    np.testing.assert_allclose(fig.data[0].y, [0.5], atol=1e-12)
    r = compute_importances(data, method="exact")
    assert sum(fig.data[0].y) == pytest.approx(r.by_degree[0, 1], abs=1e-12)
    assert fig.data[0].marker.color == variable_color(0)


@pytest.mark.parametrize("var,k", [("X5", 2), ("X1", 0), ("X7", 6), ("X3", 3)])
def test_terms_bars_sum_to_the_cell_led(led, led_k1, var, k):
    terms = conditional_terms(led.table, var, k)
    fig = make_terms_figure(terms, variables=led.variables, max_bars=5)
    total = sum(float(np.sum(tr.y)) for tr in fig.data)
    m = led.variables.index(var)
    assert total == pytest.approx(led_k1.by_degree[m, k], abs=1e-12)
    assert len(fig.data[0].x) == min(5, math.comb(6, k))
    if math.comb(6, k) > 5:
        assert fig.data[1].x[0] == f"other {math.comb(6, k) - 5} sets"


def test_terms_hover_and_axis_in_bits(led):
    fig = make_terms_figure(conditional_terms(led.table, "X2", 1), variables=led.variables)
    assert "bits" in fig.layout.yaxis.title.text
    assert "I(X2; Y | B)" in fig.data[0].hovertemplate
    np.testing.assert_allclose(np.asarray(fig.data[0].customdata)[:, 1],
                               1 / (math.comb(7, 1) * 6))


def test_terms_figure_of_nothing():
    empty = pd.DataFrame(columns=["variable", "conditioning", "degree", "weight", "cmi", "term"])
    fig = make_terms_figure(empty)
    assert len(fig.data) == 0 and "No conditioning sets" in fig.layout.annotations[0].text


def test_set_label():
    assert set_label([]) == "\u2205"
    assert set_label(["X2", "X3"]) == "{X2, X3}"
