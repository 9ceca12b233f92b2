"""Chance levels of exact importances on a sample: analytic bias, permutation band, p-values."""

import json
import math

import numpy as np
import pytest

from varimp_core import ChanceLevels, chance_levels
from varimp_core.data.table import DiscreteTable
from varimp_core.studies.chance import band_permutations
from varimp_core.studies.nulls import expected_irrelevant_importance

LN2 = math.log(2)


def _labels(n):
    return tuple(str(i) for i in range(n))


def _sample(X, y, n_levels, n_classes):
    X = np.asarray(X).reshape(len(y), -1)
    return DiscreteTable.from_codes(X, y, x_labels=tuple(_labels(n) for n in n_levels),
                                    y_labels=_labels(n_classes))


def _plugin_mi(x, y, given=None):
    """Plug-in I(X;Y|G) in bits from per-sample codes, written here from the counts."""
    g = np.zeros_like(x) if given is None else given

    def h(*cols):
        key = np.ravel_multi_index(cols, [int(c.max()) + 1 for c in cols])
        c = np.bincount(key)
        c = c[c > 0] / len(key)
        return float(-(c * np.log2(c)).sum())

    return h(x, g) + h(y, g) - h(x, y, g) - h(g)


# -- the analytic bias against a simulation -----------------------------------------
def test_bias_of_one_term_matches_a_simulation():
    """Independent X (4 levels) and Y (3 classes), N = 300: the mean plug-in I(X;Y) over
    many samples is (|Y|-1)(|X|-1)/(2N ln 2) (Miller-Madow), within its standard error."""
    N, draws, rng = 300, 3000, np.random.default_rng(0)
    formula = (3 - 1) * (4 - 1) / (2 * N * LN2)
    sims = np.array([_plugin_mi(rng.integers(0, 4, N), rng.integers(0, 3, N))
                     for _ in range(draws)])
    se = sims.std(ddof=1) / math.sqrt(draws)
    assert abs(sims.mean() - formula) < 3 * se
    # the population: X and Y uniform and independent (exact); one input, so Eqn 3 has one term
    X, y = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    population = DiscreteTable(X.reshape(-1, 1), y.ravel(), np.full(12, 1 / 12), ("X",),
                               x_labels=(_labels(4),), y_labels=_labels(3), exact=True)
    assert expected_irrelevant_importance(population, N)[0] == pytest.approx(formula)


def test_bias_of_a_conditional_term_matches_a_simulation():
    """X1 uniform on {0,1,2}, Y = X1 when X1 < 2 and a fair coin when X1 = 2, X2 (3 levels)
    irrelevant.  Eqn 3 (p = 2, K = 1): Imp(X2) = I(X2;Y)/2 + I(X2;Y|X1)/2.  Only the root
    and the cell X1 = 2 are impure, one degree of freedom each times |X2| - 1 = 2:
    E = (1/2 + 1/2) * 2/(2N ln 2) = 1/(N ln 2)."""
    N, draws, rng = 300, 3000, np.random.default_rng(1)
    hand = 1 / (N * LN2)
    sims = []
    for _ in range(draws):
        x1 = rng.integers(0, 3, N)
        y = np.where(x1 < 2, x1, rng.integers(0, 2, N))
        x2 = rng.integers(0, 3, N)
        sims.append(_plugin_mi(x2, y) / 2 + _plugin_mi(x2, y, x1) / 2)
    sims = np.array(sims)
    se = sims.std(ddof=1) / math.sqrt(draws)
    assert abs(sims.mean() - hand) < 3 * se
    rows = [(a, b, c) for a in range(3) for b in range(3) for c in ((a,) if a < 2 else (0, 1))]
    X = np.array([[a, b] for a, b, _ in rows])
    w = np.array([1 / 9 if a < 2 else 1 / 18 for a, _, _ in rows])
    population = DiscreteTable(X, np.array([c for *_, c in rows]), w, ("X1", "X2"),
                               x_labels=(_labels(3), _labels(3)), y_labels=_labels(2),
                               exact=True)
    assert expected_irrelevant_importance(population, N)[1] == pytest.approx(hand)


def test_the_cap_is_the_information_a_cell_can_hold():
    """Two rows, x = 0, 1 (of 40 levels), y = 0, 1: the first-order bias 39/(4 ln 2) = 14 bits
    exceeds H(Y) = 1 bit, all a variable can explain; capped, the level is H(Y)."""
    t = _sample([0, 1], [0, 1], [40], 2)
    assert expected_irrelevant_importance(t, 2)[0] == pytest.approx(39 / (4 * LN2))
    assert expected_irrelevant_importance(t, 2, capped=True)[0] == pytest.approx(1.0)


