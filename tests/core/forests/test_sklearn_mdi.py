"""Tests of varimp_core.forests.sklearn_mdi.

Expected values come from theory (telescoping sums of impurity, Theorem 2 of
Louppe et al. 2013), hand calculations, scikit-learn's public normalised
``feature_importances_``, and brute-force oracles written here.
"""


import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from varimp_core.result import ImportanceResult
from varimp_core.forests.sklearn_mdi import (fit_sklearn_forest, forest_mdi, sklearn_importances,
                                             tree_mdi_by_depth)

KINDS_TASKS = [("rf", "classification"), ("et", "classification"),
               ("rf", "regression"), ("et", "regression")]


def _data(task, n=200, p=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, p)).astype(float)
    if task == "classification":
        y = (X[:, 0] + X[:, 1] * (X[:, 2] > 0) + rng.integers(0, 2, n)) % 3
    else:
        y = X[:, 0] * 2 + X[:, 1] * X[:, 2] + rng.normal(0, 0.5, n)
    return X, y


def _entropy_bits(y):
    _, counts = np.unique(y, return_counts=True)
    f = counts / counts.sum()
    return float(-(f * np.log2(f)).sum())


# -- oracles ---------------------------------------------------------------
def _oracle_from_arrays(tree):
    """Recursive walk over children arrays; returns {(feature, depth): decrease}."""
    t = tree.tree_
    out = {}

    def walk(node, depth):
        left, right = t.children_left[node], t.children_right[node]
        if left == -1:
            return
        w, imp = t.weighted_n_node_samples, t.impurity
        dec = (w[node] * imp[node] - w[left] * imp[left] - w[right] * imp[right]) / w[0]
        key = (int(t.feature[node]), depth)
        out[key] = out.get(key, 0.0) + dec
        walk(left, depth + 1)
        walk(right, depth + 1)

    walk(0, 0)
    return out


def _oracle_from_data(tree, X, y, impurity):
    """Route the training samples down the tree and recompute every impurity from them.

    Only valid without bootstrap (every sample has weight 1).
    """
    t = tree.tree_
    Xf = X.astype(np.float32)
    n = len(y)
    out = np.zeros(X.shape[1])

    def walk(node, idx):
        left, right = t.children_left[node], t.children_right[node]
        if left == -1:
            return
        f = t.feature[node]
        go_left = Xf[idx, f] <= t.threshold[node]
        li, ri = idx[go_left], idx[~go_left]
        out[f] += (len(idx) * impurity(y[idx]) - len(li) * impurity(y[li])
                   - len(ri) * impurity(y[ri])) / n
        walk(left, li)
        walk(right, ri)

    walk(0, np.arange(n))
    return out


# -- agreement with scikit-learn's public definition -------------------------
@pytest.mark.parametrize("kind,task", KINDS_TASKS)
def test_normalised_per_tree_matches_feature_importances(kind, task):
    X, y = _data(task)
    est = fit_sklearn_forest(X, y, kind=kind, task=task, n_estimators=20, max_features=2,
                             random_state=1)
    res = forest_mdi(est)
    rows = [r / r.sum() for r in res.per_tree if r.sum() > 0]
    mean = np.mean(rows, axis=0)
    np.testing.assert_allclose(mean / mean.sum(), est.feature_importances_, rtol=0, atol=1e-12)
    assert res.per_tree.shape == (20, 4)
    np.testing.assert_allclose(res.importances, res.per_tree.mean(axis=0), atol=1e-15)


@pytest.mark.parametrize("kind,task", KINDS_TASKS)
def test_by_degree_rows_sum_to_importances(kind, task):
    X, y = _data(task, p=3)
    res = sklearn_importances(X, y, kind=kind, task=task, n_estimators=10, max_features=3)
    assert res.by_degree.shape == (3, 3)
    np.testing.assert_allclose(res.by_degree.sum(axis=1), res.importances, atol=1e-12)


