"""The Importances page: its parameters, computing and rendering, and runs in the browser."""

from __future__ import annotations

import csv
import io
import math
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from _browser import full_traces, open_page, set_number, wait_for_trace
from _pages import FORMULA_CSV, grid_cell_selector, grid_cells, upload_csv
from _pages import page_module
from dash.testing.wait import until

from varimp_core.api import compute_importances, load_data
from varimp_core.exact.recursion import exact_importances
from varimp_core.problems.registry import get_problem
from varimp_core.result import ImportanceResult
from varimp_core.exact.eqn3 import eqn3_importances

from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress
from pages._framework.params import Context, ParamErrors

draw = page_module("importances")

LED = {"problem": "led"}
XOR3 = get_problem("xor:relevant=2,irrelevant=1").spec  # canonical: "xor:irrelevant=1"


@pytest.fixture(scope="module")
def page(app_module):
    import pages.importances as module

    return module


def _data(query=LED):
    return DataChoice.from_page(query)[0]


def _controls(**values):
    """Control values by parameter name, as the browser sends them."""
    defaults = {"method": "exact", "max_features": 1, "max_depth": None, "criterion": "entropy",
                "k_semantics": "id3", "n_estimators": 100, "bootstrap": [], "random_state": 0,
                "spread": "se", "order": "columns"}
    return {**defaults, **values}


def _settings(page, p=7, **values):
    return page.PARAMS.settings(_controls(**values), Context(p=p))


def _view(page, data, **values):
    settings = _settings(page, data.n_features(), **values)
    return draw.view_from_dict(page.compute(settings, data, Progress(None)))


# -- settings and URL -----------------------------------------------------------------
def test_settings_keep_only_what_the_method_uses(page):
    s = _settings(page, method="exact", max_features=3, max_depth="", n_estimators=50,
                  bootstrap=["on"], k_semantics="sklearn", random_state=4)
    assert s == {"method": "exact", "max_features": 3, "max_depth": None,
                 "criterion": "entropy", "k_semantics": "sklearn",
                 "n_trees": None, "precision": None, "order": "columns"}  # blank T, eps: 100, 0.01
    s = _settings(page, method="sklearn-rf", max_features="2", max_depth=4, n_estimators="30",
                  bootstrap=["on"], k_semantics="id3", random_state=0)
    assert s == {"method": "sklearn-rf", "max_features": 2, "max_depth": 4,
                 "criterion": "entropy", "n_estimators": 30, "bootstrap": True,
                 "random_state": 0, "spread": "se", "order": "columns"}
    # A blank seed is a sentence, not a silent 0.
    _, errors = page.PARAMS.validate(_controls(method="sklearn-rf", random_state=None),
                                     Context(7))
    assert errors == {"random_state": "Enter Seed: a whole number from 0 to 4,294,967,295."}
    s = _settings(page, method="forest", max_features=1, n_estimators=10, bootstrap=[])
    assert s["bootstrap"] is False and s["k_semantics"] == "id3"


def test_gini_impurity_on_xor_is_the_hand_calculation(page):
    """XOR of two fair bits, Gini: the root split gains nothing (each child still has
    i = 1/2), the second split makes both children pure, gaining 1/2 with p(t) = 1/2 in each
    of two nodes, 1/2 in all for the second variable; each variable comes first in half the
    trees, so each gets 1/4 at any K."""
    data = _data({"problem": "xor"})
    for k in (1, 2):
        view = _view(page, data, max_features=k, criterion="gini")
        assert view["result"].units == "gini"
        np.testing.assert_allclose(view["result"].importances, [0.25, 0.25], atol=1e-12)
    query = page.VIEW.url(_settings(page, 2, criterion="gini"), data)
    assert "criterion=gini" in query
    values, notes = page.initial_values(parse_qs(query), data, Context(2))
    assert values["criterion"] == "gini" and notes == []
    _, errors = page.PARAMS.validate(_controls(criterion="log"), Context(7))
    assert errors["criterion"].startswith("Impurity must be one of entropy, gini")


