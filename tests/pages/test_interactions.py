"""The Interactions page: its parameters, computing and drawing, then the page in Chromium."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from _browser import figure as _figure
from _browser import open_page, set_number, url_query, visit, wait_for
from _pages import query_dict as _query
from _pages import constant_column_frame, grid_rows, registered_page, upload_frame
from _pages import page_module
from dash.testing.wait import until

from pages._framework import datasource
from pages._framework import local_forest as forest
from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress
from pages._framework.params import Context
from varimp_core.local.heldout import split_rows
from varimp_core.local.interactions import interactions, partial_importance
from varimp_core.local.importance import fit_uniform_forest, local_importance

draw = page_module("interactions")

XOR = DataChoice.from_params({"source": "problem", "problem": "xor:irrelevant=3",
                              "sampling": "sample", "n": 500, "seed": 0, "bins": 5})
XOR_URL = "problem=xor:relevant=2,irrelevant=3&sampling=sample&n=500&trees=50"


@pytest.fixture(scope="module")
def page(app_module):
    import pages.interactions as module

    return module


def _controls(**kw):
    """Control values of the forest by parameter name, as the browser sends them."""
    return {"forest": "uniform", "n_estimators": 30, "max_features": None, "random_state": 0,
            "rows": "train", **kw}


def _settings(page, p=5, **kw):
    return page.PARAMS.settings(_controls(**kw), Context(p))


def _shown(page, **kw):
    return page.DISPLAY.settings({"min_share": 0.01, "label": None, "threshold": None,
                                  "direction": "above", **kw}, Context())


def _compute(page, data, settings, progress=None):
    return page.compute(settings, data, progress or Progress(None))


def _store(page, data, settings):
    """The page's store of a computed result (what its figures are drawn from)."""
    return page.render(_compute(page, data, settings), settings, data)[0]


def _start(page, query):
    return forest.start(query, None, page.PARAMS, page.DISPLAY)


def _upload(df: pd.DataFrame) -> DataChoice:
    return DataChoice.from_params(upload_frame(df, "t.csv"))


def _diabetes() -> DataChoice:
    return forest.page_data(DataChoice.from_params({"source": "problem",
                                                    "problem": "diabetes"}))[0]


def _with_constant(n=200, seed=0):
    return constant_column_frame("=cmd", 1.0, n, seed)


# -- parameters and URL ----------------------------------------------------------------
def test_defaults_and_the_exact_distribution_becomes_a_sample(page):
    st = _start(page, {})
    assert st["values"]["forest"] == "uniform" and st["values"]["n_estimators"] == 100
    assert st["values"]["rows"] == "train"
    assert st["values"]["min_share"] == page.DEFAULT_MIN_SHARE
    assert st["data"]["sampling"] == "exact"                 # the user's choice is kept
    assert st["page"]["sampling"] == "sample"                # the page computes on a sample
    assert len(st["notes"]) == 1 and "exact distribution" in st["notes"][0]
    assert "1,000 rows" in st["notes"][0]                    # led's default sample size


def test_link_state_round_trips_and_bad_values_fall_back(page):
    st = _start(page, _query(XOR_URL + "&forest=rf&K=2&tree_seed=4&rows=test&other=0.1"
                                       "&direction=below&threshold=1.5"))
    assert st["notes"] == []
    v = st["values"]
    assert (v["forest"], v["n_estimators"], v["max_features"], v["random_state"], v["rows"],
            v["min_share"]) == ("rf", 50, 2, 4, "test", 0.1)
    query = page.page_query(st["store"], v, v)
    again = _start(page, _query(query))
    assert again["values"] == v and page.page_query(again["store"], v, v) == query
    bad = _start(page, {"forest": "gbm", "trees": "0", "other": "0.9"})
    assert len(bad["notes"]) == 4                 # three values plus the exact-to-sample note
    assert bad["values"]["forest"] == "uniform" and bad["values"]["n_estimators"] == 100


@pytest.mark.parametrize("kw,words", [
    ({"forest": "gbm"}, "Forest kind must be one of"),
    ({"n_estimators": 0}, "Number of trees"),
    ({"n_estimators": None}, "Enter number of trees"),
    ({"n_estimators": 2.5}, "whole number"),
    ({"max_features": 9}, "from 1 to 5"),
    ({"rows": "oob"}, "Rows assessed must be one of"),
])
def test_forest_settings_refuse_bad_values_with_a_sentence(page, kw, words):
    with pytest.raises(ValueError, match=words):
        _settings(page, **kw)


