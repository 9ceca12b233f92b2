"""Exact infinite forests of scikit-learn's binary trees (issue #15).

Expected values come from the brute-force oracle (``tests/binary_oracle.py``),
from theory (Theorem 2 analogue, the multiway exact method on 0/1 inputs,
the XOR tree), or from scikit-learn's own forests.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from binary_oracle import brute_force_mdi
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

from varimp_core.__main__ import main
from varimp_core.api import compute_importances, load_data
from varimp_core.exact.recursion import exact_importances
from varimp_core.exact.binary import (MAX_BINARY_NODES, binary_refusal_sentence,
                                      estimate_binary_nodes,
                                      exact_binary_depth_profile, exact_et_importances,
                                      exact_rf_importances, plugin_information,
                                      split_win_probabilities)
from varimp_core.exact.splitting import win_probability_table
from varimp_core.data.table import DiscreteTable

METHODS = {"rf": exact_rf_importances, "et": exact_et_importances}


def _random_table(seed):
    """Tiny table with tied values, duplicate rows and sometimes weights."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(3, 9)), int(rng.integers(1, 4))
    levels = np.array([0.0, 0.5, 2.0, 3.25])
    X = levels[rng.integers(0, 4, size=(n, p))]
    X[-1] = X[0]                                  # a duplicate input
    y = rng.integers(0, 2 + seed % 2, size=n)
    sw = rng.choice([0.0, 0.5, 1.0, 3.0], size=n) if seed % 3 == 2 else None
    if sw is not None and not (sw > 0).any():
        sw[0] = 1.0
    return X, y, sw


# -- the brute-force oracle ------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("kind", ["rf", "et"])
def test_matches_brute_force_every_k_depth_criterion(seed, kind):
    X, y, sw = _random_table(seed)
    p = X.shape[1]
    leaf = 2 if seed % 4 == 3 else 1
    for K in range(1, p + 1):
        for depth in (None, 1, 2):
            for criterion in ("entropy", "gini"):
                want = brute_force_mdi(X, y, kind=kind, max_features=K, max_depth=depth,
                                       min_samples_leaf=leaf, criterion=criterion,
                                       sample_weight=sw)
                got, _ = exact_binary_depth_profile(
                    X, y, method=f"exact-{kind}", max_features=K, max_depth=depth,
                    min_samples_leaf=leaf, criterion=criterion, sample_weight=sw,
                    n_cols=want.shape[1])
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12,
                                           err_msg=f"K={K} depth={depth} {criterion}")


def test_repeated_rows_equal_weights():
    X, y, _ = _random_table(4)
    idx = np.array([0, 0, 1, 2, 2, 2] + list(range(3, X.shape[0])))
    counts = np.bincount(idx, minlength=X.shape[0]).astype(float)
    for kind in ("rf", "et"):
        a = METHODS[kind](X[idx], y[idx], max_features=1)
        b = METHODS[kind](X, y, max_features=1, sample_weight=counts)
        want = brute_force_mdi(X[idx], y[idx], kind=kind, max_features=1).sum(axis=1)
        np.testing.assert_allclose(a.importances, want, atol=1e-12)
        np.testing.assert_allclose(b.importances, want, atol=1e-12)


def test_depth_profile_columns_sum_to_depth_limited_result():
    X, y, _ = _random_table(7)
    for kind in ("rf", "et"):
        full = METHODS[kind](X, y, max_features=1)
        for q in range(1, X.shape[1]):
            lim = METHODS[kind](X, y, max_features=1, max_depth=q)
            np.testing.assert_allclose(full.by_degree[:, :q].sum(axis=1), lim.importances,
                                       atol=1e-13)


def test_win_law_with_point_masses_is_the_multiway_sklearn_table():
    # best splitter: one score per feature; compare with splitting.win_probability_table
    rng = np.random.default_rng(0)
    for _ in range(30):
        m = int(rng.integers(1, 5))
        p = m + int(rng.integers(0, 3))
        K = int(rng.integers(1, p + 1))
        s = rng.integers(0, 3, size=m).astype(float)
        got = split_win_probabilities([np.array([v]) for v in s], [np.ones(1)] * m, p, K)
        table = win_probability_table(m, K, "sklearn", p)
        for j in range(m):
            a = int(np.sum(s > s[j]))
            t = int(np.sum(s == s[j])) - 1
            assert got[j][0] == pytest.approx(table[a, t], abs=1e-14)


# -- theory ----------------------------------------------------------------

