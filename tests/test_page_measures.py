"""The Measures page: its callback logic (plain functions) and runs in the browser."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pandas as pd
import pytest
from _browser import full_traces, open_page, set_number, visit, wait_for_trace
from _pages import upload_csv
from dash.testing.wait import until

from varimp_core.api import compute_importances, load_data
from varimp_core.measures.suite import compute_measures
from varimp_core.studies.noisy_protocol import LI2019_TABLE1, mdi_bias_curves, noisy_feature_auc

from pages._ui import common, datasource
from pages._ui import measures_logic as logic

LED = {"problem": "led"}


def _data(query=LED):
    return logic.initial_state(query)["data"]


def _forest(**kw):
    base = dict(kind="rf", trees=10, K=None, leaf=1, depth=None, bootstrap=True, tree_seed=0,
                measures=["mdi", "mdi_oob"], criterion="auto")
    return logic.forest_settings(**{**base, **kw})


_upload = upload_csv


# -- settings and URL -------------------------------------------------------------------------
def test_forest_settings_are_canonical():
    s = logic.forest_settings(kind="et", trees="30", K="", leaf=None, depth="4",
                              bootstrap=["on"], tree_seed=None,
                              measures=["ranger", "mdi", "mdi"], criterion="entropy", p=7)
    assert s == {"kind": "et", "trees": 30, "K": None, "leaf": 1, "depth": 4, "bootstrap": True,
                 "tree_seed": 0, "measures": ["mdi", "ranger"], "criterion": "entropy"}
    assert logic.resolve_k(None, 7) == 2 and logic.resolve_k(None, 500) == 22
    assert logic.resolve_k(3, 7) == 3


@pytest.mark.parametrize("controls,match", [
    (dict(trees=1), "One tree is not enough"),
    (dict(trees=None), "Enter the number of trees"),
    (dict(trees=2.5), "whole number"),
    (dict(K=9), "from 1 to 7"),
    (dict(leaf=0), "min leaf size"),
    (dict(depth=-1), "max depth"),
    (dict(measures=[]), "Tick at least one measure"),
    (dict(kind="gbm"), "forest kind"),
])
def test_bad_forest_settings_are_sentences(controls, match):
    base = dict(kind="rf", trees=10, K=None, leaf=1, depth=None, bootstrap=True, tree_seed=0,
                measures=["mdi"], criterion="auto")
    with pytest.raises(ValueError, match=match) as err:
        logic.forest_settings(**{**base, **controls}, p=7)
    assert str(err.value).endswith(".") and "\n" not in str(err.value)


def test_study_and_curve_settings():
    assert logic.study_settings(study="madelon", study_depth=["deep", "shallow"], reps="3",
                                study_trees=None) == {
        "study": "madelon", "study_depth": ["shallow", "deep"], "reps": 3, "study_trees": 50}
    with pytest.raises(ValueError, match="shallow or deep"):
        logic.study_settings(study_depth=[])
    with pytest.raises(ValueError, match="repetitions"):
        logic.study_settings(reps=41)
    assert logic.bias_settings(bias_grid="full", bias_n="50")["bias_n"] == 50
    with pytest.raises(ValueError, match="sample size"):
        logic.bias_settings(bias_n=5)


def test_query_round_trips_through_the_layout_state():
    query = ("problem=xor:irrelevant=1&kind=et&trees=40&K=2&leaf=3&depth=4&bootstrap=0"
             "&tree_seed=7&measures=mdi&measures=ranger&criterion=entropy&scale=raw"
             "&study=strobl-regression&study_depth=deep&reps=3&study_trees=20"
             "&bias_trees=50&bias_grid=full&bias_reps=2&bias_n=100")
    parsed = {k: (v if len(v) > 1 else v[0]) for k, v in parse_qs(query).items()}
    start = logic.initial_state(parsed)
    assert start["notes"] == [] and start["p"] == 3
    v = start["values"]
    assert v["measures"] == ["mdi", "ranger"] and v["study_depth"] == ["deep"]
    assert v["bootstrap"] is False and v["scale"] == "raw" and v["bias_grid"] == "full"
    again = parse_qs(start["query"])
    assert again == parse_qs(datasource.data_query(start["data"]) + "&" + query.split("&", 1)[1])
    # the callback that writes the URL gives the same string from the control values
    controls = [v[k] for k in logic.FOREST_KEYS] + [v["scale"]] + \
        [v[k] for k in logic.STUDY_KEYS] + [v[k] for k in logic.BIAS_KEYS] + [start["data"]]
    assert logic.query_from_controls(*controls) == start["query"]
    controls[1] = 1   # one tree: no URL update
    assert logic.query_from_controls(*controls) is None


def test_link_defaults_and_bad_values():
    start = logic.initial_state(LED)
    v = start["values"]
    assert v["measures"] == ["mdi", "mdi_oob", "naive_oob", "mda_holdout", "mda_oob", "ranger"]
    assert v["reps"] == 3 and v["study_depth"] == ["shallow", "deep"] and v["K"] is None
    start = logic.initial_state({"problem": "led", "K": "12", "reps": "0",
                                 "measures": ["mdi", "shap"]})
    assert start["values"]["K"] is None and start["values"]["reps"] == 3
    assert start["values"]["measures"] == v["measures"]
    assert len(start["notes"]) == 3 and any("K was ignored" in n for n in start["notes"])
    assert any("'shap' is unknown" in n for n in start["notes"])
    # a link's single tree or empty measure list falls back to the defaults, with notes
    start = logic.initial_state({"problem": "led", "trees": "1", "measures": [""],
                                 "scale": "raw"})
    assert start["values"]["trees"] == 100 and start["values"]["measures"] == v["measures"]
    assert len(start["notes"]) == 2 and "scale=raw" in start["query"]


# -- 1. side by side --------------------------------------------------------------------------
def test_measures_on_an_exact_problem_use_a_sample_and_the_exact_mdi():
    forest = _forest(trees=12, K=3, measures=["mdi", "mdi_oob", "mda_holdout"], tree_seed=4)
    view = logic.measures_view(_data(), forest)
    sample = load_data(problem="led", n_samples=1000, random_state=0)
    expected = compute_measures(sample.X_numeric, sample.y, measures=("mdi", "mdi_oob",
                                                                      "mda_holdout"),
                                n_estimators=12, max_features=3, random_state=4,
                                variables=list(sample.variables))
    assert list(view["results"]) == ["mdi", "mdi_oob", "mda_holdout"]
    for m, r in expected.items():
        np.testing.assert_allclose(view["results"][m].importances, r.importances, atol=1e-12)
        np.testing.assert_allclose(view["results"][m].per_tree, r.per_tree, atol=1e-12)
    exact = compute_importances(load_data(problem="led"), method="exact", max_features=3,
                                k_semantics="sklearn", criterion="gini")
    np.testing.assert_allclose(view["exact"].importances, exact.importances, atol=1e-12)
    assert view["K"] == 3 and view["missing"] == [] and view["skipped"] == []
    out = logic.render_measures(view, forest, "raw")
    np.testing.assert_allclose(out["figure"].data[0].y, expected["mdi"].importances)
    np.testing.assert_allclose(out["figure"].data[-1].y, exact.importances)
    assert "N = 1,000 rows drawn from the exact distribution" in out["note"]
    assert "Black diamonds" in out["note"] and out["warning"] == ""
    assert [c["id"] for c in out["columns"]] == ["variable", "mdi", "mdi_oob", "mda_holdout",
                                                 "exact"]
    np.testing.assert_allclose([r["exact"] for r in out["rows"]], exact.importances)


def test_entropy_impurity_gives_bits_and_exact_bits():
    view = logic.measures_view(_data(), _forest(K=1, measures=["mdi"], criterion="entropy"))
    assert view["results"]["mdi"].units == "bits" and view["exact"].units == "bits"
    # K = 1, fully grown, entropy: the exact values are Eqn 3 (Louppe et al. 2013, Table 2).
    np.testing.assert_allclose(view["exact"].importances,
                               [0.412, 0.581, 0.531, 0.542, 0.656, 0.225, 0.372], atol=1.5e-3)


def test_sampled_data_without_exact_has_no_diamonds():
    data = _data({"problem": "iris"})
    view = logic.measures_view(data, _forest(measures=["mdi"]))
    assert view["exact"] is None and logic.exact_params(data) is None
    assert "No exact values" in logic.measures_note(view, _forest(measures=["mdi"]))


def test_no_bootstrap_leaves_out_of_bag_measures_out_with_a_sentence():
    forest = _forest(bootstrap=[], measures=["mdi", "mdi_oob", "naive_oob"])
    view = logic.measures_view(_data(), forest)
    assert list(view["results"]) == ["mdi"] and view["skipped"] == ["mdi_oob", "naive_oob"]
    warning = logic.measures_warning(view)
    assert warning.startswith("MDI-oob and naive-oob are left out: they need out-of-bag rows")
    with pytest.raises(ValueError, match="MDI-oob needs out-of-bag rows.*Turn Bootstrap on"):
        logic.measures_view(_data(), _forest(bootstrap=False, measures=["mdi_oob"]))


def test_regression_target_with_a_classification_impurity_is_a_sentence():
    data = _data({"problem": "diabetes"})
    with pytest.raises(ValueError, match="Gini impurity is for class labels, and the target "
                                         ".* is a regression target"):
        logic.measures_view(data, _forest(criterion="gini"))
    view = logic.measures_view(data, _forest(criterion="auto", measures=["mdi"]))
    assert view["results"]["mdi"].units == "variance"


def test_constant_column_is_a_sentence():
    rows = "\n".join(f"{i % 3},7,{i % 2}" for i in range(60))
    data = _upload("a,c,y\n" + rows, "const.csv")
    with pytest.raises(ValueError, match="'c' has a single value in every row"):
        logic.measures_view(data, _forest())


def test_cancelled_view_shows_the_measures_that_finished():
    data = _data({"problem": "xor:irrelevant=1", "sampling": "sample", "seed": "3"})
    logic.measures_view(data, _forest(measures=["mdi"], tree_seed=11))
    view = logic.measures_view(data, _forest(measures=["mdi", "ranger"], tree_seed=11),
                               compute=False)
    assert list(view["results"]) == ["mdi"] and view["missing"] == ["ranger"]
    assert "Cancelled before ranger (corrected) finished" in logic.measures_warning(view)
    outputs = logic.measures_outputs(*_controls(measures=["mdi", "ranger"], tree_seed=11),
                                     "max", data, None, compute=False)
    assert outputs[-1].startswith("Cancelled") and outputs[7] == ""
    nothing = logic.measures_view(data, _forest(measures=["ranger"], tree_seed=12),
                                  compute=False)
    with pytest.raises(ValueError, match="No measure finished"):
        logic.render_measures(nothing, _forest(measures=["ranger"]), "max")


def _controls(**kw):
    base = dict(kind="rf", trees=10, K=None, leaf=1, depth=None, bootstrap=["on"], tree_seed=0,
                measures=["mdi"], criterion="auto")
    base.update(kw)
    return [base[k] for k in logic.FOREST_KEYS]


def test_outputs_put_errors_in_the_error_box():
    out = logic.measures_outputs(*_controls(trees=1), "max", _data(), {"shown": 1})
    assert out[7].startswith("One tree is not enough") and out[8] == "vi-error"
    assert out[7].endswith("The page still shows the previous settings.")
    assert "Traceback" not in out[7]


def test_csv_is_tidy_and_neutralises_formula_names():
    assert logic.neutralise_cell is common.neutralise_cell   # reused, not copied
    rows = "\n".join(f"{i % 3},{i % 5},{(i % 3 + i % 2) % 2}" for i in range(80))
    data = _upload("=cmd|' /C calc'!A0,@x,y\n" + rows, "evil.csv")
    view = logic.measures_view(data, _forest(measures=["mdi", "mdi_oob"]))
    table = list(csv.DictReader(io.StringIO(logic.measures_csv(view))))
    assert {r["variable"] for r in table} == {"'=cmd|' /C calc'!A0", "'@x"}
    assert [r["measure"] for r in table] == ["mdi", "mdi", "mdi_oob", "mdi_oob"]
    mdi = view["results"]["mdi"].importances
    np.testing.assert_allclose([float(r["importance"]) for r in table[:2]], mdi)
    np.testing.assert_allclose([float(r["scaled"]) for r in table[:2]], mdi / mdi.max())
    assert logic.csv_filename("side-by-side", data) == "varimp-measures-side-by-side-evil.csv"
    exact_view = logic.measures_view(_data(), _forest(measures=["mdi"]))
    exact_rows = [r for r in csv.DictReader(io.StringIO(logic.measures_csv(exact_view)))
                  if r["measure"] == "exact_mdi"]
    np.testing.assert_allclose([float(r["importance"]) for r in exact_rows],
                               exact_view["exact"].importances)


# -- 2. noisy-feature protocol --------------------------------------------------------------
def test_auc_view_is_the_core_study():
    settings = logic.study_settings(study="strobl-classification", study_depth=["shallow",
                                                                               "deep"],
                                    reps=2, study_trees=6)
    view = logic.auc_view(settings)
    core = noisy_feature_auc(problems=["strobl:task=classification"], seeds=range(2),
                             n_estimators=6)
    key = ["depth_setting", "measure", "seed"]
    got = view["scores"].sort_values(key).reset_index(drop=True)
    want = core.scores.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    summary = view["summary"].merge(core.summary, on=["problem", "task", "depth_setting",
                                                      "measure"])
    np.testing.assert_allclose(summary["mean_x"], summary["mean_y"])
    np.testing.assert_allclose(summary["std_x"], summary["std_y"])
    assert view["done"] == view["total"] == 4
    out = logic.render_auc(view, settings)
    mdi = next(r for r in out["rows"] if r["measure"] == "MDI")
    assert mdi["deep_paper"] == f"{LI2019_TABLE1[('classification', 'deep')]['mdi']:.2f}"
    deep = core.summary.query("depth_setting == 'deep' and measure == 'mdi'").iloc[0]
    assert mdi["deep"] == f"{deep['mean']:.2f} \u00b1 {deep['std']:.2f} (n = 2)"
    oob = next(r for r in out["rows"] if r["measure"] == "MDA, out-of-bag")
    assert oob["deep_paper"] == "\u2014"
    table = list(csv.DictReader(io.StringIO(logic.auc_csv(view))))
    assert len(table) == len(core.scores)
    paper = {r["measure"]: r["paper_auc"] for r in table if r["depth_setting"] == "shallow"}
    assert float(paper["mdi_oob"]) == LI2019_TABLE1[("classification", "shallow")]["mdi_oob"]
    assert paper["mda_oob"] == ""


def test_cancelled_study_shows_the_finished_runs():
    done = logic.study_settings(study="strobl-classification", study_depth=["deep"], reps=2,
                                study_trees=6)
    logic.auc_view(done)
    more = {**done, "reps": 4}
    view = logic.auc_view(more, compute=False)
    assert view["done"] == 2 and view["total"] == 4
    assert logic.auc_note(view, more).startswith("Cancelled after 2 of 4 runs")
    out = logic.auc_outputs(*[more[k] for k in logic.STUDY_KEYS], None, compute=False)
    assert out[-1].startswith("Cancelled") and out[5] == ""
    none = logic.auc_outputs(*[{**more, "study_trees": 7}[k] for k in logic.STUDY_KEYS], None,
                             compute=False)
    assert none[-3] == "Cancelled before the first repetition finished."


def test_madelon_has_no_paper_values():
    scores = pd.DataFrame([("madelon", "classification", "deep", 1, "mdi", 0, 0.9)],
                          columns=logic._AUC_COLUMNS)
    view = {"scores": scores, "summary": logic.auc_summary(scores), "done": 1, "total": 1}
    cols, rows = logic.auc_table(view)
    assert rows == [{"measure": "MDI", "deep": "0.90 (n = 1)", "deep_paper": "\u2014"}]
    assert "no madelon numbers" in logic.auc_note(view, logic.study_settings(study="madelon"))


# -- 3. bias curves ------------------------------------------------------------------------------
def test_bias_view_is_the_core_curves():
    settings = logic.bias_settings(bias_trees=4, bias_grid="coarse", bias_reps=1, bias_n=60)
    view = logic.bias_view(settings)
    leaf, depth = logic.BIAS_GRIDS["coarse"]
    core = mdi_bias_curves(min_samples_leaf=leaf, max_depth=depth, n_samples=60,
                           n_estimators=4)
    key = ["parameter", "value", "measure", "variable"]
    got = view["scores"].sort_values(key).reset_index(drop=True)
    want = core.scores.sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    assert view["done"] == view["total"] == 22
    # the first forests cover both curves (a cancelled run draws both)
    assert {u[1] for u in logic.bias_units(settings)[:2]} == {"min_samples_leaf", "max_depth"}
    out = logic.render_bias(view, settings)
    assert len(out["figure"].data) == 20 and "only X2 is relevant" in out["note"]
    partial = logic.bias_view({**settings, "bias_reps": 2}, compute=False)
    assert partial["done"] == 22 and partial["total"] == 44
    assert logic.bias_note(partial, {**settings, "bias_reps": 2}).startswith(
        "Cancelled after 22 of 44 forests")


# -- the page module ----------------------------------------------------------------------------
def test_page_is_registered(dash_app):
    import dash

    import pages.measures as page

    entry = dash.page_registry["pages.measures"]
    assert entry["path"] == "/measures" and entry["name"] == "Measures" and entry["order"] == 4
    text = str(page.layout(problem="led"))
    for id_ in ("meas-graph", "meas-auc-graph", "meas-bias-graph", "meas-job-cancel",
                "meas-auc-job-cancel", "meas-bias-job-cancel"):
        assert id_ in text
    assert "'format': 'png'" in text


# -- in the browser ------------------------------------------------------------------------------
#: Light settings for the two studies, so every page load stays quick.
LIGHT = ("&study_depth=deep&reps=2&study_trees=4&bias_trees=3&bias_n=40")

def _traces(dash_duo, graph="#meas-graph"):
    return full_traces(dash_duo, graph)


def _wait_for_trace(dash_duo, expected):
    return wait_for_trace(dash_duo, "#meas-graph", expected, timeout=40)


def _expected(K, *, trees=6, measures=("mdi", "mdi_oob"), seed=0, scale=True, **kw):
    sample = load_data(problem="led", n_samples=1000, random_state=0)
    res = compute_measures(sample.X_numeric, sample.y, measures=measures, n_estimators=trees,
                           max_features=K, random_state=seed, variables=list(sample.variables),
                           **kw)
    return {m: (r.importances / np.abs(r.importances).max() if scale else r.importances)
            for m, r in res.items()}


@pytest.mark.browser
def test_page_loads_and_follows_k(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/measures?problem=led&trees=6"
              "&measures=mdi&measures=mdi_oob" + LIGHT)
    _wait_for_trace(dash_duo, _expected(2)["mdi"])        # K blank: sqrt(7) -> 2
    dash_duo.wait_for_contains_text("#meas-note", "Black diamonds", timeout=10)
    # the studies load too: AUC table with the paper's deep MDI, and the curves
    dash_duo.wait_for_contains_text("#meas-auc-table", "0.12", timeout=60)
    until(lambda: len(_traces(dash_duo, "#meas-bias-graph") or []) == 20, 60)
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#meas-k", 3)
    expected = _expected(3)
    traces = _wait_for_trace(dash_duo, expected["mdi"])
    assert np.allclose(traces[1][1], expected["mdi_oob"], atol=1e-12)
    exact = compute_importances(load_data(problem="led"), method="exact", max_features=3,
                                k_semantics="sklearn", criterion="gini").importances
    assert traces[-1][2] == "exact" and np.allclose(traces[-1][1], exact / exact.max())
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("K") == ["3"], 10)

    # the scale toggle redraws without a job: raw values
    dash_duo.find_element("#meas-scale input[value='raw']").click()
    _wait_for_trace(dash_duo, _expected(3, scale=False)["mdi"])
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("scale") == ["raw"],
          10)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_bad_input_is_a_sentence_on_the_page(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/measures?problem=led&trees=6"
              "&measures=mdi&measures=mdi_oob" + LIGHT)
    first = _expected(2)["mdi"]
    _wait_for_trace(dash_duo, first)

    # a single tree
    set_number(dash_duo, "#meas-trees", 1)
    dash_duo.wait_for_contains_text("#meas-error", "One tree is not enough", timeout=30)
    assert np.allclose(_traces(dash_duo)[0][1], first)     # the last good view stays
    set_number(dash_duo, "#meas-trees", 6)
    until(lambda: "vi-hidden" in dash_duo.find_element("#meas-error").get_attribute("class"), 30)

    # no out-of-bag rows: MDI-oob is left out, with a sentence
    dash_duo.find_element("#meas-bootstrap input").click()
    dash_duo.wait_for_contains_text("#meas-warning", "MDI-oob is left out", timeout=30)
    until(lambda: [t[2] for t in _traces(dash_duo)] == ["mdi", "exact"], 30)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []

    # a regression target with a classification-only impurity
    visit(dash_duo, "/measures?problem=diabetes&trees=6"
          "&measures=mdi&criterion=gini" + LIGHT)
    dash_duo.wait_for_contains_text("#meas-error", "is a regression target", timeout=40)

    # a constant column
    rows = "\n".join(f"{i % 3},7,{i % 2}" for i in range(60))
    data = _upload("a,c,y\n" + rows, "const.csv")
    visit(dash_duo, "/measures?" + datasource.data_query(data)
          + "&trees=6&measures=mdi" + LIGHT)
    dash_duo.wait_for_contains_text("#meas-error", "'c' has a single value", timeout=40)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_shared_link_reproduces_the_view(dash_duo, dash_app):
    query = ("problem=led&kind=et&trees=8&K=2&leaf=3&depth=5&bootstrap=1&tree_seed=5"
             "&measures=mdi&measures=ranger&criterion=entropy&scale=raw"
             "&study=strobl-regression&study_depth=deep&reps=2&study_trees=4"
             "&bias_trees=3&bias_grid=coarse&bias_reps=1&bias_n=40")
    sample = load_data(problem="led", n_samples=1000, random_state=0)
    res = compute_measures(sample.X_numeric, sample.y, kind="et", measures=("mdi", "ranger"),
                           n_estimators=8, max_features=2, min_samples_leaf=3, max_depth=5,
                           criterion="entropy", random_state=5, variables=list(sample.variables))
    exact = compute_importances(load_data(problem="led"), method="exact", max_features=2,
                                max_depth=5, k_semantics="sklearn", criterion="entropy")
    open_page(dash_duo, dash_app, "/measures?" + query)
    traces = _wait_for_trace(dash_duo, res["mdi"].importances)
    assert np.allclose(traces[1][1], res["ranger"].importances, atol=1e-12)
    assert np.allclose(traces[2][1], exact.importances, atol=1e-12)
    assert dash_duo.find_element("#meas-kind input[value='et']").is_selected()
    assert dash_duo.find_element("#meas-scale input[value='raw']").is_selected()
    assert dash_duo.find_element("#meas-k").get_attribute("value") == "2"
    assert dash_duo.find_element("#meas-leaf").get_attribute("value") == "3"
    assert dash_duo.find_element("#meas-tree-seed").get_attribute("value") == "5"
    assert not dash_duo.find_element("#meas-measures input[value='mdi_oob']").is_selected()
    dash_duo.wait_for_contains_text(
        "#meas-auc-table", f"{LI2019_TABLE1[('regression', 'deep')]['mdi_oob']:.2f}", timeout=60)
    shown = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert shown["measures"] == ["mdi", "ranger"] and shown["study"] == ["strobl-regression"]

    # the CSV holds the same numbers
    dash_duo.find_element("#meas-download-button").click()
    path = Path(dash_duo.download_path) / "varimp-measures-side-by-side-led.csv"
    until(lambda: path.exists() and path.stat().st_size > 0, 20)
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    by = {m: [float(r["importance"]) for r in rows if r["measure"] == m]
          for m in ("mdi", "ranger", "exact_mdi")}
    np.testing.assert_allclose(by["mdi"], res["mdi"].importances)
    np.testing.assert_allclose(by["ranger"], res["ranger"].importances)
    np.testing.assert_allclose(by["exact_mdi"], exact.importances)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_cancel_keeps_the_finished_forests(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/measures?problem=led&trees=6&measures=mdi"
              "&study_depth=deep&reps=1&study_trees=4"
              "&bias_trees=600&bias_grid=full&bias_n=3000")
    # 70 forests of 600 trees on 3,000 rows take far longer than the test waits.
    message = "#meas-bias-job-message"
    until(lambda: "Forest 3 of 70" in dash_duo.find_element(message).text, 120)
    fieldset = dash_duo.find_element("#meas-bias-fieldset")
    assert fieldset.get_attribute("disabled") is not None
    dash_duo.find_element("#meas-bias-job-cancel").click()
    dash_duo.wait_for_contains_text("#meas-bias-note", "Cancelled after", timeout=30)
    assert "of 70 forests" in dash_duo.find_element("#meas-bias-note").text
    until(lambda: dash_duo.find_element("#meas-bias-fieldset").get_attribute("disabled")
          is None, 20)
    dash_duo.wait_for_contains_text("#meas-bias-job-status", "Cancelled", timeout=10)
    assert len(_traces(dash_duo, "#meas-bias-graph") or []) == 20   # both curves drawn
    assert dash_duo.get_logs() == []
