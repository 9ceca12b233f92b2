"""Relevance classes on a sample: G-tests, a level, a correction and a sparse rule (issue 24)."""

import json
import math

import numpy as np
import pytest
from scipy.stats import chi2

from varimp_core.__main__ import main
from varimp_core.api import load_data
from varimp_core.data.table import DiscreteTable
from varimp_core.exact.relevance import RelevanceResult, g_test, relevance
from varimp_core.problems.registry import get_problem

SPECS = ["led", "xor:relevant=2,irrelevant=1", "sym", "led:irrelevant=2"]


def _exact(spec):
    return relevance(get_problem(spec).exact_table())


@pytest.mark.parametrize("spec", SPECS)
def test_large_samples_give_the_exact_classes(spec):
    """N = 20,000 seeded draws: every test is adequate and the classes are the population's."""
    exact = _exact(spec)
    for seed in (0, 1):
        r = relevance(load_data(problem=spec, n_samples=20_000, random_state=seed).table)
        assert r.test is not None and all(r.test["adequate"])
        assert r.relevance == exact.relevance, (spec, seed)


@pytest.mark.parametrize("spec", SPECS)
def test_small_samples_say_undecided_rather_than_a_wrong_class(spec):
    """Never "strong" for an exactly weak or irrelevant variable; never weak or irrelevant for
    an exactly strong one; never irrelevant for a relevant one; and at N = 30 on LED every
    strong test is too sparse to be trusted, so nothing is called strong there."""
    exact = _exact(spec).relevance
    undecided = 0
    for n in (30, 100, 300):
        for seed in range(4):
            got = relevance(load_data(problem=spec, n_samples=n, random_state=seed).table)
            for e, g in zip(exact, got.relevance):
                undecided += g == "undecided"
                if e in ("weak", "irrelevant"):
                    assert g != "strong", (spec, n, seed, got.relevance)
                if e == "strong":
                    assert g in ("strong", "undecided"), (spec, n, seed, got.relevance)
                if e != "irrelevant":
                    assert g != "irrelevant", (spec, n, seed, got.relevance)
    if spec.startswith("led"):
        assert undecided > 0
        tiny = relevance(load_data(problem=spec, n_samples=30, random_state=0).table)
        assert "strong" not in tiny.relevance and not any(tiny.test["adequate"])


def test_g_statistic_and_df_by_hand():
    """A 2 x 2 x 2 table: X (tested), Y, and B (one binary input), 54 rows.

    Stratum B = 0 (30 rows): counts (x, y) = (0,0) 10, (0,1) 5, (1,0) 5, (1,1) 10; every
    expected count is 15 * 15 / 30 = 7.5, so
        G_0 = 2 [2 * 10 ln(10/7.5) + 2 * 5 ln(5/7.5)] = 4 (10 ln 4/3 + 5 ln 2/3) = 3.397980...
    Stratum B = 1 (24 rows): (0,0) 8, (0,1) 8, (1,0) 4, (1,1) 4: X and Y independent, G_1 = 0.
    df = (2-1)(2-1) + (2-1)(2-1) = 2, and for 2 degrees of freedom P(chi2 >= G) = exp(-G/2)
    = 0.18288...  Cells 2 * 2 * 2 = 8, average expected count 54 / 8 = 6.75 >= 5: adequate.
    """
    counts = {(0, 0, 0): 10, (0, 1, 0): 5, (1, 0, 0): 5, (1, 1, 0): 10,
              (0, 0, 1): 8, (0, 1, 1): 8, (1, 0, 1): 4, (1, 1, 1): 4}
    X = np.array([[x, b] for (x, y, b) in counts])
    y = np.array([y for (x, y, b) in counts])
    t = DiscreteTable(X, y, np.array(list(counts.values()), float), ("X", "B"))
    res = g_test(t, 0, 0b10)
    g = 4 * (10 * math.log(4 / 3) + 5 * math.log(2 / 3))
    assert g == pytest.approx(3.397980, abs=1e-6)
    assert res["statistic"] == pytest.approx(g, rel=1e-12)
    assert res["df"] == 2 and res["p_value"] == pytest.approx(math.exp(-g / 2), rel=1e-9)
    assert res["adequate"] and res["expected"] == pytest.approx(6.75)
    # Stratum B = 1 with Y constant (12 rows, y = 0): it adds no degree of freedom
    counts2 = {k: v for k, v in counts.items() if k[2] == 0}
    counts2.update({(0, 0, 1): 6, (1, 0, 1): 6})
    X2 = np.array([[x, b] for (x, y, b) in counts2])
    t2 = DiscreteTable(X2, np.array([y for (x, y, b) in counts2]),
                       np.array(list(counts2.values()), float), ("X", "B"))
    res2 = g_test(t2, 0, 0b10)
    assert res2["df"] == 1 and res2["statistic"] == pytest.approx(g, rel=1e-12)
    assert res2["p_value"] == pytest.approx(math.erfc(math.sqrt(g / 2)), rel=1e-9)
    assert res2["p_value"] == pytest.approx(chi2.sf(g, 1), rel=1e-12)