@pytest.mark.parametrize("kind,bootstrap", [("rf", True), ("et", False)])
def test_array_oracle_per_tree_and_by_depth(kind, bootstrap):
    X, y = _data("classification", p=3)
    est = fit_sklearn_forest(X, y, kind=kind, n_estimators=8, max_features=1,
                             bootstrap=bootstrap, random_state=3)
    res = forest_mdi(est)
    folded = np.zeros((3, 3))
    for i, tree in enumerate(est.estimators_):
        oracle = _oracle_from_arrays(tree)
        by_depth = tree_mdi_by_depth(tree)
        assert by_depth.shape == (3, tree.tree_.max_depth + 1)
        expected = np.zeros_like(by_depth)
        for (f, d), v in oracle.items():
            expected[f, d] += v
            folded[f, min(d, 2)] += v / len(est.estimators_)
        np.testing.assert_allclose(by_depth, expected, atol=1e-12)
        np.testing.assert_allclose(res.per_tree[i], expected.sum(axis=1), atol=1e-12)
    np.testing.assert_allclose(res.by_degree, folded, atol=1e-12)


@pytest.mark.parametrize("criterion,impurity", [
    ("entropy", _entropy_bits),
    ("gini", lambda y: 1.0 - ((np.unique(y, return_counts=True)[1] / len(y)) ** 2).sum()),
])
def test_data_oracle_recomputes_impurities(criterion, impurity):
    # Entropy recomputed with log2 here: agreement shows scikit-learn's entropy is in bits.
    X, y = _data("classification", p=3)
    est = fit_sklearn_forest(X, y, kind="et", n_estimators=5, max_features=1, bootstrap=False,
                             criterion=criterion, max_depth=4, random_state=2)
    res = forest_mdi(est)
    for i, tree in enumerate(est.estimators_):
        np.testing.assert_allclose(res.per_tree[i], _oracle_from_data(tree, X, y, impurity),
                                   atol=1e-12)


