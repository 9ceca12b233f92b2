"""Issue 12, "every page fast on real uploads": defaults scaled to the data, results drawn
while replicates arrive, and a final result that does not depend on what was drawn."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from varimp_core.data.prepare import prepare_problem
from varimp_core.problems.registry import get_problem
from varimp_core.exact.binary import (MAX_BINARY_NODES, binary_refusal_sentence,
                                      estimate_binary_nodes)
from varimp_core.studies.distributions import ImportanceDistribution, importance_distribution
from varimp_core.studies.montecarlo import monte_carlo
from varimp_core.studies.nulls import permutation_null
from varimp_core.studies.replicates import DEFAULT_TREE_ROWS, scaled_replicates

XOR22 = "xor:relevant=2,irrelevant=2"


@pytest.mark.parametrize("default, rows, trees, expected", [
    (100, 10_000, 50, 20),     # 10^7 // (10^4 * 50) = 20: the upload
    (100, 6_366, 50, 31),      # 10^7 // 318,300 = 31.4: fair
    (100, 500, 50, 100),       # 10^7 // 25,000 = 400 > R_0: the default stays
    (100, 1_000_000, 50, 10),  # 0 < low: never fewer than 10
    (100, None, 50, 100),      # unknown size: the default stays
])
def test_default_replicates_scale_as_declared(default, rows, trees, expected):
    assert DEFAULT_TREE_ROWS == 10_000_000
    assert scaled_replicates(default, rows, trees) == expected


def test_monte_carlo_partials_grow_and_the_final_result_ignores_them():
    kw = dict(n_replicates=12, n_samples=150, n_estimators=8, chunk_size=4, random_state=3)
    seen = []
    streamed = monte_carlo(XOR22, partial=seen.append, **kw)
    plain = monte_carlo(XOR22, **kw)
    np.testing.assert_array_equal(streamed.replicates, plain.replicates)
    assert not streamed.cancelled
    # after each chunk but the last: 4 then 8 replicates, the first ones of the final run
    assert [r.n_replicates for r in seen] == [4, 8]
    assert all(r.cancelled and r.n_requested == 12 for r in seen)
    for r in seen:
        np.testing.assert_array_equal(r.replicates, plain.replicates[:r.n_replicates])


def test_permutation_partials_and_distribution_partials():
    sample = prepare_problem(get_problem(XOR22), n_samples=200, random_state=0)
    seen = []
    kw = dict(n_permutations=6, n_estimators=5, chunk_size=2, random_state=1)
    streamed = permutation_null(sample, partial=seen.append, **kw)
    np.testing.assert_array_equal(streamed.null, permutation_null(sample, **kw).null)
    # first the observed importances alone (no p-value before a permutation), then per chunk
    assert [r.null.shape[0] for r in seen] == [0, 2, 4]
    np.testing.assert_array_equal(seen[0].observed, streamed.observed)
    assert np.isnan(seen[0].p_values).all() and np.isnan(seen[0].null_quantile()).all()
    dists = []
    kw = dict(mode="bootstrap", n_replicates=6, n_estimators=5, chunk_size=3, random_state=2)
    final = importance_distribution(sample, partial=dists.append, **kw)
    plain = importance_distribution(sample, **kw)
    assert [d.partial for d in dists] == [True] and not final.partial
    np.testing.assert_array_equal(final.result.replicates, plain.result.replicates)
    np.testing.assert_array_equal(dists[0].result.replicates, plain.result.replicates[:3])


def test_a_floor_past_the_limit_refuses_the_exact_binary_forest_without_probing():
    """The node estimate is at least boxes * 3 / (max_probes + chunk) whatever the probes find
    (Examples: 12 inputs of 6 levels: 21^12 boxes); the refusal says so at once."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 6, size=(400, 12)).astype(float)
    y = rng.integers(0, 2, size=400)
    sentence = binary_refusal_sentence(X, y, method="exact-et", max_features=1)
    assert sentence is not None and "beyond the limit" in sentence
    # the full sampled estimate agrees that the limit is passed
    assert estimate_binary_nodes(X, y, method="exact-et", max_features=1) > MAX_BINARY_NODES


