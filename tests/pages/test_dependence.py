"""The Dependence page: its parameters, computing and drawing, then the page in Chromium."""

from __future__ import annotations

import dash
import numpy as np
import pandas as pd
import pytest
from _browser import figure as _figure
from _browser import open_page, set_number, url_query, visit, wait_for
from _pages import query_dict as _query
from _pages import constant_column_frame, registered_page, upload_frame
from _pages import page_module

from pages._framework import datasource
from pages._framework import local_forest as forest
from pages._framework.datachoice import DataChoice
from pages._framework.params import Context
from varimp_core.local.heldout import split_rows
from varimp_core.local.response_dependence import dependence_over_responses
from varimp_core.local.partial_dependence import PartialDependence, partial_dependence
from varimp_core.local.importance import fit_uniform_forest

draw = page_module("dependence")

XOR = DataChoice.from_params({"source": "problem", "problem": "xor:irrelevant=3",
                              "sampling": "sample", "n": 500, "seed": 0, "bins": 5})
XOR_URL = "problem=xor:relevant=2,irrelevant=3&sampling=sample&n=500&trees=50"


@pytest.fixture(scope="module")
def page(app_module):
    import pages.dependence as module

    return module


def _controls(**kw):
    """Control values by parameter name, as the browser sends them."""
    return {"forest": "uniform", "n_estimators": 30, "max_features": None, "random_state": 0,
            "rows": "train", "feature": "X1", "feature2": "none", "grid_resolution": 10,
            "percentiles": [0.05, 0.95], "max_ice_lines": 20, **kw}


def _run(page, data=XOR, progress=None, **kw):
    """The page's job on these controls: (its cached result, the store its figures use)."""
    result, settings, data = page.VIEW.run(_controls(**kw), data.to_store(), progress=progress)
    return result, page.render(result, settings, data)[0]


def _upload(df: pd.DataFrame) -> DataChoice:
    return DataChoice.from_params(upload_frame(df, "c.csv"))


def _with_constant(n=200, seed=0):
    return constant_column_frame("x2", 0.0, n, seed)


# -- parameters and URL -----------------------------------------------------------------
def test_defaults_pick_the_most_important_variable(page, monkeypatch, tmp_path):
    """Issue #26: the page opened on the first column; it opens on the input the data's
    cheap ranking puts first: X1 or X2 of XOR (X3..X5 are irrelevant).  Ranking loads the
    data, so a first visit leaves the variable blank and the job ranks and draws the first
    (issue #27: no layout loads data); a visit after that opens on it."""
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))   # a first visit: nothing cached
    first = page.initial_state(_query(XOR_URL))
    assert first["values"]["feature"] is None and first["notes"] == []
    result, store = _run(page, data=first["page"], feature=None)
    assert store["settings"]["feature"] in ("X1", "X2")
    st = page.initial_state(_query(XOR_URL))
    v = st["values"]
    assert st["variables"] == ["X1", "X2", "X3", "X4", "X5"] and st["notes"] == []
    assert v["feature"] == store["settings"]["feature"]
    assert (v["feature2"], v["grid_resolution"], v["percentiles"],
            v["max_ice_lines"]) == (None, 30, [0.05, 0.95], 50)
    assert _query(st["query"])["trees"] == "50"


def test_an_upload_opens_on_its_informative_column_not_its_first(page):
    """``noise`` comes first and is independent of y; ``signal`` decides y on 95% of rows."""
    rng = np.random.default_rng(8)
    n = 300
    y = rng.integers(0, 2, n)
    df = pd.DataFrame({"noise": rng.normal(size=n).round(2), "other": rng.integers(0, 4, n),
                       "signal": np.where(rng.random(n) < 0.95, y, 1 - y) * 2.0
                       + rng.normal(scale=0.1, size=n).round(2), "y": y})
    data = _upload(df)
    st = page.initial_state(_query(data.query()))
    # A first visit prepares nothing in the request (#27.4): the variable is the job's choice.
    assert st["variables"][0] == "noise" and st["values"]["feature"] is None
    datasource.data_view(data.as_dict)        # the Data page's job: summary and ranking
    again = page.initial_state(_query(data.query()))
    assert again["variables"][0] == "noise" and again["values"]["feature"] == "signal"


