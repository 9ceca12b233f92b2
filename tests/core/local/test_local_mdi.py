"""Exact local MDI (Sutera et al. 2021) against oracles written here, never its own output.

* Shapley identity (Theorem 1): at K=1, fully grown, entropy, the local MDI of X_m at x is the
  Shapley value of v_x(S) = H(Y) - H(Y | X_S = x_S), brute-forced below over all subsets from
  the rows of the table (filter rows, entropy of the class weights);
* efficiency: fully grown, every K, both semantics, the values of x sum to H(Y) - H(Y | X = x);
* global from local: the p(x)-weighted mean is ``exact_importances`` (any K, depth, criterion);
* local irrelevance: a hand-built distribution where X2 is irrelevant at x = (0, 0) only.
"""
import math
from itertools import combinations

import numpy as np
import pytest

import varimp_core as vc
from varimp_core.data.table import DiscreteTable
from varimp_core.local.local_mdi import exact_local_mdi


def _entropy(w):
    w = np.asarray(w, dtype=float)
    w = w[w > 0]
    if w.size == 0:
        return 0.0
    q = w / w.sum()
    return float(-(q * np.log2(q)).sum())


def _cond_entropy_at(table, x, subset):
    """H(Y | X_S = x_S): entropy of the class weights of the rows agreeing with x on S."""
    keep = np.ones(table.n_rows, dtype=bool)
    for j in subset:
        keep &= table.X[:, j] == x[j]
    return _entropy(np.bincount(table.y[keep], weights=table.weight[keep],
                                minlength=table.n_classes))


def _shapley(table, x):
    """Shapley values of v_x(S) = H(Y) - H(Y|X_S=x_S), by the textbook weights."""
    p = table.n_features
    v = {}
    for k in range(p + 1):
        for s in combinations(range(p), k):
            v[s] = -_cond_entropy_at(table, x, s)   # H(Y) cancels in every difference
    out = np.zeros(p)
    for m in range(p):
        rest = [j for j in range(p) if j != m]
        for k in range(p):
            wk = math.factorial(k) * math.factorial(p - k - 1) / math.factorial(p)
            for b in combinations(rest, k):
                out[m] += wk * (v[tuple(sorted(b + (m,)))] - v[b])
    return out