def _entropy(counts):
    q = np.asarray(counts, float)
    q = q[q > 0] / q.sum()
    return float(-(q * np.log2(q)).sum())


@pytest.mark.parametrize("kind", ["rf", "et"])
def test_theorem2_fully_grown_trees_sum_to_information(kind):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(14, 2)).round(3)          # distinct inputs: I(X;Y) = H(Y)
    y = rng.integers(0, 3, size=14)
    h = _entropy(np.bincount(y))
    gini = 1 - float(((np.bincount(y) / y.size) ** 2).sum())
    for K in (1, 2):
        r = METHODS[kind](X, y, max_features=K)
        assert r.total == pytest.approx(h, abs=1e-12)
        assert r.information == pytest.approx(h, abs=1e-12)
        g = METHODS[kind](X, y, max_features=K, criterion="gini")
        assert g.total == pytest.approx(gini, abs=1e-12)
        assert g.information is None
    assert plugin_information(X, y, criterion="gini") == pytest.approx(gini, abs=1e-12)


def test_theorem2_with_conflicting_duplicates_is_plugin_information():
    X = np.array([[0.0, 1], [0, 1], [1, 0], [2, 2], [2, 2], [3, 1]])
    y = np.array([0, 1, 1, 0, 0, 1])
    # H(Y) = 1; H(Y|X) = (2/6)*1 (the group {0,1} at x=(0,1)); I = 2/3
    for kind in ("rf", "et"):
        r = METHODS[kind](X, y, max_features=1)
        assert r.total == pytest.approx(2 / 3, abs=1e-12)
        assert r.information == pytest.approx(2 / 3, abs=1e-12)


def test_zero_improvement_split_is_made():
    # XOR on 4 points: every root split has zero improvement, scikit-learn still splits
    X = np.array([[0.0, 0], [0, 1], [1, 0], [1, 1]])
    y = np.array([0, 1, 1, 0])
    for kind in ("rf", "et"):
        for K in (1, 2):
            r = METHODS[kind](X, y, max_features=K)
            np.testing.assert_allclose(r.by_degree, [[0, 0.5], [0, 0.5]], atol=1e-15)
            assert METHODS[kind](X, y, max_features=K, max_depth=1).total == 0.0
    f = RandomForestClassifier(n_estimators=20, bootstrap=False, max_features=2,
                               criterion="entropy", random_state=0).fit(X, y)
    assert all(t.tree_.max_depth == 2 for t in f.estimators_)


@pytest.mark.parametrize("kind", ["rf", "et"])
def test_binary_inputs_equal_the_multiway_exact_method(kind):
    rng = np.random.default_rng(11)
    Xc = rng.integers(0, 2, size=(40, 3))
    y = (Xc[:, 0] ^ Xc[:, 1]) | (rng.random(40) < 0.2).astype(int)
    keys, inv, cnt = np.unique(np.c_[Xc, y], axis=0, return_inverse=True, return_counts=True)
    table = DiscreteTable(X=keys[:, :3], y=keys[:, 3], weight=cnt.astype(float),
                          variables=("a", "b", "c"))
    for K in (1, 2, 3):
        for depth in (None, 1, 2):
            for criterion in ("entropy", "gini"):
                want = exact_importances(table, max_features=K, max_depth=depth,
                                         k_semantics="sklearn", criterion=criterion)
                got = METHODS[kind](Xc.astype(float), y, max_features=K, max_depth=depth,
                                    criterion=criterion)
                np.testing.assert_allclose(got.importances, want.importances, atol=1e-12)
                np.testing.assert_allclose(got.by_degree, want.by_degree, atol=1e-12)


# -- scikit-learn ----------------------------------------------------------

def _sklearn_mdi(forest, p, depth=None):
    """Per-tree unnormalised MDI from tree_, counting nodes of depth < ``depth``."""
    per = np.zeros((len(forest.estimators_), p))
    for k, est in enumerate(forest.estimators_):
        t = est.tree_
        left, right = t.children_left, t.children_right
        w, imp = t.weighted_n_node_samples, t.impurity
        node_depth = np.zeros(t.node_count, dtype=int)
        for i in range(t.node_count):          # parents come before children
            if left[i] >= 0:
                node_depth[left[i]] = node_depth[right[i]] = node_depth[i] + 1
        for i in np.flatnonzero(left >= 0):
            if depth is None or node_depth[i] < depth:
                per[k, t.feature[i]] += (w[i] * imp[i] - w[left[i]] * imp[left[i]]
                                         - w[right[i]] * imp[right[i]]) / w[0]
    return per.mean(axis=0), per.std(axis=0, ddof=1) / math.sqrt(per.shape[0])


