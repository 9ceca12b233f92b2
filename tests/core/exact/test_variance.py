"""Exact multiway importances with the variance of a numeric Y as impurity (issue 24).

Louppe's thesis, section 6: Eqn 3 and Theorems 3-5 hold with
G(Y; X_m | B) = Var(Y | B) - E Var(Y | B, X_m) in place of I(X_m; Y | B).  The expected
values below come from a brute-force oracle written here (every randomized multiway tree
walked with its probability, as tests/oracle.py does for entropy), not from varimp_core.
"""

import itertools
import math
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from varimp_core.api import compute_importances, load_data
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.recursion import exact_importances, exact_importances_path

# -- oracle (no varimp_core code) ------------------------------------------------------------
# rows are (x_tuple, y_value, weight)


def _var(rows):
    """Weighted variance of the y values of ``rows`` (two passes), 0 for one distinct value."""
    total = sum(w for _, _, w in rows)
    if total <= 0 or len({y for _, y, _ in rows}) <= 1:
        return 0.0
    mean = sum(w * y for _, y, w in rows) / total
    return sum(w * (y - mean) ** 2 for _, y, w in rows) / total


def _split(rows, v):
    parts = defaultdict(list)
    for r in rows:
        parts[r[0][v]].append(r)
    return parts


def _delta(rows, v):
    """Var(Y | node) - E[Var(Y | node, X_v) | node]."""
    total = sum(w for _, _, w in rows)
    return _var(rows) - sum(sum(w for _, _, w in part) / total * _var(part)
                            for part in _split(rows, v).values())


def oracle_variance(rows, p, k, *, semantics="id3", max_depth=None, tol=1e-10):
    """Expected importance of each variable over all random trees, by brute force."""
    depth_limit = p if max_depth is None else max_depth
    imp = [0.0] * p

    def law_id3(rows, unused):
        subsets = list(itertools.combinations(unused, min(k, len(unused))))
        deltas = {v: _delta(rows, v) for v in unused}
        law = defaultdict(float)
        for s in subsets:
            best = max(deltas[v] for v in s)
            tied = [v for v in s if deltas[v] >= best - tol]
            for v in tied:
                law[v] += 1.0 / len(subsets) / len(tied)
        return law

    def law_sklearn(rows, used):
        # scikit-learn's rule: draw features in a random order until K were drawn and at
        # least one is not constant in the node; the best non-constant one wins.
        perms = list(itertools.permutations(range(p)))
        deltas = {v: None if v in used or len(_split(rows, v)) <= 1 else _delta(rows, v)
                  for v in range(p)}
        law = defaultdict(float)
        for order in perms:
            drawn, seen = [], False
            for i, v in enumerate(order):
                if i >= k and seen:
                    break
                drawn.append(v)
                seen |= deltas[v] is not None
            cands = [v for v in drawn if deltas[v] is not None]
            if not cands:
                continue
            best = max(deltas[v] for v in cands)
            tied = [v for v in cands if deltas[v] >= best - tol]
            for v in tied:
                law[v] += 1.0 / len(perms) / len(tied)
        return law

    def grow(rows, used, reach, depth):
        if depth >= depth_limit or len(used) == p or _var(rows) <= 0:
            return
        node_p = sum(w for _, _, w in rows)
        law = (law_id3(rows, [v for v in range(p) if v not in used]) if semantics == "id3"
               else law_sklearn(rows, used))
        for v, prob in law.items():
            imp[v] += reach * prob * node_p * _delta(rows, v)
            for part in _split(rows, v).values():
                grow(part, used | {v}, reach * prob, depth + 1)

    total = sum(w for _, _, w in rows)
    grow([(x, y, w / total) for x, y, w in rows], frozenset(), 1.0, 0)
    return imp


def _random_case(seed, p, exact):
    """A tiny random table: p inputs of 2-3 levels, Y with a handful of numeric values."""
    rng = np.random.default_rng(seed)
    levels = rng.integers(2, 4, p)
    n = 14
    X = np.column_stack([rng.integers(0, c, n) for c in levels])
    values = np.round(rng.normal(0, 1.5, 5), 2)   # a few distinct values: ties, pure nodes
    y = values[rng.integers(0, 5, n)] + (X[:, 0] == 1) * 0.7
    w = rng.uniform(0.2, 1.0, n) if exact else rng.integers(1, 4, n).astype(float)
    if exact:
        w = w / w.sum()
    u, codes = np.unique(y, return_inverse=True)
    table = DiscreteTable(X, codes, w, tuple(f"X{j + 1}" for j in range(p)),
                          y_labels=tuple(float(v) for v in u), exact=exact).compressed()
    rows = [(tuple(int(a) for a in x), float(yy), float(ww)) for x, yy, ww in zip(X, y, w)]
    return table, rows