def test_bars_open_largest_first_on_a_sample_and_in_column_order_on_an_exact_problem(page):
    """Issue #26: an analyst's bars are sorted by importance, a teacher's exact LED keeps
    Table 2's column order; a link's ``order`` wins over either default, and an unknown
    order is a sentence."""
    exact = _data({"problem": "led"})
    sample = _data({"problem": "led", "sampling": "sample", "n": 300})
    assert page.initial_values({}, exact, Context(7))[0]["order"] == "columns"
    assert page.initial_values({}, sample, Context(7))[0]["order"] == "importance"
    assert page.initial_values({"order": ["columns"]}, sample, Context(7))[0]["order"] == \
        "columns"
    _, errors = page.PARAMS.validate(_controls(order="size"), Context(7))
    assert list(errors) == ["order"] and "Bar order must be one of" in errors["order"]
    # Drawing only: the same result serves both orders (one cache entry).
    a = page.VIEW.key(exact, _settings(page, order="columns"), {})
    assert a == page.VIEW.key(exact, _settings(page, order="importance"), {})
    # Drawn: LED at K = 1 (Table 2's Eqn 3 column: X5, X2, X4, X3, X1, X7, X6 largest first).
    view = _view(page, exact, max_features=1)
    fig = page.render_view(view, order="importance")["figure"]
    assert list(fig.data[0].x) == ["X5", "X2", "X4", "X3", "X1", "X7", "X6"]
    assert list(page.render_view(view)["figure"].data[0].x) == [f"X{i}" for i in range(1, 8)]


@pytest.mark.parametrize("controls,name,match", [
    (dict(method="exact", max_features=9), "max_features", "from 1 to 7"),
    (dict(method="exact", max_features=None), "max_features", "Enter K"),
    (dict(method="exact", max_features=2.5), "max_features", "whole number"),
    (dict(method="exact", max_features=1, max_depth=0), "max_depth", "Max depth"),
    (dict(method="forest", max_features=1, n_estimators=0), "n_estimators", "Number of trees"),
    (dict(method="forest", max_features=1, n_estimators=10, random_state=-1), "random_state",
     "Seed"),
    (dict(method="boosting", max_features=1), "method", "Method must be one of"),
])
def test_bad_settings_are_sentences(page, controls, name, match):
    settings, errors = page.PARAMS.validate(_controls(**controls), Context(p=7))
    assert settings == {} and list(errors) == [name]
    assert match in errors[name]
    assert errors[name].endswith(".") and "\n" not in errors[name]
    with pytest.raises(ParamErrors):
        page.PARAMS.settings(_controls(**controls), Context(p=7))


def test_out_of_range_numbers_never_fall_back_to_a_default(page):
    """The issue's examples: N = 0, -7 or 10^8 and depth -1 are sentences, not defaults."""
    for trees in (0, -7, 10**8):
        _, errors = page.PARAMS.validate(_controls(method="forest", n_estimators=trees),
                                         Context(p=7))
        assert errors["n_estimators"].startswith("Number of trees must be a whole number from 1")
    _, errors = page.PARAMS.validate(_controls(max_depth=-1), Context(p=7))
    assert errors == {"max_depth": "Max depth must be a whole number of at least 1, not -1."}


def test_query_round_trips_through_the_layout_state(page):
    data = _data({"problem": XOR3})
    settings = _settings(page, 3, method="forest", max_features=2, max_depth=2,
                         n_estimators=40, bootstrap=["on"], k_semantics="sklearn",
                         random_state=7)
    query = page.VIEW.url(settings, data)
    parsed = {k: v[-1] for k, v in parse_qs(query).items()}
    again_data, notes = DataChoice.from_page(parsed)
    assert again_data == data and notes == []
    values, notes = page.initial_values(parsed, again_data, Context(3))
    assert notes == []
    assert page.PARAMS.settings({**values, "bootstrap": ["on"] if values["bootstrap"] else []},
                                Context(3)) == settings