def _sk_table():
    rng = np.random.default_rng(3)
    X = np.round(rng.normal(size=(10, 3)), 1)
    X[:, 2] = rng.integers(0, 3, size=10)
    X[9] = X[0]
    y = (X[:, 0] + X[:, 1] + rng.normal(size=10) > 0).astype(int)
    return X, y


@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize("criterion", ["entropy", "gini"])
@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("kind", ["rf", "et"])
def test_agrees_with_sklearn_forest_of_10000_trees(kind, K, criterion):
    X, y = _sk_table()
    cls = RandomForestClassifier if kind == "rf" else ExtraTreesClassifier
    forest = cls(n_estimators=10_000, max_features=K, bootstrap=False, criterion=criterion,
                 random_state=K, n_jobs=1).fit(X, y)
    # a depth-D tree is the fully grown tree cut at depth D, in law: one fit serves both
    for depth in (None, 2):
        mean, sem = _sklearn_mdi(forest, 3, depth)
        exact = METHODS[kind](X, y, max_features=K, max_depth=depth, criterion=criterion)
        assert np.all(np.abs(exact.importances - mean) <= 4.5 * sem + 1e-9), (
            depth, exact.importances, mean, sem)


@pytest.mark.slow
def test_agrees_with_sklearn_max_depth_min_samples_leaf_and_tied_features():
    X, y = _sk_table()
    X = np.c_[X[:, :2], X[:, 0]]               # a copy of x1: tied scores at every node
    for kind, cls in (("rf", RandomForestClassifier), ("et", ExtraTreesClassifier)):
        forest = cls(n_estimators=10_000, max_features=2, bootstrap=False, max_depth=2,
                     min_samples_leaf=2, criterion="entropy", random_state=1,
                     n_jobs=1).fit(X, y)
        mean, sem = _sklearn_mdi(forest, 3)
        exact = METHODS[kind](X, y, max_features=2, max_depth=2, min_samples_leaf=2)
        assert np.all(np.abs(exact.importances - mean) <= 4.5 * sem + 1e-9), (
            kind, exact.importances, mean, sem)
    # best splitter, K = p, tied copies: the first drawn wins, so they share equally
    r = exact_rf_importances(X, y, max_features=3)
    assert r.importances[0] == pytest.approx(r.importances[2], abs=1e-14)


# -- limits, bad input, integration -----------------------------------------

def test_estimate_counts_et_nodes_and_refuses_with_a_sentence():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 2))
    y = rng.integers(0, 2, size=25)
    _, info = exact_binary_depth_profile(X, y, method="exact-et", max_features=1)
    est = estimate_binary_nodes(X, y, method="exact-et", max_features=1)
    assert 0.8 < est / info["n_nodes"] < 1.25
    big = rng.normal(size=(200, 3))
    big_y = rng.integers(0, 2, size=200)
    # so far past the limit that the least the probes could find (3 hits among all of them)
    # passes it: refused without drawing a box, and the sentence says "at least" that floor,
    # which no sampled estimate is below
    with pytest.raises(ValueError, match=r"would need at least (\S+) distinct nodes .* limit "
                                         r"of 300,000") as refused:
        exact_et_importances(big, big_y, max_features=1)
    said = float(re.search(r"at least (\S+) distinct", str(refused.value)).group(1))
    assert MAX_BINARY_NODES < said <= estimate_binary_nodes(big, big_y, max_features=1) * 1.001
    assert MAX_BINARY_NODES == 300_000


def _alternating(n):
    """x = 0..n-1, y = x mod 2: every run of two or more consecutive rows holds both classes."""
    return np.arange(n, dtype=float).reshape(-1, 1), np.arange(n) % 2