@pytest.mark.parametrize("seed,p,exact", [(0, 2, True), (1, 3, True), (2, 3, False),
                                          (3, 3, True), (4, 4, False)])
def test_recursion_equals_the_brute_force_oracle(seed, p, exact):
    """Every K = 1..p, depths 1..p and full, both semantics, to 1e-12."""
    table, rows = _random_case(seed, p, exact)
    depths = [None] + list(range(1, p + 1))
    for sem in ("id3", "sklearn"):
        results = exact_importances_path(table, max_features=range(1, p + 1), max_depth=depths,
                                         k_semantics=sem, criterion="squared_error")
        pairs = [(k, d) for k in range(1, p + 1) for d in depths]
        for (k, d), r in zip(pairs, results):
            want = oracle_variance(rows, p, k, semantics=sem, max_depth=d)
            np.testing.assert_allclose(r.importances, want, atol=1e-12, rtol=0,
                                       err_msg=f"K={k} depth={d} {sem}")
            assert r.units == "variance of Y"


def test_generalised_eqn3_by_hand():
    """X1, X2 fair independent bits, Y = 0, 1, 2, 5 at (x1, x2) = (0,0), (1,0), (0,1), (1,1).

    Var(Y) = (4 + 1 + 0 + 9) / 4 = 3.5 (mean 2).  E Var(Y|X1) = (Var{0,2} + Var{1,5}) / 2
    = (1 + 4) / 2 = 2.5;  E Var(Y|X2) = (Var{0,1} + Var{2,5}) / 2 = (0.25 + 2.25) / 2 = 1.25;
    E Var(Y|X1,X2) = 0.  Eqn 3 with G in place of I (K = 1, p = 2, weights 1/(C(2,k)(2-k)) = 1/2):
      Imp(X1) = 1/2 (3.5 - 2.5) + 1/2 (1.25 - 0) = 0.5 + 0.625 = 1.125
      Imp(X2) = 1/2 (3.5 - 1.25) + 1/2 (2.5 - 0) = 1.125 + 1.25 = 2.375,  sum 3.5 = Var(Y).
    K = 2: the root takes X2 (decrease 2.25 > 1), then X1 splits both children:
      Imp(X2) = 2.25,  Imp(X1) = 1/2 0.25 + 1/2 2.25 = 1.25.
    Depth 1, K = 1: only the root, Imp = 1/2 (1, 2.25) = (0.5, 1.125).
    """
    X = np.array([[0, 0], [1, 0], [0, 1], [1, 1]])
    table = DiscreteTable(X, np.array([0, 1, 2, 3]), np.full(4, 0.25), ("X1", "X2"),
                          y_labels=(0.0, 1.0, 2.0, 5.0), exact=True)
    r1 = exact_importances(table, max_features=1, criterion="squared_error")
    np.testing.assert_allclose(r1.importances, [1.125, 2.375], atol=1e-12)
    np.testing.assert_allclose(r1.by_degree, [[0.5, 0.625], [1.125, 1.25]], atol=1e-12)
    assert r1.information == pytest.approx(3.5, abs=1e-12)
    r2 = exact_importances(table, max_features=2, criterion="squared_error")
    np.testing.assert_allclose(r2.importances, [1.25, 2.25], atol=1e-12)
    r_d1 = exact_importances(table, max_features=1, max_depth=1, criterion="squared_error")
    np.testing.assert_allclose(r_d1.importances, [0.5, 1.125], atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_theorem2_analogue_sums_to_explained_variance(seed):
    """Fully grown, every K and semantics: sum of importances = Var(Y) - E Var(Y|X) (plug-in),
    computed here from the rows."""
    table, rows = _random_case(10 + seed, 3, exact=bool(seed % 2))
    total = sum(w for _, _, w in rows)
    var_y = _var(rows)
    cells = defaultdict(list)
    for r in rows:
        cells[r[0]].append(r)
    within = sum(sum(w for _, _, w in c) / total * _var(c) for c in cells.values())
    for sem in ("id3", "sklearn"):
        for k in (1, 2, 3):
            r = exact_importances(table, max_features=k, k_semantics=sem,
                                  criterion="squared_error")
            assert r.total == pytest.approx(var_y - within, abs=1e-12)
            assert r.information == pytest.approx(var_y - within, abs=1e-12)


def test_irrelevant_variable_scores_zero_at_k1():
    """Theorem 3 analogue: an input independent of (Y, the others) has importance 0."""
    rng = np.random.default_rng(5)
    X = np.array(list(itertools.product(range(2), range(3), range(2))))
    y = np.round(X[:, 0] * 1.3 + (X[:, 1] == 2) * 0.4 * X[:, 0] + 0.2 * X[:, 1], 6)
    w = np.repeat(rng.uniform(0.5, 1, 6), 2)   # X3 uniform and independent of the rest
    u, codes = np.unique(y, return_inverse=True)
    t = DiscreteTable(X, codes, w / w.sum(), ("a", "b", "c"), y_labels=tuple(u), exact=True)
    r = exact_importances(t, max_features=1, criterion="squared_error")
    assert abs(r.importances[2]) < 1e-12 and r.importances[0] > 0.1


def test_large_scale_target_keeps_ties_and_totals():
    """Y in the thousands: the lattice works on Y standardized and scales back."""
    table, rows = _random_case(21, 3, exact=True)
    big = DiscreteTable(table.X, table.y, table.weight, table.variables,
                        y_labels=tuple(1000 * v + 5e4 for v in table.y_labels), exact=True)
    for k in (1, 2, 3):
        small = exact_importances(table, max_features=k, criterion="squared_error")
        large = exact_importances(big, max_features=k, criterion="squared_error")
        np.testing.assert_allclose(large.importances, 1e6 * small.importances, rtol=1e-9)


def test_api_uses_the_numeric_target_unbinned_and_refuses_classification():
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["u", "v"], n)})
    df["y"] = df["a"] * 2.0 + (df["b"] == "u") * 0.5 + rng.normal(0, 0.1, n)
    data = load_data(data=df, target="y")
    assert data.task == "regression" and data.table.n_classes == 5   # binned for entropy
    r = compute_importances(data, method="exact", criterion="squared_error", max_features=2)
    codes = pd.factorize(df["a"].astype(str) + "|" + df["b"])[0]
    yv = df["y"].to_numpy()
    within = sum((codes == c).mean() * yv[codes == c].var() for c in np.unique(codes))
    assert r.units == "variance of Y"
    assert r.total == pytest.approx(yv.var() - within, rel=1e-10)
    assert r.importances[0] > r.importances[1] > 0
    with pytest.raises(ValueError, match="classification target"):
        compute_importances(load_data(problem="led", n_samples=200), method="exact",
                            criterion="squared_error")
    with pytest.raises(ValueError, match="exact method only"):
        compute_importances(data, method="forest", criterion="squared_error")


