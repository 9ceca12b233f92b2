"""Tests of varimp_core.local.heldout: the split, the forests and what they are assessed on.

Expected values come from the same core functions called directly on the rows
the split names (local importance, partial dependence), from the split's
arithmetic (floor(0.3 n) rows held out), from the class labels sorted by hand
(the forest predicts codes 0 .. K-1 of the sorted labels) and from Friedman's
definition of partial dependence computed in the test (set the input, average
``predict_proba``).
"""

import numpy as np
import pandas as pd
import pytest

from varimp_core.api import load_data
from varimp_core.data.prepare import prepare_table
from varimp_core.data.table import DiscreteTable
from varimp_core.local.heldout import (fit_local_forest, heldout_local_importance,
                                       heldout_partial_dependences, split_rows)
from varimp_core.local.importance import fit_uniform_forest, local_importance
from varimp_core.local.multiway import forest_local_importance
from varimp_core.local.partial_dependence import partial_dependence


@pytest.fixture(scope="module")
def xor():
    return load_data(problem="xor:irrelevant=3", n_samples=300, random_state=0)


def test_split_rows_holds_out_thirty_percent():
    fit, assessed = split_rows(100, random_state=3, rows="test")
    assert len(fit) == 70 and len(assessed) == 30 and not set(fit) & set(assessed)
    fit2, same = split_rows(100, random_state=3, rows="train")
    assert np.array_equal(fit, fit2) and np.array_equal(same, fit)
    with pytest.raises(ValueError, match="no held-out rows"):
        split_rows(3, random_state=0, rows="test")
    assert len(split_rows(3, random_state=0, rows="train")[1]) == 3
    with pytest.raises(ValueError, match="too few to fit"):
        split_rows(1)
    _, some = split_rows(100, random_state=3, max_rows=20)        # a seeded subset
    assert len(some) == 20 and set(some) <= set(fit) and list(some) == sorted(some)
    assert np.array_equal(some, split_rows(100, random_state=3, max_rows=20)[1])


def test_local_importance_is_the_forests_on_the_assessed_rows(xor):
    fit, assessed = split_rows(300, random_state=1, rows="test")
    est = fit_local_forest(xor, fit, n_estimators=20, random_state=1)
    local = heldout_local_importance(xor, assessed, estimator=est)
    direct = local_importance(
        fit_uniform_forest(xor.X_numeric[fit], xor.y[fit], n_estimators=20, random_state=1),
        xor.X_numeric[assessed], variables=xor.variables)
    np.testing.assert_array_equal(local.counts, direct.counts)
    np.testing.assert_array_equal(local.X, xor.X_numeric[assessed])
    assert local.classes == ("0", "1")                            # the data's labels, as text
    np.testing.assert_array_equal(local.prediction, direct.prediction.astype(str))


def test_the_multiway_forest_grows_on_the_fitted_codes(xor):
    fit, assessed = split_rows(300, random_state=0)
    local = heldout_local_importance(xor, assessed, fit=fit, n_estimators=10, max_features=1)
    table = DiscreteTable.from_codes(xor.X_codes[fit], xor.y_codes[fit], variables=xor.variables)
    direct = forest_local_importance(table, xor.X_codes[assessed], n_estimators=10,
                                     max_features=1, random_state=0)
    np.testing.assert_array_equal(local.counts, direct.counts)
    np.testing.assert_array_equal(local.X, xor.X_numeric[assessed])   # values, not codes
    diabetes = load_data(problem="diabetes", n_samples=100)
    with pytest.raises(ValueError, match="multiway forest classifies"):
        heldout_local_importance(diabetes, assessed[:5], fit=fit[:50])


def test_partial_dependences_average_the_assessed_rows(xor):
    fit, assessed = split_rows(300, random_state=0)
    est = fit_local_forest(xor, fit, forest="rf", n_estimators=10)
    calls = []
    one, two, pair = heldout_partial_dependences(
        xor, est, assessed, ["X1", "X2"], grid_resolution=30, max_ice_lines=5, max_grid_2d=20,
        max_rows=50, progress=lambda *a: calls.append(a))
    assert calls == [(1, 3), (2, 3), (3, 3)]
    rows = np.sort(assessed[np.random.default_rng(2).choice(assessed.size, 50, replace=False)])
    direct = partial_dependence(est, xor.X_numeric[rows], "X1", kind="both", grid_resolution=30,
                                categorical_features=["X1"], feature_names=list(xor.variables),
                                max_ice_lines=5)
    np.testing.assert_array_equal(one.average, direct.average)
    assert one.outputs == ("0", "1") and one.n_samples == 50
    np.testing.assert_array_equal(one.ice_rows, rows[direct.ice_rows])   # rows of the data
    assert two.features == ("X2",) and pair.features == ("X1", "X2")
    assert pair.individual is None and all(g.size <= 20 for g in pair.grid)


# -- the arguments are checked with sentences ------------------------------------------------
@pytest.mark.parametrize("share", [0, 1, 0.0, 1.0, -0.1, 1.5, float("nan"), True, "0.3", None])
def test_split_rows_refuses_a_test_share_outside_zero_one(share):
    with pytest.raises(ValueError, match="test_share=.*strictly between 0 and 1") as e:
        split_rows(100, test_share=share)
    assert "\n" not in str(e.value) and str(e.value).endswith(".")


def test_split_rows_takes_any_share_inside_zero_one_and_refuses_max_rows_below_one():
    # floor(0.5 * 10) = 5 and floor(0.01 * 1000) = 10 rows held out
    assert [len(a) for a in split_rows(10, test_share=0.5, rows="test")] == [5, 5]
    assert [len(a) for a in split_rows(1000, test_share=0.01, rows="test")] == [990, 10]
    for most in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match=r"max_rows=.* is not allowed: use an integer >= 1"):
            split_rows(100, max_rows=most)
    assert len(split_rows(100, max_rows=1)[1]) == 1


