"""Exact mean and covariance of one random tree's MDI (issue 29), against brute force.

Expected values come from ``tree_law_oracle`` (every tree enumerated with its
probability, no varimp_core code), from hand computations, and from samples
of trees; never from the code under test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from _tables import led_table, rows_of, with_irrelevant, xor_table
from tree_law_oracle import binary_law, moments, multiway_law
from varimp_core.api import compute_importances
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.moments import ImportanceMoments, exact_moments, moments_from_trees


def _random_table(seed):
    rng = np.random.default_rng(seed)
    p = int(rng.integers(2, 4))
    n = int(rng.integers(4, 9))
    X = rng.integers(0, 3, size=(n, p))
    y = rng.integers(0, 2 + seed % 2, size=n)
    w = rng.choice([1.0, 2.0, 3.0], size=n)
    return DiscreteTable.from_codes(X, y, weight=w)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_multiway_moments_equal_the_enumerated_law(seed, semantics):
    table = _random_table(seed)
    p = table.n_features
    rows = rows_of(table)
    for K in range(1, p + 1):
        for depth in (None, 1, 2):
            law = multiway_law(rows, p, K, semantics=semantics, max_depth=depth)
            assert sum(pr for pr, _ in law) == pytest.approx(1.0, abs=1e-12)
            mean, cov = moments(law)
            got = exact_moments(table, max_features=K, max_depth=depth, k_semantics=semantics)
            np.testing.assert_allclose(got.mean, mean, atol=1e-12, err_msg=f"K={K} D={depth}")
            np.testing.assert_allclose(got.covariance, cov, atol=1e-12,
                                       err_msg=f"K={K} D={depth}")


@pytest.mark.parametrize("seed", range(6))
def test_k1_cell_grid_equals_the_enumerated_law_with_more_levels(seed):
    # K = 1 (id3, entropy) takes the cell-grid pass: against the brute-force law on
    # tables with 4 levels, empty cells and 3 classes.
    rng = np.random.default_rng(100 + seed)
    p = 3
    X = rng.integers(0, 4, size=(7, p))
    y = rng.integers(0, 3, size=7)
    table = DiscreteTable.from_codes(X, y, weight=rng.choice([1.0, 2.0], size=7))
    for depth in (None, 1, 2):
        mean, cov = moments(multiway_law(rows_of(table), p, 1, max_depth=depth))
        got = exact_moments(table, max_features=1, max_depth=depth)
        np.testing.assert_allclose(got.mean, mean, atol=1e-12)
        np.testing.assert_allclose(got.covariance, cov, atol=1e-12)


@pytest.mark.parametrize("depth", [None, 1, 2])
def test_k1_cell_grid_with_inputs_that_never_gain(depth):
    # The grid pass carries only the inputs that gain at some cell; splits on the others
    # still move the tree.  XOR of 2 bits with 2 independent fair bits appended (their
    # gain is exactly 0 at every cell), and a random table with 3 levels and 2 such bits,
    # against the brute-force law of every tree (oracle written apart): the irrelevant
    # inputs get 0 mean and 0 rows and columns of the covariance (Louppe et al. 2013,
    # Theorem 3: every K = 1 tree gives them 0).
    rng = np.random.default_rng(7)
    tiny = DiscreteTable.from_codes(rng.integers(0, 3, size=(6, 2)), rng.integers(0, 2, size=6),
                                    weight=rng.choice([1.0, 2.0], size=6))
    # (XOR's probabilities are dyadic, so its irrelevant gains are exactly 0 and take the
    # short path; the random table's are 0 up to rounding and take the full one.)
    for table, exact_zero in ((with_irrelevant(xor_table(2), 2), True),
                              (with_irrelevant(tiny, 2), False)):
        p = table.n_features
        mean, cov = moments(multiway_law(rows_of(table), p, 1, max_depth=depth))
        got = exact_moments(table, max_features=1, max_depth=depth)
        np.testing.assert_allclose(got.mean, mean, atol=1e-12)
        np.testing.assert_allclose(got.covariance, cov, atol=1e-12)
        np.testing.assert_allclose(got.mean[2:], 0, atol=0 if exact_zero else 1e-12)
        np.testing.assert_allclose(got.covariance[2:], 0, atol=0 if exact_zero else 1e-12)
        if depth != 1:   # one split of XOR gains nothing; deeper trees vary
            assert got.covariance[:2, :2].any()


@pytest.mark.parametrize("criterion", ["entropy", "gini"])
def test_k1_cell_grid_equals_the_lattice_pass(criterion):
    # The grid pass (numba, one sweep over cells) against the lattice recursion,
    # an independent implementation, on LED (7 inputs) at every depth, gini included.
    from varimp_core.exact.lattice import build_lattice
    from varimp_core.exact.moments import _k1_dense_pass, _multiway_pass
    led = led_table()
    for depth in range(1, 8):
        m1, s1 = _k1_dense_pass(led, criterion, depth)
        m2, s2 = _multiway_pass(build_lattice(led, criterion=criterion, max_depth=depth),
                                7, 1, depth, "id3")
        np.testing.assert_allclose(m1, m2, atol=1e-12)
        np.testing.assert_allclose(s1, s2, atol=1e-12)


@pytest.mark.parametrize("K,depth,semantics", [(1, None, "id3"), (3, None, "id3"),
                                               (2, 2, "sklearn"), (7, None, "sklearn"),
                                               (1, 3, "sklearn")])
def test_mean_equals_compute_importances(K, depth, semantics):
    led = led_table()
    m = exact_moments(led, max_features=K, max_depth=depth, k_semantics=semantics)
    r = compute_importances(led, method="exact", max_features=K, max_depth=depth,
                            k_semantics=semantics)
    np.testing.assert_allclose(m.mean, r.importances, atol=1e-12)
    # a covariance matrix: symmetric, positive semi-definite
    np.testing.assert_allclose(m.covariance, m.covariance.T, atol=0)
    assert np.linalg.eigvalsh(m.covariance).min() > -1e-12


def test_xor_k2_by_hand():
    # XOR of X1, X2 with an irrelevant X3, K=2 (id3).  At the root every Delta is 0, so
    # the root is X1, X2 or X3 with 1/3 each.  X1 root: X2 then takes 1 bit -> (0, 1, 0);
    # X2 root: (1, 0, 0).  X3 root: each half (p = 1/2) splits on X1 or X2 (1/2 each,
    # tied), independently -> I1 in {0, .5, .5, 1} with 1/4 each.
    # E[I1] = 1/2, E[I1^2] = 1/3 + (0 + .25 + .25 + 1)/4 / 3 = 1/3 + 1/8, Var = 5/24.
    # Cov(I1, I2): I1 + I2 = 1 always, so Cov = -Var.
    m = exact_moments(xor_table(2, 1), max_features=2)
    want = np.array([[5 / 24, -5 / 24, 0], [-5 / 24, 5 / 24, 0], [0, 0, 0]])
    np.testing.assert_allclose(m.covariance, want, atol=1e-12)


def test_squared_error_scales_like_the_mean():
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(12, 2))
    y = rng.integers(0, 4, size=12)
    t = DiscreteTable.from_codes(X, y, y_labels=tuple(float(10 * v) for v in range(4)))
    m = exact_moments(t, max_features=1, criterion="squared_error")
    r = compute_importances(t, method="exact", max_features=1, criterion="squared_error")
    np.testing.assert_allclose(m.mean, r.importances, rtol=1e-12)
    assert m.units == r.units
    # Y divided by 10: importances (variance units) scale by 1/100, covariances by 1/10^4
    t2 = DiscreteTable.from_codes(X, y, y_labels=tuple(float(v) for v in range(4)))
    m2 = exact_moments(t2, max_features=1, criterion="squared_error")
    np.testing.assert_allclose(m.covariance, 1e4 * m2.covariance, rtol=1e-9, atol=1e-12)


def _binary_data(seed):
    rng = np.random.default_rng(100 + seed)
    n, p = int(rng.integers(3, 7)), int(rng.integers(1, 4))
    levels = np.array([0.0, 0.5, 2.0, 3.25])
    X = levels[rng.integers(0, 4, size=(n, p))]
    y = rng.integers(0, 2 + seed % 2, size=n)
    return X, y


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_binary_moments_equal_the_enumerated_law(seed, method):
    X, y = _binary_data(seed)
    p = X.shape[1]
    for K in sorted({1, p}):
        for depth in (None, 1, 2):
            law = binary_law(X, y, kind=method[-2:], max_features=K, max_depth=depth)
            mean, cov = moments(law)
            from varimp_core.exact.moments import BinaryWalker, _binary_moments
            w = BinaryWalker(X, y, method=method, max_features=K, max_depth=depth,
                              min_samples_leaf=1, criterion="entropy", sample_weight=None)
            V, S, _ = _binary_moments(w)
            np.testing.assert_allclose(V, mean, atol=1e-12, err_msg=f"K={K} D={depth}")
            np.testing.assert_allclose(S - np.outer(V, V), cov, atol=1e-12,
                                       err_msg=f"K={K} D={depth}")
            # the batched pass exact_moments uses, against the same enumerated law
            from varimp_core.exact.moments import _binary_moments_batched
            Vb, Cb, _ = _binary_moments_batched(w.d, method, w.K, depth, 1)
            np.testing.assert_allclose(Vb, mean, atol=1e-12, err_msg=f"batched K={K} D={depth}")
            np.testing.assert_allclose(Cb, cov, atol=1e-12, err_msg=f"batched K={K} D={depth}")


@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_batched_binary_moments_equal_the_rewalk_with_leaf_sizes(method):
    # min_samples_leaf > 1 and depth limits, which the enumerated law does not take:
    # the batched pass (the mean's solver) against the independent memoised re-walk.
    from varimp_core.exact.moments import BinaryWalker, _binary_moments, _binary_moments_batched
    for seed in range(4):
        X, y = _binary_data(seed)
        p = X.shape[1]
        for K in sorted({1, p}):
            for depth in (None, 2, 3):
                w = BinaryWalker(X, y, method=method, max_features=K, max_depth=depth,
                                 min_samples_leaf=2, criterion="gini", sample_weight=None)
                V, S, _ = _binary_moments(w)
                Vb, Cb, _ = _binary_moments_batched(w.d, method, w.K, depth, 2)
                np.testing.assert_allclose(Vb, V, atol=1e-12)
                np.testing.assert_allclose(Cb, S - np.outer(V, V), atol=1e-12)


@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_binary_mean_equals_compute_importances(method):
    rng = np.random.default_rng(9)
    X = rng.normal(size=(9, 3)).round(2)
    y = rng.integers(0, 2, size=9)
    from varimp_core.exact.binary import exact_binary_importances
    for K in (1, 2, 3):
        for depth in (None, 2):
            r = exact_binary_importances(X, y, method=method, max_features=K, max_depth=depth)
            from varimp_core.exact.moments import BinaryWalker, _binary_moments
            w = BinaryWalker(X, y, method=method, max_features=K, max_depth=depth,
                              min_samples_leaf=1, criterion="entropy", sample_weight=None)
            V, _, _ = _binary_moments(w)
            np.testing.assert_allclose(V, r.importances, atol=1e-12)


# ---------------------------------------------------------------------------
# tree enumeration
# ---------------------------------------------------------------------------

from varimp_core.exact.enumerate_trees import TreeEnumeration, enumerate_trees  # noqa: E402

H_TOY = -(1 / 3) * math.log2(1 / 3) - (2 / 3) * math.log2(2 / 3)   # H(Y) = 0.9183 bits


def _toy():
    """Louppe's thesis toy (section 7.2.3): X1 in {0, 1, 2}, X2 = Y, Y = (0, 1, 1)."""
    return DiscreteTable.from_codes(np.array([[0, 0], [1, 1], [2, 1]]), np.array([0, 1, 1]))