def test_link_defaults_and_bad_values(page):
    values, _ = page.initial_values({"problem": "led"}, _data(), Context(7))
    assert values["method"] == "exact" and values["max_features"] == 1
    madelon = _data({"problem": "madelon"})  # 500 inputs: no exact method
    values, _ = page.initial_values({"problem": "madelon"}, madelon, Context(500))
    assert values["method"] == "sklearn-et"
    exact = next(o for o in page.method_options(Context(500)) if o["value"] == "exact")
    assert exact["disabled"] and "at most 20 inputs" in exact["label"]
    assert not any(o.get("disabled") for o in page.method_options(Context(7)))
    values, notes = page.initial_values({"problem": "led", "K": "12", "trees": "-1"}, _data(),
                                        Context(7))
    assert values["max_features"] == 1 and values["n_estimators"] == 100
    assert len(notes) == 2 and any("K was ignored" in n for n in notes)


def test_session_data_is_used_when_the_link_has_none():
    vi_data = {"params": {"source": "problem", "problem": XOR3, "sampling": "exact",
                          "bins": 5}, "p": 3}
    data, _ = DataChoice.from_page({"K": "2"}, vi_data)
    assert data["problem"] == XOR3 and data.n_features() == 3
    assert data.query().startswith("problem=xor")
    assert data.label() == "xor:irrelevant=1 (exact, 3 inputs)"


def test_field_classes(page):
    classes = dict(zip(page.PARAMS.names, page.PARAMS.field_classes({"method": "exact"})))
    assert "vi-hidden" in classes["n_estimators"] and "vi-hidden" not in classes["k_semantics"]
    classes = dict(zip(page.PARAMS.names, page.PARAMS.field_classes({"method": "forest"})))
    assert "vi-hidden" not in classes["n_estimators"]
    classes = dict(zip(page.PARAMS.names, page.PARAMS.field_classes({"method": "sklearn-et"})))
    assert "vi-hidden" in classes["k_semantics"]


# -- computing -------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 3, 7])
def test_exact_view_is_the_core_value(page, k):
    view = _view(page, _data(), method="exact", max_features=k)
    table = get_problem("led").exact_table()
    expected = exact_importances(table, max_features=k).importances
    np.testing.assert_allclose(view["result"].importances, expected, atol=1e-12)
    assert view["exact"] is None
    # Theorem 2: fully grown trees on LED sum to I(X;Y) = H(Y) = log2(10).
    assert view["result"].total == pytest.approx(math.log2(10), abs=1e-9)
    text = draw.theorem2_text(view["result"], view["information"])
    assert text.startswith("sum = 3.3219 bits, I(X;Y) = 3.3219 bits")


def test_depth_limit_matches_proposition_6(page):
    view = _view(page, _data(), method="exact", max_features=1, max_depth=2)
    table = get_problem("led").exact_table()
    np.testing.assert_allclose(view["result"].importances,
                               eqn3_importances(table, max_depth=2).importances, atol=1e-12)
    assert "Proposition 6" in draw.theorem2_text(view["result"], view["information"])


def test_sampled_view_carries_the_exact_reference(page):
    view = _view(page, _data(), method="forest", max_features=2, n_estimators=32,
                 bootstrap=[], random_state=5)
    data = load_data(problem="led")
    forest = compute_importances(data, method="forest", max_features=2, n_estimators=32,
                                 random_state=5)
    np.testing.assert_allclose(view["result"].importances, forest.importances, atol=1e-12)
    exact = exact_importances(data.table, max_features=2)
    np.testing.assert_allclose(view["exact"].importances, exact.importances, atol=1e-12)
    out = draw.render_view(view)
    np.testing.assert_allclose(out["figure"].data[0].y, forest.importances, atol=1e-12)
    np.testing.assert_allclose(out["figure"].data[-1].y, exact.importances, atol=1e-12)
    rows = out["rows"]
    assert [r["variable"] for r in rows] == list(data.variables)
    np.testing.assert_allclose([r["exact"] for r in rows], exact.importances)
    np.testing.assert_allclose([r["sem"] for r in rows], forest.importances_sem)
    assert {c["id"] for c in out["columns"]} >= {"importance", "sem", "exact", "normalised"}


