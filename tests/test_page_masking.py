"""The Masking page: its callback logic as plain functions, then the page in Chromium."""

from __future__ import annotations

import math

import pytest
from _browser import open_link_with_note, open_page, url_query, wait_for
from _pages import query_dict as _query
from _pages import registered_page
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from pages._ui import masking_logic as logic

EQN3_X1 = 0.412   # Louppe et al. (2013), Table 2, Eqn 3 column (truncated)


# -- state and URL ----------------------------------------------------------------
def test_default_state_is_the_led():
    s, notes = logic.initial_state({})
    assert notes == []
    assert (s["base"], s["irrelevant"], s["copy"], s["axis"], s["semantics"]) == \
        ("led", 0, None, "K", "id3")


def test_link_state_round_trips_through_the_url():
    s, notes = logic.initial_state({"problem": "led:irrelevant=3,noise=0.1", "copy": "x5",
                                    "flip": "0.2", "semantics": "sklearn", "axis": "depth",
                                    "K": "4", "sampled": "1", "trees": "50",
                                    "tree_seed": "7"})
    assert notes == []
    assert (s["base"], s["irrelevant"], s["copy"], s["flip"]) == ("led:noise=0.1", 3, "X5", 0.2)
    query = logic.page_query(logic.settings_from_state(s), sampled=s["sampled"],
                             trees=s["trees"], forest_seed=s["forest_seed"], k=s["k"],
                             depth=s["depth"])
    again, notes = logic.initial_state(_query(query))
    assert notes == [] and again == s


def test_the_session_problem_is_the_default_when_the_url_has_none():
    vi_data = {"params": {"source": "problem", "problem": "xor:irrelevant=2,relevant=3"}}
    s, notes = logic.initial_state({}, vi_data)
    assert (s["base"], s["irrelevant"], notes) == ("xor:relevant=3", 2, [])
    # a problem in the URL wins over the session's
    s, _ = logic.initial_state({"problem": "sym"}, vi_data)
    assert s["base"] == "sym"


@pytest.mark.parametrize("query,vi_data,words", [
    ({"problem": "madelon"}, None, "LED, XOR or SYM"),
    ({"problem": "led:irrelevant=9"}, None, "at most 6 irrelevant"),
    ({"problem": "nope"}, None, "Unknown problem"),
    ({"source": "upload", "upload": "a" * 64}, None, "uploaded table"),
    ({}, {"params": {"source": "upload", "upload": "a" * 64}}, "uploaded table"),
    ({"problem": "xor", "copy": "X5"}, None, "noisy copy of X5 was ignored"),
    ({"flip": "0.9"}, None, "copy noise"),
    ({"axis": "sideways"}, None, "x axis"),
])
def test_bad_links_fall_back_with_a_sentence(query, vi_data, words):
    s, notes = logic.initial_state(query, vi_data)
    assert len(notes) == 1 and words in notes[0], notes
    assert s["base"] in ("led", "xor")


def test_k_and_depth_are_clamped_to_the_inputs():
    s, _ = logic.initial_state({"problem": "xor", "K": "9", "depth": "5", "axis": "depth"})
    assert s["k"] == 2 and s["depth"] is None


def test_settings_from_controls_validates():
    ok = dict(base="led", irrelevant=2, copy="none", flip=0.1, semantics="id3", axis="K",
              k=3, depth="full")
    s = logic.settings_from_controls(**ok)
    assert s == {"base": "led", "irrelevant": 2, "copy": None, "flip": None,
                 "semantics": "id3", "axis": "K", "k": None, "depth": None}
    for bad, words in [({"irrelevant": 7}, "irrelevant"), ({"copy": "X9"}, "no variable"),
                       ({"flip": 0.7}, "copy noise"), ({"semantics": "x"}, "semantics"),
                       ({"base": "iris"}, "LED, XOR or SYM"), ({"irrelevant": 1.5}, "whole")]:
        with pytest.raises(ValueError, match=words):
            logic.settings_from_controls(**{**ok, **bad})