def test_louppe_toy_extra_trees_by_hand():
    # K=1 Extra-Trees.  The root draws X1 or X2 (1/2 each) and a uniform threshold.
    #  * X2 (1/2): {0} | {1, 2}, both pure: (0, H).
    #  * X1, threshold in (0, 1) (1/2 * 1/2): {0} | {1, 2}, pure: (H, 0), probability 1/4.
    #  * X1, threshold in (1, 2) (1/4): {0, 1} | {2}, gain H - 2/3 * 1 = 0.2516; the
    #    left node {0, 1} (p = 2/3, 1 bit) splits perfectly on X1 or X2 (1/2 each), gain
    #    2/3: (H, 0) with 1/8, (H - 2/3, 2/3) with 1/8.
    # Imp(X1) = H/4 + H/8 + (H - 2/3)/8 = H/2 - 1/12 = 0.3758, Imp(X2) = H/2 + 1/12 = 0.5425.
    # The thesis prints 0.375 and 0.541 (sum 0.916, missing H(Y) = 0.9183 by 0.002); its
    # formula 2/8 I(X1<=1;Y) + 1/8 P(X1<=1) I(X1<=0;Y|X1<=1) + 1/4 I(X1<=0;Y)
    #   = 0.25 * 0.2516 + 0.125 * (2/3) * 1 + 0.25 * 0.9183 = 0.3758, and
    # 1/2 I(X2;Y) + 1/8 P(X1<=1) I(X2;Y|X1<=1) = 0.4591 + 0.0833 = 0.5425: our values.
    e = enumerate_trees(_toy(), method="exact-et", max_features=1)
    got = sorted((round(t.probability, 12), tuple(np.round(t.importances, 12))) for t in e.trees)
    r = lambda v: round(v, 12)  # noqa: E731
    want = sorted([(0.5, (0.0, r(H_TOY))), (0.25, (r(H_TOY), 0.0)), (0.125, (r(H_TOY), 0.0)),
                   (0.125, (r(H_TOY - 2 / 3), r(2 / 3)))])
    assert got == want
    np.testing.assert_allclose(e.mean, [H_TOY / 2 - 1 / 12, H_TOY / 2 + 1 / 12], atol=1e-12)
    assert e.mean.sum() == pytest.approx(H_TOY, abs=1e-12)
    m = exact_moments(_toy(), method="exact-et", max_features=1)
    np.testing.assert_allclose(m.mean, e.mean, atol=1e-12)
    np.testing.assert_allclose(m.covariance, e.covariance, atol=1e-12)
    # the structure of the tree of probability 1/2: X2 at the root, two leaves
    top = e.trees[0].structure
    assert top["variable"] == "X2" and [c["side"] for c in top["children"]] == ["<=", ">"]
    assert all(c["node"]["leaf"] for c in top["children"])


