"""Selection figures draw the core's numbers: relevance, permutation null, RS/SRS curves."""

from __future__ import annotations

import numpy as np
import pytest

from varimp_core.api import compute_importances
from varimp_core.studies.nulls import permutation_null
from varimp_core.plots.selection import (make_pvalue_figure, make_relevance_figure,
                                         make_selected_figure, make_subspace_curves)
from varimp_core.plots.selection_captions import rs_data_words
from varimp_core.problems.registry import get_problem
from varimp_core.exact.relevance import relevance
from varimp_core.studies.selection import curve_statistics, madelon_curves, subspace_selection
from varimp_core.data.prepare import prepare_problem


def _traces(fig, meta):
    return [t for t in fig.data if t.meta == meta]


def test_relevance_figure_shows_classes_degrees_and_importances():
    # XOR with 2 irrelevant bits: X1, X2 strongly relevant of degree 1 (I(X1;Y) = 0 but
    # I(X1;Y|X2) = 1 bit), X3, X4 irrelevant; K=1 exact importances 1/2, 1/2, 0, 0 (Eqn 3).
    table = get_problem("xor:irrelevant=2").exact_table()
    r = relevance(table)
    imp = compute_importances(table, method="exact", max_features=1).importances
    fig = make_relevance_figure(r, imp)
    strong, = _traces(fig, "class-strong")
    irr, = _traces(fig, "class-irrelevant")
    assert not _traces(fig, "class-weak")
    assert list(strong.x) == ["X1", "X2"] and list(irr.x) == ["X3", "X4"]
    assert list(strong.y) == pytest.approx([0.5, 0.5], abs=1e-12)
    assert list(irr.y) == pytest.approx([0.0, 0.0], abs=1e-12)
    assert [c[0] for c in strong.customdata] == [1, 1]          # degree
    assert [c[1] for c in strong.customdata] == [True, True]    # Markov boundary
    assert [c[1] for c in irr.customdata] == [False, False]
    assert list(strong.text) == ["d = 1", "d = 1"]


def test_relevance_figure_without_importances_and_with_weak_variables():
    # LED: X6 and X7 are weakly relevant in the exact distribution (Geurts 2016 slides).
    r = relevance(get_problem("led").exact_table())
    fig = make_relevance_figure(r)
    weak, = _traces(fig, "class-weak")
    assert list(weak.x) == [v for v, c in zip(r.variables, r.relevance) if c == "weak"]
    assert list(weak.y) == [1.0] * len(weak.x)
    with pytest.raises(ValueError, match="one value per variable"):
        make_relevance_figure(r, [1.0, 2.0])


def test_pvalue_figure_equals_the_permutation_null():
    data = prepare_problem(get_problem("xor:irrelevant=2"), n_samples=300, random_state=1)
    pn = permutation_null(data, n_permutations=19, n_estimators=10, random_state=3)
    fig = make_pvalue_figure(pn)
    observed, = _traces(fig, "observed")
    q95, = _traces(fig, "null-q95")
    pvals, = _traces(fig, "p-value")
    assert list(observed.x) == list(pn.variables)
    assert np.array_equal(observed.y, pn.observed)
    assert np.array_equal(q95.y, pn.null_quantile(0.95))
    assert np.array_equal(pvals.y, pn.p_values)
    assert list(pvals.customdata) == pn.above_null.tolist()
    # the relevant bits are above their null with the smallest possible p-value 1/(R+1)
    assert pn.above_null.tolist()[:2] == [True, True]
    assert list(pvals.y[:2]) == pytest.approx([1 / 20, 1 / 20])


@pytest.fixture(scope="module")
def curves():
    return madelon_curves([30], seeds=[0, 1], n_estimators=20, subspace_size=10,
                          n_train=200, n_test=100, checkpoints=[5, 10, 20])


def test_subspace_curves_are_means_over_seeds_with_sd_bands(curves):
    fig = make_subspace_curves(curve_statistics(curves))
    means = _traces(fig, "mean")
    assert len(means) == 4 and len(_traces(fig, "band")) == 4   # 2 methods x 2 panels
    for t in means:
        method = "rs" if t.name == "RS" else "srs"
        column = "auprc" if t.xaxis == "x" else "accuracy"
        d = curves[curves.method == method].groupby("n_trees")[column]
        assert list(t.x) == [5, 10, 20]
        assert list(t.y) == pytest.approx(d.mean().tolist(), rel=1e-12)
        assert list(t.customdata) == [2, 2, 2]
    band = next(t for t in _traces(fig, "band") if t.xaxis == "x" and t.legendgroup == "RS")
    d = curves[curves.method == "rs"].groupby("n_trees")["auprc"]
    upper = (d.mean() + d.std()).tolist()
    assert list(band.y[:3]) == pytest.approx(upper, rel=1e-12)


def test_one_seed_has_no_band_and_missing_columns_are_refused(curves):
    fig = make_subspace_curves(curve_statistics(curves[curves.seed == 0]))
    assert not _traces(fig, "band")
    with pytest.raises(ValueError, match="auprc"):
        curve_statistics(curves.drop(columns="auprc"))


def test_selected_figure_shows_the_selected_set_first():
    prob = get_problem("madelon:irrelevant=30")
    df = prob.sample(300, random_state=0)
    s = subspace_selection(df[list(prob.variables)], df["Y"], method="srs", subspace_size=10,
                           n_estimators=60, relevant=prob.relevant, random_state=0)
    fig = make_selected_figure(s, max_bars=15)
    chosen = _traces(fig, "selected")
    names = list(chosen[0].y) if chosen else []
    assert sorted(names) == sorted(s.selected)
    imp = dict(zip(s.variables, s.importances))
    for t in fig.data:
        assert list(t.x) == pytest.approx([imp[v] for v in t.y])
    shown = sum(len(t.y) for t in fig.data)
    assert shown == 15
    assert f"precision {s.precision:.2f}" in fig.layout.title.text
    assert f"recall {s.recall:.2f}" in fig.layout.title.text


def test_the_rs_sentence_names_the_data_the_runs_were_on():
    # the slides' protocol: 1,000 training and 500 test rows of Madelon per seed
    words = rs_data_words("480")
    assert "Madelon" in words
    for fact in ("20 relevant", "480 irrelevant", "1,000 training", "500 test", "per seed"):
        assert fact in words, fact
    assert "1,000 rows drawn from it" in rs_data_words("data", 1000)
    assert rs_data_words("data").startswith("the current data (two thirds")