def test_link_values_round_trip_and_bad_ones_get_notes(page):
    st = page.initial_state(_query(XOR_URL + "&feature=X2&feature2=X3&grid=12&low=0.1"
                                             "&high=0.8&ice=5&positions=12&forest=rf"))
    assert st["notes"] == []
    again = page.initial_state(_query(st["query"]))
    assert again["values"] == st["values"]
    page.forest.ranked_variables(st["page"])   # ranked, as by a first job on this data
    bad = page.initial_state(_query(XOR_URL + "&feature=Z9&feature2=X1&low=0.9&high=0.2"))
    assert bad["values"]["feature"] == "X1" and bad["values"]["feature2"] is None
    text = " ".join(bad["notes"])
    assert "'Z9' was ignored" in text and "percentiles were ignored" in text


def test_a_blank_variable_is_the_jobs_choice_not_an_error(page):
    assert page.PARAMS.settings(_controls(feature=None), Context(5))["feature"] is None


@pytest.mark.parametrize("kw,words", [
    ({"grid_resolution": 1}, "Grid resolution"),
    ({"percentiles": [0.5, 0.5]}, "percentiles"),
    ({"max_ice_lines": -1}, "ICE lines"),
])
def test_dependence_settings_refuse_bad_values(page, kw, words):
    with pytest.raises(ValueError, match=words):
        page.PARAMS.settings(_controls(**kw), Context(5))


@pytest.mark.parametrize("kw,words", [
    ({"feature": "X9"}, "no input 'X9'"),
    ({"feature2": "X1"}, "two different variables"),
])
def test_the_job_refuses_variables_the_data_lacks(page, kw, words):
    with pytest.raises(ValueError, match=words):
        _run(page, **kw)


def test_out_of_range_values_are_sentences_and_never_defaults(page):
    for grid in (0, 1, 201, 10**8):
        settings, errors = page.PARAMS.validate(_controls(grid_resolution=grid), Context(5))
        assert settings == {} and list(errors) == ["grid_resolution"]
        assert errors["grid_resolution"].startswith(
            "Grid resolution must be a whole number from 2 to 200")
    _, errors = page.PARAMS.validate(_controls(max_ice_lines=501, n_estimators=0,
                                               max_features=6), Context(5))
    assert set(errors) == {"max_ice_lines", "n_estimators", "max_features"}
    _, errors = page.PARAMS.validate(_controls(max_ice_lines=None), Context(5))
    assert errors == {"max_ice_lines": "Enter ICE lines: a whole number from 0 to 500."}
    shown, errors = page.DISPLAY.validate({"label": None, "positions": "7"}, Context())
    assert shown == {} and "Positions must be one of 1, 12, all" in errors["positions"]


# -- computing ------------------------------------------------------------------------------
def test_partial_dependence_is_the_cores_on_the_same_forest(page):
    result, store = _run(page, feature2="X2")
    assert len(result["pd"]) == 2 and result["pair"] is not None
    prepared = datasource.load_prepared(XOR.as_dict)
    fit, assessed = split_rows(500, 0, "train")
    model = fit_uniform_forest(prepared.X_numeric[fit], prepared.y[fit], n_estimators=30,
                               random_state=0)
    direct = partial_dependence(model, prepared.X_numeric[assessed], "X1", kind="both",
                                grid_resolution=10, categorical_features=["X1"],
                                feature_names=list(prepared.variables), max_ice_lines=20,
                                random_state=0)
    cached = PartialDependence.from_dict(result["pd"][0])
    assert cached.outputs == ("0", "1")                      # class labels, as text
    np.testing.assert_array_equal(cached.average, direct.average)
    np.testing.assert_array_equal(cached.individual, direct.individual)
    np.testing.assert_array_equal(cached.ice_rows, assessed[direct.ice_rows])   # data rows
    # the figures draw those numbers: binary target, so the positive class by default
    out = draw.draw(store)
    assert out["label"] == "1" and out["messages"] == []
    pd_trace = [t for t in out["pd"][0].data if t.meta == "pd"]
    assert len(pd_trace) == 1
    np.testing.assert_array_equal(pd_trace[0].y, direct.average[1])
    pair = PartialDependence.from_dict(result["pair"])
    np.testing.assert_array_equal(np.asarray(out["pd2"].data[0].z).T, pair.average[1])
    # every class side by side
    assert len([t for t in draw.draw(store, draw.ALL_CLASSES)["pd"][0].data
                if t.meta == "pd"]) == 2


def test_dependence_over_responses_uses_data_rows_and_positions(page):
    _, store = _run(page, forest="et", max_features=1)
    local, data_rows = forest.load_local(store["local"])
    r = dependence_over_responses(local, "X1", positions=1)
    out = draw.draw(store, None, "1")
    boxes = [t for t in out["dor"][0].data if t.meta == "points"]
    assert sum(len(b.x) for b in boxes) == len(r.value)
    rows = np.concatenate([np.asarray(b.customdata)[:, 0] for b in boxes])
    assert set(rows) == set(data_rows[r.observation])
    text = draw.dor_csv(store, "1")
    assert text.splitlines()[0] == "feature,row,value,prediction,position"
    assert len(text.splitlines()) == len(r.value) + 1
    with pytest.raises(ValueError, match="Positions"):
        page.DISPLAY.settings({"label": None, "positions": "7"}, Context())


