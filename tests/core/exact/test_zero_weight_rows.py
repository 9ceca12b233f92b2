"""Rows of weight 0 change nothing (issue 14, item 3).

A configuration of probability 0 is not a row of the distribution: a table built with such
rows must give the results of its ``compressed()`` form, which drops them.  Expected values
come from the brute-force oracle run on the rows of positive weight, and from the
definition of a strictly positive distribution checked cell by cell in the test.
"""

import itertools
import math

import numpy as np
import pytest

from _tables import rows_of
from oracle import enumerate_trees
from varimp_core.api import compute_importances
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.lattice import build_lattice, lattice_cost
from varimp_core.exact.relevance import relevance

# A, B binary and C with 40 declared levels, so that the sparse lattice (cells present in the
# rows) is the cheaper backend.  The last two rows have weight 0; the first of them,
# (A=0, B=1), is the only row with B=1 in the node A=0, where B is in fact constant.
X = np.array([[0, 0, 0], [0, 0, 1], [1, 0, 0], [1, 1, 1], [1, 1, 2], [0, 1, 0], [1, 0, 2]])
Y = np.array([0, 1, 1, 0, 1, 0, 0])
W = np.array([1, 1, 1, 1, 1, 0, 0], dtype=float)
LABELS = ((0, 1), (0, 1), tuple(range(40)))


def _table(weight=W):
    return DiscreteTable(X, Y, weight, ("A", "B", "C"), x_labels=LABELS)


def _binary_entropy(q: float) -> float:
    return -q * math.log2(q) - (1 - q) * math.log2(1 - q)


def _positive_rows():
    return [(tuple(int(v) for v in x), int(y), float(w)) for x, y, w in zip(X, Y, W) if w > 0]


def _mutated():
    """The same table, its zero weights written in place after construction (the table's
    own rows then still hold them), so the code that uses a table must ignore them too."""
    t = _table(np.where(W > 0, W, 1.0))
    t.weight[:] = W
    assert t.n_rows == 7 and (t.weight == 0).sum() == 2
    return t


@pytest.mark.parametrize("make", [_table, _mutated], ids=["built", "mutated"])
def test_sklearn_semantics_k1_depth2_equals_the_table_without_zero_rows(make):
    t = make()
    dense, sparse = lattice_cost(t, 2)
    assert sparse < dense   # the sparse backend is the one under test
    expected = enumerate_trees(_positive_rows(), 3, 1, semantics="sklearn", max_depth=2)
    # In the node A=0 (rows y = 0, 1 on C = 0, 1) B is constant, so K=1 under sklearn
    # semantics splits on C with probability 1 and gains its 1 bit there; the zero row
    # (A=0, B=1) made B look non-constant, eligible with gain 0, and halved that share.
    got = compute_importances(t, method="exact", max_features=1, max_depth=2,
                              k_semantics="sklearn")
    np.testing.assert_allclose(got.importances, expected, atol=1e-12)
    np.testing.assert_allclose(got.importances, compute_importances(
        t.compressed(), method="exact", max_features=1, max_depth=2,
        k_semantics="sklearn").importances, atol=1e-12)
    # By hand, the five rows of weight 1/5, h = H(1/3), each root drawn with probability 1/3:
    # root A: C splits A=0 surely (gain 0.4) and A=1 half the time (0.6 h)  -> 0.4 + 0.3 h;
    # root B: C splits B=0 half the time (0.6 h - 0.4) and B=1 surely (0.4) -> 0.3 h + 0.2;
    # root C: H(0.6) - 0.8 (children of weight 0.4, 0.4, 0.2 with entropies 1, 1, 0).
    h = _binary_entropy(1 / 3)
    by_hand = (0.6 * h + _binary_entropy(0.6) - 0.2) / 3               # 0.4406
    assert got.importances[2] == pytest.approx(by_hand, abs=1e-12)   # 0.3073 with the zero rows
    a = build_lattice(t, max_depth=2)[0b001]   # the nodes A=0 and A=1 (cell 0 is A=0)
    assert a.constant[a.candidates.index(1), 0] and not a.constant[a.candidates.index(2), 0]


def test_zero_rows_are_dropped_on_construction_and_keep_their_levels():
    t = _table()
    assert t.n_rows == 5 and (t.weight > 0).all()
    assert t.x_labels == tuple(tuple(lv) for lv in LABELS)
    c = _table().compressed()
    np.testing.assert_array_equal(np.sort(t.weight), np.sort(c.weight))
    # a level present only in rows of weight 0 is still a level (of probability 0)
    u = DiscreteTable([[0], [1], [2]], [0, 1, 1], [0.5, 0.5, 0.0], ("A",), exact=True)
    assert u.n_rows == 2 and tuple(u.n_levels) == (3,)


def _strictly_positive_by_definition(rows, levels):
    positive = {x for x, _, w in rows if w > 0}
    return all(cell in positive for cell in itertools.product(*(range(c) for c in levels)))


@pytest.mark.parametrize("mutate", [False, True])
def test_strictly_positive_ignores_zero_rows(mutate):
    # XOR on two bits where only (0,0) and (0,1) have probability: cells (1,0), (1,1) are 0
    Xb = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    w = np.array([0.5, 0.5, 0.0, 0.0])
    if mutate:
        t = DiscreteTable(Xb, Xb.sum(axis=1) % 2, np.full(4, 0.25), ("A", "B"), exact=True)
        t.weight[:] = w
    else:
        t = DiscreteTable(Xb, Xb.sum(axis=1) % 2, w, ("A", "B"), exact=True)
    expected = _strictly_positive_by_definition(
        [(tuple(x), int(y), float(v)) for x, y, v in zip(Xb, Xb.sum(axis=1) % 2, w)], (2, 2))
    assert expected is False
    r = relevance(t)
    assert r.strictly_positive is expected and r.markov_boundary is None
    assert r == relevance(t.compressed())
    # all four cells positive: strictly positive, by the same definition
    full = DiscreteTable(Xb, Xb.sum(axis=1) % 2, np.full(4, 0.25), ("A", "B"), exact=True)
    assert relevance(full).strictly_positive is _strictly_positive_by_definition(
        rows_of(full), (2, 2)) is True