def test_louppe_toy_multiway_trees():
    # Multiway, K=1: the root is X1 (a perfect 3-way split) or X2, 1/2 each: (H/2, H/2).
    e = enumerate_trees(_toy(), method="exact", max_features=1)
    assert sorted(e.probabilities.tolist()) == [0.5, 0.5]
    np.testing.assert_allclose(e.mean, [H_TOY / 2, H_TOY / 2], atol=1e-12)
    np.testing.assert_allclose(e.covariance, H_TOY ** 2 / 4 * np.array([[1, -1], [-1, 1]]),
                               atol=1e-12)


def test_xor_four_rows():
    # XOR on 4 equiprobable rows, K=1.  Multiway: the root (X1 or X2, gain 0) then the other
    # variable in each half (gain 1/2 each): always (0, 1) or (1, 0), 1/2 each.
    t = xor_table(2, 0)
    e = enumerate_trees(t, method="exact", max_features=1)
    assert sorted(e.probabilities.tolist()) == [0.5, 0.5]
    assert sorted(tuple(v) for v in e.importances.tolist()) == [(0.0, 1.0), (1.0, 0.0)]
    # Binary ET on codes {0, 1}: one gap per variable.  In each half the root's variable is
    # constant, and scikit-learn reads on to a non-constant one, so both halves split on the
    # other variable: the same two trees (unlike id3 multiway trees at K=1, no no-op split).
    b = enumerate_trees(t, method="exact-et", max_features=1)
    law = {tuple(np.round(v, 12)): 0.0 for v in b.importances}
    for pr, v in zip(b.probabilities, b.importances):
        law[tuple(np.round(v, 12))] += pr
    assert law == pytest.approx({(0.0, 1.0): 0.5, (1.0, 0.0): 0.5})
    assert len(b.trees) == 2


