"""Finite-forest figures (issue #29): the swap heatmap, the tree gallery, the exact error bars
and the exact expected-error law of "How many trees do I need?".

Expected values come from Louppe's toy worked by hand (thesis, section 7.2.3) and from the
brute-force law of ``tree_law_oracle`` (every tree enumerated, written without varimp_core).

Louppe's toy: three equally likely rows, X1 = 0, 1, 2, X2 = Y = 0, 1, 1, so
H(Y) = log2 3 - 2/3 bits.  scikit-learn's extra-trees at K = 1 draw the root's variable
with probability 1/2 each:

* X2: one perfect split, I = (0, H)                                         probability 1/2
* X1, threshold in (0, 1) (half of [0, 2]): perfect, I = (H, 0)             probability 1/4
* X1, threshold in (1, 2): {0, 1} | {2}, gain g = H - 2/3; the node {0, 1} (mass 2/3,
  one bit) splits on X1 (I = (g + 2/3, 0) = (H, 0)) or on X2 (I = (g, 2/3)), 1/8 each.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from _tables import rows_of
from tree_law_oracle import moments as law_moments
from tree_law_oracle import multiway_law
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.enumerate_trees import enumerate_trees
from varimp_core.exact.moments import exact_moments
from varimp_core.problems.registry import get_problem

H = math.log2(3) - 2 / 3
G = H - 2 / 3
#: The four trees by hand: (probability, importance vector).
TOY_TREES = [(1 / 2, (0.0, H)), (1 / 4, (H, 0.0)), (1 / 8, (H, 0.0)), (1 / 8, (G, 2 / 3))]


def _hand_moments():
    q = np.array([t[0] for t in TOY_TREES])
    imp = np.array([t[1] for t in TOY_TREES])
    mean = q @ imp
    c = imp - mean
    return mean, (c * q[:, None]).T @ c


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _toy():
    return get_problem("toy").exact_table()


def test_the_toy_problem_is_louppes_table():
    t = _toy()
    assert t.X.tolist() == [[0, 0], [1, 1], [2, 1]] and t.y.tolist() == [0, 1, 1]
    np.testing.assert_allclose(t.weight, [1 / 3] * 3)


def test_the_hand_mean_is_the_thesis_formula():
    mean, _ = _hand_moments()
    # 3/8 H + 1/8 (H - 2/3) and H/2 + 1/12: 0.3758 and 0.5425, which sum to H(Y) = 0.9183
    assert mean == pytest.approx([0.3758, 0.5425], abs=5e-5)
    assert mean.sum() == pytest.approx(H, abs=1e-12)


@pytest.mark.parametrize("T", [1, 10, 100])
def test_swap_heatmap_is_the_clt_probability_on_the_toy(T):
    from varimp_core.plots.stability import make_flip_figure

    mean, cov = _hand_moments()
    fig = make_flip_figure(exact_moments(_toy(), method="exact-et", max_features=1), T)
    z = fig.data[0].z
    assert list(fig.data[0].x) == ["X2", "X1"]          # larger mean first
    want = _phi(-abs(mean[0] - mean[1]) * math.sqrt(T)
                / math.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]))
    assert z[0][1] == pytest.approx(want, abs=1e-12) and z[1][0] == pytest.approx(want, abs=1e-12)
    assert z[0][0] is None and z[1][1] is None
    assert "exact" in [a.text for a in fig.layout.annotations]


def test_swap_heatmap_of_an_estimate_says_estimate():
    from varimp_core.api import compute_importances
    from varimp_core.exact.moments import moments_from_trees
    from varimp_core.plots.stability import make_flip_figure

    r = compute_importances(_toy(), method="sklearn-et", max_features=1, n_estimators=50,
                            bootstrap=False, random_state=0)
    fig = make_flip_figure(moments_from_trees(r), 10)
    assert "estimate from 50 trees" in [a.text for a in fig.layout.annotations]


def test_swap_heatmap_on_an_oracle_table():
    """Three inputs, multiway K = 1: the flip of every pair from the oracle's law."""
    from varimp_core.plots.stability import make_flip_figure

    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, size=(7, 3))
    y = rng.integers(0, 2, size=7)
    table = DiscreteTable.from_codes(X, y, weight=rng.choice([1.0, 2.0], size=7))
    mean, cov = law_moments(multiway_law(rows_of(table), 3, 1))
    fig = make_flip_figure(exact_moments(table, max_features=1), 7)
    order = list(np.argsort(-mean, kind="stable"))
    assert list(fig.data[0].x) == [f"X{i + 1}" for i in order]
    for a, i in enumerate(order):
        for b, j in enumerate(order):
            if i == j:
                continue
            v = cov[i, i] + cov[j, j] - 2 * cov[i, j]
            want = _phi(-abs(mean[i] - mean[j]) * math.sqrt(7) / math.sqrt(v))
            assert fig.data[0].z[a][b] == pytest.approx(want, abs=1e-9)


