"""Entropies over all subsets: dense and sparse paths, direct CMI, plug-in bias."""

import math

import numpy as np
import pytest

from _tables import led_table
from varimp_core.exact.information import (_entropies_dense, _entropies_sparse,
                                           conditional_mutual_information, entropy_of_counts,
                                           mask_of, output_entropy, plugin_bias, subset_entropies)
from varimp_core.data.table import DiscreteTable


def test_entropy_by_hand():
    assert entropy_of_counts([1, 1, 1, 1]) == pytest.approx(2.0)
    assert entropy_of_counts([3, 1]) == pytest.approx(-(0.75 * math.log2(0.75) + 0.25 * math.log2(0.25)))
    assert output_entropy(led_table()) == pytest.approx(math.log2(10))


def test_dense_and_sparse_paths_agree_with_direct_cmi():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(400, 4))
    y = (X[:, 0] + X[:, 1] * (rng.random(400) < 0.7)) % 3
    t = DiscreteTable.from_codes(X, y)
    d, s = _entropies_dense(t), _entropies_sparse(t)
    np.testing.assert_allclose(d.hx, s.hx, atol=1e-12)
    np.testing.assert_allclose(d.hxy, s.hxy, atol=1e-12)
    for m, given in [(0, ()), (1, (0,)), (2, (0, 3)), (3, (0, 1, 2))]:
        assert d.cmi(m, [mask_of(given)])[0] == pytest.approx(
            conditional_mutual_information(t, m, given), abs=1e-12)


def test_plugin_bias_formula():
    # (|Y|-1)(|X|-1) / (2 N ln 2): binary X, 10 classes, N = 500
    assert plugin_bias(2, 10, 500) == pytest.approx(9 / (1000 * math.log(2)))
    with pytest.raises(ValueError, match="n_samples"):
        plugin_bias(2, 2, 0)


def test_plugin_bias_matches_simulation():
    # Mean plug-in MI of independent binary X and 4-class Y over many samples of N=200
    rng = np.random.default_rng(1)
    vals = []
    for _ in range(400):
        X = rng.integers(0, 2, 200)
        y = rng.integers(0, 4, 200)
        vals.append(conditional_mutual_information(DiscreteTable.from_codes(X, y), 0))
    se = np.std(vals) / np.sqrt(len(vals))
    assert abs(np.mean(vals) - plugin_bias(2, 4, 200)) < 4 * se + 1e-4


def test_too_many_inputs_is_a_sentence():
    t = DiscreteTable.from_codes(np.zeros((2, 21), dtype=int), [0, 1])
    with pytest.raises(ValueError, match="at most 20"):
        subset_entropies(t)
