"""The Decomposition page: its parameters, computing and rendering, and runs in the browser."""

from __future__ import annotations

import csv
import io
import itertools
import math
from urllib.parse import parse_qs, urlsplit

import numpy as np
import dash
import pytest
from _tables import rows_of
from oracle import cmi
from _browser import open_page, set_number
from dash.testing.wait import until

from _pages import grid_cells, grid_rows, page_module
from varimp_core.exact.recursion import exact_importances
from varimp_core.problems.registry import get_problem
from varimp_core.exact.eqn3 import conditional_terms, eqn3_importances

from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress
from pages._framework.params import Context, ParamErrors

draw = page_module("decomposition")


@pytest.fixture(scope="module")
def page(app_module):
    import pages.decomposition as module

    return module


def _data(query=None):
    return DataChoice.from_page(query or {"problem": "led"})[0]


def _settings(K, depth=None, semantics="id3"):
    return {"max_features": K, "max_depth": depth, "k_semantics": semantics}


def _view(page, settings, data=None, cell=None):
    return draw.view_from_dict(page.compute(settings, data or _data(), Progress(None), cell))


@pytest.fixture(scope="module")
def led_table():
    return get_problem("led").exact_table()


# -- settings, URL, clicks ---------------------------------------------------------------
def test_defaults_and_link_values(page):
    values, cell, notes = page.initial_values({"problem": "led"}, Context(p=7))
    assert values == _settings(7)  # K = p: Figure 2
    assert cell is None and notes == []
    values, cell, _ = page.initial_values({"problem": "led", "K": "3", "depth": "2", "var": "X2",
                                           "degree": "1", "panel": "K"}, Context(p=7))
    assert values == _settings(3, 2)
    assert cell == {"var": "X2", "degree": 1, "panel": "K"}
    values, _, notes = page.initial_values({"problem": "led", "K": "30", "panel": "left"},
                                           Context(p=7))
    assert values["max_features"] == 7 and len(notes) == 2


def test_query_round_trips(page):
    data = _data()
    settings = page.PARAMS.settings({"max_features": 4, "max_depth": 3,
                                     "k_semantics": "sklearn"}, Context(p=7))
    cell = {"var": "X5", "degree": 2, "panel": "K"}
    query = page.url(settings, data, cell)
    parsed = {k: v[-1] for k, v in parse_qs(query).items()}
    again, notes = DataChoice.from_page(parsed)
    values, again_cell, more = page.initial_values(parsed, Context(p=again.n_features()))
    assert again == data and values == settings and again_cell == cell
    assert notes == [] and more == []
    assert page.url(values, again, again_cell) == query


@pytest.mark.parametrize("controls,name,match", [
    (dict(max_features=0), "max_features", "from 1 to 7"),
    (dict(max_features=None), "max_features", "from 1 to 7"),
    (dict(max_features=2, max_depth=-1), "max_depth", "depth"),
    (dict(max_features=2, k_semantics="weka"), "k_semantics", "semantics"),
])
def test_bad_settings_are_sentences(page, controls, name, match):
    values = {**_settings(1), **controls}
    settings, errors = page.PARAMS.validate(values, Context(p=7))
    assert settings == {} and list(errors) == [name] and match in errors[name]
    with pytest.raises(ParamErrors, match=match):
        page.PARAMS.settings(values, Context(p=7))


def test_out_of_range_k_is_a_sentence_never_a_default(page):
    for k in (8, -1, 2.5, 10**8):
        _, errors = page.PARAMS.validate(_settings(k), Context(p=7))
        assert errors["max_features"].startswith("K must be a whole number from 1 to 7, not ")
    _, errors = page.CELL.validate({"var": "X1", "degree": -1, "panel": "K1"}, Context(p=7))
    assert list(errors) == ["degree"]