def test_the_distributions_page_streams_and_its_final_result_equals_a_plain_run(app_module):
    import pages.distributions as page
    from pages._server import jobs
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_page({"problem": XOR22})[0]
    controls = dict(mode="samples", n_replicates=12, n_samples=200, n_estimators=5,
                    max_features=1, max_depth=None, random_state=7, method="forest",
                    view="histogram")
    drawn = []
    progress = jobs.Progress(None, sink=drawn.append)
    settings = page.RUN.settings(controls, page.context_for(data))
    progress.render = lambda result: page.VIEW.draw(result, settings, data, {})
    n = page.replicate_rows(settings, data)
    out = page.run_study({k: v for k, v in settings.items() if k != "view"}, data, n, progress)
    assert drawn, "a partial result was drawn while the run went on"
    figure, *_, note, shown = drawn[0]
    assert note.startswith("Partial result:") and "so far" in note and shown == "vi-notes"
    plain = page.run_study({k: v for k, v in settings.items() if k != "view"}, data, n,
                           jobs.Progress(None))
    assert not out.get("running") and not out["partial"]
    a, b = (ImportanceDistribution.from_dict(o) for o in (out, plain))
    np.testing.assert_array_equal(a.result.replicates, b.result.replicates)
    np.testing.assert_array_equal(a.result.information, b.result.information)
    assert a.fits.equals(b.fits)


