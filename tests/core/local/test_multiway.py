"""Local importance of varimp's multiway forest (varimp_core.local.multiway).

Expected values come from an independent recursive ID3 tree written here, from
the forest's own per-tree importances (which variable the root split used) and
from the structure of XOR and LED.
"""

import numpy as np
import pytest

from varimp_core.forests.multiway import grow_forest, grow_forest_routed
from varimp_core.local.multiway import _Router, forest_local_importance
from varimp_core.local.interactions import interactions, partial_importance
from varimp_core.problems.registry import get_problem
from varimp_core.data.table import DiscreteTable


# -- an independent ID3 tree (K = p, no ties), grown recursively --------------------
def _entropy(w_by_class):
    w = np.asarray(w_by_class, float)
    n = w.sum()
    if n <= 0:
        return 0.0
    q = w[w > 0] / n
    return float(-(q * np.log2(q)).sum() * n)


def _id3(X, y, w, levels, n_classes, used=(), parent_var=-1, depth_left=None):
    """Nested dict tree: leaf {'dist', 'parent'} or node {'var', 'children', 'dist', 'parent'}."""
    dist = np.bincount(y, weights=w, minlength=n_classes)
    node = {"dist": dist, "parent": parent_var}
    free = [j for j in range(X.shape[1]) if j not in used]
    if (dist > 0).sum() <= 1 or not free or depth_left == 0:
        return node
    parent_imp = _entropy(dist)
    gains = {}
    for j in free:
        child = sum(_entropy(np.bincount(y[X[:, j] == v], weights=w[X[:, j] == v],
                                         minlength=n_classes)) for v in range(levels[j]))
        gains[j] = max(parent_imp - child, 0.0)
    best = max(gains.values())
    winners = [j for j, g in gains.items() if g >= best - 1e-9]
    assert len(winners) == 1, "the oracle needs a table without tied splits"
    j = winners[0]
    node["var"] = j
    node["children"] = {}
    for v in range(levels[j]):
        mask = X[:, j] == v
        if w[mask].sum() > 0:
            node["children"][v] = _id3(X[mask], y[mask], w[mask], levels, n_classes,
                                       used + (j,), j, None if depth_left is None else depth_left - 1)
    return node


def _route(tree, row):
    while "var" in tree and row[tree["var"]] in tree["children"]:
        tree = tree["children"][row[tree["var"]]]
    return tree


def _random_table(seed, p=4, n=300):
    rng = np.random.default_rng(seed)
    levels = rng.integers(2, 4, size=p)
    X = np.column_stack([rng.integers(0, k, size=n) for k in levels])
    logits = X @ rng.normal(size=p) + rng.normal(size=n)
    y = (logits > np.median(logits)).astype(int) + (rng.random(n) < 0.2)
    return DiscreteTable.from_codes(X, y, x_labels=tuple(tuple(range(k)) for k in levels)), levels


@pytest.mark.parametrize("seed,max_depth", [(0, None), (1, None), (2, 2), (3, 1)])
def test_greedy_tree_matches_recursive_id3(seed, max_depth):
    table, levels = _random_table(seed)
    tree = _id3(table.X, table.y, table.weight, levels, table.n_classes,
                depth_left=max_depth)
    grid = np.stack(np.meshgrid(*[np.arange(k) for k in levels], indexing="ij"), -1)
    grid = grid.reshape(-1, len(levels))            # every code combination, seen or not
    loc = forest_local_importance(table, grid, n_estimators=3, max_features=len(levels),
                                  max_depth=max_depth, random_state=seed)
    for i, row in enumerate(grid):
        leaf = _route(tree, row)
        expected = np.zeros(len(levels), int)
        if leaf["parent"] >= 0:
            expected[leaf["parent"]] = 3
        np.testing.assert_array_equal(loc.counts[i], expected)
        np.testing.assert_allclose(loc.parameters["proba"][i], leaf["dist"] / leaf["dist"].sum())


def test_routing_does_not_change_the_trees():
    table = get_problem("led:irrelevant=3").exact_table()
    kw = dict(n_estimators=130, max_features=2, max_depth=None, bootstrap=True,
              k_semantics="sklearn", criterion="gini", random_state=7, n_samples=50)
    plain = grow_forest(table, **kw)
    m, p = table.n_rows, table.n_features
    router = _Router(table.X, table.n_levels, np.zeros((1, m * p), np.int64),
                     np.zeros((m, table.n_classes)))
    routed = grow_forest_routed(table, router, **kw)
    np.testing.assert_array_equal(plain.per_tree, routed.per_tree)


def test_stumps_count_the_root_variable_of_every_tree():
    # Depth 1: every row's leaf hangs below the root, so LVI(j, i) is the number of
    # trees whose root splits on j, read from each tree's only non-zero importance.
    table = get_problem("led").exact_table()
    forest = grow_forest(table, n_estimators=200, max_features=1, max_depth=1, random_state=3)
    assert np.all((forest.per_tree > 0).sum(axis=1) == 1)
    roots = np.bincount(forest.per_tree.argmax(axis=1), minlength=7)
    loc = forest_local_importance(table, n_estimators=200, max_features=1, max_depth=1,
                                  random_state=3)
    assert np.all(loc.counts == roots)