@pytest.mark.parametrize("method, nodes, cap, roomy", [
    # exact-et, K=1: every interval of >= 2 of the 30 rows is a tight, impure node: C(30, 2)
    ("exact-et", math.comb(30, 2), 400, 500),
    # exact-rf: one deterministic tree, split down to single rows: 30 leaves, 29 split nodes;
    # its estimate is min(2N p^(p-K), ET estimate) = 60
    ("exact-rf", 29, 20, 100),
])
def test_both_methods_refuse_before_any_work(method, nodes, cap, roomy, monkeypatch):
    X, y = _alternating(30)
    _, info = exact_binary_depth_profile(X, y, method=method, max_features=1)
    assert info["n_nodes"] == nodes > cap

    def no_work(*args, **kwargs):
        raise AssertionError("the exact recursion was started")

    monkeypatch.setattr("varimp_core.exact.binary.BinarySolver", no_work)
    est = estimate_binary_nodes(X, y, method=method, max_features=1)
    assert est > cap
    want = (f"The exact {'Extra-Trees' if method == 'exact-et' else 'RandomForest'} value "
            f"({method}) would need about {est:,.3g} distinct nodes on these 30 rows and 1 "
            f"input, beyond the limit of {cap:,}; ")
    with pytest.raises(ValueError) as refused:
        exact_binary_depth_profile(X, y, method=method, max_features=1, max_nodes=cap)
    assert str(refused.value).startswith(want) and str(refused.value).endswith(".")
    assert binary_refusal_sentence(X, y, method=method, max_features=1,
                                   max_nodes=cap) == str(refused.value)
    assert est < roomy
    assert binary_refusal_sentence(X, y, method=method, max_features=1, max_nodes=roomy) is None


