"""Issue #24: many-level nominal inputs in the binary-split forests (sklearn-rf, sklearn-et).

A nominal input enters as the out-of-fold target statistic of its level
(:func:`~varimp_core.forests.sklearn_mdi.encode_nominal`), not as arbitrary
codes: a relevant 40-level ``city`` is not hidden by the order of its codes,
and an irrelevant 35-level ``product`` is not promoted by a leaking order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from varimp_core.api import compute_importances, load_data
from varimp_core.forests.sklearn_mdi import encode_nominal, sklearn_importances


def _table(seed, n=5000, classes=False):
    rng = np.random.default_rng(seed)
    city = rng.integers(0, 40, n)
    product = rng.integers(0, 35, n)
    effect = rng.choice([-50.0, 50.0], size=40)       # +-50 per city, in no order of the names
    x, z = rng.normal(size=n), rng.normal(size=n)
    y = effect[city] + 20 * x + rng.normal(scale=20, size=n)
    names = np.array([f"c{k:02d}" for k in rng.permutation(40)])
    df = pd.DataFrame({"city": names[city], "product": [f"p{k:02d}" for k in product],
                       "x": x, "z": z})
    df["y"] = np.where(y > 0, "up", "down") if classes else y
    return df


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["sklearn-rf", "sklearn-et"])
def test_relevant_city_on_top_irrelevant_product_below_x(seed, method):
    data = load_data(data=_table(seed), target="y")
    assert data.task == "regression" and data.kinds["city"] == "discrete"
    r = compute_importances(data, method=method, max_features=1, n_estimators=30,
                            random_state=seed)
    imp = dict(zip(r.variables, r.importances))
    assert r.variables == ("city", "product", "x", "z")          # each column once
    assert r.parameters["nominal"] == ["city", "product"]
    assert imp["city"] == max(imp.values())
    assert imp["city"] > 0.6 * r.total                          # Var explained: 2500 of 2900
    assert imp["product"] < imp["x"]
    assert imp["product"] < imp["z"] * 1.5                       # no more than plain noise


def test_class_shift_too():
    data = load_data(data=_table(3, classes=True), target="y")
    assert data.task == "classification"
    for method in ("sklearn-rf", "sklearn-et"):
        r = compute_importances(data, method=method, max_features=1, n_estimators=30)
        imp = dict(zip(r.variables, r.importances))
        assert imp["city"] == max(imp.values()) and imp["product"] < imp["x"]


def test_plain_codes_were_the_problem():
    """The old way (codes in label order) takes much of city's share to product and noise."""
    df = _table(0)
    data = load_data(data=df, target="y")
    encoded = compute_importances(data, method="sklearn-rf", max_features=1, n_estimators=30)
    plain = sklearn_importances(data.native_X(), data.y, kind="rf", task="regression",
                                n_estimators=30, max_features=1, variables=list(data.variables))
    share = lambda r, name: r.importances[r.variables.index(name)] / r.total   # noqa: E731
    assert share(encoded, "city") > share(plain, "city") + 0.2
    assert share(plain, "product") > 2 * share(encoded, "product")


@pytest.mark.parametrize("n_classes", [1, 2, 3])
def test_a_rows_own_target_never_enters_its_value(n_classes):
    """Out of fold: changing row i's Y leaves row i's encoded value as it was.

    With more than two classes, the levels' statistics are still out of fold but
    the one direction they are projected on is computed on all rows: row i moves
    its own value by a hair, through that direction only.
    """
    rng = np.random.default_rng(7)
    n = 300
    X = np.column_stack([rng.integers(0, 12, n), rng.normal(size=n)])
    task = "regression" if n_classes == 1 else "classification"
    y = rng.normal(size=n) if n_classes == 1 else rng.integers(0, n_classes, n)
    a = encode_nominal(X, y, [0], task=task, random_state=4)
    for i in (0, 17, 250):
        y2 = y.copy()
        y2[i] = y[i] + 5.0 if n_classes == 1 else (y[i] + 1) % n_classes
        b = encode_nominal(X, y2, [0], task=task, random_state=4)
        if n_classes <= 2:
            assert a[i, 0] == b[i, 0]
        else:       # only through the one principal direction, computed on all rows
            assert abs(a[i, 0] - b[i, 0]) < 0.01 * np.ptp(a[:, 0])
        assert not np.array_equal(a[:, 0], b[:, 0])      # other folds did see it
    np.testing.assert_array_equal(a[:, 1], X[:, 1])     # other columns untouched


def test_multiclass_orders_levels_along_the_first_principal_direction():
    rng = np.random.default_rng(1)
    n = 3000
    level = rng.integers(0, 9, n)
    group = np.array([0, 0, 0, 0, 0, 1, 1, 1, 2])           # unequal groups: one first direction
    y = (group[level] + (rng.random(n) < 0.2)) % 3
    X = np.column_stack([rng.permutation(9)[level], rng.normal(size=n)])
    enc = encode_nominal(X, y, [0], task="classification", random_state=0)
    # levels of one class get neighbouring values: along the order, the class changes twice
    mean = np.array([enc[level == k, 0].mean() for k in range(9)])
    along = group[np.argsort(mean)]
    assert np.count_nonzero(np.diff(along)) == 2, along
    shallow = sklearn_importances(enc, y, kind="rf", n_estimators=30, max_features=2,
                                  max_depth=2)
    plain = sklearn_importances(X, y, kind="rf", n_estimators=30, max_features=2, max_depth=2)
    assert shallow.importances[0] > plain.importances[0] + 0.1   # two splits say it all
