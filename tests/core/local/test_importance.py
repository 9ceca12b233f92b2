"""Tests of varimp_core.local.importance and varimp_core.local.interactions (Ciss 2015, sections 4 and 6).

Expected values come from hand calculation on trees whose splits are forced
by the data, from an exact recursion over totally randomized trees on the
LED table (an oracle written here), and from theory for the XOR problem.
"""

from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier

from varimp_core.problems.discrete import LED_SEGMENTS
from varimp_core.local.interactions import (OTHER_FEATURES, importance_over_labels,
                                            pairs_frame, tile_frame, variables_frame,
                                            interaction_importance, interactions,
                                            partial_importance)
from varimp_core.local.importance import fit_uniform_forest, local_importance
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult
from varimp_core.forests.sklearn_mdi import fit_sklearn_forest

# -- hand-made trees ---------------------------------------------------------------------
# All 8 rows of three fair bits, twice.
CUBE = np.array([[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)] * 2, dtype=float)


def _tree_a():
    """y = 2 x1 + (x2 if x1 = 0 else x3): root x1 (1 bit, against 0.5 for x2 or x3),
    then x2 on the left (y = x2) and x3 on the right (y = 2 + x3); four pure leaves."""
    x1, x2, x3 = CUBE.T
    y = 2 * x1 + np.where(x1 == 0, x2, x3)
    tree = DecisionTreeClassifier(criterion="entropy", random_state=0).fit(CUBE, y)
    assert tree.tree_.feature[0] == 0 and tree.get_depth() == 2   # the structure above
    return tree


def _tree_b():
    """y = 2 x2 + (x1 if x2 = 0 else x3): root x2, then x1 on the left, x3 on the right."""
    x1, x2, x3 = CUBE.T
    y = 2 * x2 + np.where(x2 == 0, x1, x3)
    tree = DecisionTreeClassifier(criterion="entropy", random_state=0).fit(CUBE, y)
    assert tree.tree_.feature[0] == 1 and tree.get_depth() == 2
    return tree


def _three_tree_forest():
    """A forest whose trees are A, B, A (classes 0..3 in every tree)."""
    x1, x2, x3 = CUBE.T
    forest = RandomForestClassifier(n_estimators=3, random_state=0).fit(
        CUBE, 2 * x1 + np.where(x1 == 0, x2, x3))
    a = _tree_a()
    forest.estimators_ = [a, _tree_b(), a]
    return forest


def test_one_tree_counts_the_split_just_above_the_leaf():
    local = local_importance(_tree_a(), CUBE, variables=["x1", "x2", "x3"], max_level=3)
    x1 = CUBE[:, 0]
    # by hand: rows with x1 = 0 end on the x2 split, rows with x1 = 1 on the x3 split
    expected = np.zeros((16, 3), dtype=int)
    expected[x1 == 0, 1] = 1
    expected[x1 == 1, 2] = 1
    np.testing.assert_array_equal(local.counts, expected)
    np.testing.assert_array_equal(local.counts_by_level[0], expected)
    # two levels above every leaf: the root split on x1; three levels: nothing
    np.testing.assert_array_equal(local.counts_by_level[1], np.tile([1, 0, 0], (16, 1)))
    np.testing.assert_array_equal(local.counts_by_level[2], 0)
    np.testing.assert_array_equal(local.positions[:, 0], np.where(x1 == 0, 1, 2))
    np.testing.assert_array_equal(local.positions[:, 1:], -1)   # one variable per row
    assert local.n_estimators == 1
    assert list(local.to_frame()["position_1"]) == ["x2" if v == 0 else "x3" for v in x1]