def test_out_of_range_values_are_sentences_and_never_defaults(page):
    for trees in (0, -7, 10**8):
        settings, errors = page.PARAMS.validate(_controls(n_estimators=trees), Context(5))
        assert settings == {} and list(errors) == ["n_estimators"]
        assert errors["n_estimators"].startswith(
            "Number of trees must be a whole number from 1 to 1,000")
    _, errors = page.PARAMS.validate(_controls(max_features=0, random_state=-1), Context(5))
    assert set(errors) == {"max_features", "random_state"}
    shown, errors = page.DISPLAY.validate({"min_share": 0.9, "direction": "above"}, Context())
    assert shown == {} and errors["min_share"].startswith(
        "Other-features threshold must be a number from 0 to 0.2")


# -- computing ------------------------------------------------------------------------
def test_cached_local_importance_is_the_cores(page):
    settings = _settings(page)
    store = _compute(page, XOR, settings)
    assert store["task"] == "classification" and store["classes"] == ["0", "1"]
    assert (store["n"], store["n_fit"]) == (350, 350)
    local, rows = forest.load_local(store["local"])
    # the same forest, fitted directly on the same rows, gives the same counts
    prepared = datasource.load_prepared(XOR.as_dict)
    fit, assessed = split_rows(500, 0, "train")
    model = fit_uniform_forest(prepared.X_numeric[fit], prepared.y[fit], n_estimators=30,
                               random_state=0)
    direct = local_importance(model, prepared.X_numeric[assessed], variables=prepared.variables)
    np.testing.assert_array_equal(local.counts, direct.counts)
    np.testing.assert_array_equal(local.positions, direct.positions)
    np.testing.assert_array_equal(local.prediction, direct.prediction.astype(str))
    assert rows.tolist() == assessed.tolist()
    # a second call reads the cache: nothing is fitted
    calls = []
    again = _compute(page, XOR, settings, progress=lambda *a: calls.append(a))
    assert again == store and calls == []


def test_draw_shows_the_cores_numbers(page):
    store = _store(page, XOR, _settings(page, forest="et", max_features=1))
    out = draw.draw(store, _shown(page, min_share=0))
    assert all(out[f"{p}_message"] == "" for p in ("mosaic", "vii", "partial", "over"))
    local, _ = forest.load_local(store["local"])
    it = interactions(local, min_share=0)
    widths = np.asarray([t for t in out["mosaic"].data][0].width)
    np.testing.assert_allclose(widths, it.joint.sum(axis=1)[it.joint.sum(axis=1) > 0])
    assert out["label"] == "0"                               # first class predicted
    expected = partial_importance(local, label="0")
    np.testing.assert_allclose(sorted(out["partial"].data[0].x), sorted(expected.shares))
    assert "350 of 350 observations" in out["summary"]


def test_a_single_tree_gets_a_sentence_and_the_other_parts_still_show(page):
    store = _store(page, XOR, _settings(page, n_estimators=1))
    out = draw.draw(store, _shown(page))
    assert "at least two trees" in out["mosaic_message"]
    assert "at least two trees" in out["vii_message"]
    assert out["partial_message"] == "" and out["over_message"] == ""
    assert "1 tree " in out["summary"]


def test_regression_target_for_the_class_only_view(page):
    store = _store(page, _diabetes(), _settings(page, 10, forest="rf", n_estimators=20,
                                                rows="test"))
    assert store["task"] == "regression" and store["classes"] is None
    out = draw.draw(store, _shown(page, label="2", direction="below"))
    assert out["median"] == pytest.approx(np.median(
        forest.load_local(store["local"])[0].prediction))
    assert "regression" in out["over_message"] and "Traceback" not in out["over_message"]
    assert out["partial_message"] == "" and out["threshold"] == out["median"]
    assert "prediction \u2264" in out["partial"].layout.title.text
    assert "held-out rows" in out["summary"]


def test_constant_columns_no_held_out_rows_and_csv_injection(page):
    data = _upload(_with_constant())
    # Issue #26: the constant column is excluded as constant, so the default forest runs
    # (it used to refuse the table) on the two inputs left.
    assert data.load().variables == ("x1", "=cmd")
    _compute(page, data, _settings(page, 2))
    store = _store(page, data, _settings(page, 2, forest="rf"))
    tiny = _upload(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0, 1, 0], "y": [0, 1, 1]}))
    with pytest.raises(ValueError, match="no held-out rows"):
        _compute(page, tiny, _settings(page, 2, forest="rf", rows="test"))
    text = draw.variables_csv(store)
    assert "\n'=cmd," in text and "\n=cmd" not in text
    pairs = draw.pairs_csv(store, 0.0)
    assert "'=cmd" in pairs
    assert draw.csv_filename(store, "pairs") == "varimp-interactions-t-rf-pairs.csv"