def test_cell_from_click(page):
    settings = _settings(7, 2)
    figure = page.render(page.compute(settings, _data(), Progress(None)), settings,
                         _data())[0].to_plotly_json()
    # Traces: left kept, left cut, right kept, right cut.
    click = {"points": [{"x": 2, "y": "X5", "z": 0.05, "curveNumber": 3}]}
    assert page.cell_from_click(click, figure) == {"var": "X5", "degree": 2, "panel": "K"}
    click = {"points": [{"x": 0, "y": "X1", "curveNumber": 0}]}
    assert page.cell_from_click(click, figure) == {"var": "X1", "degree": 0, "panel": "K1"}
    assert page.cell_from_click(None, figure) is None
    assert page.cell_from_click(click, None) is None
    assert page.cell_from_click({"points": [{"x": 9, "y": "X5"}]}, figure) is None
    assert page.cell_from_click({"points": [{"x": 1, "y": "X9"}]}, figure) is None


# -- computing ---------------------------------------------------------------------------------
def test_view_is_eqn3_and_exact_k(page, led_table):
    settings = _settings(3)
    view = _view(page, settings)
    np.testing.assert_allclose(view["k1"].by_degree, eqn3_importances(led_table).by_degree,
                               atol=1e-12)
    np.testing.assert_allclose(view["k"].by_degree,
                               exact_importances(led_table, max_features=3).by_degree,
                               atol=1e-12)
    out = draw.render_view(view, settings)
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


def test_depth_gives_proposition_6_totals(page, led_table):
    settings = _settings(7, 2)
    view = _view(page, settings)
    pruned = eqn3_importances(led_table, max_depth=2)
    np.testing.assert_allclose(view["k1_depth"].importances, pruned.importances, atol=1e-12)
    # Proposition 6: the first q = 2 terms of Eqn 3.
    np.testing.assert_allclose(view["k1_depth"].importances,
                               view["k1"].by_degree[:, :2].sum(axis=1), atol=1e-12)
    out = draw.render_view(view, settings)
    assert len(out["figure"].data) == 4  # kept and cut cells in both panels
    ids = [c["id"] for c in out["columns"]]
    assert ids == ["variable", "k1", "k1_depth", "k", "k_depth"]
    np.testing.assert_allclose([r["k1_depth"] for r in out["rows"][:-1]], pruned.importances)
    assert "Proposition 6" in out["summary"]


def test_depth2_demo_says_each_sum_once(page):
    """The Learn page's pruning demo (K = 1, depth 2): one sum per depth, no repeated K = 1."""
    out = draw.render_view(_view(page, _settings(1, 2)), _settings(1, 2))
    rows = rows_of(get_problem("led").exact_table())
    # Proposition 6 by hand: the degree 0 and 1 terms of Eqn 3, each weighted 1/(C(7,k)(7-k)).
    pruned = sum(cmi(rows, m, b) / (math.comb(7, k) * (7 - k)) for m in range(7)
                 for k in (0, 1) for b in itertools.combinations(
                     [j for j in range(7) if j != m], k))
    assert out["summary"] == (f"Sum: K = 1 {math.log2(10):.4f} bits; I(X;Y) = "
                              f"{math.log2(10):.4f} bits (Theorem 2); at depth 2 only the degrees "
                              f"k < 2 count (Proposition 6): K = 1 {pruned:.4f} bits.")
    assert [c["id"] for c in out["columns"]] == ["variable", "k1", "k1_depth"]
    out = draw.render_view(_view(page, _settings(3)), _settings(3))
    assert out["summary"].startswith(f"Sums: K = 1 {math.log2(10):.4f} bits, K = 3 "
                                     f"{math.log2(10):.4f} bits;")


def test_sym_demo_by_degree(page):
    """The Learn page's SYM demo (Sutera 2013, eqs 3.26-3.30): I(Xi; Y) = 1 - H(1/4) and
    I(X1; Y | X2) = H(1/4) - 1/2, each counted with weight 1/2 at K = 1."""
    h = -(0.25 * math.log2(0.25) + 0.75 * math.log2(0.75))
    view = _view(page, _settings(1), _data({"problem": "sym"}))
    np.testing.assert_allclose(view["k1"].by_degree, [[(1 - h) / 2, (h - 0.5) / 2]] * 2,
                               atol=1e-12)
    assert f"{1 - h:.4f}" == "0.1887" and f"{h - 0.5:.4f}" == "0.3113"


