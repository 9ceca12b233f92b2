"""The Importances page: its callback logic (plain functions) and runs in the browser."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from _browser import full_traces, open_page, set_number, wait_for_trace
from _pages import FORMULA_CSV, upload_csv
from dash.testing.wait import until

from varimp_core.api import compute_importances, load_data
from varimp_core.exact.recursion import exact_importances
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult
from varimp_core.exact.eqn3 import eqn3_importances

from pages._ui import importances_logic as logic

LED = {"problem": "led"}
XOR3 = get_problem("xor:relevant=2,irrelevant=1").spec  # canonical: "xor:irrelevant=1"


def _data(query=LED):
    return logic.initial_state(query)["data"]


# -- settings and URL -----------------------------------------------------------------
def test_settings_keep_only_what_the_method_uses():
    s = logic.settings_from_controls(method="exact", K=3, depth="", trees=50, bootstrap=["on"],
                                     semantics="sklearn", tree_seed=4, p=7)
    assert s == {"method": "exact", "K": 3, "depth": None, "semantics": "sklearn"}
    s = logic.settings_from_controls(method="sklearn-rf", K="2", depth=4, trees="30",
                                     bootstrap=None, semantics="id3", tree_seed=None, p=7)
    assert s == {"method": "sklearn-rf", "K": 2, "depth": 4, "trees": 30, "bootstrap": True,
                 "tree_seed": 0}
    s = logic.settings_from_controls(method="forest", K=1, trees=10, bootstrap=[], p=7)
    assert s["bootstrap"] is False and s["semantics"] == "id3"


@pytest.mark.parametrize("controls,match", [
    (dict(method="exact", K=9), "from 1 to 7"),
    (dict(method="exact", K=None), "Enter K"),
    (dict(method="exact", K=2.5), "whole number"),
    (dict(method="exact", K=1, depth=0), "max depth"),
    (dict(method="forest", K=1, trees=0), "number of trees"),
    (dict(method="forest", K=1, trees=10, tree_seed=-1), "seed"),
    (dict(method="boosting", K=1), "Choose a method"),
])
def test_bad_settings_are_sentences(controls, match):
    with pytest.raises(ValueError, match=match) as err:
        logic.settings_from_controls(p=7, **controls)
    assert str(err.value).endswith(".") and "\n" not in str(err.value)


def test_query_round_trips_through_the_layout_state():
    data = _data({"problem": XOR3})
    settings = logic.settings_from_controls(method="forest", K=2, depth=2, trees=40,
                                            bootstrap=["on"], semantics="sklearn",
                                            tree_seed=7, p=3)
    query = logic.page_query(data, settings)
    parsed = {k: v[-1] for k, v in parse_qs(query).items()}
    start = logic.initial_state(parsed)
    assert start["data"] == data and start["notes"] == []
    again = logic.settings_from_controls(**start["values"], p=start["p"])
    assert again == settings
    assert start["query"] == query


def test_link_defaults_and_bad_values():
    start = logic.initial_state({"problem": "led"})
    assert start["values"]["method"] == "exact" and start["values"]["K"] == 1
    start = logic.initial_state({"problem": "madelon"})  # 500 inputs: no exact method
    assert start["values"]["method"] == "sklearn-et"
    exact = next(o for o in logic.method_options(start["p"]) if o["value"] == "exact")
    assert exact["disabled"] and "at most 20 inputs" in exact["label"]
    assert not any(o.get("disabled") for o in logic.method_options(7))
    start = logic.initial_state({"problem": "led", "K": "12", "trees": "-1"})
    assert start["values"]["K"] == 1 and start["values"]["trees"] == 100
    assert len(start["notes"]) == 2 and any("K was ignored" in n for n in start["notes"])


def test_session_data_is_used_when_the_link_has_none():
    vi_data = {"params": {"source": "problem", "problem": XOR3, "sampling": "exact",
                          "bins": 5}, "p": 3}
    start = logic.initial_state({"K": "2"}, vi_data)
    assert start["data"]["problem"] == XOR3 and start["p"] == 3
    assert start["query"].startswith("problem=xor")


def test_field_classes():
    assert "vi-hidden" in logic.field_classes("exact")["sampled"]
    assert "vi-hidden" not in logic.field_classes("forest")["sampled"]
    assert logic.field_classes("sklearn-et")["semantics"] == "vi-hidden"


# -- computing -------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3, 7])
def test_exact_view_is_the_core_value(k):
    view = logic.compute_view(_data(), {"method": "exact", "K": k, "depth": None,
                                        "semantics": "id3"})
    table = get_problem("led").exact_table()
    expected = exact_importances(table, max_features=k).importances
    np.testing.assert_allclose(view["result"].importances, expected, atol=1e-12)
    assert view["exact"] is None
    # Theorem 2: fully grown trees on LED sum to I(X;Y) = H(Y) = log2(10).
    assert view["result"].total == pytest.approx(math.log2(10), abs=1e-9)
    text = logic.theorem2_text(view["result"], view["information"])
    assert text.startswith("sum = 3.3219 bits, I(X;Y) = 3.3219 bits")


def test_depth_limit_matches_proposition_6():
    view = logic.compute_view(_data(), {"method": "exact", "K": 1, "depth": 2,
                                        "semantics": "id3"})
    table = get_problem("led").exact_table()
    np.testing.assert_allclose(view["result"].importances,
                               eqn3_importances(table, max_depth=2).importances, atol=1e-12)
    assert "Proposition 6" in logic.theorem2_text(view["result"], view["information"])


def test_sampled_view_carries_the_exact_reference():
    settings = {"method": "forest", "K": 2, "depth": None, "semantics": "id3", "trees": 32,
                "bootstrap": False, "tree_seed": 5}
    view = logic.compute_view(_data(), settings)
    data = load_data(problem="led")
    forest = compute_importances(data, method="forest", max_features=2, n_estimators=32,
                                 random_state=5)
    np.testing.assert_allclose(view["result"].importances, forest.importances, atol=1e-12)
    exact = exact_importances(data.table, max_features=2)
    np.testing.assert_allclose(view["exact"].importances, exact.importances, atol=1e-12)
    out = logic.render(view)
    np.testing.assert_allclose(out["figure"].data[0].y, forest.importances, atol=1e-12)
    np.testing.assert_allclose(out["figure"].data[-1].y, exact.importances, atol=1e-12)
    rows = out["rows"]
    assert [r["variable"] for r in rows] == list(data.variables)
    np.testing.assert_allclose([r["exact"] for r in rows], exact.importances)
    np.testing.assert_allclose([r["sem"] for r in rows], forest.importances_sem)
    assert {c["id"] for c in out["columns"]} >= {"importance", "sem", "exact", "normalised"}


def test_sklearn_view_gets_information_from_the_exact_reference():
    settings = {"method": "sklearn-et", "K": 1, "depth": None, "trees": 20, "bootstrap": False,
                "tree_seed": 0}
    view = logic.compute_view(_data(), settings)
    assert view["result"].information is None
    assert view["information"] == pytest.approx(math.log2(10))
    assert view["exact"].parameters["k_semantics"] == "sklearn"
    assert "binary trees" in logic.exact_note(view)


def test_too_many_inputs_for_exact_is_a_sentence():
    data = _data({"problem": "madelon"})
    with pytest.raises(ValueError, match="at most 20 input variables"):
        logic.compute_view(data, {"method": "exact", "K": 1, "depth": None, "semantics": "id3"})


def test_k_above_p_in_compute_is_a_sentence():
    with pytest.raises(ValueError, match="from 1 to 3"):
        logic.compute_view(_data({"problem": XOR3}),
                           {"method": "exact", "K": 5, "depth": None, "semantics": "id3"})


def test_theorem2_text_for_other_units():
    r = ImportanceResult(variables=("a", "b"), importances=[0.2, 0.3], by_degree=np.diag([.2, .3]),
                         method="sklearn-rf", units="variance")
    assert logic.theorem2_text(r).startswith("sum = 0.5000 variance;")


# -- CSV -----------------------------------------------------------------------------------
def test_csv_is_the_result_frame_plus_exact():
    view = logic.compute_view(_data(), {"method": "exact", "K": 3, "depth": None,
                                        "semantics": "id3"})
    text = logic.csv_text(view["result"])
    rows = list(csv.DictReader(io.StringIO(text)))
    frame = view["result"].to_frame()
    assert list(rows[0]) == list(frame.columns)
    np.testing.assert_allclose([float(r["importance"]) for r in rows], frame["importance"])
    assert "exact_importance" in logic.csv_text(view["result"], view["result"]).splitlines()[0]


def test_csv_neutralises_formula_cells():
    names = ("=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "plain", "a=b")
    p = len(names)
    r = ImportanceResult(variables=names, importances=np.linspace(-0.1, 0.5, p),
                         by_degree=np.diag(np.linspace(-0.1, 0.5, p)), method="forest")
    rows = list(csv.reader(io.StringIO(logic.csv_text(r))))
    cells = [row[0] for row in rows[1:]]
    assert cells[:5] == ["'" + n for n in names[:5]]
    assert cells[5:] == ["plain", "a=b"]
    # Numbers are left alone, negative ones included.
    assert float(rows[1][1]) == pytest.approx(-0.1)


def test_csv_filename_is_safe():
    name = logic.csv_filename(_data({"problem": XOR3}), {"method": "forest", "K": 2})
    assert name == "varimp-importances-xor-irrelevant-1-forest-K2.csv"


# -- the page module -------------------------------------------------------------------------
def test_page_is_registered_and_explains_normalisation(dash_app):
    import dash

    import pages.importances as page

    entry = dash.page_registry["pages.importances"]
    assert entry["path"] == "/importances" and entry["name"] == "Importances"
    assert entry["order"] == 1
    text = str(page.layout(problem="led"))
    assert "feature_importances_" in text and "normalised" in text and "bits" in text


# -- in the browser ---------------------------------------------------------------------------
def _traces(dash_duo):
    return full_traces(dash_duo, "#imp-graph")


def _wait_for_bars(dash_duo, expected):
    return wait_for_trace(dash_duo, "#imp-graph", expected)


@pytest.mark.browser
def test_importances_page_follows_k(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/importances?problem=led")
    led = get_problem("led").exact_table()
    _wait_for_bars(dash_duo, eqn3_importances(led).importances)
    dash_duo.wait_for_contains_text("#imp-theorem2", "sum = 3.3219 bits, I(X;Y) = 3.3219 bits",
                                    timeout=10)
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#imp-k", 3)
    _wait_for_bars(dash_duo, exact_importances(led, max_features=3).importances)
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("K") == ["3"], 10)
    # The table shows the same numbers (4 decimals).
    first = dash_duo.find_element("#imp-table td[data-dash-column='importance']").text
    assert first == f"{exact_importances(led, max_features=3).importances[0]:.4f}"

    # A bad K is a sentence on the page, and the figure keeps the last good view.
    set_number(dash_duo, "#imp-k", 9)
    dash_duo.wait_for_contains_text("#imp-error", "from 1 to 7", timeout=20)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert np.allclose(_traces(dash_duo)[0][1], exact_importances(led, max_features=3).importances)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_shared_link_reproduces_a_sampled_view(dash_duo, dash_app):
    query = (f"problem={XOR3}&method=forest&K=2&depth=2&trees=40&bootstrap=1"
             "&semantics=sklearn&tree_seed=3")
    data = load_data(problem=XOR3)
    forest = compute_importances(data, method="forest", max_features=2, max_depth=2,
                                 n_estimators=40, bootstrap=True, k_semantics="sklearn",
                                 random_state=3)
    exact = exact_importances(data.table, max_features=2, max_depth=2, k_semantics="sklearn")

    open_page(dash_duo, dash_app, "/importances?" + query)
    traces = _wait_for_bars(dash_duo, forest.importances)
    assert [t[0] for t in traces] == ["bar", "box", "scatter"]
    assert np.allclose(traces[-1][1], exact.importances, atol=1e-12)
    assert dash_duo.find_element("#imp-method input[value='forest']").is_selected()
    assert dash_duo.find_element("#imp-bootstrap input").is_selected()
    assert dash_duo.find_element("#imp-k").get_attribute("value") == "2"
    assert dash_duo.find_element("#imp-tree-seed").get_attribute("value") == "3"
    shown = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert shown["tree_seed"] == ["3"] and shown["method"] == ["forest"]

    # The CSV download holds the same numbers.
    dash_duo.find_element("#imp-download-button").click()
    path = Path(dash_duo.download_path) / "varimp-importances-xor-irrelevant-1-forest-K2.csv"
    until(lambda: path.exists() and path.stat().st_size > 0, 20)
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    np.testing.assert_allclose([float(r["importance"]) for r in rows], forest.importances)
    np.testing.assert_allclose([float(r["exact_importance"]) for r in rows], exact.importances)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_long_job_disables_controls_and_cancels(dash_duo, dash_app):
    quick = compute_importances(load_data(problem="led"), method="sklearn-rf", max_features=2,
                                n_estimators=20, random_state=0)
    open_page(dash_duo, dash_app, "/importances?problem=led&method=sklearn-rf&K=2"
              "&trees=20&bootstrap=1&tree_seed=0")
    _wait_for_bars(dash_duo, quick.importances)
    # 10,000 scikit-learn trees take far longer than the test waits.
    set_number(dash_duo, "#imp-trees", 10000)
    until(lambda: dash_duo.find_element("#imp-fieldset").get_attribute("disabled") is not None,
          10)
    assert "vi-job-running" in dash_duo.find_element("#imp-job").get_attribute("class")
    cancel = dash_duo.find_element("#imp-job-cancel")
    until(lambda: cancel.is_enabled(), 10)
    cancel.click()
    until(lambda: dash_duo.find_element("#imp-fieldset").get_attribute("disabled") is None, 20)
    assert "vi-job-running" not in dash_duo.find_element("#imp-job").get_attribute("class")
    # The figure still shows the last finished view.
    assert np.allclose(_traces(dash_duo)[0][1], quick.importances, atol=1e-12)
    assert dash_duo.get_logs() == []


def test_uploaded_table_flows_to_a_safe_csv():
    data = upload_csv(FORMULA_CSV, "evil.csv")
    assert logic.data_feature_count(data) == 2
    settings = logic.settings_from_controls(method="exact", K=1, p=2)
    view = logic.compute_view(data, settings)
    assert view["result"].variables == ("=cmd|' /C calc'!A0", "@x")
    names = [row[0] for row in csv.reader(io.StringIO(logic.csv_text(view["result"])))][1:]
    assert names == ["'=cmd|' /C calc'!A0", "'@x"]
    assert logic.csv_filename(data, settings) == "varimp-importances-evil-exact-K1.csv"
