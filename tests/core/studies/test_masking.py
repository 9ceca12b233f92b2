"""Masking tables against Table 2, Theorems 2, 3, 5, Proposition 6 and section 5.3.

Every expected value comes from the papers or from a closed form worked out in
the comment above it, not from running varimp.
"""

import math

import numpy as np
import pytest

from _tables import TABLE2_EQN3, led_table, with_irrelevant, xor_table
from varimp_core.studies.masking_copy import add_noisy_copy
from varimp_core.studies.masking import (importance_change, importance_vs_depth, importance_vs_k,
                                         sampled_vs_k)
from varimp_core.studies.masking_tables import rank_importances
from varimp_core.problems.registry import get_problem
from varimp_core.data.table import DiscreteTable

LOG2_10 = math.log2(10)  # I(X1..X7; Y) of the LED: Y is a uniform digit determined by X


def _h(q):
    """Binary entropy in bits."""
    return 0.0 if q in (0, 1) else -q * math.log2(q) - (1 - q) * math.log2(1 - q)


def _at(df, x, value):
    return df[df[x] == value].set_index("variable")


def _copy_table(flip):
    """Y = X1 a fair bit, X2 = X1 flipped with probability ``flip`` (Louppe 2013, 5.3)."""
    rows = [(x1, x2, (0.5 * (1 - flip) if x1 == x2 else 0.5 * flip))
            for x1 in (0, 1) for x2 in (0, 1)]
    X = np.array([[a, b] for a, b, _ in rows])
    w = np.array([c for *_, c in rows])
    return DiscreteTable(X, X[:, 0], w, ("X1", "X2"), exact=True).compressed()


# -- Table 2 -----------------------------------------------------------------------
def test_led_k1_is_the_eqn3_column_of_table2_truncated():
    # Louppe et al. (2013), Table 2, column "Eqn. 3", truncated to 3 decimals.
    k1 = _at(importance_vs_k(led_table(), [1]), "K", 1)
    truncated = np.floor(k1["importance"].to_numpy() * 1000) / 1000
    np.testing.assert_allclose(truncated, TABLE2_EQN3, atol=1e-12)


def test_led_k7_ordering_of_table2():
    # Table 2, K = 7: X5 > X2 > X3 > X4 > X7 > X1 > X6.
    k7 = _at(importance_vs_k(led_table()), "K", 7)
    assert k7.sort_values("rank").index.tolist() == ["X5", "X2", "X3", "X4", "X7", "X1", "X6"]
    assert k7["rank"].tolist() == [6.0, 2.0, 3.0, 4.0, 1.0, 7.0, 5.0]


def test_led_ranks_change_with_k():
    # Table 2: at K = 1 X4 (0.542) is ahead of X3 (0.531); at K = 7 X3 (0.475) is ahead of X4.
    df = importance_vs_k(led_table(), [1, 7])
    assert _at(df, "K", 1).loc["X4", "rank"] < _at(df, "K", 1).loc["X3", "rank"]
    assert _at(df, "K", 7).loc["X3", "rank"] < _at(df, "K", 7).loc["X4", "rank"]


def test_default_ks_and_columns():
    df = importance_vs_k(led_table())
    assert list(df.columns) == ["variable", "K", "importance", "rank"]
    assert sorted(df.K.unique()) == list(range(1, 8))
    assert df.variable.tolist()[:7] == [f"X{j}" for j in range(1, 8)]
    assert df.attrs["information"] == pytest.approx(LOG2_10)


# -- Theorem 2 ------------------------------------------------------------------------
@pytest.mark.parametrize("semantics", ["id3", "sklearn"])
def test_theorem2_sum_is_log2_10_at_every_k(semantics):
    df = importance_vs_k(led_table(), k_semantics=semantics)
    sums = df.groupby("K").importance.sum()
    np.testing.assert_allclose(sums.to_numpy(), LOG2_10, atol=1e-10)


def test_theorem2_with_irrelevant_variables():
    df = importance_vs_k(with_irrelevant(led_table(), 2))
    np.testing.assert_allclose(df.groupby("K").importance.sum().to_numpy(), LOG2_10, atol=1e-10)


# -- XOR: 1/m at K = 1, irrelevant variables get 0 (Theorems 1, 3, 5) -------------------
@pytest.mark.parametrize("m,k", [(2, 0), (2, 3), (3, 2)])
def test_xor_k1_gives_one_over_m(m, k):
    # I(X;Y) = 1 bit shared equally by the m symmetric relevant bits; irrelevant bits get 0.
    k1 = _at(importance_vs_k(xor_table(m, k), [1]), "K", 1)
    np.testing.assert_allclose(k1["importance"], [1 / m] * m + [0.0] * k, atol=1e-12)
    # ties are averaged: the m relevant share ranks 1..m, the k irrelevant share m+1..m+k
    assert k1["rank"].tolist() == [(m + 1) / 2] * m + [m + (k + 1) / 2] * k