def test_csvs_and_axes_name_categories_and_missing_values(page):
    import io

    from _pages import penguins_like

    data = _upload(penguins_like())                          # rows 0-23 have no bill length
    _, store = _run(page, data, feature="island", feature2="bill", max_ice_lines=0)
    pd_rows = pd.read_csv(io.StringIO(draw.pd_csv(store)))
    assert set(pd_rows.loc[pd_rows["feature"] == "island", "value"]) == {
        "Biscoe", "Dream", "Torgersen"}
    dor = pd.read_csv(io.StringIO(draw.dor_csv(store, "all")), dtype={"value": str})
    isl, bl = dor[dor["feature"] == "island"], dor[dor["feature"] == "bill"]
    assert set(isl["value"]) <= {"Biscoe", "Dream", "Torgersen"} and len(isl)
    # The island of data row r is the (r mod 3)-th name; a bill is missing exactly in rows 0-23.
    assert (isl["value"] == np.array(["Biscoe", "Dream", "Torgersen"])[isl["row"] % 3]).all()
    assert ((bl["value"] == "missing") == (bl["row"] < 24)).all() and (bl["row"] < 24).any()
    out = draw.draw(store, None, "all")
    assert list(out["pd"][0].layout.xaxis.ticktext) == ["Biscoe", "Dream", "Torgersen"]
    assert "missing" in list(out["dor"][1].layout.xaxis.ticktext)


def test_regression_has_no_class_choice(page):
    data = forest.page_data(DataChoice.from_params({"source": "problem",
                                                    "problem": "diabetes"}))[0]
    _, store = _run(page, data, forest="rf", n_estimators=10, feature="bmi",
                    max_ice_lines=0, grid_resolution=8)
    assert draw.class_options(store["classes"]) == []
    assert draw.default_class(store["classes"], "1") is None
    out = draw.draw(store, "1")                                # a stale class is ignored
    assert out["label"] is None
    (trace,) = out["pd"][0].data                               # no ICE lines asked
    assert trace.meta == "pd" and "predicted response" in trace.hovertemplate
    assert "prediction" in draw.pd_csv(store)


def test_a_constant_column_is_left_out_and_every_forest_runs(page):
    """Issue #26: a constant column used to stop the default (uniform) forest with a
    refusal; the preparation now excludes it as constant, so no forest ever sees it."""
    data = _upload(_with_constant())
    excluded = dict(data.load().excluded)
    assert list(excluded) == ["const"] and "constant" in excluded["const"]
    _, store = _run(page, data, feature="x1")              # the uniform forest runs
    assert "pd" in [t.meta for t in draw.draw(store, "1")["pd"][0].data]
    with pytest.raises(ValueError, match="const"):          # not an input: said, not run
        _run(page, data, forest="rf", feature="const")
    _, store = _run(page, data, forest="rf", feature="x1", feature2="x2")
    assert draw.csv_filename(store, "pd") == "varimp-dependence-c-x1-x2-pd.csv"


def test_cached_results_are_reused(page):
    first = _run(page, n_estimators=12, grid_resolution=6)
    calls = []
    second = _run(page, n_estimators=12, grid_resolution=6,
                  progress=lambda *a: calls.append(a))
    assert first == second
    assert all(text == "" for _, _, text in calls)            # only the "done" ticks