def test_scikit_learn_forests_get_missing_numbers_as_nan_and_fit_as_scikit_learn_does():
    """scikit-learn 1.9.1's forests split NaN natively; the MDI of varimp's fit equals the MDI
    read off scikit-learn's own fit on the same NaN table with the same seed."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

    from varimp_core.api import compute_importances
    from varimp_core.data.prepare import prepare_table
    from varimp_core.forests.sklearn_mdi import forest_mdi

    rng = np.random.default_rng(4)
    n = 300
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["y"] = (frame["a"] + 0.5 * rng.normal(size=n) > 0).astype(int)
    frame.loc[rng.random(n) < 0.2, "a"] = np.nan      # 20 % missing, more often in class 1
    frame.loc[(frame["y"] == 1) & (rng.random(n) < 0.2), "a"] = np.nan
    prepared = prepare_table(frame, "y", missing="category")
    X = prepared.native_X()
    np.testing.assert_array_equal(np.isnan(X[:, 0]), frame["a"].isna().to_numpy())
    np.testing.assert_array_equal(X[~np.isnan(X[:, 0]), 0], frame["a"].dropna().to_numpy())
    for method, cls, bootstrap in (("sklearn-rf", RandomForestClassifier, True),
                                   ("sklearn-et", ExtraTreesClassifier, False)):
        ours = compute_importances(prepared, method=method, n_estimators=20, max_features=1,
                                   bootstrap=bootstrap, random_state=0)
        theirs = cls(n_estimators=20, criterion="entropy", max_features=1, bootstrap=bootstrap,
                     random_state=0).fit(frame[["a", "b"]].to_numpy(), prepared.y)
        np.testing.assert_allclose(ours.importances, forest_mdi(theirs).importances,
                                   rtol=1e-12, atol=1e-15)


def test_partial_dependence_grid_of_an_input_with_missing_rows_is_observed_values_and_missing():
    """With 20 % missing, the grid is scikit-learn's rule on the observed values, after one
    point for "missing" (the stand-in the forest was fitted with); each point is the mean
    prediction with the input set to it (Friedman 2001), computed here by brute force."""
    from varimp_core.data.prepare import prepare_table
    from varimp_core.local.heldout import fit_local_forest, heldout_partial_dependences

    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    frame["y"] = (frame["a"] > 0).astype(int)
    frame.loc[rng.random(n) < 0.2, "a"] = np.nan
    prepared = prepare_table(frame, "y", missing="category")
    rows = np.arange(n)
    forest = fit_local_forest(prepared, rows, forest="rf", n_estimators=10, random_state=0)
    [pd_a] = heldout_partial_dependences(prepared, forest, rows, ["a"], grid_resolution=20,
                                         max_ice_lines=0)
    grid, labels = pd_a.grid[0], pd_a.grid_labels[0]
    observed = frame["a"].dropna().to_numpy()
    assert grid[0] == prepared.missing_value("a") and labels[0] == "missing"
    lo, hi = np.quantile(observed, (0.05, 0.95))
    np.testing.assert_allclose(grid[1:], np.linspace(lo, hi, 20))
    assert "missing" not in labels[1:]
    X = prepared.X_numeric.copy()
    for k in (0, 1, 10):
        X[:, 0] = grid[k]
        mean = forest.predict_proba(pd.DataFrame(X, columns=list(prepared.variables))).mean(0)
        np.testing.assert_allclose(pd_a.average[:, k], mean, rtol=1e-12)


@pytest.mark.parametrize("method, bootstrap", [("sklearn-rf", True), ("sklearn-et", False)])
def test_scikit_learn_forests_grown_in_chunks_are_the_forest_of_one_fit(method, bootstrap):
    """warm_start draws the seeds of the trees already grown first, so chunks of trees make
    the forest one fit makes; the importances so far come after each chunk but the last."""
    from varimp_core.api import compute_importances
    from varimp_core.data.prepare import prepare_table

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.normal(size=200), "b": rng.integers(0, 3, 200)})
    frame["y"] = (frame["a"] + frame["b"] > 1).astype(int)
    prepared = prepare_table(frame, "y")
    seen = []
    kw = dict(method=method, n_estimators=25, bootstrap=bootstrap, random_state=3)
    streamed = compute_importances(prepared, partial=seen.append, **kw)
    plain = compute_importances(prepared, **kw)
    np.testing.assert_array_equal(streamed.importances, plain.importances)
    # ceil(25 / 10) = 3 trees a chunk: 3, 6, ..., 24 trees so far, then the 25
    assert [r.per_tree.shape[0] for r in seen] == list(range(3, 25, 3))
    np.testing.assert_array_equal(seen[-1].per_tree, plain.per_tree[:24])


def test_the_importances_page_draws_the_trees_so_far(app_module):
    import pages.importances as page
    from pages._server import jobs
    from _pages import upload_frame

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    frame["y"] = (frame["a"] > 0).astype(int)
    from pages._framework.datachoice import DataChoice

    data = DataChoice.from_params(upload_frame(frame, "t.csv"))
    values = {**page.PARAMS.defaults(), "method": "sklearn-et", "n_estimators": 30}
    drawn = []
    result, _, _ = page.VIEW.run(values, data.to_store(), {}, jobs.Progress(None,
                                                                            sink=drawn.append))
    assert drawn and len(drawn[0]) == len(page.VIEW.outputs)
    assert "still being grown" in str(drawn[0])
    from varimp_core.result import ImportanceResult

    # the job's result holds the core object it computed (one serialisation, at the cache)
    assert isinstance(result["result"], ImportanceResult)
    assert page.view_from_dict(result)["result"].per_tree.shape[0] == 30


@pytest.mark.browser
def test_the_page_draws_a_first_partial_result_before_the_run_completes(dash_duo, dash_app):
    """A long run (2,000 replicates): its histograms show while it runs, with a note that
    says how many replicates are in so far; Cancel then keeps what was finished."""
    from _browser import open_page, traces_by_meta, wait_for

    open_page(dash_duo, dash_app, f"/distributions?problem={XOR22}&R=2000&T=100&N=200"
                                  "&sweep=none")
    dash_duo.wait_for_contains_text("#dist-partial", "so far; more are coming", timeout=60)
    running = dash_duo.find_element("#dist-job-cancel").get_attribute("disabled") is None
    drawn = wait_for(lambda: traces_by_meta(dash_duo, "#dist-graph", "replicates"),
                     what="the partial histograms")
    assert running and 0 < len(drawn[0][1]) < 2000
    dash_duo.find_element("#dist-job-cancel").click()
    dash_duo.wait_for_contains_text("#dist-partial", "Partial result: cancelled after",
                                    timeout=60)
    assert dash_duo.get_logs() == []


@pytest.mark.parametrize("rows, inputs, expected", [
    (10_000, 60, 20),    # 12,000,000 // 600,000 = 20
    (5_000, 50, 48),     # 12,000,000 // 250,000 = 48
    (6_366, 8, 100),     # 235 > T_0: the default stays (fair)
    (100_000, 60, 20),   # 2 < 20: never fewer than 20
])
def test_local_forest_trees_scale_as_declared(rows, inputs, expected):
    from pages._framework.studies import scaled_trees
    from varimp_core.studies.replicates import LOCAL_TREE_WORK

    assert LOCAL_TREE_WORK == 12_000_000
    trees, sentence = scaled_trees(100, rows, inputs)
    assert trees == expected
    assert (sentence == "") == (expected == 100)


def test_dependence_starts_with_trees_scaled_to_an_upload_and_a_link_keeps_its_own(app_module):
    import pages.dependence as page
    from _pages import upload_frame

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(5_000, 50)), columns=[f"x{j}" for j in range(50)])
    frame["y"] = (frame["x0"] > 0).astype(int)
    store = {"params": upload_frame(frame, "wide.csv")}
    st = page.initial_state({}, store)
    assert st["values"]["n_estimators"] == 48  # 12,000,000 / (5,000 rows x 50 inputs), by hand
    assert "48 trees by default for 5,000 rows and 50 inputs" in st["scaled"]
    again = page.initial_state({**dict(p.split("=", 1) for p in st["query"].split("&")),
                                "trees": "100"}, store)
    assert again["values"]["n_estimators"] == 100 and again["scaled"] == ""


def test_a_sweep_hands_out_the_values_done_and_ends_as_without():
    from varimp_core.studies.montecarlo import sweep

    kw = dict(n_replicates=4, n_samples=100, random_state=2, replicates=True)
    seen = []
    streamed = sweep(XOR22, "n_estimators", [1, 3, 5], partial=seen.append, **kw)
    plain = sweep(XOR22, "n_estimators", [1, 3, 5], **kw)
    pd.testing.assert_frame_equal(streamed, plain)
    assert [sorted(f["value"].unique()) for f in seen] == [[1], [1, 3]]
    assert all(f.attrs["cancelled"] for f in seen) and not streamed.attrs["cancelled"]
    pd.testing.assert_frame_equal(seen[-1], plain[plain["value"] < 5], check_like=True)


def test_measures_starts_with_trees_scaled_to_an_upload(app_module):
    import pages.measures as page
    from _pages import upload_frame

    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(5_000, 50)), columns=[f"x{j}" for j in range(50)])
    frame["y"] = (frame["x0"] > 0).astype(int)
    layout = str(page.layout(vi_data={"params": upload_frame(frame, "wide.csv")}))
    assert "48 trees by default for 5,000 rows and 50 inputs" in layout  # 12e6 // 250,000
    assert "'meas-trees'" in layout and "value=48" in layout


def test_a_count_of_boxes_past_the_largest_float_is_refused_in_words_without_a_warning():
    """130 continuous inputs on 300 rows: prod_f c_f (c_f + 1) / 2 = 45,150^130, about 10^605,
    past the largest float (1.8e308); the refusal says so in words, with no overflow warning
    (an analyst's 60-column upload went through this)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 130))
    y = rng.integers(0, 2, size=300)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sentence = binary_refusal_sentence(X, y, method="exact-et", max_features=1)
    assert "more than 10^308 distinct nodes" in sentence and "300 rows and 130 inputs" in sentence