def test_three_trees_positions_and_interactions_by_hand():
    local = local_importance(_three_tree_forest(), CUBE, variables=["x1", "x2", "x3"])
    x1, x2 = CUBE[:, 0], CUBE[:, 1]
    # Trees A, B, A: (x1, x2) = (0,0): x2 x2 x1; (0,1): x2 x2 x3; (1,0): x3 x3 x1; (1,1): x3 x3 x3
    cell = (2 * x1 + x2).astype(int)
    counts = np.array([[1, 2, 0], [0, 2, 1], [1, 0, 2], [0, 0, 3]])[cell]
    np.testing.assert_array_equal(local.counts, counts)
    first = np.array([1, 1, 2, 2])[cell]
    second = np.array([0, 2, 0, -1])[cell]
    np.testing.assert_array_equal(local.positions[:, 0], first)
    np.testing.assert_array_equal(local.positions[:, 1], second)
    np.testing.assert_array_equal(local.positions[:, 2], -1)
    # SLI_q(j): rows = variables, columns = positions (each cell holds 4 rows)
    np.testing.assert_array_equal(local.position_counts(), [[0, 8, 0], [8, 0, 0], [8, 4, 0]])
    np.testing.assert_array_equal(local.ranks[cell == 0], np.tile([2, 1, 0], (4, 1)))

    inter = interactions(local, min_share=0)
    # 12 of the 16 rows have two positions: (x2,x1), (x2,x3), (x3,x1), 4 rows each
    assert inter.n_pairs == 12 and inter.merged == ()
    m = inter.to_matrix()
    assert m.loc["x2", "x1"] == pytest.approx(1 / 3)
    assert m.loc["x2", "x3"] == pytest.approx(1 / 3)
    assert m.loc["x3", "x1"] == pytest.approx(1 / 3)
    assert m.to_numpy().sum() == pytest.approx(1)
    # VII_(1,2)(j, j') = (SLI_1(j) + SLI_2(j')) / 2n, n = 16
    v = inter.to_matrix("vii")
    assert v.loc["x2", "x1"] == pytest.approx((8 + 8) / 32)
    assert v.loc["x1", "x3"] == pytest.approx((0 + 4) / 32)
    # Importance based on interactions, the paper's formula by hand (d = 3, n = 16,
    # SLI_1 = (0, 8, 8), SLI_2 = (8, 0, 4)): row mean / 2 + column mean / 2 + diagonal,
    # x1: (12/32)/6 + (40/32)/6 + 8/32 = 25/48; x2: (36/32)/6 + (16/32)/6 + 8/32 = 25/48;
    # x3: (36/32)/6 + (28/32)/6 + 12/32 = 17/24
    imp = interaction_importance(local)
    assert isinstance(imp, ImportanceResult) and imp.by_degree is None
    np.testing.assert_allclose(imp.importances, [25 / 48, 25 / 48, 17 / 24])
    # The tile (x2, x3) holds the 4 rows of cell (x1, x2) = (0, 1), by hand above
    tile = tile_frame(local, inter, "x2", "x3", rows=np.arange(100, 116))
    assert sorted(tile["Row"]) == sorted(100 + np.flatnonzero(cell == 1))
    assert set(tile["Position 1"]) == {"x2"} and set(tile["Position 2"]) == {"x3"}
    assert len(tile_frame(local, inter, "x1", "x2")) == 0  # no row has x1 first
    np.testing.assert_allclose(variables_frame(local)["share_position_1"], [0, 0.5, 0.5])
    assert pairs_frame(inter)["observations"].sum() == 12


def test_interactions_need_several_trees():
    local = local_importance(_tree_a(), CUBE)
    with pytest.raises(ValueError, match="at least two trees"):
        interactions(local)
    with pytest.raises(ValueError, match="at least two trees"):
        interaction_importance(local)


