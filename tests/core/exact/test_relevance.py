"""Relevance classes (Kohavi-John, as in Geurts' slides) on hand-made cases."""

import numpy as np
import pytest

from _tables import xor_table
from varimp_core.problems.registry import get_problem
from varimp_core.exact.relevance import default_tolerances, relevance
from varimp_core.data.table import DiscreteTable


def test_xor_strong_degree_one_and_irrelevant():
    r = relevance(xor_table(2, 2))
    assert r.relevance == ("strong", "strong", "irrelevant", "irrelevant")
    assert r.degree == (1, 1, None, None)       # useless alone, informative given the other
    assert r.markov_boundary == ("X1", "X2")    # uniform inputs: strictly positive
    assert r.strictly_positive


def test_sym_strong_degree_zero():
    r = relevance(get_problem("sym").exact_table())
    assert r.relevance == ("strong", "strong") and r.degree == (0, 0)


def test_copies_are_weakly_relevant_and_boundary_not_unique():
    # X2 is a copy of X1 and Y = X1: each alone is enough, so neither is strongly relevant
    X = np.array([[0, 0, 0], [0, 0, 1], [1, 1, 0], [1, 1, 1]])
    t = DiscreteTable(X, X[:, 0], np.full(4, 0.25), ("X1", "X2", "X3"), exact=True)
    r = relevance(t)
    assert r.relevance == ("weak", "weak", "irrelevant")
    assert r.degree == (0, 0, None)
    assert r.markov_boundary is None and len(r.minimal_boundary) == 1
    assert not r.strictly_positive
    assert r.boundary_unique is False   # {X1} and {X2} are both boundaries, by hand


def test_boundary_unique_by_hand():
    # strictly positive: unique by the intersection property
    assert relevance(xor_table(2, 2)).boundary_unique is True
    # Y = X1 = X2, on the cells (0,0) and (1,1) only: each variable alone is a blanket, so two
    X = np.array([[0, 0], [1, 1]])
    assert relevance(DiscreteTable(X, X[:, 0], [0.5, 0.5], ("X1", "X2"), exact=True)
                     ).boundary_unique is False
    # Y = X1 with X2 = X1 except on one cell: X1 alone is the only boundary, though a cell
    # has probability 0 (X2 alone leaves Y uncertain on X2 = 1)
    X = np.array([[0, 0], [1, 1], [0, 1]])
    r = relevance(DiscreteTable(X, X[:, 0], [0.4, 0.4, 0.2], ("X1", "X2"), exact=True))
    assert not r.strictly_positive and r.minimal_boundary == ("X1",)
    assert r.boundary_unique is True


def test_relevance_dict_without_boundary_unique_reads_as_unknown():
    d = relevance(xor_table(2, 0)).to_dict()
    assert d["boundary_unique"] is True
    d.pop("boundary_unique")
    assert type(relevance(xor_table(2, 0))).from_dict(d).boundary_unique is None


def test_led_copy_makes_x5_weak():
    t = get_problem("led:copies=X5:1").exact_table()
    r = relevance(t)
    x5, copy = t.variables.index("X5"), t.variables.index("X5'")
    assert r.relevance[x5] == "weak" and r.relevance[copy] == "weak"


def test_tolerance_validated():
    with pytest.raises(ValueError, match="tol"):
        relevance(xor_table(2, 0), tol=-1)


def _plugin_cmi(x, y, z):
    """Plug-in I(x; y | z) in bits of integer code arrays, from the counts (no varimp code)."""
    def h(*cols):
        _, counts = np.unique(np.column_stack(cols), axis=0, return_counts=True)
        q = counts / counts.sum()
        return -(q * np.log2(q)).sum()
    return h(x, z) + h(y, z) - h(x, y, z) - h(z)


def test_default_tolerance_is_the_bias_of_the_largest_term_tested():
    """Issue 14, item 5: the docstring's (c_m-1) prod_B c, not the product of all levels.

    Inputs independent of Y: the mean plug-in I(X_m; Y | V^{-m}) over many samples is the
    bias of the largest term relevance() tests for X_m; the default tol is its maximum over
    m, and the boundary threshold the mean plug-in I(Y; X_V) (the largest boundary test).
    Levels c = (2, 3), |Y| = 2: largest-term degrees of freedom max(1*3, 2*2) = 4 and
    boundary 2*3 - 1 = 5, where the product of all levels would say 6."""
    rng = np.random.default_rng(7)
    n, reps = 2000, 300
    terms, whole = np.zeros((reps, 2)), np.zeros(reps)
    for r in range(reps):
        a, b, y = rng.integers(0, 2, n), rng.integers(0, 3, n), rng.integers(0, 2, n)
        terms[r] = _plugin_cmi(a, y, b), _plugin_cmi(b, y, a)
        ab = a * 3 + b
        whole[r] = _plugin_cmi(ab, y, np.zeros(n, dtype=int))
    t = DiscreteTable.from_codes(np.column_stack([a, b]), y)
    tol, boundary_tol = default_tolerances(t)
    assert relevance(t).tol == tol
    best = terms.mean(axis=0).max()
    se = terms.std(axis=0).max() / np.sqrt(reps)
    assert abs(tol - best) < 4 * se
    assert abs(boundary_tol - whole.mean()) < 4 * whole.std() / np.sqrt(reps)
    all_levels = (2 - 1) * 6 / (2 * n * np.log(2))   # what the code used before
    assert all_levels - best > 8 * se


def test_default_tolerance_by_hand_and_capped():
    # |Y| = 3, c = (2, 4), N = 1000: terms max(1*4, 3*2) = 6, boundary 8 - 1 = 7 degrees
    X = np.array([[i % 2, i % 4] for i in range(1000)])
    t = DiscreteTable.from_codes(X, np.arange(1000) % 3)
    tol, btol = default_tolerances(t)
    assert tol == pytest.approx(2 * 6 / (2000 * np.log(2)))
    assert btol == pytest.approx(2 * 7 / (2000 * np.log(2)))
    small = DiscreteTable.from_codes(X[:10], np.arange(10) % 3)
    assert default_tolerances(small) == (0.05, 0.05)
    assert relevance(xor_table(2, 0)).tol == 1e-9   # exact tables


def test_relevance_with_importances_is_eqn3_beside_the_classes():
    """Theorem 3: the K = 1 importance is zero exactly for the irrelevant variables."""
    from varimp_core.exact.relevance import relevance_with_importances
    from varimp_core.problems.registry import get_problem

    table = get_problem("xor:relevant=2,irrelevant=1").exact_table()
    view = relevance_with_importances(table)
    # X1 and X2 are each needed given the other: strongly relevant; X3 never helps
    assert list(view["relevance"]["relevance"]) == ["strong", "strong", "irrelevant"]
    np.testing.assert_allclose(view["importances"], [0.5, 0.5, 0.0], atol=1e-12)
    refused = relevance_with_importances(table, max_features=2)
    assert refused["relevance"] is None and "3 inputs, more than the 2" in refused["message"]