def test_local_importance_refuses_max_features_zero(xor):
    # None is every input; 0 is not documented as "all", so it is refused, forest or not
    fit, assessed = split_rows(300, random_state=0)
    est = fit_local_forest(xor, fit, n_estimators=5)
    for kw in ({"fit": fit}, {"estimator": est}):
        with pytest.raises(ValueError, match=r"max_features=0 is not allowed: use an integer "
                                             r">= 1 or None"):
            heldout_local_importance(xor, assessed[:10], max_features=0, n_estimators=5, **kw)
    # None grows the trees that K = p (= 5 inputs) grows
    every = heldout_local_importance(xor, assessed[:10], fit=fit, n_estimators=5)
    five = heldout_local_importance(xor, assessed[:10], fit=fit, n_estimators=5, max_features=5)
    np.testing.assert_array_equal(every.counts, five.counts)


def test_partial_dependences_take_one_or_two_different_variables(xor):
    fit, assessed = split_rows(300, random_state=0)
    est = fit_local_forest(xor, fit, forest="rf", n_estimators=5)
    for features in ([], ["X1", "X2", "X3"], ["X1", "X2", "X3", "X4"]):
        with pytest.raises(ValueError, match=f"not on {len(features)}; give one or two"):
            heldout_partial_dependences(xor, est, assessed, features)
    with pytest.raises(ValueError, match="choose two different variables"):
        heldout_partial_dependences(xor, est, assessed, ["X2", "X2"])
    with pytest.raises(ValueError, match=r"max_rows=0 is not allowed"):
        heldout_partial_dependences(xor, est, assessed, ["X1"], max_rows=0)
    with pytest.raises(ValueError, match=r"max_grid_2d=1 is not allowed: use an integer >= 2"):
        heldout_partial_dependences(xor, est, assessed, ["X1", "X2"], max_grid_2d=1)
    alone = heldout_partial_dependences(xor, est, assessed, "X1", max_ice_lines=0)
    assert [r.features for r in alone] == [("X1",)]         # a lone name is one variable


# -- class labels that are not their codes, and partial dependence by the definition ---------
def _upload(labels, seed=0, n=240):
    """An upload-like table: two bits, a number and a class label y, built by hand."""
    rng = np.random.default_rng(seed)
    b1, b2, u = rng.integers(0, 2, n), rng.integers(0, 2, n), rng.uniform(0, 1, n)
    k = len(labels)
    signal = (b1 + 2 * (u > 0.5) + rng.integers(0, 2, n)) % k   # every class on every side
    return pd.DataFrame({"y": [labels[c] for c in signal], "b1": b1, "b2": b2, "u": u})


@pytest.mark.parametrize("labels, by_value", [
    (["yes", "no"], ["no", "yes"]),                  # text: sorted, not in order of appearance
    ([11, 2, 5], ["2", "5", "11"]),                  # numbers: sorted by value, not as text
])
def test_class_labels_are_the_datas_sorted_labels_not_codes(labels, by_value):
    df = _upload(labels)
    assert [str(v) for v in labels] != by_value            # codes are not the order given
    data = prepare_table(df, "y")
    assert data.task == "classification"
    fit, assessed = split_rows(len(df), random_state=2, rows="test")
    est = fit_local_forest(data, fit, forest="rf", n_estimators=15, random_state=2)
    local = heldout_local_importance(data, assessed, estimator=est)
    assert local.classes == tuple(by_value)
    # the prediction by hand: the forest predicts codes 0 .. K-1, the code-th sorted label
    X = pd.DataFrame(data.X_numeric[assessed], columns=list(data.variables))
    codes = est.predict(X)
    assert list(local.prediction) == [by_value[int(c)] for c in codes]
    # the multiway forest grows on the codes and reports the same labels
    multi = heldout_local_importance(data, assessed, fit=fit, n_estimators=5, max_features=2)
    assert multi.classes == tuple(by_value)
    proba = multi.parameters["proba"]
    assert list(multi.prediction) == [by_value[int(c)] for c in np.argmax(proba, axis=1)]
    # and the partial dependence names its outputs by the same labels
    pd1, = heldout_partial_dependences(data, est, assessed, ["u"], grid_resolution=5)
    assert pd1.outputs == tuple(by_value)


def test_partial_dependence_on_a_bit_is_the_average_prediction_with_the_bit_set():
    # Friedman's definition: PD_b1(v) = mean over the assessed rows of the forest's class
    # probabilities with b1 set to v in every row, the other inputs as they are
    data = prepare_table(_upload(["yes", "no"], seed=4), "y")
    fit, assessed = split_rows(data.n_samples, random_state=4, rows="test")
    est = fit_local_forest(data, fit, forest="et", n_estimators=25, random_state=4)
    one, = heldout_partial_dependences(data, est, assessed, ["b1"], max_ice_lines=3)
    np.testing.assert_array_equal(one.grid[0], [0, 1])               # the bit's two values
    assert one.outputs == ("no", "yes") and one.n_samples == len(assessed)
    X = pd.DataFrame(data.X_numeric[assessed], columns=list(data.variables))
    j = data.variables.index("b1")
    for k, v in enumerate([0, 1]):
        rows = X.copy()
        rows.iloc[:, j] = float(v)
        by_hand = est.predict_proba(rows).mean(axis=0)            # one value per class
        np.testing.assert_allclose(one.average[:, k], by_hand, rtol=1e-12, atol=0)