def test_whiskers_are_standard_errors_unless_the_per_tree_spread_is_asked(page):
    """scikit-learn's per-tree importances vary far more than their mean: by default the
    whiskers are one standard error, SD / sqrt(T); the per-tree spread is an option."""
    view = _view(page, _data(), method="sklearn-rf", max_features=2, n_estimators=40,
                 bootstrap=["on"], random_state=1)
    per_tree = view["result"].per_tree
    se = per_tree.std(axis=0, ddof=1) / math.sqrt(40)
    out = draw.render_view(view)
    bars = out["figure"].data[0]
    assert [t.type for t in out["figure"].data] == ["bar", "scatter"]
    np.testing.assert_allclose(bars.error_y.array, se, rtol=1e-12)
    assert "whiskers \u00b11 standard error" in bars.name and "boxes" not in out["note"]
    spread = draw.render_view(view, "trees")
    box = spread["figure"].data[1]
    assert box.type == "box" and "per-tree spread (T = 40)" in box.name
    np.testing.assert_allclose(box.upperfence, per_tree.max(axis=0))
    assert "boxes: the spread of the per-tree values" in spread["note"]
    # The choice is a control: in the URL, and a bad value is a sentence.
    s = _settings(page, method="sklearn-rf", spread="trees")
    assert "whiskers=trees" in page.PARAMS.query(s)
    _, errors = page.PARAMS.validate(_controls(method="forest", spread="box"), Context(7))
    assert set(errors) == {"spread"}
    assert "spread" not in _settings(page, method="exact", spread="trees")


def test_sklearn_view_gets_information_from_the_exact_reference(page):
    view = _view(page, _data(), method="sklearn-et", max_features=1, n_estimators=20,
                 bootstrap=[], random_state=0)
    assert view["result"].information is None
    assert view["information"] == pytest.approx(math.log2(10))
    assert view["exact"].parameters["k_semantics"] == "sklearn"
    # Without bootstrap the reference is the limit of scikit-learn's ExtraTrees (issue #15).
    assert view["exact"].method == "exact-et"
    assert "the value this forest converges to" in draw.exact_note(view)
    boot = _view(page, _data(), method="sklearn-et", max_features=1, n_estimators=20,
                 bootstrap=["on"], random_state=0)
    assert boot["exact"].method == "exact" and "binary trees" in draw.exact_note(boot)


def test_too_many_inputs_for_exact_is_a_sentence(page):
    data = _data({"problem": "madelon"})
    with pytest.raises(ValueError, match="at most 20 input variables"):
        page.compute({"method": "exact", "max_features": 1, "max_depth": None,
                      "k_semantics": "id3"}, data, Progress(None))


def test_k_above_p_in_compute_is_a_sentence(page):
    with pytest.raises(ValueError, match="from 1 to 3"):
        page.compute({"method": "exact", "max_features": 5, "max_depth": None,
                      "k_semantics": "id3"}, _data({"problem": XOR3}), Progress(None))


def test_theorem2_text_for_other_units():
    r = ImportanceResult(variables=("a", "b"), importances=[0.2, 0.3], by_degree=np.diag([.2, .3]),
                         method="sklearn-rf", units="variance")
    # scikit-learn's "variance" is the variance of Y, in 4 significant digits
    assert draw.theorem2_text(r).startswith("sum = 0.5000 variance of Y;")


# -- verdicts on samples ------------------------------------------------------------------
LED_SAMPLE = {"problem": "led", "sampling": "sample", "n": 300, "seed": 2}


