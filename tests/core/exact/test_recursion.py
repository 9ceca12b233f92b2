"""The exact infinite-forest recursion against Table 2, Theorem 2 and brute force."""

import itertools
import math

from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _tables import TABLE2, led_rows, led_table, rows_of, with_irrelevant, xor_table
from oracle import cmi, enumerate_trees, eqn3_bruteforce
from varimp_core.api import compute_importances
from .test_eqn3 import tables
from varimp_core.exact.recursion import exact_importances, exact_importances_path
from varimp_core.forests.sklearn_mdi import sklearn_importances
from varimp_core.exact.splitting import sklearn_draw_law, win_probability_table


def test_led_table2_within_sampling_error():
    # Table 2 comes from 10,000 trees; the per-tree spread of an importance on LED is
    # below 0.35 bits (measured independently in test_multiway_forest), so 4 SE = 0.014, plus
    # 0.001 for the paper's truncation.
    exact = exact_importances_path(led_table(), max_features=range(1, 8))
    for k, r in zip(range(1, 8), exact):
        np.testing.assert_allclose(r.importances, TABLE2[k], atol=0.015, err_msg=f"K={k}")


@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_theorem2_holds_for_every_k(semantics):
    for r in exact_importances_path(led_table(), max_features=range(1, 8), k_semantics=semantics):
        assert r.total == pytest.approx(math.log2(10), abs=1e-10)
    for r in exact_importances_path(xor_table(2, 2), max_features=range(1, 5), k_semantics=semantics):
        assert r.total == pytest.approx(1.0, abs=1e-10)


def test_xor_all_k_gives_one_over_m():
    for r in exact_importances_path(xor_table(3, 2), max_features=range(1, 6)):
        np.testing.assert_allclose(r.importances, [1 / 3] * 3 + [0, 0], atol=1e-12)


def test_k6_equals_k7_under_id3_because_x2_and_x5_tie_at_the_root():
    # X2 and X5 are on for 6 and 4 of the 10 digits: both have I(X;Y) = H(0.4).
    a, b = exact_importances_path(led_table(), max_features=[6, 7])
    np.testing.assert_allclose(a.importances, b.importances, atol=1e-12)


def test_win_probability_formula_by_hand():
    # n=3 candidates, K=2, no ties: the best wins unless it is not drawn: 2/3.
    assert win_probability_table(3, 2, "id3", 3)[0, 0] == pytest.approx(2 / 3)
    # the worst (a=2) never wins with K=2
    assert win_probability_table(3, 2, "id3", 3)[2, 0] == 0
    # all three tied with K=3: 1/3 each
    assert win_probability_table(3, 3, "id3", 3)[0, 2] == pytest.approx(1 / 3)
    # sklearn: p=3 features, 1 non-constant, K=1 -> it is always read eventually
    np.testing.assert_allclose(sklearn_draw_law(3, 1, 1), [0, 1])


@st.composite
def cases(draw):
    table = draw(tables())
    k = draw(st.integers(1, table.n_features))
    depth = draw(st.one_of(st.none(), st.integers(1, table.n_features)))
    sem = draw(st.sampled_from(["id3", "sklearn"]))
    return table, k, depth, sem


@settings(max_examples=80, deadline=None)
@given(cases())
def test_exact_recursion_equals_enumeration_of_all_trees(case):
    table, k, depth, sem = case
    expected = enumerate_trees(rows_of(table), table.n_features, k, semantics=sem, max_depth=depth)
    got = exact_importances(table, max_features=k, max_depth=depth, k_semantics=sem)
    np.testing.assert_allclose(got.importances, expected, atol=1e-9)


def test_led_with_irrelevant_brute_force_k2():
    t = with_irrelevant(xor_table(2, 0), 1)
    expected = enumerate_trees(rows_of(t), 3, 2)
    np.testing.assert_allclose(exact_importances(t, max_features=2).importances, expected, atol=1e-12)


@pytest.mark.parametrize("k", [1, 2])
def test_scikit_learn_binary_trees_follow_the_sklearn_semantics(k):
    """On binary inputs a binary tree is a multiway tree: RandomForest without
    bootstrap converges to the exact 'sklearn' semantics, not to 'id3' (K>=2)."""
    X, y = led_rows()
    rf = sklearn_importances(X.astype(float), y, kind="rf", n_estimators=6000, max_features=k,
                             bootstrap=False, criterion="entropy", random_state=3)
    sk = exact_importances(led_table(), max_features=k, k_semantics="sklearn")
    z = (rf.importances - sk.importances) / rf.importances_sem
    assert np.abs(z).max() < 4.5
    if k == 2:
        id3 = exact_importances(led_table(), max_features=k, k_semantics="id3")
        assert np.abs((rf.importances - id3.importances) / rf.importances_sem).max() > 4.5