def test_multiway_forest_is_the_cores_and_pairs_x1_x2(page):
    settings = _settings(page, forest="multiway", n_estimators=40, max_features=1)
    store = _store(page, XOR, settings)
    assert store["task"] == "classification" and store["classes"] == ["0", "1"]
    local, _ = forest.load_local(store["local"])
    # the same forest grown by the core on the same coded rows gives the same counts
    from varimp_core.local.multiway import forest_local_importance
    from varimp_core.data.table import DiscreteTable
    prepared = datasource.load_prepared(XOR.as_dict)
    fit, assessed = split_rows(500, 0, "train")
    table = DiscreteTable.from_codes(prepared.X_codes[fit], prepared.y_codes[fit],
                                     variables=prepared.variables)
    direct = forest_local_importance(table, prepared.X_codes[assessed], n_estimators=40,
                                     max_features=1, random_state=0)
    np.testing.assert_array_equal(local.counts, direct.counts)
    np.testing.assert_array_equal(local.X, prepared.X_numeric[assessed])   # values shown
    # totally randomized multiway trees on XOR end every branch on X1 or X2
    it = interactions(local, min_share=0)
    joint = pd.DataFrame(it.joint, index=it.labels, columns=it.labels)
    noise = ["X3", "X4", "X5"]
    assert joint.loc[noise].to_numpy().sum() == 0 and joint[noise].to_numpy().sum() == 0
    # ... and every observation has both at its first two positions
    assert joint.loc["X1", "X2"] + joint.loc["X2", "X1"] == pytest.approx(1.0)
    out = draw.draw(store, _shown(page, min_share=0))
    assert all(out[f"{p}_message"] == "" for p in ("mosaic", "vii", "partial", "over"))
    assert "multiway forest of 40 trees" in out["summary"]


def test_multiway_forest_refuses_a_regression_target_and_dependence_offers_sklearn_only(page):
    with pytest.raises(ValueError, match="multiway forest classifies"):
        _compute(page, _diabetes(), _settings(page, 10, forest="multiway", n_estimators=5))
    import pages.dependence as dependence

    forest_param = dependence.PARAMS.params[0]
    assert forest_param.name == "forest"
    with pytest.raises(ValueError):
        forest_param.parse("multiway", Context())


def test_tile_rows_are_the_observations_of_the_tile(page):
    store = _store(page, XOR, _settings(page, forest="et", max_features=1))
    local, _ = forest.load_local(store["local"])
    it = interactions(local, min_share=0)
    r, c = np.unravel_index(np.argmax(it.joint), it.joint.shape)
    columns, rows, caption = draw.tile_rows(store, 0, it.labels[r], it.labels[c])
    assert len(rows) == round(it.joint[r, c] * it.n_pairs)
    assert caption.startswith(f"{len(rows):,} observation")
    assert {row["Position 1"] for row in rows} == {it.labels[r]}
    assert {row["Position 2"] for row in rows} == {it.labels[c]}
    assert [col["headerName"] for col in columns[1:6]] == list(local.variables)
    with pytest.raises(ValueError, match="click a tile again"):
        draw.tile_rows(store, 0, "nope", it.labels[c])


def test_tile_rows_name_categories_and_missing_values(page):
    from _pages import penguins_like

    data = DataChoice.from_params(upload_frame(penguins_like(), "p.csv"))  # no bill in 0-23
    store = _store(page, data, _settings(page, p=2))
    local, _ = forest.load_local(store["local"])
    it = interactions(local, min_share=0)
    listed = []
    for r, c in zip(*np.nonzero(it.joint)):
        listed += draw.tile_rows(store, 0, it.labels[r], it.labels[c])[1]
    assert listed and any(int(row["Row"]) < 24 for row in listed)
    # The island of data row r is the (r mod 3)-th name; a bill is missing exactly in rows 0-23.
    assert all(row["island"] == ("Biscoe", "Dream", "Torgersen")[int(row["Row"]) % 3]
               for row in listed)
    assert all((row["bill"] == "missing") == (int(row["Row"]) < 24) for row in listed)


