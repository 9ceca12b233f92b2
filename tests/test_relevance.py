"""Relevance classes (Kohavi-John, as in Geurts' slides) on hand-made cases."""

import numpy as np
import pytest

from _tables import xor_table
from varimp_core.problems.registry import get_problem
from varimp_core.exact.relevance import relevance
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


def test_led_copy_makes_x5_weak():
    t = get_problem("led:copies=X5:1").exact_table()
    r = relevance(t)
    x5, copy = t.variables.index("X5"), t.variables.index("X8")
    assert r.relevance[x5] == "weak" and r.relevance[copy] == "weak"


def test_tolerance_validated():
    with pytest.raises(ValueError, match="tol"):
        relevance(xor_table(2, 0), tol=-1)