def test_rf_recursion_stops_with_a_sentence_when_the_guide_underestimates():
    """exact-rf's estimate is a guide; past max_nodes the recursion itself stops."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2)).round(4)
    y = (X.sum(axis=1) + rng.normal(size=200) > 0).astype(int)
    assert estimate_binary_nodes(X, y, method="exact-rf", max_features=1) < 2000
    with pytest.raises(ValueError, match=r"\(exact-rf\) needs more than 2,000 distinct nodes"):
        exact_binary_depth_profile(X, y, method="exact-rf", max_features=1, max_nodes=2000)


@pytest.mark.parametrize("kwargs, match", [
    ({"X": [[1.0], [np.nan]]}, "NaN"),
    ({"X": [1.0, 2.0]}, "2-D"),
    ({"y": [0, 1, 0]}, "one class label per row"),
    ({"max_features": 0}, "from 1 to"),
    ({"max_features": 3}, "from 1 to"),
    ({"max_features": 1.5}, "whole number"),
    ({"max_depth": 0}, "max_depth"),
    ({"min_samples_leaf": 0}, "min_samples_leaf"),
    ({"criterion": "mse"}, "criterion"),
    ({"sample_weight": [1.0, -1.0]}, "non-negative"),
    ({"sample_weight": [0.0, 0.0]}, "zero weight"),
    ({"X": [["a"], ["b"]]}, "numeric"),
    ({"X": [[0.0], [1e-9]]}, "closer than"),
])
def test_bad_input_gets_a_sentence(kwargs, match):
    args = {"X": [[0.0], [1.0]], "y": [0, 1], "max_features": 1, **kwargs}
    with pytest.raises(ValueError, match=match) as info:
        exact_rf_importances(args.pop("X"), args.pop("y"), **args)
    assert str(info.value).endswith(".")


def test_compute_importances_and_cli():
    data = load_data(problem="xor:relevant=2,irrelevant=1", n_samples=30, random_state=1)
    r = compute_importances(data, method="exact-et", max_features=2)
    direct = exact_et_importances(data.X_numeric, data.y, max_features=2)
    np.testing.assert_allclose(r.importances, direct.importances, atol=1e-15)
    assert r.method == "exact-et" and r.variables == data.table.variables
    exact = load_data(problem="xor:relevant=2,irrelevant=1")      # exact distribution
    r = compute_importances(exact, method="exact-rf", max_features=1)
    assert r.total == pytest.approx(1.0, abs=1e-12)
    # a numeric target is taken with the variance (issue #24); this one is too large
    with pytest.raises(ValueError, match="distinct nodes on these 442 rows"):
        compute_importances(load_data(problem="diabetes"), method="exact-rf")


@pytest.mark.parametrize("kind", ["rf", "et"])
def test_text_column_is_seen_as_sklearn_rf_sees_it(kind):
    """A text input of three levels enters as sklearn-rf gets it: its level's out-of-fold
    target statistic computed on the codes (labels in sorted order, 0, 1, 2)."""
    from varimp_core.forests.sklearn_mdi import encode_nominal

    import pandas as pd

    colour = ["red", "blue", "green", "red", "blue", "green", "blue", "red"]
    size = [1.5, 0.25, 3.0, 2.25, 0.75, 1.125, 2.875, 0.5]    # exact in float32, as sklearn reads
    y = ["a", "b", "a", "a", "b", "b", "a", "b"]
    data = load_data(data=pd.DataFrame({"colour": colour, "size": size, "y": y}), target="y")
    codes = [2.0, 0.0, 1.0, 2.0, 0.0, 1.0, 0.0, 2.0]         # blue = 0, green = 1, red = 2
    X = encode_nominal(np.column_stack([codes, size]), data.y, [0])
    X = X.astype(np.float32).astype(float)      # as scikit-learn reads it
    assert len(np.unique(X[:, 0])) > 3          # out of fold: a level's value varies by fold
    for K in (1, 2):
        want = brute_force_mdi(X, y, kind=kind, max_features=K).sum(axis=1)
        got = compute_importances(data, method=f"exact-{kind}", max_features=K)
        assert got.variables == ("colour", "size")
        np.testing.assert_allclose(got.importances, want, rtol=0, atol=1e-12)


def test_cli_method_and_ignored_n_estimators(capsys):
    rc = main(["importances", "--problem", "xor:relevant=2,irrelevant=1", "--method",
               "exact-rf", "--max-features", "2", "--n-estimators", "7", "--format", "json"])
    out = capsys.readouterr()
    assert rc == 0 and "ignored" in out.err
    assert '"method": "exact-rf"' in out.out
    rc = main(["importances", "--problem", "xor:relevant=2,irrelevant=1", "--method",
               "exact-et"])
    out = capsys.readouterr()
    assert rc == 0 and out.err == ""


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_k1_recursion_is_the_batched_solver(seed):
    """exact-et at K = 1, fully grown, on at most 64 distinct rows runs the compiled
    recursion: the same distinct nodes and the same profile by depth as the batched solver
    (weights of an exact distribution, min_samples_leaf, entropy and Gini, three classes)."""
    from varimp_core.exact.binary import BinarySolver, PreparedBinary, _compiled_k1
    from varimp_core.exact.binary_kernel import et_k1_profile

    rng = np.random.default_rng(seed)
    N, p, L, crit = [(20, 2, 1, "entropy"), (30, 3, 1, "gini"), (40, 2, 2, "entropy"),
                     (25, 3, 1, "entropy"), (64, 2, 3, "gini"), (18, 4, 1, "entropy")][seed]
    X = rng.normal(size=(N, p)).round(1 if seed == 3 else 2)       # seed 3: tied values
    y = rng.integers(0, 3 if seed % 2 else 2, size=N)
    w = rng.uniform(0.5, 2.0, size=N) if seed in (2, 5) else None
    d = PreparedBinary(X, y, w, crit)
    assert _compiled_k1(d, "exact-et", 1, None)
    solver = BinarySolver(d, "exact-et", 1, None, L, p, 10 ** 7)
    expected = solver.solve()
    got, n_nodes = et_k1_profile(d, solver.draw[:, 0], L, p, 10 ** 7)
    assert n_nodes == solver.n_split_nodes > 0
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    # a table of 4 slots to start with: rebuilt again and again as it fills, the same
    small, n_small = et_k1_profile(d, solver.draw[:, 0], L, p, 10 ** 7, table_bits=2)
    assert n_small == n_nodes
    np.testing.assert_allclose(small, expected, rtol=1e-12, atol=1e-14)
    # past max_nodes it stops with -1, as the solver refuses
    assert et_k1_profile(d, solver.draw[:, 0], L, p, n_nodes - 1)[1] == -1
    assert not _compiled_k1(d, "exact-et", 2, None) and not _compiled_k1(d, "exact-rf", 1, None)
    assert not _compiled_k1(d, "exact-et", 1, 3)


def _normal_table(n, p, seed=0):
    """n rows of p rounded normal inputs, y = 1 where their sum plus noise is positive."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)).round(4)
    return X, (X.sum(axis=1) + rng.normal(size=n) > 0).astype(int)


