"""The Masking page: its parameters, computing and rendering, then the page in Chromium."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import dash
import numpy as np
import pandas as pd
import pytest
from dash.testing.wait import until
from _browser import open_link_with_note, open_page, set_number, url_query, visit, wait_for
from _pages import query_dict as _query
from _pages import registered_page
from _pages import page_module
from _tables import TABLE2, TABLE2_EQN3
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from pages._framework.datachoice import DataChoice
from pages._server.jobs import Progress, failure_message
from pages._framework.params import Context
from varimp_core.serialize import from_jsonable
from varimp_core.studies.masking import MaskingCurves

study = page_module("masking")

EQN3_X1 = 0.412   # Louppe et al. (2013), Table 2, Eqn 3 column (truncated)


@pytest.fixture(scope="module")
def page(app_module):
    import pages.masking as module

    return module


def _values(**kw):
    """Control values by parameter name, as the browser sends them."""
    base = dict(problem="led", irrelevant=0, copy="none", flip=0.1, k_semantics="id3",
                method="exact",
                axis="K", max_features=1, max_depth="full", sampled=[], n_estimators=200,
                random_state=0)
    return {**base, **kw}


def _settings(page, **kw):
    return page.PARAMS.settings(_values(**kw), Context())


def _store(params=None):
    """The page's data store of a data choice (default: the built-in default, not an upload)."""
    return DataChoice.from_params(params or {}).to_store()


def _exact(page, **kw):
    return page.compute_exact(_settings(page, **kw), None, Progress(None))


# -- state and URL ----------------------------------------------------------------
def test_default_state_is_the_led(page):
    values, notes = page.initial_values({})
    assert notes == []
    assert (values["problem"], values["irrelevant"], values["copy"], values["axis"],
            values["k_semantics"]) == ("led", 0, study.NO_COPY, "K", "id3")


def test_link_state_round_trips_through_the_url(page):
    values, notes = page.initial_values({"problem": "led:irrelevant=3,noise=0.1", "copy": "x5",
                                         "flip": "0.2", "semantics": "sklearn", "axis": "depth",
                                         "K": "4", "sampled": "1", "trees": "50",
                                         "tree_seed": "7"})
    assert notes == []
    assert (values["problem"], values["irrelevant"], values["copy"], values["flip"]) == \
        ("led:noise=0.1", 3, "X5", 0.2)
    again, notes = page.initial_values(_query(page.page_query(values)))
    assert notes == [] and again == values


def test_a_typed_irrelevant_key_is_read_or_answered_with_a_sentence(page):
    """The slider's own key in a hand-typed link: its bits are used; a bad value or one the
    problem's own bits override is ignored with a sentence, never silently."""
    values, notes = page.initial_values({"problem": "led", "irrelevant": "5"})
    assert (values["problem"], values["irrelevant"], notes) == ("led", 5, [])
    values, notes = page.initial_values({"problem": "led", "irrelevant": "9"})
    assert (values["problem"], values["irrelevant"]) == ("led", 0)
    assert notes == ["Number of irrelevant variables must be a whole number from 0 to 6, not 9. "
                     "The link's irrelevant variables were ignored."]
    values, notes = page.initial_values({"problem": "led:irrelevant=4", "irrelevant": "2"})
    assert values["irrelevant"] == 4
    assert notes == ["The problem names 4 irrelevant variables; the link's irrelevant=2 was "
                     "ignored."]
    values, notes = page.initial_values({"problem": "led:irrelevant=4", "irrelevant": "4"})
    assert (values["irrelevant"], notes) == (4, [])


def test_the_session_problem_is_the_default_when_the_url_has_none(page):
    vi_data = {"params": {"source": "problem", "problem": "xor:irrelevant=2,relevant=3"}}
    values, notes = page.initial_values({}, vi_data)
    assert (values["problem"], values["irrelevant"], notes) == ("xor:relevant=3", 2, [])
    # a problem in the URL wins over the session's
    values, _ = page.initial_values({"problem": "sym"}, vi_data)
    assert values["problem"] == "sym"


