"""Tests of varimp_core.studies.noisy_protocol (Li et al. 2019, section 4).

Expected values come from the generator's definition (P(Y=1 | X2) = (1 + X2)/3),
Theorem 1 of the paper (the MDI of noisy features falls like 1/min_samples_leaf
and grows with depth) and its Table 1 (AUC of MDI-oob against MDI on the
strobl simulation with deep trees).
"""

import numpy as np
import pandas as pd
import pytest

from varimp_core.studies.noisy_protocol import (DEPTH_SETTINGS, LI2019_TABLE1, StudyResult,
                                                combine_runs, li_five_feature_sample,
                                                mdi_bias_curves, noisy_feature_auc, paper_auc)


def test_five_feature_sample_follows_its_definition():
    df = li_five_feature_sample(20000, random_state=3)
    assert list(df.columns) == ["X1", "X2", "X3", "X4", "X5", "Y"]
    for col, levels in (("X2", 2), ("X3", 4), ("X4", 10), ("X5", 20)):
        assert set(df[col].unique()) == set(range(levels))
    # P(Y=1 | X2=0) = 1/3 and P(Y=1 | X2=1) = 2/3; binomial standard error < 0.005.
    rates = df.groupby("X2")["Y"].mean()
    assert abs(rates[0] - 1 / 3) < 0.02 and abs(rates[1] - 2 / 3) < 0.02
    assert abs(df["X1"].mean()) < 0.03 and abs(df["X1"].std() - 1) < 0.03
    assert df.equals(li_five_feature_sample(20000, random_state=3))


def test_mdi_bias_curves_figures_1_to_3():
    res = mdi_bias_curves(min_samples_leaf=[1, 50], max_depth=[1, 20], n_estimators=60)
    assert isinstance(res, StudyResult) and not res.cancelled
    s = res.scores.set_index(["parameter", "value", "measure", "variable"])["importance"].sort_index()
    noisy = ["X1", "X3", "X4", "X5"]

    def total(parameter, value, measure, absolute=False):
        v = s.loc[(parameter, value, measure)].loc[noisy]
        return float(np.abs(v).sum() if absolute else v.sum())

    # Fig. 1 / Theorem 1: the noisy features' MDI falls sharply from leaf size 1 to 50.
    assert total("min_samples_leaf", 1, "mdi") > 5 * total("min_samples_leaf", 50, "mdi")
    # Fig. 2: and rises from depth 1 to 20.
    assert total("max_depth", 20, "mdi") > 5 * total("max_depth", 1, "mdi")
    # Fig. 1: with full trees the continuous noise X1 outranks the relevant X2 under MDI ...
    full = s.loc[("min_samples_leaf", 1, "mdi")]
    assert full["X1"] > full["X2"]
    # ... Fig. 3: MDI-oob of the noisy features stays near 0 and X2 comes first.
    full_oob = s.loc[("min_samples_leaf", 1, "mdi_oob")]
    assert total("min_samples_leaf", 1, "mdi_oob", absolute=True) < 0.25 * total(
        "min_samples_leaf", 1, "mdi")
    assert full_oob.idxmax() == "X2"
    assert set(res.summary["n"]) == {1}


def test_mdi_oob_beats_mdi_on_strobl_with_deep_trees():
    # Li et al. (2019), Table 1, simulated classification, deep trees (40 runs):
    # AUC 0.76 for MDI-oob against 0.12 for MDI, a gap of 0.64.  Across seeds the
    # AUCs vary with a standard deviation of about 0.1 each, so the mean gap of 4
    # seeds has a standard error of about 0.07; 0.35 is more than 4 of them below
    # the paper's gap, and far above 0.
    paper = LI2019_TABLE1[("classification", "deep")]
    assert paper["mdi_oob"] - paper["mdi"] == pytest.approx(0.64)
    res = noisy_feature_auc(problems=["strobl:task=classification"], depth_settings=["deep"],
                            measures=["mdi", "mdi_oob"], seeds=range(4))
    mean = res.summary.set_index("measure")["mean"]
    assert mean["mdi_oob"] - mean["mdi"] > 0.35
    assert mean["mdi"] < 0.5 < mean["mdi_oob"]   # MDI prefers the noisy, many-valued features
    assert set(res.scores["min_samples_leaf"]) == {DEPTH_SETTINGS["deep"]}
    assert list(res.scores.columns) == ["problem", "task", "depth_setting", "min_samples_leaf",
                                        "measure", "seed", "auc"]
    assert set(res.summary["n"]) == {4}