def _random_tables(n, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        p = int(rng.integers(2, 5))
        levels = rng.integers(2, 4, size=p)
        ny = int(rng.integers(2, 4))
        grid = np.array(np.meshgrid(*[np.arange(c) for c in levels], indexing="ij")).reshape(p, -1).T
        X = np.repeat(grid, ny, axis=0)
        y = np.tile(np.arange(ny), grid.shape[0])
        w = rng.dirichlet(np.full(y.size, 0.5))
        w[rng.random(y.size) < 0.3] = 0.0            # some cells and classes absent
        out.append(DiscreteTable(X, y, w / w.sum(), tuple(f"X{j + 1}" for j in range(p)),
                                 exact=True).compressed())
    return out


PROBLEMS = ["led", "xor:relevant=2,irrelevant=1", "xor:relevant=3", "sym", "led:noise=0.1"]


@pytest.fixture(scope="module")
def tables():
    named = [vc.get_problem(s).exact_table() for s in PROBLEMS]
    return named + _random_tables(20)


def test_shapley_identity_at_k1(tables):
    for table in tables:
        r = exact_local_mdi(table, max_features=1)
        for x, got in zip(r.X, r.values):
            np.testing.assert_allclose(got, _shapley(table, x), rtol=0, atol=1e-12)


def test_efficiency_every_k(tables):
    for table in tables[:4] + tables[5:15]:
        hy = _entropy(np.bincount(table.y, weights=table.weight, minlength=table.n_classes))
        for sem in ("id3", "sklearn"):
            for k in range(1, table.n_features + 1):
                r = exact_local_mdi(table, max_features=k, k_semantics=sem)
                assert r.root_impurity == pytest.approx(hy, abs=1e-12)
                for x, got in zip(r.X, r.values):
                    full = _cond_entropy_at(table, x, range(table.n_features))
                    assert got.sum() == pytest.approx(hy - full, abs=1e-12)


def test_global_from_local(tables):
    from varimp_core.exact.recursion import exact_importances_path
    depths = [None, 1, 2]
    for table in tables[:4] + tables[5:10]:
        p = table.n_features
        for sem in ("id3", "sklearn"):
            for crit in ("entropy", "gini"):
                path = iter(exact_importances_path(table, max_features=range(1, p + 1),
                                                   max_depth=depths, k_semantics=sem,
                                                   criterion=crit))
                for k in range(1, p + 1):
                    for depth in depths:
                        g = next(path)
                        r = exact_local_mdi(table, max_features=k, max_depth=depth,
                                            k_semantics=sem, criterion=crit)
                        np.testing.assert_allclose(r.weighted_mean(), g.importances,
                                                   rtol=0, atol=1e-12)
                        np.testing.assert_allclose(r.global_importances, g.importances,
                                                   rtol=0, atol=1e-12)
                        assert r.weight.sum() == pytest.approx(1.0)


def test_local_irrelevance():
    # X1 uniform on {0,1,2}, X2 a uniform bit, independent.  Y = 1 when X1 = 0; Y = X2 when
    # X1 = 1; Y = 1 - X2 when X1 = 2.  Then p(Y=1) = 1/3 + 1/6 + 1/6 = 2/3 and
    # p(Y=1 | X2=0) = (1 + 0 + 1)/3 = 2/3: X2 alone says nothing, and given X1 = 0 Y is 1
    # whatever X2.  So X2 is locally irrelevant at x = (0, 0) (both terms of the Shapley sum,
    # H(Y) - H(Y|X2=0) and H(Y|X1=0) - H(Y|X1=0,X2=0), are 0), although it is globally
    # relevant (I(X2; Y | X1) = 2/3 bit).  X1 takes all of H(Y) - H(Y|X=x) = h(2/3).
    rows, ys, ws = [], [], []
    for x1 in range(3):
        for x2 in range(2):
            y = 1 if x1 == 0 else (x2 if x1 == 1 else 1 - x2)
            rows.append((x1, x2))
            ys.append(y)
            ws.append(1 / 6)
    table = DiscreteTable(np.array(rows), np.array(ys), np.array(ws), ("X1", "X2"),
                          exact=True).compressed()
    h23 = -(2 / 3) * math.log2(2 / 3) - (1 / 3) * math.log2(1 / 3)
    for sem in ("id3", "sklearn"):
        for k in (1, 2):
            r = exact_local_mdi(table, max_features=k, k_semantics=sem)
            at = {tuple(x): v for x, v in zip(r.X, r.values)}
            assert at[(0, 0)][1] == 0.0 and at[(0, 1)][1] == 0.0
            assert at[(0, 0)][0] == pytest.approx(h23, abs=1e-12)
            assert at[(1, 0)][1] > 0.3                  # X2 matters where X1 != 0
            assert vc.exact_importances(table, max_features=k, k_semantics=sem).importances[1] > 0.1


def test_errors_and_roundtrip():
    import json
    table = vc.get_problem("sym").exact_table()
    with pytest.raises(ValueError, match="criterion"):
        exact_local_mdi(table, criterion="mse")
    with pytest.raises(ValueError, match="max_features"):
        exact_local_mdi(table, max_features=3)
    with pytest.raises(ValueError, match="DiscreteTable"):
        exact_local_mdi(np.zeros((3, 2)))
    r = exact_local_mdi(table)
    back = type(r).from_dict(json.loads(json.dumps(r.to_dict())))
    np.testing.assert_array_equal(back.values, r.values)
    assert back.standard_errors is None and back.variables == r.variables
    frame = r.to_frame()
    assert list(frame.columns) == ["row", "variable", "value", "standard_error", "weight"]
    assert len(frame) == r.n_rows * r.n_features
