"""The Distributions study in one call (varimp_core.studies.distributions)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from varimp_core.data.prepare import prepare_problem
from varimp_core.problems.registry import get_problem
from varimp_core.studies.distributions import ImportanceDistribution, importance_distribution
from varimp_core.studies.fits import fit_laws
from varimp_core.studies.montecarlo import monte_carlo
from varimp_core.studies.nulls import permutation_null, plugin_bias_overlay

XOR = "xor:relevant=2,irrelevant=2"
RUN = dict(n_estimators=5, max_features=1, random_state=3)


@pytest.fixture(scope="module")
def sample():
    return prepare_problem(get_problem(XOR), n_samples=300, random_state=0)


def test_fresh_samples_are_monte_carlo_with_both_laws_and_the_bias():
    got = importance_distribution(XOR, n_replicates=12, n_samples=200, **RUN)
    mc = monte_carlo(XOR, n_replicates=12, n_samples=200, **RUN)
    np.testing.assert_array_equal(got.result.replicates, mc.replicates)
    pd.testing.assert_frame_equal(got.fits, fit_laws(mc.replicates, mc.variables,
                                                     relevant=[True, True, False, False]))
    pd.testing.assert_frame_equal(got.overlay, plugin_bias_overlay(mc))
    assert (got.mode, got.n_samples, got.partial) == ("samples", 200, False)


def test_bootstrap_and_permutation_null_of_a_table(sample):
    boot = importance_distribution(sample, mode="bootstrap", n_replicates=6, max_fitted=3, **RUN)
    mc = monte_carlo(sample, n_replicates=6, **RUN)
    np.testing.assert_array_equal(boot.result.replicates, mc.replicates)
    assert boot.result.parameters["replicates_from"] == "bootstrap"
    assert boot.fits["variable"].unique().tolist() == ["X1", "X2", "X3"]   # max_fitted=3
    null = importance_distribution(sample, mode="permutation", n_replicates=6, **RUN)
    direct = permutation_null(sample, n_permutations=6, **RUN)
    np.testing.assert_array_equal(null.result.null, direct.null)
    assert null.overlay is None and null.fits["relevant"].isna().all()
    pd.testing.assert_frame_equal(null.fits, fit_laws(direct.null, direct.variables))


def test_a_stopped_run_is_partial_and_results_round_trip(sample):
    stopped = importance_distribution(XOR, n_replicates=20, n_samples=100, chunk_size=2,
                                      should_stop=lambda: True, **RUN)
    assert stopped.partial and stopped.result.n_replicates == 0 and stopped.overlay is None
    null = importance_distribution(sample, mode="permutation", n_replicates=4, **RUN)
    for d in (importance_distribution(XOR, n_replicates=4, n_samples=100, **RUN), null):
        back = ImportanceDistribution.from_dict(json.loads(json.dumps(d.to_dict())))
        assert type(back.result) is type(d.result) and back.mode == d.mode
        pd.testing.assert_frame_equal(back.fits, d.fits)


def test_the_source_must_fit_the_mode(sample):
    with pytest.raises(ValueError, match="need a table"):
        importance_distribution(XOR, mode="bootstrap", n_replicates=2)
    with pytest.raises(ValueError, match="need a problem"):
        importance_distribution(sample, n_replicates=2)
    with pytest.raises(ValueError, match="mode must be one of"):
        importance_distribution(sample, mode="jackknife", n_replicates=2)