@pytest.mark.parametrize("query,vi_data,words", [
    ({"problem": "madelon"}, None, "LED, XOR or SYM"),
    ({"problem": "led:irrelevant=9"}, None, "at most 6 irrelevant"),
    ({"problem": "nope"}, None, "Unknown problem"),
    ({"problem": "upload"}, None, "not an uploaded table"),
    ({"problem": "xor", "copy": "X5"}, None, "noisy copy of X5 was ignored"),
    ({"flip": "0.9"}, None, "copy noise"),
    ({"axis": "sideways"}, None, "x axis"),
])
def test_bad_links_fall_back_with_a_sentence(page, query, vi_data, words):
    values, notes = page.initial_values(query, vi_data)
    assert len(notes) == 1 and words in notes[0], notes
    assert values["problem"] in ("led", "xor")


def test_k_and_depth_beyond_the_inputs_are_notes_not_clamps(page):
    values, notes = page.initial_values({"problem": "xor", "K": "9", "depth": "5",
                                         "axis": "depth"})
    assert values["max_features"] <= 2 and values["max_depth"] == "full"
    assert len(notes) == 2 and "K must be a whole number from 1 to 2, not 9" in notes[0]


def test_settings_from_controls_validates(page):
    ok = _values(irrelevant=2, max_features=3)
    # No copy: no copy noise; against K: no K of the depth view.
    assert page.PARAMS.settings(ok, Context()) == {
        "problem": "led", "irrelevant": 2, "copy": "none", "k_semantics": "id3", "axis": "K",
        "max_depth": "full", "method": "exact"}
    for bad, words in [({"irrelevant": 7}, "irrelevant"), ({"copy": "X9"}, "no variable"),
                       ({"flip": 0.7, "copy": "X1"}, "(?i)copy noise"),
                       ({"k_semantics": "x"}, "semantics"),
                       ({"problem": "iris"}, "LED, XOR, SYM or gauss"),
                       ({"method": "exact-gb"}, "(?i)method"),
                       ({"irrelevant": 1.5}, "whole"),
                       ({"axis": "depth", "max_features": 10}, "from 1 to 9")]:
        settings, errors = page.PARAMS.validate({**ok, **bad})
        assert settings == {} and len(errors) == 1
        assert pd.Series(list(errors.values())).str.contains(words).all(), errors


def test_page_query_keeps_the_unused_k_and_depth(page):
    q = page.page_query(_values(problem="led", irrelevant=1, copy="X2", flip=0.3, axis="K",
                                max_features=4, max_depth=3, sampled=["on"], n_estimators=10,
                                random_state=2))
    assert _query(q) == {"problem": "led:irrelevant=1", "copy": "X2", "flip": "0.3", "K": "4",
                         "depth": "3", "sampled": "1", "trees": "10", "tree_seed": "2"}
    assert page.page_query(_values(irrelevant=9)) is None


def test_out_of_range_trees_are_a_sentence_never_a_default(page):
    for trees in (0, -7, page.MAX_TREES + 1, 10**8):
        _, errors = page.SAMPLED.validate(_values(sampled=["on"], n_estimators=trees),
                                          Context())
        assert errors["n_estimators"].startswith(
            "Number of trees must be a whole number from 1 to 2,000, not ")
    _, errors = page.SAMPLED.validate(_values(sampled=[], n_estimators=0), Context())
    assert errors == {}   # trees do not apply without the finite forests


# -- computing -----------------------------------------------------------------------
def test_compute_exact_gives_table2_and_theorem2(page):
    out = _exact(page)
    df = MaskingCurves.from_dict(out).frame
    k1 = df[df.K == 1].set_index("variable")["importance"]
    assert math.floor(k1["X1"] * 1000) / 1000 == EQN3_X1
    assert df.groupby("K").importance.sum().to_numpy() == pytest.approx(math.log2(10))
    text = " ".join(p.children for p in study.summary(out, _settings(page)))
    assert "3.3219 bits at every K (Theorem 2)" in text
    assert "X4 > X3" in text and "X3 > X4" in text        # Table 2: the order changes


def _gauss_entropy():
    """H(Y) of gauss's rows: its inputs are distinct, so fully grown trees sum to it."""
    from varimp_core.api import load_data

    q = np.bincount(load_data(problem="gauss").y) / 30
    return float(-(q * np.log2(q)).sum())