def test_gallery_trees_and_their_mean_on_the_toy():
    from varimp_core.api import compute_importances
    from varimp_core.plots.stability import (make_gallery_mean_figure, probability_text,
                                             tree_layout)

    e = enumerate_trees(_toy(), method="exact-et", max_features=1)
    assert sorted(probability_text(t.probability) for t in e.trees) == ["1/2", "1/4", "1/8",
                                                                        "1/8"]
    got = sorted((round(t.probability, 12), tuple(np.round(t.importances, 12))) for t in e.trees)
    want = sorted((round(q, 12), tuple(np.round(v, 12))) for q, v in TOY_TREES)
    assert got == want
    exact = compute_importances(_toy(), method="exact-et", max_features=1).importances
    fig = make_gallery_mean_figure(e, exact)
    mean, _ = _hand_moments()
    np.testing.assert_allclose(fig.data[0].y, mean, atol=1e-12)   # the mean's recursion
    np.testing.assert_allclose(fig.data[1].y, mean, atol=1e-12)   # sum of q_t I_t
    # the X1-then-X2 tree: root X1 over a split on X2 and a leaf; three leaves
    tree = next(t for t in e.trees if t.importances[1] == pytest.approx(2 / 3))
    nodes, edges = tree_layout(tree.structure)
    inner = sorted((n["depth"], n["label"]) for n in nodes if not n["leaf"])
    assert inner == [(0, "X1"), (1, "X2")]
    assert sum(n["leaf"] for n in nodes) == 3 and len(edges) == 4
    root = next(n for n in nodes if n["depth"] == 0)
    assert root["gain"] == pytest.approx(G, abs=1e-12)


def test_probability_text():
    from varimp_core.plots.stability import probability_text

    assert probability_text(0.125) == "1/8" and probability_text(1.0) == "1"
    assert probability_text(1 / 3) == "1/3" and probability_text(0.1234567) == "0.1235"


@pytest.mark.parametrize("T", [1, 37, 1000])
def test_exact_bars_whiskers_are_z_sqrt_sigma_over_t(T):
    from varimp_core.api import compute_importances
    from varimp_core.plots.importances import make_importance_figure

    result = compute_importances(_toy(), method="exact-et", max_features=1)
    m = exact_moments(_toy(), method="exact-et", max_features=1)
    fig = make_importance_figure(result, moments=m, n_trees=T)
    _, cov = _hand_moments()
    z = 1.959963984540054                      # the 97.5% quantile of N(0, 1)
    np.testing.assert_allclose(fig.data[0].error_y.array, z * np.sqrt(np.diag(cov) / T),
                               rtol=1e-12)
    assert f"T = {T:,}" in fig.data[0].name


def test_exact_whiskers_on_an_oracle_table():
    from varimp_core.api import compute_importances
    from varimp_core.plots.importances import make_importance_figure

    rng = np.random.default_rng(11)
    table = DiscreteTable.from_codes(rng.integers(0, 3, size=(6, 3)), rng.integers(0, 2, 6))
    _, cov = law_moments(multiway_law(rows_of(table), 3, 2))
    result = compute_importances(table, method="exact", max_features=2)
    fig = make_importance_figure(result, moments=exact_moments(table, max_features=2),
                                 n_trees=50, level=0.9)
    np.testing.assert_allclose(fig.data[0].error_y.array,
                               1.6448536269514722 * np.sqrt(np.diag(cov) / 50), atol=1e-12)


def test_expected_error_law_and_the_stable_ranking_line():
    from varimp_core.plots.convergence import make_convergence_figure
    from varimp_core.studies.convergence import expected_error_curve

    m = exact_moments(_toy(), method="exact-et", max_features=1)
    _, cov = _hand_moments()
    sigma = np.sqrt(np.diag(cov))
    curve = expected_error_curve(m, 1000, points=50)
    T = curve["n_trees"].to_numpy()
    assert T[0] == 1 and T[-1] == 1000
    np.testing.assert_allclose(curve["l1"], math.sqrt(2 / math.pi) * sigma.sum() / np.sqrt(T),
                               rtol=1e-12)
    np.testing.assert_allclose(curve["max_abs"],
                               math.sqrt(2 / math.pi) * sigma.max() / np.sqrt(T), rtol=1e-12)
    fig = make_convergence_figure(None, expected=curve, stable_trees=72)
    assert [t.meta for t in fig.data] == ["expected-l1", "expected-max"]
    assert [s.x0 for s in fig.layout.shapes] == [72]


def test_the_sampled_curve_lies_on_top_of_the_exact_law():
    import pandas as pd

    from varimp_core.plots.convergence import make_convergence_figure
    from varimp_core.studies.convergence import expected_error_curve

    m = exact_moments(_toy(), method="exact-et", max_features=1)
    sampled = pd.DataFrame({"n_trees": [1, 2], "l1": [0.5, 0.4], "max_abs": [0.3, 0.2],
                            "reference": [0.6, 0.4]})
    fig = make_convergence_figure(sampled, expected=expected_error_curve(m, 2))
    assert [t.meta for t in fig.data][:2] == ["expected-l1", "expected-max"]
    assert list(fig.data[2].y) == [0.5, 0.4] and len(fig.data) == 4   # drawn last: on top


def test_stable_ranking_t_of_the_toy_by_hand():
    """Two variables: the ranking is wrong exactly when the pair flips; the smallest T with
    Phi(-d sqrt(T) / s) <= 5%."""
    mean, cov = _hand_moments()
    d, s = abs(mean[0] - mean[1]), math.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    T = math.ceil((1.6448536269514722 * s / d) ** 2)
    m = exact_moments(_toy(), method="exact-et", max_features=1)
    assert m.stable_ranking_trees(0.95) == T


def test_trees_needed_each_by_hand():
    _, cov = _hand_moments()
    m = exact_moments(_toy(), method="exact-et", max_features=1)
    for eps in (0.1, 0.01, 0.003):
        want = [math.floor(v / eps ** 2) + 1 for v in np.diag(cov)]
        assert m.trees_needed_each(eps).tolist() == want
        assert m.trees_needed(eps) == max(want)
