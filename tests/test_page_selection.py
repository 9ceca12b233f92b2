"""The Selection page: its callback logic as plain functions, then the page in Chromium."""

from __future__ import annotations

import numpy as np
import pytest
from _browser import image_format, open_link_with_note, open_page, set_number, url_query, wait_for
from _browser import traces_by_meta as _traces
from _pages import query_dict as _query
from _pages import problem_settings, registered_page, store_csv

from pages._ui import cache, datasource
from pages._ui import selection_logic as logic
from varimp_core.api import compute_importances
from varimp_core.studies.nulls import permutation_null
from varimp_core.exact.relevance import relevance
from varimp_core.studies.selection import madelon_curves

XOR = "xor:irrelevant=2"


def _null(problem=XOR, **kw):
    controls = dict(tol=None, R=19, trees=10, method="forest", seed=0, N=300)
    return problem_settings(logic, logic.null_settings, problem, **{**controls, **kw})


def _rs(choice="480", data=None, **kw):
    controls = dict(choice=choice, data=data or {}, q=20, alpha=0.5, K=None, T=10, L=5,
                    beta=0.95, seeds=1)
    controls.update(kw)
    return logic.rs_settings(**controls)


# -- state and URL ----------------------------------------------------------------------
def test_default_state_is_light():
    s = logic.initial_state({})
    v = s["values"]
    assert s["notes"] == []
    assert (v["rs"], v["T"], v["seeds"], v["q"], v["R"], v["trees"]) == \
        ("480", 300, 1, 50, 50, 50)
    assert "T=" not in s["query"] and "rs=" not in s["query"]     # defaults stay out of links


def test_link_state_round_trips_through_the_url():
    query = {"problem": XOR, "tol": "0.01", "R": "30", "trees": "7", "method": "sklearn-et",
             "null_seed": "4", "N": "250", "rs": "1480", "q": "40", "alpha": "0.25",
             "K": "7", "T": "120", "L": "3", "beta": "0.9", "seeds": "2", "show": "rs"}
    s = logic.initial_state(query)
    assert s["notes"] == []
    again = logic.initial_state(_query(s["query"]))
    assert again["notes"] == [] and again["values"] == s["values"]
    assert _query(s["query"])["rs"] == "1480" and _query(s["query"])["show"] == "rs"


@pytest.mark.parametrize("query,words", [
    ({"R": "999999"}, "number of permutations R"),
    ({"T": "0"}, "number of trees T"),
    ({"rs": "7"}, "RS/SRS problem"),
    ({"beta": "2"}, "\u03b2"),
    ({"q": "900"}, "cannot run together"),      # q > p = 500 for Madelon-480
])
def test_bad_links_fall_back_with_a_sentence(query, words):
    s = logic.initial_state(query)
    assert len(s["notes"]) == 1 and words in s["notes"][0]
    assert "Traceback" not in s["notes"][0]


@pytest.mark.parametrize("change,words", [
    (dict(q=501), "subspace size q must be a whole number from 1 to 500"),
    (dict(beta=0), "above 0"),
    (dict(alpha="x"), "must be a number"),
    (dict(T=None), "Enter the number of trees T"),
    (dict(seeds=10, T=5000), "more than the limit"),
])
def test_bad_rs_controls_are_sentences(change, words):
    with pytest.raises(ValueError, match=words):
        _rs(**change)


def test_bad_null_controls_are_sentences():
    with pytest.raises(ValueError, match="R \u00d7 T"):
        _null(R=1000, trees=1000)
    with pytest.raises(ValueError, match="threshold tol"):
        _null(tol=-1)


def test_caps_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_TREES", "100")
    assert logic.max_rs_trees() == 100 and logic.max_null_trees() == 100
    with pytest.raises(ValueError, match="from 1 to 100"):
        _rs(T=300)
    assert "T \u2264 100" in logic.caps_text()