def test_downloads_come_from_the_cache(page):
    data, cell = _data(), {"var": "X2", "degree": 1, "panel": "K1"}
    values = {"max_features": 3, "max_depth": 2, "k_semantics": "id3"}
    page.VIEW.run(values, data.to_store(), {"cell": cell})
    texts = {}
    for button, make in draw.CSV.items():
        sent, note = page.VIEW.download(make, values, data.to_store(), {"cell": cell})
        assert note == "", button
        texts[button.rsplit("-", 1)[1]] = (sent["filename"],
                                           list(csv.DictReader(io.StringIO(sent["content"]))))
    name, rows = texts["totals"]
    assert name == "varimp-decomposition-led-K3-depth2-totals.csv"
    assert rows[-1]["variable"] == "Sum"
    assert float(rows[-1]["K = 1 (bits)"]) == pytest.approx(math.log2(10))   # Theorem 2
    name, rows = texts["degrees"]
    assert [r["trees"] for r in rows] == sum(([t] * 7 for t in (
        "K = 1", "K = 1, depth 2", "K = 3", "K = 3, depth 2")), [])
    assert float(rows[1]["degree_0"]) == pytest.approx(cmi(rows_of(get_problem(
        "led").exact_table()), 1, ()) / 7)                                  # I(X2; Y) / 7
    name, rows = texts["terms"]
    assert name.endswith("-X2-degree1-terms.csv") and len(rows) == 6        # C(6, 1) sets B
    assert sum(float(r["term"]) for r in rows) == pytest.approx(float(
        texts["degrees"][1][1]["degree_1"]))
    # Without a clicked cell there are no terms; a bad K is a sentence; nothing is computed.
    page.VIEW.run(values, data.to_store(), {"cell": None})
    sent, note = page.VIEW.download(draw.CSV["decomp-download-terms"], values,
                                    data.to_store(), {"cell": None})
    assert sent is dash.no_update and note.startswith("Click a cell")
    sent, note = page.VIEW.download(draw.CSV["decomp-download-terms"],
                                    {**values, "max_features": 9}, data.to_store())
    assert sent is dash.no_update and "from 1 to 7" in note
    sent, note = page.VIEW.download(draw.CSV["decomp-download-totals"],
                                    {**values, "max_features": 2, "max_depth": 5},
                                    data.to_store(), {"cell": {"var": "X7", "degree": 3}})
    assert sent is dash.no_update and "not in the server's cache" in note


def test_the_importances_cache_is_shared_with_the_importances_page(page, app_module):
    """Decomposition's K = 3 is the Importances page's exact result for the same K."""
    import pages.importances as importances
    from pages._framework import results

    data = _data()
    settings = importances.PARAMS.settings({"method": "exact", "max_features": 3,
                                            "max_depth": None, "criterion": "entropy",
                                            "k_semantics": "id3", "order": "columns"},
                                           Context(p=7))
    importances.compute(settings, data, Progress(None))
    shared = results.peek_importances(data.as_dict, importances.core_settings(
        {**settings, "criterion": "entropy"}, "classification"))
    assert shared is not None
    np.testing.assert_allclose(_view(page, _settings(3))["k"].importances, shared.importances)