# -- XOR: the interaction is (X1, X2) --------------------------------------------------------
@pytest.mark.parametrize("kind", ["rf", "uniform"])
def test_xor_interaction_is_x1_x2(kind):
    problem = get_problem("xor:relevant=2,irrelevant=3")
    frame = problem.sample(2000, random_state=0)
    X, y = frame[list(problem.variables)], frame[problem.target]
    if kind == "uniform":
        forest = fit_uniform_forest(X, y, n_estimators=200, random_state=0)
    else:
        forest = fit_sklearn_forest(X, y, kind="rf", n_estimators=200, max_features=2)
    local = local_importance(forest, X)
    # Theory: with all 32 input patterns in every node's sample, a node is pure
    # only once X1 and X2 are both fixed, so the split just above a leaf is on
    # X1 or X2 -- the noise variables never end a path (share 0).
    noise = [2, 3, 4]
    assert local.counts[:, noise].sum() <= 0.01 * local.counts.sum()
    inter = interactions(local, min_share=0.01)
    m = inter.to_matrix()
    assert m.loc["X1", "X2"] + m.loc["X2", "X1"] > 0.95
    off = inter.joint - np.diag(np.diag(inter.joint))
    r, c = np.unravel_index(np.argmax(off), off.shape)
    assert {inter.labels[r], inter.labels[c]} == {"X1", "X2"}
    assert set(inter.merged) == {"X3", "X4", "X5"} and inter.labels[-1] == OTHER_FEATURES
    full = interactions(local, min_share=0)
    assert np.all(full.influence[[full.labels.index(v) for v in ("X3", "X4", "X5")]] < 0.01)
    imp = interaction_importance(local)
    assert set(np.argsort(-imp.importances)[:2]) == {0, 1}
    # Closed form of the paper's formula when every row has two positions:
    # VII(j) = 3 (SLI_1 + SLI_2) / 4n + 1 / 2d, summing to 2.
    assert imp.total == pytest.approx(2)


# -- LED: digit 2 is singled out by X6 --------------------------------------------------------
def _led():
    digits = np.array([[int(s[d]) for s in LED_SEGMENTS] for d in range(10)])
    return digits


def _leaf_parent_law(digits, target):
    """Oracle: P(leaf parent of ``target`` splits on v) in a totally randomized tree.

    At each node, a variable is drawn uniformly among those not constant on the
    digits of the node (K = 1 extra-trees), the digits agreeing with ``target``
    on it are kept; the path ends when ``target`` is alone.
    """
    p = digits.shape[1]

    @lru_cache(maxsize=None)
    def law(node):
        rows = digits[list(node)]
        free = [v for v in range(p) if rows[:, v].min() != rows[:, v].max()]
        out = np.zeros(p)
        for v in free:
            child = tuple(d for d in node if digits[d, v] == digits[target, v])
            if child == (target,):
                out[v] += 1
            else:
                out += law(child)
        return out / len(free)

    return law(tuple(range(len(digits))))


def test_led_table_facts():
    digits = _led()
    # Louppe et al. (2013) Table 1: digit 2 is 1011101 -- segments X2 and X6 are off,
    # and X6 is off for digit 2 only (X2 is also off for 1, 3 and 7).
    np.testing.assert_array_equal(digits[2], [1, 0, 1, 1, 1, 0, 1])
    assert np.flatnonzero(digits[:, 5] == 0).tolist() == [2]
    assert np.flatnonzero(digits[:, 1] == 0).tolist() == [1, 2, 3, 7]
    # Oracle: the path of digit 2 ends on X6 with probability 2/3, on X2 or X5 with 1/6 each.
    np.testing.assert_allclose(_leaf_parent_law(digits, 2), [0, 1 / 6, 0, 0, 1 / 6, 2 / 3, 0])


