"""Exact mean and covariance of one random tree's MDI (issue 29), against brute force.

Expected values come from ``tree_law_oracle`` (every tree enumerated with its
probability, no varimp_core code), from hand computations, and from samples
of trees; never from the code under test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from _tables import led_table, rows_of, xor_table
from tree_law_oracle import binary_law, moments, multiway_law
from varimp_core.api import compute_importances
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.moments import ImportanceMoments, exact_moments, moments_from_trees


def _random_table(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 4))
    n = int(rng.integers(4, 9))
    X = rng.integers(0, 3, size=(n, p))
    y = rng.integers(0, 2 + seed % 2, size=n)
    w = rng.choice([1.0, 2.0, 3.0], size=n)
    return DiscreteTable.from_codes(X, y, weight=w)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_multiway_moments_equal_the_enumerated_law(seed, semantics):
    table = _random_table(seed)
    p = table.n_features
    rows = rows_of(table)
    for K in range(1, p + 1):
        for depth in (None, 1, 2):
            law = multiway_law(rows, p, K, semantics=semantics, max_depth=depth)
            assert sum(pr for pr, _ in law) == pytest.approx(1.0, abs=1e-12)
            mean, cov = moments(law)
            got = exact_moments(table, max_features=K, max_depth=depth, k_semantics=semantics)
            np.testing.assert_allclose(got.mean, mean, atol=1e-12, err_msg=f"K={K} D={depth}")
            np.testing.assert_allclose(got.covariance, cov, atol=1e-12,
                                       err_msg=f"K={K} D={depth}")


@pytest.mark.parametrize("K,depth,semantics", [(1, None, "id3"), (3, None, "id3"),
                                               (2, 2, "sklearn"), (7, None, "sklearn"),
                                               (1, 3, "sklearn")])
def test_mean_equals_compute_importances(K, depth, semantics):
    led = led_table()
    m = exact_moments(led, max_features=K, max_depth=depth, k_semantics=semantics)
    r = compute_importances(led, method="exact", max_features=K, max_depth=depth,
                            k_semantics=semantics)
    np.testing.assert_allclose(m.mean, r.importances, atol=1e-12)
    # a covariance matrix: symmetric, positive semi-definite
    np.testing.assert_allclose(m.covariance, m.covariance.T, atol=0)
    assert np.linalg.eigvalsh(m.covariance).min() > -1e-12


def test_xor_k2_by_hand():
    # XOR of X1, X2 with an irrelevant X3, K=2 (id3).  At the root every Delta is 0, so
    # the root is X1, X2 or X3 with 1/3 each.  X1 root: X2 then takes 1 bit -> (0, 1, 0);
    # X2 root: (1, 0, 0).  X3 root: each half (p = 1/2) splits on X1 or X2 (1/2 each,
    # tied), independently -> I1 in {0, .5, .5, 1} with 1/4 each.
    # E[I1] = 1/2, E[I1^2] = 1/3 + (0 + .25 + .25 + 1)/4 / 3 = 1/3 + 1/8, Var = 5/24.
    # Cov(I1, I2): I1 + I2 = 1 always, so Cov = -Var.
    m = exact_moments(xor_table(2, 1), max_features=2)
    want = np.array([[5 / 24, -5 / 24, 0], [-5 / 24, 5 / 24, 0], [0, 0, 0]])
    np.testing.assert_allclose(m.covariance, want, atol=1e-12)


def test_squared_error_scales_like_the_mean():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(12, 2))
    y = rng.integers(0, 4, size=12)
    t = DiscreteTable.from_codes(X, y, y_labels=tuple(float(10 * v) for v in range(4)))
    m = exact_moments(t, max_features=1, criterion="squared_error")
    r = compute_importances(t, method="exact", max_features=1, criterion="squared_error")
    np.testing.assert_allclose(m.mean, r.importances, rtol=1e-12)
    assert m.units == r.units
    # Y divided by 10: importances (variance units) scale by 1/100, covariances by 1/10^4
    t2 = DiscreteTable.from_codes(X, y, y_labels=tuple(float(v) for v in range(4)))
    m2 = exact_moments(t2, max_features=1, criterion="squared_error")
    np.testing.assert_allclose(m.covariance, 1e4 * m2.covariance, rtol=1e-9, atol=1e-12)


def _binary_data(seed):
    rng = np.random.default_rng(100 + seed)
    n, p = int(rng.integers(3, 7)), int(rng.integers(1, 4))
    levels = np.array([0.0, 0.5, 2.0, 3.25])
    X = levels[rng.integers(0, 4, size=(n, p))]
    y = rng.integers(0, 2 + seed % 2, size=n)
    return X, y


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_binary_moments_equal_the_enumerated_law(seed, method):
    X, y = _binary_data(seed)
    p = X.shape[1]
    t = DiscreteTable.from_codes(np.zeros((len(y), p), int), y)  # names only
    for K in sorted({1, p}):
        for depth in (None, 1, 2):
            law = binary_law(X, y, kind=method[-2:], max_features=K, max_depth=depth)
            mean, cov = moments(law)
            from varimp_core.exact.moments import _BinaryWalker, _binary_moments
            w = _BinaryWalker(X, y, method=method, max_features=K, max_depth=depth,
                              min_samples_leaf=1, criterion="entropy", sample_weight=None)
            V, S, _ = _binary_moments(w)
            np.testing.assert_allclose(V, mean, atol=1e-12, err_msg=f"K={K} D={depth}")
            np.testing.assert_allclose(S - np.outer(V, V), cov, atol=1e-12,
                                       err_msg=f"K={K} D={depth}")
    del t


@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_binary_mean_equals_compute_importances(method):
    X, y = _binary_data(3)
    rng = np.random.default_rng(9)
    X = rng.normal(size=(9, 3)).round(2)
    y = rng.integers(0, 2, size=9)
    from varimp_core.exact.binary import exact_binary_importances
    for K in (1, 2, 3):
        for depth in (None, 2):
            r = exact_binary_importances(X, y, method=method, max_features=K, max_depth=depth)
            t = DiscreteTable.from_codes(np.zeros((9, 3), int), y)
            del t
            from varimp_core.exact.moments import _BinaryWalker, _binary_moments
            w = _BinaryWalker(X, y, method=method, max_features=K, max_depth=depth,
                              min_samples_leaf=1, criterion="entropy", sample_weight=None)
            V, _, _ = _binary_moments(w)
            np.testing.assert_allclose(V, r.importances, atol=1e-12)
