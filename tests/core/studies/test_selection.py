"""Random-probe selection, Random Subspace and Sequential Random Subspace (Geurts 2016, part 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import ExtraTreesClassifier

from varimp_core.problems.registry import get_problem
from varimp_core.studies.selection import (draw_subspace, madelon_curves, precision_recall,
                                           probe_rule, subspace_selection)
from varimp_core.forests.sklearn_mdi import forest_mdi


def _xy(spec, n, seed):
    prob = get_problem(spec)
    df = prob.sample(n, random_state=seed)
    return prob, df[list(prob.variables)].to_numpy(), df[prob.target].to_numpy()


# -- the rule and the draws, by hand ----------------------------------------------------
def test_probe_rule_by_hand():
    # slides: drawn MORE than L=5 times and beat the probe in >= 95% of those trees.
    # 6 draws, 6 wins: kept; 5 draws: not enough draws; 20 draws need ceil(19.0) = 19 wins;
    # 40 draws need 38 wins; 0 draws: never kept.
    keep = probe_rule([6, 5, 20, 20, 40, 40, 0], [6, 5, 19, 18, 38, 37, 0])
    assert keep.tolist() == [True, False, True, False, True, False, False]
    # L=1, beta=0.5: 2 draws, 1 win is enough; 1 draw is not "more than 1".
    assert probe_rule([2, 1], [1, 1], min_sampled=1, beta=0.5).tolist() == [True, False]


@pytest.mark.parametrize("seed", range(5))
def test_srs_draw_rule_by_hand(seed):
    p, q, alpha = 40, 10, 0.5
    # |F| = 3 < floor(alpha q) = 5: all of F, and 7 fresh features outside F.
    found = [4, 17, 30]
    r, c = draw_subspace(p, q, found, alpha=alpha, random_state=seed)
    assert sorted(r.tolist()) == found
    assert len(c) == 7 and not set(c) & set(found)
    assert len(set(r) | set(c)) == q
    # |F| = 8 > 5: exactly 5 from F; the 5 fresh ones avoid R (they may hit F \ R).
    found = [0, 3, 5, 9, 11, 20, 33, 39]
    r, c = draw_subspace(p, q, found, alpha=alpha, random_state=seed)
    assert len(r) == 5 and set(r) <= set(found)
    assert len(c) == 5 and not set(c) & set(r)
    assert len(set(r) | set(c)) == q and max(c) < p
    # alpha = 0 is plain RS; alpha = 1 with |F| >= q takes the whole subspace from F.
    r, c = draw_subspace(p, q, found, alpha=0.0, random_state=seed)
    assert len(r) == 0 and len(set(c)) == q
    r, c = draw_subspace(p, q, range(12), alpha=1.0, random_state=seed)
    assert len(r) == q and len(c) == 0


def test_precision_recall_by_hand():
    # 3 selected, 2 of them among the 4 relevant: precision 2/3, recall 2/4.
    assert precision_recall(["a", "b", "x"], ["a", "b", "c", "d"]) == pytest.approx((2 / 3, 0.5))
    prec, rec = precision_recall([], ["a"])
    assert np.isnan(prec) and rec == 0.0


# -- RS with q = p is a plain Extra-Trees forest -----------------------------------------
def test_rs_with_q_equal_p_is_a_plain_extra_trees_forest():
    _, X, y = _xy("madelon:irrelevant=20", 200, 3)
    T, K = 15, 6
    ours = subspace_selection(X, y, method="rs", subspace_size=40, max_features=K,
                              n_estimators=T, probe=None, random_state=7)
    # every feature is available to every tree ...
    assert ours.n_sampled.tolist() == [T] * 40
    np.testing.assert_allclose(ours.importances_when_drawn, ours.importances)
    # ... and, with the tree seeds drawn as ExtraTreesClassifier draws them, the trees are
    # the forest's trees: same unnormalised MDI to rounding.
    et = ExtraTreesClassifier(n_estimators=T, max_features=K, criterion="entropy",
                              bootstrap=False, random_state=7).fit(X, y)
    np.testing.assert_allclose(ours.importances, forest_mdi(et).importances, rtol=0, atol=1e-12)
    # fully grown trees on distinct rows: each tree's MDI sums to the plug-in H(Y) (Theorem 2)
    freq = np.bincount(y) / len(y)
    h = -(freq[freq > 0] * np.log2(freq[freq > 0])).sum()
    assert ours.importances.sum() == pytest.approx(h, abs=1e-9)
    # with a probe the subspace still holds every feature in every tree
    probed = subspace_selection(X, y, method="rs", subspace_size=40, n_estimators=T)
    assert probed.n_sampled.tolist() == [T] * 40 and probed.probe_importances.shape == (T,)


# -- the probe rule on the LED ------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_probe_rule_keeps_the_led_segments_and_drops_the_noise(seed):
    prob, X, y = _xy("led:irrelevant=17", 500, seed)
    # q = 3 totally randomized trees (K=1): every segment has degree 0 (I(X_m; Y) > 0) < q,
    # so Imp_{q,inf} > 0 for each (RS slide); 3 binary columns cannot separate 10 digits, so
    # no branch is pure before each drawn column is split on and a drawn segment always
    # gains real information, far above the probe's plug-in bias.  A noise segment and the
    # probe are exchangeable under the null (ties at 0 count as losses), so P(win) <= 1/2
    # per tree and >= 95% of ~37 draws has probability below 1e-8.
    res = subspace_selection(X, y, method="rs", subspace_size=3, max_features=1,
                             n_estimators=300, random_state=seed, relevant=prob.relevant)
    kept = set(res.selected)
    assert set(prob.relevant) <= kept                      # all 7 segments
    assert len(kept - set(prob.relevant)) <= 2             # >= 15 of 17 noise dropped
    assert res.recall == 1.0
    assert res.n_sampled.min() > 5                         # every feature was tested


# -- SRS against RS on Madelon ------------------------------------------------------------
@pytest.fixture(scope="module")
def madelon500():
    """Slides' protocol at p = 500 (q = 50, K = q, L = 5, beta = 0.95), 3 seeds, 1000 trees."""
    curves = madelon_curves([480], seeds=[0, 1, 2], n_estimators=1000, checkpoints=[1000])
    return curves[curves.n_trees == 1000].pivot(index="seed", columns="method",
                                                  values=["auprc", "accuracy"])