# -- hand calculations and theory -------------------------------------------
def test_single_split_is_one_bit_at_depth_zero():
    # y = [x1 > 0.5], balanced: H(Y) = 1 bit, one perfect split on x1 at the root.
    x1 = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    x2 = np.array([1.0, 2.0, 1.0, 2.0, 2.0, 1.0, 2.0, 1.0])  # splits nothing usefully
    X = np.column_stack([x1, x2])
    y = (x1 > 0.5).astype(int)
    res = sklearn_importances(X, y, kind="rf", n_estimators=1, max_features=2, bootstrap=False)
    np.testing.assert_allclose(res.importances, [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(res.by_degree, [[1.0, 0.0], [0.0, 0.0]], atol=1e-12)
    assert res.units == "bits"


@pytest.mark.parametrize("kind,K", [("et", 1), ("rf", 1), ("rf", 3)])
def test_fully_grown_trees_sum_to_plugin_entropy(kind, K):
    # Pure leaves: the decreases telescope to i(root) = H(Y) (Theorem 2 analogue).
    rng = np.random.default_rng(5)
    X = rng.integers(0, 2, size=(300, 3)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) + 2 * X[:, 2].astype(int) * X[:, 0].astype(int)
    res = sklearn_importances(X, y, kind=kind, n_estimators=30, max_features=K, bootstrap=False)
    np.testing.assert_allclose(res.total, _entropy_bits(y), atol=1e-12)
    np.testing.assert_allclose(res.per_tree.sum(axis=1), _entropy_bits(y), atol=1e-12)


def test_fully_grown_regression_sums_to_variance():
    rng = np.random.default_rng(6)
    X = rng.integers(0, 3, size=(200, 2)).astype(float)
    y = X[:, 0] ** 2 - X[:, 1]
    res = sklearn_importances(X, y, kind="et", task="regression", n_estimators=10,
                              criterion="variance")
    np.testing.assert_allclose(res.total, y.var(), atol=1e-12)  # population variance of y
    assert res.units == "variance"


def test_deep_trees_fold_into_last_column():
    X = np.arange(64, dtype=float)[:, None]
    y = np.arange(64) % 2  # needs depth 6 on a single variable
    res = sklearn_importances(X, y, kind="rf", n_estimators=1, bootstrap=False)
    assert res.by_degree.shape == (1, 1)
    np.testing.assert_allclose(res.by_degree[0, 0], 1.0, atol=1e-12)


def test_single_tree_estimator_and_single_node_tree():
    tree = DecisionTreeClassifier().fit(np.zeros((4, 2)), [1, 1, 1, 1])
    np.testing.assert_array_equal(tree_mdi_by_depth(tree), np.zeros((2, 1)))


# -- result metadata ---------------------------------------------------------
def test_result_metadata_and_dataframe_names():
    X, y = _data("classification", p=3)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    res = sklearn_importances(df, y, kind="et", n_estimators=4, max_features=9,
                              criterion="gini", problem="demo")
    assert isinstance(res, ImportanceResult)
    assert res.variables == ("a", "b", "c")
    assert res.method == "sklearn-et" and res.units == "gini" and res.problem == "demo"
    assert res.exact is False and res.information is None
    assert res.parameters == {"kind": "et", "task": "classification", "criterion": "gini",
                              "n_estimators": 4, "max_features": 3, "max_depth": None,
                              "min_samples_leaf": 1, "bootstrap": False, "random_state": 0,
                              "n_samples": 200}
    assert ImportanceResult.from_json(res.to_json()).parameters == res.parameters


def test_kind_selects_estimator_and_bootstrap_default():
    X, y = _data("regression")
    rf = fit_sklearn_forest(X, y, kind="rf", task="regression", n_estimators=2)
    et = fit_sklearn_forest(X, y, kind="et", task="regression", n_estimators=2)
    assert type(rf).__name__ == "RandomForestRegressor" and rf.bootstrap is True
    assert type(et).__name__ == "ExtraTreesRegressor" and et.bootstrap is False
    assert rf.criterion == "squared_error"


@pytest.mark.parametrize("kwargs,match", [
    ({"kind": "gb"}, "kind='gb'"),
    ({"task": "ranking"}, "task='ranking'"),
    ({"n_estimators": 0}, "n_estimators=0"),
    ({"max_features": 0}, "max_features=0"),
    ({"max_features": 1.5}, "max_features=1.5"),
    ({"max_depth": 0}, "max_depth=0"),
    ({"min_samples_leaf": True}, "min_samples_leaf=True"),
    ({"bootstrap": "yes"}, "bootstrap='yes'"),
    ({"criterion": "squared_error"}, "criterion='squared_error'"),
    ({"criterion": "entropy", "task": "regression"}, "criterion='entropy'"),
    ({"random_state": -1}, "random_state=-1"),
    ({"n_jobs": "all"}, "n_jobs='all'"),
    ({"variables": ["a"]}, "variables has 1 names"),
])
def test_bad_parameters_raise_sentences(kwargs, match):
    X, y = _data("classification", n=20, p=3)
    with pytest.raises(ValueError, match=match) as info:
        sklearn_importances(X, y, n_estimators=kwargs.pop("n_estimators", 2), **kwargs)
    assert str(info.value).endswith(".")


@pytest.mark.parametrize("X,y,match", [
    (np.ones(5), np.ones(5), "2-D"),
    (np.ones((5, 2)), np.ones(4), "y has shape"),
    (np.array([[1.0, np.inf]] * 3), np.ones(3), "infinite"),  # NaN is split natively (1.9.1)
    (np.array([["a", "b"]] * 3), np.ones(3), "numeric"),
])
def test_bad_data_raise_sentences(X, y, match):
    with pytest.raises(ValueError, match=match):
        sklearn_importances(X, y, n_estimators=2)


def test_forest_mdi_rejects_unfitted_and_mismatched():
    from sklearn.ensemble import RandomForestClassifier

    with pytest.raises(ValueError, match="not a fitted forest"):
        forest_mdi(RandomForestClassifier())
    est = fit_sklearn_forest(*_data("classification", n=30, p=3), n_estimators=2)
    with pytest.raises(ValueError, match="n_features_in=2"):
        forest_mdi(est, n_features_in=2)
