"""Tests of varimp_core.local.partial_dependence: Friedman's partial dependence, ICE, Ciss's dependence.

Expected values come from closed forms (the partial dependence of a linear
model is the line of its coefficient), identities (ICE lines average to the
partial dependence; class probabilities sum to one), the definition itself
computed by hand (set the column, predict, average) and the noise level of a
simulated regression.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeClassifier

from varimp_core.local.response_dependence import dependence_over_responses
from varimp_core.local.partial_dependence import partial_dependence, partial_dependences
from varimp_core.local.importance import local_importance
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest

SIGMA = 0.1


def _linear_data(n=1000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 3))
    y = 2 * X[:, 0] + rng.normal(0, SIGMA, n)
    return X, y


def test_linear_model_partial_dependence_is_its_coefficient():
    X, y = _linear_data()
    y = y + 0.5 * X[:, 1]
    model = LinearRegression().fit(X, y)
    res = partial_dependence(model, X, "x1", grid_resolution=7)
    # closed form: PD(v) = b1 v + b0 + b2 mean(x2) + b3 mean(x3)
    expected = model.coef_[0] * res.grid[0] + model.intercept_ + X[:, 1:].mean(0) @ model.coef_[1:]
    np.testing.assert_allclose(res.average[0], expected, rtol=1e-12)
    assert res.outputs == ("prediction",) and res.grid[0].size == 7
    # 2-D: no interaction in a linear model, so every double difference vanishes
    res2 = partial_dependence(model, X, ("x1", "x2"), grid_resolution=5)
    a = res2.average[0]
    np.testing.assert_allclose(a - a[:1, :] - a[:, :1] + a[0, 0], 0, atol=1e-12)
    frame = res2.to_frame()
    assert len(frame) == 25 and list(frame.columns) == ["feature_1", "value_1", "feature_2",
                                                         "value_2", "output", "average"]
    row = frame.iloc[7]                                      # grid point (1, 2)
    assert row.value_1 == res2.grid[0][1] and row.value_2 == res2.grid[1][2]
    assert row.average == a[1, 2]


def test_forest_partial_dependence_has_slope_two():
    X, y = _linear_data()
    forest = fit_sklearn_forest(X, y, task="regression", kind="rf", n_estimators=100,
                                max_features=3)
    res = partial_dependence(forest, X, 0, grid_resolution=20)
    g, a = res.grid[0], res.average[0]
    slope, intercept = np.polyfit(g, a, 1)
    # Tolerance: a slope error of sigma / (grid width ~ 0.9) moves the ends of the
    # line by one noise standard deviation.
    assert slope == pytest.approx(2, abs=SIGMA / 0.9)
    fit = slope * g + intercept
    assert 1 - ((a - fit) ** 2).sum() / ((a - a.mean()) ** 2).sum() > 0.99   # linear


def test_ice_lines_average_to_partial_dependence():
    X, y = _linear_data(n=300)
    forest = fit_sklearn_forest(X, y, task="regression", kind="et", n_estimators=20)
    res = partial_dependence(forest, X, "x2", kind="both", grid_resolution=10, max_ice_lines=None)
    assert res.individual.shape == (1, 300, 10)
    np.testing.assert_allclose(res.individual.mean(axis=1), res.average, rtol=1e-12)
    ice = res.ice_frame()
    assert len(ice) == 3000 and set(ice.columns) == {"observation", "feature", "value", "output",
                                                    "prediction"}
    # a seeded subsample of lines, the average still over every row
    few = partial_dependence(forest, X, "x2", kind="individual", grid_resolution=10,
                             max_ice_lines=12, random_state=3)
    again = partial_dependence(forest, X, "x2", kind="individual", grid_resolution=10,
                               max_ice_lines=12, random_state=3)
    assert few.individual.shape == (1, 12, 10)
    np.testing.assert_array_equal(few.ice_rows, again.ice_rows)
    np.testing.assert_array_equal(few.individual[0], res.individual[0, few.ice_rows])
    np.testing.assert_allclose(few.average, res.average, rtol=1e-12)


def test_classifier_every_class():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (400, 2))
    y3 = np.digitize(X[:, 0] + 0.3 * rng.normal(size=400), [0.33, 0.66])
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y3)
    res = partial_dependence(forest, X, "x1", kind="both", grid_resolution=8, max_ice_lines=None)
    assert res.outputs == (0, 1, 2) and res.response == "probability"
    np.testing.assert_allclose(res.average.sum(axis=0), 1.0)          # probabilities
    np.testing.assert_allclose(res.individual.mean(axis=1), res.average, rtol=1e-12)
    # binary: both classes come out, class 0 = 1 - class 1
    binary = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y3 == 2)
    res2 = partial_dependence(binary, X, "x1", grid_resolution=8)
    assert res2.outputs == (False, True)
    np.testing.assert_allclose(res2.average[0] + res2.average[1], 1.0)
    assert len(res2.to_frame()) == 16


def test_categorical_feature_matches_the_definition():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"colour": rng.integers(0, 3, 300), "size": rng.uniform(0, 1, 300)})
    y = (X["colour"] == 2) ^ (X["size"] > 0.5)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    res = partial_dependence(model, X, "colour", categorical_features=["colour"],
                             grid_resolution=50)
    np.testing.assert_array_equal(res.grid[0], [0, 1, 2])            # the categories
    assert res.categorical == (True,)
    for k, c in enumerate([0, 1, 2]):                                 # by the definition
        expected = model.predict_proba(X.assign(colour=c))[:, 1].mean()
        assert res.average[1, k] == pytest.approx(expected, rel=1e-12)


def test_partial_dependences_progress_and_cancel():
    X, y = _linear_data(n=200)
    model = LinearRegression().fit(X, y)
    calls = []
    out = partial_dependences(model, X, ["x1", "x2", ("x1", "x3")], grid_resolution=4,
                              progress=lambda done, total: calls.append((done, total)))
    assert calls == [(1, 3), (2, 3), (3, 3)] and not out.stopped
    assert len(out.to_frame()) == 4 + 4 + 16
    asked = []
    out = partial_dependences(model, X, ["x1", "x2", "x3"], grid_resolution=4,
                              should_stop=lambda: asked.append(1) or len(asked) > 1)
    assert out.stopped and len(out.results) == 1 and out.n_requested == 3


def test_bad_inputs():
    X, y = _linear_data(n=100)
    model = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="grid_resolution=1"):
        partial_dependence(model, X, "x1", grid_resolution=1)
    with pytest.raises(ValueError, match="Unknown feature 'age'"):
        partial_dependence(model, X, "age")
    with pytest.raises(ValueError, match="percentiles"):
        partial_dependence(model, X, "x1", percentiles=(0.9, 0.1))
    with pytest.raises(ValueError, match="use kind='average' for a pair"):
        partial_dependence(model, X, ("x1", "x2"), kind="both")
    Xc = X.copy()
    Xc[:, 2] = 4.0
    with pytest.raises(ValueError, match="'x3' is constant"):
        partial_dependence(LinearRegression().fit(Xc, y), Xc, "x3")


# -- Ciss's dependence over responses -------------------------------------------------------
def test_dependence_over_responses_by_hand():
    # Tree: root x1, then x2 (left) and x3 (right); see tests/core/local/test_importance.py.
    X = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)], dtype=float)
    y = 2 * X[:, 0] + np.where(X[:, 0] == 0, X[:, 1], X[:, 2])
    tree = DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y)
    local = local_importance(tree, X)
    dep = dependence_over_responses(local, "x2")
    # x2 is at position 1 exactly for the rows with x1 = 0 (rows 0-3)
    np.testing.assert_array_equal(dep.observation, [0, 1, 2, 3])
    np.testing.assert_array_equal(dep.value, X[:4, 1])
    np.testing.assert_array_equal(dep.prediction, y[:4])
    assert dep.positions == (1,) and list(dep.to_frame().columns) == [
        "observation", "value", "prediction", "position"]
    assert dep.summary_frame()["count"].sum() == 4
    with pytest.raises(ValueError, match="never at position 2"):
        dependence_over_responses(local, "x2", positions=2)
    with pytest.raises(ValueError, match="Unknown feature"):
        dependence_over_responses(local, "x9")
    with pytest.raises(ValueError, match="positions"):
        dependence_over_responses(local, "x2", positions=0)
