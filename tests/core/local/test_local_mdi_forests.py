"""Sampled local MDI, Saabas and TreeSHAP of fitted forests, against oracles written here.

* global from local: the weighted mean over the learning rows of the local MDI is each
  forest's unnormalised MDI, computed below node by node from ``tree_`` (no bootstrap);
* local MDI per row: a plain Python walk down each tree, written apart;
* Saabas and local MDI on a hand-built depth-2 tree, values derived by hand in a comment;
* additivity: Saabas bias + contributions = prediction; shap's expected value + TreeSHAP =
  predict_proba;
* the multiway forest: global from local, telescoping, and convergence to the exact local MDI.
"""
import json

import numpy as np
import pytest
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.tree import DecisionTreeClassifier

import varimp_core as vc


def _global_by_hand(forest):
    """Mean over trees of sum over internal nodes of (w_t i_t - w_L i_L - w_R i_R) / w_root."""
    p = forest.n_features_in_
    total = np.zeros(p)
    for est in forest.estimators_:
        t = est.tree_
        w, imp = t.weighted_n_node_samples, t.impurity
        for node in range(t.node_count):
            l, r = t.children_left[node], t.children_right[node]
            if l < 0:
                continue
            total[t.feature[node]] += (w[node] * imp[node] - w[l] * imp[l] - w[r] * imp[r]) / w[0]
    return total / len(forest.estimators_)


def _walk(est, x):
    """Local MDI of one row in one tree by walking it: i(t) - i(child) to t's feature."""
    t = est.tree_
    out = np.zeros(est.n_features_in_)
    node = 0
    while t.children_left[node] >= 0:
        f = t.feature[node]
        child = t.children_left[node] if np.float32(x[f]) <= t.threshold[node] \
            else t.children_right[node]
        out[f] += t.impurity[node] - t.impurity[child]
        node = child
    return out


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(160, 4)).astype(float)
    X[:, 3] = rng.normal(size=160)
    y = ((X[:, 0] + X[:, 1] > 3) ^ (rng.random(160) < 0.1)).astype(int)
    return X, y


@pytest.mark.parametrize("cls,criterion", [(RandomForestClassifier, "entropy"),
                                           (RandomForestClassifier, "gini"),
                                           (ExtraTreesClassifier, "entropy"),
                                           (RandomForestRegressor, "squared_error"),
                                           (ExtraTreesRegressor, "squared_error")])
def test_sklearn_global_from_local_and_walk(data, cls, criterion):
    X, y = data
    yy = y if "Classifier" in cls.__name__ else X[:, 0] * X[:, 1] + X[:, 3]
    sw = np.random.default_rng(2).integers(1, 4, size=len(y)).astype(float)
    forest = cls(n_estimators=12, criterion=criterion, max_features=2, bootstrap=False,
                 random_state=0).fit(X, yy, sample_weight=sw)
    r = vc.sklearn_local_mdi(forest, X, weight=sw)
    np.testing.assert_allclose(r.weighted_mean(), _global_by_hand(forest), rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.global_importances, _global_by_hand(forest), rtol=0, atol=1e-12)
    assert r.units == {"entropy": "bits", "gini": "gini", "squared_error": "variance"}[criterion]
    per_tree = np.array([[_walk(est, x) for x in X[:20]] for est in forest.estimators_])
    np.testing.assert_allclose(r.values[:20], per_tree.mean(axis=0), rtol=0, atol=1e-12)
    se = per_tree.std(axis=0, ddof=1) / np.sqrt(len(forest.estimators_))
    np.testing.assert_allclose(r.standard_errors[:20], se, rtol=1e-6, atol=1e-12)
    # the sum telescopes: root minus leaf impurity, averaged over trees
    leaf = np.mean([est.tree_.impurity[est.apply(X.astype(np.float32))]
                    for est in forest.estimators_], axis=0)
    root = np.mean([est.tree_.impurity[0] for est in forest.estimators_])
    np.testing.assert_allclose(r.totals, root - leaf, rtol=0, atol=1e-12)


