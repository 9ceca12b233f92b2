"""Exact local MDI of exact-rf / exact-et against oracles written here.

* global from local: the weighted mean over distinct rows is ``exact_rf_importances`` /
  ``exact_et_importances`` (every K, depth, criterion, with sample weights);
* efficiency: fully grown, the values of x sum to i(root) - i(Y | X = x), the plug-in
  impurities computed below from the rows;
* convergence: scikit-learn forests of N_TREES trees (no bootstrap) on a tiny numeric table
  are within 4.5 standard errors of the exact value, row by row.
"""
import os

import numpy as np
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

import varimp_core as vc
from varimp_core.exact.binary import exact_et_importances, exact_rf_importances

# 10,000 trees, the figure (VARIMP_LOCAL_MDI_TREES changes it for a quick look)
N_TREES = int(os.environ.get("VARIMP_LOCAL_MDI_TREES", "10000"))
EXACT = {"exact-rf": exact_rf_importances, "exact-et": exact_et_importances}


def _impurity(weights, criterion):
    q = np.asarray(weights, float)
    q = q[q > 0] / q.sum()
    return float(-(q * np.log2(q)).sum()) if criterion == "entropy" else float(1 - (q ** 2).sum())


def _tables(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        X = rng.integers(0, 3, size=(9, 3)).astype(float)
        X[:, 2] = np.round(rng.normal(size=9), 2)
        out.append((X, rng.integers(0, 3, size=9), rng.integers(1, 4, size=9).astype(float)))
    return out


def test_global_from_local_and_efficiency():
    for X, y, sw in _tables(4):
        for method, fn in EXACT.items():
            for crit in ("entropy", "gini"):
                for k in (1, 2, 3):
                    for depth in (None, 2):
                        r = vc.exact_binary_local_mdi(X, y, method=method, max_features=k,
                                                      max_depth=depth, criterion=crit,
                                                      sample_weight=sw)
                        g = fn(X, y, max_features=k, max_depth=depth, criterion=crit,
                               sample_weight=sw).importances
                        np.testing.assert_allclose(r.weighted_mean(), g, rtol=0, atol=1e-12)
                        if depth is None:
                            root = _impurity(np.bincount(y, weights=sw), crit)
                            for x, v in zip(r.X, r.values):
                                at = np.all(X.astype(np.float32) == x.astype(np.float32), axis=1)
                                leaf = _impurity(np.bincount(y[at], weights=sw[at]), crit)
                                assert v.sum() == pytest.approx(root - leaf, abs=1e-12)


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize("cls,method", [(RandomForestClassifier, "exact-rf"),
                                        (ExtraTreesClassifier, "exact-et")])
def test_sklearn_forests_converge_to_exact(cls, method):
    # N_TREES trees (the same 4.5 standard errors at any number); standard errors floored at
    # 1e-3 where every tree agrees (a path of probability below 1e-4 may never be drawn)
    X = np.array([[0, 0.0], [0, 1.5], [1, 0.3], [1, 2.0], [2, 0.7], [2, 1.1], [0, 2.2]])
    y = np.array([0, 1, 1, 0, 1, 0, 0])
    forest = cls(n_estimators=N_TREES, max_features=1, bootstrap=False, criterion="entropy",
                 random_state=0).fit(X, y)
    sampled = vc.sklearn_local_mdi(forest, X)
    exact = vc.exact_binary_local_mdi(X, y, method=method, max_features=1)
    at = {tuple(x.astype(np.float32)): v for x, v in zip(exact.X, exact.values)}
    want = np.array([at[tuple(x.astype(np.float32))] for x in X])
    z = np.abs(sampled.values - want) / np.maximum(sampled.standard_errors, 1e-3)
    assert z.max() < 4.5, z.max()