# -- Theorem 5 and damped masking ---------------------------------------------------
@pytest.mark.parametrize("k", [1, 3])
def test_theorem5_irrelevant_variables_change_nothing_at_k1(k):
    base = _at(importance_vs_k(led_table(), [1]), "K", 1)["importance"]
    more = _at(importance_vs_k(with_irrelevant(led_table(), k), [1]), "K", 1)["importance"]
    np.testing.assert_allclose(more.loc[base.index], base, atol=1e-12)
    np.testing.assert_allclose(more.drop(base.index), 0.0, atol=1e-12)   # Theorem 3


def test_irrelevant_variables_damp_masking_at_k2():
    # Louppe 2013, 5.3 / Geurts 2016: for K fixed, irrelevant variables dampen masking,
    # so the K = 2 importances of X1..X7 move towards their K = 1 values.
    def distance(k):
        df = importance_vs_k(with_irrelevant(led_table(), k), [1, 2])
        change = importance_change(df)
        return change.loc[(change.K == 2) & change.variable.isin(led_table().variables),
                          "change"].abs().sum()

    d0, d2, d4 = distance(0), distance(2), distance(4)
    assert d0 > d2 > d4 > 0


# -- the noisy copy of section 5.3 -----------------------------------------------
@pytest.mark.parametrize("flip", [0.05, 0.2])
def test_noisy_copy_closed_form(flip):
    # Louppe 2013, 5.3, with eps = I(X1;Y|X2) = H(Y|X2) = h(flip):
    #   K=1: Imp(X1) = 1/2 I(X1;Y) + 1/2 eps = (1 + h)/2, Imp(X2) = 1/2 I(X2;Y) = (1 - h)/2
    #   K=2: Imp(X1) = I(X1;Y) = 1, Imp(X2) = I(X2;Y|X1) = 0 (masked).
    h = _h(flip)
    df = importance_vs_k(_copy_table(flip))
    np.testing.assert_allclose(_at(df, "K", 1)["importance"], [(1 + h) / 2, (1 - h) / 2],
                               atol=1e-12)
    np.testing.assert_allclose(_at(df, "K", 2)["importance"], [1.0, 0.0], atol=1e-12)


def test_an_irrelevant_variable_unmasks_the_copy():
    # Louppe 2013, 5.3 counter-example, K = 2 of p = 3 (id3): the root draws {X2, X3} with
    # probability 1/3, then X2 wins with I(X2;Y) = 1 - h and X1 follows with I(X1;Y|X2) = h.
    flip = 0.1
    h = _h(flip)
    df = _at(importance_vs_k(with_irrelevant(_copy_table(flip), 1), [2]), "K", 2)
    np.testing.assert_allclose(df["importance"], [2 / 3 + h / 3, (1 - h) / 3, 0.0], atol=1e-12)


def test_add_noisy_copy_builds_the_copy_table():
    t = add_noisy_copy(DiscreteTable(np.array([[0], [1]]), np.array([0, 1]), np.array([0.5, 0.5]),
                                     ("X1",), exact=True), "X1", 0.2)
    assert t.variables == ("X1", "X1'")
    joint = {tuple(map(int, x)): w for x, w in zip(t.X, t.weight)}
    assert joint == pytest.approx({(0, 0): 0.4, (0, 1): 0.1, (1, 0): 0.1, (1, 1): 0.4})
    assert t.exact


def test_exact_copy_equals_the_problem_spec_copy():
    # flip = 0 is an exact copy: the same distribution as the problem spec "led:copies=X5:1".
    ours = importance_vs_k(add_noisy_copy(led_table(), "X5", 0.0))
    spec = importance_vs_k(get_problem("led:copies=X5:1").exact_table())
    assert list(ours.variable) == list(spec.variable)   # one name for the copy: X5'
    np.testing.assert_allclose(ours.importance, spec.importance, atol=1e-12)


def test_a_fair_coin_copy_is_irrelevant():
    # A binary copy flipped with probability 1/2 is independent of everything: by
    # Theorems 3 and 5 it gets 0 and leaves the LED's K = 1 importances unchanged.
    df = _at(importance_vs_k(add_noisy_copy(led_table(), "X2", 0.5), [1]), "K", 1)
    assert df.loc["X2'", "importance"] == pytest.approx(0.0, abs=1e-12)
    truncated = np.floor(df.drop("X2'")["importance"].to_numpy() * 1000) / 1000
    np.testing.assert_allclose(truncated, TABLE2_EQN3, atol=1e-12)


