"""The sampled multiway forest converges to the exact values."""

import math

import numpy as np
import pytest

from _tables import led_table, xor_table
from varimp_core.exact.recursion import exact_importances_path
from varimp_core.forests.multiway import grow_forest
from varimp_core.problems.registry import get_problem
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import eqn3_importances


def test_k1_ten_thousand_trees_on_ten_rows_within_001_of_eqn3():
    f = grow_forest(led_table(), n_estimators=10_000, max_features=1, random_state=0)
    e = eqn3_importances(led_table())
    assert np.abs(f.importances - e.importances).max() < 0.01
    assert f.per_tree.shape == (10_000, 7)
    # Theorem 2 holds tree by tree for fully grown trees on the exact table
    np.testing.assert_allclose(f.per_tree.sum(axis=1), math.log2(10), atol=1e-9)


@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_forest_agrees_with_exact_within_monte_carlo_error(semantics):
    exact = exact_importances_path(led_table(), max_features=range(1, 8), k_semantics=semantics)
    for k, e in zip(range(1, 8), exact):
        f = grow_forest(led_table(), n_estimators=3000, max_features=k,
                        k_semantics=semantics, random_state=100 + k)
        z = (f.importances - e.importances) / f.importances_sem
        # 7 variables x 7 K x 2 semantics = 98 z-scores: |z| < 4.5 fails by chance ~1e-3
        assert np.abs(z).max() < 4.5, (k, z)
        assert f.importances_std.max() < 0.35  # used to bound Table 2's sampling error


def test_depth_limited_forest_matches_exact():
    e = exact_importances_path(xor_table(2, 2), max_features=[2], max_depth=[1, 2])
    for d, ed in zip([1, 2], e):
        f = grow_forest(xor_table(2, 2), n_estimators=4000, max_features=2, max_depth=d,
                        random_state=d)
        if ed.importances.max() == 0:
            np.testing.assert_allclose(f.importances, 0, atol=1e-12)
        else:
            z = (f.importances - ed.importances) / np.maximum(f.importances_sem, 1e-12)
            assert np.abs(z).max() < 4.5


def test_by_degree_sums_to_importances_and_matches_depth():
    f = grow_forest(led_table(), n_estimators=500, max_features=2, random_state=1)
    np.testing.assert_allclose(f.by_degree.sum(axis=1), f.importances, atol=1e-12)
    # XOR: nothing is gained at the root, the whole bit at depth 1 by whichever
    # variable was not at the root
    x = grow_forest(xor_table(2, 0), n_estimators=50, random_state=0)
    np.testing.assert_allclose(x.by_degree[:, 0], 0, atol=1e-12)
    assert x.by_degree[:, 1].sum() == pytest.approx(1.0)


def test_seeded_and_reproducible():
    a = grow_forest(led_table(), n_estimators=200, max_features=3, bootstrap=True, random_state=7)
    b = grow_forest(led_table(), n_estimators=200, max_features=3, bootstrap=True, random_state=7)
    c = grow_forest(led_table(), n_estimators=200, max_features=3, bootstrap=True, random_state=8)
    np.testing.assert_array_equal(a.per_tree, b.per_tree)
    assert not np.array_equal(a.per_tree, c.per_tree)


def test_bootstrap_on_a_sample_uses_its_size():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(300, 3))
    y = X[:, 0] ^ X[:, 1]
    t = DiscreteTable.from_codes(X, y)
    f = grow_forest(t, n_estimators=300, bootstrap=True, random_state=0)
    assert f.parameters["n_samples"] == 300
    assert f.importances[2] < 0.05 < f.importances[0]


def test_gini_units():
    f = grow_forest(xor_table(2, 0), n_estimators=20, criterion="gini")
    assert f.units == "gini"
    # Gini of a fair coin is 1/2, all of it removed at depth 1 by the second variable
    assert f.total == pytest.approx(0.5)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_estimators": 0}, "n_estimators"),
    ({"max_features": 0}, "max_features"),
    ({"max_depth": -1}, "max_depth"),
    ({"k_semantics": "x"}, "k_semantics"),
    ({"criterion": "x"}, "criterion"),
])
def test_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        grow_forest(led_table(), **kwargs)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_n_jobs_changes_nothing_but_the_processes(bootstrap):
    """Issue #16: chunk c of 64 trees draws from the c-th child seed, so any n_jobs gives the
    same forest, tree by tree (200 trees: 4 chunks, the last one short)."""
    table = get_problem("led").exact_table()
    kwargs = dict(n_estimators=200, max_features=2, bootstrap=bootstrap, n_samples=50,
                  random_state=7)
    one = grow_forest(table, **kwargs)
    for n_jobs in (2, -1):
        other = grow_forest(table, n_jobs=n_jobs, **kwargs)
        np.testing.assert_array_equal(other.per_tree, one.per_tree)
        np.testing.assert_array_equal(other.by_degree, one.by_degree)
    seen = []
    grow_forest(table, n_jobs=2, progress=lambda d, t: seen.append((d, t)), **kwargs)
    assert seen == [(64, 200), (128, 200), (192, 200), (200, 200)]
    with pytest.raises(ValueError, match="n_jobs must be a whole number other than 0"):
        grow_forest(table, n_jobs=0, **kwargs)


def test_cli_n_jobs_gives_the_same_numbers(capsys):
    from varimp_core.__main__ import main

    args = ["importances", "--problem", "led", "--method", "forest", "--max-features", "3",
            "--n-estimators", "130", "--format", "json"]
    assert main(args) == 0
    one = capsys.readouterr().out
    assert main(args + ["--n-jobs", "2"]) == 0
    assert capsys.readouterr().out == one