def test_a_sample_gets_one_verdict_per_variable(page):
    """Issue #24 (deliberately replaces the chance dash, band and unadjusted p-value of the
    exact method, which gave four answers and no verdict).  LED drawn with 300 rows: every
    segment is relevant, and far above chance, so each of the R = 19 default permutations
    (R + 1 = 1/0.05) gives it a smaller statistic: adjusted p = 1/(R + 1) = 0.05."""
    view = _view(page, _data(LED_SAMPLE), method="exact")
    verdicts = view["verdicts"]
    data = load_data(problem="led", n_samples=300, random_state=2)
    np.testing.assert_allclose(verdicts.importances, eqn3_importances(data.table).importances)
    np.testing.assert_allclose(view["result"].importances, verdicts.importances)
    assert verdicts.procedure["n_permutations"] == 19
    assert verdicts.verdicts == ("relevant",) * 7
    np.testing.assert_allclose(verdicts.p_adjusted, 1 / 20)
    out = draw.render_view(view)
    assert list(out["figure"].data[0].text) == ["relevant"] * 7      # one verdict per bar
    np.testing.assert_allclose(out["figure"].data[0].y, verdicts.above_chance)
    assert [r["verdict"] for r in out["rows"]] == ["relevant"] * 7
    np.testing.assert_allclose([r["p_adjusted"] for r in out["rows"]], 1 / 20)
    assert {"verdict", "above_chance", "null_mean", "p_adjusted"} <= {c["id"] for c in
                                                                    out["columns"]}
    rows = list(csv.DictReader(io.StringIO(draw.csv_text(view["result"], None, None,
                                                         verdicts))))
    assert [r["verdict"] for r in rows] == ["relevant"] * 7
    np.testing.assert_allclose([float(r["above_chance"]) for r in rows],
                               verdicts.importances - verdicts.null_mean)
    # plug-in bars on request: the values of the exact method, the null mean as a dash
    plug = draw.render_view(view, show="plugin")["figure"]
    np.testing.assert_allclose(plug.data[0].y, verdicts.importances)
    np.testing.assert_allclose(plug.data[1].y, verdicts.null_mean)
    # an exact distribution is a population: no test, no verdicts
    assert _view(page, _data(), method="exact")["verdicts"] is None


def test_an_irrelevant_many_level_column_is_at_chance(page):
    """An analyst's CSV: a clinic code of 15 levels beside the one input that matters
    (y copies x 85% of the time).  The clinic column gets a visible plug-in bar, but its
    value above chance is within 3 standard deviations of its null, and its verdict is
    chance (200 rows over 15 x 2 cells: 6.7 a cell, enough for Cochran's rule); x is
    relevant."""
    rng = np.random.default_rng(7)
    n = 200
    x = rng.integers(0, 2, n)
    clinic = [f"c{k}" for k in rng.integers(0, 15, n)]
    y = np.where(rng.random(n) < 0.85, x, 1 - x)
    text = "x,clinic,y\n" + "".join(f"{a},{b},{c}\n" for a, b, c in zip(x, clinic, y))
    data = DataChoice.from_params(upload_csv(text, "clinics.csv"))
    view = _view(page, data, method="exact")
    verdicts = view["verdicts"]
    assert verdicts.variables == ("x", "clinic")
    assert verdicts.importances[1] > 0.02                      # the plug-in bias is visible...
    assert abs(verdicts.above_chance[1]) < 3 * verdicts.null_sd[1]   # ...and no more than chance
    assert verdicts.verdicts == ("relevant", "chance")
    assert verdicts.above_chance[0] > 10 * verdicts.null_sd[0]
    rows = draw.render_view(view)["rows"]
    assert [r["verdict"] for r in rows] == ["relevant", "chance"]


@pytest.mark.browser
def test_a_sampled_problem_shows_one_verdict_per_bar(dash_duo, dash_app):
    """LED drawn with N = 300 rows: the bars above chance (the core's verdicts, same
    settings), "relevant" on each of the 7 bars and in the table, adjusted p = 1/20."""
    from varimp_core.studies.verdicts import importance_verdicts

    data = load_data(problem="led", n_samples=300, random_state=2)
    expected = importance_verdicts(data, method="exact", n_permutations=19)
    open_page(dash_duo, dash_app, "/importances?problem=led&sampling=sample&n=300&seed=2")
    # A sample's bars open largest first (issue #26); "Column order" puts X1..X7 back.
    first = np.argsort(-expected.above_chance, kind="stable")
    _wait_for_bars(dash_duo, expected.above_chance[first])
    assert dash_duo.driver.execute_script(
        "return document.querySelector('#imp-graph .js-plotly-plot').data[0].x;") == \
        [expected.variables[i] for i in first]
    dash_duo.find_element("#imp-order input[value='columns']").click()
    _wait_for_bars(dash_duo, expected.above_chance)
    until(lambda: parse_qs(urlsplit(dash_duo.driver.current_url).query).get("order")
          == ["columns"], 10)
    until(lambda: dash_duo.driver.execute_script(
        "const g = document.querySelector('#imp-graph .js-plotly-plot');"
        "return g && g.data && g.data[0].text;") == ["relevant"] * 7, 30)
    dash_duo.wait_for_contains_text("#imp-table", "Verdict", timeout=10)
    assert grid_cells(dash_duo, "#imp-table", "verdict") == ["relevant"] * 7
    assert grid_cells(dash_duo, "#imp-table", "p_adjusted") == ["0.0500"] * 7     # 1/(R + 1): above all 19 nulls
    assert dash_duo.get_logs() == []