# -- computing --------------------------------------------------------------------------
def test_relevance_and_null_are_the_core_numbers():
    settings = _null()
    out = logic.run_null(settings, instance="t-null")
    view = logic.render_null(out["current"])
    table = datasource.load_prepared(settings["data"]).table
    r = relevance(table)
    assert [row["relevance"] for row in view["relevance_rows"]] == list(r.relevance)
    assert [row["degree"] for row in view["relevance_rows"]] == [1, 1, "", ""]
    assert "Exact" in view["relevance_sentences"][0]
    strong = next(t for t in view["relevance_figure"].data if t.meta == "class-strong")
    exact = compute_importances(table, method="exact", max_features=1).importances
    assert list(strong.y) == pytest.approx(exact[:2].tolist(), abs=0)
    sample = datasource.load_prepared(dict(settings["data"], sampling="sample", n=300, seed=0))
    pn = permutation_null(sample, n_permutations=19, n_estimators=10, max_features=1,
                          random_state=0)
    pv = next(t for t in view["pvalue_figure"].data if t.meta == "p-value")
    assert np.array_equal(pv.y, pn.p_values)
    assert "Above the 95 % quantile of their null (\u2605): X1, X2." in view["null_sentences"][1]
    assert cache.get_json(logic.null_key(settings)) is not None          # cached


def test_plugin_relevance_uses_and_shows_tol():
    settings = _null(problem="led", tol=0.2)
    settings["data"] = dict(settings["data"], sampling="sample", n=500, seed=0)
    settings["N"] = None
    rel = logic.compute_relevance(settings)
    assert rel["exact"] is False and rel["relevance"]["tol"] == 0.2
    out = logic.run_null(settings, instance="t-plug")
    sentence = logic.render_null(out["current"])["relevance_sentences"][0]
    assert "Plug-in" in sentence and "tol = 0.2 bits" in sentence


def test_too_many_inputs_for_relevance_is_a_sentence_not_an_error():
    settings = _null(problem="madelon:irrelevant=30,samples=200", R=3, trees=2)
    rel = logic.compute_relevance(settings)
    assert rel["relevance"] is None and "50 inputs" in rel["message"]


def test_rs_study_equals_madelon_curves():
    settings = _rs(T=10, seeds=2, q=20)
    view = logic.compute_rs(settings)
    expected = madelon_curves([480], seeds=[0, 1], n_estimators=10, subspace_size=20)
    got = logic._curves_frame(view)
    for c in ("n_trees", "auprc", "accuracy", "n_selected"):
        assert np.allclose(got[c].to_numpy(float), expected[c].to_numpy(float),
                           equal_nan=True, rtol=0, atol=0), c
    assert list(got["method"]) == list(expected["method"])
    out = logic.render_rs({"key": logic.rs_key(settings), "settings": settings}, "rs")
    assert "RS: " in out["selected_figure"].layout.title.text
    assert "precision" in out["selected_sentences"][0] or "n/a" in out["selected_sentences"][0]


def test_rs_on_the_current_data_and_a_regression_target():
    data = logic.initial_state({"problem": XOR})["data"]
    settings = _rs(choice="data", data=data, q=4, T=30)
    view = logic.compute_rs(settings)
    assert view["p"] == 4 and view["truth_known"]
    with pytest.raises(ValueError, match="subspace size q"):
        _rs(choice="data", data=data, q=5)
    reg = logic.initial_state({"problem": "diabetes"})["data"]
    with pytest.raises(ValueError, match="regression"):
        logic.compute_rs(_rs(choice="data", data=reg, q=3, T=5))


def test_cancel_keeps_the_finished_trees_and_caches_nothing():
    settings = _rs(T=40, q=10)
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 25

    view = logic.compute_rs(settings, should_stop=stop)
    assert view["partial"] and 0 < view["trees_done"] < 80
    assert cache.get_json(logic.rs_key(settings)) is None
    logic.request_stop("t-cancel", "sel-null")
    out = logic.run_null(_null(R=50, trees=5, seed=1), instance="t-cancel")
    # run_null clears an old flag when it starts, so this run completes
    assert not out["current"]["partial"]


def test_null_cancel_shows_a_partial_note():
    settings = _null(R=40, trees=5, seed=9)
    calls = {"n": 0}

    def stop():
        calls["n"] += 1
        return calls["n"] > 3

    view = logic.compute_null(settings, should_stop=stop)
    assert view["partial"] and 0 < len(view["null"]["null"]) < 40
    assert cache.get_json(logic.null_key(settings)) is None


