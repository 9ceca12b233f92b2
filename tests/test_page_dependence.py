"""The Dependence page: its callback logic as plain functions, then the page in Chromium."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _browser import figure as _figure
from _browser import open_page, set_number, url_query, visit, wait_for
from _pages import query_dict as _query
from _pages import constant_column_frame, registered_page, upload_frame

from pages._ui import cache, datasource
from pages._ui import dependence_logic as logic
from pages._ui import interactions_logic as forest
from varimp_core.local.response_dependence import dependence_over_responses
from varimp_core.local.partial_dependence import partial_dependence
from varimp_core.local.importance import fit_uniform_forest

XOR = {"source": "problem", "problem": "xor:irrelevant=3", "sampling": "sample", "n": 500,
       "seed": 0, "bins": 5}
XOR_URL = "problem=xor:relevant=2,irrelevant=3&sampling=sample&n=500&trees=50"


def _forest(**kw):
    return forest.forest_settings(**{"forest": "uniform", "trees": 30, **kw})


def _dep(**kw):
    return logic.dependence_settings(**{"feature": "X1", "grid": 10, "ice": 20, **kw})


def _upload(df: pd.DataFrame) -> dict:
    return upload_frame(df, "c.csv")


def _with_constant(n=200, seed=0):
    return constant_column_frame("x2", 0.0, n, seed)


# -- state and URL ----------------------------------------------------------------------
def test_defaults_pick_the_first_variable():
    st = logic.initial_state(_query(XOR_URL))
    v = st["values"]
    assert st["variables"] == ["X1", "X2", "X3", "X4", "X5"] and st["notes"] == []
    assert (v["feature"], v["feature2"], v["grid"], v["low"], v["high"], v["ice"]) == \
        ("X1", None, 30, 0.05, 0.95, 50)
    assert _query(st["query"])["trees"] == "50"


def test_link_values_round_trip_and_bad_ones_get_notes():
    st = logic.initial_state(_query(XOR_URL + "&feature=X2&feature2=X3&grid=12&low=0.1"
                                    "&high=0.8&ice=5&positions=12&forest=rf"))
    assert st["notes"] == []
    again = logic.initial_state(_query(st["query"]))
    assert again["values"] == st["values"]
    bad = logic.initial_state(_query(XOR_URL + "&feature=Z9&feature2=X1&low=0.9&high=0.2"))
    assert bad["values"]["feature"] == "X1" and bad["values"]["feature2"] is None
    text = " ".join(bad["notes"])
    assert "'Z9' was ignored" in text and "percentiles were ignored" in text


@pytest.mark.parametrize("kw,words", [
    ({"feature": None}, "Choose a variable"),
    ({"feature": "X9"}, "no input 'X9'"),
    ({"feature2": "X1"}, "two different variables"),
    ({"grid": 1}, "grid resolution"),
    ({"low": 0.5, "high": 0.5}, "percentiles"),
    ({"ice": -1}, "ICE lines"),
])
def test_dependence_settings_refuse_bad_values(kw, words):
    with pytest.raises(ValueError, match=words):
        _dep(variables=["X1", "X2"], **kw)


# -- computing ------------------------------------------------------------------------------
def test_partial_dependence_is_the_cores_on_the_same_forest():
    settings, dep = _forest(), _dep(feature2="X2")
    store = logic.compute(XOR, settings, dep)
    assert len(store["pd"]) == 2 and store["pair"] is not None
    prepared = datasource.load_prepared(XOR)
    fit, assessed = forest.split_rows(500, 0, "train")
    model = fit_uniform_forest(prepared.X_numeric[fit], prepared.y[fit], n_estimators=30,
                               random_state=0)
    direct = partial_dependence(model, prepared.X_numeric[assessed], "X1", kind="both",
                                grid_resolution=10, categorical_features=["X1"],
                                feature_names=list(prepared.variables), max_ice_lines=20,
                                random_state=0)
    cached = logic.pd_from_json(cache.get_json(store["pd"][0]))
    assert cached.outputs == ("0", "1")                      # class labels, as text
    np.testing.assert_array_equal(cached.average, direct.average)
    np.testing.assert_array_equal(cached.individual, direct.individual)
    np.testing.assert_array_equal(cached.ice_rows, assessed[direct.ice_rows])   # data rows
    # the figures draw those numbers: binary target, so the positive class by default
    out = logic.draw(store)
    assert out["label"] == "1" and out["messages"] == []
    pd_trace = [t for t in out["pd"][0].data if t.meta == "pd"]
    assert len(pd_trace) == 1
    np.testing.assert_array_equal(pd_trace[0].y, direct.average[1])
    pair = logic.pd_from_json(cache.get_json(store["pair"]))
    np.testing.assert_array_equal(np.asarray(out["pd2"].data[0].z).T, pair.average[1])
    # every class side by side
    assert len([t for t in logic.draw(store, logic.ALL_CLASSES)["pd"][0].data
                if t.meta == "pd"]) == 2


def test_dependence_over_responses_uses_data_rows_and_positions():
    store = logic.compute(XOR, _forest(forest="et", K=1), _dep())
    local_json = cache.get_json(store["local"])
    local = forest.local_from_json(local_json)
    r = dependence_over_responses(local, "X1", positions=1)
    out = logic.draw(store, None, "1")
    boxes = [t for t in out["dor"][0].data if t.meta == "points"]
    assert sum(len(b.x) for b in boxes) == len(r.value)
    rows = np.concatenate([np.asarray(b.customdata)[:, 0] for b in boxes])
    assert set(rows) == set(np.asarray(local_json["rows"])[r.observation])
    text = logic.dor_csv(store, "1")
    assert text.splitlines()[0] == "feature,row,value,prediction,position"
    assert len(text.splitlines()) == len(r.value) + 1
    with pytest.raises(ValueError, match="positions"):
        logic.draw(store, None, "7")


def test_regression_has_no_class_choice():
    data = forest.page_data({"source": "problem", "problem": "diabetes"})[0]
    store = logic.compute(data, _forest(forest="rf", trees=10),
                          _dep(feature="bmi", ice=0, grid=8))
    assert logic.class_options(store) == [] and logic.default_class(store, "1") is None
    out = logic.draw(store, "1")                               # a stale class is ignored
    assert out["label"] is None
    (trace,) = out["pd"][0].data                               # no ICE lines asked
    assert trace.meta == "pd" and "predicted response" in trace.hovertemplate
    assert "prediction" in logic.pd_csv(store)


def test_constant_variable_and_uniform_forest_get_sentences():
    data = _upload(_with_constant())
    with pytest.raises(ValueError, match="constant"):
        logic.compute(data, _forest(), _dep(feature="x1"))
    with pytest.raises(ValueError, match="'const' is constant"):
        logic.compute(data, _forest(forest="rf"), _dep(feature="const"))
    store = logic.compute(data, _forest(forest="rf"), _dep(feature="x1", feature2="x2"))
    assert logic.csv_filename(store, "pd") == "varimp-dependence-c-x1-x2-pd.csv"


def test_cached_results_are_reused():
    settings, dep = _forest(trees=12), _dep(grid=6)
    first = logic.compute(XOR, settings, dep)
    calls = []
    second = logic.compute(XOR, settings, dep, progress=lambda *a: calls.append(a))
    assert first == second
    assert all(text == "" for _, _, text in calls)            # only the "done" ticks


def test_page_is_registered(dash_app):
    page = registered_page("pages.dependence")
    assert (page["path"], page["name"], page["order"]) == ("/dependence", "Dependence", 6)


# -- in the browser ------------------------------------------------------------------------
def _ice_lines(dash_duo):
    ice = [t for t in _figure(dash_duo, "dep-pd") if t["meta"] == "ice"]
    return sum(v is None for v in ice[0]["y"]) if ice else None


@pytest.mark.browser
def test_dependence_page_loads_and_controls_update_the_figures(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/dependence?" + XOR_URL + "&ice=20&grid=10")
    wait_for(lambda: _ice_lines(dash_duo) == 20, what="20 ICE lines")
    pd_traces = [t for t in _figure(dash_duo, "dep-pd") if t["meta"] == "pd"]
    assert len(pd_traces) == 1 and pd_traces[0]["x"] == [0.0, 1.0]    # a binary input
    wait_for(lambda: _figure(dash_duo, "dep-dor"), what="the dependence over responses")
    assert "not Friedman" in dash_duo.find_element("#dep-dor").text
    assert "vi-hidden" in dash_duo.find_element("#dep-pd2-card").get_attribute("class")
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#dep-ice", 7)
    wait_for(lambda: _ice_lines(dash_duo) == 7, what="7 ICE lines")
    dash_duo.select_dcc_dropdown("#dep-feature2", value="X2")
    wait_for(lambda: _figure(dash_duo, "dep-pd2"), what="the 2-D partial dependence")
    wait_for(lambda: "vi-hidden" not in dash_duo.find_element("#dep-pd2-card")
             .get_attribute("class"), what="the 2-D card")
    wait_for(lambda: [t for t in _figure(dash_duo, "dep-pd-b") if t["meta"] == "pd"],
             what="the second variable's curve")
    query = url_query(dash_duo)
    assert (query["ice"], query["feature2"]) == ("7", "X2")
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_regression_constant_columns_and_single_tree(dash_duo, dash_app):
    data = _upload(_with_constant(seed=9))
    dash_duo.start_server(dash_app)
    # a regression target: no class control, a link's class is ignored
    visit(dash_duo, "/dependence?problem=diabetes&feature=bmi"
          "&forest=rf&trees=10&ice=5&grid=8&label=2")
    wait_for(lambda: [t for t in _figure(dash_duo, "dep-pd") if t["meta"] == "pd"],
             what="the regression partial dependence")
    assert "vi-hidden" in dash_duo.find_element("#dep-label-field").get_attribute("class")
    assert dash_duo.get_logs() == []

    # a constant column: a sentence, never a traceback
    visit(dash_duo, "/dependence?forest=rf&feature=const&" + datasource.data_query(data))
    dash_duo.wait_for_contains_text("#dep-error", "'const' is constant", timeout=60)
    assert "Traceback" not in dash_duo.find_element("#dep-error").text

    # a single tree still has a partial dependence
    visit(dash_duo, "/dependence?" + XOR_URL.replace("trees=50", "trees=1") + "&ice=3&grid=5")
    wait_for(lambda: _ice_lines(dash_duo) == 3, what="the single tree's curves")
    assert dash_duo.get_logs() == []