def test_pure_noise_is_rarely_called_relevant():
    """Inputs independent of Y: over 150 seeds the fraction of variables called strong or
    weak stays within alpha = 0.05 plus three binomial standard errors."""
    rng = np.random.default_rng(2024)
    calls, total = {"strong": 0, "weak": 0, "irrelevant": 0, "undecided": 0}, 0
    seeds, p, n = 150, 3, 600
    for _ in range(seeds):
        X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 3, n), rng.integers(0, 2, n)])
        t = DiscreteTable.from_codes(X, rng.integers(0, 2, n))
        for c in relevance(t).relevance:
            calls[c] += 1
        total += p
    margin = 3 * math.sqrt(0.05 * 0.95 / total)
    assert calls["strong"] / total <= 0.05 + margin
    assert calls["weak"] / total <= 0.05 + margin
    assert (calls["strong"] + calls["weak"]) / total <= 0.05 + margin
    assert calls["irrelevant"] / total >= 0.9


def test_exact_tables_and_a_given_tol_keep_the_threshold():
    exact = _exact("xor:relevant=2,irrelevant=1")
    assert exact.test is None and "test" not in exact.to_dict()
    sample = load_data(problem="xor:relevant=2,irrelevant=1", n_samples=500, random_state=0).table
    assert relevance(sample, tol=0.01).test is None
    with pytest.raises(ValueError, match="alpha"):
        relevance(sample, alpha=1.5)


def test_result_round_trips_and_the_cli_json_states_the_test(capsys):
    table = load_data(problem="led", n_samples=300, random_state=0).table
    r = relevance(table)
    assert RelevanceResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r
    code = main(["relevance", "--problem", "led", "--n-samples", "300", "--format", "json"])
    d = json.loads(capsys.readouterr().out)
    assert code in (0, None)
    assert set(d) >= {"variables", "relevance", "degree", "markov_boundary", "minimal_boundary",
                      "boundary_unique", "test"}
    assert d["test"]["name"] == "G-test" and d["test"]["level"] == 0.05
    assert "Holm" in d["test"]["correction"] and "Bonferroni" in d["test"]["correction"]
    assert set(d["relevance"]) <= {"strong", "weak", "irrelevant", "undecided"}
    assert len(d["test"]["p_value"]) == 7


def test_level_by_level_tests_equal_g_test_one_by_one():
    """relevance() finds every (m, B) test level by level; each equals g_test called alone."""
    from varimp_core.exact.information import subset_entropies
    from varimp_core.exact.relevance import _all_tests

    rng = np.random.default_rng(11)
    n = 80
    X = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 3, n), rng.integers(0, 4, n)])
    y = (X[:, 0] + (X[:, 1] == 2) + rng.integers(0, 2, n)) % 3
    t = DiscreteTable.from_codes(X, y)
    fast = _all_tests(t, subset_entropies(t))
    assert len(fast) == 3 * 4
    for (m, mask), got in fast.items():
        one = g_test(t, m, mask)
        for key in ("df", "adequate", "strata"):
            assert got[key] == one[key], (m, mask, key)
        assert got["statistic"] == pytest.approx(one["statistic"], abs=1e-9)
        assert got["p_value"] == pytest.approx(one["p_value"], abs=1e-12)


def test_many_inputs_cap_the_weak_tests_and_leave_irrelevance_undecided(monkeypatch):
    """Beyond MAX_TESTS the weak tests stop at a subset size: relevance is still found, and
    irrelevance (which needs every B) is left undecided, never asserted."""
    import varimp_core.exact.relevance as rel

    table = load_data(problem="xor:relevant=2,irrelevant=2", n_samples=4000,
                      random_state=0).table
    full = relevance(table)
    assert full.relevance == ("strong", "strong", "irrelevant", "irrelevant")
    assert full.test["max_subset_size"] is None
    assert full.test["relevant"] == [True, True, False, False]
    monkeypatch.setattr(rel, "MAX_TESTS", 4 + 4 * 3)   # |B| <= 1 only
    capped = relevance(table)
    assert capped.test["max_subset_size"] == 1
    assert capped.relevance == ("strong", "strong", "undecided", "undecided")
    assert capped.test["relevant"] == [True, True, None, None]


