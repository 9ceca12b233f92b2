"""One verdict per variable on a sample (varimp_core.studies.verdicts).

Expected values come from theory or from the construction of the tables
(``tests/_verdict_tables.py``), never from the code's own output.
"""
import json
import math

import numpy as np
import pandas as pd
import pytest

import varimp_core as vc
from varimp_core.data.table import DiscreteTable
from varimp_core.studies.verdicts import (MIN_CELL_ROWS, PROCEDURE_NAME, VerdictResult,
                                          importance_verdicts, maxt_adjusted, sparse_variables)

from _verdict_tables import IRRELEVANT, RELEVANT, known_truth, pure_noise

ALPHA = 0.05


# -- the maxT adjustment itself ------------------------------------------------------------
def test_one_variable_gets_its_permutation_p_value():
    """With one variable, maxT is the plain permutation p-value (1 + #{null >= obs})/(R + 1):
    standardising is the same increasing map for the observed and the null values."""
    rng = np.random.default_rng(1)
    null = rng.normal(size=(39, 1))
    for obs in (-3.0, 0.0, 0.3, 5.0):
        p, _ = maxt_adjusted([obs], null)
        assert p[0] == (1 + int((null[:, 0] >= obs).sum())) / 40


def test_step_down_is_between_marginal_and_single_step():
    """Adjusted p >= the variable's own permutation p-value, <= the single-step maxT p-value
    (max over every variable), and non-decreasing along decreasing t."""
    rng = np.random.default_rng(2)
    null = rng.normal(size=(99, 6)) * [1, 2, 3, 1, 1, 5]
    obs = np.array([4.0, 1.0, 9.0, -1.0, 0.5, 3.0])
    p, t = maxt_adjusted(obs, null)
    every = np.vstack([obs, null])
    T = (every - every.mean(0)) / every.std(0, ddof=1)
    marginal = (1 + (T[1:] >= T[0]).sum(0)) / 100
    single = (1 + (T[1:].max(1)[:, None] >= T[0]).sum(0)) / 100
    np.testing.assert_allclose(t, T[0])
    assert np.all(p >= marginal - 1e-12) and np.all(p <= single + 1e-12)
    order = np.argsort(-t)
    assert np.all(np.diff(p[order]) >= 0)


def test_constant_variable_is_never_significant():
    p, t = maxt_adjusted([0.0, 2.0], np.column_stack([np.zeros(19), np.linspace(-1, 1, 19)]))
    assert t[0] == 0 and p[0] == 1.0 and p[1] == 1 / 20


def test_maxt_controls_the_familywise_error_under_exchangeability():
    """Rows of (observed, R nulls) exchangeable, variables correlated: P(min p <= alpha) is at
    most alpha (Westfall & Young 1993) -- within 3 binomial standard errors over 2000 draws."""
    rng = np.random.default_rng(3)
    n_sim, R, p = 2000, 19, 5
    cov = 0.6 + 0.4 * np.eye(p)
    L = np.linalg.cholesky(cov)
    hits = 0
    for _ in range(n_sim):
        every = rng.normal(size=(R + 1, p)) @ L.T * [1, 2, 3, 4, 5]
        padj, _ = maxt_adjusted(every[0], every[1:])
        hits += padj.min() <= ALPHA
    se = math.sqrt(ALPHA * (1 - ALPHA) / n_sim)
    assert hits / n_sim <= ALPHA + 3 * se


# -- known truth ---------------------------------------------------------------------------
def _check_truth(v, relevant=RELEVANT, irrelevant=IRRELEVANT):
    verdict = v.verdict_map()
    wrong = {c: verdict[c] for c in relevant if verdict[c] != "relevant"}
    wrong.update({c: verdict[c] for c in irrelevant if verdict[c] != "chance"})
    assert not wrong, (wrong, v.to_frame().to_string())


@pytest.mark.parametrize("seed", [0])
def test_exact_on_a_sample_gets_every_verdict_right(seed):
    """Classification, exact K = 1 importances (depth 3) on 480 rows: the relevant numeric
    columns, the 32-level relevant category, the XOR pair, the near-copy and the leak are
    relevant; the 32-level irrelevant category, the weekday and the numeric noise are at
    chance."""
    data = vc.load_data(data=known_truth(seed), target="y")
    v = importance_verdicts(data, method="exact", max_depth=3, n_permutations=19,
                            random_state=seed)
    _check_truth(v)
    assert [w["column"] for w in v.warnings] == ["leak"] and v.set_aside == ("leak",)
    assert v.procedure["name"] == PROCEDURE_NAME and v.procedure["level"] == ALPHA
    assert v.procedure["n_permutations"] == 19 and v.procedure["set_aside"] == ["leak"]
    # the plug-in values of the irrelevant columns are positive (biased); above chance is not
    for c in IRRELEVANT:
        j = v.variables.index(c)
        assert v.importances[j] > 0 and v.above_chance[j] < v.importances[j]