@pytest.mark.parametrize("method", ["exact-rf", "exact-et"])
def test_numeric_problem_draws_the_binary_forests_curves(page, method):
    df = MaskingCurves.from_dict(_exact(page, problem="gauss", method=method)).frame
    assert sorted(df.K.unique()) == [1, 2] and set(df.variable) == {"X1", "X2"}
    assert df.groupby("K").importance.sum().to_numpy() == pytest.approx(_gauss_entropy(),
                                                                        abs=1e-12)
    with pytest.raises(ValueError, match="choose exact-rf or exact-et"):
        _exact(page, problem="gauss")
    with pytest.raises(ValueError, match=r"\(exact-et\) would need about .* on these 200 rows"):
        _exact(page, problem="gauss:samples=200", method="exact-et")


def test_gauss_opens_on_exact_rf_not_on_an_error(page):
    """gauss's inputs are continuous: only the binary forests take them (issue #26), so a
    link without a method, or asking the multiway ``exact``, gets exact-rf; other problems
    and an explicit binary method keep theirs."""
    values, notes = page.initial_values({"problem": "gauss"})
    assert values["method"] == "exact-rf" and notes == []
    values, notes = page.initial_values({"problem": "gauss:samples=20", "method": "exact"})
    assert values["method"] == "exact-rf"
    assert any("only exact-rf and exact-et" in n for n in notes), notes
    assert page.initial_values({"problem": "gauss", "method": "exact-et"})[0]["method"] == \
        "exact-et"
    assert page.initial_values({"problem": "led"})[0]["method"] == "exact"
    # The dropdown: switching to gauss moves exact to exact-rf, and nothing else.
    assert page.method_for_problem("gauss", "exact") == "exact-rf"
    assert page.method_for_problem("gauss", "exact-et") is dash.no_update
    assert page.method_for_problem("xor", "exact") is dash.no_update
    # The curves of the values it opens on: K = 1 and 2 sum to H(Y) (fully grown trees).
    df = MaskingCurves.from_dict(page.compute_exact(
        page.PARAMS.settings(_values(problem="gauss", method=values["method"]), Context()),
        None, Progress(None))).frame
    assert df.groupby("K").importance.sum().to_numpy() == pytest.approx(_gauss_entropy(),
                                                                        abs=1e-12)


def test_compute_exact_is_cached(page):
    first = page.EXACT.run(_values(irrelevant=1), _store())[0]
    calls = []
    second = page.EXACT.run(_values(irrelevant=1), _store(),
                            progress=lambda *a: calls.append(a))[0]
    assert first == second
    assert calls == []      # no recursion ran: the result came from the cache


def test_noisy_copy_is_placed_after_the_relevant_variables_and_masked(page):
    out = _exact(page, irrelevant=1, copy="X5", flip=0.1)
    assert MaskingCurves.from_dict(out).variables == (
        "X1", "X2", "X3", "X4", "X5", "X6", "X7", "X5'", "X8")
    assert out["copy_name"] == "X5'"
    df = MaskingCurves.from_dict(out).frame
    at_p = df[(df.K == 9) & (df.variable == "X5'")].importance.iloc[0]
    assert at_p == pytest.approx(0.0, abs=1e-12)
    settings = _settings(page, irrelevant=1, copy="X5", flip=0.1)
    text = " ".join(p.children for p in study.summary(out, settings))
    assert "masked by X5" in text and "> X5' = X8 (0 bits) at K=9" in text


def test_the_table2_preset_shows_the_paper_beside_our_values(page):
    out = _exact(page)
    columns, rows, note = study.table(out, _settings(page))
    assert [c["name"] for c in columns[:4]] == [["", "Variable"], ["Eqn 3", "ours"],
                                                ["Eqn 3", "paper"], ["Eqn 3", "ours \u2212 paper"]]
    assert [r["variable"] for r in rows] == [f"X{j}" for j in range(1, 8)] + ["Sum"]
    for k in range(1, 8):
        assert [r[f"K = {k} (paper)"] for r in rows[:7]] == TABLE2[k]
        assert rows[7][f"K = {k}"] == pytest.approx(math.log2(10))      # Theorem 2
    assert [r["Eqn 3 (paper)"] for r in rows[:7]] == TABLE2_EQN3
    assert "sampling error" in note[0].children
    # Other settings: our values alone, and the sentence saying why.
    columns, rows, note = study.table(_exact(page, irrelevant=1), _settings(page, irrelevant=1))
    assert [c["name"] for c in columns] == ["Variable", *(f"K = {k}" for k in range(1, 9))]
    assert "1 irrelevant variables are added" in note[0].children