def test_no_split_by_degree_shows_the_importances_and_a_sentence(page, monkeypatch, tmp_path):
    """K = 1 under sklearn semantics beyond the recursion's budget: the core has no by_degree."""
    import varimp_core.api

    monkeypatch.setattr(varimp_core.api, "MAX_LATTICE_CELLS", -1)  # every table is too large
    # A cache of its own: the results computed under the patched budget are not the real ones
    # and must not reach another test.
    monkeypatch.setenv("VARIMP_CACHE_DIR", str(tmp_path))
    settings, data = _settings(1, semantics="sklearn"), _data({"problem": "xor:relevant=3"})
    cell = {"var": "X1", "degree": 1, "panel": "K"}
    out = page.compute(settings, data, Progress(None), cell)
    view = draw.view_from_dict(out)
    assert view["k"].by_degree is None and view["k1"].by_degree is not None
    shown = draw.render_view(view, settings)
    assert shown["figure"] is None and shown["summary"].startswith(draw.NO_SPLIT)
    np.testing.assert_allclose([r["k"] for r in shown["rows"][:-1]], view["k"].importances)
    assert shown["rows"][-1]["k"] == pytest.approx(1.0)           # Theorem 2: I(X;Y) = 1 bit
    assert "X1 at k = 1" in shown["terms"]["note"]                # the K = 1 terms still list
    figure, style, *_, summary = page.render(out, settings, data, cell)[:5]
    assert style == {"display": "none"} and summary.startswith(draw.NO_SPLIT)


def test_too_many_inputs_is_a_sentence(page):
    with pytest.raises(ValueError, match="at most 20 inputs"):
        page.compute(_settings(1), _data({"problem": "madelon"}), Progress(None))


def test_too_many_inputs_is_a_sentence_without_empty_axes(page):
    """Issue #26: above 20 inputs the page drew empty axes and three download buttons.
    madelon has 500 inputs: the sentence says 20 and 500, and nothing runs."""
    data = _data({"problem": "madelon"})
    p = len(get_problem("madelon").variables)
    out = page.instant(_settings(1), data)
    assert "20" in out["too_many"] and f"{p}" in out["too_many"]
    figure, style, columns, rows, summary, *_ = page.render(out, _settings(1), data)
    assert style == {"display": "none"} and rows == [] and "20" in summary
    assert page.instant(_settings(1), _data({"problem": "led"})) is None


