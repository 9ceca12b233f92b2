"""Every result type survives JSON: to_dict -> json -> from_dict gives the same values."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

import varimp_core as vc
from varimp_core.studies.fits import fit_normal, fit_scaled_chi2


def _same(a, b, where="result"):
    """Deep equality: arrays and frames exactly (NaN equal to NaN), tuples stay tuples."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_dtype=False, obj=where)
        assert a.attrs == b.attrs, where
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{k}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b, where


def _roundtrip(result):
    text = json.dumps(result.to_dict())
    back = type(result).from_dict(json.loads(text))
    _same(result, back, type(result).__name__)
    return back


@pytest.fixture(scope="module")
def xor():
    return vc.load_data(problem="xor:relevant=2,irrelevant=1", n_samples=200, random_state=0)


@pytest.fixture(scope="module")
def forest():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(120, 3)).astype(float)
    y = (X[:, 0] + X[:, 1] > 2).astype(int)
    return vc.fit_uniform_forest(X, y, n_estimators=10, random_state=0), X, y


def test_importance_and_relevance_results(xor):
    _roundtrip(vc.compute_importances(xor, method="exact", max_features=2))
    _roundtrip(vc.compute_importances(xor, method="forest", n_estimators=10))
    _roundtrip(vc.relevance(xor.table))


def test_data_and_table(xor):
    _roundtrip(xor)
    _roundtrip(xor.table)


def test_monte_carlo_permutation_null_and_fits(xor):
    mc = vc.monte_carlo("xor:irrelevant=1", n_replicates=5, n_samples=100, n_estimators=3,
                        random_state=1)
    back = _roundtrip(mc)
    pd.testing.assert_frame_equal(back.summary(), mc.summary())
    null = vc.permutation_null(xor, n_permutations=4, n_estimators=3, random_state=0)
    _roundtrip(null)
    _roundtrip(fit_scaled_chi2(mc.replicates[:, 2] + 1e-3))
    _roundtrip(fit_normal(mc.replicates[:, 0]))
    dist = _roundtrip(vc.importance_distribution("xor:irrelevant=1", n_replicates=5,
                                                 n_samples=100, n_estimators=3))
    _roundtrip(dist.panels)


def test_study_and_selection_results():
    curves = _roundtrip(vc.mdi_bias_curves(min_samples_leaf=[1, 10], max_depth=[2],
                                           n_estimators=3))
    assert curves.units == {"mdi": "gini", "mdi_oob": "gini"}
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 6))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    _roundtrip(vc.subspace_selection(X, y, method="rs", subspace_size=3, n_estimators=20,
                                     random_state=0))


def test_local_importance_results(forest):
    est, X, y = forest
    local = vc.local_importance(est, X)
    _roundtrip(local)
    _roundtrip(vc.interactions(local, min_share=0))
    _roundtrip(vc.interaction_importance(local))
    _roundtrip(vc.partial_importance(local, label=1))
    _roundtrip(vc.importance_over_labels(local))
    _roundtrip(vc.dependence_over_responses(local, 0))


def test_partial_dependence_results(forest):
    est, X, y = forest
    _roundtrip(vc.partial_dependence(est, X, [0], kind="both", grid_resolution=5))
    _roundtrip(vc.partial_dependence(est, X, [0, 1], grid_resolution=4))
    _roundtrip(vc.partial_dependences(est, X, [0, 1], grid_resolution=4))


def test_masking_curves():
    from varimp_core.problems.registry import get_problem
    from varimp_core.studies.masking import masking_curves
    from varimp_core.studies.masking_copy import add_noisy_copy

    table = add_noisy_copy(get_problem("led").exact_table(), "X5", 0.1)
    back = _roundtrip(masking_curves(table, copy_name="X5'"))
    assert back.x == "K" and back.variables[-1] == "X5'" and back.copy_name == "X5'"
    back = _roundtrip(masking_curves(get_problem("xor:irrelevant=1").exact_table(), x="depth",
                                     max_features=2))
    # XOR of 2 bits: I(X1, X2; Y) = H(Y) = 1 bit (Theorem 2's sum)
    assert back.x == "depth" and back.information == pytest.approx(1.0, abs=1e-12)
