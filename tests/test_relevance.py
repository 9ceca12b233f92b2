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
    x5, copy = t.variables.index("X5"), t.variables.index("X8")
    assert r.relevance[x5] == "weak" and r.relevance[copy] == "weak"


def test_tolerance_validated():
    with pytest.raises(ValueError, match="tol"):
        relevance(xor_table(2, 0), tol=-1)