# -- permutation band and p-values ----------------------------------------------------
def _relevant_and_noise(seed=0, n=300):
    rng = np.random.default_rng(seed)
    x1, x2 = rng.integers(0, 2, n), rng.integers(0, 12, n)
    y = np.where(rng.random(n) < 0.85, x1, 1 - x1)            # x1 relevant, x2 noise
    return _sample(np.column_stack([x1, x2]), y, [2, 12], 2)


def test_relevant_input_has_a_small_p_value_and_noise_a_large_one():
    c = chance_levels(_relevant_and_noise(), n_permutations=49)
    assert c.n_permutations == 49
    assert c.p_values[0] == pytest.approx(1 / 50)     # above all 49 nulls: the smallest p
    assert c.p_values[1] > 0.05
    low, high = c.band
    assert c.observed[0] > high[0] and (low <= high).all()
    assert c.observed[0] > c.analytic[0]
    assert c.at_chance.tolist() == [False, True]
    assert "Not distinguishable from chance: X2." in c.sentences()


def test_p_values_of_an_irrelevant_input_are_roughly_uniform():
    """Y independent of X: by exchangeability the permutation p-value is uniform on
    {1, ..., R+1}/(R+1) (ties only push it up), mean (R+2)/(2(R+1)); and P(p <= 0.05)
    = 1/(R+1) = 0.05 at R = 19."""
    R, runs, rng = 19, 60, np.random.default_rng(3)
    p = []
    for _ in range(runs):
        t = _sample(rng.integers(0, 5, 80), rng.integers(0, 2, 80), [5], 2)
        p.append(chance_levels(t, n_permutations=R, random_state=int(rng.integers(1 << 30)))
                 .p_values[0])
    p = np.array(p)
    mean = (R + 2) / (2 * (R + 1))
    sd = math.sqrt(((R + 1) ** 2 - 1) / 12) / (R + 1)   # discrete uniform on R+1 values
    assert abs(p.mean() - mean) < 3 * sd / math.sqrt(runs)
    assert (p <= 0.05).mean() < 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)


# -- nearly deterministic plug-in distributions ---------------------------------------------
def test_all_distinct_rows_get_the_nearly_deterministic_sentence():
    rng = np.random.default_rng(4)
    n = 60
    codes = rng.permutation(30 * 30)[:n]            # 60 distinct (a, b) pairs
    X = np.column_stack([codes // 30, codes % 30])
    t = _sample(X, rng.integers(0, 2, n), [30, 30], 2)
    c = chance_levels(t, n_permutations=19)
    assert c.distinct_inputs == n and c.near_deterministic
    # every row its own cell: the plug-in H(Y|X) is 0, so I(X;Y) = H(Y)
    assert c.information == pytest.approx(c.output_entropy)
    text = " ".join(c.sentences())
    assert "nearly deterministic" in text and "MDI-oob" in text and "Measures page" in text
    few = chance_levels(_relevant_and_noise(), n_permutations=19)
    assert not few.near_deterministic
    assert "nearly deterministic" not in " ".join(few.sentences())


# -- size rule, refusals, settings ---------------------------------------------------------
def test_large_tables_get_no_band_and_say_why():
    rng = np.random.default_rng(5)
    t = _sample(rng.integers(0, 5, (2000, 12)), rng.integers(0, 3, 2000), [5] * 12, 3)
    assert band_permutations(t, max_features=3) == 0
    c = chance_levels(t, max_features=3, max_depth=2, n_permutations=0, observed=np.zeros(12))
    assert c.band is None and c.p_values is None and c.analytic is None
    text = " ".join(c.sentences())
    assert "No permutation band" in text and "No analytic chance level" in text


def test_small_tables_get_the_full_band():
    small = _relevant_and_noise()
    assert band_permutations(small) == 99        # a tiny table: the full R


def test_exact_distributions_are_refused_with_a_sentence():
    t = DiscreteTable(np.array([[0], [1]]), np.array([0, 1]), np.array([0.5, 0.5]), ("X",),
                      exact=True)
    with pytest.raises(ValueError, match="exact distribution"):
        chance_levels(t)


def test_json_round_trip():
    for c in (chance_levels(_relevant_and_noise(), n_permutations=19),
              chance_levels(_relevant_and_noise(), n_permutations=0, criterion="gini")):
        back = ChanceLevels.from_dict(json.loads(json.dumps(c.to_dict())))
        assert back.variables == c.variables and back.n_samples == c.n_samples
        np.testing.assert_array_equal(back.observed, c.observed)
        assert back.sentences() == c.sentences()
        assert back.table_rows() == c.table_rows()
        assert (back.analytic is None) == (c.analytic is None)