def test_the_local_importance_is_shared_with_the_interactions_page(page):
    import pages.interactions as interactions

    _, store = _run(page, n_estimators=14, feature2="X2")
    settings = {k: store["settings"][k] for k in forest.FOREST_KEYS}
    calls = []
    again = interactions.compute(settings, XOR, lambda *a: calls.append(a))
    assert again["local"] == store["local"] and calls == []     # counted once, for both


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
def test_an_out_of_range_value_is_a_sentence_and_nothing_is_recomputed(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/dependence?" + XOR_URL + "&ice=20&grid=10")
    wait_for(lambda: _ice_lines(dash_duo) == 20, what="20 ICE lines")
    before = _figure(dash_duo, "dep-pd")
    set_number(dash_duo, "#dep-grid", 500)
    dash_duo.wait_for_contains_text(
        "#dep-grid-error", "Grid resolution must be a whole number from 2 to 200, not 500",
        timeout=20)
    dash_duo.wait_for_contains_text("#dep-job-status", "Nothing was recomputed", timeout=10)
    assert _figure(dash_duo, "dep-pd") == before
    assert url_query(dash_duo)["grid"] == "10"
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
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

    # a constant column is excluded (issue #26): a link naming it gets a note, and the
    # page draws another input's partial dependence
    visit(dash_duo, "/dependence?forest=rf&feature=const&" + data.query())
    dash_duo.wait_for_contains_text("#dep-link-notes", "'const'", timeout=60)
    wait_for(lambda: [t for t in _figure(dash_duo, "dep-pd") if t["meta"] == "pd"],
             what="the partial dependence without the constant column")
    assert dash_duo.find_element("#dep-error").text == ""

    # a single tree still has a partial dependence
    visit(dash_duo, "/dependence?" + XOR_URL.replace("trees=50", "trees=1") + "&ice=3&grid=5")
    wait_for(lambda: _ice_lines(dash_duo) == 3, what="the single tree's curves")
    assert dash_duo.get_logs() == []


def test_a_result_whose_forest_the_cache_evicted_is_computed_again(page):
    """The cached view names the local-importance entry it was drawn from; when the cache
    has evicted that entry (and the drawn copy), a visit must not keep failing on the stale
    result: the plain callback forgets it and starts the job instead."""
    from pages._server import cache

    controls = _controls(random_state=11)
    result, settings, data = page.VIEW.run(controls, XOR.to_store())
    for key in (result["local"], page.VIEW.drawn_key(data, settings, {})):
        cache.get_cache().delete(key)
    out = page.VIEW.peek(*[controls[n] for n in page.PARAMS.names], XOR.to_store())
    miss = out[len(page.VIEW.outputs) + len(page.PARAMS.names)]  # the view has no URL store
    assert isinstance(miss, dict) and miss["values"] == controls      # the job starts
    assert cache.get_json(page.VIEW.key(data, settings, {})) is None  # the stale result is gone


def test_a_download_with_nothing_to_send_says_why(page):
    """A CSV click before any figure, or after the cache lost the result, gets a sentence."""
    from pages._server import cache
    dependence_page = page_module("dependence")
    from pages._framework.page_frame import csv_download

    def make(store, _):
        return dependence_page.pd_csv(store), "pd.csv"

    sent, note = csv_download(make, None, None)
    assert sent is dash.no_update and note.startswith("Nothing to download yet")
    _, store = _run(page, random_state=12)
    assert csv_download(make, store, None)[1] == ""
    cache.get_cache().delete(store["result"])
    sent, note = csv_download(make, store, None)
    assert sent is dash.no_update and "no longer on the server" in note


def test_a_class_the_target_does_not_have_is_a_sentence(page):
    """A link's label=7 on XOR (classes 0 and 1) is not silently replaced: the page says
    which class it shows instead (the positive one of a binary target)."""
    _, store = _run(page, random_state=13)
    assert [str(c) for c in store["classes"]] == ["0", "1"]
    out = draw.draw(store, "7")
    assert out["label"] == store["classes"][-1]
    assert "Class '7' is not a class of this target (its classes: 0, 1); showing class 1 " \
           "instead." in out["messages"]
    assert not any("is not a class" in m for m in draw.draw(store, store["classes"][0])["messages"])


def test_the_variables_of_an_upload_come_from_the_data_pages_view(monkeypatch):
    """The Data page's job prepares an upload once and caches its view; the Dependence page's
    layout lists the inputs from that view, without preparing the table again in the web
    request.  A date becomes its parts and a text column stays one input, so the names are
    the prepared inputs', not the file's columns."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"when": pd.date_range("2024-01-01", periods=60, freq="D").astype(str),
                       "colour": rng.choice(["red", "green"], 60),
                       "x": rng.normal(size=60).round(3), "y": rng.integers(0, 2, 60)})
    df.loc[4, "x"] = np.nan
    choice = _upload(df)
    # by hand, from prepare's documented rule: a date becomes <name>_year, _month and _weekday,
    # those that change (60 days from 1 January 2024: not the year), then the other inputs
    expected = ["when_month", "when_weekday", "colour", "x"]
    assert list(datasource.load_prepared(choice.as_dict).variables) == expected
    assert len(expected) > 3 and "colour" in expected and "when" not in expected
    datasource.data_view(choice.as_dict)  # what the Data page's job computes

    def no_loading(self):
        raise AssertionError("the layout prepared the upload again")

    monkeypatch.setattr(DataChoice, "load", no_loading)
    monkeypatch.setattr(datasource, "load_prepared", no_loading)
    assert forest.data_variables(choice) == expected