def test_entropy_is_in_bits():
    X = np.array([[0.0], [1.0]] * 4)
    y = np.array([0, 1] * 4)
    forest = RandomForestClassifier(n_estimators=3, criterion="entropy", bootstrap=False,
                                    random_state=0).fit(X, y)
    r = vc.sklearn_local_mdi(forest, X)
    np.testing.assert_allclose(r.values[:, 0], 1.0, atol=1e-12)   # H(Y) = 1 bit, all to X1
    assert r.root_impurity == pytest.approx(1.0)


def _hand_tree():
    # Rows (x1, x2): y.  (0,0): 0,0   (0,1): 0,1   (1,0): 1,1   (1,1): 1,1.  P(y=1) = 5/8.
    # Root, Gini: splitting on X1 leaves {0,0,0,1} | {1,1,1,1}: 1/2 * 3/8 + 0 = 3/16;
    # on X2 {0,0,1,1} | {0,1,1,1}: 1/2 * 1/2 + 1/2 * 3/8 = 7/16.  X1 wins; X1=1 is pure.
    # X1=0 splits on X2 into {0,0} (pure) and {0,1}.  Node values P(y=1): root 5/8,
    # X1=0: 1/4, X1=1: 1, (0,0): 0, (0,1): 1/2.  Gini: root 2(5/8)(3/8) = 15/32,
    # X1=0: 3/8, X1=1: 0, (0,0): 0, (0,1): 1/2.
    X = np.array([[0, 0], [0, 0], [0, 1], [0, 1], [1, 0], [1, 0], [1, 1], [1, 1]], dtype=float)
    y = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert tree.tree_.feature[0] == 0 and tree.get_depth() == 2
    return tree, np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)


def test_saabas_and_local_mdi_on_a_hand_tree():
    tree, rows = _hand_tree()
    s = vc.sklearn_saabas(tree, rows)
    # class 1: bias 5/8; X1: 1/4 - 5/8 = -3/8 on the left, 1 - 5/8 = 3/8 on the right;
    # X2 (left only): 0 - 1/4 = -1/4 at (0,0), 1/2 - 1/4 = 1/4 at (0,1)
    np.testing.assert_allclose(s.bias[:, 1], 5 / 8)
    np.testing.assert_allclose(s.values[:, :, 1], [[-3 / 8, -1 / 4], [-3 / 8, 1 / 4],
                                                   [3 / 8, 0], [3 / 8, 0]], atol=1e-12)
    np.testing.assert_allclose(s.values[:, :, 0], -s.values[:, :, 1], atol=1e-12)
    np.testing.assert_allclose(s.bias + s.values.sum(axis=1), s.prediction, atol=1e-12)
    np.testing.assert_allclose(s.prediction[:, 1], [0, 1 / 2, 1, 1], atol=1e-12)
    m = vc.sklearn_local_mdi(tree, rows)
    # X1: 15/32 - 3/8 = 3/32 (left) or 15/32 - 0 (right); X2: 3/8 - 0 at (0,0), 3/8 - 1/2
    # = -1/8 at (0,1): local MDI can be negative
    np.testing.assert_allclose(m.values, [[3 / 32, 3 / 8], [3 / 32, -1 / 8],
                                          [15 / 32, 0], [15 / 32, 0]], atol=1e-12)
    assert m.units == "gini"


def test_saabas_and_treeshap_additivity(data):
    X, y = data
    for forest, proba in [
            (RandomForestClassifier(n_estimators=15, max_depth=6, random_state=0).fit(X, y), True),
            (ExtraTreesRegressor(n_estimators=10, max_depth=6, random_state=0).fit(X, X[:, 3]),
             False)]:
        pred = forest.predict_proba(X) if proba else forest.predict(X)[:, None]
        s = vc.sklearn_saabas(forest, X)
        np.testing.assert_allclose(s.bias + s.values.sum(axis=1), pred, atol=1e-10)
        t = vc.sklearn_treeshap(forest, X)
        np.testing.assert_allclose(t.bias + t.values.sum(axis=1), pred, atol=1e-8)
        np.testing.assert_allclose(t.prediction, pred, atol=1e-12)
        assert t.method == "treeshap" and t.standard_errors is None