def test_srs_predicts_madelon_better_than_rs(madelon500):
    # Once a relevant feature passes the probe rule, SRS puts it in every tree, while an RS
    # tree holds it with probability q/p = 0.1.  The mean paired gain over 3 seeds must
    # exceed twice the binomial standard error of an accuracy near 0.75 on 3 x 500 test
    # rows, 2 sqrt(0.75 * 0.25 / 1500) = 0.022.
    gain = madelon500["accuracy"]["srs"] - madelon500["accuracy"]["rs"]
    assert gain.mean() > 0.022


def test_srs_ranks_madelon_at_least_as_well_as_rs(madelon500):
    # The slides: SRS >= RS on AUPRC, and only SRS eventually ranks the 20 relevant
    # features perfectly.  Madelon labels its 32 vertices at random, so a relevant input
    # shows up mostly together with others; SRS keeps the found ones in every tree and the
    # rest follow.  With every relevant feature above every probe the AUPRC is 1; we ask
    # 0.97 on average, one relevant feature ranked below about ten probes in one seed.
    auprc = madelon500["auprc"]
    assert auprc["srs"].mean() >= auprc["rs"].mean()
    assert auprc["srs"].mean() >= 0.97


# -- output, progress, cancellation ----------------------------------------------------------
def test_curves_are_tidy_and_cancellation_stops_between_trees():
    curves = madelon_curves([30], seeds=[0], n_estimators=12, checkpoints=[4, 8], n_train=150,
                            n_test=50)
    assert list(curves.columns[:6]) == ["method", "p", "seed", "n_trees", "auprc", "accuracy"]
    assert curves.n_trees.tolist() == [4, 8, 12, 4, 8, 12]
    assert set(curves.method) == {"rs", "srs"} and set(curves.p) == {50}
    assert curves.auprc.between(0, 1).all() and curves.accuracy.between(0, 1).all()

    _, X, y = _xy("madelon:irrelevant=30", 150, 0)
    calls, grown = [], []
    res = subspace_selection(X, y, subspace_size=10, n_estimators=50,
                             progress=lambda d, t: calls.append((d, t)),
                             should_stop=lambda: (grown.append(1), len(grown) > 7)[1])
    assert res.stopped and res.n_estimators == 7
    assert calls and calls[-1][1] == 50 and calls[-1][0] <= 7
    done = subspace_selection(X, y, subspace_size=10, n_estimators=20,
                              progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (20, 20) and not done.stopped
    # the held-out rows only add the accuracy column: same trees, same selection
    evaluated = subspace_selection(X, y, subspace_size=10, n_estimators=20, X_test=X[:30],
                                   y_test=y[:30])
    np.testing.assert_array_equal(evaluated.importances, done.importances)
    assert evaluated.selected == done.selected and "accuracy" in evaluated.curve
    frame = done.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 50
    assert done.to_importance_result().n_features == 50


def test_curves_stopped_before_the_first_tree_are_an_empty_tidy_frame():
    # no tree grown, so no checkpoint row: zero rows, still the study's nine columns
    curves = madelon_curves([30], seeds=[0], n_estimators=5, n_train=50, n_test=20,
                            should_stop=lambda: True)
    assert len(curves) == 0
    assert list(curves.columns) == ["method", "p", "seed", "n_trees", "auprc", "accuracy",
                                    "n_selected", "precision", "recall"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(subspace_size=51), "larger than the number of features p=50"),
    (dict(alpha=1.5), "alpha=1.5 is not allowed"),
    (dict(alpha=-0.1), "alpha=-0.1 is not allowed"),
    (dict(min_sampled=0), "min_sampled"),
    (dict(beta=0.0), "beta=0.0 is not allowed"),
    (dict(beta=1.2), "beta=1.2 is not allowed"),
    (dict(n_estimators=0), "n_estimators"),
    (dict(method="bagging"), "method='bagging'"),
    (dict(probe="zeros"), "probe='zeros'"),
])
def test_bad_input_is_a_sentence(kwargs, message):
    _, X, y = _xy("madelon:irrelevant=30", 40, 0)
    with pytest.raises(ValueError, match=message):
        subspace_selection(X, y, **kwargs)
    with pytest.raises(ValueError, match="beta"):
        probe_rule([6], [6], beta=0)
