"""Issue #24: criterion="squared_error" for exact-rf and exact-et on a numeric target.

The limits of ``RandomForestRegressor(bootstrap=False, max_features=K)`` and
``ExtraTreesRegressor(max_features=K)``: node impurity the weighted variance
of Y, gain p(t) times its decrease, no binning of Y.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from binary_oracle import brute_force_mdi
from sklearn.ensemble import ExtraTreesRegressor, RandomForestRegressor

from varimp_core.api import compute_importances, load_data
from varimp_core.exact.binary import (exact_binary_depth_profile, exact_et_importances,
                                      exact_rf_importances, plugin_information)

FNS = {"rf": exact_rf_importances, "et": exact_et_importances}


def _tiny(seed, n=None):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8)) if n is None else n
    p = int(rng.integers(1, 4))
    X = np.array([0.0, 0.5, 2.0, 3.25])[rng.integers(0, 4, size=(n, p))]
    y = rng.normal(size=n).round(3) * 10 + 100      # units and offset do not matter
    sw = rng.choice([0.5, 1.0, 3.0], size=n) if seed % 3 == 2 else None
    return X, y, sw


@pytest.mark.parametrize("kind", ["rf", "et"])
@pytest.mark.parametrize("seed", range(8))
def test_brute_force_oracle_to_1e12(kind, seed):
    X, y, sw = _tiny(seed)
    p = X.shape[1]
    for K in sorted({1, p}):
        for L in (1, 2):
            want = brute_force_mdi(X, y, kind=kind, max_features=K, min_samples_leaf=L,
                                   criterion="squared_error", sample_weight=sw)
            prof, _ = exact_binary_depth_profile(X, y, method=f"exact-{kind}", max_features=K,
                                                 min_samples_leaf=L, criterion="squared_error",
                                                 sample_weight=sw, n_cols=want.shape[1])
            np.testing.assert_allclose(prof, want, rtol=0, atol=1e-12 * np.var(y) * 10)


def _variance_explained(X, y, w=None):
    """Var(Y) - E Var(Y | X), plug-in, computed here from scratch."""
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    df = pd.DataFrame(X).astype(np.float32)
    df["y"], df["w"] = y, w
    W = w.sum()
    var = np.sum(w * (y - np.sum(w * y) / W) ** 2) / W
    within = 0.0
    for _, g in df.groupby(list(range(X.shape[1]))):
        m = np.sum(g.w * g.y) / g.w.sum()
        within += np.sum(g.w * (g.y - m) ** 2) / W
    return var - within


@pytest.mark.parametrize("kind", ["rf", "et"])
def test_theorem_2_analogue_sum_is_the_explained_variance(kind):
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 5, 40), rng.integers(0, 3, 40) * 0.5,
                         rng.integers(0, 4, 40)])
    y = X[:, 0] ** 2 - 3 * X[:, 1] + rng.normal(size=40)
    sw = rng.choice([1.0, 2.0], size=40)
    want = _variance_explained(X, y, sw)
    assert plugin_information(X, y, criterion="squared_error", sample_weight=sw) == \
        pytest.approx(want, rel=1e-12)
    for K in (1, 2, 3):
        r = FNS[kind](X, y, max_features=K, criterion="squared_error", sample_weight=sw)
        assert r.total == pytest.approx(want, rel=1e-10)
        assert r.units == "variance"


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize("kind, K", [("rf", 1), ("rf", 3), ("et", 1), ("et", 3)])
def test_agrees_with_scikit_learn_regressors(kind, K):
    """Within 4.5 standard errors of a forest of 10,000 trees.

    Y on a grid of halves, so that scikit-learn's sums of Y are exact and its
    ties fall as the model says (with Y of many decimals, the same partition
    reached through two features gets two rounded scores, and scikit-learn
    keeps whichever rounded higher rather than the first read).
    """
    rng = np.random.default_rng(1)
    n = 12
    X = np.column_stack([rng.integers(0, 4, n), rng.integers(0, 3, n) * 0.5,
                         rng.normal(size=n).round(1)])
    y = X[:, 0] * 1.5 + (X[:, 1] > 0.4) * 2 + rng.integers(-2, 3, n) * 0.5
    r = FNS[kind](X, y, max_features=K, criterion="squared_error")
    T = 10_000
    cls = RandomForestRegressor if kind == "rf" else ExtraTreesRegressor
    forest = cls(n_estimators=T, max_features=K, bootstrap=False, random_state=0,
                 n_jobs=1).fit(X, y)
    per = np.array([t.tree_.compute_feature_importances(normalize=False)
                    for t in forest.estimators_])
    se = np.maximum(per.std(axis=0, ddof=1) / np.sqrt(T), 1e-9)   # K = p: one tree, rounding
    z = (per.mean(axis=0) - r.importances) / se
    assert np.all(np.abs(z) < 4.5), z


def test_compute_importances_on_a_regression_target():
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"a": rng.integers(0, 6, 60) * 0.5, "b": rng.integers(0, 3, 60)})
    df["y"] = df.a * 3 + rng.normal(size=60).round(2)
    data = load_data(data=df, target="y")
    assert data.task == "regression"
    for method in ("exact-rf", "exact-et"):
        r = compute_importances(data, method=method, max_features=1, criterion="squared_error")
        direct = FNS[method[-2:]](df[["a", "b"]], df.y, max_features=1,
                                  criterion="squared_error")
        np.testing.assert_allclose(r.importances, direct.importances, atol=1e-12)
        assert r.units == "variance" and r.parameters["criterion"] == "squared_error"
        # a numeric target takes the variance whatever criterion is named, as sklearn-rf does
        again = compute_importances(data, method=method, max_features=1)
        np.testing.assert_allclose(again.importances, r.importances, atol=0)
    classes = load_data(problem="xor:relevant=2,irrelevant=1", n_samples=30, random_state=1)
    with pytest.raises(ValueError, match="squared_error.*numeric target"):
        compute_importances(classes, method="exact-rf", criterion="squared_error")
    with pytest.raises(ValueError, match="numeric target"):
        exact_rf_importances([[0.0], [1.0]], ["a", "b"], max_features=1,
                             criterion="squared_error")