def test_figure_and_sentences_show_undecided_variables():
    from varimp_core.plots.selection import make_relevance_figure
    from varimp_core.plots.selection_captions import relevance_sentences

    r = relevance(load_data(problem="led", n_samples=300, random_state=0).table)
    assert set(r.relevance) == {"undecided"}
    fig = make_relevance_figure(r)
    assert [t.meta for t in fig.data] == ["class-undecided"]
    assert list(fig.data[0].x) == list(r.variables)
    how, classes = relevance_sentences(r, exact=False, n=300)[:2]
    assert "G-test" in how and "0.05" in how and "Holm" in how
    assert "undecided: X1" in classes and "are relevant: a test rejects" in classes


def test_cli_alpha_and_tol(capsys):
    args = ["relevance", "--problem", "xor:relevant=2,irrelevant=1", "--n-samples", "2000",
            "--format", "json"]
    main(args + ["--alpha", "0.01"])
    d = json.loads(capsys.readouterr().out)
    assert d["test"]["level"] == 0.01 and d["relevance"] == ["strong", "strong", "irrelevant"]
    main(args + ["--tol", "0.01"])
    assert "test" not in json.loads(capsys.readouterr().out)   # the threshold, as before
    assert main(args + ["--alpha", "2"]) == 2
    assert "alpha must be a level" in capsys.readouterr().err


def test_sampled_copies_are_weak_and_noisy_led_converges():
    """X2 a copy of X1, Y = X1: given the copy, X1 is constant in every stratum (df = 0, no
    evidence against independence), so both are weak, as in the exact table; LED with 10 %
    noise (every segment strongly relevant) needs more rows: undecided at 2,000, exact at
    20,000."""
    rng = np.random.default_rng(8)
    x1, x3 = rng.integers(0, 2, 2000), rng.integers(0, 2, 2000)
    t = DiscreteTable.from_codes(np.column_stack([x1, x1, x3]), x1)
    r = relevance(t)
    assert r.relevance == ("weak", "weak", "irrelevant") and r.degree == (0, 0, None)
    assert r.test["df_values"][:2] == [0, 0]
    exact = _exact("led:noise=0.1").relevance
    assert set(relevance(load_data(problem="led:noise=0.1", n_samples=2000,
                                   random_state=0).table).relevance) == {"undecided"}
    assert relevance(load_data(problem="led:noise=0.1", n_samples=20_000,
                               random_state=0).table).relevance == exact


# -- the Markov boundary on a sample: G-tests of blankets -----------------------------------
@pytest.mark.parametrize("spec", ["led", "xor:relevant=2,irrelevant=1", "sym",
                                  "led:irrelevant=2"])
def test_large_samples_give_the_exact_markov_boundary(spec):
    """N = 20,000 draws: every blanket test adequate, the boundary the population's (these
    distributions' boundaries are unique)."""
    exact = _exact(spec)
    for seed in (0, 1):
        r = relevance(load_data(problem=spec, n_samples=20_000, random_state=seed).table)
        tested = r.test["boundary"]
        assert tested["decided"] and tested["sparse"] == 0, (spec, seed, tested)
        assert set(r.minimal_boundary) == set(exact.minimal_boundary), (spec, seed)


def test_a_sparse_sample_leaves_the_boundary_undecided():
    """LED at N = 200: 7 binary inputs and 10 classes make 1,280 cells, so every blanket test
    of a smaller set has fewer than 5 rows per cell; no boundary is claimed, and the caption
    and the command line say so."""
    from varimp_core.plots.selection_captions import relevance_sentences

    r = relevance(load_data(problem="led", n_samples=200, random_state=0).table)
    assert r.test["boundary"]["decided"] is False and r.minimal_boundary == ()
    assert r.markov_boundary is None
    text = " ".join(relevance_sentences(r, exact=False, n=200))
    assert "Markov boundary: cannot be decided from 200 rows" in text
    again = RelevanceResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert again.test["boundary"]["decided"] is False


def test_noise_columns_stay_out_of_the_tested_boundary():
    """y copies x on 85 % of the rows; a 7-level weekday and a 3-level code are drawn apart
    from everything.  The boundary is {x} by construction (the old plug-in threshold, capped
    at 0.05 bits, let a weekday in on real data)."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        n = 3000
        x = rng.integers(0, 2, n)
        y = np.where(rng.random(n) < 0.85, x, 1 - x)
        X = np.column_stack([x, rng.integers(0, 7, n), rng.integers(0, 3, n)])
        t = DiscreteTable.from_codes(X, y, variables=("x", "weekday", "code"))
        r = relevance(t)
        assert r.test["boundary"]["decided"], seed
        assert r.minimal_boundary == ("x",), (seed, r.minimal_boundary)