def test_the_compiled_run_takes_fully_grown_trees_past_the_batched_limit(monkeypatch):
    """Issue #30: exact-et at K = 1, fully grown, on at most 64 distinct rows runs the compiled
    recursion, which accepts up to MAX_COMPILED_NODES; every other setting keeps 300,000.
    44 rows of 3 inputs: more than 300,000 nodes, estimated and counted."""
    from varimp_core.exact.binary import (MAX_COMPILED_NODES, binary_size_hint, node_limit,
                                          sure_depth)

    assert (MAX_BINARY_NODES, MAX_COMPILED_NODES) == (300_000, 2_000_000)
    X, y = _normal_table(44, 3)
    est = estimate_binary_nodes(X, y, method="exact-et", max_features=1)
    assert MAX_BINARY_NODES < est < MAX_COMPILED_NODES
    prof, info = exact_binary_depth_profile(X, y, method="exact-et", max_features=1)
    assert info["n_nodes"] > MAX_BINARY_NODES           # counted by the recursion itself
    # fully grown trees on distinct rows take all of the plug-in I(X; Y) (Louppe's Theorem 1
    # on the sample): an independent check of the sum, here over 365,000 nodes
    assert prof.sum() == pytest.approx(plugin_information(X, y), rel=1e-12)
    assert (prof > 0).any(axis=1).all()
    # the limits each run gets
    assert node_limit("exact-et", 1, None, "gini", 64) == MAX_COMPILED_NODES
    for other in [("exact-et", 2, None, "entropy", 44), ("exact-et", 1, 3, "entropy", 44),
                  ("exact-et", 1, None, "entropy", 65), ("exact-rf", 1, None, "entropy", 44),
                  ("exact-et", 1, None, "squared_error", 44)]:
        assert node_limit(*other) == MAX_BINARY_NODES, other
    # K = 2 runs the batched solver: refused, saying that K = 1 fits, with the depth sure to fit
    depth = sure_depth([44, 44, 44])
    assert depth == 3       # b = 2 * 3 * 43 = 258: 1 + 258 + 258^2 <= 300,000 < ... + 258^3
    with pytest.raises(ValueError) as refused:
        exact_binary_depth_profile(X, y, method="exact-et", max_features=2)
    text = str(refused.value)
    assert "beyond the limit of 300,000; use K = 1 (max_features=1), which fits fully grown " \
           "here (its compiled run takes up to 2,000,000)" in text, text
    assert f"a max depth of at most {depth} (sure to fit here)" in text
    assert binary_refusal_sentence(X, y, method="exact-et", max_features=2) == text
    assert binary_refusal_sentence(X, y, method="exact-et", max_features=1) is None
    # an explicit limit is every run's: K = 1 refused at 300,000, without "K = 1 fits"
    small = binary_refusal_sentence(X, y, method="exact-et", max_features=1,
                                    max_nodes=MAX_BINARY_NODES)
    assert "limit of 300,000" in small and "K = 1" not in small
    assert binary_size_hint(X, y) == {"full": False, "full_k1": True, "at_least": False,
                                      "nodes": pytest.approx(est, rel=0.5), "depth": depth,
                                      "rows": 44, "inputs": 3}
    # the depth the sentence names runs, through the batched solver
    _, at_depth = exact_binary_depth_profile(X, y, method="exact-et", max_features=2,
                                             max_depth=depth)
    assert 0 < at_depth["n_nodes"] <= MAX_BINARY_NODES
    # past the compiled limit (64 rows of 3 inputs: about 4 million nodes), refused before
    # any work, naming that limit and the depth of the batched one
    big_X, big_y = _normal_table(64, 3)
    assert estimate_binary_nodes(big_X, big_y, method="exact-et",
                                 max_features=1) > MAX_COMPILED_NODES

    def no_work(*args, **kwargs):
        raise AssertionError("the exact recursion was started")

    monkeypatch.setattr("varimp_core.exact.binary.BinarySolver", no_work)
    with pytest.raises(ValueError, match=r"beyond the limit of 2,000,000; use a max depth of at "
                                         rf"most {sure_depth([64] * 3)} \(sure"):
        exact_binary_depth_profile(big_X, big_y, method="exact-et", max_features=1)
    assert binary_size_hint(big_X, big_y)["full_k1"] is False


def test_the_compiled_run_stops_past_its_limit_with_the_sentence(monkeypatch):
    """When the estimate says it fits but the recursion finds more nodes, the compiled run
    stops with the batched solver's sentence, naming the depth that fits below 300,000."""
    import varimp_core.exact.binary as binary

    X, y = _normal_table(44, 3)
    monkeypatch.setattr(binary, "MAX_COMPILED_NODES", 100_000)
    monkeypatch.setattr(binary, "_estimate", lambda *a, **k: 50_000.0)
    with pytest.raises(ValueError, match=r"needs more than 100,000 distinct nodes on this table "
                                         r"\(about 5e\+04 were estimated\); use a max depth of "
                                         r"at most 3 \(sure to fit here\)"):
        exact_binary_depth_profile(X, y, method="exact-et", max_features=1)