def test_diabetes_sample_runs_exactly_without_binning_y():
    data = load_data(problem="diabetes")
    r = compute_importances(data, method="exact", criterion="squared_error", max_features=3,
                            max_depth=2)
    assert r.units == "variance of Y" and np.all(r.importances >= 0)
    full = compute_importances(data, method="exact", criterion="squared_error")
    y = np.asarray(data.y, float)
    assert full.total <= y.var() + 1e-6 and full.total == pytest.approx(full.information)


@pytest.mark.parametrize("seed,p", [(30, 3), (31, 4)])
def test_eqn3_with_variance_equals_the_recursion_at_k1_every_depth(seed, p):
    """Theorem 1 and Proposition 6 with G in place of I: the closed form (subset variances,
    Shapley weights 1/(C_p^k (p-k))) equals the K = 1 id3 recursion at every depth, and its
    terms are the oracle's conditional variance decreases."""
    from varimp_core.exact.eqn3 import eqn3_importances

    table, rows = _random_case(seed, p, exact=True)
    for d in [None] + list(range(1, p)):
        closed = eqn3_importances(table, max_depth=d, criterion="squared_error")
        rec = exact_importances(table, max_features=1, max_depth=d, criterion="squared_error")
        np.testing.assert_allclose(closed.by_degree, rec.by_degree, atol=1e-12, rtol=0)
        assert closed.units == "variance of Y"
    # the closed form from the oracle's own conditional variances
    def ev(cols):
        cells = defaultdict(list)
        for r in rows:
            cells[tuple(r[0][c] for c in cols)].append(r)
        total = sum(w for _, _, w in rows)
        return sum(sum(w for _, _, w in c) / total * _var(c) for c in cells.values())
    want = [sum(1 / (math.comb(p, len(b)) * (p - len(b))) * (ev(b) - ev(b + (m,)))
                for k in range(p) for b in itertools.combinations(
                    [j for j in range(p) if j != m], k)) for m in range(p)]
    np.testing.assert_allclose(eqn3_importances(table, criterion="squared_error").importances,
                               want, atol=1e-12)