def test_downloads_read_the_cache_and_check_the_values(page):
    values = _values(problem="xor", irrelevant=1)
    page.EXACT.run(values, _store())
    table, note = page.EXACT.download(study.EXACT_CSV["masking-download-table"], values, _store())
    assert note == "" and table["filename"] == "varimp-masking-xor-irrelevant-1-table.csv"
    rows = list(csv.DictReader(io.StringIO(table["content"])))
    # Eqn 3 for XOR with one irrelevant bit: 1/2, 1/2, 0; Theorem 2: the sum is 1 bit.
    assert [float(r["K = 1"]) for r in rows] == pytest.approx([0.5, 0.5, 0.0, 1.0], abs=1e-12)
    figures, _ = page.EXACT.download(study.EXACT_CSV["masking-download-figures"], values, _store())
    assert figures["content"].startswith("variable,K,importance,rank,reference_importance,change")
    # A value out of bounds is a sentence; settings nobody computed are not computed here.
    sent, note = page.EXACT.download(study.EXACT_CSV["masking-download-table"],
                                     {**values, "irrelevant": 99}, _store())
    assert sent is dash.no_update and "irrelevant" in note
    sent, note = page.EXACT.download(study.EXACT_CSV["masking-download-table"],
                                     _values(problem="xor:relevant=3", irrelevant=5,
                                             copy="X2", flip=0.35), _store())
    assert sent is dash.no_update and "not in the server's cache" in note


def test_depth_view(page):
    df = MaskingCurves.from_dict(_exact(page, problem="xor", axis="depth", max_features=1)).frame
    assert list(df.columns) == ["variable", "depth", "importance", "rank"]
    assert df[df.depth == 1].importance.abs().max() < 1e-12    # XOR: useless alone


def test_over_budget_settings_raise_a_sentence(page):
    with pytest.raises(ValueError, match="exact method"):
        _exact(page, problem="led:noise=0.1", irrelevant=6)


def test_sampled_points_belong_to_their_settings(page):
    data = DataChoice.from_params({})             # the session's data: not an upload
    exact = _settings(page, irrelevant=1)
    on = {"sampled": True, "n_estimators": 5, "random_state": 1}
    out = page.compute_sampled(on, data, Progress(None), exact=exact)
    df, ds = MaskingCurves.from_dict(out["exact"]).frame, from_jsonable(out["sampled"])
    assert set(ds.K) == set(df.K) and set(ds.variable) == set(df.variable)
    assert "5 trees per K" in out["note"]
    depth = page.compute_sampled(on, data, Progress(None), exact=_settings(page, axis="depth"))
    assert "exact" not in depth and "against K" in depth["note"]
    off = page.compute_sampled({"sampled": False}, data, Progress(None), exact=exact)
    assert off["sampled"] is None and off["exact"] == out["exact"]


def test_problem_controls_keep_a_valid_copy(page):
    out = page.fit_controls("xor", 0, "X2", "K", 1, "full")
    assert [o["value"] for o in out[0]] == ["none", "X1", "X2"] and out[1] == "X2"
    assert page.fit_controls("xor", 0, "X5", "K", 1, "full")[1] == "none"
    assert "XOR" in out[2]
    # K and depth follow p = 3 (XOR and its copy).
    assert out[3] == 3 and out[5] == 1 and [o["value"] for o in out[6]] == ["full", 1, 2]


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
    dash_duo.wait_for_contains_text("#masking-forests-note", "trees per K", timeout=30)
    assert "sampled=1" in dash_duo.driver.current_url

    # Too many trees is a sentence beside the control; nothing runs and the points stay.
    set_number(dash_duo, "#masking-trees", 5000)
    dash_duo.wait_for_contains_text(
        "#masking-trees-error", "Number of trees must be a whole number from 1 to 2,000",
        timeout=20)
    dash_duo.wait_for_contains_text("#masking-forests-job-status", "Nothing was recomputed",
                                    timeout=10)
    assert _lines(dash_duo, "sampled") == sampled
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    set_number(dash_duo, "#masking-trees", 200)
    dash_duo.wait_for_text_to_equal("#masking-trees-error", "", timeout=20)

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