def test_led_partial_importance_of_digit_2():
    digits = _led()
    X = np.tile(digits, (20, 1)).astype(float)
    y = np.tile(np.arange(10), 20)
    forest = ExtraTreesClassifier(n_estimators=400, max_features=1, criterion="entropy",
                                  random_state=0).fit(X, y)
    names = [f"X{j}" for j in range(1, 8)]
    local = local_importance(forest, X, variables=names)
    two = y == 2
    assert np.all(local.prediction == y)                       # the table is learnt exactly
    share = local.frequencies[two].mean(axis=0)
    # Multinomial over T = 400 trees: sd <= sqrt(2/9 / 400) = 0.024; 4 sd.
    np.testing.assert_allclose(share, _leaf_parent_law(digits, 2), atol=0.095)
    part = partial_importance(local, label=2)
    frame = part.to_frame()
    assert frame.loc[0, "variable"] == "X6" and frame.loc[0, "share"] == 1.0
    assert part.n_observations == 20 and part.subset == "prediction = 2"
    labels = importance_over_labels(local)
    assert labels.to_matrix().loc["X6", 2] == 1.0
    np.testing.assert_allclose(labels.shares.sum(axis=0), 1.0)
    # Summing over all 7 positions (the paper's formula taken literally) cannot
    # rank them: X2, X5 and X6 each appear once per digit-2 row.
    all_pos = partial_importance(local, label=2, max_position=7)
    np.testing.assert_array_equal(all_pos.scores[[1, 4, 5]], 20)


def test_partial_importance_regression_splits_the_rows():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 3))
    y = 3 * X[:, 0] + X[:, 1] + rng.normal(0, 0.1, 300)
    forest = fit_sklearn_forest(X, y, task="regression", n_estimators=20, max_features=3)
    local = local_importance(forest, X)
    t = float(np.median(local.prediction))
    above = partial_importance(local, threshold=t, direction="above", max_position=2)
    below = partial_importance(local, threshold=t, direction="below", max_position=2)
    # the two ranges partition the rows, so their scores add up to the whole
    whole = local.position_counts()[:, :2].sum(axis=1)
    np.testing.assert_array_equal(above.scores + below.scores, whole)
    assert above.n_observations + below.n_observations == 300
    with pytest.raises(ValueError, match="regressor"):
        partial_importance(local, label=1)
    with pytest.raises(ValueError, match="threshold"):
        partial_importance(local)
    with pytest.raises(ValueError, match="needs a classifier"):
        importance_over_labels(local)


# -- options and refusals -----------------------------------------------------------------
def test_fit_uniform_forest_options():
    X = CUBE
    forest = fit_uniform_forest(X, X[:, 0], n_estimators=5)
    assert isinstance(forest, ExtraTreesClassifier)
    assert forest.bootstrap is True and forest.max_features == 3
    with pytest.raises(ValueError, match="'b' is constant"):
        fit_uniform_forest(pd.DataFrame({"a": X[:, 0], "b": 1.0}), X[:, 0])


def test_bad_inputs():
    forest = _three_tree_forest()
    with pytest.raises(ValueError, match="not one of the forest's classes"):
        partial_importance(local_importance(forest, CUBE), label=7)
    with pytest.raises(ValueError, match="3 inputs"):
        local_importance(forest, CUBE[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        local_importance(forest, np.where(CUBE == 1, np.nan, CUBE))
    with pytest.raises(ValueError, match="max_position"):
        partial_importance(local_importance(forest, CUBE), label=0, max_position=4)
    with pytest.raises(ValueError, match="not a fitted forest"):
        local_importance(object(), CUBE)
    named = RandomForestClassifier(n_estimators=2, random_state=0).fit(
        pd.DataFrame(CUBE, columns=["a", "b", "c"]), CUBE[:, 0])
    with pytest.raises(ValueError, match="no column 'c'"):
        local_importance(named, pd.DataFrame(CUBE, columns=["a", "b", "z"]))
    # the columns are matched by name, whatever their order
    shuffled = pd.DataFrame(CUBE, columns=["a", "b", "c"])[["c", "a", "b"]]
    same = local_importance(named, shuffled)
    np.testing.assert_array_equal(same.counts, local_importance(named, CUBE).counts)
    assert same.variables == ("a", "b", "c")