def test_query_from_controls_keeps_the_unused_k_and_depth():
    q = logic.query_from_controls(dict(base="led", irrelevant=1, copy="X2", flip=0.3,
                                       semantics="id3", axis="K", k=4, depth=3),
                                  sampled=["on"], trees=10, forest_seed=2)
    assert _query(q) == {"problem": "led:irrelevant=1", "copy": "X2", "flip": "0.3", "K": "4",
                         "depth": "3", "sampled": "1", "trees": "10", "tree_seed": "2"}
    assert logic.query_from_controls(dict(base="led", irrelevant=9, copy=None, flip=0,
                                          semantics="id3", axis="K", k=1, depth=None),
                                     sampled=[], trees=1, forest_seed=0) is None


# -- computing -----------------------------------------------------------------------
def _settings(**kw):
    base = dict(base="led", irrelevant=0, copy=None, flip=0.1, semantics="id3", axis="K",
                k=1, depth=None)
    return logic.settings_from_controls(**{**base, **kw})


def test_compute_exact_gives_table2_and_theorem2():
    view = logic.compute_exact(_settings())
    df, _ = logic.frames(view)
    k1 = df[df.K == 1].set_index("variable")["importance"]
    assert math.floor(k1["X1"] * 1000) / 1000 == EQN3_X1
    assert df.groupby("K").importance.sum().to_numpy() == pytest.approx(math.log2(10))
    text = " ".join(logic.summary_sentences(view))
    assert "3.3219 bits at every K (Theorem 2)" in text
    assert "X4 > X3" in text and "X3 > X4" in text        # Table 2: the order changes


def test_compute_exact_is_cached():
    s = _settings(irrelevant=1)
    first = logic.compute_exact(s)
    calls = []
    second = logic.compute_exact(s, progress=lambda *a: calls.append(a))
    assert first == second
    assert calls == [(1, 1, "")]      # no recursion ran: only the final tick


def test_noisy_copy_is_placed_after_the_relevant_variables_and_masked():
    view = logic.compute_exact(_settings(irrelevant=1, copy="X5", flip=0.1))
    assert view["variables"] == ["X1", "X2", "X3", "X4", "X5", "X6", "X7", "X5'", "X8"]
    assert view["copy_name"] == "X5'"
    df, _ = logic.frames(view)
    at_p = df[(df.K == 9) & (df.variable == "X5'")].importance.iloc[0]
    assert at_p == pytest.approx(0.0, abs=1e-12)
    assert "masked by X5" in " ".join(logic.summary_sentences(view))


def test_depth_view():
    view = logic.compute_exact(_settings(base="xor", axis="depth", k=1))
    df, _ = logic.frames(view)
    assert list(df.columns) == ["variable", "depth", "importance", "rank"]
    assert df[df.depth == 1].importance.abs().max() < 1e-12    # XOR: useless alone


def test_over_budget_settings_raise_a_sentence():
    with pytest.raises(ValueError, match="exact method"):
        logic.compute_exact(_settings(base="led:noise=0.1", irrelevant=6))


def test_sampled_points_belong_to_their_settings():
    s = _settings(irrelevant=1)
    exact = logic.compute_exact(s)
    sampled = logic.compute_sampled(s, trees=5, forest_seed=1)
    df, ds = logic.frames(exact, sampled)
    assert ds is not None and set(ds.K) == set(df.K)
    other = logic.compute_exact(_settings(irrelevant=2))
    assert logic.frames(other, sampled)[1] is None          # stale points are not drawn
    with pytest.raises(ValueError, match="number of trees"):
        logic.compute_sampled(s, trees=logic.MAX_TREES + 1, forest_seed=0)


def test_problem_controls_keep_a_valid_copy():
    options, value, text = logic.problem_controls("xor", "X2")
    assert [o["value"] for o in options] == ["none", "X1", "X2"] and value == "X2"
    assert logic.problem_controls("xor", "X5")[1] == "none"
    assert "XOR" in text


def test_page_is_registered(dash_app):
    page = registered_page("pages.masking")
    assert (page["path"], page["name"], page["order"]) == ("/masking", "Masking", 3)


