"""The Interactions page: its callback logic as plain functions, then the page in Chromium."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _browser import figure as _figure
from _browser import open_page, set_number, url_query, visit, wait_for
from _pages import query_dict as _query
from _pages import constant_column_frame, registered_page, upload_frame

from pages._ui import cache, datasource
from pages._ui import interactions_logic as logic
from varimp_core.local.interactions import interactions, partial_importance
from varimp_core.local.importance import fit_uniform_forest, local_importance

XOR = {"source": "problem", "problem": "xor:irrelevant=3", "sampling": "sample", "n": 500,
       "seed": 0, "bins": 5}
XOR_URL = "problem=xor:relevant=2,irrelevant=3&sampling=sample&n=500&trees=50"


def _settings(**kw):
    return logic.forest_settings(**{"forest": "uniform", "trees": 30, **kw})


def _upload(df: pd.DataFrame) -> dict:
    return upload_frame(df, "t.csv")


def _with_constant(n=200, seed=0):
    return constant_column_frame("=cmd", 1.0, n, seed)


# -- state and URL --------------------------------------------------------------------
def test_defaults_and_the_exact_distribution_becomes_a_sample():
    st = logic.initial_state({})
    assert st["values"]["forest"] == "uniform" and st["values"]["trees"] == 100
    assert st["values"]["rows"] == "train" and st["values"]["other"] == logic.DEFAULT_MIN_SHARE
    assert st["data"]["sampling"] == "exact"                 # the user's choice is kept
    assert st["page_data"]["sampling"] == "sample"           # the page computes on a sample
    assert len(st["notes"]) == 1 and "exact distribution" in st["notes"][0]
    assert "1,000 rows" in st["notes"][0]                    # led's default sample size


def test_link_state_round_trips_and_bad_values_fall_back():
    st = logic.initial_state(_query(XOR_URL + "&forest=rf&K=2&tree_seed=4&rows=test&other=0.1"
                                    "&direction=below&threshold=1.5"))
    assert st["notes"] == []
    v = st["values"]
    assert (v["forest"], v["trees"], v["K"], v["tree_seed"], v["rows"], v["other"]) == \
        ("rf", 50, 2, 4, "test", 0.1)
    again = logic.initial_state(_query(st["query"]))
    assert again["values"] == v and again["query"] == st["query"]
    bad = logic.initial_state({"forest": "gbm", "trees": "0", "other": "0.9"})
    assert len(bad["notes"]) == 4                 # three values plus the exact-to-sample note
    assert bad["values"]["forest"] == "uniform" and bad["values"]["trees"] == 100


@pytest.mark.parametrize("kw,words", [
    ({"forest": "gbm"}, "Choose a forest"),
    ({"trees": 0}, "number of trees"),
    ({"trees": None}, "Enter the number of trees"),
    ({"trees": 2.5}, "whole number"),
    ({"K": 9, "p": 5}, "from 1 to 5"),
    ({"rows": "oob"}, "rows to assess"),
])
def test_forest_settings_refuse_bad_values_with_a_sentence(kw, words):
    with pytest.raises(ValueError, match=words):
        _settings(**kw)


def test_split_rows_holds_out_thirty_percent():
    fit, assessed = logic.split_rows(100, seed=3, rows="test")
    assert len(fit) == 70 and len(assessed) == 30 and not set(fit) & set(assessed)
    fit2, same = logic.split_rows(100, seed=3, rows="train")
    assert np.array_equal(fit, fit2) and np.array_equal(same, fit)
    with pytest.raises(ValueError, match="no held-out rows"):
        logic.split_rows(3, seed=0, rows="test")
    assert len(logic.split_rows(3, seed=0, rows="train")[1]) == 3


# -- computing ------------------------------------------------------------------------
def test_cached_local_importance_is_the_cores():
    settings = _settings()
    store = logic.compute(XOR, settings)
    assert store["task"] == "classification" and store["classes"] == ["0", "1"]
    assert (store["n"], store["n_fit"]) == (350, 350)
    d = cache.get_json(store["key"])
    local = logic.local_from_json(d)
    # the same forest, fitted directly on the same rows, gives the same counts
    prepared = datasource.load_prepared(XOR)
    fit, assessed = logic.split_rows(500, 0, "train")
    forest = fit_uniform_forest(prepared.X_numeric[fit], prepared.y[fit], n_estimators=30,
                                random_state=0)
    direct = local_importance(forest, prepared.X_numeric[assessed], variables=prepared.variables)
    np.testing.assert_array_equal(local.counts, direct.counts)
    np.testing.assert_array_equal(local.positions, direct.positions)
    np.testing.assert_array_equal(local.prediction, direct.prediction.astype(str))
    assert d["rows"] == assessed.tolist()
    # a second call reads the cache: nothing is fitted
    calls = []
    again = logic.compute(XOR, settings, progress=lambda *a: calls.append(a))
    assert again == store and calls == []


def test_draw_shows_the_cores_numbers():
    store = logic.compute(XOR, _settings(forest="et", K=1))
    out = logic.draw(store, logic.view_settings(other=0))
    assert all(out[f"{p}_message"] == "" for p in ("mosaic", "vii", "partial", "over"))
    local = logic.local_from_json(cache.get_json(store["key"]))
    it = interactions(local, min_share=0)
    widths = np.asarray([t for t in out["mosaic"].data][0].width)
    np.testing.assert_allclose(widths, it.joint.sum(axis=1)[it.joint.sum(axis=1) > 0])
    assert out["label"] == "0"                               # first class predicted
    expected = partial_importance(local, label="0")
    np.testing.assert_allclose(sorted(out["partial"].data[0].x), sorted(expected.shares))
    assert "350 of 350 observations" in out["summary"]


def test_a_single_tree_gets_a_sentence_and_the_other_parts_still_show():
    store = logic.compute(XOR, _settings(trees=1))
    out = logic.draw(store, logic.view_settings())
    assert "at least two trees" in out["mosaic_message"]
    assert "at least two trees" in out["vii_message"]
    assert out["partial_message"] == "" and out["over_message"] == ""
    assert "1 tree " in out["summary"]


def test_regression_target_for_the_class_only_view():
    data = logic.page_data({"source": "problem", "problem": "diabetes"})[0]
    store = logic.compute(data, _settings(forest="rf", trees=20, rows="test"))
    assert store["task"] == "regression" and store["classes"] is None
    assert store["median"] == pytest.approx(np.median(
        logic.local_from_json(cache.get_json(store["key"])).prediction))
    out = logic.draw(store, logic.view_settings(label="2", direction="below"))
    assert "regression" in out["over_message"] and "Traceback" not in out["over_message"]
    assert out["partial_message"] == "" and out["threshold"] == store["median"]
    assert "<=" in out["partial"].layout.title.text
    assert "held-out rows" in out["summary"]


def test_constant_columns_no_held_out_rows_and_csv_injection():
    data = _upload(_with_constant())
    with pytest.raises(ValueError, match="constant.*random forest or extra-trees"):
        logic.compute(data, _settings())
    store = logic.compute(data, _settings(forest="rf"))        # RF accepts constant columns
    tiny = _upload(pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0, 1, 0], "y": [0, 1, 1]}))
    with pytest.raises(ValueError, match="no held-out rows"):
        logic.compute(tiny, _settings(forest="rf", rows="test"))
    text = logic.variables_csv(store)
    assert "\n'=cmd," in text and "\n=cmd" not in text
    pairs = logic.pairs_csv(store, 0.0)
    assert "'=cmd" in pairs
    assert logic.csv_filename(store, "pairs") == "varimp-interactions-t-rf-pairs.csv"


def test_multiway_forest_is_the_cores_and_pairs_x1_x2():
    settings = _settings(forest="multiway", trees=40, K=1)
    store = logic.compute(XOR, settings)
    assert store["task"] == "classification" and store["classes"] == ["0", "1"]
    local = logic.local_from_json(cache.get_json(store["key"]))
    # the same forest grown by the core on the same coded rows gives the same counts
    from varimp_core.local.multiway import forest_local_importance
    from varimp_core.data.table import DiscreteTable
    prepared = datasource.load_prepared(XOR)
    fit, assessed = logic.split_rows(500, 0, "train")
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
    out = logic.draw(store, logic.view_settings(other=0))
    assert all(out[f"{p}_message"] == "" for p in ("mosaic", "vii", "partial", "over"))
    assert "multiway forest of 40 trees" in out["summary"]


def test_multiway_forest_refuses_a_regression_target_and_dependence_offers_sklearn_only():
    data = logic.page_data({"source": "problem", "problem": "diabetes"})[0]
    with pytest.raises(ValueError, match="multiway forest classifies"):
        logic.compute(data, _settings(forest="multiway", trees=5))
    with pytest.raises(ValueError, match="Choose a forest"):
        logic.forest_settings(forest="multiway", trees=5, kinds=logic.SKLEARN_KINDS)
    from pages._ui import dependence_logic
    forest_param = dependence_logic.PARAMS[0]
    assert forest_param.name == "forest"
    with pytest.raises(ValueError):
        forest_param.parse("multiway")


def test_tile_rows_are_the_observations_of_the_tile():
    store = logic.compute(XOR, _settings(forest="et", K=1))
    local = logic.local_from_json(cache.get_json(store["key"]))
    it = interactions(local, min_share=0)
    r, c = np.unravel_index(np.argmax(it.joint), it.joint.shape)
    columns, rows, caption = logic.tile_rows(store, 0, it.labels[r], it.labels[c])
    assert len(rows) == round(it.joint[r, c] * it.n_pairs)
    assert caption.startswith(f"{len(rows):,} observation")
    assert {row["first"] for row in rows} == {it.labels[r]}
    assert {row["second"] for row in rows} == {it.labels[c]}
    assert [col["name"] for col in columns[1:6]] == list(local.variables)
    with pytest.raises(ValueError, match="click a tile again"):
        logic.tile_rows(store, 0, "nope", it.labels[c])


def test_page_is_registered(dash_app):
    page = registered_page("pages.interactions")
    assert (page["path"], page["name"], page["order"]) == ("/interactions", "Interactions", 5)


# -- in the browser ------------------------------------------------------------------------
def _tiles(dash_duo):
    return [t for t in _figure(dash_duo, "inter-mosaic") if t["meta"] == "tile"]


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

    # varimp's multiway forest, K = 1: every branch ends on X1 or X2, both in the mosaic
    dash_duo.find_element("#inter-forest input[value='multiway']").click()
    dash_duo.wait_for_contains_text("#inter-summary", "multiway forest of 50 trees (K = 1)",
                                    timeout=60)
    tiles = wait_for(lambda: _tiles(dash_duo), what="the multiway mosaic")
    assert {t["name"] for t in tiles} == {"X1", "X2"}
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
    assert len(dash_duo.find_elements("#inter-tile-table tbody tr")) >= min(n, 10)
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
    open_page(dash_duo, dash_app, "/interactions?" + datasource.data_query(data))
    dash_duo.wait_for_contains_text("#inter-error", "'const' is constant", timeout=60)
    assert "Traceback" not in dash_duo.find_element("#inter-error").text
    dash_duo.wait_for_contains_text("#inter-mosaic", "see the message above", timeout=20)
    visit(dash_duo, "/interactions?forest=rf&rows=test&" +
          datasource.data_query(tiny))
    dash_duo.wait_for_contains_text("#inter-error", "no held-out rows", timeout=60)
    assert dash_duo.get_logs() == []


def test_tree_cap_follows_the_server_limit(monkeypatch):
    from pages._ui import interactions_logic as ilogic

    monkeypatch.setenv("VARIMP_MAX_TREES", "20")
    with pytest.raises(ValueError, match="1 to 20"):
        ilogic.forest_settings(forest="rf", trees=50)
    assert ilogic.forest_settings(forest="rf", trees=20)["trees"] == 20