def test_bad_parameters():
    t = led_table()
    with pytest.raises(ValueError, match="max_features"):
        exact_importances(t, max_features=8)
    with pytest.raises(ValueError, match="k_semantics"):
        exact_importances(t, k_semantics="weka")
    with pytest.raises(ValueError, match="criterion"):
        exact_importances(t, max_features=2, criterion="mse")
    with pytest.raises(ValueError, match="DiscreteTable"):
        exact_importances(np.zeros((3, 3)))


# -- by_degree is the depth profile (issue 14, item 1) ---------------------------------------
@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_by_degree_at_k1_is_the_depth_profile_of_brute_force_trees(semantics):
    """compute_importances at K=1 and full depth: the first q columns of by_degree are the
    importances of trees pruned at depth q, walked tree by tree by the oracle.  Under
    sklearn semantics Eqn 3's split by |B| is not that profile (constant variables are
    skipped, not spent on one-child splits): on LED the depth totals are 0.80/0.83/0.75,
    where Eqn 3's degree columns give 0.80/0.69/0.57."""
    t = led_table()
    full = compute_importances(t, method="exact", max_features=1, k_semantics=semantics)
    cumulative = np.cumsum(full.by_degree, axis=1)
    totals = []
    for q in (1, 2, 3):
        pruned = enumerate_trees(rows_of(t), 7, 1, semantics=semantics, max_depth=q)
        np.testing.assert_allclose(cumulative[:, q - 1], pruned, atol=1e-12, err_msg=f"q={q}")
        totals.append(sum(pruned))
    steps = np.diff([0.0] + totals)
    if semantics == "sklearn":
        np.testing.assert_allclose(steps, [0.80, 0.83, 0.75], atol=0.005)
    else:  # the same trees as Eqn 3 term by term (Prop 6): its degree columns, recomputed
        rows = rows_of(t)
        deg = [sum(cmi(rows, m, b) / (math.comb(7, k) * (7 - k))
                   for m in range(7) for b in itertools.combinations(
                       [j for j in range(7) if j != m], k)) for k in range(3)]
        np.testing.assert_allclose(steps, deg, atol=1e-12)
        np.testing.assert_allclose(steps, [0.80, 0.69, 0.57], atol=0.005)
    # the importances themselves are Eqn 3 under both semantics
    np.testing.assert_allclose(full.importances, eqn3_bruteforce(rows_of(t), 7), atol=1e-12)


@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_first_q_columns_of_by_degree_sum_to_the_depth_q_result(semantics):
    # a depth limit only stops the trees: the nodes above it are those of the full trees
    t = led_table()
    for k in (1, 2, 4, 7):
        full = compute_importances(t, method="exact", max_features=k, k_semantics=semantics)
        assert full.by_degree is not None
        for q in range(1, 8):
            pruned = compute_importances(t, method="exact", max_features=k, max_depth=q,
                                         k_semantics=semantics)
            np.testing.assert_allclose(full.by_degree[:, :q].sum(axis=1), pruned.importances,
                                       atol=1e-12, err_msg=f"K={k} q={q}")


def test_k1_sklearn_semantics_too_large_for_the_recursion_keeps_eqn3_without_a_profile(
        monkeypatch):
    import varimp_core.api as api

    monkeypatch.setattr(api, "MAX_LATTICE_CELLS", 10)
    t = led_table()
    r = api.compute_importances(t, method="exact", max_features=1, k_semantics="sklearn")
    assert r.by_degree is None
    np.testing.assert_allclose(r.importances, eqn3_bruteforce(rows_of(t), 7), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(tables(), st.sampled_from(["id3", "sklearn"]), st.sampled_from(["dense", "sparse"]))
def test_every_k_at_once_equals_enumeration_of_all_trees_for_each_k(table, sem, backend):
    """One propagation carries every K side by side (a cell some K never reaches carries 0
    for it); each K's result is still the brute-force mean over all its trees, through the
    dense lattice and through the sparse one (which works out each subset's cells once)."""
    from varimp_core.exact import lattice

    p = table.n_features
    depths = [None, 2] if p > 2 else [None]
    forced = {"dense": lambda t, d: (0.0, 1.0), "sparse": lambda t, d: (1.0, 0.0)}[backend]
    with patch.object(lattice, "lattice_cost", forced):
        got = exact_importances_path(table, max_features=range(1, p + 1), max_depth=depths,
                                     k_semantics=sem)
    pairs = [(k, d) for k in range(1, p + 1) for d in depths]
    assert [(r.parameters["max_features"], r.parameters["max_depth"]) for r in got] == pairs
    for r, (k, d) in zip(got, pairs):
        expected = enumerate_trees(rows_of(table), p, k, semantics=sem, max_depth=d)
        np.testing.assert_allclose(r.importances, expected, atol=1e-9)