# -- in the browser ----------------------------------------------------------------------
_EXACT = ("var g = document.querySelector('#masking-lines .js-plotly-plot');"
          "if (!g || !g.data) { return null; }"
          "var out = {}; g.data.filter(t => t.meta === arguments[0])"
          ".forEach(t => { out[t.name] = Array.from(t.y); }); return out;")


def _lines(dash_duo, meta="exact"):
    return dash_duo.driver.execute_script(_EXACT, meta) or {}


@pytest.mark.browser
def test_masking_page_loads_and_theorem5_holds_when_the_slider_moves(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/masking?problem=led")
    before = wait_for(lambda: (lambda d: d if len(d) == 7 else None)(_lines(dash_duo)))
    assert math.floor(before["X1"][0] * 1000) / 1000 == EQN3_X1
    dash_duo.wait_for_contains_text("#masking-summary", "Theorem 2", timeout=10)
    assert dash_duo.get_logs() == []

    thumb = dash_duo.find_element("#masking-irrelevant [role=slider]")
    ActionChains(dash_duo.driver).click(thumb).send_keys(Keys.ARROW_RIGHT) \
        .send_keys(Keys.ARROW_RIGHT).perform()
    after = wait_for(lambda: (lambda d: d if len(d) == 9 else None)(_lines(dash_duo)),
                     what="the figure with two irrelevant variables")
    for v in [f"X{j}" for j in range(1, 8)]:
        assert after[v][0] == pytest.approx(before[v][0], abs=1e-12)   # K = 1: Theorem 5
    assert abs(after["X1"][1] - before["X1"][1]) > 1e-3                 # K = 2: changes
    assert max(abs(after["X8"][0]), abs(after["X9"][0])) < 1e-12        # Theorem 3
    query = url_query(dash_duo)
    assert query["problem"] == "led:irrelevant=2"
    assert dash_duo.get_logs() == []

    # another problem keeps the irrelevant bits; XOR's K = 1 values are 1/2 (Eqn 3)
    dash_duo.select_dcc_dropdown("#masking-problem", value="XOR of 2 bits")
    xor = wait_for(lambda: (lambda d: d if set(d) == {"X1", "X2", "X3", "X4"} else None)(
        _lines(dash_duo)), what="the XOR figure")
    assert xor["X1"][0] == pytest.approx(0.5, abs=1e-12)
    assert url_query(dash_duo)["problem"] == "xor:irrelevant=2"
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_sampled_points_depth_view_and_bad_link(dash_duo, dash_app):
    open_link_with_note(dash_duo, dash_app, "/masking?problem=xor:irrelevant=1&copy=X9",
                        "#masking-link-notes", "noisy copy of X9 was ignored")
    wait_for(lambda: len(_lines(dash_duo)) == 3)
    dash_duo.find_element("#masking-sampled input[type=checkbox]").click()
    sampled = wait_for(lambda: _lines(dash_duo, "sampled"), what="the sampled points")
    assert set(sampled) == {"X1 (sampled)", "X2 (sampled)", "X3 (sampled)"}
    dash_duo.wait_for_contains_text(f"#{logic.PREFIX}-trees-job-status", "trees per K",
                                    timeout=30)
    assert "sampled=1" in dash_duo.driver.current_url

    dash_duo.find_element("#masking-axis input[value='depth']").click()
    wait_for(lambda: "depth" in dash_duo.driver.execute_script(
        "return document.querySelector('#masking-lines .js-plotly-plot')"
        ".layout.xaxis.title.text"), what="the depth axis")
    depth = _lines(dash_duo)
    assert depth["X1"][0] == pytest.approx(0.0, abs=1e-12)              # XOR: useless alone
    assert "axis=depth" in dash_duo.driver.current_url
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_over_budget_settings_show_a_sentence(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/masking?problem=led:irrelevant=6,noise=0.1")
    dash_duo.wait_for_contains_text("#masking-error", "exact method", timeout=30)
    assert "Traceback" not in dash_duo.find_element("#masking-error").text
    assert dash_duo.get_logs() == []