@pytest.mark.browser
def test_table2_preset_lands_on_the_table(dash_duo, dash_app):
    """The home page's Table 2 demo opens the Masking page scrolled to the table (below
    three figures), under the sticky header, and the table is drawn there."""
    from pages._framework.lessons import TEACH

    (href,) = [h for title, _, h in TEACH if title.startswith("Table 2")]
    assert href == "/masking?problem=led#table2"
    driver = dash_duo.driver
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    open_page(dash_duo, dash_app, "/")
    dash_duo.find_element("#home-demo-0").click()
    dash_duo.wait_for_contains_text("#masking-table", "K = 7", timeout=60)
    where = ("const t = document.getElementById('table2').getBoundingClientRect();"
             "const bar = document.querySelector('.vi-topbar').getBoundingClientRect();"
             "return [t.top, t.bottom, bar.bottom, window.innerHeight, window.scrollY];")

    def in_view(top, bottom, bar, height, scrolled):
        """Scrolled down to the card: its top below the header, and all of it in the
        window, or its top right under the header (a table taller than the window)."""
        return scrolled > 0 and bar <= top and (bottom <= height or top <= bar + 40)

    wait_for(lambda: in_view(*driver.execute_script(where)), 60, "the table in the window")
    assert in_view(*driver.execute_script(where)), driver.execute_script(where)
    assert dash_duo.find_element("#masking-table").is_displayed()
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_table2_preset_renders_the_table_and_downloads_it(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/masking?problem=led#table2")
    dash_duo.wait_for_contains_text("#masking-table", "K = 7", timeout=60)
    dash_duo.wait_for_contains_text("#masking-table-note", "sampling error", timeout=10)
    cells = dash_duo.driver.execute_script(
        "return Array.from(document.querySelectorAll('#masking-table .ag-center-cols-container"
        " .ag-row[row-index=\"0\"] .ag-cell')).map(td => td.innerText.trim());")
    # Row X1: the variable, then ours, the paper's and the difference for each column.
    assert cells[0] == "X1" and cells[2] == f"{TABLE2_EQN3[0]:.3f}"   # as the paper prints it
    assert float(cells[1]) == pytest.approx(TABLE2_EQN3[0], abs=1e-3)   # truncated by 0.0007
    dash_duo.find_element("#masking-download-table").click()
    path = Path(dash_duo.download_path) / "varimp-masking-led-table.csv"
    wait_for(lambda: path.exists() and path.stat().st_size > 0, 20, what="the CSV")
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert [float(r["K = 7 (paper)"]) for r in rows[:7]] == TABLE2[7]
    assert float(rows[7]["K = 7"]) == pytest.approx(math.log2(10))
    assert dash_duo.get_logs() == []


@pytest.mark.browser
def test_numeric_data_draws_the_exact_et_curves_or_the_refusal(dash_duo, dash_app):
    open_page(dash_duo, dash_app, "/masking?problem=gauss&method=exact-et")
    lines = wait_for(lambda: (lambda d: d if len(d) == 2 else None)(_lines(dash_duo)),
                     what="the exact-et curves")
    assert set(lines) == {"X1", "X2"} and len(lines["X1"]) == 2          # K = 1, 2
    for k in (0, 1):
        assert lines["X1"][k] + lines["X2"][k] == pytest.approx(_gauss_entropy(), abs=1e-9)
    assert lines["X1"][1] > lines["X1"][0]                 # K=2: X1, the stronger, masks X2
    assert dash_duo.get_logs() == []
    open_page(dash_duo, dash_app, "/masking?problem=gauss:samples=200&method=exact-et")
    dash_duo.wait_for_contains_text("#masking-error", "would need about", timeout=30)
    assert "Traceback" not in dash_duo.find_element("#masking-error").text


@pytest.mark.browser
def test_gauss_from_the_dropdown_draws_exact_rf_curves(dash_duo, dash_app):
    """Choosing gauss on LED's page switches the method to exact-rf and draws its curves,
    with no error shown (it said "choose exact-rf or exact-et"; issue #26)."""
    open_page(dash_duo, dash_app, "/masking?problem=led")
    wait_for(lambda: len(_lines(dash_duo)) == 7, what="the LED curves")
    dash_duo.select_dcc_dropdown("#masking-problem", value="gauss \u2014 2 continuous inputs")
    lines = wait_for(lambda: (lambda d: d if set(d) == {"X1", "X2"} else None)(
        _lines(dash_duo)), what="the gauss curves")
    for k in (0, 1):
        assert lines["X1"][k] + lines["X2"][k] == pytest.approx(_gauss_entropy(), abs=1e-9)
    assert url_query(dash_duo)["method"] == "exact-rf"
    assert dash_duo.find_element("#masking-error").text == ""
    assert dash_duo.get_logs() == []


# -- the session's upload --------------------------------------------------------------
def _upload_rows(n, seed):
    """``n`` rows of two numeric inputs (rounded, so values tie) and a binary target."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)), 1)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    text = "x1,x2,y\n" + "\n".join(f"{a:g},{b:g},{c}" for (a, b), c in zip(X, y))
    return X, y, text


def _upload_store(text, name="tiny.csv"):
    from _pages import upload_csv

    return _store(upload_csv(text, name, "y"))


def table2_note(out, settings):
    return " ".join(p.children for p in study.table(out, settings)[2])


def test_an_upload_draws_the_exact_et_curves_of_its_rows(page):
    from varimp_core.exact.binary import exact_et_importances

    X, y, text = _upload_rows(30, 3)
    store = _upload_store(text, "thirty.csv")
    out, settings, data = page.EXACT.run(_values(problem="upload", method="exact-et"), store)
    df = MaskingCurves.from_dict(out).frame
    assert settings["problem"] == "upload" and "irrelevant" not in settings   # do not apply
    for k in (1, 2):
        want = exact_et_importances(X, y, max_features=k).importances
        got = df[df.K == k].set_index("variable").loc[["x1", "x2"], "importance"]
        np.testing.assert_allclose(got.to_numpy(), want, rtol=0, atol=1e-12)
    table, note = page.EXACT.download(study.EXACT_CSV["masking-download-table"],
                                      _values(problem="upload", method="exact-et"), store)
    assert note == "" and table["filename"] == "varimp-masking-thirty-exact-et-table.csv"
    assert "the table is your upload" in table2_note(out, settings)
    # The cache key holds the data choice: another upload is computed, not read back.
    other, _, _ = page.EXACT.run(_values(problem="upload", method="exact-et"),
                                 _upload_store(_upload_rows(30, 4)[2], "thirty.csv"))
    assert other["frame"] != out["frame"]
    # The Problem dropdown offers the upload by its label.
    ctx = study.problem_context({"problem": "led"}, study.data_context(store))
    assert (("upload", "Your data: thirty.csv, 30 rows, target y")
            in study.problem_choices(ctx))


def test_an_upload_at_k1_equals_the_brute_force_oracle(page):
    from binary_oracle import brute_force_mdi

    # Values exact in float32, which scikit-learn reads (the oracle takes them as they are);
    # a tie in each column.
    X = np.array([[0.125, 2.0], [0.5, 1.0], [0.5, 3.5], [0.75, 0.5], [1.25, 2.0], [2.0, 1.0],
                  [2.25, 3.0]])
    y = np.array([0, 0, 1, 1, 0, 1, 1])
    text = "x1,x2,y\n" + "\n".join(f"{a:g},{b:g},{c}" for (a, b), c in zip(X, y))
    for method, kind in (("exact-et", "et"), ("exact-rf", "rf")):
        out, _, _ = page.EXACT.run(_values(problem="upload", method=method),
                                   _upload_store(text, "seven.csv"))
        df = MaskingCurves.from_dict(out).frame
        got = df[df.K == 1].set_index("variable").loc[["x1", "x2"], "importance"].to_numpy()
        want = brute_force_mdi(X, y, kind=kind, max_features=1).sum(axis=1)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_an_upload_with_the_multiway_method_uses_its_bins(page):
    X, y, text = _upload_rows(30, 3)
    out, _, data = page.EXACT.run(_values(problem="upload", method="exact"),
                                  _upload_store(text, "thirty.csv"))
    codes = pd.DataFrame(data.load().X_codes).astype(str).agg("-".join, axis=1)
    # Theorem 2 on the binned rows: I(X;Y) = H(Y) - H(Y | bins), counted here by hand.
    joint = pd.crosstab(codes, y).to_numpy() / len(y)
    h = lambda q: -(q[q > 0] * np.log2(q[q > 0])).sum()   # noqa: E731
    info = h(joint.sum(axis=0)) - (h(joint.ravel()) - h(joint.sum(axis=1)))
    sums = MaskingCurves.from_dict(out).frame.groupby("K").importance.sum()
    assert sums.to_numpy() == pytest.approx(info, abs=1e-12) and len(sums) == 2


def test_a_too_large_upload_gets_the_node_count_sentence(page):
    from varimp_core.exact.binary import MAX_BINARY_NODES

    store = _upload_store(_upload_rows(3000, 5)[2], "big.csv")
    with pytest.raises(ValueError) as err:
        page.EXACT.run(_values(problem="upload", method="exact-et"), store)
    text = str(err.value)
    assert "would need about" in text and "3,000 rows" in text
    assert f"limit of {MAX_BINARY_NODES:,}" in text and "Traceback" not in text
    # What the job's panel shows: that sentence, and the last figure stays.
    shown = failure_message(err.value, True, "The figures")
    assert shown.startswith(text) and "still show the previous settings" in shown


def test_a_link_for_an_upload_notes_what_does_not_apply(page):
    from _pages import upload_csv

    params = upload_csv(_upload_rows(30, 3)[2], "thirty.csv", "y")
    vi_data = {"params": params}
    values, notes = page.initial_values({"irrelevant": "2", "copy": "X1"}, vi_data)
    assert values["problem"] == "upload"
    assert len(notes) == 1
    assert "no irrelevant variables or noisy copy: the link's were ignored" in notes[0]
    values, notes = page.initial_values({"problem": "xor"}, vi_data)   # the link's wins
    assert values["problem"] == "xor" and notes == []
    assert page.page_query(_values(problem="upload", method="exact-et"),
                           study.data_context(_store(params))) == "problem=upload&method=exact-et"
    out = page.fit_controls("upload", 0, "none", "K", 1, "full", _store(params))
    assert out[3] == 2 and "vi-hidden" in out[10] and "vi-hidden" in out[11]   # K to p; no bits
    assert out[-1] == "thirty.csv, 30 rows, target y"
    # Sampled forests are for built-in problems: a sentence, not a silent fallback.
    out = page.compute_sampled({"sampled": True, "n_estimators": 5, "random_state": 0},
                               DataChoice.from_params(params), Progress(None),
                               exact=_settings(page, problem="upload", method="exact-et"))
    assert "built-in problem" in out["note"]


def test_an_upload_with_more_inputs_than_the_exact_limit_opens_on_led_with_a_note(page):
    """A 10,000 x 60 analyst's file would open on a refusal: the page opens on LED and says
    why (the limit is VARIMP_MAX_EXACT_FEATURES, 20 by default); a link may still ask."""
    from _pages import upload_csv

    rng = np.random.default_rng(0)
    head = ",".join(f"x{j}" for j in range(21)) + ",y"
    rows = "\n".join(",".join(str(v) for v in r) for r in rng.integers(0, 3, size=(40, 22)))
    params = upload_csv(head + "\n" + rows, "wide.csv", "y")
    values, notes = page.initial_values({}, {"params": params})
    assert values["problem"] == "led"
    assert notes == ["Your upload has 21 inputs; the exact curves take at most 20, so the page "
                     "shows LED. Exclude inputs on the Data page to study it."]
    values, notes = page.initial_values({"problem": "upload"}, {"params": params})
    assert values["problem"] == "upload" and notes == []
    # Issue #26: the dropdown says why the upload is not shown (21 inputs, at most 20)
    ctx = page.problem_context({"problem": "led"}, page.data_context(_store(params)))
    (label,) = [o["label"] for o in page.PARAMS.by_name["problem"].options(ctx)
                if o["value"] == "upload"]
    assert "21 inputs" in label and "at most 20" in label


def test_titles_and_cards_name_what_is_shown(page):
    """Issue #26: an upload kept "Table 2 ... for the LED" and an empty Noisy copy card."""
    assert "LED" in page.table_title("led") and "Table 2" in page.table_title("led:noise=0.1")
    assert "Table 2" not in page.table_title("upload") and "upload" in page.table_title("upload")
    assert "LED" not in page.table_title("xor") and "XOR" in page.table_title("xor")
    assert "vi-hidden" in page.copy_card_class("upload")
    assert "vi-hidden" not in page.copy_card_class("xor")
    out = page.fit_controls("xor", 0, "none", "K", 1, "full")
    assert out[-3] == page.table_title("xor") and out[-2] == page.copy_card_class("xor")


@pytest.mark.browser
def test_an_uploaded_table_draws_its_exact_et_curves(dash_duo, dash_app):
    from _pages import upload_csv

    from varimp_core.exact.binary import exact_et_importances

    X, y, text = _upload_rows(30, 3)
    params = upload_csv(text, "thirty.csv", "y")
    open_page(dash_duo, dash_app, f"/masking?problem=led&source=upload&upload={params['upload']}"
                                  "&file=thirty.csv&target=y")
    wait_for(lambda: len(_lines(dash_duo)) == 7, what="the LED curves")
    dash_duo.select_dcc_dropdown("#masking-problem",
                                 value="Your data: thirty.csv, 30 rows, target y")
    dash_duo.wait_for_contains_text("#masking-problem-help", "uploaded table", timeout=20)
    assert "vi-hidden" in dash_duo.find_element("#masking-irrelevant-field").get_attribute("class")
    # the titles say what is shown: no "for the LED", no empty Noisy copy card (issue #26)
    until(lambda: "upload" in dash_duo.find_element("#masking-table-title").text.lower(), 10)
    assert "led" not in dash_duo.find_element("#masking-table-title").text.lower()
    assert not dash_duo.find_element("#masking-copy-card").is_displayed()
    wait_for(lambda: set(_lines(dash_duo)) == {"x1", "x2"}, what="the bins' curves (exact)")
    dash_duo.find_element("#masking-method input[value='exact-et']").click()
    want = np.vstack([exact_et_importances(X, y, max_features=k).importances for k in (1, 2)])

    def drawn():  # the legend names the upload's columns
        d = _lines(dash_duo)
        return set(d) == {"x1", "x2"} and np.allclose(
            np.column_stack([d["x1"], d["x2"]]), want, rtol=0, atol=1e-9)
    wait_for(drawn, what="the upload's exact-et curves")
    dash_duo.wait_for_contains_text("#masking-dataset", "thirty.csv, 30 rows", timeout=10)
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    assert dash_duo.get_logs() == []

    # Too large for the exact binary forests: the core's sentence, and the page still works.
    big = upload_csv(_upload_rows(3000, 5)[2], "big.csv", "y")
    visit(dash_duo, f"/masking?problem=upload&method=exact-et&source=upload&upload={big['upload']}"
                    "&file=big.csv&target=y")
    dash_duo.wait_for_contains_text("#masking-error", "would need about", timeout=30)
    assert "3,000 rows" in dash_duo.find_element("#masking-error").text
    assert "Traceback" not in dash_duo.find_element("#vi-root").text
    dash_duo.select_dcc_dropdown("#masking-problem", value="XOR of 2 bits")
    xor = wait_for(lambda: (lambda d: d if set(d) == {"X1", "X2"} else None)(_lines(dash_duo)),
                   what="the XOR curves")
    assert xor["X1"][0] == pytest.approx(0.5, abs=1e-12)   # Eqn 3 for XOR: half a bit each
    dash_duo.wait_for_text_to_equal("#masking-error", "", timeout=10)