def test_led_k7_depth2():
    # K=7, depth 2: the root is X2 or X5 (tied, I = H(0.4)), 1/2 each; each child then takes
    # its best variable (ties shared).  Theorem-free check: the enumeration agrees with the
    # brute-force law, and its mean with the exact recursion.
    led = led_table()
    e = enumerate_trees(led, method="exact", max_features=7, max_depth=2)
    law = multiway_law(rows_of(led), 7, 7, max_depth=2)
    assert len(e.trees) >= 2
    mean, cov = moments(law)
    np.testing.assert_allclose(e.mean, mean, atol=1e-12)
    np.testing.assert_allclose(e.covariance, cov, atol=1e-12)
    r = compute_importances(led, method="exact", max_features=7, max_depth=2)
    np.testing.assert_allclose(e.mean, r.importances, atol=1e-12)
    roots = {t.structure["variable"] for t in e.trees}
    assert roots == {"X2", "X5"}


@pytest.mark.parametrize("seed", range(6))
def test_enumeration_equals_the_oracle_law(seed):
    t = _random_table(seed)
    p = t.n_features
    for K in (1, p):
        e = enumerate_trees(t, method="exact", max_features=K, max_trees=10_000)
        law = multiway_law(rows_of(t), p, K)
        assert e.probabilities.sum() == pytest.approx(1.0, abs=1e-12)
        mine = {}
        for pr, v in zip(e.probabilities, e.importances):
            key = tuple(np.round(v, 11))
            mine[key] = mine.get(key, 0.0) + pr
        theirs = {tuple(np.round(v, 11)): pr for pr, v in law}
        assert mine.keys() == theirs.keys()
        for k in mine:
            assert mine[k] == pytest.approx(theirs[k], abs=1e-12)