def test_noisy_copy_position_and_multilevel():
    t = add_noisy_copy(get_problem("xor:irrelevant=1").exact_table(), "X2", 0.3, position=2)
    assert t.variables == ("X1", "X2", "X2'", "X3")
    assert t.total_weight == pytest.approx(1.0)
    # three levels: the changed value is uniform over the two others
    three = DiscreteTable(np.array([[0], [1], [2]]), np.array([0, 1, 2]), np.full(3, 1 / 3),
                          ("A",), exact=True)
    c = add_noisy_copy(three, 0, 0.3)
    joint = {tuple(map(int, x)): w for x, w in zip(c.X, c.weight)}
    assert joint[(0, 0)] == pytest.approx(0.7 / 3)
    assert joint[(0, 1)] == pytest.approx(0.15 / 3)


@pytest.mark.parametrize("args,match", [
    (("X9", 0.1), "Unknown variable"),
    (("X1", 1.0), "probability"),
    (("X1", -0.1), "probability"),
    (("X1", "lots"), "probability"),
    ((7, 0.1), "name or an index"),
])
def test_add_noisy_copy_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        add_noisy_copy(led_table(), *args)


# -- depth: Proposition 6 ---------------------------------------------------------
def test_depth_keeps_the_first_terms_of_eqn3():
    # XOR with m = 2 and one irrelevant bit (p = 3); Eqn 3 weights 1/(C(3,k)(3-k)) =
    # 1/3, 1/6, 1/3.  X1: k=0: I(X1;Y) = 0; k=1: I(X1;Y|X2) = 1, I(X1;Y|X3) = 0; k=2: 1.
    # Proposition 6: depth 1 -> 0, depth 2 -> 1/6, depth 3 -> 1/6 + 1/3 = 1/2.
    df = importance_vs_depth(xor_table(2, 1))
    assert list(df.columns) == ["variable", "depth", "importance", "rank"]
    x1 = df[df.variable == "X1"].set_index("depth")["importance"]
    np.testing.assert_allclose(x1.loc[[1, 2, 3]], [0.0, 1 / 6, 1 / 2], atol=1e-12)
    np.testing.assert_allclose(df[df.variable == "X3"].importance, 0.0, atol=1e-12)


def test_pruned_importances_depend_on_irrelevant_variables():
    # Geurts 2016 ("Impact of pruning"): at D < p the K = 1 importances depend on the
    # irrelevant variables. XOR alone at depth 2 (= p) gives 1/2; with one more bit 1/6.
    alone = importance_vs_depth(xor_table(2, 0), [2])
    more = importance_vs_depth(xor_table(2, 1), [2])
    assert alone.importance.iloc[0] == pytest.approx(0.5)
    assert more.importance.iloc[0] == pytest.approx(1 / 6)


@pytest.mark.parametrize("k,semantics", [(1, "id3"), (3, "id3"), (3, "sklearn")])
def test_depth_matches_one_recursion_per_depth(k, semantics):
    # The cumulative by-degree shortcut against exact_importances_path with a list of depths.
    from varimp_core.exact.recursion import exact_importances_path

    table = led_table()
    df = importance_vs_depth(table, max_features=k, k_semantics=semantics)
    ref = exact_importances_path(table, max_features=[k], max_depth=list(range(1, 8)),
                                 k_semantics=semantics)
    np.testing.assert_allclose(df.importance, np.concatenate([r.importances for r in ref]),
                               atol=1e-12)


def test_full_depth_is_theorem2():
    df = importance_vs_depth(led_table(), max_features=4)
    assert df[df.depth == 7].importance.sum() == pytest.approx(LOG2_10, abs=1e-10)


# -- sampled forests ---------------------------------------------------------------------
def test_sampled_converges_to_exact_within_its_standard_error():
    table = led_table()
    sampled = sampled_vs_k(table, [1, 4], n_estimators=400, random_state=3)
    exact = importance_vs_k(table, [1, 4])
    assert list(sampled.columns) == ["variable", "K", "importance", "std", "se",
                                     "n_estimators", "rank"]
    z = (sampled.importance - exact.importance).abs() / sampled.se
    assert (z < 5).all(), z.max()
    assert (sampled.n_estimators == 400).all()


def test_sampled_is_seeded_per_k():
    table = led_table()
    both = sampled_vs_k(table, [1, 3], n_estimators=20, random_state=7)
    alone = sampled_vs_k(table, [3], n_estimators=20, random_state=7)
    np.testing.assert_array_equal(both[both.K == 3].importance.to_numpy(),
                                  alone.importance.to_numpy())
    other = sampled_vs_k(table, [3], n_estimators=20, random_state=8)
    assert not np.array_equal(other.importance.to_numpy(), alone.importance.to_numpy())