def test_page_is_registered(dash_app):
    page = registered_page("pages.interactions")
    assert (page["path"], page["name"], page["order"]) == ("/interactions", "Interactions", 5)


# -- in the browser ------------------------------------------------------------------------
def _tiles(dash_duo):
    return [t for t in _figure(dash_duo, "inter-mosaic") if t["meta"] == "tile"]


_TILE_PAIRS = ("var g = document.querySelector('#inter-mosaic .js-plotly-plot');"
               "if (!g || !g.data) { return null; }"
               "var a = v => Array.from(v._inputArray || v), out = [];"
               "g.data.filter(t => t.meta === 'tile').forEach(t => a(t.y).forEach("
               "(y, i) => { if (y > 0) { var c = a(t.customdata)[i];"
               " out.push([c[0], c[1], c[2]]); } }));"
               "return out;")


def _tile_pairs(dash_duo):
    """``(first, second, joint share)`` of each drawn tile of the mosaic (its customdata)."""
    return [tuple(row) for row in dash_duo.driver.execute_script(_TILE_PAIRS) or []]


@pytest.mark.browser
def test_vii_and_over_labels_say_they_are_no_relevance_verdicts(dash_duo, dash_app):
    """Under VII and under the importance over labels, a sentence says what they measure
    and that the Importances page gives the relevance verdicts, with a link that opens it
    (issue #26: they ranked noise first and a leak last with no caveat)."""
    open_page(dash_duo, dash_app, "/interactions?" + XOR_URL)
    wait_for(lambda: _tiles(dash_duo), what="the mosaic")
    for caveat, graph in (("#inter-vii-caveat", "#inter-vii"),
                          ("#inter-over-caveat", "#inter-over")):
        text = dash_duo.find_element(caveat)
        assert text.is_displayed()
        assert "where the forest's trees put each variable" in text.text
        assert "no relevance verdict" in text.text and "Importances page" in text.text
        below = dash_duo.find_element(graph).rect   # under its figure, in the same card
        assert text.rect["y"] >= below["y"] + below["height"] - 1
    dash_duo.find_element("#inter-over-caveat a").click()
    dash_duo.wait_for_element("#imp-graph", timeout=20)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_interactions_page_loads_updates_and_lists_a_tile(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/interactions?" + XOR_URL)
    tiles = wait_for(lambda: _tiles(dash_duo), what="the mosaic")
    # uniform forest with every input a candidate: the XOR trees of this sample end on X1
    assert [t["name"] for t in tiles] == ["X2"] and tiles[0]["width"] == [1.0]
    dash_duo.wait_for_contains_text("#inter-summary", "random uniform forest of 50 trees",
                                    timeout=20)
    assert dash_duo.get_logs() == []

    # a control change refits.  Extra-trees without bootstrap and every input a candidate
    # grow 50 identical trees on binary inputs: no observation has a second position.
    dash_duo.find_element("#inter-forest input[value='et']").click()
    dash_duo.wait_for_contains_text("#inter-mosaic-msg", "No observation has a second",
                                    timeout=60)
    set_number(dash_duo, "#inter-k", 1)
    # K = 1 draws X1 or X2 at random: both come first for some observations
    tiles = wait_for(lambda: (lambda t: t if t and len(t[0]["width"]) >= 2 else None)(
        _tiles(dash_duo)), what="the K = 1 mosaic")
    assert sum(tiles[0]["width"]) == pytest.approx(1.0)
    assert "vi-hidden" in dash_duo.find_element("#inter-mosaic-msg").get_attribute("class")
    dash_duo.wait_for_contains_text("#inter-summary", "extra-trees of 50 trees (K = 1)",
                                    timeout=20)
    vii = wait_for(lambda: _figure(dash_duo, "inter-vii"))[0]["x"]
    assert sum(vii) == pytest.approx(2.0)            # every observation has two positions
    query = url_query(dash_duo)
    assert (query["forest"], query["K"], query["trees"]) == ("et", "1", "50")

    # varimp's multiway forest, K = 1: on noise-free XOR every branch ends on X1 or X2 (the
    # one of the two drawn second), so every observation pairs them at positions 1 and 2 and
    # both are in the mosaic, whatever the seed.  Which one comes first for an observation
    # is the forest's draw (by symmetry, X1 in half of the trees on average), so the test
    # reads the pairs, not which one heads the columns.
    dash_duo.find_element("#inter-forest input[value='multiway']").click()
    dash_duo.wait_for_contains_text("#inter-summary", "multiway forest of 50 trees (K = 1)",
                                    timeout=60)
    pairs = wait_for(lambda: _tile_pairs(dash_duo), what="the multiway mosaic")
    assert {(first, second) for first, second, _ in pairs} <= {("X1", "X2"), ("X2", "X1")}
    assert {name for first, second, _ in pairs for name in (first, second)} == {"X1", "X2"}
    assert sum(share for _, _, share in pairs) == pytest.approx(1.0)
    # each observation's 50 leaf parents are X1 or X2, each with chance 1/2 in a tree: all
    # 50 the same has chance 2 ** -49, so every observation has both positions
    both = re.search(r"([\d,]+) of ([\d,]+) observations have a variable at both",
                     dash_duo.find_element("#inter-summary").text)
    assert both and both.group(1) == both.group(2)
    dash_duo.find_element("#inter-forest input[value='et']").click()
    dash_duo.wait_for_contains_text("#inter-summary", "extra-trees of 50 trees (K = 1)",
                                    timeout=60)

    # clicking a tile lists its observations
    point = dash_duo.find_element("#inter-mosaic .bars .point path")
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(dash_duo.driver).move_to_element(point).click().perform()
    dash_duo.wait_for_contains_text("#inter-tile-caption", "at position 1", timeout=20)
    caption = dash_duo.find_element("#inter-tile-caption").text
    n = int(caption.split(" ")[0].replace(",", ""))
    assert n > 0
    until(lambda: len(grid_rows(dash_duo, "#inter-tile-table")) >= min(n, 10), 10)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_single_tree_and_regression_targets_get_sentences(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/interactions?" +
              XOR_URL.replace("trees=50", "trees=1"))
    dash_duo.wait_for_contains_text("#inter-mosaic-msg", "at least two trees", timeout=60)
    assert "vi-hidden" in dash_duo.find_element("#inter-mosaic-wrap").get_attribute("class")
    wait_for(lambda: _figure(dash_duo, "inter-partial")[0]["x"], what="the partial importance")
    assert dash_duo.get_logs() == []

    visit(dash_duo, "/interactions?problem=diabetes&forest=rf"
          "&trees=20&label=3")
    dash_duo.wait_for_contains_text("#inter-over-msg", "regression", timeout=60)
    assert "Traceback" not in dash_duo.find_element("#inter-over-msg").text
    assert "vi-hidden" in dash_duo.find_element("#inter-label-field").get_attribute("class")
    dash_duo.wait_for_contains_text("#inter-partial-wrap", "prediction >", timeout=20)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_constant_columns_and_no_held_out_rows(dash_duo, dash_app):
    data = _upload(_with_constant(seed=5))
    tiny = _upload(pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": [0, 1, 0], "y": [0, 1, 1]}))
    # the constant column is excluded (issue #26): the default forest draws its tiles
    open_page(dash_duo, dash_app, "/interactions?" + data.query())
    wait_for(lambda: _tiles(dash_duo), what="the tiles without the constant column")
    assert dash_duo.find_element("#inter-error").text == ""
    visit(dash_duo, "/interactions?forest=rf&rows=test&" +
          tiny.query())
    dash_duo.wait_for_contains_text("#inter-error", "no held-out rows", timeout=60)
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_an_out_of_range_value_is_a_sentence_and_nothing_is_recomputed(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/interactions?" + XOR_URL)
    tiles = wait_for(lambda: _tiles(dash_duo), what="the mosaic")
    dash_duo.wait_for_contains_text("#inter-summary", "random uniform forest of 50 trees",
                                    timeout=20)
    set_number(dash_duo, "#inter-trees", 5000)
    dash_duo.wait_for_contains_text(
        "#inter-trees-error", "Number of trees must be a whole number from 1 to 1,000, not 5,000",
        timeout=20)
    dash_duo.wait_for_contains_text("#inter-job-status", "Nothing was recomputed", timeout=10)
    assert _tiles(dash_duo) == tiles
    assert "random uniform forest of 50 trees" in dash_duo.find_element("#inter-summary").text
    assert url_query(dash_duo)["trees"] == "50"
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []


def test_tree_cap_follows_the_server_limit(page, monkeypatch):
    monkeypatch.setenv("VARIMP_MAX_TREES", "20")
    with pytest.raises(ValueError, match="1 to 20"):
        _settings(page, forest="rf", n_estimators=50)
    assert _settings(page, forest="rf", n_estimators=20)["n_estimators"] == 20