def test_enumeration_refuses_with_the_count():
    with pytest.raises(ValueError, match=r"has [\d,]+ distinct trees here, more than max_trees=4"):
        enumerate_trees(led_table(), method="exact", max_features=1, max_depth=2, max_trees=4)


def test_enumeration_round_trip():
    e = enumerate_trees(_toy(), method="exact-et", max_features=1)
    back = TreeEnumeration.from_dict(json.loads(json.dumps(e.to_dict())))
    assert back.to_dict() == e.to_dict()
    assert list(back.to_frame().columns) == ["probability", "X1", "X2"]


# ---------------------------------------------------------------------------
# summaries
# ---------------------------------------------------------------------------

def test_summaries_by_hand():
    m = ImportanceMoments(("a", "b", "c"), np.array([1.0, 0.5, 0.5]),
                          np.array([[4.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]),
                          "exact")
    np.testing.assert_allclose(m.standard_errors(4), [1.0, 0.5, 0.0])
    np.testing.assert_allclose(m.expected_abs_error(4), math.sqrt(2 / math.pi) * np.array(
        [1.0, 0.5, 0.0]))
    assert m.trees_needed(0.1) == 401             # SE(a) = 2/sqrt(T) < 0.1  <=>  T > 400
    f = m.flip_probabilities(9)
    # a vs b: d = 0.5, Var = 4 + 1 - 2 = 3: Phi(-0.5 * 3 / sqrt 3)
    assert f[0, 1] == pytest.approx(0.5 * math.erfc(0.5 * 3 / math.sqrt(3) / math.sqrt(2)))
    # b vs c: equal means, varying difference -> 1/2; a vs c: d = .5, Var = 4
    assert f[1, 2] == 0.5 and f[0, 2] == pytest.approx(0.5 * math.erfc(0.75 / math.sqrt(2)))
    # ranking: {a} above {b, c}; adjacent pairs (a, b), (a, c); bound = f_ab + f_ac
    assert m.ranking_error_bound(9) == pytest.approx(f[0, 1] + f[0, 2])
    T = m.stable_ranking_trees(0.95)
    assert m.ranking_error_bound(T) <= 0.05 < m.ranking_error_bound(T - 1)
    # constant difference: never flips
    z = ImportanceMoments(("a", "b"), np.array([1.0, 0.0]), np.zeros((2, 2)), "exact")
    assert z.flip_probabilities(1)[0, 1] == 0.0 and z.stable_ranking_trees() == 1


def test_moments_round_trip():
    m = exact_moments(xor_table(2, 1), max_features=2)
    back = ImportanceMoments.from_dict(json.loads(json.dumps(m.to_dict())))
    assert back.to_dict() == m.to_dict()
    np.testing.assert_array_equal(back.covariance, m.covariance)
    frame = m.to_frame(n_trees=100)
    assert list(frame["variable"]) == ["X1", "X2", "X3"]
    np.testing.assert_allclose(frame["standard_error"], np.sqrt(np.diag(m.covariance) / 100))


def test_flip_probability_matches_resampled_forests():
    # Seed 5's table, K=1: X1 vs X2 have d = mu1 - mu2 small against the per-tree spread.
    # Forests of T = 233 trees drawn from the brute-force law of one tree (oracle, not the
    # code); the CLT flip probability is ~0.27; 2,000 forests give it within a 99.9 %
    # binomial interval.
    t = _random_table(5)
    p = t.n_features
    law = multiway_law(rows_of(t), p, 1)
    pr = np.array([a for a, _ in law])
    V = np.array([v for _, v in law])
    m = exact_moments(t, max_features=1)
    T = 233
    want = m.flip_probabilities(T)[0, 1]
    assert 0.1 < want < 0.9
    rng = np.random.default_rng(1)
    idx = rng.choice(len(pr), size=(2000, T), p=pr / pr.sum())
    d = (V[idx, 0] - V[idx, 1]).mean(axis=1)
    sign = np.sign(m.mean[0] - m.mean[1])
    observed = np.mean(np.sign(d) == -sign) + 0.5 * np.mean(np.abs(d) < 1e-12)
    half = 3.29 * math.sqrt(want * (1 - want) / 2000)
    assert abs(observed - want) < half, (observed, want, half)


def test_moments_from_forest_trees_are_estimates():
    led = led_table()
    r = compute_importances(led, method="forest", max_features=1, n_estimators=400,
                            random_state=0)
    m = moments_from_trees(r)
    assert m.estimated and m.n_trees == 400
    np.testing.assert_allclose(m.covariance, np.cov(r.per_tree, rowvar=False), atol=1e-15)
    exact = exact_moments(led, max_features=1)
    # estimated variances within chi-square-ish bounds (loose: 400 trees)
    ratio = np.diag(m.covariance) / np.diag(exact.covariance)
    assert np.all((ratio > 0.7) & (ratio < 1.4)), ratio
    with pytest.raises(ValueError, match="no per-tree importances"):
        moments_from_trees(compute_importances(led, method="exact", max_features=1))


# ---------------------------------------------------------------------------
# scikit-learn: 20,000 trees (slow: about 3 minutes per case on a shared core)
# ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.serial
@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
@pytest.mark.parametrize("K", [1, 3])
def test_sklearn_per_tree_covariance_matches_the_exact_one(method, K):
    # scikit-learn's per-tree MDI (forest_mdi: sum over each tree_'s nodes of
    # w_t/W i(t) - w_L/W i(t_L) - w_R/W i(t_R), bits) of 20,000 trees, bootstrap off, on a
    # 10-row table with tied integer inputs (so even RF at K = p is random).
    # Sample covariance s_ij vs exact Sigma_ij: SE from the fourth moment (delta method,
    # no normality assumed), Var(s_ij) ~ (E[c_i^2 c_j^2] - s_ij^2) / n; |z| < 4.5.  The
    # variance ratio s_jj / Sigma_jj must lie in 1 +- 3.29 SE / Sigma_jj (99.9 %, the
    # chi-square bound with the variable's own kurtosis in place of the normal's).
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from varimp_core.forests.sklearn_mdi import forest_mdi
    rng = np.random.default_rng(4)
    X = rng.integers(0, 3, size=(10, 3)).astype(float)
    y = rng.integers(0, 2, size=10)
    cls = RandomForestClassifier if method == "exact-rf" else ExtraTreesClassifier
    forest = cls(n_estimators=20_000, bootstrap=False, max_features=K, criterion="entropy",
                 random_state=0).fit(X, y)
    pt = forest_mdi(forest).per_tree
    from varimp_core.exact.moments import BinaryWalker, _binary_moments
    V, S, _ = _binary_moments(BinaryWalker(X, y, method=method, max_features=K, max_depth=None,
                                            min_samples_leaf=1, criterion="entropy",
                                            sample_weight=None))
    n = pt.shape[0]
    c = pt - pt.mean(axis=0)
    s = c.T @ c / (n - 1)
    m4 = np.einsum("ti,tj->ij", c ** 2, c ** 2) / n
    se = np.sqrt(np.maximum(m4 - s ** 2, 0.0) / n)
    cov = S - np.outer(V, V)
    zero = se == 0
    np.testing.assert_allclose(s[zero], cov[zero], atol=1e-12)
    z = (s - cov)[~zero] / se[~zero]
    assert np.abs(z).max() < 4.5, z
    var = np.diag(cov)
    ok = var > 0
    ratio = np.diag(s)[ok] / var[ok]
    assert np.all(np.abs(ratio - 1) < 3.29 * np.diag(se)[ok] / var[ok]), ratio


def test_refusals_come_with_a_sentence(monkeypatch):
    import varimp_core.exact.moments as mom
    monkeypatch.setattr(mom, "MAX_MOMENT_ENTRIES", 100)
    with pytest.raises(ValueError, match=r"exact covariance .* beyond the limit of 1e\+02"):
        exact_moments(led_table(), max_features=2)
    monkeypatch.setattr(mom, "MAX_BINARY_MOMENT_NODES", 3)
    rng = np.random.default_rng(2)
    t = DiscreteTable.from_codes(rng.integers(0, 5, size=(12, 2)), rng.integers(0, 2, size=12))
    with pytest.raises(ValueError) as refused:
        exact_moments(t, method="exact-et", max_features=1)
    # the covariance's own limit, said of the covariance (the value itself fits)
    text = str(refused.value)
    assert text.startswith("The exact covariance of one tree's importances (p + p^2 numbers "
                           "at each node, walked again) would need "), text
    assert "beyond the limit of 3;" in text and "Extra-Trees value" not in text
    with pytest.raises(ValueError, match="moments_from_trees"):
        exact_moments(led_table(), method="forest")