def test_progress_and_cancellation():
    calls = []
    res = noisy_feature_auc(problems=["strobl:task=regression", "madelon"],
                            depth_settings=["shallow", "deep"], measures=["mdi", "mdi_oob"],
                            seeds=[0, 1], n_estimators=4, n_samples=150,
                            progress=lambda d, t: calls.append((d, t)),
                            should_stop=lambda: len(calls) >= 3)
    assert res.cancelled
    assert calls == [(1, 8), (2, 8), (3, 8)]
    assert len(res.scores) == 3 * 2
    assert res.scores["auc"].between(0, 1).all()
    assert set(res.scores["task"]) == {"regression"}


def test_runs_made_apart_combine_into_the_whole_study():
    """One run per (seed, depth setting), seeds outermost and deep first, gives the scores
    and the summary of one call with every seed, in its order."""
    options = dict(problems=["strobl:task=classification"], measures=["mdi", "mdi_oob"],
                   n_estimators=4, n_samples=150)
    whole = noisy_feature_auc(depth_settings=["shallow", "deep"], seeds=[0, 1], **options)
    runs = [noisy_feature_auc(depth_settings=[d], seeds=[seed], **options)
            for seed in (0, 1) for d in ("deep", "shallow")]
    both = combine_runs(runs)
    pd.testing.assert_frame_equal(both.scores, whole.scores)
    pd.testing.assert_frame_equal(both.summary, whole.summary)
    assert not both.cancelled and both.units == {}   # AUCs have no units
    assert combine_runs(runs[:1], cancelled=True).cancelled
    curve = dict(n_samples=60, n_estimators=3)
    whole = mdi_bias_curves(min_samples_leaf=[1, 5], max_depth=[2], seeds=[0, 1], **curve)
    runs = [mdi_bias_curves(min_samples_leaf=leaf, max_depth=depth, seeds=[seed], **curve)
            for seed in (0, 1) for leaf, depth in (([1, 5], []), ([], [2]))]
    both = combine_runs(runs)
    pd.testing.assert_frame_equal(both.scores, whole.scores)
    pd.testing.assert_frame_equal(both.summary, whole.summary)
    assert both.units == whole.units == {"mdi": "gini", "mdi_oob": "gini"}
    with pytest.raises(ValueError, match="non-empty sequence of StudyResult"):
        combine_runs([])


def test_paper_auc_is_table1_on_strobl_only():
    rows = pd.DataFrame([("strobl", "classification", "deep", "mdi"),
                         ("strobl", "regression", "shallow", "mdi_oob"),
                         ("strobl", "classification", "deep", "mda_oob"),
                         ("madelon", "classification", "deep", "mdi")],
                        columns=["problem", "task", "depth_setting", "measure"])
    np.testing.assert_array_equal(paper_auc(rows), [0.12, 0.58, np.nan, np.nan])
    with pytest.raises(ValueError, match="no column 'measure'"):
        paper_auc(rows.drop(columns="measure"))


def test_madelon_runs():
    res = noisy_feature_auc(problems=["madelon"], depth_settings=["deep"], measures=["mda_oob"],
                            seeds=[0], n_estimators=5, n_samples=200)
    assert res.scores["problem"].tolist() == ["madelon"]
    assert 0 <= res.scores["auc"].iloc[0] <= 1


@pytest.mark.parametrize("kwargs,fragment", [
    ({"depth_settings": ["medium"]}, "depth setting 'medium'"),
    ({"measures": ["shap"]}, "Unknown measure"),
    ({"problems": ["iris"]}, "no known relevant features"),
    ({"seeds": []}, "at least one seed"),
    ({"should_stop": True}, "should_stop must be a callable"),
])
def test_bad_protocol_inputs(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment) as info:
        noisy_feature_auc(**kwargs)
    assert str(info.value).endswith(".")


def test_bad_curve_inputs():
    with pytest.raises(ValueError, match="min_samples_leaf=0 is not allowed"):
        mdi_bias_curves(min_samples_leaf=[0])
    with pytest.raises(ValueError, match="n_samples=1 is not allowed"):
        li_five_feature_sample(1)