# -- CSV -----------------------------------------------------------------------------------
def test_csv_is_the_result_frame_plus_exact(page):
    view = _view(page, _data(), method="exact", max_features=3)
    text = draw.csv_text(view["result"])
    rows = list(csv.DictReader(io.StringIO(text)))
    frame = view["result"].to_frame()
    assert list(rows[0]) == list(frame.columns)
    np.testing.assert_allclose([float(r["importance"]) for r in rows], frame["importance"])
    assert "exact_importance" in draw.csv_text(view["result"], view["result"]).splitlines()[0]


def test_csv_neutralises_formula_cells():
    names = ("=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "\tx", "plain", "a=b")
    p = len(names)
    r = ImportanceResult(variables=names, importances=np.linspace(-0.1, 0.5, p),
                         by_degree=np.diag(np.linspace(-0.1, 0.5, p)), method="forest")
    rows = list(csv.reader(io.StringIO(draw.csv_text(r))))
    cells = [row[0] for row in rows[1:]]
    assert cells[:5] == ["'" + n for n in names[:5]]
    assert cells[5:] == ["plain", "a=b"]
    # Numbers are left alone, negative ones included.
    assert float(rows[1][1]) == pytest.approx(-0.1)


def test_csv_filename_is_safe():
    name = draw.csv_filename(_data({"problem": XOR3}).as_dict,
                             {"method": "forest", "max_features": 2})
    assert name == "varimp-importances-xor-irrelevant-1-forest-K2.csv"


# -- the page module -------------------------------------------------------------------------
def test_page_is_registered_and_explains_normalisation(page):
    import dash

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
    first = dash_duo.find_element(grid_cell_selector("#imp-table", "importance")).text
    assert first == f"{exact_importances(led, max_features=3).importances[0]:.4f}"

    # A bad K is a sentence on the page, and the figure keeps the last good view.
    set_number(dash_duo, "#imp-k", 9)
    dash_duo.wait_for_contains_text("#imp-k-error", "K must be a whole number from 1 to 7",
                                    timeout=20)
    dash_duo.wait_for_contains_text("#imp-job-status", "Nothing was recomputed", timeout=10)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert np.allclose(_traces(dash_duo)[0][1], exact_importances(led, max_features=3).importances)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_exact_view_has_no_empty_sampling_card_nor_empty_trees_figure(dash_duo, dash_app):
    """On the exact method the Sampling card (every field of which is a forest's) is hidden,
    and "How many trees?" draws the exact expected error of T trees (issue #29), not a 340 px
    empty figure (issue #26); a sampled method brings the card back, with its curve."""
    open_page(dash_duo, dash_app, "/importances?problem=led")
    _wait_for_bars(dash_duo, eqn3_importances(get_problem("led").exact_table()).importances)
    until(lambda: any("exact" in (t[0] or "") for t in _convergence_names(dash_duo)), 30)
    assert not dash_duo.find_element("#imp-sampling-card").is_displayed()
    assert dash_duo.find_element("#imp-convergence-graph").is_displayed()
    assert dash_duo.find_element("#imp-convergence-why").text == ""
    dash_duo.find_element("#imp-method input[value='forest']").click()
    until(lambda: dash_duo.find_element("#imp-sampling-card").is_displayed(), 10)
    until(lambda: dash_duo.find_element("#imp-convergence-graph").is_displayed()
          and dash_duo.find_element("#imp-convergence-why").text == "", 60)
    assert dash_duo.find_element("#imp-trees").is_displayed()
    assert dash_duo.get_logs() == []


def _convergence_names(dash_duo):
    return dash_duo.driver.execute_script(
        "const g = document.querySelector('#imp-convergence-graph .js-plotly-plot');"
        "return g && g.data ? g.data.map(t => [t.name || '']) : [];")


def test_an_exact_view_without_its_moments_says_so_in_place_of_the_figure():
    """When the exact covariance cannot be afforded (no moments), the exact method has no
    trees to count: one sentence replaces the empty figure."""
    from varimp_core.api import compute_importances as compute

    result = compute(load_data(problem="led"), method="exact")
    view = {"result": result, "exact": None, "information": None, "chance": None,
            "verdicts": None, "moments": None, "notes": [], "p": 7}
    out = draw.render_view(view)
    assert "no trees to count" in out["convergence_note"]
    assert draw.sampling_class("exact") == "vi-hidden" and draw.sampling_class("forest") == ""


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
    assert [t[0] for t in traces] == ["bar", "scatter"]   # whiskers: standard errors only
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


def _start_a_long_job(dash_duo, dash_app):
    """Draw 20 scikit-learn trees, then ask for 10,000 (far longer than a test waits).

    Returns the 20-tree importances, which the figure shows meanwhile."""
    quick = compute_importances(load_data(problem="led"), method="sklearn-rf", max_features=2,
                                n_estimators=20, random_state=0)
    open_page(dash_duo, dash_app, "/importances?problem=led&method=sklearn-rf&K=2"
              "&trees=20&bootstrap=1&tree_seed=0")
    _wait_for_bars(dash_duo, quick.importances)
    set_number(dash_duo, "#imp-trees", 10000)
    until(lambda: "vi-job-running" in dash_duo.find_element("#imp-job").get_attribute("class"),
          10)
    return quick


@pytest.mark.browser
def test_long_job_disables_controls_and_cancels(dash_duo, dash_app):
    quick = _start_a_long_job(dash_duo, dash_app)
    until(lambda: dash_duo.find_element("#imp-fieldset").get_attribute("disabled") is not None,
          10)
    assert "vi-job-running" in dash_duo.find_element("#imp-job").get_attribute("class")
    cancel = dash_duo.find_element("#imp-job-cancel")
    until(lambda: cancel.is_enabled(), 10)
    # The trees box sits low in the controls; scroll back up to Cancel as a user would.
    dash_duo.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cancel)
    cancel.click()
    until(lambda: dash_duo.find_element("#imp-fieldset").get_attribute("disabled") is None, 20)
    assert "vi-job-running" not in dash_duo.find_element("#imp-job").get_attribute("class")
    # The figure still shows the last finished view.
    assert np.allclose(_traces(dash_duo)[0][1], quick.importances, atol=1e-12)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_a_cached_view_drawn_mid_job_cancels_the_job(dash_duo, dash_app):
    """A job still computing older settings must not draw over a view drawn since from the
    cache.  The page disables its controls while a job runs; a control outside that set (as
    on Masking) is simulated by enabling the fieldset again."""
    quick = _start_a_long_job(dash_duo, dash_app)
    dash_duo.driver.execute_script("document.getElementById('imp-fieldset').disabled = false")
    set_number(dash_duo, "#imp-trees", 20)
    dash_duo.wait_for_contains_text("#imp-job-status", "Done (cached).", timeout=10)
    until(lambda: "vi-job-running" not in dash_duo.find_element("#imp-job")
          .get_attribute("class"), 10)
    time.sleep(3)  # a job left running would draw its 10,000 trees about now or later
    assert np.allclose(_traces(dash_duo)[0][1], quick.importances, atol=1e-12)
    assert "trees=20" in dash_duo.driver.current_url
    assert dash_duo.get_logs() == []