def test_sampled_reports_progress():
    calls = []
    sampled_vs_k(led_table(), [1, 2], n_estimators=10, progress=lambda *a: calls.append(a))
    assert calls[-1][0] == calls[-1][1] == 20
    assert "K = 2" in calls[-1][2]


def test_single_tree_has_zero_se():
    df = sampled_vs_k(led_table(), [2], n_estimators=1)
    assert (df.se == 0).all()


# -- ranks, changes, validation ----------------------------------------------------------
def test_rank_ties_are_averaged():
    import pandas as pd

    df = pd.DataFrame({"variable": list("abcd"), "K": 1,
                       "importance": [0.5, 0.5 + 1e-13, 0.2, 0.7]})
    assert rank_importances(df, by="K").tolist() == [2.5, 2.5, 4.0, 1.0]


def test_importance_change_is_zero_at_the_reference():
    df = importance_change(importance_vs_k(led_table(), [1, 3]))
    np.testing.assert_allclose(df[df.K == 1].change, 0.0)
    assert df.attrs["reference"] == 1
    with pytest.raises(ValueError, match="compare"):
        importance_change(importance_vs_k(led_table(), [1, 3]), reference=5)


@pytest.mark.parametrize("call,match", [
    (lambda t: importance_vs_k(t, [0]), "from 1 to"),
    (lambda t: importance_vs_k(t, [8]), "from 1 to"),
    (lambda t: importance_vs_k(t, k_semantics="ranger"), "k_semantics"),
    (lambda t: importance_vs_depth(t, [0]), "max_depth"),
    (lambda t: sampled_vs_k(t, [1], n_estimators=0), "number of trees"),
    (lambda t: sampled_vs_k(t, [1], random_state=-1), "seed"),
    (lambda t: importance_vs_k("led"), "DiscreteTable"),
])
def test_bad_input_raises_a_sentence(call, match):
    with pytest.raises(ValueError, match=match):
        call(led_table())


# -- the exact binary forests' curves (issue #15) ---------------------------------
@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_binary_curves_match_the_brute_force_oracle_at_every_k(method):
    """Imp-vs-K of scikit-learn's binary forests on a tiny numeric table, K = 1..p."""
    import pandas as pd
    from binary_oracle import brute_force_mdi
    from varimp_core.api import load_data
    from varimp_core.studies.masking import masking_curves

    X = np.array([[0.25, 1.0, -2.0], [1.75, 0.0, 0.5], [2.25, 3.5, 0.5], [0.25, 2.0, 1.25],
                  [4.0, 0.0, -1.0], [3.0, 1.5, 2.0], [1.0, 3.0, 0.0]])   # exact in float32
    y = np.array([0, 1, 1, 0, 1, 0, 1])
    data = load_data(data=pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "Y": y}),
                     target="Y")
    seen = []
    curves = masking_curves(data, method=method, progress=lambda *a: seen.append(a))
    assert curves.x == "K" and curves.variables == ("a", "b", "c")
    for K in (1, 2, 3):
        want = brute_force_mdi(X, y, kind=method[-2:], max_features=K).sum(axis=1)
        got = curves.frame[curves.frame.K == K].set_index("variable").importance
        np.testing.assert_allclose(got.loc[["a", "b", "c"]], want, rtol=0, atol=1e-12)
    # every input vector is distinct: fully grown trees sum to H(Y) (Theorem 2 analogue)
    assert curves.information == pytest.approx(-(3 / 7) * math.log2(3 / 7)
                                               - (4 / 7) * math.log2(4 / 7), abs=1e-12)
    assert [s[:2] for s in seen if s[1] == 3] == [(0, 3), (1, 3), (2, 3)]


def test_binary_curves_refuse_too_many_nodes_and_depth_and_multiway_on_numbers():
    from varimp_core.studies.masking import masking_curves
    from varimp_core.studies.masking_copy import masking_data

    with pytest.raises(ValueError, match=r"^The exact Extra-Trees value \(exact-et\) would "
                                         r"need about .* distinct nodes on these 200 rows"):
        masking_curves(masking_data("gauss:samples=200"), method="exact-et")
    with pytest.raises(ValueError, match="drawn against K"):
        masking_curves(masking_data("gauss"), method="exact-rf", x="depth")
    with pytest.raises(ValueError, match="continuous: choose exact-rf or exact-et"):
        masking_curves(masking_data("gauss"))
    with pytest.raises(ValueError, match="no irrelevant bits or noisy copy"):
        masking_data("gauss", irrelevant=1)