@pytest.mark.browser
def test_too_many_inputs_shows_a_sentence_and_no_buttons(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/decomposition?problem=madelon")
    dash_duo.wait_for_contains_text("#decomp-too-many", "at most 20", timeout=30)
    assert "vi-hidden" in dash_duo.find_element("#decomp-results").get_attribute("class")
    assert not [b for b in dash_duo.find_elements("button") if b.is_displayed()
                and "CSV" in b.text]
    until(lambda: "vi-job-running" not in dash_duo.find_element("#decomp-job")
          .get_attribute("class"), 20)
    assert dash_duo.find_element("#decomp-error").text == ""
    assert dash_duo.get_logs() == []


def test_xor_terms_by_hand(page):
    # p = 2, Y = X1 xor X2. X1's k = 1 cell has one set B = {X2}:
    # 1/(C(2,1) * 1) * I(X1; Y | X2) = 1/2 * 1 = 0.5.
    settings = _settings(2)
    view = _view(page, settings, _data({"problem": "xor:relevant=2"}),
                 {"var": "X1", "degree": 1, "panel": "K1"})
    assert view["terms"]["term"].tolist() == pytest.approx([0.5])
    assert view["k1"].by_degree[0, 1] == pytest.approx(0.5)
    shown = draw.render_terms(view, settings)
    assert "1/(C(2,1)\u00b71) = 1/2" in shown["note"]
    assert shown["rows"] == [{"B": "{X2}", "size": 1, "cmi": pytest.approx(1.0),
                              "weight": 0.5, "term": pytest.approx(0.5)}]
    np.testing.assert_allclose(shown["figure"].data[0].y, [0.5])


def test_led_terms_sum_to_the_cell(page, led_table):
    settings = _settings(7)
    view = _view(page, settings, cell={"var": "X5", "degree": 2, "panel": "K1"})
    shown = draw.render_terms(view, settings)
    assert len(shown["rows"]) == math.comb(6, 2)
    expected = eqn3_importances(led_table).by_degree[4, 2]
    assert sum(r["term"] for r in shown["rows"]) == pytest.approx(expected, abs=1e-12)
    assert "not defined" not in shown["note"]


def test_masked_panel_explains_and_shows_k1_terms(page, led_table):
    settings = _settings(7)
    view = _view(page, settings, cell={"var": "X1", "degree": 0, "panel": "K"})
    note = draw.render_terms(view, settings)["note"]
    assert "masking" in note and "not defined" in note
    # Figure 2, right: at K = 7, X1 is never chosen at the root.
    assert view["k"].by_degree[0, 0] == pytest.approx(0.0, abs=1e-12)
    assert view["terms"]["term"].sum() == pytest.approx(
        conditional_terms(led_table, "X1", 0)["term"].sum(), abs=1e-12)
    assert view["k1"].by_degree[0, 0] == pytest.approx(view["terms"]["term"].sum(), abs=1e-12)


def test_cut_degree_is_said(page, led_table):
    settings = _settings(1, 2)
    view = _view(page, settings, cell={"var": "X3", "degree": 4, "panel": "K1"})
    assert "Depth 2 removes this degree" in draw.render_terms(view, settings)["note"]


def test_long_term_lists_are_cut_in_the_table(page, monkeypatch):
    monkeypatch.setattr(draw, "MAX_TERM_ROWS", 4)
    settings = _settings(7)
    view = _view(page, settings, cell={"var": "X2", "degree": 3, "panel": "K1"})
    shown = draw.render_terms(view, settings)
    assert len(shown["rows"]) == 4 and "4 largest of 20 terms" in shown["note"]
    terms = [r["term"] for r in shown["rows"]]
    assert terms == sorted(terms, reverse=True)


def test_unknown_cell_is_a_sentence(page):
    view = _view(page, _settings(7), cell={"var": "X9", "degree": 1, "panel": "K1"})
    assert "not in this data" in view["terms_error"] and view["terms"] is None
    view = _view(page, _settings(7), cell={"var": "X1", "degree": "two", "panel": "K1"})
    assert "degree" in view["terms_error"] and view["terms"] is None


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
    until(lambda: len(grid_rows(dash_duo, "#decomp-terms-table")) == 15, 10)
    terms = [float(t) for t in grid_cells(dash_duo, "#decomp-terms-table", "term")]
    assert sum(terms) == pytest.approx(k1[4, 2], abs=15 * 5e-7)  # 6 decimals shown
    query = parse_qs(urlsplit(dash_duo.driver.current_url).query)
    assert query["var"] == ["X5"] and query["degree"] == ["2"] and query["panel"] == ["K1"]

    # Click the right heatmap (K = 3): masking note, K = 1 terms of the same cell.
    _click_cell(dash_duo, 2, 0, 0)
    dash_duo.wait_for_contains_text("#decomp-terms-note", "not defined", timeout=20)
    assert "X1 at k = 0" in dash_duo.find_element("#decomp-terms-note").text
    assert dash_duo.get_logs() == []

    # A K above p is a sentence beside K; nothing runs and the heatmaps stay.
    set_number(dash_duo, "#decomp-k", 9)
    dash_duo.wait_for_contains_text("#decomp-k-error", "K must be a whole number from 1 to 7",
                                    timeout=20)
    dash_duo.wait_for_contains_text("#decomp-job-status", "Nothing was recomputed", timeout=10)
    _wait_for_heatmaps(dash_duo, k1, exact_importances(led_table, max_features=3).by_degree,
                       timeout=5)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
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
    until(lambda: len(grid_rows(dash_duo, "#decomp-terms-table")) == 6, 10)
    # Totals at depth 2 are Proposition 6's sums of the first two terms.
    pruned = eqn3_importances(led_table, max_depth=2).importances
    cells = grid_cells(dash_duo, "#decomp-totals", "k1_depth")
    assert cells[:7] == [f"{v:.4f}" for v in pruned]
    assert dash_duo.get_logs() == []