def test_levels_above_the_leaf_on_xor():
    # Totally randomized trees on XOR 2+1 (exact): a branch is pure once X1 and X2 are
    # both used, so the leaf's parent is X1 or X2.
    table = get_problem("xor:relevant=2,irrelevant=1").exact_table()
    loc = forest_local_importance(table, n_estimators=300, max_features=1, max_level=2,
                                  random_state=0)
    assert np.all(loc.counts[:, 2] == 0)
    assert np.all(loc.counts.sum(axis=1) == 300)
    level2 = loc.counts_by_level[1]
    assert np.all(level2.sum(axis=1) == 300)        # X1, X2 are never both at the root
    # Along a row's path the variables come in a uniform random order and the leaf
    # follows the second of X1, X2; the node above the leaf's parent is X3 exactly
    # when X3 comes second: 2 of the 6 orders.
    share_noise = level2[:, 2].sum() / level2.sum()
    assert abs(share_noise - 1 / 3) < 4 * np.sqrt(2 / 9 / 300)


def test_xor_interactions_pair_x1_x2():
    prob = get_problem("xor:relevant=2,irrelevant=3")
    df = prob.sample(1000, random_state=0)
    table = DiscreteTable.from_codes(df[list(prob.variables)].to_numpy(), df["Y"].to_numpy(),
                                     variables=prob.variables)
    loc = forest_local_importance(table, df[list(prob.variables)].to_numpy(),
                                  n_estimators=100, max_features=1, random_state=0)
    it = interactions(loc)
    joint = it.to_matrix("joint")
    off = joint.where(~np.eye(len(joint), dtype=bool)).stack().idxmax()
    assert set(off) == {"X1", "X2"}
    noise = [v for v in ("X3", "X4", "X5") if v in joint.index]
    assert all(joint.loc[v].sum() < 0.05 for v in noise)


def test_led_partial_importance_digit_2_ranks_x6_first_among_off_segments():
    prob = get_problem("led")
    df = prob.sample(2000, random_state=1)
    X = df[list(prob.variables)].to_numpy()
    table = DiscreteTable.from_codes(X, df["Y"].to_numpy(), variables=prob.variables)
    loc = forest_local_importance(table, X, n_estimators=100, max_features=1, random_state=0)
    part = partial_importance(loc, label=2).to_frame()
    two = table.X[table.y == 2][0]                       # the segments of digit 2
    off = {f"X{j + 1}" for j in range(7) if two[j] == 0}
    assert off == {"X2", "X6"}
    ranked = [v for v in part["variable"] if v in off]
    assert ranked[0] == "X6"


def test_prediction_is_the_majority_of_leaf_distributions():
    table = get_problem("led").exact_table()
    loc = forest_local_importance(table, n_estimators=100, max_features=7, random_state=0)
    # LED without noise is deterministic: fully grown trees predict the digit of each row.
    assert list(loc.prediction) == list(table.y)
    assert loc.classes == tuple(table.y_labels)


@pytest.mark.parametrize("X,words", [
    (np.zeros((3, 2), int), "columns"),
    (np.array([[0, 1, -1, 0, 0, 0, 0]]), "negative"),
    (np.full((2, 7), 0.5), "integer codes"),
    (np.zeros((0, 7), int), "at least one row"),
])
def test_bad_rows_get_a_sentence(X, words):
    table = get_problem("led").exact_table()
    with pytest.raises(ValueError, match=words):
        forest_local_importance(table, X, n_estimators=2)


def test_bad_max_level_and_table():
    table = get_problem("led").exact_table()
    with pytest.raises(ValueError, match="max_level"):
        forest_local_importance(table, max_level=0)
    with pytest.raises(ValueError, match="DiscreteTable"):
        forest_local_importance(np.zeros((3, 3)))


def test_unseen_codes_stop_at_the_node():
    # A code above the table's levels has no branch anywhere: the row stops at the root
    # and counts no variable; its prediction is the root's class distribution.
    table = get_problem("xor:relevant=2").exact_table()
    loc = forest_local_importance(table, np.array([[5, 5]]), n_estimators=10, max_features=1)
    assert loc.counts.sum() == 0
    np.testing.assert_allclose(loc.parameters["proba"][0], [0.5, 0.5])


@pytest.mark.parametrize("n_jobs", [1, 2, 3, -1])
def test_local_importance_is_the_same_for_every_n_jobs(n_jobs):
    # 200 trees are four chunks (64, 64, 64, 8): n_jobs 2 and 3 group them differently
    # over processes, and every grouping must give the serial numbers bit for bit.
    table = get_problem("led:irrelevant=3").exact_table()
    kw = dict(n_estimators=200, max_features=2, bootstrap=True, n_samples=60, max_level=2,
              k_semantics="sklearn", random_state=11)
    serial = forest_local_importance(table, **kw)
    loc = forest_local_importance(table, **kw, n_jobs=n_jobs)
    np.testing.assert_array_equal(loc.counts_by_level, serial.counts_by_level)
    np.testing.assert_array_equal(loc.parameters["proba"], serial.parameters["proba"])
    np.testing.assert_array_equal(loc.prediction, serial.prediction)
    assert loc.counts.sum() > 0


def test_stumps_grown_in_two_processes_count_the_root_variable_of_every_tree():
    # The oracle of test_stumps_count_the_root_variable_of_every_tree, with the local forest
    # grown and routed by two processes: every row still counts each tree's root once.
    table = get_problem("led").exact_table()
    forest = grow_forest(table, n_estimators=300, max_features=1, max_depth=1, random_state=5)
    roots = np.bincount(forest.per_tree.argmax(axis=1), minlength=7)
    loc = forest_local_importance(table, n_estimators=300, max_features=1, max_depth=1,
                                  random_state=5, n_jobs=2)
    assert np.all(loc.counts == roots)
    np.testing.assert_allclose(loc.parameters["proba"].sum(axis=1), 1.0)