def test_multiway_forest_global_telescoping_and_saabas():
    table = vc.get_problem("led:noise=0.1").exact_table()
    for k, sem in [(1, "id3"), (3, "sklearn")]:
        r = vc.multiway_local_mdi(table, n_estimators=40, max_features=k, k_semantics=sem)
        g = vc.grow_forest(table, n_estimators=40, max_features=k, k_semantics=sem)
        np.testing.assert_allclose(r.weighted_mean(), g.importances, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.totals, r.root_impurity - r.leaf_impurity, atol=1e-12)
        assert r.root_impurity == pytest.approx(vc.exact_local_mdi(table).root_impurity)
    s = vc.multiway_saabas(table, n_estimators=20, max_depth=3)
    np.testing.assert_allclose(s.bias + s.values.sum(axis=1), s.prediction, atol=1e-12)
    np.testing.assert_allclose(s.prediction.sum(axis=1), 1.0)


def test_multiway_forest_converges_to_exact():
    # T trees: the mean is within a few standard errors of the exact infinite-forest value
    # (standard errors floored at 1e-3 where all trees agree: rare paths may not be drawn)
    for spec, k in [("led", 1), ("led", 3), ("xor:relevant=2,irrelevant=1", 2)]:
        table = vc.get_problem(spec).exact_table()
        r = vc.multiway_local_mdi(table, n_estimators=300, max_features=k, random_state=1)
        ex = vc.exact_local_mdi(table, max_features=k)
        at = {tuple(x): v for x, v in zip(ex.X, ex.values)}
        want = np.array([at[tuple(x)] for x in r.X])
        z = np.abs(r.values - want) / np.maximum(r.standard_errors, 1e-3)
        assert z.max() < 4.5, (spec, k, z.max())


def test_explain_row_and_roundtrips(data):
    X, y = data
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    e = vc.explain_row(forest, X, row=7)
    frame = e.to_frame()
    assert list(frame.columns) == ["variable", "x", "local_mdi", "local_mdi_se", "saabas",
                                   "treeshap", "ciss"]
    np.testing.assert_allclose(e.x, X[7])
    assert e.saabas_bias + e.saabas.sum() == pytest.approx(e.prediction)
    assert e.treeshap_bias + e.treeshap.sum() == pytest.approx(e.prediction)
    assert e.local_mdi.sum() == pytest.approx(e.local_mdi_total)
    np.testing.assert_allclose(e.local_mdi, vc.sklearn_local_mdi(forest, X).values[7])
    np.testing.assert_allclose(e.ciss, vc.local_importance(forest, X).frequencies[7])
    quick = vc.explain_row(forest, X, row=7, treeshap=False)     # the page's first figure
    assert np.isnan(quick.treeshap).all() and "treeshap" in quick.notes
    assert quick.saabas_bias + quick.saabas.sum() == pytest.approx(
        forest.predict_proba(X[7:8])[0, list(forest.classes_).index(quick.output)])
    np.testing.assert_allclose(quick.local_mdi, vc.sklearn_local_mdi(forest, X).values[7])
    e0 = vc.explain_row(forest, X, row=7, output=0)
    assert e0.output == 0 and e0.saabas == pytest.approx(-e.saabas if e.output == 1 else e.saabas)
    table = vc.get_problem("led").exact_table()
    m = vc.explain_row(table, table.X, row=2, n_estimators=20)
    assert np.isnan(m.treeshap).all() and "treeshap" in m.notes
    assert m.saabas_bias + m.saabas.sum() == pytest.approx(m.prediction)
    for obj in (e, m, vc.sklearn_saabas(forest, X[:3]), vc.sklearn_local_mdi(forest, X[:3])):
        back = type(obj).from_dict(json.loads(json.dumps(obj.to_dict())))
        assert back.variables == obj.variables
    with pytest.raises(ValueError, match="row"):
        vc.explain_row(forest, X, row=len(X))
    with pytest.raises(ValueError, match="output"):
        vc.explain_row(forest, X, row=0, output=5)
    with pytest.raises(ValueError, match="multiway"):
        vc.explain_row(forest, X, row=0, n_estimators=5)
