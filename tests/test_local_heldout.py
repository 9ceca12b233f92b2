"""Tests of varimp_core.local.heldout: the split, the forests and what they are assessed on.

Expected values come from the same core functions called directly on the rows
the split names (local importance, partial dependence), and from the split's
arithmetic (floor(0.3 n) rows held out).
"""

import numpy as np
import pytest

from varimp_core.api import load_data
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
