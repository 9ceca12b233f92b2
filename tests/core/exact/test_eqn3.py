"""Eqn 3 (Louppe et al. 2013, Theorem 1) against the paper and brute force."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _tables import TABLE2_EQN3, led_table, rows_of, with_irrelevant, xor_table
from oracle import cmi, enumerate_trees, eqn3_bruteforce
from varimp_core.exact.recursion import exact_importances
from varimp_core.problems.registry import get_problem
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.eqn3 import (all_terms, conditional_terms, eqn3_importances, eqn3_weights,
                                    random_subspace_importances)


def test_led_table2_eqn3_column_truncated():
    r = eqn3_importances(led_table())
    truncated = np.floor(r.importances * 1000) / 1000  # the paper truncates
    np.testing.assert_array_equal(truncated, TABLE2_EQN3)


def test_led_sum_is_log2_10():  # Theorem 2: Y is a function of X, so I(X;Y) = H(Y)
    r = eqn3_importances(led_table())
    assert r.total == pytest.approx(math.log2(10), abs=1e-12)
    assert r.information == pytest.approx(math.log2(10), abs=1e-12)


def test_degree_zero_column_is_mutual_information_over_p():
    t = led_table()
    r = eqn3_importances(t)
    rows = rows_of(t)
    for m in range(7):  # 1/(C(p,0) p) I(Xm;Y)
        assert r.by_degree[m, 0] == pytest.approx(cmi(rows, m, ()) / 7, abs=1e-12)


def test_weights_are_shapley_weights():
    p = 5  # |B|! (p-|B|-1)! / p!
    shapley = [math.factorial(k) * math.factorial(p - k - 1) / math.factorial(p) for k in range(p)]
    np.testing.assert_allclose(eqn3_weights(p), shapley)


@pytest.mark.parametrize("m", [2, 3, 4])
def test_xor_gives_one_over_m(m):
    r = eqn3_importances(xor_table(m, 2))
    np.testing.assert_allclose(r.importances, [1 / m] * m + [0, 0], atol=1e-12)


def test_sym_values_from_thesis():
    t = get_problem("sym").exact_table()
    r = eqn3_importances(t)
    np.testing.assert_allclose(r.importances, [0.25, 0.25], atol=1e-12)
    rows = rows_of(t)
    assert cmi(rows, 0, ()) == pytest.approx(0.1887, abs=5e-5)      # thesis (3.26)
    assert cmi(rows, 0, (1,)) == pytest.approx(0.3113, abs=5e-5)    # thesis (3.28)
    assert r.by_degree[0, 0] == pytest.approx(0.1887 / 2, abs=5e-5)


def test_irrelevant_variables_get_zero_and_change_nothing_at_k1():
    base = eqn3_importances(led_table()).importances
    r = eqn3_importances(with_irrelevant(led_table(), 3))
    np.testing.assert_allclose(r.importances[:7], base, atol=1e-12)   # Theorem 5
    np.testing.assert_allclose(r.importances[7:], 0.0, atol=1e-12)    # Theorem 3


def test_irrelevant_variables_change_relevant_ones_at_k_above_1():
    a = exact_importances(led_table(), max_features=3).importances
    b = exact_importances(with_irrelevant(led_table(), 2), max_features=3).importances
    assert np.abs(a - b[:7]).max() > 0.01
    np.testing.assert_allclose(b[7:], 0.0, atol=1e-12)  # still zero: never better than relevant ones


def test_prop6_depth_keeps_first_terms():
    t = led_table()
    full = eqn3_importances(t)
    for q in (1, 2, 4):
        r = eqn3_importances(t, max_depth=q)
        np.testing.assert_allclose(r.importances, full.by_degree[:, :q].sum(axis=1), atol=1e-12)
        # and the exact recursion with pruned totally randomized trees agrees
        e = exact_importances(t, max_features=1, max_depth=q)
        np.testing.assert_allclose(e.importances, r.importances, atol=1e-12)


@pytest.mark.parametrize("q", [1, 2, 3, 5])
def test_prop7_random_subspaces_equal_pruning(q):
    t = with_irrelevant(led_table(), 1)
    np.testing.assert_allclose(random_subspace_importances(t, q),
                               eqn3_importances(t, max_depth=q).importances, atol=1e-12)


def test_conditional_terms_sum_to_cell():
    t = xor_table(2, 1)
    r = eqn3_importances(t)
    terms = conditional_terms(t, "X1", 1)
    # hand: B={X2}: 1/(C(3,1)*2) * 1 bit; B={X3}: 0
    assert terms["term"].sum() == pytest.approx(1 / 6)
    assert terms.iloc[0]["conditioning"] == ["X2"]
    assert r.by_degree[0, 1] == pytest.approx(1 / 6)
    assert len(all_terms(t)) == 3 * 2 ** 2


def test_bad_inputs_raise_sentences():
    t = led_table()
    with pytest.raises(ValueError, match="max_depth"):
        eqn3_importances(t, max_depth=0)
    with pytest.raises(ValueError, match="Unknown variable 'X9'"):
        conditional_terms(t, "X9", 0)
    with pytest.raises(ValueError, match="degree"):
        conditional_terms(t, "X1", 7)


def _random_table(draw):
    p = draw(st.integers(1, 3))
    levels = [draw(st.integers(2, 3)) for _ in range(p)]
    ny = draw(st.integers(2, 3))
    n = draw(st.integers(2, 10))
    X = np.array([[draw(st.integers(0, c - 1)) for c in levels] for _ in range(n)])
    y = np.array([draw(st.integers(0, ny - 1)) for _ in range(n)])
    w = np.array([draw(st.integers(1, 5)) for _ in range(n)], dtype=float)
    return DiscreteTable.from_codes(X, y, weight=w)


@st.composite
def tables(draw):
    return _random_table(draw)


@settings(max_examples=60, deadline=None)
@given(tables())
def test_eqn3_exact_and_all_trees_agree(table):
    rows = rows_of(table)
    p = table.n_features
    brute = eqn3_bruteforce(rows, p)
    trees = enumerate_trees(rows, p, 1)
    np.testing.assert_allclose(eqn3_importances(table).importances, brute, atol=1e-9)
    np.testing.assert_allclose(exact_importances(table, max_features=1).importances, trees, atol=1e-9)
    np.testing.assert_allclose(brute, trees, atol=1e-9)  # Theorem 1 itself