@pytest.mark.parametrize("seed, task", [(0, "classification"), (2, "regression")])
def test_sklearn_extra_trees(seed, task):
    """scikit-learn's extra-trees (depth 5): entropy on classes, variance on a numeric y."""
    data = vc.load_data(data=known_truth(seed, task=task), target="y")
    assert data.task == task
    v = importance_verdicts(data, method="sklearn-et", max_depth=5, n_estimators=40,
                            n_permutations=19, random_state=seed)
    _check_truth(v)
    assert [w["column"] for w in v.warnings] == ["leak"]


def _xor_table(seed, n=400):
    """y = a XOR b with 10% label noise: a and b are each independent of y (for either value
    of a, a XOR b is 0 or 1 with probability 1/2), jointly they carry 1 - H(0.1) bits."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2, n), rng.integers(0, 2, n)
    y = np.where(rng.random(n) < 0.9, a ^ b, 1 - (a ^ b))
    return pd.DataFrame({"a": a, "b": b, "weekday": rng.integers(0, 7, n),
                         "branch": [f"b{v:02d}" for v in rng.integers(0, 32, n)], "y": y})


@pytest.mark.parametrize("method, options", [
    ("forest", {"max_depth": 2, "n_estimators": 50}),
    ("sklearn-et", {"max_depth": 3, "n_estimators": 30}),
    ("exact", {}),
])
def test_the_forests_call_an_interaction_pair_relevant(method, options):
    data = vc.load_data(data=_xor_table(6), target="y")
    v = importance_verdicts(data, method=method, n_permutations=19, random_state=0, **options)
    assert v.verdict_map() == {"a": "relevant", "b": "relevant", "weekday": "chance",
                               "branch": "chance"}, v.to_frame().to_string()


def test_false_positive_rate_on_pure_noise():
    """Y independent of every input: the share of tables with at least one "relevant" verdict
    is at most alpha + 3 binomial standard errors (FWER control)."""
    n_tables = 150
    hits = 0
    for seed in range(n_tables):
        data = vc.load_data(data=pure_noise(seed), target="y")
        v = importance_verdicts(data, method="exact", n_permutations=19, random_state=seed,
                                leaks=False)
        hits += "relevant" in v.verdicts
        assert "undecided" not in v.verdicts     # 120 rows, at most 12 cells: decidable
    se = math.sqrt(ALPHA * (1 - ALPHA) / n_tables)
    assert hits / n_tables <= ALPHA + 3 * se, hits


# -- undecided -----------------------------------------------------------------------------
def test_undecided_when_r_is_too_small_or_the_table_too_sparse():
    rng = np.random.default_rng(4)
    n = 100
    a = rng.integers(0, 2, n)
    frame = pd.DataFrame({"a": a, "many": [f"m{v}" for v in rng.integers(0, 40, n)],
                          "y": np.where(rng.random(n) < 0.9, a, 1 - a)})
    data = vc.load_data(data=frame, target="y")
    per_cell, sparse = sparse_variables(data)
    levels = len(np.unique(frame["many"]))
    assert per_cell[1] == pytest.approx(n / (levels * 2)) and sparse.tolist() == [False, True]
    assert per_cell[1] < MIN_CELL_ROWS
    v = importance_verdicts(data, method="exact", n_permutations=39, random_state=0)
    assert v.verdict_map() == {"a": "relevant", "many": "undecided"}
    # R + 1 = 10 < 1/alpha = 20: no p-value can reach alpha, nothing is decided
    v = importance_verdicts(data, method="exact", n_permutations=9, random_state=0)
    assert set(v.verdicts) == {"undecided"} and np.all(v.p_adjusted >= 0.1)


# -- exact distributions -------------------------------------------------------------------
def test_an_exact_distribution_is_judged_by_its_exact_value():
    """XOR with one irrelevant bit (Louppe et al. 2013): no test, no undecided."""
    data = vc.load_data(problem="xor:relevant=2,irrelevant=1")
    v = importance_verdicts(data, method="exact")
    assert v.exact and v.verdicts == ("relevant", "relevant", "chance")
    assert v.procedure["n_permutations"] == 0 and v.procedure["level"] is None
    assert np.all(np.isnan(v.p_adjusted)) and np.all(v.above_chance == v.importances)
    sample = vc.load_data(problem="xor:relevant=2,irrelevant=1", n_samples=400)
    v = importance_verdicts(sample, method="exact", n_permutations=19)
    assert not v.exact and v.verdicts == ("relevant", "relevant", "chance")


# -- reproducibility and serialisation -------------------------------------------------------
def test_same_seed_same_result_and_a_json_round_trip():
    data = vc.load_data(data=known_truth(5, n=200), target="y", exclude=["leak"])
    kw = dict(method="forest", n_estimators=10, max_depth=3, n_permutations=9)
    one = importance_verdicts(data, random_state=7, **kw)
    two = importance_verdicts(data, random_state=7, **kw)
    other = importance_verdicts(data, random_state=8, **kw)
    pd.testing.assert_frame_equal(one.to_frame(), two.to_frame())
    assert not np.array_equal(one.importances, other.importances)
    back = VerdictResult.from_dict(json.loads(json.dumps(one.to_dict())))
    pd.testing.assert_frame_equal(back.to_frame(), one.to_frame())
    assert back.procedure == one.procedure and back.verdicts == one.verdicts
    frame = one.to_frame()
    assert list(frame.columns[:6]) == ["variable", "importance", "null_mean", "above_chance",
                                       "p_adjusted", "verdict"]
    np.testing.assert_allclose(frame["above_chance"], frame["importance"] - frame["null_mean"])
    # the observed values are those compute_importances gives with the same seed
    r = vc.compute_importances(data, method="forest", n_estimators=10, max_depth=3,
                               random_state=7)
    np.testing.assert_array_equal(one.importances, r.importances)


def test_a_discrete_table_and_bad_arguments():
    t = DiscreteTable.from_codes(np.array([[0], [1]] * 20), np.array([0, 1] * 20))
    v = importance_verdicts(t, method="exact", n_permutations=19)
    assert v.verdicts == ("relevant",)
    with pytest.raises(ValueError, match="alpha"):
        importance_verdicts(t, alpha=1.5)
    with pytest.raises(ValueError, match="method"):
        importance_verdicts(t, method="nope")


@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_the_exact_binary_methods_permute_the_target_they_read(method):
    """exact-rf/-et read the numeric rows (X_numeric, y), not the table: their null must
    permute that y. Permuted, a (y with 10% flipped) loses its information, so its null
    values fall below the observed one; b (independent) stays at chance."""
    rng = np.random.default_rng(0)
    n = 60
    a, b = rng.integers(0, 2, n), rng.integers(0, 3, n)
    y = np.where(rng.random(n) < 0.9, a, 1 - a)
    data = vc.load_data(data=pd.DataFrame({"a": a, "b": b, "y": y}), target="y")
    null = vc.permutation_null(data, n_permutations=19, method=method)
    assert np.all(null.null[:, 0] < null.observed[0])
    v = importance_verdicts(data, method=method, n_permutations=19)
    assert v.verdict_map() == {"a": "relevant", "b": "chance"}


# -- a smaller test on large data ----------------------------------------------------------
def test_verdict_size_lowers_trees_first_then_r():
    from varimp_core.studies.verdicts import verdict_size
    # hand arithmetic: (R + 1) x trees x rows <= 2e7
    assert verdict_size(19, 100, 1_000) == (19, 100)           # 20 x 100 x 1e3 = 2e6
    assert verdict_size(19, 2_000, 20_000) == (19, 50)         # 2e7 / (20 x 2e4) = 50
    assert verdict_size(39, 2_000, 20_000) == (39, 25)         # 2e7 / (40 x 2e4) = 25
    assert verdict_size(99, 500, 100_000) == (19, 25)          # 25 trees: 2e7/2.5e6 - 1 = 7 < 19
    assert verdict_size(99, 10, 10_000) == (99, 10)            # never more trees than asked
    assert verdict_size(5, 10, 10) == (19, 10)                 # never R < 19


def test_fewer_test_trees_keep_the_bars_and_the_truth():
    """The test grown on 25-tree forests still gets the known truth; the reported plug-in
    importances are the method's own 60-tree forest (same seed: the same bars).  The leak is
    left out: with it, the other inputs' numbers come from the table without it."""
    data = vc.load_data(data=known_truth(0).drop(columns="leak"), target="y")
    v = importance_verdicts(data, method="sklearn-et", max_depth=5, n_estimators=60,
                            n_permutations=19, random_state=0, test_estimators=25)
    _check_truth(v, relevant=tuple(c for c in RELEVANT if c != "leak"))
    bars = vc.compute_importances(data, method="sklearn-et", max_depth=5, n_estimators=60,
                                  random_state=0).importances
    np.testing.assert_array_equal(v.importances, bars)
    assert v.procedure["test_estimators"] == 25 and v.parameters["test_estimators"] == 25