def test_uploaded_table_flows_to_a_safe_csv(page):
    data = DataChoice.from_params(upload_csv(FORMULA_CSV, "evil.csv"))
    assert data.n_features() == 2
    settings = _settings(page, 2, method="exact", max_features=1)
    view = draw.view_from_dict(page.compute(settings, data, Progress(None)))
    assert view["result"].variables == ("=cmd|' /C calc'!A0", "@x")
    names = [row[0] for row in csv.reader(io.StringIO(draw.csv_text(view["result"])))][1:]
    assert names == ["'=cmd|' /C calc'!A0", "'@x"]
    assert draw.csv_filename(data.as_dict, settings) == "varimp-importances-evil-exact-K1.csv"


@pytest.mark.browser
def test_leaving_the_page_mid_job_ends_the_job(dash_duo, dash_app):
    """The job's process is gone within a few seconds of the user leaving its page."""
    import os

    import psutil

    def job_processes():
        return [c for c in psutil.Process(os.getpid()).children(recursive=True)
                if c.is_running() and c.status() != psutil.STATUS_ZOMBIE
                and "chrom" not in c.name()]

    before = {c.pid for c in job_processes()}
    open_page(dash_duo, dash_app, "/importances?problem=led&method=sklearn-rf&K=2"
              "&trees=10000&bootstrap=1&tree_seed=77")
    until(lambda: "vi-job-running" in dash_duo.find_element("#imp-job").get_attribute("class"),
          20)
    until(lambda: {c.pid for c in job_processes()} - before, 10)
    dash_duo.driver.find_element("link text", "Decomposition").click()
    until(lambda: urlsplit(dash_duo.driver.current_url).path == "/decomposition", 10)
    until(lambda: not ({c.pid for c in job_processes()} - before), 10)