def test_csv_exports_are_safe_to_open():
    rows = "\n".join(f"{i % 3},{i % 2},{(i + i // 3) % 2}" for i in range(60))
    info = store_csv("=evil,b,y\n" + rows, "t.csv")
    data = datasource.canonical_params({"source": "upload", "upload": info["key"],
                                        "file": "t.csv", "target": "y"})
    settings = logic.null_settings(problem="upload", data=data, tol=None, R=5, trees=3,
                                   method="forest", seed=0, N=None)
    out = logic.run_null(settings, instance="t-csv")
    text = logic.csv_text("pvalues", out["current"])
    assert "'=evil" in text and "\n=evil" not in text and "relevance" in text.splitlines()[0]
    assert logic.csv_filename("pvalues", out["current"]) == "varimp-selection-t-pvalues.csv"
    rs = _rs(T=10)
    current = logic.run_rs(rs, instance="t-csv")["current"]
    assert logic.csv_text("curves", current).startswith("method,p,seed,n_trees,auprc")
    assert "win_rate" in logic.csv_text("selected", current).splitlines()[0]
    with pytest.raises(ValueError, match="no RS/SRS"):
        logic.csv_text("curves", None)


def test_expired_results_are_a_sentence():
    with pytest.raises(ValueError, match="no longer on the server"):
        logic.render_rs({"key": "0" * 64, "settings": {}})


def test_page_is_registered(dash_app):
    page = registered_page("pages.selection")
    assert (page["path"], page["name"], page["order"]) == ("/selection", "Selection", 8)


# -- in the browser ----------------------------------------------------------------------
_SMALL = f"/selection?problem={XOR}&R=19&trees=10&T=20&q=20"


def _pvalues(dash_duo):
    t = _traces(dash_duo, "#sel-pvalue-graph", "p-value")
    return t[0][2] if t else None


@pytest.mark.browser
def test_page_loads_and_a_control_change_updates_the_figure(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL)
    strong = wait_for(lambda: _traces(dash_duo, "#sel-relevance-graph", "class-strong"),
                      what="the relevance classes")
    assert strong[0][1] == ["X1", "X2"]
    assert wait_for(lambda: (lambda p: p if p and p[0] == pytest.approx(1 / 20) else None)(
        _pvalues(dash_duo)), what="p-values of R = 19")
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#sel-null-R", "39")
    wait_for(lambda: (lambda p: p and p[0] == pytest.approx(1 / 40))(_pvalues(dash_duo)),
             what="p-values of R = 39")
    wait_for(lambda: url_query(dash_duo).get("R") == "39", what="R=39 in the address bar")
    assert image_format(dash_duo, "#sel-pvalue-graph") == "png"
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_bad_input_shows_a_sentence(dash_duo, dash_app):
    open_link_with_note(dash_duo, dash_app, _SMALL + "&seeds=99", "#sel-link-notes",
                        "number of seeds was ignored")
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    set_number(dash_duo, "#sel-rs-q", "9999")
    dash_duo.wait_for_contains_text("#sel-rs-error", "from 1 to 500", timeout=20)
    assert "Traceback" not in dash_duo.find_element("#sel-rs-error").text
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_a_shared_link_reproduces_the_view(dash_duo, dash_app):
    open_page(dash_duo, dash_app, _SMALL)
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean"), what="the RS/SRS curves")
    set_number(dash_duo, "#sel-null-seed", "5")
    wait_for(lambda: "null_seed=5" in dash_duo.driver.current_url, what="the seed in the URL")
    settings = _null(R=19, trees=10, seed=5, N=500)
    wait_for(lambda: cache.get_json(logic.null_key(settings)) is not None,
             what="the seed-5 null")
    expected = logic.render_null({"key": logic.null_key(settings), "settings": settings,
                                  "relevance_key": logic.relevance_key(settings)})
    want = list(next(t for t in expected["pvalue_figure"].data if t.meta == "p-value").y)
    wait_for(lambda: _pvalues(dash_duo) == pytest.approx(want), what="the seed-5 p-values")
    curves = _traces(dash_duo, "#sel-rs-graph", "mean")
    link = dash_duo.driver.current_url

    dash_duo.driver.get("about:blank")
    dash_duo.driver.get(link)
    wait_for(lambda: _pvalues(dash_duo) == pytest.approx(want), what="the same p-values")
    wait_for(lambda: _traces(dash_duo, "#sel-rs-graph", "mean") == curves, what="the same curves")
    assert dash_duo.find_element("#sel-null-seed").get_attribute("value") == "5"
    assert dash_duo.get_logs() == []
