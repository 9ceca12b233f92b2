"""The Decomposition page: its callback logic (plain functions) and runs in the browser."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from _browser import open_page, set_number
from dash.testing.wait import until

from varimp_core.exact.recursion import exact_importances
from varimp_core.problems.registry import get_problem
from varimp_core.exact.eqn3 import conditional_terms, eqn3_importances

from pages._ui import decomposition_logic as logic


def _data(query=None):
    return logic.initial_state(query or {"problem": "led"})["data"]


@pytest.fixture(scope="module")
def led_table():
    return get_problem("led").exact_table()


# -- settings, URL, clicks ---------------------------------------------------------------
def test_defaults_and_link_values():
    start = logic.initial_state({"problem": "led"})
    assert start["values"] == {"K": 7, "depth": None, "semantics": "id3"}  # K = p: Figure 2
    assert start["cell"] is None
    start = logic.initial_state({"problem": "led", "K": "3", "depth": "2", "var": "X2",
                                 "degree": "1", "panel": "K"})
    assert start["values"] == {"K": 3, "depth": 2, "semantics": "id3"}
    assert start["cell"] == {"var": "X2", "degree": 1, "panel": "K"}
    start = logic.initial_state({"problem": "led", "K": "30", "panel": "left"})
    assert start["values"]["K"] == 7 and len(start["notes"]) == 2


def test_query_round_trips():
    data = _data()
    settings = logic.settings_from_controls(K=4, depth=3, semantics="sklearn", p=7)
    cell = {"var": "X5", "degree": 2, "panel": "K"}
    query = logic.page_query(data, settings, cell)
    start = logic.initial_state({k: v[-1] for k, v in parse_qs(query).items()})
    assert start["values"] == settings and start["cell"] == cell and start["notes"] == []
    assert start["query"] == query


@pytest.mark.parametrize("controls,match", [
    (dict(K=0), "from 1 to 7"), (dict(K=None), "from 1 to 7"), (dict(K=2, depth=-1), "depth"),
    (dict(K=2, semantics="weka"), "semantics"),
])
def test_bad_settings_are_sentences(controls, match):
    with pytest.raises(ValueError, match=match):
        logic.settings_from_controls(p=7, **controls)


def test_cell_from_click():
    settings = {"K": 7, "depth": 2, "semantics": "id3"}
    figure = logic.render(logic.compute_view(_data(), settings), settings)["figure"]
    figure = figure.to_plotly_json()
    # Traces: left kept, left cut, right kept, right cut.
    click = {"points": [{"x": 2, "y": "X5", "z": 0.05, "curveNumber": 3}]}
    assert logic.cell_from_click(click, figure) == {"var": "X5", "degree": 2, "panel": "K"}
    click = {"points": [{"x": 0, "y": "X1", "curveNumber": 0}]}
    assert logic.cell_from_click(click, figure) == {"var": "X1", "degree": 0, "panel": "K1"}
    assert logic.cell_from_click(None, figure) is None
    assert logic.cell_from_click(click, None) is None
    assert logic.cell_from_click({"points": [{"x": 9, "y": "X5"}]}, figure) is None
    assert logic.cell_from_click({"points": [{"x": 1, "y": "X9"}]}, figure) is None


# -- computing ---------------------------------------------------------------------------------
def test_view_is_eqn3_and_exact_k(led_table):
    settings = {"K": 3, "depth": None, "semantics": "id3"}
    view = logic.compute_view(_data(), settings)
    np.testing.assert_allclose(view["k1"].by_degree, eqn3_importances(led_table).by_degree,
                               atol=1e-12)
    np.testing.assert_allclose(view["k"].by_degree,
                               exact_importances(led_table, max_features=3).by_degree,
                               atol=1e-12)
    out = logic.render(view, settings)
    left, right = out["figure"].data
    np.testing.assert_allclose(np.asarray(left.z, float), view["k1"].by_degree)
    np.testing.assert_allclose(np.asarray(right.z, float), view["k"].by_degree)
    assert left.coloraxis == right.coloraxis == "coloraxis"
    rows = out["rows"]
    np.testing.assert_allclose([r["k1"] for r in rows[:-1]], view["k1"].importances)
    # Theorem 2 in the Sum row: log2(10) for both K.
    assert rows[-1]["variable"] == "Sum"
    assert rows[-1]["k1"] == pytest.approx(math.log2(10)) == rows[-1]["k"]
    assert "I(X;Y) = 3.3219 bits" in out["summary"]


def test_depth_gives_proposition_6_totals(led_table):
    settings = {"K": 7, "depth": 2, "semantics": "id3"}
    view = logic.compute_view(_data(), settings)
    pruned = eqn3_importances(led_table, max_depth=2)
    np.testing.assert_allclose(view["k1_depth"].importances, pruned.importances, atol=1e-12)
    # Proposition 6: the first q = 2 terms of Eqn 3.
    np.testing.assert_allclose(view["k1_depth"].importances,
                               view["k1"].by_degree[:, :2].sum(axis=1), atol=1e-12)
    out = logic.render(view, settings)
    assert len(out["figure"].data) == 4  # kept and cut cells in both panels
    ids = [c["id"] for c in out["columns"]]
    assert ids == ["variable", "k1", "k1_depth", "k", "k_depth"]
    np.testing.assert_allclose([r["k1_depth"] for r in out["rows"][:-1]], pruned.importances)
    assert "Proposition 6" in out["summary"]


def test_too_many_inputs_is_a_sentence():
    with pytest.raises(ValueError, match="at most 20 inputs"):
        logic.compute_view(_data({"problem": "madelon"}), {"K": 1, "depth": None,
                                                           "semantics": "id3"})


def test_xor_terms_by_hand():
    # p = 2, Y = X1 xor X2. X1's k = 1 cell has one set B = {X2}:
    # 1/(C(2,1) * 1) * I(X1; Y | X2) = 1/2 * 1 = 0.5.
    data = _data({"problem": "xor:relevant=2"})
    settings = {"K": 2, "depth": None, "semantics": "id3"}
    out = logic.terms_view(data, settings, {"var": "X1", "degree": 1, "panel": "K1"})
    assert out["terms"]["term"].tolist() == pytest.approx([0.5])
    assert out["cell_k1"] == pytest.approx(0.5)
    assert "1/(C(2,1)\u00b71) = 1/2" in out["note"]
    shown = logic.render_terms(out)
    assert shown["rows"] == [{"B": "{X2}", "size": 1, "cmi": pytest.approx(1.0),
                              "weight": 0.5, "term": pytest.approx(0.5)}]
    np.testing.assert_allclose(shown["figure"].data[0].y, [0.5])


def test_led_terms_sum_to_the_cell(led_table):
    settings = {"K": 7, "depth": None, "semantics": "id3"}
    out = logic.terms_view(_data(), settings, {"var": "X5", "degree": 2, "panel": "K1"})
    shown = logic.render_terms(out)
    assert len(shown["rows"]) == math.comb(6, 2)
    expected = eqn3_importances(led_table).by_degree[4, 2]
    assert sum(r["term"] for r in shown["rows"]) == pytest.approx(expected, abs=1e-12)
    assert "not defined" not in out["note"]


def test_masked_panel_explains_and_shows_k1_terms(led_table):
    settings = {"K": 7, "depth": None, "semantics": "id3"}
    out = logic.terms_view(_data(), settings, {"var": "X1", "degree": 0, "panel": "K"})
    assert "masking" in out["note"] and "not defined" in out["note"]
    # Figure 2, right: at K = 7, X1 is never chosen at the root.
    assert out["cell_k"] == pytest.approx(0.0, abs=1e-12)
    assert out["cell_k1"] == pytest.approx(
        conditional_terms(led_table, "X1", 0)["term"].sum(), abs=1e-12)


def test_cut_degree_is_said(led_table):
    settings = {"K": 1, "depth": 2, "semantics": "id3"}
    out = logic.terms_view(_data(), settings, {"var": "X3", "degree": 4, "panel": "K1"})
    assert "Depth 2 removes this degree" in out["note"]


def test_long_term_lists_are_cut_in_the_table(monkeypatch):
    monkeypatch.setattr(logic, "MAX_TERM_ROWS", 4)
    out = logic.terms_view(_data(), {"K": 7, "depth": None, "semantics": "id3"},
                           {"var": "X2", "degree": 3, "panel": "K1"})
    shown = logic.render_terms(out)
    assert len(shown["rows"]) == 4 and "4 largest of 20 terms" in shown["note"]
    terms = [r["term"] for r in shown["rows"]]
    assert terms == sorted(terms, reverse=True)


def test_unknown_cell_is_a_sentence():
    with pytest.raises(ValueError, match="not in this data"):
        logic.terms_view(_data(), {"K": 7, "depth": None, "semantics": "id3"},
                         {"var": "X9", "degree": 1, "panel": "K1"})


def test_page_is_registered(dash_app):
    import dash

    entry = dash.page_registry["pages.decomposition"]
    assert entry["path"] == "/decomposition" and entry["name"] == "Decomposition"
    assert entry["order"] == 2


# -- in the browser --------------------------------------------------------------------------
_HEATMAPS = """
const gd = document.querySelector('#decomp-graph .js-plotly-plot');
if (!gd || !gd._fullData || !gd._fullData.length) { return null; }
return gd._fullData.map(t => Array.from(t.z, row => Array.from(row)));
"""

_CELL_POINT = """
const [xname, yname, k, row] = arguments;
const gd = document.querySelector('#decomp-graph .js-plotly-plot');
const xa = gd._fullLayout[xname], ya = gd._fullLayout[yname];
const box = gd.getBoundingClientRect();
return [Math.round(box.left + xa._offset + xa.l2p(k)), Math.round(box.top + ya._offset + ya.l2p(row))];
"""


def _heatmaps(dash_duo):
    return dash_duo.driver.execute_script(_HEATMAPS)


def _wait_for_heatmaps(dash_duo, left, right, timeout=30):
    def match():
        z = _heatmaps(dash_duo)
        if not z or len(z) < 2:
            return False
        a = np.asarray(z[0], dtype=float)
        b = np.asarray(z[-1] if len(z) == 2 else z[2], dtype=float)
        return a.shape == left.shape and np.allclose(np.nan_to_num(a), left, atol=1e-12) \
            and np.allclose(np.nan_to_num(b), right, atol=1e-12)

    until(match, timeout)


def _click_cell(dash_duo, panel: int, k: int, row: int):
    from selenium.webdriver.common.action_chains import ActionChains

    names = ("xaxis", "yaxis") if panel == 1 else ("xaxis2", "yaxis2")
    x, y = dash_duo.driver.execute_script(_CELL_POINT, *names, k, row)
    actions = ActionChains(dash_duo.driver)
    actions.w3c_actions.pointer_action.move_to_location(x, y)
    actions.w3c_actions.pointer_action.click()
    actions.perform()


@pytest.mark.browser
def test_heatmaps_follow_k_and_clicks_list_terms(dash_duo, dash_app, led_table):
    open_page(dash_duo, dash_app, "/decomposition?problem=led")
    k1 = eqn3_importances(led_table).by_degree
    _wait_for_heatmaps(dash_duo, k1, exact_importances(led_table, max_features=7).by_degree)
    assert dash_duo.get_logs() == []

    set_number(dash_duo, "#decomp-k", 3)
    _wait_for_heatmaps(dash_duo, k1, exact_importances(led_table, max_features=3).by_degree)
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("K") == ["3"], 10)

    # Click X5 (row 4) at k = 2 in the left heatmap: its 15 sets B are listed.
    _click_cell(dash_duo, 1, 2, 4)
    dash_duo.wait_for_contains_text("#decomp-terms-note", "X5 at k = 2", timeout=20)
    until(lambda: len(dash_duo.find_elements("#decomp-terms-table tbody tr")) == 15 + 1, 10)
    terms = [float(td.text) for td in
             dash_duo.find_elements("#decomp-terms-table td[data-dash-column='term']")]
    assert sum(terms) == pytest.approx(k1[4, 2], abs=15 * 5e-7)  # 6 decimals shown
    query = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert query["var"] == ["X5"] and query["degree"] == ["2"] and query["panel"] == ["K1"]

    # Click the right heatmap (K = 3): masking note, K = 1 terms of the same cell.
    _click_cell(dash_duo, 2, 0, 0)
    dash_duo.wait_for_contains_text("#decomp-terms-note", "not defined", timeout=20)
    assert "X1 at k = 0" in dash_duo.find_element("#decomp-terms-note").text
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_shared_link_reproduces_depth_and_cell(dash_duo, dash_app, led_table):
    open_page(dash_duo, dash_app, "/decomposition?problem=led&K=7&depth=2"
              "&var=X2&degree=1&panel=K1")
    k1 = eqn3_importances(led_table).by_degree
    k7 = exact_importances(led_table, max_features=7).by_degree
    _wait_for_heatmaps(dash_duo, np.where(np.arange(7) < 2, k1, 0.0),
                       np.where(np.arange(7) < 2, k7, 0.0))
    z = _heatmaps(dash_duo)
    assert len(z) == 4  # kept and cut cells of both panels
    np.testing.assert_allclose(np.nan_to_num(np.asarray(z[1], float)),
                               np.where(np.arange(7) >= 2, k1, 0.0), atol=1e-12)
    assert dash_duo.find_element("#decomp-k").get_attribute("value") == "7"
    assert dash_duo.find_element("#decomp-depth").get_attribute("value") == "2"
    dash_duo.wait_for_contains_text("#decomp-terms-note", "X2 at k = 1", timeout=20)
    until(lambda: len(dash_duo.find_elements("#decomp-terms-table tbody tr")) == 6 + 1, 10)
    # Totals at depth 2 are Proposition 6's sums of the first two terms.
    pruned = eqn3_importances(led_table, max_depth=2).importances
    cells = dash_duo.find_elements("#decomp-totals td[data-dash-column='k1_depth']")
    assert [c.text for c in cells[:7]] == [f"{v:.4f}" for v in pruned]
    assert dash_duo.get_logs() == []