@pytest.mark.usefixtures("cache_backend")
def test_a_job_nobody_polls_stops_at_its_next_progress_report(monkeypatch):
    """The heartbeat: a closed tab stops polling, and the job stops (no page-leave event).
    On Redis too, where the heartbeat is a key aged by Redis's clock."""
    from pages._server import job_signals

    monkeypatch.setenv("VARIMP_HEARTBEAT_TIMEOUT", "0.2")
    job_signals.start_job("test-heartbeat-job")
    job_signals.mark_polled("test-heartbeat-job")
    try:
        progress = Progress(None)
        progress(1, 10)  # just polled: runs on
        import time

        time.sleep(1.1)  # past the timeout, and past Progress's one read a second
        with pytest.raises(job_signals.JobAbandoned):
            progress(2, 10)
    finally:
        job_signals.start_job(None)  # this test process is no job


def test_the_browser_cannot_widen_a_bound(page):
    """The page's store carries p for the browser; the server counts LED's 7 inputs itself,
    so a forged p = 1,000 does not let K = 9 through."""
    store = {**_data().to_store(), "p": 1000}
    with pytest.raises(ParamErrors) as caught:
        page.VIEW.check(_controls(max_features=9), store)
    assert caught.value.errors["max_features"] == "K must be a whole number from 1 to 7, not 9."


def test_waiting_on_another_jobs_result_says_so(page, monkeypatch):
    """While another job holds the lock of the same result, the cache reports progress with an
    unknown total (``progress(0, None)``); the page said nothing and crashed on it ("Something
    went wrong") when a cancelled job had left its lock behind."""
    from pages._framework import results

    real = results.cached_importances

    def waiting(data, kwargs, load, progress=None, partial=None):
        if progress is not None:  # the sampled forest's (the exact reference has none)
            progress(0, None)  # what cache.get_or_compute's on_wait sends while it waits
        return real(data, kwargs, load, progress, partial)

    monkeypatch.setattr(results, "cached_importances", waiting)
    shown = []
    settings = _settings(page, 7, method="sklearn-rf", n_estimators=5, max_features=2)
    out = page.compute(settings, _data(), Progress(shown.append, min_interval=0))
    assert (None, "1", "Waiting for the same computation, started by another request\u2026") \
        in shown
    expected = compute_importances(load_data(problem="led"), method="sklearn-rf", max_features=2,
                                   n_estimators=5, random_state=0, bootstrap=False,
                                   criterion="entropy")
    np.testing.assert_allclose(draw.view_from_dict(out)["result"].importances,
                               expected.importances, atol=1e-12)
